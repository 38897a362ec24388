//! Streamed tool calls and their results.

use crate::context::RunContext;
use crate::error::EmitError;
use agui_core::Content;
use agui_core::event::{ToolCallArgs, ToolCallEnd, ToolCallResult, ToolCallStart};

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

    /// Uses this tool call id instead of a fresh one.
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Attaches the call to this assistant message.
    pub fn parent_message(mut self, message_id: impl Into<String>) -> Self {
        self.parent_message_id = Some(message_id.into());
        self
    }

    /// Sends `TOOL_CALL_START`.
    pub async fn start(self) -> Result<ToolCall, EmitError> {
        let id = self.id.unwrap_or_else(|| self.ctx.new_id("call"));
        let mut start = ToolCallStart::new(id.clone(), self.name);
        start.parent_message_id = self.parent_message_id;
        self.ctx.emit(start).await?;
        Ok(ToolCall {
            ctx: self.ctx,
            id,
            ended: false,
        })
    }
}

/// A tool call. Its arguments stream until [`end`](Self::end) (or drop, which sends
/// `TOOL_CALL_END` too); [`result`](Self::result) answers it.
#[derive(Debug)]
pub struct ToolCall {
    ctx: RunContext,
    id: String,
    ended: bool,
}

impl ToolCall {
    /// The tool call id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Appends argument text (`TOOL_CALL_ARGS`).
    pub async fn args(&self, delta: impl Into<String>) -> Result<(), EmitError> {
        if self.ended {
            return Err(EmitError::Closed);
        }
        self.ctx
            .emit(ToolCallArgs::new(self.id.clone(), delta))
            .await
    }

    /// Ends the arguments (`TOOL_CALL_END`); does nothing when already ended.
    pub async fn end(&mut self) -> Result<(), EmitError> {
        if self.ended {
            return Ok(());
        }
        self.ended = true;
        self.ctx.emit(ToolCallEnd::new(self.id.clone())).await
    }

    /// Ends the call if needed and sends its result (`TOOL_CALL_RESULT`); returns the id
    /// of the tool message it creates.
    pub async fn result(mut self, content: impl Into<Content>) -> Result<String, EmitError> {
        self.end().await?;
        let message_id = self.ctx.new_id("tool");
        self.ctx
            .emit(ToolCallResult::new(
                message_id.clone(),
                self.id.clone(),
                content,
            ))
            .await?;
        Ok(message_id)
    }
}

impl Drop for ToolCall {
    fn drop(&mut self) {
        if !self.ended {
            let _ = self
                .ctx
                .emit_now(ToolCallEnd::new(std::mem::take(&mut self.id)));
        }
    }
}
