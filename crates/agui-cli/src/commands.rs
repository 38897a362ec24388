//! The stream-inspection and server-testing commands, flattened into the `agui` command line.

use crate::term::ColorChoice;
use clap::Subcommand;
use std::process::ExitCode;

/// `inspect`.
#[derive(Subcommand)]
pub enum StreamTools {
    /// Show a recorded stream as a timeline: events, messages, and where verification breaks.
    Inspect {
        /// A JSON array, JSON Lines, an SSE stream or a case file; `-` for standard input.
        file: String,
        /// Colours: auto (on a terminal, unless NO_COLOR is set), always or never.
        #[arg(long, value_enum, default_value = "auto")]
        color: ColorChoice,
        /// Do not cut summaries to one short line.
        #[arg(long)]
        full: bool,
    },
}

impl StreamTools {
    /// Runs the command.
    pub fn run(self) -> Result<ExitCode, String> {
        match self {
            StreamTools::Inspect { file, color, full } => {
                crate::inspect::run(&file, crate::inspect::InspectOptions { color, full })
            }
        }
    }
}
