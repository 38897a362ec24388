//! Engine throughput: chunk expansion + verification + application over already-parsed
//! events, on the chat, state and mixed workloads, and the chat workload at 10k, 100k and 1M
//! deltas (linearity).
//!
//! ```sh
//! cargo bench -p aguikit-core --bench engine
//! ```

mod workloads;

use aguikit_core::Event;
use aguikit_core::engine::pipeline::Pipeline;
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

fn run(events: Vec<Event>) -> Pipeline {
    let mut p = Pipeline::new();
    for e in events {
        p.push(e).expect("workload is valid");
    }
    p.finish().expect("workload is valid");
    p
}

fn bench_workload(c: &mut Criterion, group: &str, name: &str) {
    let events = workloads::events(name);
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(events.len() as u64));
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(8));
    g.bench_function(name, |b| {
        b.iter_batched(
            || events.clone(),
            |evs| black_box(run(evs)),
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

fn engine(c: &mut Criterion) {
    for name in ["w1_chat", "w2_state", "w3_mixed"] {
        bench_workload(c, "engine", name);
    }
    for name in ["w1_s10000", "w1_s100000", "w1_s1000000"] {
        bench_workload(c, "engine_chat_scaling", name);
    }
}

criterion_group!(benches, engine);
criterion_main!(benches);
