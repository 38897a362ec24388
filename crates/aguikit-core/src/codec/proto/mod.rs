//! The protobuf codec (feature `proto`): `application/vnd.ag-ui.event+proto`, byte for byte
//! as `@ag-ui/proto` 1.0.0 writes it.
//!
//! - [`encode_event`] / [`encode_event_into`]: one event to an `ag_ui.Event` envelope body
//!   (no length prefix). Written straight from the typed event: fields in ascending
//!   field-number order, JSON values as `google.protobuf.Value`/`Struct` with object keys in
//!   JavaScript order (array-index keys first). Events with no protobuf form
//!   ([`Event::Unknown`], e.g. the retired `THINKING_*` events) give nothing: the reference
//!   writes an empty body for them, which no decoder accepts.
//! - [`decode_event`]: one body back to a typed event, with the reference decoder's
//!   structural checks and the same schema rules as JSON decoding. A body holding only an
//!   event of a later protocol version gives `Ok(None)` (drop it, as an unknown event type
//!   is dropped over SSE).
//! - [`write_frame`] and [`ProtoFrameDecoder`]: the stream framing, a 4-byte big-endian
//!   length before each body.
//!
//! Where the reference's own `decode(encode(e))` is not `e`, [`decode_event`] returns what
//! the reference decode returns: for example `RUN_STARTED.input` comes back with `tools`,
//! `context` and `resume` present (empty), and a `remove` patch operation keeps a stray
//! `value` but loses other unknown members.
//!
//! Deliberate differences from the reference decoder, on bytes no conforming encoder
//! writes: a known field with the wrong wire type and a string that is not UTF-8 are
//! errors (the reference skips the field, or replaces the bytes with U+FFFD).
//!
//! ```
//! use aguikit_core::codec::proto;
//! use aguikit_core::event::{Event, TextMessageEnd};
//! let event: Event = TextMessageEnd::new("msg-1").into();
//! let body = proto::encode_event(&event).unwrap();
//! assert_eq!(body, b"\x1a\x0b\x0a\x02\x08\x02\x12\x05msg-1");
//! assert_eq!(proto::decode_event(&body).unwrap(), Some(event));
//! ```

mod decode;
mod encode;
mod error;
mod fields;
mod frame;
mod patch_map;
mod scan;
mod tables;
mod wkt;
mod write;

pub use error::ProtoError;
pub use frame::{ProtoFrameDecoder, write_frame};

use crate::event::Event;

/// Types generated from `proto/*.proto` by prost.
#[allow(
    missing_docs,
    dead_code,
    unreachable_pub,
    clippy::all,
    clippy::pedantic
)]
pub(crate) mod pb {
    include!(concat!(env!("OUT_DIR"), "/ag_ui.rs"));
}

/// The media type of a protobuf event stream (exact string, no parameters).
pub const MEDIA_TYPE: &str = crate::codec::media::PROTO_MEDIA_TYPE;

/// The default largest frame body [`ProtoFrameDecoder`] accepts: 16 MiB.
pub const DEFAULT_MAX_FRAME_SIZE: usize = 16 * 1024 * 1024;

/// Encodes one event as an `ag_ui.Event` body (no length prefix); `None` for an event with
/// no protobuf form ([`Event::Unknown`]).
///
/// For many events, reuse one buffer with [`encode_event_into`].
pub fn encode_event(event: &Event) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(64);
    encode_event_into(event, &mut out).then_some(out)
}

/// Appends the `ag_ui.Event` body of `event` to `out` (no length prefix). Returns `false`,
/// writing nothing, for an event with no protobuf form ([`Event::Unknown`]).
///
/// ```
/// use aguikit_core::codec::proto::encode_event_into;
/// use aguikit_core::event::TextMessageContent;
/// let mut buf = Vec::new();
/// for delta in ["Hel", "lo"] {
///     buf.clear();
///     assert!(encode_event_into(&TextMessageContent::new("m", delta).into(), &mut buf));
/// }
/// assert_eq!(buf, b"\x12\x0b\x0a\x02\x08\x01\x12\x01m\x1a\x02lo");
/// ```
pub fn encode_event_into(event: &Event, out: &mut Vec<u8>) -> bool {
    encode::encode_into(event, out)
}

/// Decodes one `ag_ui.Event` body.
///
/// `Ok(None)`: the body names only event kinds of a later protocol version (unknown
/// envelope arms holding well-formed protobuf); drop it, with the warning reported to
/// [`warning::collect`](crate::warning::collect). Errors: [`ProtoError::Malformed`] for
/// bytes the reference decoder rejects (including an empty body),
/// [`ProtoError::Invalid`] for an event the schema rejects. Never panics.
pub fn decode_event(body: &[u8]) -> Result<Option<Event>, ProtoError> {
    decode::decode(body)
}
