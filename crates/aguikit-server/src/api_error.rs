//! The HTTP errors of every route, typed: [`ApiError`] (a code, a message, details) and the
//! table of codes, [`ErrorCode`].
//!
//! Every error answer of the server is JSON, `{"error": code, "message": text, ...details}`,
//! with `Content-Type: application/json`; `details` name what is useful to act on (`field`,
//! `limit`, `retryAfter`, `lastSeq`, ...). A code is stable across releases and always comes
//! with the same HTTP status: a client can match on the code alone.
//!
//! ```
//! use aguikit_server::{ApiError, ErrorCode};
//! let e = ApiError::new(ErrorCode::BodyTooLarge, "the request body exceeds the limit")
//!     .with("limit", 1024);
//! assert_eq!(e.code().as_str(), "body_too_large");
//! assert_eq!(e.code().status().as_u16(), 413);
//! assert_eq!(
//!     e.body().to_string(),
//!     r#"{"error":"body_too_large","message":"the request body exceeds the limit","limit":1024}"#
//! );
//! ```

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};

macro_rules! codes {
    ($($(#[doc = $doc:literal])+ $variant:ident = $wire:literal, $status:ident;)*) => {
        /// The stable code of an HTTP error answer, with the status it is always sent with.
        ///
        /// | code | status | when |
        /// |---|---|---|
        #[doc = concat!($("| `", $wire, "` | ", codes!(@status $status), " | ", $($doc,)+ " |\n",)*)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ErrorCode {
            $($(#[doc = $doc])+ $variant,)*
        }

        impl ErrorCode {
            /// Every code, in the order of the table.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            /// The code as it is sent (`"body_too_large"`).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $wire,)*
                }
            }

            /// The HTTP status the code is sent with.
            pub const fn status(self) -> StatusCode {
                match self {
                    $(ErrorCode::$variant => StatusCode::$status,)*
                }
            }

            /// The code of a wire string, if it is one of this table's.
            pub fn from_wire(wire: &str) -> Option<ErrorCode> {
                match wire {
                    $($wire => Some(ErrorCode::$variant),)*
                    _ => None,
                }
            }
        }
    };
    (@status BAD_REQUEST) => { "400" };
    (@status UNAUTHORIZED) => { "401" };
    (@status NOT_FOUND) => { "404" };
    (@status REQUEST_TIMEOUT) => { "408" };
    (@status CONFLICT) => { "409" };
    (@status PAYLOAD_TOO_LARGE) => { "413" };
    (@status UNSUPPORTED_MEDIA_TYPE) => { "415" };
    (@status MISDIRECTED_REQUEST) => { "421" };
    (@status UNPROCESSABLE_ENTITY) => { "422" };
    (@status TOO_MANY_REQUESTS) => { "429" };
    (@status INTERNAL_SERVER_ERROR) => { "500" };
    (@status SERVICE_UNAVAILABLE) => { "503" };
}

codes! {
    /// The body is not JSON (or not an object where one is needed).
    InvalidJson = "invalid_json", BAD_REQUEST;
    /// The body nests deeper than the limit (`field`: where).
    TooDeep = "too_deep", BAD_REQUEST;
    /// An id is longer than the limit (`field`: which).
    IdTooLong = "id_too_long", BAD_REQUEST;
    /// The request body could not be read (the connection failed while sending it).
    BodyUnreadable = "body_unreadable", BAD_REQUEST;
    /// `limit` of a listing is not a whole number from 1 to 1000.
    InvalidLimit = "invalid_limit", BAD_REQUEST;
    /// A thread search (`q`) is not UTF-8 text of at most the allowed length.
    InvalidQuery = "invalid_query", BAD_REQUEST;
    /// A thread update (`PATCH` of a thread) is not valid (`field`: which).
    InvalidUpdate = "invalid_update", BAD_REQUEST;
    /// `Last-Event-ID` or `after` is not a sequence number.
    InvalidSequence = "invalid_sequence", BAD_REQUEST;
    /// A read starts past the end of the thread (`lastSeq`: its last sequence).
    SequenceOutOfRange = "sequence_out_of_range", BAD_REQUEST;
    /// A recording posted to `agui serve`'s `/api/inspect` is not a stream of events.
    UnreadableRecording = "unreadable_recording", BAD_REQUEST;
    /// The body is JSON but not a valid `RunAgentInput` (`field`: where), or ids the store
    /// refuses.
    InvalidInput = "invalid_input", UNPROCESSABLE_ENTITY;
    /// The route needs `Authorization: Bearer TOKEN` (with `WWW-Authenticate: Bearer`).
    Unauthorized = "unauthorized", UNAUTHORIZED;
    /// No thread of that id that the caller may see (another principal's reads the same).
    UnknownThread = "unknown_thread", NOT_FOUND;
    /// No run of that id in the thread.
    UnknownRun = "unknown_run", NOT_FOUND;
    /// The body did not arrive within the time limit.
    BodyTimeout = "body_timeout", REQUEST_TIMEOUT;
    /// The body arrives slower than the minimum rate.
    BodyTooSlow = "body_too_slow", REQUEST_TIMEOUT;
    /// The run id is already used in the thread.
    RunExists = "run_exists", CONFLICT;
    /// The run has already ended.
    RunClosed = "run_closed", CONFLICT;
    /// The thread has a run in progress: one run at a time per thread (a double submit, or
    /// a delete during a run).
    ThreadBusy = "thread_busy", CONFLICT;
    /// The body is larger than the limit (`limit`).
    BodyTooLarge = "body_too_large", PAYLOAD_TOO_LARGE;
    /// A run is posted as `Content-Type: application/json`.
    UnsupportedMediaType = "unsupported_media_type", UNSUPPORTED_MEDIA_TYPE;
    /// A loopback server asked for a `Host` it does not answer for (DNS rebinding).
    MisdirectedHost = "misdirected_host", MISDIRECTED_REQUEST;
    /// The caller's run or request budget is spent (`retryAfter` seconds, also in `Retry-After`).
    RateLimited = "rate_limited", TOO_MANY_REQUESTS;
    /// The caller has as many inspections running as allowed (`retryAfter`).
    TooManyInspections = "too_many_inspections", TOO_MANY_REQUESTS;
    /// The server failed while handling the request (a bug: the log has the details).
    Internal = "internal", INTERNAL_SERVER_ERROR;
    /// A stored event cannot be decoded.
    CorruptEvent = "corrupt_event", INTERNAL_SERVER_ERROR;
    /// The store's backend failed (I/O, database, lost connection).
    StoreBackend = "store_backend", INTERNAL_SERVER_ERROR;
    /// Too many request bodies are being received at once (`Retry-After`).
    Busy = "busy", SERVICE_UNAVAILABLE;
    /// The server is at its connection limit (`Retry-After`).
    TooManyConnections = "too_many_connections", SERVICE_UNAVAILABLE;
    /// The server is shutting down.
    ShuttingDown = "shutting_down", SERVICE_UNAVAILABLE;
    /// The store is damaged (the message says how to recover).
    StoreDamaged = "store_damaged", SERVICE_UNAVAILABLE;
    /// The store is in a storage format of a newer release.
    StoreNewerFormat = "store_newer_format", SERVICE_UNAVAILABLE;
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An HTTP error answer: its [`ErrorCode`] (and so its status), a message for people, and
/// details for programs. Converts into the JSON response ([`IntoResponse`]); every error
/// of the server's routes is one.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    code: ErrorCode,
    message: String,
    details: Map<String, Value>,
    retry_after: Option<u64>,
}

impl ApiError {
    /// An error with `code` and `message`, and no details.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            code,
            message: message.into(),
            details: Map::new(),
            retry_after: None,
        }
    }

    /// Adds the detail `key` (a member of the body beside `error` and `message`).
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_owned(), value.into());
        self
    }

    /// Asks the client to wait `secs` seconds (at least 1) before trying again: the
    /// `Retry-After` header and the `retryAfter` detail.
    pub fn retry_after(mut self, secs: u64) -> Self {
        let secs = secs.max(1);
        self.retry_after = Some(secs);
        self.with("retryAfter", secs)
    }

    /// The code.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The JSON body: `{"error": code, "message": text, ...details}`.
    pub fn body(&self) -> Value {
        let mut body = Map::with_capacity(2 + self.details.len());
        body.insert("error".into(), self.code.as_str().into());
        body.insert("message".into(), self.message.clone().into());
        for (k, v) in &self.details {
            body.entry(k.clone()).or_insert_with(|| v.clone());
        }
        Value::Object(body)
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.code.status().as_u16(),
            self.code,
            self.message
        )
    }
}

impl std::error::Error for ApiError {}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        crate::metrics::rejected(self.code.as_str());
        let mut res = (self.code.status(), self.body().to_string()).into_response();
        let headers = res.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if let Some(secs) = self.retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        if self.code == ErrorCode::Unauthorized {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        res
    }
}

#[cfg(feature = "store")]
impl From<&aguikit_store::StoreError> for ApiError {
    /// The store's error as the answer: its code (the store's codes are this table's), its
    /// message. An error of a newer store version is a `store_backend` (500).
    fn from(e: &aguikit_store::StoreError) -> Self {
        let code = ErrorCode::from_wire(e.code()).unwrap_or(ErrorCode::StoreBackend);
        ApiError::new(code, e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_snake_case_and_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for &code in ErrorCode::ALL {
            let wire = code.as_str();
            assert!(seen.insert(wire), "{wire} twice");
            assert!(
                wire.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{wire}"
            );
            assert_eq!(ErrorCode::from_wire(wire), Some(code));
            assert!(code.status().is_client_error() || code.status().is_server_error());
        }
        assert_eq!(ErrorCode::from_wire("nope"), None);
    }

    #[test]
    fn details_never_replace_the_code_or_the_message() {
        let e = ApiError::new(ErrorCode::Busy, "m")
            .with("error", "x")
            .with("message", "y")
            .retry_after(0);
        assert_eq!(
            e.body(),
            serde_json::json!({"error": "busy", "message": "m", "retryAfter": 1})
        );
        let res = e.into_response();
        assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(res.headers()[header::RETRY_AFTER], "1");
        assert_eq!(res.headers()[header::CONTENT_TYPE], "application/json");
    }

    #[cfg(feature = "store")]
    #[test]
    fn every_store_error_code_is_in_the_table_with_the_status_of_before() {
        use aguikit_store::StoreError;
        let cases = [
            (StoreError::UnknownThread("t".into()), 404),
            (
                StoreError::UnknownRun {
                    thread: "t".into(),
                    run: "r".into(),
                },
                404,
            ),
            (
                StoreError::SequenceOutOfRange {
                    thread: "t".into(),
                    seq: 9,
                    last: 1,
                },
                400,
            ),
            (
                StoreError::RunClosed {
                    thread: "t".into(),
                    run: "r".into(),
                },
                409,
            ),
            (
                StoreError::RunExists {
                    thread: "t".into(),
                    run: "r".into(),
                },
                409,
            ),
            (
                StoreError::ThreadBusy {
                    thread: "t".into(),
                    run: "r".into(),
                },
                409,
            ),
            (StoreError::Invalid("x".into()), 422),
            (
                StoreError::Corrupt {
                    thread: "t".into(),
                    seq: 1,
                    message: "m".into(),
                },
                500,
            ),
            (StoreError::Damaged("x".into()), 503),
            (StoreError::Backend("x".into()), 500),
            (
                StoreError::NewerFormat {
                    place: "p".into(),
                    found: 2,
                    supported: 1,
                },
                503,
            ),
        ];
        for (e, status) in cases {
            let api = ApiError::from(&e);
            assert_eq!(api.code().as_str(), e.code(), "{e:?}");
            assert_eq!(api.code().status().as_u16(), status, "{e:?}");
        }
    }
}
