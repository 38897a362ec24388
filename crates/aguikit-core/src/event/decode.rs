//! Decoding events from JSON: read `type` first, then deserialize straight into the struct.

use super::{
    Event, EventType, UnknownEvent, decode_slice, decode_slice_traced, decode_text, decode_value,
};
use serde::Deserialize;
use serde::de::{Deserializer, Error as _};
use serde_json::Value;

/// How many bytes of an offending payload an error keeps.
const EXCERPT: usize = 200;

/// Why a JSON text is not a valid AG-UI event.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The text is not JSON.
    #[error("invalid JSON: {message} (in {excerpt:?})")]
    Syntax {
        /// What the JSON parser said.
        message: String,
        /// The start of the payload.
        excerpt: String,
    },
    /// The JSON is not an object.
    #[error("an event must be a JSON object (got {excerpt:?})")]
    NotAnObject {
        /// The start of the payload.
        excerpt: String,
    },
    /// A known event type whose fields break the 1.0 schema.
    #[error("{event_type}: {path}: {message}")]
    Invalid {
        /// The event type.
        event_type: EventType,
        /// Path of the offending field (e.g. `messages[2].content`, `.` for the event itself).
        path: String,
        /// What is wrong.
        message: String,
        /// The start of the payload.
        excerpt: String,
    },
}

impl DecodeError {
    /// The event type, when the payload named a known one.
    pub fn event_type(&self) -> Option<EventType> {
        match self {
            DecodeError::Invalid { event_type, .. } => Some(*event_type),
            _ => None,
        }
    }
}

pub(crate) fn excerpt(bytes: &[u8]) -> String {
    let mut end = bytes.len().min(EXCERPT);
    while end < bytes.len() && end > 0 && (bytes[end] & 0xC0) == 0x80 {
        end -= 1;
    }
    let s = String::from_utf8_lossy(&bytes[..end]).into_owned();
    if end < bytes.len() { s + "…" } else { s }
}

/// Re-runs a failed decode with path tracking to name the offending field.
pub(crate) fn traced<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> (String, String) {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    match serde_path_to_error::deserialize::<_, T>(&mut de) {
        Ok(_) => (".".into(), "invalid event".into()),
        Err(e) => {
            let path = e.path().to_string();
            let inner = e.into_inner();
            // serde_json appends " at line L column C"; keep it, it locates the value.
            (path, inner.to_string())
        }
    }
}

/// Outcome of scanning an object for its top-level `type`.
enum TypeScan<'a> {
    /// A string `type` without escapes, borrowed.
    Str(&'a str),
    /// A `type` that needs full parsing (escapes, non-string, duplicates...).
    Complex,
    /// No `type` member.
    Missing,
    /// Not a JSON object (or not even JSON: let the full parser say why).
    NotObject,
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// Skips a JSON string starting at the opening quote; returns the index after the closing
/// quote and whether it contained an escape.
fn skip_string(b: &[u8], mut i: usize) -> Option<(usize, bool)> {
    i += 1;
    let mut escaped = false;
    while i < b.len() {
        match b[i] {
            b'"' => return Some((i + 1, escaped)),
            b'\\' => {
                escaped = true;
                i += 2;
            }
            _ => i += 1,
        }
    }
    None
}

/// Skips any JSON value (without validating it: the real parse does that).
fn skip_value(b: &[u8], mut i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => skip_string(b, i).map(|(e, _)| e),
        b'{' | b'[' => {
            let mut depth = 0usize;
            while i < b.len() {
                match b[i] {
                    b'"' => {
                        i = skip_string(b, i)?.0;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            while i < b.len() && !matches!(b[i], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            {
                i += 1;
            }
            Some(i)
        }
    }
}

/// Finds the top-level `type` member of a JSON object without building anything.
fn scan_type(b: &[u8]) -> TypeScan<'_> {
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return TypeScan::NotObject;
    }
    i = skip_ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        return TypeScan::Missing;
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return TypeScan::Complex;
        }
        let Some((kend, kesc)) = skip_string(b, i) else {
            return TypeScan::Complex;
        };
        let key = &b[i + 1..kend - 1];
        i = skip_ws(b, kend);
        if b.get(i) != Some(&b':') {
            return TypeScan::Complex;
        }
        i = skip_ws(b, i + 1);
        if kesc {
            return TypeScan::Complex;
        }
        if key == b"type" {
            if b.get(i) != Some(&b'"') {
                return TypeScan::Complex;
            }
            let Some((vend, vesc)) = skip_string(b, i) else {
                return TypeScan::Complex;
            };
            if vesc {
                return TypeScan::Complex;
            }
            return match std::str::from_utf8(&b[i + 1..vend - 1]) {
                Ok(s) => TypeScan::Str(s),
                Err(_) => TypeScan::Complex,
            };
        }
        let Some(vend) = skip_value(b, i) else {
            return TypeScan::Complex;
        };
        i = skip_ws(b, vend);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => return TypeScan::Missing,
            _ => return TypeScan::Complex,
        }
    }
}

fn syntax(e: &serde_json::Error, bytes: &[u8]) -> DecodeError {
    DecodeError::Syntax {
        message: e.to_string(),
        excerpt: excerpt(bytes),
    }
}

impl Event {
    /// Decodes one event from JSON bytes.
    ///
    /// Reads the top-level `type` first and deserializes straight into the matching struct
    /// (no intermediate tree). Unknown material is handled as the reference client does:
    /// unknown properties and unknown union members are dropped, legacy `null`s read as
    /// absent; an unknown `type` gives [`Event::Unknown`]. A malformed known event is an
    /// error naming the event type and the field.
    ///
    /// ```
    /// use aguikit_core::{Event, event::DecodeError};
    /// let err = Event::from_json_slice(br#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m"}"#).unwrap_err();
    /// assert!(err.to_string().contains("TEXT_MESSAGE_CONTENT"));
    /// assert!(err.to_string().contains("delta"));
    /// ```
    pub fn from_json_slice(bytes: &[u8]) -> Result<Event, DecodeError> {
        match std::str::from_utf8(bytes) {
            Ok(text) => Event::from_json_str(text),
            Err(_) => decode_serde(bytes, None),
        }
    }

    /// Decodes one event from a JSON string. See [`Event::from_json_slice`].
    ///
    /// The fastest entry point: text already known to be UTF-8 (such as the data of an SSE
    /// frame) is not checked again.
    #[inline]
    pub fn from_json_str(text: &str) -> Result<Event, DecodeError> {
        // The flat events (all strings, the bulk of a stream) are read directly; anything
        // the fast path does not take goes to serde, which gives the same result.
        super::fast::decode_or_else(text, || decode_serde(text.as_bytes(), Some(text)))
    }

    /// The parts of a content event (`TEXT_MESSAGE_CONTENT`, `REASONING_MESSAGE_CONTENT`,
    /// `TOOL_CALL_ARGS`) written as producers write it, `{"type":…,"messageId":"…",
    /// "delta":"…"}` (`toolCallId` for tool calls) with nothing else but whitespace after:
    /// the bulk of a chat stream, read without building the event (no allocation unless a
    /// string holds escapes). `None` for anything else: read it with
    /// [`Event::from_json_str`]. When it answers, [`ContentParts::into_event`] is exactly
    /// what [`Event::from_json_str`] gives.
    ///
    /// [`ContentParts::into_event`]: super::ContentParts::into_event
    ///
    /// ```
    /// use aguikit_core::{Event, EventType};
    /// let text = r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"Hi"}"#;
    /// let parts = Event::content_parts(text).unwrap();
    /// assert_eq!((parts.event_type, &*parts.id, &*parts.delta), (EventType::TextMessageContent, "m", "Hi"));
    /// assert_eq!(Ok(parts.into_event()), Event::from_json_str(text));
    /// assert!(Event::content_parts(r#"{"type":"TEXT_MESSAGE_END","messageId":"m"}"#).is_none());
    /// ```
    #[inline]
    pub fn content_parts(text: &str) -> Option<super::ContentParts<'_>> {
        super::fast::content_parts(text)
    }

    /// Decodes one event from a parsed JSON value. See [`Event::from_json_slice`].
    pub fn from_value(v: Value) -> Result<Event, DecodeError> {
        let Value::Object(map) = v else {
            return Err(DecodeError::NotAnObject {
                excerpt: excerpt(v.to_string().as_bytes()),
            });
        };
        let et = map
            .get("type")
            .and_then(Value::as_str)
            .and_then(EventType::from_wire);
        match et {
            None => {
                // The type as JSON (`"FOO"`, `null`), not as Rust's debug form of a value.
                crate::warning::report(format!(
                    "unknown event type {}",
                    map.get("type").unwrap_or(&Value::Null)
                ));
                Ok(Event::Unknown(UnknownEvent(map)))
            }
            Some(et) => {
                let v = Value::Object(map);
                match decode_value(et, v.clone()) {
                    Ok(e) => Ok(e),
                    Err(err) => {
                        let bytes = serde_json::to_vec(&v).unwrap_or_default();
                        Err(invalid_from_slice(et, &bytes, &err))
                    }
                }
            }
        }
    }
}

/// The general path: scan for `type`, then let serde deserialize the matching struct.
///
/// `text` is `bytes` again when it is known to be UTF-8: serde_json then skips its own UTF-8
/// checks, with the same results.
pub(crate) fn decode_serde(bytes: &[u8], text: Option<&str>) -> Result<Event, DecodeError> {
    match scan_type(bytes) {
        TypeScan::Str(t) => match EventType::from_wire(t) {
            Some(et) => match text {
                Some(text) => decode_text(et, text),
                None => decode_slice(et, bytes),
            }
            .or_else(|e| {
                // serde refuses a repeated member, where JSON.parse (and so the reference)
                // keeps the last one: a payload the direct path refuses is read again as a
                // tree, which has no duplicates. Other errors fail the same way there.
                if !(e.is_syntax() || e.is_eof())
                    && let Ok(v) = parse_value(bytes, text)
                    && let Ok(event) = Event::from_value(v)
                {
                    return Ok(event);
                }
                Err(invalid_from_slice(et, bytes, &e))
            }),
            None => decode_unknown(bytes, text),
        },
        TypeScan::Missing => decode_unknown(bytes, text),
        TypeScan::NotObject => match parse_value(bytes, text) {
            Ok(_) => Err(DecodeError::NotAnObject {
                excerpt: excerpt(bytes),
            }),
            Err(e) => Err(syntax(&e, bytes)),
        },
        TypeScan::Complex => {
            let v = parse_value(bytes, text).map_err(|e| syntax(&e, bytes))?;
            Event::from_value(v)
        }
    }
}

fn parse_value(bytes: &[u8], text: Option<&str>) -> Result<Value, serde_json::Error> {
    match text {
        Some(text) => serde_json::from_str(text),
        None => serde_json::from_slice(bytes),
    }
}

fn decode_unknown(bytes: &[u8], text: Option<&str>) -> Result<Event, DecodeError> {
    let v = parse_value(bytes, text).map_err(|e| syntax(&e, bytes))?;
    Event::from_value(v)
}

fn invalid_from_slice(et: EventType, bytes: &[u8], first: &serde_json::Error) -> DecodeError {
    if first.is_syntax() || first.is_eof() {
        return syntax(first, bytes);
    }
    let (path, message) = decode_slice_traced(et, bytes);
    DecodeError::Invalid {
        event_type: et,
        path,
        message,
        excerpt: excerpt(bytes),
    }
}

impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Event::from_value(v).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_finds_type_anywhere() {
        assert!(matches!(
            scan_type(br#"{"type":"RAW"}"#),
            TypeScan::Str("RAW")
        ));
        assert!(matches!(
            scan_type(br#" { "a" : [1,{"type":"x"}], "b":"}" , "type" : "RAW" } "#),
            TypeScan::Str("RAW")
        ));
        assert!(matches!(scan_type(br#"{"a":1}"#), TypeScan::Missing));
        assert!(matches!(scan_type(br#"{}"#), TypeScan::Missing));
        assert!(matches!(scan_type(br#"[1]"#), TypeScan::NotObject));
        assert!(matches!(scan_type(br#"{"type":5}"#), TypeScan::Complex));
        assert!(matches!(
            scan_type(br#"{"ty\u0070e":"RAW"}"#),
            TypeScan::Complex
        ));
        assert!(matches!(scan_type(br#"{"type":"RA"#), TypeScan::Complex));
    }

    #[test]
    fn a_repeated_member_keeps_the_last_value_as_json_parse_does() {
        let text = r#"{"type":"RUN_STARTED","threadId":"t","runId":"r","threadId":"u"}"#;
        let event = Event::from_json_str(text).unwrap();
        assert_eq!(
            event,
            Event::from_value(serde_json::from_str(text).unwrap()).unwrap()
        );
        match event {
            Event::RunStarted(e) => assert_eq!(e.thread_id, "u"),
            other => panic!("{other:?}"),
        }
        // A payload that is wrong either way still names the field.
        let err = Event::from_json_slice(
            br#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":1,"delta":2}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("delta"), "{err}");
    }

    #[test]
    fn garbage_never_panics() {
        for s in [
            "",
            "{",
            "{\"",
            "{\"type\"",
            "{\"type\":",
            "nul",
            "\"x\"",
            "{\"a\":[}",
            "{\"type\":\"RAW\",}",
        ] {
            let _ = Event::from_json_str(s);
        }
    }
}
