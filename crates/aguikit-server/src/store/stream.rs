//! Streaming stored events to a client: SSE frames numbered with their store sequence (for
//! `Last-Event-ID`), followers of a thread or run, keep-alives and cancel-on-disconnect.

use crate::RunErrorCode;
use crate::context::RunShared;
use aguikit_core::Event;
use aguikit_core::codec::sse;
use aguikit_core::event::RunError;
use aguikit_store::{EventStore, RunStatus, StoreError};
use axum::body::Body;
use axum::response::Response;
use futures_util::StreamExt;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

use super::lease::{LEASE_CHECK, lease_now, sweep_abandoned};

/// Sends the stored events of `thread` from `from` on (those of `run` only, when given)
/// that a tail has not delivered yet: a run's end appended just before the tail stopped.
/// A corrupt event ends it with the `corrupt_event` frame.
pub(super) async fn send_rest(
    store: &dyn EventStore,
    thread: &str,
    from: u64,
    run: Option<&str>,
    out: &Out,
) {
    let (rest, bad) = match store.read_until_corrupt(thread, from).await {
        Ok(r) => r,
        Err(e) => (Vec::new(), Some(e)),
    };
    for item in rest.iter().filter(|i| run.is_none_or(|r| i.run_id == r)) {
        if !out.send(Some(item.seq), &item.event).await {
            return;
        }
    }
    if let Some(e) = bad {
        out.send(None, &read_failure_event(thread, &e)).await;
    }
}

/// What a response's channel carries: the frames of this many events, joined (a
/// keep-alive counts none).
pub(super) type Frames = (bytes::Bytes, u64);

/// Where a stream of stored events goes: a response's channel, in its encoding.
pub(super) struct Out {
    pub(super) tx: mpsc::Sender<Frames>,
    pub(super) encoding: crate::negotiate::WireFormat,
}

impl Out {
    /// Sends `event` as one frame (numbered `seq` in SSE); an event without a protobuf
    /// form is skipped. False when the response is gone.
    async fn send(&self, seq: Option<u64>, event: &Event) -> bool {
        match encoded(self.encoding, seq, event) {
            Some(f) => self.tx.send((f, 1)).await.is_ok(),
            None => true,
        }
    }
}

/// Sends the stored events of `thread` from `next` on, then the live ones as they are
/// appended: those of `run` only, up to its terminal event, when a run is given. Once caught
/// up it stops when nothing it follows is running (the run, or any run of the thread), and
/// closes what it follows when the lease expired (its server died). A stored event that
/// cannot be read ends it with the `corrupt_event` frame.
pub(super) async fn follow(
    store: Arc<dyn EventStore>,
    thread: String,
    mut next: u64,
    run: Option<String>,
    out: Out,
) {
    let mut tail = store.tail(&thread, next);
    let mut last_lease_check = std::time::Instant::now() - LEASE_CHECK;
    loop {
        let item = match tokio::time::timeout(Duration::from_millis(50), tail.next()).await {
            Ok(Some(Ok(item))) => item,
            Ok(Some(Err(e))) => {
                out.send(None, &read_failure_event(&thread, &e)).await;
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
                    send_rest(&*store, &thread, next, run.as_deref(), &out).await;
                    return;
                }
                continue;
            }
        };
        next = item.seq + 1;
        if run.as_deref().is_some_and(|r| r != item.run_id) {
            continue;
        }
        if !out.send(Some(item.seq), &item.event).await
            || (run.is_some() && is_terminal(&item.event))
        {
            return;
        }
    }
}

/// The live side of a new run's response. The persisting task hands each event to it once
/// the event is stored, numbered with its sequence, so the response never reads back what
/// it was just handed. The persisting task never waits for a client: one that falls more
/// than the channel behind is handed to a follower of the store from the first event it
/// missed (the store is a slow client's buffer), and one that went away is let go.
pub(super) struct Live {
    pub(super) out: Out,
    pub(super) store: Arc<dyn EventStore>,
    pub(super) thread: String,
    pub(super) run: String,
}

impl Live {
    /// Delivers `events`, stored from `first` on, in one message of the channel; `frames`
    /// holds each one's frame as the sink wrote it (no `id:` line), when it has one. `None`
    /// once the live feed is over: the client went away, or fell behind and a follower of
    /// the store took over (from the first of these events).
    pub(super) fn feed(
        self,
        first: u64,
        events: &[Event],
        frames: &[Option<bytes::Bytes>],
    ) -> Option<Live> {
        let sse = self.out.encoding == crate::negotiate::WireFormat::Sse;
        let size: usize = frames.iter().flatten().map(|f| f.len() + 24).sum();
        let mut out = Vec::with_capacity(size);
        let mut n = 0;
        for (seq, (event, frame)) in (first..).zip(events.iter().zip(frames)) {
            match frame {
                // The sink's SSE frame after the id line: the bytes `write_frame_with_id`
                // writes for its JSON, which holds no line break.
                Some(f) if sse && sse_json(f).is_some() => {
                    out.extend_from_slice(b"id: ");
                    out.extend_from_slice(itoa::Buffer::new().format(seq).as_bytes());
                    out.push(b'\n');
                    out.extend_from_slice(f);
                }
                // A protobuf frame has no id.
                Some(f) if !sse => out.extend_from_slice(f),
                _ => match encoded(self.out.encoding, Some(seq), event) {
                    Some(b) => out.extend_from_slice(&b),
                    None => continue,
                },
            }
            n += 1;
        }
        if n == 0 {
            return Some(self);
        }
        match self.out.tx.try_send((out.into(), n)) {
            Ok(()) => Some(self),
            Err(mpsc::error::TrySendError::Full(_)) => {
                tokio::spawn(follow(
                    self.store,
                    self.thread,
                    first,
                    Some(self.run),
                    self.out,
                ));
                None
            }
            Err(mpsc::error::TrySendError::Closed(_)) => None,
        }
    }

    /// Ends the response with a `RUN_ERROR` (code of `e`) when the run's events could not
    /// be stored: the run ends there, and nothing after the last stored event was sent.
    pub(super) fn fail(self, e: &StoreError) {
        let event: Event = RunError::new(format!("the run's events could not be stored: {e}"))
            .with_code(e.code())
            .into();
        if let Some(f) = encoded(self.out.encoding, None, &event) {
            tokio::spawn(async move {
                let _ = self.out.tx.send((f, 1)).await;
            });
        }
    }
}

/// The `RUN_ERROR` frame that ends a stream whose next stored event cannot be read.
pub(super) fn read_failure(thread: &str, e: &StoreError) -> bytes::Bytes {
    frame(None, &read_failure_event(thread, e))
}

/// The `RUN_ERROR` that ends a stream whose next stored event cannot be read (code
/// `corrupt_event` for an undecodable record, else the store error's code), logged.
pub(super) fn read_failure_event(thread: &str, e: &StoreError) -> Event {
    tracing::error!(thread_id = %thread, "cannot read the stored thread: {e}");
    RunError::new(format!("the stored thread cannot be read further: {e}"))
        .with_code(e.code())
        .into()
}

/// `event` as one frame in `encoding`: SSE frames carry the sequence as `id:` (for
/// Last-Event-ID), protobuf frames have no such field. `None` for an event without a
/// protobuf form; the encoder cannot fail otherwise.
pub(super) fn encoded(
    encoding: crate::negotiate::WireFormat,
    seq: Option<u64>,
    event: &Event,
) -> Option<bytes::Bytes> {
    if encoding == crate::negotiate::WireFormat::Sse {
        return Some(frame(seq, event));
    }
    let mut encoder = crate::encode::FrameEncoder::new(encoding);
    let frame = encoder.frame(event).ok()?;
    Some(bytes::Bytes::copy_from_slice(frame))
}

/// `event` as one SSE frame, with its store sequence as the `id:` when given (core's SSE
/// writer: the bytes the reference encoder writes, after the id line).
pub(super) fn frame(seq: Option<u64>, event: &Event) -> bytes::Bytes {
    json_frame(seq, &event.to_json_vec())
}

/// One SSE frame of an event's `json`, with `seq` as the `id:` when given.
fn json_frame(seq: Option<u64>, json: &[u8]) -> bytes::Bytes {
    let mut out = Vec::with_capacity(json.len() + 32);
    match seq {
        Some(seq) => sse::write_frame_with_id(&mut out, itoa::Buffer::new().format(seq), json),
        None => sse::write_frame(&mut out, json),
    }
    out.into()
}

/// The event's JSON in an SSE data frame as the sink writes it (`data: <json>` and two
/// LFs, no `id:` line).
pub(super) fn sse_json(frame: &[u8]) -> Option<&[u8]> {
    frame.strip_prefix(b"data: ")?.strip_suffix(b"\n\n")
}

pub(super) fn is_terminal(e: &Event) -> bool {
    matches!(e, Event::RunFinished(_) | Event::RunError(_))
}

/// An SSE response fed by a channel of frames.
pub(super) fn sse(rx: mpsc::Receiver<Frames>, keep_alive: Option<Duration>) -> Response {
    streamed(rx, None, crate::negotiate::WireFormat::Sse, keep_alive)
}

/// A response in `encoding` fed by a channel of frames. When no frame has come for
/// `keep_alive`, a keep-alive comment is sent (SSE only: protobuf has no such frame), so
/// proxies do not close a stream that waits on a slow run.
pub(super) fn streamed(
    rx: mpsc::Receiver<Frames>,
    guard: Option<CancelGuard>,
    encoding: crate::negotiate::WireFormat,
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
            let (mut f, mut events) = match &beat {
                Some((every, frame)) => match tokio::time::timeout(*every, rx.recv()).await {
                    Ok(f) => f?,
                    Err(_) => (frame.clone(), 0),
                },
                None => rx.recv().await?,
            };
            // Frames already waiting leave in the same write (fewer syscalls and wake-ups
            // for the client; nothing waits for more).
            if events > 0 {
                let mut joined: Option<bytes::BytesMut> = None;
                while joined.as_ref().map_or(f.len(), |j| j.len()) < COALESCE_BYTES {
                    let Ok((next, n)) = rx.try_recv() else { break };
                    joined
                        .get_or_insert_with(|| bytes::BytesMut::from(&f[..]))
                        .extend_from_slice(&next);
                    events += n;
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
    crate::server::stream_response(Body::from_stream(stream), encoding)
}

/// Frames waiting in a stream's channel are joined into one write up to this size.
const COALESCE_BYTES: usize = 64 * 1024;

/// Ends the run with `RUN_ERROR` (code `disconnected`) when the response is dropped early.
pub(super) struct CancelGuard(pub(super) Arc<RunShared>);

impl Drop for CancelGuard {
    fn drop(&mut self) {
        if self
            .0
            .sink
            .fail(RunError::new("the client disconnected").with_code(RunErrorCode::Disconnected))
        {
            tracing::info!("client went away; run cancelled (cancel-on-disconnect)");
        }
    }
}
