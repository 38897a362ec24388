//! Host AG-UI agents over HTTP: the [`Agent`] trait, [`RunContext`] emitters and an axum
//! router.
//!
//! ```no_run
//! use agui_server::{agent_fn, AgentServer, Finish};
//!
//! # async fn demo() -> std::io::Result<()> {
//! let agent = agent_fn(|input, ctx| async move {
//!     let text = input.messages.last().and_then(|m| m.text()).unwrap_or("").to_owned();
//!     let reply = ctx.text_message().start().await?;
//!     reply.delta("You said: ").await?;
//!     reply.delta(text).await?;
//!     reply.end().await?;
//!     Ok(Finish::success())
//! });
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
//! AgentServer::new(agent).path("/agent").serve(listener, agui_server::shutdown_signal()).await
//! # }
//! ```
//!
//! # What the runtime guarantees
//!
//! - `RUN_STARTED` first, and exactly one of `RUN_FINISHED` / `RUN_ERROR` last — from the
//!   agent's [`Finish`] or [`AgentError`], a panic (code `panic`), a protocol violation
//!   (code `protocol_violation`), a limit, or shutdown (code `shutdown`). A client that
//!   goes away gets nothing more, and its agent is cancelled at once.
//! - Every outgoing event is checked by the same engine the client runs (chunk expansion
//!   and verification); an invalid event is never sent: the run ends with `RUN_ERROR` and a
//!   `tracing` warning.
//! - Handles (text messages, tool calls, steps, reasoning, subagents) end themselves when
//!   dropped, so early returns and `?` cannot leave a message open.
//! - Memory per stream is bounded by [`ServerConfig::buffer_bytes`]: emitters wait for the
//!   client to read (backpressure).
//!
//! # Limits and errors
//!
//! All limits live in [`ServerConfig`]. Request errors are JSON
//! (`{"error": code, "message": text, "field": path}`): `400 invalid_json`,
//! `413 body_too_large`, `422 invalid_input` (with the field's path), `422 resume_mismatch`
//! (the resume does not answer the thread's open interrupts), `503 shutting_down`.
//!
//! # Encodings
//!
//! SSE (`text/event-stream`) unless the client explicitly prefers protobuf
//! (`application/vnd.ag-ui.event+proto`, with the crate feature `proto`); see
//! [`negotiate`]. `Accept: */*` gets SSE.

mod activity;
mod agent;
mod body;
mod config;
mod context;
pub mod diff;
mod encode;
mod error;
mod event_ext;
mod finish;
mod interrupts;
mod negotiate;
mod reasoning;
mod server;
mod sink;
mod step;
#[cfg(feature = "store")]
mod store;
mod subagent;
mod text;
mod time;
mod tool;

pub use activity::Activity;
pub use agent::{
    Agent, AgentResult, BoxedAgent, DynAgent, FnAgent, StreamAgent, agent_fn, boxed, stream_agent,
};
#[cfg(feature = "store")]
pub use agui_store;
pub use config::ServerConfig;
pub use context::RunContext;
pub use error::{AgentError, EmitError};
pub use finish::Finish;
pub use interrupts::{ResumeError, Resumed};
pub use negotiate::{Encoding, PROTO_MEDIA_TYPE, SSE_MEDIA_TYPE, negotiate};
pub use reasoning::{Reasoning, ReasoningMessage};
pub use server::{AgentServer, RouterExt, ShutdownHandle, serve, shutdown_signal};
pub use step::Step;
#[cfg(feature = "store")]
pub use store::StoreOptions;
pub use subagent::{Subagent, SubagentBuilder};
pub use text::{TextMessage, TextMessageBuilder};
pub use tool::{ToolCall, ToolCallBuilder};
pub use tower_http::cors::CorsLayer;

/// Re-exported so agents need no direct dependency on these crates.
pub use agui_core;
pub use axum;
