//! Chunk streams in the shapes real servers send, through `aguikit_server` over loopback,
//! verified and folded by the engine: text, reasoning, parallel tool calls, usage,
//! keep-alives, `[DONE]`, and what the mock received.

mod common;

use aguikit_core::Tool;
use common::*;
use serde_json::json;

#[tokio::test]
async fn plain_content_becomes_one_text_message_with_usage_and_finish_reason() {
    let mock = Mock::start(vec![Reply::Sse(vec![
        delta(json!({"role": "assistant", "content": "", "refusal": null})),
        delta(json!({"content": "Hello"})),
        delta(json!({"content": ", world"})),
        delta(json!({"content": "!"})),
        finish("stop"),
        usage(12, 3),
        done(),
    ])])
    .await;
    let agent = agent(&mock)
        .system_prompt("Be brief.")
        .temperature(0.5)
        .header("X-Title", "agui tests")
        .build()
        .unwrap();
    let run = run(agent, input("Hi")).await;

    assert_eq!(
        run.types(),
        [
            "RUN_STARTED",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "RUN_FINISHED"
        ]
    );
    let messages = run.messages();
    assert_eq!(messages.len(), 2);
    assert_eq!(
        messages[0],
        json!({"role": "user", "id": "u1", "content": "Hi"})
    );
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(messages[1]["content"], "Hello, world!");
    // The assistant message id is a v4 UUID (unique across runs and servers).
    let id = messages[1]["id"].as_str().unwrap();
    assert_eq!(
        id.split('-').map(str::len).collect::<Vec<_>>(),
        [8, 4, 4, 4, 12],
        "{id}"
    );
    assert_eq!(&id[14..15], "4", "{id}");
    let finished = run.finished();
    assert_eq!(
        finished["usage"],
        json!([{"provider": "openai", "model": MODEL, "inputTokens": 12, "outputTokens": 3, "totalTokens": 15}])
    );
    assert_eq!(
        finished["metadata"],
        json!({"finishReason": "stop", "model": MODEL})
    );
    assert!(finished.get("outcome").is_none());

    // What the model server received.
    let req = mock.only_request();
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(req.header("authorization"), Some("Bearer test-key"));
    assert_eq!(req.header("accept"), Some("text/event-stream"));
    assert_eq!(req.header("content-type"), Some("application/json"));
    assert_eq!(req.header("x-title"), Some("agui tests"));
    assert_eq!(
        req.body,
        json!({
            "model": MODEL,
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Hi"}
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
            "temperature": 0.5
        })
    );
}

#[tokio::test]
async fn text_then_parallel_tool_calls_split_across_chunks() {
    // OpenAI's shape: the first delta of each call has its id and name, the arguments
    // follow in pieces; calls are told apart by `index` and interleave.
    let mock = Mock::start(vec![Reply::Sse(vec![
        delta(json!({"role": "assistant", "content": "Let me check."})),
        delta(json!({"tool_calls": [tool_delta(0, Some("call_a"), Some("get_weather"), "")]})),
        delta(json!({"tool_calls": [tool_delta(0, None, None, "{\"ci")]})),
        delta(json!({"tool_calls": [tool_delta(1, Some("call_b"), Some("get_time"), "")]})),
        delta(json!({"tool_calls": [tool_delta(0, None, None, "ty\":\"Paris\"}")]})),
        delta(json!({"tool_calls": [tool_delta(1, None, None, "{\"tz\":")]})),
        delta(json!({"tool_calls": [tool_delta(1, None, None, "\"CET\"}")]})),
        finish("tool_calls"),
        usage(50, 20),
        done(),
    ])])
    .await;
    let weather = Tool::new(
        "get_weather",
        "Weather for a city",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    );
    let time = Tool::new("get_time", "Time in a zone", json!({"type": "object"}));
    let run = run(
        agent(&mock).build().unwrap(),
        input("Weather and time in Paris?")
            .with_tool(weather)
            .with_tool(time),
    )
    .await;

    let finished = run.finished();
    assert_eq!(
        finished["outcome"],
        json!({"type": "success", "pendingToolCallIds": ["call_a", "call_b"]})
    );
    assert_eq!(finished["metadata"]["finishReason"], "tool_calls");
    let starts = run.of_type("TOOL_CALL_START");
    assert_eq!(starts.len(), 2);
    let text_id = &run.of_type("TEXT_MESSAGE_START")[0]["messageId"];
    assert_eq!(&starts[0]["parentMessageId"], text_id);
    assert_eq!(&starts[1]["parentMessageId"], text_id);
    // The arguments stream as they came.
    let args: Vec<&str> = run
        .of_type("TOOL_CALL_ARGS")
        .iter()
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    assert_eq!(args, ["{\"ci", "ty\":\"Paris\"}", "{\"tz\":", "\"CET\"}"]);

    let messages = run.messages();
    assert_eq!(messages.len(), 2, "{messages:#?}");
    assert_eq!(messages[1]["id"], *text_id);
    assert_eq!(messages[1]["content"], "Let me check.");
    assert_eq!(
        messages[1]["toolCalls"],
        json!([
            {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
            {"id": "call_b", "type": "function", "function": {"name": "get_time", "arguments": "{\"tz\":\"CET\"}"}}
        ])
    );

    let req = mock.only_request();
    assert_eq!(
        req.body["tools"],
        json!([
            {"type": "function", "function": {"name": "get_weather", "description": "Weather for a city",
             "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
            {"type": "function", "function": {"name": "get_time", "description": "Time in a zone",
             "parameters": {"type": "object"}}}
        ])
    );
}

#[tokio::test]
async fn reasoning_content_deepseek_style() {
    // DeepSeek / vLLM / llama.cpp: `reasoning_content`, then `content`; usage in the
    // chunk that carries the finish reason.
    let run = run_mocked(vec![Reply::Sse(vec![
        delta(json!({"role": "assistant", "content": null, "reasoning_content": ""})),
        delta(json!({"content": null, "reasoning_content": "The user"})),
        delta(json!({"content": null, "reasoning_content": " greets me."})),
        delta(json!({"content": "Hello", "reasoning_content": null})),
        delta(json!({"content": " there.", "reasoning_content": null})),
        data(json!({
            "id": "1", "object": "chat.completion.chunk", "created": 1, "model": "deepseek-reasoner",
            "choices": [{"index": 0, "delta": {"content": "", "reasoning_content": null}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 40, "total_tokens": 49,
                      "prompt_tokens_details": {"cached_tokens": 0},
                      "completion_tokens_details": {"reasoning_tokens": 30}}
        })),
        done(),
    ])], "Hi").await;
    assert_eq!(
        run.types(),
        [
            "RUN_STARTED",
            "REASONING_START",
            "REASONING_MESSAGE_START",
            "REASONING_MESSAGE_CONTENT",
            "REASONING_MESSAGE_CONTENT",
            "REASONING_MESSAGE_END",
            "REASONING_END",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "RUN_FINISHED"
        ]
    );
    let messages = run.messages();
    assert_eq!(messages[1]["role"], "reasoning");
    assert_eq!(messages[1]["content"], "The user greets me.");
    assert_eq!(messages[2]["role"], "assistant");
    assert_eq!(messages[2]["content"], "Hello there.");
    let finished = run.finished();
    assert_eq!(
        finished["usage"],
        json!([{"provider": "openai", "model": MODEL, "inputTokens": 9, "outputTokens": 40,
                "totalTokens": 49, "reasoningTokens": 30, "cachedInputTokens": 0}])
    );
    assert_eq!(finished["metadata"]["model"], "deepseek-reasoner");
}

#[tokio::test]
async fn reasoning_openrouter_and_ollama_style_with_keep_alive_comments() {
    // OpenRouter: `reasoning`, `: OPENROUTER PROCESSING` comments, and a last chunk with
    // both an empty delta and the usage. Ollama sends `reasoning` the same way.
    let run = run_mocked(vec![Reply::Sse(vec![
        raw(": OPENROUTER PROCESSING\n\n"),
        delta(json!({"role": "assistant", "content": "", "reasoning": "Think"})),
        raw(": OPENROUTER PROCESSING\n\n"),
        delta(json!({"role": "assistant", "content": "", "reasoning": "ing."})),
        delta(json!({"role": "assistant", "content": "Done."})),
        data(json!({
            "id": "gen-1", "provider": "DeepInfra", "model": "qwen/qwen3", "object": "chat.completion.chunk",
            "created": 1, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
            "finish_reason": "stop", "native_finish_reason": "stop", "logprobs": null}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}
        })),
        done(),
    ])], "Think first").await;
    let messages = run.messages();
    assert_eq!(messages[1]["role"], "reasoning");
    assert_eq!(messages[1]["content"], "Thinking.");
    assert_eq!(messages[2]["content"], "Done.");
    assert_eq!(run.finished()["usage"][0]["totalTokens"], 12);
    assert_eq!(run.finished()["metadata"]["finishReason"], "stop");
}

#[tokio::test]
async fn keep_alive_comments_crlf_and_frames_split_across_reads() {
    // Comments keep a quiet stream alive past the idle timeout; CRLF line ends; a frame
    // split inside its JSON and inside a multi-byte character.
    let euro = "€".as_bytes();
    let mut first = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"5 ".to_vec();
    first.push(euro[0]);
    let mut second = euro[1..].to_vec();
    second.extend_from_slice(b"\"}}]}\r\n\r\n");
    let mut pieces = vec![raw(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Price: \"}}]}\r\n\r\n",
    )];
    // Six comments 100 ms apart: 600 ms in all, past the 400 ms idle timeout.
    for _ in 0..6 {
        pieces.extend([raw(": ping\r\n\r\n"), sleep_ms(100)]);
    }
    pieces.extend([
        raw_bytes(&first),
        sleep_ms(20),
        raw_bytes(&second),
        raw("data:{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\r\n\r\n"),
        raw("data: [DONE]\r\n\r\n"),
    ]);
    let mock = Mock::start(vec![Reply::Sse(pieces)]).await;
    let run = run_with_idle_timeout(&mock, 400, "Price?").await;
    assert_eq!(run.messages()[1]["content"], "Price: 5 €");
    assert_eq!(run.finished()["metadata"]["finishReason"], "stop");
}

#[tokio::test]
async fn done_ends_the_answer_even_when_the_connection_stays_open() {
    let mock = Mock::start(vec![Reply::Sse(vec![
        delta(json!({"role": "assistant", "content": "Bye."})),
        finish("stop"),
        done(),
        Piece::Stall,
    ])])
    .await;
    // Waiting for the body to end would hit the idle timeout and fail the run.
    let run = run_with_idle_timeout(&mock, 500, "Bye").await;
    assert_eq!(run.messages()[1]["content"], "Bye.");
    run.finished();
}

#[tokio::test]
async fn a_stream_without_done_is_whole_when_it_has_a_finish_reason() {
    let run = run_mocked(
        vec![Reply::Sse(vec![
            delta(json!({"role": "assistant", "content": "No DONE here."})),
            finish("length"),
        ])],
        "x",
    )
    .await;
    assert_eq!(run.messages()[1]["content"], "No DONE here.");
    assert_eq!(run.finished()["metadata"]["finishReason"], "length");
}

#[tokio::test]
async fn a_server_that_ignores_stream_true_still_works() {
    let completion = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": MODEL,
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "Whole answer.", "reasoning_content": "Quick."}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    });
    let run = run_mocked(
        vec![Reply::Status(
            200,
            "application/json",
            completion.to_string(),
        )],
        "x",
    )
    .await;
    let messages = run.messages();
    assert_eq!(messages[1]["content"], "Quick.");
    assert_eq!(messages[2]["content"], "Whole answer.");
    assert_eq!(run.finished()["usage"][0]["totalTokens"], 5);
}

#[tokio::test]
async fn tool_calls_without_index_or_all_at_index_zero() {
    // Some servers give every call index 0 (with distinct ids) or no index at all, and
    // send each call whole.
    let mock = Mock::start(vec![Reply::Sse(vec![
        delta(json!({"role": "assistant", "content": null, "tool_calls": [
            {"index": 0, "id": "a", "type": "function", "function": {"name": "f", "arguments": "{\"n\":1}"}}
        ]})),
        delta(json!({"tool_calls": [
            {"index": 0, "id": "b", "type": "function", "function": {"name": "f", "arguments": "{\"n\":2}"}}
        ]})),
        delta(json!({"tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "g", "arguments": {"n": 3}}}
        ]})),
        finish("tool_calls"),
        done(),
    ])])
    .await;
    let run = run(
        agent(&mock).build().unwrap(),
        input("go")
            .with_tool(Tool::new("f", "f", json!({})))
            .with_tool(Tool::new("g", "g", json!({}))),
    )
    .await;
    assert_eq!(
        run.finished()["outcome"]["pendingToolCallIds"],
        json!(["a", "b", "c"])
    );
    let calls = &run.messages()[1]["toolCalls"];
    assert_eq!(calls[0]["function"]["arguments"], "{\"n\":1}");
    assert_eq!(calls[1]["function"]["arguments"], "{\"n\":2}");
    assert_eq!(calls[2]["function"]["arguments"], "{\"n\":3}");
}

#[tokio::test]
async fn without_include_usage_no_stream_options_are_sent() {
    let mock = Mock::start(vec![says("ok")]).await;
    let agent = agent(&mock)
        .include_usage(false)
        .api_key("")
        .max_tokens(64)
        .param("stream", json!(false))
        .build()
        .unwrap();
    let run = run(agent, input("x")).await;
    assert!(run.finished().get("usage").is_none());
    let req = mock.only_request();
    assert!(req.body.get("stream_options").is_none());
    assert_eq!(req.body["stream"], true);
    assert_eq!(req.body["max_tokens"], 64);
    assert_eq!(req.header("authorization"), None);
}
