//! Shared state and the message list: `STATE_SNAPSHOT`, `STATE_DELTA`, `MESSAGES_SNAPSHOT`.
//!
//! Declared with `event_types!` (see `macros.rs`): one row per field.

use crate::lenient;
use crate::message::Message;
use crate::patch::JsonPatch;
use crate::serde_util::present_value;
use serde_json::Value;

super::macros::event_types! {
    /// `STATE_SNAPSHOT`: Replaces the whole state.
    StateSnapshot {
        /// The complete new state (any JSON, `null` included).
        snapshot "snapshot": Value ["present_value"],
        /// The subagent invocation that produced this event (absent = the parent agent).
        subagent_run_id "subagentRunId" with_subagent_run_id: Option<String>,
    }

    /// `STATE_DELTA`: RFC 6902 changes to the state.
    StateDelta {
        /// Operations against the current state.
        delta "delta": JsonPatch ["crate::patch::lenient_patch"],
        /// The subagent invocation that produced this event (absent = the parent agent).
        subagent_run_id "subagentRunId" with_subagent_run_id: Option<String>,
    }

    /// `MESSAGES_SNAPSHOT`: The messages the producer owns, in order.
    MessagesSnapshot {
        /// The messages.
        messages "messages": Vec<Message> ["lenient::vec"],
    }
}
