//! Activity messages: `ACTIVITY_SNAPSHOT` and `ACTIVITY_DELTA`.
//!
//! Declared with `event_types!` (see `macros.rs`): one row per field.

use crate::patch::JsonPatch;
use serde_json::{Map, Value};

super::macros::event_types! {
    /// `ACTIVITY_SNAPSHOT`: Creates or replaces an activity message.
    ActivitySnapshot {
        /// Id of the activity message.
        message_id "messageId": String,
        /// Open vocabulary (e.g. `"PLAN"`).
        activity_type "activityType": String,
        /// The activity's content (a JSON object).
        content "content": Map<String, Value>,
        /// `false` keeps existing content (absent = true).
        replace "replace" with_replace: Option<bool>,
        /// The subagent invocation that produced this event (absent = the parent agent).
        subagent_run_id "subagentRunId" with_subagent_run_id: Option<String>,
    }

    /// `ACTIVITY_DELTA`: RFC 6902 changes to an activity's content.
    ActivityDelta {
        /// Id of the activity message.
        message_id "messageId": String,
        /// Activity type.
        activity_type "activityType": String,
        /// Operations against the activity content.
        patch "patch": JsonPatch ["crate::patch::lenient_patch"],
        /// The subagent invocation that produced this event (absent = the parent agent).
        subagent_run_id "subagentRunId" with_subagent_run_id: Option<String>,
    }
}
