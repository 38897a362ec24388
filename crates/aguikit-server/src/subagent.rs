//! Subagents: a child context whose events carry `subagentRunId`.

use crate::RunErrorCode;
use crate::context::RunContext;
use crate::error::{AgentError, EmitError};
use crate::open::Open;
use crate::setters::setters;
use aguikit_core::SubagentOutcome;
use aguikit_core::event::{SubagentError, SubagentFinished, SubagentStarted};
use serde_json::Value;
use std::future::Future;

/// Options of a subagent invocation. Made by [`RunContext::subagent`]; from a subagent's
/// context the new one is nested (`parentSubagentRunId` is set).
#[derive(Debug)]
#[must_use = "call .start() or .run(...) to send SUBAGENT_STARTED"]
pub struct SubagentBuilder {
    ctx: RunContext,
    name: String,
    id: Option<String>,
    description: Option<String>,
    parent_tool_call_id: Option<String>,
    parent_message_id: Option<String>,
}

impl SubagentBuilder {
    pub(crate) fn new(ctx: RunContext, name: String) -> Self {
        SubagentBuilder {
            ctx,
            name,
            id: None,
            description: None,
            parent_tool_call_id: None,
            parent_message_id: None,
        }
    }

    setters! {
        /// Uses this `subagentRunId` instead of a fresh one (for example to continue a
        /// suspended invocation in the resuming run).
        id(id: impl Into<String>) => id = Some(id.into());
        /// Sets the description.
        description(description: impl Into<String>) => description = Some(description.into());
        /// Names the tool call that spawned it (agents as tools).
        parent_tool_call(tool_call_id: impl Into<String>) =>
            parent_tool_call_id = Some(tool_call_id.into());
        /// Names the message holding that tool call.
        parent_message(message_id: impl Into<String>) =>
            parent_message_id = Some(message_id.into());
    }

    /// Sends `SUBAGENT_STARTED` and returns the invocation.
    pub async fn start(self) -> Result<Subagent, EmitError> {
        let id = self.id.unwrap_or_else(|| self.ctx.new_id("subagent"));
        let mut started = SubagentStarted::new(id.clone(), self.name);
        started.description = self.description;
        started.parent_subagent_run_id = self.ctx.subagent_run_id().map(str::to_owned);
        started.parent_tool_call_id = self.parent_tool_call_id;
        started.parent_message_id = self.parent_message_id;
        self.ctx.emit(started).await?;
        // Only the start goes out on the parent's context; the rest is tagged as the child's.
        let open = Open::new(self.ctx.child(&id), id, |id| {
            SubagentError::new(id, "the subagent ended without finishing")
                .with_code(RunErrorCode::Dropped)
                .into()
        });
        Ok(Subagent { open })
    }

    /// Starts the invocation, runs `body` with its context, and ends it: `Ok(result)` sends
    /// `SUBAGENT_FINISHED` (with `result` unless it is `null`), `Err` sends
    /// `SUBAGENT_ERROR` and is returned (the run itself may go on).
    pub async fn run<F, Fut>(self, body: F) -> Result<Value, AgentError>
    where
        F: FnOnce(RunContext) -> Fut,
        Fut: Future<Output = Result<Value, AgentError>>,
    {
        let sub = self.start().await?;
        match body(sub.context().clone()).await {
            Ok(result) => {
                let r = (!result.is_null()).then(|| result.clone());
                sub.finish(r).await?;
                Ok(result)
            }
            Err(e) => {
                if let Some(EmitError::Closed) = e.emit_error() {
                    return Err(e);
                }
                sub.fail(e.message(), e.code()).await?;
                Err(e)
            }
        }
    }
}

/// A running subagent invocation. Emit through [`context`](Self::context) (or directly:
/// it derefs to its [`RunContext`]). End it with [`finish`](Self::finish),
/// [`fail`](Self::fail) or [`suspend`](Self::suspend); dropping it unended sends
/// `SUBAGENT_ERROR` (code `dropped`).
#[derive(Debug)]
pub struct Subagent {
    /// Open on the child context, under the `subagentRunId`.
    open: Open,
}

impl Subagent {
    /// The `subagentRunId`.
    pub fn id(&self) -> &str {
        self.open.id()
    }

    /// The context that tags events with this invocation.
    pub fn context(&self) -> &RunContext {
        &self.open.ctx
    }

    /// Sends `SUBAGENT_FINISHED` (success).
    pub async fn finish(mut self, result: Option<Value>) -> Result<(), EmitError> {
        let mut e = SubagentFinished::new(self.id().to_owned());
        e.result = result;
        self.open.close_with(e).await
    }

    /// Sends `SUBAGENT_ERROR`.
    pub async fn fail(mut self, message: &str, code: Option<&str>) -> Result<(), EmitError> {
        let mut e = SubagentError::new(self.id().to_owned(), message);
        e.code = code.map(str::to_owned);
        self.open.close_with(e).await
    }

    /// Sends `SUBAGENT_FINISHED` with a `suspended` outcome naming the interrupts this
    /// invocation raised ([`RunContext::interrupt`] on its context).
    pub async fn suspend(mut self) -> Result<(), EmitError> {
        let id = self.id().to_owned();
        let ids: Vec<String> = self.open.ctx.run.sink.with(|_, raised| {
            raised
                .iter()
                .filter(|i| i.subagent_run_id.as_deref() == Some(id.as_str()))
                .map(|i| i.id.clone())
                .collect()
        });
        let e = SubagentFinished::new(id).with_outcome(SubagentOutcome::Suspended {
            interrupt_ids: Some(ids),
        });
        self.open.close_with(e).await
    }
}

impl std::ops::Deref for Subagent {
    type Target = RunContext;
    fn deref(&self) -> &RunContext {
        self.context()
    }
}
