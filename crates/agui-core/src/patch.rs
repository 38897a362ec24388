//! RFC 6902 JSON Patch operations and their application.
//!
//! AG-UI carries JSON Patches in `STATE_DELTA.delta` and `ACTIVITY_DELTA.patch`. This
//! module holds the typed operations ([`PatchOp`]), the RFC 6901 pointers they address
//! ([`JsonPointer`]) and an applier ([`apply_patch`]) that reproduces the observable
//! behaviour of the reference client's patcher (fast-json-patch 3.1.1 called with
//! validation on, as `@ag-ui/client` 1.0 does).
//!
//! # Parsing
//!
//! Operations are *open*: members an operation does not define (for example `value` on
//! `remove`) are kept in its `extra` map and written back out. A missing `path`, a missing
//! `from` on `move`/`copy`, a missing `value` on `add`/`replace`/`test` (`"value": null`
//! counts as present) or a `path`/`from` that is not a JSON Pointer is an error. An unknown
//! `op` is an error for [`PatchOp`]'s `Deserialize`; [`LenientPatch`] (and
//! [`parse_patch_lenient`]) instead drops such operations and reports their indexes, which
//! is what the reference client does.
//!
//! # Application semantics
//!
//! [`apply_patch`] works in place and is atomic: if any operation fails, every operation
//! already applied is undone and the document is left exactly as it was, object key order
//! included. Nothing is cloned except the values an operation inserts. The rules:
//!
//! - `replace`, `remove` and `test` need the target to exist; `move` and `copy` need
//!   `from` to exist; `add` needs the target's parent to exist, and replaces an existing
//!   object member.
//! - Array index tokens are `0` or digits without a leading zero; anything else (`01`,
//!   `1e0`, `x`, the empty token) fails. `-` means "past the end": `add` appends there,
//!   every other use fails. `add` at index = length appends, beyond it fails.
//! - `test` compares by JSON value: numbers by value (`1` equals `1.0`), objects without
//!   regard to key order.
//! - `move` checks its target against the document as it is, removes the value at `from`,
//!   then inserts it at `path` as that resolves *after* the removal, like the reference:
//!   moving into its own child therefore fails, but an array index shift can make a path
//!   under `from` valid again (`move /0 → /0/1` on `[[], [1]]` gives `[[1, []]]`). A
//!   `move`/`copy` target index beyond the array's length appends, as in the reference
//!   (only `add` checks that bound there).
//! - The path `""` is the whole document: `add`/`replace` swap it, `test` compares it,
//!   `move`/`copy` make the value at `from` the document, and `remove` leaves `null`
//!   (as the reference does).
//! - A `path` or `from` holding a `__proto__` token, or a `prototype` token right after a
//!   `constructor` token, fails (the reference bans these for security).
//!
//! Quirks of the reference on a document that is not an object or array, reproduced
//! because they decide whether a patch "succeeds" (nothing is ever changed):
//!
//! - a `null` document fails every operation whose `path` is not `""`;
//! - on a scalar document (boolean, number, string) an operation whose path has two or
//!   more tokens fails; with one token, `add` succeeds; `replace` and `remove` succeed only
//!   on a *falsy* scalar (`false`, `0`, `""`); `test` fails; `move`/`copy` succeed when
//!   `from` is `""`, or has one token and the scalar is falsy, and fail otherwise.
//!
//! Deliberate differences from fast-json-patch, where it does something a user would call
//! a bug (these follow RFC 6902 and the AG-UI spec text instead):
//!
//! - leading-zero and empty array index tokens fail everywhere (the reference accepts
//!   them in `test`, in an `add` target and in a `move`/`copy` target);
//! - members inherited from JavaScript's `Object.prototype` or a string's own properties
//!   (`/toString`, `/constructor`, `/length`, `/0` of a string) do not exist here;
//! - `move`/`copy` to `""` from a missing location fails (the reference makes the
//!   document `undefined`), and `move` from `""` into a child fails (the reference builds
//!   a cyclic document);
//! - a `move` whose target, once `from` is removed, is no place to insert (a scalar, or a
//!   non-index token on an array) fails; the reference reports success and loses the
//!   value.

use std::borrow::Cow;
use std::fmt;
use std::mem;
use std::str::FromStr;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

// ---------------------------------------------------------------------------------------
// JSON Pointer
// ---------------------------------------------------------------------------------------

/// An RFC 6901 JSON Pointer: `""` (the whole document) or a sequence of `/`-prefixed
/// tokens in which `~` is only ever followed by `0` (a literal `~`) or `1` (a literal `/`).
///
/// The pointer is stored in its encoded form; [`tokens`](Self::tokens) yields the decoded
/// reference tokens.
///
/// # Examples
///
/// ```
/// use agui_core::patch::JsonPointer;
///
/// let p = JsonPointer::parse("/a~1b/~0/0").unwrap();
/// let tokens: Vec<_> = p.tokens().collect();
/// assert_eq!(tokens, ["a/b", "~", "0"]);
/// assert_eq!(p.to_string(), "/a~1b/~0/0");
///
/// assert!(JsonPointer::parse("a").is_err()); // no leading slash
/// assert!(JsonPointer::parse("/~2").is_err()); // bad escape
/// assert!(JsonPointer::parse("").unwrap().is_root());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JsonPointer(String);

/// Why a string is not a JSON Pointer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid JSON Pointer {pointer:?}: {kind}")]
#[non_exhaustive]
pub struct PointerError {
    /// The rejected string.
    pub pointer: String,
    /// What is wrong with it.
    pub kind: PointerErrorKind,
}

/// The ways a string can fail to be a JSON Pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PointerErrorKind {
    /// A non-empty pointer must start with `/`.
    #[error("a non-empty pointer must start with '/'")]
    MissingLeadingSlash,
    /// A `~` not followed by `0` or `1`.
    #[error("'~' at byte {offset} is not followed by '0' or '1'")]
    InvalidEscape {
        /// Byte offset of the offending `~`.
        offset: usize,
    },
}

fn check_pointer(s: &str) -> Result<(), PointerErrorKind> {
    let bytes = s.as_bytes();
    match bytes.first() {
        None => return Ok(()),
        Some(b'/') => {}
        Some(_) => return Err(PointerErrorKind::MissingLeadingSlash),
    }
    for (offset, &b) in bytes.iter().enumerate() {
        if b == b'~' && !matches!(bytes.get(offset + 1), Some(b'0' | b'1')) {
            return Err(PointerErrorKind::InvalidEscape { offset });
        }
    }
    Ok(())
}

/// Decodes one raw (escaped) reference token.
fn decode_token(raw: &str) -> Cow<'_, str> {
    if !raw.contains('~') {
        return Cow::Borrowed(raw);
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '~' {
            match chars.next() {
                Some('0') => out.push('~'),
                Some('1') => out.push('/'),
                // Unreachable for a validated pointer; keep the text rather than panic.
                Some(other) => {
                    out.push('~');
                    out.push(other);
                }
                None => out.push('~'),
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

impl JsonPointer {
    /// The pointer to the whole document, `""`.
    pub const fn root() -> Self {
        JsonPointer(String::new())
    }

    /// Validates `s` against `^(/([^/~]|~[01])*)*$`.
    pub fn parse(s: &str) -> Result<Self, PointerError> {
        Self::from_string(s.to_owned())
    }

    fn from_string(s: String) -> Result<Self, PointerError> {
        match check_pointer(&s) {
            Ok(()) => Ok(JsonPointer(s)),
            Err(kind) => Err(PointerError { pointer: s, kind }),
        }
    }

    /// The encoded pointer text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Consumes the pointer, returning its encoded text.
    pub fn into_string(self) -> String {
        self.0
    }

    /// Whether this is `""`, the whole document.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// The number of reference tokens (`0` for the root).
    pub fn len(&self) -> usize {
        self.0.bytes().filter(|&b| b == b'/').count()
    }

    /// Whether the pointer has no tokens (same as [`is_root`](Self::is_root)).
    pub fn is_empty(&self) -> bool {
        self.is_root()
    }

    /// The decoded reference tokens (`~1` → `/`, `~0` → `~`), borrowed when nothing
    /// needed decoding.
    pub fn tokens(&self) -> Tokens<'_> {
        Tokens::of(&self.0)
    }

    /// Appends one (unencoded) reference token.
    ///
    /// ```
    /// use agui_core::patch::JsonPointer;
    ///
    /// let mut p = JsonPointer::root();
    /// p.push("a/b");
    /// p.push("~");
    /// assert_eq!(p.as_str(), "/a~1b/~0");
    /// ```
    pub fn push(&mut self, token: &str) {
        self.0.reserve(token.len() + 1);
        self.0.push('/');
        for c in token.chars() {
            match c {
                '~' => self.0.push_str("~0"),
                '/' => self.0.push_str("~1"),
                c => self.0.push(c),
            }
        }
    }

    /// Splits into the encoded parent pointer and the encoded last token.
    fn split_last(&self) -> Option<(&str, &str)> {
        let i = self.0.rfind('/')?;
        Some((&self.0[..i], &self.0[i + 1..]))
    }

    /// Whether `self` is a proper prefix of `other`, token-wise.
    fn is_proper_prefix_of(&self, other: &JsonPointer) -> bool {
        other.0.len() > self.0.len()
            && other.0.starts_with(&self.0)
            && other.0.as_bytes()[self.0.len()] == b'/'
    }

    /// Whether the pointer holds a token the reference bans: `__proto__`, or `prototype`
    /// directly after `constructor`.
    fn has_banned_token(&self) -> bool {
        // Cheap pre-check: both banned forms contain "proto" undecoded (escapes only ever
        // replace '~' and '/').
        if !self.0.contains("proto") {
            return false;
        }
        let mut previous: Option<Cow<'_, str>> = None;
        for token in self.tokens() {
            if token == "__proto__"
                || (token == "prototype" && previous.as_deref() == Some("constructor"))
            {
                return true;
            }
            previous = Some(token);
        }
        false
    }
}

impl fmt::Display for JsonPointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for JsonPointer {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl FromStr for JsonPointer {
    type Err = PointerError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl TryFrom<String> for JsonPointer {
    type Error = PointerError;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        Self::from_string(s)
    }
}

impl TryFrom<&str> for JsonPointer {
    type Error = PointerError;

    fn try_from(s: &str) -> Result<Self, Self::Error> {
        Self::parse(s)
    }
}

impl From<JsonPointer> for String {
    fn from(p: JsonPointer) -> String {
        p.0
    }
}

impl Serialize for JsonPointer {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for JsonPointer {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PointerVisitor;

        impl Visitor<'_> for PointerVisitor {
            type Value = JsonPointer;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON Pointer string")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<JsonPointer, E> {
                JsonPointer::parse(v).map_err(E::custom)
            }

            fn visit_string<E: de::Error>(self, v: String) -> Result<JsonPointer, E> {
                JsonPointer::from_string(v).map_err(E::custom)
            }
        }

        deserializer.deserialize_str(PointerVisitor)
    }
}

/// Iterator over the decoded reference tokens of a [`JsonPointer`].
#[derive(Clone, Debug)]
pub struct Tokens<'a> {
    /// What follows the next token's leading `/`; `None` once exhausted.
    rest: Option<&'a str>,
}

impl<'a> Tokens<'a> {
    fn of(encoded: &'a str) -> Self {
        Tokens {
            rest: encoded.strip_prefix('/'),
        }
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = Cow<'a, str>;

    fn next(&mut self) -> Option<Cow<'a, str>> {
        let rest = self.rest?;
        let raw = match rest.find('/') {
            Some(i) => {
                self.rest = Some(&rest[i + 1..]);
                &rest[..i]
            }
            None => {
                self.rest = None;
                rest
            }
        };
        Some(decode_token(raw))
    }
}

// ---------------------------------------------------------------------------------------
// Operations
// ---------------------------------------------------------------------------------------

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
/// use agui_core::patch::PatchOp;
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
        extra: Map<String, Value>,
    },
    /// Remove the value at `path`.
    Remove {
        /// Target location.
        path: JsonPointer,
        /// Members the operation does not define.
        extra: Map<String, Value>,
    },
    /// Replace the existing value at `path` with `value`.
    Replace {
        /// Target location.
        path: JsonPointer,
        /// The replacement.
        value: Value,
        /// Members the operation does not define.
        extra: Map<String, Value>,
    },
    /// Remove the value at `from` and add it at `path`.
    Move {
        /// Source location.
        from: JsonPointer,
        /// Target location.
        path: JsonPointer,
        /// Members the operation does not define.
        extra: Map<String, Value>,
    },
    /// Add a copy of the value at `from` at `path`.
    Copy {
        /// Source location.
        from: JsonPointer,
        /// Target location.
        path: JsonPointer,
        /// Members the operation does not define.
        extra: Map<String, Value>,
    },
    /// Fail unless the value at `path` equals `value`.
    Test {
        /// Target location.
        path: JsonPointer,
        /// The expected value.
        value: Value,
        /// Members the operation does not define.
        extra: Map<String, Value>,
    },
}

/// A JSON Patch document: the operations, applied in order.
pub type JsonPatch = Vec<PatchOp>;

/// The six operation names, in RFC order.
const OP_NAMES: [&str; 6] = ["add", "remove", "replace", "move", "copy", "test"];

impl PatchOp {
    /// An `add` operation without extra members.
    pub fn add(path: JsonPointer, value: Value) -> Self {
        PatchOp::Add {
            path,
            value,
            extra: Map::new(),
        }
    }

    /// A `remove` operation without extra members.
    pub fn remove(path: JsonPointer) -> Self {
        PatchOp::Remove {
            path,
            extra: Map::new(),
        }
    }

    /// A `replace` operation without extra members.
    pub fn replace(path: JsonPointer, value: Value) -> Self {
        PatchOp::Replace {
            path,
            value,
            extra: Map::new(),
        }
    }

    /// A `move` operation without extra members.
    pub fn move_from(from: JsonPointer, path: JsonPointer) -> Self {
        PatchOp::Move {
            from,
            path,
            extra: Map::new(),
        }
    }

    /// A `copy` operation without extra members.
    pub fn copy_from(from: JsonPointer, path: JsonPointer) -> Self {
        PatchOp::Copy {
            from,
            path,
            extra: Map::new(),
        }
    }

    /// A `test` operation without extra members.
    pub fn test(path: JsonPointer, value: Value) -> Self {
        PatchOp::Test {
            path,
            value,
            extra: Map::new(),
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
    pub fn extra_mut(&mut self) -> &mut Map<String, Value> {
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
    /// use agui_core::patch::PatchOp;
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
    fn is_typed_member(&self, key: &str) -> bool {
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
enum Parsed {
    Known(PatchOp),
    Unknown(Option<Value>),
}

/// Member names of an operation object, recognised without allocating.
enum Key {
    Op,
    Path,
    From,
    Value,
    Other(String),
}

impl Key {
    fn known(s: &str) -> Option<Key> {
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
fn describe(v: &Value) -> &'static str {
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
fn pointer_member<E: de::Error>(
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

fn value_member<E: de::Error>(op: &str, raw: Option<Value>) -> Result<Value, E> {
    raw.ok_or_else(|| {
        E::custom(format_args!(
            "`{op}` operation is missing the `value` member"
        ))
    })
}

struct OpVisitor;

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
        let mut extra = Map::new();
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
/// use agui_core::patch::LenientPatch;
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
struct LenientOp;

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
/// use agui_core::patch::parse_patch_lenient;
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

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

/// A patch that could not be applied: which operation failed and why. The document is
/// unchanged.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub struct PatchError {
    /// Index of the failing operation in the patch.
    pub index: usize,
    /// Its name (`"replace"`, ...).
    pub op: &'static str,
    /// Its `path`.
    pub path: JsonPointer,
    /// Its `from`, for `move` and `copy`.
    pub from: Option<JsonPointer>,
    /// Why it failed.
    pub kind: PatchErrorKind,
}

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn show(p: &JsonPointer) -> &str {
            if p.is_root() { "\"\"" } else { p.as_str() }
        }
        write!(f, "operation {} ({} ", self.index, self.op)?;
        if let Some(from) = &self.from {
            write!(f, "{} -> ", show(from))?;
        }
        write!(f, "{}): {}", show(&self.path), self.kind)
    }
}

/// Why an operation failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PatchErrorKind {
    /// The target (or, for `add`, `move` and `copy`, its parent) does not exist.
    #[error("path not found")]
    PathNotFound,
    /// The `from` location of `move`/`copy` does not exist.
    #[error("`from` location not found")]
    FromNotFound,
    /// A token addressing an array element is not `-`, `0` or digits without a leading
    /// zero.
    #[error("invalid array index {token:?}")]
    InvalidArrayIndex {
        /// The decoded token.
        token: String,
    },
    /// `add` at an array index greater than the array's length.
    #[error("array index {index} is out of bounds (length {len})")]
    IndexOutOfBounds {
        /// The requested index (saturated at `usize::MAX`).
        index: usize,
        /// The array's length.
        len: usize,
    },
    /// A `test` found a different value (or none).
    #[error("test failed: the value differs")]
    TestFailed,
    /// `move` from a location into one of its own children.
    #[error("cannot move a value into one of its own children")]
    MoveIntoOwnChild,
    /// A `__proto__` token, or `prototype` right after `constructor`.
    #[error("`__proto__` and `constructor/prototype` tokens are not allowed")]
    BannedToken,
    /// A non-root operation on a `null` document.
    #[error("the document is null")]
    NullDocument,
    /// A non-root operation the reference rejects on a scalar document.
    #[error("the document is a scalar")]
    ScalarDocument,
}

// ---------------------------------------------------------------------------------------
// Application
// ---------------------------------------------------------------------------------------

/// Applies `ops` to `doc` in place, atomically.
///
/// On failure `doc` is restored exactly (object key order included) and the error names
/// the failing operation. See the [module documentation](self) for the semantics.
///
/// # Examples
///
/// ```
/// use agui_core::patch::{apply_patch, JsonPatch};
/// use serde_json::json;
///
/// let mut doc = json!({"a": 1, "l": [1, 2]});
/// let ok: JsonPatch = serde_json::from_value(json!([
///     {"op": "replace", "path": "/a", "value": 2},
///     {"op": "add", "path": "/l/-", "value": 3},
/// ]))
/// .unwrap();
/// apply_patch(&mut doc, &ok).unwrap();
/// assert_eq!(doc, json!({"a": 2, "l": [1, 2, 3]}));
///
/// let bad: JsonPatch = serde_json::from_value(json!([
///     {"op": "remove", "path": "/a"},
///     {"op": "replace", "path": "/missing/x", "value": 0},
/// ]))
/// .unwrap();
/// let err = apply_patch(&mut doc, &bad).unwrap_err();
/// assert_eq!(err.to_string(), "operation 1 (replace /missing/x): path not found");
/// assert_eq!(doc, json!({"a": 2, "l": [1, 2, 3]})); // untouched
/// ```
pub fn apply_patch(doc: &mut Value, ops: &[PatchOp]) -> Result<(), PatchError> {
    run(doc, ops, |_, op| op.value().cloned().unwrap_or(Value::Null))
}

/// Like [`apply_patch`], but moves the operations' values into the document instead of
/// cloning them.
pub fn apply_patch_owned(doc: &mut Value, mut ops: JsonPatch) -> Result<(), PatchError> {
    let mut values: Vec<Value> = ops
        .iter_mut()
        .map(|op| match op {
            PatchOp::Add { value, .. } | PatchOp::Replace { value, .. } => mem::take(value),
            _ => Value::Null,
        })
        .collect();
    run(doc, &ops, |index, _| mem::take(&mut values[index]))
}

/// Applies `ops` to a copy of `doc` and returns it; `doc` is never changed.
pub fn apply_patch_to(doc: &Value, ops: &[PatchOp]) -> Result<Value, PatchError> {
    let mut copy = doc.clone();
    apply_patch(&mut copy, ops)?;
    Ok(copy)
}

/// How to undo one change. `at` is the location the change was made at; replaying the
/// log backwards resolves each `at` in exactly the document the change produced.
struct Undo<'p> {
    at: &'p JsonPointer,
    action: UndoAction,
}

enum UndoAction {
    /// The whole document was replaced; this is the old one.
    RestoreRoot(Value),
    /// A member was inserted (at the end).
    RemoveMember,
    /// A member's value was replaced; this is the old value.
    RestoreMember(Value),
    /// A member was removed from this position. `None` when the value went on to a new
    /// location (a `move`): undoing that insertion supplies it.
    ReinsertMember(usize, Option<Value>),
    /// An element was inserted at this index.
    RemoveElement(usize),
    /// An element was replaced; this is the old value.
    RestoreElement(usize, Value),
    /// An element was removed from this index (`None` as for `ReinsertMember`).
    ReinsertElement(usize, Option<Value>),
}

fn run<'p>(
    doc: &mut Value,
    ops: &'p [PatchOp],
    mut value_of: impl FnMut(usize, &'p PatchOp) -> Value,
) -> Result<(), PatchError> {
    let mut log: Vec<Undo<'p>> = Vec::new();
    for (index, op) in ops.iter().enumerate() {
        if let Err(kind) = apply_op(doc, op, || value_of(index, op), &mut log) {
            rollback(doc, log);
            return Err(PatchError {
                index,
                op: op.op(),
                path: op.path().clone(),
                from: op.from().cloned(),
                kind,
            });
        }
    }
    Ok(())
}

/// A failed lookup while walking a pointer.
enum Miss {
    NotFound,
    BadIndex(String),
}

impl Miss {
    fn on_path(self) -> PatchErrorKind {
        match self {
            Miss::NotFound => PatchErrorKind::PathNotFound,
            Miss::BadIndex(token) => PatchErrorKind::InvalidArrayIndex { token },
        }
    }
}

/// An array reference token.
enum Index {
    /// `-`: past the last element.
    End,
    /// A valid index (saturated at `usize::MAX`).
    At(usize),
}

fn array_index(token: &str) -> Result<Index, Miss> {
    if token == "-" {
        return Ok(Index::End);
    }
    let bytes = token.as_bytes();
    let valid = !bytes.is_empty()
        && bytes.iter().all(u8::is_ascii_digit)
        && (bytes.len() == 1 || bytes[0] != b'0');
    if !valid {
        return Err(Miss::BadIndex(token.to_owned()));
    }
    let index = bytes.iter().try_fold(0usize, |acc, &b| {
        acc.checked_mul(10)?.checked_add(usize::from(b - b'0'))
    });
    Ok(Index::At(index.unwrap_or(usize::MAX)))
}

/// An existing element's index: `-` and out-of-range indexes do not exist.
fn existing_index(token: &str, len: usize) -> Result<usize, Miss> {
    match array_index(token)? {
        Index::At(i) if i < len => Ok(i),
        _ => Err(Miss::NotFound),
    }
}

fn walk<'v>(mut cur: &'v Value, tokens: Tokens<'_>) -> Result<&'v Value, Miss> {
    for token in tokens {
        cur = match cur {
            Value::Object(map) => map.get(&*token).ok_or(Miss::NotFound)?,
            Value::Array(items) => &items[existing_index(&token, items.len())?],
            _ => return Err(Miss::NotFound),
        };
    }
    Ok(cur)
}

fn walk_mut<'v>(mut cur: &'v mut Value, tokens: Tokens<'_>) -> Result<&'v mut Value, Miss> {
    for token in tokens {
        cur = match cur {
            Value::Object(map) => map.get_mut(&*token).ok_or(Miss::NotFound)?,
            Value::Array(items) => {
                let i = existing_index(&token, items.len())?;
                &mut items[i]
            }
            _ => return Err(Miss::NotFound),
        };
    }
    Ok(cur)
}

/// The container holding the location `ptr` (non-root) and the location's decoded last
/// token.
fn parent_mut<'v, 'p>(
    doc: &'v mut Value,
    ptr: &'p JsonPointer,
) -> Result<(&'v mut Value, Cow<'p, str>), Miss> {
    let (parent, last) = ptr.split_last().ok_or(Miss::NotFound)?;
    Ok((walk_mut(doc, Tokens::of(parent))?, decode_token(last)))
}

/// What to do when an insertion index is past the end of an array.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Bounds {
    /// Fail (`add`).
    Strict,
    /// Append (`move`/`copy` targets, as in the reference).
    Clamp,
}

/// Inserts at `ptr` (non-root) with `add` semantics, returning how to undo it.
fn insert_at(
    doc: &mut Value,
    ptr: &JsonPointer,
    bounds: Bounds,
    value: impl FnOnce() -> Value,
) -> Result<UndoAction, PatchErrorKind> {
    let (parent, last) = parent_mut(doc, ptr).map_err(Miss::on_path)?;
    match parent {
        Value::Object(map) => match map.get_mut(&*last) {
            Some(slot) => Ok(UndoAction::RestoreMember(mem::replace(slot, value()))),
            None => {
                map.insert(last.into_owned(), value());
                Ok(UndoAction::RemoveMember)
            }
        },
        Value::Array(items) => {
            let len = items.len();
            let index = match array_index(&last).map_err(Miss::on_path)? {
                Index::End => len,
                Index::At(i) if i <= len => i,
                Index::At(_) if bounds == Bounds::Clamp => len,
                Index::At(index) => return Err(PatchErrorKind::IndexOutOfBounds { index, len }),
            };
            items.insert(index, value());
            Ok(UndoAction::RemoveElement(index))
        }
        _ => Err(PatchErrorKind::PathNotFound),
    }
}

/// Checks, without changing anything, that [`insert_at`] could insert at `ptr`
/// (non-root) in the document as it is, array bounds aside.
fn check_insert_target(doc: &Value, ptr: &JsonPointer) -> Result<(), PatchErrorKind> {
    let (parent, last) = ptr.split_last().ok_or(PatchErrorKind::PathNotFound)?;
    match walk(doc, Tokens::of(parent)).map_err(Miss::on_path)? {
        Value::Object(_) => Ok(()),
        Value::Array(_) => array_index(&decode_token(last))
            .map(drop)
            .map_err(Miss::on_path),
        _ => Err(PatchErrorKind::PathNotFound),
    }
}

/// Replaces the existing value at `ptr` (non-root), returning how to undo it.
fn replace_at(
    doc: &mut Value,
    ptr: &JsonPointer,
    value: impl FnOnce() -> Value,
) -> Result<UndoAction, PatchErrorKind> {
    let (parent, last) = parent_mut(doc, ptr).map_err(Miss::on_path)?;
    match parent {
        Value::Object(map) => match map.get_mut(&*last) {
            Some(slot) => Ok(UndoAction::RestoreMember(mem::replace(slot, value()))),
            None => Err(PatchErrorKind::PathNotFound),
        },
        Value::Array(items) => {
            let i = existing_index(&last, items.len()).map_err(Miss::on_path)?;
            Ok(UndoAction::RestoreElement(
                i,
                mem::replace(&mut items[i], value()),
            ))
        }
        _ => Err(PatchErrorKind::PathNotFound),
    }
}

/// Removes the value at `ptr` (non-root), returning it and where it was.
fn remove_at(doc: &mut Value, ptr: &JsonPointer) -> Result<(Value, RemovedFrom), Miss> {
    let (parent, last) = parent_mut(doc, ptr)?;
    match parent {
        Value::Object(map) => {
            // serde_json's map does not expose an entry's index; find it first so that an
            // undo can put the member back where it was.
            let pos = map.keys().position(|k| *k == *last).ok_or(Miss::NotFound)?;
            let value = map.shift_remove(&*last).ok_or(Miss::NotFound)?;
            Ok((value, RemovedFrom::Member(pos)))
        }
        Value::Array(items) => {
            let i = existing_index(&last, items.len())?;
            Ok((items.remove(i), RemovedFrom::Element(i)))
        }
        _ => Err(Miss::NotFound),
    }
}

enum RemovedFrom {
    Member(usize),
    Element(usize),
}

impl RemovedFrom {
    fn undo(self, value: Option<Value>) -> UndoAction {
        match self {
            RemovedFrom::Member(pos) => UndoAction::ReinsertMember(pos, value),
            RemovedFrom::Element(i) => UndoAction::ReinsertElement(i, value),
        }
    }
}

/// JavaScript truthiness of a scalar.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// The reference's outcome for a non-root operation on a scalar document. Nothing is ever
/// changed; see the module documentation.
fn scalar_document(doc: &Value, op: &PatchOp) -> Result<(), PatchErrorKind> {
    if op.path().len() > 1 {
        return Err(PatchErrorKind::ScalarDocument);
    }
    let falsy = !truthy(doc);
    let ok = match op {
        PatchOp::Add { .. } => true,
        PatchOp::Remove { .. } | PatchOp::Replace { .. } => falsy,
        PatchOp::Test { .. } => false,
        PatchOp::Move { from, .. } | PatchOp::Copy { from, .. } => match from.len() {
            0 => true,
            1 => falsy,
            _ => false,
        },
    };
    if ok {
        Ok(())
    } else {
        Err(PatchErrorKind::ScalarDocument)
    }
}

fn apply_op<'p>(
    doc: &mut Value,
    op: &'p PatchOp,
    value: impl FnOnce() -> Value,
    log: &mut Vec<Undo<'p>>,
) -> Result<(), PatchErrorKind> {
    let path = op.path();
    if path.has_banned_token() || op.from().is_some_and(JsonPointer::has_banned_token) {
        return Err(PatchErrorKind::BannedToken);
    }
    if path.is_root() {
        return apply_at_root(doc, op, value, log);
    }
    match doc {
        Value::Null => return Err(PatchErrorKind::NullDocument),
        Value::Bool(_) | Value::Number(_) | Value::String(_) => return scalar_document(doc, op),
        Value::Array(_) | Value::Object(_) => {}
    }
    let action = match op {
        PatchOp::Add { .. } => insert_at(doc, path, Bounds::Strict, value)?,
        PatchOp::Replace { .. } => replace_at(doc, path, value)?,
        PatchOp::Remove { .. } => {
            let (old, from) = remove_at(doc, path).map_err(Miss::on_path)?;
            from.undo(Some(old))
        }
        PatchOp::Test { value, .. } => {
            let found = walk(doc, path.tokens()).map_err(Miss::on_path)?;
            return if json_equal(found, value) {
                Ok(())
            } else {
                Err(PatchErrorKind::TestFailed)
            };
        }
        PatchOp::Copy { from, .. } => {
            let copied = walk(doc, from.tokens())
                .map_err(|_| PatchErrorKind::FromNotFound)?
                .clone();
            insert_at(doc, path, Bounds::Clamp, || copied)?
        }
        PatchOp::Move { from, .. } => {
            if from.is_root() {
                // The whole document into one of its own children.
                return Err(PatchErrorKind::MoveIntoOwnChild);
            }
            // Like the reference: check the target against the document as it is, then
            // remove, then insert at the target as it resolves after the removal (an index
            // shift can make `/0/1` valid after moving `/0` away).
            check_insert_target(doc, path)?;
            let (moved, removed_from) =
                remove_at(doc, from).map_err(|_| PatchErrorKind::FromNotFound)?;
            let mut moved = Some(moved);
            let result = insert_at(doc, path, Bounds::Clamp, || {
                moved.take().unwrap_or_default()
            })
            .map_err(|kind| {
                if from.is_proper_prefix_of(path) {
                    PatchErrorKind::MoveIntoOwnChild
                } else {
                    kind
                }
            });
            // If the insertion failed, the value is still here: the undo entry keeps it.
            log.push(Undo {
                at: from,
                action: removed_from.undo(moved),
            });
            result?
        }
    };
    log.push(Undo { at: path, action });
    Ok(())
}

fn apply_at_root<'p>(
    doc: &mut Value,
    op: &'p PatchOp,
    value: impl FnOnce() -> Value,
    log: &mut Vec<Undo<'p>>,
) -> Result<(), PatchErrorKind> {
    let path = op.path();
    let new_root = match op {
        PatchOp::Add { .. } | PatchOp::Replace { .. } => value(),
        PatchOp::Remove { .. } => Value::Null,
        PatchOp::Test { value, .. } => {
            return if json_equal(doc, value) {
                Ok(())
            } else {
                Err(PatchErrorKind::TestFailed)
            };
        }
        PatchOp::Copy { from, .. } => walk(doc, from.tokens())
            .map_err(|_| PatchErrorKind::FromNotFound)?
            .clone(),
        PatchOp::Move { from, .. } => {
            if from.is_root() {
                return Ok(());
            }
            // Take the value out (the remainder of the old document is what the undo log
            // restores), rather than cloning it.
            let (moved, removed_from) =
                remove_at(doc, from).map_err(|_| PatchErrorKind::FromNotFound)?;
            log.push(Undo {
                at: from,
                action: removed_from.undo(None),
            });
            moved
        }
    };
    let old = mem::replace(doc, new_root);
    log.push(Undo {
        at: path,
        action: UndoAction::RestoreRoot(old),
    });
    Ok(())
}

/// Replays `log` backwards. Each action displaces the value currently at its location
/// into `carry`, which a following `Reinsert*(_, None)` (the other half of a `move`)
/// consumes.
fn rollback(doc: &mut Value, log: Vec<Undo<'_>>) {
    let mut carry: Option<Value> = None;
    for Undo { at, action } in log.into_iter().rev() {
        if let UndoAction::RestoreRoot(old) = action {
            carry = Some(mem::replace(doc, old));
            continue;
        }
        let Ok((parent, last)) = parent_mut(doc, at) else {
            debug_assert!(false, "rollback: {at} no longer resolves");
            continue;
        };
        let replayed = match (parent, action) {
            (Value::Object(map), UndoAction::RemoveMember) => {
                carry = map.shift_remove(&*last);
                carry.is_some()
            }
            (Value::Object(map), UndoAction::RestoreMember(old)) => match map.get_mut(&*last) {
                Some(slot) => {
                    carry = Some(mem::replace(slot, old));
                    true
                }
                None => false,
            },
            (Value::Object(map), UndoAction::ReinsertMember(pos, value)) => {
                match value.or_else(|| carry.take()) {
                    Some(value) if pos <= map.len() => {
                        map.shift_insert(pos, last.into_owned(), value);
                        true
                    }
                    _ => false,
                }
            }
            (Value::Array(items), UndoAction::RemoveElement(i)) if i < items.len() => {
                carry = Some(items.remove(i));
                true
            }
            (Value::Array(items), UndoAction::RestoreElement(i, old)) if i < items.len() => {
                carry = Some(mem::replace(&mut items[i], old));
                true
            }
            (Value::Array(items), UndoAction::ReinsertElement(i, value)) if i <= items.len() => {
                match value.or_else(|| carry.take()) {
                    Some(value) => {
                        items.insert(i, value);
                        true
                    }
                    None => false,
                }
            }
            _ => false,
        };
        debug_assert!(replayed, "rollback: could not undo a change at {at}");
    }
}

/// JSON equality as the reference's `test` sees it: numbers by value (`1` equals `1.0`,
/// compared as IEEE doubles like JavaScript), objects regardless of key order.
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ptr(s: &str) -> JsonPointer {
        JsonPointer::parse(s).unwrap()
    }

    fn patch(v: Value) -> JsonPatch {
        serde_json::from_value(v).unwrap()
    }

    /// Applies `ops` to `doc`; on failure also checks the document is byte-identical.
    fn apply(doc: Value, ops: Value) -> Result<Value, PatchError> {
        let ops = patch(ops);
        let before = serde_json::to_string(&doc).unwrap();
        let mut doc = doc;
        match apply_patch(&mut doc, &ops) {
            Ok(()) => Ok(doc),
            Err(e) => {
                assert_eq!(
                    serde_json::to_string(&doc).unwrap(),
                    before,
                    "not rolled back"
                );
                Err(e)
            }
        }
    }

    fn kind(doc: Value, ops: Value) -> PatchErrorKind {
        apply(doc, ops).unwrap_err().kind
    }

    // --- pointers -----------------------------------------------------------------------

    #[test]
    fn pointer_validation() {
        for ok in [
            "",
            "/",
            "//",
            "/a",
            "/a/b",
            "/~0",
            "/~1",
            "/~01",
            "/a~1b~0c",
            "/ü/日本",
        ] {
            assert!(JsonPointer::parse(ok).is_ok(), "{ok:?}");
        }
        let e = JsonPointer::parse("a").unwrap_err();
        assert_eq!(e.kind, PointerErrorKind::MissingLeadingSlash);
        assert_eq!(
            e.to_string(),
            "invalid JSON Pointer \"a\": a non-empty pointer must start with '/'"
        );
        for (bad, offset) in [("/~", 1), ("/~2", 1), ("/a~", 2), ("/a/~x", 3), ("/~0~", 3)] {
            assert_eq!(
                JsonPointer::parse(bad).unwrap_err().kind,
                PointerErrorKind::InvalidEscape { offset },
                "{bad:?}"
            );
        }
    }

    #[test]
    fn pointer_tokens() {
        let toks = |s: &str| ptr(s).tokens().map(Cow::into_owned).collect::<Vec<_>>();
        assert!(toks("").is_empty());
        assert_eq!(toks("/"), [""]);
        assert_eq!(toks("//"), ["", ""]);
        assert_eq!(toks("/a~1b/~0/~01/c"), ["a/b", "~", "~1", "c"]);
        assert!(matches!(
            ptr("/abc").tokens().next(),
            Some(Cow::Borrowed("abc"))
        ));
        assert_eq!(ptr("/a/b/c").len(), 3);
        assert!(ptr("").is_root() && ptr("").is_empty() && !ptr("/").is_root());
    }

    #[test]
    fn pointer_push_round_trips() {
        let mut p = JsonPointer::root();
        for t in ["a/b", "~", "", "~1"] {
            p.push(t);
        }
        assert_eq!(p.as_str(), "/a~1b/~0//~01");
        assert_eq!(p.tokens().collect::<Vec<_>>(), ["a/b", "~", "", "~1"]);
        assert_eq!(JsonPointer::parse(p.as_str()).unwrap(), p);
    }

    #[test]
    fn pointer_serde() {
        let p: JsonPointer = serde_json::from_str("\"/a~1b\"").unwrap();
        assert_eq!(p.to_string(), "/a~1b");
        assert_eq!(serde_json::to_string(&p).unwrap(), "\"/a~1b\"");
        let err = serde_json::from_str::<JsonPointer>("\"x/y\"").unwrap_err();
        assert!(err.to_string().contains("\"x/y\""), "{err}");
        assert!(serde_json::from_str::<JsonPointer>("5").is_err());
        assert_eq!("/q".parse::<JsonPointer>().unwrap().as_str(), "/q");
        assert_eq!(String::from(ptr("/z")), "/z");
    }

    // --- parsing ------------------------------------------------------------------------

    #[test]
    fn parses_every_op() {
        let ops = patch(json!([
            {"op": "add", "path": "/a", "value": 1},
            {"op": "remove", "path": "/a"},
            {"op": "replace", "path": "/a", "value": null},
            {"op": "move", "from": "/a", "path": "/b"},
            {"op": "copy", "from": "/a", "path": "/b"},
            {"op": "test", "path": "/a", "value": [1]},
        ]));
        let names: Vec<_> = ops.iter().map(PatchOp::op).collect();
        assert_eq!(names, OP_NAMES);
        assert_eq!(ops[2].value(), Some(&Value::Null));
        assert_eq!(ops[3].from(), Some(&ptr("/a")));
        assert_eq!(ops[3].path(), &ptr("/b"));
        assert_eq!(ops[1].value(), None);
        assert_eq!(ops[0], PatchOp::add(ptr("/a"), json!(1)));
        assert_eq!(ops[4], PatchOp::copy_from(ptr("/a"), ptr("/b")));
    }

    #[test]
    fn extra_members_are_kept_and_written_back() {
        let raw = json!({"xyz": 1, "value": "v", "path": "/p", "op": "remove", "from": "/f"});
        let op: PatchOp = serde_json::from_value(raw).unwrap();
        assert_eq!(
            op.extra(),
            json!({"xyz": 1, "value": "v", "from": "/f"})
                .as_object()
                .unwrap()
        );
        assert_eq!(
            serde_json::to_string(&op).unwrap(),
            r#"{"op":"remove","path":"/p","xyz":1,"from":"/f","value":"v"}"#
        );
        // An extra `from` on add is not validated as a pointer.
        let op: PatchOp =
            serde_json::from_value(json!({"op": "add", "path": "/a", "value": 1, "from": 7}))
                .unwrap();
        assert_eq!(op.extra()["from"], json!(7));
        // Canonical order: op, from, path, value, extras.
        let op: PatchOp =
            serde_json::from_value(json!({"path": "/b", "k": true, "from": "/a", "op": "move"}))
                .unwrap();
        assert_eq!(
            serde_json::to_string(&op).unwrap(),
            r#"{"op":"move","from":"/a","path":"/b","k":true}"#
        );
        // Extras shadowing a typed member are not written twice.
        let mut op = PatchOp::test(ptr("/a"), json!(1));
        op.extra_mut().insert("value".into(), json!(2));
        op.extra_mut().insert("op".into(), json!("add"));
        assert_eq!(
            serde_json::to_string(&op).unwrap(),
            r#"{"op":"test","path":"/a","value":1}"#
        );
    }

    #[test]
    fn shape_errors_name_the_member() {
        let err = |v: Value| {
            serde_json::from_value::<PatchOp>(v)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err(json!({"op": "add", "value": 1})),
            "`add` operation is missing the `path` member"
        );
        assert_eq!(
            err(json!({"op": "copy", "path": "/a"})),
            "`copy` operation is missing the `from` member"
        );
        assert_eq!(
            err(json!({"op": "move", "path": ""})),
            "`move` operation is missing the `from` member"
        );
        for op in ["add", "replace", "test"] {
            assert_eq!(
                err(json!({"op": op, "path": "/a"})),
                format!("`{op}` operation is missing the `value` member")
            );
        }
        assert_eq!(
            err(json!({"op": "add", "path": null, "value": 1})),
            "invalid `path`: expected a JSON Pointer string, found null"
        );
        assert_eq!(
            err(json!({"op": "add", "path": "a", "value": 1})),
            "invalid `path`: invalid JSON Pointer \"a\": a non-empty pointer must start with '/'"
        );
        assert!(
            err(json!({"op": "move", "from": "/~2", "path": "/a"})).starts_with("invalid `from`")
        );
        assert_eq!(err(json!({"path": "/a"})), "missing field `op`");
        assert!(
            err(json!({"op": "spam", "path": "/a"}))
                .starts_with("unknown JSON Patch operation \"spam\"")
        );
        assert_eq!(
            err(json!({"op": 3})),
            "invalid `op`: expected a string, found a number"
        );
        assert!(err(json!(["op", "add"])).contains("expected a JSON Patch operation object"));
        // `remove` needs no value; `value: null` is present.
        assert!(serde_json::from_value::<PatchOp>(json!({"op": "remove", "path": "/a"})).is_ok());
        assert!(
            serde_json::from_value::<PatchOp>(json!({"op": "test", "path": "", "value": null}))
                .is_ok()
        );
    }

    #[test]
    fn repeated_members_keep_the_last_value() {
        let op: PatchOp = serde_json::from_str(
            r#"{"op":"remove","path":"/a","op":"add","value":1,"path":"/b","x":1,"x":2}"#,
        )
        .unwrap();
        assert_eq!(op.op(), "add");
        assert_eq!(op.path().as_str(), "/b");
        assert_eq!(op.extra()["x"], json!(2));
    }

    #[test]
    fn lenient_patch_drops_unknown_ops_only() {
        let text = r#"[{"op":"add","path":"/a","value":1},{"op":"spam","path":"/a"},
            {"path":"/x"},{"op":null},{"op":"test","path":"/a","value":1}]"#;
        let p: LenientPatch = serde_json::from_str(text).unwrap();
        assert_eq!(
            p.ops.iter().map(PatchOp::op).collect::<Vec<_>>(),
            ["add", "test"]
        );
        let dropped: Vec<_> = p.dropped.iter().map(|d| (d.index, d.op.clone())).collect();
        assert_eq!(
            dropped,
            [(1, Some(json!("spam"))), (2, None), (3, Some(Value::Null))]
        );
        assert_eq!(
            p.dropped[0].to_string(),
            "operation 1 has unknown `op` \"spam\""
        );
        assert_eq!(p.dropped[1].to_string(), "operation 2 has no `op`");
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            r#"[{"op":"add","path":"/a","value":1},{"op":"test","path":"/a","value":1}]"#
        );
        // Other defects stay fatal, even next to an unknown op.
        for bad in [
            r#"[{"op":"spam"},{"op":"add","path":"a","value":1}]"#,
            r#"[{"op":"add","path":"/a"}]"#,
            r#"[{"op":"spam"}, 5]"#,
            r#"{"op":"add"}"#,
        ] {
            assert!(serde_json::from_str::<LenientPatch>(bad).is_err(), "{bad}");
        }
        assert_eq!(
            PatchOp::deserialize_lenient(&json!({"op": "copy", "from": "/a", "path": "/b"}))
                .unwrap()
                .map(|op| op.op()),
            Some("copy")
        );
    }

    #[test]
    fn value_helpers_name_the_index() {
        let raw = [
            json!({"op": "add", "path": "/a", "value": 1}),
            json!({"op": "x"}),
        ];
        let err = parse_patch(&raw).unwrap_err();
        assert_eq!(err.index, 1);
        assert!(
            err.to_string()
                .starts_with("operation 1: unknown JSON Patch operation")
        );
        let lenient = parse_patch_lenient(&raw).unwrap();
        assert_eq!((lenient.ops.len(), lenient.dropped[0].index), (1, 1));
        let err = parse_patch_lenient(&[json!({"op": "x"}), json!("add")]).unwrap_err();
        assert_eq!(err.index, 1);
    }

    // --- application --------------------------------------------------------------------

    #[test]
    fn missing_locations_fail() {
        let doc = json!({"a": {"b": 1}, "l": [1, 2]});
        assert_eq!(
            kind(
                doc.clone(),
                json!([{"op": "replace", "path": "/x", "value": 1}])
            ),
            PatchErrorKind::PathNotFound
        );
        assert_eq!(
            kind(doc.clone(), json!([{"op": "remove", "path": "/a/x"}])),
            PatchErrorKind::PathNotFound
        );
        assert_eq!(
            kind(
                doc.clone(),
                json!([{"op": "test", "path": "/x", "value": null}])
            ),
            PatchErrorKind::PathNotFound
        );
        assert_eq!(
            kind(
                doc.clone(),
                json!([{"op": "move", "from": "/x", "path": "/y"}])
            ),
            PatchErrorKind::FromNotFound
        );
        assert_eq!(
            kind(
                doc.clone(),
                json!([{"op": "copy", "from": "/l/2", "path": "/y"}])
            ),
            PatchErrorKind::FromNotFound
        );
        assert_eq!(
            kind(
                doc.clone(),
                json!([{"op": "add", "path": "/x/y", "value": 1}])
            ),
            PatchErrorKind::PathNotFound
        );
        // Through a scalar or null member.
        assert_eq!(
            kind(
                json!({"a": 5}),
                json!([{"op": "add", "path": "/a/b", "value": 1}])
            ),
            PatchErrorKind::PathNotFound
        );
        assert_eq!(
            kind(
                json!({"a": null}),
                json!([{"op": "add", "path": "/a/b", "value": 1}])
            ),
            PatchErrorKind::PathNotFound
        );
    }

    #[test]
    fn add_semantics() {
        // Existing member: replaced in place (position kept).
        let out = apply(
            json!({"a": 1, "b": 2}),
            json!([{"op": "add", "path": "/a", "value": 9}]),
        )
        .unwrap();
        assert_eq!(serde_json::to_string(&out).unwrap(), r#"{"a":9,"b":2}"#);
        // New member: appended.
        let out = apply(
            json!({"b": 1}),
            json!([{"op": "add", "path": "/a", "value": 2}]),
        )
        .unwrap();
        assert_eq!(serde_json::to_string(&out).unwrap(), r#"{"b":1,"a":2}"#);
        let doc = json!({"l": [1, 2]});
        assert_eq!(
            apply(
                doc.clone(),
                json!([{"op": "add", "path": "/l/2", "value": 3}])
            )
            .unwrap(),
            json!({"l": [1, 2, 3]})
        );
        assert_eq!(
            apply(
                doc.clone(),
                json!([{"op": "add", "path": "/l/-", "value": 3}])
            )
            .unwrap(),
            json!({"l": [1, 2, 3]})
        );
        assert_eq!(
            apply(
                doc.clone(),
                json!([{"op": "add", "path": "/l/0", "value": 0}])
            )
            .unwrap(),
            json!({"l": [0, 1, 2]})
        );
        assert_eq!(
            kind(
                doc.clone(),
                json!([{"op": "add", "path": "/l/3", "value": 3}])
            ),
            PatchErrorKind::IndexOutOfBounds { index: 3, len: 2 }
        );
        assert_eq!(
            kind(
                doc.clone(),
                json!([{"op": "add", "path": "/l/99999999999999999999999", "value": 3}])
            ),
            PatchErrorKind::IndexOutOfBounds {
                index: usize::MAX,
                len: 2
            }
        );
        // A member named "-" on an object is just a member.
        assert_eq!(
            apply(json!({}), json!([{"op": "add", "path": "/-", "value": 1}])).unwrap(),
            json!({"-": 1})
        );
    }

    #[test]
    fn dash_only_works_for_add() {
        let doc = json!({"l": [1, 2]});
        for op in [
            json!({"op": "replace", "path": "/l/-", "value": 0}),
            json!({"op": "remove", "path": "/l/-"}),
            json!({"op": "test", "path": "/l/-", "value": 2}),
            json!({"op": "copy", "from": "/l/-", "path": "/x"}),
            json!({"op": "move", "from": "/l/-", "path": "/x"}),
            json!({"op": "add", "path": "/l/-/x", "value": 0}),
        ] {
            assert!(apply(doc.clone(), json!([op])).is_err(), "{op}");
        }
    }

    #[test]
    fn replace_and_remove_bounds() {
        let doc = json!({"l": [1, 2]});
        assert_eq!(
            kind(
                doc.clone(),
                json!([{"op": "replace", "path": "/l/2", "value": 0}])
            ),
            PatchErrorKind::PathNotFound
        );
        assert_eq!(
            kind(doc.clone(), json!([{"op": "remove", "path": "/l/2"}])),
            PatchErrorKind::PathNotFound
        );
        assert_eq!(
            apply(
                doc.clone(),
                json!([{"op": "replace", "path": "/l/1", "value": 0}])
            )
            .unwrap(),
            json!({"l": [1, 0]})
        );
        assert_eq!(
            apply(doc, json!([{"op": "remove", "path": "/l/0"}])).unwrap(),
            json!({"l": [2]})
        );
    }

    #[test]
    fn bad_array_indexes_fail() {
        let doc = json!({"l": [[1], 2]});
        for token in ["01", "00", "1e0", "x", "", " 1", "+1", "-1", "0x1"] {
            let p = format!("/l/{token}");
            for op in [
                json!({"op": "add", "path": p, "value": 0}),
                json!({"op": "replace", "path": p, "value": 0}),
                json!({"op": "remove", "path": p}),
                json!({"op": "test", "path": p, "value": 2}),
                json!({"op": "copy", "from": p, "path": "/x"}),
                json!({"op": "move", "from": p, "path": "/x"}),
                json!({"op": "copy", "from": "/l/1", "path": p}),
                json!({"op": "test", "path": format!("{p}/0"), "value": 1}),
            ] {
                assert!(apply(doc.clone(), json!([op])).is_err(), "{op}");
            }
        }
        assert_eq!(
            kind(doc, json!([{"op": "replace", "path": "/l/01", "value": 0}])),
            PatchErrorKind::InvalidArrayIndex { token: "01".into() }
        );
    }

    #[test]
    fn escapes_are_decoded() {
        let doc = json!({"a/b": {"~c": 1}});
        assert!(
            apply(
                doc.clone(),
                json!([{"op": "test", "path": "/a~1b/~0c", "value": 1}])
            )
            .is_ok()
        );
        let out = apply(doc, json!([{"op": "add", "path": "/~1~0", "value": 2}])).unwrap();
        assert_eq!(out["/~"], json!(2));
    }

    #[test]
    fn test_uses_json_equality() {
        let doc = json!({"n": 1, "f": 1.0, "o": {"a": 1, "b": [1, {"c": null}]}, "neg": -0.0});
        let ok = |p: &str, v: Value| {
            apply(doc.clone(), json!([{"op": "test", "path": p, "value": v}])).is_ok()
        };
        assert!(ok("/n", json!(1.0)));
        assert!(ok("/f", json!(1)));
        assert!(ok("/neg", json!(0)));
        assert!(ok("/o", json!({"b": [1.0, {"c": null}], "a": 1})));
        assert!(!ok("/o", json!({"a": 1})));
        assert!(!ok("/o", json!({"a": 1, "b": [1, {"c": null}], "d": 1})));
        assert!(!ok("/n", json!("1")));
        assert!(!ok("/o/b", json!([{"c": null}, 1])));
        assert!(!ok("/o/b/1/c", json!(false)));
        assert!(ok("", doc.clone()));
        assert_eq!(
            kind(
                doc.clone(),
                json!([{"op": "test", "path": "/n", "value": 2}])
            ),
            PatchErrorKind::TestFailed
        );
        assert!(json_equal(&json!(u64::MAX), &json!(u64::MAX as f64)));
        assert!(!json_equal(&json!(-1), &json!(1)));
    }

    #[test]
    fn move_and_copy() {
        let doc = json!({"a": {"x": 1}, "b": 2, "l": [1, 2, 3]});
        let out = apply(
            doc.clone(),
            json!([{"op": "move", "from": "/a", "path": "/c"}]),
        )
        .unwrap();
        assert_eq!(
            serde_json::to_string(&out).unwrap(),
            r#"{"b":2,"l":[1,2,3],"c":{"x":1}}"#
        );
        let out = apply(
            doc.clone(),
            json!([{"op": "move", "from": "/b", "path": "/b"}]),
        )
        .unwrap();
        assert_eq!(out, doc);
        let out = apply(
            doc.clone(),
            json!([{"op": "move", "from": "/l/0", "path": "/l/2"}]),
        )
        .unwrap();
        assert_eq!(out["l"], json!([2, 3, 1]));
        let out = apply(
            doc.clone(),
            json!([{"op": "move", "from": "/a/x", "path": "/a"}]),
        )
        .unwrap();
        assert_eq!(out["a"], json!(1));
        let out = apply(
            doc.clone(),
            json!([{"op": "copy", "from": "/a", "path": "/l/1"}]),
        )
        .unwrap();
        assert_eq!(out["l"], json!([1, {"x": 1}, 2, 3]));
        // The copy is independent of its source.
        let out = apply(
            doc.clone(),
            json!([{"op": "copy", "from": "/a", "path": "/c"}, {"op": "replace", "path": "/c/x", "value": 5}]),
        )
        .unwrap();
        assert_eq!(
            (out["a"]["x"].clone(), out["c"]["x"].clone()),
            (json!(1), json!(5))
        );
        // Copy the whole document into a member of itself.
        let out = apply(
            json!({"a": 1}),
            json!([{"op": "copy", "from": "", "path": "/b"}]),
        )
        .unwrap();
        assert_eq!(out, json!({"a": 1, "b": {"a": 1}}));
        // Reference quirk: a move/copy target beyond the end appends.
        let out = apply(
            doc.clone(),
            json!([{"op": "copy", "from": "/b", "path": "/l/9"}]),
        )
        .unwrap();
        assert_eq!(out["l"], json!([1, 2, 3, 2]));
        let out = apply(doc, json!([{"op": "move", "from": "/l/0", "path": "/l/3"}])).unwrap();
        assert_eq!(out["l"], json!([2, 3, 1]));
    }

    #[test]
    fn move_into_own_child_fails() {
        let doc = json!({"a": {"b": {}}, "l": [[1], 2]});
        for (from, path) in [
            ("/a", "/a/c"),
            ("/a", "/a/b/c"),
            ("", "/x"),
            ("/l/0", "/l/0/0"),
        ] {
            assert_eq!(
                kind(
                    doc.clone(),
                    json!([{"op": "move", "from": from, "path": path}])
                ),
                PatchErrorKind::MoveIntoOwnChild,
                "{from} -> {path}"
            );
        }
        // Not a child: a sibling sharing a prefix of the name.
        assert!(
            apply(
                json!({"a": 1}),
                json!([{"op": "move", "from": "/a", "path": "/ab"}])
            )
            .is_ok()
        );
        // Reference quirk: after removing /0 the path /0/1 points into the former /1.
        let out = apply(
            json!([[], [1, 2]]),
            json!([{"op": "move", "from": "/0", "path": "/0/1"}]),
        )
        .unwrap();
        assert_eq!(out, json!([[1, [], 2]]));
    }

    #[test]
    fn root_operations() {
        let doc = json!({"a": [1], "b": 2});
        assert_eq!(
            apply(
                doc.clone(),
                json!([{"op": "add", "path": "", "value": [1]}])
            )
            .unwrap(),
            json!([1])
        );
        assert_eq!(
            apply(
                doc.clone(),
                json!([{"op": "replace", "path": "", "value": 3}])
            )
            .unwrap(),
            json!(3)
        );
        assert_eq!(
            apply(doc.clone(), json!([{"op": "remove", "path": ""}])).unwrap(),
            Value::Null
        );
        assert_eq!(
            apply(
                doc.clone(),
                json!([{"op": "move", "from": "/a", "path": ""}])
            )
            .unwrap(),
            json!([1])
        );
        assert_eq!(
            apply(
                doc.clone(),
                json!([{"op": "copy", "from": "/a/0", "path": ""}])
            )
            .unwrap(),
            json!(1)
        );
        assert_eq!(
            apply(doc.clone(), json!([{"op": "move", "from": "", "path": ""}])).unwrap(),
            doc
        );
        assert_eq!(
            apply(doc.clone(), json!([{"op": "copy", "from": "", "path": ""}])).unwrap(),
            doc
        );
        assert_eq!(
            kind(
                doc.clone(),
                json!([{"op": "move", "from": "/x", "path": ""}])
            ),
            PatchErrorKind::FromNotFound
        );
        // Root ops work on any document, null and scalars included.
        assert_eq!(
            apply(Value::Null, json!([{"op": "add", "path": "", "value": {}}])).unwrap(),
            json!({})
        );
        assert_eq!(
            apply(
                json!(5),
                json!([{"op": "replace", "path": "", "value": "x"}])
            )
            .unwrap(),
            json!("x")
        );
        assert!(
            apply(
                Value::Null,
                json!([{"op": "test", "path": "", "value": null}])
            )
            .is_ok()
        );
        // Later operations see the new root.
        let out = apply(
            json!(null),
            json!([{"op": "add", "path": "", "value": {}}, {"op": "add", "path": "/a", "value": 1}]),
        )
        .unwrap();
        assert_eq!(out, json!({"a": 1}));
    }

    #[test]
    fn banned_tokens() {
        let doc = json!({"a": {"constructor": {"prototype": 1}}, "prototype": 2, "constructor": 3});
        for op in [
            json!({"op": "add", "path": "/__proto__", "value": {}}),
            json!({"op": "add", "path": "/a/__proto__/x", "value": 1}),
            json!({"op": "test", "path": "/__proto__", "value": {}}),
            json!({"op": "copy", "from": "/__proto__", "path": "/x"}),
            json!({"op": "move", "from": "/a", "path": "/__proto__"}),
            json!({"op": "replace", "path": "/a/constructor/prototype", "value": 1}),
            json!({"op": "test", "path": "/a/constructor/prototype", "value": 1}),
            json!({"op": "add", "path": "/__pr~1oto__", "value": 1}),
        ] {
            let expected = if op["path"] == "/__pr~1oto__" {
                None // "__pr/oto__" is an ordinary name
            } else {
                Some(PatchErrorKind::BannedToken)
            };
            assert_eq!(
                apply(doc.clone(), json!([op])).err().map(|e| e.kind),
                expected,
                "{op}"
            );
        }
        // `constructor` and `prototype` on their own are ordinary member names.
        for op in [
            json!({"op": "replace", "path": "/constructor", "value": 0}),
            json!({"op": "remove", "path": "/prototype"}),
            json!({"op": "test", "path": "/a/constructor", "value": {"prototype": 1}}),
            json!({"op": "add", "path": "/x/constructor", "value": 0}),
        ] {
            let result = apply(
                json!({"constructor": 3, "prototype": 2, "a": {"constructor": {"prototype": 1}}, "x": {}}),
                json!([op]),
            );
            assert!(result.is_ok(), "{op}: {result:?}");
        }
    }

    #[test]
    fn null_document_fails_non_root_ops() {
        for op in [
            json!({"op": "add", "path": "/a", "value": 1}),
            json!({"op": "remove", "path": "/a"}),
            json!({"op": "test", "path": "/a", "value": null}),
            json!({"op": "copy", "from": "", "path": "/a"}),
        ] {
            assert_eq!(kind(Value::Null, json!([op])), PatchErrorKind::NullDocument);
        }
    }

    #[test]
    fn scalar_document_quirks() {
        let ok = |doc: Value, op: Value| -> bool {
            match apply(doc.clone(), json!([op])) {
                Ok(out) => {
                    assert_eq!(out, doc, "a scalar document never changes");
                    true
                }
                Err(e) => {
                    assert_eq!(e.kind, PatchErrorKind::ScalarDocument);
                    false
                }
            }
        };
        let truthy = [json!(5), json!(-1.5), json!("s"), json!(true)];
        let falsy = [json!(0), json!(0.0), json!(""), json!(false)];
        for (docs, is_truthy) in [(truthy, true), (falsy, false)] {
            for doc in docs {
                let d = || doc.clone();
                // One token: add succeeds; replace/remove only on a falsy scalar.
                assert!(ok(d(), json!({"op": "add", "path": "/a", "value": 1})));
                assert_eq!(
                    ok(d(), json!({"op": "replace", "path": "/a", "value": 1})),
                    !is_truthy
                );
                assert_eq!(ok(d(), json!({"op": "remove", "path": "/a"})), !is_truthy);
                assert!(!ok(d(), json!({"op": "test", "path": "/a", "value": 1})));
                assert!(ok(d(), json!({"op": "move", "from": "", "path": "/a"})));
                assert!(ok(d(), json!({"op": "copy", "from": "", "path": "/a"})));
                assert_eq!(
                    ok(d(), json!({"op": "move", "from": "/b", "path": "/a"})),
                    !is_truthy
                );
                assert_eq!(
                    ok(d(), json!({"op": "copy", "from": "/b", "path": "/a"})),
                    !is_truthy
                );
                assert!(!ok(
                    d(),
                    json!({"op": "copy", "from": "/b/c", "path": "/a"})
                ));
                // Two or more tokens: always fails.
                assert!(!ok(d(), json!({"op": "add", "path": "/a/b", "value": 1})));
                assert!(!ok(d(), json!({"op": "remove", "path": "/a/b"})));
            }
        }
        // A whole patch of harmless operations on a scalar state succeeds unchanged.
        assert_eq!(
            apply(json!(7), json!([{"op": "add", "path": "/a", "value": 1}, {"op": "add", "path": "/b", "value": 2}])).unwrap(),
            json!(7)
        );
    }

    #[test]
    fn empty_patch_is_a_no_op() {
        assert_eq!(apply(json!({"a": 1}), json!([])).unwrap(), json!({"a": 1}));
        assert_eq!(apply(Value::Null, json!([])).unwrap(), Value::Null);
    }

    #[test]
    fn object_order_is_kept_on_remove() {
        let out = apply(
            json!({"a": 1, "b": 2, "c": 3}),
            json!([{"op": "remove", "path": "/b"}]),
        )
        .unwrap();
        assert_eq!(serde_json::to_string(&out).unwrap(), r#"{"a":1,"c":3}"#);
    }

    #[test]
    fn failing_third_op_leaves_the_document_byte_identical() {
        let doc = json!({"z": 1, "a": {"m": [1, 2, {"k": "v"}], "b": true}, "c": null, "d": "s"});
        let before = serde_json::to_string(&doc).unwrap();
        let prefixes = [
            json!([{"op": "remove", "path": "/a/b"}, {"op": "add", "path": "/new", "value": 1}]),
            json!([{"op": "replace", "path": "/z", "value": 2}, {"op": "remove", "path": "/a/m/0"}]),
            json!([{"op": "move", "from": "/z", "path": "/a/z"}, {"op": "move", "from": "/a/m/2", "path": "/a/m/0"}]),
            json!([{"op": "move", "from": "/c", "path": "/d"}, {"op": "copy", "from": "/a", "path": "/a/m/1"}]),
            json!([{"op": "add", "path": "/a/m/-", "value": 3}, {"op": "add", "path": "/a/b", "value": false}]),
            json!([{"op": "remove", "path": "/z"}, {"op": "replace", "path": "", "value": [1]}]),
            json!([{"op": "move", "from": "/a", "path": ""}, {"op": "remove", "path": "/m"}]),
            json!([{"op": "remove", "path": ""}, {"op": "add", "path": "", "value": {"q": 1}}]),
            json!([{"op": "move", "from": "/z", "path": "/z"}, {"op": "move", "from": "/a/m/0", "path": "/a/m/-"}]),
        ];
        let failing = [
            json!({"op": "replace", "path": "/a/b/missing", "value": 0}),
            json!({"op": "test", "path": "", "value": null}),
            json!({"op": "move", "from": "/nope", "path": "/x"}),
        ];
        for prefix in &prefixes {
            for third in &failing {
                let mut ops = prefix.as_array().unwrap().clone();
                ops.push(third.clone());
                let ops = patch(Value::Array(ops));
                let mut d = doc.clone();
                let err = apply_patch(&mut d, &ops).unwrap_err();
                assert_eq!(err.index, 2);
                assert_eq!(
                    serde_json::to_string(&d).unwrap(),
                    before,
                    "{prefix} + {third}"
                );
                // The same holds for the owning variant.
                let mut d = doc.clone();
                assert!(apply_patch_owned(&mut d, ops.clone()).is_err());
                assert_eq!(serde_json::to_string(&d).unwrap(), before);
            }
        }
    }

    #[test]
    fn failed_move_insertion_puts_the_value_back() {
        // The removal succeeds, the insertion fails: the moved value must return.
        let doc = json!({"a": 1, "b": {"c": 2}, "l": [[0], 5]});
        for (from, path) in [("/a", "/b/c/d"), ("/l/0", "/l/0/-"), ("/b", "/l/x")] {
            let before = serde_json::to_string(&doc).unwrap();
            let mut d = doc.clone();
            let ops = vec![PatchOp::move_from(ptr(from), ptr(path))];
            assert!(apply_patch(&mut d, &ops).is_err(), "{from} -> {path}");
            assert_eq!(serde_json::to_string(&d).unwrap(), before);
        }
    }

    #[test]
    fn error_messages() {
        let e = apply(
            json!({"a": {}}),
            json!([{"op": "test", "path": "/a", "value": {}}, {"op": "add", "path": "/b", "value": 1},
                   {"op": "replace", "path": "/a/b", "value": 1}]),
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "operation 2 (replace /a/b): path not found");
        assert_eq!((e.index, e.op, e.path.as_str()), (2, "replace", "/a/b"));
        let e = apply(json!({}), json!([{"op": "move", "from": "/x", "path": ""}])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "operation 0 (move /x -> \"\"): `from` location not found"
        );
        let e = apply(json!([]), json!([{"op": "add", "path": "/1", "value": 1}])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "operation 0 (add /1): array index 1 is out of bounds (length 0)"
        );
    }

    #[test]
    fn owned_and_copying_variants_agree() {
        let doc = json!({"a": [1, 2], "b": {"c": "d"}});
        let ops = patch(json!([
            {"op": "add", "path": "/a/1", "value": {"big": [1, 2, 3]}},
            {"op": "replace", "path": "/b/c", "value": "e"},
            {"op": "copy", "from": "/a/1", "path": "/f"},
            {"op": "test", "path": "/f/big/2", "value": 3},
        ]));
        let expected = apply_patch_to(&doc, &ops).unwrap();
        assert_eq!(
            doc,
            json!({"a": [1, 2], "b": {"c": "d"}}),
            "apply_patch_to leaves its input"
        );
        let mut owned = doc.clone();
        apply_patch_owned(&mut owned, ops).unwrap();
        assert_eq!(owned, expected);
        assert_eq!(expected["f"], json!({"big": [1, 2, 3]}));
    }

    /// Small deterministic generator (xorshift) for the randomized rollback check.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn value(&mut self, depth: usize) -> Value {
            match self.below(if depth > 2 { 4 } else { 7 }) {
                0 => Value::Null,
                1 => json!(self.below(3)),
                2 => json!(["", "s", "t"][self.below(3)]),
                3 => json!(self.below(2) == 0),
                4 | 5 => {
                    let mut m = Map::new();
                    for _ in 0..self.below(4) {
                        m.insert(
                            ["a", "b", "c", "d"][self.below(4)].into(),
                            self.value(depth + 1),
                        );
                    }
                    Value::Object(m)
                }
                _ => Value::Array((0..self.below(4)).map(|_| self.value(depth + 1)).collect()),
            }
        }
        fn pointer(&mut self, doc: &Value) -> JsonPointer {
            let mut p = JsonPointer::root();
            let mut cur = Some(doc);
            for _ in 0..self.below(4) {
                let token = match cur {
                    Some(Value::Object(m)) if !m.is_empty() && self.below(4) > 0 => {
                        m.keys().nth(self.below(m.len())).unwrap().clone()
                    }
                    Some(Value::Array(a)) if self.below(5) > 0 => {
                        (self.below(a.len() + 2)).to_string()
                    }
                    _ => ["a", "b", "-", "0", "1", "01"][self.below(6)].to_owned(),
                };
                cur = cur.and_then(|c| match c {
                    Value::Object(m) => m.get(&token),
                    Value::Array(a) => token.parse::<usize>().ok().and_then(|i| a.get(i)),
                    _ => None,
                });
                p.push(&token);
            }
            p
        }
        fn op(&mut self, doc: &Value) -> PatchOp {
            let path = self.pointer(doc);
            match self.below(6) {
                0 => PatchOp::add(path, self.value(1)),
                1 => PatchOp::remove(path),
                2 => PatchOp::replace(path, self.value(1)),
                3 => PatchOp::move_from(self.pointer(doc), path),
                4 => PatchOp::copy_from(self.pointer(doc), path),
                _ => {
                    let value = match self.below(2) {
                        0 => walk(doc, path.tokens())
                            .ok()
                            .cloned()
                            .unwrap_or(Value::Null),
                        _ => self.value(1),
                    };
                    PatchOp::test(path, value)
                }
            }
        }
    }

    #[test]
    fn randomized_patches_are_atomic() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let (mut ok, mut failed) = (0, 0);
        for _ in 0..20_000 {
            let doc = match rng.below(10) {
                0 => rng.value(3),
                _ => {
                    let mut m = Map::new();
                    for k in ["a", "b", "c"] {
                        m.insert(k.into(), rng.value(1));
                    }
                    Value::Object(m)
                }
            };
            let ops: JsonPatch = (0..1 + rng.below(5)).map(|_| rng.op(&doc)).collect();
            let before = serde_json::to_string(&doc).unwrap();
            let mut d = doc.clone();
            match apply_patch(&mut d, &ops) {
                Ok(()) => ok += 1,
                Err(e) => {
                    failed += 1;
                    assert_eq!(serde_json::to_string(&d).unwrap(), before, "{ops:?}");
                    // Everything before the failing operation applies on its own.
                    let mut prefix = doc.clone();
                    apply_patch(&mut prefix, &ops[..e.index]).unwrap();
                    assert!(apply_patch(&mut prefix, &ops[e.index..=e.index]).is_err());
                }
            }
        }
        assert!(ok > 1_000 && failed > 1_000, "ok {ok}, failed {failed}");
    }
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
