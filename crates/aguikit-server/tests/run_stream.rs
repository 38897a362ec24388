//! A run over real HTTP: lifecycle, negotiation, every emitter, folding with the client
//! pipeline.

mod common;
#[path = "../examples/every_emitter.rs"]
mod every_emitter;

use aguikit_core::event::{Custom, RunFinished, TextMessageChunk};
use aguikit_core::{Event, Interrupt, TokenUsage};
use aguikit_server::{AgentServer, EmitError, Finish, RouterExt, agent_fn, boxed, stream_agent};
use common::*;
use serde_json::{Value, json};

#[tokio::test]
async fn lifecycle_is_framed_by_the_runtime() {
    let server = AgentServer::new(agent_fn(|_i, ctx| async move {
        ctx.say("Hi").await?;
        Ok(Finish::success().with_result(json!({"n": 1})))
    }));
    let addr = spawn(&server).await;
    let res = post_json(addr, "/", &input("t1", "hello")).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.header("content-type"), Some("text/event-stream"));
    assert_eq!(res.header("cache-control"), Some("no-cache"));
    let events = res.events().await;
    assert_eq!(
        types(&events),
        [
            "RUN_STARTED",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "RUN_FINISHED"
        ]
    );
    assert_eq!(events[0]["threadId"], "t1");
    assert_eq!(events[0]["protocolVersion"], "1.0");
    assert!(events[0]["timestamp"].is_i64());
    assert_eq!(events[4]["result"], json!({"n": 1}));
    assert!(events[4].get("outcome").is_none());
    fold(&events);
    assert_eq!(fold_simple(&events, json!({})).all_texts(), ["Hi"]);
}

#[tokio::test]
async fn wire_bytes_are_the_reference_framing() {
    let server = AgentServer::new(agent_fn(|_i, ctx| async move {
        ctx.custom("x", json!({"a": [1, "é"]})).await?;
        Ok(Finish::success())
    }));
    let addr = spawn(&server).await;
    let body = post_json(addr, "/", &input("t", "x")).await.text().await;
    assert!(
        body.contains("data: {\"type\":\"CUSTOM\",\"name\":\"x\",\"value\":{\"a\":[1,\"é\"]}}\n\n"),
        "{body}"
    );
    assert!(!body.contains('\r'));
}

#[tokio::test]
async fn accept_star_gets_sse_and_proto_is_only_when_asked() {
    let server = AgentServer::new(agent_fn(|_i, _ctx| async move { Ok(Finish::success()) }));
    let addr = spawn(&server).await;
    for accept in [
        "*/*",
        "application/*",
        "text/event-stream",
        "application/json",
    ] {
        let res = post_accepting(addr, "/", accept, &input("t", "x")).await;
        assert_sse(&res, accept);
        assert_eq!(types(&res.events().await), ["RUN_STARTED", "RUN_FINISHED"]);
    }
    // No Accept at all: SSE.
    let res = post_input(addr, "/", &[("Content-Type", "application/json")]).await;
    assert_eq!(res.header("content-type"), Some("text/event-stream"));
    // Protobuf asked for: served when the codec is built in, SSE otherwise.
    let res = post_input(
        addr,
        "/",
        &[
            (
                "Accept",
                "application/vnd.ag-ui.event+proto, text/event-stream;q=0.5",
            ),
            ("Content-Type", "application/json"),
        ],
    )
    .await;
    let want = if cfg!(feature = "proto") {
        aguikit_server::PROTO_MEDIA_TYPE
    } else {
        aguikit_server::SSE_MEDIA_TYPE
    };
    assert_eq!(res.header("content-type"), Some(want));
}

#[tokio::test]
async fn every_emitter_folds_to_the_expected_conversation() {
    let addr = spawn(&every_emitter::server()).await;
    let res = post_json(addr, "/agent", &input("t-all", "hello there")).await;
    assert_eq!(res.status, 200);
    let events = res.events().await;
    fold(&events);
    let folded = fold_simple(&events, json!({}));
    assert_eq!(folded.state, every_emitter::expected_state());
    let texts = folded.all_texts();
    assert!(
        texts.contains(&every_emitter::expected_echo("hello there").as_str()),
        "{texts:?}"
    );
    assert!(texts.contains(&"Chunked text."), "{texts:?}");
    assert!(texts.contains(&"Summary: all good."), "{texts:?}");
    let t = types(&events);
    for family in [
        "MESSAGES_SNAPSHOT",
        "STEP_STARTED",
        "TEXT_MESSAGE_CHUNK",
        "STATE_SNAPSHOT",
        "STATE_DELTA",
        "REASONING_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_ENCRYPTED_VALUE",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_RESULT",
        "ACTIVITY_SNAPSHOT",
        "ACTIVITY_DELTA",
        "CUSTOM",
        "RAW",
        "SUBAGENT_STARTED",
        "SUBAGENT_FINISHED",
        "SUBAGENT_ERROR",
    ] {
        assert!(t.iter().any(|x| x == family), "no {family} in {t:?}");
    }
    let last = events.last().unwrap();
    assert_eq!(last["type"], "RUN_FINISHED");
    assert_eq!(last["usage"][0]["totalTokens"], 8);
    // Metadata reached every event of the echo message.
    assert!(
        events
            .iter()
            .filter(|e| e["type"] == "TEXT_MESSAGE_CONTENT"
                && e["metadata"]["source"] == "every_emitter")
            .count()
            >= 2
    );
    // Nested subagent: parentSubagentRunId names the researcher; its events are tagged.
    let researcher = events
        .iter()
        .find(|e| e["type"] == "SUBAGENT_STARTED" && e["name"] == "researcher")
        .unwrap();
    let rid = researcher["subagentRunId"].as_str().unwrap();
    assert!(researcher["parentToolCallId"].is_string());
    let summarizer = events
        .iter()
        .find(|e| e["type"] == "SUBAGENT_STARTED" && e["name"] == "summarizer")
        .unwrap();
    assert_eq!(summarizer["parentSubagentRunId"], rid);
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "STEP_STARTED" && e["subagentRunId"] == rid)
    );
}

#[tokio::test]
async fn state_updates_send_minimal_deltas() {
    let server = AgentServer::new(agent_fn(|_i, ctx| async move {
        let big: Vec<u32> = (0..100).collect();
        ctx.set_state(json!({"big": big, "n": 0})).await?;
        ctx.update_state(|s| s["n"] = json!(1)).await?;
        ctx.update_state(|s| s["n"] = json!(1)).await?; // unchanged: nothing sent
        ctx.update_state(|s| {
            s["big"].as_array_mut().unwrap().insert(50, json!("x"));
        })
        .await?;
        Ok(Finish::success())
    }));
    let events = run_once(&server).await;
    assert_eq!(
        types(&events),
        [
            "RUN_STARTED",
            "STATE_SNAPSHOT",
            "STATE_DELTA",
            "STATE_DELTA",
            "RUN_FINISHED"
        ]
    );
    assert_eq!(
        events[2]["delta"],
        json!([{"op": "replace", "path": "/n", "value": 1}])
    );
    assert_eq!(
        events[3]["delta"],
        json!([{"op": "add", "path": "/big/50", "value": "x"}])
    );
    fold(&events);
    assert_eq!(fold_simple(&events, json!({})).state["big"][50], "x");
}

#[tokio::test]
async fn state_delta_starts_from_the_input_state() {
    let server = AgentServer::new(agent_fn(|_i, ctx| async move {
        assert_eq!(ctx.state(), Some(json!({"keep": "x".repeat(200), "n": 1})));
        ctx.update_state(|s| s["n"] = json!(2)).await?;
        Ok(Finish::success())
    }));
    let addr = spawn(&server).await;
    let mut body = input("t", "x");
    body["state"] = json!({"keep": "x".repeat(200), "n": 1});
    let events = post_json(addr, "/", &body).await.events().await;
    assert_eq!(
        types(&events),
        ["RUN_STARTED", "STATE_DELTA", "RUN_FINISHED"]
    );
}

#[tokio::test]
async fn handles_end_themselves_when_dropped() {
    let server = AgentServer::new(agent_fn(|_i, ctx| async move {
        let _step = ctx.step("s").await?;
        let msg = ctx.text_message().start().await?;
        msg.delta("partial").await?;
        let call = ctx.tool_call("t").parent_message(msg.id()).start().await?;
        call.args("{}").await?;
        let r = ctx.reasoning().await?;
        let _m = r.message().await?;
        let _sub = ctx.subagent("forgotten").start().await?;
        Ok(Finish::success())
    }));
    let events = run_once(&server).await;
    let t = types(&events);
    for closer in [
        "TEXT_MESSAGE_END",
        "TOOL_CALL_END",
        "STEP_FINISHED",
        "REASONING_MESSAGE_END",
        "REASONING_END",
        "SUBAGENT_ERROR",
    ] {
        assert!(t.iter().any(|x| x == closer), "no {closer}: {t:?}");
    }
    assert_eq!(t.last().unwrap(), "RUN_FINISHED");
    fold(&events);
}

#[tokio::test]
async fn stream_agents_forward_and_read_lifecycle_events() {
    let server = AgentServer::new(stream_agent(|input| {
        futures_util::stream::iter(vec![
            Event::from(aguikit_core::event::RunStarted::new(
                input.thread_id.clone(),
                "ignored",
            )),
            TextMessageChunk::new()
                .with_message_id("m")
                .with_delta("a")
                .into(),
            TextMessageChunk::new().with_delta("b").into(),
            RunFinished::new("x", "y").with_result(json!(7)).into(),
            Custom::new("after", json!(1)).into(),
        ])
    }));
    let events = run_once(&server).await;
    assert_eq!(
        types(&events),
        [
            "RUN_STARTED",
            "TEXT_MESSAGE_CHUNK",
            "TEXT_MESSAGE_CHUNK",
            "RUN_FINISHED"
        ]
    );
    assert_eq!(events[3]["result"], 7);
    assert_eq!(events[3]["threadId"], "t");
    fold(&events);
    assert_eq!(fold_simple(&events, json!({})).all_texts(), ["ab"]);
}

#[tokio::test]
async fn boxed_agents_mount_anywhere_with_router_ext() {
    let agent = boxed(agent_fn(|_i, ctx| async move {
        ctx.say("boxed").await?;
        Ok(Finish::success())
    }));
    let a = AgentServer::from_boxed(agent.clone());
    let b = AgentServer::new(agent);
    let router = axum::Router::new().agent("/a", &a).agent("/b/deeper", &b);
    let addr = spawn_router(router).await;
    for path in ["/a", "/b/deeper"] {
        let events = post_json(addr, path, &input("t", "x")).await.events().await;
        assert_eq!(events.len(), 5, "{path}");
    }
    let res = request(addr, "GET", "/a", &[], b"").await;
    assert_eq!(res.status, 405);
}

#[tokio::test]
async fn usage_and_metadata_reach_the_terminal_events() {
    let server = AgentServer::new(agent_fn(|_i, ctx| async move {
        let usage = |n| TokenUsage {
            provider: Some("p".into()),
            model: Some("m".into()),
            input_tokens: Some(n),
            ..Default::default()
        };
        ctx.add_usage(usage(2));
        Ok(Finish::success()
            .with_usage(usage(3))
            .with_metadata(json!({"k": "v"}).as_object().cloned().unwrap()))
    }));
    let events = run_once(&server).await;
    assert_eq!(
        events[1]["usage"],
        json!([{"provider": "p", "model": "m", "inputTokens": 5}])
    );
    assert_eq!(events[1]["metadata"], json!({"k": "v"}));
}

#[tokio::test]
async fn lifecycle_events_are_reserved() {
    let server = AgentServer::new(agent_fn(|_i, ctx| async move {
        let e = ctx.emit(RunFinished::new("t", "r")).await.unwrap_err();
        assert!(matches!(e, EmitError::Reserved(_)));
        ctx.custom("still-open", Value::Null).await?;
        Ok(Finish::cancelled())
    }));
    let events = run_once(&server).await;
    assert_eq!(types(&events), ["RUN_STARTED", "CUSTOM", "RUN_FINISHED"]);
    assert_eq!(events[2]["outcome"], json!({"type": "cancelled"}));
}

#[tokio::test]
async fn tool_results_and_pending_calls() {
    let server = AgentServer::new(agent_fn(|_i, ctx| async move {
        let call = ctx.call_tool("server_tool", &json!({"q": 1})).await?;
        let result_id = call.result("done").await?;
        assert!(result_id.starts_with("tool-"));
        let front = ctx.call_tool("frontend_tool", &json!({})).await?;
        Ok(Finish::pending_tool_calls(vec![front.id().to_owned()]))
    }));
    let events = run_once(&server).await;
    let last = events.last().unwrap();
    assert_eq!(last["outcome"]["type"], "success");
    assert_eq!(
        last["outcome"]["pendingToolCallIds"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(events[2]["delta"], r#"{"q":1}"#);
    fold(&events);
}

#[tokio::test]
async fn interrupt_outcome_carries_raised_interrupts() {
    let server = AgentServer::new(agent_fn(|_i, ctx| async move {
        let id = ctx.interrupt(Interrupt::new("", "confirmation").with_message("ok?"));
        assert!(id.starts_with("interrupt-"));
        Ok(Finish::success())
    }));
    let events = run_once(&server).await;
    let outcome = &events.last().unwrap()["outcome"];
    assert_eq!(outcome["type"], "interrupt");
    assert_eq!(outcome["interrupts"][0]["message"], "ok?");
}

#[tokio::test]
async fn empty_interrupt_outcome_is_a_run_error() {
    let server = AgentServer::new(agent_fn(
        |_i, _ctx| async move { Ok(Finish::interrupt(vec![])) },
    ));
    let events = run_once(&server).await;
    assert_eq!(events.last().unwrap()["code"], "invalid_outcome");
}

#[tokio::test]
async fn event_timestamps_are_optional() {
    let server = AgentServer::new(agent_fn(|_i, ctx| async move {
        ctx.custom("c", Value::Null).await?;
        Ok(Finish::success())
    }));
    let addr = spawn(
        &server
            .clone()
            .config(aguikit_server::ServerConfig::default().event_timestamps(true)),
    )
    .await;
    let events = post_json(addr, "/", &input("t", "x")).await.events().await;
    assert!(events[1]["timestamp"].is_i64());
    let events = run_once(&server).await;
    assert!(events[1].get("timestamp").is_none());
}
