//! Append throughput (batched), many concurrent small runs (what a busy server does), and
//! replay of a 1M-event thread.
//!
//! `cargo bench -p aguikit-store --features postgres` (PostgreSQL figures need
//! `AGUI_TEST_POSTGRES_URL`; without it they are skipped, and say so).

#![allow(missing_docs)]

#[path = "../tests/common/rt.rs"]
mod rt;

use aguikit_core::Event;
use aguikit_store::{EventStore, MemoryStore, SqliteStore};
use criterion::measurement::WallTime;
use criterion::{
    BenchmarkGroup, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main,
};
use rt::rt;
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const BATCH: usize = 1000;
const REPLAY: u64 = 1_000_000;

fn content(i: usize) -> Event {
    Event::from_json_slice(
        &serde_json::to_vec(&json!({
            "type": "TEXT_MESSAGE_CONTENT", "messageId": "msg-0001", "delta": format!("token {i} of the reply ")
        }))
        .unwrap(),
    )
    .unwrap()
}

fn batch() -> Vec<Event> {
    (0..BATCH).map(content).collect()
}

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join("aguikit-store-bench");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A benchmark group of 5-second measurements, each iteration counting `elements`.
fn group<'c>(c: &'c mut Criterion, name: &str, elements: usize) -> BenchmarkGroup<'c, WallTime> {
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements(elements as u64));
    g.measurement_time(Duration::from_secs(5));
    g
}

/// Appends `BATCH`-event batches to one run; reports events per second.
fn bench_append(
    c: &mut Criterion,
    name: &str,
    store: Arc<dyn EventStore>,
    rt: &tokio::runtime::Runtime,
) {
    let mut g = group(c, "append", BATCH);
    let events = batch();
    let thread = format!("bench-{}", std::process::id());
    g.bench_function(BenchmarkId::new(name, format!("batch{BATCH}")), |b| {
        b.to_async(rt).iter(|| {
            let (s, t, e) = (store.clone(), thread.clone(), &events);
            async move { s.append(&t, "run", e).await.unwrap() }
        })
    });
    g.finish();
}

/// Runs in flight at once in [`bench_runs`].
const CONCURRENCY: usize = 32;

/// One run the way a server stores it: its lease, `RUN_STARTED` alone, ten small batches of
/// deltas, then `RUN_FINISHED`, each thread new.
async fn one_run(store: &dyn EventStore, thread: &str) {
    let run = "run";
    store.renew_lease(thread, run, u64::MAX / 2).await.unwrap();
    let start = Event::from_json_slice(
        &serde_json::to_vec(&json!({"type": "RUN_STARTED", "threadId": thread, "runId": run}))
            .unwrap(),
    )
    .unwrap();
    store.append(thread, run, &[start]).await.unwrap();
    for i in 0..10 {
        let deltas: Vec<Event> = (i * 3..i * 3 + 3).map(content).collect();
        store.append(thread, run, &deltas).await.unwrap();
    }
    let end = Event::from_json_slice(
        &serde_json::to_vec(&json!({"type": "RUN_FINISHED", "threadId": thread, "runId": run}))
            .unwrap(),
    )
    .unwrap();
    store.append(thread, run, &[end]).await.unwrap();
}

/// `CONCURRENCY` runs at once, each on a thread of its own; reports runs per second.
fn bench_runs(
    c: &mut Criterion,
    name: &str,
    store: Arc<dyn EventStore>,
    rt: &tokio::runtime::Runtime,
) {
    let mut g = group(c, "concurrent_runs", CONCURRENCY);
    let next = Arc::new(AtomicU64::new(0));
    let prefix = format!("runs-{}", std::process::id());
    g.bench_function(BenchmarkId::new(name, format!("c{CONCURRENCY}")), |b| {
        b.to_async(rt).iter(|| {
            let (store, next, prefix) = (store.clone(), next.clone(), prefix.clone());
            async move {
                let tasks: Vec<_> = (0..CONCURRENCY)
                    .map(|_| {
                        let store = store.clone();
                        let thread = format!("{prefix}-{}", next.fetch_add(1, Ordering::Relaxed));
                        tokio::spawn(async move { one_run(&*store, &thread).await })
                    })
                    .collect();
                for t in tasks {
                    t.await.unwrap();
                }
            }
        })
    });
    g.finish();
}

fn appends(c: &mut Criterion) {
    let rt = rt();
    bench_append(c, "memory", Arc::new(MemoryStore::new()), &rt);
    let path = dir().join(format!("append-{}.db", std::process::id()));
    let sqlite = rt.block_on(SqliteStore::open(&path)).unwrap();
    bench_append(c, "sqlite", Arc::new(sqlite.clone()), &rt);
    bench_runs(c, "memory", Arc::new(MemoryStore::new()), &rt);
    bench_runs(c, "sqlite", Arc::new(sqlite), &rt);
    for ext in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{ext}", path.display()));
    }
    #[cfg(feature = "postgres")]
    match std::env::var("AGUI_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => {
            let schema = format!("agui_bench_{}", std::process::id());
            let pg = rt
                .block_on(aguikit_store::PostgresStore::connect(&url, &schema))
                .unwrap();
            bench_append(c, "postgres", Arc::new(pg.clone()), &rt);
            bench_runs(c, "postgres", Arc::new(pg.clone()), &rt);
            rt.block_on(pg.drop_schema()).unwrap();
        }
        _ => println!("append/postgres: skipped (AGUI_TEST_POSTGRES_URL is not set)"),
    }
    #[cfg(not(feature = "postgres"))]
    println!("append/postgres: skipped (built without the `postgres` feature)");
}

/// Reads a 1M-event SQLite thread back, as stored JSON and decoded.
fn replay(c: &mut Criterion) {
    let rt = rt();
    // Named for the store's layout (several events per row, in a rowid table): a file of
    // another layout is not reused. Change the name when the layout changes.
    let path = dir().join("replay-1m-rowid-rows.db");
    let store = rt.block_on(SqliteStore::open(&path)).unwrap();
    let have = rt
        .block_on(store.thread("replay"))
        .map_or(0, |t| t.last_seq);
    if have != REPLAY {
        drop(store);
        for ext in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{ext}", path.display()));
        }
        let store = rt.block_on(SqliteStore::open(&path)).unwrap();
        let t = Instant::now();
        let events = batch();
        rt.block_on(async {
            for _ in 0..REPLAY / BATCH as u64 {
                store.append("replay", "run", &events).await.unwrap();
            }
        });
        println!("built the 1M-event thread in {:?}", t.elapsed());
    }
    let store = rt.block_on(SqliteStore::open(&path)).unwrap();
    let mut g = c.benchmark_group("replay_1m");
    g.throughput(Throughput::Elements(REPLAY));
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    g.bench_function("sqlite/raw_json", |b| {
        b.to_async(&rt).iter(|| async {
            let v = store.read_raw("replay", 1, usize::MAX).await.unwrap();
            assert_eq!(v.len() as u64, REPLAY);
        })
    });
    g.bench_function("sqlite/decoded", |b| {
        b.to_async(&rt).iter(|| async {
            let v = store.read("replay", 1).await.unwrap();
            assert_eq!(v.len() as u64, REPLAY);
        })
    });
    g.finish();
}

criterion_group!(benches, appends, replay);
criterion_main!(benches);
