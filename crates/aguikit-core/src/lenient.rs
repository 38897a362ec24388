//! Reading arrays of discriminated unions the way the reference client does: an element whose
//! discriminator is not recognised is removed (with a warning), the others are validated.

use serde::de::{self, DeserializeOwned};
use serde_json::Value;

/// A union type whose unknown members are dropped from arrays instead of failing.
pub(crate) trait LenientMember: DeserializeOwned {
    /// What the element is called in warnings ("message", "content part", ...).
    const WHAT: &'static str;
    /// Whether the reference recognises this element (its discriminators are known).
    /// Returns the reason it is dropped otherwise.
    fn recognised(v: &Value) -> Result<(), String>;
    /// Inbound compatibility rewrites applied before validation (legacy shapes).
    fn upgrade(_v: &mut Value) {}
    /// The member, from its upgraded and recognised value. The default deserializes it;
    /// a type whose `Deserialize` goes through a `Value` itself reads this one instead (a
    /// message's copied the value again first: 40% of parsing a one-message run input).
    fn from_value(v: Value) -> Result<Self, serde_json::Error> {
        Self::deserialize(v)
    }
}

/// Validates each element, dropping the unrecognised ones. Non-object elements are fatal.
pub(crate) fn from_values<T: LenientMember, E: de::Error>(values: Vec<Value>) -> Result<Vec<T>, E> {
    let mut out = Vec::with_capacity(values.len());
    for (i, mut v) in values.into_iter().enumerate() {
        if !v.is_object() {
            return Err(E::custom(format_args!(
                "[{i}]: expected a {} object",
                T::WHAT
            )));
        }
        T::upgrade(&mut v);
        if let Err(why) = T::recognised(&v) {
            crate::warning::report(format!("[{i}]: {} removed: {why}", T::WHAT));
            continue;
        }
        match T::from_value(v) {
            Ok(t) => out.push(t),
            Err(e) => return Err(E::custom(format_args!("[{i}]: {e}"))),
        }
    }
    Ok(out)
}

/// `deserialize_with` for a required `Vec<T>` of lenient members.
pub(crate) fn vec<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: de::Deserializer<'de>,
    T: LenientMember,
{
    let values = Vec::<Value>::deserialize(d)?;
    from_values(values)
}

use serde::Deserialize;

/// Checks that `v[key]` is a string among `known`.
pub(crate) fn check_tag(v: &Value, key: &str, known: &[&str]) -> Result<(), String> {
    match v.get(key) {
        Some(Value::String(s)) if known.contains(&s.as_str()) => Ok(()),
        Some(Value::String(s)) => Err(format!("unknown {key} {s:?}")),
        Some(other) => Err(format!("{key} is not a string: {other}")),
        None => Err(format!("no {key}")),
    }
}
