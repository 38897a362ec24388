#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_debug_implementations, missing_docs)]

/// How long the default HTTP client keeps an idle connection for the next run: under the
/// idle timeouts of the common servers (5 s for uvicorn and Node, `agui serve`'s 10 s header
/// timeout), so that a run is not posted on a connection the server is closing (it would
/// fail with "connection closed before message completed", and a run is not retried).
pub const POOL_IDLE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(4);

pub mod agent;
mod config;
pub mod decode;
pub mod error;
pub mod interrupts;
pub mod middleware;
pub mod partial_json;
pub mod run;
pub mod session;
mod transport;
pub mod updates;

pub use agent::{HttpAgent, HttpAgentBuilder, Limits, ReconnectPolicy, Timeouts, install_tls};
pub use decode::WireFormat;
pub use error::{ClientError, FramingError, Progress, TimeoutKind};
pub use middleware::{EventStream, Middleware, Next, middleware_fn};
pub use run::{AbortHandle, ResponseInfo, RunStream};
pub use session::{RunParams, RunStatus, Session, SessionRun, Update};
