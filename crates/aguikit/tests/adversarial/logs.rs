//! Row 9: a `threadId` holding a newline, a fake log line and ANSI escapes was written raw
//! into the text logs; the token the operator gave was echoed in the banner.

use crate::common::TOKEN;
use crate::server::{run_body, start};

#[tokio::test]
async fn client_values_cannot_forge_text_log_lines() {
    let server = start(
        &["--store", "memory", "--log-level", "debug"],
        &[("AGUI_TOKEN", TOKEN)],
    )
    .await;
    let forged = "t\n2026-01-01T00:00:00.000000Z ERROR forged: admin logged in\u{1b}[2J\u{1b}[31m";
    // A resume that answers nothing: logged with the thread id (a span field and the
    // message) at info level.
    let mut body = run_body(forged, "r\r\u{7}", "hi");
    body["resume"] = serde_json::json!([{"interruptId": "i\n1", "status": "resolved"}]);
    let (status, _, answer) = server
        .http("POST", "/agent", Some(TOKEN), &body.to_string())
        .await;
    assert_eq!(status, 200, "{answer}");
    // The log lines are written by a thread of their own: wait for the run's end line.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !server.log().contains("run ended") && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let log = server.log();
    assert!(log.contains("run ended"), "{log}");
    assert!(
        log.contains("forged: admin"),
        "the thread id is logged: {log}"
    );
    for line in log.lines() {
        assert!(
            !line.starts_with("2026-01-01T00:00:00.000000Z"),
            "a forged line: {log}"
        );
        assert!(
            !line.chars().any(|c| c.is_control() && c != '\t'),
            "a control character in {line:?}"
        );
    }
    assert!(log.contains(r"\u{1b}[2J"), "escaped, not dropped: {log}");
}

#[tokio::test]
async fn a_token_the_operator_gave_is_not_in_the_banner() {
    let server = start(&["--store", "memory"], &[("AGUI_TOKEN", TOKEN)]).await;
    let banner = server.banner.join("\n");
    assert!(!banner.contains(TOKEN), "{banner}");
    assert!(banner.contains("#token=YOUR_TOKEN"), "{banner}");
    // The token works all the same.
    let (status, _, _) = server.http("GET", "/agents", Some(TOKEN), "").await;
    assert_eq!(status, 200);
    // A token agui serve drew is shown: nobody else could know it.
    let drawn = start(&["--store", "memory"], &[]).await;
    let console = drawn
        .banner
        .iter()
        .find_map(|l| l.trim_start().strip_prefix("console"))
        .unwrap()
        .trim()
        .to_owned();
    let token = console.split_once("#token=").unwrap().1;
    assert!(token.len() >= 32, "{console}");
    let (status, _, _) = drawn.http("GET", "/agents", Some(token), "").await;
    assert_eq!(status, 200);
}
