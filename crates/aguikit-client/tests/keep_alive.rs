//! Runs over one reused keep-alive connection do not stall on Nagle's algorithm.
//!
//! Without `TCP_NODELAY`, a small segment written while an earlier one is unacknowledged waits
//! for that ACK, and a peer that has nothing to send delays its ACK by 40 ms: every run on a
//! reused connection would then last at least 40 ms. The request here carries a conversation
//! larger than one loopback segment, so it leaves in several. The server is a plain tokio loop
//! that leaves Nagle on for its own socket, answers only after it has read the whole request
//! body, and sends each response in one write, so a stall could only come from the client.

use aguikit_client::HttpAgent;
use aguikit_core::{Message, RunAgentInput};
use futures_util::StreamExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Runs per batch; a stalled client needs at least `RUNS × 40 ms`.
const RUNS: u32 = 10;

/// The size of the conversation sent with every run: more than one loopback segment (64 KiB),
/// as a long conversation's history is, so that the request's last segment is a small one
/// that Nagle's algorithm would hold back.
const HISTORY_BYTES: usize = 100_000;

/// What a stalled batch costs at the least: one delayed ACK per run.
const STALLED_BATCH: Duration = Duration::from_millis(40 * RUNS as u64);

/// A small SSE run: start, one text message in two chunks, finish.
fn sse_body(thread: &str, run: &str) -> String {
    let frames = [
        format!(r#"{{"type":"RUN_STARTED","threadId":"{thread}","runId":"{run}"}}"#),
        r#"{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","role":"assistant","delta":"Hel"}"#
            .to_owned(),
        r#"{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"lo"}"#.to_owned(),
        format!(r#"{{"type":"RUN_FINISHED","threadId":"{thread}","runId":"{run}"}}"#),
    ];
    frames.iter().map(|f| format!("data: {f}\n\n")).collect()
}

/// The end of the header block in `buf`, if it is all there.
fn header_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

/// The `Content-Length` of a header block.
fn content_length(head: &[u8]) -> usize {
    String::from_utf8_lossy(head)
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0)
}

/// Serves requests on one connection until the client closes it.
async fn serve_connection(mut socket: TcpStream) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        // Read one whole request: the header block, then exactly its body.
        let (head_len, body_len) = loop {
            if let Some(end) = header_end(&buf) {
                let len = content_length(&buf[..end]);
                if buf.len() >= end + len {
                    break (end, len);
                }
            }
            match socket.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let body: serde_json::Value =
            serde_json::from_slice(&buf[head_len..head_len + body_len]).unwrap_or_default();
        buf.drain(..head_len + body_len);
        let sse = sse_body(
            body["threadId"].as_str().unwrap_or("t"),
            body["runId"].as_str().unwrap_or("r"),
        );
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{sse}",
            sse.len()
        );
        if socket.write_all(response.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// Starts the server; returns its URL and the count of accepted connections.
async fn start_server() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/agent", listener.local_addr().unwrap());
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            // Deliberately no `set_nodelay` here: only the client's setting is under test.
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(serve_connection(socket));
        }
    });
    (url, accepted)
}

/// One run to its end; panics unless it is the four expected events, cleanly finished.
async fn one_run(agent: &HttpAgent, i: u32) {
    let input = RunAgentInput::new("t", format!("r{i}"))
        .with_message(Message::user("u1", "x".repeat(HISTORY_BYTES)))
        .with_message(Message::user("u2", "hi"));
    let mut stream = agent.run(input);
    let mut types = Vec::new();
    while let Some(item) = stream.next().await {
        types.push(item.expect("the run succeeds").type_str().to_owned());
    }
    assert_eq!(types, aguikit_peers::scripted::chat_types(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sequential_runs_on_one_connection_do_not_wait_for_delayed_acks() {
    let (url, accepted) = start_server().await;
    let agent = HttpAgent::builder(&url).build().unwrap();
    // A stall makes every batch last at least `STALLED_BATCH`, so taking the best of three
    // batches cannot hide one; it only keeps a busy machine from failing a healthy client.
    let mut batches = Vec::new();
    for batch in 0..3 {
        let t0 = Instant::now();
        for i in 0..RUNS {
            one_run(&agent, batch * RUNS + i).await;
        }
        batches.push(t0.elapsed());
        if t0.elapsed() < STALLED_BATCH {
            break;
        }
    }
    // Connections are reused (the pool may open a second one when a run starts before
    // the previous response's connection is back in the pool).
    let connections = accepted.load(Ordering::SeqCst);
    assert!(
        connections <= 2,
        "runs must reuse kept-alive connections: {connections} connections"
    );
    let best = batches.iter().min().copied().unwrap_or_default();
    assert!(
        best < STALLED_BATCH,
        "{RUNS} runs on a reused connection took {best:?} at best (batches: {batches:?}); \
         a Nagle / delayed-ACK stall costs 40 ms per run"
    );
}
