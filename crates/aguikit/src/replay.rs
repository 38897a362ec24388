//! `agui replay FILE URL`: sends a recording's run inputs to an agent again and compares
//! what comes back with what was recorded, run by run, as `agui diff` compares two streams.
//!
//! Each recorded run (from its `RUN_STARTED` to the next) is sent as one request, on a
//! thread of its own. Its input is the recorded one (`RUN_STARTED.input`: tools,
//! context, state, forwarded props, resume), with the messages of the conversation as they
//! stood when the run started: the recording folded up to and with that `RUN_STARTED` (a
//! stored thread's `RUN_STARTED` echoes only the messages its thread lacked). A run
//! recorded without `input` is sent the messages folded before it, the state folded before
//! it, and no tools or context; the report says so.

use crate::diff::{CompareArgs, Stream, report_json, report_text};
use crate::net::{RequestArgs, fresh_id};
use crate::term::Paint;
use crate::wire::{self, Request};
use aguikit_core::RunAgentInput;
use aguikit_core::engine::pipeline::Pipeline;
use serde_json::{Value, json};
use std::process::ExitCode;

/// What `agui replay` sends and compares, for its `--help`.
pub const AFTER_HELP: &str = "\
What is sent:
  Each recorded run (from a RUN_STARTED to the next) as one request, in order, each on a
  fresh thread of its own (agui-replay-...-N, or with --thread ID: ID-N; ID itself for a
  recording of one run): the recorded RUN_STARTED.input (tools, context, state,
  forwardedProps, resume; no parentRunId) with the messages the conversation held when the
  run started (the recording folded up to and with that RUN_STARTED). A run
  recorded without input is sent the messages and state folded before it, no tools and no
  context (the report notes it): record against a server that echoes the input, as
  `agui serve` with a store does, to replay exactly.

What is compared:
  Each run's events as recorded with the events that came back, as `agui diff` compares
  them (the first divergence, then the folds, each after the recorded runs before it);
  RUN_STARTED's input and parentRunId are left out on both sides (what was sent).

Exit codes (as diff's):
  0  every run came back equal (with --folded: folded alike)
  1  a run differs
  2  usage or read problems, no connection, an HTTP status other than 2xx";

/// `agui replay`'s arguments.
#[derive(clap::Args)]
pub struct ReplayArgs {
    /// The recording (any format `agui decode` reads; `-` for standard input).
    pub file: String,
    /// The agent's endpoint.
    pub url: String,
    /// The threads the runs are sent on: ID-1, ID-2... (ID itself for a recording of one
    /// run; default: a fresh `agui-replay-...` id).
    #[arg(long)]
    pub thread: Option<String>,
    /// Ask for protobuf instead of SSE.
    #[arg(long)]
    pub proto: bool,
    #[command(flatten)]
    pub compare: CompareArgs,
    #[command(flatten)]
    pub request: RequestArgs,
    #[command(flatten)]
    pub stream: crate::stream::StreamOptions,
}

/// One recorded run: its place in the recording and its input as rebuilt.
#[derive(Debug)]
struct Planned {
    /// From 1.
    number: usize,
    /// The recorded run id (`RUN_STARTED.runId`).
    run_id: String,
    /// Where its events are in the recording.
    range: std::ops::Range<usize>,
    /// What is sent (thread and run ids set when sending).
    input: RunAgentInput,
    /// What the report should know about how the input was made.
    notes: Vec<String>,
}

/// Runs `agui replay`: 0 every run equal, 1 one differs, 2 usage, read or connection
/// problems.
pub fn run(args: ReplayArgs) -> Result<ExitCode, String> {
    let recording = crate::diff::read_recording(&args.file, args.stream.max_frame_bytes)?;
    let url = crate::net::check_url(&args.url)?;
    let (headers, timeout) = args.request.resolve()?;
    let plans = plan(&recording.events)?;
    let thread = args
        .thread
        .clone()
        .unwrap_or_else(|| format!("agui-replay-{}", fresh_id()));
    let paint = Paint::for_stdout(args.compare.color);
    let options = args.compare.options();
    let outcome = crate::run_async_on(1, async {
        let client = wire::client()?;
        let mut runs = Vec::new();
        for p in &plans {
            let mut input = p.input.clone();
            // Each run on a thread of its own, which then holds exactly the recorded
            // conversation before it (on one thread, the replayed replies would be there
            // beside the recorded ones); no parent run in another thread.
            input.thread_id = if plans.len() == 1 {
                thread.clone()
            } else {
                format!("{thread}-{}", p.number)
            };
            input.run_id = fresh_id();
            input.parent_run_id = None;
            for note in &p.notes {
                eprintln!("agui replay: run {}: {note}", p.number);
            }
            let request = Request {
                url: url.clone(),
                input: input.clone(),
                proto: args.proto,
                headers: headers.clone(),
                timeout,
            };
            let response = wire::fetch(&client, &request, |_| {}).await;
            if !response.status_ok() {
                let why = match (&response.failure, response.status) {
                    (Some(f), _) => f.to_string(),
                    (None, Some(s)) => format!(
                        "HTTP {s}: {}",
                        crate::inspect::excerpt(response.body_excerpt.trim(), 300)
                    ),
                    (None, None) => "no response".into(),
                };
                return Err(format!("run {} was not replayed: {why}", p.number));
            }
            let received: Vec<Value> = response
                .events
                .iter()
                .map(|r| r.event.clone().unwrap_or_else(Value::String))
                .collect();
            let mut notes = p.notes.clone();
            if let Some(f) = &response.failure {
                notes.push(format!("the response ended early: {f}"));
                eprintln!(
                    "agui replay: run {}: the response ended early: {f}",
                    p.number
                );
            }
            runs.push((input, received, notes));
        }
        Ok::<_, String>(runs)
    })?;
    let mut all_equal = true;
    let mut differing = 0usize;
    let mut reports = Vec::new();
    let mut text = String::new();
    let n = plans.len();
    for (p, (input, received, notes)) in plans.iter().zip(outcome) {
        let history = recording.events[..p.range.start].to_vec();
        let recorded = Stream {
            label: format!(
                "recorded run {} ({} of {n}) in {}",
                p.run_id, p.number, recording.label
            ),
            history: history.clone(),
            events: without_input_echo(&recording.events[p.range.clone()]),
        };
        let replayed = Stream {
            label: format!(
                "replayed as run {} of thread {} at {}",
                input.run_id, input.thread_id, args.url
            ),
            history,
            events: without_input_echo(&received),
        };
        let c = aguikit_core::diff::compare(
            aguikit_core::diff::Side {
                history: &recorded.history,
                events: &recorded.events,
            },
            aguikit_core::diff::Side {
                history: &replayed.history,
                events: &replayed.events,
            },
            &options,
        );
        let equal = args.compare.equal(&c);
        all_equal &= equal;
        differing += usize::from(!equal);
        if args.compare.json {
            let mut r = report_json(&recorded, &replayed, &c, equal);
            r["run"] = json!(p.number);
            r["recordedRunId"] = json!(p.run_id);
            r["sentRunId"] = json!(input.run_id);
            r["notes"] = json!(notes);
            reports.push(r);
        } else {
            text.push_str(&format!("== run {} of {n}\n", p.number));
            for note in &notes {
                text.push_str(&format!("   note: {note}\n"));
            }
            text.push_str(&report_text(&recorded, &replayed, &c, &args.compare, paint));
        }
    }
    if args.compare.json {
        let report =
            json!({"equal": all_equal, "thread": thread, "url": args.url, "runs": reports});
        crate::out::outln!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        );
    } else {
        text.push_str(&format!(
            "replay: {n} run(s) sent to {} on thread {thread}: {}\n",
            args.url,
            if all_equal {
                "every one came back equal".to_owned()
            } else {
                format!("{differing} differ")
            }
        ));
        crate::out::out!("{text}");
    }
    Ok(ExitCode::from(if all_equal {
        0
    } else {
        crate::net::FAILED
    }))
}

/// The events with `RUN_STARTED`'s `input` and `parentRunId` left out: the echo of what
/// was sent, which a replay sends otherwise (the whole conversation, no parent run).
fn without_input_echo(events: &[Value]) -> Vec<Value> {
    events
        .iter()
        .map(|e| {
            let mut e = e.clone();
            if e.get("type").and_then(Value::as_str) == Some("RUN_STARTED")
                && let Some(o) = e.as_object_mut()
            {
                o.remove("input");
                o.remove("parentRunId");
            }
            e
        })
        .collect()
}

/// The recording's runs and the input each is sent. A recording without `RUN_STARTED` has
/// nothing to replay.
fn plan(events: &[Value]) -> Result<Vec<Planned>, String> {
    let starts: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.get("type").and_then(Value::as_str) == Some("RUN_STARTED"))
        .map(|(i, _)| i)
        .collect();
    if starts.is_empty() {
        return Err("the recording has no RUN_STARTED: there is no run to replay".into());
    }
    let mut plans = Vec::new();
    // The recording folded so far (events before the current run's RUN_STARTED).
    let mut fold = Pipeline::new();
    let mut folded_to = 0;
    let mut fold_error: Option<String> = None;
    for (k, &start) in starts.iter().enumerate() {
        let end = starts.get(k + 1).copied().unwrap_or(events.len());
        let number = k + 1;
        let started = &events[start];
        let run_id = started
            .get("runId")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let mut notes = Vec::new();
        // The state before the run, then the messages with its RUN_STARTED.
        for e in &events[folded_to..start] {
            push(&mut fold, e, &mut fold_error);
        }
        let state_before = fold.applier().state().clone();
        push(&mut fold, started, &mut fold_error);
        folded_to = start + 1;
        if let Some(e) = &fold_error {
            notes.push(format!(
                "the recording does not fold before this run ({e}): the messages sent are those folded up to there"
            ));
        }
        let recorded = started.get("input").map(|v| {
            serde_json::from_value::<RunAgentInput>(v.clone())
                .map_err(|e| format!("event {start}: RUN_STARTED.input is not a run input: {e}"))
        });
        let mut input = match recorded {
            Some(Ok(input)) => input,
            Some(Err(e)) => return Err(e),
            None => {
                notes.push(
                    "the recording holds no input for this run (RUN_STARTED has no `input`): sent the messages and state folded before it, without tools or context".into(),
                );
                let mut input = RunAgentInput::new("", "");
                input.state = Some(state_before);
                input.tools = Some(Vec::new());
                input.context = Some(Vec::new());
                input
            }
        };
        input.messages = fold.applier().messages().iter().cloned().collect();
        if input.messages.is_empty() {
            notes.push("no message is sent: the recording holds none before this run".into());
        }
        plans.push(Planned {
            number,
            run_id,
            range: start..end,
            input,
            notes,
        });
    }
    Ok(plans)
}

/// Folds `e` into `fold`, remembering the first error (the fold then stays where it was).
fn push(fold: &mut Pipeline, e: &Value, error: &mut Option<String>) {
    if error.is_some() {
        return;
    }
    if let Err(err) = fold.push_value(e.clone()) {
        *error = Some(format!(
            "event {} ({}): {}: {}",
            err.index,
            err.event_type,
            err.rule(),
            err.kind
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(thread: &str, run: &str, input: Option<Value>, reply: &str) -> Vec<Value> {
        let mut started = json!({"type": "RUN_STARTED", "threadId": thread, "runId": run});
        if let Some(i) = input {
            started["input"] = i;
        }
        vec![
            started,
            json!({"type": "TEXT_MESSAGE_START", "messageId": format!("a-{run}"), "role": "assistant"}),
            json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": format!("a-{run}"), "delta": reply}),
            json!({"type": "TEXT_MESSAGE_END", "messageId": format!("a-{run}")}),
            json!({"type": "STATE_SNAPSHOT", "snapshot": {"turn": run}}),
            json!({"type": "RUN_FINISHED", "threadId": thread, "runId": run}),
        ]
    }

    fn said(id: &str, text: &str) -> Value {
        json!({"id": id, "role": "user", "content": text})
    }

    #[test]
    fn inputs_are_rebuilt_with_the_conversation_before_each_run() {
        // A stored thread's echo: run 2 holds only its new message.
        let tools =
            json!([{"name": "search", "description": "d", "parameters": {"type": "object"}}]);
        let mut events = run(
            "t",
            "r1",
            Some(
                json!({"threadId": "t", "runId": "r1", "messages": [said("u1", "hi")], "tools": tools, "context": [], "state": {}}),
            ),
            "hello",
        );
        events.extend(run(
            "t",
            "r2",
            Some(json!({"threadId": "t", "runId": "r2", "parentRunId": "r1", "messages": [said("u2", "more")], "tools": [], "context": [], "state": {"x": 1}})),
            "sure",
        ));
        let plans = plan(&events).unwrap();
        assert_eq!(plans.len(), 2);
        assert_eq!(
            (plans[0].range.clone(), plans[1].range.clone()),
            (0..6, 6..12)
        );
        let ids = |p: &Planned| -> Vec<String> {
            p.input.messages.iter().map(|m| m.id().to_owned()).collect()
        };
        assert_eq!(ids(&plans[0]), ["u1"]);
        assert_eq!(ids(&plans[1]), ["u1", "a-r1", "u2"]);
        assert_eq!(plans[0].input.tools.as_ref().unwrap()[0].name, "search");
        assert_eq!(plans[1].input.state, Some(json!({"x": 1})));
        assert_eq!(plans[1].input.parent_run_id.as_deref(), Some("r1"));
        assert!(
            plans.iter().all(|p| p.notes.is_empty()),
            "{:?}",
            plans[1].notes
        );
    }

    #[test]
    fn runs_recorded_without_input_are_sent_what_was_folded() {
        let mut events = run("t", "r1", None, "hello");
        events.extend(run("t", "r2", None, "again"));
        let plans = plan(&events).unwrap();
        assert!(plans[0].input.messages.is_empty());
        assert_eq!(plans[0].notes.len(), 2, "{:?}", plans[0].notes);
        assert!(plans[0].notes[0].contains("no input"));
        let texts: Vec<_> = plans[1]
            .input
            .messages
            .iter()
            .filter_map(|m| m.text())
            .collect();
        assert_eq!(texts, ["hello"]);
        assert_eq!(plans[1].input.state, Some(json!({"turn": "r1"})));
        assert_eq!(plans[1].input.tools, Some(vec![]));
        assert!(plan(&[json!({"type": "TEXT_MESSAGE_START"})]).is_err());
        let bad = vec![
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "input": {"messages": 3}}),
        ];
        assert!(
            plan(&bad)
                .unwrap_err()
                .contains("event 0: RUN_STARTED.input")
        );
    }

    #[test]
    fn echoes_are_left_out() {
        let events = run(
            "t",
            "r1",
            Some(json!({"threadId": "t", "runId": "r1", "messages": []})),
            "x",
        );
        let stripped = without_input_echo(&events);
        assert!(stripped[0].get("input").is_none());
        assert_eq!(stripped[1], events[1]);
    }
}
