//! Server-Sent Events framing: frames and bytes, no event types.
//!
//! AG-UI's default wire format is one JSON event per SSE frame:
//!
//! ```text
//! data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-1","delta":"Hello"}\n\n
//! ```
//!
//! This module only deals in frames and bytes; turning a frame's `data` into an event is
//! the job of the event types.
//!
//! - **Encoding** ([`write_frame`], [`write_frame_with_id`], [`write_comment`],
//!   [`SseEncoder`]) writes exactly what the reference encoder writes: `data: `, the compact
//!   JSON, two LF bytes. Only LF is ever written.
//! - **Decoding** ([`SseDecoder`]) is incremental and follows the WHATWG EventSource
//!   parsing rules, which is more tolerant than the reference client: LF, CRLF and CR line
//!   endings, comments, `event`/`id`/`retry` fields, multi-line `data`, a leading BOM and
//!   UTF-8 split across reads are all accepted. It differs from WHATWG in two documented
//!   places: invalid UTF-8 is an error rather than U+FFFD (see [`SseError::InvalidUtf8`]),
//!   and a last frame without its terminating blank line is still delivered at end of
//!   input, as the reference client does (see [`SseDecoder::finish`]).
//! - **Streams** (feature `stream`): `SseStream` adapts any
//!   `futures_core::Stream` of byte chunks into a stream of frames.
//!
//! # Example
//!
//! ```
//! use aguikit_core::codec::sse::{write_frame, SseDecoder};
//!
//! let mut wire = Vec::new();
//! write_frame(&mut wire, br#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#);
//! assert_eq!(wire, b"data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\n");
//!
//! let mut decoder = SseDecoder::new();
//! let (a, b) = wire.split_at(10); // reads can split anywhere
//! decoder.push(a);
//! assert_eq!(decoder.next_frame()?, None);
//! decoder.push(b);
//! let frame = decoder.next_frame()?.expect("one complete frame");
//! assert_eq!(frame.data, r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#);
//! assert_eq!(decoder.finish()?, None);
//! # Ok::<(), aguikit_core::codec::sse::SseError>(())
//! ```

mod decode;
mod encode;
mod frame;
#[cfg(feature = "stream")]
mod stream;

pub use decode::{DEFAULT_MAX_FRAME_SIZE, SseDecoder, SseError, SseFrameRef};
pub use encode::{SseEncoder, write_comment, write_frame, write_frame_with_id};
pub use frame::SseFrame;
#[cfg(feature = "stream")]
pub use stream::{SseStream, SseStreamError};

/// Splits `text` at every LF, CRLF or CR and calls `f` for each piece (without its
/// terminator): `n` line breaks give `n + 1` pieces, so `""` is one empty line and `"a\n"`
/// is `"a"` followed by `""`.
fn for_each_line<'a>(text: &'a str, mut f: impl FnMut(&'a str)) {
    let bytes = text.as_bytes();
    let mut start = 0;
    while let Some(i) = memchr::memchr2(b'\n', b'\r', &bytes[start..]) {
        let end = start + i;
        f(&text[start..end]);
        start = end + 1;
        if bytes[end] == b'\r' && bytes.get(start) == Some(&b'\n') {
            start += 1;
        }
    }
    f(&text[start..]);
}

#[cfg(test)]
mod tests {
    use super::for_each_line;

    fn lines(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        for_each_line(text, |l| out.push(l));
        out
    }

    #[test]
    fn for_each_line_splits_on_every_terminator() {
        assert_eq!(lines(""), [""]);
        assert_eq!(lines("a"), ["a"]);
        assert_eq!(lines("a\n"), ["a", ""]);
        assert_eq!(lines("a\nb\r\nc\rd"), ["a", "b", "c", "d"]);
        assert_eq!(lines("a\n\nb"), ["a", "", "b"]);
        assert_eq!(lines("\r\n"), ["", ""]);
        assert_eq!(lines("\r\r"), ["", "", ""]);
    }
}
