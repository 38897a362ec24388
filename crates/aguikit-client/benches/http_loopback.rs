//! The real client against the real server over loopback sockets (issue 13): `HttpAgent`
//! runs against an `AgentServer` served by `aguikit_server::serve` (TCP_NODELAY, keep-alive),
//! through the whole client pipeline (decode, expand, verify, apply). No hand-written
//! client or server on either side.
//!
//! - `run_c1`: one 25-event run at a time over a reused connection: the latency a user
//!   sees per run (criterion reports the time per run).
//! - `runs_c32`: 32 runs in flight at once: throughput (criterion reports runs/s).
//!
//! Each against three servers: without a store (`http_loopback`), with the in-memory
//! store (`http_loopback_memory`) and with a SQLite file in the temporary directory
//! (`http_loopback_sqlite`): with a store every event is stored before the client gets it.
//!
//! ```sh
//! cargo bench -p aguikit-client --bench http_loopback
//! ```
//!
//! For the figures of the `agui` binary itself (`agui load` against `agui serve` on each
//! store, and against the official Python server), see `scripts/load-compare.sh`.

use aguikit_client::HttpAgent;
use aguikit_core::RunAgentInput;
use aguikit_server::aguikit_store::{EventStore, MemoryStore};
use aguikit_server::{AgentServer, Finish, StoreOptions, agent_fn};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures_util::StreamExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A server whose agent streams a 25-event run (21 text deltas), like `agui serve
/// --delay-ms 0` does for a short reply.
fn server() -> AgentServer {
    AgentServer::new(agent_fn(|_input, ctx| async move {
        let m = ctx.text_message().start().await?;
        for i in 0..21 {
            m.delta(format!("piece {i} ")).await?;
        }
        m.end().await?;
        Ok(Finish::success())
    }))
    .path("/agent")
}

fn input(n: u64) -> RunAgentInput {
    serde_json::from_value(serde_json::json!({
        "threadId": format!("t{n}"), "runId": format!("r{n}"),
        "messages": [{"id": format!("u{n}"), "role": "user", "content": "hello"}],
        "state": {}, "tools": [], "context": []
    }))
    .unwrap()
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let db = std::env::temp_dir().join(format!("agui-http-loopback-{}.db", std::process::id()));
    let sqlite = rt.block_on(aguikit_store::SqliteStore::open(&db)).unwrap();
    let stores: [(&str, Option<Arc<dyn EventStore>>); 3] = [
        ("http_loopback", None),
        ("http_loopback_memory", Some(Arc::new(MemoryStore::new()))),
        ("http_loopback_sqlite", Some(Arc::new(sqlite))),
    ];
    for (name, store) in stores {
        let server = match store {
            Some(store) => server().store(StoreOptions::new(store)),
            None => server(),
        };
        bench_server(c, &rt, name, server);
    }
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
}

/// The two figures against `server`, in criterion group `name`.
fn bench_server(c: &mut Criterion, rt: &tokio::runtime::Runtime, name: &str, server: AgentServer) {
    let url = rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            server
                .serve(listener, std::future::pending::<()>())
                .await
                .unwrap()
        });
        format!("http://{addr}/agent")
    });
    let agent = HttpAgent::new(&url).unwrap();
    let counter = AtomicU64::new(0);
    // A run as a user's code consumes it: every event decoded, expanded and verified by
    // the client, then folded by the engine.
    let run = |agent: &HttpAgent, n: u64| {
        let agent = agent.clone();
        async move {
            let mut stream = agent.run(input(n));
            let mut pipeline = aguikit_core::engine::pipeline::Pipeline::new();
            while let Some(e) = stream.next().await {
                pipeline.push(e.unwrap()).unwrap();
            }
            // The reply (after the user's message, which a stored RUN_STARTED echoes).
            assert!(matches!(
                pipeline.applier().messages().last(),
                Some(aguikit_core::Message::Assistant(_))
            ));
        }
    };
    let mut g = c.benchmark_group(name);
    g.measurement_time(Duration::from_secs(8));
    g.throughput(Throughput::Elements(1));
    g.bench_function("run_c1", |b| {
        b.iter(|| rt.block_on(run(&agent, counter.fetch_add(1, Ordering::Relaxed))))
    });
    g.throughput(Throughput::Elements(32));
    g.bench_function("runs_c32", |b| {
        b.iter(|| {
            rt.block_on(async {
                let runs: Vec<_> = (0..32)
                    .map(|_| tokio::spawn(run(&agent, counter.fetch_add(1, Ordering::Relaxed))))
                    .collect();
                for r in runs {
                    r.await.unwrap();
                }
            })
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
