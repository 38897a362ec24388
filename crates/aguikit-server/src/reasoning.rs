//! Reasoning spans, reasoning messages and encrypted reasoning values.

use crate::context::RunContext;
use crate::error::EmitError;
use crate::open::Open;
use aguikit_core::event::{
    EncryptedValueSubtype, ReasoningEnd, ReasoningMessageContent, ReasoningMessageEnd,
    ReasoningMessageStart, ReasoningRole, ReasoningStart,
};

/// An open reasoning span (`REASONING_START` sent). Dropping it sends `REASONING_END`.
#[derive(Debug)]
pub struct Reasoning {
    open: Open,
}

impl Reasoning {
    pub(crate) async fn start(ctx: RunContext) -> Result<Reasoning, EmitError> {
        let id = ctx.new_id("reasoning");
        let start = ReasoningStart::new(id.clone());
        let open = Open::start(ctx, id, start, |id| ReasoningEnd::new(id).into()).await?;
        Ok(Reasoning { open })
    }

    /// The span id.
    pub fn id(&self) -> &str {
        self.open.id()
    }

    /// Starts a reasoning message in this span (`REASONING_MESSAGE_START`).
    pub async fn message(&self) -> Result<ReasoningMessage, EmitError> {
        let ctx = self.open.ctx.clone();
        let id = ctx.new_id("thought");
        let start = ReasoningMessageStart::new(id.clone(), ReasoningRole);
        let open = Open::start(ctx, id, start, |id| ReasoningMessageEnd::new(id).into()).await?;
        Ok(ReasoningMessage { open })
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
        (self.open.ctx)
            .encrypted_value(subtype, entity_id, encrypted_value)
            .await
    }

    /// Ends the span (`REASONING_END`).
    pub async fn end(mut self) -> Result<(), EmitError> {
        self.open.close().await
    }
}

/// An open reasoning message. Dropping it sends `REASONING_MESSAGE_END`.
#[derive(Debug)]
pub struct ReasoningMessage {
    open: Open,
}

impl ReasoningMessage {
    /// The message id.
    pub fn id(&self) -> &str {
        self.open.id()
    }

    /// Appends reasoning text (`REASONING_MESSAGE_CONTENT`).
    pub async fn delta(&self, text: impl Into<String>) -> Result<(), EmitError> {
        let content = ReasoningMessageContent::new(self.id().to_owned(), text);
        self.open.ctx.emit(content).await
    }

    /// Ends the message (`REASONING_MESSAGE_END`).
    pub async fn end(mut self) -> Result<(), EmitError> {
        self.open.close().await
    }
}
