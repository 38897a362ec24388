//! `agui load URL --runs N --concurrency C`: a load generator. Every run is read to its end
//! and verified by the engine; the report gives runs/s, events/s, latency percentiles (whole
//! run and first event) and the failures grouped by reason.
//!
//! Every run's thread id starts with [`THREAD_PREFIX`], so that a server storing threads can
//! tell them from people's threads (`agui serve` leaves them out of its thread list unless
//! asked: `?load=true`); `--cleanup` deletes each thread a run made (`DELETE
//! {URL}/threads/ID`) at the end.

use crate::net::fresh_id;
use crate::term::{Paint, ProgressBar, Unit, sgr};
use crate::wire::{self, Failure, Request};
use aguikit_core::codec::decoder::{Frame, FrameRef};
use aguikit_core::engine::apply::Applier;
use aguikit_core::engine::pipeline::{Pipeline, PipelineError};
use aguikit_core::{Event, Message};
use serde::Serialize;
use serde_json::json;
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The start of every thread id `agui load` makes.
pub const THREAD_PREFIX: &str = "agui-load-";

/// How often a thread whose run is still being stored (409) is asked to be deleted again,
/// and the pause between two tries.
const DELETE_TRIES: usize = 50;
const DELETE_PAUSE: Duration = Duration::from_millis(20);

/// Options of `agui load`.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// The agent's endpoint.
    pub url: String,
    /// Runs in all.
    pub runs: usize,
    /// Runs in flight at once.
    pub concurrency: usize,
    /// Threads making the runs (the runtime's; recorded in the report).
    pub threads: usize,
    /// The user message of every run.
    pub text: Option<String>,
    /// Ask for protobuf.
    pub proto: bool,
    /// Print one JSON report.
    pub json: bool,
    /// Extra request headers.
    pub headers: Vec<(String, String)>,
    /// Limit of each run.
    pub timeout: Duration,
    /// When to colour.
    pub color: crate::term::ColorChoice,
    /// Delete each thread a run made at the end.
    pub cleanup: bool,
}

/// How one run went.
#[derive(Debug, Clone)]
struct Outcome {
    /// The run's thread.
    thread_id: String,
    /// Why it failed (`None`: it verified and ended with `RUN_FINISHED`).
    failure: Option<String>,
    terminal: Option<String>,
    events: usize,
    latency: Duration,
    first_event: Option<Duration>,
    /// The server answered with a 2xx status.
    answered: bool,
}

/// Latency percentiles, in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Percentiles {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Slowest.
    pub max: f64,
    /// Mean.
    pub mean: f64,
}

impl Percentiles {
    /// Nearest-rank percentiles of `samples` (empty: all zero).
    pub fn of(samples: &mut [Duration]) -> Percentiles {
        if samples.is_empty() {
            return Percentiles::default();
        }
        samples.sort_unstable();
        let ms = |d: Duration| (d.as_secs_f64() * 10_000.0).round() / 10.0;
        let rank = |p: f64| {
            let k = ((p / 100.0) * samples.len() as f64).ceil() as usize;
            ms(samples[k.clamp(1, samples.len()) - 1])
        };
        let total: Duration = samples.iter().sum();
        Percentiles {
            p50: rank(50.0),
            p90: rank(90.0),
            p99: rank(99.0),
            max: ms(samples[samples.len() - 1]),
            mean: ms(total / samples.len() as u32),
        }
    }
}

/// Failures with the same reason.
#[derive(Debug, Clone, Serialize)]
pub struct FailureGroup {
    /// The reason.
    pub reason: String,
    /// How many runs.
    pub count: usize,
}

/// The report of `agui load`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadReport {
    /// The endpoint.
    pub url: String,
    /// Runs made.
    pub runs: usize,
    /// Runs in flight at once.
    pub concurrency: usize,
    /// Threads that made the runs.
    pub threads: usize,
    /// `sse` or `proto-requested`.
    pub transport: String,
    /// Runs that verified and ended with `RUN_FINISHED`.
    pub ok_count: usize,
    /// The others.
    pub failed: usize,
    /// The others, grouped by reason, most frequent first.
    pub failures: Vec<FailureGroup>,
    /// Terminal events seen (`RUN_FINISHED`, `RUN_ERROR`).
    pub terminals: BTreeMap<String, usize>,
    /// Events received in all.
    pub events: usize,
    /// Wall time of the whole load.
    pub duration_ms: f64,
    /// Runs per second of wall time.
    pub runs_per_sec: f64,
    /// Events per second of wall time.
    pub events_per_sec: f64,
    /// Whole-run latency of the successful runs (of all runs when none succeeded).
    pub latency_ms: Percentiles,
    /// Time to the first event.
    pub first_event_ms: Percentiles,
    /// Runs the server answered with a 2xx status (not in the JSON report: it decides the
    /// exit code).
    #[serde(skip)]
    pub answered: usize,
    /// What `--cleanup` did (absent without it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cleanup: Option<Cleanup>,
}

/// What `--cleanup` did: the threads of the runs the server answered (2xx), deleted.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Cleanup {
    /// Threads deleted.
    pub deleted: usize,
    /// Threads not deleted, grouped by reason, most frequent first.
    pub failures: Vec<FailureGroup>,
}

/// Runs `agui load`: 0 when every run succeeded (and, with `--cleanup`, every thread was
/// deleted), 1 when some failed (among them those ending with `RUN_ERROR`) or a thread could
/// not be deleted, 2 when the URL is not an absolute http(s) URL (nothing is sent)
/// or when no run got a 2xx answer (nothing listening, every status an error).
pub async fn run(opts: LoadOptions) -> Result<ExitCode, String> {
    if opts.runs == 0 || opts.concurrency == 0 {
        return Err("--runs and --concurrency must be at least 1".into());
    }
    let report = load(&opts).await?;
    if opts.json {
        crate::out::outln!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?
        );
    } else {
        print_report(&report, Paint::for_stdout(opts.color));
    }
    let cleanup_failed = report
        .cleanup
        .as_ref()
        .is_some_and(|c| !c.failures.is_empty());
    Ok(ExitCode::from(if report.failed == 0 && !cleanup_failed {
        0
    } else if report.failed > 0 && report.answered == 0 {
        crate::net::UNREACHABLE
    } else {
        crate::net::FAILED
    }))
}

/// Makes the runs and measures them; an error, with nothing sent, when the URL is not an
/// absolute http(s) URL.
pub async fn load(opts: &LoadOptions) -> Result<LoadReport, String> {
    let url = crate::net::check_url(&opts.url)?;
    let client = wire::client()?;
    let template = Arc::new(Request {
        url,
        input: wire::input_from(None, opts.text.as_deref()),
        proto: opts.proto,
        headers: opts.headers.clone(),
        timeout: opts.timeout,
    });
    let mut bar = ProgressBar::stderr("runs", opts.runs as u64, Unit::Count);
    let mut tasks = tokio::task::JoinSet::new();
    let mut started = 0;
    let mut outcomes = Vec::with_capacity(opts.runs);
    let t0 = Instant::now();
    let spawn = |tasks: &mut tokio::task::JoinSet<Outcome>| {
        let client = client.clone();
        let template = template.clone();
        tasks.spawn(async move { one(&client, &template).await });
    };
    while started < opts.runs.min(opts.concurrency) {
        spawn(&mut tasks);
        started += 1;
    }
    while let Some(done) = tasks.join_next().await {
        outcomes.push(done.unwrap_or_else(|e| Outcome {
            thread_id: String::new(),
            failure: Some(format!("task failed: {e}")),
            terminal: None,
            events: 0,
            latency: Duration::ZERO,
            first_event: None,
            answered: false,
        }));
        bar.inc(1);
        if started < opts.runs {
            spawn(&mut tasks);
            started += 1;
        }
    }
    bar.finish();
    let wall = t0.elapsed();
    let mut report = summarise(opts, &outcomes, wall);
    if opts.cleanup {
        let threads: Vec<String> = outcomes
            .iter()
            .filter(|o| o.answered && !o.thread_id.is_empty())
            .map(|o| o.thread_id.clone())
            .collect();
        report.cleanup = Some(cleanup(&client, &template, threads, opts.concurrency).await);
    }
    Ok(report)
}

/// Deletes `threads` (`DELETE {URL}/threads/ID`), `concurrency` at a time, each asked again
/// while the server answers 409 (its run is still being stored).
async fn cleanup(
    client: &reqwest::Client,
    template: &Request,
    threads: Vec<String>,
    concurrency: usize,
) -> Cleanup {
    use futures_util::StreamExt;
    let mut bar = ProgressBar::stderr("cleanup", threads.len() as u64, Unit::Count);
    let mut results = futures_util::stream::iter(threads)
        .map(|id| delete_thread(client, template, id))
        .buffer_unordered(concurrency.max(1));
    let mut done = Cleanup::default();
    let mut groups: BTreeMap<String, usize> = BTreeMap::new();
    while let Some(result) = results.next().await {
        bar.inc(1);
        match result {
            Ok(()) => done.deleted += 1,
            Err(reason) => *groups.entry(reason).or_default() += 1,
        }
    }
    bar.finish();
    done.failures = groups
        .into_iter()
        .map(|(reason, count)| FailureGroup { reason, count })
        .collect();
    done.failures
        .sort_by(|a, b| b.count.cmp(&a.count).then(a.reason.cmp(&b.reason)));
    done
}

/// The URL of a thread of the agent at `agent`: `{agent}/threads/{id}`.
fn thread_url(agent: &reqwest::Url, id: &str) -> reqwest::Url {
    let mut url = agent.clone();
    url.set_query(None);
    url.set_fragment(None);
    if let Ok(mut segments) = url.path_segments_mut() {
        segments.pop_if_empty().push("threads").push(id);
    }
    url
}

/// One `DELETE`: `Ok` on 2xx, else why not.
async fn delete_thread(
    client: &reqwest::Client,
    template: &Request,
    id: String,
) -> Result<(), String> {
    let url = thread_url(&template.url, &id);
    for _ in 0..DELETE_TRIES {
        let mut request = client.delete(url.clone()).timeout(template.timeout);
        for (name, value) in &template.headers {
            request = request.header(name, value);
        }
        match request.send().await {
            Err(e) => {
                return Err(format!(
                    "DELETE failed: {}",
                    aguikit_core::fmt::with_causes(&e)
                ));
            }
            Ok(r) if r.status().is_success() => return Ok(()),
            Ok(r) if r.status() == reqwest::StatusCode::CONFLICT => {
                tokio::time::sleep(DELETE_PAUSE).await;
            }
            Ok(r) => return Err(format!("DELETE answered HTTP {}", r.status().as_u16())),
        }
    }
    Err("DELETE answered HTTP 409 (a run still going)".into())
}

/// One run: fresh thread, run and message ids, read to the end, verified as it arrives.
async fn one(client: &reqwest::Client, template: &Request) -> Outcome {
    let mut request = template.clone();
    request.input.thread_id = format!("{THREAD_PREFIX}{}", fresh_id());
    request.input.run_id = fresh_id();
    for m in &mut request.input.messages {
        if let Message::User(u) = m {
            u.id = fresh_id();
        }
    }
    let history = Applier::with_history(
        request.input.messages.clone(),
        request.input.state.clone().unwrap_or_else(|| json!({})),
    );
    let mut check = LiveCheck::new(history);
    let response = wire::fetch_frames(client, &request, |frame, at| check.frame(frame, at)).await;
    let LiveCheck {
        mut pipeline,
        error,
        frames,
        first,
        terminal,
        error_code,
    } = check;
    let mut outcome = Outcome {
        thread_id: request.input.thread_id.clone(),
        failure: None,
        terminal: terminal.map(str::to_owned),
        events: frames,
        latency: response.elapsed,
        first_event: first,
        answered: response.status_ok(),
    };
    outcome.failure = match (&response.failure, response.status) {
        (Some(Failure::Request(m)), _) => Some(format!("request failed: {m}")),
        (_, Some(s)) if !response.status_ok() => Some(format!("HTTP {s}")),
        _ if response.encoding().is_none() => Some(format!(
            "content type {}",
            response.content_type.as_deref().unwrap_or("absent")
        )),
        (Some(Failure::Transport(_)), _) => Some("connection broke mid-stream".into()),
        (Some(Failure::Timeout(_)), _) => Some("timed out".into()),
        (Some(Failure::Framing(m)), _) => Some(format!("malformed stream: {m}")),
        _ => None,
    };
    if outcome.failure.is_none() {
        let error = error.or_else(|| pipeline.finish().err());
        outcome.failure = match error {
            Some(e) => Some(format!("{} at {}", e.rule(), e.event_type)),
            None if terminal.is_none() => Some("no RUN_FINISHED or RUN_ERROR at the end".into()),
            None if terminal == Some("RUN_ERROR") => Some(match error_code {
                // The code only, not the message, so that failures group.
                Some(c) => format!("RUN_ERROR ({c})"),
                None => "RUN_ERROR".to_owned(),
            }),
            None => None,
        };
    }
    outcome
}

/// The client pipeline (expansion, verification, application onto the run's history) fed
/// each frame as it arrives, through the typed fast path; nothing is kept but the fold and
/// what the report needs.
struct LiveCheck {
    pipeline: Pipeline,
    /// The first error: the pipeline stops there, as `wire::verify_events` does.
    error: Option<PipelineError>,
    frames: usize,
    first: Option<Duration>,
    /// `RUN_FINISHED` or `RUN_ERROR` when one came after the last `RUN_STARTED`.
    terminal: Option<&'static str>,
    /// The `code` of the last `RUN_ERROR`.
    error_code: Option<String>,
}

impl LiveCheck {
    fn new(history: Applier) -> Self {
        LiveCheck {
            pipeline: Pipeline::with_applier(history).with_emitted(false),
            error: None,
            frames: 0,
            first: None,
            terminal: None,
            error_code: None,
        }
    }

    fn frame(&mut self, frame: FrameRef<'_>, at: Duration) {
        self.frames += 1;
        self.first.get_or_insert(at);
        let event = match frame {
            FrameRef::Event(event) => Ok(*event),
            FrameRef::Json { data, .. } => Event::from_json_str(data).map_err(|_| data),
        };
        match event {
            Ok(event) => {
                let code = match &event {
                    Event::RunError(e) => e.code.as_deref(),
                    _ => None,
                };
                self.note(event.type_str(), code);
                if self.error.is_none() {
                    self.error = self.pipeline.push(event).err();
                }
            }
            // Not an event (not JSON, a missing field, not an object): read as the other
            // commands read a frame, so that the error is the same.
            Err(data) => {
                let (raw, _) = wire::received(Frame::Json {
                    data: data.to_owned(),
                    id: None,
                });
                if let Ok(v) = &raw {
                    let code = v.get("code").and_then(serde_json::Value::as_str);
                    self.note(wire::event_type(v).unwrap_or(""), code);
                }
                if self.error.is_none() {
                    self.error = wire::push_raw(&mut self.pipeline, raw).err();
                }
            }
        }
    }

    /// Follows the run lifecycle by the events' `type` (as `wire::Response::terminal`).
    fn note(&mut self, ty: &str, code: Option<&str>) {
        self.terminal = wire::terminal_after(self.terminal, ty);
        if ty == "RUN_ERROR" {
            self.error_code = code.map(str::to_owned);
        }
    }
}

fn summarise(opts: &LoadOptions, outcomes: &[Outcome], wall: Duration) -> LoadReport {
    let ok: Vec<&Outcome> = outcomes.iter().filter(|o| o.failure.is_none()).collect();
    let mut groups: BTreeMap<String, usize> = BTreeMap::new();
    for o in outcomes {
        if let Some(f) = &o.failure {
            *groups.entry(f.clone()).or_default() += 1;
        }
    }
    let mut failures: Vec<FailureGroup> = groups
        .into_iter()
        .map(|(reason, count)| FailureGroup { reason, count })
        .collect();
    failures.sort_by(|a, b| b.count.cmp(&a.count).then(a.reason.cmp(&b.reason)));
    let mut terminals = BTreeMap::new();
    for o in outcomes {
        if let Some(t) = &o.terminal {
            *terminals.entry(t.clone()).or_default() += 1;
        }
    }
    let measured: Vec<&Outcome> = if ok.is_empty() {
        outcomes.iter().collect()
    } else {
        ok.clone()
    };
    let mut latencies: Vec<Duration> = measured.iter().map(|o| o.latency).collect();
    let mut firsts: Vec<Duration> = measured.iter().filter_map(|o| o.first_event).collect();
    let events: usize = outcomes.iter().map(|o| o.events).sum();
    let secs = wall.as_secs_f64().max(1e-9);
    let round1 = |x: f64| (x * 10.0).round() / 10.0;
    LoadReport {
        url: opts.url.clone(),
        runs: outcomes.len(),
        concurrency: opts.concurrency,
        threads: opts.threads.max(1),
        transport: if opts.proto { "proto-requested" } else { "sse" }.into(),
        ok_count: ok.len(),
        failed: outcomes.len() - ok.len(),
        failures,
        terminals,
        events,
        duration_ms: round1(wall.as_secs_f64() * 1000.0),
        runs_per_sec: round1(outcomes.len() as f64 / secs),
        events_per_sec: round1(events as f64 / secs),
        latency_ms: Percentiles::of(&mut latencies),
        first_event_ms: Percentiles::of(&mut firsts),
        answered: outcomes.iter().filter(|o| o.answered).count(),
        cleanup: None,
    }
}

fn print_report(r: &LoadReport, paint: Paint) {
    crate::out::outln!(
        "{}",
        paint.paint(
            sgr::BOLD,
            &format!(
                "agui load {} · {} runs · concurrency {} · {}",
                r.url, r.runs, r.concurrency, r.transport
            )
        )
    );
    let ok = format!("{}/{}", r.ok_count, r.runs);
    crate::out::outln!(
        "  ok           {}",
        if r.failed == 0 {
            paint.paint(sgr::GREEN, &ok)
        } else {
            paint.paint(sgr::BOLD_RED, &ok)
        }
    );
    crate::out::outln!("  runs/s       {:.1}", r.runs_per_sec);
    crate::out::outln!(
        "  events/s     {:.1} ({} events in {:.0} ms)",
        r.events_per_sec,
        r.events,
        r.duration_ms
    );
    let p = &r.latency_ms;
    crate::out::outln!(
        "  latency      p50 {} ms · p90 {} ms · p99 {} ms · max {} ms",
        p.p50,
        p.p90,
        p.p99,
        p.max
    );
    let f = &r.first_event_ms;
    crate::out::outln!(
        "  first event  p50 {} ms · p90 {} ms · p99 {} ms · max {} ms",
        f.p50,
        f.p90,
        f.p99,
        f.max
    );
    let terminals: Vec<String> = r
        .terminals
        .iter()
        .map(|(t, n)| format!("{t} {n}"))
        .collect();
    crate::out::outln!(
        "  terminals    {}",
        if terminals.is_empty() {
            "none".to_owned()
        } else {
            terminals.join(" · ")
        }
    );
    if r.failures.is_empty() {
        crate::out::outln!("  failures     none");
    } else {
        crate::out::outln!("  failures");
        for g in &r.failures {
            crate::out::outln!(
                "    {}",
                paint.paint(sgr::RED, &format!("{:>5} × {}", g.count, g.reason))
            );
        }
    }
    if let Some(c) = &r.cleanup {
        let deleted = format!("{} threads deleted", c.deleted);
        if c.failures.is_empty() {
            crate::out::outln!("  cleanup      {}", paint.paint(sgr::GREEN, &deleted));
        } else {
            crate::out::outln!("  cleanup      {deleted}, not deleted:");
            for g in &c.failures {
                crate::out::outln!(
                    "    {}",
                    paint.paint(sgr::RED, &format!("{:>5} × {}", g.count, g.reason))
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let mut samples: Vec<Duration> = (1..=100).map(ms).collect();
        let p = Percentiles::of(&mut samples);
        assert_eq!((p.p50, p.p90, p.p99, p.max), (50.0, 90.0, 99.0, 100.0));
        assert_eq!(p.mean, 50.5);
        let mut one = vec![ms(7)];
        assert_eq!(Percentiles::of(&mut one).p99, 7.0);
        assert_eq!(Percentiles::of(&mut []), Percentiles::default());
    }

    #[test]
    fn failures_are_grouped_most_frequent_first() {
        let opts = LoadOptions {
            url: "u".into(),
            runs: 4,
            concurrency: 2,
            threads: 1,
            text: None,
            proto: false,
            json: true,
            headers: Vec::new(),
            timeout: ms(1000),
            color: crate::term::ColorChoice::Never,
            cleanup: false,
        };
        let run = |failure: Option<&str>, terminal: Option<&str>| Outcome {
            thread_id: "t".into(),
            failure: failure.map(str::to_owned),
            terminal: terminal.map(str::to_owned),
            events: 3,
            latency: ms(10),
            first_event: Some(ms(1)),
            answered: failure != Some("HTTP 500"),
        };
        let outcomes = vec![
            run(None, Some("RUN_FINISHED")),
            run(Some("HTTP 500"), None),
            run(Some("V13 at TEXT_MESSAGE_CONTENT"), Some("RUN_FINISHED")),
            run(Some("HTTP 500"), None),
        ];
        let r = summarise(&opts, &outcomes, Duration::from_secs(2));
        assert_eq!((r.ok_count, r.failed, r.answered), (1, 3, 2));
        assert_eq!(r.failures[0].reason, "HTTP 500");
        assert_eq!(r.failures[0].count, 2);
        assert_eq!(r.terminals["RUN_FINISHED"], 2);
        assert_eq!(r.runs_per_sec, 2.0);
        assert_eq!(r.events_per_sec, 6.0);
    }

    const RS: &str = r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#;
    const RF: &str = r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#;

    fn json_frame(data: &str) -> Frame {
        Frame::Json {
            data: data.to_owned(),
            id: None,
        }
    }

    /// A check fed `stream`, one frame a millisecond.
    fn checked(stream: &[&str]) -> LiveCheck {
        let mut check = LiveCheck::new(Applier::new());
        for (i, data) in stream.iter().enumerate() {
            check.frame(FrameRef::Json { data, id: None }, ms(i as u64 + 1));
        }
        check
    }

    #[test]
    fn live_check_stops_where_the_stored_check_stops() {
        let streams: &[&[&str]] = &[
            &[
                RS,
                r#"{"type":"TEXT_MESSAGE_START","messageId":"m"}"#,
                r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"hi"}"#,
                r#"{"type":"TEXT_MESSAGE_END","messageId":"m"}"#,
                RF,
            ],
            &[RS, "not json", RF],
            &[RS, r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m"}"#, RF],
            &[RS, "[1, 2]", RF],
            &[RS, "null", RF],
            &[RS, r#"{"type":"TEXT_MESSAGE_END","messageId":"nope"}"#, RF],
            &[RS, r#"{"type":"THINKING_START"}"#, RF],
            &[RS, RF, RS],
            &[RF],
        ];
        for stream in streams {
            let mut check = checked(stream);
            let got = check
                .error
                .clone()
                .or_else(|| check.pipeline.finish().err());
            let raw: Vec<_> = stream
                .iter()
                .map(|data| wire::received(json_frame(data)).0)
                .collect();
            let (_, expected) = wire::verify_events(&raw, Applier::new(), false);
            // (Ids the compatibility layer makes up are fresh each time: not compared.)
            let key =
                |e: Option<PipelineError>| e.map(|e| (e.index, e.rule().to_owned(), e.event_type));
            assert_eq!(key(got), key(expected), "{stream:?}");
            assert_eq!(check.frames, stream.len());
            assert_eq!(check.first, Some(ms(1)));
        }
    }

    #[test]
    fn live_check_follows_the_last_run_and_its_error_code() {
        let error = r#"{"type":"RUN_ERROR","message":"boom","code":"quota"}"#;
        let check = checked(&[RS, RF, RS, error]);
        assert_eq!(check.terminal, Some("RUN_ERROR"));
        assert_eq!(check.error_code.as_deref(), Some("quota"));
        assert!(check.error.is_none());

        let check = checked(&[RS, RF, RS]);
        assert_eq!(check.terminal, None);

        // A RUN_ERROR the engine refuses (no message) still ends the run for the report.
        let check = checked(&[RS, r#"{"type":"RUN_ERROR","code":"x"}"#]);
        assert_eq!(check.terminal, Some("RUN_ERROR"));
        assert_eq!(check.error_code.as_deref(), Some("x"));
        assert_eq!(check.error.as_ref().map(|e| e.index), Some(1));
    }
}
