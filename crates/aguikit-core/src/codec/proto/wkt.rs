//! `google.protobuf.Value`, `Struct` and `ListValue`, written by hand over `serde_json`.
//!
//! prost-types' `Struct` keeps its fields in a `BTreeMap`, which sorts keys; the reference
//! writes an object's properties in JavaScript order (canonical array indices first, in
//! ascending numeric order, then the other keys in insertion order). These types keep
//! `serde_json`'s insertion-ordered maps instead, and the encoder here writes JS order.
//!
//! Decoding follows protobuf merge rules as the reference applies them: a repeated
//! `struct_value`/`list_value` merges (keys overwrite in place, list items append), any
//! other repeated kind replaces (the last one wins, also across different kinds); a field
//! whose wire type does not match its declaration is skipped as unknown; a `Value` with no
//! kind set is "undefined" (an object member holding one is dropped, a list item reads as
//! `null`). Numbers are doubles: integral ones come back as JSON integers, non-finite ones
//! as `null` (what `JSON.stringify` makes of them).

use prost::bytes::{Buf, BufMut};
use prost::encoding::{DecodeContext, WireType, decode_key, decode_varint, skip_field};
use prost::{DecodeError, Message};
use serde_json::{Map, Number, Value};

use super::write::Writer;

/// How deeply JSON arrays and objects may nest inside one `Value` on decode (the same
/// limit `serde_json` applies when parsing JSON text).
pub(crate) const MAX_JSON_DEPTH: u32 = 128;

/// A decoded `google.protobuf.Value`: the JSON value, or `None` when no kind was set.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ProtoValue(pub(crate) Option<Value>);

/// A decoded `google.protobuf.Struct`: a JSON object (see [`ProtoStruct::into_map`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ProtoStruct(pub(crate) Map<String, Value>);

impl ProtoStruct {
    /// The object, in JavaScript property order.
    pub(crate) fn into_map(self) -> Map<String, Value> {
        let mut map = self.0;
        js_order(&mut map);
        map
    }
}

#[allow(deprecated)]
fn error(what: &'static str) -> DecodeError {
    DecodeError::new(what)
}

/// Reads a length prefix and splits off that many bytes.
fn take_len<'a>(buf: &mut &'a [u8]) -> Result<&'a [u8], DecodeError> {
    let len = decode_varint(buf)?;
    if len > buf.len() as u64 {
        return Err(error("buffer underflow"));
    }
    let (head, tail) = buf.split_at(len as usize);
    *buf = tail;
    Ok(head)
}

/// Runs `f` on the next length-delimited payload of `buf` as a contiguous slice.
fn with_payload<B: Buf, T>(
    buf: &mut B,
    f: impl FnOnce(&[u8]) -> Result<T, DecodeError>,
) -> Result<T, DecodeError> {
    let len = decode_varint(buf)?;
    if len > buf.remaining() as u64 {
        return Err(error("buffer underflow"));
    }
    let len = len as usize;
    let out = if buf.chunk().len() >= len {
        f(&buf.chunk()[..len])?
    } else {
        let owned = buf.copy_to_bytes(len);
        return f(&owned);
    };
    buf.advance(len);
    Ok(out)
}

fn read_string(data: &[u8]) -> Result<String, DecodeError> {
    match std::str::from_utf8(data) {
        Ok(s) => Ok(s.to_owned()),
        Err(_) => Err(error("invalid string value: data is not UTF-8 encoded")),
    }
}

/// A JSON number from a protobuf double, as JavaScript would print it: integral values
/// as integers, non-finite values as `null`.
pub(crate) fn number(d: f64) -> Value {
    if !d.is_finite() {
        return Value::Null;
    }
    if d.fract() == 0.0 {
        // Exact in both directions below 2^63 (in magnitude); -0 becomes 0, as JS prints it.
        if d.abs() < 9_223_372_036_854_775_808.0 {
            return Value::Number((d as i64).into());
        }
        if d > 0.0 && d < 18_446_744_073_709_551_616.0 {
            return Value::Number((d as u64).into());
        }
    }
    Number::from_f64(d).map_or(Value::Null, Value::Number)
}

/// Merges one field of a `Value` message into `slot`.
fn merge_value_field<B: Buf>(
    slot: &mut Option<Value>,
    tag: u32,
    wire_type: WireType,
    buf: &mut B,
    ctx: DecodeContext,
    depth: u32,
) -> Result<(), DecodeError> {
    match (tag, wire_type) {
        (1, WireType::Varint) => {
            decode_varint(buf)?;
            *slot = Some(Value::Null);
        }
        (2, WireType::SixtyFourBit) => {
            if buf.remaining() < 8 {
                return Err(error("buffer underflow"));
            }
            *slot = Some(number(buf.get_f64_le()));
        }
        (3, WireType::LengthDelimited) => {
            *slot = Some(Value::String(with_payload(buf, read_string)?));
        }
        (4, WireType::Varint) => {
            *slot = Some(Value::Bool(decode_varint(buf)? != 0));
        }
        (5 | 6, WireType::LengthDelimited) => {
            if depth == 0 {
                return Err(error("JSON value nested too deeply"));
            }
            // A repeated struct_value or list_value merges into the value of its own kind;
            // any other kind before it is replaced.
            let (is_kind, empty): (fn(&Value) -> bool, Value) = match tag {
                5 => (Value::is_object, Value::Object(Map::new())),
                _ => (Value::is_array, Value::Array(Vec::new())),
            };
            if !slot.as_ref().is_some_and(is_kind) {
                *slot = Some(empty);
            }
            with_payload(buf, |data| match slot {
                Some(Value::Object(map)) => merge_struct(map, data, ctx, depth - 1),
                Some(Value::Array(items)) => merge_list(items, data, ctx, depth - 1),
                _ => unreachable!("a struct or list value was just put in the slot"),
            })?;
        }
        _ => skip_field(wire_type, tag, buf, ctx)?,
    }
    Ok(())
}

/// Runs `f` on each field of one message payload: its tag, wire type and the rest of the
/// payload, from which `f` reads the field's value.
fn each_field(
    mut data: &[u8],
    mut f: impl FnMut(u32, WireType, &mut &[u8]) -> Result<(), DecodeError>,
) -> Result<(), DecodeError> {
    while !data.is_empty() {
        let (tag, wire_type) = decode_key(&mut data)?;
        f(tag, wire_type, &mut data)?;
    }
    Ok(())
}

/// Runs `f` on each payload of field 1, the repeated member of `Struct` (its entries) and
/// `ListValue` (its items); other fields are skipped as unknown.
fn each_item(
    data: &[u8],
    ctx: &DecodeContext,
    mut f: impl FnMut(&[u8]) -> Result<(), DecodeError>,
) -> Result<(), DecodeError> {
    each_field(data, |tag, wire_type, data| {
        if tag != 1 || wire_type != WireType::LengthDelimited {
            return skip_field(wire_type, tag, data, ctx.clone());
        }
        f(take_len(data)?)
    })
}

/// Merges the fields of one `Value` payload into `slot`.
fn merge_value(
    slot: &mut Option<Value>,
    data: &[u8],
    ctx: DecodeContext,
    depth: u32,
) -> Result<(), DecodeError> {
    each_field(data, |tag, wire_type, data| {
        merge_value_field(slot, tag, wire_type, data, ctx.clone(), depth)
    })
}

/// Merges one `Struct` payload into `map` (entries overwrite in place, as JS assignment).
fn merge_struct(
    map: &mut Map<String, Value>,
    data: &[u8],
    ctx: DecodeContext,
    depth: u32,
) -> Result<(), DecodeError> {
    each_item(data, &ctx, |entry| {
        merge_entry(map, entry, ctx.clone(), depth)
    })?;
    js_order(map);
    Ok(())
}

/// Reads one `Struct.FieldsEntry` payload into `map`; an entry whose value has no kind is
/// dropped, as the reference drops `undefined` members.
fn merge_entry(
    map: &mut Map<String, Value>,
    entry: &[u8],
    ctx: DecodeContext,
    depth: u32,
) -> Result<(), DecodeError> {
    let mut key = String::new();
    let mut value = None;
    each_field(entry, |tag, wire_type, entry| {
        match (tag, wire_type) {
            (1, WireType::LengthDelimited) => key = read_string(take_len(entry)?)?,
            (2, WireType::LengthDelimited) => {
                merge_value(&mut value, take_len(entry)?, ctx.clone(), depth)?
            }
            _ => skip_field(wire_type, tag, entry, ctx.clone())?,
        }
        Ok(())
    })?;
    if let Some(value) = value {
        map.insert(key, value);
    }
    Ok(())
}

/// Appends the items of one `ListValue` payload to `items` (an unset item reads as null).
fn merge_list(
    items: &mut Vec<Value>,
    data: &[u8],
    ctx: DecodeContext,
    depth: u32,
) -> Result<(), DecodeError> {
    each_item(data, &ctx, |item| {
        let mut value = None;
        merge_value(&mut value, item, ctx.clone(), depth)?;
        items.push(value.unwrap_or(Value::Null));
        Ok(())
    })
}

/// Whether `key` is a canonical array index (`"0"`, `"7"`, `"42"`; at most 2^32 - 2),
/// which JavaScript enumerates before every other key, in ascending numeric order.
pub(crate) fn array_index(key: &str) -> Option<u32> {
    let b = key.as_bytes();
    if b.is_empty() || b.len() > 10 || (b[0] == b'0' && b.len() > 1) {
        return None;
    }
    if !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    key.parse::<u64>()
        .ok()
        .filter(|&n| n < u64::from(u32::MAX))
        .map(|n| n as u32)
}

/// Puts `map` in JavaScript property order (a no-op unless it has array-index keys).
fn js_order(map: &mut Map<String, Value>) {
    if !map.keys().any(|k| array_index(k).is_some()) {
        return;
    }
    let mut indexed = Vec::new();
    let mut rest = Vec::new();
    for (k, v) in std::mem::take(map) {
        match array_index(&k) {
            Some(i) => indexed.push((i, k, v)),
            None => rest.push((k, v)),
        }
    }
    indexed.sort_by_key(|e| e.0);
    map.extend(indexed.into_iter().map(|(_, k, v)| (k, v)));
    map.extend(rest);
}

// ---------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------

/// Writes the fields of a `google.protobuf.Value` holding `v`.
pub(crate) fn write_value(w: &mut Writer<'_>, v: &Value) {
    match v {
        Value::Null => w.varint_field(1, 0),
        Value::Bool(b) => w.varint_field(4, u64::from(*b)),
        Value::Number(n) => w.double_field(2, n.as_f64().unwrap_or(f64::NAN)),
        Value::String(s) => w.str_field(3, s),
        Value::Array(items) => w.message(6, |w| {
            for item in items {
                w.message(1, |w| write_value(w, item));
            }
        }),
        Value::Object(map) => w.message(5, |w| write_struct(w, map)),
    }
}

/// Writes the entries of a `google.protobuf.Struct` holding `map`, in JS property order.
pub(crate) fn write_struct(w: &mut Writer<'_>, map: &Map<String, Value>) {
    let entry = |w: &mut Writer<'_>, k: &str, v: &Value| {
        w.message(1, |w| {
            w.str_implicit(1, k);
            w.message(2, |w| write_value(w, v));
        });
    };
    if !map.keys().any(|k| array_index(k).is_some()) {
        for (k, v) in map {
            entry(w, k, v);
        }
        return;
    }
    let mut indexed: Vec<(u32, &String, &Value)> = map
        .iter()
        .filter_map(|(k, v)| array_index(k).map(|i| (i, k, v)))
        .collect();
    indexed.sort_by_key(|e| e.0);
    for (_, k, v) in indexed {
        entry(w, k, v);
    }
    for (k, v) in map.iter().filter(|(k, _)| array_index(k).is_none()) {
        entry(w, k, v);
    }
}

// ---------------------------------------------------------------------------------------
// prost::Message, so that the generated types can hold these as fields
// ---------------------------------------------------------------------------------------

/// The bytes `write` writes.
fn encoded(write: impl FnOnce(&mut Writer<'_>)) -> Vec<u8> {
    let mut out = Vec::new();
    write(&mut Writer::new(&mut out));
    out
}

/// Implements `prost::Message` for a hand-written type from two closure-like pieces: how
/// it writes its fields, and how it merges one field read from the wire.
macro_rules! hand_written_message {
    (
        $ty:ident,
        |$this:ident, $w:ident| $write:expr,
        |$that:ident, $tag:ident, $wire_type:ident, $buf:ident, $ctx:ident| $merge:expr $(,)?
    ) => {
        impl Message for $ty {
            fn encode_raw(&self, buf: &mut impl BufMut) {
                let $this = self;
                buf.put_slice(&encoded(|$w| $write));
            }

            fn merge_field(
                &mut self,
                $tag: u32,
                $wire_type: WireType,
                $buf: &mut impl Buf,
                $ctx: DecodeContext,
            ) -> Result<(), DecodeError> {
                let $that = self;
                $merge
            }

            fn encoded_len(&self) -> usize {
                let $this = self;
                encoded(|$w| $write).len()
            }

            fn clear(&mut self) {
                *self = $ty::default();
            }
        }
    };
}

hand_written_message!(
    ProtoValue,
    |value, w| if let Some(v) = &value.0 {
        write_value(w, v)
    },
    |value, tag, wire_type, buf, ctx| {
        merge_value_field(&mut value.0, tag, wire_type, buf, ctx, MAX_JSON_DEPTH)
    },
);

// A `Struct` has one field, its repeated entries (1); any other is skipped as unknown.
hand_written_message!(
    ProtoStruct,
    |object, w| write_struct(w, &object.0),
    |object, tag, wire_type, buf, ctx| {
        if tag != 1 || wire_type != WireType::LengthDelimited {
            return skip_field(wire_type, tag, buf, ctx);
        }
        with_payload(buf, |entry| {
            merge_entry(&mut object.0, entry, ctx, MAX_JSON_DEPTH)
        })
    },
);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn enc(v: &Value) -> Vec<u8> {
        encoded(|w| write_value(w, v))
    }

    fn dec(bytes: &[u8]) -> Option<Value> {
        let mut slot = None;
        merge_value(&mut slot, bytes, DecodeContext::default(), MAX_JSON_DEPTH).unwrap();
        slot
    }

    #[test]
    fn scalars_encode_like_the_reference() {
        assert_eq!(enc(&Value::Null), [0x08, 0x00]);
        assert_eq!(enc(&json!(true)), [0x20, 0x01]);
        assert_eq!(enc(&json!(false)), [0x20, 0x00]);
        assert_eq!(enc(&json!("")), [0x1a, 0x00]);
        assert_eq!(enc(&json!(42)), [0x11, 0, 0, 0, 0, 0, 0, 0x45, 0x40]);
        assert_eq!(enc(&json!({})), [0x2a, 0x00]);
        assert_eq!(enc(&json!([])), [0x32, 0x00]);
    }

    #[test]
    fn object_keys_follow_javascript_order() {
        let v: Value = serde_json::from_str(r#"{"b":1,"2":2,"a":3,"1":4,"01":5}"#).unwrap();
        let back = dec(&enc(&v)).unwrap();
        let keys: Vec<&String> = back.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["1", "2", "b", "a", "01"]);
        assert_eq!(array_index("4294967294"), Some(4_294_967_294));
        assert_eq!(array_index("4294967295"), None);
        assert_eq!(array_index("-1"), None);
    }

    #[test]
    fn round_trips_nested_values() {
        let v = json!({"a": [1, 2.5, "x", null, {"b": false}], "": {"c": []}, "n": -3});
        assert_eq!(dec(&enc(&v)), Some(v));
    }

    #[test]
    fn numbers_come_back_as_javascript_prints_them() {
        assert_eq!(number(1.0), json!(1));
        assert_eq!(number(-0.0), json!(0));
        assert_eq!(number(f64::NAN), Value::Null);
        assert_eq!(number(f64::INFINITY), Value::Null);
        assert_eq!(number(0.5), json!(0.5));
    }

    #[test]
    fn repeated_kinds_merge_or_replace() {
        // Two struct payloads merge; a later different kind replaces.
        let mut bytes = enc(&json!({"a": 1}));
        bytes.extend(enc(&json!({"b": 2, "a": 3})));
        assert_eq!(dec(&bytes), Some(json!({"a": 3, "b": 2})));
        let mut bytes = enc(&json!([1]));
        bytes.extend(enc(&json!([2])));
        assert_eq!(dec(&bytes), Some(json!([1, 2])));
        let mut bytes = enc(&json!({"a": 1}));
        bytes.extend(enc(&json!("s")));
        assert_eq!(dec(&bytes), Some(json!("s")));
        // No kind at all: undefined.
        assert_eq!(dec(&[]), None);
        // An object member without a kind is dropped; a list item without one is null.
        assert_eq!(
            dec(&[0x2a, 0x05, 0x0a, 0x03, 0x0a, 0x01, b'k']),
            Some(json!({}))
        );
        assert_eq!(dec(&[0x32, 0x02, 0x0a, 0x00]), Some(json!([null])));
    }

    #[test]
    fn malformed_values_fail_cleanly() {
        for bad in [
            &[0x2a, 0x05][..],
            &[0x11, 0x00],
            &[0x1a, 0x01, 0xff],
            &[0x00],
            &[0x0f],
        ] {
            let mut slot = None;
            assert!(
                merge_value(&mut slot, bad, DecodeContext::default(), MAX_JSON_DEPTH).is_err(),
                "{bad:?}"
            );
        }
        // Nesting beyond the limit is an error, not a stack overflow.
        let mut v = json!(1);
        for _ in 0..200 {
            v = json!([v]);
        }
        let mut slot = None;
        assert!(
            merge_value(
                &mut slot,
                &enc(&v),
                DecodeContext::default(),
                MAX_JSON_DEPTH
            )
            .is_err()
        );
    }
}
