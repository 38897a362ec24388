//! The SSE encoder: the exact bytes the reference encoder writes.

use serde::Serialize;

use super::SseFrame;
use super::for_each_line;
use super::frame::{blank_line_breaks, write_field};
use crate::event::Event;

/// Appends one data frame to `out`: exactly `data: `, `json`, then two LF bytes — the
/// bytes the reference encoder writes for one event.
///
/// `json` must be one line of JSON (compact JSON never needs a raw line break). A debug
/// build panics on a CR or LF in `json`; a release build writes each as a space, which is
/// insignificant whitespace in JSON and keeps the framing intact.
///
/// ```
/// use aguikit_core::codec::sse::write_frame;
///
/// let mut out = Vec::new();
/// write_frame(&mut out, br#"{"type":"STEP_STARTED","stepName":"plan"}"#);
/// assert_eq!(out, b"data: {\"type\":\"STEP_STARTED\",\"stepName\":\"plan\"}\n\n");
/// ```
pub fn write_frame(out: &mut Vec<u8>, json: &[u8]) {
    debug_assert!(
        memchr::memchr2(b'\n', b'\r', json).is_none(),
        "SSE frame data must be a single line of JSON"
    );
    out.reserve(json.len() + 8);
    out.extend_from_slice(b"data: ");
    let start = out.len();
    out.extend_from_slice(json);
    blank_line_breaks(&mut out[start..]);
    out.extend_from_slice(b"\n\n");
}

/// Appends `id: <id>` and LF, then the data frame of [`write_frame`]. A client that
/// reconnects sends the last id it saw in its `Last-Event-ID` header.
///
/// `id` must not contain CR, LF or NUL (a decoder ignores an id with NUL). A debug build
/// panics on them; a release build writes line breaks as spaces so the id can never
/// inject fields.
///
/// ```
/// use aguikit_core::codec::sse::write_frame_with_id;
///
/// let mut out = Vec::new();
/// write_frame_with_id(&mut out, "42", br#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#);
/// assert_eq!(out, b"id: 42\ndata: {\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\n");
/// ```
pub fn write_frame_with_id(out: &mut Vec<u8>, id: &str, json: &[u8]) {
    debug_assert!(!id.contains('\0'), "an SSE id cannot contain NUL");
    write_field(out, b"id: ", id);
    write_frame(out, json);
}

/// Appends a comment frame, `: <text>` then two LF bytes. Decoders ignore it; servers send
/// it as a keep-alive. A `text` spanning several lines becomes one comment line per line.
///
/// ```
/// use aguikit_core::codec::sse::write_comment;
///
/// let mut out = Vec::new();
/// write_comment(&mut out, "keep-alive");
/// assert_eq!(out, b": keep-alive\n\n");
/// ```
pub fn write_comment(out: &mut Vec<u8>, text: &str) {
    for_each_line(text, |line| {
        out.extend_from_slice(b": ");
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    });
    out.push(b'\n');
}

/// A reusable SSE encoder: each call serialises into one internal buffer, reused from call
/// to call, and returns the frame's bytes.
///
/// # Example
///
/// ```
/// use aguikit_core::codec::sse::SseEncoder;
/// use serde_json::json;
///
/// let mut encoder = SseEncoder::new();
/// let event = json!({"type": "TEXT_MESSAGE_END", "messageId": "m1"});
/// let bytes = encoder.encode_json(&event, None)?;
/// assert_eq!(bytes, b"data: {\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m1\"}\n\n");
///
/// let bytes = encoder.encode_json(&event, Some("9"))?;
/// assert_eq!(bytes, b"id: 9\ndata: {\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m1\"}\n\n");
///
/// assert_eq!(encoder.encode_comment("ping"), b": ping\n\n");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct SseEncoder {
    buf: Vec<u8>,
}

impl SseEncoder {
    /// An encoder with an empty buffer.
    pub fn new() -> Self {
        SseEncoder::default()
    }

    /// Serialises `value` as compact JSON straight into the buffer (no intermediate string)
    /// and returns the frame: `id: <id>` and LF if `id` is given, then `data: <json>` and
    /// two LF bytes, as [`write_frame_with_id`] / [`write_frame`] write them.
    ///
    /// serde_json's compact output is one line; should a `Serialize` impl emit raw line
    /// breaks anyway (for example a `RawValue` holding pretty-printed JSON), they are
    /// written as spaces, which JSON ignores.
    ///
    /// # Errors
    ///
    /// The `Serialize` impl's error, or serde_json's (for example a map with non-string
    /// keys). The buffer is left empty.
    pub fn encode_json<T: Serialize + ?Sized>(
        &mut self,
        value: &T,
        id: Option<&str>,
    ) -> Result<&[u8], serde_json::Error> {
        let start = self.begin(id);
        if let Err(err) = serde_json::to_writer(&mut self.buf, value) {
            self.buf.clear();
            return Err(err);
        }
        blank_line_breaks(&mut self.buf[start..]);
        self.buf.extend_from_slice(b"\n\n");
        Ok(&self.buf)
    }

    /// The frame of one event, as [`SseEncoder::encode_json`] writes it for the event,
    /// from the event's own JSON writer ([`Event::write_json`]: the same bytes, faster,
    /// and infallible). Its JSON is one line already (strings escape their line breaks
    /// and the writer adds no whitespace), so no line break needs blanking.
    ///
    /// ```
    /// use aguikit_core::codec::sse::SseEncoder;
    /// use aguikit_core::event::{Event, TextMessageContent};
    ///
    /// let event: Event = TextMessageContent::new("m1", "a\nb").into();
    /// let mut encoder = SseEncoder::new();
    /// assert_eq!(
    ///     encoder.encode_event(&event, Some("7")),
    ///     b"id: 7\ndata: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m1\",\"delta\":\"a\\nb\"}\n\n"
    /// );
    /// ```
    pub fn encode_event(&mut self, event: &Event, id: Option<&str>) -> &[u8] {
        let start = self.begin(id);
        event.write_json(&mut self.buf);
        debug_assert!(memchr::memchr2(b'\n', b'\r', &self.buf[start..]).is_none());
        self.buf.extend_from_slice(b"\n\n");
        &self.buf
    }

    /// Clears the buffer and writes a frame's start (`id: <id>` and LF if `id` is given,
    /// then `data: `); returns where the data begins.
    fn begin(&mut self, id: Option<&str>) -> usize {
        self.buf.clear();
        if let Some(id) = id {
            debug_assert!(!id.contains('\0'), "an SSE id cannot contain NUL");
            write_field(&mut self.buf, b"id: ", id);
        }
        self.buf.extend_from_slice(b"data: ");
        self.buf.len()
    }

    /// Returns the bytes of `frame` as [`SseFrame::write_to`] writes them.
    pub fn encode_frame(&mut self, frame: &SseFrame) -> &[u8] {
        self.buf.clear();
        frame.write_to(&mut self.buf);
        &self.buf
    }

    /// Returns a comment frame as [`write_comment`] writes it (a keep-alive).
    pub fn encode_comment(&mut self, text: &str) -> &[u8] {
        self.buf.clear();
        write_comment(&mut self.buf, text);
        &self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::ser::{Serialize, Serializer};

    #[test]
    fn write_frame_is_exactly_data_json_lf_lf() {
        let mut out = b"prefix|".to_vec();
        write_frame(&mut out, br#"{"a":1}"#);
        assert_eq!(out, b"prefix|data: {\"a\":1}\n\n");
    }

    #[test]
    fn write_frame_with_id_writes_id_line_first() {
        let mut out = Vec::new();
        write_frame_with_id(&mut out, "run-1:3", b"{}");
        assert_eq!(out, b"id: run-1:3\ndata: {}\n\n");
    }

    #[test]
    fn write_comment_prefixes_every_line() {
        let mut out = Vec::new();
        write_comment(&mut out, "");
        write_comment(&mut out, "a\nb");
        assert_eq!(out, b": \n\n: a\n: b\n\n");
    }

    #[test]
    fn encode_json_reuses_the_buffer() {
        let mut encoder = SseEncoder::new();
        assert_eq!(
            encoder
                .encode_json(&serde_json::json!({"type": "X", "s": "a\nb"}), None)
                .unwrap(),
            b"data: {\"type\":\"X\",\"s\":\"a\\nb\"}\n\n"
        );
        assert_eq!(
            encoder.encode_json(&1, Some("")).unwrap(),
            b"id: \ndata: 1\n\n"
        );
    }

    #[test]
    fn encode_json_error_leaves_buffer_empty() {
        struct Failing;
        impl Serialize for Failing {
            fn serialize<S: Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
                Err(serde::ser::Error::custom("nope"))
            }
        }
        let mut encoder = SseEncoder::new();
        assert!(encoder.encode_json(&Failing, Some("1")).is_err());
        assert!(encoder.buf.is_empty());
    }

    #[test]
    fn encode_frame_and_comment() {
        let mut encoder = SseEncoder::new();
        assert_eq!(encoder.encode_frame(&SseFrame::new("x")), b"data: x\n\n");
        assert_eq!(encoder.encode_comment("k"), b": k\n\n");
    }
}
