//! Runtime failures and limits: panics, agent errors, protocol violations, event limits,
//! keep-alive, backpressure, cancellation on disconnect, graceful shutdown.

mod common;

use aguikit_core::codec::sse::SseDecoder;
use aguikit_core::event::{TextMessageContent, TextMessageStart};
use aguikit_server::{AgentError, AgentServer, EmitError, Finish, ServerConfig, agent_fn};
use common::*;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[tokio::test]
async fn a_panicking_agent_becomes_run_error_and_the_server_keeps_serving() {
    let server = AgentServer::new(agent_fn(|input, ctx| async move {
        let msg = ctx.text_message().start().await?;
        msg.delta("about to fail").await?;
        if input.thread_id == "boom" {
            panic!("model exploded");
        }
        drop(msg);
        Ok(Finish::success())
    }));
    let addr = spawn(&server).await;
    for _ in 0..3 {
        let events = post_json(addr, "/", &input("boom", "x"))
            .await
            .events()
            .await;
        let last = events.last().unwrap();
        assert_eq!(last["type"], "RUN_ERROR");
        assert_eq!(last["code"], "panic");
        assert!(last["message"].as_str().unwrap().contains("model exploded"));
        fold(&events);
        let ok = post_json(addr, "/", &input("fine", "x"))
            .await
            .events()
            .await;
        assert_eq!(ok.last().unwrap()["type"], "RUN_FINISHED");
    }
}

#[tokio::test]
async fn agent_errors_become_run_error_with_code_and_usage() {
    let server = AgentServer::new(agent_fn(|_i, ctx| async move {
        ctx.add_usage(aguikit_core::TokenUsage {
            input_tokens: Some(4),
            ..Default::default()
        });
        let n: i32 = "nope".parse()?; // any std error converts
        Ok(Finish::success().with_result(json!(n)))
    }));
    let events = run_once(&server).await;
    assert_eq!(types(&events), ["RUN_STARTED", "RUN_ERROR"]);
    assert_eq!(events[1]["message"], "invalid digit found in string");
    assert_eq!(events[1]["usage"][0]["inputTokens"], 4);

    let server = AgentServer::new(agent_fn(|_i, _ctx| async move {
        Err(AgentError::new("upstream down").with_code("upstream"))
    }));
    let events = run_once(&server).await;
    assert_eq!(events[1]["code"], "upstream");
    assert_eq!(events[1]["message"], "upstream down");
}

/// Whether the engine's verifier is the real one (a stub would accept everything and make
/// the violation tests meaningless).
fn verifier_is_real() -> bool {
    use aguikit_core::engine::verify::Verifier;
    let mut v = Verifier::new();
    v.push(&TextMessageContent::new("never-started", "x").into())
        .is_err()
}

#[tokio::test]
async fn a_protocol_violation_is_never_sent_and_ends_the_run() {
    assert!(verifier_is_real(), "the engine's verifier is a stub");
    let seen = Arc::new(Mutex::new(None));
    let seen2 = seen.clone();
    let server = AgentServer::new(agent_fn(move |_i, ctx| {
        let seen = seen2.clone();
        async move {
            ctx.emit(TextMessageStart::new("m")).await?;
            // A second START for an open message breaks the protocol.
            let err = ctx.emit(TextMessageStart::new("m")).await.unwrap_err();
            *seen.lock().unwrap() = Some(err.clone());
            // The run is over: further emits fail.
            assert_eq!(
                ctx.custom("late", Value::Null).await,
                Err(EmitError::Closed)
            );
            Err(err.into())
        }
    }));
    let events = run_once(&server).await;
    assert_eq!(
        types(&events),
        ["RUN_STARTED", "TEXT_MESSAGE_START", "RUN_ERROR"]
    );
    assert_eq!(events[2]["code"], "protocol_violation");
    assert!(matches!(
        *seen.lock().unwrap(),
        Some(EmitError::Violation(_))
    ));
    fold(&events);
}

#[tokio::test]
async fn unclosed_entities_at_the_end_become_run_error() {
    assert!(verifier_is_real(), "the engine's verifier is a stub");
    let server = AgentServer::new(agent_fn(|_i, ctx| async move {
        // Bypassing the handles: nothing closes this message.
        ctx.emit(TextMessageStart::new("m")).await?;
        Ok(Finish::success())
    }));
    let events = run_once(&server).await;
    assert_eq!(events.last().unwrap()["type"], "RUN_ERROR");
    assert_eq!(events.last().unwrap()["code"], "protocol_violation");
}

#[tokio::test]
async fn an_event_over_the_size_limit_ends_the_run() {
    let server = AgentServer::new(agent_fn(|_i, ctx| async move {
        ctx.custom("small", json!("ok")).await?;
        let err = ctx
            .custom("big", json!("x".repeat(5000)))
            .await
            .unwrap_err();
        assert!(matches!(err, EmitError::TooLarge { .. }));
        Err(err.into())
    }))
    .config(ServerConfig::default().max_event_bytes(1000));
    let events = run_once(&server).await;
    assert_eq!(types(&events), ["RUN_STARTED", "CUSTOM", "RUN_ERROR"]);
    assert_eq!(events[2]["code"], "event_too_large");
}

#[tokio::test]
async fn too_many_events_end_the_run() {
    let server = AgentServer::new(agent_fn(|_i, ctx| async move {
        loop {
            ctx.custom("tick", Value::Null).await?;
        }
    }))
    .config(ServerConfig::default().max_events_per_run(Some(10)));
    let events = run_once(&server).await;
    assert_eq!(events.len(), 11);
    assert_eq!(events[10]["code"], "too_many_events");
}

#[tokio::test]
async fn idle_streams_get_keep_alive_comments() {
    let server = AgentServer::new(agent_fn(|_i, ctx| async move {
        tokio::time::sleep(Duration::from_millis(350)).await;
        ctx.say("late").await?;
        Ok(Finish::success())
    }))
    .config(ServerConfig::default().keep_alive(Some(Duration::from_millis(100))));
    let addr = spawn(&server).await;
    let body = post_json(addr, "/", &input("t", "x")).await.text().await;
    let pings = body.matches(": keep-alive\n\n").count();
    assert!((2..=4).contains(&pings), "{pings} keep-alives in {body:?}");
    let events = sse_events(body.as_bytes());
    assert_eq!(events.last().unwrap()["type"], "RUN_FINISHED");

    // Off: none.
    let server = server.config(ServerConfig::default().keep_alive(None));
    let addr = spawn(&server).await;
    let body = post_json(addr, "/", &input("t", "x")).await.text().await;
    assert!(!body.contains(": keep-alive"));
}

#[tokio::test]
async fn a_slow_client_slows_the_agent() {
    const TOTAL: u64 = 20_000;
    let sent = Arc::new(AtomicU64::new(0));
    let sent2 = sent.clone();
    let server = AgentServer::new(agent_fn(move |_i, ctx| {
        let sent = sent2.clone();
        async move {
            let msg = ctx.text_message().start().await?;
            let chunk = "x".repeat(2000);
            for _ in 0..TOTAL {
                msg.delta(chunk.clone()).await?;
                sent.fetch_add(1, Ordering::Relaxed);
            }
            msg.end().await?;
            Ok(Finish::success())
        }
    }))
    .config(ServerConfig::default().buffer_bytes(16 * 1024));
    let addr = spawn(&server).await;
    let res = post_json(addr, "/", &input("t", "x")).await;
    // Do not read for a while: the agent must stall once the socket buffers are full.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let stalled_at = sent.load(Ordering::Relaxed);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        sent.load(Ordering::Relaxed),
        stalled_at,
        "the agent kept going"
    );
    assert!(
        stalled_at < TOTAL / 2,
        "{stalled_at} of {TOTAL} sent without a reader"
    );
    // Reading lets it finish, with every event delivered.
    let events = res.events().await;
    assert_eq!(events.len() as u64, TOTAL + 4);
    assert_eq!(sent.load(Ordering::Relaxed), TOTAL);
}

struct DropFlag(Arc<Mutex<Option<Instant>>>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        *self.0.lock().unwrap() = Some(Instant::now());
    }
}

async fn cancellation_latency(busy: bool) -> Duration {
    let dropped = Arc::new(Mutex::new(None));
    let dropped2 = dropped.clone();
    let server = AgentServer::new(agent_fn(move |_i, ctx| {
        let flag = DropFlag(dropped2.clone());
        async move {
            let _flag = flag;
            ctx.custom("ready", Value::Null).await?;
            loop {
                if busy {
                    ctx.custom("tick", Value::Null).await?;
                    tokio::task::yield_now().await;
                } else {
                    // Idle: waiting on something that never comes, emitting nothing.
                    tokio::time::sleep(Duration::from_secs(60)).await;
                }
            }
        }
    }))
    .config(ServerConfig::default().keep_alive(None));
    let addr = spawn(&server).await;
    let mut res = post_json(addr, "/", &input("t", "x")).await;
    let mut decoder = SseDecoder::new();
    let first = res.read_events(2, &mut decoder).await;
    assert_eq!(first[1]["name"], "ready");
    assert!(dropped.lock().unwrap().is_none());
    let gone = Instant::now();
    drop(res);
    for _ in 0..200 {
        if let Some(t) = *dropped.lock().unwrap() {
            return t.duration_since(gone);
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("the agent was not cancelled within a second");
}

#[tokio::test]
async fn an_idle_agent_is_cancelled_within_100ms_of_disconnect() {
    let latency = cancellation_latency(false).await;
    assert!(latency < Duration::from_millis(100), "{latency:?}");
}

#[tokio::test]
async fn a_busy_agent_is_cancelled_within_100ms_of_disconnect() {
    let latency = cancellation_latency(true).await;
    assert!(latency < Duration::from_millis(100), "{latency:?}");
}

#[tokio::test]
async fn spawned_work_sees_the_run_close() {
    let observed = Arc::new(AtomicBool::new(false));
    let observed2 = observed.clone();
    let server = AgentServer::new(agent_fn(move |_i, ctx| {
        let observed = observed2.clone();
        async move {
            let bg = ctx.clone();
            tokio::spawn(async move {
                bg.closed().await;
                assert!(!bg.is_open());
                assert_eq!(bg.custom("late", Value::Null).await, Err(EmitError::Closed));
                observed.store(true, Ordering::SeqCst);
            });
            Ok(Finish::success())
        }
    }));
    let addr = spawn(&server).await;
    post_json(addr, "/", &input("t", "x")).await.events().await;
    for _ in 0..100 {
        if observed.load(Ordering::SeqCst) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("background task never saw the run close");
}

#[tokio::test]
async fn graceful_shutdown_ends_running_streams_after_the_grace() {
    let server = AgentServer::new(agent_fn(|input, ctx| async move {
        ctx.custom("started", Value::Null).await?;
        if input.thread_id == "quick" {
            return Ok(Finish::success());
        }
        tokio::time::sleep(Duration::from_secs(60)).await;
        Ok(Finish::success())
    }))
    .config(ServerConfig::default().shutdown_grace(Duration::from_millis(150)));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn({
        let server = server.clone();
        async move {
            server
                .serve(listener, async move {
                    let _ = rx.await;
                })
                .await
        }
    });
    let mut res = post_json(addr, "/", &input("slow", "x")).await;
    let mut decoder = SseDecoder::new();
    res.read_events(2, &mut decoder).await;
    let t0 = Instant::now();
    tx.send(()).unwrap();
    let mut rest = res.read_events(1, &mut decoder).await;
    let waited = t0.elapsed();
    let last = rest.pop().unwrap();
    assert_eq!(last["type"], "RUN_ERROR");
    assert_eq!(last["code"], "shutdown");
    assert!(waited >= Duration::from_millis(140), "{waited:?}");
    assert!(waited < Duration::from_secs(2), "{waited:?}");
    tokio::time::timeout(Duration::from_secs(5), serving)
        .await
        .expect("serve returns after shutdown")
        .unwrap()
        .unwrap();
    // After shutdown, new runs on this server are refused.
    assert!(server.shutdown_handle().is_shut_down());
    let addr = spawn(&server).await;
    assert_eq!(post_json(addr, "/", &input("quick", "x")).await.status, 503);
}

#[tokio::test]
async fn subagent_failures_do_not_end_the_run() {
    let server = AgentServer::new(agent_fn(|_i, ctx| async move {
        let r = ctx
            .subagent("flaky")
            .run(|sub| async move {
                sub.say("trying").await?;
                Err::<Value, _>(AgentError::new("crashed").with_code("CRASH"))
            })
            .await;
        assert_eq!(r.unwrap_err().code(), Some("CRASH"));
        ctx.say("carried on").await?;
        Ok(Finish::success())
    }));
    let events = run_once(&server).await;
    let err = events
        .iter()
        .find(|e| e["type"] == "SUBAGENT_ERROR")
        .unwrap();
    assert_eq!(err["code"], "CRASH");
    let tagged: Vec<&Value> = events
        .iter()
        .filter(|e| e["subagentRunId"] == err["subagentRunId"] && e["type"] != "SUBAGENT_ERROR")
        .collect();
    assert_eq!(tagged.len(), 4, "{events:?}"); // STARTED + START/CONTENT/END
    assert_eq!(events.last().unwrap()["type"], "RUN_FINISHED");
    fold(&events);
}
