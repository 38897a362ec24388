//! [`AgentCapabilities`]: a typed description of what an agent supports. Every field at every
//! level is optional; an omitted field means "not declared", not "unsupported".

use crate::input::Tool;
use crate::metadata::Metadata;
use crate::serde_util::{count, nn, nn_object};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

macro_rules! caps {
    ($(#[$m:meta])* $name:ident { $($(#[$fm:meta])* $field:ident : $ty:ty),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
        #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
        #[serde(rename_all = "camelCase")]
        pub struct $name {
            $(
                $(#[$fm])*
                #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "nn")]
                pub $field: Option<$ty>,
            )*
        }
    };
}

/// Everything an agent may declare about itself.
///
/// ```
/// use agui_core::AgentCapabilities;
/// let c: AgentCapabilities = serde_json::from_str(r#"{"transport":{"streaming":true}}"#).unwrap();
/// assert_eq!(c.transport.unwrap().streaming, Some(true));
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// Who the agent is.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub identity: Option<IdentityCapabilities>,
    /// Transport features.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub transport: Option<TransportCapabilities>,
    /// Tool support.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub tools: Option<ToolsCapabilities>,
    /// Output features.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub output: Option<OutputCapabilities>,
    /// State features.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub state: Option<StateCapabilities>,
    /// Multi-agent features.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub multi_agent: Option<MultiAgentCapabilities>,
    /// Reasoning features.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub reasoning: Option<ReasoningCapabilities>,
    /// Multimodal input and output.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub multimodal: Option<MultimodalCapabilities>,
    /// Execution limits.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub execution: Option<ExecutionCapabilities>,
    /// Human-in-the-loop features.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub human_in_the_loop: Option<HumanInTheLoopCapabilities>,
    /// Anything else (open by key).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub custom: Option<Map<String, Value>>,
}

/// Who the agent is.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct IdentityCapabilities {
    /// Display name.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub name: Option<String>,
    /// Framework or kind (e.g. `"langgraph"`).
    #[serde(
        rename = "type",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub kind: Option<String>,
    /// Description.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub description: Option<String>,
    /// Version.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub version: Option<String>,
    /// Provider.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub provider: Option<String>,
    /// Documentation URL.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub documentation_url: Option<String>,
    /// Metadata.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
}

caps!(
    /// Transport features.
    TransportCapabilities {
        /// Streams events.
        streaming: bool,
        /// Speaks WebSocket.
        websocket: bool,
        /// Speaks protobuf.
        http_binary: bool,
        /// Push notifications.
        push_notifications: bool,
        /// Streams can be resumed.
        resumable: bool,
    }
);

caps!(
    /// Tool support.
    ToolsCapabilities {
        /// Calls tools.
        supported: bool,
        /// Its own tools.
        items: Vec<Tool>,
        /// Calls several tools at once.
        parallel_calls: bool,
        /// Accepts front-end tools.
        client_provided: bool,
    }
);

caps!(
    /// Output features.
    OutputCapabilities {
        /// Structured output.
        structured_output: bool,
        /// MIME types it can produce.
        supported_mime_types: Vec<String>,
    }
);

caps!(
    /// State features.
    StateCapabilities {
        /// Sends snapshots.
        snapshots: bool,
        /// Sends deltas.
        deltas: bool,
        /// Has memory.
        memory: bool,
        /// Persists state.
        persistent_state: bool,
    }
);

caps!(
    /// Multi-agent features.
    MultiAgentCapabilities {
        /// Multi-agent at all.
        supported: bool,
        /// Delegates.
        delegation: bool,
        /// Hands off.
        handoffs: bool,
        /// Its subagents.
        subagents: Vec<SubagentInfo>,
    }
);

/// A subagent an agent may start.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SubagentInfo {
    /// Reusable name.
    pub name: String,
    /// Description.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub description: Option<String>,
}

caps!(
    /// Reasoning features.
    ReasoningCapabilities {
        /// Reasons visibly.
        supported: bool,
        /// Streams reasoning.
        streaming: bool,
        /// Sends encrypted reasoning.
        encrypted: bool,
    }
);

/// Multimodal input and output.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MultimodalCapabilities {
    /// Accepted inputs.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub input: Option<MultimodalInput>,
    /// Produced outputs.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub output: Option<MultimodalOutput>,
}

caps!(
    /// Accepted input media.
    MultimodalInput {
        /// Images.
        image: bool,
        /// Audio.
        audio: bool,
        /// Video.
        video: bool,
        /// PDF.
        pdf: bool,
        /// Files.
        file: bool,
    }
);

caps!(
    /// Produced output media.
    MultimodalOutput {
        /// Images.
        image: bool,
        /// Audio.
        audio: bool,
    }
);

/// Execution features and limits.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ExecutionCapabilities {
    /// Runs code.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub code_execution: Option<bool>,
    /// In a sandbox.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub sandboxed: Option<bool>,
    /// Iteration limit.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "count"
    )]
    pub max_iterations: Option<u64>,
    /// Time limit in milliseconds.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "count"
    )]
    pub max_execution_time: Option<u64>,
}

caps!(
    /// Human-in-the-loop features.
    HumanInTheLoopCapabilities {
        /// At all.
        supported: bool,
        /// Approvals.
        approvals: bool,
        /// Interventions.
        interventions: bool,
        /// Feedback.
        feedback: bool,
        /// Interrupts.
        interrupts: bool,
        /// Approve with edits.
        approve_with_edits: bool,
    }
);
