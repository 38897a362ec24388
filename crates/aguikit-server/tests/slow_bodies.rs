//! Slow bodies (issue 36, row 7): 26 connections that declared 10 MiB bodies and sent a
//! byte every 2 s made every `POST` answer `503 busy` (the body budget was global, there
//! was no minimum body rate, and quotas were checked only after the body was read).
#![allow(missing_docs)]

mod common;

use aguikit_server::{Access, AgentServer, Finish, ServerConfig, Tokens, agent_fn};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn server(config: ServerConfig, access: Access) -> AgentServer {
    AgentServer::new(agent_fn(|_i, _c| async { Ok(Finish::success()) }))
        .config(config)
        .access(access)
}

/// Sends a request head declaring `length` body bytes, and `first` of them.
async fn open_body(addr: SocketAddr, token: &str, length: usize, first: &[u8]) -> TcpStream {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST / HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    );
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(first).await.unwrap();
    s
}

/// The status line and body of what the server answered on `s`, within 20 s.
async fn answer(mut s: TcpStream) -> (u16, String) {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    let read = async {
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
            }
            if out.windows(4).any(|w| w == b"\r\n\r\n") && out.ends_with(b"}") {
                break;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(20), read)
        .await
        .expect("the server answered");
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, text)
}

fn run_body() -> String {
    common::input("t", "x").to_string()
}

#[tokio::test]
async fn a_trickling_body_is_cut_off_and_frees_its_room() {
    let config = ServerConfig::default()
        .max_body_bytes(1 << 20)
        .max_body_bytes_in_flight(1 << 20)
        .body_wait(Duration::from_millis(200))
        .min_body_rate(1024);
    let addr = common::serve(&server(config, Access::default())).await;
    // Takes the whole global budget, then a byte every 500 ms: slower than 1 KiB/s.
    let mut slow = open_body(addr, "", 1 << 20, b"{").await;
    let trickle = tokio::spawn(async move {
        for _ in 0..30 {
            tokio::time::sleep(Duration::from_millis(500)).await;
            if slow.write_all(b" ").await.is_err() {
                break;
            }
        }
        slow
    });
    // While it holds the room, others are busy...
    tokio::time::sleep(Duration::from_millis(300)).await;
    let res = common::post_json(addr, "/", &common::input("t", "x")).await;
    assert_eq!(res.status, 503);
    // ...until the grace is over and the slow body is refused.
    let (status, text) = answer(trickle.await.unwrap()).await;
    assert_eq!(status, 408, "{text}");
    assert!(text.contains("body_too_slow"), "{text}");
    let res = common::post_json(addr, "/", &common::input("t2", "x")).await;
    assert_eq!(res.status, 200);
}

#[tokio::test]
async fn a_body_that_never_ends_times_out() {
    let config = ServerConfig::default()
        .min_body_rate(0)
        .body_timeout(Duration::from_secs(1));
    let addr = common::serve(&server(config, Access::default())).await;
    let s = open_body(addr, "", 1000, b"{\"threadId\":").await;
    let (status, text) = answer(s).await;
    assert_eq!(status, 408, "{text}");
    assert!(text.contains("body_timeout"), "{text}");
}

#[tokio::test]
async fn one_principal_cannot_take_every_callers_room() {
    let tokens =
        Tokens::parse("alice alice-token-0123456789abcdef\nbob bob-token-0123456789abcdef")
            .unwrap();
    let config = ServerConfig::default()
        .max_body_bytes(64 * 1024)
        .max_body_bytes_in_flight(1 << 20)
        .max_body_bytes_in_flight_per_principal(128 * 1024)
        .body_wait(Duration::from_millis(200))
        .min_body_rate(0);
    let addr = common::serve(&server(config, Access::default().auth(tokens))).await;
    // Alice holds her share with two bodies that do not come.
    let _a1 = open_body(addr, "alice-token-0123456789abcdef", 64 * 1024, b"{").await;
    let _a2 = open_body(addr, "alice-token-0123456789abcdef", 64 * 1024, b"{").await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let body = run_body();
    let post = |token: &'static str| {
        let body = body.clone();
        async move {
            let bearer = format!("Bearer {token}");
            common::post(
                addr,
                "/",
                &[
                    ("Content-Type", "application/json"),
                    ("Authorization", &bearer),
                ],
                body.as_bytes(),
            )
            .await
            .status
        }
    };
    assert_eq!(post("alice-token-0123456789abcdef").await, 503);
    assert_eq!(post("bob-token-0123456789abcdef").await, 200);
}

#[tokio::test]
async fn quotas_are_checked_before_the_body_is_read() {
    let config = ServerConfig::default().min_body_rate(0);
    let access = Access::default()
        .auth(Tokens::single("only-token-0123456789abcdef"))
        .concurrent_runs(Some(1));
    let agent = agent_fn(|_i, _c| async {
        tokio::time::sleep(Duration::from_secs(5)).await;
        Ok(Finish::success())
    });
    let addr = common::serve(&AgentServer::new(agent).config(config).access(access)).await;
    let body = run_body();
    let first = open_body(
        addr,
        "only-token-0123456789abcdef",
        body.len(),
        body.as_bytes(),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The second declares a body and sends none of it: refused at once, unread.
    let second = open_body(addr, "only-token-0123456789abcdef", 1 << 20, b"").await;
    let (status, text) = answer(second).await;
    assert_eq!(status, 429, "{text}");
    drop(first);
}
