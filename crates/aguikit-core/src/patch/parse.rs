//! Strict reading of one operation (`PatchOp`'s `Deserialize`): members checked, extras kept.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::Value;

use super::ops::*;
use super::pointer::*;

impl<'de> Deserialize<'de> for PatchOp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match deserializer.deserialize_map(OpVisitor)? {
            Parsed::Known(op) => Ok(op),
            Parsed::Unknown(None) => Err(de::Error::missing_field("op")),
            Parsed::Unknown(Some(Value::String(name))) => Err(de::Error::custom(format_args!(
                "unknown JSON Patch operation {name:?} in `op` (expected one of {})",
                OP_NAMES.join(", ")
            ))),
            Parsed::Unknown(Some(other)) => Err(de::Error::custom(format_args!(
                "invalid `op`: expected a string, found {}",
                describe(&other)
            ))),
        }
    }
}

/// Result of reading one operation object: a known operation, or the `op` member of an
/// object whose `op` is missing (`None`) or unrecognised.
pub(super) enum Parsed {
    Known(PatchOp),
    Unknown(Option<Value>),
}

/// Member names of an operation object, recognised without allocating.
pub(super) enum Key {
    Op,
    Path,
    From,
    Value,
    Other(String),
}

impl Key {
    pub(super) fn known(s: &str) -> Option<Key> {
        Some(match s {
            "op" => Key::Op,
            "path" => Key::Path,
            "from" => Key::From,
            "value" => Key::Value,
            _ => return None,
        })
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;

        impl Visitor<'_> for KeyVisitor {
            type Value = Key;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                Ok(Key::known(v).unwrap_or_else(|| Key::Other(v.to_owned())))
            }

            fn visit_string<E: de::Error>(self, v: String) -> Result<Key, E> {
                Ok(Key::known(&v).unwrap_or(Key::Other(v)))
            }
        }

        deserializer.deserialize_identifier(KeyVisitor)
    }
}

/// A short description of a JSON value's type, for error messages.
pub(super) fn describe(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Turns a raw `path`/`from` member into a pointer, naming the member on failure.
pub(super) fn pointer_member<E: de::Error>(
    member: &'static str,
    op: &str,
    raw: Option<Value>,
) -> Result<JsonPointer, E> {
    match raw {
        None => Err(E::custom(format_args!(
            "`{op}` operation is missing the `{member}` member"
        ))),
        Some(Value::String(s)) => JsonPointer::from_string(s)
            .map_err(|e| E::custom(format_args!("invalid `{member}`: {e}"))),
        Some(other) => Err(E::custom(format_args!(
            "invalid `{member}`: expected a JSON Pointer string, found {}",
            describe(&other)
        ))),
    }
}

pub(super) fn value_member<E: de::Error>(op: &str, raw: Option<Value>) -> Result<Value, E> {
    raw.ok_or_else(|| {
        E::custom(format_args!(
            "`{op}` operation is missing the `value` member"
        ))
    })
}

pub(super) struct OpVisitor;

impl<'de> Visitor<'de> for OpVisitor {
    type Value = Parsed;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON Patch operation object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Parsed, A::Error> {
        let mut op: Option<Value> = None;
        let mut path: Option<Value> = None;
        let mut from: Option<Value> = None;
        let mut value: Option<Value> = None;
        let mut extra = Extra::new();
        // A repeated member keeps its last value, as JSON.parse does.
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Op => op = Some(map.next_value()?),
                Key::Path => path = Some(map.next_value()?),
                Key::From => from = Some(map.next_value()?),
                Key::Value => value = Some(map.next_value()?),
                Key::Other(name) => {
                    let v: Value = map.next_value()?;
                    extra.insert(name, v);
                }
            }
        }
        let name = match op {
            Some(Value::String(name)) if OP_NAMES.contains(&name.as_str()) => name,
            other => return Ok(Parsed::Unknown(other)),
        };
        let name = name.as_str();
        // Members this operation does not define are kept as extras.
        let uses_from = matches!(name, "move" | "copy");
        let uses_value = matches!(name, "add" | "replace" | "test");
        if !uses_from && let Some(f) = from.take() {
            extra.insert("from".to_owned(), f);
        }
        if !uses_value && let Some(v) = value.take() {
            extra.insert("value".to_owned(), v);
        }
        let path = pointer_member("path", name, path)?;
        let op = match name {
            "add" => PatchOp::Add {
                path,
                value: value_member(name, value)?,
                extra,
            },
            "remove" => PatchOp::Remove { path, extra },
            "replace" => PatchOp::Replace {
                path,
                value: value_member(name, value)?,
                extra,
            },
            "move" => PatchOp::Move {
                from: pointer_member("from", name, from)?,
                path,
                extra,
            },
            "copy" => PatchOp::Copy {
                from: pointer_member("from", name, from)?,
                path,
                extra,
            },
            _ => PatchOp::Test {
                path,
                value: value_member(name, value)?,
                extra,
            },
        };
        Ok(Parsed::Known(op))
    }
}
