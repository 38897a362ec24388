//! The in-memory backend: for tests and servers that need no persistence.

use crate::notify::Notifier;
use crate::prepare::prepare;
use crate::{
    EventStore, RawEvent, Result, RunInfo, RunStatus, StoreError, StoredEvent, ThreadInfo,
};
use agui_core::Event;
use futures_util::future::{BoxFuture, FutureExt};
use futures_util::stream::BoxStream;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Default)]
struct Thread {
    /// (run id, JSON); event `seq` is at index `seq - 1`.
    events: Vec<(Arc<str>, Arc<[u8]>)>,
    runs: Vec<RunInfo>,
}

#[derive(Default)]
struct Inner {
    threads: HashMap<String, Thread>,
    order: Vec<String>,
    /// (thread, run) → lease expiry (Unix ms).
    leases: HashMap<(String, String), u64>,
}

/// An [`EventStore`] in memory: lost when the process ends. Cheap to clone (shared).
#[derive(Clone, Default)]
pub struct MemoryStore {
    inner: Arc<Mutex<Inner>>,
    notifier: Arc<Notifier>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn unknown(thread: &str) -> StoreError {
    StoreError::UnknownThread(thread.to_owned())
}

impl EventStore for MemoryStore {
    fn append<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        events: &'a [Event],
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        let result = (|| {
            let prepared = prepare(thread, run, events)?;
            let mut inner = self.lock();
            let existing = inner.threads.get(thread);
            let last = existing.map_or(0, |t| t.events.len() as u64);
            if prepared.bodies.is_empty() {
                return Ok(last + 1..last + 1);
            }
            let runs: &[RunInfo] = existing.map_or(&[], |t| &t.runs);
            let current = runs.iter().position(|r| r.run_id == run);
            if let Some(i) = current
                && runs[i].status != RunStatus::Running
            {
                return Err(StoreError::RunClosed {
                    thread: thread.to_owned(),
                    run: run.to_owned(),
                });
            }
            if let Some(p) = &prepared.parent
                && !runs.iter().any(|r| &r.run_id == p)
            {
                return Err(StoreError::UnknownRun {
                    thread: thread.to_owned(),
                    run: p.clone(),
                });
            }
            if !inner.threads.contains_key(thread) {
                inner.order.push(thread.to_owned());
            }
            let t = inner.threads.entry(thread.to_owned()).or_default();
            let first = last + 1;
            let end = first + prepared.bodies.len() as u64;
            let i = match current {
                Some(i) => i,
                None => {
                    t.runs.push(RunInfo {
                        run_id: run.to_owned(),
                        parent_run_id: None,
                        status: RunStatus::Running,
                        first_seq: first,
                        last_seq: first,
                    });
                    t.runs.len() - 1
                }
            };
            let info = &mut t.runs[i];
            info.last_seq = end - 1;
            if info.parent_run_id.is_none() {
                info.parent_run_id = prepared.parent;
            }
            if let Some(s) = prepared.closes {
                info.status = s;
            }
            let run_id: Arc<str> = Arc::from(run);
            t.events.extend(
                prepared
                    .bodies
                    .into_iter()
                    .map(|b| (run_id.clone(), Arc::from(b))),
            );
            drop(inner);
            self.notifier.notify(thread, end - 1);
            Ok(first..end)
        })();
        std::future::ready(result).boxed()
    }

    fn read_raw<'a>(
        &'a self,
        thread: &'a str,
        from_seq: u64,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<RawEvent>>> {
        let result = (|| {
            let inner = self.lock();
            let t = inner.threads.get(thread).ok_or_else(|| unknown(thread))?;
            let last = t.events.len() as u64;
            if from_seq > last + 1 {
                return Err(StoreError::SequenceOutOfRange {
                    thread: thread.to_owned(),
                    seq: from_seq,
                    last,
                });
            }
            let start = from_seq.max(1);
            Ok(t.events[(start - 1) as usize..]
                .iter()
                .take(limit)
                .zip(start..)
                .map(|((run, json), seq)| RawEvent {
                    seq,
                    run_id: run.to_string(),
                    json: json.to_vec(),
                })
                .collect())
        })();
        std::future::ready(result).boxed()
    }

    fn threads(&self) -> BoxFuture<'_, Result<Vec<ThreadInfo>>> {
        let inner = self.lock();
        let list = inner
            .order
            .iter()
            .map(|id| info(id, &inner.threads[id]))
            .collect();
        std::future::ready(Ok(list)).boxed()
    }

    fn thread<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<ThreadInfo>> {
        let inner = self.lock();
        let r = inner
            .threads
            .get(thread)
            .map(|t| info(thread, t))
            .ok_or_else(|| unknown(thread));
        std::future::ready(r).boxed()
    }

    fn runs<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<Vec<RunInfo>>> {
        let inner = self.lock();
        let r = inner
            .threads
            .get(thread)
            .map(|t| t.runs.clone())
            .ok_or_else(|| unknown(thread));
        std::future::ready(r).boxed()
    }

    fn subscribe(&self, thread: &str) -> tokio::sync::watch::Receiver<u64> {
        self.notifier.subscribe(thread)
    }

    fn poll_interval(&self) -> Option<Duration> {
        None
    }

    fn renew_lease<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        until_ms: u64,
    ) -> BoxFuture<'a, Result<()>> {
        self.lock()
            .leases
            .insert((thread.to_owned(), run.to_owned()), until_ms);
        std::future::ready(Ok(())).boxed()
    }

    fn lease<'a>(&'a self, thread: &'a str, run: &'a str) -> BoxFuture<'a, Result<Option<u64>>> {
        let until = self
            .lock()
            .leases
            .get(&(thread.to_owned(), run.to_owned()))
            .copied();
        std::future::ready(Ok(until)).boxed()
    }

    fn tail(&self, thread: &str, from_seq: u64) -> BoxStream<'static, Result<StoredEvent>> {
        crate::tail_stream(self.clone(), thread, from_seq)
    }
}

fn info(id: &str, t: &Thread) -> ThreadInfo {
    ThreadInfo {
        thread_id: id.to_owned(),
        last_seq: t.events.len() as u64,
        run_count: t.runs.len() as u64,
    }
}
