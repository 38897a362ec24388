//! Pass-through events: `RAW` and `CUSTOM`.
//!
//! Declared with `event_types!` (see `macros.rs`): one row per field.

use crate::serde_util::present_value;
use serde_json::Value;

super::macros::event_types! {
    /// `RAW`: A provider's own event, passed through.
    Raw {
        /// The provider's event (any JSON).
        event "event": Value ["present_value"],
        /// Which provider or framework.
        source "source" with_source: Option<String>,
        /// The subagent invocation that produced this event (absent = the parent agent).
        subagent_run_id "subagentRunId" with_subagent_run_id: Option<String>,
    }

    /// `CUSTOM`: An application-defined event.
    Custom {
        /// Routing name.
        name "name": String,
        /// Payload (any JSON).
        value "value": Value ["present_value"],
        /// The subagent invocation that produced this event (absent = the parent agent).
        subagent_run_id "subagentRunId" with_subagent_run_id: Option<String>,
    }
}
