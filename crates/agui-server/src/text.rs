//! Streamed text messages.

use crate::context::RunContext;
use crate::error::EmitError;
use agui_core::event::{TextMessageContent, TextMessageEnd, TextMessageRole, TextMessageStart};

/// Options of a text message before it starts. Made by [`RunContext::text_message`].
#[derive(Debug)]
#[must_use = "call .start() to send TEXT_MESSAGE_START"]
pub struct TextMessageBuilder {
    ctx: RunContext,
    id: Option<String>,
    role: Option<TextMessageRole>,
    name: Option<String>,
}

impl TextMessageBuilder {
    pub(crate) fn new(ctx: RunContext) -> Self {
        TextMessageBuilder {
            ctx,
            id: None,
            role: None,
            name: None,
        }
    }

    /// Uses this message id instead of a fresh one.
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Sets the role (absent means assistant).
    pub fn role(mut self, role: TextMessageRole) -> Self {
        self.role = Some(role);
        self
    }

    /// Sets the author's display name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sends `TEXT_MESSAGE_START`.
    pub async fn start(self) -> Result<TextMessage, EmitError> {
        let id = self.id.unwrap_or_else(|| self.ctx.new_id("msg"));
        let mut start = TextMessageStart::new(id.clone());
        start.role = self.role;
        start.name = self.name;
        self.ctx.emit(start).await?;
        Ok(TextMessage {
            ctx: self.ctx,
            id,
            ended: false,
        })
    }
}

/// An open text message. Dropping it sends `TEXT_MESSAGE_END`.
#[derive(Debug)]
pub struct TextMessage {
    ctx: RunContext,
    id: String,
    ended: bool,
}

impl TextMessage {
    /// The message id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Appends text (`TEXT_MESSAGE_CONTENT`).
    pub async fn delta(&self, text: impl Into<String>) -> Result<(), EmitError> {
        self.ctx
            .emit(TextMessageContent::new(self.id.clone(), text))
            .await
    }

    /// Ends the message (`TEXT_MESSAGE_END`).
    pub async fn end(mut self) -> Result<(), EmitError> {
        self.ended = true;
        self.ctx.emit(TextMessageEnd::new(self.id.clone())).await
    }
}

impl Drop for TextMessage {
    fn drop(&mut self) {
        if !self.ended {
            let _ = self
                .ctx
                .emit_now(TextMessageEnd::new(std::mem::take(&mut self.id)));
        }
    }
}
