//! The in-memory backend: for tests and servers that need no persistence.

use crate::notify::Notifier;
use crate::prepare::{Prepared, prepare};
use crate::{
    EventStore, FirstRun, ForkOf, RawEvent, Result, RunInfo, RunStatus, StoreError, StoredEvent,
    ThreadInfo, ThreadPage, ThreadQuery, ThreadUpdate, abandoned, decode_cursor, keeps_thread,
    now_ms, page_limit, page_of,
};
use aguikit_core::Event;
use futures_util::future::{BoxFuture, FutureExt};
use futures_util::stream::BoxStream;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::{Bound, Range};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One stored event: its run id and its JSON.
type Stored = (Arc<str>, Arc<[u8]>);

struct Thread {
    /// Its place in creation order (key of [`Inner::created`]).
    serial: u64,
    /// (run id, JSON); event `seq` is at index `seq - 1`.
    events: Vec<(Arc<str>, Arc<[u8]>)>,
    runs: Vec<RunInfo>,
    owner: Option<String>,
    created_ms: u64,
    updated_ms: u64,
    title: Option<String>,
    fork_of: Option<ForkOf>,
}

#[derive(Default)]
struct Inner {
    threads: HashMap<String, Thread>,
    /// Creation serial → thread id.
    created: BTreeMap<u64, String>,
    next_serial: u64,
    /// The list order of [`EventStore::list_threads`]: newest activity first, then id.
    by_activity: BTreeSet<(Reverse<u64>, String)>,
    /// (thread, run) → lease expiry (Unix ms).
    leases: HashMap<(String, String), u64>,
}

impl Inner {
    /// Makes thread `id` (absent so far).
    fn create(&mut self, id: &str, owner: Option<String>, now: u64) -> &mut Thread {
        let serial = self.next_serial;
        self.next_serial += 1;
        self.created.insert(serial, id.to_owned());
        self.by_activity.insert((Reverse(now), id.to_owned()));
        self.threads.entry(id.to_owned()).or_insert(Thread {
            serial,
            events: Vec::new(),
            runs: Vec::new(),
            owner,
            created_ms: now,
            updated_ms: now,
            title: None,
            fork_of: None,
        })
    }

    /// Moves thread `id` to `now` in the activity order (never backwards).
    fn touch(&mut self, id: &str, now: u64) {
        if let Some(t) = self.threads.get_mut(id)
            && now > t.updated_ms
        {
            self.by_activity
                .remove(&(Reverse(t.updated_ms), id.to_owned()));
            t.updated_ms = now;
            self.by_activity.insert((Reverse(now), id.to_owned()));
        }
    }
}

/// An [`EventStore`] in memory: lost when the process ends. Cheap to clone (shared).
#[derive(Clone, Default)]
pub struct MemoryStore {
    inner: Arc<Mutex<Inner>>,
    notifier: Arc<Notifier>,
}

impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryStore").finish_non_exhaustive()
    }
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Replaces the stored JSON of event `seq` of `thread` with `json`, unchecked: lets
    /// tests reproduce a damaged record (what a disk or a hand edit can do to the other
    /// backends). Not for anything else.
    #[doc(hidden)]
    pub fn replace_raw_unchecked(&self, thread: &str, seq: u64, json: Vec<u8>) -> Result<()> {
        let mut inner = self.lock();
        let t = inner
            .threads
            .get_mut(thread)
            .ok_or_else(|| StoreError::unknown_thread(thread))?;
        let last = t.events.len() as u64;
        let slot = seq
            .checked_sub(1)
            .and_then(|i| t.events.get_mut(i as usize))
            .ok_or_else(|| StoreError::SequenceOutOfRange {
                thread: thread.to_owned(),
                seq,
                last,
            })?;
        slot.1 = Arc::from(json);
        Ok(())
    }
}

/// What an append checks beyond the rules of every append.
#[derive(Default, Clone, Copy)]
struct Rules<'a> {
    /// A server's claim or append: the run's lease until this time is recorded (none when
    /// the batch ends the run), and a batch that starts the run waits for no other run in
    /// progress ([`StoreError::ThreadBusy`]) and closes stale ones as abandoned.
    lease: Option<u64>,
    /// The thread must exist and be writable by this owner (`true`: by anyone).
    owner: Option<(Option<&'a str>, bool)>,
    /// The run must be stored already.
    existing_run: bool,
}

impl MemoryStore {
    /// Stores a checked append.
    fn append_prepared(
        &self,
        thread: &str,
        run: &str,
        prepared: Prepared,
        rules: Rules<'_>,
    ) -> Result<Range<u64>> {
        let (stored, prepared) = stored_form(run, prepared);
        let mut inner = self.lock();
        let range = append_locked(&mut inner, thread, run, stored, prepared, rules)?;
        drop(inner);
        if !range.is_empty() {
            self.notifier.notify(thread, range.end - 1);
        }
        Ok(range)
    }
}

/// The stored forms of a prepared append's events, made before the store's lock is taken:
/// every thread's appends wait on that lock, so it is held only to check and link.
fn stored_form(run: &str, mut prepared: Prepared) -> (Vec<Stored>, Prepared) {
    let run_id: Arc<str> = Arc::from(run);
    let stored = std::mem::take(&mut prepared.bodies)
        .into_iter()
        .map(|b| (run_id.clone(), b))
        .collect();
    (stored, prepared)
}

/// Stores a checked append under the store's lock (the caller wakes the tails).
fn append_locked(
    inner: &mut Inner,
    thread: &str,
    run: &str,
    stored: Vec<Stored>,
    prepared: Prepared,
    rules: Rules<'_>,
) -> Result<Range<u64>> {
    {
        let existing = inner.threads.get(thread);
        if let Some((owner, any_owner)) = rules.owner
            && !existing.is_some_and(|t| any_owner || t.owner.as_deref() == owner)
        {
            return Err(StoreError::unknown_thread(thread));
        }
        if rules.existing_run {
            let t = existing.ok_or_else(|| StoreError::unknown_thread(thread))?;
            if !t.runs.iter().any(|r| r.run_id == run) {
                return Err(StoreError::UnknownRun {
                    thread: thread.to_owned(),
                    run: run.to_owned(),
                });
            }
        }
        let last = existing.map_or(0, |t| t.events.len() as u64);
        if stored.is_empty() {
            if let Some(until) = rules.lease {
                renew(inner, thread, run, until);
            }
            return Ok(last + 1..last + 1);
        }
        let runs: &[RunInfo] = existing.map_or(&[], |t| &t.runs);
        let current = runs.iter().position(|r| r.run_id == run);
        if let Some(i) = current {
            if prepared.starts_run {
                return Err(StoreError::RunExists {
                    thread: thread.to_owned(),
                    run: run.to_owned(),
                });
            }
            if runs[i].status != RunStatus::Running {
                return Err(StoreError::RunClosed {
                    thread: thread.to_owned(),
                    run: run.to_owned(),
                });
            }
        }
        if let Some(p) = &prepared.parent
            && !runs.iter().any(|r| &r.run_id == p)
        {
            return Err(StoreError::UnknownRun {
                thread: thread.to_owned(),
                run: p.clone(),
            });
        }
        let now = now_ms();
        // One run at a time: the other runs still running hold the thread while their
        // lease lasts; the others are closed as abandoned, before this one starts.
        let mut stale = Vec::new();
        if rules.lease.is_some() && prepared.starts_run {
            for r in runs.iter().filter(|r| r.status == RunStatus::Running) {
                match inner.leases.get(&(thread.to_owned(), r.run_id.clone())) {
                    Some(&until) if until >= now => {
                        return Err(StoreError::ThreadBusy {
                            thread: thread.to_owned(),
                            run: r.run_id.clone(),
                        });
                    }
                    _ => stale.push(r.run_id.clone()),
                }
            }
        }
        if inner.threads.contains_key(thread) {
            inner.touch(thread, now);
        } else {
            inner.create(thread, None, now);
        }
        let Some(t) = inner.threads.get_mut(thread) else {
            return Err(StoreError::unknown_thread(thread));
        };
        for other in &stale {
            let seq = t.events.len() as u64 + 1;
            t.events.push((
                Arc::from(other.as_str()),
                Arc::from(abandoned().to_json_vec()),
            ));
            if let Some(r) = t.runs.iter_mut().find(|r| &r.run_id == other) {
                r.status = RunStatus::Error;
                r.last_seq = seq;
            }
        }
        let first = t.events.len() as u64 + 1;
        let end = first + stored.len() as u64;
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
        if t.title.is_none() {
            t.title = prepared.title;
        }
        t.events.extend(stored);
        for other in stale {
            inner.leases.remove(&(thread.to_owned(), other));
        }
        if prepared.closes.is_some() {
            // A lease tells a running run's live server from a dead one; an ended run
            // needs none.
            inner.leases.remove(&(thread.to_owned(), run.to_owned()));
        } else if let Some(until) = rules.lease {
            inner
                .leases
                .insert((thread.to_owned(), run.to_owned()), until);
        }
        Ok(first..end)
    }
}

/// Records `run`'s lease until `until`, unless the run has ended.
fn renew(inner: &mut Inner, thread: &str, run: &str, until: u64) {
    let ended = inner.threads.get(thread).is_some_and(|t| {
        t.runs
            .iter()
            .any(|r| r.run_id == run && r.status != RunStatus::Running)
    });
    // An ended run needs no lease (its last append dropped it).
    if !ended {
        inner
            .leases
            .insert((thread.to_owned(), run.to_owned()), until);
    }
}

impl EventStore for MemoryStore {
    fn append<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        events: &'a [Event],
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        self.append_json(thread, run, events, &[])
    }

    fn append_json<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        events: &'a [Event],
        json: &'a [Option<&'a [u8]>],
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        let result = prepare(thread, run, events, json)
            .and_then(|p| self.append_prepared(thread, run, p, Rules::default()));
        std::future::ready(result).boxed()
    }

    fn append_leased_json<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        events: &'a [Event],
        json: &'a [Option<&'a [u8]>],
        until_ms: u64,
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        let rules = Rules {
            lease: Some(until_ms),
            ..Rules::default()
        };
        let result = prepare(thread, run, events, json)
            .and_then(|p| self.append_prepared(thread, run, p, rules));
        std::future::ready(result).boxed()
    }

    fn claim_run_json<'a>(
        &'a self,
        thread: &'a str,
        owner: Option<&'a str>,
        any_owner: bool,
        run: &'a str,
        events: &'a [Event],
        json: &'a [Option<&'a [u8]>],
        until_ms: u64,
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        let rules = Rules {
            lease: Some(until_ms),
            owner: Some((owner, any_owner)),
            existing_run: false,
        };
        let result = prepare(thread, run, events, json)
            .and_then(|p| self.append_prepared(thread, run, p, rules));
        std::future::ready(result).boxed()
    }

    fn append_if_new_json<'a>(
        &'a self,
        thread: &'a str,
        owner: Option<&'a str>,
        any_owner: bool,
        run: &'a str,
        events: &'a [Event],
        json: &'a [Option<&'a [u8]>],
        until_ms: u64,
    ) -> BoxFuture<'a, Result<FirstRun>> {
        let result = (|| {
            let (stored, prepared) = stored_form(run, prepare(thread, run, events, json)?);
            let mut inner = self.lock();
            if !inner.threads.contains_key(thread) {
                inner.create(thread, owner.map(str::to_owned), now_ms());
            }
            if let Some(t) = inner.threads.get(thread)
                && keeps_thread(t.events.len() as u64, t.owner.as_deref(), owner, any_owner)
            {
                return Ok(FirstRun::Existing(info(thread, t)));
            }
            let rules = Rules {
                lease: Some(until_ms),
                ..Rules::default()
            };
            let range = append_locked(&mut inner, thread, run, stored, prepared, rules)?;
            drop(inner);
            if !range.is_empty() {
                self.notifier.notify(thread, range.end - 1);
            }
            Ok(FirstRun::Stored(range))
        })();
        std::future::ready(result).boxed()
    }

    fn append_to_run_json<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        events: &'a [Event],
        json: &'a [Option<&'a [u8]>],
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        let rules = Rules {
            existing_run: true,
            ..Rules::default()
        };
        let result = prepare(thread, run, events, json)
            .and_then(|p| self.append_prepared(thread, run, p, rules));
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
            let t = inner
                .threads
                .get(thread)
                .ok_or_else(|| StoreError::unknown_thread(thread))?;
            let last = t.events.len() as u64;
            StoreError::check_readable(thread, from_seq, last)?;
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
            .created
            .values()
            .filter_map(|id| inner.threads.get(id).map(|t| info(id, t)))
            .collect();
        std::future::ready(Ok(list)).boxed()
    }

    fn claim_thread<'a>(
        &'a self,
        thread: &'a str,
        owner: Option<&'a str>,
    ) -> BoxFuture<'a, Result<ThreadInfo>> {
        let result = (|| {
            if thread.is_empty() {
                return Err(StoreError::Invalid("thread id is empty".into()));
            }
            let mut inner = self.lock();
            let t = match inner.threads.contains_key(thread) {
                true => inner.threads.get(thread),
                false => Some(&*inner.create(thread, owner.map(str::to_owned), now_ms())),
            };
            t.map(|t| info(thread, t))
                .ok_or_else(|| StoreError::unknown_thread(thread))
        })();
        std::future::ready(result).boxed()
    }

    fn list_threads<'a>(&'a self, query: &'a ThreadQuery) -> BoxFuture<'a, Result<ThreadPage>> {
        let result = (|| {
            let limit = page_limit(query.limit);
            let after = match &query.cursor {
                Some(c) => {
                    let (ms, id) = decode_cursor(c)?;
                    Bound::Excluded((Reverse(ms), id))
                }
                None => Bound::Unbounded,
            };
            let inner = self.lock();
            let list = inner
                .by_activity
                .range((after, Bound::Unbounded))
                .filter_map(|(_, id)| inner.threads.get(id).map(|t| (id, t)))
                .filter(|(_, t)| query.owner.is_none() || t.owner == query.owner)
                .filter(|(id, _)| crate::in_scope(id, query.scope.as_deref()))
                .filter(|(_, t)| {
                    query.matches(t.title.as_deref(), t.events.iter().map(|(_, j)| &j[..]))
                })
                .take(limit + 1)
                .map(|(id, t)| info(id, t))
                .collect();
            Ok(page_of(list, limit))
        })();
        std::future::ready(result).boxed()
    }

    fn update_thread<'a>(
        &'a self,
        thread: &'a str,
        update: &'a ThreadUpdate,
    ) -> BoxFuture<'a, Result<ThreadInfo>> {
        let mut inner = self.lock();
        let result = match inner.threads.get_mut(thread) {
            Some(t) => {
                if let Some(title) = &update.title {
                    t.title = Some(title.clone());
                }
                if let Some(fork_of) = &update.fork_of {
                    t.fork_of = Some(fork_of.clone());
                }
                Ok(info(thread, t))
            }
            None => Err(StoreError::UnknownThread(thread.to_owned())),
        };
        std::future::ready(result).boxed()
    }

    fn delete_thread<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<bool>> {
        let mut inner = self.lock();
        if let Some(busy) = busy_run(&inner, thread, now_ms()) {
            return std::future::ready(Err(StoreError::ThreadBusy {
                thread: thread.to_owned(),
                run: busy,
            }))
            .boxed();
        }
        let existed = match inner.threads.remove(thread) {
            Some(t) => {
                inner.created.remove(&t.serial);
                inner
                    .by_activity
                    .remove(&(Reverse(t.updated_ms), thread.to_owned()));
                true
            }
            None => false,
        };
        inner.leases.retain(|(t, _), _| t != thread);
        drop(inner);
        self.notifier.close(thread);
        std::future::ready(Ok(existed)).boxed()
    }

    fn check_integrity(&self) -> BoxFuture<'_, Result<()>> {
        std::future::ready(Ok(())).boxed()
    }

    fn health(&self) -> BoxFuture<'_, Result<()>> {
        std::future::ready(Ok(())).boxed()
    }

    fn thread<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<ThreadInfo>> {
        let inner = self.lock();
        let r = inner
            .threads
            .get(thread)
            .map(|t| info(thread, t))
            .ok_or_else(|| StoreError::unknown_thread(thread));
        std::future::ready(r).boxed()
    }

    fn runs<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<Vec<RunInfo>>> {
        let inner = self.lock();
        let r = inner
            .threads
            .get(thread)
            .map(|t| t.runs.clone())
            .ok_or_else(|| StoreError::unknown_thread(thread));
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
        renew(&mut self.lock(), thread, run, until_ms);
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

/// A run of `thread` in progress at `now` (running, with a live lease), if any.
fn busy_run(inner: &Inner, thread: &str, now: u64) -> Option<String> {
    let t = inner.threads.get(thread)?;
    t.runs
        .iter()
        .filter(|r| r.status == RunStatus::Running)
        .find(|r| {
            inner
                .leases
                .get(&(thread.to_owned(), r.run_id.clone()))
                .is_some_and(|&until| until >= now)
        })
        .map(|r| r.run_id.clone())
}

fn info(id: &str, t: &Thread) -> ThreadInfo {
    ThreadInfo {
        thread_id: id.to_owned(),
        last_seq: t.events.len() as u64,
        run_count: t.runs.len() as u64,
        owner: t.owner.clone(),
        created_ms: t.created_ms,
        updated_ms: t.updated_ms,
        title: t.title.clone(),
        last_status: t.runs.last().map(|r| r.status),
        fork_of: t.fork_of.clone(),
    }
}
