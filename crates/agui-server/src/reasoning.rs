//! Reasoning spans, reasoning messages and encrypted reasoning values.

use crate::context::RunContext;
use crate::error::EmitError;
use agui_core::event::{
    EncryptedValueSubtype, ReasoningEncryptedValue, ReasoningEnd, ReasoningMessageContent,
    ReasoningMessageEnd, ReasoningMessageStart, ReasoningRole, ReasoningStart,
};

/// An open reasoning span (`REASONING_START` sent). Dropping it sends `REASONING_END`.
#[derive(Debug)]
pub struct Reasoning {
    ctx: RunContext,
    id: String,
    ended: bool,
}

impl Reasoning {
    pub(crate) async fn start(ctx: RunContext) -> Result<Reasoning, EmitError> {
        let id = ctx.new_id("reasoning");
        ctx.emit(ReasoningStart::new(id.clone())).await?;
        Ok(Reasoning {
            ctx,
            id,
            ended: false,
        })
    }

    /// The span id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Starts a reasoning message in this span (`REASONING_MESSAGE_START`).
    pub async fn message(&self) -> Result<ReasoningMessage, EmitError> {
        let id = self.ctx.new_id("thought");
        self.ctx
            .emit(ReasoningMessageStart::new(id.clone(), ReasoningRole))
            .await?;
        Ok(ReasoningMessage {
            ctx: self.ctx.clone(),
            id,
            ended: false,
        })
    }

    /// Sends a whole reasoning message; returns its id.
    pub async fn think(&self, text: impl Into<String>) -> Result<String, EmitError> {
        let m = self.message().await?;
        m.delta(text).await?;
        let id = m.id().to_owned();
        m.end().await?;
        Ok(id)
    }

    /// Sends a `REASONING_ENCRYPTED_VALUE` for a message or tool call.
    pub async fn encrypted_value(
        &self,
        subtype: EncryptedValueSubtype,
        entity_id: impl Into<String>,
        encrypted_value: impl Into<String>,
    ) -> Result<(), EmitError> {
        self.ctx
            .emit(ReasoningEncryptedValue::new(
                subtype,
                entity_id,
                encrypted_value,
            ))
            .await
    }

    /// Ends the span (`REASONING_END`).
    pub async fn end(mut self) -> Result<(), EmitError> {
        self.ended = true;
        self.ctx.emit(ReasoningEnd::new(self.id.clone())).await
    }
}

impl Drop for Reasoning {
    fn drop(&mut self) {
        if !self.ended {
            let _ = self
                .ctx
                .emit_now(ReasoningEnd::new(std::mem::take(&mut self.id)));
        }
    }
}

/// An open reasoning message. Dropping it sends `REASONING_MESSAGE_END`.
#[derive(Debug)]
pub struct ReasoningMessage {
    ctx: RunContext,
    id: String,
    ended: bool,
}

impl ReasoningMessage {
    /// The message id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Appends reasoning text (`REASONING_MESSAGE_CONTENT`).
    pub async fn delta(&self, text: impl Into<String>) -> Result<(), EmitError> {
        self.ctx
            .emit(ReasoningMessageContent::new(self.id.clone(), text))
            .await
    }

    /// Ends the message (`REASONING_MESSAGE_END`).
    pub async fn end(mut self) -> Result<(), EmitError> {
        self.ended = true;
        self.ctx
            .emit(ReasoningMessageEnd::new(self.id.clone()))
            .await
    }
}

impl Drop for ReasoningMessage {
    fn drop(&mut self) {
        if !self.ended {
            let _ = self
                .ctx
                .emit_now(ReasoningMessageEnd::new(std::mem::take(&mut self.id)));
        }
    }
}
