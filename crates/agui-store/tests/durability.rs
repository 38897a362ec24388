//! Durability: a writer killed with SIGKILL at random points never loses an acknowledged
//! event and never leaves a corrupt file.
//!
//! The test binary runs itself as the writer (environment variable `AGUI_STORE_CHILD`): the
//! child appends batches to a SQLite store and prints each acknowledged last sequence; the
//! parent kills it after a random delay, reopens the file and checks it.

#[path = "common/rt.rs"]
mod rt;

use agui_core::Event;
use agui_store::{EventStore, SqliteStore};
use libtest_mimic::{Arguments, Failed, Trial};
use rt::rt;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const CHILD: &str = "AGUI_STORE_CHILD";
const ROUNDS: usize = 25;

/// The event stored at sequence `seq`: its value names its sequence.
fn event(seq: u64) -> Event {
    let json = format!(r#"{{"type":"CUSTOM","name":"seq","value":{seq}}}"#);
    Event::from_json_slice(json.as_bytes()).unwrap()
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// The writer: appends batches of 1–50 events forever, printing `ack N` after each.
fn child(path: &str) {
    rt().block_on(async {
        let store = SqliteStore::open(path).await.unwrap();
        let mut next = store.thread("d").await.map_or(0, |t| t.last_seq) + 1;
        let run = format!("writer-{}", std::process::id());
        let mut rng = Rng(std::process::id() as u64 * 0x9E37_79B9 + 1);
        let mut out = std::io::stdout().lock();
        loop {
            let n = 1 + rng.next() % 50;
            let events: Vec<Event> = (next..next + n).map(event).collect();
            let range = store.append("d", &run, &events).await.unwrap();
            assert_eq!(range.start, next);
            next = range.end;
            writeln!(out, "ack {}", range.end - 1).unwrap();
            out.flush().unwrap();
        }
    })
}

fn kill_at_random_points() -> Result<(), Failed> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("agui-store-durability");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("kill9-{}.db", std::process::id()));
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    println!("seed {seed}, {ROUNDS} rounds, file {}", path.display());
    let mut rng = Rng(seed);
    let exe = std::env::current_exe().unwrap();
    let mut acked = 0u64;
    let rt = rt();
    for round in 0..ROUNDS {
        let mut child = Command::new(&exe)
            .env(CHILD, &path)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut last = 0u64;
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(n) = line.strip_prefix("ack ") {
                    last = n.parse().unwrap();
                }
            }
            last
        });
        // Let the first rounds die early (during opening and schema creation) too.
        let delay = if round < 3 {
            rng.next() % 20
        } else {
            20 + rng.next() % 300
        };
        std::thread::sleep(Duration::from_millis(delay));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let last = reader.join().unwrap();
        acked = acked.max(last);

        let store = rt.block_on(SqliteStore::open(&path)).unwrap();
        let report = rt.block_on(store.integrity_check()).unwrap();
        if report != ["ok"] {
            return Err(format!("round {round}: integrity_check: {report:?}").into());
        }
        if acked == 0 {
            continue;
        }
        let events = rt.block_on(store.read("d", 1)).unwrap();
        let stored = events.len() as u64;
        if stored < acked {
            return Err(format!("round {round}: {acked} acknowledged, {stored} stored").into());
        }
        for (e, seq) in events.iter().zip(1..) {
            if e.seq != seq || e.event != event(seq) {
                return Err(format!("round {round}: gap or wrong event at {seq}: {e:?}").into());
            }
        }
        println!("round {round}: killed after {delay} ms, {acked} acknowledged, {stored} stored");
    }
    for ext in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{ext}", path.display()));
    }
    if acked < 1000 {
        return Err(format!("the writer acknowledged only {acked} events: too few to tell").into());
    }
    Ok(())
}

fn main() {
    if let Ok(path) = std::env::var(CHILD) {
        child(&path);
        return;
    }
    let args = Arguments::from_args();
    let trials = vec![Trial::test(
        "sqlite_kill_9_never_loses_acknowledged_events",
        kill_at_random_points,
    )];
    libtest_mimic::run(&args, trials).exit();
}
