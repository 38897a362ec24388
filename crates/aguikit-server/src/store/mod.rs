//! Persistent runs (feature `store`): every event sent is appended to an
//! [`aguikit_store::EventStore`], and a client gets an event only once it is stored, with its
//! sequence in the SSE `id:` field, so a client resumes with `Last-Event-ID`; runs go on
//! when their client goes away unless [`StoreOptions::cancel_on_disconnect`] is set.
//!
//! A run's own response is handed each event by the task that stores it, without reading
//! it back. A client that falls behind by more than the response holds is served from the
//! store from the first event it missed, so the storing never waits for a client; events
//! waiting to be stored count against the run's buffer
//! ([`ServerConfig::buffer_bytes`](crate::ServerConfig::buffer_bytes)), so a slow store
//! slows the agent. When the store refuses the run's events, the response ends with a
//! `RUN_ERROR` carrying the store's error code.
//!
//! Routes (under the agent's path `P`):
//! - `POST P` runs the agent (`409 run_exists` when the run id was used in the thread,
//!   `409 thread_busy` while another run of the thread is in progress);
//!   with `Last-Event-ID` it resumes that run's stream instead of starting it again;
//! - `GET P/threads?limit=N&cursor=C` lists the caller's threads (an admin's: everyone's,
//!   or `?owner=NAME`'s), newest activity first, a page at a time (`{"threads": [...],
//!   "nextCursor": ...}`, each thread with its `threadId` and `owner`);
//! - `GET P/threads/{id}` returns the thread folded by the engine (`messages`, `state`,
//!   `pendingInterrupts`; with the feature `a2ui`, `surfaces` when it has A2UI surfaces)
//!   and its `runs`;
//! - `DELETE P/threads/{id}` removes it (`204`; `409 thread_busy` while a run goes on:
//!   a run is not cancelled by a delete; cancel it, or wait for it to end, then delete);
//! - `GET P/threads/{id}/connect` streams the thread's history (`?compacted=true` for the
//!   compacted form) from `Last-Event-ID` (or `?after=N`) on, then the live events while a
//!   run is in progress.
//!
//! **Threads are per principal.** A thread id names a thread within its owner's namespace
//! (stored under [`aguikit_store::thread_key`]): a principal's requests name its own
//! threads, so principal B using A's thread id gets B's own thread — a new one for a run,
//! a `404` on the thread routes — exactly as for an id nobody used: no existence oracle,
//! and no id can be squatted. Admins list every owner's threads (each with its `owner`;
//! `?owner=NAME` lists one owner's) and name another's thread on the thread routes with
//! `?owner=NAME` (`?owner=` alone: the threads stored without authentication, which have no
//! owner); a run always goes to its principal's own namespace.
//!
//! **Threads are per agent** when several agents share a store, each with its own
//! [`StoreOptions::scope`]: an agent's routes list and name its own threads only, so another
//! agent's thread is unknown there (`404`; a run on its id starts a thread of this agent),
//! and no agent is handed another's history.
//!
//! **One run at a time per thread.** A run is claimed by storing its `RUN_STARTED` with a
//! lease, in one atomic step of the store that refuses it while another run of the thread
//! is in progress ([`aguikit_store::EventStore::append_leased`]): a double submit gets one
//! run and one `409 thread_busy`, also across servers sharing a PostgreSQL database, and
//! the stored stream never interleaves two runs. A claim left by a server that died holds
//! the thread until its lease expires ([`StoreOptions::lease`], 30 s by default); the next
//! run then closes it with `RUN_ERROR` (code `abandoned`) and goes on. A delete and a run
//! are serialised the same way: a delete while a run is in progress is refused with `409
//! thread_busy`; a run that finds its thread deleted after reading it starts a new thread,
//! owned by its principal, as a first run; and a run's events are appended only to the run
//! as stored, so a late server never makes a deleted thread again.
//!
//! A stored `RUN_STARTED` echoes the run's input with only the messages the thread did not
//! hold yet, so a thread of N turns stores O(N) bytes, not O(N²). Replaying the thread
//! gives the same messages: a client appends echoed messages whose ids it does not have
//! and keeps the ones it has (the reference client's rule).
//!
//! A stored event that cannot be decoded never hides the others: streams deliver every
//! event before it, then a `RUN_ERROR` with code `corrupt_event` naming its sequence.

mod lease;
mod options;
mod stream;

pub use options::StoreOptions;

use crate::access::Principal;
use crate::api_error::{ApiError, ErrorCode};
use crate::context::RunShared;
use crate::server::RunGuard;
use aguikit_core::event::RunStarted;
use aguikit_core::{Event, RunAgentInput};
use aguikit_store::{
    EventStore, FirstRun, ForkOf, StoreError, ThreadInfo, ThreadQuery, ThreadUpdate,
};
use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

use lease::{lease_now, persist, sweep_abandoned};
use stream::{CancelGuard, Live, Out, follow, frame, read_failure, sse, streamed};

/// A store error as the JSON error response: the store's codes are [`ErrorCode`]s, each
/// with its status (404 unknown thread or run, 400 bad sequence, 409 busy...).
pub(crate) fn store_error(e: &StoreError) -> Response {
    ApiError::from(e).into_response()
}

/// The `404` for a thread the caller may not see: the same as for one that does not exist.
fn no_thread(thread: &str) -> Response {
    store_error(&StoreError::UnknownThread(thread.to_owned()))
}

/// The thread stored under `key` (thread `id` of a namespace), when it exists and
/// `principal` may see it; else the `404`, which names the id as the request did.
#[allow(clippy::result_large_err)]
async fn visible(
    store: &dyn EventStore,
    principal: &Principal,
    key: &str,
    id: &str,
) -> Result<ThreadInfo, Response> {
    match store.thread(key).await {
        Ok(info) if principal.may_see(info.owner.as_deref()) => Ok(info),
        Ok(_) | Err(StoreError::UnknownThread(_)) => Err(no_thread(id)),
        Err(e) => Err(store_error(&e)),
    }
}

/// The store's key of the thread a thread route names: thread `id` of the caller's own
/// namespace, or, with `?owner=NAME`, of `NAME`'s (`?owner=` alone: the threads stored
/// without an owner), which only admins and `NAME` itself may name. `None` for a namespace
/// the caller may not read: answered as an unknown thread.
fn named_key(
    options: &StoreOptions,
    principal: &Principal,
    id: &str,
    uri: &axum::http::Uri,
) -> Option<String> {
    match query_of(uri).get("owner") {
        None => Some(options.key(principal.owner(), id)),
        Some(owner) => {
            let owner = percent_decoded(owner)?;
            let owner = (!owner.is_empty()).then_some(owner.as_str());
            (principal.is_admin() || owner == principal.owner()).then(|| options.key(owner, id))
        }
    }
}

/// A query value with its `%XX` escapes (and `+` for a space) decoded; `None` when that is
/// not UTF-8 or an escape is malformed.
fn percent_decoded(v: &str) -> Option<String> {
    let mut out = Vec::with_capacity(v.len());
    let mut bytes = v.bytes();
    while let Some(b) = bytes.next() {
        out.push(match b {
            b'%' => {
                let hex = [bytes.next()?, bytes.next()?];
                u8::from_str_radix(std::str::from_utf8(&hex).ok()?, 16).ok()?
            }
            b'+' => b' ',
            b => b,
        });
    }
    String::from_utf8(out).ok()
}

fn json_ok(body: Value) -> Response {
    let mut res = Response::new(Body::from(body.to_string()));
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    res
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

/// Events past which a thread's fold moves to a blocking thread.
const INLINE_FOLD: u64 = 512;

/// How many stored events a fold reads at once: a thread is folded a page at a time, so
/// reading it holds the fold's result and one page, not every event of the thread decoded.
const FOLD_PAGE: usize = 1024;

/// Runs `work` here when it is small, else on a blocking thread, where it stalls neither
/// the connections sharing this one nor `/health`.
async fn fold_work<T: Send + 'static>(small: bool, work: impl FnOnce() -> T + Send + 'static) -> T {
    if small {
        return work();
    }
    match tokio::task::spawn_blocking(work).await {
        Ok(done) => done,
        Err(e) => match e.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            Err(e) => panic!("a thread's fold did not finish: {e}"),
        },
    }
}

/// Folds the stored thread with the engine (chunk expansion, verification, application),
/// from the cached fold of `info`'s thread when there is one: only what was appended since
/// is read and folded, a page ([`FOLD_PAGE`] events) at a time. `look` reads the result.
async fn fold<R>(
    options: &StoreOptions,
    info: &ThreadInfo,
    look: impl FnOnce(&aguikit_core::engine::apply::Applier) -> R + Send + 'static,
) -> Result<Folded<R>, StoreError>
where
    R: Send + 'static,
{
    let store = &*options.store;
    let thread = info.thread_id.as_str();
    let (mut pipeline, from) = match options.folds.take(thread) {
        Some((created, seq, p)) if created == info.created_ms && seq <= info.last_seq => {
            (p, seq + 1)
        }
        _ => (aguikit_core::engine::pipeline::Pipeline::new(), 1),
    };
    let mut last = from - 1;
    let mut invalid = false;
    let mut unreadable = None;
    // Folding is work in proportion to the thread: a long one is folded on a blocking
    // thread (see `fold_work`).
    let small = info.last_seq.saturating_sub(from) < INLINE_FOLD;
    loop {
        let page = store.read_raw(thread, last + 1, FOLD_PAGE).await?;
        let full = page.len() == FOLD_PAGE;
        if page.is_empty() {
            break;
        }
        let key = thread.to_owned();
        let folded = fold_work(small, move || {
            let mut last = last;
            let (mut invalid, mut unreadable) = (false, None);
            for raw in page {
                let seq = raw.seq;
                match raw.decode(&key) {
                    Ok(e) => {
                        if pipeline.push(e.event).is_err() {
                            invalid = true;
                            break;
                        }
                        last = seq;
                    }
                    Err(e) => {
                        unreadable = Some(e);
                        break;
                    }
                }
            }
            (pipeline, last, invalid, unreadable)
        })
        .await;
        (pipeline, last, invalid, unreadable) = folded;
        if invalid || unreadable.is_some() || !full {
            break;
        }
    }
    let (pipeline, seen) = fold_work(small, move || {
        let seen = look(pipeline.applier());
        (pipeline, seen)
    })
    .await;
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
    pub(crate) pending: Vec<aguikit_core::Interrupt>,
    /// The run's `RUN_STARTED`, already stored when the run is the first of a new thread.
    stored: Option<StoredStart>,
    /// Who claims the run: the owner its principal writes as, and whether it may write to
    /// every thread (an admin).
    owner: Option<String>,
    any_owner: bool,
    /// The thread's name in the store: its key in the principal's namespace.
    key: String,
}

/// A run's `RUN_STARTED` as stored: its sequence, the event, and its SSE data frame (no
/// `id:` line), whose JSON is what the store holds: written once, for both.
pub(crate) struct StoredStart {
    seq: u64,
    event: Event,
    frame: bytes::Bytes,
    /// The thread's name in the store.
    key: String,
}

/// A run's `RUN_STARTED` on its way to the store, with its SSE data frame.
struct ToStore {
    /// The event, as the one-event batch the store takes.
    events: [Event; 1],
    frame: bytes::Bytes,
}

impl ToStore {
    fn new(event: Event) -> ToStore {
        let frame = stream::frame(None, &event);
        ToStore {
            events: [event],
            frame,
        }
    }

    /// The event's JSON, as the store's `*_json` appends take it: the frame's.
    fn json(&self) -> [Option<&[u8]>; 1] {
        [stream::sse_json(&self.frame)]
    }

    /// The event stored at `seq` in thread `key`.
    fn stored(self, seq: u64, key: &str) -> StoredStart {
        let [event] = self.events;
        StoredStart {
            seq,
            event,
            frame: self.frame,
            key: key.to_owned(),
        }
    }
}

impl Prepared {
    /// A thread without events: it holds no message and left no interrupt open.
    fn empty(stored: Option<StoredStart>, principal: &Principal, key: &str) -> Prepared {
        Prepared {
            known: Some(Default::default()),
            pending: Vec::new(),
            stored,
            owner: principal.owner().map(str::to_owned),
            any_owner: principal.is_admin(),
            key: key.to_owned(),
        }
    }
}

/// Checks that `principal` may use the thread and folds its history: the messages it
/// holds and the interrupts left open. The first run of a new thread is claimed at once
/// (the thread made, owned by the principal, with the run's `RUN_STARTED`, in one write);
/// any other is claimed by [`claim`], once the history tells what to echo.
pub(crate) async fn prepare(
    options: &StoreOptions,
    principal: &Principal,
    input: &mut RunAgentInput,
    started: &RunStarted,
) -> Result<Prepared, Response> {
    let key = options.key(principal.owner(), &input.thread_id);
    // A thread deleted while it is read is prepared again: the run then makes a new one.
    for _ in 0..3 {
        match prepare_once(options, principal, &key, input, started).await {
            Err(Prepare::Deleted) => options.folds.forget(&key),
            Err(Prepare::Refused(res)) => return Err(res),
            Ok(p) => return Ok(p),
        }
    }
    Err(busy(&input.thread_id, ""))
}

/// Why [`prepare_once`] did not prepare the run.
enum Prepare {
    /// The answer to the request.
    Refused(Response),
    /// The thread was deleted while it was read.
    Deleted,
}

impl From<Response> for Prepare {
    fn from(res: Response) -> Prepare {
        Prepare::Refused(res)
    }
}

/// A store error while the thread is read: an unknown thread means it was deleted meanwhile.
fn reading(e: StoreError) -> Prepare {
    match e {
        StoreError::UnknownThread(_) => Prepare::Deleted,
        e => Prepare::Refused(store_error(&e)),
    }
}

/// [`prepare`], once.
async fn prepare_once(
    options: &StoreOptions,
    principal: &Principal,
    key: &str,
    input: &mut RunAgentInput,
    started: &RunStarted,
) -> Result<Prepared, Prepare> {
    let store = &*options.store;
    // A thread this server folded before holds events: it is only read here, and the run's
    // RUN_STARTED (echoing only what the thread lacks) waits for the fold. Any other may be
    // new: its first run is stored at once, with the thread's claim.
    let folded = if options.folds.knows(key) {
        match store.thread(key).await {
            Ok(info) => Some(info),
            Err(StoreError::UnknownThread(_)) => None,
            Err(e) => return Err(store_error(&e).into()),
        }
    } else {
        None
    };
    let info = match folded {
        Some(info) => info,
        None => match first_run(options, principal, key, input, started).await? {
            Ok(stored) => return Ok(Prepared::empty(Some(stored), principal, key)),
            Err(info) => info,
        },
    };
    let thread = key;
    if !principal.may_see(info.owner.as_deref()) {
        return Err(no_thread(&input.thread_id).into());
    }
    if info.last_seq == 0 {
        return Ok(Prepared::empty(None, principal, key));
    }
    sweep_abandoned(store, thread).await;
    let info = store.thread(thread).await.map_err(reading)?;
    let f = fold(options, &info, |a| {
        let ids: std::collections::HashSet<String> =
            a.messages().iter().map(|m| m.id().to_owned()).collect();
        (ids, a.pending_interrupts().to_vec())
    })
    .await
    .map_err(reading)?;
    let readable = f.unreadable.is_none() && !f.invalid;
    let (ids, pending) = f.seen;
    Ok(Prepared {
        known: readable.then_some(ids),
        pending,
        stored: None,
        owner: principal.owner().map(str::to_owned),
        any_owner: principal.is_admin(),
        key: key.to_owned(),
    })
}

/// Stores the run's `RUN_STARTED` (echoing the whole input) if the thread has no events
/// yet, making the thread, owned by the principal, when it does not exist
/// ([`EventStore::append_if_new`]): the event's sequence and the event as stored, or the
/// thread as it is.
async fn first_run(
    options: &StoreOptions,
    principal: &Principal,
    key: &str,
    input: &mut RunAgentInput,
    started: &RunStarted,
) -> Result<Result<StoredStart, ThreadInfo>, Response> {
    let first = ToStore::new(stored_started(input, started, None));
    let t0 = std::time::Instant::now();
    let attempt = options
        .store
        .append_if_new_json(
            key,
            principal.owner(),
            principal.is_admin(),
            &input.run_id,
            &first.events,
            &first.json(),
            lease_until(options),
        )
        .await;
    crate::metrics::store_append(t0.elapsed());
    match attempt {
        Ok(FirstRun::Stored(range)) => Ok(Ok(first.stored(range.start, key))),
        Ok(FirstRun::Existing(info)) => Ok(Err(info)),
        Err(e) => Err(claim_error(e)),
    }
}

/// When the lease of a run claimed now ends.
fn lease_until(options: &StoreOptions) -> u64 {
    lease_now() + options.lease.as_millis() as u64
}

/// The `RUN_STARTED` a run stores: `started`, echoing the input with only the messages
/// the thread does not hold (`known`; all of them when `None`). The input's messages are
/// set aside while the rest is cloned, so the history is not copied first.
fn stored_started(
    input: &mut RunAgentInput,
    started: &RunStarted,
    known: Option<&std::collections::HashSet<String>>,
) -> Event {
    let messages = std::mem::take(&mut input.messages);
    let mut echo = input.clone();
    echo.messages = messages
        .iter()
        .filter(|m| known.is_none_or(|k| !k.contains(m.id())))
        .cloned()
        .collect();
    input.messages = messages;
    let mut stored = started.clone();
    stored.input = Some(Box::new(echo));
    stored.into()
}

/// The response to a refused claim: `409` when the run id was already used in the thread,
/// or while another run of the thread is in progress.
fn claim_error(e: StoreError) -> Response {
    match e {
        StoreError::ThreadBusy { thread, run } => busy(&thread, &run),
        // Messages name the thread as its caller does, not by its key in the store.
        StoreError::RunExists { thread, run } => ApiError::new(
            ErrorCode::RunExists,
            format!(
                "run {run:?} already exists in thread {:?}: a run id is used once per thread \
                 (resume a broken stream with Last-Event-ID)",
                aguikit_store::split_thread_key(&thread).1
            ),
        )
        .into_response(),
        e => store_error(&e),
    }
}

/// The `409 thread_busy` for a run or a delete refused while `run` is in progress.
fn busy(thread: &str, run: &str) -> Response {
    let thread = aguikit_store::split_thread_key(thread).1;
    ApiError::new(
        ErrorCode::ThreadBusy,
        format!(
            "thread {thread:?} has a run in progress ({run:?}): one run at a time per thread; \
             wait for it to end (follow it at .../threads/{{id}}/connect) and try again"
        ),
    )
    .with("runId", run)
    .into_response()
}

/// Claims the run by storing its `RUN_STARTED` with the run's first lease — refused with
/// `409` when the run id was already used in the thread, or while another run of the
/// thread is in progress (atomically, in the store) — unless [`prepare`] stored it
/// already. A thread deleted since [`prepare`] read it is not made again by the claim:
/// the run starts a new thread, as the first run of one. The stored `RUN_STARTED` echoes the input with only the messages the thread
/// does not hold yet. Returns the event as stored.
pub(crate) async fn claim(
    options: &StoreOptions,
    prepared: &mut Prepared,
    input: &mut RunAgentInput,
    started: &RunStarted,
) -> Result<StoredStart, Response> {
    if let Some(stored) = prepared.stored.take() {
        return Ok(stored);
    }
    let stored = ToStore::new(stored_started(input, started, prepared.known.as_ref()));
    let t0 = std::time::Instant::now();
    // The run's lease is recorded with its RUN_STARTED (one transaction where the store
    // can), so a claimed run always has a lease for readers to find expired.
    let appended = options
        .store
        .claim_run_json(
            &prepared.key,
            prepared.owner.as_deref(),
            prepared.any_owner,
            &input.run_id,
            &stored.events,
            &stored.json(),
            lease_until(options),
        )
        .await;
    crate::metrics::store_append(t0.elapsed());
    match appended {
        Ok(range) => Ok(stored.stored(range.start, &prepared.key)),
        Err(StoreError::UnknownThread(_)) => {
            // Deleted since it was read: a new thread, with the whole input echoed.
            options.folds.forget(&prepared.key);
            let first = ToStore::new(stored_started(input, started, None));
            let attempt = options
                .store
                .append_if_new_json(
                    &prepared.key,
                    prepared.owner.as_deref(),
                    prepared.any_owner,
                    &input.run_id,
                    &first.events,
                    &first.json(),
                    lease_until(options),
                )
                .await;
            match attempt {
                Ok(FirstRun::Stored(range)) => Ok(first.stored(range.start, &prepared.key)),
                // Made again meanwhile by another run, which holds it.
                Ok(FirstRun::Existing(_)) => Err(busy(&input.thread_id, "")),
                Err(e) => Err(claim_error(e)),
            }
        }
        Err(e) => Err(claim_error(e)),
    }
}

/// Runs `drive` (the run's response body, which drives the agent) in the background,
/// persisting every event after the stored `RUN_STARTED` (`first`), and answers with the
/// run's events as they are stored.
pub(crate) async fn start(
    options: &StoreOptions,
    run: Arc<RunShared>,
    drive: crate::body::RunBody,
    encoding: crate::negotiate::WireFormat,
    keep_alive: Option<Duration>,
    first: StoredStart,
    writer: RunGuard,
) -> Response {
    let store = options.store.clone();
    let (tx, rx) = mpsc::channel(LIVE_FRAMES);
    let live = Live {
        out: Out { tx, encoding },
        store: store.clone(),
        thread: first.key.clone(),
        run: run.run_id.clone(),
    };
    // The channel is empty: the stored RUN_STARTED always fits.
    let sse = (encoding == crate::negotiate::WireFormat::Sse).then_some(first.frame);
    let live = live.feed(first.seq, std::slice::from_ref(&first.event), &[sse]);
    let persisting = persist(
        options.clone(),
        run.clone(),
        first.key.clone(),
        encoding,
        live,
        writer,
    );
    tokio::spawn(crate::panics::persist_or_fail(
        store,
        run.clone(),
        first.key,
        persisting,
    ));
    tokio::spawn(crate::panics::drain_or_fail(run.clone(), drive));
    // The agent and the store writer get a turn before the response's head leaves: what
    // they have ready by then (all of a quick run) leaves with it in one write, instead of
    // the head and RUN_STARTED in one and the rest in another. An agent that waits gives
    // the turn back at once.
    tokio::task::yield_now().await;
    let guard = options.cancel_on_disconnect.then(|| CancelGuard(run));
    streamed(rx, guard, encoding, keep_alive)
}

/// How many frames a run's response holds for its client before the client is served from
/// the store instead (see [`stream::Live`]).
const LIVE_FRAMES: usize = 64;

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
            return ApiError::new(
                ErrorCode::InvalidLimit,
                "limit must be a whole number from 1 to 1000",
            )
            .with("field", "limit")
            .into_response();
        }
    };
    // Everyone lists their own threads; an admin every owner's (each named by its `owner`),
    // or one owner's with `?owner=NAME`.
    let owner = match query.get("owner").map(|o| percent_decoded(o)) {
        Some(Some(o)) if principal.is_admin() && !o.is_empty() => Some(o),
        _ if principal.is_admin() => None,
        _ => Some(principal.name().to_owned()),
    };
    // Load runs' threads (`agui load`'s) are left out unless `?load=true`, and marked
    // `"load": true` when listed; the store is read on until the page is full, at most
    // `LIST_PAGES` times (then the page is short, with its `nextCursor`).
    // `?q=TEXT`: only the threads whose title or stored events hold it (see
    // `ThreadQuery::matches`).
    let search = match query.get("q").map(|q| percent_decoded(q)) {
        None => None,
        Some(Some(q)) if q.chars().count() <= MAX_SEARCH_CHARS => Some(q).filter(|q| !q.is_empty()),
        Some(_) => {
            return ApiError::new(
                ErrorCode::InvalidQuery,
                format!("q must be UTF-8 text of at most {MAX_SEARCH_CHARS} characters"),
            )
            .with("field", "q")
            .into_response();
        }
    };
    let with_load = query.get("load").is_some_and(|v| v == "true");
    let mut cursor = query.get("cursor").cloned().filter(|c| !c.is_empty());
    let mut threads: Vec<Value> = Vec::new();
    let mut next = None;
    for _ in 0..LIST_PAGES {
        let q = ThreadQuery {
            owner: owner.clone(),
            scope: options.scope.clone(),
            // Never more than the page has room for, so the store's cursor is where the
            // page ends.
            limit: limit - threads.len(),
            cursor: cursor.take(),
            search: search.clone(),
        };
        let page = match options.store.list_threads(&q).await {
            Ok(page) => page,
            Err(e) => return store_error(&e),
        };
        for t in page.threads {
            let load = t.id().starts_with(LOAD_THREAD_PREFIX);
            if load && !with_load {
                continue;
            }
            let mut t = json!(t);
            if load {
                t["load"] = Value::Bool(true);
            }
            threads.push(t);
        }
        next = page.next_cursor;
        if threads.len() >= limit || next.is_none() {
            break;
        }
        cursor.clone_from(&next);
    }
    json_ok(json!({"threads": threads, "nextCursor": next}))
}

/// The longest search text `GET P/threads?q=` takes, in characters.
const MAX_SEARCH_CHARS: usize = 200;

/// The longest title `PATCH P/threads/{id}` takes, in characters.
const MAX_TITLE_CHARS: usize = 200;

/// The largest body `PATCH P/threads/{id}` reads, in bytes.
const MAX_PATCH_BYTES: usize = 8 * 1024;

/// The longest thread or run id a `forkOf` names, in bytes.
const MAX_FORK_ID_BYTES: usize = 512;

/// `PATCH P/threads/{id}` with `{"title"?: string, "forkOf"?: {"threadId", "runId"}}`:
/// renames the caller's thread (whitespace collapsed; 1 to 200 characters, no control
/// characters) and records where it was forked from (a thread of the same namespace).
/// Answers the thread's listing entry, as `GET P/threads` lists it.
pub(crate) async fn update(
    options: StoreOptions,
    principal: Principal,
    id: String,
    uri: axum::http::Uri,
    body: Body,
) -> Response {
    let store = &*options.store;
    let Some(thread) = named_key(&options, &principal, &id, &uri) else {
        return no_thread(&id);
    };
    let bytes = match axum::body::to_bytes(body, MAX_PATCH_BYTES).await {
        Ok(b) => b,
        Err(_) => {
            return ApiError::new(
                ErrorCode::BodyTooLarge,
                format!("a thread update is at most {MAX_PATCH_BYTES} bytes"),
            )
            .into_response();
        }
    };
    let update = match parse_update(&bytes) {
        Ok(u) => u,
        Err((field, message)) => {
            return ApiError::new(ErrorCode::InvalidUpdate, message)
                .with("field", field)
                .into_response();
        }
    };
    if let Err(res) = visible(store, &principal, &thread, &id).await {
        return res;
    }
    match store.update_thread(&thread, &update).await {
        Ok(info) => json_ok(json!(info)),
        Err(StoreError::UnknownThread(_)) => no_thread(&id),
        Err(e) => store_error(&e),
    }
}

/// A `PATCH P/threads/{id}` body as a [`ThreadUpdate`], or the field at fault and why.
fn parse_update(bytes: &[u8]) -> Result<ThreadUpdate, (&'static str, String)> {
    let v: Value =
        serde_json::from_slice(bytes).map_err(|e| ("", format!("the body is not JSON: {e}")))?;
    let Some(o) = v.as_object() else {
        return Err(("", "the body is not a JSON object".into()));
    };
    if let Some(k) = o.keys().find(|k| *k != "title" && *k != "forkOf") {
        return Err((
            "",
            format!("unknown field {k:?}: expected title and forkOf"),
        ));
    }
    let mut update = ThreadUpdate::default();
    if let Some(t) = o.get("title") {
        let Some(t) = t.as_str() else {
            return Err(("title", "title is not a string".into()));
        };
        if t.chars().any(|c| c.is_control() && !c.is_whitespace()) {
            return Err(("title", "title holds a control character".into()));
        }
        let title = t.split_whitespace().collect::<Vec<_>>().join(" ");
        let n = title.chars().count();
        if n == 0 || n > MAX_TITLE_CHARS {
            return Err((
                "title",
                format!("title must have 1 to {MAX_TITLE_CHARS} characters besides white space"),
            ));
        }
        update.title = Some(title);
    }
    if let Some(f) = o.get("forkOf") {
        let id = |k: &str| {
            f.get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty() && s.len() <= MAX_FORK_ID_BYTES)
                .map(str::to_owned)
        };
        let (Some(thread_id), Some(run_id)) = (id("threadId"), id("runId")) else {
            return Err((
                "forkOf",
                format!(
                    "forkOf must be {{\"threadId\", \"runId\"}}: two strings of 1 to {MAX_FORK_ID_BYTES} bytes"
                ),
            ));
        };
        update.fork_of = Some(ForkOf { thread_id, run_id });
    }
    if update == ThreadUpdate::default() {
        return Err(("", "nothing to change: give title or forkOf".into()));
    }
    Ok(update)
}

/// The start of the thread ids `agui load` gives its runs: `GET P/threads` leaves such
/// threads out unless `?load=true`.
const LOAD_THREAD_PREFIX: &str = "agui-load-";

/// The most store pages one `GET P/threads` reads to fill its page past load threads.
const LIST_PAGES: usize = 20;

/// `GET P/threads/{id}`: the thread folded by the engine, and its runs.
pub(crate) async fn thread(
    options: StoreOptions,
    principal: Principal,
    id: String,
    uri: axum::http::Uri,
) -> Response {
    let store = &*options.store;
    let Some(thread) = named_key(&options, &principal, &id, &uri) else {
        return no_thread(&id);
    };
    if let Err(res) = visible(store, &principal, &thread, &id).await {
        return res;
    }
    sweep_abandoned(store, &thread).await;
    let (info, runs) = match (store.thread(&thread).await, store.runs(&thread).await) {
        (Ok(i), Ok(r)) => (i, r),
        (Err(e), _) | (_, Err(e)) => return store_error(&e),
    };
    let folded = match fold(&options, &info, |a| {
        let messages: Vec<&aguikit_core::Message> = a.messages().iter().collect();
        #[allow(unused_mut)] // without the feature `a2ui`
        let mut seen = json!({
            "messages": messages,
            "state": a.state(),
            "pendingInterrupts": a.pending_interrupts(),
        });
        #[cfg(feature = "a2ui")]
        if let Some(surfaces) = crate::a2ui::thread_surfaces(messages.iter().copied()) {
            seen["surfaces"] = surfaces;
        }
        seen
    })
    .await
    {
        Ok(f) => f,
        Err(e) => return store_error(&e),
    };
    let mut body = json!({
        "threadId": info.id(),
        "owner": info.owner,
        "title": info.title,
        "forkOf": info.fork_of,
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
    // Only a thread with A2UI surfaces has them (feature `a2ui`).
    if let Some(surfaces) = folded.seen.get("surfaces") {
        body["surfaces"] = surfaces.clone();
    }
    if let Some(e) = folded.unreadable {
        body["error"] =
            json!({"error": ErrorCode::CorruptEvent.as_str(), "message": e.to_string()});
    }
    json_ok(body)
}

/// `DELETE P/threads/{id}`.
pub(crate) async fn delete(
    options: StoreOptions,
    principal: Principal,
    id: String,
    uri: axum::http::Uri,
) -> Response {
    let store = &*options.store;
    let Some(thread) = named_key(&options, &principal, &id, &uri) else {
        return no_thread(&id);
    };
    if let Err(res) = visible(store, &principal, &thread, &id).await {
        return res;
    }
    // Refused by the store, atomically, while a run is in progress.
    let deleted = store.delete_thread(&thread).await;
    options.folds.forget(&thread);
    match deleted {
        Err(StoreError::ThreadBusy { run, .. }) => busy(&id, &run),
        Ok(true) => {
            let mut res = Response::new(Body::empty());
            *res.status_mut() = StatusCode::NO_CONTENT;
            res
        }
        Ok(false) => no_thread(&id),
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
        ApiError::new(ErrorCode::SequenceOutOfRange, message)
            .with("lastSeq", last_seq)
            .into_response()
    };
    let after = match text.parse::<u64>() {
        Ok(n) => n,
        Err(_) if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => {
            return Err(bad(format!(
                "Last-Event-ID {text} is past the end of thread {thread}, whose last event is {last_seq}"
            )));
        }
        Err(_) => {
            return Err(ApiError::new(
                ErrorCode::InvalidSequence,
                format!("Last-Event-ID / after must be a sequence number, got {text:?}"),
            )
            .into_response());
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
    id: String,
    headers: HeaderMap,
    uri: axum::http::Uri,
    keep_alive: Option<Duration>,
) -> Response {
    let store = options.store.clone();
    let Some(thread) = named_key(&options, &principal, &id, &uri) else {
        return no_thread(&id);
    };
    let info = match visible(&*store, &principal, &thread, &id).await {
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
        Some(t) => match resume_point(t, &id, info.last_seq) {
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
        let compact = aguikit_store::compact_stored(&runs, events);
        let n = compact.len();
        for (i, e) in compact.iter().enumerate() {
            history.push(frame((i + 1 == n).then_some(last), e));
        }
        if let Some(e) = bad {
            history.push(read_failure(&thread, &e));
            // Nothing after an unreadable event is sent.
            let (tx, rx) = mpsc::channel(history.len().max(1));
            for f in history {
                let _ = tx.try_send((f, 1));
            }
            return sse(rx, keep_alive);
        }
        next = last + 1;
    }
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(async move {
        for f in history {
            if tx.send((f, 1)).await.is_err() {
                return;
            }
        }
        let out = Out {
            tx,
            encoding: crate::negotiate::WireFormat::Sse,
        };
        follow(store, thread, next, None, out).await;
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
    let id = thread;
    let key = options.key(principal.owner(), id);
    let thread = key.as_str();
    if store.run(thread, run_id).await.is_err() {
        // No such run (or thread): the request starts it. A malformed Last-Event-ID is
        // still refused, as on every route.
        let t = last_event_id.trim();
        if !t.is_empty() && !t.bytes().all(|b| b.is_ascii_digit()) {
            return Some(
                ApiError::new(
                    ErrorCode::InvalidSequence,
                    format!("Last-Event-ID must be a sequence number, got {t:?}"),
                )
                .into_response(),
            );
        }
        return None;
    }
    let info = match visible(&*store, principal, thread, id).await {
        Ok(i) => i,
        Err(res) => return Some(res),
    };
    let first = match resume_point(last_event_id, id, info.last_seq) {
        Ok(n) => n,
        Err(res) => return Some(res),
    };
    let (thread, run_id) = (thread.to_owned(), run_id.to_owned());
    let (tx, rx) = mpsc::channel(64);
    let out = Out {
        tx,
        encoding: crate::negotiate::WireFormat::Sse,
    };
    tokio::spawn(follow(store, thread, first, Some(run_id), out));
    Some(sse(rx, keep_alive))
}

#[cfg(test)]
mod tests {
    use super::{StoreOptions, fold};
    use aguikit_core::Event;
    use aguikit_store::{EventStore, MemoryStore};
    use std::sync::Arc;

    fn ev(v: serde_json::Value) -> Event {
        Event::from_json_slice(&serde_json::to_vec(&v).unwrap()).unwrap()
    }

    /// A run of `messages` assistant messages (three events each), 2 + 3 × `messages`
    /// events.
    fn long_run(messages: usize) -> Vec<Event> {
        let mut run = vec![ev(
            serde_json::json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"}),
        )];
        for i in 0..messages {
            let id = format!("m{i}");
            run.push(ev(serde_json::json!({"type": "TEXT_MESSAGE_START", "messageId": id, "role": "assistant"})));
            run.push(ev(
                serde_json::json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": id, "delta": "x"}),
            ));
            run.push(ev(
                serde_json::json!({"type": "TEXT_MESSAGE_END", "messageId": id}),
            ));
        }
        run.push(ev(
            serde_json::json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}),
        ));
        run
    }

    /// A thread of several pages is folded whole, a page at a time, and cached up to its
    /// last event; a damaged event stops the fold there, with what came before it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_thread_is_folded_a_page_at_a_time() {
        let store = MemoryStore::new();
        store.append("t", "r", &long_run(900)).await.unwrap();
        let options = StoreOptions::new(Arc::new(store.clone()));
        let info = store.thread("t").await.unwrap();
        assert_eq!(info.last_seq, 2702);
        let f = fold(&options, &info, |a| a.messages().len()).await.unwrap();
        assert_eq!(
            (f.seen, f.invalid, f.unreadable.is_none()),
            (900, false, true)
        );
        assert!(options.folds.knows("t"));
        // From the cache: nothing left to read, the same result.
        let f = fold(&options, &info, |a| a.messages().len()).await.unwrap();
        assert_eq!(f.seen, 900);
        // Event 2000 (in the second page) damaged: the fold stops before it.
        options.folds.forget("t");
        store
            .replace_raw_unchecked("t", 2000, b"{".to_vec())
            .unwrap();
        let f = fold(&options, &info, |a| a.messages().len()).await.unwrap();
        match f.unreadable {
            Some(aguikit_store::StoreError::Corrupt { seq, .. }) => assert_eq!(seq, 2000),
            other => panic!("{other:?}"),
        }
        assert_eq!(f.seen, 666);
        assert!(!options.folds.knows("t"));
    }

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
