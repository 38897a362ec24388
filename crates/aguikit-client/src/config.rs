//! An agent's configuration: time limits, size limits, the reconnection policy, and what
//! every run of an agent shares. The public types are documented where they are used,
//! in [`agent`](crate::agent).

use crate::decode::WireFormat;
use crate::middleware::Middleware;
use reqwest::header::HeaderMap;
use std::sync::Arc;
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
    /// How much of an error response's body is read for [`ClientError::Http`](crate::error::ClientError::Http). Default
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
