//! Persistent runs (feature `store`): every event sent is appended to an
//! [`agui_store::EventStore`]; responses stream from the store with the event's sequence in
//! the SSE `id:` field, so a client resumes with `Last-Event-ID`; runs go on when their
//! client goes away unless [`StoreOptions::cancel_on_disconnect`] is set.
//!
//! Routes (under the agent's path `P`):
//! - `POST P` runs the agent (`409 run_exists` when the run id was used in the thread);
//!   with `Last-Event-ID` it resumes that run's stream instead of starting it again;
//! - `GET P/threads?limit=N&cursor=C` lists the caller's threads, newest activity first,
//!   a page at a time (`{"threads": [...], "nextCursor": ...}`);
//! - `GET P/threads/{id}` returns the thread folded by the engine (`messages`, `state`,
//!   `pendingInterrupts`) and its `runs`;
//! - `DELETE P/threads/{id}` removes it (`204`; `409 run_in_progress` while a run goes on);
//! - `GET P/threads/{id}/connect` streams the thread's history (`?compacted=true` for the
//!   compacted form) from `Last-Event-ID` (or `?after=N`) on, then the live events while a
//!   run is in progress.
//!
//! A thread belongs to the principal that created it; others get `404` for it, as for a
//! thread that does not exist (see [`crate::access`]).
//!
//! A stored `RUN_STARTED` echoes the run's input with only the messages the thread did not
//! hold yet, so a thread of N turns stores O(N) bytes, not O(N²). Replaying the thread
//! gives the same messages: a client appends echoed messages whose ids it does not have
//! and keeps the ones it has (the reference client's rule).
//!
//! A stored event that cannot be decoded never hides the others: streams deliver every
//! event before it, then a `RUN_ERROR` with code `corrupt_event` naming its sequence.

use crate::access::{Principal, error};
use crate::context::RunShared;
use crate::server::RunGuard;
use agui_core::event::{RunError, RunStarted};
use agui_core::{Event, RunAgentInput};
use agui_store::{EventStore, RunStatus, StoreError, StoredEvent, ThreadInfo, ThreadQuery};
use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use futures_util::StreamExt;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// How an [`AgentServer`](crate::AgentServer) persists its runs.
///
/// ```
/// use agui_server::StoreOptions;
/// use agui_server::agui_store::MemoryStore;
/// use std::sync::Arc;
/// use std::time::Duration;
///
/// let options = StoreOptions::new(Arc::new(MemoryStore::new())).lease(Duration::from_secs(10));
/// assert!(!options.cancel_on_disconnect);
/// ```
#[derive(Clone)]
pub struct StoreOptions {
    /// Where events go.
    pub store: Arc<dyn EventStore>,
    /// Cancel a run when the client that started it disconnects (default: the run goes on
    /// and stays resumable).
    pub cancel_on_disconnect: bool,
    /// How long a run stays "alive" in the store without its server renewing it (default
    /// 30 s; renewed every third of that while the run goes on). When a server dies in the
    /// middle of a run, the first reader that finds the lease expired (a `connect`, a
    /// resuming client, the thread route) closes the run with `RUN_ERROR` code `abandoned`,
    /// so nobody waits on it forever. Servers sharing a store should have clocks within a
    /// fraction of this.
    pub lease: Duration,
    /// Folded threads kept between runs, so a new run folds only what was appended since.
    folds: Arc<FoldCache>,
}

/// The engine's fold of recently used threads, by thread id: the thread's creation time
/// (a deleted and re-created thread is another thread), the last sequence folded, and the
/// pipeline. Bounded; the oldest entry goes first.
#[derive(Default)]
struct FoldCache {
    entries: std::sync::Mutex<(
        std::collections::HashMap<String, CachedFold>,
        std::collections::VecDeque<String>,
    )>,
}

/// A thread's creation time, the last sequence folded, and the pipeline after it.
type CachedFold = (u64, u64, agui_core::engine::pipeline::Pipeline);

/// How many threads' folds are kept.
const FOLD_CACHE_THREADS: usize = 256;

impl FoldCache {
    fn take(&self, thread: &str) -> Option<CachedFold> {
        let mut g = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let entry = g.0.remove(thread)?;
        g.1.retain(|t| t != thread);
        Some(entry)
    }

    fn put(
        &self,
        thread: &str,
        created: u64,
        seq: u64,
        pipeline: agui_core::engine::pipeline::Pipeline,
    ) {
        let mut g = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if g.0
            .insert(thread.to_owned(), (created, seq, pipeline))
            .is_none()
        {
            g.1.push_back(thread.to_owned());
        }
        while g.0.len() > FOLD_CACHE_THREADS {
            let Some(oldest) = g.1.pop_front() else { break };
            g.0.remove(&oldest);
        }
    }

    fn forget(&self, thread: &str) {
        self.take(thread);
    }
}

impl StoreOptions {
    /// The default options over `store`: runs outlive their client, 30 s leases.
    pub fn new(store: Arc<dyn EventStore>) -> StoreOptions {
        StoreOptions {
            store,
            cancel_on_disconnect: false,
            lease: Duration::from_secs(30),
            folds: Arc::default(),
        }
    }

    /// Sets [`cancel_on_disconnect`](Self::cancel_on_disconnect).
    pub fn cancel_on_disconnect(mut self, cancel: bool) -> StoreOptions {
        self.cancel_on_disconnect = cancel;
        self
    }

    /// Sets [`lease`](Self::lease) (at least 100 ms).
    pub fn lease(mut self, lease: Duration) -> StoreOptions {
        self.lease = lease.max(Duration::from_millis(100));
        self
    }
}

impl std::fmt::Debug for StoreOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreOptions")
            .field("cancel_on_disconnect", &self.cancel_on_disconnect)
            .field("lease", &self.lease)
            .finish()
    }
}

/// Now, in Unix milliseconds, as leases count it.
fn lease_now() -> u64 {
    u64::try_from(crate::event_ext::now_ms()).unwrap_or(0)
}

/// Sends the stored events of `thread` from `from` on (those of `run` only, when given)
/// that a tail has not delivered yet: a run's end appended just before the tail stopped.
/// A corrupt event ends it with the `corrupt_event` frame.
async fn send_rest(
    store: &dyn EventStore,
    thread: &str,
    from: u64,
    run: Option<&str>,
    tx: &mpsc::Sender<bytes::Bytes>,
) {
    let (rest, bad) = match store.read_until_corrupt(thread, from).await {
        Ok(r) => r,
        Err(e) => (Vec::new(), Some(e)),
    };
    for item in rest.iter().filter(|i| run.is_none_or(|r| i.run_id == r)) {
        if tx.send(frame(Some(item.seq), &item.event)).await.is_err() {
            return;
        }
    }
    if let Some(e) = bad {
        let _ = tx.send(read_failure(thread, &e)).await;
    }
}

/// Sends the stored events of `thread` from `next` on, then the live ones as they are
/// appended: those of `run` only, up to its terminal event, when a run is given. Once caught
/// up it stops when nothing it follows is running (the run, or any run of the thread), and
/// closes what it follows when the lease expired (its server died). A stored event that
/// cannot be read ends it with the `corrupt_event` frame.
async fn follow(
    store: Arc<dyn EventStore>,
    thread: String,
    mut next: u64,
    run: Option<String>,
    tx: mpsc::Sender<bytes::Bytes>,
) {
    let mut tail = store.tail(&thread, next);
    let mut last_lease_check = std::time::Instant::now() - LEASE_CHECK;
    loop {
        let item = match tokio::time::timeout(Duration::from_millis(50), tail.next()).await {
            Ok(Some(Ok(item))) => item,
            Ok(Some(Err(e))) => {
                let _ = tx.send(read_failure(&thread, &e)).await;
                return;
            }
            Ok(None) => return,
            Err(_) => {
                if last_lease_check.elapsed() >= LEASE_CHECK {
                    last_lease_check = std::time::Instant::now();
                    match &run {
                        Some(r) => {
                            let _ = store.abandon_if_expired(&thread, r, lease_now()).await;
                        }
                        None => sweep_abandoned(&*store, &thread).await,
                    }
                }
                let running = match &run {
                    Some(r) => store
                        .run(&thread, r)
                        .await
                        .is_ok_and(|r| r.status == RunStatus::Running),
                    None => store
                        .runs(&thread)
                        .await
                        .is_ok_and(|runs| runs.iter().any(|r| r.status == RunStatus::Running)),
                };
                if !running {
                    // Its end may have been appended just before the tail stopped.
                    send_rest(&*store, &thread, next, run.as_deref(), &tx).await;
                    return;
                }
                continue;
            }
        };
        next = item.seq + 1;
        if run.as_deref().is_some_and(|r| r != item.run_id) {
            continue;
        }
        if tx.send(frame(Some(item.seq), &item.event)).await.is_err()
            || (run.is_some() && is_terminal(&item.event))
        {
            return;
        }
    }
}

/// The `RUN_ERROR` frame that ends a stream whose next stored event cannot be read.
fn read_failure(thread: &str, e: &StoreError) -> bytes::Bytes {
    frame(None, &read_failure_event(thread, e))
}

/// The `RUN_ERROR` that ends a stream whose next stored event cannot be read (code
/// `corrupt_event` for an undecodable record, else the store error's code), logged.
fn read_failure_event(thread: &str, e: &StoreError) -> Event {
    tracing::error!(thread_id = %thread, "cannot read the stored thread: {e}");
    RunError::new(format!("the stored thread cannot be read further: {e}"))
        .with_code(e.code())
        .into()
}

/// `event` as one frame in `encoding`: SSE frames carry the sequence as `id:` (for
/// Last-Event-ID), protobuf frames have no such field. `None` for an event without a
/// protobuf form; the encoder cannot fail otherwise.
fn encoded(
    encoding: crate::negotiate::Encoding,
    seq: Option<u64>,
    event: &Event,
) -> Option<bytes::Bytes> {
    if encoding == crate::negotiate::Encoding::Sse {
        return Some(frame(seq, event));
    }
    let mut out = bytes::BytesMut::new();
    crate::encode::FrameEncoder::new(encoding)
        .encode(event, &mut out)
        .ok()?;
    Some(out.freeze())
}

/// Closes the thread's running runs whose lease expired (their server died); errors are
/// left to the caller's next store access to report.
async fn sweep_abandoned(store: &dyn EventStore, thread: &str) {
    let Ok(runs) = store.runs(thread).await else {
        return;
    };
    let now = lease_now();
    for r in runs.iter().filter(|r| r.status == RunStatus::Running) {
        if let Ok(true) = store.abandon_if_expired(thread, &r.run_id, now).await {
            tracing::warn!(thread_id = %thread, run_id = %r.run_id, "run abandoned by its server (lease expired); closed with RUN_ERROR");
        }
    }
}

/// How often a follower that is caught up checks a running run's lease.
const LEASE_CHECK: Duration = Duration::from_secs(1);

/// A store error as the JSON error response (404 unknown thread/run, 400 bad sequence...).
pub(crate) fn store_error(e: &StoreError) -> Response {
    let status = StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    error(status, e.code(), e.to_string(), Value::Null)
}

/// The `404` for a thread the caller may not see: the same as for one that does not exist.
fn no_thread(thread: &str) -> Response {
    store_error(&StoreError::UnknownThread(thread.to_owned()))
}

/// The thread, when it exists and `principal` may see it; else the `404`.
#[allow(clippy::result_large_err)]
async fn visible(
    store: &dyn EventStore,
    principal: &Principal,
    thread: &str,
) -> Result<ThreadInfo, Response> {
    match store.thread(thread).await {
        Ok(info) if principal.may_see(info.owner.as_deref()) => Ok(info),
        Ok(_) => Err(no_thread(thread)),
        Err(e) => Err(store_error(&e)),
    }
}

fn json_ok(body: Value) -> Response {
    let mut res = Response::new(Body::from(body.to_string()));
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    res
}

fn frame(seq: Option<u64>, event: &Event) -> bytes::Bytes {
    let mut out = Vec::with_capacity(64);
    if let Some(seq) = seq {
        out.extend_from_slice(format!("id: {seq}\n").as_bytes());
    }
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(&event.to_json_vec());
    out.extend_from_slice(b"\n\n");
    out.into()
}

fn is_terminal(e: &Event) -> bool {
    matches!(e, Event::RunFinished(_) | Event::RunError(_))
}

/// An SSE response fed by a channel of frames.
fn sse(rx: mpsc::Receiver<bytes::Bytes>, keep_alive: Option<Duration>) -> Response {
    streamed(rx, None, crate::negotiate::Encoding::Sse, keep_alive)
}

/// A response in `encoding` fed by a channel of frames. When no frame has come for
/// `keep_alive`, a keep-alive comment is sent (SSE only: protobuf has no such frame), so
/// proxies do not close a stream that waits on a slow run.
fn streamed(
    rx: mpsc::Receiver<bytes::Bytes>,
    guard: Option<CancelGuard>,
    encoding: crate::negotiate::Encoding,
    keep_alive: Option<Duration>,
) -> Response {
    let beat = keep_alive.and_then(|every| {
        let frame = crate::encode::FrameEncoder::new(encoding).keep_alive()?;
        Some((every, frame))
    });
    let meter = crate::metrics::StreamMeter::open(encoding);
    let stream = futures_util::stream::unfold(
        (rx, guard, beat, meter),
        |(mut rx, guard, beat, meter)| async move {
            // Each frame of the channel is one event; a keep-alive is none.
            let (mut f, mut events) = match &beat {
                Some((every, frame)) => match tokio::time::timeout(*every, rx.recv()).await {
                    Ok(f) => (f?, 1),
                    Err(_) => (frame.clone(), 0),
                },
                None => (rx.recv().await?, 1),
            };
            // Frames already waiting leave in the same write (fewer syscalls and wake-ups
            // for the client; nothing waits for more).
            if events == 1 {
                let mut joined: Option<bytes::BytesMut> = None;
                while joined.as_ref().map_or(f.len(), |j| j.len()) < COALESCE_BYTES {
                    let Ok(next) = rx.try_recv() else { break };
                    joined
                        .get_or_insert_with(|| bytes::BytesMut::from(&f[..]))
                        .extend_from_slice(&next);
                    events += 1;
                }
                if let Some(j) = joined {
                    f = j.freeze();
                }
            }
            meter.sent(events, f.len());
            Some((
                Ok::<_, std::convert::Infallible>(f),
                (rx, guard, beat, meter),
            ))
        },
    );
    let mut res = Response::new(Body::from_stream(stream));
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(encoding.content_type()),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    res
}

/// Frames waiting in a stream's channel are joined into one write up to this size.
const COALESCE_BYTES: usize = 64 * 1024;

/// Ends the run with `RUN_ERROR` (code `disconnected`) when the response is dropped early.
struct CancelGuard(Arc<RunShared>);

impl Drop for CancelGuard {
    fn drop(&mut self) {
        if self
            .0
            .sink
            .fail(RunError::new("the client disconnected").with_code("disconnected"))
        {
            tracing::info!("client went away; run cancelled (cancel-on-disconnect)");
        }
    }
}

/// What the engine makes of a stored thread (through `look`), and whether the fold went
/// through all of it.
struct Folded<R> {
    /// What `look` took from the folded messages, state and open interrupts.
    seen: R,
    /// The first stored event that could not be read, if any.
    unreadable: Option<StoreError>,
    /// Whether the stored stream broke a rule (then the fold stops there).
    invalid: bool,
}

/// Folds the stored thread with the engine (chunk expansion, verification, application),
/// from the cached fold of `info`'s thread when there is one: only what was appended since
/// is read and folded. `look` reads the result.
async fn fold<R>(
    options: &StoreOptions,
    info: &ThreadInfo,
    look: impl FnOnce(&agui_core::engine::apply::Applier) -> R,
) -> Result<Folded<R>, StoreError> {
    let store = &*options.store;
    let thread = info.thread_id.as_str();
    let (mut pipeline, from) = match options.folds.take(thread) {
        Some((created, seq, p)) if created == info.created_ms && seq <= info.last_seq => {
            (p, seq + 1)
        }
        _ => (agui_core::engine::pipeline::Pipeline::new(), 1),
    };
    let (events, unreadable) = store.read_until_corrupt(thread, from).await?;
    let mut invalid = false;
    let mut last = from - 1;
    for e in events {
        last = e.seq;
        if pipeline.push(e.event).is_err() {
            invalid = true;
            break;
        }
    }
    let seen = look(pipeline.applier());
    if !invalid && unreadable.is_none() {
        options.folds.put(thread, info.created_ms, last, pipeline);
    }
    Ok(Folded {
        seen,
        unreadable,
        invalid,
    })
}

/// What a new run needs to know of its stored thread.
pub(crate) struct Prepared {
    /// The ids of the messages the thread holds (folded by the engine); `None` when the
    /// history cannot be folded (then the whole input is echoed, which replays the same).
    known: Option<std::collections::HashSet<String>>,
    /// The interrupts the thread's last run left open.
    pub(crate) pending: Vec<agui_core::Interrupt>,
}

/// Checks that `principal` may use the thread (creating it, owned by the principal, when
/// new) and folds its history: the messages it holds and the interrupts left open.
pub(crate) async fn prepare(
    options: &StoreOptions,
    principal: &Principal,
    thread: &str,
) -> Result<Prepared, Response> {
    let store = &*options.store;
    let info = store
        .claim_thread(thread, principal.owner())
        .await
        .map_err(|e| store_error(&e))?;
    if !principal.may_see(info.owner.as_deref()) {
        return Err(no_thread(thread));
    }
    if info.last_seq == 0 {
        return Ok(Prepared {
            known: Some(Default::default()),
            pending: Vec::new(),
        });
    }
    sweep_abandoned(store, thread).await;
    let info = store.thread(thread).await.map_err(|e| store_error(&e))?;
    let f = fold(options, &info, |a| {
        let ids: std::collections::HashSet<String> =
            a.messages().iter().map(|m| m.id().to_owned()).collect();
        (ids, a.pending_interrupts().to_vec())
    })
    .await
    .map_err(|e| store_error(&e))?;
    let readable = f.unreadable.is_none() && !f.invalid;
    let (ids, pending) = f.seen;
    Ok(Prepared {
        known: readable.then_some(ids),
        pending,
    })
}

/// Claims the run by storing its `RUN_STARTED` — refused with `409` when the run id was
/// already used in the thread. The stored `RUN_STARTED` echoes the input with only the
/// messages the thread does not hold yet. Returns the event's sequence.
pub(crate) async fn claim(
    options: &StoreOptions,
    prepared: &Prepared,
    input: &mut RunAgentInput,
    started: &RunStarted,
) -> Result<u64, Response> {
    // The echo copies only the messages the thread does not hold (not the whole history
    // first): the input's messages are set aside while the rest is cloned.
    let messages = std::mem::take(&mut input.messages);
    let mut echo = input.clone();
    echo.messages = messages
        .iter()
        .filter(|m| prepared.known.as_ref().is_none_or(|k| !k.contains(m.id())))
        .cloned()
        .collect();
    input.messages = messages;
    let mut stored = started.clone();
    stored.input = Some(Box::new(echo));
    let t0 = std::time::Instant::now();
    let appended = options
        .store
        .append(&input.thread_id, &input.run_id, &[Event::from(stored)])
        .await;
    crate::metrics::store_append(t0.elapsed());
    match appended {
        Ok(range) => Ok(range.start),
        Err(e @ StoreError::RunExists { .. }) => Err(error(
            StatusCode::CONFLICT,
            "run_exists",
            format!(
                "{e}: a run id is used once per thread (resume a broken stream with Last-Event-ID)"
            ),
            Value::Null,
        )),
        Err(e) => Err(store_error(&e)),
    }
}

/// Runs `drive` (the run's response body, which drives the agent) in the background,
/// persisting every event after the stored `RUN_STARTED` (sequence `first`), and answers
/// with the run's events from the store.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn start(
    options: &StoreOptions,
    run: Arc<RunShared>,
    taps: mpsc::UnboundedReceiver<Event>,
    drive: crate::body::RunBody,
    encoding: crate::negotiate::Encoding,
    keep_alive: Option<Duration>,
    first: u64,
    writer: RunGuard,
) -> Response {
    let store = options.store.clone();
    let (thread, run_id) = (run.thread_id.clone(), run.run_id.clone());
    tokio::spawn(persist(
        store.clone(),
        run.clone(),
        taps,
        options.lease,
        writer,
    ));
    tokio::spawn(async move {
        let mut drive = drive;
        while drive.next().await.is_some() {}
    });
    let guard = options.cancel_on_disconnect.then(|| CancelGuard(run));
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(async move {
        let mut tail = store.tail(&thread, first);
        while let Some(item) = tail.next().await {
            let StoredEvent {
                seq,
                run_id: r,
                event,
            } = match item {
                Ok(item) => item,
                Err(e) => {
                    if let Some(f) = encoded(encoding, None, &read_failure_event(&thread, &e)) {
                        let _ = tx.send(f).await;
                    }
                    break;
                }
            };
            if r != run_id {
                continue;
            }
            let Some(bytes) = encoded(encoding, Some(seq), &event) else {
                continue;
            };
            if tx.send(bytes).await.is_err() || is_terminal(&event) {
                break;
            }
        }
    });
    streamed(rx, guard, encoding, keep_alive)
}

/// Deepest nesting of an event the store accepts: what is stored must decode again under
/// serde_json's 128-level limit, with room to spare.
const MAX_STORED_DEPTH: usize = 120;

/// Appends the run's events as they come, in batches of what is waiting, and renews the
/// run's lease (every third of `lease`) until it ends. An event nested too deeply to be
/// read back is not stored: the run ends there with `RUN_ERROR` (code `event_too_deep`).
async fn persist(
    store: Arc<dyn EventStore>,
    run: Arc<RunShared>,
    mut taps: mpsc::UnboundedReceiver<Event>,
    lease: Duration,
    _writer: RunGuard,
) {
    let renew = || async {
        let until = lease_now() + lease.as_millis() as u64;
        if let Err(e) = store.renew_lease(&run.thread_id, &run.run_id, until).await {
            tracing::warn!(thread_id = %run.thread_id, run_id = %run.run_id, "cannot renew the run's lease: {e}");
        }
    };
    renew().await;
    let mut ticks = tokio::time::interval(lease / 3);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await;
    loop {
        let e = tokio::select! {
            e = taps.recv() => match e {
                Some(e) => e,
                None => break,
            },
            _ = ticks.tick() => {
                renew().await;
                continue;
            }
        };
        let mut batch = vec![e];
        while batch.len() < 1024 {
            match taps.try_recv() {
                Ok(e) => batch.push(e),
                Err(_) => break,
            }
        }
        if let Some(i) = batch.iter().position(|e| {
            !matches!(e, Event::RunError(_))
                && crate::ingress::check_depth(&e.to_json_vec(), MAX_STORED_DEPTH).is_err()
        }) {
            let kind = batch[i].event_type();
            tracing::warn!(thread_id = %run.thread_id, run_id = %run.run_id, "a {kind:?} event nests deeper than {MAX_STORED_DEPTH} levels; run ended");
            batch.truncate(i);
            batch.push(
                RunError::new(format!(
                    "the agent emitted a {kind:?} event nested deeper than {MAX_STORED_DEPTH} levels, which could not be read back"
                ))
                .with_code("event_too_deep")
                .into(),
            );
            run.sink.disconnect();
        }
        let t0 = std::time::Instant::now();
        let appended = store.append(&run.thread_id, &run.run_id, &batch).await;
        crate::metrics::store_append(t0.elapsed());
        match appended {
            Ok(_) => {
                if batch.iter().any(is_terminal) {
                    return;
                }
            }
            Err(e) => {
                tracing::error!(thread_id = %run.thread_id, run_id = %run.run_id, "cannot store events: {e}");
                run.sink.disconnect();
                return;
            }
        }
    }
}

/// `GET P/threads?limit=N&cursor=C`.
pub(crate) async fn threads(
    options: StoreOptions,
    principal: Principal,
    uri: axum::http::Uri,
) -> Response {
    let query = query_of(&uri);
    let limit = match query.get("limit").map(|l| l.parse::<usize>()) {
        None => 50,
        Some(Ok(n)) if (1..=1000).contains(&n) => n,
        Some(_) => {
            return error(
                StatusCode::BAD_REQUEST,
                "invalid_limit",
                "limit must be a whole number from 1 to 1000",
                json!({"field": "limit"}),
            );
        }
    };
    let q = ThreadQuery {
        owner: (!principal.is_admin()).then(|| principal.name().to_owned()),
        limit,
        cursor: query.get("cursor").cloned().filter(|c| !c.is_empty()),
    };
    match options.store.list_threads(&q).await {
        Ok(page) => json_ok(json!({"threads": page.threads, "nextCursor": page.next_cursor})),
        Err(e) => store_error(&e),
    }
}

/// `GET P/threads/{id}`: the thread folded by the engine, and its runs.
pub(crate) async fn thread(
    options: StoreOptions,
    principal: Principal,
    thread: String,
) -> Response {
    let store = &*options.store;
    if let Err(res) = visible(store, &principal, &thread).await {
        return res;
    }
    sweep_abandoned(store, &thread).await;
    let (info, runs) = match (store.thread(&thread).await, store.runs(&thread).await) {
        (Ok(i), Ok(r)) => (i, r),
        (Err(e), _) | (_, Err(e)) => return store_error(&e),
    };
    let folded = match fold(&options, &info, |a| {
        let messages: Vec<&agui_core::Message> = a.messages().iter().collect();
        json!({
            "messages": messages,
            "state": a.state(),
            "pendingInterrupts": a.pending_interrupts(),
        })
    })
    .await
    {
        Ok(f) => f,
        Err(e) => return store_error(&e),
    };
    let mut body = json!({
        "threadId": info.thread_id,
        "title": info.title,
        "messages": folded.seen["messages"],
        "state": folded.seen["state"],
        "pendingInterrupts": folded.seen["pendingInterrupts"],
        "runs": runs,
        "lastSeq": info.last_seq,
        "createdMs": info.created_ms,
        "updatedMs": info.updated_ms,
        // Kept for clients of the earlier shape.
        "thread": info,
    });
    if let Some(e) = folded.unreadable {
        body["error"] = json!({"error": "corrupt_event", "message": e.to_string()});
    }
    json_ok(body)
}

/// `DELETE P/threads/{id}`.
pub(crate) async fn delete(
    options: StoreOptions,
    principal: Principal,
    thread: String,
) -> Response {
    let store = &*options.store;
    if let Err(res) = visible(store, &principal, &thread).await {
        return res;
    }
    sweep_abandoned(store, &thread).await;
    match store.runs(&thread).await {
        Ok(runs) if runs.iter().any(|r| r.status == RunStatus::Running) => {
            return error(
                StatusCode::CONFLICT,
                "run_in_progress",
                format!("thread {thread} has a run in progress; delete it when the run has ended"),
                Value::Null,
            );
        }
        Ok(_) => {}
        Err(e) => return store_error(&e),
    }
    options.folds.forget(&thread);
    match store.delete_thread(&thread).await {
        Ok(true) => {
            let mut res = Response::new(Body::empty());
            *res.status_mut() = StatusCode::NO_CONTENT;
            res
        }
        Ok(false) => no_thread(&thread),
        Err(e) => store_error(&e),
    }
}

fn query_of(uri: &axum::http::Uri) -> std::collections::HashMap<String, String> {
    uri.query()
        .unwrap_or("")
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// Parses a `Last-Event-ID` (or `after`) against the thread's last sequence: the next
/// sequence to send, or the `400` naming both numbers.
#[allow(clippy::result_large_err)]
fn resume_point(text: &str, thread: &str, last_seq: u64) -> Result<u64, Response> {
    let text = text.trim();
    // Past the end: the store's code; not a number at all: `invalid_sequence`.
    let bad = |message: String| {
        error(
            StatusCode::BAD_REQUEST,
            "sequence_out_of_range",
            message,
            json!({"lastSeq": last_seq}),
        )
    };
    let after = match text.parse::<u64>() {
        Ok(n) => n,
        Err(_) if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => {
            return Err(bad(format!(
                "Last-Event-ID {text} is past the end of thread {thread}, whose last event is {last_seq}"
            )));
        }
        Err(_) => {
            return Err(error(
                StatusCode::BAD_REQUEST,
                "invalid_sequence",
                format!("Last-Event-ID / after must be a sequence number, got {text:?}"),
                Value::Null,
            ));
        }
    };
    if after > last_seq {
        return Err(bad(format!(
            "Last-Event-ID {after} is past the end of thread {thread}, whose last event is {last_seq}"
        )));
    }
    Ok(after + 1)
}

/// `GET P/threads/{id}/connect`.
pub(crate) async fn connect(
    options: StoreOptions,
    principal: Principal,
    thread: String,
    headers: HeaderMap,
    uri: axum::http::Uri,
    keep_alive: Option<Duration>,
) -> Response {
    let store = options.store.clone();
    let info = match visible(&*store, &principal, &thread).await {
        Ok(i) => i,
        Err(res) => return res,
    };
    let query = query_of(&uri);
    let after_text = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| query.get("after").cloned());
    let mut next = match after_text.as_deref().map(str::trim) {
        None | Some("") => 1,
        Some(t) => match resume_point(t, &thread, info.last_seq) {
            Ok(n) => n,
            Err(res) => return res,
        },
    };
    let compacted = query
        .get("compacted")
        .is_some_and(|v| v == "true" || v == "1");
    let mut history = Vec::new();
    if compacted && next == 1 {
        let ((events, bad), runs) = match (
            store.read_until_corrupt(&thread, 1).await,
            store.runs(&thread).await,
        ) {
            (Ok(e), Ok(r)) => (e, r),
            (Err(e), _) | (_, Err(e)) => return store_error(&e),
        };
        let last = events.last().map_or(0, |e| e.seq);
        let compact = agui_store::compact_stored(&runs, events);
        let n = compact.len();
        for (i, e) in compact.iter().enumerate() {
            history.push(frame((i + 1 == n).then_some(last), e));
        }
        if let Some(e) = bad {
            history.push(read_failure(&thread, &e));
            // Nothing after an unreadable event is sent.
            let (tx, rx) = mpsc::channel(history.len().max(1));
            for f in history {
                let _ = tx.try_send(f);
            }
            return sse(rx, keep_alive);
        }
        next = last + 1;
    }
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(async move {
        for f in history {
            if tx.send(f).await.is_err() {
                return;
            }
        }
        follow(store, thread, next, None, tx).await;
    });
    sse(rx, keep_alive)
}

/// `POST P` with `Last-Event-ID`: a client resuming a broken response. When the store holds
/// the run, the response carries the run's events after that sequence, then its live ones
/// until it ends — the run is not started again. `None`: no such run (the request starts a
/// run as usual).
pub(crate) async fn reattach(
    options: &StoreOptions,
    principal: &Principal,
    thread: &str,
    run_id: &str,
    last_event_id: &str,
    keep_alive: Option<Duration>,
) -> Option<Response> {
    let store = options.store.clone();
    if store.run(thread, run_id).await.is_err() {
        // No such run (or thread): the request starts it. A malformed Last-Event-ID is
        // still refused, as on every route.
        let t = last_event_id.trim();
        if !t.is_empty() && !t.bytes().all(|b| b.is_ascii_digit()) {
            return Some(error(
                StatusCode::BAD_REQUEST,
                "invalid_sequence",
                format!("Last-Event-ID must be a sequence number, got {t:?}"),
                Value::Null,
            ));
        }
        return None;
    }
    let info = match visible(&*store, principal, thread).await {
        Ok(i) => i,
        Err(res) => return Some(res),
    };
    let first = match resume_point(last_event_id, thread, info.last_seq) {
        Ok(n) => n,
        Err(res) => return Some(res),
    };
    let (thread, run_id) = (thread.to_owned(), run_id.to_owned());
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(follow(store, thread, first, Some(run_id), tx));
    Some(sse(rx, keep_alive))
}

#[cfg(test)]
mod tests {
    use super::resume_point;

    #[test]
    fn last_event_ids() {
        assert_eq!(resume_point("0", "t", 79).unwrap(), 1);
        assert_eq!(resume_point(" 79 ", "t", 79).unwrap(), 80);
        for bad in [
            "80",
            "18446744073709551615",
            "99999999999999999999999",
            "x",
            "-1",
        ] {
            assert_eq!(
                resume_point(bad, "t", 79).unwrap_err().status(),
                400,
                "{bad}"
            );
        }
    }
}
