//! Row 6: `/api/inspect` held a whole parsed copy of every recording (2.0 GB of memory for
//! one 64 MiB recording of tiny events, 5.4 GB for three at once). Now an inspection takes a
//! slot before its body is read (one per caller and two in all at once), a body declared
//! too large is refused unread, and the recording is kept as its text, not as trees
//! (`scripts/memory-inspect.sh` measures the memory).

use crate::common::TOKEN;
use crate::server::start;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;

/// An HTTP/1.0 request head (the answer is then delimited by the connection's end, not
/// chunked).
fn head(addr: &str, length: usize) -> String {
    format!(
        "POST /api/inspect HTTP/1.0\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n"
    )
}

const RECORDING: &str = "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\
                         {\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n";

#[tokio::test]
async fn a_caller_runs_one_inspection_at_a_time_and_a_slow_body_holds_only_its_own_slot() {
    let server = start(&["--store", "memory"], &[("AGUI_TOKEN", TOKEN)]).await;
    // A body that never comes: the slot is taken before the body is read.
    let slow_request = async || {
        let mut slow = tokio::net::TcpStream::connect(&server.addr).await.unwrap();
        slow.write_all(head(&server.addr, 1000).as_bytes())
            .await
            .unwrap();
        slow.write_all(b"[").await.unwrap();
        slow
    };
    let mut slow = slow_request().await;
    let request = format!("{}{RECORDING}", head(&server.addr, RECORDING.len()));
    let deadline = Instant::now() + Duration::from_secs(20);
    let (status, head_text, body) = loop {
        let answer = crate::common::exchange(&server.addr, &request).await;
        if answer.0 == 429 || Instant::now() > deadline {
            break answer;
        }
        // The slow request may not have reached the handler yet, or may have reached it
        // while this one held the caller's slot (and been answered 429): then again.
        let mut byte = [0u8; 1];
        let read = tokio::io::AsyncReadExt::read(&mut slow, &mut byte);
        if let Ok(answered) = tokio::time::timeout(Duration::from_millis(50), read).await {
            assert!(answered.map_or(true, |n| n == 0 || byte[0] == b'H'));
            slow = slow_request().await;
        }
    };
    assert_eq!(status, 429, "{body}");
    assert!(
        head_text.to_ascii_lowercase().contains("retry-after: 1"),
        "{head_text}"
    );
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["error"], "too_many_inspections", "{body}");
    // /health is not held up meanwhile.
    let (status, _, _) = server.http("GET", "/health", None, "").await;
    assert_eq!(status, 200);
    // The slot comes back when the slow caller goes away.
    drop(slow);
    let deadline = Instant::now() + Duration::from_secs(20);
    let (status, _, body) = loop {
        let answer = crate::common::exchange(&server.addr, &request).await;
        if answer.0 != 429 || Instant::now() > deadline {
            break answer;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["ok"], true, "{body}");
    assert_eq!(v["events"][1]["type"], "RUN_FINISHED", "{body}");
}

#[tokio::test]
async fn a_recording_declared_too_large_is_refused_before_it_is_read() {
    let server = start(&["--store", "memory"], &[("AGUI_TOKEN", TOKEN)]).await;
    let mut s = tokio::net::TcpStream::connect(&server.addr).await.unwrap();
    s.write_all(head(&server.addr, (64 << 20) + 1).as_bytes())
        .await
        .unwrap();
    let mut answer = Vec::new();
    let read = tokio::io::AsyncReadExt::read_to_end(&mut s, &mut answer);
    tokio::time::timeout(Duration::from_secs(20), read)
        .await
        .expect("an answer without the body being sent")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert_eq!(answer.split(' ').nth(1), Some("413"), "{answer}");
}
