//! [`RunStream`]: the verified events of one run, abortable.

use crate::error::ClientError;
use aguikit_core::Event;
use aguikit_core::engine::expand::Expander;
use aguikit_core::engine::verify::Verifier;
use aguikit_core::event::RunError;
use futures_util::Stream;
use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::middleware::EventStream;
use futures_util::task::AtomicWaker;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// At most this many warnings are kept per run.
const MAX_WARNINGS: usize = 200;

/// What is known about a run's HTTP response(s), and what was stripped on the way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResponseInfo {
    /// The status of the last response.
    pub status: Option<u16>,
    /// The `Content-Type` of the last response.
    pub content_type: Option<String>,
    /// Reconnections made.
    pub reconnects: u32,
    /// Material the decoder dropped (unknown events, unknown fields, legacy `null`s), as
    /// `event N: what` (at most 200).
    pub warnings: Vec<String>,
}

/// State shared by the transport, the middleware chain and the [`RunStream`](crate::RunStream) of one run.
#[derive(Debug, Default)]
pub(crate) struct RunShared {
    info: Mutex<ResponseInfo>,
    aborted: AtomicBool,
    pub(crate) waker: AtomicWaker,
}

impl RunShared {
    pub(crate) fn info(&self) -> std::sync::MutexGuard<'_, ResponseInfo> {
        // A poisoned lock only means a panic elsewhere; the data is still usable.
        self.info.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn record_response(&self, status: u16, content_type: Option<String>) {
        let mut info = self.info();
        info.status = Some(status);
        info.content_type = content_type;
    }

    pub(crate) fn record_reconnect(&self) {
        self.info().reconnects += 1;
    }

    pub(crate) fn record_warnings(&self, index: usize, warnings: Vec<String>) {
        if warnings.is_empty() {
            return;
        }
        let mut info = self.info();
        for w in warnings {
            tracing::warn!(event = index, "{w}");
            if info.warnings.len() < MAX_WARNINGS {
                info.warnings.push(format!("event {index}: {w}"));
            }
        }
    }

    pub(crate) fn abort(&self) {
        self.aborted.store(true, Ordering::SeqCst);
        self.waker.wake();
    }

    pub(crate) fn is_aborted(&self) -> bool {
        self.aborted.load(Ordering::SeqCst)
    }
}

/// Aborts a run from anywhere (another task, a UI callback). Cheap to clone.
///
/// ```no_run
/// # async fn demo(agent: aguikit_client::HttpAgent, input: aguikit_core::RunAgentInput) {
/// let run = agent.run(input);
/// let handle = run.abort_handle();
/// tokio::spawn(async move {
///     tokio::time::sleep(std::time::Duration::from_secs(5)).await;
///     handle.abort();
/// });
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct AbortHandle {
    shared: Arc<RunShared>,
}

impl AbortHandle {
    /// Aborts the run: its connection is closed at the stream's next poll, which then yields
    /// a synthesized `RUN_ERROR` with code `"abort"` and ends (as the reference client does).
    pub fn abort(&self) {
        self.shared.abort();
    }

    /// Whether the run was aborted.
    pub fn is_aborted(&self) -> bool {
        self.shared.is_aborted()
    }
}

/// The events of one run, decoded, passed through the middleware, expanded (chunks become
/// START/CONTENT/END) and verified, in order.
///
/// Items are `Ok(event)` until the stream ends, or until one `Err` that ends it: transport
/// failures, HTTP errors, malformed events and protocol violations (with the offending
/// event's index, type and rule). A stream that ends without `RUN_FINISHED`/`RUN_ERROR` ends
/// without an error (as in the reference); [`Session`](crate::Session) reports such a run
/// as incomplete.
///
/// Dropping the stream closes the connection. [`abort`](Self::abort) (or an
/// [`AbortHandle`]) closes it too, and ends the stream with a synthesized `RUN_ERROR` whose
/// code is `"abort"`.
pub struct RunStream {
    events: Option<EventStream>,
    expander: Expander,
    verifier: Verifier,
    scratch: Vec<Event>,
    ready: VecDeque<Result<Event, ClientError>>,
    index: usize,
    shared: Arc<RunShared>,
    done: bool,
}

impl std::fmt::Debug for RunStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunStream")
            .field("events_received", &self.index)
            .field("done", &self.done)
            .field("aborted", &self.shared.is_aborted())
            .finish_non_exhaustive()
    }
}

impl RunStream {
    pub(crate) fn new(events: EventStream, shared: Arc<RunShared>) -> Self {
        RunStream {
            events: Some(events),
            expander: Expander::new(),
            verifier: Verifier::new(),
            scratch: Vec::new(),
            ready: VecDeque::new(),
            index: 0,
            shared,
            done: false,
        }
    }

    /// Aborts the run (see [`AbortHandle::abort`]).
    pub fn abort(&self) {
        self.shared.abort();
    }

    /// A handle that aborts this run from elsewhere.
    pub fn abort_handle(&self) -> AbortHandle {
        AbortHandle {
            shared: self.shared.clone(),
        }
    }

    /// Whether the run was aborted.
    pub fn is_aborted(&self) -> bool {
        self.shared.is_aborted()
    }

    /// The HTTP status and content type of the response (once it came), reconnections and
    /// decoding warnings so far.
    pub fn response_info(&self) -> ResponseInfo {
        self.shared.info().clone()
    }

    /// Events received from the middleware chain so far (before expansion).
    pub fn events_received(&self) -> usize {
        self.index
    }

    fn fail(&mut self, error: ClientError) {
        self.ready.push_back(Err(error));
        self.events = None;
        self.done = true;
    }

    fn accept(&mut self, event: Event) {
        let index = self.index;
        self.index += 1;
        if let Event::Unknown(_) = &event {
            // Enforcement drops unknown event types (EN1); decoding already warned.
            return;
        }
        let event_type = event.type_str().to_owned();
        self.scratch.clear();
        if let Err(v) = self.expander.push(event, &mut self.scratch) {
            self.fail(ClientError::protocol(index, event_type, v));
            return;
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        for e in scratch.drain(..) {
            if let Err(v) = self.verifier.push(&e) {
                self.fail(ClientError::protocol(index, event_type, v));
                break;
            }
            self.ready.push_back(Ok(e));
        }
        self.scratch = scratch;
    }

    fn on_abort(&mut self) {
        self.events = None;
        self.done = true;
        let event: Event = RunError::new("Request aborted").with_code("abort").into();
        if self.verifier.push(&event).is_ok() {
            self.ready.push_back(Ok(event));
        }
    }
}

impl Stream for RunStream {
    type Item = Result<Event, ClientError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(item) = this.ready.pop_front() {
                return Poll::Ready(Some(item));
            }
            if this.done {
                return Poll::Ready(None);
            }
            this.shared.waker.register(cx.waker());
            if this.shared.is_aborted() {
                this.on_abort();
                continue;
            }
            let Some(events) = this.events.as_mut() else {
                this.done = true;
                continue;
            };
            match events.as_mut().poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Ok(event))) => this.accept(event),
                Poll::Ready(Some(Err(e))) => this.fail(e),
                Poll::Ready(None) => {
                    this.events = None;
                    this.done = true;
                    if let Err(v) = this.verifier.finish() {
                        let end = ClientError::protocol(this.index, "end of stream".into(), v);
                        this.ready.push_back(Err(end));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aguikit_core::event::{RunFinished, RunStarted, TextMessageContent, TextMessageStart};
    use futures_util::StreamExt;

    fn stream_of(items: Vec<Result<Event, ClientError>>) -> RunStream {
        RunStream::new(
            Box::pin(futures_util::stream::iter(items)),
            Arc::new(RunShared::default()),
        )
    }

    #[tokio::test]
    async fn passes_events_through_in_order() {
        let s = stream_of(vec![
            Ok(RunStarted::new("t", "r").into()),
            Ok(TextMessageStart::new("m").into()),
            Ok(TextMessageContent::new("m", "hi").into()),
        ]);
        let types: Vec<String> = s.map(|e| e.unwrap().type_str().to_owned()).collect().await;
        assert_eq!(
            types,
            ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT"]
        );
    }

    #[tokio::test]
    async fn unknown_events_are_dropped() {
        let unknown = Event::from_json_str(r#"{"type":"FROM_THE_FUTURE"}"#).unwrap();
        let mut s = stream_of(vec![
            Ok(RunStarted::new("t", "r").into()),
            Ok(unknown),
            Ok(RunFinished::new("t", "r").into()),
        ]);
        let mut n = 0;
        while let Some(e) = s.next().await {
            e.unwrap();
            n += 1;
        }
        assert_eq!(n, 2);
    }

    #[tokio::test]
    async fn an_error_ends_the_stream() {
        let mut s = stream_of(vec![
            Ok(RunStarted::new("t", "r").into()),
            Err(ClientError::Middleware("boom".into())),
            Ok(RunFinished::new("t", "r").into()),
        ]);
        assert!(s.next().await.unwrap().is_ok());
        assert!(s.next().await.unwrap().is_err());
        assert!(s.next().await.is_none());
        assert!(s.next().await.is_none());
    }

    #[tokio::test]
    async fn abort_synthesizes_run_error_and_ends() {
        let pending = futures_util::stream::iter(vec![Ok(RunStarted::new("t", "r").into())])
            .chain(futures_util::stream::pending());
        let mut s = RunStream::new(Box::pin(pending), Arc::new(RunShared::default()));
        assert!(s.next().await.unwrap().is_ok());
        let handle = s.abort_handle();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            handle.abort();
        });
        match s.next().await {
            Some(Ok(Event::RunError(e))) => assert_eq!(e.code.as_deref(), Some("abort")),
            other => panic!("{other:?}"),
        }
        assert!(s.next().await.is_none());
        assert!(s.is_aborted());
    }
}
