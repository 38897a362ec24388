//! The events' own JSON writer: the bytes `serde_json` writes for an [`Event`], written
//! without going through serde's data model.
//!
//! Each event's writer is generated from its field table (`macros.rs`): the `type` member
//! and every `,"wireName":` key are string constants, so only the values are formatted. A
//! string that needs no escaping (no `"`, `\` or control character, the common case for
//! ids, keys and text deltas) is copied as is, any other string is escaped by `serde_json`;
//! JSON values and patch operations are walked here, floats and the rarer typed fields
//! (messages, input, content, roles, outcomes) are written by `serde_json`, so the bytes are
//! identical to `serde_json::to_vec(&event)` (the tests compare them on every event of the
//! conformance corpus and on generated events).
//!
//! [`Event`]: super::Event

use crate::patch::{Items, Members, Node, PatchOp, View};
use serde::Serialize;
use serde_json::{Map, Value};

/// The members of an event after its `type`, each as `,"wireName":value` (generated from
/// the event's field table).
pub(crate) trait WriteFields {
    /// Appends the members, in declaration order, leaving out absent optionals.
    fn write_fields(&self, out: &mut Vec<u8>);
}

/// A field value the event writer can write.
pub(crate) trait JsonField {
    /// Whether the member is left out (an absent optional).
    #[inline]
    fn absent(&self) -> bool {
        false
    }
    /// Appends the value's JSON.
    fn write(&self, out: &mut Vec<u8>);
}

impl JsonField for String {
    #[inline]
    fn write(&self, out: &mut Vec<u8>) {
        write_str(out, self);
    }
}

impl JsonField for bool {
    #[inline]
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(if *self { b"true" } else { b"false" });
    }
}

impl JsonField for i64 {
    #[inline]
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(itoa::Buffer::new().format(*self).as_bytes());
    }
}

impl<T: JsonField> JsonField for Option<T> {
    #[inline]
    fn absent(&self) -> bool {
        self.is_none()
    }
    #[inline]
    fn write(&self, out: &mut Vec<u8>) {
        if let Some(v) = self {
            v.write(out);
        }
    }
}

impl<T: JsonField> JsonField for Box<T> {
    #[inline]
    fn write(&self, out: &mut Vec<u8>) {
        (**self).write(out);
    }
}

/// The types written by `serde_json` itself (their own `Serialize`).
macro_rules! via_serde {
    ($($t:ty),* $(,)?) => {$(
        impl JsonField for $t {
            #[inline]
            fn write(&self, out: &mut Vec<u8>) {
                write_serde(out, self);
            }
        }
    )*};
}

impl JsonField for Value {
    #[inline]
    fn write(&self, out: &mut Vec<u8>) {
        write_value(out, self);
    }
}

impl JsonField for Map<String, Value> {
    #[inline]
    fn write(&self, out: &mut Vec<u8>) {
        write_object(out, self);
    }
}

/// An operation as its `Serialize` writes it: `op`, `from`, `path`, `value`, then the
/// members the operation does not define.
impl JsonField for PatchOp {
    fn write(&self, out: &mut Vec<u8>) {
        // The op names need no escaping: each operation's start is one constant.
        out.extend_from_slice(match self {
            PatchOp::Add { .. } => b"{\"op\":\"add\"",
            PatchOp::Remove { .. } => b"{\"op\":\"remove\"",
            PatchOp::Replace { .. } => b"{\"op\":\"replace\"",
            PatchOp::Move { .. } => b"{\"op\":\"move\"",
            PatchOp::Copy { .. } => b"{\"op\":\"copy\"",
            PatchOp::Test { .. } => b"{\"op\":\"test\"",
        });
        if let Some(from) = self.from() {
            write_member(out, b",\"from\":\"", from.as_str(), b"\"");
        }
        write_member(out, b",\"path\":\"", self.path().as_str(), b"\"");
        if let Some(value) = self.value() {
            out.extend_from_slice(b",\"value\":");
            write_value(out, value);
        }
        for (key, value) in self.extra() {
            if !self.is_typed_member(key) {
                write_member(out, b",\"", key, b"\":");
                write_value(out, value);
            }
        }
        out.push(b'}');
    }
}

via_serde!(
    crate::message::Message,
    crate::usage::TokenUsage,
    crate::input::RunAgentInput,
    crate::content::Content,
    super::TextMessageRole,
    super::ToolRole,
    super::ReasoningRole,
    super::EncryptedValueSubtype,
    crate::interrupt::RunOutcome,
    crate::interrupt::SubagentOutcome,
);

impl<T: JsonField> JsonField for Vec<T> {
    #[inline]
    fn write(&self, out: &mut Vec<u8>) {
        out.push(b'[');
        for (i, item) in self.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            item.write(out);
        }
        out.push(b']');
    }
}

/// Writes a JSON value (a `Value` or another [`Node`]) as `serde_json` writes a `Value`
/// (compact; numbers by `serde_json`'s own formatting: integers as integers, floats by the
/// shortest round-trip form).
pub(crate) fn write_value<N: Node>(out: &mut Vec<u8>, value: &N) {
    match value.view() {
        View::Null => out.extend_from_slice(b"null"),
        View::Bool(b) => b.write(out),
        View::Number(n) => {
            if let Some(u) = n.as_u64() {
                out.extend_from_slice(itoa::Buffer::new().format(u).as_bytes());
            } else if let Some(i) = n.as_i64() {
                out.extend_from_slice(itoa::Buffer::new().format(i).as_bytes());
            } else {
                write_serde(out, n);
            }
        }
        View::String(s) => write_str(out, s),
        View::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, item);
            }
            out.push(b']');
        }
        View::Object(map) => write_object(out, map),
    }
}

/// Writes a JSON object, members in the map's order.
fn write_object<N: Node>(out: &mut Vec<u8>, map: &impl Members<N>) {
    if map.len() == 0 {
        out.extend_from_slice(b"{}");
        return;
    }
    let mut open: &[u8] = b"{\"";
    for (key, value) in map.iter() {
        write_member(out, open, key, b"\":");
        open = b",\"";
        write_value(out, value);
    }
    out.push(b'}');
}

/// Writes `head`, then `s` as the contents of a JSON string, then `tail`: `head` ends with
/// the string's opening quote and `tail` starts with its closing one (`,"path":"` and `"`,
/// or `{"` and `":` around a key). A string that needs escaping is written by
/// [`write_str`] between `head` and `tail` without their quotes.
// Always inlined: `head` and `tail` are constants at every call, and their copies then
// compile to stores. Called out of line, each member made three `memcpy` calls; inlining
// took a third off writing a large state snapshot (`benches/codec.rs`).
#[inline(always)]
fn write_member(out: &mut Vec<u8>, head: &[u8], s: &str, tail: &[u8]) {
    let bytes = s.as_bytes();
    if is_plain(bytes) {
        out.reserve(head.len() + bytes.len() + tail.len());
        out.extend_from_slice(head);
        out.extend_from_slice(bytes);
        out.extend_from_slice(tail);
    } else {
        out.extend_from_slice(&head[..head.len() - 1]);
        write_serde(out, s);
        out.extend_from_slice(&tail[1..]);
    }
}

/// Writes `value` as `serde_json` does. These types cannot fail to serialize (every map
/// key is a string and no `Serialize` impl among them returns an error); were one to,
/// what it wrote is removed and `null` takes its place, so the output stays JSON.
#[inline]
pub(crate) fn write_serde<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    let start = out.len();
    if serde_json::to_writer(&mut *out, value).is_err() {
        out.truncate(start);
        out.extend_from_slice(b"null");
    }
}

/// Whether `b` must be escaped in a JSON string (as `serde_json` escapes: the quote, the
/// backslash and the control characters below U+0020).
#[inline(always)]
fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// Whether no byte of `bytes` needs escaping. Tested 16 bytes at a time without an early
/// exit inside a block, so each test compiles to vector code; the last, partial block is
/// tested as the last 16 bytes (overlapping the block before). Shorter strings (most keys,
/// ids and pointers) are tested as two overlapping words, 8 or 4 bytes each: no copy and no
/// loop.
#[inline(always)]
fn is_plain(bytes: &[u8]) -> bool {
    let block_is_plain = |block: &[u8]| !block.iter().fold(false, |acc, &b| acc | needs_escape(b));
    let n = bytes.len();
    if n >= 16 {
        let mut blocks = bytes.chunks_exact(16);
        return blocks.by_ref().all(block_is_plain)
            && (blocks.remainder().is_empty() || block_is_plain(&bytes[n - 16..]));
    }
    if n >= 8 {
        let word = |at: usize| {
            let mut w = [0; 8];
            w.copy_from_slice(&bytes[at..at + 8]);
            u64::from_le_bytes(w)
        };
        word_is_plain(word(0)) && word_is_plain(word(n - 8))
    } else if n >= 4 {
        let mut w = [0; 8];
        w[..4].copy_from_slice(&bytes[..4]);
        w[4..].copy_from_slice(&bytes[n - 4..]);
        word_is_plain(u64::from_le_bytes(w))
    } else {
        !bytes.iter().any(|&b| needs_escape(b))
    }
}

/// Whether no byte of the word `x` needs escaping (below U+0020, the quote, the backslash):
/// the usual bit tricks for "a byte below n" and "a zero byte", which may misplace a hit
/// but never miss or invent one.
#[inline(always)]
fn word_is_plain(x: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below_space = x.wrapping_sub(ONES * 0x20) & !x;
    let zero_byte = |v: u64| v.wrapping_sub(ONES) & !v;
    let quote = zero_byte(x ^ (ONES * u64::from(b'"')));
    let backslash = zero_byte(x ^ (ONES * u64::from(b'\\')));
    (below_space | quote | backslash) & HIGH == 0
}

/// Writes `s` as a JSON string: copied as is when nothing in it needs escaping, otherwise
/// escaped by `serde_json`.
#[inline]
pub(crate) fn write_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    if is_plain(bytes) {
        out.reserve(bytes.len() + 2);
        out.push(b'"');
        out.extend_from_slice(bytes);
        out.push(b'"');
    } else {
        write_serde(out, s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn str_json(s: &str) -> Vec<u8> {
        let mut out = Vec::new();
        write_str(&mut out, s);
        out
    }

    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        let long_plain = "x".repeat(40);
        let long_quote = format!("{}\"{}", "a".repeat(17), "b".repeat(20));
        for s in [
            "",
            "plain",
            "é ü 日本 🙂",
            "a\"b",
            "back\\slash",
            "line\nbreak",
            "tab\tand\rcr",
            "\u{0}\u{1f}\u{7f}",
            "</script>",
            "\u{2028}\u{2029}",
            long_plain.as_str(),
            long_quote.as_str(),
        ] {
            assert_eq!(str_json(s), serde_json::to_vec(s).unwrap(), "{s:?}");
        }
        // Every length across two blocks, plain and with one byte to escape at each end
        // (the padded last block included).
        for len in 0..40 {
            let plain = "p".repeat(len);
            assert_eq!(
                str_json(&plain),
                serde_json::to_vec(&plain).unwrap(),
                "{len}"
            );
            for bad in ["\"", "\\", "\n", "\u{1}"] {
                for s in [format!("{bad}{plain}"), format!("{plain}{bad}")] {
                    assert_eq!(str_json(&s), serde_json::to_vec(&s).unwrap(), "{s:?}");
                }
            }
        }
    }

    #[test]
    fn objects_and_patch_operations_are_written_as_serde_json_writes_them() {
        let value = serde_json::json!({
            "": {}, "plain": [{}, {"a": 1}], "quo\"te": {"back\\slash": null},
            "line\nbreak": {"\u{1}": -2.5, "é": "x\"y"}, "z": {"nested": {"deeper": {}}}
        });
        let mut out = Vec::new();
        write_value(&mut out, &value);
        assert_eq!(out, serde_json::to_vec(&value).unwrap());
        for op in [
            serde_json::json!({"op": "move", "from": "/a\"b", "path": "/c\nd"}),
            serde_json::json!({"op": "copy", "from": "/x", "path": "/y"}),
            serde_json::json!({"op": "add", "path": "", "value": {"k": []}, "x-extra": {"q\"": 1}}),
            serde_json::json!({"op": "remove", "path": "/é/~1"}),
            serde_json::json!({"op": "replace", "path": "/p", "value": "v"}),
            serde_json::json!({"op": "test", "path": "/t", "value": null}),
        ] {
            let parsed: PatchOp = serde_json::from_value(op).unwrap();
            let mut out = Vec::new();
            parsed.write(&mut out);
            assert_eq!(out, serde_json::to_vec(&parsed).unwrap(), "{parsed:?}");
        }
    }

    #[test]
    fn a_byte_to_escape_is_found_at_any_place() {
        // Every length across the word and block paths, every position, every byte that
        // needs escaping, amid plain ASCII and amid multi-byte characters (bytes with the
        // high bit set must not hide or fake a hit).
        let bad: Vec<char> = (0u8..0x20).map(char::from).chain(['"', '\\']).collect();
        for filler in ['p', 'é', '\u{7f}', '~'] {
            for len in 0..40 {
                let plain: String = std::iter::repeat_n(filler, len).collect();
                assert_eq!(str_json(&plain), serde_json::to_vec(&plain).unwrap());
                for at in 0..=len {
                    for &b in &bad {
                        let mut s: String = std::iter::repeat_n(filler, at).collect();
                        s.push(b);
                        s.extend(std::iter::repeat_n(filler, len - at));
                        assert_eq!(str_json(&s), serde_json::to_vec(&s).unwrap(), "{s:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn integers_and_bools() {
        for n in [0i64, -1, i64::MIN, i64::MAX, 1_700_000_000_000] {
            let mut out = Vec::new();
            n.write(&mut out);
            assert_eq!(out, serde_json::to_vec(&n).unwrap());
        }
        let mut out = Vec::new();
        true.write(&mut out);
        false.write(&mut out);
        assert_eq!(out, b"truefalse");
    }

    #[test]
    fn values_are_written_as_serde_json_writes_them() {
        let value = serde_json::json!({
            "n": [0, 1, -1, u64::MAX, i64::MIN, 1.5, -0.0, 2.0, 1e300, 1.0e-7],
            "s": ["", "a\"b", "\u{1}"],
            "k\ney": {"nested": [null, true, false, {}, []]},
        });
        let mut out = Vec::new();
        write_value(&mut out, &value);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            serde_json::to_string(&value).unwrap()
        );
    }

    #[test]
    fn absent_optionals_are_skipped_present_ones_written() {
        assert!(None::<String>.absent());
        assert!(!Some(String::new()).absent());
        let mut out = Vec::new();
        Some(serde_json::Value::Null).write(&mut out);
        assert_eq!(out, b"null");
    }
}
