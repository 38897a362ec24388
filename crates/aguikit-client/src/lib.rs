//! # aguikit-client
//!
//! Run AG-UI agents over HTTP and get exactly what the official TypeScript client
//! (`@ag-ui/client` 1.0.0) would show a user — with fewer surprises.
//!
//! - [`HttpAgent`]: one agent endpoint. [`HttpAgent::run`] sends a run input and returns a
//!   [`RunStream`] of events that are decoded (SSE, or protobuf with the `proto` feature),
//!   passed through [middleware], expanded and verified by the
//!   [`aguikit_core`] engine. HTTP errors carry the status and a body excerpt; a response that is
//!   not an AG-UI stream is an error; a broken connection is an error that says how far the
//!   run got, and is resumed with `Last-Event-ID` when the server numbers its SSE frames.
//!   Dropping the stream or calling [`RunStream::abort`] aborts the run.
//! - [`Session`]: a conversation thread that owns messages, state, pending interrupts and the
//!   status of its last run, sends the conversation on every run, enforces the interrupt
//!   contract on [`Session::resume`], and streams typed [`Update`]s for a UI (text deltas,
//!   tool-call progress with the partial arguments parsed, state and message changes, run
//!   finished or failed).
//!
//! Where this client deliberately differs from the reference (see `DESIGN.md`): SSE framing
//! follows the WHATWG rules (CRLF, CR, comments, multi-line data); a stream that ends without
//! `RUN_FINISHED`/`RUN_ERROR` is accepted but reported as [`RunStatus::Incomplete`]; on a
//! failure everything before the failing event stays applied; a non-AG-UI content type is an
//! error; `Session::resume` refuses answers to unknown interrupts.
//!
//! ```no_run
//! use aguikit_client::{HttpAgent, Session, Update};
//! use futures_util::StreamExt;
//!
//! # async fn demo() -> Result<(), aguikit_client::ClientError> {
//! let agent = HttpAgent::builder("http://127.0.0.1:8000/agent").build()?;
//! let mut session = Session::new(agent);
//! session.add_user_message("hello");
//! let mut run = session.run()?;
//! while let Some(update) = run.next().await {
//!     if let Update::TextDelta { delta, .. } = update {
//!         print!("{delta}");
//!     }
//! }
//! drop(run);
//! println!("\n{} messages, status {}", session.message_count(), session.status().unwrap());
//! # Ok(()) }
//! ```

pub mod agent;
pub mod decode;
pub mod error;
pub mod interrupts;
pub mod middleware;
pub mod partial_json;
pub mod run;
pub mod session;
mod shared;
mod transport;
pub mod updates;

pub use agent::{HttpAgent, HttpAgentBuilder, Limits, ReconnectPolicy, Timeouts, install_tls};
pub use decode::WireFormat;
pub use error::{ClientError, FramingError, Progress, TimeoutKind};
pub use middleware::{EventStream, Middleware, Next, middleware_fn};
pub use run::{AbortHandle, ResponseInfo, RunStream};
pub use session::{RunParams, RunStatus, Session, SessionRun, Update};
