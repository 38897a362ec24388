//! Application: folds verified events into messages, state and pending interrupts
//! (rules AP1–AP31 of the client specification).

use crate::{Event, Interrupt, Message};
use serde_json::Value;

/// What one event changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Changes {
    /// The message list changed.
    pub messages: bool,
    /// The state changed.
    pub state: bool,
}

/// The application state machine.
#[derive(Debug)]
pub struct Applier {
    messages: Vec<Message>,
    state: Value,
    pending_interrupts: Vec<Interrupt>,
}

impl Default for Applier {
    fn default() -> Self {
        Applier::new()
    }
}

impl Applier {
    /// No messages, state `{}`.
    pub fn new() -> Self {
        Applier::with_history(Vec::new(), Value::Object(Default::default()))
    }

    /// Starts from existing messages and state.
    pub fn with_history(messages: Vec<Message>, state: Value) -> Self {
        Applier {
            messages,
            state,
            pending_interrupts: Vec::new(),
        }
    }

    /// Applies one verified, expanded event.
    pub fn push(&mut self, event: &Event) -> Changes {
        let _ = event;
        Changes::default()
    }

    /// The messages, in conversation order.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The state.
    pub fn state(&self) -> &Value {
        &self.state
    }

    /// The interrupts of the last `RUN_FINISHED` with an interrupt outcome.
    pub fn pending_interrupts(&self) -> &[Interrupt] {
        &self.pending_interrupts
    }
}
