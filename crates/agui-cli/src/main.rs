//! `agui`: verify, fold, expand, compact and encode AG-UI 1.0 event streams.
//!
//! The stream operations follow the command-line contract of the conformance suite: each
//! prints JSON on standard output and exits 0 on success, 1 when the stream is invalid, and
//! 2 on a usage or I/O error.

mod check;
mod commands;
mod demo;
mod input;
mod inspect;
mod load;
mod record;
mod serve;
mod stream;
mod term;
mod wire;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

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
        /// A JSON array, JSON Lines, an SSE stream or a case file; `-` for standard input.
        file: String,
        #[command(flatten)]
        stream: stream::StreamOptions,
    },
    /// Fold a stream into the conversation's messages and state.
    Apply {
        /// Input file or `-`.
        file: String,
        #[command(flatten)]
        stream: stream::StreamOptions,
    },
    /// Expand *_CHUNK events into START / CONTENT / END events.
    Expand {
        /// Input file or `-`.
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
        #[arg(long, value_enum, default_value = "sse")]
        format: stream::WireFormat,
        /// Input file or `-`.
        file: String,
        #[command(flatten)]
        stream: stream::StreamOptions,
    },
    /// Decode a wire stream (SSE or length-prefixed protobuf) into JSON Lines of events.
    Decode {
        /// Wire format.
        #[arg(long, value_enum, default_value = "sse")]
        format: stream::WireFormat,
        /// Input file or `-`.
        file: String,
        #[command(flatten)]
        stream: stream::StreamOptions,
    },
    #[command(flatten)]
    StreamTools(commands::StreamTools),
    /// Run an agent at URL: live in the terminal, or one JSON report with --json.
    Run {
        /// The agent's endpoint (e.g. http://127.0.0.1:8000/agent).
        url: String,
        /// The user message to send.
        #[arg(long)]
        text: Option<String>,
        /// A JSON file with any of threadId, runId, messages, state, tools, context,
        /// forwardedProps, resume.
        #[arg(long)]
        input: Option<String>,
        /// Ask for protobuf instead of SSE.
        #[arg(long)]
        proto: bool,
        /// Print one JSON report (the shape of the official interop client) instead of the
        /// live view.
        #[arg(long)]
        json: bool,
        /// Sets forwardedProps.scenario.
        #[arg(long)]
        scenario: Option<String>,
        /// Thread id (default: a fresh one).
        #[arg(long)]
        thread: Option<String>,
        /// Answer an interrupt outcome with a second run that approves every interrupt.
        #[arg(long)]
        auto_resume: bool,
        /// Extra request header, `Name: value` (repeatable).
        #[arg(long = "header")]
        headers: Vec<String>,
        /// Give up after this many milliseconds.
        #[arg(long, default_value_t = 120_000)]
        timeout_ms: u64,
    },
    /// Start an AG-UI server: a demo agent (or, with --openai-base-url, a model behind an
    /// OpenAI-compatible API) at POST /agent and a web console at /.
    #[command(after_help = demo::BEHAVIOURS)]
    Serve {
        /// Address to listen on (`ADDR:PORT`; port 0 picks a free one).
        #[arg(long, default_value = "127.0.0.1:8000")]
        listen: String,
        /// Pause between the demo agent's streamed pieces, in milliseconds.
        #[arg(long, default_value_t = 40)]
        delay_ms: u64,
        /// Serve the model behind this OpenAI-compatible Chat Completions API instead of
        /// the demo agent (e.g. https://api.openai.com/v1, http://127.0.0.1:11434/v1).
        #[arg(long, value_name = "URL", requires = "model")]
        openai_base_url: Option<String>,
        /// The model to ask for (with --openai-base-url).
        #[arg(long, value_name = "NAME", requires = "openai_base_url")]
        model: Option<String>,
        /// The environment variable holding the API key (unset or empty: no key is sent).
        #[arg(long, value_name = "VAR", default_value = "OPENAI_API_KEY")]
        api_key_env: String,
        /// A system prompt sent before every conversation (with --openai-base-url).
        #[arg(long, value_name = "TEXT", requires = "openai_base_url")]
        system_prompt: Option<String>,
        /// Where threads are kept: `memory`, `sqlite:PATH` or `postgres://...` (default: SQLite
        /// in the user's data directory, $XDG_DATA_HOME/agui/agui.sqlite3 or
        /// ~/.local/share/agui/agui.sqlite3).
        #[arg(long, value_name = "LOCATOR")]
        store: Option<String>,
        /// Cancel a run when the client that started it disconnects (default: the run goes
        /// on and can be resumed).
        #[arg(long)]
        cancel_on_disconnect: bool,
        /// Seconds a run's lease lasts without renewal: when a server dies mid-run, the
        /// run is closed with RUN_ERROR (code `abandoned`) once its lease has expired.
        #[arg(long, value_name = "SECS", default_value = "30", value_parser = parse_secs)]
        run_lease_secs: std::time::Duration,
    },
}

/// A positive number of seconds (fractions allowed).
fn parse_secs(text: &str) -> Result<std::time::Duration, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| *s > 0.0)
        .and_then(|s| std::time::Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| format!("{text:?} is not a positive number of seconds"))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Verify { file, stream } => stream::verify(&file, stream),
        Command::Apply { file, stream } => stream::apply(&file, stream),
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
        Command::StreamTools(tools) => tools.run(),
        Command::Run {
            url,
            text,
            input,
            proto,
            json,
            scenario,
            thread,
            auto_resume,
            headers,
            timeout_ms,
        } => run_agent(
            url,
            json,
            agui_client::cli::RunOptions {
                text,
                input: match input {
                    Some(p) => match agui_client::cli::RunSpec::from_file(std::path::Path::new(&p))
                    {
                        Ok(spec) => Some(spec),
                        Err(e) => {
                            eprintln!("agui: {e}");
                            return ExitCode::from(2);
                        }
                    },
                    None => None,
                },
                proto,
                scenario,
                thread_id: thread,
                auto_resume,
                headers: headers
                    .iter()
                    .filter_map(|h| h.split_once(':'))
                    .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
                    .collect(),
                timeout: std::time::Duration::from_millis(timeout_ms),
                ..Default::default()
            },
        ),
        Command::Serve {
            listen,
            delay_ms,
            openai_base_url,
            model,
            api_key_env,
            system_prompt,
            store,
            cancel_on_disconnect,
            run_lease_secs,
        } => run_async(serve::serve(serve::ServeOptions {
            listen,
            store,
            cancel_on_disconnect,
            run_lease: run_lease_secs,
            delay: std::time::Duration::from_millis(delay_ms),
            openai: openai_base_url
                .zip(model)
                .map(|(base_url, model)| serve::OpenAiOptions {
                    base_url,
                    model,
                    api_key_env,
                    system_prompt,
                }),
        }))
        .map(|()| ExitCode::SUCCESS),
    };
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

/// `agui run`: the live view, or the JSON report.
fn run_agent(
    url: String,
    json: bool,
    options: agui_client::cli::RunOptions,
) -> Result<ExitCode, String> {
    let report = run_async(async {
        Ok(if json {
            agui_client::cli::run_report(&url, &options).await
        } else {
            let mut out = std::io::stdout();
            agui_client::cli::render_run(&url, &options, &mut out).await
        })
    })?;
    if json {
        println!("{}", report.to_json_pretty());
    }
    Ok(ExitCode::from(report.exit_code().clamp(0, 255) as u8))
}
