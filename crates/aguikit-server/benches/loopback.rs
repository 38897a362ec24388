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
//!     cargo bench -p aguikit-server --bench loopback
//!
//! The server runs on a one-thread tokio runtime, the client on the bench thread (short
//! runs: a second one-thread runtime), so on a 2-core machine each side has a core.

#![allow(missing_docs)]

use aguikit_core::codec::sse::SseDecoder;
use aguikit_core::engine::pipeline::Pipeline;
use aguikit_server::{AgentServer, Finish, ServerConfig, agent_fn};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[path = "../tests/common/shared.rs"]
#[allow(dead_code)]
mod shared;

const DELTAS: u64 = 1_000_000;

fn server_runtime() -> tokio::runtime::Runtime {
    shared::runtime(1)
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

/// Incremental HTTP/1.1 chunked-body reader feeding an SSE decoder straight from each
/// read (only a partial head or chunk-size line is ever kept).
struct ChunkedSse {
    /// A partial response head or chunk-size line.
    line: Vec<u8>,
    head_done: bool,
    /// Bytes left in the current chunk (+2 for its CRLF), or `None` between chunks.
    left: Option<usize>,
    done: bool,
    decoder: SseDecoder,
}

impl ChunkedSse {
    fn new() -> Self {
        ChunkedSse {
            line: Vec::new(),
            head_done: false,
            left: None,
            done: false,
            decoder: SseDecoder::new(),
        }
    }

    /// Consumes one read: body bytes go to the decoder.
    fn feed(&mut self, mut input: &[u8]) {
        while !input.is_empty() && !self.done {
            if !self.head_done {
                if self.line.is_empty() {
                    // The end of the previous response may trail on a kept-alive connection.
                    let skip = input
                        .iter()
                        .take_while(|b| matches!(b, b'\r' | b'\n'))
                        .count();
                    input = &input[skip..];
                }
                self.line.extend_from_slice(input);
                if let Some(i) = self.line.windows(4).position(|w| w == b"\r\n\r\n") {
                    assert!(
                        self.line.starts_with(b"HTTP/1.1 200"),
                        "{}",
                        String::from_utf8_lossy(&self.line)
                    );
                    let rest = self.line.split_off(i + 4);
                    self.line.clear();
                    self.head_done = true;
                    self.feed(&rest);
                }
                return;
            }
            match self.left {
                None => {
                    let Some(i) = input.iter().position(|&b| b == b'\n') else {
                        self.line.extend_from_slice(input);
                        return;
                    };
                    self.line.extend_from_slice(&input[..=i]);
                    input = &input[i + 1..];
                    let text = std::str::from_utf8(&self.line).unwrap().trim();
                    let size = usize::from_str_radix(text, 16).unwrap();
                    self.line.clear();
                    if size == 0 {
                        self.done = true;
                        return;
                    }
                    self.left = Some(size + 2);
                }
                Some(left) => {
                    let n = left.min(input.len());
                    let data = n.min(left.saturating_sub(2));
                    if data > 0 {
                        self.decoder.push(&input[..data]);
                    }
                    input = &input[n..];
                    self.left = (left > n).then_some(left - n);
                }
            }
        }
    }
}

/// Decodes and folds one SSE frame; returns the expanded events it became.
fn fold_frame<'p>(pipeline: &'p mut Pipeline, data: &str) -> &'p [aguikit_core::Event] {
    // Decoding first and pushing the event is what `push_json` does, minus the
    // type-hint parse it makes for its error message.
    let event = aguikit_core::Event::from_json_str(data).unwrap();
    pipeline.push(event).unwrap()
}

/// One run, only counted (SSE frames end with a blank line): the server's side alone.
fn count_run(addr: SocketAddr, body: &str) -> u64 {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.set_nodelay(true).unwrap();
    stream.write_all(&request("/", body)).unwrap();
    let mut chunk = vec![0u8; 256 * 1024];
    let mut frames = 0u64;
    let mut tail = Vec::new();
    let mut last = 0u8;
    loop {
        let n = stream.read(&mut chunk).unwrap();
        assert!(n > 0, "connection closed early");
        let data = &chunk[..n];
        frames += data.windows(2).filter(|w| w == b"\n\n").count() as u64;
        frames += u64::from(last == b'\n' && data[0] == b'\n');
        last = data[n - 1];
        // The last chunk of a chunked body, with the frame that ends the run.
        tail.extend_from_slice(&data[data.len().saturating_sub(64)..]);
        if tail.len() > 128 {
            tail.drain(..tail.len() - 64);
        }
        if tail.ends_with(b"\r\n0\r\n\r\n") {
            return frames;
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
    let mut streamed = 0usize;
    let mut chunk = vec![0u8; 256 * 1024];
    while !reader.done {
        let n = stream.read(&mut chunk).unwrap();
        assert!(n > 0, "connection closed early");
        reader.feed(&chunk[..n]);
        while let Some(frame) = reader.decoder.next_frame().unwrap() {
            for e in fold_frame(&mut pipeline, &frame.data) {
                if let aguikit_core::Event::TextMessageContent(c) = e {
                    streamed += c.delta.len();
                }
            }
            events += 1;
        }
    }
    pipeline.finish().unwrap();
    // The folded message, when the engine's applier is built (else the streamed length).
    let text_len = pipeline
        .applier()
        .messages()
        .first()
        .and_then(|m| m.text())
        .map_or(streamed, str::len);
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
    g.bench_function("1m_text_deltas_server_only", |b| {
        b.iter(|| assert!(count_run(addr, body) >= DELTAS + 4))
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
            reader.feed(&chunk[..n]);
            while let Some(frame) = reader.decoder.next_frame().unwrap() {
                for e in fold_frame(&mut pipeline, &frame.data) {
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
