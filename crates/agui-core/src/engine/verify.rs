//! Verification: the ordering and ownership rules V1–V55 of the client specification.

use super::Violation;
use crate::Event;

/// The verification state machine.
#[derive(Debug, Default)]
pub struct Verifier {}

impl Verifier {
    /// A fresh verifier.
    pub fn new() -> Self {
        Verifier::default()
    }

    /// Checks one (already expanded) event.
    pub fn push(&mut self, event: &Event) -> Result<(), Violation> {
        let _ = event;
        Ok(())
    }

    /// Checks the end of the stream.
    pub fn finish(&mut self) -> Result<(), Violation> {
        Ok(())
    }
}
