//! The `RUN_ERROR` codes of aguikit, in one table: [`RunErrorCode`].

macro_rules! run_codes {
    ($($(#[doc = $doc:literal])+ $variant:ident = $wire:literal, $who:literal;)*) => {
        /// The `code` of a `RUN_ERROR` that aguikit itself ends a run with, and who sends it.
        ///
        /// An agent's own [`AgentError`](crate::AgentError) code is relayed as the agent
        /// gave it; a run whose events the store refuses ends with the store's code (the
        /// store rows of [`ErrorCode`](crate::ErrorCode)); the rest are these. A code is
        /// stable across releases.
        ///
        /// | code | sent by | when |
        /// |---|---|---|
        #[doc = concat!($("| `", $wire, "` | ", $who, " | ", $($doc,)+ " |\n",)*)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum RunErrorCode {
            $($(#[doc = $doc])+ $variant,)*
        }

        impl RunErrorCode {
            /// Every code, in the order of the table.
            pub const ALL: &'static [RunErrorCode] = &[$(RunErrorCode::$variant,)*];

            /// The code as it is sent (`"panic"`).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(RunErrorCode::$variant => $wire,)*
                }
            }

            /// The code of a wire string, if it is one of this table's.
            pub fn from_wire(wire: &str) -> Option<RunErrorCode> {
                match wire {
                    $($wire => Some(RunErrorCode::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

run_codes! {
    /// The agent panicked (the message has the panic's text).
    Panic = "panic", "server";
    /// The server is shutting down (Ctrl-C, `SIGTERM`) and the grace period ran out.
    Shutdown = "shutdown", "server";
    /// The server failed while running the run (a bug: the log has the details).
    Internal = "internal", "server";
    /// The agent ended with an outcome its run does not allow (e.g. an interrupt outcome
    /// with no open interrupt).
    InvalidOutcome = "invalid_outcome", "server";
    /// The agent sent an event that breaks a protocol rule (the message names the rule).
    ProtocolViolation = "protocol_violation", "server";
    /// The run sent more events than `ServerConfig::max_events_per_run`.
    TooManyEvents = "too_many_events", "server";
    /// An event is larger than `ServerConfig::max_event_bytes`.
    EventTooLarge = "event_too_large", "server";
    /// An event could not be encoded for the client.
    EncodeError = "encode_error", "server";
    /// A stored event nests deeper than the limit.
    EventTooDeep = "event_too_deep", "server (store)";
    /// The run's stored events passed `--max-run-bytes`.
    RunTooLarge = "run_too_large", "server (store)";
    /// The client went away and the run was set to be cancelled with it.
    Disconnected = "disconnected", "server (store)";
    /// A subagent's handle was dropped before it ended.
    Dropped = "dropped", "server";
    /// The run's server stopped before the run ended; its lease expired.
    Abandoned = "abandoned", "store";
    /// Interrupts are open and the input has no `resume` (rule C4).
    ResumeMissing = "resume_missing", "server";
    /// A `resume` entry names no open interrupt (rule C2).
    ResumeUnknownInterrupt = "resume_unknown_interrupt", "server";
    /// An open interrupt is not answered (rule C3).
    ResumeIncomplete = "resume_incomplete", "server";
    /// An interrupt is answered after it expired.
    ResumeExpired = "resume_expired", "server";
    /// The upstream could not be reached: connection refused, DNS, TLS, a reset before the
    /// response.
    UpstreamUnreachable = "upstream_unreachable", "gateway";
    /// The upstream answered with a status other than 2xx (the message has the status and
    /// the start of the body).
    UpstreamHttpStatus = "upstream_http_status", "gateway";
    /// The upstream's response is not an AG-UI event stream (its content type is neither
    /// `text/event-stream` nor the protobuf media type).
    UpstreamContentType = "upstream_content_type", "gateway";
    /// The upstream's response ended without `RUN_FINISHED` or `RUN_ERROR`.
    UpstreamIncomplete = "upstream_incomplete", "gateway";
    /// The connection to the upstream broke in the middle of its response.
    UpstreamConnectionLost = "upstream_connection_lost", "gateway";
    /// No event came from the upstream within the first-event timeout.
    UpstreamFirstEventTimeout = "upstream_first_event_timeout", "gateway";
    /// No event came from the upstream within the idle timeout since the last one.
    UpstreamIdleTimeout = "upstream_idle_timeout", "gateway";
    /// An upstream event breaks a protocol rule (the message names the rule, the event's
    /// index in the upstream's response and its type).
    UpstreamProtocolViolation = "upstream_protocol_violation", "gateway";
    /// An upstream event cannot be read: not JSON, not an object, no type, a field of the
    /// wrong type, a broken frame (the message names the event's index).
    UpstreamMalformedEvent = "upstream_malformed_event", "gateway";
    /// The upstream's response is over a limit (frame size, events, bytes).
    UpstreamLimitExceeded = "upstream_limit_exceeded", "gateway";
    /// The request could not be made (the input cannot be encoded).
    UpstreamRequestFailed = "upstream_request_failed", "gateway";
    /// The upstream answered with a redirect (`3xx`), which is never followed: the message
    /// names the status and the host of its `Location`.
    UpstreamRedirect = "upstream_redirect", "gateway";
}

impl std::fmt::Display for RunErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<RunErrorCode> for String {
    fn from(code: RunErrorCode) -> String {
        code.as_str().to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for &code in RunErrorCode::ALL {
            assert!(seen.insert(code.as_str()), "{code} twice");
            assert_eq!(RunErrorCode::from_wire(code.as_str()), Some(code));
        }
    }
}
