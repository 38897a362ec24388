//! [`OpenAiAgent`]: the run loop (model call, tools, model call...).

use crate::builder::OpenAiAgentBuilder;
use crate::codes;
use crate::convert;
use crate::stream::{self, Answer, Next, error};
use crate::tools::{BackendTool, ToolResult, parse_args, result_text};
use crate::turn::{Call, Turn, TurnOutput, completion_as_chunk, token_usage};
use aguikit_core::metadata::Metadata;
use aguikit_core::{Message, RunAgentInput};
use aguikit_server::{Agent, AgentError, AgentResult, Finish, RunContext};
use futures_util::future::{BoxFuture, join_all};
use reqwest::header::HeaderMap;
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

/// An AG-UI agent backed by an OpenAI-compatible streaming Chat Completions API.
///
/// Cheap to clone (the settings and the HTTP client are shared). Made with
/// [`OpenAiAgent::builder`]; serve it with [`aguikit_server::AgentServer`].
///
/// ```
/// use aguikit_openai::OpenAiAgent;
/// let agent = OpenAiAgent::builder("http://127.0.0.1:8080/v1", "qwen2.5")
///     .build()
///     .unwrap();
/// assert_eq!(agent.model(), "qwen2.5");
/// let server = aguikit_server::AgentServer::new(agent).path("/agent");
/// # let _ = server;
/// ```
#[derive(Clone)]
pub struct OpenAiAgent {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) url: String,
    pub(crate) model: String,
    pub(crate) headers: HeaderMap,
    pub(crate) system_prompt: Option<String>,
    pub(crate) request_timeout: Duration,
    pub(crate) idle_timeout: Duration,
    pub(crate) max_steps: usize,
    pub(crate) params: Map<String, Value>,
    pub(crate) include_usage: bool,
    pub(crate) provider: String,
    pub(crate) tools: Vec<BackendTool>,
    pub(crate) client: reqwest::Client,
}

impl std::fmt::Debug for OpenAiAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiAgent")
            .field("endpoint", &self.inner.url)
            .field("model", &self.inner.model)
            .field("max_steps", &self.inner.max_steps)
            .field("tools", &self.inner.tools)
            .finish_non_exhaustive()
    }
}

impl OpenAiAgent {
    /// Starts building an agent for `model` at `base_url`, the API's base (e.g.
    /// `https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`); requests go to
    /// `{base_url}/chat/completions`.
    ///
    /// ```
    /// let agent = aguikit_openai::OpenAiAgent::builder("http://127.0.0.1:1234/v1", "local-model")
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(agent.endpoint(), "http://127.0.0.1:1234/v1/chat/completions");
    /// ```
    pub fn builder(base_url: impl Into<String>, model: impl Into<String>) -> OpenAiAgentBuilder {
        OpenAiAgentBuilder::new(base_url.into(), model.into())
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        &self.inner.url
    }

    /// The model asked for.
    pub fn model(&self) -> &str {
        &self.inner.model
    }
}

impl Agent for OpenAiAgent {
    async fn run(&self, input: RunAgentInput, ctx: RunContext) -> AgentResult {
        let result = self.inner.run(input, &ctx).await;
        if let Err(e) = &result {
            tracing::warn!(
                code = e.code().unwrap_or(""),
                run_id = ctx.run_id(),
                "model run failed: {}",
                e.message()
            );
        }
        result
    }
}

/// How the model's tool calls of one turn split.
enum Route<'a> {
    Backend(&'a BackendTool),
    Client,
    Unknown,
}

impl Inner {
    async fn run(&self, input: RunAgentInput, ctx: &RunContext) -> AgentResult {
        let mut messages = convert::conversation(self.system_prompt.as_deref(), &input);
        let tools = convert::tools(&self.tools, input.tools());
        let client_tools: HashSet<&str> = input.tools().iter().map(|t| t.name.as_str()).collect();
        let mut taken: HashSet<String> = input
            .messages
            .iter()
            .filter_map(|m| match m {
                Message::Assistant(a) => a.tool_calls.as_ref(),
                _ => None,
            })
            .flatten()
            .map(|c| c.id.clone())
            .collect();
        let mut metadata = Metadata::new();
        let mut step = 0;
        loop {
            step += 1;
            let output = self
                .call(ctx, &messages, &tools, &mut taken, &mut metadata)
                .await?;
            if output.calls.is_empty() {
                return Ok(finish(Finish::success(), metadata));
            }
            let route = |c: &Call| match self.tools.iter().find(|t| t.name == c.name) {
                Some(t) => Route::Backend(t),
                None if client_tools.contains(c.name.as_str()) => Route::Client,
                None => Route::Unknown,
            };
            let needs_model = output
                .calls
                .iter()
                .any(|c| !matches!(route(c), Route::Client));
            if needs_model && step >= self.max_steps {
                let names: Vec<&str> = output.calls.iter().map(|c| c.name.as_str()).collect();
                return Err(error(
                    codes::MAX_STEPS,
                    format!(
                        "the model was still calling tools after {step} model calls \
                         (the limit); not run: {}",
                        names.join(", ")
                    ),
                ));
            }
            let TurnOutput { content, calls } = output;
            messages.push(convert::assistant_value(
                content.as_deref(),
                calls
                    .iter()
                    .map(|c| convert::tool_call(&c.id, &c.name, &c.arguments))
                    .collect(),
            ));
            let mut pending = Vec::new();
            let mut jobs: Vec<BoxFuture<'_, (Call, ToolResult)>> = Vec::new();
            for call in calls {
                match route(&call) {
                    Route::Client => pending.push(call.id.clone()),
                    Route::Backend(tool) => jobs.push(Box::pin(async move {
                        let result = match parse_args(&call.arguments) {
                            Ok(args) => (tool.run)(args).await,
                            Err(e) => Err(e),
                        };
                        (call, result)
                    })),
                    Route::Unknown => {
                        let known: Vec<&str> = self
                            .tools
                            .iter()
                            .map(|t| t.name.as_str())
                            .chain(client_tools.iter().copied())
                            .collect();
                        let message = format!(
                            "there is no tool named {:?}; the tools are: {}",
                            call.name,
                            known.join(", ")
                        );
                        jobs.push(Box::pin(async move { (call, Err(message)) }));
                    }
                }
            }
            for (call, result) in join_all(jobs).await {
                let text = result_text(&result);
                let id = call.id;
                call.handle.result(text.clone()).await?;
                messages.push(convert::tool_result(&id, text));
            }
            if !pending.is_empty() {
                return Ok(finish(Finish::pending_tool_calls(pending), metadata));
            }
        }
    }

    /// One model call: sends the conversation, streams the answer into AG-UI events,
    /// records usage and the finish reason.
    async fn call(
        &self,
        ctx: &RunContext,
        messages: &[Value],
        tools: &[Value],
        taken: &mut HashSet<String>,
        metadata: &mut Metadata,
    ) -> Result<TurnOutput, AgentError> {
        let body = self.body(messages, tools);
        let request = self
            .client
            .post(&self.url)
            .headers(self.headers.clone())
            .body(body);
        let response = stream::send(request, &self.url, self.request_timeout).await?;
        let answer = stream::answer(response, &self.url, self.idle_timeout).await?;
        let mut turn = Turn::new(ctx, taken);
        let folded = fold(&mut turn, answer).await;
        if let Some(usage) = &turn.usage {
            ctx.add_usage(token_usage(usage, &self.provider, &self.model));
        }
        if let Some(reason) = turn.finish_reason.take() {
            metadata.insert("finishReason".into(), reason.into());
        }
        if let Some(model) = turn.model.take() {
            metadata.insert("model".into(), model.into());
        }
        folded?;
        turn.finish().await
    }

    /// The request body.
    fn body(&self, messages: &[Value], tools: &[Value]) -> Vec<u8> {
        let mut body = self.params.clone();
        body.insert("model".into(), self.model.clone().into());
        body.insert("messages".into(), messages.to_vec().into());
        body.insert("stream".into(), true.into());
        if self.include_usage {
            body.insert(
                "stream_options".into(),
                serde_json::json!({"include_usage": true}),
            );
        } else {
            body.remove("stream_options");
        }
        if tools.is_empty() {
            body.remove("tools");
        } else {
            body.insert("tools".into(), tools.to_vec().into());
        }
        Value::Object(body).to_string().into_bytes()
    }
}

/// The run's end, with the metadata when there is any.
fn finish(finish: Finish, metadata: Metadata) -> Finish {
    if metadata.is_empty() {
        finish
    } else {
        finish.with_metadata(metadata)
    }
}

/// Feeds the whole answer to the turn.
async fn fold(turn: &mut Turn<'_>, answer: Answer) -> Result<(), AgentError> {
    let mut reader = match answer {
        Answer::Completion(completion) => {
            return turn.apply(&completion_as_chunk(&completion)).await;
        }
        Answer::Stream(reader) => reader,
    };
    loop {
        match reader.next().await? {
            Next::Chunk(chunk) => turn.apply(&chunk).await?,
            Next::Done => return Ok(()),
            // Some servers end the body without `[DONE]`; a finish reason says the answer
            // is whole all the same.
            Next::Eof if turn.finish_reason.is_some() => return Ok(()),
            Next::Eof => {
                return Err(error(
                    codes::MALFORMED,
                    "the model server's stream ended before the answer was complete \
                     (no finish_reason, no [DONE])",
                ));
            }
        }
    }
}
