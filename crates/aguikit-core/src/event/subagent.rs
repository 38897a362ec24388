//! Subagent invocations: `SUBAGENT_STARTED`, `SUBAGENT_FINISHED`, `SUBAGENT_ERROR`.
//!
//! Declared with `event_types!` (see `macros.rs`): one row per field.

use crate::interrupt::SubagentOutcome;
use crate::interrupt::subagent_outcome;
use crate::serde_util::legacy_null_value;
use serde_json::Value;

super::macros::event_types! {
    /// `SUBAGENT_STARTED`: A subagent invocation began.
    SubagentStarted {
        /// The invocation being announced.
        subagent_run_id "subagentRunId": String,
        /// The subagent's reusable name.
        name "name": String,
        /// Description.
        description "description" with_description: Option<String>,
        /// Enclosing invocation (nesting).
        parent_subagent_run_id "parentSubagentRunId" with_parent_subagent_run_id: Option<String>,
        /// Tool call that spawned it.
        parent_tool_call_id "parentToolCallId" with_parent_tool_call_id: Option<String>,
        /// Message holding that tool call.
        parent_message_id "parentMessageId" with_parent_message_id: Option<String>,
    }

    /// `SUBAGENT_FINISHED`: A subagent invocation ended.
    SubagentFinished {
        /// The invocation.
        subagent_run_id "subagentRunId": String,
        /// Its return value.
        result "result" with_result: Option<Value> ["legacy_null_value"],
        /// How it ended (absent = success).
        outcome "outcome" with_outcome: Option<SubagentOutcome> ["subagent_outcome"],
    }

    /// `SUBAGENT_ERROR`: A subagent invocation failed; the run may continue.
    SubagentError {
        /// The invocation.
        subagent_run_id "subagentRunId": String,
        /// What went wrong.
        message "message": String,
        /// Error code.
        code "code" with_code: Option<String>,
    }
}
