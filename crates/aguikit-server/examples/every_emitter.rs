//! An agent that uses every emitter of `RunContext`, for demos and the interop tests.
//!
//!     cargo run -p aguikit-server --example every_emitter -- --port 8000
//!
//! `forwardedProps.scenario` picks what it does:
//! - absent or `"all"`: every family in one run (messages snapshot, text, chunks, steps,
//!   state, reasoning with an encrypted value, tool call and result, activity, custom, raw,
//!   nested and concurrent subagents with one failing, metadata and token usage);
//! - `"interrupt"`: a subagent asks for approval; the run ends with an interrupt outcome;
//!   the next run must answer it in `resume` and finishes with the answer.

use aguikit_core::event::{EncryptedValueSubtype, TextMessageChunk};
use aguikit_core::{Interrupt, Message, TokenUsage};
use aguikit_server::{Agent, AgentError, AgentResult, AgentServer, CorsLayer, Finish, RunContext};
use serde_json::{Value, json};

const NOTES: &str = "A note that stays the same across updates, so deltas beat snapshots.";

/// The state the `all` scenario leaves.
pub fn expected_state() -> Value {
    json!({
        "counter": 2,
        "items": ["a", "b", "c"],
        "user": {"name": "Ada", "email": "ada@example.org"},
        "done": true,
        "notes": NOTES
    })
}

/// The exact text of the `all` scenario's first assistant message, for input `said`.
pub fn expected_echo(said: &str) -> String {
    format!("You said: {said}")
}

/// The agent.
#[derive(Clone, Default)]
pub struct EveryEmitter;

impl Agent for EveryEmitter {
    async fn run(&self, input: aguikit_core::RunAgentInput, ctx: RunContext) -> AgentResult {
        let scenario = input
            .forwarded_props
            .as_ref()
            .and_then(|p| p.get("scenario"))
            .and_then(Value::as_str)
            .unwrap_or("all")
            .to_owned();
        match scenario.as_str() {
            "all" => all(input, ctx).await,
            "interrupt" => interrupt(ctx).await,
            other => {
                Err(AgentError::new(format!("unknown scenario {other:?}"))
                    .with_code("bad_scenario"))
            }
        }
    }
}

async fn all(input: aguikit_core::RunAgentInput, ctx: RunContext) -> AgentResult {
    let said = input
        .messages
        .iter()
        .rev()
        .find(|m| m.role() == aguikit_core::Role::User)
        .and_then(|m| m.text())
        .unwrap_or("nothing")
        .to_owned();

    // Messages snapshot: the history plus one earlier answer.
    let mut history = input.messages.clone();
    history.push(Message::assistant(
        ctx.new_id("earlier"),
        "An earlier answer.",
    ));
    ctx.messages_snapshot(history).await?;

    let step = ctx.step("all").await?;

    // Text, streamed, with metadata on every event of this message.
    let tagged = ctx.with_metadata(
        json!({"source": "every_emitter"})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    );
    let echo = tagged.text_message().name("echo").start().await?;
    for piece in expected_echo(&said).split_inclusive(' ') {
        echo.delta(piece).await?;
    }
    echo.end().await?;

    // The chunk shorthand, through the generic emitter.
    let chunk_id = ctx.new_id("chunked");
    ctx.emit(
        TextMessageChunk::new()
            .with_message_id(chunk_id.clone())
            .with_delta("Chunked "),
    )
    .await?;
    ctx.emit(
        TextMessageChunk::new()
            .with_message_id(chunk_id)
            .with_delta("text."),
    )
    .await?;

    // State: a snapshot or the smallest delta, computed by the runtime.
    ctx.set_state(json!({"counter": 0, "items": ["a"], "user": {"name": "Ada"}, "notes": NOTES}))
        .await?;
    ctx.update_state(|s| {
        s["counter"] = json!(1);
        if let Some(a) = s["items"].as_array_mut() {
            a.push(json!("b"));
        }
    })
    .await?;
    ctx.update_state(|s| {
        s["counter"] = json!(2);
        if let Some(a) = s["items"].as_array_mut() {
            a.push(json!("c"));
        }
        s["user"]["email"] = json!("ada@example.org");
        s["done"] = json!(true);
    })
    .await?;

    // Reasoning, with an encrypted value.
    let reasoning = ctx.reasoning().await?;
    let thought = reasoning.message().await?;
    for piece in ["First, ", "consider the question. ", "Then answer."] {
        thought.delta(piece).await?;
    }
    let thought_id = thought.id().to_owned();
    thought.end().await?;
    reasoning
        .encrypted_value(
            EncryptedValueSubtype::Message,
            thought_id,
            "ZW5jcnlwdGVkLXRob3VnaHQ=",
        )
        .await?;
    reasoning.end().await?;

    // A tool call attached to a message, its arguments streamed, then its result.
    let lookup = ctx.say("Let me look that up.").await?;
    let call = ctx
        .tool_call("get_weather")
        .parent_message(lookup.clone())
        .start()
        .await?;
    for piece in [r#"{"city":"#, r#""Berlin","#, r#""unit":"celsius"}"#] {
        call.args(piece).await?;
    }
    let call_id = call.id().to_owned();
    call.result(r#"{"temperature":21,"sky":"clear"}"#).await?;
    ctx.encrypted_value(EncryptedValueSubtype::ToolCall, call_id, "c2lnbmVkLWNhbGw=")
        .await?;
    ctx.say("It is 21 degrees and clear in Berlin.").await?;

    // An activity, updated by delta, then replaced.
    let mut plan = ctx
        .activity(
            "PLAN",
            json!({"title": "Trip", "steps": [{"label": "book", "status": "todo"}, {"label": "pack", "status": "todo"}]})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        )
        .await?;
    plan.update(|c| c["steps"][0]["status"] = json!("done"))
        .await?;
    plan.update(|c| c["steps"][1]["status"] = json!("done"))
        .await?;

    // Custom and raw.
    ctx.custom("progress", json!({"percent": 50})).await?;
    ctx.custom("nothing", Value::Null).await?;
    ctx.raw(json!({"object": "chat.completion.chunk"}), Some("openai"))
        .await?;

    // Subagents: one delegated through a tool call, with a nested one inside; two running
    // concurrently; one that fails (the run goes on).
    let delegate_msg = ctx.say("Delegating to a researcher.").await?;
    let mut delegate = ctx
        .tool_call("delegate")
        .parent_message(delegate_msg.clone())
        .start()
        .await?;
    delegate.args(r#"{"to":"researcher"}"#).await?;
    delegate.end().await?;
    let facts = ctx
        .subagent("researcher")
        .description("Finds facts")
        .parent_tool_call(delegate.id())
        .parent_message(delegate_msg)
        .run(|sub| async move {
            let search = sub.step("search").await?;
            sub.say("Researching.").await?;
            sub.subagent("summarizer")
                .run(|inner| async move {
                    inner.say("Summary: all good.").await?;
                    Ok(json!({"summary": "ok"}))
                })
                .await?;
            search.finish().await?;
            Ok(json!({"facts": 3}))
        })
        .await?;
    delegate.result(facts.to_string()).await?;
    let (a, b) = tokio::join!(
        ctx.subagent("writer").run(|sub| async move {
            say_yielding(&sub, &["Writing ", "in ", "parallel."]).await?;
            Ok(Value::Null)
        }),
        ctx.subagent("checker").run(|sub| async move {
            say_yielding(&sub, &["Checking ", "at ", "once."]).await?;
            Ok(json!(true))
        }),
    );
    a?;
    b?;
    let failed = ctx
        .subagent("flaky")
        .run(|_sub| async move {
            Err::<Value, _>(
                AgentError::new("the flaky subagent crashed").with_code("SUBAGENT_CRASH"),
            )
        })
        .await;
    debug_assert!(failed.is_err());

    step.finish().await?;
    ctx.add_usage(TokenUsage {
        provider: Some("scripted".into()),
        model: Some("every-1".into()),
        input_tokens: Some(3),
        output_tokens: Some(5),
        total_tokens: Some(8),
        ..Default::default()
    });
    Ok(Finish::success().with_result(json!({"families": "all"})))
}

/// Says `pieces` as one text message, yielding to the runtime after each delta (so that
/// two subagents saying at once interleave).
async fn say_yielding(ctx: &RunContext, pieces: &[&str]) -> Result<(), AgentError> {
    let m = ctx.text_message().start().await?;
    for piece in pieces {
        m.delta(*piece).await?;
        tokio::task::yield_now().await;
    }
    m.end().await?;
    Ok(())
}

async fn interrupt(ctx: RunContext) -> AgentResult {
    if let Some(answer) = ctx.resumed().first() {
        let approved = answer
            .entry
            .payload
            .as_ref()
            .and_then(|p| p.get("approved"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let reviewer = ctx.subagent("reviewer").start().await?;
        reviewer
            .say(if approved {
                "Approved: sending."
            } else {
                "Denied: not sending."
            })
            .await?;
        reviewer.finish(Some(json!({"approved": approved}))).await?;
        return Ok(Finish::success().with_result(json!({"approved": approved})));
    }
    ctx.say("I need an approval first.").await?;
    let reviewer = ctx.subagent("reviewer").start().await?;
    let mut ask = Interrupt::new("", "confirmation").with_message("Send the email?");
    ask.response_schema =
        json!({"type": "object", "properties": {"approved": {"type": "boolean"}}})
            .as_object()
            .cloned();
    reviewer.interrupt(ask);
    reviewer.suspend().await?;
    Ok(Finish::success())
}

/// The server, with permissive CORS so a browser page on another origin may call it.
pub fn server() -> AgentServer {
    AgentServer::new(EveryEmitter)
        .path("/agent")
        .cors(CorsLayer::permissive())
}

#[allow(dead_code)]
#[tokio::main]
async fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let mut port = 8000u16;
    while let Some(a) = args.next() {
        if a == "--port" {
            port = args.next().and_then(|p| p.parse().ok()).unwrap_or(port);
        }
    }
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!(
        "every_emitter listening on http://{}/agent",
        listener.local_addr()?
    );
    server()
        .serve(listener, aguikit_server::shutdown_signal())
        .await
}
