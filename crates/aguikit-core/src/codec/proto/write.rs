//! A minimal protobuf writer appending to a `Vec<u8>`.
//!
//! Nested messages are written in one pass: one byte is reserved for the length, the body
//! is written, and the length is patched in (moving the body when the length needs more
//! than one byte). That avoids both a sizing pass and any intermediate buffer.

/// Wire type of varints.
pub(crate) const VARINT: u32 = 0;
/// Wire type of 64-bit little-endian values.
pub(crate) const I64: u32 = 1;
/// Wire type of length-delimited values.
pub(crate) const LEN: u32 = 2;

/// Appends protobuf fields to a buffer.
pub(crate) struct Writer<'a> {
    buf: &'a mut Vec<u8>,
}

/// Number of bytes of `v` as a varint.
#[inline]
pub(crate) fn varint_len(v: u64) -> usize {
    // 1 byte per started group of 7 bits, at least 1.
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

#[inline]
fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

impl<'a> Writer<'a> {
    /// A writer appending to `buf`.
    #[inline]
    pub(crate) fn new(buf: &'a mut Vec<u8>) -> Self {
        Writer { buf }
    }

    #[inline]
    fn key(&mut self, field: u32, wire_type: u32) {
        put_varint(self.buf, u64::from((field << 3) | wire_type));
    }

    /// A varint field, always written.
    #[inline]
    pub(crate) fn varint_field(&mut self, field: u32, v: u64) {
        self.key(field, VARINT);
        put_varint(self.buf, v);
    }

    /// An `int64` field, always written (negative values take ten bytes).
    #[inline]
    pub(crate) fn int64_field(&mut self, field: u32, v: i64) {
        self.varint_field(field, v as u64);
    }

    /// A `bool` field, always written.
    #[inline]
    pub(crate) fn bool_field(&mut self, field: u32, v: bool) {
        self.varint_field(field, u64::from(v));
    }

    /// A `double` field, always written.
    #[inline]
    pub(crate) fn double_field(&mut self, field: u32, v: f64) {
        self.key(field, I64);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// A `string` field, always written (explicit presence, repeated elements).
    #[inline]
    pub(crate) fn str_field(&mut self, field: u32, s: &str) {
        self.bytes_field(field, s.as_bytes());
    }

    /// A `bytes` field, always written.
    #[inline]
    pub(crate) fn bytes_field(&mut self, field: u32, b: &[u8]) {
        self.key(field, LEN);
        put_varint(self.buf, b.len() as u64);
        self.buf.extend_from_slice(b);
    }

    /// An implicit-presence `string` field: omitted when empty.
    #[inline]
    pub(crate) fn str_implicit(&mut self, field: u32, s: &str) {
        if !s.is_empty() {
            self.str_field(field, s);
        }
    }

    /// An explicit-presence (`optional`) `string` field: written whenever set, even `""`.
    #[inline]
    pub(crate) fn opt_str(&mut self, field: u32, s: Option<&str>) {
        if let Some(s) = s {
            self.str_field(field, s);
        }
    }

    /// A message field, always written (an empty message is `tag 00`).
    #[inline]
    pub(crate) fn message(&mut self, field: u32, body: impl FnOnce(&mut Writer<'_>)) {
        self.key(field, LEN);
        let at = self.buf.len();
        self.buf.push(0);
        body(&mut Writer { buf: self.buf });
        let len = self.buf.len() - at - 1;
        if len < 0x80 {
            self.buf[at] = len as u8;
            return;
        }
        let n = varint_len(len as u64);
        let end = self.buf.len();
        self.buf.resize(end + n - 1, 0);
        self.buf.copy_within(at + 1..end, at + n);
        let mut v = len as u64;
        for slot in &mut self.buf[at..at + n] {
            *slot = (v as u8 & 0x7f) | 0x80;
            v >>= 7;
        }
        self.buf[at + n - 1] &= 0x7f;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_lengths() {
        for (v, n) in [
            (0u64, 1),
            (1, 1),
            (127, 1),
            (128, 2),
            (16_383, 2),
            (16_384, 3),
            (u64::MAX, 10),
        ] {
            assert_eq!(varint_len(v), n, "{v}");
            let mut b = Vec::new();
            put_varint(&mut b, v);
            assert_eq!(b.len(), n);
        }
    }

    #[test]
    fn nested_lengths_are_patched() {
        for size in [0usize, 1, 127, 128, 300, 16_383, 16_384, 70_000] {
            let mut out = Vec::new();
            let mut w = Writer::new(&mut out);
            w.message(3, |w| w.bytes_field(1, &vec![7u8; size]));
            let mut expect = vec![0x1a];
            let inner_len = 1 + varint_len(size as u64) + size;
            put_varint(&mut expect, inner_len as u64);
            expect.push(0x0a);
            put_varint(&mut expect, size as u64);
            expect.extend(std::iter::repeat_n(7u8, size));
            assert_eq!(out, expect, "{size}");
        }
    }
}
