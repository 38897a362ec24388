#![doc = include_str!("../README.md")]
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
//! `400 too_deep` (nesting past [`ServerConfig::max_depth`], with the path),
//! `400 id_too_long` (with the field), `401 unauthorized`, `404 unknown_thread` (also for a
//! thread of another principal), `409 run_exists` (store: the run id was used),
//! `413 body_too_large`, `415 unsupported_media_type` (a run must be `application/json`),
//! `421 misdirected_host`, `422 invalid_input` (with the field's path),
//! `429 rate_limited` (with `Retry-After`), `503 shutting_down`, `503 busy` (too many
//! request bodies in memory), `503 too_many_connections` (past the connection limit; `GET
//! /health` is still answered).
//!
//! A `resume` that does not answer the thread's open interrupts ends the run with
//! `RUN_ERROR` (codes `resume_missing`, `resume_unknown_interrupt`, `resume_incomplete`,
//! `resume_expired`; see [`ResumeError::kind`]).
//!
//! # Security
//!
//! See [`access`]: an authentication hook ([`Access::auth`], [`Tokens`]), thread ownership
//! per [`Principal`], no CORS grant by default, the `Host` check on loopback listeners,
//! per-principal quotas. [`serve`] sets `TCP_NODELAY`, a request-head timeout and a
//! connection limit under the file-descriptor limit ([`ServerConfig::header_read_timeout`],
//! [`ServerConfig::max_connections`]), and stops on `SIGTERM` as on Ctrl-C.
//!
//! # Encodings
//!
//! SSE (`text/event-stream`) unless the client explicitly prefers protobuf
//! (`application/vnd.ag-ui.event+proto`, with the crate feature `proto`); see
//! [`negotiate`]. `Accept: */*` gets SSE.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_debug_implementations, missing_docs)]

pub mod access;
mod activity;
mod agent;
mod body;
mod config;
mod context;
/// The JSON differ behind `STATE_DELTA` and `ACTIVITY_DELTA`; it lives beside the patch
/// applier in [`aguikit_core::patch::diff`] and is re-exported here under its earlier path.
pub use aguikit_core::patch::diff;
mod encode;
mod error;
mod event_ext;
mod finish;
mod ingress;
mod interrupts;
mod listen;
pub mod metrics;
mod negotiate;
mod open;
#[cfg(feature = "store")]
mod panics;
mod reasoning;
mod server;
mod setters;
mod sink;
mod step;
#[cfg(feature = "store")]
mod store;
mod subagent;
mod text;
mod tool;

pub use access::{Access, Authenticate, LocalAddr, Principal, Tokens};
pub use activity::Activity;
pub use agent::{
    Agent, AgentResult, BoxedAgent, DynAgent, FnAgent, StreamAgent, agent_fn, boxed, stream_agent,
};
#[cfg(feature = "store")]
pub use aguikit_store;
pub use config::ServerConfig;
pub use context::RunContext;
pub use error::{AgentError, EmitError};
pub use finish::Finish;
pub use interrupts::{ResumeError, Resumed};
pub use listen::HEALTH_PATH;
pub use negotiate::{PROTO_MEDIA_TYPE, SSE_MEDIA_TYPE, WireFormat, negotiate};
pub use reasoning::{Reasoning, ReasoningMessage};
pub use server::{AgentServer, BODY_RATE_GRACE, RouterExt, ShutdownHandle, serve, shutdown_signal};
pub use step::Step;
#[cfg(feature = "store")]
pub use store::StoreOptions;
pub use subagent::{Subagent, SubagentBuilder};
pub use text::{TextMessage, TextMessageBuilder};
pub use tool::{ToolCall, ToolCallBuilder};
pub use tower_http::cors::{AllowOrigin, CorsLayer};

/// Re-exported so agents need no direct dependency on these crates.
pub use aguikit_core;
pub use axum;
