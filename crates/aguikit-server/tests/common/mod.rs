//! Test support: a server on 127.0.0.1:0 and a minimal HTTP/1.1 client over a raw
//! `TcpStream` (chunked bodies decoded by hand), plus SSE helpers.
#![allow(dead_code)]

pub mod shared;

use aguikit_core::codec::sse::SseDecoder;
use aguikit_core::engine::pipeline::Pipeline;
use aguikit_server::AgentServer;
use serde_json::Value;
use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Serves `server`'s router on a fresh loopback port.
pub async fn spawn(server: &AgentServer) -> SocketAddr {
    spawn_router(server.router()).await
}

/// A listener on a fresh loopback port, and its address.
async fn loopback() -> (tokio::net::TcpListener, SocketAddr) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    (listener, addr)
}

/// Serves `server` through `aguikit_server::serve` (which records the local address, so the
/// `Host` check applies, and enforces the connection's limits) on a fresh loopback port.
pub async fn serve(server: &AgentServer) -> SocketAddr {
    let (listener, addr) = loopback().await;
    let server = server.clone();
    tokio::spawn(async move {
        server
            .serve(listener, std::future::pending::<()>())
            .await
            .unwrap();
    });
    addr
}

/// Serves a router on a fresh loopback port.
pub async fn spawn_router(router: axum::Router) -> SocketAddr {
    let (listener, addr) = loopback().await;
    tokio::spawn(async move {
        axum::serve(listener, router).await.unwrap();
    });
    addr
}

/// Serves `server` and runs it once on `input("t", "x")`: the events it streams.
pub async fn run_once(server: &AgentServer) -> Vec<Value> {
    let addr = spawn(server).await;
    post_json(addr, "/", &input("t", "x")).await.events().await
}

/// A run input with one user message.
pub fn input(thread: &str, text: &str) -> Value {
    serde_json::json!({
        "threadId": thread,
        "runId": format!("run-{}", std::process::id()),
        "messages": [{"id": "u1", "role": "user", "content": text}],
        "state": {},
        "tools": [],
        "context": [],
        "forwardedProps": {}
    })
}

pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    stream: TcpStream,
    buf: Vec<u8>,
    chunked: bool,
    remaining: Option<usize>,
    done: bool,
}

/// Sends one request (`Connection: close`) and reads the response head.
pub async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    let stream = TcpStream::connect(addr).await.unwrap();
    request_on(stream, method, path, headers, body).await
}

pub async fn request_on(
    mut stream: TcpStream,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str("Host: localhost\r\n");
    }
    let mut has_len = false;
    for (k, v) in headers {
        has_len |=
            k.eq_ignore_ascii_case("content-length") || k.eq_ignore_ascii_case("transfer-encoding");
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if !has_len {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body).await.unwrap();
    read_head(stream).await
}

async fn read_head(mut stream: TcpStream) -> Response {
    let mut buf = Vec::new();
    let end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "connection closed before the response head");
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8(buf[..end].to_vec()).unwrap();
    let rest = buf[end + 4..].to_vec();
    let mut lines = head.split("\r\n");
    let status: u16 = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .map(|l| {
            let (k, v) = l.split_once(':').unwrap();
            (k.trim().to_ascii_lowercase(), v.trim().to_owned())
        })
        .collect();
    let chunked = lookup(&headers, "transfer-encoding").is_some_and(|v| v.contains("chunked"));
    let remaining = lookup(&headers, "content-length").map(|v| v.parse().unwrap());
    Response {
        status,
        headers,
        stream,
        buf: rest,
        chunked,
        remaining,
        done: false,
    }
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        lookup(&self.headers, name)
    }

    async fn fill(&mut self) -> bool {
        let mut chunk = vec![0u8; 64 * 1024];
        match self.stream.read(&mut chunk).await {
            Ok(0) | Err(_) => false,
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                true
            }
        }
    }

    /// The next piece of the body, or `None` at its end.
    pub async fn next_data(&mut self) -> Option<Vec<u8>> {
        if self.done {
            return None;
        }
        if self.chunked {
            loop {
                if let Some(i) = self.buf.windows(2).position(|w| w == b"\r\n") {
                    let size_line = std::str::from_utf8(&self.buf[..i]).unwrap();
                    let size =
                        usize::from_str_radix(size_line.split(';').next().unwrap().trim(), 16)
                            .unwrap();
                    if size == 0 {
                        self.done = true;
                        return None;
                    }
                    if self.buf.len() >= i + 2 + size + 2 {
                        let data = self.buf[i + 2..i + 2 + size].to_vec();
                        self.buf.drain(..i + 2 + size + 2);
                        return Some(data);
                    }
                }
                if !self.fill().await {
                    self.done = true;
                    return None;
                }
            }
        }
        if let Some(rem) = self.remaining {
            while self.buf.len() < rem {
                if !self.fill().await {
                    break;
                }
            }
            self.done = true;
            return Some(std::mem::take(&mut self.buf));
        }
        if self.buf.is_empty() && !self.fill().await {
            self.done = true;
            return None;
        }
        Some(std::mem::take(&mut self.buf))
    }

    pub async fn body(mut self) -> Vec<u8> {
        let mut out = Vec::new();
        while let Some(d) = self.next_data().await {
            out.extend_from_slice(&d);
        }
        out
    }

    pub async fn json(self) -> Value {
        let body = self.body().await;
        serde_json::from_slice(&body)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&body)))
    }

    pub async fn text(self) -> String {
        String::from_utf8(self.body().await).unwrap()
    }

    /// The body's SSE frames, each `data` parsed as JSON.
    pub async fn events(self) -> Vec<Value> {
        sse_events(&self.body().await)
    }

    /// Reads SSE frames until `n` events arrived (or the body ended).
    pub async fn read_events(&mut self, n: usize, decoder: &mut SseDecoder) -> Vec<Value> {
        let mut out = Vec::new();
        while out.len() < n {
            while let Some(f) = decoder.next_frame().unwrap() {
                out.push(serde_json::from_str(&f.data).unwrap());
            }
            if out.len() >= n {
                break;
            }
            match self.next_data().await {
                Some(d) => decoder.push(&d),
                None => break,
            }
        }
        out
    }
}

/// The value paired with `key` (the first one).
fn lookup<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

pub fn sse_events(body: &[u8]) -> Vec<Value> {
    SseDecoder::decode_all(body)
        .unwrap()
        .into_iter()
        .map(|f| serde_json::from_str(&f.data).unwrap())
        .collect()
}

pub fn types(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect()
}

/// Folds events with the client pipeline; panics on any protocol error.
pub fn fold(events: &[Value]) -> Pipeline {
    let mut p = Pipeline::new();
    for e in events {
        p.push_value(e.clone())
            .unwrap_or_else(|err| panic!("{err}"));
    }
    p.finish().unwrap();
    p
}

/// POSTs `body` as JSON asking for SSE.
pub async fn post_json(addr: SocketAddr, path: &str, body: &Value) -> Response {
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "text/event-stream"),
    ];
    post_value(addr, path, &headers, body).await
}

/// POSTs the run input `input("t", "x")` with exactly these headers.
pub async fn post_input(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> Response {
    post_value(addr, path, headers, &input("t", "x")).await
}

/// POSTs `body` as JSON asking for `accept`.
pub async fn post_accepting(addr: SocketAddr, path: &str, accept: &str, body: &Value) -> Response {
    let headers = [("Accept", accept), ("Content-Type", "application/json")];
    post_value(addr, path, &headers, body).await
}

/// Asserts that `res` is an SSE stream (`case` names the request in the failure).
pub fn assert_sse(res: &Response, case: &str) {
    assert_eq!(
        res.header("content-type"),
        Some("text/event-stream"),
        "{case}"
    );
}

/// POSTs `body` serialized as JSON with exactly these headers.
pub async fn post_value(
    addr: SocketAddr,
    path: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> Response {
    post(addr, path, headers, body.to_string().as_bytes()).await
}

/// POSTs `body` with exactly these headers.
pub async fn post(addr: SocketAddr, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Response {
    request(addr, "POST", path, headers, body).await
}

/// What a stream leaves, folded independently of the engine's applier: message texts in
/// order of creation (text, reasoning and tool messages) and the state.
pub struct Folded {
    pub texts: Vec<(String, String)>,
    pub state: Value,
}

impl Folded {
    pub fn text(&self, id: &str) -> Option<&str> {
        lookup(&self.texts, id)
    }
    pub fn all_texts(&self) -> Vec<&str> {
        self.texts.iter().map(|(_, t)| t.as_str()).collect()
    }
}

pub fn fold_simple(events: &[Value], initial_state: Value) -> Folded {
    let mut f = Folded {
        texts: Vec::new(),
        state: initial_state,
    };
    let mut last_chunk_id = String::new();
    for e in events {
        let id = e["messageId"].as_str().unwrap_or("").to_owned();
        let push =
            |f: &mut Folded, id: &str, delta: &str| match f.texts.iter_mut().find(|(i, _)| i == id)
            {
                Some((_, t)) => t.push_str(delta),
                None => f.texts.push((id.to_owned(), delta.to_owned())),
            };
        match e["type"].as_str().unwrap() {
            "TEXT_MESSAGE_START" | "REASONING_MESSAGE_START" => push(&mut f, &id, ""),
            "TEXT_MESSAGE_CONTENT" | "REASONING_MESSAGE_CONTENT" => {
                push(&mut f, &id, e["delta"].as_str().unwrap())
            }
            "TEXT_MESSAGE_CHUNK" => {
                let id = if id.is_empty() {
                    last_chunk_id.clone()
                } else {
                    id
                };
                last_chunk_id = id.clone();
                push(&mut f, &id, e["delta"].as_str().unwrap_or(""));
            }
            "TOOL_CALL_RESULT" => push(&mut f, &id, e["content"].as_str().unwrap_or("")),
            "STATE_SNAPSHOT" => f.state = e["snapshot"].clone(),
            "STATE_DELTA" => {
                let ops: aguikit_core::patch::JsonPatch =
                    serde_json::from_value(e["delta"].clone()).unwrap();
                aguikit_core::patch::apply_patch(&mut f.state, &ops).unwrap();
            }
            _ => {}
        }
    }
    f
}
