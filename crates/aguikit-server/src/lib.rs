#![doc = include_str!("../README.md")]
//!
//! # What the runtime guarantees
//!
//! - `RUN_STARTED` first, and exactly one of `RUN_FINISHED` / `RUN_ERROR` last — from the
//!   agent's [`Finish`] or [`AgentError`], a panic (code `panic`), a protocol violation
//!   (code `protocol_violation`), a limit, or shutdown (code `shutdown`). A client that
//!   goes away gets nothing more. Without a store its agent is cancelled at once; with a
//!   store (feature `store`) the run goes on to its end and is stored, so the client can read
//!   it back or resume it, unless `StoreOptions::cancel_on_disconnect` is set.
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
//! All limits live in [`ServerConfig`]. Every error answer is an [`ApiError`]: JSON
//! `{"error": code, "message": text, ...details}` (`field` with the path of a bad field,
//! `limit`, `retryAfter` with a `Retry-After` header, ...), its code one of the table of
//! [`ErrorCode`], each always with the same status: for example `400 too_deep` (nesting past
//! [`ServerConfig::max_depth`]), `409 thread_busy` (store: another run of the thread is in
//! progress), `408 body_too_slow` (a body under [`ServerConfig::min_body_rate`]), `500
//! internal` (a handler panicked; under [`serve`]), `503 too_many_connections` (past the
//! connection limit; `GET /health` is still answered).
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
//! # Threat model
//!
//! Who can send what, and what bounds it. Each row names the limit; each is configurable
//! and has the default given in its documentation. The adversarial tests of the `agui`
//! command (`crates/aguikit/tests/adversarial`) and this crate's `tests/` check them
//! against a real server over loopback.
//!
//! **Anyone who can reach the port** (no token) sends bytes to [`serve`]'s accept loop:
//! connections are counted under [`ServerConfig::max_connections`] (kept under the
//! file-descriptor limit; past it only `GET /health` is answered), each must send its head
//! within [`ServerConfig::header_read_timeout`] (also the idle keep-alive limit), and is
//! then refused (`401`) by [`Access::auth`] before its body is read, or (`421`) by the
//! `Host` check of a loopback listener, which keeps DNS-rebinding pages out. Pages of other
//! origins get no CORS grant unless [`AgentServer::cors`] names them, and a run must be
//! `application/json`, which a cross-site form cannot send unasked.
//!
//! **A caller with a token** (a [`Principal`]) chooses every byte of its requests:
//! - its run quota ([`Access::concurrent_runs`], [`Access::runs_per_minute`]) is taken
//!   before its body is read, so a caller past it holds no memory and no time;
//! - a body is bounded in size ([`ServerConfig::max_body_bytes`], checked against
//!   `Content-Length` first), in time ([`ServerConfig::body_timeout`]) and in pace
//!   ([`ServerConfig::min_body_rate`], from [`BODY_RATE_GRACE`] on), and the bytes of all
//!   bodies in memory at once are bounded per principal
//!   ([`ServerConfig::max_body_bytes_in_flight_per_principal`]) and in all
//!   ([`ServerConfig::max_body_bytes_in_flight`]), so one caller cannot take the others'
//!   room;
//! - its JSON nests at most [`ServerConfig::max_depth`] levels (so whatever is accepted is
//!   also read back from a store), its ids are at most [`ServerConfig::max_id_bytes`], and
//!   no input makes the request path panic (a property test and the fuzz target
//!   `request_path`, whose seeds `cargo test` replays, check it); should a handler panic
//!   all the same, it answers `500 internal` and every counter, permit and lease it held is
//!   given back by its guard;
//! - the ids it chooses key the engine's maps through the keyed hasher of
//!   [`aguikit_core::hash`], so ids built to collide cost what random ids cost, and folding
//!   a long stored thread runs on a blocking thread, never stalling other connections or
//!   `/health`;
//! - what it sends is written to text logs with control characters escaped, so it cannot
//!   forge a log line or drive the operator's terminal;
//! - with a store, it reads and changes only its own threads, and runs one run at a time
//!   per thread (`409 thread_busy`).
//!
//! **The agent** (or, through `aguikit-gateway`, an upstream server) chooses the events: each
//! is verified before it is sent (`RUN_ERROR` `protocol_violation`), bounded in size
//! ([`ServerConfig::max_event_bytes`]) and in number
//! ([`ServerConfig::max_events_per_run`]); it waits for a slow client
//! ([`ServerConfig::buffer_bytes`]); an event nested too deeply to be read back ends the
//! run (`event_too_deep`) instead of being stored; a panic of the agent ends its run with
//! `RUN_ERROR` `panic`, and a panic of the runtime while it runs a stored run ends it with a
//! stored `RUN_ERROR` `internal`, never leaving it `running`. A gateway never follows an
//! upstream's redirect and shows clients at most a sanitised excerpt of an upstream's
//! error body.
//!
//! **The operator** chooses the limits and the tokens; a token given to `agui serve` is
//! not printed, and a store that cannot be written and read back is refused at start.
//!
//! Out of scope: a caller with a valid token is trusted to spend its quota (runs cost what
//! the agent costs); TLS is a reverse proxy's job; the store's database is trusted.
//!
//! # Encodings
//!
//! SSE (`text/event-stream`) unless the client explicitly prefers protobuf
//! (`application/vnd.ag-ui.event+proto`, with the crate feature `proto`); see
//! [`negotiate`]. `Accept: */*` gets SSE.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_debug_implementations, missing_docs)]

#[cfg(feature = "a2ui")]
#[cfg_attr(docsrs, doc(cfg(feature = "a2ui")))]
pub mod a2ui;
pub mod access;
mod activity;
mod agent;
mod api_error;
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
mod run_error_code;
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
pub use api_error::{ApiError, ErrorCode};
pub use config::ServerConfig;
pub use context::RunContext;
pub use error::{AgentError, EmitError};
pub use finish::Finish;
pub use interrupts::{ResumeError, Resumed};
pub use listen::HEALTH_PATH;
pub use negotiate::{PROTO_MEDIA_TYPE, SSE_MEDIA_TYPE, WireFormat, negotiate};
pub use reasoning::{Reasoning, ReasoningMessage};
pub use run_error_code::RunErrorCode;
pub use server::{
    AgentServer, BODY_RATE_GRACE, BodyRoom, RouterExt, ShutdownHandle, serve, shutdown_signal,
};
pub use step::Step;
#[cfg(feature = "store")]
pub use store::StoreOptions;
pub use subagent::{Subagent, SubagentBuilder};
pub use text::{TextMessage, TextMessageBuilder};
pub use tool::{ToolCall, ToolCallBuilder};
/// [`AgentServer::cors`] takes a `tower-http` CORS layer: re-exported, with its
/// [`AllowOrigin`], so that an application needs no direct dependency on `tower-http`.
pub use tower_http::cors::{AllowOrigin, CorsLayer};

/// Re-exported so agents need no direct dependency on it.
pub use aguikit_core;
/// The axum this crate is built on. Its types are in this crate's API on purpose: an
/// [`AgentServer`] is served as, or mounted in, an `axum::Router`
/// ([`AgentServer::router`], [`RouterExt`]); [`AgentServer::handle`] takes an
/// `axum::extract::Request` and gives an `axum::response::Response`; an [`Authenticate`]
/// hook reads the request's `axum::http::HeaderMap`. Re-exported so that an application
/// names them with the version this crate uses.
pub use axum;
