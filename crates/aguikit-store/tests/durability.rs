//! Durability: a writer killed with SIGKILL at random points never loses an acknowledged
//! event and never leaves a corrupt store.
//!
//! The test binary runs itself as the writer (environment variable `AGUI_STORE_CHILD`): the
//! child appends batches to a store from several tasks at once, each to its own thread (so
//! that the store commits them in groups), and prints each acknowledged last sequence; the
//! parent kills it after a random delay, reopens the store and checks it. SQLite always;
//! PostgreSQL with `AGUI_TEST_POSTGRES_URL`.

#[path = "common/rt.rs"]
mod rt;

use aguikit_core::Event;
use aguikit_store::{EventStore, SqliteStore};
use libtest_mimic::{Arguments, Failed, Trial};
use rt::rt;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const CHILD: &str = "AGUI_STORE_CHILD";
const ROUNDS: usize = 25;
/// How many tasks append at once in the writer, each to thread `d{k}`.
const WRITERS: usize = 4;

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

/// Opens the store a locator names: `sqlite:PATH`, or `postgres:SCHEMA:URL`.
async fn open(locator: &str) -> std::sync::Arc<dyn EventStore> {
    if let Some(path) = locator.strip_prefix("sqlite:") {
        return std::sync::Arc::new(SqliteStore::open(path).await.unwrap());
    }
    #[cfg(feature = "postgres")]
    if let Some((schema, url)) = locator
        .strip_prefix("postgres:")
        .and_then(|l| l.split_once(':'))
    {
        return std::sync::Arc::new(
            aguikit_store::PostgresStore::connect(url, schema)
                .await
                .unwrap(),
        );
    }
    panic!("unknown store locator {locator:?}")
}

/// The writer: appends batches of 1–50 events forever from [`WRITERS`] tasks, printing
/// `ack K N` after each (thread `dK` holds `N` events, acknowledged).
fn child(locator: &str) {
    rt().block_on(async {
        let store = open(locator).await;
        let tasks = (0..WRITERS).map(|k| {
            let store = store.clone();
            tokio::spawn(async move {
                let thread = format!("d{k}");
                let mut next = store.thread(&thread).await.map_or(0, |t| t.last_seq) + 1;
                let run = format!("writer-{}", std::process::id());
                let mut rng = Rng((std::process::id() as u64 + k as u64) * 0x9E37_79B9 + 1);
                loop {
                    let n = 1 + rng.next() % 50;
                    let events: Vec<Event> = (next..next + n).map(event).collect();
                    let range = store.append(&thread, &run, &events).await.unwrap();
                    assert_eq!(range.start, next);
                    next = range.end;
                    let mut out = std::io::stdout().lock();
                    writeln!(out, "ack {k} {}", range.end - 1).unwrap();
                    out.flush().unwrap();
                }
            })
        });
        // The writers never end: one that does has failed.
        let (ended, ..) = futures_util::future::select_all(tasks).await;
        panic!("a writer stopped: {:?}", ended.err());
    })
}

/// Kills the writer on `locator` at random points, [`ROUNDS`] times, checking after each
/// that every acknowledged event is stored, in order; `check` inspects the reopened store
/// first (an integrity check).
fn kill_at_random_points(
    locator: &str,
    check: impl Fn(&tokio::runtime::Runtime) -> Result<(), String>,
) -> Result<(), Failed> {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    println!("seed {seed}, {ROUNDS} rounds, store {locator}");
    let mut rng = Rng(seed);
    let exe = std::env::current_exe().unwrap();
    let mut acked = [0u64; WRITERS];
    let rt = rt();
    for round in 0..ROUNDS {
        let mut child = Command::new(&exe)
            .env(CHILD, locator)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut last = [0u64; WRITERS];
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let ack = line.strip_prefix("ack ").and_then(|l| l.split_once(' '));
                if let Some((k, n)) = ack {
                    last[k.parse::<usize>().unwrap()] = n.parse().unwrap();
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
        for (a, l) in acked.iter_mut().zip(last) {
            *a = (*a).max(l);
        }
        check(&rt).map_err(|e| format!("round {round}: {e}"))?;
        if acked.iter().all(|&a| a == 0) {
            continue;
        }
        let store = rt.block_on(open(locator));
        let mut stored_all = Vec::new();
        for (k, &acked) in acked.iter().enumerate() {
            let events = rt
                .block_on(store.read(&format!("d{k}"), 1))
                .unwrap_or_default();
            let stored = events.len() as u64;
            if stored < acked {
                return Err(
                    format!("round {round}: d{k}: {acked} acknowledged, {stored} stored").into(),
                );
            }
            for (e, seq) in events.iter().zip(1..) {
                if e.seq != seq || e.event != event(seq) {
                    return Err(
                        format!("round {round}: d{k}: gap or wrong event at {seq}: {e:?}").into(),
                    );
                }
            }
            stored_all.push(stored);
        }
        println!(
            "round {round}: killed after {delay} ms, {acked:?} acknowledged, {stored_all:?} stored"
        );
    }
    let total: u64 = acked.iter().sum();
    if total < 1000 {
        return Err(format!("the writer acknowledged only {total} events: too few to tell").into());
    }
    Ok(())
}

fn sqlite_kill_9() -> Result<(), Failed> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("aguikit-store-durability");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("kill9-{}.db", std::process::id()));
    let locator = format!("sqlite:{}", path.display());
    let result = kill_at_random_points(&locator, |rt| {
        let store = rt.block_on(SqliteStore::open(&path)).unwrap();
        let report = rt.block_on(store.integrity_check()).unwrap();
        if report != ["ok"] {
            return Err(format!("integrity_check: {report:?}"));
        }
        Ok(())
    });
    for ext in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{ext}", path.display()));
    }
    result
}

#[cfg(feature = "postgres")]
fn postgres_kill_9(url: String) -> Result<(), Failed> {
    let schema = format!("agui_kill9_{}", std::process::id());
    let locator = format!("postgres:{schema}:{url}");
    let result = kill_at_random_points(&locator, |rt| {
        rt.block_on(async {
            let store = aguikit_store::PostgresStore::connect(&url, &schema)
                .await
                .map_err(|e| e.to_string())?;
            store.check_integrity().await.map_err(|e| e.to_string())
        })
    });
    rt().block_on(async {
        let store = aguikit_store::PostgresStore::connect(&url, &schema)
            .await
            .unwrap();
        store.drop_schema().await.unwrap();
    });
    result
}

fn main() {
    if let Ok(path) = std::env::var(CHILD) {
        child(&path);
        return;
    }
    let args = Arguments::from_args();
    let mut trials = vec![Trial::test(
        "sqlite_kill_9_never_loses_acknowledged_events",
        sqlite_kill_9,
    )];
    let pg_url = std::env::var("AGUI_TEST_POSTGRES_URL")
        .ok()
        .filter(|u| !u.is_empty());
    let name = "postgres_kill_9_never_loses_acknowledged_events";
    match pg_url {
        #[cfg(feature = "postgres")]
        Some(url) => trials.push(Trial::test(name, move || postgres_kill_9(url))),
        _ => {
            eprintln!(
                "postgres: skipped (AGUI_TEST_POSTGRES_URL is not set or the postgres feature is off): reported as ignored"
            );
            trials.push(Trial::test(name, || Ok(())).with_ignored_flag(true));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
