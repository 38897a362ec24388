//! The request body of a run ([`RunAgentInput`]), also echoed as `RUN_STARTED.input`, and
//! the values it carries: tools, context and resume entries.

use crate::lenient;
use crate::message::Message;
use crate::metadata::Metadata;
use crate::serde_util::{legacy_null_value, nn, nn_object, wire_struct};
use serde::{Deserialize, Serialize};
use serde_json::Value;

wire_struct! {
    /// A request to run an agent.
    ///
    /// ```
    /// use aguikit_core::{Message, RunAgentInput};
    /// let input = RunAgentInput::new("thread-1", "run-1").with_message(Message::user("u1", "Hi"));
    /// let json = serde_json::to_string(&input).unwrap();
    /// assert_eq!(json, r#"{"threadId":"thread-1","runId":"run-1","messages":[{"role":"user","id":"u1","content":"Hi"}]}"#);
    /// let back: RunAgentInput = serde_json::from_str(&json).unwrap();
    /// assert_eq!(back, input);
    /// ```
    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
    pub struct RunAgentInput {
        /// Conversation id.
        pub thread_id: String,
        /// This run's id.
        pub run_id: String,
        /// The consumer's protocol version (e.g. `"1.0"`).
        pub protocol_version: Option<String> ["nn"],
        /// The run this one continues or branches from.
        pub parent_run_id: Option<String> ["nn"],
        /// The state the agent starts from (`null` reads as absent).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub state: Option<Value>,
        /// The conversation so far (messages with an unknown role are dropped).
        #[serde(deserialize_with = "lenient::vec")]
        pub messages: Vec<Message>,
        /// Front-end tools the agent may call (absent = none).
        pub tools: Option<Vec<Tool>> ["nn"],
        /// Ambient context (absent = none).
        pub context: Option<Vec<Context>> ["nn"],
        /// Application values passed through untouched.
        pub forwarded_props: Option<Value> ["legacy_null_value"],
        /// Answers to the interrupts that ended the previous run.
        pub resume: Option<Vec<ResumeEntry>> ["nn"],
    }
}

impl RunAgentInput {
    /// An input with ids and no messages.
    pub fn new(thread_id: impl Into<String>, run_id: impl Into<String>) -> Self {
        RunAgentInput {
            thread_id: thread_id.into(),
            run_id: run_id.into(),
            ..Default::default()
        }
    }

    /// Appends a message.
    pub fn with_message(mut self, m: Message) -> Self {
        self.messages.push(m);
        self
    }

    /// Sets the state.
    pub fn with_state(mut self, state: Value) -> Self {
        self.state = Some(state);
        self
    }

    /// Adds a tool.
    pub fn with_tool(mut self, tool: Tool) -> Self {
        self.tools.get_or_insert_with(Vec::new).push(tool);
        self
    }

    /// Adds resume entries.
    pub fn with_resume(mut self, entries: Vec<ResumeEntry>) -> Self {
        self.resume = Some(entries);
        self
    }

    /// The tools (empty when absent).
    pub fn tools(&self) -> &[Tool] {
        self.tools.as_deref().unwrap_or_default()
    }

    /// The context entries (empty when absent).
    pub fn context(&self) -> &[Context] {
        self.context.as_deref().unwrap_or_default()
    }

    /// The resume entries (empty when absent).
    pub fn resume(&self) -> &[ResumeEntry] {
        self.resume.as_deref().unwrap_or_default()
    }
}

wire_struct! {
    /// A tool the agent may call.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Tool {
        /// Tool name.
        pub name: String,
        /// What it does (required).
        pub description: String,
        /// JSON Schema of the arguments (opaque; `null` reads as absent).
        pub parameters: Option<Value> ["legacy_null_value"],
        /// Metadata.
        pub metadata: Option<Metadata> ["nn_object"],
    }
}

impl Tool {
    /// A tool with a name, a description and a parameters schema.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        Tool {
            name: name.into(),
            description: description.into(),
            parameters: Some(parameters),
            metadata: None,
        }
    }
}

/// A named piece of ambient information for the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Context {
    /// What it is.
    pub description: String,
    /// The value.
    pub value: String,
}

/// Whether an interrupt was answered or withdrawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum ResumeStatus {
    /// Answered; `payload` holds the answer.
    Resolved,
    /// Withdrawn.
    Cancelled,
}

wire_struct! {
    /// An answer to one interrupt, sent on the run that continues from it.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct ResumeEntry {
        /// The interrupt answered.
        pub interrupt_id: String,
        /// Resolved or cancelled.
        pub status: ResumeStatus,
        /// The answer (`null` reads as absent).
        pub payload: Option<Value> ["legacy_null_value"],
        /// Envelope data (signatures, routing), not the answer.
        pub metadata: Option<Metadata> ["nn_object"],
    }
}

impl ResumeEntry {
    /// Resolves an interrupt with a payload.
    pub fn resolved(interrupt_id: impl Into<String>, payload: Value) -> Self {
        ResumeEntry {
            interrupt_id: interrupt_id.into(),
            status: ResumeStatus::Resolved,
            payload: Some(payload),
            metadata: None,
        }
    }

    /// Cancels an interrupt.
    pub fn cancelled(interrupt_id: impl Into<String>) -> Self {
        ResumeEntry {
            interrupt_id: interrupt_id.into(),
            status: ResumeStatus::Cancelled,
            payload: None,
            metadata: None,
        }
    }
}
