//! Errors of the protobuf codec.

use crate::event::EventType;

/// How many bytes of an offending body an error keeps (as hex).
const EXCERPT: usize = 64;

/// Why protobuf bytes could not be turned into events, or an event into bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProtoError {
    /// The body is not a well-formed `ag_ui.Event`: broken protobuf (truncated, bad tags or
    /// wire types, invalid UTF-8), no known event and no later-protocol one, two different
    /// events in one envelope, a missing `base_event` or one naming another event type, a
    /// part or message carrying contradictory content fields. The reference fails the
    /// stream on these.
    #[error("invalid protobuf event: {reason} (body: {excerpt})")]
    Malformed {
        /// What is wrong.
        reason: String,
        /// The start of the body, in hex.
        excerpt: String,
    },
    /// Well-formed protobuf whose event breaks the AG-UI 1.0 schema (the reference client
    /// fails such an event in its validation stage, as it would over SSE).
    #[error("{event_type}: {path}: {message}")]
    Invalid {
        /// The event type.
        event_type: EventType,
        /// Path of the offending field (e.g. `messages[2].content`).
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A frame header announced a body larger than the decoder's limit.
    #[error("protobuf frame of {len} bytes exceeds the limit of {max} bytes")]
    FrameTooLarge {
        /// The announced body length.
        len: u64,
        /// The configured limit.
        max: usize,
    },
    /// The stream ended inside a frame.
    #[error(
        "the binary stream ended mid-frame: {trailing} trailing bytes could not be read as a complete message"
    )]
    TruncatedFrame {
        /// How many bytes were left over.
        trailing: usize,
    },
    /// The event has no protobuf form (an unknown event type, for example a retired
    /// `THINKING_*` event): the reference encodes nothing for it.
    #[error("event type {event_type:?} has no protobuf form")]
    NoProtobufForm {
        /// The event's `type`.
        event_type: String,
    },
}

impl ProtoError {
    pub(crate) fn malformed(reason: impl Into<String>, body: &[u8]) -> ProtoError {
        let mut excerpt = String::with_capacity(2 * EXCERPT.min(body.len()) + 1);
        for b in body.iter().take(EXCERPT) {
            excerpt.push_str(&format!("{b:02x}"));
        }
        if body.len() > EXCERPT {
            excerpt.push('…');
        }
        ProtoError::Malformed {
            reason: reason.into(),
            excerpt,
        }
    }
}
