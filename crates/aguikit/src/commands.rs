//! The stream-inspection and server-testing commands (`inspect`, `record`, `check`, `rules`,
//! `load`), flattened into the `agui` command line.

use crate::term::ColorChoice;
use clap::Subcommand;
use std::process::ExitCode;
use std::time::Duration;

/// `inspect`, `record`, `check`, `rules` and `load`.
#[derive(Subcommand)]
pub enum StreamTools {
    /// Show a recorded stream as a timeline: events, messages, and where verification breaks.
    Inspect {
        /// A JSON array, JSON Lines, an SSE stream, a case file or length-prefixed protobuf; `-`
        /// for standard input.
        file: String,
        /// Colours: auto (on a terminal, unless NO_COLOR is set), always or never.
        #[arg(long, value_enum, default_value = "auto")]
        color: ColorChoice,
        /// Do not cut summaries to one short line.
        #[arg(long)]
        full: bool,
        #[command(flatten)]
        stream: crate::stream::StreamOptions,
    },
    /// Run an agent once and save its raw stream (events as received) as JSON Lines.
    #[command(after_help = crate::net::AFTER_HELP)]
    Record {
        /// The agent's endpoint.
        url: String,
        /// Where to write (`-` for standard output).
        #[arg(short, long)]
        output: String,
        /// The user message to send (default "hello").
        #[arg(long)]
        text: Option<String>,
        /// A JSON file with any of threadId, runId, messages, state, tools, context,
        /// forwardedProps, resume.
        #[arg(long)]
        input: Option<String>,
        /// Ask for protobuf instead of SSE.
        #[arg(long)]
        proto: bool,
        /// Add the arrival time as `timestamp` to events that carry none.
        #[arg(long)]
        stamp: bool,
        /// Extra request header, `Name: value` (repeatable; an `Authorization` header here
        /// replaces the one made from AGUI_TOKEN).
        #[arg(long = "header")]
        headers: Vec<String>,
        /// Give up after this many milliseconds.
        #[arg(long, default_value_t = 120_000)]
        timeout_ms: u64,
    },
    /// Check any AG-UI server's conformance: several inputs, every stream verified.
    #[command(after_help = crate::net::AFTER_HELP)]
    Check {
        /// The agent's endpoint.
        url: String,
        /// Print one JSON report (the same as --format json).
        #[arg(long, conflicts_with = "format")]
        json: bool,
        /// The report: human (readable), json, junit (JUnit XML) or sarif (SARIF 2.1.0).
        #[arg(long, value_enum, default_value = "human")]
        format: crate::check::ReportFormat,
        /// Where rule ids link to in SARIF and JUnit reports (each rule at `URL#ID`). By
        /// default the checked server's own rules page when it serves one (`agui serve`
        /// does, at `/rules`), else RULES.md in the published crate's sources on docs.rs.
        #[arg(long, value_name = "URL")]
        rules_url: Option<String>,
        #[command(flatten)]
        request: crate::net::RequestArgs,
        /// Colours: auto, always or never.
        #[arg(long, value_enum, default_value = "auto")]
        color: ColorChoice,
    },
    /// The verification rules (ids, what breaks them, what the reference client does); with
    /// an id (`agui rules V16`), that rule alone.
    Rules {
        /// One rule or transport check, by its id (`V16`, `CH8`, `schema`, `http-status`;
        /// any case).
        id: Option<String>,
        /// text, md (Markdown) or json.
        #[arg(long, value_enum, default_value = "text")]
        format: crate::rules::RulesFormat,
    },
    /// The stored threads of an agent on a server that keeps them (such as `agui serve`):
    /// list, show, delete, export.
    #[command(after_help = crate::net::AFTER_HELP)]
    Threads {
        #[command(subcommand)]
        command: crate::threads::ThreadsCommand,
    },
    /// Load an agent: N runs, C at a time; runs/s, events/s, latency percentiles, failures.
    #[command(after_help = crate::net::AFTER_HELP)]
    Load {
        /// The agent's endpoint.
        url: String,
        /// Runs in all.
        #[arg(long, default_value_t = 100)]
        runs: usize,
        /// Runs in flight at once.
        #[arg(long, default_value_t = 8)]
        concurrency: usize,
        /// Threads that make the runs. One keeps the tool's own cost per run lowest (a
        /// run's tasks never change threads), which leaves the most CPU to a server on the
        /// same machine; raise it when one core cannot drive a remote server (runs/s stops
        /// growing with --concurrency while that server has CPU to spare).
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// The user message of every run (default "hello").
        #[arg(long)]
        text: Option<String>,
        /// Ask for protobuf instead of SSE.
        #[arg(long)]
        proto: bool,
        /// Print one JSON report.
        #[arg(long)]
        json: bool,
        /// At the end, delete each thread a run made (`DELETE URL/threads/ID`, for a server
        /// that stores threads, such as `agui serve`); a thread that cannot be deleted makes
        /// the exit code 1. The runs' thread ids start with `agui-load-` either way.
        #[arg(long)]
        cleanup: bool,
        #[command(flatten)]
        request: crate::net::RequestArgs,
        /// Colours: auto, always or never.
        #[arg(long, value_enum, default_value = "auto")]
        color: ColorChoice,
    },
}

impl StreamTools {
    /// Runs the command.
    pub fn run(self) -> Result<ExitCode, String> {
        match self {
            StreamTools::Inspect {
                file,
                color,
                full,
                stream,
            } => crate::inspect::run(
                &file,
                crate::inspect::InspectOptions {
                    color,
                    full,
                    max_frame_bytes: stream.max_frame_bytes,
                },
            ),
            StreamTools::Record {
                url,
                output,
                text,
                input,
                proto,
                stamp,
                headers,
                timeout_ms,
            } => {
                let input = input
                    .map(|p| aguikit::report::RunSpec::from_file(std::path::Path::new(&p)))
                    .transpose()?;
                let opts = crate::record::RecordOptions {
                    url,
                    text,
                    input,
                    proto,
                    output,
                    headers: crate::net::request_headers(&headers)?,
                    timeout: Duration::from_millis(timeout_ms),
                    stamp,
                };
                crate::run_async(crate::record::run(opts))
            }
            StreamTools::Check {
                url,
                json,
                format,
                rules_url,
                request,
                color,
            } => {
                let (headers, timeout) = request.resolve()?;
                let opts = crate::check::CheckOptions {
                    url,
                    format: if json {
                        crate::check::ReportFormat::Json
                    } else {
                        format
                    },
                    rules_url,
                    headers,
                    timeout,
                    color,
                };
                crate::run_async(crate::check::run(opts))
            }
            StreamTools::Rules { id, format } => crate::rules::run(format, id.as_deref()),
            StreamTools::Threads { command } => {
                crate::run_async_on(1, crate::threads::run(command))
            }
            StreamTools::Load {
                url,
                runs,
                concurrency,
                threads,
                text,
                proto,
                json,
                cleanup,
                request,
                color,
            } => {
                let (headers, timeout) = request.resolve()?;
                let opts = crate::load::LoadOptions {
                    cleanup,
                    url,
                    runs,
                    concurrency,
                    threads,
                    text,
                    proto,
                    json,
                    headers,
                    timeout,
                    color,
                };
                crate::run_async_on(threads, crate::load::run(opts))
            }
        }
    }
}
