//! `agui`: verify, fold, expand, compact and encode AG-UI 1.0 event streams.
//!
//! The stream operations follow the command-line contract of the conformance suite: each
//! prints JSON on standard output and exits 0 on success, 1 when the stream is invalid, and
//! 2 on a usage or I/O error.

mod a2ui;
mod check;
mod check_report;
mod commands;
mod demo;
mod diff;
mod input;
mod inspect;
mod inspect_api;
mod load;
mod logline;
mod net;
mod observe;
mod out;
mod record;
mod replay;
mod rules;
mod run;
mod serve;
mod stream;
mod term;
mod threads;
mod wire;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// jemalloc, with its background thread purging unused memory, rather than the system
/// allocator: after bursts of large requests an idle `agui serve` kept it with glibc's
/// malloc (idle RSS 12 MiB before a soak, 2.1 GiB after) and with mimalloc (28 MiB, then
/// 370 MiB), since nothing in an idle process triggers their purging (`benches/soak.rs`).
/// It is built unprefixed, so the bundled SQLite allocates from it too: the 10-minute soak
/// then ends at 21 MiB idle against 15 MiB before (1.39×).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Gives the memory the allocator keeps for reuse (in every arena) back to the system now.
///
/// jemalloc keeps freed pages for a while (its decay time) in the arena of the thread that
/// freed them. `POST /api/inspect` frees the request's body on a connection thread and
/// then folds the recording on a blocking thread, in another arena: the body's pages stayed
/// resident beside the fold. Purging in between took the peak of one inspection of a
/// 63 MiB recording of a million tiny events from 357 MiB to 274 MiB
/// (`scripts/memory-inspect.py`; immediate decay everywhere, through `MALLOC_CONF`, gave
/// 219 MiB but made the request four times slower).
#[allow(unsafe_code)]
pub fn release_free_memory() {
    // `arena.<MALLCTL_ARENAS_ALL>.purge`: MALLCTL_ARENAS_ALL is 4096.
    let name = c"arena.4096.purge";
    // SAFETY: `name` is a NUL-terminated name of a mallctl that takes no value and
    // returns none, so the null pointers with a zero length are what jemalloc expects;
    // the call has no effect on memory that is in use.
    let _ = unsafe {
        tikv_jemalloc_sys::mallctl(
            name.as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        )
    };
}

#[derive(Parser)]
#[command(name = "agui", version, about = "Tools for AG-UI 1.0 event streams", long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check a stream with the reference client's rules: {"ok":true} or {"ok":false,"at":K,...}.
    Verify {
        /// A JSON array, JSON Lines, an SSE stream, a case file or length-prefixed protobuf; `-`
        /// for standard input.
        file: String,
        /// Also fail (rule `strict`) on what the reference client only warns about or drops:
        /// an unknown event type, a field the 1.0 schema does not declare (dropped when
        /// decoding), a retired event translated, a legacy `null`. For tests, as the 1.0
        /// specification advises.
        #[arg(long)]
        strict: bool,
        /// Also check the A2UI surfaces of `a2ui-surface` activities (rules A1–A17): the
        /// verdict gains `"a2ui": {"activities": N, "violations": [...]}`.
        #[arg(long, conflicts_with = "strict")]
        a2ui: bool,
        /// The A2UI catalog to check components against (its common_types.json beside it or
        /// in ../../json/); without it, the message schema and the semantic rules only.
        #[arg(long, value_name = "FILE", requires = "a2ui")]
        a2ui_catalog: Option<std::path::PathBuf>,
        #[command(flatten)]
        stream: stream::StreamOptions,
    },
    /// Fold a stream into the conversation's messages and state.
    Apply {
        /// Input file or `-`.
        file: String,
        /// Also print `"a2ui"`: the `a2ui-surface` activities folded into A2UI surfaces.
        #[arg(long)]
        a2ui: bool,
        #[command(flatten)]
        stream: stream::StreamOptions,
    },
    /// Expand *_CHUNK events into START / CONTENT / END events.
    Expand {
        /// Input file (any format `verify` reads) or `-`.
        file: String,
        #[command(flatten)]
        stream: stream::StreamOptions,
    },
    /// Compact a stream as the reference `compactEvents` does.
    Compact {
        /// Input file or `-`.
        file: String,
        #[command(flatten)]
        stream: stream::StreamOptions,
    },
    /// Encode a stream for the wire.
    Encode {
        /// Wire format.
        #[arg(long, default_value = "sse", value_parser = stream::format_parser())]
        format: stream::WireFormat,
        /// Input file or `-`.
        file: String,
        #[command(flatten)]
        stream: stream::StreamOptions,
    },
    /// Decode a wire stream (SSE or length-prefixed protobuf) into JSON Lines of events.
    Decode {
        /// Wire format.
        #[arg(long, default_value = "sse", value_parser = stream::format_parser())]
        format: stream::WireFormat,
        /// Input file or `-`.
        file: String,
        #[command(flatten)]
        stream: stream::StreamOptions,
    },
    /// Compare two recordings, or two runs of a stored thread: the first divergence (event,
    /// field, both values), then the folded messages, state and interrupts.
    #[command(after_help = diff::AFTER_HELP)]
    Diff(diff::DiffArgs),
    /// Send a recording's run inputs to an agent again and compare what comes back with the
    /// recording, run by run (as `agui diff` compares).
    #[command(after_help = replay::AFTER_HELP)]
    Replay(replay::ReplayArgs),
    #[command(flatten)]
    StreamTools(commands::StreamTools),
    /// Run an agent at URL: live in the terminal, or one JSON report with --json.
    #[command(after_help = net::AFTER_HELP)]
    Run(run::RunArgs),
    /// Start an AG-UI server: a demo agent (or, with --openai-base-url, a model behind an
    /// OpenAI-compatible API) at POST /agent and a web console at /.
    #[command(after_help = demo::BEHAVIOURS)]
    Serve(Box<serve::ServeArgs>),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Verify {
            file,
            strict,
            a2ui,
            a2ui_catalog,
            stream,
        } => {
            if a2ui {
                a2ui::verify(&file, stream, a2ui_catalog.as_deref())
            } else {
                stream::verify(&file, stream, strict)
            }
        }
        Command::Apply { file, a2ui, stream } => stream::apply(&file, stream, a2ui),
        Command::Expand { file, stream } => stream::expand(&file, stream),
        Command::Compact { file, stream } => stream::compact(&file, stream),
        Command::Encode {
            format,
            file,
            stream,
        } => stream::encode(format, &file, stream),
        Command::Decode {
            format,
            file,
            stream,
        } => stream::decode(format, &file, stream),
        Command::Diff(args) => diff::run(args),
        Command::Replay(args) => replay::run(args),
        Command::StreamTools(tools) => tools.run(),
        Command::Run(args) => run::run(args),
        Command::Serve(args) => run_async(serve::serve(*args)).map(|()| ExitCode::SUCCESS),
    };
    observe::flush_logs();
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("agui: {e}");
            ExitCode::from(2)
        }
    }
}

/// Runs a future on a multi-threaded tokio runtime.
fn run_async<T>(f: impl std::future::Future<Output = Result<T, String>>) -> Result<T, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("starting the async runtime: {e}"))?
        .block_on(f)
}

/// Runs a future on a tokio runtime of `threads` threads: the calling thread alone for
/// one (or zero), else that many workers.
fn run_async_on<T>(
    threads: usize,
    f: impl std::future::Future<Output = Result<T, String>>,
) -> Result<T, String> {
    let mut builder = if threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(threads);
        b
    };
    builder
        .enable_all()
        .build()
        .map_err(|e| format!("starting the async runtime: {e}"))?
        .block_on(f)
}
