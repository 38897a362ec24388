//! The bounded, verified buffer between an agent and its HTTP response.
//!
//! Emitters push events: each is stamped, verified with the protocol engine (expansion of
//! `*_CHUNK` shorthands, then the verifier) and encoded straight into one byte buffer. The
//! response body takes the whole buffer at each poll, so events written while the socket is
//! busy leave as one chunk. When `buffer_bytes` are waiting, async emitters wait for the
//! client to read: a slow client slows the agent and memory stays bounded.

use crate::RunErrorCode;
use crate::config::ServerConfig;
use crate::encode::FrameEncoder;
use crate::error::EmitError;
use crate::event_ext::{is_chunk, now_ms, stamp_timestamp};
use aguikit_core::engine::Violation;
use aguikit_core::engine::expand::Expander;
use aguikit_core::engine::verify::Verifier;
use aguikit_core::event::RunError;
use aguikit_core::{Event, Interrupt, TokenUsage};
use bytes::{Bytes, BytesMut};
use std::pin::pin;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use tokio::sync::Notify;

/// Where a run's stream stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    /// Accepting events.
    Open,
    /// The terminal event is written.
    Ended,
    /// The client went away; nothing more is written.
    Gone,
}

/// What the response body gets from one poll.
pub(crate) enum Taken {
    /// Bytes, and how many events they hold.
    Bytes(Bytes, u64),
    End,
    Pending,
}

/// The events sent while a tap is set ([`Sink::start_tapped`]) and not taken yet by the store
/// writer ([`Sink::tapped`]), each with its frame in the response's encoding (an SSE frame
/// without an `id:` line, or a protobuf frame). The writer takes them in one swap: no
/// channel message per event, and each event moved once more, into the batch it is stored
/// in.
struct Tap {
    events: Vec<Event>,
    frames: Vec<Option<Bytes>>,
    /// Where the frames are written, each then split off: one allocation for many frames
    /// (a new one once every frame written in the last is released, or when it is full).
    bytes: BytesMut,
    /// The store writer, waiting for events.
    waker: Option<Waker>,
}

/// Room for this many events in the tap's vectors and the writer's from the start (they go
/// back and forth between the two): growing from empty reallocated each run's events five
/// times.
pub(crate) const TAP_ROOM: usize = 16;

/// The size of the tap's frame buffer (and of each it takes when one is full).
const TAP_BYTES: usize = 4096;

impl Tap {
    fn new() -> Tap {
        Tap {
            events: Vec::with_capacity(TAP_ROOM),
            frames: Vec::with_capacity(TAP_ROOM),
            bytes: BytesMut::with_capacity(TAP_BYTES),
            waker: None,
        }
    }
}

pub(crate) struct Sink {
    inner: Mutex<Inner>,
    /// Woken when buffered bytes were taken or the run closed.
    space: Notify,
    /// Woken when the run closed.
    closed: Notify,
}

struct Inner {
    buf: BytesMut,
    encoder: FrameEncoder,
    expander: Expander,
    verifier: Verifier,
    expanded: Vec<Event>,
    chunks_seen: bool,
    status: Status,
    waker: Option<Waker>,
    waiting: usize,
    events: u64,
    /// Events already taken by the response body.
    events_taken: u64,
    /// Times the agent's first event (metrics).
    first_event: Option<crate::metrics::FirstEvent>,
    high_water: usize,
    /// Bytes of frames handed to the tap and not stored yet ([`Sink::stored`]): they count
    /// against `high_water` like buffered bytes.
    tapped: usize,
    max_event_bytes: usize,
    max_events: Option<u64>,
    verify: bool,
    timestamps: bool,
    /// Usage reported during the run, for RUN_FINISHED / RUN_ERROR.
    pub(crate) usage: Vec<TokenUsage>,
    /// Interrupts raised during the run, for RUN_FINISHED.
    pub(crate) interrupts: Vec<Interrupt>,
    /// Why the run ended, when the runtime ended it (for logs and tests).
    pub(crate) end_reason: Option<String>,
    /// Holds every event sent, with its frame, instead of the buffer (the store hook
    /// persists them and feeds the response with their frames).
    tap: Option<Tap>,
}

impl Sink {
    pub(crate) fn new(
        config: &ServerConfig,
        encoder: FrameEncoder,
        first_event: Option<crate::metrics::FirstEvent>,
    ) -> Sink {
        Sink {
            inner: Mutex::new(Inner {
                buf: BytesMut::with_capacity(config.buffer_bytes.min(1024)),
                encoder,
                expander: Expander::new(),
                verifier: Verifier::new(),
                expanded: Vec::new(),
                chunks_seen: false,
                status: Status::Open,
                waker: None,
                waiting: 0,
                events: 0,
                events_taken: 0,
                first_event,
                high_water: config.buffer_bytes,
                tapped: 0,
                max_event_bytes: config.max_event_bytes,
                max_events: config.max_events_per_run,
                verify: config.verify,
                timestamps: config.event_timestamps,
                usage: Vec::new(),
                interrupts: Vec::new(),
                end_reason: None,
                tap: None,
            }),
            space: Notify::new(),
            closed: Notify::new(),
        }
    }

    /// For the store writer: moves up to `max` of the events sent since the last call, in
    /// order, into `events` and their frames into `frames` (both empty), waiting while
    /// there are none. `false` once the run is over and every event was taken, or when no
    /// tap is set.
    #[cfg_attr(not(feature = "store"), allow(dead_code))]
    pub(crate) async fn tapped(
        &self,
        events: &mut Vec<Event>,
        frames: &mut Vec<Option<Bytes>>,
        max: usize,
    ) -> bool {
        std::future::poll_fn(|cx| {
            let mut g = self.lock();
            let open = g.status == Status::Open;
            let Some(tap) = g.tap.as_mut() else {
                return Poll::Ready(false);
            };
            if tap.events.len() > max {
                events.extend(tap.events.drain(..max));
                frames.extend(tap.frames.drain(..max));
                return Poll::Ready(true);
            }
            if !tap.events.is_empty() {
                // The writer's emptied vectors come back for the next events.
                std::mem::swap(&mut tap.events, events);
                std::mem::swap(&mut tap.frames, frames);
                return Poll::Ready(true);
            }
            if !open {
                return Poll::Ready(false);
            }
            match &tap.waker {
                Some(w) if w.will_wake(cx.waker()) => {}
                _ => tap.waker = Some(cx.waker().clone()),
            }
            Poll::Pending
        })
        .await
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `f` on the run's bookkeeping (usage, interrupts).
    pub(crate) fn with<T>(
        &self,
        f: impl FnOnce(&mut Vec<TokenUsage>, &mut Vec<Interrupt>) -> T,
    ) -> T {
        let mut g = self.lock();
        let g = &mut *g;
        f(&mut g.usage, &mut g.interrupts)
    }

    pub(crate) fn status(&self) -> Status {
        self.lock().status
    }

    pub(crate) fn end_reason(&self) -> Option<String> {
        self.lock().end_reason.clone()
    }

    pub(crate) fn events(&self) -> u64 {
        self.lock().events
    }

    /// Pushes an agent event, waiting for room first when the buffer is full.
    pub(crate) async fn send(&self, event: Event) -> Result<(), EmitError> {
        {
            let mut g = self.lock();
            if g.status != Status::Open {
                return Err(EmitError::Closed);
            }
            if g.has_room() {
                return self.push_locked(&mut g, event, true, true);
            }
        }
        self.wait_space().await?;
        let mut g = self.lock();
        self.push_locked(&mut g, event, true, true)
    }

    /// Pushes an agent event now, whatever the buffer holds (one event of overshoot per
    /// caller). Used where waiting is impossible: handles ending in `Drop`, and emitters
    /// that must update other bookkeeping atomically with the push.
    pub(crate) fn push_now(&self, event: Event) -> Result<(), EmitError> {
        let mut g = self.lock();
        self.push_locked(&mut g, event, true, true)
    }

    /// Waits until the buffer has room (or the run is closed).
    pub(crate) async fn wait_space(&self) -> Result<(), EmitError> {
        loop {
            let mut notified = pin!(self.space.notified());
            notified.as_mut().enable();
            {
                let mut g = self.lock();
                if g.status != Status::Open {
                    return Err(EmitError::Closed);
                }
                if g.has_room() {
                    return Ok(());
                }
                g.waiting += 1;
            }
            notified.await;
            self.lock().waiting -= 1;
        }
    }

    /// `bytes` of tapped frames were stored: they no longer count against the buffer.
    #[cfg_attr(not(feature = "store"), allow(dead_code))]
    pub(crate) fn stored(&self, bytes: usize) {
        let mut g = self.lock();
        g.tapped = g.tapped.saturating_sub(bytes);
        let waiting = g.waiting > 0;
        drop(g);
        if waiting {
            self.space.notify_waiters();
        }
    }

    /// Resolves once the run is no longer open.
    pub(crate) async fn closed(&self) {
        loop {
            let mut notified = pin!(self.closed.notified());
            notified.as_mut().enable();
            if self.lock().status != Status::Open {
                return;
            }
            notified.await;
        }
    }

    /// Pushes a runtime event (RUN_STARTED / RUN_FINISHED) through the same checks.
    /// `last` ends the stream after it.
    pub(crate) fn push_runtime(&self, event: Event, last: bool) -> Result<(), EmitError> {
        let mut g = self.lock();
        let r = self.push_locked(&mut g, event, false, true);
        if r.is_ok() && last {
            g.status = Status::Ended;
            drop(g);
            self.wake_all();
        }
        r
    }

    /// The run's `RUN_STARTED` when the run is stored: verified and counted like
    /// [`push_runtime`](Self::push_runtime)'s, not written (the store's copy, which echoes
    /// the input, is what the client gets). Then sets the tap: every event sent from now on
    /// is kept, with its encoded frame, for [`Sink::tapped`] instead of being written to
    /// the buffer; the response body gets nothing more than the end (and keep-alives), and
    /// the tap's reader answers the client.
    #[cfg_attr(not(feature = "store"), allow(dead_code))]
    pub(crate) fn start_tapped(&self, started: Event) -> Result<(), EmitError> {
        let mut g = self.lock();
        self.push_locked(&mut g, started, false, false)?;
        g.tap = Some(Tap::new());
        Ok(())
    }

    /// Ends the run with RUN_ERROR (if it is still open). Returns whether it did.
    pub(crate) fn fail(&self, error: RunError) -> bool {
        let mut g = self.lock();
        if g.status != Status::Open {
            return false;
        }
        self.fail_locked(&mut g, error);
        true
    }

    /// The client went away: stop accepting events.
    pub(crate) fn disconnect(&self) -> bool {
        let mut g = self.lock();
        if g.status != Status::Open {
            return false;
        }
        g.status = Status::Gone;
        g.buf.clear();
        drop(g);
        self.wake_all();
        true
    }

    /// For the response body: the buffered bytes, the end, or nothing yet.
    pub(crate) fn take(&self, cx: &mut Context<'_>) -> Taken {
        let mut g = self.lock();
        if !g.buf.is_empty() {
            let bytes = g.buf.split().freeze();
            let events = g.events - g.events_taken;
            g.events_taken = g.events;
            let waiting = g.waiting > 0;
            drop(g);
            if waiting {
                self.space.notify_waiters();
            }
            return Taken::Bytes(bytes, events);
        }
        if g.status != Status::Open {
            return Taken::End;
        }
        match &g.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => g.waker = Some(cx.waker().clone()),
        }
        Taken::Pending
    }

    pub(crate) fn keep_alive_frame(&self) -> Option<Bytes> {
        self.lock().encoder.keep_alive()
    }

    fn wake_all(&self) {
        let mut g = self.lock();
        let waker = g.waker.take();
        let writer = g.tap.as_mut().and_then(|t| t.waker.take());
        drop(g);
        if let Some(w) = waker {
            w.wake();
        }
        if let Some(w) = writer {
            w.wake();
        }
        self.space.notify_waiters();
        self.closed.notify_waiters();
    }

    /// Checks `event` and, when `send`, writes its frame (to the tap or the buffer).
    fn push_locked(
        &self,
        g: &mut Inner,
        mut event: Event,
        from_agent: bool,
        send: bool,
    ) -> Result<(), EmitError> {
        if g.status != Status::Open {
            return Err(EmitError::Closed);
        }
        if g.timestamps || !from_agent {
            stamp_timestamp(&mut event, now_ms());
        }
        if let Some(max) = g.max_events
            && g.events >= max
        {
            let err = EmitError::TooManyEvents(max);
            self.fail_locked(
                g,
                RunError::new(err.to_string()).with_code(RunErrorCode::TooManyEvents),
            );
            return Err(err);
        }
        if g.verify
            && let Err(v) = g.check(&event)
        {
            tracing::warn!(
                rule = v.rule,
                event_type = event.type_str(),
                "outgoing event breaks the protocol: {}",
                v.message
            );
            self.fail_locked(
                g,
                RunError::new(format!(
                    "the server refused to send an invalid {} event: {v}",
                    event.type_str()
                ))
                .with_code(RunErrorCode::ProtocolViolation),
            );
            return Err(EmitError::Violation(v));
        }
        if send {
            self.write_locked(g, event)?;
        }
        g.events += 1;
        if from_agent && let Some(first) = &mut g.first_event {
            first.seen();
            g.first_event = None;
        }
        if let Some(w) = g.waker.take() {
            w.wake();
        }
        Ok(())
    }

    /// Encodes `event` and hands its frame on ([`deliver`]); a frame that cannot be
    /// written or is too large ends the run.
    fn write_locked(&self, g: &mut Inner, event: Event) -> Result<(), EmitError> {
        let Inner {
            encoder,
            buf,
            tap,
            tapped,
            max_event_bytes,
            ..
        } = g;
        let frame = match encoder.frame(&event) {
            Ok(f) => f,
            Err(e) => {
                let err = EmitError::Encode(e);
                self.fail_locked(
                    g,
                    RunError::new(err.to_string()).with_code(RunErrorCode::EncodeError),
                );
                return Err(err);
            }
        };
        if frame.len() > *max_event_bytes {
            let err = EmitError::TooLarge {
                size: frame.len(),
                limit: *max_event_bytes,
            };
            tracing::warn!(
                event_type = event.type_str(),
                size = frame.len(),
                "outgoing event too large"
            );
            self.fail_locked(
                g,
                RunError::new(err.to_string()).with_code(RunErrorCode::EventTooLarge),
            );
            return Err(err);
        }
        deliver(tap, tapped, buf, event, frame);
        Ok(())
    }

    fn fail_locked(&self, g: &mut Inner, mut error: RunError) {
        if error.usage.is_none() && !g.usage.is_empty() {
            error.usage = Some(aguikit_core::usage::aggregate_token_usage(&g.usage));
        }
        error.timestamp.get_or_insert_with(now_ms);
        g.end_reason = Some(error.message.clone());
        let event = Event::from(error);
        let Inner {
            encoder,
            buf,
            tap,
            tapped,
            ..
        } = g;
        if let Ok(frame) = encoder.frame(&event) {
            deliver(tap, tapped, buf, event, frame);
            g.events += 1;
        }
        g.status = Status::Ended;
        if let Some(w) = g.waker.take() {
            w.wake();
        }
        if let Some(w) = g.tap.as_mut().and_then(|t| t.waker.take()) {
            w.wake();
        }
        self.space.notify_waiters();
        self.closed.notify_waiters();
    }
}

/// Hands `event`'s encoded `frame` on: to the tap when one is set (copied out of the
/// encoder's buffer, held by the store writer until the event is stored, counted in
/// `tapped`), waking the writer, else to the response's buffer.
fn deliver(
    tap: &mut Option<Tap>,
    tapped: &mut usize,
    buf: &mut BytesMut,
    event: Event,
    frame: &[u8],
) {
    match tap {
        Some(tap) => {
            tap.bytes.extend_from_slice(frame);
            let frame = tap.bytes.split().freeze();
            *tapped += frame.len();
            tap.events.push(event);
            tap.frames.push(Some(frame));
            if let Some(w) = tap.waker.take() {
                w.wake();
            }
        }
        None => buf.extend_from_slice(frame),
    }
}

impl Inner {
    /// Whether an async emitter may push now: what waits for the client (or, with a
    /// store, to be stored) is under the high-water mark.
    fn has_room(&self) -> bool {
        self.buf.len() + self.tapped < self.high_water
    }

    /// Expands (only once chunks appeared: until then expansion is the identity) and
    /// verifies one event.
    fn check(&mut self, event: &Event) -> Result<(), Violation> {
        if matches!(event, Event::Unknown(_)) {
            // The reference client drops unknown event types before expansion.
            return Ok(());
        }
        if is_chunk(event) {
            self.chunks_seen = true;
        }
        if !self.chunks_seen {
            return self.verifier.push(event);
        }
        self.expanded.clear();
        self.expander.push(event.clone(), &mut self.expanded)?;
        for e in &self.expanded {
            self.verifier.push(e)?;
        }
        Ok(())
    }
}
