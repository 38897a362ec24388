//! HttpAgent against a scripted loopback server: the request, response handling, errors,
//! abort, time limits and reconnection.

use aguikit_client::{ClientError, HttpAgent, ReconnectPolicy, TimeoutKind};
use aguikit_core::{Event, Message, RunAgentInput};
use aguikit_peers::scripted::*;
use futures_util::StreamExt;
use std::time::{Duration, Instant};

fn input() -> RunAgentInput {
    RunAgentInput::new("t", "r1").with_message(Message::user("u1", "hi"))
}

async fn collect(agent: &HttpAgent) -> (Vec<String>, Option<ClientError>) {
    let mut stream = agent.run(input());
    let mut types = Vec::new();
    let mut error = None;
    while let Some(item) = stream.next().await {
        match item {
            Ok(e) => types.push(e.type_str().to_owned()),
            Err(e) => {
                assert!(error.is_none(), "a second error after {error:?}: {e}");
                error = Some(e);
            }
        }
    }
    (types, error)
}

/// Serves `steps` on every connection and runs [`input`] once with a default agent.
async fn collect_from(steps: Vec<Step>) -> (Vec<String>, Option<ClientError>) {
    let server = serve(move |_, _| steps.clone()).await;
    collect(&HttpAgent::new(&server.url).unwrap()).await
}

/// An agent that resumes a broken stream after 5 ms.
fn reconnecting(url: &str, policy: ReconnectPolicy) -> HttpAgent {
    HttpAgent::builder(url)
        .reconnect(ReconnectPolicy {
            delay: Duration::from_millis(5),
            ..policy
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn sends_the_input_and_streams_the_events() {
    let server = serve(|_, _| {
        vec![
            sse_head(),
            // CRLF framing and a comment: accepted (the reference would fail on CRLF).
            Step::Chunk(format!(": hello\r\n\r\ndata: {}\r\n\r\n", run_started("r1")).into_bytes()),
            data(&text_start("m1")),
            data(&text_content("m1", "Hel")),
            // An event split across two chunks, and a frame without its final blank line.
            Step::Chunk(b"data: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messa".to_vec()),
            Step::Chunk(b"geId\":\"m1\",\"delta\":\"lo\"}\n\n".to_vec()),
            data(&text_end("m1")),
            Step::Chunk(format!("data: {}", run_finished("r1")).into_bytes()),
            Step::End,
        ]
    })
    .await;
    let agent = HttpAgent::builder(&server.url)
        .header("x-tenant", "acme")
        .header("accept", "application/json")
        .header("content-type", "text/plain")
        .build()
        .unwrap();
    let (types, error) = collect(&agent).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(types, chat_types(2));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let req = &reqs[0];
    assert_eq!(req.method, "POST");
    assert_eq!(req.path, "/agent");
    // H2: Content-Type and Accept override configured headers of the same name.
    assert_eq!(req.headers_named("content-type"), ["application/json"]);
    assert_eq!(req.headers_named("accept"), ["text/event-stream"]);
    assert_eq!(req.header("x-tenant"), Some("acme"));
    assert_eq!(req.header("last-event-id"), None);
    let body = req.json();
    assert_eq!(body["threadId"], "t");
    assert_eq!(body["runId"], "r1");
    assert_eq!(body["messages"][0]["content"], "hi");
}

#[tokio::test]
async fn http_errors_carry_status_and_body() {
    let (types, error) = collect_from(vec![Step::Full(
        422,
        "application/json",
        br#"{"detail": "bad input"}"#.to_vec(),
    )])
    .await;
    assert!(types.is_empty());
    let error = error.unwrap();
    assert_eq!(error.status(), Some(422));
    assert_eq!(error.to_string(), r#"HTTP 422: {"detail":"bad input"}"#);
    match error {
        ClientError::Http { payload, .. } => {
            assert_eq!(payload, Some(serde_json::json!({"detail": "bad input"})))
        }
        other => panic!("{other:?}"),
    }

    let (_, error) = collect_from(vec![Step::Full(500, "text/plain", b"boom".to_vec())]).await;
    assert_eq!(error.unwrap().to_string(), "HTTP 500: boom");
}

#[tokio::test]
async fn a_non_ag_ui_content_type_is_an_error() {
    let (types, error) = collect_from(vec![Step::Full(
        200,
        "text/html",
        b"<html>login</html>".to_vec(),
    )])
    .await;
    assert!(types.is_empty());
    let error = error.unwrap();
    assert!(
        matches!(error, ClientError::ContentType { .. }),
        "{error:?}"
    );
    let text = error.to_string();
    assert!(text.contains("\"text/html\""), "{text}");
    assert!(text.contains("<html>login"), "{text}");
}

#[tokio::test]
async fn a_dropped_connection_says_how_far_the_run_got() {
    let (types, error) = collect_from(vec![
        sse_head(),
        data(&run_started("r1")),
        data(&text_start("m1")),
        data(&text_content("m1", "Partial")),
        Step::Sleep(20),
        Step::Drop,
    ])
    .await;
    assert_eq!(types.len(), 3);
    let error = error.unwrap();
    let progress = error
        .progress()
        .expect("a mid-stream error has progress")
        .clone();
    assert_eq!(progress.events, 3);
    assert_eq!(progress.open_run.as_deref(), Some("r1"));
    let text = error.to_string();
    assert!(
        text.starts_with(
            "the connection was lost after 3 events (the last one TEXT_MESSAGE_CONTENT), with run r1 still open"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn a_truncated_stream_ends_without_error() {
    let (types, error) = collect_from(sse_run(&[&run_started("r1"), &text_start("m1")])).await;
    assert!(error.is_none());
    assert_eq!(types, ["RUN_STARTED", "TEXT_MESSAGE_START"]);
}

#[tokio::test]
async fn malformed_events_fail_with_their_index() {
    let (types, error) = collect_from(sse_run(&[
        &run_started("r1"),
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"#,
        &run_finished("r1"),
    ]))
    .await;
    assert_eq!(types, ["RUN_STARTED"]);
    let error = error.unwrap();
    let p = error.pipeline_error().expect("a protocol error");
    assert_eq!(p.index, 1);
    assert_eq!(p.rule(), "schema");

    for (bad, what) in [
        ("[1, 2, 3]", "an event must be a JSON object"),
        (r#"{"delta":"x"}"#, "the frame carries no event type"),
        (r#"{"type":""}"#, "the frame carries no event type"),
        (
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":42}"#,
            "TEXT_MESSAGE_CONTENT",
        ),
    ] {
        let (types, error) = collect_from(sse_run(&[&run_started("r1"), bad])).await;
        assert_eq!(types, ["RUN_STARTED"], "{bad}");
        let text = error.expect(bad).to_string();
        assert!(text.contains(what), "{bad}: {text}");
    }
}

#[tokio::test]
async fn unknown_event_types_are_skipped() {
    let server = serve(|_, _| {
        sse_run(&[
            &run_started("r1"),
            r#"{"type":"FUTURE_EVENT","x":1}"#,
            &run_finished("r1"),
        ])
    })
    .await;
    let agent = HttpAgent::new(&server.url).unwrap();
    let mut stream = agent.run(input());
    let mut types = Vec::new();
    while let Some(e) = stream.next().await {
        types.push(e.unwrap().type_str().to_owned());
    }
    assert_eq!(types, ["RUN_STARTED", "RUN_FINISHED"]);
    let info = stream.response_info();
    assert_eq!(info.status, Some(200));
    assert_eq!(info.content_type.as_deref(), Some("text/event-stream"));
    assert_eq!(info.warnings.len(), 1, "{:?}", info.warnings);
}

#[tokio::test]
async fn abort_ends_the_stream_with_run_error_and_closes_the_connection() {
    let server = serve(|_, _| vec![sse_head(), data(&run_started("r1")), Step::UntilClosed]).await;
    let agent = HttpAgent::new(&server.url).unwrap();
    let mut stream = agent.run(input());
    assert!(matches!(
        stream.next().await,
        Some(Ok(Event::RunStarted(_)))
    ));
    let handle = stream.abort_handle();
    let t0 = Instant::now();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        handle.abort();
    });
    match stream.next().await {
        Some(Ok(Event::RunError(e))) => {
            assert_eq!(e.code.as_deref(), Some("abort"));
        }
        other => panic!("{other:?}"),
    }
    assert!(stream.next().await.is_none());
    assert!(t0.elapsed() < Duration::from_secs(2));
    assert!(
        server.wait_client_closed().await,
        "the connection stayed open"
    );
}

#[tokio::test]
async fn dropping_the_stream_closes_the_connection() {
    let server = serve(|_, _| vec![sse_head(), data(&run_started("r1")), Step::UntilClosed]).await;
    let agent = HttpAgent::new(&server.url).unwrap();
    let mut stream = agent.run(input());
    assert!(stream.next().await.unwrap().is_ok());
    drop(stream);
    assert!(
        server.wait_client_closed().await,
        "the connection stayed open"
    );
}

#[tokio::test]
async fn idle_and_total_time_limits() {
    let server = serve(|_, _| {
        vec![
            sse_head(),
            data(&run_started("r1")),
            Step::Sleep(3000),
            Step::End,
        ]
    })
    .await;
    let agent = HttpAgent::builder(&server.url)
        .idle_timeout(Duration::from_millis(150))
        .build()
        .unwrap();
    let t0 = Instant::now();
    let (types, error) = collect(&agent).await;
    assert_eq!(types, ["RUN_STARTED"]);
    match error.unwrap() {
        ClientError::Timeout { kind, progress, .. } => {
            assert_eq!(kind, TimeoutKind::Idle);
            assert_eq!(progress.events, 1);
        }
        other => panic!("{other:?}"),
    }
    assert!(t0.elapsed() < Duration::from_secs(2));

    // Keep-alive comments reset the idle limit but not the total one.
    let server = serve(|_, _| {
        let mut steps = vec![sse_head(), data(&run_started("r1"))];
        for _ in 0..40 {
            steps.push(Step::Sleep(50));
            steps.push(Step::Chunk(b": ping\n\n".to_vec()));
        }
        steps.push(Step::End);
        steps
    })
    .await;
    let agent = HttpAgent::builder(&server.url)
        .idle_timeout(Duration::from_secs(2))
        .total_timeout(Duration::from_millis(600))
        .build()
        .unwrap();
    let (_, error) = collect(&agent).await;
    match error.unwrap() {
        ClientError::Timeout { kind, .. } => assert_eq!(kind, TimeoutKind::Total),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn limits_are_enforced() {
    let server = serve(|_, _| chat("r1", "hello")).await;
    let agent = HttpAgent::builder(&server.url)
        .max_events(3)
        .build()
        .unwrap();
    let (types, error) = collect(&agent).await;
    assert_eq!(types.len(), 3);
    assert!(matches!(
        error.unwrap(),
        ClientError::LimitExceeded { limit: 3, .. }
    ));

    let agent = HttpAgent::builder(&server.url)
        .max_frame_size(40)
        .build()
        .unwrap();
    let (_, error) = collect(&agent).await;
    assert!(matches!(error.unwrap(), ClientError::Framing { .. }));
}

#[tokio::test]
async fn a_broken_stream_with_ids_is_resumed_without_duplicates() {
    let server = serve(|n, req| match n {
        0 => vec![
            sse_head(),
            Step::Chunk(b"retry: 10\n\n".to_vec()),
            data_with_id(1, &run_started("r1")),
            data_with_id(2, &text_start("m1")),
            data_with_id(3, &text_content("m1", "a")),
            Step::Drop,
        ],
        _ => {
            assert_eq!(req.header("last-event-id"), Some("3"));
            vec![
                sse_head(),
                // The server replays from the last id inclusive: the client skips it.
                data_with_id(3, &text_content("m1", "a")),
                data_with_id(4, &text_content("m1", "b")),
                data_with_id(5, &text_end("m1")),
                data_with_id(6, &run_finished("r1")),
                Step::End,
            ]
        }
    })
    .await;
    let agent = HttpAgent::new(&server.url).unwrap();
    let mut stream = agent.run(input());
    let mut deltas = Vec::new();
    let mut types = Vec::new();
    while let Some(e) = stream.next().await {
        let e = e.unwrap();
        if let Event::TextMessageContent(c) = &e {
            deltas.push(c.delta.clone());
        }
        types.push(e.type_str().to_owned());
    }
    assert_eq!(deltas, ["a", "b"]);
    assert_eq!(types.last().map(String::as_str), Some("RUN_FINISHED"));
    assert_eq!(stream.response_info().reconnects, 1);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(
        reqs[0].body, reqs[1].body,
        "the same run is requested again"
    );
    assert_eq!(reqs[1].header("last-event-id"), Some("3"));
}

#[tokio::test]
async fn a_body_that_ends_mid_run_with_ids_is_resumed() {
    let server = serve(|n, _| match n {
        0 => vec![
            sse_head(),
            data_with_id(1, &run_started("r1")),
            data_with_id(2, &text_start("m1")),
            Step::End,
        ],
        _ => vec![
            sse_head(),
            data_with_id(3, &text_end("m1")),
            data_with_id(4, &run_finished("r1")),
            Step::End,
        ],
    })
    .await;
    let agent = reconnecting(&server.url, ReconnectPolicy::default());
    let (types, error) = collect(&agent).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(
        types,
        [
            "RUN_STARTED",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_END",
            "RUN_FINISHED"
        ]
    );
    assert_eq!(server.requests()[1].header("last-event-id"), Some("2"));
}

#[tokio::test]
async fn reconnection_gives_up_after_its_attempts() {
    let server = serve(|n, _| {
        let first = n as u32 * 10 + 1;
        vec![
            sse_head(),
            if n == 0 {
                data_with_id(first, &run_started("r1"))
            } else {
                data_with_id(first, r#"{"type":"CUSTOM","name":"tick","value":null}"#)
            },
            Step::Drop,
        ]
    })
    .await;
    let agent = reconnecting(
        &server.url,
        ReconnectPolicy {
            max_attempts: 2,
            ..ReconnectPolicy::default()
        },
    );
    let (types, error) = collect(&agent).await;
    assert_eq!(types, ["RUN_STARTED", "CUSTOM", "CUSTOM"]);
    let error = error.unwrap();
    assert_eq!(error.progress().unwrap().reconnects, 2);
    assert!(
        error.to_string().contains("2 reconnection(s) made"),
        "{error}"
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn no_reconnection_without_ids_or_when_disabled() {
    let server =
        serve(|_, _| vec![sse_head(), data_with_id(1, &run_started("r1")), Step::Drop]).await;
    let agent = HttpAgent::builder(&server.url)
        .reconnect(ReconnectPolicy::disabled())
        .build()
        .unwrap();
    let (_, error) = collect(&agent).await;
    assert!(matches!(error.unwrap(), ClientError::ConnectionLost { .. }));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_failed_reconnection_reports_both_causes() {
    let server = serve(|n, _| match n {
        0 => vec![sse_head(), data_with_id(1, &run_started("r1")), Step::Drop],
        _ => vec![Step::Full(404, "text/plain", b"gone".to_vec())],
    })
    .await;
    let agent = reconnecting(&server.url, ReconnectPolicy::default());
    let (_, error) = collect(&agent).await;
    let text = error.unwrap().to_string();
    assert!(
        text.contains("resuming with Last-Event-ID 1 failed: HTTP 404: gone"),
        "{text}"
    );
}

#[tokio::test]
async fn an_unreachable_agent_is_a_request_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/agent", listener.local_addr().unwrap());
    drop(listener);
    let agent = HttpAgent::new(&url).unwrap();
    let (types, error) = collect(&agent).await;
    assert!(types.is_empty());
    let error = error.unwrap();
    assert!(matches!(error, ClientError::Request { .. }), "{error:?}");
    assert!(error.to_string().contains(&url), "{error}");
}

#[cfg(feature = "proto")]
#[tokio::test]
async fn protobuf_streams_are_decoded() {
    use aguikit_client::WireFormat;
    use aguikit_core::codec::proto::write_frame;
    use aguikit_core::event::{RunFinished, RunStarted, TextMessageChunk};
    let mut wire = Vec::new();
    for e in [
        Event::from(RunStarted::new("t", "r1")),
        TextMessageChunk::new()
            .with_message_id("m")
            .with_delta("Hi")
            .into(),
        RunFinished::new("t", "r1").into(),
    ] {
        write_frame(&mut wire, &e).unwrap();
    }
    let (good, truncated) = (wire.clone(), wire[..wire.len() - 3].to_vec());
    let server = serve(move |n, _| {
        let body = if n == 0 {
            good.clone()
        } else {
            truncated.clone()
        };
        // Split inside a frame, to exercise the incremental decoder.
        let (a, b) = body.split_at(body.len() / 2);
        vec![
            Step::Head(200, "application/vnd.ag-ui.event+proto"),
            Step::Chunk(a.to_vec()),
            Step::Chunk(b.to_vec()),
            Step::End,
        ]
    })
    .await;
    let agent = HttpAgent::builder(&server.url)
        .wire_format(WireFormat::Proto)
        .build()
        .unwrap();
    let (types, error) = collect(&agent).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(types, chat_types(1));
    assert_eq!(
        server.requests()[0].header("accept"),
        Some("application/vnd.ag-ui.event+proto, text/event-stream;q=0.5")
    );
    let (types, error) = collect(&agent).await;
    assert_eq!(types.len(), 3);
    let text = error.unwrap().to_string();
    assert!(text.contains("ended mid-frame"), "{text}");
}
