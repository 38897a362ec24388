//! What can go wrong when running an agent, and how far a run had got when it did.

use aguikit_core::engine::pipeline::{PipelineError, PipelineErrorKind};
use serde_json::Value;
use std::fmt;
use std::time::Duration;

/// How far a run got on the wire: what an error says when a stream breaks.
///
/// ```
/// use aguikit_client::Progress;
/// let p = Progress {
///     events: 3,
///     last_event: Some("TEXT_MESSAGE_CONTENT".into()),
///     open_run: Some("run-1".into()),
///     ..Progress::default()
/// };
/// assert_eq!(
///     p.to_string(),
///     "after 3 events (the last one TEXT_MESSAGE_CONTENT), with run run-1 still open"
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Progress {
    /// Events received from the wire (decoded, before chunk expansion).
    pub events: usize,
    /// The wire type of the last event received.
    pub last_event: Option<String>,
    /// Body bytes received, over every connection of the run.
    pub bytes: u64,
    /// The id of the run that was open: a `RUN_STARTED` seen without its `RUN_FINISHED` or
    /// `RUN_ERROR` yet.
    pub open_run: Option<String>,
    /// Whether a `RUN_FINISHED` or `RUN_ERROR` ended the last run that started.
    pub run_ended: bool,
    /// Reconnections made (with `Last-Event-ID`).
    pub reconnects: u32,
}

impl fmt::Display for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.events, &self.last_event) {
            (0, _) if self.bytes == 0 => write!(f, "before any event")?,
            (0, _) => write!(f, "before any complete event ({} bytes read)", self.bytes)?,
            (1, Some(last)) => write!(f, "after 1 event ({last})")?,
            (n, Some(last)) => write!(f, "after {n} events (the last one {last})")?,
            (n, None) => write!(f, "after {n} events")?,
        }
        if let Some(run) = &self.open_run {
            write!(f, ", with run {run} still open")?;
        } else if self.run_ended {
            write!(f, ", after the run had ended")?;
        }
        if self.reconnects > 0 {
            write!(f, ", {} reconnection(s) made", self.reconnects)?;
        }
        Ok(())
    }
}

/// Which time limit ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TimeoutKind {
    /// Waiting for the response headers.
    Response,
    /// Waiting for the next bytes of the body (SSE comments count as bytes).
    Idle,
    /// The whole run.
    Total,
}

impl fmt::Display for TimeoutKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TimeoutKind::Response => "waiting for the response",
            TimeoutKind::Idle => "waiting for more of the event stream",
            TimeoutKind::Total => "for the whole run",
        })
    }
}

/// Why the bytes of an event stream could not be split into events.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum FramingError {
    /// The bytes could not be split into frames: SSE framing (invalid UTF-8, a frame over
    /// the size limit), or protobuf framing or decoding (a frame over the size limit, a
    /// malformed or schema-breaking event, a body that ends mid-frame).
    #[error(transparent)]
    Frame(#[from] aguikit_core::codec::decoder::FrameError),
    /// A frame's JSON object has no `type`, or an empty or non-string one.
    #[error("the frame carries no event type: {excerpt}")]
    NoEventType {
        /// The start of the frame.
        excerpt: String,
    },
}

/// A client error: what a peer did wrong (HTTP status, malformed or out-of-order events, a
/// dropped connection) or what the caller did wrong (configuration, interrupt contract).
///
/// Every variant that happens mid-stream says how far the run got ([`Progress`]).
///
/// ```
/// use aguikit_client::ClientError;
/// let e = ClientError::Http {
///     status: 422,
///     body: r#"{"detail":"bad input"}"#.into(),
///     payload: Some(serde_json::json!({"detail": "bad input"})),
/// };
/// assert_eq!(e.to_string(), r#"HTTP 422: {"detail":"bad input"}"#);
/// assert_eq!(e.status(), Some(422));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The agent or run is misconfigured (bad URL, header, input that cannot be encoded).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// The request could not be sent, or no response came (DNS, connect, TLS, reset).
    #[error("request to {url} failed: {message}")]
    Request {
        /// The agent's URL.
        url: String,
        /// What failed, with its causes.
        message: String,
    },
    /// The agent answered with a status other than 2xx (reference rule R1).
    #[error("HTTP {status}: {}", excerpt(body))]
    Http {
        /// The HTTP status code.
        status: u16,
        /// The response body as text (for a JSON body, its compact re-encoding), cut at the
        /// agent's error-body limit.
        body: String,
        /// The body parsed as JSON, when the response said it was JSON and it parsed.
        payload: Option<Value>,
    },
    /// The response is not an AG-UI event stream.
    #[error(
        "the response is not an AG-UI event stream: content type {}{}",
        content_type.as_deref().map(|c| format!("{c:?}")).unwrap_or_else(|| "absent".into()),
        if body.is_empty() { String::new() } else { format!(", body starts {:?}", excerpt(body)) }
    )]
    ContentType {
        /// The response's `Content-Type`.
        content_type: Option<String>,
        /// The start of the body.
        body: String,
    },
    /// The connection broke (or the body ended) before the run did, and could not be resumed.
    #[error("the connection was lost {progress}: {message}")]
    ConnectionLost {
        /// How far the run got.
        progress: Progress,
        /// What the transport said.
        message: String,
    },
    /// A time limit ran out.
    #[error("timed out {kind} after {after:?}, {progress}")]
    Timeout {
        /// Which limit.
        kind: TimeoutKind,
        /// The limit.
        after: Duration,
        /// How far the run got.
        progress: Progress,
    },
    /// The bytes could not be split into events.
    #[error("malformed event stream {progress}: {source}")]
    Framing {
        /// What is wrong.
        source: FramingError,
        /// How far the run got.
        progress: Progress,
    },
    /// An event is malformed or breaks a protocol rule (index, type and rule in the error).
    #[error("{0}")]
    Protocol(#[from] PipelineError),
    /// A configured limit was exceeded.
    #[error("{what} exceeds the limit of {limit}, {progress}")]
    LimitExceeded {
        /// What was counted.
        what: &'static str,
        /// The limit.
        limit: u64,
        /// How far the run got.
        progress: Progress,
    },
    /// A middleware failed.
    #[error("middleware: {0}")]
    Middleware(String),
    /// A run was started while interrupts are pending and its `resume` does not answer all of
    /// them (interrupts.md I4a).
    #[error(
        "Thread has {} pending interrupt(s) not addressed by resume: {}",
        ids.len(),
        ids.join(", ")
    )]
    UnansweredInterrupts {
        /// The ids left unanswered.
        ids: Vec<String>,
    },
    /// An expired interrupt was answered with anything but `cancelled` (I4b).
    #[error(
        "Interrupt {id} expired at {expires_at} and can no longer be answered. Cancel it to continue the thread."
    )]
    InterruptExpired {
        /// The interrupt.
        id: String,
        /// Its `expiresAt`.
        expires_at: String,
    },
    /// A resume answer names no pending interrupt (contract rule C2).
    #[error("resume answers unknown interrupt ids: {}", ids.join(", "))]
    UnknownInterrupts {
        /// The unknown ids.
        ids: Vec<String>,
    },
    /// Two resume answers name the same interrupt.
    #[error("resume answers interrupt {id} more than once")]
    DuplicateAnswer {
        /// The interrupt.
        id: String,
    },
    /// `resume` was called with no interrupt pending.
    #[error("there is no pending interrupt to resume")]
    NothingToResume,
    /// The agent's capabilities document cannot be read ([`HttpAgent::capabilities`]).
    ///
    /// [`HttpAgent::capabilities`]: crate::HttpAgent::capabilities
    #[error("capabilities: {0}")]
    Capabilities(String),
}

impl ClientError {
    /// The HTTP status, for [`ClientError::Http`].
    pub fn status(&self) -> Option<u16> {
        match self {
            ClientError::Http { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// How far the run got, for the errors that happen mid-stream.
    pub fn progress(&self) -> Option<&Progress> {
        match self {
            ClientError::ConnectionLost { progress, .. }
            | ClientError::Timeout { progress, .. }
            | ClientError::Framing { progress, .. }
            | ClientError::LimitExceeded { progress, .. } => Some(progress),
            _ => None,
        }
    }

    /// A [`ClientError::Protocol`]: the input event at `index`, of wire type `event_type`,
    /// failed with `kind` (a decode error or a rule violation).
    pub(crate) fn protocol(
        index: usize,
        event_type: String,
        kind: impl Into<PipelineErrorKind>,
    ) -> Self {
        ClientError::Protocol(PipelineError {
            index,
            event_type,
            kind: kind.into(),
        })
    }

    /// The protocol error, for [`ClientError::Protocol`].
    pub fn pipeline_error(&self) -> Option<&PipelineError> {
        match self {
            ClientError::Protocol(e) => Some(e),
            _ => None,
        }
    }

    /// Whether the error was raised before anything was sent (configuration, interrupt
    /// contract).
    pub fn is_before_request(&self) -> bool {
        matches!(
            self,
            ClientError::Config(_)
                | ClientError::UnansweredInterrupts { .. }
                | ClientError::InterruptExpired { .. }
                | ClientError::UnknownInterrupts { .. }
                | ClientError::DuplicateAnswer { .. }
                | ClientError::NothingToResume
        )
    }
}

/// At most this many characters of a body go into an error message.
const EXCERPT_CHARS: usize = 1000;

/// The start of `text`, cut at a character boundary, with `…` when cut.
pub(crate) fn excerpt(text: &str) -> String {
    excerpt_chars(text, EXCERPT_CHARS)
}

pub(crate) use aguikit_core::fmt::excerpt as excerpt_chars;

pub(crate) use aguikit_core::fmt::with_causes;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_reads_naturally() {
        assert_eq!(Progress::default().to_string(), "before any event");
        let p = Progress {
            bytes: 10,
            ..Progress::default()
        };
        assert_eq!(p.to_string(), "before any complete event (10 bytes read)");
        let p = Progress {
            events: 1,
            last_event: Some("RUN_STARTED".into()),
            open_run: Some("r".into()),
            bytes: 50,
            run_ended: false,
            reconnects: 2,
        };
        assert_eq!(
            p.to_string(),
            "after 1 event (RUN_STARTED), with run r still open, 2 reconnection(s) made"
        );
        let p = Progress {
            events: 4,
            last_event: Some("RUN_FINISHED".into()),
            run_ended: true,
            ..Progress::default()
        };
        assert_eq!(
            p.to_string(),
            "after 4 events (the last one RUN_FINISHED), after the run had ended"
        );
    }

    #[test]
    fn http_error_excerpt_is_cut() {
        let e = ClientError::Http {
            status: 500,
            body: "x".repeat(5000),
            payload: None,
        };
        let s = e.to_string();
        assert!(s.starts_with("HTTP 500: xxx"));
        assert!(s.ends_with('…'));
        assert!(s.chars().count() < 1100);
    }

    #[test]
    fn excerpt_respects_char_boundaries() {
        assert_eq!(excerpt_chars("héllo", 2), "hé…");
        assert_eq!(excerpt_chars("hé", 2), "hé");
    }

    #[test]
    fn errors_stay_small() {
        assert!(std::mem::size_of::<ClientError>() <= 128);
    }

    #[test]
    fn interrupt_errors_match_the_reference_wording() {
        let e = ClientError::UnansweredInterrupts {
            ids: vec!["a".into(), "b".into()],
        };
        assert_eq!(
            e.to_string(),
            "Thread has 2 pending interrupt(s) not addressed by resume: a, b"
        );
        assert!(e.is_before_request());
    }
}
