//! What the runtime measures, recorded through the [`metrics`](https://docs.rs/metrics)
//! facade: nothing is kept until the application installs a recorder (for example
//! `metrics-exporter-prometheus`, as `agui serve` does for `GET /metrics`), and then every
//! [`AgentServer`](crate::AgentServer) of the process reports into it.
//!
//! | name | kind | labels | what |
//! |---|---|---|---|
//! | `agui_runs_started_total` | counter | `agent` | runs started (the request was accepted and `RUN_STARTED` sent) |
//! | `agui_runs_ended_total` | counter | `agent`, `outcome` | runs ended: `finished`, `error`, `panic`, `shutdown`, or `disconnected` (the client went away and the run was cancelled with it) |
//! | `agui_runs_active` | gauge | `agent` | runs going on |
//! | `agui_streams_open` | gauge | `encoding` | event-stream responses being sent (runs, resumes, `connect`) |
//! | `agui_events_sent_total` | counter | `encoding` | events handed to clients' connections |
//! | `agui_bytes_sent_total` | counter | `encoding` | bytes of event streams handed to clients' connections, keep-alives included |
//! | `agui_run_first_event_seconds` | histogram | `agent` | from the run's start to the agent's first event |
//! | `agui_run_duration_seconds` | histogram | `agent` | from the run's start to its end |
//! | `agui_store_append_seconds` | histogram | | one append to the event store (a batch of a run's events) |
//! | `agui_requests_rejected_total` | counter | `reason` | requests answered with an error; the reason is the error code of the JSON body (`unauthorized`, `rate_limited`, `body_too_large`, `too_many_connections`, ...) |
//! | `agui_upstream_errors_total` | counter | `upstream`, `code` | runs of an upstream agent (the gateway) that failed, by error code |
//!
//! `agent` is the path the agent is served at (`/agent`, `/agents/NAME`); `encoding` is
//! `sse` or `proto`. Histograms are in seconds; [`SECONDS_BUCKETS`] suits them.

use crate::negotiate::WireFormat;
use metrics::{Counter, Gauge, Histogram, counter, gauge, histogram};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

/// Counter: runs started, by `agent`.
pub const RUNS_STARTED: &str = "agui_runs_started_total";
/// Counter: runs ended, by `agent` and `outcome`.
pub const RUNS_ENDED: &str = "agui_runs_ended_total";
/// Gauge: runs going on, by `agent`.
pub const RUNS_ACTIVE: &str = "agui_runs_active";
/// Gauge: event-stream responses being sent, by `encoding`.
pub const STREAMS_OPEN: &str = "agui_streams_open";
/// Counter: events sent to clients, by `encoding`.
pub const EVENTS_SENT: &str = "agui_events_sent_total";
/// Counter: event-stream bytes sent to clients, by `encoding`.
pub const BYTES_SENT: &str = "agui_bytes_sent_total";
/// Histogram: seconds from a run's start to the agent's first event, by `agent`.
pub const FIRST_EVENT_SECONDS: &str = "agui_run_first_event_seconds";
/// Histogram: seconds from a run's start to its end, by `agent`.
pub const RUN_DURATION_SECONDS: &str = "agui_run_duration_seconds";
/// Histogram: seconds one append to the event store takes.
pub const STORE_APPEND_SECONDS: &str = "agui_store_append_seconds";
/// Counter: requests answered with an error, by `reason` (the error code).
pub const REQUESTS_REJECTED: &str = "agui_requests_rejected_total";
/// Counter: failed runs of upstream agents, by `upstream` and `code`.
pub const UPSTREAM_ERRORS: &str = "agui_upstream_errors_total";

/// Histogram buckets (seconds) for the durations above: 100 µs to 5 min.
pub const SECONDS_BUCKETS: &[f64] = &[
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0, 30.0, 60.0, 300.0,
];

/// The histograms among the metrics above (their names).
pub const HISTOGRAMS: &[&str] = &[
    FIRST_EVENT_SECONDS,
    RUN_DURATION_SECONDS,
    STORE_APPEND_SECONDS,
];

/// Registers the help text of every metric above with the installed recorder (call it
/// once, after installing the recorder).
pub fn describe() {
    use metrics::{Unit, describe_counter, describe_gauge, describe_histogram};
    describe_counter!(RUNS_STARTED, "Runs started, by agent path.");
    describe_counter!(
        RUNS_ENDED,
        "Runs ended, by agent path and outcome (finished, error, panic, shutdown, disconnected)."
    );
    describe_gauge!(RUNS_ACTIVE, "Runs going on, by agent path.");
    describe_gauge!(
        STREAMS_OPEN,
        "Event-stream responses being sent, by encoding."
    );
    describe_counter!(EVENTS_SENT, "Events sent to clients, by encoding.");
    describe_counter!(
        BYTES_SENT,
        Unit::Bytes,
        "Event-stream bytes sent to clients, by encoding."
    );
    describe_histogram!(
        FIRST_EVENT_SECONDS,
        Unit::Seconds,
        "Time from a run's start to the agent's first event, by agent path."
    );
    describe_histogram!(
        RUN_DURATION_SECONDS,
        Unit::Seconds,
        "Time from a run's start to its end, by agent path."
    );
    describe_histogram!(
        STORE_APPEND_SECONDS,
        Unit::Seconds,
        "Time one append of a batch of events to the store takes."
    );
    describe_counter!(
        REQUESTS_REJECTED,
        "Requests answered with an error, by error code."
    );
    describe_counter!(
        UPSTREAM_ERRORS,
        "Failed runs of upstream agents, by upstream name and error code."
    );
}

/// The label value of an encoding.
fn encoding_label(encoding: WireFormat) -> &'static str {
    match encoding {
        WireFormat::Sse => "sse",
        _ => "proto",
    }
}

/// The identity of the recorder `counter!` and friends register with now (the global one,
/// a scoped local one, or the no-op one): handles registered with one recorder are kept
/// only while it is the current one.
fn recorder_id() -> usize {
    metrics::with_recorder(|r| std::ptr::from_ref(r).cast::<()>() as usize)
}

/// Metric handles registered once per key with the current recorder and reused by every
/// run: registering looks the key up (labels allocated, hashed, a lock taken), recording
/// through a handle is an atomic operation.
struct Registered<V> {
    slot: RwLock<(usize, BTreeMap<String, Arc<V>>)>,
}

impl<V> Registered<V> {
    const fn new() -> Self {
        Registered {
            slot: RwLock::new((0, BTreeMap::new())),
        }
    }

    /// The handles of `key`, registered with `make` the first time (and again once the
    /// recorder changed).
    fn get(&self, key: &str, make: impl FnOnce() -> V) -> Arc<V> {
        let now = recorder_id();
        {
            let slot = self.slot.read().unwrap_or_else(PoisonError::into_inner);
            if slot.0 == now
                && let Some(v) = slot.1.get(key)
            {
                return v.clone();
            }
        }
        let mut slot = self.slot.write().unwrap_or_else(PoisonError::into_inner);
        if slot.0 != now {
            *slot = (now, BTreeMap::new());
        }
        slot.1
            .entry(key.to_owned())
            .or_insert_with(|| Arc::new(make()))
            .clone()
    }
}

/// The run metrics of one agent path.
struct AgentMetrics {
    agent: String,
    started: Counter,
    active: Gauge,
    first_event: Histogram,
    duration: Histogram,
    /// `agui_runs_ended_total` by outcome, registered as outcomes are seen.
    ended: Mutex<Vec<(&'static str, Counter)>>,
}

impl AgentMetrics {
    fn of(agent: &str) -> Arc<AgentMetrics> {
        static AGENTS: Registered<AgentMetrics> = Registered::new();
        AGENTS.get(agent, || {
            let label = agent.to_owned();
            AgentMetrics {
                agent: agent.to_owned(),
                started: counter!(RUNS_STARTED, "agent" => label.clone()),
                active: gauge!(RUNS_ACTIVE, "agent" => label.clone()),
                first_event: histogram!(FIRST_EVENT_SECONDS, "agent" => label.clone()),
                duration: histogram!(RUN_DURATION_SECONDS, "agent" => label),
                ended: Mutex::new(Vec::new()),
            }
        })
    }

    fn ended(&self, outcome: &'static str) -> Counter {
        let mut ended = self.ended.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, c)) = ended.iter().find(|(o, _)| *o == outcome) {
            return c.clone();
        }
        let c = counter!(RUNS_ENDED, "agent" => self.agent.clone(), "outcome" => outcome);
        ended.push((outcome, c.clone()));
        c
    }
}

/// One run, from its start to its end: counts it as started and active, and on
/// [`end`](Self::end) (or, when dropped before, as `disconnected`) as ended, with its
/// duration.
pub(crate) struct RunMeter {
    metrics: Arc<AgentMetrics>,
    started: Instant,
    ended: bool,
}

impl RunMeter {
    pub(crate) fn start(agent: &str) -> RunMeter {
        let metrics = AgentMetrics::of(agent);
        metrics.started.increment(1);
        metrics.active.increment(1.0);
        RunMeter {
            metrics,
            started: Instant::now(),
            ended: false,
        }
    }

    /// The timer of the run's first event.
    pub(crate) fn first_event(&self) -> FirstEvent {
        FirstEvent {
            started: self.started,
            histogram: Some(self.metrics.first_event.clone()),
        }
    }

    /// The run ended with `outcome`.
    pub(crate) fn end(mut self, outcome: &'static str) {
        self.record(outcome);
    }

    fn record(&mut self, outcome: &'static str) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        self.metrics.ended(outcome).increment(1);
        self.metrics.duration.record(self.started.elapsed());
        self.metrics.active.decrement(1.0);
    }
}

impl Drop for RunMeter {
    fn drop(&mut self) {
        self.record("disconnected");
    }
}

/// Records the time to a run's first event, once.
pub(crate) struct FirstEvent {
    started: Instant,
    histogram: Option<Histogram>,
}

impl FirstEvent {
    /// An event was sent: the first one is timed.
    pub(crate) fn seen(&mut self) {
        if let Some(h) = self.histogram.take() {
            h.record(self.started.elapsed());
        }
    }
}

/// The stream metrics of one encoding.
struct EncodingMetrics {
    open: Gauge,
    events: Counter,
    bytes: Counter,
}

/// One event-stream response to a client: counted as open until dropped, with the events
/// and bytes it sends.
pub(crate) struct StreamMeter {
    metrics: Arc<EncodingMetrics>,
}

impl StreamMeter {
    pub(crate) fn open(encoding: WireFormat) -> StreamMeter {
        static ENCODINGS: Registered<EncodingMetrics> = Registered::new();
        let encoding = encoding_label(encoding);
        let metrics = ENCODINGS.get(encoding, || EncodingMetrics {
            open: gauge!(STREAMS_OPEN, "encoding" => encoding),
            events: counter!(EVENTS_SENT, "encoding" => encoding),
            bytes: counter!(BYTES_SENT, "encoding" => encoding),
        });
        metrics.open.increment(1.0);
        StreamMeter { metrics }
    }

    /// `events` events in `bytes` bytes went to the connection.
    pub(crate) fn sent(&self, events: u64, bytes: usize) {
        if events > 0 {
            self.metrics.events.increment(events);
        }
        self.metrics.bytes.increment(bytes as u64);
    }
}

impl Drop for StreamMeter {
    fn drop(&mut self) {
        self.metrics.open.decrement(1.0);
    }
}

/// A request was answered with the error `code`.
pub(crate) fn rejected(code: &str) {
    counter!(REQUESTS_REJECTED, "reason" => code.to_owned()).increment(1);
}

/// One append to the store took `took`.
#[cfg_attr(not(feature = "store"), allow(dead_code))]
pub(crate) fn store_append(took: Duration) {
    static APPENDS: Registered<Histogram> = Registered::new();
    APPENDS
        .get("", || histogram!(STORE_APPEND_SECONDS))
        .record(took);
}
