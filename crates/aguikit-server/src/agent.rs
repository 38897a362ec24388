//! The [`Agent`] trait, its object-safe form, and adapters from closures and streams.

use crate::context::RunContext;
use crate::error::AgentError;
use crate::finish::Finish;
use aguikit_core::{AgentCapabilities, Event, RunAgentInput};
use futures_util::Stream;
use futures_util::future::BoxFuture;
use std::future::Future;
use std::sync::Arc;

/// What an agent's run returns: a [`Finish`] (→ `RUN_FINISHED`) or an [`AgentError`]
/// (→ `RUN_ERROR`).
pub type AgentResult = Result<Finish, AgentError>;

/// An AG-UI agent: given a validated run input, it emits events through the context and
/// returns how the run ended.
///
/// Implement it with an `async fn`:
///
/// ```
/// use aguikit_server::{Agent, AgentResult, Finish, RunContext};
/// use aguikit_core::RunAgentInput;
///
/// struct Hello;
/// impl Agent for Hello {
///     async fn run(&self, _input: RunAgentInput, ctx: RunContext) -> AgentResult {
///         ctx.say("Hello!").await?;
///         Ok(Finish::success())
///     }
/// }
/// ```
pub trait Agent: Send + Sync + 'static {
    /// Runs once. The runtime has already sent `RUN_STARTED`; it sends `RUN_FINISHED` or
    /// `RUN_ERROR` from the result. A panic becomes `RUN_ERROR` (code `panic`). The future
    /// is dropped (cancelled) when the client goes away.
    fn run(
        &self,
        input: RunAgentInput,
        ctx: RunContext,
    ) -> impl Future<Output = AgentResult> + Send;

    /// What the agent declares about itself (AG-UI 1.0 `AgentCapabilities`), served at
    /// `GET {path}/capabilities` with the same access checks as the agent's route; asked
    /// on each request. By default nothing is declared (an omitted field means "not
    /// declared", not "unsupported"). The server fills in `transport` itself (what it
    /// serves: streaming, protobuf, resumable streams), whatever the agent says there.
    ///
    /// ```
    /// use aguikit_core::AgentCapabilities;
    /// use aguikit_core::capabilities::HumanInTheLoopCapabilities;
    /// use aguikit_server::{Agent, AgentResult, Finish, RunContext};
    ///
    /// struct Approver;
    /// impl Agent for Approver {
    ///     async fn run(&self, _: aguikit_core::RunAgentInput, _: RunContext) -> AgentResult {
    ///         Ok(Finish::success())
    ///     }
    ///     async fn capabilities(&self) -> AgentCapabilities {
    ///         AgentCapabilities {
    ///             human_in_the_loop: Some(HumanInTheLoopCapabilities {
    ///                 supported: Some(true),
    ///                 interrupts: Some(true),
    ///                 ..Default::default()
    ///             }),
    ///             ..Default::default()
    ///         }
    ///     }
    /// }
    /// ```
    fn capabilities(&self) -> impl Future<Output = AgentCapabilities> + Send {
        std::future::ready(AgentCapabilities::default())
    }
}

/// The object-safe form of [`Agent`], implemented for every agent.
pub trait DynAgent: Send + Sync + 'static {
    /// Runs once, as [`Agent::run`], with an owned handle and a boxed future.
    fn run_boxed(
        self: Arc<Self>,
        input: RunAgentInput,
        ctx: RunContext,
    ) -> BoxFuture<'static, AgentResult>;

    /// The agent's capabilities, as [`Agent::capabilities`], with a boxed future.
    fn capabilities_boxed(self: Arc<Self>) -> BoxFuture<'static, AgentCapabilities>;
}

impl<A: Agent> DynAgent for A {
    fn run_boxed(
        self: Arc<Self>,
        input: RunAgentInput,
        ctx: RunContext,
    ) -> BoxFuture<'static, AgentResult> {
        Box::pin(async move { self.run(input, ctx).await })
    }

    fn capabilities_boxed(self: Arc<Self>) -> BoxFuture<'static, AgentCapabilities> {
        Box::pin(async move { self.capabilities().await })
    }
}

/// A type-erased agent, shareable between servers and routes.
pub type BoxedAgent = Arc<dyn DynAgent>;

/// Erases an agent's type.
pub fn boxed(agent: impl Agent) -> BoxedAgent {
    Arc::new(agent)
}

impl Agent for BoxedAgent {
    fn run(
        &self,
        input: RunAgentInput,
        ctx: RunContext,
    ) -> impl Future<Output = AgentResult> + Send {
        Arc::clone(self).run_boxed(input, ctx)
    }

    fn capabilities(&self) -> impl Future<Output = AgentCapabilities> + Send {
        Arc::clone(self).capabilities_boxed()
    }
}

/// An agent made from a closure; see [`agent_fn`].
#[derive(Clone)]
pub struct FnAgent<F>(F);

impl<F> std::fmt::Debug for FnAgent<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("FnAgent").finish_non_exhaustive()
    }
}

/// Makes an agent from an async closure.
///
/// ```
/// use aguikit_server::{agent_fn, Finish};
/// let agent = agent_fn(|_input, ctx| async move {
///     ctx.say("Hi").await?;
///     Ok(Finish::success())
/// });
/// # let _ = aguikit_server::AgentServer::new(agent);
/// ```
pub fn agent_fn<F, Fut>(f: F) -> FnAgent<F>
where
    F: Fn(RunAgentInput, RunContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = AgentResult> + Send + 'static,
{
    FnAgent(f)
}

impl<F, Fut> Agent for FnAgent<F>
where
    F: Fn(RunAgentInput, RunContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = AgentResult> + Send + 'static,
{
    fn run(
        &self,
        input: RunAgentInput,
        ctx: RunContext,
    ) -> impl Future<Output = AgentResult> + Send {
        (self.0)(input, ctx)
    }
}

/// An agent whose runs are streams of events; see [`stream_agent`].
#[derive(Clone)]
pub struct StreamAgent<F>(F);

impl<F> std::fmt::Debug for StreamAgent<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("StreamAgent").finish_non_exhaustive()
    }
}

/// Makes an agent from a closure returning a `Stream` of events (an adapter for
/// frameworks that already produce AG-UI events). Each event is verified and sent as
/// [`RunContext::forward`] describes: lifecycle events in the stream are read, not sent.
///
/// ```
/// use aguikit_server::stream_agent;
/// use aguikit_core::{Event, event::{TextMessageChunk}};
/// let agent = stream_agent(|_input| {
///     futures_util::stream::iter(vec![Event::from(
///         TextMessageChunk::new().with_message_id("m1").with_delta("Hi"),
///     )])
/// });
/// # let _ = aguikit_server::AgentServer::new(agent);
/// ```
pub fn stream_agent<F, S>(f: F) -> StreamAgent<F>
where
    F: Fn(RunAgentInput) -> S + Send + Sync + 'static,
    S: Stream<Item = Event> + Send + 'static,
{
    StreamAgent(f)
}

impl<F, S> Agent for StreamAgent<F>
where
    F: Fn(RunAgentInput) -> S + Send + Sync + 'static,
    S: Stream<Item = Event> + Send + 'static,
{
    fn run(
        &self,
        input: RunAgentInput,
        ctx: RunContext,
    ) -> impl Future<Output = AgentResult> + Send {
        let stream = (self.0)(input);
        async move { ctx.forward(stream).await }
    }
}
