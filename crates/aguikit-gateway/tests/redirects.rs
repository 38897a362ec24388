//! What an upstream cannot make the gateway do (issue 36, rows 5 and 12): follow a
//! redirect to another address (carrying the upstream's credentials there, relaying what
//! that address says), or hand the client its error body (a stack trace) verbatim.
#![allow(missing_docs)]

use aguikit_core::{Event, RunAgentInput};
use aguikit_gateway::{Upstream, codes};
use aguikit_server::aguikit_store::MemoryStore;
use aguikit_server::{AgentServer, StoreOptions};
use futures_util::StreamExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A server that answers every request with `reply` and counts the requests it got.
async fn canned(reply: String) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            let reply = reply.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match conn.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = conn.write_all(reply.as_bytes()).await;
                let _ = conn.shutdown().await;
            });
        }
    });
    (base, hits)
}

fn answer(status: &str, headers: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// Runs one run through a gateway (with a store, as `agui serve` has) in front of
/// `upstream`: the events the client got.
async fn through(upstream: Upstream) -> Vec<Event> {
    let server = AgentServer::new(upstream)
        .path("/agent")
        .store(StoreOptions::new(Arc::new(MemoryStore::new())));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/agent", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = server.serve(listener, std::future::pending::<()>()).await;
    });
    let client = aguikit_client::HttpAgent::builder(&url).build().unwrap();
    let input: RunAgentInput = serde_json::from_value(serde_json::json!({
        "threadId": "t", "runId": "r",
        "messages": [{"id": "u1", "role": "user", "content": "hello"}],
        "tools": [], "context": [], "state": {}
    }))
    .unwrap();
    let mut stream = client.run(input);
    let mut events = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(e) = stream.next().await {
            events.push(e.unwrap());
        }
    })
    .await
    .expect("the run ends");
    events
}

fn run_error(events: &[Event]) -> (String, String) {
    match events.last() {
        Some(Event::RunError(e)) => (e.code.clone().unwrap_or_default(), e.message.clone()),
        other => panic!("no RUN_ERROR at the end: {other:?}"),
    }
}

#[tokio::test]
async fn a_redirect_is_not_followed_and_no_credential_leaves_the_origin() {
    // Where the redirects point: an internal address that must receive nothing.
    let (elsewhere, hits) = canned(answer(
        "200 OK",
        "Content-Type: text/plain\r\n",
        "internal secret page",
    ))
    .await;
    let elsewhere_host = "127.0.0.1";
    for status in [
        "307 Temporary Redirect",
        "302 Found",
        "301 Moved Permanently",
        "308 Permanent Redirect",
    ] {
        let (upstream_base, upstream_hits) = canned(answer(
            status,
            &format!("Location: {elsewhere}/steal\r\n"),
            "",
        ))
        .await;
        let upstream =
            Upstream::builder("up", format!("{upstream_base}/agent?api_key=query-secret"))
                .header("X-Api-Key", "header-secret")
                .build()
                .unwrap();
        let events = through(upstream).await;
        let (code, message) = run_error(&events);
        assert_eq!(code, codes::REDIRECT, "{status}: {message}");
        let number = &status[..3];
        assert!(message.contains(&format!("HTTP {number}")), "{message}");
        assert!(message.contains(elsewhere_host), "{message}");
        assert!(!message.contains("internal secret page"), "{message}");
        assert!(!message.contains("query-secret"), "{message}");
        assert!(upstream_hits.load(Ordering::SeqCst) >= 1);
    }
    assert_eq!(hits.load(Ordering::SeqCst), 0, "a redirect was followed");
    // A 3xx without a Location is a redirect all the same.
    let (bare, _) = canned(answer("303 See Other", "", "")).await;
    let events = through(
        Upstream::builder("up", format!("{bare}/agent"))
            .build()
            .unwrap(),
    )
    .await;
    assert_eq!(run_error(&events).0, codes::REDIRECT);
}

#[tokio::test]
async fn an_upstream_error_body_reaches_the_client_as_a_short_sanitised_excerpt_at_most() {
    let trace = format!(
        "Traceback (most recent call last):\n  File \"/srv/internal/app.py\", line 12\r\n\u{1b}[31m{}DB_PASSWORD=hunter2",
        "  at frame\n".repeat(100)
    );
    let (base, _) = canned(answer(
        "500 Internal Server Error",
        "Content-Type: text/plain\r\n",
        &trace,
    ))
    .await;
    // The default: the status and a short excerpt without control characters.
    let events = through(
        Upstream::builder("up", format!("{base}/agent"))
            .build()
            .unwrap(),
    )
    .await;
    let (code, message) = run_error(&events);
    assert_eq!(code, codes::HTTP_STATUS);
    assert!(message.contains("HTTP 500"), "{message}");
    assert!(message.contains("Traceback"), "{message}");
    assert!(!message.contains("hunter2"), "{message}");
    assert!(!message.chars().any(char::is_control), "{message:?}");
    assert!(message.chars().count() < 400, "{message}");
    // None at all when configured so.
    let events = through(
        Upstream::builder("up", format!("{base}/agent"))
            .error_excerpt(0)
            .build()
            .unwrap(),
    )
    .await;
    let (code, message) = run_error(&events);
    assert_eq!(code, codes::HTTP_STATUS);
    assert!(message.contains("HTTP 500"), "{message}");
    assert!(!message.contains("Traceback"), "{message}");
}
