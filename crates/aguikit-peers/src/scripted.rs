//! A scripted HTTP/1.1 server on a loopback port, written on a raw TcpListener so that tests
//! control every byte: framing, chunking, pauses and abrupt closes. Each connection gets
//! the steps its script returns for its request ([`serve`]).

use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A request as the server received it.
#[derive(Debug, Clone)]
pub struct Req {
    /// The method (`POST`, `GET`, ...).
    pub method: String,
    /// The request target (path and query).
    pub path: String,
    /// Header names lower-cased, in order.
    pub headers: Vec<(String, String)>,
    /// The body (as long as its `content-length`).
    pub body: Vec<u8>,
}

impl Req {
    /// The first header named `name` (lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every header named `name` (lower-case), in order.
    pub fn headers_named(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// The body as JSON.
    ///
    /// # Panics
    ///
    /// When it is not JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("the request body is JSON")
    }
}

/// One step of a scripted response.
#[derive(Debug, Clone)]
pub enum Step {
    /// Status line and headers of a chunked response.
    Head(u16, &'static str),
    /// Status line and headers with a Content-Length body, complete.
    Full(u16, &'static str, Vec<u8>),
    /// One chunk of a chunked body.
    Chunk(Vec<u8>),
    /// Pause.
    Sleep(u64),
    /// The terminating chunk; the connection is then closed.
    End,
    /// Close the connection now (mid-body: the client sees an incomplete message).
    Drop,
    /// Keep writing keep-alive comments until the client goes away; records that it did.
    UntilClosed,
}

/// An SSE frame with `data: <json>`.
pub fn data(json: &str) -> Step {
    Step::Chunk(format!("data: {json}\n\n").into_bytes())
}

/// An SSE frame with an `id:` and `data: <json>`.
pub fn data_with_id(id: u32, json: &str) -> Step {
    Step::Chunk(format!("id: {id}\ndata: {json}\n\n").into_bytes())
}

/// A whole 200 SSE response carrying `events` (JSON), one frame each.
pub fn sse_run(events: &[&str]) -> Vec<Step> {
    let mut steps = vec![sse_head()];
    steps.extend(events.iter().map(|e| data(e)));
    steps.push(Step::End);
    steps
}

/// A 200 SSE response head.
pub fn sse_head() -> Step {
    Step::Head(200, "text/event-stream")
}

type Script = dyn Fn(usize, &Req) -> Vec<Step> + Send + Sync;

/// A running scripted server, stopped when dropped.
#[derive(Debug)]
pub struct TestServer {
    /// `http://127.0.0.1:PORT/agent`.
    pub url: String,
    /// The requests received, in order.
    pub requests: Arc<Mutex<Vec<Req>>>,
    /// Set when a client closed a connection while `UntilClosed` was writing.
    pub client_closed: Arc<Mutex<bool>>,
    task: tokio::task::JoinHandle<()>,
}

impl TestServer {
    /// A copy of the requests received so far.
    pub fn requests(&self) -> Vec<Req> {
        self.requests.lock().unwrap().clone()
    }

    /// Whether a client closed a connection while `UntilClosed` was writing.
    pub fn client_closed(&self) -> bool {
        *self.client_closed.lock().unwrap()
    }

    /// Waits up to 2 s for a client to close a connection while `UntilClosed` was writing;
    /// whether one did.
    pub async fn wait_client_closed(&self) -> bool {
        for _ in 0..100 {
            if self.client_closed() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.client_closed()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Serves `script(connection_index, request)` on 127.0.0.1, one connection per request.
///
/// # Panics
///
/// When no loopback port can be bound.
pub async fn serve(
    script: impl Fn(usize, &Req) -> Vec<Step> + Send + Sync + 'static,
) -> TestServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let requests = Arc::new(Mutex::new(Vec::new()));
    let client_closed = Arc::new(Mutex::new(false));
    let script: Arc<Script> = Arc::new(script);
    let (reqs, closed) = (requests.clone(), client_closed.clone());
    let task = tokio::spawn(async move {
        let mut n = 0;
        loop {
            let Ok((socket, _)) = listener.accept().await else {
                return;
            };
            let index = n;
            n += 1;
            let (script, reqs, closed) = (script.clone(), reqs.clone(), closed.clone());
            tokio::spawn(async move {
                handle(socket, index, script, reqs, closed).await;
            });
        }
    });
    TestServer {
        url: format!("http://{addr}/agent"),
        requests,
        client_closed,
        task,
    }
}

async fn read_request(socket: &mut TcpStream) -> Option<Req> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = socket.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let path = first.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        let n = socket.read(&mut tmp).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&tmp[..n]);
    }
    Some(Req {
        method,
        path,
        headers,
        body,
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        404 => "Not Found",
        422 => "Unprocessable Entity",
        500 => "Internal Server Error",
        _ => "Status",
    }
}

async fn handle(
    mut socket: TcpStream,
    index: usize,
    script: Arc<Script>,
    reqs: Arc<Mutex<Vec<Req>>>,
    closed: Arc<Mutex<bool>>,
) {
    let Some(req) = read_request(&mut socket).await else {
        return;
    };
    reqs.lock().unwrap().push(req.clone());
    for step in script(index, &req) {
        let bytes: Vec<u8> = match step {
            Step::Head(status, ct) => format!(
                "HTTP/1.1 {status} {}\r\ncontent-type: {ct}\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
                reason(status)
            )
            .into_bytes(),
            Step::Full(status, ct, body) => {
                let mut b = format!(
                    "HTTP/1.1 {status} {}\r\ncontent-type: {ct}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    reason(status),
                    body.len()
                )
                .into_bytes();
                b.extend_from_slice(&body);
                b
            }
            Step::Chunk(data) => {
                let mut b = format!("{:x}\r\n", data.len()).into_bytes();
                b.extend_from_slice(&data);
                b.extend_from_slice(b"\r\n");
                b
            }
            Step::Sleep(ms) => {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                continue;
            }
            Step::End => b"0\r\n\r\n".to_vec(),
            Step::Drop => return,
            Step::UntilClosed => {
                for _ in 0..250 {
                    let ping = b"8\r\n: ping\n\n\r\n";
                    if socket.write_all(ping).await.is_err() || socket.flush().await.is_err() {
                        *closed.lock().unwrap() = true;
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                return;
            }
        };
        if socket.write_all(&bytes).await.is_err() {
            return;
        }
        let _ = socket.flush().await;
    }
    let _ = socket.shutdown().await;
}

/// `RUN_STARTED` of thread `t` as JSON.
pub fn run_started(run: &str) -> String {
    format!(r#"{{"type":"RUN_STARTED","threadId":"t","runId":"{run}"}}"#)
}

/// `RUN_FINISHED` of thread `t` as JSON.
pub fn run_finished(run: &str) -> String {
    format!(r#"{{"type":"RUN_FINISHED","threadId":"t","runId":"{run}"}}"#)
}

/// `TEXT_MESSAGE_START` of an assistant message as JSON.
pub fn text_start(id: &str) -> String {
    format!(r#"{{"type":"TEXT_MESSAGE_START","messageId":"{id}","role":"assistant"}}"#)
}

/// `TEXT_MESSAGE_CONTENT` as JSON (`delta` is inserted as is, unescaped).
pub fn text_content(id: &str, delta: &str) -> String {
    format!(r#"{{"type":"TEXT_MESSAGE_CONTENT","messageId":"{id}","delta":"{delta}"}}"#)
}

/// `TEXT_MESSAGE_END` as JSON.
pub fn text_end(id: &str) -> String {
    format!(r#"{{"type":"TEXT_MESSAGE_END","messageId":"{id}"}}"#)
}

/// The event types of a chat run with `contents` `TEXT_MESSAGE_CONTENT` events (one, for
/// what [`chat`] sends).
pub fn chat_types(contents: usize) -> Vec<&'static str> {
    let mut types = vec!["RUN_STARTED", "TEXT_MESSAGE_START"];
    types.extend(std::iter::repeat_n("TEXT_MESSAGE_CONTENT", contents));
    types.extend(["TEXT_MESSAGE_END", "RUN_FINISHED"]);
    types
}

/// A full chat run as SSE steps.
pub fn chat(run: &str, text: &str) -> Vec<Step> {
    sse_run(&[
        &run_started(run),
        &text_start("m1"),
        &text_content("m1", text),
        &text_end("m1"),
        &run_finished(run),
    ])
}
