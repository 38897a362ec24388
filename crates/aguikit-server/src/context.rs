//! [`RunContext`]: everything an agent emits during one run goes through it.

use crate::activity::Activity;
use crate::diff::{self, Change};
use crate::error::{AgentError, EmitError};
use crate::event_ext::{is_lifecycle, stamp_metadata, tag_subagent};
use crate::finish::Finish;
use crate::interrupts::Resumed;
use crate::reasoning::Reasoning;
use crate::sink::{Sink, Status};
use crate::step::Step;
use crate::subagent::SubagentBuilder;
use crate::text::TextMessageBuilder;
use crate::tool::{ToolCall, ToolCallBuilder};
use aguikit_core::event::{
    Custom, EncryptedValueSubtype, MessagesSnapshot, Raw, ReasoningEncryptedValue, StateDelta,
    StateSnapshot, ToolCallResult,
};
use aguikit_core::metadata::Metadata;
use aguikit_core::patch::{JsonPatch, apply_patch};
use aguikit_core::{Content, Event, Interrupt, Message, TokenUsage};
use futures_util::{Stream, StreamExt};
use serde_json::{Map, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// What all contexts of one run share.
pub(crate) struct RunShared {
    pub(crate) sink: Sink,
    /// The thread's key in the server's open-interrupt map (`interrupts::key`).
    pub(crate) interrupt_key: String,
    pub(crate) thread_id: String,
    pub(crate) run_id: String,
    nonce: String,
    counter: AtomicU64,
    /// The state the client holds, as far as this run knows (`None`: unknown).
    state: Mutex<Option<Value>>,
    pub(crate) resumed: Vec<Resumed>,
}

impl RunShared {
    pub(crate) fn new(
        sink: Sink,
        interrupt_key: String,
        thread_id: String,
        run_id: String,
        state: Option<Value>,
        resumed: Vec<Resumed>,
    ) -> RunShared {
        RunShared {
            sink,
            interrupt_key,
            thread_id,
            run_id,
            nonce: nonce(),
            counter: AtomicU64::new(0),
            state: Mutex::new(state),
            resumed,
        }
    }
}

/// 16 random hex digits.
fn nonce() -> String {
    aguikit_core::id::random_hex(16)
}

/// The handle an agent emits events through during one run.
///
/// Cheap to clone and `Send + Sync`: hand clones to spawned tasks. A context made for a
/// subagent ([`RunContext::subagent`]) tags every event it emits with that subagent's
/// `subagentRunId`. Every emitter is async because it waits when the client reads slower
/// than the agent writes; each returns [`EmitError`] once the run is over (client gone,
/// protocol violation, limits), which `?` turns into the end of the agent.
///
/// `RUN_STARTED`, `RUN_FINISHED` and `RUN_ERROR` are the runtime's: it sends the first
/// before the agent starts, and the last from what the agent returns.
///
/// A step around a tool call and its result, a state update (sent as a `STATE_DELTA`, or a
/// `STATE_SNAPSHOT` when that is smaller) and a reply:
///
/// ```
/// use aguikit_server::{AgentServer, Finish, agent_fn};
/// use serde_json::json;
///
/// let agent = agent_fn(|_input, ctx| async move {
///     let step = ctx.step("lookup").await?;
///     let call = ctx.call_tool("get_weather", &json!({"city": "Paris"})).await?;
///     call.result("18°C, sunny").await?;
///     step.finish().await?;
///     ctx.update_state(|state| state["city"] = json!("Paris")).await?;
///     ctx.say("It is 18°C and sunny in Paris.").await?;
///     Ok(Finish::success())
/// });
/// # use aguikit_server::axum::{body::{Body, to_bytes}, http::Request};
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// # let input = r#"{"threadId":"t","runId":"r","state":{},"messages":[],"tools":[],"context":[],"forwardedProps":{}}"#;
/// # let request = Request::post("/").header("content-type", "application/json").body(Body::from(input)).unwrap();
/// # let response = AgentServer::new(agent).handle(request).await;
/// # let sse = String::from_utf8(to_bytes(response.into_body(), usize::MAX).await.unwrap().to_vec()).unwrap();
/// # let order = ["STEP_STARTED", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT",
/// #     "STEP_FINISHED", "STATE_", "TEXT_MESSAGE_CONTENT", "RUN_FINISHED"];
/// # let at: Vec<usize> = order.iter().map(|t| sse.find(&format!("\"type\":\"{t}")).expect(t)).collect();
/// # assert!(at.windows(2).all(|w| w[0] < w[1]), "{sse}");
/// # });
/// ```
#[derive(Clone)]
pub struct RunContext {
    pub(crate) run: Arc<RunShared>,
    pub(crate) scope: Option<Arc<str>>,
    pub(crate) metadata: Option<Arc<Metadata>>,
    /// The event maps of [`RunContext::map_events`], the latest first.
    maps: Option<Arc<MapChain>>,
}

/// One event map of [`RunContext::map_events`] and the ones it feeds.
struct MapChain {
    map: Mutex<Box<dyn FnMut(Event) -> Vec<Event> + Send>>,
    next: Option<Arc<MapChain>>,
}

impl MapChain {
    /// `event` through this map and then every later one, in order.
    fn apply(&self, event: Event) -> Vec<Event> {
        let mapped = {
            let mut map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
            (*map)(event)
        };
        match &self.next {
            None => mapped,
            Some(next) => mapped.into_iter().flat_map(|e| next.apply(e)).collect(),
        }
    }
}

impl std::fmt::Debug for RunContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunContext")
            .field("thread_id", &self.run.thread_id)
            .field("run_id", &self.run.run_id)
            .field("subagent_run_id", &self.scope)
            .finish()
    }
}

impl RunContext {
    pub(crate) fn new(run: Arc<RunShared>) -> RunContext {
        RunContext {
            run,
            scope: None,
            metadata: None,
            maps: None,
        }
    }

    /// The run's thread id.
    pub fn thread_id(&self) -> &str {
        &self.run.thread_id
    }

    /// The run's id.
    pub fn run_id(&self) -> &str {
        &self.run.run_id
    }

    /// The subagent this context emits for (`None` for the agent itself).
    pub fn subagent_run_id(&self) -> Option<&str> {
        self.scope.as_deref()
    }

    /// A fresh id, unique across runs: `<kind>-<run nonce>-<n>`.
    pub fn new_id(&self, kind: &str) -> String {
        let n = self.run.counter.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{kind}-{}-{n}", self.run.nonce)
    }

    /// Whether the run still accepts events.
    pub fn is_open(&self) -> bool {
        self.run.sink.status() == Status::Open
    }

    /// Resolves when the run stops accepting events (client gone, violation, shutdown,
    /// or the run ended). Useful to stop background work: `tokio::select!` on it.
    pub async fn closed(&self) {
        self.run.sink.closed().await
    }

    /// A view of this context that merges `metadata` into every event it emits (including
    /// through handles opened from it). Keys set on the event itself win.
    pub fn with_metadata(&self, metadata: Metadata) -> RunContext {
        let mut merged = self.metadata.as_deref().cloned().unwrap_or_default();
        merged.extend(metadata);
        RunContext {
            metadata: Some(Arc::new(merged)),
            ..self.clone()
        }
    }

    /// A view of this context whose events go through `map` before they are tagged,
    /// verified and sent: `map` takes each event emitted through the view (directly, or
    /// through a handle, a subagent or [`forward`](Self::forward) opened from it) and
    /// returns what to send in its place, in order: nothing, the event, or more events.
    /// This is how a middleware sits in front of an agent (e.g. the A2UI middleware of
    /// `aguikit-a2ui`, which adds surfaces as a tool call's arguments stream in): run the
    /// agent with the view.
    ///
    /// `RUN_STARTED`, `RUN_FINISHED` and `RUN_ERROR` are the runtime's and never pass
    /// through a map. A view of a view maps with its own map first, then the earlier one.
    /// The events of one call are sent in order; emitters on other tasks may send theirs
    /// in between.
    ///
    /// ```
    /// use aguikit_server::{AgentServer, Finish, agent_fn};
    /// use aguikit_core::{Event, event::Custom};
    /// use serde_json::json;
    ///
    /// let agent = agent_fn(|_input, ctx| async move {
    ///     // Every text message is announced by a CUSTOM event.
    ///     let ctx = ctx.map_events(|event| match &event {
    ///         Event::TextMessageStart(_) => vec![Custom::new("typing", json!(true)).into(), event],
    ///         _ => vec![event],
    ///     });
    ///     ctx.say("Hi").await?;
    ///     Ok(Finish::success())
    /// });
    /// # use aguikit_server::axum::{body::{Body, to_bytes}, http::Request};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// # let input = r#"{"threadId":"t","runId":"r","state":{},"messages":[],"tools":[],"context":[],"forwardedProps":{}}"#;
    /// # let request = Request::post("/").header("content-type", "application/json").body(Body::from(input)).unwrap();
    /// # let response = AgentServer::new(agent).handle(request).await;
    /// # let sse = String::from_utf8(to_bytes(response.into_body(), usize::MAX).await.unwrap().to_vec()).unwrap();
    /// # let (custom, start) = (sse.find("\"CUSTOM\"").unwrap(), sse.find("TEXT_MESSAGE_START").unwrap());
    /// # assert!(custom < start, "{sse}");
    /// # });
    /// ```
    pub fn map_events(&self, map: impl FnMut(Event) -> Vec<Event> + Send + 'static) -> RunContext {
        RunContext {
            maps: Some(Arc::new(MapChain {
                map: Mutex::new(Box::new(map)),
                next: self.maps.clone(),
            })),
            ..self.clone()
        }
    }

    /// The events to send for `event`: itself, or what the maps make of it.
    fn mapped(&self, event: Event) -> Vec<Event> {
        match &self.maps {
            None => vec![event],
            Some(chain) => chain.apply(event),
        }
    }

    fn prepare(&self, event: &mut Event) {
        if let Some(scope) = &self.scope {
            tag_subagent(event, scope);
        }
        if let Some(m) = &self.metadata {
            stamp_metadata(event, m);
        }
    }

    /// Emits any event (tagged and stamped like the others). Lifecycle events are refused
    /// with [`EmitError::Reserved`]. Everything is verified before it is sent.
    pub async fn emit(&self, event: impl Into<Event>) -> Result<(), EmitError> {
        let event = event.into();
        if is_lifecycle(&event) {
            return Err(EmitError::Reserved(event.event_type().expect("lifecycle")));
        }
        if self.maps.is_none() {
            let mut event = event;
            self.prepare(&mut event);
            return self.run.sink.send(event).await;
        }
        for mut event in self.mapped(event) {
            if is_lifecycle(&event) {
                return Err(EmitError::Reserved(event.event_type().expect("lifecycle")));
            }
            self.prepare(&mut event);
            self.run.sink.send(event).await?;
        }
        Ok(())
    }

    /// Emits without waiting for buffer room (for `Drop` and atomic bookkeeping).
    pub(crate) fn emit_now(&self, event: impl Into<Event>) -> Result<(), EmitError> {
        let event = event.into();
        for mut event in self.mapped(event) {
            if is_lifecycle(&event) {
                return Err(EmitError::Reserved(event.event_type().expect("lifecycle")));
            }
            self.prepare(&mut event);
            self.run.sink.push_now(event)?;
        }
        Ok(())
    }

    // ---- text -------------------------------------------------------------------------

    /// Starts building a streamed text message: `ctx.text_message().start().await?`.
    pub fn text_message(&self) -> TextMessageBuilder {
        TextMessageBuilder::new(self.clone())
    }

    /// Sends a whole assistant message (start, one delta, end); returns its id.
    pub async fn say(&self, text: impl Into<String>) -> Result<String, EmitError> {
        let message = self.text_message().start().await?;
        message.delta(text).await?;
        let id = message.id().to_owned();
        message.end().await?;
        Ok(id)
    }

    // ---- tools ------------------------------------------------------------------------

    /// Starts building a streamed tool call: `ctx.tool_call("search").start().await?`.
    pub fn tool_call(&self, name: impl Into<String>) -> ToolCallBuilder {
        ToolCallBuilder::new(self.clone(), name.into())
    }

    /// Sends a whole tool call (start, the arguments as JSON, end). The returned handle
    /// can send the result.
    pub async fn call_tool(
        &self,
        name: impl Into<String>,
        args: &Value,
    ) -> Result<ToolCall, EmitError> {
        let mut call = self.tool_call(name).start().await?;
        call.args(args.to_string()).await?;
        call.end().await?;
        Ok(call)
    }

    /// Sends the result of a tool call (for example one started in an earlier run);
    /// returns the id of the tool message it creates.
    pub async fn tool_result(
        &self,
        tool_call_id: impl Into<String>,
        content: impl Into<Content>,
    ) -> Result<String, EmitError> {
        let id = self.new_id("tool");
        self.emit(ToolCallResult::new(id.clone(), tool_call_id, content))
            .await?;
        Ok(id)
    }

    // ---- steps ------------------------------------------------------------------------

    /// Starts a step; it finishes when the guard is finished or dropped.
    pub async fn step(&self, name: impl Into<String>) -> Result<Step, EmitError> {
        Step::start(self.clone(), name.into()).await
    }

    // ---- state ------------------------------------------------------------------------

    /// The state as the client holds it (the input's state, updated by what this run
    /// sent), or `None` when unknown.
    pub fn state(&self) -> Option<Value> {
        self.lock_state().clone()
    }

    fn lock_state(&self) -> std::sync::MutexGuard<'_, Option<Value>> {
        self.run
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Makes the client's state `state`: sends the RFC 6902 `STATE_DELTA` from the last
    /// known state, or a `STATE_SNAPSHOT` when that is smaller (or nothing is known);
    /// nothing when unchanged.
    pub async fn set_state(&self, state: Value) -> Result<(), EmitError> {
        {
            let mut current = self.lock_state();
            self.send_state_change(&mut current, state)?;
        }
        self.run.sink.wait_space().await
    }

    /// Edits the state in place (starting from `{}` when unknown) and sends the change as
    /// [`set_state`](Self::set_state) does. The edit runs under the state lock, so
    /// concurrent updates (subagents) never lose each other's changes.
    pub async fn update_state(&self, edit: impl FnOnce(&mut Value)) -> Result<(), EmitError> {
        {
            let mut current = self.lock_state();
            let mut next = current.clone().unwrap_or_else(|| Value::Object(Map::new()));
            edit(&mut next);
            self.send_state_change(&mut current, next)?;
        }
        self.run.sink.wait_space().await
    }

    fn send_state_change(&self, current: &mut Option<Value>, next: Value) -> Result<(), EmitError> {
        match diff::change(current.as_ref(), &next) {
            Change::None => return Ok(()),
            Change::Patch(ops) => self.emit_now(StateDelta::new(ops))?,
            Change::Snapshot => self.emit_now(StateSnapshot::new(next.clone()))?,
        }
        *current = Some(next);
        Ok(())
    }

    /// Sends a `STATE_SNAPSHOT` as given.
    pub async fn state_snapshot(&self, snapshot: Value) -> Result<(), EmitError> {
        {
            let mut current = self.lock_state();
            self.emit_now(StateSnapshot::new(snapshot.clone()))?;
            *current = Some(snapshot);
        }
        self.run.sink.wait_space().await
    }

    /// Sends a `STATE_DELTA` as given. If the patch does not apply to the known state, the
    /// state becomes unknown (the next [`set_state`](Self::set_state) sends a snapshot).
    pub async fn state_delta(&self, delta: JsonPatch) -> Result<(), EmitError> {
        {
            let mut current = self.lock_state();
            if let Some(doc) = current.as_mut()
                && apply_patch(doc, &delta).is_err()
            {
                *current = None;
            }
            self.emit_now(StateDelta::new(delta))?;
        }
        self.run.sink.wait_space().await
    }

    // ---- messages, activities, reasoning -----------------------------------------------

    /// Sends a `MESSAGES_SNAPSHOT`.
    pub async fn messages_snapshot(&self, messages: Vec<Message>) -> Result<(), EmitError> {
        self.emit(MessagesSnapshot::new(messages)).await
    }

    /// Creates an activity (sends its `ACTIVITY_SNAPSHOT`); the handle sends updates as
    /// deltas.
    pub async fn activity(
        &self,
        activity_type: impl Into<String>,
        content: Map<String, Value>,
    ) -> Result<Activity, EmitError> {
        Activity::create(
            self.clone(),
            self.new_id("activity"),
            activity_type.into(),
            content,
        )
        .await
    }

    /// Opens a reasoning span (`REASONING_START`); it ends when the handle is ended or
    /// dropped.
    pub async fn reasoning(&self) -> Result<Reasoning, EmitError> {
        Reasoning::start(self.clone()).await
    }

    /// Sends a `REASONING_ENCRYPTED_VALUE` for a message or tool call.
    pub async fn encrypted_value(
        &self,
        subtype: EncryptedValueSubtype,
        entity_id: impl Into<String>,
        encrypted_value: impl Into<String>,
    ) -> Result<(), EmitError> {
        self.emit(ReasoningEncryptedValue::new(
            subtype,
            entity_id,
            encrypted_value,
        ))
        .await
    }

    // ---- subagents and interrupts ------------------------------------------------------

    /// Starts building a subagent invocation; its context tags what it emits.
    pub fn subagent(&self, name: impl Into<String>) -> SubagentBuilder {
        SubagentBuilder::new(self.clone(), name.into())
    }

    pub(crate) fn child(&self, subagent_run_id: &str) -> RunContext {
        RunContext {
            scope: Some(Arc::from(subagent_run_id)),
            ..self.clone()
        }
    }

    /// Raises an interrupt: the run will end with an `interrupt` outcome listing it (and
    /// every other raised one), and the next run on this thread must answer it in
    /// `resume`. From a subagent's context the interrupt carries its `subagentRunId`.
    /// An empty id is replaced by a fresh one; the id is returned.
    pub fn interrupt(&self, mut interrupt: Interrupt) -> String {
        if interrupt.id.is_empty() {
            interrupt.id = self.new_id("interrupt");
        }
        if interrupt.subagent_run_id.is_none() {
            interrupt.subagent_run_id = self.scope.as_deref().map(str::to_owned);
        }
        let id = interrupt.id.clone();
        self.run
            .sink
            .with(|_, interrupts| interrupts.push(interrupt));
        id
    }

    /// The thread's open interrupts that this run's `resume` answers, each with its answer
    /// (empty for an ordinary run).
    pub fn resumed(&self) -> &[Resumed] {
        &self.run.resumed
    }

    // ---- custom, raw, usage -------------------------------------------------------------

    /// Sends a `CUSTOM` event.
    pub async fn custom(&self, name: impl Into<String>, value: Value) -> Result<(), EmitError> {
        self.emit(Custom::new(name, value)).await
    }

    /// Sends a `RAW` event carrying a provider's own event.
    pub async fn raw(&self, event: Value, source: Option<&str>) -> Result<(), EmitError> {
        let mut raw = Raw::new(event);
        if let Some(s) = source {
            raw = raw.with_source(s);
        }
        self.emit(raw).await
    }

    /// Records token usage; the run's `RUN_FINISHED` (or `RUN_ERROR`) carries the sum per
    /// provider and model.
    pub fn add_usage(&self, usage: TokenUsage) {
        self.run.sink.with(|u, _| u.push(usage));
    }

    /// Emits every event of `stream` in order. Lifecycle events in it are read, not sent:
    /// `RUN_STARTED` is skipped (the runtime sent one), `RUN_FINISHED` ends the stream and
    /// becomes the returned [`Finish`], `RUN_ERROR` ends it and becomes the error. A stream
    /// that just ends is a success.
    pub async fn forward<S>(&self, stream: S) -> Result<Finish, AgentError>
    where
        S: Stream<Item = Event> + Send,
    {
        let mut stream = std::pin::pin!(stream);
        while let Some(event) = stream.next().await {
            match event {
                Event::RunStarted(_) => {}
                Event::RunFinished(f) => {
                    let mut finish = Finish::from(f);
                    if let Some(aguikit_core::RunOutcome::Interrupt { interrupts }) =
                        &finish.outcome
                    {
                        self.run
                            .sink
                            .with(|_, raised| raised.extend(interrupts.iter().cloned()));
                        finish.outcome = None;
                    }
                    return Ok(finish);
                }
                Event::RunError(e) => {
                    let mut err = AgentError::new(e.message);
                    if let Some(code) = e.code {
                        err = err.with_code(code);
                    }
                    return Err(err);
                }
                other => self.emit(other).await?,
            }
        }
        Ok(Finish::success())
    }
}
