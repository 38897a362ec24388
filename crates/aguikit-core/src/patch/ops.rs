//! The operation model: [`PatchOp`], [`JsonPatch`], and how an operation is written out.

use serde::Serialize;
use serde::de::Deserializer;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Map, Value};

use super::parse::*;
use super::pointer::*;

/// One RFC 6902 operation.
///
/// `extra` keeps the members the operation does not define (operations are open); they are
/// written back after the defined ones (when read, an unused `from` or `value` member goes
/// after the other extras). Serialisation order: `op`, `from` (move/copy),
/// `path`, `value` (add/replace/test), then `extra`.
///
/// # Examples
///
/// ```
/// use aguikit_core::patch::PatchOp;
/// use serde_json::json;
///
/// let op: PatchOp =
///     serde_json::from_value(json!({"op": "remove", "path": "/a", "value": 1})).unwrap();
/// assert_eq!(op.op(), "remove");
/// assert_eq!(op.path().as_str(), "/a");
/// assert_eq!(op.extra()["value"], json!(1)); // kept, not an error
/// assert_eq!(
///     serde_json::to_string(&op).unwrap(),
///     r#"{"op":"remove","path":"/a","value":1}"#
/// );
///
/// // `value` must be present on add/replace/test, but may be null.
/// assert!(serde_json::from_value::<PatchOp>(json!({"op": "add", "path": "/a"})).is_err());
/// assert!(
///     serde_json::from_value::<PatchOp>(json!({"op": "add", "path": "/a", "value": null}))
///         .is_ok()
/// );
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum PatchOp {
    /// Insert `value` at `path` (replacing an existing object member).
    Add {
        /// Target location.
        path: JsonPointer,
        /// The value to insert.
        value: Value,
        /// Members the operation does not define.
        extra: Extra,
    },
    /// Remove the value at `path`.
    Remove {
        /// Target location.
        path: JsonPointer,
        /// Members the operation does not define.
        extra: Extra,
    },
    /// Replace the existing value at `path` with `value`.
    Replace {
        /// Target location.
        path: JsonPointer,
        /// The replacement.
        value: Value,
        /// Members the operation does not define.
        extra: Extra,
    },
    /// Remove the value at `from` and add it at `path`.
    Move {
        /// Source location.
        from: JsonPointer,
        /// Target location.
        path: JsonPointer,
        /// Members the operation does not define.
        extra: Extra,
    },
    /// Add a copy of the value at `from` at `path`.
    Copy {
        /// Source location.
        from: JsonPointer,
        /// Target location.
        path: JsonPointer,
        /// Members the operation does not define.
        extra: Extra,
    },
    /// Fail unless the value at `path` equals `value`.
    Test {
        /// Target location.
        path: JsonPointer,
        /// The expected value.
        value: Value,
        /// Members the operation does not define.
        extra: Extra,
    },
}

/// The members of a [`PatchOp`] that the operation does not define.
///
/// Nearly every operation has none, so an empty set takes no allocation and one pointer
/// of the operation (a [`Map`] held inline would take 72 bytes of every operation in a
/// patch). It reads as a [`Map`] through `Deref`; `DerefMut` makes the map the first time
/// it is written.
///
/// # Examples
///
/// ```
/// use aguikit_core::patch::{Extra, JsonPointer, PatchOp};
/// use serde_json::{Map, json};
///
/// let mut op = PatchOp::remove(JsonPointer::root());
/// assert!(op.extra().is_empty());
/// op.extra_mut().insert("note".into(), json!("kept"));
/// assert_eq!(op.extra()["note"], json!("kept"));
///
/// let mut members = Map::new();
/// members.insert("x".into(), json!(1));
/// let extra = Extra::from(members.clone());
/// assert_eq!(*extra, members);
/// assert_eq!(Extra::new(), Extra::from(Map::new()));
/// ```
#[derive(Clone, Default)]
pub struct Extra(Option<Box<Map<String, Value>>>);

impl Extra {
    /// No members (no allocation).
    pub const fn new() -> Self {
        Extra(None)
    }

    /// The members as an owned map.
    pub fn into_map(self) -> Map<String, Value> {
        self.0.map(|m| *m).unwrap_or_default()
    }
}

/// The map an empty [`Extra`] reads as.
static NO_MEMBERS: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);

impl std::ops::Deref for Extra {
    type Target = Map<String, Value>;

    fn deref(&self) -> &Map<String, Value> {
        match &self.0 {
            Some(map) => map,
            None => &NO_MEMBERS,
        }
    }
}

impl std::ops::DerefMut for Extra {
    fn deref_mut(&mut self) -> &mut Map<String, Value> {
        self.0.get_or_insert_with(Box::default)
    }
}

impl From<Map<String, Value>> for Extra {
    /// Keeps `members`; an empty map takes no allocation.
    fn from(members: Map<String, Value>) -> Self {
        if members.is_empty() {
            Extra(None)
        } else {
            Extra(Some(Box::new(members)))
        }
    }
}

impl From<Extra> for Map<String, Value> {
    fn from(extra: Extra) -> Self {
        extra.into_map()
    }
}

impl PartialEq for Extra {
    /// Equal when they hold the same members (an empty map equals no map).
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for Extra {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

/// A JSON Patch document: the operations, applied in order.
pub type JsonPatch = Vec<PatchOp>;

/// The six operation names, in RFC order.
pub(super) const OP_NAMES: [&str; 6] = ["add", "remove", "replace", "move", "copy", "test"];

impl PatchOp {
    /// An `add` operation without extra members.
    pub fn add(path: JsonPointer, value: Value) -> Self {
        PatchOp::Add {
            path,
            value,
            extra: Extra::new(),
        }
    }

    /// A `remove` operation without extra members.
    pub fn remove(path: JsonPointer) -> Self {
        PatchOp::Remove {
            path,
            extra: Extra::new(),
        }
    }

    /// A `replace` operation without extra members.
    pub fn replace(path: JsonPointer, value: Value) -> Self {
        PatchOp::Replace {
            path,
            value,
            extra: Extra::new(),
        }
    }

    /// A `move` operation without extra members.
    pub fn move_from(from: JsonPointer, path: JsonPointer) -> Self {
        PatchOp::Move {
            from,
            path,
            extra: Extra::new(),
        }
    }

    /// A `copy` operation without extra members.
    pub fn copy_from(from: JsonPointer, path: JsonPointer) -> Self {
        PatchOp::Copy {
            from,
            path,
            extra: Extra::new(),
        }
    }

    /// A `test` operation without extra members.
    pub fn test(path: JsonPointer, value: Value) -> Self {
        PatchOp::Test {
            path,
            value,
            extra: Extra::new(),
        }
    }

    /// The wire name of the operation (`"add"`, `"remove"`, ...).
    pub fn op(&self) -> &'static str {
        match self {
            PatchOp::Add { .. } => "add",
            PatchOp::Remove { .. } => "remove",
            PatchOp::Replace { .. } => "replace",
            PatchOp::Move { .. } => "move",
            PatchOp::Copy { .. } => "copy",
            PatchOp::Test { .. } => "test",
        }
    }

    /// The target location.
    pub fn path(&self) -> &JsonPointer {
        match self {
            PatchOp::Add { path, .. }
            | PatchOp::Remove { path, .. }
            | PatchOp::Replace { path, .. }
            | PatchOp::Move { path, .. }
            | PatchOp::Copy { path, .. }
            | PatchOp::Test { path, .. } => path,
        }
    }

    /// The source location of `move` and `copy`.
    pub fn from(&self) -> Option<&JsonPointer> {
        match self {
            PatchOp::Move { from, .. } | PatchOp::Copy { from, .. } => Some(from),
            _ => None,
        }
    }

    /// The value of `add`, `replace` and `test`.
    pub fn value(&self) -> Option<&Value> {
        match self {
            PatchOp::Add { value, .. }
            | PatchOp::Replace { value, .. }
            | PatchOp::Test { value, .. } => Some(value),
            _ => None,
        }
    }

    /// Members the operation does not define.
    pub fn extra(&self) -> &Map<String, Value> {
        match self {
            PatchOp::Add { extra, .. }
            | PatchOp::Remove { extra, .. }
            | PatchOp::Replace { extra, .. }
            | PatchOp::Move { extra, .. }
            | PatchOp::Copy { extra, .. }
            | PatchOp::Test { extra, .. } => extra,
        }
    }

    /// Mutable access to the members the operation does not define.
    pub fn extra_mut(&mut self) -> &mut Extra {
        match self {
            PatchOp::Add { extra, .. }
            | PatchOp::Remove { extra, .. }
            | PatchOp::Replace { extra, .. }
            | PatchOp::Move { extra, .. }
            | PatchOp::Copy { extra, .. }
            | PatchOp::Test { extra, .. } => extra,
        }
    }

    /// Deserializes one operation, answering `Ok(None)` when the element is an object
    /// whose `op` is missing or not one of the six RFC 6902 names (the reference client
    /// drops such operations with a warning). Every other defect is still an error.
    ///
    /// ```
    /// use aguikit_core::patch::PatchOp;
    /// use serde_json::json;
    ///
    /// let unknown = json!({"op": "spam", "path": "/a"});
    /// assert_eq!(PatchOp::deserialize_lenient(&unknown).unwrap(), None);
    /// let bad = json!({"op": "add", "path": "a", "value": 1});
    /// assert!(PatchOp::deserialize_lenient(&bad).is_err());
    /// ```
    pub fn deserialize_lenient<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Self>, D::Error> {
        match deserializer.deserialize_map(OpVisitor)? {
            Parsed::Known(op) => Ok(Some(op)),
            Parsed::Unknown(_) => Ok(None),
        }
    }

    /// Whether `key` is written by [`Serialize`] from a typed field of this operation (and
    /// so is skipped if it also appears in `extra`).
    pub(crate) fn is_typed_member(&self, key: &str) -> bool {
        match key {
            "op" | "path" => true,
            "from" => self.from().is_some(),
            "value" => self.value().is_some(),
            _ => false,
        }
    }
}

impl Serialize for PatchOp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("op", self.op())?;
        if let Some(from) = self.from() {
            map.serialize_entry("from", from)?;
        }
        map.serialize_entry("path", self.path())?;
        if let Some(value) = self.value() {
            map.serialize_entry("value", value)?;
        }
        for (key, value) in self.extra() {
            if !self.is_typed_member(key) {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}
