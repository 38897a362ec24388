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
mod net;
mod observe;
mod record;
mod run;
mod serve;
mod term;
mod wire;

use agui_core::Event;
use agui_core::codec::proto;
use agui_core::engine::compact::compact;
use agui_core::engine::expand::Expander;
use agui_core::engine::pipeline::Pipeline;
use clap::{Parser, Subcommand, ValueEnum};
use input::{RawEvent, parse_events, read_source};
use serde_json::json;
use std::io::Write;
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
    },
    /// Fold a stream into the conversation's messages and state.
    Apply {
        /// Input file or `-`.
        file: String,
    },
    /// Expand *_CHUNK events into START / CONTENT / END events.
    Expand {
        /// Input file or `-`.
        file: String,
    },
    /// Compact a stream as the reference `compactEvents` does.
    Compact {
        /// Input file or `-`.
        file: String,
    },
    /// Encode a stream for the wire.
    Encode {
        /// Wire format.
        #[arg(long, value_enum, default_value = "sse")]
        format: WireFormat,
        /// Input file or `-`.
        file: String,
    },
    /// Decode a wire stream (SSE or length-prefixed protobuf) into JSON Lines of events.
    Decode {
        /// Wire format.
        #[arg(long, value_enum, default_value = "sse")]
        format: WireFormat,
        /// Input file or `-`.
        file: String,
    },
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

#[derive(Clone, Copy, ValueEnum)]
enum WireFormat {
    /// Server-Sent Events carrying JSON.
    Sse,
    /// Length-prefixed protobuf envelopes (`application/vnd.ag-ui.event+proto`).
    Proto,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Verify { file } => with_events(&file, verify),
        Command::Apply { file } => with_events(&file, apply),
        Command::Expand { file } => with_events(&file, expand),
        Command::Compact { file } => with_events(&file, compact_cmd),
        Command::Encode { format, file } => with_events(&file, |ev| encode(format, ev)),
        Command::Decode { format, file } => read_source(&file).and_then(|b| decode(format, &b)),
        Command::StreamTools(tools) => tools.run(),
        Command::Run(args) => run::run(args),
        Command::Serve(args) => run_async(serve::serve(*args)).map(|()| ExitCode::SUCCESS),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("agui: {e}");
            ExitCode::from(2)
        }
    }
}

fn with_events(
    file: &str,
    f: impl FnOnce(Vec<RawEvent>) -> Result<ExitCode, String>,
) -> Result<ExitCode, String> {
    let bytes = term::read_source(file)?;
    let (_, events) = parse_events(&bytes)?;
    f(events)
}

fn print_json(v: &impl serde::Serialize) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, v).map_err(|e| e.to_string())?;
    out.write_all(b"\n").map_err(|e| e.to_string())
}

/// Runs the whole client pipeline over the events.
fn run_pipeline(events: Vec<RawEvent>) -> Pipeline {
    let mut p = Pipeline::new();
    for raw in events {
        let result = match raw {
            Ok(v) => p.push_value(v).map(|_| ()),
            Err(e) => p
                .push_decoded(
                    Err(agui_core::event::DecodeError::Syntax {
                        message: e,
                        excerpt: String::new(),
                    }),
                    String::new(),
                )
                .map(|_| ()),
        };
        if result.is_err() {
            return p;
        }
    }
    let _ = p.finish();
    p
}

fn verify(events: Vec<RawEvent>) -> Result<ExitCode, String> {
    let p = run_pipeline(events);
    match p.error() {
        None => {
            print_json(&json!({"ok": true}))?;
            Ok(ExitCode::SUCCESS)
        }
        Some(e) => {
            print_json(
                &json!({"ok": false, "at": e.index, "rule": e.rule(), "error": e.to_string()}),
            )?;
            Ok(ExitCode::from(1))
        }
    }
}

fn apply(events: Vec<RawEvent>) -> Result<ExitCode, String> {
    let p = run_pipeline(events);
    if let Some(e) = p.error() {
        print_json(&json!({"ok": false, "at": e.index, "rule": e.rule(), "error": e.to_string()}))?;
        eprintln!("agui: the stream is invalid: {e}");
        return Ok(ExitCode::from(1));
    }
    let a = p.applier();
    print_json(&json!({
        "messages": a.messages(),
        "state": a.state(),
        "pendingInterrupts": a.pending_interrupts(),
    }))?;
    Ok(ExitCode::SUCCESS)
}

/// Decodes every event; the first malformed one is an error naming its index.
fn decode_all(events: Vec<RawEvent>) -> Result<Vec<Event>, (usize, String)> {
    events
        .into_iter()
        .enumerate()
        .map(|(i, raw)| {
            raw.map_err(|e| (i, e))
                .and_then(|v| Event::from_value(v).map_err(|e| (i, e.to_string())))
        })
        .collect()
}

fn invalid(i: usize, e: &str) -> Result<ExitCode, String> {
    print_json(&json!({"ok": false, "at": i, "error": e}))?;
    eprintln!("agui: event {i}: {e}");
    Ok(ExitCode::from(1))
}

fn expand(events: Vec<RawEvent>) -> Result<ExitCode, String> {
    let events = match decode_all(events) {
        Ok(e) => e,
        Err((i, e)) => return invalid(i, &e),
    };
    let mut x = Expander::new();
    let mut out = Vec::with_capacity(events.len());
    for (i, e) in events.into_iter().enumerate() {
        if let Err(v) = x.push(e, &mut out) {
            return invalid(i, &v.to_string());
        }
    }
    print_json(&out)?;
    Ok(ExitCode::SUCCESS)
}

fn compact_cmd(events: Vec<RawEvent>) -> Result<ExitCode, String> {
    let events = match decode_all(events) {
        Ok(e) => e,
        Err((i, e)) => return invalid(i, &e),
    };
    match compact(&events) {
        Ok(out) => {
            print_json(&out)?;
            Ok(ExitCode::SUCCESS)
        }
        Err(v) => {
            print_json(&json!({"ok": false, "error": v.to_string()}))?;
            Ok(ExitCode::from(1))
        }
    }
}

fn encode(format: WireFormat, events: Vec<RawEvent>) -> Result<ExitCode, String> {
    let mut buf = Vec::new();
    for (i, raw) in events.into_iter().enumerate() {
        let v = raw.map_err(|e| format!("event {i}: {e}"))?;
        match format {
            WireFormat::Sse => {
                // Typed events re-encode canonically; a malformed one is written as given,
                // minus nothing (the reference SSE encoder does not validate either).
                let json = match Event::from_value(v.clone()) {
                    Ok(e) => e.to_json_vec(),
                    Err(e) => {
                        eprintln!("agui: event {i} is malformed and is written as given: {e}");
                        serde_json::to_vec(&v).map_err(|e| e.to_string())?
                    }
                };
                agui_core::codec::sse::write_frame(&mut buf, &json);
            }
            WireFormat::Proto => {
                let event = Event::from_value(v).map_err(|e| format!("event {i}: {e}"))?;
                match proto::write_frame(&mut buf, &event) {
                    Ok(()) => {}
                    Err(proto::ProtoError::NoProtobufForm { .. }) => {
                        eprintln!(
                            "agui: event {i} ({}) has no protobuf form and is skipped",
                            event.type_str()
                        );
                    }
                    Err(e) => return Err(format!("event {i}: {e}")),
                }
            }
        }
    }
    std::io::stdout()
        .lock()
        .write_all(&buf)
        .map_err(|e| e.to_string())?;
    Ok(ExitCode::SUCCESS)
}

/// Decodes a wire stream and prints one JSON event per line; exits 1 at the first bad frame.
fn decode(format: WireFormat, bytes: &[u8]) -> Result<ExitCode, String> {
    let mut out = std::io::stdout().lock();
    let mut emit = |e: &Event| -> Result<(), String> {
        serde_json::to_writer(&mut out, e).map_err(|e| e.to_string())?;
        out.write_all(b"\n").map_err(|e| e.to_string())
    };
    let fail = |i: usize, e: &dyn std::fmt::Display| {
        eprintln!("agui: frame {i}: {e}");
        Ok(ExitCode::from(1))
    };
    let mut i = 0;
    match format {
        WireFormat::Sse => {
            let frames = match agui_core::codec::sse::SseDecoder::decode_all(bytes) {
                Ok(f) => f,
                Err(e) => return fail(0, &e),
            };
            for f in frames {
                match Event::from_json_str(&f.data) {
                    Ok(e) => emit(&e)?,
                    Err(e) => return fail(i, &e),
                }
                i += 1;
            }
        }
        WireFormat::Proto => {
            let mut d = proto::ProtoFrameDecoder::new();
            d.push(bytes);
            loop {
                match d.next_event() {
                    Ok(Some(e)) => emit(&e)?,
                    Ok(None) => break,
                    Err(e) => return fail(i, &e),
                }
                i += 1;
            }
            if let Err(e) = d.finish() {
                return fail(i, &e);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs a future on a multi-threaded tokio runtime.
fn run_async<T>(f: impl std::future::Future<Output = Result<T, String>>) -> Result<T, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("starting the async runtime: {e}"))?
        .block_on(f)
}
