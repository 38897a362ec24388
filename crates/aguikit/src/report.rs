//! What the `agui run URL [--text T] [--input FILE] [--proto] [--json]` command needs:
//!
//! - [`run_report`]: runs an agent and returns a [`RunReport`], which serializes to the JSON
//!   object the interop TypeScript client (`ts-client/client.mjs`) prints: `ok`, `error`,
//!   `httpStatus`, `contentType`, `terminal`, `outcome`, `interrupts`, `pendingToolCallIds`,
//!   `runError`, `result`, `events` (types in order), `durationMs`, `mode`, `transport`,
//!   `threadId`, `messages`, `state`, `pendingInterrupts`, `warnings`, `totalMs`, plus
//!   `status` (how the run ended, see [`RunStatus::name`]).
//! - [`render_run`]: the same run rendered live for a terminal by a
//!   [`TerminalRenderer`] (streamed text, tool calls with their arguments as they stream,
//!   state changes, the ending), returning the report too so the command can choose its
//!   exit code ([`RunReport::exit_code`]).
//!
//! Both are built on [`aguikit_client::Session`] and its typed [`Update`]s.
//!
//! ```no_run
//! use aguikit::report::{run_report, RunOptions};
//! # async fn demo() {
//! let options = RunOptions { text: Some("hi".into()), ..RunOptions::default() };
//! let report = run_report("http://127.0.0.1:8000/agent", &options).await;
//! println!("{}", report.to_json_pretty());
//! std::process::exit(report.exit_code());
//! # }
//! ```

use crate::render::TerminalRenderer;
use aguikit_client::{HttpAgent, RunParams, RunStatus, Session, Update, WireFormat};
use aguikit_core::{Context, Event, Interrupt, Message, ResumeEntry, Tool};
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io::Write;
use std::time::{Duration, Instant};

/// The parts of a run input that `--input FILE` may give (as in `client.mjs`); every part
/// may be left out.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct RunSpec {
    /// Thread id.
    pub thread_id: Option<String>,
    /// Run id.
    pub run_id: Option<String>,
    /// The conversation (default: one user message with the `--text`).
    pub messages: Option<Vec<Message>>,
    /// The starting state (default `{}`).
    pub state: Option<Value>,
    /// Front-end tools.
    pub tools: Option<Vec<Tool>>,
    /// Context.
    pub context: Option<Vec<Context>>,
    /// Forwarded props (an object).
    pub forwarded_props: Option<Value>,
    /// Resume entries.
    pub resume: Option<Vec<ResumeEntry>>,
}

impl RunSpec {
    /// Reads a spec from JSON text.
    pub fn from_json(text: &str) -> Result<RunSpec, String> {
        serde_json::from_str(text).map_err(|e| format!("invalid run input: {e}"))
    }

    /// Reads a spec from a JSON file.
    pub fn from_file(path: &std::path::Path) -> Result<RunSpec, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        RunSpec::from_json(&text)
    }
}

/// Options of one `agui run`.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The user message when the input gives no messages (default `"hello"`).
    pub text: Option<String>,
    /// Parts of the run input (`--input FILE`).
    pub input: Option<RunSpec>,
    /// Ask for protobuf.
    pub proto: bool,
    /// Sets `forwardedProps.scenario` (for the interop test server).
    pub scenario: Option<String>,
    /// Thread id (overrides the input's).
    pub thread_id: Option<String>,
    /// Continue the thread: load its stored history with [`Session::load`] (`GET
    /// {url}/threads/{thread_id}/connect`, served by a store-backed server) and send it,
    /// with the new messages appended, as the run's `messages` (and its state as `state`,
    /// unless the input gives one). A thread the server does not know (404, or 405 from a
    /// server without thread routes) starts empty under that id. Needs a thread id (from
    /// `thread_id` or the input); without one a fresh thread starts.
    pub continue_thread: bool,
    /// Run id (overrides the input's).
    pub run_id: Option<String>,
    /// Extra request headers.
    pub headers: Vec<(String, String)>,
    /// Limit of each run (default 30 s).
    pub timeout: Duration,
    /// When the run ends in an interrupt, resume it once, resolving every interrupt with
    /// `{"approved": true}`.
    pub auto_resume: bool,
    /// Answers to the interrupts the (continued) thread waits on, sent as the run's
    /// `resume`: the run carries no new user message unless `text` is given. Every open
    /// interrupt needs an answer ([`ResumeAnswer::All`] gives every one the same).
    pub resume: Vec<ResumeAnswer>,
}

/// An answer of `agui run --resume`.
#[derive(Debug, Clone, PartialEq)]
pub enum ResumeAnswer {
    /// Every open interrupt resolved with this payload (`approve`: `{"approved": true}`,
    /// `deny`: `{"approved": false}`).
    All(Value),
    /// One interrupt, by its id, resolved with this payload.
    One(String, Value),
}

impl ResumeAnswer {
    /// Reads `approve`, `deny` or `ID=JSON` (a payload that is not JSON is taken as a
    /// string).
    pub fn parse(text: &str) -> Result<ResumeAnswer, String> {
        match text.trim() {
            "approve" => Ok(ResumeAnswer::All(serde_json::json!({"approved": true}))),
            "deny" => Ok(ResumeAnswer::All(serde_json::json!({"approved": false}))),
            other => match other.split_once('=') {
                Some((id, payload)) if !id.trim().is_empty() => Ok(ResumeAnswer::One(
                    id.trim().to_owned(),
                    serde_json::from_str(payload)
                        .unwrap_or_else(|_| Value::String(payload.to_owned())),
                )),
                _ => Err(format!(
                    "--resume {text:?}: expected approve, deny or INTERRUPT_ID=JSON"
                )),
            },
        }
    }
}

/// The `resume` array answering `pending` with `answers`; an error naming the interrupts
/// left unanswered or unknown.
fn resume_entries(
    pending: &[aguikit_core::Interrupt],
    answers: &[ResumeAnswer],
) -> Result<Vec<ResumeEntry>, String> {
    if pending.is_empty() {
        return Err("the thread waits on no interrupt: there is nothing to --resume".into());
    }
    let mut entries = Vec::new();
    for a in answers {
        match a {
            ResumeAnswer::All(payload) => entries.extend(
                pending
                    .iter()
                    .filter(|i| !entries.iter().any(|e: &ResumeEntry| e.interrupt_id == i.id))
                    .map(|i| ResumeEntry::resolved(i.id.clone(), payload.clone()))
                    .collect::<Vec<_>>(),
            ),
            ResumeAnswer::One(id, payload) => {
                entries.push(ResumeEntry::resolved(id.clone(), payload.clone()))
            }
        }
    }
    let open: Vec<String> = pending
        .iter()
        .map(|i| format!("{} ({})", i.id, i.reason))
        .collect();
    aguikit_client::interrupts::build_resume(pending, entries)
        .map_err(|e| format!("{e}; the thread waits on {}", open.join(", ")))
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            text: None,
            input: None,
            proto: false,
            scenario: None,
            thread_id: None,
            continue_thread: false,
            run_id: None,
            headers: Vec::new(),
            timeout: Duration::from_secs(30),
            auto_resume: false,
            resume: Vec::new(),
        }
    }
}

/// `runError` of a report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunErrorReport {
    /// `RUN_ERROR.message`.
    pub message: String,
    /// `RUN_ERROR.code`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// What one run showed (the per-run part of a [`RunReport`]).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RunPart {
    /// The client accepted the run (no client-side failure). A `RUN_ERROR` from the agent,
    /// or a stream without a terminal event, is still `ok` (see `status`).
    pub ok: bool,
    /// Why not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// HTTP status of the response.
    pub http_status: Option<u16>,
    /// Its content type.
    pub content_type: Option<String>,
    /// `RUN_FINISHED`, `RUN_ERROR` or `null`: the last terminal event.
    pub terminal: Option<String>,
    /// How the run ended (`finished`, `cancelled`, `interrupted`, `errored`, `failed`,
    /// `incomplete`, `aborted`).
    pub status: String,
    /// `success`, `interrupt` or `cancelled`, from the last `RUN_FINISHED`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// The interrupts of the last interrupt outcome.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupts: Option<Vec<Interrupt>>,
    /// Tool calls left pending by the last successful run, when any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_tool_call_ids: Option<Vec<String>>,
    /// The last `RUN_ERROR`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_error: Option<RunErrorReport>,
    /// `RUN_FINISHED.result` of the last successful run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The types of the events applied, in order (after chunk expansion).
    pub events: Vec<String>,
    /// How long the run took.
    pub duration_ms: f64,
}

/// The report of `agui run --json` (see the [module](self) docs for the shape).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RunReport {
    /// The (last) run.
    #[serde(flatten)]
    pub run: RunPart,
    /// With auto-resume: the answers sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resumed_with: Option<Vec<ResumeEntry>>,
    /// With auto-resume: the interrupted first run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_run: Option<RunPart>,
    /// Always `"run"`.
    pub mode: String,
    /// `"sse"` or `"proto-requested"`.
    pub transport: String,
    /// The thread.
    pub thread_id: String,
    /// The messages afterwards.
    pub messages: Value,
    /// The state afterwards.
    pub state: Value,
    /// The interrupts the thread waits on afterwards.
    pub pending_interrupts: Vec<Interrupt>,
    /// Material the decoder dropped (unknown events and fields) and events or parts the
    /// reducer ignored (a failing state patch, content for an unknown message).
    pub warnings: Vec<String>,
    /// Kept for the shape of the TypeScript report; always empty.
    pub console_errors: Vec<String>,
    /// Both runs, with auto-resume.
    pub total_ms: f64,
    /// Kept for the shape of the TypeScript report; always empty.
    pub unhandled_rejections: Vec<String>,
}

impl RunReport {
    /// The report as pretty JSON (what `--json` prints).
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The report as a JSON value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// 0 when the run was accepted, 1 otherwise (as `client.mjs`).
    pub fn exit_code(&self) -> i32 {
        if self.run.ok { 0 } else { 1 }
    }
}

/// Runs the agent at `url` once (twice with auto-resume) and reports what the client saw.
/// Never panics on anything the agent does; every failure is in the report.
pub async fn run_report(url: &str, options: &RunOptions) -> RunReport {
    drive(url, options, &mut |_, _| {}).await
}

/// Runs the agent at `url`, rendering the run live to `out` (see [`TerminalRenderer`]),
/// and returns the report.
pub async fn render_run(
    url: &str,
    options: &RunOptions,
    out: &mut (dyn Write + Send),
) -> RunReport {
    let mut renderer = TerminalRenderer::new(out);
    drive(url, options, &mut |u, s| renderer.update(u, s)).await
}

type OnUpdate<'a> = dyn FnMut(&Update, &Session) + Send + 'a;

async fn drive(url: &str, options: &RunOptions, on_update: &mut OnUpdate<'_>) -> RunReport {
    let t0 = Instant::now();
    let spec = options.input.clone().unwrap_or_default();
    let transport = if options.proto {
        "proto-requested"
    } else {
        "sse"
    };
    let mut builder = HttpAgent::builder(url)
        .wire_format(if options.proto {
            WireFormat::Proto
        } else {
            WireFormat::Sse
        })
        .total_timeout(options.timeout);
    for (k, v) in &options.headers {
        builder = builder.header(k, v);
    }
    let thread_id = options
        .thread_id
        .clone()
        .or(spec.thread_id.clone())
        .unwrap_or_else(aguikit_core::id::random_uuid);
    let agent = match builder.build() {
        Ok(a) => a,
        Err(e) => {
            let run = failed_part(e.to_string(), t0);
            return failed_report(run, transport, thread_id, spec.state, t0);
        }
    };
    // Every message made here gets a fresh UUID: a stored thread keeps one copy per id, so
    // a fixed id would make each turn replace the previous one.
    // Answering interrupts sends no new user message unless one is given.
    let messages =
        spec.messages
            .clone()
            .unwrap_or_else(|| match (&options.text, options.resume.is_empty()) {
                (None, false) => Vec::new(),
                (text, _) => vec![Message::user(
                    aguikit_core::id::random_uuid(),
                    text.clone().unwrap_or_else(|| "hello".into()),
                )],
            });
    let mut forwarded = match &spec.forwarded_props {
        Some(Value::Object(m)) => m.clone(),
        _ => Default::default(),
    };
    if let Some(s) = &options.scenario {
        forwarded.insert("scenario".into(), Value::String(s.clone()));
    }
    let forwarded = Value::Object(forwarded);
    let mut session = if options.continue_thread {
        match load_thread(agent, &thread_id, options.timeout).await {
            Ok(mut session) => {
                for m in messages {
                    session.add_message(m);
                }
                if let Some(state) = &spec.state {
                    session.set_state(state.clone());
                }
                session
            }
            Err((error, http_status)) => {
                let mut run = failed_part(format!("loading thread {thread_id}: {error}"), t0);
                run.http_status = http_status;
                return failed_report(run, transport, thread_id, spec.state, t0);
            }
        }
    } else {
        Session::with_thread_id(agent, thread_id)
            .with_history(messages, spec.state.clone().unwrap_or_else(empty_object))
    };
    let mut params = RunParams::new().forwarded_props(forwarded.clone());
    params.run_id = Some(
        options
            .run_id
            .clone()
            .or(spec.run_id.clone())
            .unwrap_or_else(aguikit_core::id::random_uuid),
    );
    params.tools = spec.tools.clone();
    params.context = spec.context.clone();
    params.resume = spec.resume.clone();
    if !options.resume.is_empty() {
        match resume_entries(session.pending_interrupts(), &options.resume) {
            Ok(entries) => params.resume = Some(entries),
            Err(error) => {
                let run = failed_part(format!("--resume: {error}"), t0);
                let thread_id = session.thread_id().to_owned();
                return failed_report(run, transport, thread_id, spec.state, t0);
            }
        }
    } else if params.resume.is_none() && !session.pending_interrupts().is_empty() {
        // The server would end the run with `resume_missing`: say how to answer instead.
        let open: Vec<String> = session
            .pending_interrupts()
            .iter()
            .map(|i| format!("{} ({})", i.id, i.reason))
            .collect();
        let run = failed_part(
            format!(
                "the thread waits on {}: answer with --resume approve, --resume deny or \
                 --resume INTERRUPT_ID=JSON",
                open.join(", ")
            ),
            t0,
        );
        let thread_id = session.thread_id().to_owned();
        return failed_report(run, transport, thread_id, spec.state, t0);
    }

    let (first, mut warnings) = run_once(&mut session, params, on_update).await;
    let mut report_run = first;
    let mut first_run = None;
    let mut resumed_with = None;
    if options.auto_resume && report_run.ok && !session.pending_interrupts().is_empty() {
        let answers: Vec<ResumeEntry> = session
            .pending_interrupts()
            .iter()
            .map(|i| ResumeEntry::resolved(i.id.clone(), serde_json::json!({"approved": true})))
            .collect();
        let resume =
            aguikit_client::interrupts::build_resume(session.pending_interrupts(), answers)
                .unwrap_or_default();
        let params = RunParams::new()
            .run_id(aguikit_core::id::random_uuid())
            .forwarded_props(forwarded)
            .resume(resume.clone());
        let (second, more) = run_once(&mut session, params, on_update).await;
        warnings.extend(more);
        let mut second = second;
        second.ok = report_run.ok && second.ok;
        first_run = Some(report_run);
        report_run = second;
        resumed_with = Some(resume);
    }
    RunReport {
        run: report_run,
        resumed_with,
        first_run,
        mode: "run".into(),
        transport: transport.into(),
        thread_id: session.thread_id().to_owned(),
        messages: serde_json::to_value(session.messages().collect::<Vec<_>>())
            .unwrap_or(Value::Null),
        state: session.state().clone(),
        pending_interrupts: session.pending_interrupts().to_vec(),
        warnings,
        console_errors: Vec::new(),
        total_ms: ms(t0),
        unhandled_rejections: Vec::new(),
    }
}

/// [`Session::load`] within `timeout`; a thread the server does not know (404) or a server
/// without thread routes (405) gives an empty session with that id. The error comes with
/// the HTTP status when there was one.
async fn load_thread(
    agent: HttpAgent,
    thread_id: &str,
    timeout: Duration,
) -> Result<Session, (String, Option<u16>)> {
    let fallback = agent.clone();
    match tokio::time::timeout(timeout, Session::load(agent, thread_id)).await {
        Err(_) => Err((format!("no history after {} ms", timeout.as_millis()), None)),
        Ok(Ok(session)) => Ok(session),
        Ok(Err(e)) if matches!(e.status(), Some(404 | 405)) => {
            Ok(Session::with_thread_id(fallback, thread_id))
        }
        Ok(Err(e)) => {
            let status = e.status();
            Err((e.to_string(), status))
        }
    }
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

fn ms(since: Instant) -> f64 {
    (since.elapsed().as_secs_f64() * 10_000.0).round() / 10.0
}

/// The report of a run that failed before it was sent: no messages, the given state.
fn failed_report(
    run: RunPart,
    transport: &str,
    thread_id: String,
    state: Option<Value>,
    t0: Instant,
) -> RunReport {
    RunReport {
        run,
        resumed_with: None,
        first_run: None,
        mode: "run".into(),
        transport: transport.into(),
        thread_id,
        messages: Value::Array(Vec::new()),
        state: state.unwrap_or_else(empty_object),
        pending_interrupts: Vec::new(),
        warnings: Vec::new(),
        console_errors: Vec::new(),
        total_ms: ms(t0),
        unhandled_rejections: Vec::new(),
    }
}

fn failed_part(error: String, t0: Instant) -> RunPart {
    RunPart {
        ok: false,
        error: Some(error),
        http_status: None,
        content_type: None,
        terminal: None,
        status: "failed".into(),
        outcome: None,
        interrupts: None,
        pending_tool_call_ids: None,
        run_error: None,
        result: None,
        events: Vec::new(),
        duration_ms: ms(t0),
    }
}

async fn run_once(
    session: &mut Session,
    params: RunParams,
    on_update: &mut OnUpdate<'_>,
) -> (RunPart, Vec<String>) {
    let t0 = Instant::now();
    let mut run = match session.run_with(params) {
        Ok(run) => run,
        Err(e) => return (failed_part(e.to_string(), t0), Vec::new()),
    };
    let mut events = Vec::new();
    let mut outcome = None;
    let mut interrupts = None;
    let mut pending_tool_call_ids = None;
    let mut run_error = None;
    let mut result = None;
    while let Some(update) = run.next().await {
        on_update(&update, run.session());
        match &update {
            Update::Event(e) => {
                events.push(e.type_str().to_owned());
                if let Event::RunError(e) = e {
                    run_error = Some(RunErrorReport {
                        message: e.message.clone(),
                        code: e.code.clone(),
                    });
                }
            }
            Update::RunFinished { status } => match status {
                RunStatus::Finished {
                    result: r,
                    pending_tool_call_ids: pending,
                } => {
                    outcome = Some("success".to_owned());
                    result = r.clone();
                    if !pending.is_empty() {
                        pending_tool_call_ids = Some(pending.clone());
                    }
                }
                RunStatus::Interrupted { interrupts: list } => {
                    outcome = Some("interrupt".to_owned());
                    interrupts = Some(list.clone());
                }
                RunStatus::Cancelled => outcome = Some("cancelled".to_owned()),
                _ => {}
            },
            _ => {}
        }
    }
    let info = run.response_info();
    let mut warnings = info.warnings;
    warnings.extend(run.apply_warnings().iter().cloned());
    drop(run);
    let status = session.status().cloned().unwrap_or(RunStatus::Incomplete);
    let terminal = events
        .iter()
        .rev()
        .find(|t| *t == "RUN_FINISHED" || *t == "RUN_ERROR")
        .cloned();
    let error = status.error().map(|e| e.to_string());
    let part = RunPart {
        ok: error.is_none(),
        error,
        http_status: info.status,
        content_type: info.content_type.clone(),
        terminal,
        status: status.name().to_owned(),
        outcome,
        interrupts,
        pending_tool_call_ids,
        run_error,
        result,
        events,
        duration_ms: ms(t0),
    };
    (part, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_reads_client_mjs_inputs() {
        let spec = RunSpec::from_json(
            r#"{"threadId":"t","messages":[{"id":"u","role":"user","content":"x"}],"tools":[{"name":"a","description":"d","parameters":{}}],"forwardedProps":{"k":1}}"#,
        )
        .unwrap();
        assert_eq!(spec.thread_id.as_deref(), Some("t"));
        assert_eq!(spec.messages.unwrap().len(), 1);
        assert_eq!(spec.tools.unwrap()[0].name, "a");
        assert!(RunSpec::from_json("[").is_err());
    }

    #[tokio::test]
    async fn an_unreachable_agent_gives_a_failed_report() {
        // Port 9 (discard) on loopback: nothing listens there in tests.
        let options = RunOptions {
            timeout: Duration::from_secs(5),
            ..RunOptions::default()
        };
        let report = run_report("http://127.0.0.1:9/agent", &options).await;
        assert!(!report.run.ok);
        assert_eq!(report.run.status, "failed");
        assert!(report.run.error.as_deref().unwrap().contains("127.0.0.1:9"));
        let v = report.to_value();
        assert_eq!(v["messages"][0]["content"], "hello");
        assert_eq!(v["events"], serde_json::json!([]));
        assert_eq!(report.exit_code(), 1);
    }
}
