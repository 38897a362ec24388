//! The inbound compatibility boundary: translates the retired `THINKING_*` events into their
//! `REASONING_*` replacements, as the reference client does (rules CB4–CB9).
//!
//! The other compatibility rewrites (legacy `null`s, retired `binary` content parts) happen
//! while decoding, so a typed [`Event`] never carries them.
//!
//! Ids are minted because the old events carried none: a span id on `THINKING_START`, a
//! message id on `THINKING_TEXT_MESSAGE_START`. Continuations reuse them; a continuation with
//! no opener gets a fresh id, which verification then rejects (as in the reference).
//!
//! ```
//! use aguikit_core::{Event, engine::compat::CompatBoundary};
//! let mut compat = CompatBoundary::with_minter(|| "id-1".to_string());
//! let e = Event::from_json_str(r#"{"type":"THINKING_START","title":"plan"}"#).unwrap();
//! let out = compat.translate(e).unwrap();
//! assert_eq!(out.to_json_string(), r#"{"type":"REASONING_START","messageId":"id-1"}"#);
//! ```

use crate::Event;
use crate::event::{DecodeError, UnknownEvent};
use crate::id::random_uuid;
use serde_json::{Map, Value};

/// Mints fresh ids (UUID v4 by default).
pub type IdMinter = Box<dyn FnMut() -> String + Send>;

/// The compatibility boundary's state: the open reasoning span and message ids.
pub struct CompatBoundary {
    span_id: Option<String>,
    message_id: Option<String>,
    mint: IdMinter,
}

impl std::fmt::Debug for CompatBoundary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompatBoundary")
            .field("span_id", &self.span_id)
            .field("message_id", &self.message_id)
            .finish_non_exhaustive()
    }
}

impl Default for CompatBoundary {
    fn default() -> Self {
        CompatBoundary::new()
    }
}

impl CompatBoundary {
    /// A boundary that mints random UUID v4 ids.
    pub fn new() -> Self {
        CompatBoundary::with_minter(random_uuid)
    }

    /// A boundary with a custom id minter (deterministic tests, custom formats).
    pub fn with_minter(mint: impl FnMut() -> String + Send + 'static) -> Self {
        CompatBoundary {
            span_id: None,
            message_id: None,
            mint: Box::new(mint),
        }
    }

    /// Forgets the open span and message (the reference does this at the start of each run
    /// request, not at each `RUN_STARTED`).
    pub fn reset(&mut self) {
        self.span_id = None;
        self.message_id = None;
    }

    /// Translates one event: a `THINKING_*` event becomes its `REASONING_*` replacement
    /// (validated like any other event); anything else is returned unchanged.
    pub fn translate(&mut self, event: Event) -> Result<Event, DecodeError> {
        let Event::Unknown(UnknownEvent(map)) = event else {
            return Ok(event);
        };
        let Some(kind) = map.get("type").and_then(Value::as_str) else {
            return Ok(Event::Unknown(UnknownEvent(map)));
        };
        let kind = kind.to_owned();
        let (new_type, id) = match kind.as_str() {
            "THINKING_START" => {
                let id = (self.mint)();
                self.span_id = Some(id.clone());
                ("REASONING_START", id)
            }
            "THINKING_TEXT_MESSAGE_START" => {
                let id = (self.mint)();
                self.message_id = Some(id.clone());
                ("REASONING_MESSAGE_START", id)
            }
            "THINKING_TEXT_MESSAGE_CONTENT" => {
                let open = self.message_id.clone();
                let id = self.continuation(open, &kind);
                ("REASONING_MESSAGE_CONTENT", id)
            }
            "THINKING_TEXT_MESSAGE_END" => {
                let open = self.message_id.take();
                let id = self.continuation(open, &kind);
                ("REASONING_MESSAGE_END", id)
            }
            "THINKING_END" => {
                let open = self.span_id.take();
                let id = self.continuation(open, &kind);
                ("REASONING_END", id)
            }
            _ => return Ok(Event::Unknown(UnknownEvent(map))),
        };
        crate::warning::report(format!("retired {kind} translated to {new_type}"));
        Event::from_value(Value::Object(rewrite(map, new_type, id)))
    }

    fn continuation(&mut self, established: Option<String>, kind: &str) -> String {
        established.unwrap_or_else(|| {
            let id = (self.mint)();
            crate::warning::report(format!(
                "{kind} has no THINKING opener before it: minted id {id:?}, which nothing opened"
            ));
            id
        })
    }
}

fn rewrite(mut map: Map<String, Value>, new_type: &str, id: String) -> Map<String, Value> {
    if new_type == "REASONING_START" && map.shift_remove("title").is_some() {
        crate::warning::report("THINKING_START.title dropped: REASONING_START has no title");
    }
    map.insert("type".into(), Value::String(new_type.into()));
    map.insert("messageId".into(), Value::String(id));
    if new_type == "REASONING_MESSAGE_START" {
        map.insert("role".into(), Value::String("reasoning".into()));
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(s: &str) -> Event {
        Event::from_json_str(s).unwrap()
    }

    #[test]
    fn full_thinking_sequence_translates_with_stable_ids() {
        let mut n = 0;
        let mut c = CompatBoundary::with_minter(move || {
            n += 1;
            format!("id{n}")
        });
        let out: Vec<String> = [
            r#"{"type":"THINKING_START","title":"t","timestamp":5}"#,
            r#"{"type":"THINKING_TEXT_MESSAGE_START"}"#,
            r#"{"type":"THINKING_TEXT_MESSAGE_CONTENT","delta":"hm"}"#,
            r#"{"type":"THINKING_TEXT_MESSAGE_END"}"#,
            r#"{"type":"THINKING_END"}"#,
        ]
        .iter()
        .map(|s| c.translate(ev(s)).unwrap().to_json_string())
        .collect();
        assert_eq!(
            out,
            [
                r#"{"type":"REASONING_START","messageId":"id1","timestamp":5}"#,
                r#"{"type":"REASONING_MESSAGE_START","messageId":"id2","role":"reasoning"}"#,
                r#"{"type":"REASONING_MESSAGE_CONTENT","messageId":"id2","delta":"hm"}"#,
                r#"{"type":"REASONING_MESSAGE_END","messageId":"id2"}"#,
                r#"{"type":"REASONING_END","messageId":"id1"}"#,
            ]
        );
    }

    #[test]
    fn continuation_without_opener_mints_and_warns() {
        let mut c = CompatBoundary::with_minter(|| "x".into());
        let (out, warnings) = crate::warning::collect(|| {
            c.translate(ev(
                r#"{"type":"THINKING_TEXT_MESSAGE_CONTENT","delta":"a"}"#,
            ))
        });
        assert_eq!(
            out.unwrap().to_json_string(),
            r#"{"type":"REASONING_MESSAGE_CONTENT","messageId":"x","delta":"a"}"#
        );
        assert!(warnings.iter().any(|w| w.contains("minted")));
    }

    #[test]
    fn translated_event_is_validated() {
        let mut c = CompatBoundary::new();
        let err = c
            .translate(ev(r#"{"type":"THINKING_TEXT_MESSAGE_CONTENT"}"#))
            .unwrap_err();
        assert!(err.to_string().contains("delta"), "{err}");
    }

    #[test]
    fn other_events_pass_through() {
        let mut c = CompatBoundary::new();
        let e = ev(r#"{"type":"META","x":1}"#);
        assert_eq!(c.translate(e.clone()).unwrap(), e);
    }

    #[test]
    fn uuids_are_v4_and_distinct() {
        let a = random_uuid();
        let b = random_uuid();
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
    }
}
