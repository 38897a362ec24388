//! Chunk expansion: `TEXT_MESSAGE_CHUNK`, `TOOL_CALL_CHUNK` and `REASONING_MESSAGE_CHUNK`
//! become START / CONTENT / END events (rules CH1–CH15 of the client specification).

use super::Violation;
use crate::Event;

/// The chunk-expansion state machine.
#[derive(Debug, Default)]
pub struct Expander {}

impl Expander {
    /// A fresh expander.
    pub fn new() -> Self {
        Expander::default()
    }

    /// Feeds one event; appends the resulting events to `out`.
    pub fn push(&mut self, event: Event, out: &mut Vec<Event>) -> Result<(), Violation> {
        out.push(event);
        Ok(())
    }
}
