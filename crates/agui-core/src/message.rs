//! Conversation messages: the seven roles, tool calls, and what every message carries.

use crate::content::{Content, upgrade_legacy_parts};
use crate::lenient::{self, LenientMember};
use crate::metadata::Metadata;
use crate::serde_util::{nn, nn_object, string_literal};
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

const ROLES: &[&str] = &[
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
/// use agui_core::Message;
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

macro_rules! text_message {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
        #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
        #[serde(rename_all = "camelCase")]
        pub struct $name {
            /// Message id.
            pub id: String,
            /// The text.
            pub content: String,
            /// Author display name.
            #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "nn")]
            pub name: Option<String>,
            /// Provider's opaque artefact to return on later turns.
            #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "nn")]
            pub encrypted_value: Option<String>,
            /// Accumulated metadata.
            #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "nn_object")]
            pub metadata: Option<Metadata>,
            /// The subagent invocation that produced it.
            #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "nn")]
            pub subagent_run_id: Option<String>,
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

/// An agent turn: text, tool calls, or both.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    /// Message id.
    pub id: String,
    /// The text (absent for a tool-calls-only turn).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub content: Option<String>,
    /// Author display name.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub name: Option<String>,
    /// Tool calls made in this turn.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub tool_calls: Option<Vec<ToolCall>>,
    /// Provider's opaque artefact.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub encrypted_value: Option<String>,
    /// Accumulated metadata.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
    /// The subagent invocation that produced it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
}

/// A user turn.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct UserMessage {
    /// Message id.
    pub id: String,
    /// Text or parts.
    pub content: Content,
    /// Author display name.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub name: Option<String>,
    /// Provider's opaque artefact.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub encrypted_value: Option<String>,
    /// Accumulated metadata.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
    /// The subagent invocation that produced it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
}

/// A tool's result.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ToolMessage {
    /// Message id.
    pub id: String,
    /// Text or parts.
    pub content: Content,
    /// The call answered.
    pub tool_call_id: String,
    /// Failure reason, alongside any partial content.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub error: Option<String>,
    /// Provider's opaque artefact.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub encrypted_value: Option<String>,
    /// Accumulated metadata.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
    /// The subagent invocation that produced it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
}

/// A structured activity (plan, progress, search results...).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ActivityMessage {
    /// Message id.
    pub id: String,
    /// Open vocabulary (e.g. `"PLAN"`).
    pub activity_type: String,
    /// The activity's content (a JSON object).
    pub content: Map<String, Value>,
    /// Accumulated metadata.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
    /// The subagent invocation that produced it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
}

/// Visible reasoning.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ReasoningMessage {
    /// Message id.
    pub id: String,
    /// The reasoning text.
    pub content: String,
    /// Provider's opaque artefact.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub encrypted_value: Option<String>,
    /// Accumulated metadata.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
    /// The subagent invocation that produced it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub subagent_run_id: Option<String>,
}

string_literal!(
    /// The only tool-call kind, `"function"`.
    FunctionKind = "function"
);

/// A tool call inside an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// Call id, answered by a tool message with this `toolCallId`.
    pub id: String,
    /// Always `"function"`.
    #[serde(rename = "type")]
    pub kind: FunctionKind,
    /// Name and argument text.
    pub function: FunctionCall,
    /// Provider's opaque artefact.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn"
    )]
    pub encrypted_value: Option<String>,
    /// Per-call metadata.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nn_object"
    )]
    pub metadata: Option<Metadata>,
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
        match self {
            Message::Developer(m) => &m.id,
            Message::System(m) => &m.id,
            Message::Assistant(m) => &m.id,
            Message::User(m) => &m.id,
            Message::Tool(m) => &m.id,
            Message::Activity(m) => &m.id,
            Message::Reasoning(m) => &m.id,
        }
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
        match self {
            Message::Developer(m) => m.metadata.as_ref(),
            Message::System(m) => m.metadata.as_ref(),
            Message::Assistant(m) => m.metadata.as_ref(),
            Message::User(m) => m.metadata.as_ref(),
            Message::Tool(m) => m.metadata.as_ref(),
            Message::Activity(m) => m.metadata.as_ref(),
            Message::Reasoning(m) => m.metadata.as_ref(),
        }
    }

    /// Mutable access to the metadata slot.
    pub fn metadata_mut(&mut self) -> &mut Option<Metadata> {
        match self {
            Message::Developer(m) => &mut m.metadata,
            Message::System(m) => &mut m.metadata,
            Message::Assistant(m) => &mut m.metadata,
            Message::User(m) => &mut m.metadata,
            Message::Tool(m) => &mut m.metadata,
            Message::Activity(m) => &mut m.metadata,
            Message::Reasoning(m) => &mut m.metadata,
        }
    }

    /// The subagent invocation that produced the message, if any.
    pub fn subagent_run_id(&self) -> Option<&str> {
        self.subagent_run_id_slot_ref().as_deref()
    }

    fn subagent_run_id_slot_ref(&self) -> &Option<String> {
        match self {
            Message::Developer(m) => &m.subagent_run_id,
            Message::System(m) => &m.subagent_run_id,
            Message::Assistant(m) => &m.subagent_run_id,
            Message::User(m) => &m.subagent_run_id,
            Message::Tool(m) => &m.subagent_run_id,
            Message::Activity(m) => &m.subagent_run_id,
            Message::Reasoning(m) => &m.subagent_run_id,
        }
    }

    /// Mutable access to the subagent attribution.
    pub fn subagent_run_id_mut(&mut self) -> &mut Option<String> {
        match self {
            Message::Developer(m) => &mut m.subagent_run_id,
            Message::System(m) => &mut m.subagent_run_id,
            Message::Assistant(m) => &mut m.subagent_run_id,
            Message::User(m) => &mut m.subagent_run_id,
            Message::Tool(m) => &mut m.subagent_run_id,
            Message::Activity(m) => &mut m.subagent_run_id,
            Message::Reasoning(m) => &mut m.subagent_run_id,
        }
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
