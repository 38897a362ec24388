//! [`Session`]: one conversation thread with an agent — its messages, state, pending
//! interrupts and the status of its last run — and [`SessionRun`], the typed updates of one
//! run for a UI.

use crate::agent::HttpAgent;
use crate::error::ClientError;
use crate::interrupts;
use crate::run::{AbortHandle, ResponseInfo, RunStream};
use crate::updates::UpdateTracker;
use aguikit_core::engine::apply::Applier;
use aguikit_core::id::random_uuid;
use aguikit_core::{
    Context, Event, Interrupt, Message, PROTOCOL_VERSION, ResumeEntry, RunAgentInput, Tool,
};
use futures_util::{Stream, StreamExt};
use serde_json::Value;
use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::SystemTime;

/// Tool-call arguments longer than this are no longer parsed after every delta (the final
/// arguments still are, at `TOOL_CALL_END`).
pub const DEFAULT_PARTIAL_ARGS_LIMIT: usize = 1 << 20;

/// How a run ended, as a UI would say it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum RunStatus {
    /// `RUN_FINISHED` with a success outcome (or none).
    Finished {
        /// `RUN_FINISHED.result`.
        result: Option<Value>,
        /// Tool calls left for the client to answer (frontend tools): the outcome's list when
        /// it gave one, else the calls started in the run without a result (AP28).
        pending_tool_call_ids: Vec<String>,
    },
    /// `RUN_FINISHED` with a cancelled outcome: stopped, not failed; nothing to answer.
    Cancelled,
    /// `RUN_FINISHED` with an interrupt outcome: the thread waits for
    /// [`Session::resume`].
    Interrupted {
        /// The interrupts to answer.
        interrupts: Vec<Interrupt>,
    },
    /// The agent reported a failure with `RUN_ERROR`.
    Errored {
        /// `RUN_ERROR.message`.
        message: String,
        /// `RUN_ERROR.code`.
        code: Option<String>,
    },
    /// The client failed the run: transport, HTTP status, malformed events, protocol
    /// violation. Everything applied before the failure stays applied.
    Failed {
        /// Why.
        error: Arc<ClientError>,
    },
    /// The stream ended without `RUN_FINISHED` or `RUN_ERROR`. The reference client accepts
    /// this silently; what was received stays applied.
    Incomplete,
    /// The run was aborted by the client (or its [`SessionRun`] dropped) before it ended.
    Aborted,
}

impl RunStatus {
    /// A one-word name: `finished`, `cancelled`, `interrupted`, `errored`, `failed`,
    /// `incomplete` or `aborted`.
    pub fn name(&self) -> &'static str {
        match self {
            RunStatus::Finished { .. } => "finished",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Interrupted { .. } => "interrupted",
            RunStatus::Errored { .. } => "errored",
            RunStatus::Failed { .. } => "failed",
            RunStatus::Incomplete => "incomplete",
            RunStatus::Aborted => "aborted",
        }
    }

    /// Whether the run ended as the agent meant it to (finished, cancelled or interrupted).
    pub fn is_ended_by_agent(&self) -> bool {
        matches!(
            self,
            RunStatus::Finished { .. } | RunStatus::Cancelled | RunStatus::Interrupted { .. }
        )
    }

    /// The client error, for [`RunStatus::Failed`].
    pub fn error(&self) -> Option<&ClientError> {
        match self {
            RunStatus::Failed { error } => Some(error),
            _ => None,
        }
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunStatus::Errored {
                message,
                code: Some(code),
            } => write!(f, "errored ({code}): {message}"),
            RunStatus::Errored { message, .. } => write!(f, "errored: {message}"),
            RunStatus::Failed { error } => write!(f, "failed: {error}"),
            RunStatus::Interrupted { interrupts } => {
                write!(f, "interrupted ({} pending)", interrupts.len())
            }
            other => f.write_str(other.name()),
        }
    }
}

/// One thing a UI may want to show, derived from the events of a run as they are applied.
///
/// For every event the stream yields [`Update::Event`] first, then the typed updates it
/// implies, then [`Update::MessagesChanged`] / [`Update::StateChanged`] when the event changed
/// the conversation (read it with [`SessionRun::session`]). [`Update::Ended`] is always last.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Update {
    /// An event, expanded and verified, just applied.
    Event(Event),
    /// `RUN_STARTED`.
    RunStarted {
        /// The thread.
        thread_id: String,
        /// The run.
        run_id: String,
    },
    /// A text message started.
    TextMessageStarted {
        /// The message.
        message_id: String,
    },
    /// Text streamed into a message.
    TextDelta {
        /// The message.
        message_id: String,
        /// The new text.
        delta: String,
    },
    /// A text message is complete.
    TextMessageEnded {
        /// The message.
        message_id: String,
    },
    /// Reasoning text streamed into a reasoning message.
    ReasoningDelta {
        /// The reasoning message.
        message_id: String,
        /// The new text.
        delta: String,
    },
    /// A tool call started.
    ToolCallStarted {
        /// The call.
        tool_call_id: String,
        /// The tool.
        name: String,
        /// The assistant message it belongs to, when given.
        parent_message_id: Option<String>,
    },
    /// Arguments streamed into a tool call.
    ToolCallArgs {
        /// The call.
        tool_call_id: String,
        /// The tool.
        name: String,
        /// The new piece of the arguments' JSON text.
        delta: String,
        /// The arguments so far, completed into JSON (see
        /// [`PartialJson`](crate::partial_json::PartialJson)); `None` before any value has
        /// started, when the text is not JSON, or past the session's partial-arguments limit.
        partial_args: Option<Value>,
    },
    /// A tool call's arguments are complete.
    ToolCallEnded {
        /// The call.
        tool_call_id: String,
        /// The tool.
        name: String,
        /// The arguments parsed (`{}` when they are not JSON, as in the reference).
        args: Value,
    },
    /// A tool call's result arrived.
    ToolCallResult {
        /// The call.
        tool_call_id: String,
        /// The tool message created for it.
        message_id: String,
        /// Its content as text.
        content: String,
    },
    /// The message list changed.
    MessagesChanged,
    /// The state changed.
    StateChanged,
    /// `RUN_FINISHED` was applied (status finished, cancelled or interrupted).
    RunFinished {
        /// How the run ended.
        status: RunStatus,
    },
    /// The run failed: `RUN_ERROR` from the agent, or a client error.
    RunFailed {
        /// Errored, failed or aborted.
        status: RunStatus,
    },
    /// The stream is over; this is the session's new [`Session::status`]. Always last.
    Ended {
        /// How the last run of the stream ended.
        status: RunStatus,
    },
}

/// Per-run parameters (the reference's `runAgent` parameters).
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct RunParams {
    /// The run id (default: a fresh UUID).
    pub run_id: Option<String>,
    /// Front-end tools (default: the session's, else none).
    pub tools: Option<Vec<Tool>>,
    /// Context (default: the session's, else none).
    pub context: Option<Vec<Context>>,
    /// Forwarded props (default: the session's, else `{}`).
    pub forwarded_props: Option<Value>,
    /// Answers to the pending interrupts.
    pub resume: Option<Vec<ResumeEntry>>,
}

impl RunParams {
    /// No parameters.
    pub fn new() -> Self {
        RunParams::default()
    }

    /// Sets the run id.
    pub fn run_id(mut self, id: impl Into<String>) -> Self {
        self.run_id = Some(id.into());
        self
    }

    /// Sets the tools.
    pub fn tools(mut self, tools: Vec<Tool>) -> Self {
        self.tools = Some(tools);
        self
    }

    /// Sets the context.
    pub fn context(mut self, context: Vec<Context>) -> Self {
        self.context = Some(context);
        self
    }

    /// Sets the forwarded props.
    pub fn forwarded_props(mut self, props: Value) -> Self {
        self.forwarded_props = Some(props);
        self
    }

    /// Sets the resume answers.
    pub fn resume(mut self, resume: Vec<ResumeEntry>) -> Self {
        self.resume = Some(resume);
        self
    }
}

/// One conversation thread with an agent: owns the messages, the state, the pending
/// interrupts and the status of the last run, and sends the whole conversation on every run
/// (as the reference's `AbstractAgent` does).
///
/// ```no_run
/// use aguikit_client::{HttpAgent, Session, Update};
/// use futures_util::StreamExt;
/// # async fn demo() -> Result<(), aguikit_client::ClientError> {
/// let agent = HttpAgent::new("http://127.0.0.1:8000/agent")?;
/// let mut session = Session::new(agent);
/// session.add_user_message("What's the weather in Berlin?");
/// let mut run = session.run()?;
/// while let Some(update) = run.next().await {
///     match update {
///         Update::TextDelta { delta, .. } => print!("{delta}"),
///         Update::ToolCallArgs { name, partial_args, .. } => eprintln!("{name}: {partial_args:?}"),
///         Update::StateChanged => eprintln!("state: {}", run.session().state()),
///         Update::Ended { status } => eprintln!("\n[{status}]"),
///         _ => {}
///     }
/// }
/// drop(run);
/// if let Some(interrupts) = session.pending_interrupts().first().map(|i| i.id.clone()) {
///     let answers = vec![aguikit_core::ResumeEntry::resolved(interrupts, serde_json::json!({"approved": true}))];
///     let status = session.resume(answers)?.complete().await;
///     println!("{status}");
/// }
/// # Ok(()) }
/// ```
pub struct Session {
    agent: HttpAgent,
    thread_id: String,
    applier: Applier,
    pending_interrupts: Vec<Interrupt>,
    status: Option<RunStatus>,
    result: Option<Value>,
    defaults: RunParams,
    partial_args_limit: usize,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("agent", &self.agent)
            .field("thread_id", &self.thread_id)
            .field("messages", &self.message_count())
            .field("pending_interrupts", &self.pending_interrupts.len())
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// A new thread (random id) with no messages and state `{}`.
    pub fn new(agent: HttpAgent) -> Self {
        Session::with_thread_id(agent, random_uuid())
    }

    /// A session on an existing thread id.
    pub fn with_thread_id(agent: HttpAgent, thread_id: impl Into<String>) -> Self {
        Session {
            agent,
            thread_id: thread_id.into(),
            applier: Applier::new(),
            pending_interrupts: Vec::new(),
            status: None,
            result: None,
            defaults: RunParams::default(),
            partial_args_limit: DEFAULT_PARTIAL_ARGS_LIMIT,
        }
    }

    /// A session on a thread stored by a store-backed server (`aguikit-server` feature `store`,
    /// `agui serve --store`): its messages and state are the thread's history, read from
    /// `GET <agent URL>/threads/{thread_id}/connect` and folded as a run's events are, and its
    /// [pending interrupts](Self::pending_interrupts) those its last run ended waiting on.
    /// While a run of the thread is in progress, this waits for it to end.
    ///
    /// Errors: [`ClientError::Http`] (404 for an unknown thread), [`ClientError::Request`],
    /// [`ClientError::Config`] for a history that does not decode.
    pub async fn load(
        agent: HttpAgent,
        thread_id: impl Into<String>,
    ) -> Result<Session, ClientError> {
        let thread_id = thread_id.into();
        let config = agent.config.clone();
        let mut url = config.url.clone();
        url.path_segments_mut()
            .map_err(|()| ClientError::Config(format!("{} cannot have a path", config.url)))?
            .pop_if_empty()
            .extend(["threads", thread_id.as_str(), "connect"]);
        url.set_query(Some("after=0"));
        let request_error = |e: reqwest::Error| ClientError::Request {
            url: url.to_string(),
            message: crate::error::with_causes(&e),
        };
        let response = config
            .client
            .get(url.clone())
            .headers(config.headers.clone())
            .header(
                reqwest::header::ACCEPT,
                aguikit_core::codec::media::SSE_MEDIA_TYPE,
            )
            .send()
            .await
            .map_err(request_error)?;
        let status = response.status();
        let body = response.text().await.map_err(request_error)?;
        if !status.is_success() {
            let payload = serde_json::from_str(&body).ok();
            return Err(ClientError::Http {
                status: status.as_u16(),
                body,
                payload,
            });
        }
        let mut session = Session::with_thread_id(agent, thread_id);
        for line in body.lines() {
            let Some(data) = line.strip_prefix("data:") else {
                continue;
            };
            let event = Event::from_json_str(data.trim_start())
                .map_err(|e| ClientError::Config(format!("the stored history: {e}")))?;
            session.applier.push(&event);
        }
        session.applier.take_warnings();
        // A thread whose last run ended in an interrupt waits on it: the next run answers it.
        session.pending_interrupts = session.applier.pending_interrupts().to_vec();
        Ok(session)
    }

    /// Replaces the messages and the state (for a thread restored from storage).
    pub fn with_history(mut self, messages: Vec<Message>, state: Value) -> Self {
        self.applier = Applier::with_history(messages, state);
        self
    }

    /// Sets the tools, context and forwarded props every run sends unless its
    /// [`RunParams`] say otherwise.
    pub fn with_defaults(mut self, defaults: RunParams) -> Self {
        self.defaults = defaults;
        self
    }

    /// Sets how long tool-call arguments may grow before [`Update::ToolCallArgs`] stops
    /// carrying a parsed value (default [`DEFAULT_PARTIAL_ARGS_LIMIT`]).
    pub fn with_partial_args_limit(mut self, bytes: usize) -> Self {
        self.partial_args_limit = bytes;
        self
    }

    /// The agent.
    pub fn agent(&self) -> &HttpAgent {
        &self.agent
    }

    /// The thread id.
    pub fn thread_id(&self) -> &str {
        &self.thread_id
    }

    /// The messages, in conversation order.
    pub fn messages(&self) -> impl DoubleEndedIterator<Item = &Message> + '_ {
        self.applier.messages().into_iter()
    }

    /// The number of messages.
    pub fn message_count(&self) -> usize {
        self.applier.messages().len()
    }

    /// The first message with this id (an indexed look-up).
    pub fn message(&self, id: &str) -> Option<&Message> {
        self.applier.message(id)
    }

    /// The state.
    pub fn state(&self) -> &Value {
        self.applier.state()
    }

    /// The A2UI surfaces of the conversation (feature `a2ui`): each `a2ui-surface` activity
    /// among the messages, its operations folded into surfaces (components and data model)
    /// and checked (rules `A1`–`A17`, without a catalog), in conversation order.
    #[cfg(feature = "a2ui")]
    #[cfg_attr(docsrs, doc(cfg(feature = "a2ui")))]
    pub fn surfaces(&self) -> Vec<aguikit_a2ui::agui::SurfaceActivity> {
        aguikit_a2ui::agui::surfaces_from_messages(self.messages(), &aguikit_a2ui::Validator::new())
    }

    /// The interrupts the thread waits on (those of the last `RUN_FINISHED`, if it was an
    /// interrupt outcome).
    pub fn pending_interrupts(&self) -> &[Interrupt] {
        &self.pending_interrupts
    }

    /// How the last run ended (`None` before the first run ended).
    pub fn status(&self) -> Option<&RunStatus> {
        self.status.as_ref()
    }

    /// `RUN_FINISHED.result` of the last run that finished with success (AP29).
    pub fn result(&self) -> Option<&Value> {
        self.result.as_ref()
    }

    /// Appends a message (sent with the next run).
    pub fn add_message(&mut self, message: Message) {
        let mut messages: Vec<Message> = self.messages().cloned().collect();
        messages.push(message);
        self.applier = Applier::with_history(messages, self.state().clone());
    }

    /// Appends a user message with a fresh id, and returns the id.
    pub fn add_user_message(&mut self, text: impl Into<String>) -> String {
        let id = random_uuid();
        self.add_message(Message::user(id.clone(), text.into()));
        id
    }

    /// Replaces the messages.
    pub fn set_messages(&mut self, messages: Vec<Message>) {
        self.applier = Applier::with_history(messages, self.state().clone());
    }

    /// Replaces the state (sent with the next run).
    pub fn set_state(&mut self, state: Value) {
        let messages: Vec<Message> = self.messages().cloned().collect();
        self.applier = Applier::with_history(messages, state);
    }

    /// The input the next run would send with these parameters (the reference's
    /// `prepareRunAgentInput`): thread id, run id, protocol version `1.0`, tools, context,
    /// forwarded props (`[]`, `[]`, `{}` by default), the state, the messages without the
    /// activity messages, and `resume` when given.
    pub fn prepare_input(&self, params: &RunParams) -> RunAgentInput {
        let mut input = RunAgentInput::new(
            self.thread_id.clone(),
            params.run_id.clone().unwrap_or_else(random_uuid),
        );
        input.protocol_version = Some(PROTOCOL_VERSION.to_owned());
        // What the run's parameters give, else the session's defaults.
        fn given<T: Clone>(param: &Option<T>, default: &Option<T>) -> Option<T> {
            param.as_ref().or(default.as_ref()).cloned()
        }
        let defaults = &self.defaults;
        input.tools = Some(given(&params.tools, &defaults.tools).unwrap_or_default());
        input.context = Some(given(&params.context, &defaults.context).unwrap_or_default());
        input.forwarded_props = Some(
            given(&params.forwarded_props, &defaults.forwarded_props)
                .unwrap_or_else(|| Value::Object(Default::default())),
        );
        input.state = Some(self.state().clone());
        input.messages = self
            .messages()
            .filter(|m| !matches!(m, Message::Activity(_)))
            .cloned()
            .collect();
        input.resume = params.resume.clone();
        input
    }

    /// Starts a run with the session's defaults. Fails before sending anything when
    /// interrupts are pending (answer them with [`resume`](Self::resume)).
    pub fn run(&mut self) -> Result<SessionRun<'_>, ClientError> {
        self.run_with(RunParams::default())
    }

    /// Starts a run. With interrupts pending, `params.resume` must answer every one of them
    /// (expired ones with `cancelled`), or the run fails before anything is sent (I4).
    pub fn run_with(&mut self, params: RunParams) -> Result<SessionRun<'_>, ClientError> {
        interrupts::check_gate(
            &self.pending_interrupts,
            params.resume.as_deref().unwrap_or_default(),
            SystemTime::now(),
        )?;
        let input = self.prepare_input(&params);
        let events = self.agent.run(input);
        Ok(SessionRun::new(self, events))
    }

    /// Resumes an interrupted thread: `answers` must answer every pending interrupt exactly
    /// once, name no other, and cancel the expired ones; they are sent in interrupt order
    /// (a `cancelled` answer without payload). Fails before sending anything otherwise.
    pub fn resume(&mut self, answers: Vec<ResumeEntry>) -> Result<SessionRun<'_>, ClientError> {
        self.resume_with(RunParams::default(), answers)
    }

    /// [`resume`](Self::resume) with other run parameters.
    pub fn resume_with(
        &mut self,
        params: RunParams,
        answers: Vec<ResumeEntry>,
    ) -> Result<SessionRun<'_>, ClientError> {
        if self.pending_interrupts.is_empty() {
            return Err(ClientError::NothingToResume);
        }
        let resume = interrupts::build_resume(&self.pending_interrupts, answers)?;
        self.run_with(RunParams {
            resume: Some(resume),
            ..params
        })
    }
}

/// One run of a [`Session`]: a stream of [`Update`]s, applied to the session as they come.
///
/// The session is borrowed for the run; read it between updates with
/// [`session`](Self::session). Dropping the run aborts it (the session's status then says
/// how far it got). [`complete`](Self::complete) runs it to the end.
pub struct SessionRun<'a> {
    session: &'a mut Session,
    events: RunStream,
    queue: VecDeque<Update>,
    /// What the events imply for a UI (the pure part).
    tracker: UpdateTracker,
    error: Option<Arc<ClientError>>,
    ended: bool,
    /// What the reducer ignored (a failed patch, content for an unknown message...).
    warnings: Vec<String>,
}

/// At most this many reducer warnings are kept per run.
const MAX_APPLY_WARNINGS: usize = 200;

impl std::fmt::Debug for SessionRun<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionRun")
            .field("events", &self.events)
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

impl<'a> SessionRun<'a> {
    fn new(session: &'a mut Session, events: RunStream) -> Self {
        let tracker = UpdateTracker::new(session.partial_args_limit);
        SessionRun {
            session,
            events,
            queue: VecDeque::new(),
            tracker,
            error: None,
            ended: false,
            warnings: Vec::new(),
        }
    }

    /// What the reducer ignored so far, with the rule (`AP12: Failed to apply state patch:
    /// ...`): the reference client prints these as console warnings.
    pub fn apply_warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The session as it is now.
    pub fn session(&self) -> &Session {
        self.session
    }

    /// Aborts the run (the stream then ends with status [`RunStatus::Aborted`]).
    pub fn abort(&self) {
        self.events.abort();
    }

    /// A handle that aborts the run from elsewhere.
    pub fn abort_handle(&self) -> AbortHandle {
        self.events.abort_handle()
    }

    /// HTTP status, content type, reconnections and decoding warnings of the run so far.
    pub fn response_info(&self) -> ResponseInfo {
        self.events.response_info()
    }

    /// Runs to the end and returns how the run ended.
    pub async fn complete(mut self) -> RunStatus {
        while self.next().await.is_some() {}
        self.session.status.clone().unwrap_or(RunStatus::Incomplete)
    }

    /// Runs to the end, calling `f` with every update and the session as it is after it
    /// (a subscriber), and returns how the run ended.
    pub async fn drive(mut self, mut f: impl FnMut(&Update, &Session)) -> RunStatus {
        while let Some(update) = self.next().await {
            f(&update, self.session);
        }
        self.session.status.clone().unwrap_or(RunStatus::Incomplete)
    }

    fn apply(&mut self, event: Event) {
        let changes = self.session.applier.push(&event);
        if !self.session.applier.warnings().is_empty() {
            for w in self.session.applier.take_warnings() {
                tracing::warn!("{w}");
                if self.warnings.len() < MAX_APPLY_WARNINGS {
                    self.warnings.push(w.to_string());
                }
            }
        }
        let derived = self.tracker.updates(&event, self.events.is_aborted());
        for update in &derived {
            match update {
                Update::RunFinished {
                    status: RunStatus::Finished { result, .. },
                } => {
                    self.session.pending_interrupts.clear();
                    self.session.result = result.clone();
                }
                Update::RunFinished {
                    status: RunStatus::Interrupted { interrupts },
                } => self.session.pending_interrupts = interrupts.clone(),
                Update::RunFinished {
                    status: RunStatus::Cancelled,
                } => self.session.pending_interrupts.clear(),
                _ => {}
            }
        }
        self.queue.push_back(Update::Event(event));
        self.queue.extend(derived);
        if changes.messages {
            self.queue.push_back(Update::MessagesChanged);
        }
        if changes.state {
            self.queue.push_back(Update::StateChanged);
        }
    }

    fn fail(&mut self, error: ClientError) {
        let error = Arc::new(error);
        self.error = Some(error.clone());
        self.queue.push_back(Update::RunFailed {
            status: RunStatus::Failed { error },
        });
    }

    fn end(&mut self) {
        self.ended = true;
        let status = match &self.error {
            Some(error) => RunStatus::Failed {
                error: error.clone(),
            },
            None => match self.tracker.take_terminal() {
                Some(s) => s,
                None if self.events.is_aborted() => RunStatus::Aborted,
                None => RunStatus::Incomplete,
            },
        };
        self.session.status = Some(status.clone());
        self.queue.push_back(Update::Ended { status });
    }
}

impl Stream for SessionRun<'_> {
    type Item = Update;

    fn poll_next(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Update>> {
        let this = self.get_mut();
        loop {
            if let Some(u) = this.queue.pop_front() {
                return Poll::Ready(Some(u));
            }
            if this.ended {
                return Poll::Ready(None);
            }
            match this.events.poll_next_unpin(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Ok(event))) => this.apply(event),
                Poll::Ready(Some(Err(e))) => this.fail(e),
                Poll::Ready(None) => this.end(),
            }
        }
    }
}

impl Drop for SessionRun<'_> {
    fn drop(&mut self) {
        if !self.ended {
            self.session.status = Some(match (&self.error, self.tracker.take_terminal()) {
                (Some(error), _) => RunStatus::Failed {
                    error: error.clone(),
                },
                (None, Some(status)) => status,
                (None, None) => RunStatus::Aborted,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> Session {
        Session::with_thread_id(HttpAgent::new("http://127.0.0.1:9/agent").unwrap(), "t1")
    }

    #[test]
    fn input_is_prepared_like_the_reference() {
        let mut s = session();
        s.add_message(Message::user("u1", "hi"));
        s.set_state(serde_json::json!({"k": 1}));
        let input = s.prepare_input(&RunParams::new().run_id("r1"));
        let v = serde_json::to_value(&input).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "threadId": "t1",
                "runId": "r1",
                "protocolVersion": "1.0",
                "state": {"k": 1},
                "messages": [{"id": "u1", "role": "user", "content": "hi"}],
                "tools": [],
                "context": [],
                "forwardedProps": {}
            })
        );
        let fresh = s.prepare_input(&RunParams::new());
        assert_eq!(fresh.run_id.len(), 36);
    }

    #[cfg(feature = "a2ui")]
    #[test]
    fn surfaces_are_read_from_the_messages() {
        let messages: Vec<Message> = serde_json::from_value(serde_json::json!([
            {"id": "u1", "role": "user", "content": "flight status"},
            {"id": "a2ui-surface-tc1", "role": "activity", "activityType": "a2ui-surface", "content": {
                "a2ui_operations": [
                    {"version": "v0.9", "createSurface": {"surfaceId": "f", "catalogId": "basic"}},
                    {"version": "v0.9", "updateComponents": {"surfaceId": "f", "components": [
                        {"id": "root", "component": "Text", "text": {"path": "/s"}}]}},
                    {"version": "v0.9", "updateDataModel": {"surfaceId": "f", "path": "/", "value": {"s": "On time"}}}
                ]}}
        ]))
        .unwrap();
        let s = session().with_history(messages, Value::Null);
        let acts = s.surfaces();
        assert_eq!(acts.len(), 1);
        assert_eq!(acts[0].message_id, "a2ui-surface-tc1");
        let f = acts[0].surfaces.get("f").unwrap();
        assert_eq!(f.data, serde_json::json!({"s": "On time"}));
        assert!(acts[0].findings.is_empty());
        assert!(session().surfaces().is_empty());
    }

    #[test]
    fn pending_interrupts_gate_runs() {
        let mut s = session();
        assert!(matches!(
            s.resume(vec![]),
            Err(ClientError::NothingToResume)
        ));
        s.pending_interrupts = vec![Interrupt::new("i1", "confirmation")];
        assert!(matches!(
            s.run(),
            Err(ClientError::UnansweredInterrupts { ids }) if ids == ["i1"]
        ));
        assert!(matches!(
            s.resume(vec![ResumeEntry::cancelled("i2")]),
            Err(ClientError::UnansweredInterrupts { .. })
        ));
        assert!(s.resume(vec![ResumeEntry::cancelled("i1")]).is_ok());
        // The dropped (never polled) run counts as aborted; the interrupt is still pending.
        assert!(matches!(s.status(), Some(RunStatus::Aborted)));
        assert_eq!(s.pending_interrupts().len(), 1);
    }

    #[test]
    fn status_names() {
        assert_eq!(RunStatus::Incomplete.to_string(), "incomplete");
        assert_eq!(
            RunStatus::Errored {
                message: "m".into(),
                code: Some("c".into())
            }
            .to_string(),
            "errored (c): m"
        );
        assert!(RunStatus::Cancelled.is_ended_by_agent());
        assert!(!RunStatus::Aborted.is_ended_by_agent());
    }
}
