//! Failures of the model server end the run with `RUN_ERROR`, a clear message and a code,
//! and the AG-UI stream still verifies (what was streamed before is kept).

mod common;

use aguikit_openai::codes;
use common::*;
use serde_json::json;
use std::time::Duration;

fn assert_error(run: &Run, code: &str, contains: &[&str]) {
    let e = run.error();
    assert_eq!(e["code"], code, "{e}");
    let message = e["message"].as_str().unwrap();
    for part in contains {
        assert!(message.contains(part), "{message:?} lacks {part:?}");
    }
}

#[tokio::test]
async fn http_401_names_the_status_and_the_api_message() {
    let body = json!({"error": {"message": "Incorrect API key provided: sk-bad.",
        "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}});
    let run = run_mocked(
        vec![Reply::Status(401, "application/json", body.to_string())],
        "Hi",
    )
    .await;
    assert_eq!(run.types(), ["RUN_STARTED", "RUN_ERROR"]);
    assert_error(
        &run,
        codes::HTTP,
        &[
            "HTTP 401 Unauthorized",
            "Incorrect API key provided: sk-bad.",
        ],
    );
    assert!(
        !run.error()["message"]
            .as_str()
            .unwrap()
            .contains("test-key")
    );
}

/// A model server's redirect is never followed: the API key and the conversation would go
/// to the new address (another host, or an internal one). The run ends with the status.
#[tokio::test]
async fn a_redirect_is_not_followed() {
    let elsewhere = Mock::start(vec![Reply::Sse(vec![
        delta(json!({"role": "assistant", "content": "hijacked"})),
        done(),
    ])])
    .await;
    for status in [301, 302, 307, 308] {
        let target = format!("{}/chat/completions", elsewhere.base_url());
        let run = run_mocked(vec![Reply::Redirect(status, target)], "Hi").await;
        assert_eq!(run.types(), ["RUN_STARTED", "RUN_ERROR"], "{status}");
        assert_error(&run, codes::HTTP, &[&format!("HTTP {status}")]);
    }
    assert!(
        elsewhere.received().is_empty(),
        "the redirect was followed: {:?}",
        elsewhere.received()
    );
}

#[tokio::test]
async fn http_500_quotes_an_excerpt_of_a_text_body() {
    let body = format!("Internal error: CUDA out of memory.\n{}", "x".repeat(5000));
    let run = run_mocked(vec![Reply::Status(500, "text/plain", body)], "Hi").await;
    assert_error(
        &run,
        codes::HTTP,
        &["HTTP 500 Internal Server Error", "CUDA out of memory."],
    );
    assert!(run.error()["message"].as_str().unwrap().len() < 600);
}

#[tokio::test]
async fn an_error_object_mid_stream_keeps_what_was_said() {
    // OpenRouter's mid-stream error: an `error` member on a chunk whose choice finishes
    // with "error".
    let run = run_mocked(
        vec![Reply::Sse(vec![
            delta(json!({"role": "assistant", "content": "Partial"})),
            data(json!({
                "id": "gen-1", "object": "chat.completion.chunk", "created": 1, "model": MODEL,
                "provider": "openai",
                "error": {"code": "server_error", "message": "Provider disconnected unexpectedly"},
                "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}]
            })),
            done(),
        ])],
        "Hi",
    )
    .await;
    assert_error(
        &run,
        codes::API,
        &["Provider disconnected unexpectedly", "code server_error"],
    );
    assert_eq!(run.messages()[1]["content"], "Partial");
    assert_eq!(
        run.types()[run.types().len() - 2],
        "TEXT_MESSAGE_END",
        "the open text message is ended before RUN_ERROR"
    );
}

#[tokio::test]
async fn an_error_event_frame_is_an_api_error() {
    let run = run_mocked(
        vec![Reply::Sse(vec![raw(
            "event: error\ndata: {\"message\":\"rate limited\",\"type\":\"rate_limit_error\"}\n\n",
        )])],
        "Hi",
    )
    .await;
    assert_error(&run, codes::API, &["rate limited", "type rate_limit_error"]);
}

#[tokio::test]
async fn a_malformed_chunk_is_an_error() {
    let run = run_mocked(
        vec![Reply::Sse(vec![
            delta(json!({"role": "assistant", "content": "Half"})),
            raw("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"\n\n"),
            done(),
        ])],
        "Hi",
    )
    .await;
    assert_error(&run, codes::MALFORMED, &["not JSON", "{\"choices\""]);
    assert_eq!(run.messages()[1]["content"], "Half");
}

#[tokio::test]
async fn a_tool_call_without_a_name_is_an_error() {
    let run = run_mocked(
        vec![Reply::Sse(vec![
            delta(json!({"tool_calls": [tool_delta(0, Some("c1"), None, "{}")]})),
            finish("tool_calls"),
            done(),
        ])],
        "Hi",
    )
    .await;
    assert_error(&run, codes::MALFORMED, &["without a function name"]);
}

#[tokio::test]
async fn a_stream_cut_before_the_end_is_an_error() {
    let run = run_mocked(
        vec![Reply::Sse(vec![delta(
            json!({"role": "assistant", "content": "Cut"}),
        )])],
        "Hi",
    )
    .await;
    assert_error(
        &run,
        codes::MALFORMED,
        &["ended before the answer was complete"],
    );
    assert_eq!(run.messages()[1]["content"], "Cut");
}

#[tokio::test]
async fn a_stalled_stream_hits_the_idle_timeout() {
    let mock = Mock::start(vec![Reply::Sse(vec![
        delta(json!({"role": "assistant", "content": "Thinking"})),
        Piece::Stall,
    ])])
    .await;
    let started = std::time::Instant::now();
    let run = run_with_idle_timeout(&mock, 300, "Hi").await;
    assert_error(
        &run,
        codes::TIMEOUT,
        &["sent nothing for 300 ms (idle timeout)"],
    );
    assert_eq!(run.messages()[1]["content"], "Thinking");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_slow_response_head_hits_the_request_timeout() {
    let mock = Mock::start(vec![Reply::Delayed(
        Duration::from_secs(3),
        Box::new(says("too late")),
    )])
    .await;
    let agent = agent(&mock)
        .request_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let run = run(agent, input("Hi")).await;
    assert_error(
        &run,
        codes::TIMEOUT,
        &["did not answer within 300 ms (request timeout)"],
    );
}

#[tokio::test]
async fn an_unreachable_server_is_a_connect_error() {
    // A port that was just free: nothing listens there.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let agent = aguikit_openai::OpenAiAgent::builder(format!("http://{addr}/v1"), MODEL)
        .build()
        .unwrap();
    let run = run(agent, input("Hi")).await;
    assert_error(
        &run,
        codes::CONNECT,
        &["could not reach the model server", &addr.to_string()],
    );
}

#[tokio::test]
async fn usage_seen_before_an_error_is_still_reported() {
    let run = run_mocked(
        vec![Reply::Sse(vec![
            delta(json!({"role": "assistant", "content": "x"})),
            usage(4, 1),
            raw("data: not json\n\n"),
        ])],
        "Hi",
    )
    .await;
    assert_error(&run, codes::MALFORMED, &["not JSON"]);
    assert_eq!(run.error()["usage"][0]["inputTokens"], 4);
}
