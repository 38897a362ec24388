//! An [`Upstream`] served by an `AgentServer` (with a store, as `agui serve` runs it) in
//! front of an upstream in the same process: an `aguikit-server` agent for the well-behaved
//! cases, a scripted socket server for the faults. Every fault ends the run with
//! `RUN_ERROR` and its code, after the events that came before it.

use aguikit_core::{Event, RunAgentInput};
use aguikit_gateway::{Upstream, codes};
use aguikit_server::aguikit_store::MemoryStore;
use aguikit_server::{Access, AgentServer, Finish, StoreOptions, Tokens, agent_fn};
use futures_util::StreamExt;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Serves `server` on a loopback port; returns its base URL.
async fn serve(server: AgentServer) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = server.serve(listener, std::future::pending::<()>()).await;
    });
    format!("http://{addr}")
}

/// The gateway: `upstream` at `/agent`, with a memory store and the token `GATEWAY_TOKEN`.
async fn gateway(upstream: Upstream) -> String {
    let server = AgentServer::new(upstream)
        .path("/agent")
        .store(StoreOptions::new(Arc::new(MemoryStore::new())))
        .access(Access::default().auth(Tokens::single(GATEWAY_TOKEN)));
    format!("{}/agent", serve(server).await)
}

const GATEWAY_TOKEN: &str = "gateway-token-0123456789";
const UPSTREAM_TOKEN: &str = "upstream-token-9876543210";

/// Runs `input` through the gateway with our client (protobuf when `proto`); the events
/// as the client's pipeline hands them out, or the error that ended the stream.
async fn run_through(url: &str, input: Value, proto: bool) -> Vec<Event> {
    let agent = aguikit_client::HttpAgent::builder(url)
        .bearer_token(GATEWAY_TOKEN)
        .wire_format(if proto {
            aguikit_client::WireFormat::Proto
        } else {
            aguikit_client::WireFormat::Sse
        })
        .build()
        .unwrap();
    let input: RunAgentInput = serde_json::from_value(input).unwrap();
    let mut stream = agent.run(input);
    let mut events = Vec::new();
    let read = async {
        while let Some(e) = stream.next().await {
            events.push(e.unwrap_or_else(|e| panic!("client error: {e}")));
        }
    };
    tokio::time::timeout(Duration::from_secs(20), read)
        .await
        .expect("the run ended");
    events
}

fn input(thread: &str) -> Value {
    json!({
        "threadId": thread, "runId": format!("{thread}-r1"),
        "messages": [{"id": "u1", "role": "user", "content": "hello"}],
        "tools": [], "context": [], "state": {}
    })
}

fn types(events: &[Event]) -> Vec<&str> {
    events.iter().map(|e| e.type_str()).collect()
}

fn run_error(events: &[Event]) -> (Option<String>, String) {
    match events.last() {
        Some(Event::RunError(e)) => (e.code.clone(), e.message.clone()),
        other => panic!(
            "the run did not end with RUN_ERROR: {other:?} in {:?}",
            types(events)
        ),
    }
}

/// An upstream `aguikit-server` that needs its own token: a text message, a state snapshot,
/// a result.
async fn well_behaved_upstream() -> String {
    let agent = agent_fn(|input: RunAgentInput, ctx| async move {
        let text = input
            .messages
            .last()
            .and_then(|m| m.text())
            .unwrap_or("")
            .to_owned();
        ctx.say(format!("You said {text}")).await?;
        ctx.state_snapshot(json!({"n": 1})).await?;
        Ok(Finish::success().with_result(json!({"ok": true})))
    });
    let server = AgentServer::new(agent)
        .path("/agent")
        .access(Access::default().auth(Tokens::single(UPSTREAM_TOKEN)));
    format!("{}/agent", serve(server).await)
}

#[tokio::test]
async fn a_run_is_relayed_in_either_encoding_with_the_upstreams_own_credentials() {
    let upstream_url = well_behaved_upstream().await;
    for (encoding, client_proto) in [
        (aguikit_client::WireFormat::Proto, false),
        (aguikit_client::WireFormat::Sse, true),
    ] {
        let upstream = Upstream::builder("up", &upstream_url)
            .header("Authorization", format!("Bearer {UPSTREAM_TOKEN}"))
            .wire_format(encoding)
            .build()
            .unwrap();
        let url = gateway(upstream).await;
        let thread = format!("t-relay-{client_proto}");
        let events = run_through(&url, input(&thread), client_proto).await;
        assert_eq!(
            types(&events),
            [
                "RUN_STARTED",
                "TEXT_MESSAGE_START",
                "TEXT_MESSAGE_CONTENT",
                "TEXT_MESSAGE_END",
                "STATE_SNAPSHOT",
                "RUN_FINISHED"
            ]
        );
        match &events[0] {
            Event::RunStarted(s) => {
                assert_eq!(s.thread_id, thread);
                assert_eq!(s.run_id, format!("{thread}-r1"));
            }
            _ => unreachable!(),
        }
        match &events[2] {
            Event::TextMessageContent(c) => assert_eq!(c.delta, "You said hello"),
            other => panic!("{other:?}"),
        }
        match events.last().unwrap() {
            Event::RunFinished(f) => assert_eq!(f.result, Some(json!({"ok": true}))),
            _ => unreachable!(),
        }
    }
}

#[tokio::test]
async fn the_gateways_own_token_is_not_sent_upstream() {
    // Without the upstream's credential configured, the upstream refuses the run: the
    // client's `Authorization` (the gateway's token) is not forwarded.
    let upstream_url = well_behaved_upstream().await;
    let upstream = Upstream::builder("up", &upstream_url).build().unwrap();
    let url = gateway(upstream).await;
    let events = run_through(&url, input("t-no-cred"), false).await;
    let (code, message) = run_error(&events);
    assert_eq!(code.as_deref(), Some(codes::HTTP_STATUS), "{message}");
    assert!(message.contains("401"), "{message}");
}

#[tokio::test]
async fn interrupts_and_the_upstreams_errors_are_relayed() {
    let agent = agent_fn(|input: RunAgentInput, ctx| async move {
        if !input.resume().is_empty() {
            ctx.say("resumed").await?;
            return Ok(Finish::success());
        }
        if input.messages.last().and_then(|m| m.text()) == Some("fail") {
            return Err(aguikit_server::AgentError::new("it broke").with_code("my_code"));
        }
        Ok(Finish::interrupt(vec![aguikit_core::Interrupt::new(
            "i1", "approval",
        )]))
    });
    let upstream_url = format!(
        "{}/agent",
        serve(AgentServer::new(agent).path("/agent")).await
    );
    let url = gateway(Upstream::builder("up", &upstream_url).build().unwrap()).await;

    let events = run_through(&url, input("t-int"), false).await;
    match events.last().unwrap() {
        Event::RunFinished(f) => match &f.outcome {
            Some(aguikit_core::RunOutcome::Interrupt { interrupts }) => {
                assert_eq!(interrupts.len(), 1);
                assert_eq!(interrupts[0].id, "i1");
            }
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
    // The gateway holds the thread's open interrupt: a resume answering it goes through.
    let mut resume = input("t-int");
    resume["runId"] = json!("t-int-r2");
    resume["resume"] =
        json!([{"interruptId": "i1", "status": "resolved", "payload": {"ok": true}}]);
    let events = run_through(&url, resume, true).await;
    assert_eq!(events.last().unwrap().type_str(), "RUN_FINISHED");
    assert!(types(&events).contains(&"TEXT_MESSAGE_CONTENT"));

    let mut failing = input("t-fail");
    failing["messages"][0]["content"] = json!("fail");
    let events = run_through(&url, failing, false).await;
    let (code, message) = run_error(&events);
    assert_eq!(code.as_deref(), Some("my_code"));
    assert_eq!(message, "it broke");
}

// ---- a scripted upstream for the faults -------------------------------------------------

const RS: &str = r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#;
const RF: &str = r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#;
const TS: &str = r#"{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}"#;
const TC: &str = r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"hi"}"#;
const TE: &str = r#"{"type":"TEXT_MESSAGE_END","messageId":"m"}"#;

fn sse(events: &[&str]) -> String {
    events.iter().map(|e| format!("data: {e}\n\n")).collect()
}

fn ok_head(content_type: &str) -> String {
    format!("HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nConnection: close\r\n\r\n")
}

/// Answers each request by its path (see the match); returns the base URL.
async fn scripted() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((conn, _)) = listener.accept().await {
            tokio::spawn(answer(conn));
        }
    });
    base
}

async fn answer(mut conn: TcpStream) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if conn.read(&mut byte).await? == 0 {
            return Ok(());
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    conn.read_exact(&mut body).await?;
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
    let reply = match path.as_str() {
        "/two-runs" => {
            let second_start = r#"{"type":"RUN_STARTED","threadId":"t","runId":"r-2"}"#;
            let m2s = r#"{"type":"TEXT_MESSAGE_START","messageId":"m2","role":"assistant"}"#;
            let m2c = r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m2","delta":"again"}"#;
            let m2e = r#"{"type":"TEXT_MESSAGE_END","messageId":"m2"}"#;
            let finish = r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r-2","result":2}"#;
            ok_head("text/event-stream")
                + &sse(&[RS, TS, TC, TE, RF, second_start, m2s, m2c, m2e, finish])
        }
        "/http-500" => {
            let body = r#"{"error":"scripted failure"}"#;
            format!(
                "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
        }
        "/wrong-type" => ok_head("text/html") + "<html>not a stream</html>",
        // An upstream that speaks SSE only, and says so.
        "/declaring/capabilities" => {
            ok_head("application/json")
                + r#"{"identity":{"name":"scripted"},"transport":{"streaming":true,"httpBinary":false,"websocket":true},"humanInTheLoop":{"interrupts":true}}"#
        }
        "/no-finish" => ok_head("text/event-stream") + &sse(&[RS, TS, TC, TE]),
        "/content-before-start" => ok_head("text/event-stream") + &sse(&[RS, TC, RF]),
        "/after-finish" => ok_head("text/event-stream") + &sse(&[RS, TS, TC, TE, RF, TC]),
        "/malformed" => {
            ok_head("text/event-stream") + &sse(&[RS, TS]) + "data: {\"type\":\"TEXT_\n\n"
        }
        "/drop" => format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 100000\r\nConnection: close\r\n\r\n{}",
            sse(&[RS, TS, TC])
        ),
        "/silent" => {
            conn.write_all(ok_head("text/event-stream").as_bytes())
                .await?;
            tokio::time::sleep(Duration::from_secs(30)).await;
            return Ok(());
        }
        "/stalls" => {
            let start = ok_head("text/event-stream") + &sse(&[RS, TS, TC]);
            conn.write_all(start.as_bytes()).await?;
            // Comments are no events: the idle limit still runs out.
            for _ in 0..30 {
                tokio::time::sleep(Duration::from_millis(100)).await;
                conn.write_all(b": keep-alive\n\n").await?;
            }
            return Ok(());
        }
        _ => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".into(),
    };
    conn.write_all(reply.as_bytes()).await?;
    conn.shutdown().await?;
    Ok(())
}

/// The gateway in front of `path` of the scripted server (short limits).
async fn gateway_to(base: &str, path: &str) -> String {
    let upstream = Upstream::builder("scripted", format!("{base}{path}"))
        .first_event_timeout(Some(Duration::from_millis(500)))
        .idle_timeout(Some(Duration::from_millis(700)))
        .build()
        .unwrap();
    gateway(upstream).await
}

#[tokio::test]
async fn every_fault_ends_the_run_with_its_code_after_what_came_before() {
    let base = scripted().await;
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    // The path, the code, what must be in the message, the events relayed before the error.
    let cases: Vec<(String, &str, &str, Vec<&str>)> = vec![
        (
            format!("http://127.0.0.1:{closed}/agent"),
            codes::UNREACHABLE,
            "cannot reach",
            vec!["RUN_STARTED"],
        ),
        (
            format!("{base}/http-500"),
            codes::HTTP_STATUS,
            "HTTP 500",
            vec!["RUN_STARTED"],
        ),
        (
            format!("{base}/wrong-type"),
            codes::CONTENT_TYPE,
            "text/html",
            vec!["RUN_STARTED"],
        ),
        (
            format!("{base}/no-finish"),
            codes::INCOMPLETE,
            "after 4 event(s)",
            vec![
                "RUN_STARTED",
                "TEXT_MESSAGE_START",
                "TEXT_MESSAGE_CONTENT",
                "TEXT_MESSAGE_END",
            ],
        ),
        (
            format!("{base}/content-before-start"),
            codes::PROTOCOL_VIOLATION,
            "event 1 (TEXT_MESSAGE_CONTENT) breaks rule",
            vec!["RUN_STARTED"],
        ),
        (
            format!("{base}/after-finish"),
            codes::PROTOCOL_VIOLATION,
            "event 5 (TEXT_MESSAGE_CONTENT) breaks rule V2",
            vec![
                "RUN_STARTED",
                "TEXT_MESSAGE_START",
                "TEXT_MESSAGE_CONTENT",
                "TEXT_MESSAGE_END",
            ],
        ),
        (
            format!("{base}/malformed"),
            codes::MALFORMED_EVENT,
            "event 2",
            vec!["RUN_STARTED", "TEXT_MESSAGE_START"],
        ),
        (
            format!("{base}/drop"),
            codes::CONNECTION_LOST,
            "after 3 events",
            vec!["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT"],
        ),
        (
            format!("{base}/silent"),
            codes::FIRST_EVENT_TIMEOUT,
            "no event within",
            vec!["RUN_STARTED"],
        ),
        (
            format!("{base}/stalls"),
            codes::IDLE_TIMEOUT,
            "after 3 event(s)",
            vec!["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT"],
        ),
    ];
    for (i, (upstream, code, said, before)) in cases.into_iter().enumerate() {
        let upstream = Upstream::builder("scripted", &upstream)
            .first_event_timeout(Some(Duration::from_millis(500)))
            .idle_timeout(Some(Duration::from_millis(700)))
            .build()
            .unwrap();
        let url = gateway(upstream).await;
        let events = run_through(&url, input(&format!("t-fault-{i}")), i % 2 == 1).await;
        let (got, message) = run_error(&events);
        assert_eq!(got.as_deref(), Some(code), "{message}");
        assert!(message.contains(said), "{code}: {message}");
        assert_eq!(
            types(&events[..events.len() - 1]),
            before,
            "{code}: {message}"
        );
    }
}

#[tokio::test]
async fn a_response_of_two_runs_is_relayed_as_one() {
    let base = scripted().await;
    let url = gateway_to(&base, "/two-runs").await;
    let events = run_through(&url, input("t-two"), false).await;
    assert_eq!(
        types(&events),
        [
            "RUN_STARTED",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "RUN_FINISHED"
        ]
    );
    match events.last().unwrap() {
        Event::RunFinished(f) => {
            // The run is the gateway's (the client's ids); the end is the last run's.
            assert_eq!(f.run_id, "t-two-r1");
            assert_eq!(f.result, Some(json!(2)));
        }
        _ => unreachable!(),
    }
}

/// The gateway serves the upstream's capabilities (asked with the upstream's credentials),
/// its own transport in place of the upstream's (protobuf, resumable streams): to its
/// clients it is the transport. An upstream that serves none, or none reachable, declares
/// nothing but that transport.
#[tokio::test]
async fn the_upstreams_capabilities_are_served_with_the_gateways_transport() {
    let caps = |url: String| async move {
        aguikit_client::HttpAgent::builder(&url)
            .bearer_token(GATEWAY_TOKEN)
            .build()
            .unwrap()
            .capabilities()
            .await
            .unwrap()
    };
    let base = scripted().await;
    let c = caps(gateway_to(&base, "/declaring").await).await;
    assert_eq!(c.identity.unwrap().name.as_deref(), Some("scripted"));
    assert_eq!(c.human_in_the_loop.unwrap().interrupts, Some(true));
    let t = c.transport.unwrap();
    assert_eq!(
        (t.streaming, t.http_binary, t.resumable, t.websocket),
        (Some(true), Some(true), Some(true), None)
    );
    // An aguikit-server upstream behind its own token: the configured header gets them.
    let upstream_url = well_behaved_upstream().await;
    let with = Upstream::builder("up", &upstream_url)
        .header("Authorization", format!("Bearer {UPSTREAM_TOKEN}"))
        .build()
        .unwrap();
    let without = Upstream::builder("up", &upstream_url).build().unwrap();
    use aguikit_server::Agent;
    let direct = with.capabilities().await;
    assert_eq!(direct.transport.unwrap().http_binary, Some(true));
    assert_eq!(
        without.capabilities().await,
        aguikit_core::AgentCapabilities::default()
    );
    // None served (404), none reachable: the gateway's transport alone.
    for path in ["/http-500", "/nothing-here"] {
        let c = caps(gateway_to(&base, path).await).await;
        assert_eq!(c.identity, None, "{path}");
        assert_eq!(c.transport.unwrap().resumable, Some(true), "{path}");
    }
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let c = caps(gateway_to(&format!("http://127.0.0.1:{closed}"), "/agent").await).await;
    assert_eq!(c.transport.unwrap().streaming, Some(true));
}
