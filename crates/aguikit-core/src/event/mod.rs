//! Events: the 31 event types of AG-UI 1.0, the [`Event`] union, and fast decoding.
//!
//! ```
//! use aguikit_core::event::{Event, TextMessageContent};
//! let e = Event::from_json_str(r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hi"}"#).unwrap();
//! assert_eq!(e, TextMessageContent::new("m1", "Hi").into());
//! assert_eq!(e.to_json_string(), r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hi"}"#);
//! ```

use crate::metadata::Metadata;
use serde_json::Value;

mod activity;
mod decode;
mod fast;
#[cfg(any(test, fuzzing))]
pub(crate) use {decode::decode_serde, fast::decode as fast_decode};
mod json;
mod lifecycle;
mod macros;
mod reasoning;
mod roles;
mod special;
mod state;
mod subagent;
mod text;
mod tool;

pub(crate) use fast::state_snapshot_text;
pub(crate) use json::write_value;

/// The document whose JSON text [`state_snapshot_text`] wrote. The fast path read that
/// document, so it reads the text back; serde_json is the fallback, and `null` (never
/// expected) the answer to text neither reads.
pub(crate) fn value_of_text(json: &[u8]) -> Value {
    std::str::from_utf8(json)
        .ok()
        .and_then(fast::parse_value)
        .or_else(|| serde_json::from_slice(json).ok())
        .unwrap_or_else(|| {
            debug_assert!(false, "a document's text does not read back");
            Value::Null
        })
}

pub use activity::{ActivityDelta, ActivitySnapshot};
pub use decode::DecodeError;
pub use fast::ContentParts;
pub use lifecycle::{RunError, RunFinished, RunStarted, StepFinished, StepStarted};
pub use reasoning::{
    ReasoningEncryptedValue, ReasoningEnd, ReasoningMessageChunk, ReasoningMessageContent,
    ReasoningMessageEnd, ReasoningMessageStart, ReasoningStart,
};
pub use roles::{EncryptedValueSubtype, ReasoningRole, TextMessageRole, ToolRole};
pub use special::{Custom, Raw};
pub use state::{MessagesSnapshot, StateDelta, StateSnapshot};
pub use subagent::{SubagentError, SubagentFinished, SubagentStarted};
pub use text::{TextMessageChunk, TextMessageContent, TextMessageEnd, TextMessageStart};
pub use tool::{ToolCallArgs, ToolCallChunk, ToolCallEnd, ToolCallResult, ToolCallStart};

use serde::Serialize;
use serde_json::Map;

/// What every event struct offers generically, generated from its field table.
pub(crate) trait EventFields {
    /// The event's own fields (not the base ones), by their Rust names, in table order.
    #[allow(dead_code)] // read by the protobuf drift test
    const FIELDS: &'static [&'static str];
    /// The `subagentRunId` (a tag or, for the subagent lifecycle events, an identity).
    fn subagent(&self) -> Option<&str>;
    /// The optional `subagentRunId` tag of an attributable event.
    fn subagent_tag_mut(&mut self) -> Option<&mut Option<String>>;
}

/// The two shapes of a `subagentRunId` field.
pub(crate) trait SubagentField {
    fn get(&self) -> Option<&str>;
    fn tag_mut(&mut self) -> Option<&mut Option<String>>;
}

/// The identity of a subagent lifecycle event.
impl SubagentField for String {
    #[inline]
    fn get(&self) -> Option<&str> {
        Some(self)
    }
    #[inline]
    fn tag_mut(&mut self) -> Option<&mut Option<String>> {
        None
    }
}

/// The attribution tag of any other event.
impl SubagentField for Option<String> {
    #[inline]
    fn get(&self) -> Option<&str> {
        self.as_deref()
    }
    #[inline]
    fn tag_mut(&mut self) -> Option<&mut Option<String>> {
        Some(self)
    }
}

/// The central list of the 31 event types: variant, struct and wire `type`. Everything
/// that dispatches on the type is generated from it.
macro_rules! events {
    ($( $variant:ident ( $ty:ident ) = $tag:literal ),* $(,)?) => {
        /// The 31 event types of AG-UI 1.0.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum EventType {
            $(
                #[doc = concat!("`", $tag, "`")]
                $variant,
            )*
        }

        impl EventType {
            /// Every event type, in declaration order.
            pub const ALL: &'static [EventType] = &[$(EventType::$variant),*];

            /// The wire `type` string.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(EventType::$variant => $tag,)*
                }
            }

            /// Parses a wire `type` string (exact, upper snake case).
            pub fn from_wire(s: &str) -> Option<EventType> {
                match s {
                    $($tag => Some(EventType::$variant),)*
                    _ => None,
                }
            }
        }

        /// One AG-UI event.
        ///
        /// Serializes to the exact wire JSON (camelCase, `type` first, absent optionals
        /// omitted). Decodes with [`Event::from_json_slice`], which reads `type` first and
        /// deserializes straight into the matching struct. An object whose `type` is not one
        /// of the 31 decodes as [`Event::Unknown`] (the reference client drops those with a
        /// warning; other operations pass them through).
        ///
        /// ```
        /// use aguikit_core::{Event, EventType};
        /// use aguikit_core::event::TextMessageContent;
        ///
        /// let event: Event = TextMessageContent::new("m1", "Hello").into();
        /// let json = event.to_json_string();
        /// assert_eq!(json, r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hello"}"#);
        /// assert_eq!(Event::from_json_slice(json.as_bytes())?, event);
        /// assert_eq!(event.event_type(), Some(EventType::TextMessageContent));
        ///
        /// // A malformed event is an error naming the field.
        /// let error = Event::from_json_slice(br#"{"type":"TEXT_MESSAGE_CONTENT","messageId":1}"#);
        /// assert!(error.unwrap_err().to_string().contains("messageId"));
        /// # Ok::<(), aguikit_core::event::DecodeError>(())
        /// ```
        #[derive(Debug, Clone, PartialEq, Serialize)]
        #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
        #[serde(tag = "type")]
        #[non_exhaustive]
        pub enum Event {
            $(
                #[doc = concat!("`", $tag, "`")]
                #[serde(rename = $tag)]
                $variant($ty),
            )*
            /// An object whose `type` is not an AG-UI 1.0 event type (including the retired
            /// `THINKING_*` events and objects with no `type`), kept verbatim.
            #[serde(untagged)]
            Unknown(UnknownEvent),
        }

        impl Event {
            /// The event's type, or `None` for [`Event::Unknown`].
            pub fn event_type(&self) -> Option<EventType> {
                match self {
                    $(Event::$variant(_) => Some(EventType::$variant),)*
                    Event::Unknown(_) => None,
                }
            }

            /// Whether this is one of the three `*_CHUNK` events the expander rewrites.
            #[inline]
            pub(crate) fn is_chunk(&self) -> bool {
                matches!(
                    self,
                    Event::TextMessageChunk(_) | Event::ToolCallChunk(_) | Event::ReasoningMessageChunk(_)
                )
            }

            /// The wire `type` string (for unknown events, whatever they carried, or `""`).
            pub fn type_str(&self) -> &str {
                match self {
                    $(Event::$variant(_) => $tag,)*
                    Event::Unknown(u) => u.type_str(),
                }
            }

            /// Appends the event's compact wire JSON to `out`: the bytes
            /// `serde_json::to_writer(out, &event)` writes, from the event's own writer
            /// (keys are constants; plain strings are copied without escaping).
            ///
            /// ```
            /// use aguikit_core::event::{Event, TextMessageContent};
            /// let e: Event = TextMessageContent::new("m1", "Hi").into();
            /// let mut out = Vec::new();
            /// e.write_json(&mut out);
            /// assert_eq!(out, serde_json::to_vec(&e).unwrap());
            /// ```
            pub fn write_json(&self, out: &mut Vec<u8>) {
                use json::WriteFields;
                match self {
                    $(
                        Event::$variant(e) => {
                            out.extend_from_slice(concat!("{\"type\":\"", $tag, "\"").as_bytes());
                            e.write_fields(out);
                            out.push(b'}');
                        }
                    )*
                    Event::Unknown(u) => json::write_serde(out, u),
                }
            }

            /// The event's `metadata`.
            pub fn metadata(&self) -> Option<&Metadata> {
                match self {
                    $(Event::$variant(e) => e.metadata.as_deref(),)*
                    Event::Unknown(u) => u.0.get("metadata").and_then(Value::as_object),
                }
            }

            /// The event's `timestamp`.
            pub fn timestamp(&self) -> Option<i64> {
                match self {
                    $(Event::$variant(e) => e.timestamp,)*
                    Event::Unknown(u) => u.0.get("timestamp").and_then(Value::as_i64),
                }
            }

            /// The event's `metadata` slot, to set or edit; `None` for [`Event::Unknown`]
            /// (whose members are in its map).
            pub fn metadata_mut(&mut self) -> Option<&mut Option<Box<Metadata>>> {
                match self {
                    $(Event::$variant(e) => Some(&mut e.metadata),)*
                    Event::Unknown(_) => None,
                }
            }

            /// The event's `timestamp` slot, to set or edit; `None` for [`Event::Unknown`].
            pub fn timestamp_mut(&mut self) -> Option<&mut Option<i64>> {
                match self {
                    $(Event::$variant(e) => Some(&mut e.timestamp),)*
                    Event::Unknown(_) => None,
                }
            }

            /// The event's `subagentRunId` (for the three subagent lifecycle events, the
            /// invocation they identify); `None` for run-scoped events and unknown ones.
            pub fn subagent_run_id(&self) -> Option<&str> {
                match self {
                    $(Event::$variant(e) => e.subagent(),)*
                    Event::Unknown(_) => None,
                }
            }

            /// The `subagentRunId` slot of an event that a subagent can produce (to tag it
            /// with its invocation); `None` for run-scoped events, `MESSAGES_SNAPSHOT`, the
            /// subagent lifecycle events (whose id is an identity, not a tag) and unknown
            /// events.
            pub fn subagent_run_id_mut(&mut self) -> Option<&mut Option<String>> {
                match self {
                    $(Event::$variant(e) => e.subagent_tag_mut(),)*
                    Event::Unknown(_) => None,
                }
            }
        }

        pub(crate) fn decode_text(t: EventType, text: &str) -> Result<Event, serde_json::Error> {
            match t {
                $(EventType::$variant => serde_json::from_str::<$ty>(text).map(Event::$variant),)*
            }
        }

        /// Reads an event of type `et` on the fast path (and checks that nothing but
        /// whitespace follows it); `fallback()` for the types it does not read and whatever
        /// it does not accept.
        #[inline]
        pub(crate) fn build_fast<E>(
            et: EventType,
            r: &mut fast::Reader<'_>,
            fallback: impl FnOnce() -> Result<Event, E>,
        ) -> Result<Event, E> {
            use fast::FastEvent;
            match et {
                $(
                    EventType::$variant if <$ty as FastEvent>::FAST => match <$ty as FastEvent>::build(r) {
                        Some(event) if r.at_end() => Ok(Event::$variant(event)),
                        _ => fallback(),
                    },
                )*
                _ => fallback(),
            }
        }

        /// Whether the fast path reads events of type `t`.
        #[cfg(test)]
        pub(crate) fn is_fast(t: EventType) -> bool {
            use fast::FastEvent;
            match t {
                $(EventType::$variant => <$ty as FastEvent>::FAST,)*
            }
        }

        pub(crate) fn decode_slice(t: EventType, bytes: &[u8]) -> Result<Event, serde_json::Error> {
            match t {
                $(EventType::$variant => serde_json::from_slice::<$ty>(bytes).map(Event::$variant),)*
            }
        }

        pub(crate) fn decode_value(t: EventType, v: Value) -> Result<Event, serde_json::Error> {
            match t {
                $(EventType::$variant => serde_json::from_value::<$ty>(v).map(Event::$variant),)*
            }
        }

        pub(crate) fn decode_slice_traced(t: EventType, bytes: &[u8]) -> (String, String) {
            match t {
                $(EventType::$variant => decode::traced::<$ty>(bytes),)*
            }
        }

        $(
            impl From<$ty> for Event {
                fn from(e: $ty) -> Event {
                    Event::$variant(e)
                }
            }
        )*
    };
}

events! {
    RunStarted(RunStarted) = "RUN_STARTED",
    RunFinished(RunFinished) = "RUN_FINISHED",
    RunError(RunError) = "RUN_ERROR",
    StepStarted(StepStarted) = "STEP_STARTED",
    StepFinished(StepFinished) = "STEP_FINISHED",
    TextMessageStart(TextMessageStart) = "TEXT_MESSAGE_START",
    TextMessageContent(TextMessageContent) = "TEXT_MESSAGE_CONTENT",
    TextMessageEnd(TextMessageEnd) = "TEXT_MESSAGE_END",
    TextMessageChunk(TextMessageChunk) = "TEXT_MESSAGE_CHUNK",
    ToolCallStart(ToolCallStart) = "TOOL_CALL_START",
    ToolCallArgs(ToolCallArgs) = "TOOL_CALL_ARGS",
    ToolCallEnd(ToolCallEnd) = "TOOL_CALL_END",
    ToolCallChunk(ToolCallChunk) = "TOOL_CALL_CHUNK",
    ToolCallResult(ToolCallResult) = "TOOL_CALL_RESULT",
    StateSnapshot(StateSnapshot) = "STATE_SNAPSHOT",
    StateDelta(StateDelta) = "STATE_DELTA",
    MessagesSnapshot(MessagesSnapshot) = "MESSAGES_SNAPSHOT",
    ActivitySnapshot(ActivitySnapshot) = "ACTIVITY_SNAPSHOT",
    ActivityDelta(ActivityDelta) = "ACTIVITY_DELTA",
    Raw(Raw) = "RAW",
    Custom(Custom) = "CUSTOM",
    ReasoningStart(ReasoningStart) = "REASONING_START",
    ReasoningMessageStart(ReasoningMessageStart) = "REASONING_MESSAGE_START",
    ReasoningMessageContent(ReasoningMessageContent) = "REASONING_MESSAGE_CONTENT",
    ReasoningMessageEnd(ReasoningMessageEnd) = "REASONING_MESSAGE_END",
    ReasoningMessageChunk(ReasoningMessageChunk) = "REASONING_MESSAGE_CHUNK",
    ReasoningEnd(ReasoningEnd) = "REASONING_END",
    ReasoningEncryptedValue(ReasoningEncryptedValue) = "REASONING_ENCRYPTED_VALUE",
    SubagentStarted(SubagentStarted) = "SUBAGENT_STARTED",
    SubagentFinished(SubagentFinished) = "SUBAGENT_FINISHED",
    SubagentError(SubagentError) = "SUBAGENT_ERROR",
}

impl std::fmt::Display for EventType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An event whose `type` AG-UI 1.0 does not define, kept as the JSON object it was.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct UnknownEvent(pub Map<String, Value>);

impl UnknownEvent {
    /// The `type` it carried (`""` when absent or not a string).
    pub fn type_str(&self) -> &str {
        self.0.get("type").and_then(Value::as_str).unwrap_or("")
    }
}

impl Event {
    /// The compact wire JSON of the event.
    pub fn to_json_string(&self) -> String {
        // The writer only appends whole UTF-8 strings and ASCII.
        String::from_utf8(self.to_json_vec()).unwrap_or_default()
    }

    /// The compact wire JSON of the event, as bytes ([`Event::write_json`]).
    pub fn to_json_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(128);
        self.write_json(&mut out);
        out
    }
}
