//! Row 7: 26 connections that declared 10 MiB bodies and sent a byte every 2 s left every
//! `POST /agent` answering `503 busy` for as long as they kept trickling. Bodies now have a
//! minimum rate (checked from 5 s after the head) and a timeout, each principal has its own
//! share of the body budget, and quotas are checked before a body is read.

use crate::common::TOKEN;
use crate::server::{run_body, start};
use std::time::Duration;
use tokio::io::AsyncWriteExt;

#[tokio::test]
async fn trickling_bodies_do_not_lock_out_the_runs() {
    let server = start(&["--store", "memory"], &[("AGUI_TOKEN", TOKEN)]).await;
    let mut trickles = Vec::new();
    for _ in 0..26 {
        let mut s = tokio::net::TcpStream::connect(&server.addr).await.unwrap();
        let head = format!(
            "POST /agent HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{{",
            server.addr,
            10 * 1024 * 1024
        );
        s.write_all(head.as_bytes()).await.unwrap();
        trickles.push(tokio::spawn(async move {
            for _ in 0..20 {
                tokio::time::sleep(Duration::from_secs(1)).await;
                if s.write_all(b" ").await.is_err() {
                    return;
                }
            }
        }));
    }
    // Past the minimum rate's grace (5 s), the trickling bodies are refused and their room
    // is free again; the run goes through while they would still be trickling.
    tokio::time::sleep(Duration::from_millis(6500)).await;
    let (status, _, body) = server
        .http(
            "POST",
            "/agent",
            Some(TOKEN),
            &run_body("t", "r", "hi").to_string(),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("RUN_FINISHED"), "{body}");
    for t in trickles {
        t.abort();
    }
}
