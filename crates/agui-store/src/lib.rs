//! Persistent AG-UI threads: an append-only event log per thread.
//!
//! A *thread* is an ordered, append-only list of events (serialization spec P1), split into
//! *runs*. Every stored event gets a sequence number, monotonically increasing per thread and
//! contiguous from 1, which a server puts in the SSE `id:` field so that a client can resume
//! with `Last-Event-ID`. Runs carry their lineage (`RUN_STARTED.parentRunId`, spec L1) and a
//! status (running, finished, error).
//!
//! Events are stored as their wire JSON ([`Event::to_json_vec`]), exactly as sent (spec P2,
//! P3), and decoded with [`Event::from_json_slice`].
//!
//! Backends implement [`EventStore`]: [`MemoryStore`], [`SqliteStore`] (feature `sqlite`, on
//! by default) and [`PostgresStore`] (feature `postgres`). [`open`] picks one from a
//! `memory` / `sqlite:PATH` / `postgres://...` locator.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use agui_core::event::{RunFinished, RunStarted};
//! use agui_store::{EventStore, MemoryStore, RunStatus};
//! let store = MemoryStore::new();
//! let seqs = store
//!     .append("t1", "r1", &[RunStarted::new("t1", "r1").into(), RunFinished::new("t1", "r1").into()])
//!     .await
//!     .unwrap();
//! assert_eq!(seqs, 1..3);
//! assert_eq!(store.read("t1", 2).await.unwrap()[0].seq, 2);
//! assert_eq!(store.runs("t1").await.unwrap()[0].status, RunStatus::Finished);
//! # });
//! ```

mod error;
mod memory;
mod notify;
#[cfg(feature = "postgres")]
mod postgres;
mod prepare;
#[cfg(feature = "sqlite")]
mod sqlite;
mod tail;

pub use error::StoreError;
pub use memory::MemoryStore;
#[cfg(feature = "postgres")]
pub use postgres::PostgresStore;
#[cfg(feature = "sqlite")]
pub use sqlite::{SqliteOptions, SqliteStore, Synchronous};
pub use tail::tail_stream;

use agui_core::Event;
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use serde::Serialize;
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

/// A `Result` whose error is a [`StoreError`].
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// One stored event, decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEvent {
    /// Its sequence number in the thread (from 1, contiguous).
    pub seq: u64,
    /// The run it belongs to.
    pub run_id: String,
    /// The event.
    pub event: Event,
}

/// One stored event as the JSON it was stored as (what a server sends again on resume).
#[derive(Debug, Clone, PartialEq)]
pub struct RawEvent {
    /// Its sequence number in the thread.
    pub seq: u64,
    /// The run it belongs to.
    pub run_id: String,
    /// The event's wire JSON.
    pub json: Vec<u8>,
}

impl RawEvent {
    /// Decodes the stored JSON.
    pub fn decode(self, thread: &str) -> Result<StoredEvent> {
        let event = Event::from_json_slice(&self.json).map_err(|e| StoreError::Corrupt {
            thread: thread.to_owned(),
            seq: self.seq,
            message: e.to_string(),
        })?;
        Ok(StoredEvent {
            seq: self.seq,
            run_id: self.run_id,
            event,
        })
    }
}

/// Where a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum RunStatus {
    /// No terminal event stored yet.
    Running,
    /// Closed by `RUN_FINISHED`.
    Finished,
    /// Closed by `RUN_ERROR`.
    Error,
}

impl RunStatus {
    /// The stored spelling (`running`, `finished`, `error`).
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Finished => "finished",
            RunStatus::Error => "error",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<RunStatus> {
        Some(match s {
            "running" => RunStatus::Running,
            "finished" => RunStatus::Finished,
            "error" => RunStatus::Error,
            _ => return None,
        })
    }
}

/// A thread of the store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadInfo {
    /// The thread id.
    pub thread_id: String,
    /// The sequence of its last event (its event count).
    pub last_seq: u64,
    /// How many runs it has.
    pub run_count: u64,
}

/// A run of a thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunInfo {
    /// The run id.
    pub run_id: String,
    /// The run it branches from (`RUN_STARTED.parentRunId`).
    pub parent_run_id: Option<String>,
    /// Where it is.
    pub status: RunStatus,
    /// The sequence of its first stored event.
    pub first_seq: u64,
    /// The sequence of its last stored event.
    pub last_seq: u64,
}

/// An append-only event log of threads. Object safe: servers hold an `Arc<dyn EventStore>`.
///
/// Sequence numbers start at 1 and are contiguous per thread. An `append` that returned `Ok`
/// is durable as far as the backend promises (see each backend).
pub trait EventStore: Send + Sync + 'static {
    /// Appends `events` to run `run` of thread `thread` (both created when new), in one
    /// atomic step, and returns their sequence numbers. A `RUN_STARTED` sets the run's parent
    /// (which must be a run of the thread); `RUN_FINISHED` / `RUN_ERROR` close it, after which
    /// nothing more may be appended to it.
    fn append<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        events: &'a [Event],
    ) -> BoxFuture<'a, Result<Range<u64>>>;

    /// At most `limit` stored events of `thread` from sequence `from_seq` on (inclusive), as
    /// stored JSON. `from_seq` may be at most one past the last sequence (then nothing is
    /// returned); beyond that is [`StoreError::SequenceOutOfRange`].
    fn read_raw<'a>(
        &'a self,
        thread: &'a str,
        from_seq: u64,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<RawEvent>>>;

    /// Every thread, in creation order.
    fn threads(&self) -> BoxFuture<'_, Result<Vec<ThreadInfo>>>;

    /// One thread ([`StoreError::UnknownThread`] if absent).
    fn thread<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<ThreadInfo>>;

    /// The runs of a thread, in the order they started.
    fn runs<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<Vec<RunInfo>>>;

    /// A receiver that changes (to the new last sequence, or to some value) after events are
    /// appended to `thread`. Used by [`tail_stream`]; it may miss changes made by other
    /// processes, which [`EventStore::poll_interval`] covers.
    fn subscribe(&self, thread: &str) -> tokio::sync::watch::Receiver<u64>;

    /// How often a live tail re-reads the store when no wake-up came (`None`: never, every
    /// writer is in this process).
    fn poll_interval(&self) -> Option<Duration>;

    /// The stored events of `thread` from `from_seq` on, then the live ones as they are
    /// appended; never ends by itself. An unknown thread or a sequence out of range is
    /// reported as the first item.
    fn tail(&self, thread: &str, from_seq: u64) -> BoxStream<'static, Result<StoredEvent>>;

    /// Records that the process running `run` of `thread` is alive until `until_ms` (Unix
    /// milliseconds): a server renews this lease while the run goes on, so that a run whose
    /// server died can be told from a run that is only quiet (see
    /// [`EventStore::abandon_if_expired`]). The lease may be renewed before the run's first
    /// event is stored.
    fn renew_lease<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        until_ms: u64,
    ) -> BoxFuture<'a, Result<()>>;

    /// The expiry of `run`'s lease (Unix milliseconds), `None` when none was ever recorded
    /// (a run written without a server, which is never considered abandoned).
    fn lease<'a>(&'a self, thread: &'a str, run: &'a str) -> BoxFuture<'a, Result<Option<u64>>>;

    /// Closes `run` with a `RUN_ERROR` (code `abandoned`) when it is still running and its
    /// lease expired before `now_ms`: its server stopped without ending it, and readers that
    /// follow it would otherwise wait forever. Returns whether it did. A run that ended
    /// meanwhile (its server was only late) is left as it is.
    fn abandon_if_expired<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<bool>> {
        Box::pin(async move {
            if self.run(thread, run).await?.status != RunStatus::Running {
                return Ok(false);
            }
            match self.lease(thread, run).await? {
                Some(until) if until < now_ms => {}
                _ => return Ok(false),
            }
            let error =
                agui_core::event::RunError::new("the run's server stopped before the run ended")
                    .with_code("abandoned");
            match self.append(thread, run, &[Event::from(error)]).await {
                Ok(_) => Ok(true),
                Err(StoreError::RunClosed { .. }) => Ok(false),
                Err(e) => Err(e),
            }
        })
    }

    /// Every stored event of `thread` from `from_seq` on (inclusive), decoded.
    fn read<'a>(
        &'a self,
        thread: &'a str,
        from_seq: u64,
    ) -> BoxFuture<'a, Result<Vec<StoredEvent>>> {
        Box::pin(async move {
            let raw = self.read_raw(thread, from_seq, usize::MAX).await?;
            raw.into_iter().map(|r| r.decode(thread)).collect()
        })
    }

    /// One run ([`StoreError::UnknownRun`] if absent).
    fn run<'a>(&'a self, thread: &'a str, run: &'a str) -> BoxFuture<'a, Result<RunInfo>> {
        Box::pin(async move {
            self.runs(thread)
                .await?
                .into_iter()
                .find(|r| r.run_id == run)
                .ok_or_else(|| StoreError::UnknownRun {
                    thread: thread.to_owned(),
                    run: run.to_owned(),
                })
        })
    }

    /// The runs from the root of `run`'s lineage down to `run` (following `parentRunId`).
    fn lineage<'a>(&'a self, thread: &'a str, run: &'a str) -> BoxFuture<'a, Result<Vec<RunInfo>>> {
        Box::pin(async move {
            let runs = self.runs(thread).await?;
            lineage_of(thread, &runs, run)
        })
    }

    /// The events of the runs on `run`'s lineage only, in stream order: the history of one
    /// branch (spec L4), which a new run branching from `run` continues.
    fn branch<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
    ) -> BoxFuture<'a, Result<Vec<StoredEvent>>> {
        Box::pin(async move {
            let path = self.lineage(thread, run).await?;
            let ids: std::collections::HashSet<&str> =
                path.iter().map(|r| r.run_id.as_str()).collect();
            let first = path.iter().map(|r| r.first_seq).min().unwrap_or(1);
            let all = self.read(thread, first).await?;
            Ok(all
                .into_iter()
                .filter(|e| ids.contains(e.run_id.as_str()))
                .collect())
        })
    }

    /// The thread's history compacted for a fast load (`agui_core::engine::compact`): each
    /// cleanly finished run is compacted on its own; runs that failed or are still running
    /// are kept as stored, since compacting them can break replay (spec C5).
    fn compacted<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<Vec<Event>>> {
        Box::pin(async move {
            let runs = self.runs(thread).await?;
            let events = self.read(thread, 1).await?;
            Ok(compact_stored(&runs, events))
        })
    }
}

impl<S: EventStore + ?Sized> EventStore for Arc<S> {
    fn append<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        events: &'a [Event],
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        (**self).append(thread, run, events)
    }
    fn read_raw<'a>(
        &'a self,
        thread: &'a str,
        from_seq: u64,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<RawEvent>>> {
        (**self).read_raw(thread, from_seq, limit)
    }
    fn threads(&self) -> BoxFuture<'_, Result<Vec<ThreadInfo>>> {
        (**self).threads()
    }
    fn thread<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<ThreadInfo>> {
        (**self).thread(thread)
    }
    fn runs<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<Vec<RunInfo>>> {
        (**self).runs(thread)
    }
    fn subscribe(&self, thread: &str) -> tokio::sync::watch::Receiver<u64> {
        (**self).subscribe(thread)
    }
    fn poll_interval(&self) -> Option<Duration> {
        (**self).poll_interval()
    }
    fn tail(&self, thread: &str, from_seq: u64) -> BoxStream<'static, Result<StoredEvent>> {
        (**self).tail(thread, from_seq)
    }
    fn read<'a>(
        &'a self,
        thread: &'a str,
        from_seq: u64,
    ) -> BoxFuture<'a, Result<Vec<StoredEvent>>> {
        (**self).read(thread, from_seq)
    }
    fn renew_lease<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        until_ms: u64,
    ) -> BoxFuture<'a, Result<()>> {
        (**self).renew_lease(thread, run, until_ms)
    }
    fn lease<'a>(&'a self, thread: &'a str, run: &'a str) -> BoxFuture<'a, Result<Option<u64>>> {
        (**self).lease(thread, run)
    }
    fn abandon_if_expired<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<bool>> {
        (**self).abandon_if_expired(thread, run, now_ms)
    }
}

/// The lineage path of `run` among `runs`, root first.
fn lineage_of(thread: &str, runs: &[RunInfo], run: &str) -> Result<Vec<RunInfo>> {
    let find = |id: &str| runs.iter().find(|r| r.run_id == id);
    let mut path = Vec::new();
    let mut cur = find(run).ok_or_else(|| StoreError::UnknownRun {
        thread: thread.to_owned(),
        run: run.to_owned(),
    })?;
    loop {
        path.push(cur.clone());
        // A parent is checked to exist when its child is stored, and parents start earlier,
        // so the walk ends; the length guard only defends against a hand-edited database.
        match cur.parent_run_id.as_deref().and_then(find) {
            Some(p) if path.len() <= runs.len() => cur = p,
            _ => break,
        }
    }
    path.reverse();
    Ok(path)
}

/// Compacts each cleanly finished run of `events` on its own (statuses from `runs`) and
/// keeps the others as stored: what [`EventStore::compacted`] returns, for callers that
/// already read the events.
pub fn compact_stored(runs: &[RunInfo], events: Vec<StoredEvent>) -> Vec<Event> {
    use std::collections::HashMap;
    let status: HashMap<&str, RunStatus> =
        runs.iter().map(|r| (r.run_id.as_str(), r.status)).collect();
    let mut out = Vec::with_capacity(events.len());
    let mut group: Vec<Event> = Vec::new();
    let mut group_run: Option<String> = None;
    let flush = |group: &mut Vec<Event>, run: &Option<String>, out: &mut Vec<Event>| {
        let finished = run
            .as_deref()
            .and_then(|r| status.get(r))
            .is_some_and(|s| *s == RunStatus::Finished);
        if finished {
            match agui_core::engine::compact::compact(group) {
                Ok(c) => out.extend(c),
                Err(_) => out.append(group),
            }
        } else {
            out.append(group);
        }
        group.clear();
    };
    for e in events {
        if group_run.as_deref() != Some(e.run_id.as_str()) {
            flush(&mut group, &group_run, &mut out);
            group_run = Some(e.run_id.clone());
        }
        group.push(e.event);
    }
    flush(&mut group, &group_run, &mut out);
    out
}

/// Opens a store from a locator: `memory`, `sqlite:PATH` (or a path ending in `.db` /
/// `.sqlite`), or `postgres://...` / `postgresql://...` (feature `postgres`).
pub async fn open(locator: &str) -> Result<Arc<dyn EventStore>> {
    if locator == "memory" {
        return Ok(Arc::new(MemoryStore::new()));
    }
    #[cfg(feature = "sqlite")]
    if let Some(path) = locator.strip_prefix("sqlite:") {
        return Ok(Arc::new(SqliteStore::open(path).await?));
    }
    if locator.starts_with("postgres://") || locator.starts_with("postgresql://") {
        #[cfg(feature = "postgres")]
        return Ok(Arc::new(PostgresStore::connect(locator, "agui").await?));
        #[cfg(not(feature = "postgres"))]
        return Err(StoreError::Invalid(
            "this build has no PostgreSQL support (feature `postgres`)".into(),
        ));
    }
    Err(StoreError::Invalid(format!(
        "unknown store {locator:?}: expected memory, sqlite:PATH or postgres://..."
    )))
}
