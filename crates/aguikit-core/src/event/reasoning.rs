//! Reasoning: `REASONING_START`/`_END` spans, reasoning messages (`_MESSAGE_START`, `_CONTENT`, `_END`, the `_CHUNK` shorthand) and `REASONING_ENCRYPTED_VALUE`.
//!
//! Declared with `event_types!` (see `macros.rs`): one row per field.

use super::{EncryptedValueSubtype, ReasoningRole};

super::macros::event_types! {
    /// `REASONING_START`: Opens a reasoning span.
    ReasoningStart {
        /// Id of the span.
        message_id "messageId": String,
        /// The subagent invocation that produced this event (absent = the parent agent).
        subagent_run_id "subagentRunId" with_subagent_run_id: Option<String>,
    }

    /// `REASONING_MESSAGE_START`: Opens a reasoning message.
    ReasoningMessageStart {
        /// Id of the reasoning message.
        message_id "messageId": String,
        /// Always `"reasoning"`.
        role "role": ReasoningRole,
        /// The subagent invocation that produced this event (absent = the parent agent).
        subagent_run_id "subagentRunId" with_subagent_run_id: Option<String>,
    }

    /// `REASONING_MESSAGE_CONTENT`: Appends reasoning text.
    ReasoningMessageContent {
        /// The reasoning message.
        message_id "messageId": String,
        /// Text to append.
        delta "delta": String,
        /// The subagent invocation that produced this event (absent = the parent agent).
        subagent_run_id "subagentRunId" with_subagent_run_id: Option<String>,
    }

    /// `REASONING_MESSAGE_END`: Closes a reasoning message.
    ReasoningMessageEnd {
        /// The reasoning message.
        message_id "messageId": String,
        /// The subagent invocation that produced this event (absent = the parent agent).
        subagent_run_id "subagentRunId" with_subagent_run_id: Option<String>,
    }

    /// `REASONING_MESSAGE_CHUNK`: Shorthand for a reasoning message's START/CONTENT/END.
    ReasoningMessageChunk {
        /// The message (absent = continue the open one).
        message_id "messageId" with_message_id: Option<String>,
        /// Text to append.
        delta "delta" with_delta: Option<String>,
        /// The subagent invocation that produced this event (absent = the parent agent).
        subagent_run_id "subagentRunId" with_subagent_run_id: Option<String>,
    }

    /// `REASONING_END`: Closes a reasoning span.
    ReasoningEnd {
        /// Id of the span.
        message_id "messageId": String,
        /// The subagent invocation that produced this event (absent = the parent agent).
        subagent_run_id "subagentRunId" with_subagent_run_id: Option<String>,
    }

    /// `REASONING_ENCRYPTED_VALUE`: An opaque provider-encrypted reasoning artefact.
    ReasoningEncryptedValue {
        /// What `entity_id` names.
        subtype "subtype": EncryptedValueSubtype,
        /// A tool call id or a message id.
        entity_id "entityId": String,
        /// The opaque value.
        encrypted_value "encryptedValue": String,
        /// The subagent invocation that produced this event (absent = the parent agent).
        subagent_run_id "subagentRunId" with_subagent_run_id: Option<String>,
    }
}
