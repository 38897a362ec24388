//! `agui check URL`: a conformance checker for any AG-UI server. It sends a set of run
//! inputs (a plain message, front-end tools, an invitation to interrupt, a history with a
//! tool message, a state, a protobuf request), follows up where the protocol says a client
//! would (answering an interrupt with `resume`, answering pending front-end tool calls),
//! verifies every stream with the engine, and reports every violation with the input's name,
//! the event's index and type, and the rule — plus the HTTP-level problems: status, content
//! type, a stream that breaks off or ends without a terminal event.
//!
//! The report comes in four forms (`--format`): readable text, JSON, JUnit XML and SARIF
//! 2.1.0 (for CI: each violation with its rule id, the input and event index, and a link to
//! the rule). Exit codes: 0 no violation, 1 violations, 2 nothing to check (a bad URL, or no
//! input got a 2xx answer).

use crate::inspect::{error_message, excerpt, failing_type};
use crate::net::fresh_id;
use crate::term::{Paint, sgr};
use crate::wire::{self, Failure, Request, Response};
use aguikit_core::engine::apply::{Applier, RunEnd};
use aguikit_core::message::{AssistantMessage, ToolCall};
use aguikit_core::{AgentCapabilities, Message, ResumeEntry, Role, RunAgentInput, Tool};
use serde::Serialize;
use serde_json::{Value, json};
use std::process::ExitCode;
use std::time::Duration;

/// The forms of the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ReportFormat {
    /// Readable text.
    #[default]
    Human,
    /// One JSON document ([`CheckReport`]).
    Json,
    /// JUnit XML: a test case per run, a failure per run with violations.
    Junit,
    /// SARIF 2.1.0: a result per violation, the rules with their help links.
    Sarif,
}

/// Options of `agui check`.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// The agent's endpoint.
    pub url: String,
    /// The report's form.
    pub format: ReportFormat,
    /// Where rule ids link to (`URL#ID`) in JUnit and SARIF reports; `None`: the checked
    /// server's `/rules` when it serves the rules, else [`crate::rules::RULES_URL`].
    pub rules_url: Option<String>,
    /// Extra request headers.
    pub headers: Vec<(String, String)>,
    /// Limit of each run.
    pub timeout: Duration,
    /// When to colour.
    pub color: crate::term::ColorChoice,
}

/// One problem found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Violation {
    /// The run it was found in (an input's name, or `NAME → resume` for a follow-up).
    pub input: String,
    /// The 0-based index of the input event, when it is about one (equal to the number of
    /// events for a problem at the end of the stream).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    /// That event's type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_type: Option<String>,
    /// The engine's rule label (`V13`, `CH6`, `schema`, ...) or an HTTP-level check
    /// (`http-status`, `content-type`, `no-terminal`, `empty-stream`, `not-an-object`,
    /// `transport`, `framing`, `timeout`, `request`).
    pub rule: String,
    /// What is wrong.
    pub message: String,
}

/// What one run showed.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunCheck {
    /// The input's name.
    pub name: String,
    /// What the input exercises.
    pub description: String,
    /// Whether protobuf was asked for.
    pub proto: bool,
    /// HTTP status.
    pub http_status: Option<u16>,
    /// Content type.
    pub content_type: Option<String>,
    /// Events received.
    pub events: usize,
    /// The terminal event of the last run in the stream.
    pub terminal: Option<String>,
    /// `success`, `interrupt` or `cancelled` when the stream verified and finished.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// How long it took.
    pub duration_ms: u64,
    /// The problems.
    pub violations: Vec<Violation>,
    /// Remarks that are not violations (dropped unknown events, SSE for a protobuf request).
    pub notes: Vec<String>,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckReport {
    /// The endpoint checked.
    pub url: String,
    /// No violation at all.
    pub ok: bool,
    /// Every run, in order.
    pub runs: Vec<RunCheck>,
    /// Every violation, in order.
    pub violations: Vec<Violation>,
    /// What the agent declares at `GET URL/capabilities`, and what was made of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<CapabilitiesCheck>,
}

/// The agent's capabilities (`GET URL/capabilities`), as `agui check` read them. What they
/// declare is compared with what the runs show: a contradiction is a violation (rule
/// `capabilities`) of the run that showed it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CapabilitiesCheck {
    /// Where they were asked for.
    pub url: String,
    /// The answer's status (`None`: no answer).
    pub http_status: Option<u16>,
    /// The document, when it is an `AgentCapabilities` object.
    pub declared: Option<Value>,
    /// A document that cannot be read (rule `capabilities`).
    pub violations: Vec<Violation>,
    /// Remarks: none served, no answer.
    pub notes: Vec<String>,
}

/// The name violations of the capabilities document itself carry as their input.
const CAPABILITIES: &str = "capabilities";

/// One input of the check.
struct Case {
    name: String,
    description: &'static str,
    input: RunAgentInput,
    proto: bool,
}

fn user(text: &str) -> Message {
    Message::user(fresh_id(), text)
}

fn frontend_tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "get_weather",
            "Returns the weather in a city.",
            json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        ),
        Tool::new(
            "confirm_action",
            "Asks the user to confirm an action.",
            json!({"type": "object", "properties": {"action": {"type": "string"}}}),
        ),
    ]
}

fn base(messages: Vec<Message>) -> RunAgentInput {
    let mut input = RunAgentInput::new(fresh_id(), fresh_id());
    input.messages = messages;
    input.state = Some(json!({}));
    input.tools = Some(Vec::new());
    input.context = Some(Vec::new());
    input.forwarded_props = Some(json!({}));
    input
}

/// The inputs, in the order they are sent.
fn cases() -> Vec<Case> {
    let mut tools = base(vec![user(
        "What is the weather in Paris? Use one of my tools if you can.",
    )]);
    tools.tools = Some(frontend_tools());

    let call_id = fresh_id();
    let history = base(vec![
        Message::system(fresh_id(), "You are a helpful assistant."),
        user("What is the weather in Paris?"),
        Message::Assistant(AssistantMessage {
            id: fresh_id(),
            tool_calls: Some(vec![ToolCall::new(
                call_id.clone(),
                "get_weather",
                r#"{"city":"Paris"}"#,
            )]),
            ..Default::default()
        }),
        Message::tool(fresh_id(), call_id, r#"{"temperature":18,"sky":"clear"}"#),
        Message::assistant(fresh_id(), "It is 18 °C and clear in Paris."),
        user("Thanks! Say hello."),
    ]);

    let mut state = base(vec![user("count to 3")]);
    state.state = Some(json!({"count": 0, "items": ["a", "b"], "nested": {"flag": true}}));

    vec![
        Case {
            name: "plain".into(),
            description: "one user message",
            input: base(vec![user("hello")]),
            proto: false,
        },
        Case {
            name: "frontend-tools".into(),
            description: "a message with front-end tools",
            input: tools,
            proto: false,
        },
        Case {
            name: INTERRUPT_CASE.into(),
            description: "a request that invites an interrupt (answered with resume if it comes)",
            input: base(vec![user("Please approve this action before you go on.")]),
            proto: false,
        },
        Case {
            name: "history".into(),
            description: "a conversation with a tool call and its tool message",
            input: history,
            proto: false,
        },
        Case {
            name: "state".into(),
            description: "a run input carrying state",
            input: state,
            proto: false,
        },
        Case {
            name: "protobuf".into(),
            description: "a request asking for protobuf (SSE admitted)",
            input: base(vec![user("hello")]),
            proto: true,
        },
    ]
}

/// Runs `agui check`: 0 without violations, 1 with, 2 when the URL is not an absolute
/// http(s) URL (nothing is sent) or when no input got a 2xx answer (nothing listening, every
/// status an error: a wrong URL or a missing token rather than a conformance problem).
pub async fn run(opts: CheckOptions) -> Result<ExitCode, String> {
    let report = check(&opts).await?;
    let rules_url = match (&opts.rules_url, opts.format) {
        (Some(given), _) => given.clone(),
        (None, ReportFormat::Junit | ReportFormat::Sarif) => served_rules(&opts).await,
        (None, _) => crate::rules::RULES_URL.to_owned(),
    };
    let opts = CheckOptions {
        rules_url: Some(rules_url.clone()),
        ..opts
    };
    let rules_url = rules_url.as_str();
    let unreachable = !report.runs.is_empty()
        && report
            .runs
            .iter()
            .all(|r| !r.http_status.is_some_and(|s| (200..300).contains(&s)));
    match opts.format {
        ReportFormat::Human => print_report(&report, Paint::for_stdout(opts.color)),
        ReportFormat::Json => crate::out::outln!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?
        ),
        ReportFormat::Junit => {
            crate::out::out!("{}", crate::check_report::junit(&report, rules_url))
        }
        ReportFormat::Sarif => crate::out::outln!(
            "{}",
            serde_json::to_string_pretty(&crate::check_report::sarif(&report, rules_url))
                .map_err(|e| e.to_string())?
        ),
    }
    Ok(ExitCode::from(if unreachable {
        crate::net::UNREACHABLE
    } else if report.ok {
        0
    } else {
        crate::net::FAILED
    }))
}

/// The rules page of the checked server, `ORIGIN/rules`, when it serves the rules table
/// (`agui serve` does: `GET /rules.json` answers it), else the published
/// [`crate::rules::RULES_URL`]. The probe sends the run's headers, follows no redirect and
/// gives up after 5 seconds.
async fn served_rules(opts: &CheckOptions) -> String {
    let published = crate::rules::RULES_URL.to_owned();
    let Ok(url) = crate::net::check_url(&opts.url) else {
        return published;
    };
    let (Ok(json_url), Ok(page)) = (url.join("/rules.json"), url.join("/rules")) else {
        return published;
    };
    let Ok(client) = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(opts.timeout.min(Duration::from_secs(5)))
        .build()
    else {
        return published;
    };
    let mut request = client.get(json_url);
    for (name, value) in &opts.headers {
        request = request.header(name, value);
    }
    // The table is some 40 KiB: a body past 1 MiB is not it.
    let served = match request.send().await {
        Ok(mut r) if r.status().is_success() => {
            let mut body = Vec::new();
            loop {
                match r.chunk().await {
                    Ok(Some(chunk)) if body.len() + chunk.len() <= 1 << 20 => {
                        body.extend_from_slice(&chunk);
                    }
                    Ok(None) => break serde_json::from_slice::<Value>(&body).ok(),
                    _ => break None,
                }
            }
        }
        _ => None,
    };
    let ours = served.is_some_and(|v| {
        v["rules"]
            .as_array()
            .is_some_and(|rules| rules.iter().any(|r| r["id"] == "schema"))
    });
    if ours { page.to_string() } else { published }
}

/// Sends every input (and the follow-ups) and collects the report; an error, with nothing
/// sent, when the URL is not an absolute http(s) URL.
pub async fn check(opts: &CheckOptions) -> Result<CheckReport, String> {
    let url = crate::net::check_url(&opts.url)?;
    let client = wire::client()?;
    let (capabilities, declared) = fetch_capabilities(&client, opts, &url).await;
    let mut runs = Vec::new();
    for case in cases() {
        let (run, follow_up) = check_one(&client, opts, &url, &case, declared.as_ref()).await;
        runs.push(run);
        if let Some(next) = follow_up {
            let (run, _) = check_one(&client, opts, &url, &next, declared.as_ref()).await;
            runs.push(run);
        }
    }
    let violations: Vec<Violation> = capabilities
        .violations
        .iter()
        .chain(runs.iter().flat_map(|r| &r.violations))
        .cloned()
        .collect();
    Ok(CheckReport {
        url: opts.url.clone(),
        ok: violations.is_empty(),
        runs,
        violations,
        capabilities: Some(capabilities),
    })
}

/// `GET URL/capabilities` (the agent's URL with `/capabilities` after its path, its query
/// kept), with the run's headers: what was made of it, and the capabilities when the
/// document is an `AgentCapabilities` object. None served (a status other than 2xx, no
/// answer) is a note: AG-UI 1.0 defines the shape, not the route.
async fn fetch_capabilities(
    client: &reqwest::Client,
    opts: &CheckOptions,
    url: &reqwest::Url,
) -> (CapabilitiesCheck, Option<AgentCapabilities>) {
    let mut at = url.clone();
    if let Ok(mut path) = at.path_segments_mut() {
        path.pop_if_empty().push("capabilities");
    }
    let mut check = CapabilitiesCheck {
        url: at.to_string(),
        http_status: None,
        declared: None,
        violations: Vec::new(),
        notes: Vec::new(),
    };
    let mut request = client
        .get(at.clone())
        .timeout(opts.timeout)
        .header(reqwest::header::ACCEPT, "application/json");
    for (name, value) in &opts.headers {
        request = request.header(name, value);
    }
    let mut response = match request.send().await {
        Ok(r) => r,
        Err(e) => {
            check.notes.push(format!(
                "no answer to GET {at}: {}",
                aguikit_core::fmt::with_causes(&e)
            ));
            return (check, None);
        }
    };
    let status = response.status();
    check.http_status = Some(status.as_u16());
    if !status.is_success() {
        check.notes.push(format!(
            "GET {at} answered HTTP {}: the agent declares no capabilities there (AG-UI 1.0 defines their shape, not a route; agui serve serves them at GET PATH/capabilities)",
            status.as_u16()
        ));
        return (check, None);
    }
    // A capabilities document is small: past 1 MiB it is not one.
    let mut body = Vec::new();
    let mut too_big = false;
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) if body.len() + chunk.len() <= 1 << 20 => {
                body.extend_from_slice(&chunk);
            }
            Ok(Some(_)) => {
                too_big = true;
                break;
            }
            Ok(None) => break,
            Err(e) => {
                check.notes.push(format!(
                    "GET {at}: the body broke off: {}",
                    aguikit_core::fmt::with_causes(&e)
                ));
                return (check, None);
            }
        }
    }
    let parsed = if too_big {
        Err("the body is over 1 MiB".to_owned())
    } else {
        serde_json::from_slice::<Value>(&body)
            .map_err(|e| format!("not JSON: {e}"))
            .and_then(|v| {
                serde_json::from_value::<AgentCapabilities>(v.clone())
                    .map(|c| (v, c))
                    .map_err(|e| format!("not an AgentCapabilities object: {e}"))
            })
    };
    match parsed {
        Ok((v, c)) => {
            check.declared = Some(v);
            (check, Some(c))
        }
        Err(why) => {
            check.violations.push(Violation {
                input: CAPABILITIES.into(),
                index: None,
                event_type: None,
                rule: CAPABILITIES.into(),
                message: format!("GET {at}: {why}"),
            });
            (check, None)
        }
    }
}

/// Where what `declared` says contradicts the response of `case`: protobuf declared (or
/// denied) and not served (or served) to the protobuf request; features declared absent
/// whose events came.
fn contradictions(
    declared: &AgentCapabilities,
    case: &Case,
    response: &Response,
    problem: &mut impl FnMut(Option<usize>, Option<String>, &str, String),
) {
    let binary = declared.transport.as_ref().and_then(|t| t.http_binary);
    if case.proto
        && let (Some(said), Some(served)) = (binary, response.encoding())
        && said != served
    {
        problem(
            None,
            None,
            CAPABILITIES,
            if said {
                "declares transport.httpBinary: true, but answered the protobuf request with SSE"
                    .into()
            } else {
                "declares transport.httpBinary: false, but answered the protobuf request with protobuf".into()
            },
        );
    }
    let denied: [(&str, Option<bool>, &str); 5] = [
        (
            "REASONING_",
            declared.reasoning.as_ref().and_then(|r| r.supported),
            "reasoning.supported",
        ),
        (
            "SUBAGENT_",
            declared.multi_agent.as_ref().and_then(|m| m.supported),
            "multiAgent.supported",
        ),
        (
            "STATE_SNAPSHOT",
            declared.state.as_ref().and_then(|s| s.snapshots),
            "state.snapshots",
        ),
        (
            "STATE_DELTA",
            declared.state.as_ref().and_then(|s| s.deltas),
            "state.deltas",
        ),
        (
            "TOOL_CALL_START",
            declared.tools.as_ref().and_then(|t| t.supported),
            "tools.supported",
        ),
    ];
    for (prefix, said, field) in denied {
        if said != Some(false) {
            continue;
        }
        let first = response.events.iter().enumerate().find_map(|(i, r)| {
            let ty = r.event.as_ref().ok().and_then(wire::event_type)?;
            ty.starts_with(prefix).then(|| (i, ty.to_owned()))
        });
        if let Some((i, ty)) = first {
            problem(
                Some(i),
                Some(ty.clone()),
                CAPABILITIES,
                format!("declares {field}: false, but sent {ty}"),
            );
        }
    }
}

/// Whether `declared` contradicts how the run inviting an interrupt ended (`outcome`).
fn interrupt_contradiction(declared: &AgentCapabilities, outcome: Option<&str>) -> Option<String> {
    let said = declared
        .human_in_the_loop
        .as_ref()
        .and_then(|h| h.interrupts)?;
    let got = outcome == Some("interrupt");
    match (said, got) {
        (true, false) => Some(format!(
            "declares humanInTheLoop.interrupts: true, but the run inviting an interrupt ended with outcome {} (no interrupt)",
            outcome.unwrap_or("none")
        )),
        (false, true) => Some(
            "declares humanInTheLoop.interrupts: false, but ended the run with an interrupt".into(),
        ),
        _ => None,
    }
}

async fn check_one(
    client: &reqwest::Client,
    opts: &CheckOptions,
    url: &reqwest::Url,
    case: &Case,
    declared: Option<&AgentCapabilities>,
) -> (RunCheck, Option<Case>) {
    let request = Request {
        url: url.clone(),
        input: case.input.clone(),
        proto: case.proto,
        headers: opts.headers.clone(),
        timeout: opts.timeout,
    };
    let response = wire::fetch(client, &request, |_| {}).await;
    let mut run = RunCheck {
        name: case.name.clone(),
        description: case.description.to_owned(),
        proto: case.proto,
        http_status: response.status,
        content_type: response.content_type.clone(),
        events: response.events.len(),
        terminal: response.terminal().map(str::to_owned),
        outcome: None,
        duration_ms: response.elapsed.as_millis() as u64,
        violations: Vec::new(),
        notes: Vec::new(),
    };
    let mut problem = |index: Option<usize>, event_type: Option<String>, rule: &str, message| {
        run.violations.push(Violation {
            input: case.name.clone(),
            index,
            event_type,
            rule: rule.to_owned(),
            message,
        })
    };
    http_problems(&response, case.proto, &mut problem);
    if !response.status_ok() {
        return (run, None);
    }
    // Contradicted capabilities are the run's violations, but they do not stop the check
    // of the run as a broken stream does: they are added at the end.
    let mut contradicted = Vec::new();
    if let Some(declared) = declared {
        contradictions(
            declared,
            case,
            &response,
            &mut |index, event_type, rule: &str, message| {
                contradicted.push(Violation {
                    input: case.name.clone(),
                    index,
                    event_type,
                    rule: rule.to_owned(),
                    message,
                })
            },
        );
    }
    let history = Applier::with_history(
        case.input.messages.clone(),
        case.input.state.clone().unwrap_or_else(|| json!({})),
    );
    let raw = response.raw_events();
    let (pipeline, error) = wire::verify_events(&raw, history, true);
    let n = response.events.len();
    if let Some(e) = &error {
        let ty = if e.index >= n {
            "end of stream".to_owned()
        } else {
            failing_type(e, &raw)
        };
        problem(Some(e.index), Some(ty), e.rule(), error_message(e));
    }
    // A2UI surfaces (`a2ui-surface` activities): their errors are violations with the A2UI
    // rule ids, their warnings notes.
    let mut a2ui = aguikit_a2ui::agui::ActivityFolder::default();
    for (i, r) in response.events.iter().enumerate() {
        let Ok(v) = &r.event else { continue };
        if v.get("activityType").and_then(Value::as_str) != Some(aguikit_a2ui::agui::ACTIVITY_TYPE)
            || error.as_ref().is_some_and(|e| e.index <= i)
        {
            continue;
        }
        let Ok(event) = serde_json::from_value::<aguikit_core::Event>(v.clone()) else {
            continue;
        };
        let ty = v.get("type").and_then(Value::as_str).map(str::to_owned);
        for f in a2ui.push(i, &event) {
            let place = [
                f.violation.surface_id.as_deref(),
                f.violation.component_id.as_deref(),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" / ");
            let message = format!("{} ({place} {})", f.violation.message, f.violation.path);
            if f.violation.is_error() {
                problem(Some(i), ty.clone(), f.violation.rule, message);
            } else {
                run.notes
                    .push(format!("event {i}: {}: {message}", f.violation.rule));
            }
        }
    }
    // The engine drops them as the reference pipeline does, but the official client's
    // transport rejects them, and no event may be anything but an object.
    for (i, r) in response.events.iter().enumerate() {
        if let Ok(v) = &r.event
            && !v.is_object()
            && !v.is_null()
            && error.as_ref().is_none_or(|e| e.index != i)
        {
            problem(
                Some(i),
                None,
                "not-an-object",
                format!(
                    "the event is not a JSON object: {}",
                    excerpt(&v.to_string(), 80)
                ),
            );
        }
    }
    if response.failure.is_none() && n > 0 && response.terminal().is_none() {
        problem(
            Some(n),
            Some("end of stream".into()),
            "no-terminal",
            "the stream ended without RUN_FINISHED or RUN_ERROR for its run".into(),
        );
    }
    if response.failure.is_none() && n == 0 {
        problem(
            None,
            None,
            "empty-stream",
            "the response carried no event at all".into(),
        );
    }
    run.notes.extend(ids_notes(&response, &case.input));
    if case.proto && response.encoding() == Some(false) {
        run.notes
            .push("answered the protobuf request with SSE (allowed: SSE was admitted)".into());
    }
    for (i, w) in pipeline.warnings() {
        run.notes.push(format!("event {i}: {w}"));
    }
    for w in pipeline.applier().warnings() {
        run.notes.push(format!("reducer: {w}"));
    }
    if error.is_some() || !run.violations.is_empty() {
        run.violations.extend(contradicted);
        return (run, None);
    }
    let applier = pipeline.into_applier();
    let follow_up = match applier.last_run_end() {
        Some(RunEnd::Interrupt { interrupts }) => {
            run.outcome = Some("interrupt".into());
            let resume = interrupts
                .iter()
                .map(|i| ResumeEntry::resolved(i.id.clone(), json!({"approved": true})))
                .collect();
            Some(follow(
                case,
                applier,
                "resume",
                "the resume run answering the interrupt",
                |input| input.resume = Some(resume),
            ))
        }
        Some(RunEnd::Success {
            pending_tool_call_ids,
            ..
        }) => {
            run.outcome = Some("success".into());
            let pending = pending_tool_call_ids.clone();
            (!pending.is_empty()).then(|| {
                follow(
                    case,
                    applier,
                    "tool results",
                    "the run answering the pending tool calls with tool messages",
                    |input| {
                        for id in pending {
                            input
                                .messages
                                .push(Message::tool(fresh_id(), id, r#"{"ok":true}"#));
                        }
                    },
                )
            })
        }
        Some(RunEnd::Cancelled) => {
            run.outcome = Some("cancelled".into());
            None
        }
        None => None,
    };
    run.violations.extend(contradicted);
    if case.name == INTERRUPT_CASE
        && let Some(message) =
            declared.and_then(|d| interrupt_contradiction(d, run.outcome.as_deref()))
    {
        run.violations.push(Violation {
            input: case.name.clone(),
            index: None,
            event_type: None,
            rule: CAPABILITIES.into(),
            message,
        });
    }
    (run, follow_up)
}

/// The input that invites an interrupt.
const INTERRUPT_CASE: &str = "interrupt";

/// The next run of the same thread, with the conversation so far.
fn follow(
    case: &Case,
    applier: Applier,
    what: &str,
    description: &'static str,
    edit: impl FnOnce(&mut RunAgentInput),
) -> Case {
    let (messages, state, _) = applier.into_parts();
    let mut input = case.input.clone();
    input.run_id = fresh_id();
    // Activity messages never go to an agent.
    input.messages = messages
        .into_iter()
        .filter(|m| m.role() != Role::Activity)
        .collect();
    input.state = Some(state);
    input.resume = None;
    edit(&mut input);
    Case {
        name: format!("{} → {what}", case.name),
        description,
        input,
        proto: case.proto,
    }
}

/// Status, content type, and a body that broke off.
fn http_problems(
    response: &Response,
    proto: bool,
    problem: &mut impl FnMut(Option<usize>, Option<String>, &str, String),
) {
    if let Some(Failure::Request(m)) = &response.failure {
        problem(None, None, "request", format!("no response: {m}"));
        return;
    }
    if let Some(status) = response.status
        && !response.status_ok()
    {
        let body = excerpt(response.body_excerpt.trim(), 200);
        problem(
            None,
            None,
            "http-status",
            if body.is_empty() {
                format!("HTTP {status} instead of 2xx")
            } else {
                format!("HTTP {status} instead of 2xx: {body}")
            },
        );
        return;
    }
    match response.encoding() {
        None => problem(
            None,
            None,
            "content-type",
            format!(
                "content type {} is not {} or {}",
                response
                    .content_type
                    .as_deref()
                    .map(|c| format!("{c:?}"))
                    .unwrap_or_else(|| "absent".into()),
                wire::SSE,
                wire::PROTO
            ),
        ),
        Some(true) if !proto => problem(
            None,
            None,
            "content-type",
            format!("answered {} to a request accepting only SSE", wire::PROTO),
        ),
        _ => {}
    }
    let n = response.events.len();
    match &response.failure {
        Some(Failure::Transport(m)) => problem(
            None,
            None,
            "transport",
            format!("the connection broke after {n} events: {m}"),
        ),
        Some(Failure::Framing(m)) => problem(
            None,
            None,
            "framing",
            format!(
                "the bytes after event {} are not a valid stream: {m}",
                n.saturating_sub(1)
            ),
        ),
        Some(Failure::Timeout(d)) => problem(
            None,
            None,
            "timeout",
            format!("no end of stream after {} ms ({n} events)", d.as_millis()),
        ),
        _ => {}
    }
}

/// `RUN_STARTED` ids that differ from the request's.
fn ids_notes(response: &Response, input: &RunAgentInput) -> Vec<String> {
    let Some(started) = response.events.iter().find_map(|r| {
        r.event
            .as_ref()
            .ok()
            .filter(|v| wire::event_type(v) == Some("RUN_STARTED"))
    }) else {
        return Vec::new();
    };
    let mut notes = Vec::new();
    for (field, sent) in [("threadId", &input.thread_id), ("runId", &input.run_id)] {
        if let Some(got) = started.get(field).and_then(Value::as_str)
            && got != sent
        {
            notes.push(format!(
                "RUN_STARTED.{field} is {got:?}, the request's is {sent:?}"
            ));
        }
    }
    notes
}

fn print_report(report: &CheckReport, paint: Paint) {
    crate::out::outln!(
        "{}",
        paint.paint(sgr::BOLD, &format!("agui check {}", report.url))
    );
    if let Some(c) = &report.capabilities {
        let line = match &c.declared {
            Some(Value::Object(declared)) if declared.is_empty() => {
                "capabilities: served, declaring nothing".to_owned()
            }
            Some(Value::Object(declared)) => format!(
                "capabilities: {}",
                declared.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
            _ if !c.violations.is_empty() => "capabilities: unreadable".to_owned(),
            _ => "capabilities: none served".to_owned(),
        };
        crate::out::outln!("  {}", paint.paint(sgr::DIM, &line));
        for v in &c.violations {
            crate::out::outln!(
                "      {}",
                paint.paint(sgr::RED, &format!("{}: {}", v.rule, v.message))
            );
        }
        for n in &c.notes {
            crate::out::outln!("      {}", paint.paint(sgr::YELLOW, &format!("note: {n}")));
        }
    }
    let width = report
        .runs
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(0);
    for run in &report.runs {
        let mark = if run.violations.is_empty() {
            paint.paint(sgr::GREEN, "✓")
        } else {
            paint.paint(sgr::BOLD_RED, "✗")
        };
        let mut facts = Vec::new();
        match run.http_status {
            Some(s) => facts.push(format!(
                "HTTP {s} {}",
                run.content_type.as_deref().unwrap_or("(no content type)")
            )),
            None => facts.push("no response".into()),
        }
        facts.push(format!(
            "{} event{}",
            run.events,
            if run.events == 1 { "" } else { "s" }
        ));
        if let Some(t) = &run.terminal {
            facts.push(t.clone());
        }
        if let Some(o) = &run.outcome {
            facts.push(o.clone());
        }
        facts.push(format!("{} ms", run.duration_ms));
        let name = format!("{:<width$}", run.name);
        crate::out::outln!(
            "  {mark} {name}  {}",
            paint.paint(sgr::DIM, &facts.join(" · "))
        );
        for v in &run.violations {
            let place = match (v.index, &v.event_type) {
                (Some(i), Some(t)) => format!("event {i} {t}: "),
                (Some(i), None) => format!("event {i}: "),
                _ => String::new(),
            };
            crate::out::outln!(
                "      {}",
                paint.paint(sgr::RED, &format!("{place}{}: {}", v.rule, v.message))
            );
        }
        for n in &run.notes {
            crate::out::outln!("      {}", paint.paint(sgr::YELLOW, &format!("note: {n}")));
        }
    }
    let n = report.violations.len();
    let failing = report
        .runs
        .iter()
        .filter(|r| !r.violations.is_empty())
        .count();
    let line = if n == 0 {
        paint.paint(
            sgr::GREEN,
            &format!("{} runs, no violation", report.runs.len()),
        )
    } else {
        paint.paint(
            sgr::BOLD_RED,
            &format!(
                "{} runs, {n} violation{} in {failing} run{}",
                report.runs.len(),
                if n == 1 { "" } else { "s" },
                if failing == 1 { "" } else { "s" }
            ),
        )
    };
    crate::out::outln!("{line}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_valid_run_inputs_with_distinct_names() {
        let cases = cases();
        let mut names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), cases.len());
        for c in &cases {
            let json = serde_json::to_value(&c.input).unwrap();
            let back: RunAgentInput = serde_json::from_value(json).unwrap();
            assert_eq!(back, c.input);
        }
        let history = cases.iter().find(|c| c.name == "history").unwrap();
        assert!(
            history
                .input
                .messages
                .iter()
                .any(|m| m.role() == Role::Tool)
        );
        assert!(cases.iter().any(|c| c.proto));
        assert!(cases.iter().any(|c| !c.input.tools().is_empty()));
        assert!(cases.iter().any(|c| c.input.state != Some(json!({}))));
    }

    #[test]
    fn http_problems_name_status_type_and_break() {
        let mut found = Vec::new();
        let response = Response {
            status: Some(200),
            content_type: Some("text/plain".into()),
            failure: Some(Failure::Transport("reset".into())),
            ..Response::default()
        };
        http_problems(&response, false, &mut |_, _, rule: &str, _| {
            found.push(rule.to_owned())
        });
        assert_eq!(found, ["content-type", "transport"]);
        found.clear();
        let response = Response {
            status: Some(500),
            body_excerpt: "{\"error\":\"x\"}".into(),
            ..Response::default()
        };
        http_problems(&response, false, &mut |_, _, rule: &str, m: String| {
            found.push(format!("{rule} {m}"))
        });
        assert_eq!(
            found,
            ["http-status HTTP 500 instead of 2xx: {\"error\":\"x\"}"]
        );
    }
}
