//! Memory soak of the real `agui serve` binary (issue 15): idle RSS before, rounds of large
//! concurrent request bodies and ordinary runs for `AGUI_SOAK_SECS` (default 600), then
//! idle RSS after. The goal: after the soak, idle RSS within 1.5× of the idle figure
//! before it — memory comes back after load.
//!
//! ```sh
//! cargo bench -p aguikit --bench soak                      # 10 minutes
//! AGUI_SOAK_SECS=60 cargo bench -p aguikit --bench soak    # a quick look
//! ```
//!
//! The server runs as its own process (`--store sqlite:… --no-auth`, a scratch file, so
//! the data is on disk and the figures are the server's working memory), measured from
//! /proc. Each round sends 8, then 30, concurrent 10 MB bodies
//! (valid run inputs whose one message is 10 MB of text) and 50 ordinary runs.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn rss_kib(pid: u32) -> u64 {
    status_kib(pid, "VmRSS:")
}

/// A `/proc/PID/status` figure in KiB (`VmRSS:`, `RssAnon:`, ...).
fn status_kib(pid: u32, key: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn post(addr: &str, body: &[u8]) -> u16 {
    let Ok(mut s) = TcpStream::connect(addr) else {
        return 0;
    };
    let _ = s.set_nodelay(true);
    let head = format!(
        "POST /agent HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    if s.write_all(head.as_bytes()).is_err() || s.write_all(body).is_err() {
        return 0;
    }
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    std::str::from_utf8(out.get(9..12).unwrap_or(b"0"))
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

fn input(thread: &str, run: &str, text: &str) -> Vec<u8> {
    serde_json::json!({
        "threadId": thread, "runId": run,
        "messages": [{"id": format!("u-{run}"), "role": "user", "content": text}],
        "state": {}, "tools": [], "context": [], "forwardedProps": {}
    })
    .to_string()
    .into_bytes()
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else to parse.
    let secs: u64 = std::env::var("AGUI_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(600);
    let dir = std::env::temp_dir().join(format!("agui-soak-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let store = format!("sqlite:{}", dir.join("soak.db").display());
    let mut child = Command::new(env!("CARGO_BIN_EXE_agui"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--delay-ms",
            "0",
            "--store",
            &store,
            "--no-auth",
            "--max-body-bytes",
            "12000000",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("agui serve starts");
    let pid = child.id();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let addr = first
        .trim_start_matches("agui serve: listening on http://")
        .trim_end_matches('/')
        .to_owned();
    std::thread::spawn(move || for _ in lines {});
    // Warm up: a few ordinary runs, then settle.
    for i in 0..20 {
        post(&addr, &input("warm", &format!("w{i}"), "hello"));
    }
    std::thread::sleep(Duration::from_secs(3));
    let idle_before = rss_kib(pid);
    println!("idle RSS before the soak: {} MiB", idle_before / 1024);
    let big_text = "x".repeat(10 * 1000 * 1000);
    let start = Instant::now();
    let mut round = 0;
    let mut peak = 0;
    while start.elapsed() < Duration::from_secs(secs) {
        round += 1;
        for n in [8usize, 30] {
            let sampler_stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let stop = sampler_stop.clone();
            let sampler = std::thread::spawn(move || {
                let mut max = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    max = max.max(rss_kib(pid));
                    std::thread::sleep(Duration::from_millis(20));
                }
                max
            });
            let handles: Vec<_> = (0..n)
                .map(|i| {
                    let addr = addr.clone();
                    let body = input(&format!("big-{round}-{n}-{i}"), &format!("r{i}"), &big_text);
                    std::thread::spawn(move || post(&addr, &body))
                })
                .collect();
            let statuses: Vec<u16> = handles.into_iter().map(|h| h.join().unwrap()).collect();
            sampler_stop.store(true, std::sync::atomic::Ordering::Relaxed);
            let round_peak = sampler.join().unwrap();
            peak = peak.max(round_peak);
            let ok = statuses.iter().filter(|s| **s == 200).count();
            println!(
                "round {round}: {n} bodies of 10 MB: {ok} ran, {} refused (503 busy / 413); peak {} MiB",
                n - ok,
                round_peak / 1024
            );
        }
        for i in 0..50 {
            post(
                &addr,
                &input(&format!("small-{round}"), &format!("s{i}"), "hello"),
            );
        }
        println!(
            "round {round}: RSS {} MiB after the round ({} MiB anonymous, {} MiB file-backed)",
            rss_kib(pid) / 1024,
            status_kib(pid, "RssAnon:") / 1024,
            status_kib(pid, "RssFile:") / 1024
        );
    }
    // Idle: long enough for the runtime's idle blocking threads (10 s keep-alive) to go.
    for s in [5, 10, 15, 20, 25, 30] {
        std::thread::sleep(Duration::from_secs(5));
        println!(
            "idle {s} s after the soak: RSS {} MiB ({} MiB anonymous)",
            rss_kib(pid) / 1024,
            status_kib(pid, "RssAnon:") / 1024
        );
        let _ = s;
    }
    let idle_after = rss_kib(pid);
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "soak of {secs} s, {round} rounds: idle RSS {} MiB before, {} MiB after ({:.2}×; goal ≤ 1.5×), peak {} MiB",
        idle_before / 1024,
        idle_after / 1024,
        idle_after as f64 / idle_before.max(1) as f64,
        peak / 1024
    );
}
