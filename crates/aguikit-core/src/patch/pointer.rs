//! RFC 6901 JSON Pointers: parsing, reference tokens, and the checks the reference applies to them.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use serde::de::{self, Deserializer, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};

/// An RFC 6901 JSON Pointer: `""` (the whole document) or a sequence of `/`-prefixed
/// tokens in which `~` is only ever followed by `0` (a literal `~`) or `1` (a literal `/`).
///
/// The pointer is stored in its encoded form; [`tokens`](Self::tokens) yields the decoded
/// reference tokens.
///
/// # Examples
///
/// ```
/// use aguikit_core::patch::JsonPointer;
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

pub(super) fn check_pointer(s: &str) -> Result<(), PointerErrorKind> {
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
pub(super) fn decode_token(raw: &str) -> Cow<'_, str> {
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

    pub(super) fn from_string(s: String) -> Result<Self, PointerError> {
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
    /// use aguikit_core::patch::JsonPointer;
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
    pub(super) fn split_last(&self) -> Option<(&str, &str)> {
        let i = self.0.rfind('/')?;
        Some((&self.0[..i], &self.0[i + 1..]))
    }

    /// Whether `self` is a proper prefix of `other`, token-wise.
    pub(super) fn is_proper_prefix_of(&self, other: &JsonPointer) -> bool {
        other.0.len() > self.0.len()
            && other.0.starts_with(&self.0)
            && other.0.as_bytes()[self.0.len()] == b'/'
    }

    /// Whether the pointer holds a token the reference bans: `__proto__`, or `prototype`
    /// directly after `constructor`.
    pub(super) fn has_banned_token(&self) -> bool {
        // Cheap pre-check: both banned forms contain "proto" undecoded (escapes only ever
        // replace '~' and '/').
        let b = self.0.as_bytes();
        if !memchr::memchr_iter(b'p', b).any(|i| b[i..].starts_with(b"proto")) {
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
    pub(super) fn of(encoded: &'a str) -> Self {
        Tokens {
            rest: encoded.strip_prefix('/'),
        }
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = Cow<'a, str>;

    fn next(&mut self) -> Option<Cow<'a, str>> {
        let rest = self.rest?;
        // Tokens are short: one pass finds the token's end and whether it has an escape.
        let bytes = rest.as_bytes();
        let mut end = bytes.len();
        let mut escaped = false;
        for (i, &b) in bytes.iter().enumerate() {
            if b == b'/' {
                end = i;
                break;
            }
            escaped |= b == b'~';
        }
        let raw = &rest[..end];
        self.rest = rest.get(end + 1..);
        Some(if escaped {
            decode_token(raw)
        } else {
            Cow::Borrowed(raw)
        })
    }
}
