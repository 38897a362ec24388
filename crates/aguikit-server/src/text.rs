//! Streamed text messages.

use crate::context::RunContext;
use crate::error::EmitError;
use crate::open::Open;
use crate::setters::setters;
use aguikit_core::event::{TextMessageContent, TextMessageEnd, TextMessageRole, TextMessageStart};

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

    setters! {
        /// Uses this message id instead of a fresh one.
        id(id: impl Into<String>) => id = Some(id.into());
        /// Sets the author's display name.
        name(name: impl Into<String>) => name = Some(name.into());
        /// Sets the role (absent means assistant).
        role(role: TextMessageRole) => role = Some(role);
    }

    /// Sends `TEXT_MESSAGE_START`.
    pub async fn start(self) -> Result<TextMessage, EmitError> {
        let id = self.id.unwrap_or_else(|| self.ctx.new_id("msg"));
        let mut start = TextMessageStart::new(id.clone());
        start.role = self.role;
        start.name = self.name;
        let open = Open::start(self.ctx, id, start, |id| TextMessageEnd::new(id).into()).await?;
        Ok(TextMessage { open })
    }
}

/// An open text message. Dropping it sends `TEXT_MESSAGE_END`.
#[derive(Debug)]
pub struct TextMessage {
    open: Open,
}

impl TextMessage {
    /// The message id.
    pub fn id(&self) -> &str {
        self.open.id()
    }

    /// Appends text (`TEXT_MESSAGE_CONTENT`).
    pub async fn delta(&self, text: impl Into<String>) -> Result<(), EmitError> {
        let content = TextMessageContent::new(self.id().to_owned(), text);
        self.open.ctx.emit(content).await
    }

    /// Ends the message (`TEXT_MESSAGE_END`).
    pub async fn end(mut self) -> Result<(), EmitError> {
        self.open.close().await
    }
}
