//! Conversation messages: the seven roles, tool calls, and what every message carries.

use crate::content::{Content, upgrade_legacy_parts};
use crate::lenient::{self, LenientMember};
use crate::metadata::Metadata;
use crate::serde_util::{nn, nn_object, string_literal, wire_struct};
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The seven message roles of AG-UI 1.0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions from the application developer.
    Developer,
    /// System prompt.
    System,
    /// The agent.
    Assistant,
    /// The person.
    User,
    /// A tool's result.
    Tool,
    /// A structured activity (plan, progress, ...), never sent back to the agent.
    Activity,
    /// The agent's visible reasoning.
    Reasoning,
}

impl Role {
    /// The wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Developer => "developer",
            Role::System => "system",
            Role::Assistant => "assistant",
            Role::User => "user",
            Role::Tool => "tool",
            Role::Activity => "activity",
            Role::Reasoning => "reasoning",
        }
    }
}

/// The wire strings of the seven roles.
pub(crate) const ROLES: &[&str] = &[
    "developer",
    "system",
    "assistant",
    "user",
    "tool",
    "activity",
    "reasoning",
];

/// A message of the conversation, discriminated on the wire by `role`.
///
/// ```
/// use aguikit_core::Message;
/// let m: Message = serde_json::from_str(r#"{"id":"u1","role":"user","content":"Hi"}"#).unwrap();
/// assert_eq!(m.id(), "u1");
/// assert_eq!(serde_json::to_string(&m).unwrap(), r#"{"role":"user","id":"u1","content":"Hi"}"#);
/// let a = Message::assistant("a1", "Hello!");
/// assert_eq!(a.text(), Some("Hello!"));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum Message {
    /// Developer instructions.
    Developer(DeveloperMessage),
    /// System prompt.
    System(SystemMessage),
    /// Agent turn (text and/or tool calls).
    Assistant(AssistantMessage),
    /// User turn.
    User(UserMessage),
    /// Tool result.
    Tool(ToolMessage),
    /// Activity (structured progress).
    Activity(ActivityMessage),
    /// Reasoning.
    Reasoning(ReasoningMessage),
}

/// Declares a message kind: its id, the members of its role, then the members every message
/// carries (`encryptedValue` unless the kind is declared `without encrypted_value`,
/// `metadata`, `subagentRunId`). Members are written as in `wire_struct!`.
macro_rules! message_struct {
    ($(#[$m:meta])* $name:ident { $($body:tt)* }) => {
        message_struct!(@struct $(#[$m])* $name { $($body)*
            /// Provider's opaque artefact.
            pub encrypted_value: Option<String> ["nn"],
        });
    };
    ($(#[$m:meta])* $name:ident without encrypted_value { $($body:tt)* }) => {
        message_struct!(@struct $(#[$m])* $name { $($body)* });
    };
    (@struct $(#[$m:meta])* $name:ident { $($body:tt)* }) => {
        wire_struct! {
            $(#[$m])*
            #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
            pub struct $name {
                /// Message id.
                pub id: String,
                $($body)*
                /// Accumulated metadata.
                pub metadata: Option<Metadata> ["nn_object"],
                /// The subagent invocation that produced it.
                pub subagent_run_id: Option<String> ["nn"],
            }
        }
    };
}

/// Declares a message kind whose content is plain text and which may name its author.
macro_rules! text_message {
    ($(#[$m:meta])* $name:ident) => {
        message_struct! {
            $(#[$m])*
            // Its own wording of `encryptedValue`, as published in the JSON Schemas.
            $name without encrypted_value {
                /// The text.
                pub content: String,
                /// Author display name.
                pub name: Option<String> ["nn"],
                /// Provider's opaque artefact to return on later turns.
                pub encrypted_value: Option<String> ["nn"],
            }
        }
    };
}

text_message!(
    /// Instructions from the application developer.
    DeveloperMessage
);
text_message!(
    /// A system prompt.
    SystemMessage
);

message_struct! {
    /// An agent turn: text, tool calls, or both.
    AssistantMessage {
        /// The text (absent for a tool-calls-only turn).
        pub content: Option<String> ["nn"],
        /// Author display name.
        pub name: Option<String> ["nn"],
        /// Tool calls made in this turn.
        pub tool_calls: Option<Vec<ToolCall>> ["nn"],
    }
}

message_struct! {
    /// A user turn.
    UserMessage {
        /// Text or parts.
        pub content: Content,
        /// Author display name.
        pub name: Option<String> ["nn"],
    }
}

message_struct! {
    /// A tool's result.
    ToolMessage {
        /// Text or parts.
        pub content: Content,
        /// The call answered.
        pub tool_call_id: String,
        /// Failure reason, alongside any partial content.
        pub error: Option<String> ["nn"],
    }
}

message_struct! {
    /// A structured activity (plan, progress, search results...).
    ActivityMessage without encrypted_value {
        /// Open vocabulary (e.g. `"PLAN"`).
        pub activity_type: String,
        /// The activity's content (a JSON object).
        pub content: Map<String, Value>,
    }
}

message_struct! {
    /// Visible reasoning.
    ReasoningMessage {
        /// The reasoning text.
        pub content: String,
    }
}

string_literal!(
    /// The only tool-call kind, `"function"`.
    FunctionKind = "function"
);

wire_struct! {
    /// A tool call inside an assistant message.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct ToolCall {
        /// Call id, answered by a tool message with this `toolCallId`.
        pub id: String,
        /// Always `"function"`.
        #[serde(rename = "type")]
        pub kind: FunctionKind,
        /// Name and argument text.
        pub function: FunctionCall,
        /// Provider's opaque artefact.
        pub encrypted_value: Option<String> ["nn"],
        /// Per-call metadata.
        pub metadata: Option<Metadata> ["nn_object"],
    }
}

impl ToolCall {
    /// A call with a name and its argument text.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        ToolCall {
            id: id.into(),
            kind: FunctionKind,
            function: FunctionCall {
                name: name.into(),
                arguments: arguments.into(),
            },
            encrypted_value: None,
            metadata: None,
        }
    }
}

/// The function a tool call invokes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FunctionCall {
    /// Tool name.
    pub name: String,
    /// Argument text exactly as produced (conventionally JSON, never parsed).
    pub arguments: String,
}

/// Evaluates an expression on the struct inside a message, whatever its role.
macro_rules! each_kind {
    ($msg:expr, $m:ident => $e:expr) => {
        match $msg {
            Message::Developer($m) => $e,
            Message::System($m) => $e,
            Message::Assistant($m) => $e,
            Message::User($m) => $e,
            Message::Tool($m) => $e,
            Message::Activity($m) => $e,
            Message::Reasoning($m) => $e,
        }
    };
}

impl Message {
    /// A user message with text content.
    pub fn user(id: impl Into<String>, content: impl Into<Content>) -> Self {
        Message::User(UserMessage {
            id: id.into(),
            content: content.into(),
            ..Default::default()
        })
    }

    /// An assistant message with text content.
    pub fn assistant(id: impl Into<String>, content: impl Into<String>) -> Self {
        Message::Assistant(AssistantMessage {
            id: id.into(),
            content: Some(content.into()),
            ..Default::default()
        })
    }

    /// A system message.
    pub fn system(id: impl Into<String>, content: impl Into<String>) -> Self {
        Message::System(SystemMessage {
            id: id.into(),
            content: content.into(),
            ..Default::default()
        })
    }

    /// A developer message.
    pub fn developer(id: impl Into<String>, content: impl Into<String>) -> Self {
        Message::Developer(DeveloperMessage {
            id: id.into(),
            content: content.into(),
            ..Default::default()
        })
    }

    /// A tool message answering `tool_call_id`.
    pub fn tool(
        id: impl Into<String>,
        tool_call_id: impl Into<String>,
        content: impl Into<Content>,
    ) -> Self {
        Message::Tool(ToolMessage {
            id: id.into(),
            tool_call_id: tool_call_id.into(),
            content: content.into(),
            ..Default::default()
        })
    }

    /// The message id.
    pub fn id(&self) -> &str {
        each_kind!(self, m => &m.id)
    }

    /// The role.
    pub fn role(&self) -> Role {
        match self {
            Message::Developer(_) => Role::Developer,
            Message::System(_) => Role::System,
            Message::Assistant(_) => Role::Assistant,
            Message::User(_) => Role::User,
            Message::Tool(_) => Role::Tool,
            Message::Activity(_) => Role::Activity,
            Message::Reasoning(_) => Role::Reasoning,
        }
    }

    /// The text content for string-content roles (`None` for parts, activities and
    /// assistant turns without text).
    pub fn text(&self) -> Option<&str> {
        match self {
            Message::Developer(m) => Some(&m.content),
            Message::System(m) => Some(&m.content),
            Message::Assistant(m) => m.content.as_deref(),
            Message::User(UserMessage {
                content: Content::Text(t),
                ..
            })
            | Message::Tool(ToolMessage {
                content: Content::Text(t),
                ..
            }) => Some(t),
            Message::Reasoning(m) => Some(&m.content),
            _ => None,
        }
    }

    /// The metadata, if any.
    pub fn metadata(&self) -> Option<&Metadata> {
        each_kind!(self, m => m.metadata.as_ref())
    }

    /// Mutable access to the metadata slot.
    pub fn metadata_mut(&mut self) -> &mut Option<Metadata> {
        each_kind!(self, m => &mut m.metadata)
    }

    /// The subagent invocation that produced the message, if any.
    pub fn subagent_run_id(&self) -> Option<&str> {
        self.subagent_run_id_slot_ref().as_deref()
    }

    fn subagent_run_id_slot_ref(&self) -> &Option<String> {
        each_kind!(self, m => &m.subagent_run_id)
    }

    /// Mutable access to the subagent attribution.
    pub fn subagent_run_id_mut(&mut self) -> &mut Option<String> {
        each_kind!(self, m => &mut m.subagent_run_id)
    }

    /// Mutable access to `encryptedValue` (`None` for activity messages, which have none).
    pub fn encrypted_value_mut(&mut self) -> Option<&mut Option<String>> {
        match self {
            Message::Developer(m) => Some(&mut m.encrypted_value),
            Message::System(m) => Some(&mut m.encrypted_value),
            Message::Assistant(m) => Some(&mut m.encrypted_value),
            Message::User(m) => Some(&mut m.encrypted_value),
            Message::Tool(m) => Some(&mut m.encrypted_value),
            Message::Activity(_) => None,
            Message::Reasoning(m) => Some(&mut m.encrypted_value),
        }
    }
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut v = Value::deserialize(d)?;
        <Message as LenientMember>::upgrade(&mut v);
        message_from_value(v).map_err(de::Error::custom)
    }
}

fn message_from_value(v: Value) -> Result<Message, serde_json::Error> {
    use serde::de::Error;
    let role = v
        .get("role")
        .and_then(Value::as_str)
        .ok_or_else(|| serde_json::Error::custom("missing field `role`"))?;
    Ok(match role {
        "developer" => Message::Developer(serde_json::from_value(v)?),
        "system" => Message::System(serde_json::from_value(v)?),
        "assistant" => Message::Assistant(serde_json::from_value(v)?),
        "user" => Message::User(serde_json::from_value(v)?),
        "tool" => Message::Tool(serde_json::from_value(v)?),
        "activity" => Message::Activity(serde_json::from_value(v)?),
        "reasoning" => Message::Reasoning(serde_json::from_value(v)?),
        other => {
            return Err(serde_json::Error::custom(format_args!(
                "unknown role {other:?}"
            )));
        }
    })
}

impl LenientMember for Message {
    const WHAT: &'static str = "message";

    fn from_value(v: Value) -> Result<Self, serde_json::Error> {
        message_from_value(v)
    }

    fn recognised(v: &Value) -> Result<(), String> {
        lenient::check_tag(v, "role", ROLES)
    }

    fn upgrade(v: &mut Value) {
        // A message's `subagentRunId: null` is fatal on the wire (EN4/V47); only the client's
        // own outgoing input strips it, before sending.
        if let Some(content) = v.as_object_mut().and_then(|o| o.get_mut("content")) {
            upgrade_legacy_parts(content);
        }
    }
}
