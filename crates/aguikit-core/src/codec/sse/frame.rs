//! One decoded (or to-be-encoded) SSE frame.

use super::for_each_line;

/// One Server-Sent Events frame: what the decoder dispatches at a blank line.
///
/// AG-UI frames carry one JSON event in `data` and nothing else; `event`, `id` and `retry`
/// are kept for completeness (the reference client ignores them).
///
/// # Example
///
/// ```
/// use aguikit_core::codec::sse::{SseDecoder, SseFrame};
///
/// let frame = SseFrame {
///     data: "line 1\nline 2".to_owned(),
///     event: Some("update".to_owned()),
///     id: Some("7".to_owned()),
///     retry: None,
/// };
/// let mut wire = Vec::new();
/// frame.write_to(&mut wire);
/// assert_eq!(wire, b"event: update\nid: 7\ndata: line 1\ndata: line 2\n\n");
///
/// let mut decoder = SseDecoder::new();
/// decoder.push(&wire);
/// assert_eq!(decoder.next_frame()?, Some(frame));
/// # Ok::<(), aguikit_core::codec::sse::SseError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseFrame {
    /// The frame's `data` lines joined with `\n` (no trailing `\n`). For AG-UI, one JSON
    /// event.
    pub data: String,
    /// The value of the frame's last `event` field, or `None` if it had none or an empty
    /// one (WHATWG treats an empty event type as the default, `message`).
    pub event: Option<String>,
    /// The value of the `id` field given *in this frame* (the last one if several), or
    /// `None` if the frame had none. An `id` value containing NUL is ignored. The id that
    /// persists across frames (WHATWG's "last event ID") is
    /// [`SseDecoder::last_event_id`](super::SseDecoder::last_event_id).
    pub id: Option<String>,
    /// The reconnection time in milliseconds given by a valid `retry` field in this frame
    /// (ASCII digits only), or `None`.
    pub retry: Option<u64>,
}

impl SseFrame {
    /// A frame that carries only `data`.
    ///
    /// ```
    /// # use aguikit_core::codec::sse::SseFrame;
    /// assert_eq!(SseFrame::new("{}").data, "{}");
    /// ```
    pub fn new(data: impl Into<String>) -> Self {
        SseFrame {
            data: data.into(),
            ..SseFrame::default()
        }
    }

    /// Appends this frame to `out` in SSE syntax: `event`, `id` and `retry` lines (each only
    /// if present), one `data: ` line per line of `data`, then a blank line. Only LF is
    /// written.
    ///
    /// Decoding the bytes gives back an equal frame, except where SSE cannot represent the
    /// value: a CR or CRLF inside `data` comes back as LF; an empty `event` comes back as
    /// `None`; an `id` containing NUL is ignored by decoders. Line breaks inside `event` or
    /// `id` cannot be represented at all: they are written as spaces, so that a value can
    /// never inject extra fields (and a debug build panics).
    pub fn write_to(&self, out: &mut Vec<u8>) {
        if let Some(event) = &self.event {
            write_field(out, b"event: ", event);
        }
        if let Some(id) = &self.id {
            debug_assert!(!id.contains('\0'), "an SSE id cannot contain NUL");
            write_field(out, b"id: ", id);
        }
        if let Some(retry) = self.retry {
            out.extend_from_slice(b"retry: ");
            out.extend_from_slice(retry.to_string().as_bytes());
            out.push(b'\n');
        }
        for_each_line(&self.data, |line| {
            out.extend_from_slice(b"data: ");
            out.extend_from_slice(line.as_bytes());
            out.push(b'\n');
        });
        out.push(b'\n');
    }
}

/// Writes `prefix`, `value` and LF, with any line break in `value` written as a space.
pub(super) fn write_field(out: &mut Vec<u8>, prefix: &[u8], value: &str) {
    debug_assert!(
        !value.contains(['\n', '\r']),
        "an SSE field value cannot contain a line break: {value:?}"
    );
    out.extend_from_slice(prefix);
    let start = out.len();
    out.extend_from_slice(value.as_bytes());
    blank_line_breaks(&mut out[start..]);
    out.push(b'\n');
}

/// Overwrites every CR and LF byte in `bytes` with a space.
pub(super) fn blank_line_breaks(bytes: &mut [u8]) {
    let mut from = 0;
    while let Some(i) = memchr::memchr2(b'\n', b'\r', &bytes[from..]) {
        bytes[from + i] = b' ';
        from += i + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(frame: &SseFrame) -> String {
        let mut out = Vec::new();
        frame.write_to(&mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn data_only() {
        assert_eq!(written(&SseFrame::new(r#"{"a":1}"#)), "data: {\"a\":1}\n\n");
    }

    #[test]
    fn empty_data_is_one_empty_data_line() {
        assert_eq!(written(&SseFrame::new("")), "data: \n\n");
    }

    #[test]
    fn multi_line_data_and_all_fields() {
        let frame = SseFrame {
            data: "a\r\nb\rc\n".to_owned(),
            event: Some("e".to_owned()),
            id: Some(String::new()),
            retry: Some(1500),
        };
        assert_eq!(
            written(&frame),
            "event: e\nid: \nretry: 1500\ndata: a\ndata: b\ndata: c\ndata: \n\n"
        );
    }

    #[test]
    fn blank_line_breaks_replaces_cr_and_lf() {
        let mut bytes = *b"a\nb\r\nc";
        blank_line_breaks(&mut bytes);
        assert_eq!(&bytes, b"a b  c");
    }
}
