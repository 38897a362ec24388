//! Tool calls across runs (front-end tools) and within a run (back-end tools).

mod common;

use aguikit_core::{Message, RunAgentInput, Tool};
use aguikit_openai::codes;
use common::*;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

fn confirm_tool() -> Tool {
    Tool::new(
        "confirm_booking",
        "Asks the user to confirm a booking",
        json!({"type": "object", "properties": {"hotel": {"type": "string"}}}),
    )
}

/// An agent on `mock` with the `add` tool.
fn adding(mock: &Mock) -> aguikit_openai::OpenAiAgentBuilder {
    agent(mock).tool("add", "Adds two integers", add_schema(), add)
}

fn add_schema() -> Value {
    json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
           "required": ["a", "b"]})
}

fn add(args: Value) -> std::future::Ready<aguikit_openai::ToolResult> {
    let r = match (args["a"].as_i64(), args["b"].as_i64()) {
        (Some(a), Some(b)) => Ok(json!(a + b)),
        _ => Err("a and b must be integers".to_owned()),
    };
    std::future::ready(r)
}

#[tokio::test]
async fn front_end_tool_round_trip() {
    let mock = Mock::start(vec![
        calls_tools(&[("call_1", "confirm_booking", "{\"hotel\":\"Ritz\"}")]),
        says("Your booking #42 at the Ritz is confirmed."),
    ])
    .await;
    let server = Server::start(
        agent(&mock)
            .system_prompt("You book hotels.")
            .build()
            .unwrap(),
    )
    .await;

    // Run 1: the model calls the client's tool; the run ends waiting for its answer.
    let first = server
        .run(input("Book the Ritz").with_tool(confirm_tool()))
        .await;
    assert_eq!(
        first.finished()["outcome"],
        json!({"type": "success", "pendingToolCallIds": ["call_1"]})
    );
    assert!(first.of_type("TOOL_CALL_RESULT").is_empty());

    // Run 2: the client answers with a tool message on the folded conversation.
    let mut history = first.history();
    history.push(Message::tool("tool-1", "call_1", "confirmed: booking #42"));
    let second_input = RunAgentInput {
        messages: history,
        ..RunAgentInput::new("thread-1", "run-2")
    }
    .with_tool(confirm_tool());
    let second = server.run(second_input).await;
    assert!(second.finished().get("outcome").is_none());

    // The model got the tool result in the shape the API wants.
    let received = mock.received();
    assert_eq!(received.len(), 2);
    assert_eq!(
        received[1].body["messages"],
        json!([
            {"role": "system", "content": "You book hotels."},
            {"role": "user", "content": "Book the Ritz"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "confirm_booking", "arguments": "{\"hotel\":\"Ritz\"}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "confirmed: booking #42"}
        ])
    );
    assert_eq!(
        received[1].body["tools"][0]["function"]["name"],
        "confirm_booking"
    );

    let messages = second.messages();
    assert_eq!(messages.len(), 4, "{messages:#?}");
    assert_eq!(messages[2]["role"], "tool");
    assert_eq!(messages[3]["role"], "assistant");
    assert_eq!(
        messages[3]["content"],
        "Your booking #42 at the Ritz is confirmed."
    );
}

#[tokio::test]
async fn back_end_tool_loop() {
    let mock = Mock::start(vec![
        Reply::Sse(vec![
            delta(json!({"role": "assistant", "content": null})),
            delta(
                json!({"tool_calls": [tool_delta(0, Some("call_add"), Some("add"), "{\"a\":2,")]}),
            ),
            delta(json!({"tool_calls": [tool_delta(0, None, None, "\"b\":3}")]})),
            finish("tool_calls"),
            usage(10, 5),
            done(),
        ]),
        Reply::Sse(vec![
            delta(json!({"role": "assistant", "content": "2 + 3 = 5"})),
            finish("stop"),
            usage(20, 4),
            done(),
        ]),
    ])
    .await;
    let agent = adding(&mock).build().unwrap();
    let run = run(agent, input("What is 2 + 3?")).await;

    let finished = run.finished();
    assert!(finished.get("outcome").is_none(), "{finished}");
    assert_eq!(
        finished["usage"],
        json!([{"provider": "openai", "model": MODEL, "inputTokens": 30, "outputTokens": 9, "totalTokens": 39}])
    );
    assert_eq!(finished["metadata"]["finishReason"], "stop");
    let results = run.of_type("TOOL_CALL_RESULT");
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["toolCallId"], "call_add");
    assert_eq!(results[0]["content"], "5");

    let messages = run.messages();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"]);
    assert_eq!(
        messages[1]["toolCalls"][0]["function"]["arguments"],
        "{\"a\":2,\"b\":3}"
    );
    assert_eq!(messages[2]["toolCallId"], "call_add");
    assert_eq!(messages[3]["content"], "2 + 3 = 5");
    assert_ne!(messages[1]["id"], messages[3]["id"]);

    let received = mock.received();
    assert_eq!(received.len(), 2);
    assert_eq!(
        received[0].body["tools"],
        json!([{"type": "function", "function": {"name": "add", "description": "Adds two integers", "parameters": add_schema()}}])
    );
    assert_eq!(
        received[1].body["messages"],
        json!([
            {"role": "user", "content": "What is 2 + 3?"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_add", "type": "function", "function": {"name": "add", "arguments": "{\"a\":2,\"b\":3}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_add", "content": "5"}
        ])
    );
}

#[tokio::test]
async fn back_end_tools_of_one_turn_run_concurrently() {
    // Each call waits for the other: run one after the other, they would never finish.
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let mock = Mock::start(vec![
        calls_tools(&[("c1", "meet", "{}"), ("c2", "meet", "{}")]),
        says("Both met."),
    ])
    .await;
    let agent = agent(&mock)
        .tool(
            "meet",
            "Waits for a partner",
            json!({"type": "object"}),
            move |_| {
                let barrier = barrier.clone();
                async move {
                    tokio::time::timeout(Duration::from_secs(5), barrier.wait())
                        .await
                        .map_err(|_| "nobody came".to_owned())?;
                    Ok(json!("met"))
                }
            },
        )
        .build()
        .unwrap();
    let run = run(agent, input("meet twice")).await;
    let results: Vec<(&Value, &Value)> = run
        .of_type("TOOL_CALL_RESULT")
        .iter()
        .map(|r| (&r["toolCallId"], &r["content"]))
        .collect();
    assert_eq!(
        results,
        [(&json!("c1"), &json!("met")), (&json!("c2"), &json!("met"))]
    );
    assert_eq!(run.messages().last().unwrap()["content"], "Both met.");
}

#[tokio::test]
async fn the_step_bound_stops_a_model_that_keeps_calling_tools() {
    let mock = Mock::start(vec![
        calls_tools(&[("s1", "add", "{\"a\":1,\"b\":1}")]),
        calls_tools(&[("s2", "add", "{\"a\":2,\"b\":2}")]),
        says("never asked for"),
    ])
    .await;
    let agent = adding(&mock).max_steps(2).build().unwrap();
    let run = run(agent, input("loop")).await;
    let e = run.error();
    assert_eq!(e["code"], codes::MAX_STEPS);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("still calling tools after 2 model calls"),
        "{e}"
    );
    assert_eq!(mock.received().len(), 2);
    // The first call was answered, the second (past the bound) was not run.
    let results = run.of_type("TOOL_CALL_RESULT");
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["toolCallId"], "s1");
    assert_eq!(run.of_type("TOOL_CALL_START").len(), 2);
}

#[tokio::test]
async fn tool_errors_bad_arguments_and_unknown_tools_reach_the_model() {
    let mock = Mock::start(vec![
        calls_tools(&[
            ("e1", "add", "{\"a\":\"x\",\"b\":1}"),
            ("e2", "add", "{not json"),
            ("e3", "multiply", "{}"),
        ]),
        says("Sorry."),
    ])
    .await;
    let agent = adding(&mock).build().unwrap();
    let run = run(agent, input("try")).await;
    run.finished();
    let tool_messages: Vec<Value> = mock.received()[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .cloned()
        .collect();
    assert_eq!(tool_messages.len(), 3);
    assert_eq!(
        tool_messages[0]["content"],
        r#"{"error":"a and b must be integers"}"#
    );
    let bad_args = tool_messages[1]["content"].as_str().unwrap();
    assert!(
        bad_args.contains("the arguments are not valid JSON"),
        "{bad_args}"
    );
    let unknown = tool_messages[2]["content"].as_str().unwrap();
    assert!(
        unknown.contains("there is no tool named \\\"multiply\\\"; the tools are: add"),
        "{unknown}"
    );
    // The client saw the same answers.
    let results = run.of_type("TOOL_CALL_RESULT");
    assert_eq!(results.len(), 3);
    assert_eq!(results[0]["content"], tool_messages[0]["content"]);
}

#[tokio::test]
async fn back_end_and_front_end_calls_in_one_turn() {
    let mock = Mock::start(vec![calls_tools(&[
        ("b1", "add", "{\"a\":1,\"b\":2}"),
        ("f1", "confirm_booking", "{\"hotel\":\"Ritz\"}"),
    ])])
    .await;
    let agent = adding(&mock).build().unwrap();
    let run = run(agent, input("both").with_tool(confirm_tool())).await;
    // The back-end call is answered here; the run waits for the client's.
    assert_eq!(
        run.finished()["outcome"],
        json!({"type": "success", "pendingToolCallIds": ["f1"]})
    );
    let results = run.of_type("TOOL_CALL_RESULT");
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["toolCallId"], "b1");
    assert_eq!(mock.received().len(), 1);
    // Both tools were offered: back-end first.
    let received = mock.received();
    let names: Vec<&str> = received[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["add", "confirm_booking"]);
}

#[tokio::test]
async fn repeated_tool_call_ids_get_fresh_ones() {
    // Some servers number calls per answer ("call_0" every time): a reused id would
    // reopen a closed AG-UI tool call, so the agent mints a new one.
    let mock = Mock::start(vec![
        calls_tools(&[("call_0", "add", "{\"a\":1,\"b\":1}")]),
        calls_tools(&[("call_0", "add", "{\"a\":2,\"b\":2}")]),
        says("2 and 4"),
    ])
    .await;
    let agent = adding(&mock).build().unwrap();
    let run = run(agent, input("twice")).await;
    run.finished();
    let starts = run.of_type("TOOL_CALL_START");
    assert_eq!(starts[0]["toolCallId"], "call_0");
    assert_ne!(starts[1]["toolCallId"], "call_0");
    // The model sees the ids the client sees.
    let third = &mock.received()[2].body["messages"];
    assert_eq!(third[3]["tool_calls"][0]["id"], starts[1]["toolCallId"]);
    assert_eq!(third[4]["tool_call_id"], starts[1]["toolCallId"]);
}
