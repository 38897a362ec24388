//! The sans-I/O protocol engine: every stage is a plain state machine fed one event at a time.
//!
//! The stages, in pipeline order (as the reference client runs them):
//! 1. [`compat`]: inbound compatibility (retired `THINKING_*` events become reasoning events);
//!    decoding already reads legacy `null`s as absent and drops unknown material.
//! 2. [`expand`]: `*_CHUNK` events become START / CONTENT / END.
//! 3. [`verify`]: ordering and ownership rules V1–V55.
//! 4. [`apply`]: folds events into messages, state, pending interrupts.
//!
//! [`compact`] is separate: it shrinks a stored stream. [`pipeline`] composes 1–4.
//! [`rules`] explains every rule id a stage reports.

pub mod apply;
pub mod compact;
pub mod compat;
pub mod expand;
pub mod pipeline;
pub mod rules;
pub mod verify;

/// A protocol rule broken by an event, as found by one engine stage.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{rule}: {message}")]
pub struct Violation {
    /// The rule's label in the specification (`V13`, `CH8`, `K2`, ...); see
    /// [`rules::rule`] for its explanation.
    pub rule: &'static str,
    /// What happened, for people.
    pub message: String,
}

impl Violation {
    /// A violation of `rule`.
    pub fn new(rule: &'static str, message: impl Into<String>) -> Self {
        Violation {
            rule,
            message: message.into(),
        }
    }
}
