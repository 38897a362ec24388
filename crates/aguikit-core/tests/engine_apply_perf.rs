//! Throughput checks of the applier on the benchmark workloads (ignored by default).
//!
//! Generate the workloads, then run in release mode:
//!
//! ```text
//! python3 ../shared/bench/gen_workloads.py --out target/workloads --only w1,w2 \
//!     --w1-scaling 10000,1000000
//! AGUI_WORKLOADS=target/workloads cargo test --release -p aguikit-core \
//!     --test engine_apply_perf -- --ignored --nocapture
//! ```
//!
//! Events are decoded before timing: these measure application only.

use aguikit_core::Event;
use aguikit_core::engine::apply::Applier;
use serde_json::Value;
use std::path::PathBuf;
use std::time::Instant;

fn workload_text(name: &str) -> Option<String> {
    let dir = PathBuf::from(std::env::var("AGUI_WORKLOADS").ok()?);
    std::fs::read_to_string(dir.join(format!("{name}.jsonl"))).ok()
}

fn workload(name: &str) -> Option<Vec<Event>> {
    Some(
        workload_text(name)?
            .lines()
            .map(|l| Event::from_json_str(l).expect("workload events decode"))
            .collect(),
    )
}

fn manifest() -> Option<Value> {
    let dir = PathBuf::from(std::env::var("AGUI_WORKLOADS").ok()?);
    serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).ok()?).ok()
}

/// Application events per second over `rounds` full folds of a JSON Lines stream.
///
/// As in a streaming pipeline, events are decoded in small batches just before they are
/// applied, so they are in cache; only the application is timed. (Timing a fold over a
/// pre-decoded vector of a million events measures memory bandwidth instead.)
fn throughput(text: &str, rounds: usize) -> f64 {
    const BATCH: usize = 256;
    let lines: Vec<&str> = text.lines().collect();
    let mut best = f64::MAX;
    for _ in 0..rounds {
        let mut a = Applier::new();
        let mut times = Vec::with_capacity(lines.len() / BATCH + 1);
        let mut batch = Vec::with_capacity(BATCH);
        for chunk in lines.chunks(BATCH) {
            batch.clear();
            batch.extend(chunk.iter().map(|l| Event::from_json_str(l).unwrap()));
            let t = Instant::now();
            for e in &batch {
                a.push(e);
            }
            times.push(t.elapsed().as_secs_f64());
        }
        std::hint::black_box(a.messages().len());
        // The median batch, scaled: robust to the preemptions of a shared machine.
        times.sort_by(f64::total_cmp);
        best = best.min(times[times.len() / 2] * lines.len() as f64 / BATCH as f64);
    }
    lines.len() as f64 / best
}

/// Decode-and-apply events per second (one event at a time, as a client does).
fn pipeline_throughput(text: &str) -> f64 {
    let t = Instant::now();
    let mut a = Applier::new();
    let mut n = 0usize;
    for line in text.lines() {
        a.push(&Event::from_json_str(line).unwrap());
        n += 1;
    }
    std::hint::black_box(a.messages().len());
    n as f64 / t.elapsed().as_secs_f64()
}

/// The generator's state digest: FNV-1a 32 of the sorted-key compact JSON.
fn digest(state: &Value) -> (usize, u32) {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&m[k])))
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    let bytes = serde_json::to_vec(&sorted(state)).unwrap();
    let mut h: u32 = 0x811c_9dc5;
    for b in &bytes {
        h ^= u32::from(*b);
        h = h.wrapping_mul(0x0100_0193);
    }
    (bytes.len(), h)
}

#[test]
#[ignore = "performance: needs AGUI_WORKLOADS and a release build"]
fn chat_throughput_and_scaling() {
    let (Some(small), Some(large)) = (workload_text("w1_s10000"), workload_text("w1_s1000000"))
    else {
        eprintln!("AGUI_WORKLOADS with w1_s10000 and w1_s1000000 not found; skipped");
        return;
    };
    let small_rate = throughput(&small, 30);
    let large_rate = throughput(&large, 3);
    println!(
        "chat: {:.2} M events/s at 10k deltas, {:.2} M events/s at 1M deltas (ratio {:.2})",
        small_rate / 1e6,
        large_rate / 1e6,
        large_rate / small_rate
    );
    if let Some(chat) = workload_text("w1_chat") {
        println!(
            "chat (w1_chat): {:.2} M events/s",
            throughput(&chat, 5) / 1e6
        );
    }
    println!(
        "decode + apply: {:.2} M events/s at 10k deltas, {:.2} M events/s at 1M deltas",
        pipeline_throughput(&small) / 1e6,
        pipeline_throughput(&large) / 1e6
    );
    // Decoding between batches evicts the applier's data from the caches at 1M, so the
    // ratio of these two mixes in the decoder's memory traffic; `synthetic_chat_scaling`
    // checks the applier's own scaling.
    assert!(large_rate >= 5e6, "chat throughput below 5M events/s");
}

#[test]
#[ignore = "performance: needs AGUI_WORKLOADS and a release build"]
fn state_delta_throughput() {
    let Some(events) = workload("w2_state") else {
        eprintln!("AGUI_WORKLOADS with w2_state not found; skipped");
        return;
    };
    let deltas = events
        .iter()
        .filter(|e| matches!(e, Event::StateDelta(_)))
        .count();
    let mut best = f64::MAX;
    let mut last = None;
    for _ in 0..3 {
        let mut a = Applier::new();
        let mut times = Vec::with_capacity(deltas);
        for e in &events {
            let t = Instant::now();
            a.push(e);
            if matches!(e, Event::StateDelta(_)) {
                times.push(t.elapsed().as_secs_f64());
            }
        }
        // Total time without the slowest 1% (preemptions on a shared machine).
        times.sort_by(f64::total_cmp);
        let kept = times.len() - times.len() / 100;
        best = best.min(times[..kept].iter().sum::<f64>() * times.len() as f64 / kept as f64);
        assert!(a.warnings().is_empty(), "{:?}", &a.warnings()[..1]);
        last = Some(a);
    }
    let rate = deltas as f64 / best;
    println!("state: {deltas} deltas, {:.0} k STATE_DELTA/s", rate / 1e3);
    if let (Some(a), Some(m)) = (last, manifest()) {
        let want = &m["w2_state"]["final_state"];
        if !want.is_null() {
            let (len, h) = digest(a.state());
            assert_eq!(
                (len as u64, u64::from(h)),
                (
                    want["canonical_bytes"].as_u64().unwrap(),
                    want["fnv1a32"].as_u64().unwrap()
                ),
                "final state differs from the generator's"
            );
        }
    }
    assert!(rate >= 2e5, "state delta throughput below 200k/s");
}

/// One fold of the workload named by `AGUI_PERF_WORKLOAD`, for profilers (callgrind,
/// perf) that attribute cost to `Applier::push`.
#[test]
#[ignore = "profiling helper"]
fn fold_once() {
    let Some(text) = std::env::var("AGUI_PERF_WORKLOAD")
        .ok()
        .and_then(|name| workload_text(&name))
    else {
        return;
    };
    println!("{:.2} M events/s", throughput(&text, 1) / 1e6);
}

/// Application alone on a synthetic chat stream built on the fly (no decoding, no files):
/// `deltas` deltas of 10 bytes over `deltas / 100` messages. Returns the events per second
/// (from the median time per message) of the whole fold, its first tenth and its last tenth.
fn synthetic_chat(deltas: usize) -> (f64, f64, f64) {
    use aguikit_core::event::{TextMessageContent, TextMessageEnd, TextMessageStart};
    let messages = deltas / 100;
    let mut a = Applier::new();
    let mut events = Vec::with_capacity(102);
    let mut per_message = Vec::with_capacity(messages);
    for i in 0..messages {
        let id = format!("msg-{i:07}");
        events.clear();
        events.push(Event::from(TextMessageStart::new(id.clone())));
        for _ in 0..100 {
            events.push(TextMessageContent::new(id.clone(), "0123456789").into());
        }
        events.push(TextMessageEnd::new(id).into());
        let t = Instant::now();
        for e in &events {
            a.push(e);
        }
        per_message.push(t.elapsed().as_secs_f64());
    }
    std::hint::black_box(a.messages().len());
    // Rates from the median time per message: on a shared machine a fold of a million
    // events is preempted now and then for milliseconds, which says nothing about it.
    let rate = |times: &[f64]| {
        let mut sorted = times.to_vec();
        sorted.sort_by(f64::total_cmp);
        102.0 / sorted[sorted.len() / 2]
    };
    let tenth = messages / 10;
    if std::env::var("AGUI_PERF_SEGMENTS").is_ok() {
        let segs: Vec<String> = per_message
            .chunks(tenth.max(1))
            .map(|c| format!("{:.1}", rate(c) / 1e6))
            .collect();
        let worst = per_message.iter().cloned().fold(0.0, f64::max);
        println!(
            "segments: {} (slowest message {:.1} us)",
            segs.join(" "),
            worst * 1e6
        );
    }
    (
        rate(&per_message),
        rate(&per_message[..tenth]),
        rate(&per_message[messages - tenth..]),
    )
}

#[test]
#[ignore = "performance: release build"]
fn synthetic_chat_scaling() {
    let best = |deltas: usize, rounds: usize| {
        (0..rounds)
            .map(|_| synthetic_chat(deltas))
            .fold((0.0, 0.0, 0.0), |b: (f64, f64, f64), r| {
                (b.0.max(r.0), b.1.max(r.1), b.2.max(r.2))
            })
    };
    let (small, _, _) = best(10_000, 20);
    let (large, head, tail) = best(1_000_000, 3);
    println!(
        "synthetic chat: {:.2} M events/s at 10k, {:.2} M events/s at 1M (ratio {:.2}); \
         within the 1M fold: first tenth {:.2}, last tenth {:.2} M events/s (ratio {:.2})",
        small / 1e6,
        large / 1e6,
        large / small,
        head / 1e6,
        tail / 1e6,
        tail / head
    );
    assert!(large >= 5e6, "chat throughput below 5M events/s");
    // The cost of an event must not grow with the conversation. (The 10k fold, repeated,
    // runs in memory the previous round left in cache; the 1M fold writes 10 MB of fresh
    // text, so their ratio also measures memory bandwidth.)
    assert!(
        tail >= 0.8 * head,
        "per-event cost grows with the conversation"
    );
}
