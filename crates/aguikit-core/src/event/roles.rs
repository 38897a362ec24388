//! Small enums and literals used by event fields.

use crate::serde_util::string_literal;
use serde::{Deserialize, Serialize};

/// Roles a text message may have (`TEXT_MESSAGE_START.role`): no tool, reasoning or activity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum TextMessageRole {
    /// Developer.
    Developer,
    /// System.
    System,
    /// Assistant (the default when absent).
    #[default]
    Assistant,
    /// User.
    User,
}

impl TextMessageRole {
    /// The wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            TextMessageRole::Developer => "developer",
            TextMessageRole::System => "system",
            TextMessageRole::Assistant => "assistant",
            TextMessageRole::User => "user",
        }
    }
}

string_literal!(
    /// The literal `"tool"` (`TOOL_CALL_RESULT.role`).
    ToolRole = "tool"
);

string_literal!(
    /// The literal `"reasoning"` (`REASONING_MESSAGE_START.role`).
    ReasoningRole = "reasoning"
);

/// What `REASONING_ENCRYPTED_VALUE.entityId` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum EncryptedValueSubtype {
    /// A tool call id.
    #[serde(rename = "tool-call")]
    ToolCall,
    /// A message id.
    #[default]
    #[serde(rename = "message")]
    Message,
}
