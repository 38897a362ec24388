//! The 31 event structs of AG-UI 1.0. Each carries its own fields plus the base fields
//! (`timestamp`, `rawEvent`, `metadata`) and, where the protocol allows it, `subagentRunId`.
//! Generated once from the field tables of the specification; edit with care.

use super::roles::{EncryptedValueSubtype, ReasoningRole, TextMessageRole, ToolRole};
use crate::content::Content;
use crate::input::RunAgentInput;
use crate::interrupt::{RunOutcome, SubagentOutcome, run_outcome, subagent_outcome};
use crate::lenient;
use crate::message::Message;
use crate::metadata::Metadata;
use crate::patch::JsonPatch;
use crate::serde_util::{legacy_null, legacy_null_value, nn, nn_object, present_value, timestamp};
use crate::usage::TokenUsage;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `RUN_STARTED`: Opens a run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct RunStarted {
    /// Conversation id.
    pub thread_id: String,
    /// This run's id.
    pub run_id: String,
    /// The producer's own protocol version (`MAJOR.MINOR`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub protocol_version: Option<String>,
    /// The run that spawned this one.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub parent_run_id: Option<String>,
    /// Echo of the request that started the run.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub input: Option<Box<RunAgentInput>>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl RunStarted {
    /// A `RUN_STARTED` event with its required fields; optional fields are absent.
    pub fn new(thread_id: impl Into<String>, run_id: impl Into<String>) -> Self {
        RunStarted {
            thread_id: thread_id.into(),
            run_id: run_id.into(),
            ..Default::default()
        }
    }
    /// Sets `protocol_version`.
    pub fn with_protocol_version(mut self, v: impl Into<String>) -> Self {
        self.protocol_version = Some(v.into());
        self
    }
    /// Sets `parent_run_id`.
    pub fn with_parent_run_id(mut self, v: impl Into<String>) -> Self {
        self.parent_run_id = Some(v.into());
        self
    }
    /// Sets `input`.
    pub fn with_input(mut self, v: RunAgentInput) -> Self {
        self.input = Some(Box::new(v));
        self
    }
}
base_fields!(RunStarted);

/// `RUN_FINISHED`: Closes a run that did not fail.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct RunFinished {
    /// Conversation id.
    pub thread_id: String,
    /// The run's id.
    pub run_id: String,
    /// The run's return value.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub result: Option<Value>,
    /// Why the run ended (absent = success).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "run_outcome"
    )]
    pub outcome: Option<RunOutcome>,
    /// Token usage, one entry per provider/model.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub usage: Option<Vec<TokenUsage>>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl RunFinished {
    /// A `RUN_FINISHED` event with its required fields; optional fields are absent.
    pub fn new(thread_id: impl Into<String>, run_id: impl Into<String>) -> Self {
        RunFinished {
            thread_id: thread_id.into(),
            run_id: run_id.into(),
            ..Default::default()
        }
    }
    /// Sets `result`.
    pub fn with_result(mut self, v: Value) -> Self {
        self.result = Some(v);
        self
    }
    /// Sets `outcome`.
    pub fn with_outcome(mut self, v: RunOutcome) -> Self {
        self.outcome = Some(v);
        self
    }
    /// Sets `usage`.
    pub fn with_usage(mut self, v: Vec<TokenUsage>) -> Self {
        self.usage = Some(v);
        self
    }
}
base_fields!(RunFinished);

/// `RUN_ERROR`: Ends a run that failed.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct RunError {
    /// Human-readable message.
    pub message: String,
    /// Open vocabulary error code.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub code: Option<String>,
    /// Usage accrued before the failure.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub usage: Option<Vec<TokenUsage>>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl RunError {
    /// A `RUN_ERROR` event with its required fields; optional fields are absent.
    pub fn new(message: impl Into<String>) -> Self {
        RunError {
            message: message.into(),
            ..Default::default()
        }
    }
    /// Sets `code`.
    pub fn with_code(mut self, v: impl Into<String>) -> Self {
        self.code = Some(v.into());
        self
    }
    /// Sets `usage`.
    pub fn with_usage(mut self, v: Vec<TokenUsage>) -> Self {
        self.usage = Some(v);
        self
    }
}
base_fields!(RunError);

/// `STEP_STARTED`: A named step began.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct StepStarted {
    /// The step's name.
    pub step_name: String,
    /// The subagent invocation that produced this event (absent = the parent agent).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl StepStarted {
    /// A `STEP_STARTED` event with its required fields; optional fields are absent.
    pub fn new(step_name: impl Into<String>) -> Self {
        StepStarted {
            step_name: step_name.into(),
            ..Default::default()
        }
    }
    /// Sets `subagent_run_id`.
    pub fn with_subagent_run_id(mut self, v: impl Into<String>) -> Self {
        self.subagent_run_id = Some(v.into());
        self
    }
}
base_fields!(StepStarted);

/// `STEP_FINISHED`: A named step ended.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct StepFinished {
    /// The step's name.
    pub step_name: String,
    /// The subagent invocation that produced this event (absent = the parent agent).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl StepFinished {
    /// A `STEP_FINISHED` event with its required fields; optional fields are absent.
    pub fn new(step_name: impl Into<String>) -> Self {
        StepFinished {
            step_name: step_name.into(),
            ..Default::default()
        }
    }
    /// Sets `subagent_run_id`.
    pub fn with_subagent_run_id(mut self, v: impl Into<String>) -> Self {
        self.subagent_run_id = Some(v.into());
        self
    }
}
base_fields!(StepFinished);

/// `TEXT_MESSAGE_START`: Opens a streamed text message.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct TextMessageStart {
    /// Id of the message being built.
    pub message_id: String,
    /// Author role (absent = assistant).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub role: Option<TextMessageRole>,
    /// Author display name.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub name: Option<String>,
    /// The subagent invocation that produced this event (absent = the parent agent).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl TextMessageStart {
    /// A `TEXT_MESSAGE_START` event with its required fields; optional fields are absent.
    pub fn new(message_id: impl Into<String>) -> Self {
        TextMessageStart {
            message_id: message_id.into(),
            ..Default::default()
        }
    }
    /// Sets `role`.
    pub fn with_role(mut self, v: TextMessageRole) -> Self {
        self.role = Some(v);
        self
    }
    /// Sets `name`.
    pub fn with_name(mut self, v: impl Into<String>) -> Self {
        self.name = Some(v.into());
        self
    }
    /// Sets `subagent_run_id`.
    pub fn with_subagent_run_id(mut self, v: impl Into<String>) -> Self {
        self.subagent_run_id = Some(v.into());
        self
    }
}
base_fields!(TextMessageStart);

/// `TEXT_MESSAGE_CONTENT`: Appends text to an open message.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct TextMessageContent {
    /// The message.
    pub message_id: String,
    /// Text to append (may be empty).
    pub delta: String,
    /// The subagent invocation that produced this event (absent = the parent agent).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl TextMessageContent {
    /// A `TEXT_MESSAGE_CONTENT` event with its required fields; optional fields are absent.
    pub fn new(message_id: impl Into<String>, delta: impl Into<String>) -> Self {
        TextMessageContent {
            message_id: message_id.into(),
            delta: delta.into(),
            ..Default::default()
        }
    }
    /// Sets `subagent_run_id`.
    pub fn with_subagent_run_id(mut self, v: impl Into<String>) -> Self {
        self.subagent_run_id = Some(v.into());
        self
    }
}
base_fields!(TextMessageContent);

/// `TEXT_MESSAGE_END`: Closes a text message.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct TextMessageEnd {
    /// The message.
    pub message_id: String,
    /// The subagent invocation that produced this event (absent = the parent agent).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl TextMessageEnd {
    /// A `TEXT_MESSAGE_END` event with its required fields; optional fields are absent.
    pub fn new(message_id: impl Into<String>) -> Self {
        TextMessageEnd {
            message_id: message_id.into(),
            ..Default::default()
        }
    }
    /// Sets `subagent_run_id`.
    pub fn with_subagent_run_id(mut self, v: impl Into<String>) -> Self {
        self.subagent_run_id = Some(v.into());
        self
    }
}
base_fields!(TextMessageEnd);

/// `TEXT_MESSAGE_CHUNK`: Shorthand for START + CONTENT (+ END later); expanded by the client.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct TextMessageChunk {
    /// The message (absent = continue the open one).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub message_id: Option<String>,
    /// Author role on the opening chunk.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub role: Option<TextMessageRole>,
    /// Text to append.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub delta: Option<String>,
    /// Author display name.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub name: Option<String>,
    /// The subagent invocation that produced this event (absent = the parent agent).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl TextMessageChunk {
    /// A `TEXT_MESSAGE_CHUNK` event with its required fields; optional fields are absent.
    pub fn new() -> Self {
        TextMessageChunk {
            ..Default::default()
        }
    }
    /// Sets `message_id`.
    pub fn with_message_id(mut self, v: impl Into<String>) -> Self {
        self.message_id = Some(v.into());
        self
    }
    /// Sets `role`.
    pub fn with_role(mut self, v: TextMessageRole) -> Self {
        self.role = Some(v);
        self
    }
    /// Sets `delta`.
    pub fn with_delta(mut self, v: impl Into<String>) -> Self {
        self.delta = Some(v.into());
        self
    }
    /// Sets `name`.
    pub fn with_name(mut self, v: impl Into<String>) -> Self {
        self.name = Some(v.into());
        self
    }
    /// Sets `subagent_run_id`.
    pub fn with_subagent_run_id(mut self, v: impl Into<String>) -> Self {
        self.subagent_run_id = Some(v.into());
        self
    }
}
base_fields!(TextMessageChunk);

/// `TOOL_CALL_START`: Opens a streamed tool call.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ToolCallStart {
    /// Call id.
    pub tool_call_id: String,
    /// Tool name.
    pub tool_call_name: String,
    /// Assistant message that holds the call.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null"
    )]
    pub parent_message_id: Option<String>,
    /// The subagent invocation that produced this event (absent = the parent agent).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl ToolCallStart {
    /// A `TOOL_CALL_START` event with its required fields; optional fields are absent.
    pub fn new(tool_call_id: impl Into<String>, tool_call_name: impl Into<String>) -> Self {
        ToolCallStart {
            tool_call_id: tool_call_id.into(),
            tool_call_name: tool_call_name.into(),
            ..Default::default()
        }
    }
    /// Sets `parent_message_id`.
    pub fn with_parent_message_id(mut self, v: impl Into<String>) -> Self {
        self.parent_message_id = Some(v.into());
        self
    }
    /// Sets `subagent_run_id`.
    pub fn with_subagent_run_id(mut self, v: impl Into<String>) -> Self {
        self.subagent_run_id = Some(v.into());
        self
    }
}
base_fields!(ToolCallStart);

/// `TOOL_CALL_ARGS`: Appends argument text to an open tool call.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ToolCallArgs {
    /// Call id.
    pub tool_call_id: String,
    /// Argument text fragment.
    pub delta: String,
    /// The subagent invocation that produced this event (absent = the parent agent).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl ToolCallArgs {
    /// A `TOOL_CALL_ARGS` event with its required fields; optional fields are absent.
    pub fn new(tool_call_id: impl Into<String>, delta: impl Into<String>) -> Self {
        ToolCallArgs {
            tool_call_id: tool_call_id.into(),
            delta: delta.into(),
            ..Default::default()
        }
    }
    /// Sets `subagent_run_id`.
    pub fn with_subagent_run_id(mut self, v: impl Into<String>) -> Self {
        self.subagent_run_id = Some(v.into());
        self
    }
}
base_fields!(ToolCallArgs);

/// `TOOL_CALL_END`: Closes a tool call.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ToolCallEnd {
    /// Call id.
    pub tool_call_id: String,
    /// The subagent invocation that produced this event (absent = the parent agent).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl ToolCallEnd {
    /// A `TOOL_CALL_END` event with its required fields; optional fields are absent.
    pub fn new(tool_call_id: impl Into<String>) -> Self {
        ToolCallEnd {
            tool_call_id: tool_call_id.into(),
            ..Default::default()
        }
    }
    /// Sets `subagent_run_id`.
    pub fn with_subagent_run_id(mut self, v: impl Into<String>) -> Self {
        self.subagent_run_id = Some(v.into());
        self
    }
}
base_fields!(ToolCallEnd);

/// `TOOL_CALL_CHUNK`: Shorthand for START + ARGS (+ END later); expanded by the client.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ToolCallChunk {
    /// Call id (absent = continue the open call).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub tool_call_id: Option<String>,
    /// Tool name (required on the opening chunk).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub tool_call_name: Option<String>,
    /// Assistant message that holds the call.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null"
    )]
    pub parent_message_id: Option<String>,
    /// Argument text fragment.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub delta: Option<String>,
    /// The subagent invocation that produced this event (absent = the parent agent).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl ToolCallChunk {
    /// A `TOOL_CALL_CHUNK` event with its required fields; optional fields are absent.
    pub fn new() -> Self {
        ToolCallChunk {
            ..Default::default()
        }
    }
    /// Sets `tool_call_id`.
    pub fn with_tool_call_id(mut self, v: impl Into<String>) -> Self {
        self.tool_call_id = Some(v.into());
        self
    }
    /// Sets `tool_call_name`.
    pub fn with_tool_call_name(mut self, v: impl Into<String>) -> Self {
        self.tool_call_name = Some(v.into());
        self
    }
    /// Sets `parent_message_id`.
    pub fn with_parent_message_id(mut self, v: impl Into<String>) -> Self {
        self.parent_message_id = Some(v.into());
        self
    }
    /// Sets `delta`.
    pub fn with_delta(mut self, v: impl Into<String>) -> Self {
        self.delta = Some(v.into());
        self
    }
    /// Sets `subagent_run_id`.
    pub fn with_subagent_run_id(mut self, v: impl Into<String>) -> Self {
        self.subagent_run_id = Some(v.into());
        self
    }
}
base_fields!(ToolCallChunk);

/// `TOOL_CALL_RESULT`: A tool's result; becomes a new tool message.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ToolCallResult {
    /// Id of the tool message this result becomes.
    pub message_id: String,
    /// The call answered.
    pub tool_call_id: String,
    /// Text or content parts.
    pub content: Content,
    /// Always `"tool"` when present.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub role: Option<ToolRole>,
    /// The subagent invocation that produced this event (absent = the parent agent).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl ToolCallResult {
    /// A `TOOL_CALL_RESULT` event with its required fields; optional fields are absent.
    pub fn new(
        message_id: impl Into<String>,
        tool_call_id: impl Into<String>,
        content: impl Into<Content>,
    ) -> Self {
        ToolCallResult {
            message_id: message_id.into(),
            tool_call_id: tool_call_id.into(),
            content: content.into(),
            ..Default::default()
        }
    }
    /// Sets `role`.
    pub fn with_role(mut self, v: ToolRole) -> Self {
        self.role = Some(v);
        self
    }
    /// Sets `subagent_run_id`.
    pub fn with_subagent_run_id(mut self, v: impl Into<String>) -> Self {
        self.subagent_run_id = Some(v.into());
        self
    }
}
base_fields!(ToolCallResult);

/// `STATE_SNAPSHOT`: Replaces the whole state.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct StateSnapshot {
    /// The complete new state (any JSON, `null` included).
    #[serde(deserialize_with = "present_value")]
    pub snapshot: Value,
    /// The subagent invocation that produced this event (absent = the parent agent).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl StateSnapshot {
    /// A `STATE_SNAPSHOT` event with its required fields; optional fields are absent.
    pub fn new(snapshot: Value) -> Self {
        StateSnapshot {
            snapshot,
            ..Default::default()
        }
    }
    /// Sets `subagent_run_id`.
    pub fn with_subagent_run_id(mut self, v: impl Into<String>) -> Self {
        self.subagent_run_id = Some(v.into());
        self
    }
}
base_fields!(StateSnapshot);

/// `STATE_DELTA`: RFC 6902 changes to the state.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct StateDelta {
    /// Operations against the current state.
    #[serde(deserialize_with = "crate::patch::lenient_patch")]
    pub delta: JsonPatch,
    /// The subagent invocation that produced this event (absent = the parent agent).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl StateDelta {
    /// A `STATE_DELTA` event with its required fields; optional fields are absent.
    pub fn new(delta: JsonPatch) -> Self {
        StateDelta {
            delta,
            ..Default::default()
        }
    }
    /// Sets `subagent_run_id`.
    pub fn with_subagent_run_id(mut self, v: impl Into<String>) -> Self {
        self.subagent_run_id = Some(v.into());
        self
    }
}
base_fields!(StateDelta);

/// `MESSAGES_SNAPSHOT`: The messages the producer owns, in order.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct MessagesSnapshot {
    /// The messages.
    #[serde(deserialize_with = "lenient::vec")]
    pub messages: Vec<Message>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl MessagesSnapshot {
    /// A `MESSAGES_SNAPSHOT` event with its required fields; optional fields are absent.
    pub fn new(messages: Vec<Message>) -> Self {
        MessagesSnapshot {
            messages,
            ..Default::default()
        }
    }
}
base_fields!(MessagesSnapshot);

/// `ACTIVITY_SNAPSHOT`: Creates or replaces an activity message.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ActivitySnapshot {
    /// Id of the activity message.
    pub message_id: String,
    /// Open vocabulary (e.g. `"PLAN"`).
    pub activity_type: String,
    /// The activity's content (a JSON object).
    pub content: Map<String, Value>,
    /// `false` keeps existing content (absent = true).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub replace: Option<bool>,
    /// The subagent invocation that produced this event (absent = the parent agent).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl ActivitySnapshot {
    /// A `ACTIVITY_SNAPSHOT` event with its required fields; optional fields are absent.
    pub fn new(
        message_id: impl Into<String>,
        activity_type: impl Into<String>,
        content: Map<String, Value>,
    ) -> Self {
        ActivitySnapshot {
            message_id: message_id.into(),
            activity_type: activity_type.into(),
            content,
            ..Default::default()
        }
    }
    /// Sets `replace`.
    pub fn with_replace(mut self, v: bool) -> Self {
        self.replace = Some(v);
        self
    }
    /// Sets `subagent_run_id`.
    pub fn with_subagent_run_id(mut self, v: impl Into<String>) -> Self {
        self.subagent_run_id = Some(v.into());
        self
    }
}
base_fields!(ActivitySnapshot);

/// `ACTIVITY_DELTA`: RFC 6902 changes to an activity's content.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ActivityDelta {
    /// Id of the activity message.
    pub message_id: String,
    /// Activity type.
    pub activity_type: String,
    /// Operations against the activity content.
    #[serde(deserialize_with = "crate::patch::lenient_patch")]
    pub patch: JsonPatch,
    /// The subagent invocation that produced this event (absent = the parent agent).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl ActivityDelta {
    /// A `ACTIVITY_DELTA` event with its required fields; optional fields are absent.
    pub fn new(
        message_id: impl Into<String>,
        activity_type: impl Into<String>,
        patch: JsonPatch,
    ) -> Self {
        ActivityDelta {
            message_id: message_id.into(),
            activity_type: activity_type.into(),
            patch,
            ..Default::default()
        }
    }
    /// Sets `subagent_run_id`.
    pub fn with_subagent_run_id(mut self, v: impl Into<String>) -> Self {
        self.subagent_run_id = Some(v.into());
        self
    }
}
base_fields!(ActivityDelta);

/// `RAW`: A provider's own event, passed through.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Raw {
    /// The provider's event (any JSON).
    #[serde(deserialize_with = "present_value")]
    pub event: Value,
    /// Which provider or framework.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub source: Option<String>,
    /// The subagent invocation that produced this event (absent = the parent agent).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl Raw {
    /// A `RAW` event with its required fields; optional fields are absent.
    pub fn new(event: Value) -> Self {
        Raw {
            event,
            ..Default::default()
        }
    }
    /// Sets `source`.
    pub fn with_source(mut self, v: impl Into<String>) -> Self {
        self.source = Some(v.into());
        self
    }
    /// Sets `subagent_run_id`.
    pub fn with_subagent_run_id(mut self, v: impl Into<String>) -> Self {
        self.subagent_run_id = Some(v.into());
        self
    }
}
base_fields!(Raw);

/// `CUSTOM`: An application-defined event.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Custom {
    /// Routing name.
    pub name: String,
    /// Payload (any JSON).
    #[serde(deserialize_with = "present_value")]
    pub value: Value,
    /// The subagent invocation that produced this event (absent = the parent agent).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl Custom {
    /// A `CUSTOM` event with its required fields; optional fields are absent.
    pub fn new(name: impl Into<String>, value: Value) -> Self {
        Custom {
            name: name.into(),
            value,
            ..Default::default()
        }
    }
    /// Sets `subagent_run_id`.
    pub fn with_subagent_run_id(mut self, v: impl Into<String>) -> Self {
        self.subagent_run_id = Some(v.into());
        self
    }
}
base_fields!(Custom);

/// `REASONING_START`: Opens a reasoning span.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ReasoningStart {
    /// Id of the span.
    pub message_id: String,
    /// The subagent invocation that produced this event (absent = the parent agent).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl ReasoningStart {
    /// A `REASONING_START` event with its required fields; optional fields are absent.
    pub fn new(message_id: impl Into<String>) -> Self {
        ReasoningStart {
            message_id: message_id.into(),
            ..Default::default()
        }
    }
    /// Sets `subagent_run_id`.
    pub fn with_subagent_run_id(mut self, v: impl Into<String>) -> Self {
        self.subagent_run_id = Some(v.into());
        self
    }
}
base_fields!(ReasoningStart);

/// `REASONING_MESSAGE_START`: Opens a reasoning message.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ReasoningMessageStart {
    /// Id of the reasoning message.
    pub message_id: String,
    /// Always `"reasoning"`.
    pub role: ReasoningRole,
    /// The subagent invocation that produced this event (absent = the parent agent).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl ReasoningMessageStart {
    /// A `REASONING_MESSAGE_START` event with its required fields; optional fields are absent.
    pub fn new(message_id: impl Into<String>, role: ReasoningRole) -> Self {
        ReasoningMessageStart {
            message_id: message_id.into(),
            role,
            ..Default::default()
        }
    }
    /// Sets `subagent_run_id`.
    pub fn with_subagent_run_id(mut self, v: impl Into<String>) -> Self {
        self.subagent_run_id = Some(v.into());
        self
    }
}
base_fields!(ReasoningMessageStart);

/// `REASONING_MESSAGE_CONTENT`: Appends reasoning text.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ReasoningMessageContent {
    /// The reasoning message.
    pub message_id: String,
    /// Text to append.
    pub delta: String,
    /// The subagent invocation that produced this event (absent = the parent agent).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl ReasoningMessageContent {
    /// A `REASONING_MESSAGE_CONTENT` event with its required fields; optional fields are absent.
    pub fn new(message_id: impl Into<String>, delta: impl Into<String>) -> Self {
        ReasoningMessageContent {
            message_id: message_id.into(),
            delta: delta.into(),
            ..Default::default()
        }
    }
    /// Sets `subagent_run_id`.
    pub fn with_subagent_run_id(mut self, v: impl Into<String>) -> Self {
        self.subagent_run_id = Some(v.into());
        self
    }
}
base_fields!(ReasoningMessageContent);

/// `REASONING_MESSAGE_END`: Closes a reasoning message.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ReasoningMessageEnd {
    /// The reasoning message.
    pub message_id: String,
    /// The subagent invocation that produced this event (absent = the parent agent).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl ReasoningMessageEnd {
    /// A `REASONING_MESSAGE_END` event with its required fields; optional fields are absent.
    pub fn new(message_id: impl Into<String>) -> Self {
        ReasoningMessageEnd {
            message_id: message_id.into(),
            ..Default::default()
        }
    }
    /// Sets `subagent_run_id`.
    pub fn with_subagent_run_id(mut self, v: impl Into<String>) -> Self {
        self.subagent_run_id = Some(v.into());
        self
    }
}
base_fields!(ReasoningMessageEnd);

/// `REASONING_MESSAGE_CHUNK`: Shorthand for a reasoning message's START/CONTENT/END.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ReasoningMessageChunk {
    /// The message (absent = continue the open one).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub message_id: Option<String>,
    /// Text to append.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub delta: Option<String>,
    /// The subagent invocation that produced this event (absent = the parent agent).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl ReasoningMessageChunk {
    /// A `REASONING_MESSAGE_CHUNK` event with its required fields; optional fields are absent.
    pub fn new() -> Self {
        ReasoningMessageChunk {
            ..Default::default()
        }
    }
    /// Sets `message_id`.
    pub fn with_message_id(mut self, v: impl Into<String>) -> Self {
        self.message_id = Some(v.into());
        self
    }
    /// Sets `delta`.
    pub fn with_delta(mut self, v: impl Into<String>) -> Self {
        self.delta = Some(v.into());
        self
    }
    /// Sets `subagent_run_id`.
    pub fn with_subagent_run_id(mut self, v: impl Into<String>) -> Self {
        self.subagent_run_id = Some(v.into());
        self
    }
}
base_fields!(ReasoningMessageChunk);

/// `REASONING_END`: Closes a reasoning span.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ReasoningEnd {
    /// Id of the span.
    pub message_id: String,
    /// The subagent invocation that produced this event (absent = the parent agent).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl ReasoningEnd {
    /// A `REASONING_END` event with its required fields; optional fields are absent.
    pub fn new(message_id: impl Into<String>) -> Self {
        ReasoningEnd {
            message_id: message_id.into(),
            ..Default::default()
        }
    }
    /// Sets `subagent_run_id`.
    pub fn with_subagent_run_id(mut self, v: impl Into<String>) -> Self {
        self.subagent_run_id = Some(v.into());
        self
    }
}
base_fields!(ReasoningEnd);

/// `REASONING_ENCRYPTED_VALUE`: An opaque provider-encrypted reasoning artefact.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ReasoningEncryptedValue {
    /// What `entity_id` names.
    pub subtype: EncryptedValueSubtype,
    /// A tool call id or a message id.
    pub entity_id: String,
    /// The opaque value.
    pub encrypted_value: String,
    /// The subagent invocation that produced this event (absent = the parent agent).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl ReasoningEncryptedValue {
    /// A `REASONING_ENCRYPTED_VALUE` event with its required fields; optional fields are absent.
    pub fn new(
        subtype: EncryptedValueSubtype,
        entity_id: impl Into<String>,
        encrypted_value: impl Into<String>,
    ) -> Self {
        ReasoningEncryptedValue {
            subtype,
            entity_id: entity_id.into(),
            encrypted_value: encrypted_value.into(),
            ..Default::default()
        }
    }
    /// Sets `subagent_run_id`.
    pub fn with_subagent_run_id(mut self, v: impl Into<String>) -> Self {
        self.subagent_run_id = Some(v.into());
        self
    }
}
base_fields!(ReasoningEncryptedValue);

/// `SUBAGENT_STARTED`: A subagent invocation began.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SubagentStarted {
    /// The invocation being announced.
    pub subagent_run_id: String,
    /// The subagent's reusable name.
    pub name: String,
    /// Description.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub description: Option<String>,
    /// Enclosing invocation (nesting).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub parent_subagent_run_id: Option<String>,
    /// Tool call that spawned it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub parent_tool_call_id: Option<String>,
    /// Message holding that tool call.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub parent_message_id: Option<String>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl SubagentStarted {
    /// A `SUBAGENT_STARTED` event with its required fields; optional fields are absent.
    pub fn new(subagent_run_id: impl Into<String>, name: impl Into<String>) -> Self {
        SubagentStarted {
            subagent_run_id: subagent_run_id.into(),
            name: name.into(),
            ..Default::default()
        }
    }
    /// Sets `description`.
    pub fn with_description(mut self, v: impl Into<String>) -> Self {
        self.description = Some(v.into());
        self
    }
    /// Sets `parent_subagent_run_id`.
    pub fn with_parent_subagent_run_id(mut self, v: impl Into<String>) -> Self {
        self.parent_subagent_run_id = Some(v.into());
        self
    }
    /// Sets `parent_tool_call_id`.
    pub fn with_parent_tool_call_id(mut self, v: impl Into<String>) -> Self {
        self.parent_tool_call_id = Some(v.into());
        self
    }
    /// Sets `parent_message_id`.
    pub fn with_parent_message_id(mut self, v: impl Into<String>) -> Self {
        self.parent_message_id = Some(v.into());
        self
    }
}
base_fields!(SubagentStarted);

/// `SUBAGENT_FINISHED`: A subagent invocation ended.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SubagentFinished {
    /// The invocation.
    pub subagent_run_id: String,
    /// Its return value.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub result: Option<Value>,
    /// How it ended (absent = success).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "subagent_outcome"
    )]
    pub outcome: Option<SubagentOutcome>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl SubagentFinished {
    /// A `SUBAGENT_FINISHED` event with its required fields; optional fields are absent.
    pub fn new(subagent_run_id: impl Into<String>) -> Self {
        SubagentFinished {
            subagent_run_id: subagent_run_id.into(),
            ..Default::default()
        }
    }
    /// Sets `result`.
    pub fn with_result(mut self, v: Value) -> Self {
        self.result = Some(v);
        self
    }
    /// Sets `outcome`.
    pub fn with_outcome(mut self, v: SubagentOutcome) -> Self {
        self.outcome = Some(v);
        self
    }
}
base_fields!(SubagentFinished);

/// `SUBAGENT_ERROR`: A subagent invocation failed; the run may continue.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SubagentError {
    /// The invocation.
    pub subagent_run_id: String,
    /// What went wrong.
    pub message: String,
    /// Error code.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub code: Option<String>,
    /// When the event was produced (milliseconds since the Unix epoch by convention).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "timestamp"
    )]
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (never `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy_null_value"
    )]
    pub raw_event: Option<Value>,
    /// Open metadata (a JSON object).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

impl SubagentError {
    /// A `SUBAGENT_ERROR` event with its required fields; optional fields are absent.
    pub fn new(subagent_run_id: impl Into<String>, message: impl Into<String>) -> Self {
        SubagentError {
            subagent_run_id: subagent_run_id.into(),
            message: message.into(),
            ..Default::default()
        }
    }
    /// Sets `code`.
    pub fn with_code(mut self, v: impl Into<String>) -> Self {
        self.code = Some(v.into());
        self
    }
}
base_fields!(SubagentError);
