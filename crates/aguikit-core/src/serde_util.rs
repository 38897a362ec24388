//! Private serde helpers implementing the 1.0 wire rules that plain derives cannot express:
//! optional fields where `null` is invalid, safe-integer timestamps, non-negative counts,
//! string literals that must match exactly.

use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// Largest integer JavaScript represents exactly (2^53 - 1).
pub(crate) const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

/// Optional field whose value, when present, must not be `null`.
///
/// Use with `#[serde(default, deserialize_with = "nn")]`: absence gives `None` (through
/// `default`), any value is deserialized as `T` and a `null` fails unless `T` accepts it.
pub(crate) fn nn<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// Optional JSON value where a legacy `null` is read as absent (and reported).
pub(crate) fn legacy_null_value<'de, D>(d: D) -> Result<Option<Value>, D::Error>
where
    D: Deserializer<'de>,
{
    match Value::deserialize(d)? {
        Value::Null => {
            crate::warning::report("legacy `null` read as absent");
            Ok(None)
        }
        v => Ok(Some(v)),
    }
}

/// [`legacy_null_value`], boxed (an event's `rawEvent`).
pub(crate) fn legacy_null_boxed<'de, D>(d: D) -> Result<Option<Box<Value>>, D::Error>
where
    D: Deserializer<'de>,
{
    legacy_null_value(d).map(|v| v.map(Box::new))
}

/// [`nn_object`], boxed (an event's `metadata`).
pub(crate) fn nn_object_boxed<'de, D>(d: D) -> Result<Option<Box<Map<String, Value>>>, D::Error>
where
    D: Deserializer<'de>,
{
    nn_object(d).map(|m| m.map(Box::new))
}

/// Optional value where a legacy `null` is read as absent (and reported).
pub(crate) fn legacy_null<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    let v = Option::<T>::deserialize(d)?;
    if v.is_none() {
        crate::warning::report("legacy `null` read as absent");
    }
    Ok(v)
}

/// Optional JSON object (`metadata`, `responseSchema`, ...): `null`, arrays and scalars fail.
pub(crate) fn nn_object<'de, D>(d: D) -> Result<Option<Map<String, Value>>, D::Error>
where
    D: Deserializer<'de>,
{
    Map::<String, Value>::deserialize(d).map(Some)
}

/// A key that must be present but may hold any JSON value including `null`
/// (`STATE_SNAPSHOT.snapshot`, `RAW.event`, `CUSTOM.value`).
///
/// Use with `deserialize_with` and *without* `default`, so absence is reported as a
/// missing field. (serde treats a missing `Value` field as `null` unless told otherwise.)
pub(crate) fn present_value<'de, D>(d: D) -> Result<Value, D::Error>
where
    D: Deserializer<'de>,
{
    Value::deserialize(d)
}

struct SafeIntVisitor {
    min: i64,
    what: &'static str,
}

impl Visitor<'_> for SafeIntVisitor {
    type Value = i64;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.what)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<i64, E> {
        if v < self.min || v > MAX_SAFE_INTEGER {
            return Err(E::custom(format_args!(
                "{v} is out of range: expected {}",
                self.what
            )));
        }
        Ok(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<i64, E> {
        match i64::try_from(v) {
            Ok(v) => self.visit_i64(v),
            Err(_) => Err(E::custom(format_args!(
                "{v} is out of range: expected {}",
                self.what
            ))),
        }
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<i64, E> {
        // JavaScript cannot tell 1.0 from 1, so integral floats are integers.
        if v.fract() != 0.0 || !v.is_finite() {
            return Err(E::custom(format_args!(
                "{v} is not an integer: expected {}",
                self.what
            )));
        }
        if v < self.min as f64 || v > MAX_SAFE_INTEGER as f64 {
            return Err(E::custom(format_args!(
                "{v} is out of range: expected {}",
                self.what
            )));
        }
        Ok(v as i64)
    }
}

/// Optional `timestamp`: an integer in [-(2^53-1), 2^53-1]; integral floats accepted.
pub(crate) fn timestamp<'de, D>(d: D) -> Result<Option<i64>, D::Error>
where
    D: Deserializer<'de>,
{
    d.deserialize_any(SafeIntVisitor {
        min: -MAX_SAFE_INTEGER,
        what: "a safe integer (|n| <= 2^53-1)",
    })
    .map(Some)
}

/// Optional non-negative safe integer (token counts, capability limits).
pub(crate) fn count<'de, D>(d: D) -> Result<Option<u64>, D::Error>
where
    D: Deserializer<'de>,
{
    d.deserialize_any(SafeIntVisitor {
        min: 0,
        what: "a non-negative safe integer",
    })
    .map(|v| Some(v as u64))
}

/// Declares a unit struct that (de)serializes as exactly one string literal, for fields
/// such as `role: "tool"` that have a single legal value.
macro_rules! string_literal {
    ($(#[$m:meta])* $name:ident = $lit:literal) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name;

        impl $name {
            /// The wire string.
            pub const AS_STR: &'static str = $lit;
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($lit)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                if s == $lit {
                    Ok($name)
                } else {
                    Err(serde::de::Error::invalid_value(
                        serde::de::Unexpected::Str(&s),
                        &concat!("\"", $lit, "\""),
                    ))
                }
            }
        }

        #[cfg(feature = "schema")]
        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({ "type": "string", "const": $lit })
            }
        }
    };
}
pub(crate) use string_literal;

/// Declares a wire struct whose members are camelCase and whose optional members follow the
/// 1.0 rule: absent from the JSON when `None`, read by a named deserializer of this module.
///
/// ```text
/// wire_struct! {
///     /// What the struct is.
///     #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
///     pub struct Example {
///         /// A required member, written as usual.
///         pub id: String,
///         /// An optional member: `["nn"]` names its deserializer (`nn` rejects `null`,
///         /// `nn_object` wants an object, `count` a non-negative safe integer, ...).
///         pub name: Option<String> ["nn"],
///     }
/// }
/// ```
///
/// The macro adds the JSON Schema derive (feature `schema`) and `rename_all = "camelCase"`;
/// other serde attributes (`rename`, ...) are written on the member as usual.
macro_rules! wire_struct {
    (
        $(#[$m:meta])*
        pub struct $name:ident {
            $(
                $(#[$fm:meta])*
                pub $f:ident : $t:ty $([$de:literal])?
            ),* $(,)?
        }
    ) => {
        $(#[$m])*
        #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
        #[serde(rename_all = "camelCase")]
        pub struct $name {
            $(
                $(#[$fm])*
                $(#[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = $de)])?
                pub $f: $t,
            )*
        }
    };
}
pub(crate) use wire_struct;
