//! # aguikit
//!
//! The `agui` command is the binary of this package (`src/main.rs`). This library holds
//! what `agui run` is built on, so that tests and examples can drive it without a process:
//!
//! - [`report`]: [`run_report`](report::run_report) runs an agent and returns a
//!   [`RunReport`](report::RunReport) in the shape of the interop TypeScript client's JSON
//!   report (`agui run --json`); [`render_run`](report::render_run) does the same run
//!   rendered live.
//! - [`render`]: the [`TerminalRenderer`](render::TerminalRenderer) of the live view.
//!
//! Both are built on [`aguikit_client::Session`].

pub mod render;
pub mod report;
