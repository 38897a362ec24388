//! The `RUN_ERROR` codes an [`OpenAiAgent`](crate::OpenAiAgent) ends a failed run with.
//!
//! ```
//! use aguikit_openai::codes;
//! let code = Some("upstream_http");
//! assert_eq!(code, Some(codes::HTTP));
//! ```

/// The model server could not be reached, or the connection broke while the answer was
/// streaming.
pub const CONNECT: &str = "upstream_connect";

/// The model server answered with an HTTP error status; the message names the status and
/// the API's error message (or an excerpt of the body).
pub const HTTP: &str = "upstream_http";

/// The stream carried an API error object (`{"error": {...}}`); the message is the API's.
pub const API: &str = "upstream_api";

/// No response head within the request timeout, or no data within the idle timeout.
pub const TIMEOUT: &str = "upstream_timeout";

/// The response could not be read as a Chat Completions stream: a chunk that is not JSON,
/// a tool call without a name, invalid SSE, a stream that ended before it finished.
pub const MALFORMED: &str = "upstream_malformed";

/// The model was still calling back-end tools after the allowed number of model calls.
pub const MAX_STEPS: &str = "max_steps";
