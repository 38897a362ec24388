//! What every open handle shares (text messages, tool calls, steps, reasoning, subagents):
//! the id it opened, and the event that closes it once, when the handle ends it or is
//! dropped still open.

use crate::context::RunContext;
use crate::error::EmitError;
use aguikit_core::Event;

/// An id opened on a run. Its closing event goes out at most once: from
/// [`close`](Self::close) or [`close_with`](Self::close_with), or else on drop.
#[derive(Debug)]
pub(crate) struct Open {
    pub(crate) ctx: RunContext,
    id: String,
    closed: bool,
    /// The event sent for `id` when the handle is closed without a choice of its own.
    closing: fn(String) -> Event,
}

impl Open {
    /// Sends `start`, then holds `id` open until it is closed by `closing`.
    pub(crate) async fn start(
        ctx: RunContext,
        id: String,
        start: impl Into<Event>,
        closing: fn(String) -> Event,
    ) -> Result<Open, EmitError> {
        ctx.emit(start).await?;
        Ok(Open::new(ctx, id, closing))
    }

    /// Holds `id`, whose start was sent, open until it is closed by `closing`.
    pub(crate) fn new(ctx: RunContext, id: String, closing: fn(String) -> Event) -> Open {
        Open {
            ctx,
            id,
            closed: false,
            closing,
        }
    }

    /// The opened id.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// Whether the closing event was sent (or chosen).
    pub(crate) fn is_closed(&self) -> bool {
        self.closed
    }

    /// Sends the closing event; does nothing when already closed.
    pub(crate) async fn close(&mut self) -> Result<(), EmitError> {
        if self.closed {
            return Ok(());
        }
        self.close_with((self.closing)(self.id.clone())).await
    }

    /// Closes with `event` instead of the usual closing event.
    pub(crate) async fn close_with(&mut self, event: impl Into<Event>) -> Result<(), EmitError> {
        self.closed = true;
        self.ctx.emit(event).await
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        if !self.closed {
            let _ = self
                .ctx
                .emit_now((self.closing)(std::mem::take(&mut self.id)));
        }
    }
}
