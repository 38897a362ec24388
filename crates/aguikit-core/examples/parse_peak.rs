//! Parses an SSE file read in 64 KiB chunks and prints the process's peak resident memory
//! against the file's size (Linux: `VmHWM`). The second argument says how:
//!
//! - `events` (the default): into validated typed events, one at a time, each dropped once
//!   decoded, as a consumer that folds them would. A `STATE_SNAPSHOT` becomes a
//!   `serde_json::Value` tree, about twelve times its text for a document of small objects.
//! - `verify`: through [`Pipeline::push_json`] with application off (what `agui verify`
//!   runs): a large snapshot is checked without building its tree.
//! - `fold`: through [`Pipeline::push_json`] folding without emitting (what `agui apply`
//!   runs): a large snapshot is kept as its JSON text, and the folded conversation is held.
//!
//! Issue 4's "peak memory while parsing the big workload ≤ 2× the file size":
//!
//! ```sh
//! python3 ../shared/bench/gen_workloads.py --out target/workloads --only w4
//! cargo run --release -p aguikit-core --example parse_peak -- target/workloads/w4_big.sse
//! cargo run --release -p aguikit-core --example parse_peak -- target/workloads/w4_big.sse verify
//! ```

use aguikit_core::Event;
use aguikit_core::codec::sse::SseDecoder;
use aguikit_core::engine::pipeline::Pipeline;
use std::io::Read;

fn peak_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: parse_peak FILE.sse [events|verify|fold]")?;
    let mode = std::env::args().nth(2).unwrap_or_else(|| "events".into());
    let mut pipeline = match mode.as_str() {
        "events" => None,
        "verify" => Some(Pipeline::new().with_emitted(false).with_apply(false)),
        "fold" => Some(Pipeline::new().with_emitted(false)),
        other => return Err(format!("unknown mode {other:?}: events, verify or fold").into()),
    };
    let size = std::fs::metadata(&path)?.len();
    let before = peak_kib().unwrap_or(0);
    let mut file = std::fs::File::open(&path)?;
    let mut decoder = SseDecoder::new();
    let mut buf = vec![0u8; 64 * 1024];
    let (mut events, mut largest) = (0usize, 0usize);
    let mut take = |decoder: &mut SseDecoder, finish: bool| -> Result<(), String> {
        loop {
            let frame = if finish {
                decoder.finish_ref()
            } else {
                decoder.next_frame_ref()
            }
            .map_err(|e| e.to_string())?;
            let Some(frame) = frame else { return Ok(()) };
            largest = largest.max(frame.data.len());
            match &mut pipeline {
                None => {
                    let event = Event::from_json_str(frame.data).map_err(|e| e.to_string())?;
                    std::hint::black_box(&event);
                }
                Some(p) => {
                    p.push_json(frame.data.as_bytes())
                        .map_err(|e| e.to_string())?;
                }
            }
            events += 1;
        }
    };
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        decoder.push(&buf[..n]);
        take(&mut decoder, false)?;
    }
    take(&mut decoder, true)?;
    if let Some(p) = &mut pipeline {
        p.finish().map_err(|e| e.to_string())?;
    }
    let peak = peak_kib().unwrap_or(0);
    println!(
        "{mode}: {events} events, file {:.1} MB, largest frame {:.1} MB; peak RSS {:.1} MB \
         (before parsing {:.1} MB): {:.2}x the file size",
        size as f64 / 1e6,
        largest as f64 / 1e6,
        peak as f64 * 1024.0 / 1e6,
        before as f64 * 1024.0 / 1e6,
        peak as f64 * 1024.0 / size as f64
    );
    Ok(())
}
