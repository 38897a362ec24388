//! Turning events into wire bytes, behind one small enum so each encoding plugs in.

use crate::negotiate::WireFormat;
use aguikit_core::Event;
use aguikit_core::codec::sse::{SseEncoder, write_comment};
use bytes::Bytes;

/// Writes events in one encoding, reusing its buffers from event to event.
#[derive(Debug)]
pub(crate) enum FrameEncoder {
    Sse(SseEncoder),
    #[cfg(feature = "proto")]
    Proto(Vec<u8>),
}

impl FrameEncoder {
    pub(crate) fn new(encoding: WireFormat) -> FrameEncoder {
        match encoding {
            #[cfg(feature = "proto")]
            WireFormat::Proto => FrameEncoder::Proto(Vec::new()),
            // Without the `proto` feature negotiation never picks protobuf.
            _ => FrameEncoder::Sse(SseEncoder::new()),
        }
    }

    /// The frame of `event`, in this encoder's buffer until the next call.
    pub(crate) fn frame(&mut self, event: &Event) -> Result<&[u8], String> {
        match self {
            FrameEncoder::Sse(sse) => Ok(sse.encode_event(event, None)),
            #[cfg(feature = "proto")]
            FrameEncoder::Proto(buf) => {
                buf.clear();
                aguikit_core::codec::proto::write_frame(buf, event).map_err(|e| e.to_string())?;
                Ok(buf)
            }
        }
    }

    /// The keep-alive frame, when the encoding has one (SSE comments; protobuf has none).
    pub(crate) fn keep_alive(&self) -> Option<Bytes> {
        match self {
            FrameEncoder::Sse(_) => {
                let mut out = Vec::new();
                write_comment(&mut out, "keep-alive");
                Some(Bytes::from(out))
            }
            #[cfg(feature = "proto")]
            FrameEncoder::Proto(_) => None,
        }
    }
}
