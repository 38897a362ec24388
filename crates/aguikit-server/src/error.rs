//! Errors: what an emitter reports to the agent, and what an agent reports to the runtime.

use aguikit_core::EventType;
use aguikit_core::engine::Violation;
use std::fmt;

/// Why an event could not be emitted. After any of these the run is over: the stream is
/// closed (and, except for [`EmitError::Closed`], ended with `RUN_ERROR`), so an agent
/// should return — `?` does that.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum EmitError {
    /// The run is over: the client went away, the server is shutting down, or the run
    /// already ended.
    #[error("the run is closed (client disconnected, shutdown, or run already ended)")]
    Closed,
    /// The event breaks a protocol rule; the run was ended with `RUN_ERROR`.
    #[error("protocol violation: {0}")]
    Violation(Violation),
    /// `RUN_STARTED`, `RUN_FINISHED` and `RUN_ERROR` are emitted by the runtime; return a
    /// [`Finish`](crate::Finish) or an [`AgentError`] instead.
    #[error("{0} is emitted by the runtime, not by agents")]
    Reserved(EventType),
    /// The encoded event is larger than `ServerConfig::max_event_bytes`.
    #[error("event of {size} bytes exceeds the limit of {limit} bytes")]
    TooLarge {
        /// Encoded size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The run emitted more events than `ServerConfig::max_events_per_run`.
    #[error("the run exceeded its limit of {0} events")]
    TooManyEvents(u64),
    /// The event cannot be written in the negotiated encoding.
    #[error("cannot encode the event: {0}")]
    Encode(String),
}

/// A failed run: becomes `RUN_ERROR` with this message and code.
///
/// Any `std::error::Error` converts into it, so `?` works in agents:
///
/// ```
/// use aguikit_server::AgentError;
/// fn parse(s: &str) -> Result<i32, AgentError> {
///     Ok(s.parse::<i32>()?)
/// }
/// assert!(parse("x").is_err());
/// let e = AgentError::new("model unavailable").with_code("upstream");
/// assert_eq!(e.code(), Some("upstream"));
/// ```
pub struct AgentError {
    message: String,
    code: Option<String>,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl AgentError {
    /// An error with a message (the `RUN_ERROR` message).
    pub fn new(message: impl Into<String>) -> Self {
        AgentError {
            message: message.into(),
            code: None,
            source: None,
        }
    }

    /// Sets the `RUN_ERROR` code.
    pub fn with_code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The code, if any.
    pub fn code(&self) -> Option<&str> {
        self.code.as_deref()
    }

    /// The error this one was made from, if any.
    pub fn source(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        self.source.as_deref()
    }

    /// The emit error this one was made from, if any.
    pub(crate) fn emit_error(&self) -> Option<&EmitError> {
        self.source.as_deref().and_then(|e| e.downcast_ref())
    }
}

impl fmt::Debug for AgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentError")
            .field("message", &self.message)
            .field("code", &self.code)
            .finish()
    }
}

impl fmt::Display for AgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for AgentError {
    fn from(e: E) -> Self {
        AgentError {
            message: e.to_string(),
            code: None,
            source: Some(Box::new(e)),
        }
    }
}
