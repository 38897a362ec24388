//! Persistent runs (feature `store`): every event sent is appended to an
//! [`agui_store::EventStore`]; responses stream from the store with the event's sequence in
//! the SSE `id:` field, so a client resumes with `Last-Event-ID`; runs go on when their
//! client goes away unless [`StoreOptions::cancel_on_disconnect`] is set.
//!
//! Routes (under the agent's path `P`): `POST P` runs the agent; `GET P/threads` lists
//! threads; `GET P/threads/{id}` returns a thread and its runs; `GET P/threads/{id}/connect`
//! streams the thread's history (`?compacted=true` for the compacted form) from
//! `Last-Event-ID` (or `?after=N`) on, then the live events while a run is in progress.

use crate::context::RunShared;
use agui_core::Event;
use agui_core::event::RunError;
use agui_store::{EventStore, RunStatus, StoreError, StoredEvent};
use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

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
}

impl StoreOptions {
    /// The default options over `store`: runs outlive their client, 30 s leases.
    pub fn new(store: Arc<dyn EventStore>) -> StoreOptions {
        StoreOptions {
            store,
            cancel_on_disconnect: false,
            lease: Duration::from_secs(30),
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
async fn send_rest(
    store: &dyn EventStore,
    thread: &str,
    from: u64,
    run: Option<&str>,
    tx: &mpsc::Sender<bytes::Bytes>,
) {
    let rest = store.read(thread, from).await.unwrap_or_default();
    for item in rest.iter().filter(|i| run.is_none_or(|r| i.run_id == r)) {
        if tx.send(frame(Some(item.seq), &item.event)).await.is_err() {
            return;
        }
    }
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
    json_error(status, e.code(), e.to_string())
}

fn json_error(status: StatusCode, code: &str, message: String) -> Response {
    let mut res = (
        status,
        json!({"error": code, "message": message}).to_string(),
    )
        .into_response();
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    res
}

fn json_ok(body: serde_json::Value) -> Response {
    let mut res = (StatusCode::OK, body.to_string()).into_response();
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
    let stream =
        futures_util::stream::unfold((rx, guard, beat), |(mut rx, guard, beat)| async move {
            let f = match &beat {
                Some((every, frame)) => match tokio::time::timeout(*every, rx.recv()).await {
                    Ok(f) => f?,
                    Err(_) => frame.clone(),
                },
                None => rx.recv().await?,
            };
            Some((Ok::<_, std::convert::Infallible>(f), (rx, guard, beat)))
        });
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

/// Runs `drive` (the run's response body, which drives the agent) in the background,
/// persisting every event, and answers with the run's events from the store.
pub(crate) async fn start(
    options: &StoreOptions,
    run: Arc<RunShared>,
    taps: mpsc::UnboundedReceiver<Event>,
    drive: crate::body::RunBody,
    encoding: crate::negotiate::Encoding,
    keep_alive: Option<Duration>,
) -> Response {
    let store = options.store.clone();
    let (thread, run_id) = (run.thread_id.clone(), run.run_id.clone());
    let (first_tx, first_rx) = oneshot::channel();
    tokio::spawn(persist(
        store.clone(),
        run.clone(),
        taps,
        first_tx,
        options.lease,
    ));
    tokio::spawn(async move {
        let mut drive = drive;
        while drive.next().await.is_some() {}
    });
    let first = match first_rx.await {
        Ok(Ok(first)) => first,
        Ok(Err(e)) => return store_error(&e),
        Err(_) => {
            return json_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "store_backend",
                "the run ended before its first event was stored".into(),
            );
        }
    };
    let guard = options.cancel_on_disconnect.then(|| CancelGuard(run));
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(async move {
        let mut tail = store.tail(&thread, first);
        while let Some(item) = tail.next().await {
            let Ok(StoredEvent {
                seq,
                run_id: r,
                event,
            }) = item
            else {
                break;
            };
            if r != run_id {
                continue;
            }
            // SSE frames carry the sequence as `id:` (for Last-Event-ID); protobuf frames
            // have no such field. An event without a protobuf form is skipped; the
            // encoder cannot fail otherwise.
            let bytes = match encoding {
                crate::negotiate::Encoding::Sse => frame(Some(seq), &event),
                #[allow(unreachable_patterns)]
                _ => {
                    let mut out = bytes::BytesMut::new();
                    if crate::encode::FrameEncoder::new(encoding)
                        .encode(&event, &mut out)
                        .is_err()
                    {
                        continue;
                    }
                    out.freeze()
                }
            };
            if tx.send(bytes).await.is_err() || is_terminal(&event) {
                break;
            }
        }
    });
    streamed(rx, guard, encoding, keep_alive)
}

/// Appends the run's events as they come, in batches of what is waiting, and renews the
/// run's lease (before the first event, then every third of `lease`) until it ends.
async fn persist(
    store: Arc<dyn EventStore>,
    run: Arc<RunShared>,
    mut taps: mpsc::UnboundedReceiver<Event>,
    first: oneshot::Sender<Result<u64, StoreError>>,
    lease: Duration,
) {
    let mut first = Some(first);
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
        match store.append(&run.thread_id, &run.run_id, &batch).await {
            Ok(range) => {
                if let Some(tx) = first.take() {
                    let _ = tx.send(Ok(range.start));
                }
                if batch.iter().any(is_terminal) {
                    return;
                }
            }
            Err(e) => {
                tracing::error!(thread_id = %run.thread_id, run_id = %run.run_id, "cannot store events: {e}");
                run.sink.disconnect();
                if let Some(tx) = first.take() {
                    let _ = tx.send(Err(e));
                }
                return;
            }
        }
    }
}

/// `GET P/threads`.
pub(crate) async fn threads(store: Arc<dyn EventStore>) -> Response {
    match store.threads().await {
        Ok(list) => json_ok(json!({ "threads": list })),
        Err(e) => store_error(&e),
    }
}

/// `GET P/threads/{id}`.
pub(crate) async fn thread(store: Arc<dyn EventStore>, thread: String) -> Response {
    sweep_abandoned(&*store, &thread).await;
    let info = match store.thread(&thread).await {
        Ok(i) => i,
        Err(e) => return store_error(&e),
    };
    match store.runs(&thread).await {
        Ok(runs) => json_ok(json!({ "thread": info, "runs": runs })),
        Err(e) => store_error(&e),
    }
}

/// `GET P/threads/{id}/connect`.
pub(crate) async fn connect(
    store: Arc<dyn EventStore>,
    thread: String,
    headers: HeaderMap,
    uri: axum::http::Uri,
    keep_alive: Option<Duration>,
) -> Response {
    let query: std::collections::HashMap<String, String> = uri
        .query()
        .unwrap_or("")
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    let after_text = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| query.get("after").cloned());
    let after = match after_text.as_deref().map(str::trim) {
        None | Some("") => 0,
        Some(t) => match t.parse::<u64>() {
            Ok(n) => n,
            Err(_) => {
                return json_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_sequence",
                    format!("Last-Event-ID / after must be a sequence number, got {t:?}"),
                );
            }
        },
    };
    let compacted = query
        .get("compacted")
        .is_some_and(|v| v == "true" || v == "1");
    let mut history = Vec::new();
    let mut next = after + 1;
    if compacted && after == 0 {
        let (events, runs) = match (store.read(&thread, 1).await, store.runs(&thread).await) {
            (Ok(e), Ok(r)) => (e, r),
            (Err(e), _) | (_, Err(e)) => return store_error(&e),
        };
        let last = events.last().map_or(0, |e| e.seq);
        let compact = agui_store::compact_stored(&runs, events);
        let n = compact.len();
        for (i, e) in compact.iter().enumerate() {
            history.push(frame((i + 1 == n).then_some(last), e));
        }
        next = last + 1;
    } else if let Err(e) = store.read_raw(&thread, next, 0).await {
        return store_error(&e);
    }
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(async move {
        for f in history {
            if tx.send(f).await.is_err() {
                return;
            }
        }
        let running =
            |runs: &[agui_store::RunInfo]| runs.iter().any(|r| r.status == RunStatus::Running);
        let mut tail = store.tail(&thread, next);
        let mut last_lease_check = std::time::Instant::now() - LEASE_CHECK;
        loop {
            // Stored events first; once caught up, stop when no run is in progress.
            let item = match tokio::time::timeout(std::time::Duration::from_millis(50), tail.next())
                .await
            {
                Ok(Some(Ok(item))) => item,
                Ok(_) => return,
                Err(_) => {
                    if last_lease_check.elapsed() >= LEASE_CHECK {
                        last_lease_check = std::time::Instant::now();
                        sweep_abandoned(&*store, &thread).await;
                    }
                    if !store
                        .runs(&thread)
                        .await
                        .map(|r| running(&r))
                        .unwrap_or(false)
                    {
                        send_rest(&*store, &thread, next, None, &tx).await;
                        return;
                    }
                    continue;
                }
            };
            next = item.seq + 1;
            if tx.send(frame(Some(item.seq), &item.event)).await.is_err() {
                return;
            }
        }
    });
    sse(rx, keep_alive)
}

/// `POST P` with `Last-Event-ID`: a client resuming a broken response. When the store holds
/// the run, the response carries the run's events after that sequence, then its live ones
/// until it ends — the run is not started again. `None`: no such run (the request starts a
/// run as usual).
pub(crate) async fn reattach(
    options: &StoreOptions,
    thread: &str,
    run_id: &str,
    last_event_id: &str,
    keep_alive: Option<Duration>,
) -> Option<Response> {
    let store = options.store.clone();
    let Ok(after) = last_event_id.trim().parse::<u64>() else {
        return Some(json_error(
            StatusCode::BAD_REQUEST,
            "invalid_sequence",
            format!("Last-Event-ID must be a sequence number, got {last_event_id:?}"),
        ));
    };
    store.run(thread, run_id).await.ok()?;
    let (thread, run_id) = (thread.to_owned(), run_id.to_owned());
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(async move {
        let mut tail = store.tail(&thread, after + 1);
        let mut next = after + 1;
        let mut last_lease_check = std::time::Instant::now() - LEASE_CHECK;
        loop {
            let item = match tokio::time::timeout(std::time::Duration::from_millis(50), tail.next())
                .await
            {
                Ok(Some(Ok(item))) => item,
                Ok(_) => return,
                Err(_) => {
                    // Caught up: stop once the run is over (its end was before `after`);
                    // close it when its server died (its RUN_ERROR then comes next).
                    if last_lease_check.elapsed() >= LEASE_CHECK {
                        last_lease_check = std::time::Instant::now();
                        let _ = store
                            .abandon_if_expired(&thread, &run_id, lease_now())
                            .await;
                    }
                    match store.run(&thread, &run_id).await {
                        Ok(r) if r.status == RunStatus::Running => continue,
                        _ => {
                            send_rest(&*store, &thread, next, Some(&run_id), &tx).await;
                            return;
                        }
                    }
                }
            };
            next = item.seq + 1;
            if item.run_id != run_id {
                continue;
            }
            if tx.send(frame(Some(item.seq), &item.event)).await.is_err()
                || is_terminal(&item.event)
            {
                return;
            }
        }
    });
    Some(sse(rx, keep_alive))
}
