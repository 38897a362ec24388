//! Lenient reading of a whole patch, as the reference client reads one: operations with a
//! missing or unknown `op` are dropped and reported.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, SeqAccess, Visitor};
use serde::ser::{SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ops::*;
use super::parse::*;

/// A patch read the way the reference client reads one: operations whose `op` is missing
/// or unknown are dropped (and reported in `dropped`); the others are kept in order. Any
/// other defect (a non-object element, a bad pointer, a missing `value`) is still an
/// error.
///
/// Serialises as the array of kept operations.
///
/// # Examples
///
/// ```
/// use aguikit_core::patch::LenientPatch;
///
/// let patch: LenientPatch = serde_json::from_str(
///     r#"[{"op":"add","path":"/a","value":1},{"op":"spam"},{"op":"remove","path":"/b"}]"#,
/// )
/// .unwrap();
/// assert_eq!(patch.ops.len(), 2);
/// assert_eq!(patch.dropped.len(), 1);
/// assert_eq!(patch.dropped[0].index, 1);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LenientPatch {
    /// The recognised operations, in their original order.
    pub ops: JsonPatch,
    /// The operations that were dropped, in order.
    pub dropped: Vec<DroppedOp>,
}

/// An operation [`LenientPatch`] dropped because its `op` is missing or unknown.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct DroppedOp {
    /// Index of the element in the original array.
    pub index: usize,
    /// Its `op` member, `None` when it had none.
    pub op: Option<Value>,
}

impl fmt::Display for DroppedOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.op {
            None => write!(f, "operation {} has no `op`", self.index),
            Some(op) => write!(f, "operation {} has unknown `op` {op}", self.index),
        }
    }
}

impl Serialize for LenientPatch {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.ops.len()))?;
        for op in &self.ops {
            seq.serialize_element(op)?;
        }
        seq.end()
    }
}

/// Seed that reads one element leniently.
pub(super) struct LenientOp;

impl<'de> DeserializeSeed<'de> for LenientOp {
    type Value = Parsed;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Parsed, D::Error> {
        deserializer.deserialize_map(OpVisitor)
    }
}

impl<'de> Deserialize<'de> for LenientPatch {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PatchVisitor;

        impl<'de> Visitor<'de> for PatchVisitor {
            type Value = LenientPatch;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON Patch array")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<LenientPatch, A::Error> {
                let mut patch = LenientPatch {
                    ops: Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64)),
                    dropped: Vec::new(),
                };
                let mut index = 0;
                while let Some(parsed) = seq.next_element_seed(LenientOp)? {
                    match parsed {
                        Parsed::Known(op) => patch.ops.push(op),
                        Parsed::Unknown(op) => patch.dropped.push(DroppedOp { index, op }),
                    }
                    index += 1;
                }
                Ok(patch)
            }
        }

        deserializer.deserialize_seq(PatchVisitor)
    }
}

/// A patch element that could not be read, with its index.
#[derive(Debug, thiserror::Error)]
#[error("operation {index}: {source}")]
#[non_exhaustive]
pub struct PatchParseError {
    /// Index of the element in the array.
    pub index: usize,
    /// What was wrong with it.
    #[source]
    pub source: serde_json::Error,
}

/// Reads every element of `ops` strictly: an unknown `op` is an error.
pub fn parse_patch(ops: &[Value]) -> Result<JsonPatch, PatchParseError> {
    ops.iter()
        .enumerate()
        .map(|(index, v)| {
            PatchOp::deserialize(v).map_err(|source| PatchParseError { index, source })
        })
        .collect()
}

/// Reads `ops` like [`LenientPatch`]'s `Deserialize`, naming the index of a bad element.
///
/// ```
/// use aguikit_core::patch::parse_patch_lenient;
/// use serde_json::json;
///
/// let raw = [json!({"op": "frobnicate"}), json!({"op": "test", "path": "", "value": {}})];
/// let patch = parse_patch_lenient(&raw).unwrap();
/// assert_eq!((patch.ops.len(), patch.dropped[0].index), (1, 0));
///
/// let err = parse_patch_lenient(&[json!({"op": "add", "path": "/a"})]).unwrap_err();
/// assert_eq!(err.to_string(), "operation 0: `add` operation is missing the `value` member");
/// ```
pub fn parse_patch_lenient(ops: &[Value]) -> Result<LenientPatch, PatchParseError> {
    let mut patch = LenientPatch::default();
    for (index, v) in ops.iter().enumerate() {
        match LenientOp
            .deserialize(v)
            .map_err(|source| PatchParseError { index, source })?
        {
            Parsed::Known(op) => patch.ops.push(op),
            Parsed::Unknown(op) => patch.dropped.push(DroppedOp { index, op }),
        }
    }
    Ok(patch)
}

/// `deserialize_with` for the patch fields of `STATE_DELTA` and `ACTIVITY_DELTA`: operations
/// with a missing or unknown `op` are removed (and reported), as the reference client does.
pub(crate) fn lenient_patch<'de, D: Deserializer<'de>>(d: D) -> Result<JsonPatch, D::Error> {
    let LenientPatch { ops, dropped } = LenientPatch::deserialize(d)?;
    for op in dropped {
        crate::warning::report(format!("{op} removed"));
    }
    Ok(ops)
}
