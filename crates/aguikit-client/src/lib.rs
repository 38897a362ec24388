#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_debug_implementations, missing_docs)]

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
