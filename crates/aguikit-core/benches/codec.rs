//! Codec throughput on the shared workloads.
//!
//! - `parse`: SSE bytes read in 64 KiB chunks → validated typed events, against plain
//!   `serde_json::from_slice::<Value>` over the same frames (measured in the same run);
//!   the big workload also in 4 KiB chunks and in one chunk. `typed_*` use the borrowing
//!   decoder API and `Event::from_json_str`; `typed_sse_64k_owned` the owned frames and
//!   `Event::from_json_slice`.
//! - `encode`: typed events → SSE bytes, with the events' own writer (`typed_to_sse`) and
//!   through serde's derived `Serialize` (`typed_serde_to_sse`), against `serde_json::to_vec`
//!   of equivalent `Value`s: made from the events by `serde_json::to_value`
//!   (`serde_value_to_vec`), and parsed from the workload's lines by `serde_json`
//!   (`serde_value_parsed_to_vec`), as a program reading the stream holds them.
//!   A whole workload's events are far larger than the caches, so these passes mostly wait
//!   on memory, and on where each side's allocations happen to lie (the `to_value` copies
//!   lie in the order they are written). So each side is measured both ways: as read from
//!   the stream (`typed_to_sse` against `serde_value_parsed_to_vec`) and as one fresh deep
//!   copy (`typed_cloned_to_sse`, the events cloned, against `serde_value_to_vec`).
//!   The `*_cached` pairs measure the writers as the server uses them, on events still in
//!   cache: the workload in windows of [`WINDOW`] events, each window encoded [`REPEAT`]
//!   times in a row.
//!
//! ```sh
//! cargo bench -p aguikit-core --bench codec
//! ```

mod workloads;

use aguikit_core::Event;
use aguikit_core::codec::sse::{self, SseDecoder};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::Value;
use std::hint::black_box;
use std::time::Duration;

/// SSE bytes → typed events, fed in `chunk`-byte reads, the fastest way a user can: frames
/// lent by the decoder (no copy) and decoded from text (no second UTF-8 check).
fn parse_typed(bytes: &[u8], chunk: usize) -> usize {
    let mut d = SseDecoder::new();
    let mut n = 0;
    for piece in bytes.chunks(chunk) {
        d.push(piece);
        while let Some(frame) = d.next_frame_ref().expect("valid SSE") {
            black_box(Event::from_json_str(frame.data).expect("valid event"));
            n += 1;
        }
    }
    while let Some(frame) = d.finish_ref().expect("valid SSE") {
        black_box(Event::from_json_str(frame.data).expect("valid event"));
        n += 1;
    }
    n
}

/// The same with owned frames and `from_json_slice`, as before the borrowing API.
fn parse_typed_owned(bytes: &[u8], chunk: usize) -> usize {
    let mut d = SseDecoder::new();
    let mut n = 0;
    for piece in bytes.chunks(chunk) {
        d.push(piece);
        while let Some(frame) = d.next_frame().expect("valid SSE") {
            black_box(Event::from_json_slice(frame.data.as_bytes()).expect("valid event"));
            n += 1;
        }
    }
    while let Some(frame) = d.finish().expect("valid SSE") {
        black_box(Event::from_json_slice(frame.data.as_bytes()).expect("valid event"));
        n += 1;
    }
    n
}

/// The baseline: the same frames parsed into `serde_json::Value`.
fn parse_value(frames: &[Vec<u8>]) -> usize {
    for f in frames {
        black_box(serde_json::from_slice::<Value>(f).expect("valid JSON"));
    }
    frames.len()
}

fn parse(c: &mut Criterion) {
    for name in ["w1_chat", "w2_state", "w3_mixed", "w4_big"] {
        let bytes = workloads::bytes(&format!("{name}.sse"));
        let frames: Vec<Vec<u8>> = SseDecoder::decode_all(&bytes)
            .unwrap()
            .into_iter()
            .map(|f| f.data.into_bytes())
            .collect();
        let mut g = c.benchmark_group(format!("parse_{name}"));
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.sample_size(10);
        g.measurement_time(Duration::from_secs(5));
        g.bench_function("typed_sse_64k", |b| {
            b.iter(|| parse_typed(&bytes, 64 * 1024))
        });
        g.bench_function("serde_value_frames", |b| b.iter(|| parse_value(&frames)));
        g.bench_function("typed_sse_64k_owned", |b| {
            b.iter(|| parse_typed_owned(&bytes, 64 * 1024))
        });
        if name == "w4_big" {
            g.bench_function("typed_sse_4k", |b| b.iter(|| parse_typed(&bytes, 4 * 1024)));
            g.bench_function("typed_sse_one_chunk", |b| {
                b.iter(|| parse_typed(&bytes, bytes.len()))
            });
        }
        g.finish();
    }
}

/// Events per window in the `*_cached` encode benchmarks.
const WINDOW: usize = 64;
/// How many times each window is encoded in a row in the `*_cached` benchmarks.
const REPEAT: usize = 8;

/// `events` as SSE frames by the events' own writer, in `out` (cleared first); its length.
fn typed_to_sse(enc: &mut sse::SseEncoder, out: &mut Vec<u8>, events: &[Event]) -> usize {
    out.clear();
    for e in events {
        out.extend_from_slice(enc.encode_event(e, None));
    }
    out.len()
}

/// Each of `values` written by `serde_json::to_vec`; the bytes written.
fn values_to_vec(values: &[Value]) -> usize {
    values
        .iter()
        .map(|v| black_box(serde_json::to_vec(v).unwrap()).len())
        .sum()
}

/// `encode` over `items` in windows of [`WINDOW`], each window [`REPEAT`] times in a row;
/// the bytes written.
fn windowed<T>(items: &[T], mut encode: impl FnMut(&[T]) -> usize) -> usize {
    let mut total = 0;
    for window in items.chunks(WINDOW) {
        for _ in 0..REPEAT {
            total += black_box(encode(window));
        }
    }
    total
}

fn encode(c: &mut Criterion) {
    for name in ["w1_chat", "w2_state", "w3_mixed"] {
        let events = workloads::events(name);
        let values: Vec<Value> = events
            .iter()
            .map(|e| serde_json::to_value(e).unwrap())
            .collect();
        let parsed: Vec<Value> = workloads::bytes(&format!("{name}.jsonl"))
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        assert_eq!(parsed, values, "the two sets of Values are equal");
        let size: usize = events.iter().map(|e| e.to_json_vec().len() + 8).sum();
        let mut g = c.benchmark_group(format!("encode_{name}"));
        g.throughput(Throughput::Bytes(size as u64));
        g.sample_size(10);
        g.measurement_time(Duration::from_secs(5));
        // The product's path: the events' own writer (Event::write_json).
        g.bench_function("typed_to_sse", |b| {
            let mut out = Vec::with_capacity(size);
            let mut enc = sse::SseEncoder::new();
            b.iter(|| typed_to_sse(&mut enc, &mut out, &events))
        });
        // The same events deep-copied by `clone`: laid out in memory in the order they are
        // written, as `to_value` lays out the `Value`s it makes (the decoder's allocations
        // interleave with its buffers). The fair partner of `serde_value_to_vec`, as
        // `typed_to_sse` is of `serde_value_parsed_to_vec`.
        let cloned = events.clone();
        g.bench_function("typed_cloned_to_sse", |b| {
            let mut out = Vec::with_capacity(size);
            let mut enc = sse::SseEncoder::new();
            b.iter(|| typed_to_sse(&mut enc, &mut out, &cloned))
        });
        drop(cloned);
        // The same frames through serde's derived Serialize (the path before the own writer).
        g.bench_function("typed_serde_to_sse", |b| {
            let mut out = Vec::with_capacity(size);
            let mut enc = sse::SseEncoder::new();
            b.iter(|| {
                out.clear();
                for e in &events {
                    out.extend_from_slice(enc.encode_json(e, None).unwrap());
                }
                black_box(out.len())
            })
        });
        for (id, values) in [
            ("serde_value_to_vec", &values),
            ("serde_value_parsed_to_vec", &parsed),
        ] {
            g.bench_function(id, |b| b.iter(|| values_to_vec(values)));
        }
        g.finish();

        let mut g = c.benchmark_group(format!("encode_{name}_cached"));
        g.throughput(Throughput::Bytes((size * REPEAT) as u64));
        g.sample_size(10);
        g.measurement_time(Duration::from_secs(5));
        g.bench_function("typed_to_sse", |b| {
            let mut out = Vec::with_capacity(size);
            let mut enc = sse::SseEncoder::new();
            b.iter(|| windowed(&events, |w| typed_to_sse(&mut enc, &mut out, w)))
        });
        g.bench_function("serde_value_to_vec", |b| {
            b.iter(|| windowed(&values, values_to_vec))
        });
        g.finish();
    }
}

criterion_group!(benches, parse, encode);
criterion_main!(benches);
