//! [`AgentCapabilities`]: a typed description of what an agent supports. Every field at every
//! level is optional; an omitted field means "not declared", not "unsupported".

use crate::input::Tool;
use crate::metadata::Metadata;
use crate::serde_util::{count, nn, nn_object, wire_struct};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A capability group whose members are all optional (absent = not declared, `null` rejected).
macro_rules! caps {
    ($(#[$m:meta])* $name:ident { $($(#[$fm:meta])* $field:ident : $ty:ty),* $(,)? }) => {
        wire_struct! {
            $(#[$m])*
            #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
            pub struct $name {
                $($(#[$fm])* pub $field: Option<$ty> ["nn"],)*
            }
        }
    };
}

wire_struct! {
    /// Everything an agent may declare about itself.
    ///
    /// ```
    /// use aguikit_core::AgentCapabilities;
    /// let c: AgentCapabilities = serde_json::from_str(r#"{"transport":{"streaming":true}}"#).unwrap();
    /// assert_eq!(c.transport.unwrap().streaming, Some(true));
    /// ```
    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
    pub struct AgentCapabilities {
        /// Who the agent is.
        pub identity: Option<IdentityCapabilities> ["nn"],
        /// Transport features.
        pub transport: Option<TransportCapabilities> ["nn"],
        /// Tool support.
        pub tools: Option<ToolsCapabilities> ["nn"],
        /// Output features.
        pub output: Option<OutputCapabilities> ["nn"],
        /// State features.
        pub state: Option<StateCapabilities> ["nn"],
        /// Multi-agent features.
        pub multi_agent: Option<MultiAgentCapabilities> ["nn"],
        /// Reasoning features.
        pub reasoning: Option<ReasoningCapabilities> ["nn"],
        /// Multimodal input and output.
        pub multimodal: Option<MultimodalCapabilities> ["nn"],
        /// Execution limits.
        pub execution: Option<ExecutionCapabilities> ["nn"],
        /// Human-in-the-loop features.
        pub human_in_the_loop: Option<HumanInTheLoopCapabilities> ["nn"],
        /// Anything else (open by key).
        pub custom: Option<Map<String, Value>> ["nn_object"],
    }
}

wire_struct! {
    /// Who the agent is.
    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
    pub struct IdentityCapabilities {
        /// Display name.
        pub name: Option<String> ["nn"],
        /// Framework or kind (e.g. `"langgraph"`).
        #[serde(rename = "type")]
        pub kind: Option<String> ["nn"],
        /// Description.
        pub description: Option<String> ["nn"],
        /// Version.
        pub version: Option<String> ["nn"],
        /// Provider.
        pub provider: Option<String> ["nn"],
        /// Documentation URL.
        pub documentation_url: Option<String> ["nn"],
        /// Metadata.
        pub metadata: Option<Metadata> ["nn_object"],
    }
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

wire_struct! {
    /// A subagent an agent may start.
    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
    pub struct SubagentInfo {
        /// Reusable name.
        pub name: String,
        /// Description.
        pub description: Option<String> ["nn"],
    }
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

wire_struct! {
    /// Multimodal input and output.
    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
    pub struct MultimodalCapabilities {
        /// Accepted inputs.
        pub input: Option<MultimodalInput> ["nn"],
        /// Produced outputs.
        pub output: Option<MultimodalOutput> ["nn"],
    }
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

wire_struct! {
    /// Execution features and limits.
    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
    pub struct ExecutionCapabilities {
        /// Runs code.
        pub code_execution: Option<bool> ["nn"],
        /// In a sandbox.
        pub sandboxed: Option<bool> ["nn"],
        /// Iteration limit.
        pub max_iterations: Option<u64> ["count"],
        /// Time limit in milliseconds.
        pub max_execution_time: Option<u64> ["count"],
    }
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
