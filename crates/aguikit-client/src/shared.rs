//! The types the client's modules share: a leaf that uses none of them, so that `agent`,
//! `middleware`, `run` and `transport` depend on it rather than on each other in a cycle.
//! The public ones are re-exported where they have always been documented
//! ([`agent`](crate::agent), [`middleware`](crate::middleware), [`run`](crate::run)).

use crate::decode::WireFormat;
use crate::error::ClientError;
use aguikit_core::{Event, RunAgentInput};
use futures_util::Stream;
use futures_util::task::AtomicWaker;
use reqwest::header::HeaderMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Time limits of a run. `None` means no limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timeouts {
    /// Establishing the connection (TCP and TLS). Default 30 s.
    pub connect: Option<Duration>,
    /// From sending the request to the response headers. Default 60 s.
    pub response: Option<Duration>,
    /// Between two reads of the body. SSE keep-alive comments count, so an agent that
    /// thinks for a long time should send them. Default 5 min.
    pub idle: Option<Duration>,
    /// The whole run, reconnections included. Default none.
    pub total: Option<Duration>,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Some(Duration::from_secs(30)),
            response: Some(Duration::from_secs(60)),
            idle: Some(Duration::from_secs(300)),
            total: None,
        }
    }
}

/// Size and count limits of a run: a peer cannot make the client buffer without bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// The largest SSE frame or protobuf message, in bytes. Default 16 MiB.
    pub max_frame_size: usize,
    /// Events per run (as received, before chunk expansion). Default 10 million.
    pub max_events: usize,
    /// Body bytes per run, over every connection. Default 4 GiB.
    pub max_body_bytes: u64,
    /// How much of an error response's body is read for [`ClientError::Http`]. Default
    /// 64 KiB.
    pub max_error_body: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_frame_size: aguikit_core::codec::sse::DEFAULT_MAX_FRAME_SIZE,
            max_events: 10_000_000,
            max_body_bytes: 4 << 30,
            max_error_body: 64 * 1024,
        }
    }
}

/// When and how a broken SSE stream is resumed.
///
/// Only streams whose frames carry SSE `id:` fields can be resumed: the request is sent
/// again, with the same body and a `Last-Event-ID` header naming the last id received, after
/// the delay the server asked for with `retry:` (at most [`max_delay`](Self::max_delay)) or
/// else [`delay`](Self::delay). Frames whose id was already received are skipped, so
/// replayed events are not delivered twice. A stream is resumed when the connection breaks,
/// and when the body ends cleanly while a run is still open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReconnectPolicy {
    /// Reconnections per run; 0 disables reconnecting. Default 3.
    pub max_attempts: u32,
    /// The delay when the server gave no `retry:`. Default 500 ms.
    pub delay: Duration,
    /// The longest delay honoured from `retry:`. Default 10 s.
    pub max_delay: Duration,
}

impl Default for ReconnectPolicy {
    fn default() -> Self {
        ReconnectPolicy {
            max_attempts: 3,
            delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(10),
        }
    }
}

impl ReconnectPolicy {
    /// No reconnection.
    pub fn disabled() -> Self {
        ReconnectPolicy {
            max_attempts: 0,
            ..ReconnectPolicy::default()
        }
    }
}

/// What every run of an agent shares.
pub(crate) struct AgentConfig {
    pub(crate) url: reqwest::Url,
    pub(crate) headers: HeaderMap,
    pub(crate) encoding: WireFormat,
    pub(crate) timeouts: Timeouts,
    pub(crate) limits: Limits,
    pub(crate) reconnect: ReconnectPolicy,
    pub(crate) client: reqwest::Client,
    pub(crate) middleware: Vec<Arc<dyn Middleware>>,
}

/// A stream of events or one final error: what middleware and transports produce.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<Event, ClientError>> + Send>>;

/// Code between the caller and the transport (see the [module](crate::middleware) docs).
pub trait Middleware: Send + Sync + 'static {
    /// Runs the rest of the chain (through `next`) for `input`, or not, and returns the
    /// events to hand outwards. Should be lazy: nothing should happen until the stream is
    /// polled.
    fn run(&self, input: RunAgentInput, next: Next) -> EventStream;
}

/// The rest of the chain, for a middleware. Cheap to clone; calling [`run`](Self::run) twice
/// runs the rest of the chain twice (for example, to retry).
#[derive(Clone)]
pub struct Next {
    pub(crate) config: Arc<AgentConfig>,
    pub(crate) shared: Arc<RunShared>,
    pub(crate) position: usize,
}

impl std::fmt::Debug for Next {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next")
            .field("position", &self.position)
            .finish_non_exhaustive()
    }
}

impl Next {
    pub(crate) fn new(config: Arc<AgentConfig>, shared: Arc<RunShared>) -> Self {
        Next {
            config,
            shared,
            position: 0,
        }
    }
}

/// At most this many warnings are kept per run.
const MAX_WARNINGS: usize = 200;

/// What is known about a run's HTTP response(s), and what was stripped on the way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResponseInfo {
    /// The status of the last response.
    pub status: Option<u16>,
    /// The `Content-Type` of the last response.
    pub content_type: Option<String>,
    /// Reconnections made.
    pub reconnects: u32,
    /// Material the decoder dropped (unknown events, unknown fields, legacy `null`s), as
    /// `event N: what` (at most 200).
    pub warnings: Vec<String>,
}

/// State shared by the transport, the middleware chain and the [`RunStream`](crate::RunStream) of one run.
#[derive(Debug, Default)]
pub(crate) struct RunShared {
    info: Mutex<ResponseInfo>,
    aborted: AtomicBool,
    pub(crate) waker: AtomicWaker,
}

impl RunShared {
    pub(crate) fn info(&self) -> std::sync::MutexGuard<'_, ResponseInfo> {
        // A poisoned lock only means a panic elsewhere; the data is still usable.
        self.info.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn record_response(&self, status: u16, content_type: Option<String>) {
        let mut info = self.info();
        info.status = Some(status);
        info.content_type = content_type;
    }

    pub(crate) fn record_reconnect(&self) {
        self.info().reconnects += 1;
    }

    pub(crate) fn record_warnings(&self, index: usize, warnings: Vec<String>) {
        if warnings.is_empty() {
            return;
        }
        let mut info = self.info();
        for w in warnings {
            tracing::warn!(event = index, "{w}");
            if info.warnings.len() < MAX_WARNINGS {
                info.warnings.push(format!("event {index}: {w}"));
            }
        }
    }

    pub(crate) fn abort(&self) {
        self.aborted.store(true, Ordering::SeqCst);
        self.waker.wake();
    }

    pub(crate) fn is_aborted(&self) -> bool {
        self.aborted.load(Ordering::SeqCst)
    }
}
