//! Many concurrent open streams (a small-N version of the `streams_10k` bench): every
//! stream opens without error, and every agent is cancelled when its client goes away.

mod common;

use common::shared::held_open_server;
use common::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const N: usize = 500;

async fn open(addr: std::net::SocketAddr, i: usize) -> TcpStream {
    let body = input(&format!("t{i}"), "hi").to_string();
    let req = format!(
        "POST / HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(req.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 2048];
    let has = |h: &[u8], n: &[u8]| h.windows(n.len()).any(|w| w == n);
    while !has(&got, b"TEXT_MESSAGE_CONTENT") {
        let n = s.read(&mut buf).await.unwrap();
        assert!(n > 0, "closed early: {}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    assert!(
        got.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&got)
    );
    assert!(has(&got, b"RUN_STARTED") && !has(&got, b"RUN_ERROR"));
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_hundred_open_streams_then_all_cancelled_on_disconnect() {
    let live = Arc::new(AtomicUsize::new(0));
    let server = held_open_server(&live);
    let addr = spawn(&server).await;
    let gate = Arc::new(tokio::sync::Semaphore::new(64));
    let tasks: Vec<_> = (0..N)
        .map(|i| {
            let gate = gate.clone();
            tokio::spawn(async move {
                let _permit = gate.acquire_owned().await.unwrap();
                tokio::time::timeout(Duration::from_secs(20), open(addr, i))
                    .await
                    .expect("stream opened in time")
            })
        })
        .collect();
    let mut streams = Vec::with_capacity(N);
    for t in tasks {
        streams.push(t.await.unwrap());
    }
    assert_eq!(live.load(Ordering::SeqCst), N);
    drop(streams);
    let t = Instant::now();
    while live.load(Ordering::SeqCst) != 0 {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "{} agents still live after disconnect",
            live.load(Ordering::SeqCst)
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
