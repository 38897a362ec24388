//! Streamed tool calls and their results.

use crate::context::RunContext;
use crate::error::EmitError;
use crate::open::Open;
use crate::setters::setters;
use aguikit_core::Content;
use aguikit_core::event::{ToolCallArgs, ToolCallEnd, ToolCallResult, ToolCallStart};

/// Options of a tool call before it starts. Made by [`RunContext::tool_call`].
#[derive(Debug)]
#[must_use = "call .start() to send TOOL_CALL_START"]
pub struct ToolCallBuilder {
    ctx: RunContext,
    name: String,
    id: Option<String>,
    parent_message_id: Option<String>,
}

impl ToolCallBuilder {
    pub(crate) fn new(ctx: RunContext, name: String) -> Self {
        ToolCallBuilder {
            ctx,
            name,
            id: None,
            parent_message_id: None,
        }
    }

    setters! {
        /// Uses this tool call id instead of a fresh one.
        id(id: impl Into<String>) => id = Some(id.into());
        /// Attaches the call to this assistant message.
        parent_message(message_id: impl Into<String>) =>
            parent_message_id = Some(message_id.into());
    }

    /// Sends `TOOL_CALL_START`.
    pub async fn start(self) -> Result<ToolCall, EmitError> {
        let id = self.id.unwrap_or_else(|| self.ctx.new_id("call"));
        let mut start = ToolCallStart::new(id.clone(), self.name);
        start.parent_message_id = self.parent_message_id;
        let open = Open::start(self.ctx, id, start, |id| ToolCallEnd::new(id).into()).await?;
        Ok(ToolCall { open })
    }
}

/// A tool call. Its arguments stream until [`end`](Self::end) (or drop, which sends
/// `TOOL_CALL_END` too); [`result`](Self::result) answers it.
#[derive(Debug)]
pub struct ToolCall {
    open: Open,
}

impl ToolCall {
    /// The tool call id.
    pub fn id(&self) -> &str {
        self.open.id()
    }

    /// Appends argument text (`TOOL_CALL_ARGS`).
    pub async fn args(&self, delta: impl Into<String>) -> Result<(), EmitError> {
        if self.open.is_closed() {
            return Err(EmitError::Closed);
        }
        let args = ToolCallArgs::new(self.id().to_owned(), delta);
        self.open.ctx.emit(args).await
    }

    /// Ends the arguments (`TOOL_CALL_END`); does nothing when already ended.
    pub async fn end(&mut self) -> Result<(), EmitError> {
        self.open.close().await
    }

    /// Ends the call if needed and sends its result (`TOOL_CALL_RESULT`); returns the id
    /// of the tool message it creates.
    pub async fn result(mut self, content: impl Into<Content>) -> Result<String, EmitError> {
        self.end().await?;
        let ctx = &self.open.ctx;
        let message_id = ctx.new_id("tool");
        let result = ToolCallResult::new(message_id.clone(), self.id().to_owned(), content);
        ctx.emit(result).await?;
        Ok(message_id)
    }
}
