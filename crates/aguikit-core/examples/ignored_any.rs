//! The floor the `agui` stream commands are measured against: read a workload in 64 KiB
//! chunks, split it into frames (SSE `data:` frames or JSON lines) and let `serde_json` skip
//! each frame's JSON (`IgnoredAny`: checked, nothing built). No event types, no engine.
//!
//! ```sh
//! python3 ../shared/bench/gen_workloads.py --out target/workloads
//! cargo run --release -p aguikit-core --example ignored_any -- target/workloads/w1_chat.sse
//! ```
//!
//! `scripts/cli-stream-bench.sh` runs it beside `agui verify` and `agui apply` on the same
//! files and prints the ratios.

use serde::de::IgnoredAny;
use std::io::Read;

/// How much is read at a time, as `agui` does.
const CHUNK: usize = 64 * 1024;

/// Skips the JSON of one frame; SSE frames lose their `data:` field name first.
fn skip(frame: &[u8], sse: bool) -> Result<(), String> {
    let json = if sse {
        let rest = frame
            .strip_prefix(b"data:")
            .ok_or("an SSE frame without data")?;
        rest.strip_prefix(b" ").unwrap_or(rest)
    } else {
        frame
    };
    serde_json::from_slice::<IgnoredAny>(json)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: ignored_any FILE.sse|FILE.jsonl")?;
    let sse = path.ends_with(".sse");
    let separator: &[u8] = if sse { b"\n\n" } else { b"\n" };
    let finder = memchr::memmem::Finder::new(separator);
    let t0 = std::time::Instant::now();
    let mut file = std::fs::File::open(&path)?;
    // `buf[start..]` is unread; `buf[start..scan]` holds no separator.
    let (mut buf, mut start, mut scan) = (Vec::new(), 0usize, 0usize);
    let (mut frames, mut bytes) = (0usize, 0usize);
    loop {
        while let Some(i) = finder.find(&buf[scan..]) {
            let end = scan + i;
            if end > start {
                skip(&buf[start..end], sse)?;
                frames += 1;
            }
            start = end + separator.len();
            scan = start;
        }
        scan = buf.len().saturating_sub(separator.len() - 1).max(start);
        // Drop what was read once it is at least half the buffer.
        if start > 0 && start >= buf.len() - start {
            buf.drain(..start);
            scan -= start;
            start = 0;
        }
        let len = buf.len();
        buf.resize(len + CHUNK, 0);
        let n = file.read(&mut buf[len..])?;
        buf.truncate(len + n);
        bytes += n;
        if n == 0 {
            break;
        }
    }
    if buf[start..].iter().any(|b| !b.is_ascii_whitespace()) {
        skip(&buf[start..], sse)?;
        frames += 1;
    }
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "{frames} frames, {:.1} MB in {:.1} ms: {:.0} MB/s",
        bytes as f64 / 1e6,
        secs * 1e3,
        bytes as f64 / 1e6 / secs
    );
    Ok(())
}
