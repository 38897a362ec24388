//! Body decoders: response bytes in, frames out, whatever the encoding.
//!
//! Each encoding is an incremental decoder behind [`BodyDecoder`]: SSE (JSON events in
//! `data:` lines) always, protobuf (length-prefixed binary events) with the `proto`
//! feature (agui-core's codec). The response's `Content-Type` picks one ([`Encoding::from_content_type`]).

use crate::error::FramingError;
use agui_core::Event;
use agui_core::codec::sse::SseDecoder;

/// The SSE media type.
pub const SSE_MEDIA_TYPE: &str = "text/event-stream";

/// The AG-UI protobuf media type.
pub const PROTO_MEDIA_TYPE: &str = "application/vnd.ag-ui.event+proto";

/// A wire encoding of an event stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Encoding {
    /// Server-Sent Events carrying one JSON event per frame (the default).
    #[default]
    Sse,
    /// Length-prefixed protobuf messages (decoded with the `proto` feature).
    Protobuf,
}

impl Encoding {
    /// The encoding a response's `Content-Type` announces, or `None` when it is not an AG-UI
    /// event stream. Media types compare case-insensitively and parameters are ignored.
    ///
    /// ```
    /// use agui_client::Encoding;
    /// assert_eq!(Encoding::from_content_type("text/event-stream; charset=utf-8"), Some(Encoding::Sse));
    /// assert_eq!(Encoding::from_content_type("application/vnd.ag-ui.event+proto"), Some(Encoding::Protobuf));
    /// assert_eq!(Encoding::from_content_type("application/json"), None);
    /// ```
    pub fn from_content_type(content_type: &str) -> Option<Encoding> {
        let essence = content_type.split(';').next().unwrap_or("").trim();
        if essence.eq_ignore_ascii_case(SSE_MEDIA_TYPE) {
            Some(Encoding::Sse)
        } else if essence.eq_ignore_ascii_case(PROTO_MEDIA_TYPE) {
            Some(Encoding::Protobuf)
        } else {
            None
        }
    }

    /// The `Accept` header that asks for this encoding (protobuf requests still admit SSE,
    /// since many servers only speak SSE).
    pub fn accept_header(self) -> &'static str {
        match self {
            Encoding::Sse => SSE_MEDIA_TYPE,
            Encoding::Protobuf => "application/vnd.ag-ui.event+proto, text/event-stream;q=0.5",
        }
    }

    /// Whether this build can decode the encoding.
    pub fn is_supported(self) -> bool {
        match self {
            Encoding::Sse => true,
            Encoding::Protobuf => cfg!(feature = "proto"),
        }
    }
}

/// One unit out of a body decoder.
#[derive(Debug)]
pub(crate) enum Frame {
    /// A JSON event (SSE), with the frame's `id` field when it had one.
    Json { data: String, id: Option<String> },
    /// An event decoded from a binary encoding.
    #[cfg_attr(not(feature = "proto"), allow(dead_code))]
    Event(Box<Event>),
}

/// An incremental decoder for one response body.
#[derive(Debug)]
pub(crate) enum BodyDecoder {
    Sse(SseDecoder),
    #[cfg(feature = "proto")]
    Proto(agui_core::codec::proto::ProtoFrameDecoder),
}

impl BodyDecoder {
    /// A decoder for `encoding` with the given frame size limit, or `None` when this build
    /// cannot decode it.
    pub(crate) fn new(encoding: Encoding, max_frame_size: usize) -> Option<BodyDecoder> {
        match encoding {
            Encoding::Sse => Some(BodyDecoder::Sse(SseDecoder::with_max_frame_size(
                max_frame_size,
            ))),
            #[cfg(feature = "proto")]
            Encoding::Protobuf => Some(BodyDecoder::Proto(
                agui_core::codec::proto::ProtoFrameDecoder::with_max_frame_size(max_frame_size),
            )),
            #[cfg(not(feature = "proto"))]
            Encoding::Protobuf => None,
        }
    }

    /// Feeds body bytes.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        match self {
            BodyDecoder::Sse(d) => d.push(bytes),
            #[cfg(feature = "proto")]
            BodyDecoder::Proto(d) => d.push(bytes),
        }
    }

    /// The next complete frame, if any.
    pub(crate) fn next_frame(&mut self) -> Result<Option<Frame>, FramingError> {
        match self {
            BodyDecoder::Sse(d) => Ok(d.next_frame()?.map(|f| Frame::Json {
                data: f.data,
                id: f.id,
            })),
            #[cfg(feature = "proto")]
            BodyDecoder::Proto(d) => Ok(d.next_event()?.map(|e| Frame::Event(Box::new(e)))),
        }
    }

    /// At the end of the body: the frames still buffered (call until `None`), then an error
    /// if the body ended inside a frame.
    pub(crate) fn finish(&mut self) -> Result<Option<Frame>, FramingError> {
        match self {
            BodyDecoder::Sse(d) => Ok(d.finish()?.map(|f| Frame::Json {
                data: f.data,
                id: f.id,
            })),
            #[cfg(feature = "proto")]
            BodyDecoder::Proto(d) => match d.next_event()? {
                Some(e) => Ok(Some(Frame::Event(Box::new(e)))),
                None => {
                    d.finish()?;
                    Ok(None)
                }
            },
        }
    }

    /// The reconnection delay the server asked for (SSE `retry:`), in milliseconds.
    pub(crate) fn retry(&self) -> Option<u64> {
        match self {
            BodyDecoder::Sse(d) => d.retry(),
            #[cfg(feature = "proto")]
            BodyDecoder::Proto(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types() {
        assert_eq!(
            Encoding::from_content_type("TEXT/EVENT-STREAM"),
            Some(Encoding::Sse)
        );
        assert_eq!(
            Encoding::from_content_type("application/vnd.ag-ui.event+proto; v=1"),
            Some(Encoding::Protobuf)
        );
        assert_eq!(Encoding::from_content_type("text/html"), None);
        assert_eq!(Encoding::from_content_type(""), None);
    }

    #[test]
    fn sse_frames_keep_their_ids() {
        let mut d = BodyDecoder::new(Encoding::Sse, 1024).unwrap();
        d.push(b"id: 7\ndata: {}\n\ndata: 2");
        match d.next_frame().unwrap() {
            Some(Frame::Json { data, id }) => {
                assert_eq!(data, "{}");
                assert_eq!(id.as_deref(), Some("7"));
            }
            other => panic!("{other:?}"),
        }
        assert!(d.next_frame().unwrap().is_none());
        match d.finish().unwrap() {
            Some(Frame::Json { data, id }) => {
                assert_eq!(data, "2");
                assert_eq!(id, None);
            }
            other => panic!("{other:?}"),
        }
        assert!(d.finish().unwrap().is_none());
    }

    #[cfg(feature = "proto")]
    #[test]
    fn protobuf_frames_decode_to_events() {
        use agui_core::codec::proto::write_frame;
        use agui_core::event::{TextMessageContent, TextMessageEnd};
        let mut wire = Vec::new();
        write_frame(&mut wire, &TextMessageContent::new("m", "Hi").into()).unwrap();
        write_frame(&mut wire, &TextMessageEnd::new("m").into()).unwrap();
        let mut d = BodyDecoder::new(Encoding::Protobuf, 1024).unwrap();
        let (a, b) = wire.split_at(7);
        d.push(a);
        assert!(d.next_frame().unwrap().is_none());
        d.push(b);
        assert!(matches!(d.next_frame().unwrap(), Some(Frame::Event(_))));
        assert!(matches!(d.finish().unwrap(), Some(Frame::Event(_))));
        assert!(d.finish().unwrap().is_none());
        let mut d = BodyDecoder::new(Encoding::Protobuf, 1024).unwrap();
        d.push(&wire[..wire.len() - 1]);
        assert!(d.next_frame().unwrap().is_some());
        assert!(matches!(d.finish(), Err(FramingError::Proto(_))));
    }

    #[test]
    fn sse_frame_limit_is_an_error() {
        let mut d = BodyDecoder::new(Encoding::Sse, 8).unwrap();
        d.push(b"data: 0123456789\n\n");
        assert!(matches!(d.next_frame(), Err(FramingError::Sse(_))));
    }
}
