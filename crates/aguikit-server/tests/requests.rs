//! Request handling: body limit, malformed input, resume checks, CORS, method.

mod common;

use aguikit_core::{Interrupt, RunAgentInput};
use aguikit_server::{AgentServer, CorsLayer, Finish, ServerConfig, agent_fn};
use common::*;
use serde_json::{Value, json};
use std::net::SocketAddr;

fn echo_server() -> AgentServer {
    AgentServer::new(agent_fn(|_i, ctx| async move {
        ctx.say("ok").await?;
        Ok(Finish::success())
    }))
}

#[tokio::test]
async fn body_over_the_limit_is_413_json() {
    let server = echo_server().config(ServerConfig::default().max_body_bytes(1000));
    let addr = spawn(&server).await;
    let mut big = input("t", &"x".repeat(2000));
    big["pad"] = json!(1);
    let res = post_json(addr, "/", &big).await;
    assert_eq!(res.status, 413);
    assert_eq!(res.header("content-type"), Some("application/json"));
    let body = res.json().await;
    assert_eq!(body["error"], "body_too_large");
    assert_eq!(body["limit"], 1000);
    // Without Content-Length (chunked upload), the limit applies while reading.
    let payload = big.to_string();
    let chunked = format!("{:x}\r\n{payload}\r\n0\r\n\r\n", payload.len());
    let res = post(
        addr,
        "/",
        &[
            ("Transfer-Encoding", "chunked"),
            ("Content-Type", "application/json"),
        ],
        chunked.as_bytes(),
    )
    .await;
    assert_eq!(res.status, 413);
    // Under the limit: fine.
    let res = post_json(addr, "/", &input("t", "small")).await;
    assert_eq!(res.status, 200);
}

#[tokio::test]
async fn default_body_limit_is_10_mib() {
    assert_eq!(ServerConfig::default().max_body_bytes, 10 * 1024 * 1024);
    let addr = spawn(&echo_server()).await;
    let len = (10 * 1024 * 1024 + 1).to_string();
    let res = post(
        addr,
        "/",
        &[
            ("Content-Length", &len),
            ("Content-Type", "application/json"),
        ],
        b"",
    )
    .await;
    assert_eq!(res.status, 413);
}

#[tokio::test]
async fn bad_json_is_400() {
    let addr = spawn(&echo_server()).await;
    for body in [
        &b"{not json"[..],
        b"",
        b"[1,2]",
        b"42",
        b"{\"threadId\":\"t\",\"runId\":\"r\",\"messages\":[]} trailing",
    ] {
        let res = post(addr, "/", &[("Content-Type", "application/json")], body).await;
        assert_eq!(res.status, 400, "{}", String::from_utf8_lossy(body));
        let j = res.json().await;
        assert_eq!(j["error"], "invalid_json");
        assert!(j["message"].as_str().unwrap().len() > 10);
    }
}

#[tokio::test]
async fn schema_errors_are_422_naming_the_field() {
    let addr = spawn(&echo_server()).await;
    let cases: Vec<(Value, &str)> = vec![
        (json!({"runId": "r", "messages": []}), "threadId"),
        (
            json!({"threadId": "t", "runId": 5, "messages": []}),
            "runId",
        ),
        (
            json!({"threadId": "t", "runId": "r", "messages": [{"id": "u", "role": "user"}]}),
            "messages[0].content",
        ),
        (
            json!({"threadId": "t", "runId": "r", "messages": [], "tools": [{"name": "x"}]}),
            "tools[0].description",
        ),
        (
            json!({"threadId": "t", "runId": "r", "messages": [], "resume": [{"interruptId": "i", "status": "maybe"}]}),
            "resume[0].status",
        ),
    ];
    for (body, field) in cases {
        let res = post_json(addr, "/", &body).await;
        assert_eq!(res.status, 422, "{body}");
        let j = res.json().await;
        assert_eq!(j["error"], "invalid_input", "{j}");
        let got = j["field"].as_str().unwrap_or_default();
        assert!(
            got.starts_with(field),
            "{body}: field {got:?}, want {field:?} ({j})"
        );
        assert!(j["message"].as_str().unwrap().starts_with(got));
    }
}

#[tokio::test]
async fn unknown_fields_and_roles_are_dropped_not_refused() {
    let addr = spawn(&echo_server()).await;
    let mut body = input("t", "x");
    body["future"] = json!(true);
    body["messages"]
        .as_array_mut()
        .unwrap()
        .push(json!({"id": "c", "role": "critic", "content": "?"}));
    let res = post_json(addr, "/", &body).await;
    assert_eq!(res.status, 200);
}

#[tokio::test]
async fn other_methods_are_refused() {
    let addr = spawn(&echo_server()).await;
    assert_eq!(request(addr, "GET", "/", &[], b"").await.status, 405);
    assert_eq!(post(addr, "/elsewhere", &[], b"{}").await.status, 404);
}

#[tokio::test]
async fn cors_preflight_and_headers() {
    let addr = spawn(&echo_server().cors(CorsLayer::permissive())).await;
    let res = request(
        addr,
        "OPTIONS",
        "/",
        &[
            ("Origin", "http://127.0.0.1:9999"),
            ("Access-Control-Request-Method", "POST"),
            ("Access-Control-Request-Headers", "content-type"),
        ],
        b"",
    )
    .await;
    assert_eq!(res.status, 200);
    assert_eq!(res.header("access-control-allow-origin"), Some("*"));
    let res = post_input(addr, "/", &[("Origin", "http://127.0.0.1:9999")]).await;
    assert_eq!(res.header("access-control-allow-origin"), Some("*"));
    // Without a CORS layer, no CORS headers.
    let addr = spawn(&echo_server()).await;
    let res = post_input(addr, "/", &[("Origin", "http://x")]).await;
    assert_eq!(res.header("access-control-allow-origin"), None);
}

fn interrupting_server() -> AgentServer {
    AgentServer::new(agent_fn(|input, ctx| async move {
        if !ctx.resumed().is_empty() {
            let answers: Vec<Value> = ctx
                .resumed()
                .iter()
                .map(|r| json!({"id": r.interrupt.id, "status": r.entry.status, "payload": r.entry.payload}))
                .collect();
            return Ok(Finish::success().with_result(json!(answers)));
        }
        if asks(&input) {
            ctx.interrupt(Interrupt::new("a", "confirmation"));
            let mut b = Interrupt::new("b", "input_required");
            b.expires_at = Some("2999-01-01T00:00:00Z".into());
            return Ok(Finish::interrupt(vec![b]));
        }
        Ok(Finish::success())
    }))
}

fn with(mut body: Value, key: &str, v: Value) -> Value {
    body[key] = v;
    body
}

/// Whether the run was asked to raise interrupts (`forwardedProps.ask`).
fn asks(input: &RunAgentInput) -> bool {
    input
        .forwarded_props
        .as_ref()
        .and_then(|p| p.get("ask"))
        .is_some()
}

/// Runs `base` asking for interrupts; its events.
async fn ask(addr: SocketAddr, base: &Value) -> Vec<Value> {
    let asking = with(base.clone(), "forwardedProps", json!({"ask": 1}));
    post_json(addr, "/", &asking).await.events().await
}

#[tokio::test]
async fn resume_must_answer_every_open_interrupt() {
    let addr = spawn(&interrupting_server()).await;
    let base = input("thread-i", "x");
    let events = ask(addr, &base).await;
    let outcome = &events.last().unwrap()["outcome"];
    assert_eq!(outcome["type"], "interrupt");
    assert_eq!(outcome["interrupts"].as_array().unwrap().len(), 2);

    // No resume at all: the run ends with RUN_ERROR (interrupts.md C4, C8).
    let refused = |body: Value| async move {
        let res = post_json(addr, "/", &body).await;
        assert_eq!(res.status, 200);
        let events = res.events().await;
        assert_eq!(
            events
                .iter()
                .map(|e| e["type"].as_str().unwrap())
                .collect::<Vec<_>>(),
            ["RUN_STARTED", "RUN_ERROR"],
            "{events:?}"
        );
        events[1].clone()
    };
    let e = refused(base.clone()).await;
    assert_eq!(e["code"], "resume_missing");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("2 pending interrupt(s)"),
        "{e}"
    );

    // Partial: refused, naming the missing one (C3).
    let partial = with(
        base.clone(),
        "resume",
        json!([{"interruptId": "a", "status": "resolved", "payload": 1}]),
    );
    let e = refused(partial).await;
    assert_eq!(e["code"], "resume_incomplete");
    assert!(e["message"].as_str().unwrap().contains(": b"), "{e}");

    // Unknown id: refused (C2).
    let unknown = with(
        base.clone(),
        "resume",
        json!([{"interruptId": "a", "status": "cancelled"}, {"interruptId": "b", "status": "cancelled"}, {"interruptId": "z", "status": "cancelled"}]),
    );
    let e = refused(unknown).await;
    assert_eq!(e["code"], "resume_unknown_interrupt");
    assert!(e["message"].as_str().unwrap().contains('z'), "{e}");

    // A resume on a thread with nothing pending names unknown interrupts too.
    let stray = with(
        input("quiet-thread", "x"),
        "resume",
        json!([{"interruptId": "nope", "status": "resolved", "payload": true}]),
    );
    let e = refused(stray).await;
    assert_eq!(e["code"], "resume_unknown_interrupt");

    // Another thread is unaffected.
    assert_eq!(
        post_json(addr, "/", &input("other-thread", "x"))
            .await
            .status,
        200
    );

    // Complete: accepted, and the agent sees the answers.
    let full = with(
        base.clone(),
        "resume",
        json!([{"interruptId": "b", "status": "cancelled"}, {"interruptId": "a", "status": "resolved", "payload": {"approved": true}}]),
    );
    let res = post_json(addr, "/", &full).await;
    assert_eq!(res.status, 200);
    let events = res.events().await;
    let result = &events.last().unwrap()["result"];
    assert_eq!(result[0]["id"], "a");
    assert_eq!(result[0]["payload"], json!({"approved": true}));
    assert_eq!(result[1]["status"], "cancelled");

    // That run finished: nothing is open any more.
    assert_eq!(post_json(addr, "/", &base).await.status, 200);
}

#[tokio::test]
async fn resume_checks_can_be_turned_off() {
    let addr =
        spawn(&interrupting_server().config(ServerConfig::default().check_resume(false))).await;
    let base = input("thread-off", "x");
    ask(addr, &base).await;
    assert_eq!(post_json(addr, "/", &base).await.status, 200);
}

#[tokio::test]
async fn run_error_keeps_interrupts_open() {
    let server = AgentServer::new(agent_fn(|input, ctx| async move {
        if asks(&input) {
            ctx.interrupt(Interrupt::new("a", "confirmation"));
            return Ok(Finish::success());
        }
        Err(aguikit_server::AgentError::new("resume handling failed"))
    }));
    let addr = spawn(&server).await;
    let base = input("thread-e", "x");
    ask(addr, &base).await;
    let resume = with(
        base.clone(),
        "resume",
        json!([{"interruptId": "a", "status": "cancelled"}]),
    );
    let events = post_json(addr, "/", &resume).await.events().await;
    assert_eq!(events.last().unwrap()["type"], "RUN_ERROR");
    // Still open: a run without resume is refused.
    let events = post_json(addr, "/", &base).await.events().await;
    assert_eq!(events.last().unwrap()["code"], "resume_missing");
}
