//! One incremental decoder for an event-stream body, whatever its wire format.
//!
//! [`FrameDecoder`] wraps the SSE decoder and (feature `proto`) the protobuf frame decoder
//! behind one interface: bytes in as they arrive, [`Frame`]s out. An SSE frame is handed
//! out as its JSON text (with its `id`), so the caller decides how to read it; a protobuf
//! frame is already an event.
//!
//! ```
//! use aguikit_core::codec::decoder::{Frame, FrameDecoder};
//! use aguikit_core::codec::media::WireFormat;
//!
//! let mut d = FrameDecoder::new(WireFormat::Sse);
//! d.push(b"id: 7\ndata: {}\n\ndata: 2");
//! assert_eq!(d.next_frame()?, Some(Frame::Json { data: "{}".into(), id: Some("7".into()) }));
//! assert_eq!(d.next_frame()?, None);
//! assert_eq!(d.finish()?, Some(Frame::Json { data: "2".into(), id: None }));
//! assert_eq!(d.finish()?, None);
//! # Ok::<(), aguikit_core::codec::decoder::FrameError>(())
//! ```

use super::media::WireFormat;
use super::sse::{self, SseDecoder, SseError};
use crate::event::Event;

/// One unit out of a [`FrameDecoder`].
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// An SSE frame's `data` (one JSON event), with the frame's `id` field when it had one.
    Json {
        /// The frame's data.
        data: String,
        /// The frame's `id`, if it carried one.
        id: Option<String>,
    },
    /// An event decoded from a binary encoding (protobuf).
    Event(Box<Event>),
}

/// A frame lent by [`FrameDecoder::next_frame_ref`]: a [`Frame`] whose SSE text borrows
/// the decoder's buffer (no copy), valid until the decoder's next call.
#[derive(Debug, Clone, PartialEq)]
pub enum FrameRef<'a> {
    /// As [`Frame::Json`], borrowed.
    Json {
        /// The frame's data.
        data: &'a str,
        /// The frame's `id`, if it carried one.
        id: Option<&'a str>,
    },
    /// As [`Frame::Event`].
    Event(Box<Event>),
}

impl FrameRef<'_> {
    /// The owned [`Frame`]: the text is copied.
    pub fn into_frame(self) -> Frame {
        match self {
            FrameRef::Json { data, id } => Frame::Json {
                data: data.to_owned(),
                id: id.map(str::to_owned),
            },
            FrameRef::Event(event) => Frame::Event(event),
        }
    }
}

/// Why the bytes of an event stream could not be split into frames.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// SSE framing (invalid UTF-8, a frame over the size limit).
    #[error("SSE: {0}")]
    Sse(#[from] SseError),
    /// Protobuf framing or decoding (a frame over the size limit, a malformed or
    /// schema-breaking event, a body that ends mid-frame).
    #[cfg(feature = "proto")]
    #[error("protobuf: {0}")]
    Proto(Box<super::proto::ProtoError>),
}

#[cfg(feature = "proto")]
impl From<super::proto::ProtoError> for FrameError {
    fn from(e: super::proto::ProtoError) -> Self {
        FrameError::Proto(Box::new(e))
    }
}

/// An incremental decoder for one response body in one wire format.
#[derive(Debug, Clone)]
#[non_exhaustive]
// One decoder per response body: boxing the larger SSE decoder would only add an
// indirection to every call.
#[allow(clippy::large_enum_variant)]
pub enum FrameDecoder {
    /// Server-Sent Events carrying JSON.
    Sse(SseDecoder),
    /// Length-prefixed protobuf envelopes.
    #[cfg(feature = "proto")]
    Proto(super::proto::ProtoFrameDecoder),
}

impl FrameDecoder {
    /// A decoder for `format` with the default frame size limit (16 MiB).
    pub fn new(format: WireFormat) -> FrameDecoder {
        FrameDecoder::with_max_frame_size(format, sse::DEFAULT_MAX_FRAME_SIZE)
    }

    /// A decoder for `format` accepting frames of at most `max_frame_size` bytes.
    pub fn with_max_frame_size(format: WireFormat, max_frame_size: usize) -> FrameDecoder {
        match format {
            WireFormat::Sse => FrameDecoder::Sse(SseDecoder::with_max_frame_size(max_frame_size)),
            #[cfg(feature = "proto")]
            WireFormat::Proto => FrameDecoder::Proto(
                super::proto::ProtoFrameDecoder::with_max_frame_size(max_frame_size),
            ),
        }
    }

    /// The wire format this decoder reads.
    pub fn format(&self) -> WireFormat {
        match self {
            FrameDecoder::Sse(_) => WireFormat::Sse,
            #[cfg(feature = "proto")]
            FrameDecoder::Proto(_) => WireFormat::Proto,
        }
    }

    /// Feeds body bytes (chunks of any size, split anywhere).
    pub fn push(&mut self, bytes: &[u8]) {
        match self {
            FrameDecoder::Sse(d) => d.push(bytes),
            #[cfg(feature = "proto")]
            FrameDecoder::Proto(d) => d.push(bytes),
        }
    }

    /// The next complete frame, or `None` when more bytes are needed.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, FrameError> {
        Ok(self.next_frame_ref()?.map(FrameRef::into_frame))
    }

    /// As [`next_frame`](Self::next_frame), but an SSE frame's text is lent instead of
    /// copied: the fastest way to read a body whose frames are parsed where they lie.
    ///
    /// ```
    /// use aguikit_core::Event;
    /// use aguikit_core::codec::decoder::{FrameDecoder, FrameRef};
    /// use aguikit_core::codec::media::WireFormat;
    ///
    /// let mut d = FrameDecoder::new(WireFormat::Sse);
    /// d.push(b"id: 7\ndata: {\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m\"}\n\n");
    /// let mut types = Vec::new();
    /// while let Some(frame) = d.next_frame_ref()? {
    ///     if let FrameRef::Json { data, id } = frame {
    ///         assert_eq!(id, Some("7"));
    ///         types.push(Event::from_json_str(data).expect("an event").type_str().to_owned());
    ///     }
    /// }
    /// assert_eq!(types, ["TEXT_MESSAGE_END"]);
    /// # Ok::<(), aguikit_core::codec::decoder::FrameError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`next_frame`](Self::next_frame).
    pub fn next_frame_ref(&mut self) -> Result<Option<FrameRef<'_>>, FrameError> {
        match self {
            FrameDecoder::Sse(d) => Ok(d.next_frame_ref()?.map(|f| FrameRef::Json {
                data: f.data,
                id: f.id,
            })),
            #[cfg(feature = "proto")]
            FrameDecoder::Proto(d) => Ok(d.next_event()?.map(|e| FrameRef::Event(Box::new(e)))),
        }
    }

    /// As [`finish`](Self::finish), with frames lent as by
    /// [`next_frame_ref`](Self::next_frame_ref).
    ///
    /// # Errors
    ///
    /// As [`finish`](Self::finish).
    pub fn finish_ref(&mut self) -> Result<Option<FrameRef<'_>>, FrameError> {
        match self {
            FrameDecoder::Sse(d) => Ok(d.finish_ref()?.map(|f| FrameRef::Json {
                data: f.data,
                id: f.id,
            })),
            #[cfg(feature = "proto")]
            FrameDecoder::Proto(d) => match d.next_event()? {
                Some(e) => Ok(Some(FrameRef::Event(Box::new(e)))),
                None => {
                    d.finish()?;
                    Ok(None)
                }
            },
        }
    }

    /// At the end of the body: the frames still buffered (call until `None`), then an error
    /// if the body ended inside a frame.
    pub fn finish(&mut self) -> Result<Option<Frame>, FrameError> {
        Ok(self.finish_ref()?.map(FrameRef::into_frame))
    }

    /// The reconnection delay the server asked for (SSE `retry:`), in milliseconds.
    pub fn retry(&self) -> Option<u64> {
        match self {
            FrameDecoder::Sse(d) => d.retry(),
            #[cfg(feature = "proto")]
            FrameDecoder::Proto(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_frames_keep_their_ids() {
        let mut d = FrameDecoder::with_max_frame_size(WireFormat::Sse, 1024);
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

    /// Lent and owned frames alike, wherever the input is split.
    #[test]
    fn lent_frames_are_the_owned_frames() {
        let input: &[u8] = b"id: 7\ndata: {}\n\nevent: e\ndata: a\ndata: b\n\nid: 8\ndata: 2";
        let want = [
            Frame::Json {
                data: "{}".into(),
                id: Some("7".into()),
            },
            Frame::Json {
                data: "a\nb".into(),
                id: None,
            },
            Frame::Json {
                data: "2".into(),
                id: Some("8".into()),
            },
        ];
        for cut in 0..=input.len() {
            let (a, b) = input.split_at(cut);
            let mut owned = FrameDecoder::new(WireFormat::Sse);
            let mut lent = FrameDecoder::new(WireFormat::Sse);
            let (mut from_owned, mut from_lent) = (Vec::new(), Vec::new());
            for chunk in [a, b] {
                owned.push(chunk);
                lent.push(chunk);
                while let Some(f) = owned.next_frame().unwrap() {
                    from_owned.push(f);
                }
                while let Some(f) = lent.next_frame_ref().unwrap() {
                    from_lent.push(f.into_frame());
                }
            }
            while let Some(f) = owned.finish().unwrap() {
                from_owned.push(f);
            }
            while let Some(f) = lent.finish_ref().unwrap() {
                from_lent.push(f.into_frame());
            }
            assert_eq!(from_owned, want, "owned, cut at {cut}");
            assert_eq!(from_lent, want, "lent, cut at {cut}");
        }
    }

    #[cfg(feature = "proto")]
    #[test]
    fn protobuf_frames_decode_to_events() {
        use crate::codec::proto::write_frame;
        use crate::event::{TextMessageContent, TextMessageEnd};
        let mut wire = Vec::new();
        write_frame(&mut wire, &TextMessageContent::new("m", "Hi").into()).unwrap();
        write_frame(&mut wire, &TextMessageEnd::new("m").into()).unwrap();
        let mut d = FrameDecoder::with_max_frame_size(WireFormat::Proto, 1024);
        let (a, b) = wire.split_at(7);
        d.push(a);
        assert!(d.next_frame().unwrap().is_none());
        d.push(b);
        assert!(matches!(d.next_frame().unwrap(), Some(Frame::Event(_))));
        assert!(matches!(d.finish().unwrap(), Some(Frame::Event(_))));
        assert!(d.finish().unwrap().is_none());
        let mut d = FrameDecoder::with_max_frame_size(WireFormat::Proto, 1024);
        d.push(&wire);
        assert!(matches!(
            d.next_frame_ref().unwrap(),
            Some(FrameRef::Event(_))
        ));
        assert!(matches!(d.finish_ref().unwrap(), Some(FrameRef::Event(_))));
        assert!(d.finish_ref().unwrap().is_none());
        let mut d = FrameDecoder::with_max_frame_size(WireFormat::Proto, 1024);
        d.push(&wire[..wire.len() - 1]);
        assert!(d.next_frame().unwrap().is_some());
        assert!(matches!(d.finish(), Err(FrameError::Proto(_))));
    }

    #[test]
    fn sse_frame_limit_is_an_error() {
        let mut d = FrameDecoder::with_max_frame_size(WireFormat::Sse, 8);
        d.push(b"data: 0123456789\n\n");
        assert!(matches!(d.next_frame(), Err(FrameError::Sse(_))));
    }

    #[test]
    fn a_decoder_reads_its_format() {
        assert_eq!(FrameDecoder::new(WireFormat::Sse).format(), WireFormat::Sse);
        #[cfg(feature = "proto")]
        assert_eq!(
            FrameDecoder::new(WireFormat::Proto).format(),
            WireFormat::Proto
        );
    }
}
