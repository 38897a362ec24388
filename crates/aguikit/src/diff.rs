//! `agui diff A B`: two recordings, or two runs of a stored thread, compared by
//! [`aguikit_core::diff`]: the first divergence of their events, then their folds (messages,
//! state, open interrupts) as unified diffs. `agui replay` reports each run the same way.

use crate::input::EventReader;
use crate::net::RequestArgs;
use crate::term::{ColorChoice, Paint, sgr};
use aguikit_core::diff::{self, Comparison, DiffOptions, Divergence, Folded, Side};
use serde_json::{Value, json};
use std::process::ExitCode;

/// How `agui diff` and `agui replay` read their arguments, for their `--help`.
pub const AFTER_HELP: &str = "\
What is compared:
  The events one by one: the first that differs is shown with its index (from 0), the JSON
  Pointer of the first field that differs in it, and both values. Then each side folded by
  the engine (chunks expanded, verified, applied): its messages, state and open interrupts,
  as unified diffs when they differ. By default ids (threadId, runId, messageId, toolCallId,
  id, ...) are compared by their order of first appearance in each stream, not their values,
  and `timestamp` fields are left out: two runs of one conversation compare equal when they
  say the same. --exact compares everything as it is; --ignore FIELD leaves out more fields.

Sides:
  agui diff a.jsonl b.sse                 two recordings (any format `agui decode` reads:
                                          JSON array, JSON Lines, SSE, case file, protobuf;
                                          `-` for standard input, on one side)
  agui diff --thread URL ID 1 2           two runs of stored thread ID of the agent at URL
  agui diff --thread URL ID r-7 -1        (run ids, or numbers: 1 the first run, -1 the
                                          last); each run is folded after the runs before
                                          it, as the thread stood when it ended

Exit codes (as diff's):
  0  equal (with --folded: the folds are equal, whatever the events)
  1  they differ
  2  usage or read problems: a file that cannot be read, an event that is not JSON, a
     thread or run the server does not have, no connection

Authentication: with --thread, AGUI_TOKEN (or --header) as for the other network commands.";

/// `agui diff`'s arguments.
#[derive(clap::Args)]
#[command(allow_negative_numbers = true)]
pub struct DiffArgs {
    /// The left side: a recording (`-`: standard input), or with --thread a run (id or
    /// number).
    pub a: String,
    /// The right side, as A.
    pub b: String,
    /// A and B are runs of this stored thread: the agent's URL and the thread's id.
    #[arg(long, num_args = 2, value_names = ["URL", "ID"])]
    pub thread: Option<Vec<String>>,
    #[command(flatten)]
    pub compare: CompareArgs,
    #[command(flatten)]
    pub request: RequestArgs,
    #[command(flatten)]
    pub stream: crate::stream::StreamOptions,
}

/// How sides are compared and the result shown (`agui diff`, `agui replay`).
#[derive(clap::Args, Clone)]
pub struct CompareArgs {
    /// Compare ids by value and keep every field (by default ids count by their order of
    /// appearance and `timestamp` is left out).
    #[arg(long)]
    pub exact: bool,
    /// Leave this field out wherever it appears (repeatable; e.g. `--ignore rawEvent`).
    #[arg(long = "ignore", value_name = "FIELD")]
    pub ignore: Vec<String>,
    /// Equal when the folds (messages, state, open interrupts) are, whatever the events
    /// (an agent that splits its text into other deltas each time).
    #[arg(long)]
    pub folded: bool,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Colours: auto, always or never.
    #[arg(long, value_enum, default_value = "auto")]
    pub color: ColorChoice,
}

impl CompareArgs {
    /// The comparison's options.
    pub fn options(&self) -> DiffOptions {
        let mut o = if self.exact {
            DiffOptions::exact()
        } else {
            DiffOptions::default()
        };
        o.ignore.extend(self.ignore.iter().cloned());
        o
    }

    /// Whether `c` counts as equal.
    pub fn equal(&self, c: &Comparison) -> bool {
        if self.folded {
            c.folds_equal()
        } else {
            c.is_equal()
        }
    }

    /// A few words on how ids and fields are compared, for the report's head.
    fn how(&self) -> String {
        let mut parts = Vec::new();
        if self.exact {
            parts.push("compared exactly".to_owned());
        } else {
            parts.push("ids by order of appearance, timestamp left out".to_owned());
        }
        if !self.ignore.is_empty() {
            parts.push(format!("{} left out", self.ignore.join(", ")));
        }
        parts.join("; ")
    }
}

/// One side: what names it, the events compared and the history folded before them.
pub struct Stream {
    /// How the report names it (a file, `run r1 (#2) of thread t`).
    pub label: String,
    /// Events folded before `events`, not compared.
    pub history: Vec<Value>,
    /// The events compared.
    pub events: Vec<Value>,
}

impl Stream {
    fn side(&self) -> Side<'_> {
        Side {
            history: &self.history,
            events: &self.events,
        }
    }
}

/// Runs `agui diff`: 0 equal, 1 different, 2 on usage and read errors.
pub fn run(args: DiffArgs) -> Result<ExitCode, String> {
    let (a, b) = match &args.thread {
        None => {
            if args.a == "-" && args.b == "-" {
                return Err("A and B cannot both be standard input (`-`)".into());
            }
            (
                read_recording(&args.a, args.stream.max_frame_bytes)?,
                read_recording(&args.b, args.stream.max_frame_bytes)?,
            )
        }
        Some(thread) => {
            let [url, id] = thread.as_slice() else {
                return Err("--thread takes the agent's URL and the thread's id".into());
            };
            crate::run_async_on(1, stored_runs(url, id, &args.a, &args.b, &args.request))?
        }
    };
    let comparison = diff::compare(a.side(), b.side(), &args.compare.options());
    let equal = args.compare.equal(&comparison);
    if args.compare.json {
        let report = report_json(&a, &b, &comparison, equal);
        crate::out::outln!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        );
    } else {
        let paint = Paint::for_stdout(args.compare.color);
        crate::out::out!("{}", report_text(&a, &b, &comparison, &args.compare, paint));
    }
    Ok(ExitCode::from(if equal { 0 } else { crate::net::FAILED }))
}

/// The events of a recording, as JSON.
pub fn read_recording(path: &str, max_frame_bytes: usize) -> Result<Stream, String> {
    let name = if path == "-" { "standard input" } else { path };
    let mut reader =
        EventReader::open(path, max_frame_bytes).map_err(|e| format!("{name}: {e}"))?;
    let mut events = Vec::new();
    let mut bad = None;
    reader
        .for_each(|json| match serde_json::from_slice::<Value>(json) {
            Ok(v) => {
                events.push(v);
                std::ops::ControlFlow::Continue(())
            }
            Err(e) => {
                bad = Some(format!("{name}: event {} is not JSON: {e}", events.len()));
                std::ops::ControlFlow::Break(())
            }
        })
        .map_err(|e| format!("{name}: {e}"))?;
    if let Some(e) = bad {
        return Err(e);
    }
    Ok(Stream {
        label: name.to_owned(),
        history: Vec::new(),
        events,
    })
}

/// The stored thread's runs `a` and `b`, each with the runs before it as its history.
async fn stored_runs(
    url: &str,
    id: &str,
    a: &str,
    b: &str,
    request: &RequestArgs,
) -> Result<(Stream, Stream), String> {
    let api = crate::threads::Api::new(url, request)?;
    let failed = |f: crate::threads::Failed| f.1;
    let thread = api.json(api.url(&[id]), "thread").await.map_err(failed)?;
    let runs: Vec<(String, u64, u64)> = thread
        .get("runs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| {
            Some((
                r.get("runId")?.as_str()?.to_owned(),
                r.get("firstSeq")?.as_u64()?,
                r.get("lastSeq")?.as_u64()?,
            ))
        })
        .collect();
    let events = crate::threads::thread_events(&api, id)
        .await
        .map_err(failed)?;
    let side = |selector: &str| -> Result<Stream, String> {
        let n = pick_run(&runs, selector).map_err(|e| format!("thread {id}: {e}"))?;
        let (run, first, last) = &runs[n];
        let (first, last) = (*first as usize, *last as usize);
        if first == 0 || first > last || last > events.len() {
            return Err(format!(
                "thread {id}: run {run} spans events {first} to {last}, but the thread has {} events",
                events.len()
            ));
        }
        Ok(Stream {
            label: format!("run {run} (#{}) of thread {id}", n + 1),
            history: events[..first - 1].to_vec(),
            events: events[first - 1..last].to_vec(),
        })
    };
    Ok((side(a)?, side(b)?))
}

/// The index of the run `selector` names: a run id, else a number (1 the first run, -1
/// the last).
fn pick_run(runs: &[(String, u64, u64)], selector: &str) -> Result<usize, String> {
    if let Some(i) = runs.iter().position(|(id, ..)| id == selector) {
        return Ok(i);
    }
    let n = runs.len() as i64;
    let picked = match selector.trim().parse::<i64>() {
        Ok(i) if (1..=n).contains(&i) => Some(i - 1),
        Ok(i) if (-n..=-1).contains(&i) => Some(n + i),
        _ => None,
    };
    picked.map(|i| i as usize).ok_or_else(|| {
        let ids: Vec<&str> = runs.iter().map(|(id, ..)| id.as_str()).collect();
        format!(
            "no run {selector:?}: the thread has {} run(s) ({}); name one by its id or its number (1 the first, -1 the last)",
            runs.len(),
            ids.join(", ")
        )
    })
}

/// The report as one JSON object.
pub fn report_json(a: &Stream, b: &Stream, c: &Comparison, equal: bool) -> Value {
    let part = |l: &Value, r: &Value, eq: bool| json!({"equal": eq, "left": l, "right": r});
    let side = |s: &Stream, f: &Folded| json!({"source": s.label, "events": s.events.len(), "historyEvents": s.history.len(), "foldError": f.error});
    json!({
        "equal": equal,
        "eventsEqual": c.is_equal(),
        "foldsEqual": c.folds_equal(),
        "left": side(a, &c.left),
        "right": side(b, &c.right),
        "divergence": c.divergence,
        "messages": part(&c.left.messages, &c.right.messages, c.messages_equal),
        "state": part(&c.left.state, &c.right.state, c.state_equal),
        "pendingInterrupts": part(&c.left.pending_interrupts, &c.right.pending_interrupts, c.interrupts_equal),
    })
}

/// The report for people: the sides, the first divergence, the folds that differ as
/// unified diffs (ids as compared), the verdict.
pub fn report_text(
    a: &Stream,
    b: &Stream,
    c: &Comparison,
    args: &CompareArgs,
    paint: Paint,
) -> String {
    let mut out = String::new();
    let describe = |s: &Stream| {
        let mut d = format!("{} ({} events", s.label, s.events.len());
        if !s.history.is_empty() {
            d.push_str(&format!(", after {} events of history", s.history.len()));
        }
        d.push(')');
        d
    };
    out.push_str(&format!("A  {}\nB  {}\n", describe(a), describe(b)));
    out.push_str(&paint.paint(sgr::GREY, &format!("   ({})\n", args.how())));
    match &c.divergence {
        None => out.push_str(&format!(
            "events     {}\n",
            paint.paint(sgr::GREEN, "equal")
        )),
        Some(d) => out.push_str(&divergence_text(d, paint)),
    }
    for (name, label) in [("A", a), ("B", b)] {
        let f = if name == "A" { &c.left } else { &c.right };
        if let Some(e) = &f.error {
            out.push_str(&format!(
                "{}\n",
                paint.paint(
                    sgr::YELLOW,
                    &format!(
                        "{name} does not verify ({}): {e}; folded up to there",
                        label.label
                    )
                )
            ));
        }
    }
    let parts = [
        (
            "messages",
            c.messages_equal,
            &c.left_compared.messages,
            &c.right_compared.messages,
        ),
        (
            "state",
            c.state_equal,
            &c.left_compared.state,
            &c.right_compared.state,
        ),
        (
            "interrupts",
            c.interrupts_equal,
            &c.left_compared.pending_interrupts,
            &c.right_compared.pending_interrupts,
        ),
    ];
    for (name, equal, l, r) in parts {
        if equal {
            out.push_str(&format!(
                "{name:<10} {}\n",
                paint.paint(sgr::GREEN, "equal")
            ));
            continue;
        }
        out.push_str(&format!("{name:<10} {}\n", paint.paint(sgr::RED, "differ")));
        let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default() + "\n";
        let text = diff::unified_diff(
            &pretty(l),
            &pretty(r),
            &format!("A {name}"),
            &format!("B {name}"),
        );
        for line in text.lines() {
            let style = match line.as_bytes().first() {
                _ if line.starts_with("---") || line.starts_with("+++") => sgr::BOLD,
                Some(b'-') => sgr::RED,
                Some(b'+') => sgr::GREEN,
                Some(b'@') => sgr::CYAN,
                _ => anstyle::Style::new(),
            };
            out.push_str("  ");
            out.push_str(&paint.paint(style, line));
            out.push('\n');
        }
    }
    let verdict = match (args.equal(c), args.folded) {
        (true, false) => paint.paint(sgr::GREEN, "A and B are equal"),
        (true, true) => paint.paint(
            sgr::GREEN,
            "A and B fold to the same messages, state and interrupts",
        ),
        (false, false) => paint.paint(sgr::BOLD_RED, "A and B differ"),
        (false, true) => paint.paint(sgr::BOLD_RED, "A and B fold differently"),
    };
    out.push_str(&verdict);
    out.push('\n');
    out
}

/// `events differ at event N ...`, with both values (and how they were compared, when
/// that is not the value: an id's `#N`).
fn divergence_text(d: &Divergence, paint: Paint) -> String {
    let kind = |t: &Option<String>| t.clone().unwrap_or_else(|| "the end".into());
    let mut out = format!(
        "events     {} at event {} (A: {}, B: {})",
        paint.paint(sgr::RED, "differ"),
        d.index,
        kind(&d.left_type),
        kind(&d.right_type)
    );
    if d.path.is_empty() {
        out.push('\n');
        for (name, ty, v) in [("A", &d.left_type, &d.left), ("B", &d.right_type, &d.right)] {
            match (ty, v) {
                (None, _) | (_, None) => {
                    out.push_str(&format!("  {name}  ends before event {}\n", d.index))
                }
                (Some(_), Some(v)) => out.push_str(&format!("  {name}  {}\n", excerpt(v))),
            }
        }
        return out;
    }
    out.push_str(&format!(", field {}\n", d.path));
    for (name, v, compared) in [
        ("A", &d.left, &d.left_compared),
        ("B", &d.right, &d.right_compared),
    ] {
        let shown = v.as_ref().map_or_else(|| "(absent)".to_owned(), excerpt);
        let as_compared = compared
            .as_ref()
            .map(|c| format!("  (compared as {})", excerpt(c)))
            .unwrap_or_default();
        out.push_str(&format!("  {name}  {shown}{as_compared}\n"));
    }
    out
}

/// A JSON value on one line, cut to 200 characters.
fn excerpt(v: &Value) -> String {
    aguikit_core::fmt::excerpt(&v.to_string(), 200)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs() -> Vec<(String, u64, u64)> {
        vec![
            ("r1".into(), 1, 5),
            ("r2".into(), 6, 9),
            ("3".into(), 10, 12),
        ]
    }

    #[test]
    fn runs_are_picked_by_id_then_number() {
        let r = runs();
        assert_eq!(pick_run(&r, "r2"), Ok(1));
        assert_eq!(pick_run(&r, "1"), Ok(0));
        assert_eq!(pick_run(&r, "-1"), Ok(2));
        assert_eq!(pick_run(&r, "-3"), Ok(0));
        // A run whose id is a number is picked by its id.
        assert_eq!(pick_run(&r, "3"), Ok(2));
        for bad in ["0", "4", "-4", "r9", ""] {
            let e = pick_run(&r, bad).unwrap_err();
            assert!(e.contains("r1, r2, 3"), "{e}");
        }
    }

    #[test]
    fn reports_name_the_divergence_and_show_the_folds() {
        let ev = |v: Value| v;
        let a = Stream {
            label: "a.jsonl".into(),
            history: vec![],
            events: vec![
                ev(json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})),
                ev(json!({"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "Hello"})),
                ev(json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"})),
            ],
        };
        let mut b = Stream {
            label: "b.jsonl".into(),
            history: vec![],
            events: a.events.clone(),
        };
        b.events[1]["delta"] = json!("Hi");
        let args = CompareArgs {
            exact: false,
            ignore: vec![],
            folded: false,
            json: false,
            color: ColorChoice::Never,
        };
        let c = diff::compare(a.side(), b.side(), &args.options());
        let text = report_text(&a, &b, &c, &args, Paint::new(false));
        assert!(
            text.contains("events     differ at event 1 (A: TEXT_MESSAGE_CHUNK, B: TEXT_MESSAGE_CHUNK), field /delta\n  A  \"Hello\"\n  B  \"Hi\"\n"),
            "{text}"
        );
        assert!(
            text.contains("messages   differ\n  --- A messages\n  +++ B messages\n"),
            "{text}"
        );
        assert!(
            text.contains("-    \"content\": \"Hello\"")
                && text.contains("+    \"content\": \"Hi\""),
            "{text}"
        );
        assert!(text.contains("state      equal\n"), "{text}");
        assert!(text.ends_with("A and B differ\n"), "{text}");
        let report = report_json(&a, &b, &c, false);
        assert_eq!(report["divergence"]["path"], "/delta");
        assert_eq!(report["divergence"]["left"], "Hello");
        assert_eq!(report["messages"]["equal"], false);
        assert_eq!(report["left"]["events"], 3);
    }
}
