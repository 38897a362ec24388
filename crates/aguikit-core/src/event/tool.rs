//! Tool calls: `TOOL_CALL_START`, `_ARGS`, `_END`, the `_CHUNK` shorthand and `TOOL_CALL_RESULT`.
//!
//! Declared with `event_types!` (see `macros.rs`): one row per field.

use super::ToolRole;
use crate::content::Content;
use crate::serde_util::legacy_null;

super::macros::event_types! {
    /// `TOOL_CALL_START`: Opens a streamed tool call.
    ToolCallStart {
        /// Call id.
        tool_call_id "toolCallId": String,
        /// Tool name.
        tool_call_name "toolCallName": String,
        /// Assistant message that holds the call.
        parent_message_id "parentMessageId" with_parent_message_id: Option<String> ["legacy_null"],
        /// The subagent invocation that produced this event (absent = the parent agent).
        subagent_run_id "subagentRunId" with_subagent_run_id: Option<String>,
    }

    /// `TOOL_CALL_ARGS`: Appends argument text to an open tool call.
    ToolCallArgs {
        /// Call id.
        tool_call_id "toolCallId": String,
        /// Argument text fragment.
        delta "delta": String,
        /// The subagent invocation that produced this event (absent = the parent agent).
        subagent_run_id "subagentRunId" with_subagent_run_id: Option<String>,
    }

    /// `TOOL_CALL_END`: Closes a tool call.
    ToolCallEnd {
        /// Call id.
        tool_call_id "toolCallId": String,
        /// The subagent invocation that produced this event (absent = the parent agent).
        subagent_run_id "subagentRunId" with_subagent_run_id: Option<String>,
    }

    /// `TOOL_CALL_CHUNK`: Shorthand for START + ARGS (+ END later); expanded by the client.
    ToolCallChunk {
        /// Call id (absent = continue the open call).
        tool_call_id "toolCallId" with_tool_call_id: Option<String>,
        /// Tool name (required on the opening chunk).
        tool_call_name "toolCallName" with_tool_call_name: Option<String>,
        /// Assistant message that holds the call.
        parent_message_id "parentMessageId" with_parent_message_id: Option<String> ["legacy_null"],
        /// Argument text fragment.
        delta "delta" with_delta: Option<String>,
        /// The subagent invocation that produced this event (absent = the parent agent).
        subagent_run_id "subagentRunId" with_subagent_run_id: Option<String>,
    }

    /// `TOOL_CALL_RESULT`: A tool's result; becomes a new tool message.
    ToolCallResult {
        /// Id of the tool message this result becomes.
        message_id "messageId": String,
        /// The call answered.
        tool_call_id "toolCallId": String,
        /// Text or content parts.
        content "content": Content,
        /// Always `"tool"` when present.
        role "role" with_role: Option<ToolRole>,
        /// The subagent invocation that produced this event (absent = the parent agent).
        subagent_run_id "subagentRunId" with_subagent_run_id: Option<String>,
    }
}
