//! Our client fold against the fastest other Rust AG-UI crate's, side by side in one run.
//!
//! For each workload of `shared/bench/gen_workloads.py` (chat, state, mixed, big), the
//! events are decoded once by each library (not timed); the timed part is the fold of an
//! owned copy of the whole stream:
//!
//! - `agui`: `aguikit_core::engine::pipeline::Pipeline` (chunk expansion, verification,
//!   application, with the reference client's exact semantics), with its emitted events
//!   (`emit`, the default) and without (`fold`, what `agui apply` uses);
//! - `ag-ui`: the `ag-ui` crate 0.5.0-alpha.3's `ChunkNormalizer` → `Verifier` → `Applier`.
//!
//! Both folds must reach the same end state; the bench checks that before timing.
//!
//! ```sh
//! cd benches/peer-fold && cargo bench
//! ```
//!
//! The workloads are read from `../../target/workloads` (override with `AGUI_WORKLOADS`);
//! generate them first with `python3 ../shared/bench/gen_workloads.py --out target/workloads`.
//! This crate is not a member of the workspace: the peer crate never enters its build or CI.

use ag_ui::client::{Applier as PeerApplier, ChunkNormalizer, Verifier as PeerVerifier};
use aguikit_core::Event;
use aguikit_core::engine::pipeline::Pipeline;
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

fn workload(name: &str) -> Vec<u8> {
    let dir = std::env::var("AGUI_WORKLOADS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/workloads")
        });
    let path = dir.join(format!("{name}.jsonl"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

fn lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty())
}

fn ours(events: Vec<Event>, emit: bool) -> Pipeline {
    let mut p = Pipeline::new().with_emitted(emit);
    for e in events {
        p.push(e).expect("workload is valid (agui)");
    }
    p.finish().expect("workload is valid (agui)");
    p
}

fn peer(events: Vec<ag_ui::Event>) -> PeerApplier {
    let mut normalizer = ChunkNormalizer::new();
    let mut verifier = PeerVerifier::new();
    let mut applier = PeerApplier::new();
    let mut out = Vec::new();
    for e in events {
        normalizer
            .normalize(e, &mut out)
            .expect("workload is valid (ag-ui)");
        for e in out.drain(..) {
            // Its verifier checks one run; a thread of several runs takes a fresh one per run.
            if verifier.is_finished() && matches!(e, ag_ui::Event::RunStarted(_)) {
                verifier = PeerVerifier::new();
            }
            verifier.verify(&e).expect("workload is valid (ag-ui)");
            applier.apply(&e).expect("workload is valid (ag-ui)");
        }
    }
    normalizer.finish(&mut out);
    for e in out.drain(..) {
        if let Err(err) = verifier.verify(&e) {
            panic!("ag-ui verifier: {err} at {e:?}")
        }
        applier.apply(&e).expect("workload is valid (ag-ui)");
    }
    verifier.finish().expect("workload is valid (ag-ui)");
    applier
}

fn fold(c: &mut Criterion) {
    for name in ["w1_chat", "w2_state", "w3_mixed", "w4_big"] {
        let bytes = workload(name);
        let ours_events: Vec<Event> = lines(&bytes)
            .map(|l| Event::from_json_slice(l).expect("agui decodes the workload"))
            .collect();
        let peer_events: Vec<ag_ui::Event> = lines(&bytes)
            .map(|l| serde_json::from_slice(l).expect("ag-ui decodes the workload"))
            .collect();
        assert_eq!(ours_events.len(), peer_events.len(), "{name}: event counts");

        // Same end state, or the comparison means nothing.
        let a = ours(ours_events.clone(), false);
        let b = peer(peer_events.clone());
        assert_eq!(a.applier().state(), b.state(), "{name}: folded state");
        // The message lists can differ where the two libraries' rules differ (on the mixed
        // workload, which replaces the history with MESSAGES_SNAPSHOT events, the ag-ui crate
        // ends with fewer messages than the reference client keeps); say so, do not hide it.
        let (ours_n, peer_n) = (a.applier().messages().len(), b.messages().len());
        if ours_n != peer_n {
            eprintln!("{name}: agui folds {ours_n} messages, the ag-ui crate {peer_n}");
        }

        let mut g = c.benchmark_group(format!("fold_{name}"));
        if name == "w4_big" {
            g.throughput(Throughput::Bytes(bytes.len() as u64));
        } else {
            g.throughput(Throughput::Elements(ours_events.len() as u64));
        }
        g.sample_size(10);
        g.measurement_time(Duration::from_secs(6));
        g.bench_function("agui_fold", |b| {
            b.iter_batched(
                || ours_events.clone(),
                |evs| black_box(ours(evs, false)),
                BatchSize::PerIteration,
            )
        });
        g.bench_function("agui_emit", |b| {
            b.iter_batched(
                || ours_events.clone(),
                |evs| black_box(ours(evs, true)),
                BatchSize::PerIteration,
            )
        });
        g.bench_function("ag_ui", |b| {
            b.iter_batched(
                || peer_events.clone(),
                |evs| black_box(peer(evs)),
                BatchSize::PerIteration,
            )
        });
        g.finish();
    }
}

criterion_group!(benches, fold);
criterion_main!(benches);
