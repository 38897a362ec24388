//! Bridge an OpenAI-compatible model (aguikit-openai): the model's streamed Chat Completions
//! become an AG-UI run, and a back-end tool written in Rust is called by the model, run by
//! the agent, and its result sent back to the model.
//!
//! ```sh
//! cargo run -p aguikit-examples --bin openai_bridge
//! cargo run -p aguikit-examples --bin openai_bridge -- http://127.0.0.1:11434/v1 llama3.2
//! ```
//!
//! With no arguments the model is a stand-in started in this process on a loopback port (a
//! scripted `POST /v1/chat/completions` that first calls the tool, then answers with its
//! result), so the example runs anywhere. Give a base URL and a model to use a real one
//! (Ollama, vLLM, llama.cpp server, LM Studio...; `OPENAI_API_KEY` is sent when set).

use aguikit_client::{HttpAgent, Session, Update};
use aguikit_openai::OpenAiAgent;
use aguikit_server::AgentServer;
use futures_util::StreamExt;
use serde_json::json;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (base_url, model) = match (args.next(), args.next()) {
        (Some(url), Some(model)) => (url, model),
        _ => (start_fake_model().await?, "fake-model".to_owned()),
    };

    // The agent: the model, its instructions and a back-end tool.
    let mut builder = OpenAiAgent::builder(&base_url, &model)
        .system_prompt("You are a weather assistant. Use get_weather.")
        .tool(
            "get_weather",
            "The current weather in a city",
            json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
            |args| async move {
                let city = args["city"].as_str().ok_or("no city")?.to_owned();
                Ok(json!({"city": city, "celsius": 18, "sky": "sunny"}))
            },
        );
    if let Ok(key) = std::env::var("OPENAI_API_KEY") {
        builder = builder.api_key(key);
    }
    let agent = builder.build()?;

    // Served by aguikit-server on a loopback port, and one run from a client.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/agent", listener.local_addr()?);
    let server = AgentServer::new(agent).path("/agent");
    tokio::spawn(async move { server.serve(listener, std::future::pending()).await });

    let mut session = Session::new(HttpAgent::new(&url)?);
    session.add_user_message("What is the weather in Paris?");
    let mut run = session.run()?;
    while let Some(update) = run.next().await {
        match update {
            Update::ToolCallEnded { name, args, .. } => println!("tool call: {name}({args})"),
            Update::ToolCallResult { content, .. } => println!("tool result: {content}"),
            Update::TextDelta { delta, .. } => print!("{delta}"),
            Update::Ended { status } => println!("\nrun ended: {status}"),
            _ => {}
        }
    }
    Ok(())
}

/// A stand-in for an OpenAI-compatible API on a free loopback port; returns its base URL.
/// A conversation without a tool result gets a `get_weather` call for Paris; one with a
/// tool result gets an answer made of it.
async fn start_fake_model() -> std::io::Result<String> {
    use aguikit_server::axum::{Router, http::header, routing::post};
    let completions = |body: String| async move {
        let request: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        let messages = request["messages"].as_array().cloned().unwrap_or_default();
        let tool_result = messages.iter().find(|m| m["role"] == "tool");
        let chunks = match tool_result {
            None => vec![
                json!({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
                    {"index": 0, "id": "call_1", "type": "function",
                     "function": {"name": "get_weather", "arguments": ""}}]}}]}),
                json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                    {"index": 0, "function": {"arguments": "{\"city\":\"Paris\"}"}}]}}]}),
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            ],
            Some(result) => {
                let weather: serde_json::Value =
                    serde_json::from_str(result["content"].as_str().unwrap_or("{}"))
                        .unwrap_or_default();
                let answer = format!(
                    "It is {}°C and {} in {}.",
                    weather["celsius"],
                    weather["sky"].as_str().unwrap_or("?"),
                    weather["city"].as_str().unwrap_or("?")
                );
                vec![
                    json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": answer}}]}),
                    json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
                    json!({"choices": [], "usage": {"prompt_tokens": 42, "completion_tokens": 9, "total_tokens": 51}}),
                ]
            }
        };
        let mut sse: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
        sse.push_str("data: [DONE]\n\n");
        ([(header::CONTENT_TYPE, "text/event-stream")], sse)
    };
    let app = Router::new().route("/v1/chat/completions", post(completions));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base_url = format!("http://{}/v1", listener.local_addr()?);
    tokio::spawn(async move { aguikit_server::axum::serve(listener, app).await });
    Ok(base_url)
}
