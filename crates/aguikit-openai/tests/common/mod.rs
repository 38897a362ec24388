//! Test support: a scripted OpenAI-compatible server on 127.0.0.1 that replays chunk
//! streams and records what it receives, and a runner that serves an agent with
//! `aguikit_server` over loopback, decodes the AG-UI stream and folds it with the engine's
//! pipeline.
#![allow(dead_code)]

use aguikit_core::codec::sse::SseDecoder;
use aguikit_core::engine::apply::Applier;
use aguikit_core::engine::pipeline::Pipeline;
use aguikit_core::{Message, RunAgentInput};
use aguikit_openai::OpenAiAgent;
use aguikit_server::AgentServer;
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::Response;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The model name every test asks for and every mock chunk names.
pub const MODEL: &str = "mock-model";

/// One step of a scripted body.
#[derive(Clone)]
pub enum Piece {
    /// Bytes written as one body chunk.
    Bytes(Vec<u8>),
    /// A pause.
    Sleep(Duration),
    /// Never sends anything again (the connection stays open).
    Stall,
}

/// What the mock answers one request with.
#[derive(Clone)]
pub enum Reply {
    /// `200 text/event-stream` with this body.
    Sse(Vec<Piece>),
    /// This status, content type and body.
    Status(u16, &'static str, String),
    /// Waits this long before the response head, then replies.
    Delayed(Duration, Box<Reply>),
    /// This redirect status with this `Location`.
    Redirect(u16, String),
}

/// A request the mock received.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

#[derive(Default)]
struct Script {
    replies: Mutex<VecDeque<Reply>>,
    received: Mutex<Vec<Received>>,
}

/// The mock server.
pub struct Mock {
    pub addr: SocketAddr,
    script: Arc<Script>,
}

impl Mock {
    /// Starts a mock that answers its requests with `replies`, in order (a request past
    /// the end gets `500`).
    pub async fn start(replies: Vec<Reply>) -> Mock {
        let script = Arc::new(Script {
            replies: Mutex::new(replies.into()),
            received: Mutex::default(),
        });
        let state = script.clone();
        let app = axum::Router::new().fallback(move |uri: Uri, headers: HeaderMap, body: Bytes| {
            let state = state.clone();
            async move { answer(&state, uri, headers, body).await }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Mock { addr, script }
    }

    /// The base URL to give the agent.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// What was received so far.
    pub fn received(&self) -> Vec<Received> {
        self.script.received.lock().unwrap().clone()
    }

    /// The body of the only request received.
    pub fn only_request(&self) -> Received {
        let r = self.received();
        assert_eq!(r.len(), 1, "expected exactly one request to the model");
        r.into_iter().next().unwrap()
    }
}

async fn answer(script: &Script, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    script.received.lock().unwrap().push(Received {
        path: uri.path().to_owned(),
        headers,
        body,
    });
    let reply = script.replies.lock().unwrap().pop_front();
    let mut reply = reply.unwrap_or(Reply::Status(
        500,
        "text/plain",
        "the mock has no reply scripted for this request".into(),
    ));
    while let Reply::Delayed(d, inner) = reply {
        tokio::time::sleep(d).await;
        reply = *inner;
    }
    match reply {
        Reply::Sse(pieces) => {
            let stream = futures_util::stream::unfold(pieces.into_iter(), |mut it| async move {
                loop {
                    match it.next()? {
                        Piece::Bytes(b) => return Some((Ok::<_, Infallible>(Bytes::from(b)), it)),
                        Piece::Sleep(d) => tokio::time::sleep(d).await,
                        Piece::Stall => std::future::pending::<()>().await,
                    }
                }
            });
            Response::builder()
                .header(header::CONTENT_TYPE, "text/event-stream")
                .header(header::CACHE_CONTROL, "no-cache")
                .body(Body::from_stream(stream))
                .unwrap()
        }
        Reply::Status(status, content_type, body) => Response::builder()
            .status(StatusCode::from_u16(status).unwrap())
            .header(header::CONTENT_TYPE, content_type)
            .body(Body::from(body))
            .unwrap(),
        Reply::Redirect(status, location) => Response::builder()
            .status(StatusCode::from_u16(status).unwrap())
            .header(header::LOCATION, location)
            .body(Body::from("moved"))
            .unwrap(),
        Reply::Delayed(..) => unreachable!(),
    }
}

// ---- chunk shapes ---------------------------------------------------------------------

/// `data: JSON\n\n`.
pub fn data(v: Value) -> Piece {
    Piece::Bytes(format!("data: {v}\n\n").into_bytes())
}

/// A `chat.completion.chunk` with one choice carrying `delta`.
pub fn delta(delta: Value) -> Piece {
    data(json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1_700_000_000,
        "model": MODEL, "system_fingerprint": "fp_mock",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": null}]
    }))
}

/// The chunk that ends a choice.
pub fn finish(reason: &str) -> Piece {
    data(json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1_700_000_000,
        "model": MODEL,
        "choices": [{"index": 0, "delta": {}, "logprobs": null, "finish_reason": reason}]
    }))
}

/// The usage chunk OpenAI sends last with `include_usage`: no choices.
pub fn usage(prompt: u64, completion: u64) -> Piece {
    data(json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1_700_000_000,
        "model": MODEL, "choices": [],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                  "total_tokens": prompt + completion}
    }))
}

/// `data: [DONE]`.
pub fn done() -> Piece {
    raw("data: [DONE]\n\n")
}

/// A raw piece of the body.
pub fn raw(s: &str) -> Piece {
    Piece::Bytes(s.as_bytes().to_vec())
}

/// Raw bytes (not necessarily whole UTF-8).
pub fn raw_bytes(b: &[u8]) -> Piece {
    Piece::Bytes(b.to_vec())
}

pub fn sleep_ms(ms: u64) -> Piece {
    Piece::Sleep(Duration::from_millis(ms))
}

/// A tool-call delta entry.
pub fn tool_delta(index: u64, id: Option<&str>, name: Option<&str>, args: &str) -> Value {
    let mut call = json!({"index": index, "function": {"arguments": args}});
    if let Some(id) = id {
        call["id"] = id.into();
        call["type"] = "function".into();
    }
    if let Some(name) = name {
        call["function"]["name"] = name.into();
    }
    call
}

/// A whole streamed answer that calls tools: `(id, name, arguments)`, each in one delta.
pub fn calls_tools(calls: &[(&str, &str, &str)]) -> Reply {
    let mut pieces = vec![delta(json!({"role": "assistant", "content": null}))];
    for (i, (id, name, args)) in calls.iter().enumerate() {
        pieces.push(delta(
            json!({"tool_calls": [tool_delta(i as u64, Some(id), Some(name), args)]}),
        ));
    }
    pieces.extend([finish("tool_calls"), done()]);
    Reply::Sse(pieces)
}

/// A whole streamed text answer.
pub fn says(text: &str) -> Reply {
    Reply::Sse(vec![
        delta(json!({"role": "assistant", "content": ""})),
        delta(json!({"content": text})),
        finish("stop"),
        done(),
    ])
}

// ---- the AG-UI side --------------------------------------------------------------------

/// An agent pointed at the mock, with short timeouts.
pub fn agent(mock: &Mock) -> aguikit_openai::OpenAiAgentBuilder {
    OpenAiAgent::builder(mock.base_url(), MODEL)
        .api_key("test-key")
        .request_timeout(Duration::from_secs(5))
        .idle_timeout(Duration::from_secs(5))
}

/// A run input with one user message.
pub fn input(text: &str) -> RunAgentInput {
    RunAgentInput::new("thread-1", "run-1").with_message(Message::user("u1", text))
}

/// The events of one run as the client got them, folded by the engine's pipeline.
pub struct Run {
    pub events: Vec<Value>,
    pub pipeline: Pipeline,
}

impl Run {
    /// The event types in order.
    pub fn types(&self) -> Vec<String> {
        self.events
            .iter()
            .map(|e| e["type"].as_str().unwrap_or("").to_owned())
            .collect()
    }

    /// The folded conversation, as JSON.
    pub fn messages(&self) -> Vec<Value> {
        self.pipeline
            .applier()
            .messages()
            .iter()
            .map(|m| serde_json::to_value(m).unwrap())
            .collect()
    }

    /// The folded conversation.
    pub fn history(&self) -> Vec<Message> {
        self.pipeline.applier().messages().to_vec()
    }

    /// The events of one type.
    pub fn of_type(&self, ty: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["type"] == ty).collect()
    }

    /// The final `RUN_FINISHED` (panics on anything else).
    pub fn finished(&self) -> &Value {
        let last = self.events.last().unwrap();
        assert_eq!(last["type"], "RUN_FINISHED", "run did not finish: {last}");
        last
    }

    /// The final `RUN_ERROR` (panics on anything else).
    pub fn error(&self) -> &Value {
        let last = self.events.last().unwrap();
        assert_eq!(last["type"], "RUN_ERROR", "run did not fail: {last}");
        last
    }
}

/// Serves `agent` with `aguikit_server` on loopback and runs it once.
pub async fn run(agent: OpenAiAgent, input: RunAgentInput) -> Run {
    Server::start(agent).await.run(input).await
}

/// Runs `input(text)` once with a default agent against a mock giving `replies`.
pub async fn run_mocked(replies: Vec<Reply>, text: &str) -> Run {
    let mock = Mock::start(replies).await;
    run(agent(&mock).build().unwrap(), input(text)).await
}

/// Runs `input(text)` once against `mock` with a default agent whose idle timeout is
/// `idle_ms` milliseconds.
pub async fn run_with_idle_timeout(mock: &Mock, idle_ms: u64, text: &str) -> Run {
    let agent = agent(mock)
        .idle_timeout(Duration::from_millis(idle_ms))
        .build()
        .unwrap();
    run(agent, input(text)).await
}

/// An `aguikit_server` serving the agent on loopback, for several runs.
pub struct Server {
    url: String,
    client: reqwest::Client,
}

impl Server {
    pub async fn start(agent: OpenAiAgent) -> Server {
        let server = AgentServer::new(agent).path("/agent");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let router = server.router();
        tokio::spawn(async move {
            axum::serve(listener, router).await.unwrap();
        });
        // reqwest is built without a default TLS provider; the agent's builder installed
        // one already, but do not depend on the order.
        aguikit_client::install_tls();
        Server {
            url: format!("http://{addr}/agent"),
            client: reqwest::Client::new(),
        }
    }

    /// Posts the input; decodes, verifies and folds the whole response into the input's
    /// conversation.
    pub async fn run(&self, input: RunAgentInput) -> Run {
        let mut response = self
            .client
            .post(&self.url)
            .header("accept", "text/event-stream")
            .header("content-type", "application/json")
            .body(serde_json::to_vec(&input).unwrap())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let mut decoder = SseDecoder::new();
        // The client holds the conversation it sent; the run adds to it.
        let mut pipeline =
            Pipeline::with_applier(Applier::with_history(input.messages.clone(), json!({})));
        let mut events = Vec::new();
        let mut push = |data: String, pipeline: &mut Pipeline| {
            let v: Value = serde_json::from_str(&data).unwrap();
            if let Err(e) = pipeline.push_value(v.clone()) {
                panic!(
                    "the AG-UI stream does not verify: {e}\nevents so far: {events:#?}\nfailing: {v}"
                );
            }
            events.push(v);
        };
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        while let Some(piece) = tokio::time::timeout_at(deadline, response.chunk())
            .await
            .expect("the AG-UI run took too long")
            .unwrap()
        {
            decoder.push(&piece);
            while let Some(frame) = decoder.next_frame().unwrap() {
                push(frame.data, &mut pipeline);
            }
        }
        while let Some(frame) = decoder.finish().unwrap() {
            push(frame.data, &mut pipeline);
        }
        pipeline.finish().expect("the AG-UI stream ends well");
        Run { events, pipeline }
    }
}
