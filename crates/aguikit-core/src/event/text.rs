//! Streamed text messages: `TEXT_MESSAGE_START`, `_CONTENT`, `_END` and the `_CHUNK` shorthand.
//!
//! Declared with `event_types!` (see `macros.rs`): one row per field.

use super::TextMessageRole;

super::macros::event_types! {
    /// `TEXT_MESSAGE_START`: Opens a streamed text message.
    TextMessageStart {
        /// Id of the message being built.
        message_id "messageId": String,
        /// Author role (absent = assistant).
        role "role" with_role: Option<TextMessageRole>,
        /// Author display name.
        name "name" with_name: Option<String>,
        /// The subagent invocation that produced this event (absent = the parent agent).
        subagent_run_id "subagentRunId" with_subagent_run_id: Option<String>,
    }

    /// `TEXT_MESSAGE_CONTENT`: Appends text to an open message.
    TextMessageContent {
        /// The message.
        message_id "messageId": String,
        /// Text to append (may be empty).
        delta "delta": String,
        /// The subagent invocation that produced this event (absent = the parent agent).
        subagent_run_id "subagentRunId" with_subagent_run_id: Option<String>,
    }

    /// `TEXT_MESSAGE_END`: Closes a text message.
    TextMessageEnd {
        /// The message.
        message_id "messageId": String,
        /// The subagent invocation that produced this event (absent = the parent agent).
        subagent_run_id "subagentRunId" with_subagent_run_id: Option<String>,
    }

    /// `TEXT_MESSAGE_CHUNK`: Shorthand for START + CONTENT (+ END later); expanded by the client.
    TextMessageChunk {
        /// The message (absent = continue the open one).
        message_id "messageId" with_message_id: Option<String>,
        /// Author role on the opening chunk.
        role "role" with_role: Option<TextMessageRole>,
        /// Text to append.
        delta "delta" with_delta: Option<String>,
        /// Author display name.
        name "name" with_name: Option<String>,
        /// The subagent invocation that produced this event (absent = the parent agent).
        subagent_run_id "subagentRunId" with_subagent_run_id: Option<String>,
    }
}
