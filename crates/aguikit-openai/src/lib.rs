#![doc = include_str!("../README.md")]
//!
//! # A model with a back-end tool
//!
//! ```no_run
//! use aguikit_openai::OpenAiAgent;
//! use aguikit_server::AgentServer;
//! use serde_json::json;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let agent = OpenAiAgent::builder("http://127.0.0.1:11434/v1", "llama3.2")
//!     .system_prompt("You are a helpful assistant.")
//!     .temperature(0.2)
//!     .tool(
//!         "get_time",
//!         "The current time as seconds since the Unix epoch",
//!         json!({"type": "object", "properties": {}}),
//!         |_args| async move {
//!             let now = std::time::SystemTime::now()
//!                 .duration_since(std::time::UNIX_EPOCH)
//!                 .map_err(|e| e.to_string())?;
//!             Ok(json!({"unix": now.as_secs()}))
//!         },
//!     )
//!     .build()?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
//! AgentServer::new(agent)
//!     .path("/agent")
//!     .serve(listener, aguikit_server::shutdown_signal())
//!     .await?;
//! # Ok(())
//! # }
//! ```
//!
//! # What goes to the model
//!
//! - The builder's system prompt, then `RunAgentInput.context` (as one system message),
//!   then `RunAgentInput.messages`: system and developer messages as `system`, user
//!   messages with their text and media parts (images as `image_url`, WAV/MP3 audio as
//!   `input_audio`, documents as `file`; what the API cannot carry is replaced by a short
//!   text note), assistant messages with their `tool_calls`, tool messages as `tool` with
//!   their `tool_call_id`. Activity and reasoning messages are not sent.
//! - The tool turns are made well-formed for the API: each assistant message with tool
//!   calls is followed by the tool messages that answer it (a call left unanswered gets a
//!   short "no result" answer, a tool message answering no call is left out).
//! - `tools`: the back-end tools registered with [`OpenAiAgentBuilder::tool`] and the
//!   client's `RunAgentInput.tools`, each as `{"type": "function", ...}` (a back-end tool
//!   wins over a client tool of the same name).
//! - `stream: true`, `stream_options: {"include_usage": true}` (see
//!   [`OpenAiAgentBuilder::include_usage`]) and the passthrough parameters.
//!
//! # What comes back
//!
//! | Chat Completions chunk | AG-UI |
//! |---|---|
//! | `delta.content` (and `delta.refusal`) | `TEXT_MESSAGE_START` / `_CONTENT` / `_END` |
//! | `delta.reasoning_content` or `delta.reasoning` | `REASONING_START`, `REASONING_MESSAGE_*`, `REASONING_END` |
//! | `delta.tool_calls[i]`, several in parallel by `index` | `TOOL_CALL_START` (parented to the turn's assistant message) / `_ARGS` / `_END` |
//! | `usage` (usually in the last chunk) | `usage` of `RUN_FINISHED` (or `RUN_ERROR`), summed over the run's model calls |
//! | `finish_reason`, `model` | `RUN_FINISHED.metadata`: `{"finishReason": ..., "model": ...}` |
//! | an `error` object | `RUN_ERROR` (code [`codes::API`]) |
//!
//! A turn whose tool calls name client tools ends the run with `RUN_FINISHED` (success,
//! `pendingToolCallIds` naming them); the client runs them and answers in the next run
//! with tool messages, which go back to the model. Calls to back-end tools are run by the
//! agent itself (concurrently), answered with `TOOL_CALL_RESULT`, and the model is called
//! again, until it stops calling them or [`OpenAiAgentBuilder::max_steps`] model calls
//! were made.
//!
//! Failures end the run with `RUN_ERROR` and one of the codes in [`codes`]: the HTTP
//! status and an excerpt of the body for an HTTP error, the API's message for an error
//! object in the stream, which timeout fired, what was malformed.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_debug_implementations, missing_docs)]

mod agent;
mod builder;
pub mod codes;
mod convert;
mod stream;
mod tools;
mod turn;

pub use agent::OpenAiAgent;
pub use builder::{BuildError, OpenAiAgentBuilder};
pub use tools::ToolResult;
