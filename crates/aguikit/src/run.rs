//! `agui run URL`: runs an agent, live in the terminal or as one JSON report, optionally
//! continuing a stored thread (`--thread ID`).

use crate::net;
use aguikit::report::{RunOptions, RunReport, RunSpec};
use std::process::ExitCode;
use std::time::Duration;

/// The arguments of `agui run`.
#[derive(clap::Args)]
pub struct RunArgs {
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
    /// Continue this thread: its history is loaded from the server (GET
    /// URL/threads/ID/connect, offered by `agui serve`) and the whole conversation is sent
    /// with the new message; a thread the server does not know starts under this id
    /// (default: a fresh thread).
    #[arg(long)]
    thread: Option<String>,
    /// Answer an interrupt outcome with a second run that approves every interrupt.
    #[arg(long)]
    auto_resume: bool,
    /// Answer the interrupts the thread (`--thread ID`) waits on, in this run: `approve`
    /// or `deny` (every interrupt), or `INTERRUPT_ID=JSON` (one; repeatable). No user
    /// message is sent unless --text gives one.
    #[arg(long, value_name = "ANSWER", value_parser = aguikit::report::ResumeAnswer::parse)]
    resume: Vec<aguikit::report::ResumeAnswer>,
    /// Extra request header, `Name: value` (repeatable; an `Authorization` header here
    /// replaces the one made from AGUI_TOKEN).
    #[arg(long = "header")]
    headers: Vec<String>,
    /// Give up after this many milliseconds.
    #[arg(long, default_value_t = 120_000)]
    timeout_ms: u64,
}

/// Runs `agui run` (exit codes: see [`exit_code`]).
pub fn run(args: RunArgs) -> Result<ExitCode, String> {
    net::check_url(&args.url)?;
    let input = args
        .input
        .map(|p| RunSpec::from_file(std::path::Path::new(&p)))
        .transpose()?;
    let options = RunOptions {
        text: args.text,
        input,
        proto: args.proto,
        scenario: args.scenario,
        continue_thread: args.thread.is_some(),
        thread_id: args.thread,
        auto_resume: args.auto_resume,
        resume: args.resume,
        headers: net::request_headers(&args.headers)?,
        timeout: Duration::from_millis(args.timeout_ms),
        ..Default::default()
    };
    let url = args.url.trim();
    let json = args.json;
    let mut out = Counting {
        inner: crate::out::Output(std::io::stdout()),
        written: 0,
    };
    let report = crate::run_async(async {
        Ok(if json {
            aguikit::report::run_report(url, &options).await
        } else {
            aguikit::report::render_run(url, &options, &mut out).await
        })
    })?;
    if json {
        crate::out::outln!("{}", report.to_json_pretty());
    } else if let Some(error) = report.run.error.as_ref().filter(|_| out.written == 0) {
        // A failure before the run started (the thread's history) renders nothing.
        eprintln!("agui run: {error}");
    }
    if report
        .run
        .run_error
        .as_ref()
        .is_some_and(|e| e.code.as_deref() == Some("resume_missing"))
    {
        eprintln!(
            "agui run: the thread waits on an interrupt; answer it with --resume approve, \
             --resume deny or --resume INTERRUPT_ID=JSON (with --thread)"
        );
    }
    Ok(ExitCode::from(exit_code(&report)))
}

/// A writer that counts what goes through it.
struct Counting<W> {
    inner: W,
    written: usize,
}

impl<W: std::io::Write> std::io::Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The exit code of a run: 0 when it finished, was cancelled or was interrupted (ended as
/// the agent meant it); 2 when the client failed it before any 2xx response (no connection,
/// a status other than 2xx, a thread history that could not be loaded); 1 otherwise
/// (`RUN_ERROR`, a stream without a terminal event, a protocol violation or a broken
/// connection after the response started).
pub fn exit_code(report: &RunReport) -> u8 {
    let run = &report.run;
    let answered = run.http_status.is_some_and(|s| (200..300).contains(&s));
    if !run.ok && !answered {
        return net::UNREACHABLE;
    }
    match run.status.as_str() {
        "finished" | "cancelled" | "interrupted" if run.ok => 0,
        _ => net::FAILED,
    }
}
