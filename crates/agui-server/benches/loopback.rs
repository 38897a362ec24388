//! End-to-end benchmarks over loopback TCP: the server, a real socket, and a Rust client
//! that decodes SSE and folds every event with the engine's client pipeline.
//!
//! - `one_run/1m_text_deltas`: one run streaming 1,000,000 `TEXT_MESSAGE_CONTENT` events;
//!   throughput in events/s, end to end (the client's fold included).
//! - `short_runs/c32`: runs of 20 events at concurrency 32 (keep-alive connections);
//!   throughput in runs/s. With `AGUI_PY_SERVER_URL` set (the official-SDK Python server
//!   of `shared/interop/py-server`, e.g. `http://127.0.0.1:8123/agent`), the same client
//!   measures it too (scenario `tools`, 18 events), for comparison.
//!
//!     cargo bench -p agui-server --bench loopback
//!
//! The server runs on a one-thread tokio runtime, the client on the bench thread (short
//! runs: a second one-thread runtime), so on a 2-core machine each side has a core.

#![allow(missing_docs)]

use agui_core::codec::sse::SseDecoder;
use agui_core::engine::pipeline::Pipeline;
use agui_server::{AgentServer, Finish, ServerConfig, agent_fn};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const DELTAS: u64 = 1_000_000;

fn server_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

fn start(rt: &tokio::runtime::Runtime, server: AgentServer) -> SocketAddr {
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, server.router()).await.unwrap() });
        addr
    })
}

fn request(path: &str, body: &str) -> Vec<u8> {
    format!(
        "POST {path} HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Incremental HTTP/1.1 chunked-body reader feeding an SSE decoder.
struct ChunkedSse {
    buf: Vec<u8>,
    pos: usize,
    head_done: bool,
    /// Bytes left in the current chunk (+2 for its CRLF), or `None` between chunks.
    left: Option<usize>,
    done: bool,
    decoder: SseDecoder,
}

impl ChunkedSse {
    fn new() -> Self {
        ChunkedSse {
            buf: Vec::with_capacity(256 * 1024),
            pos: 0,
            head_done: false,
            left: None,
            done: false,
            decoder: SseDecoder::new(),
        }
    }

    /// Consumes what is buffered: body bytes go to the decoder.
    fn advance(&mut self) {
        loop {
            let avail = &self.buf[self.pos..];
            if !self.head_done {
                // The end of the previous response may trail on a kept-alive connection.
                let skip = avail
                    .iter()
                    .take_while(|b| matches!(b, b'\r' | b'\n'))
                    .count();
                self.pos += skip;
                let avail = &self.buf[self.pos..];
                let Some(i) = avail.windows(4).position(|w| w == b"\r\n\r\n") else {
                    break;
                };
                assert!(
                    avail.starts_with(b"HTTP/1.1 200"),
                    "{}",
                    String::from_utf8_lossy(avail)
                );
                self.pos += i + 4;
                self.head_done = true;
                continue;
            }
            match self.left {
                None => {
                    let Some(i) = avail.windows(2).position(|w| w == b"\r\n") else {
                        break;
                    };
                    let size = usize::from_str_radix(std::str::from_utf8(&avail[..i]).unwrap(), 16)
                        .unwrap();
                    self.pos += i + 2;
                    if size == 0 {
                        self.done = true;
                        self.pos += 2.min(self.buf.len() - self.pos);
                        break;
                    }
                    self.left = Some(size + 2);
                }
                Some(left) => {
                    if avail.is_empty() {
                        break;
                    }
                    let n = left.min(avail.len());
                    let data_end = n.min(left.saturating_sub(2));
                    if data_end > 0 {
                        self.decoder.push(&avail[..data_end]);
                    }
                    self.pos += n;
                    self.left = (left > n).then_some(left - n);
                }
            }
        }
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        } else if self.pos > 128 * 1024 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
    }
}

/// One run, folded: returns the number of events.
fn fold_run(addr: SocketAddr, body: &str) -> (u64, usize) {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.set_nodelay(true).unwrap();
    stream.write_all(&request("/", body)).unwrap();
    let mut reader = ChunkedSse::new();
    let mut pipeline = Pipeline::new();
    let mut events = 0u64;
    let mut chunk = vec![0u8; 256 * 1024];
    while !reader.done {
        let n = stream.read(&mut chunk).unwrap();
        assert!(n > 0, "connection closed early");
        reader.buf.extend_from_slice(&chunk[..n]);
        reader.advance();
        while let Some(frame) = reader.decoder.next_frame().unwrap() {
            pipeline.push_json(frame.data.as_bytes()).unwrap();
            events += 1;
        }
    }
    pipeline.finish().unwrap();
    let text_len = pipeline.applier().messages()[0].text().map_or(0, str::len);
    (events, text_len)
}

fn one_run(c: &mut Criterion) {
    let rt = server_runtime();
    let server = AgentServer::new(agent_fn(|_i, ctx| async move {
        let msg = ctx.text_message().start().await?;
        for _ in 0..DELTAS {
            msg.delta("tok ").await?;
        }
        msg.end().await?;
        Ok(Finish::success())
    }))
    .config(ServerConfig::default().buffer_bytes(64 * 1024));
    let addr = start(&rt, server);
    let body = r#"{"threadId":"t","runId":"r","messages":[],"state":{}}"#;
    let mut g = c.benchmark_group("one_run");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    g.throughput(Throughput::Elements(DELTAS + 4));
    g.bench_function("1m_text_deltas", |b| {
        b.iter(|| {
            let (events, len) = fold_run(addr, body);
            assert_eq!(events, DELTAS + 4);
            assert_eq!(len, 4 * DELTAS as usize);
        })
    });
    g.finish();
}

/// One keep-alive connection doing `runs` runs; returns how many ended in RUN_FINISHED.
async fn short_client(addr: SocketAddr, path: String, body: String, runs: usize) -> usize {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.set_nodelay(true).unwrap();
    let req = request(&path, &body);
    let mut ok = 0;
    let mut chunk = vec![0u8; 64 * 1024];
    for _ in 0..runs {
        stream.write_all(&req).await.unwrap();
        let mut reader = ChunkedSse::new();
        let mut pipeline = Pipeline::new();
        let mut last = String::new();
        while !reader.done {
            let n = stream.read(&mut chunk).await.unwrap();
            assert!(n > 0, "connection closed early");
            reader.buf.extend_from_slice(&chunk[..n]);
            reader.advance();
            while let Some(frame) = reader.decoder.next_frame().unwrap() {
                for e in pipeline.push_json(frame.data.as_bytes()).unwrap() {
                    last = e.type_str().to_owned();
                }
            }
        }
        if pipeline.finish().is_ok() && last == "RUN_FINISHED" {
            ok += 1;
        }
    }
    ok
}

fn short_runs_against(c: &mut Criterion, name: &str, addr: SocketAddr, path: &str, body: &str) {
    const CONCURRENCY: usize = 32;
    const PER_CLIENT: usize = 20;
    let client_rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut g = c.benchmark_group("short_runs");
    g.sample_size(10);
    g.throughput(Throughput::Elements((CONCURRENCY * PER_CLIENT) as u64));
    g.bench_function(name, |b| {
        b.iter(|| {
            client_rt.block_on(async {
                let tasks: Vec<_> = (0..CONCURRENCY)
                    .map(|_| {
                        tokio::spawn(short_client(
                            addr,
                            path.to_owned(),
                            body.to_owned(),
                            PER_CLIENT,
                        ))
                    })
                    .collect();
                let mut ok = 0;
                for t in tasks {
                    ok += t.await.unwrap();
                }
                assert_eq!(ok, CONCURRENCY * PER_CLIENT);
            })
        })
    });
    g.finish();
}

fn short_runs(c: &mut Criterion) {
    let rt = server_runtime();
    // 20 events: RUN_STARTED, a step around a 15-delta message, RUN_FINISHED.
    let server = AgentServer::new(agent_fn(|_i, ctx| async move {
        let step = ctx.step("answer").await?;
        let msg = ctx.text_message().start().await?;
        for i in 0..14 {
            msg.delta(format!("word{i} ")).await?;
        }
        msg.end().await?;
        step.finish().await?;
        Ok(Finish::success())
    }));
    let addr = start(&rt, server);
    let body = r#"{"threadId":"t","runId":"r","messages":[{"id":"u1","role":"user","content":"hi"}],"state":{},"tools":[],"context":[],"forwardedProps":{}}"#;
    short_runs_against(c, "c32_rust_20_events", addr, "/", body);
    if let Ok(url) = std::env::var("AGUI_PY_SERVER_URL") {
        let rest = url.strip_prefix("http://").expect("http:// URL");
        let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
        let addr: SocketAddr = host.parse().expect("loopback ip:port");
        assert!(addr.ip().is_loopback(), "benchmarks only talk to loopback");
        let body = r#"{"threadId":"t","runId":"r","messages":[{"id":"u1","role":"user","content":"hi"}],"state":{},"tools":[],"context":[],"forwardedProps":{"scenario":"tools"}}"#;
        short_runs_against(
            c,
            "c32_python_sdk_18_events",
            addr,
            &format!("/{path}"),
            body,
        );
    }
}

criterion_group!(benches, one_run, short_runs);
criterion_main!(benches);
