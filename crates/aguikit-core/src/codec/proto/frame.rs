//! Length-prefixed framing of a protobuf event stream: each frame is a 4-byte big-endian
//! body length followed by one `ag_ui.Event` body.

use super::error::ProtoError;
use super::{DEFAULT_MAX_FRAME_SIZE, decode_event, encode_event_into};
use crate::event::Event;

/// Appends one frame (length prefix + body) for `event` to `out`.
///
/// Nothing is written, and [`ProtoError::NoProtobufForm`] returned, for an event with no
/// protobuf form ([`Event::Unknown`]); [`ProtoError::FrameTooLarge`] if the body does not
/// fit a 32-bit length.
///
/// ```
/// use aguikit_core::codec::proto::write_frame;
/// use aguikit_core::event::TextMessageEnd;
/// let mut out = Vec::new();
/// write_frame(&mut out, &TextMessageEnd::new("msg-1").into()).unwrap();
/// assert_eq!(&out[..4], [0, 0, 0, 0x0d]);
/// assert_eq!(out.len(), 4 + 0x0d);
/// ```
pub fn write_frame(out: &mut Vec<u8>, event: &Event) -> Result<(), ProtoError> {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    if !encode_event_into(event, out) {
        out.truncate(start);
        return Err(ProtoError::NoProtobufForm {
            event_type: event.type_str().to_owned(),
        });
    }
    let len = out.len() - start - 4;
    let Ok(len32) = u32::try_from(len) else {
        out.truncate(start);
        return Err(ProtoError::FrameTooLarge {
            len: len as u64,
            max: u32::MAX as usize,
        });
    };
    out[start..start + 4].copy_from_slice(&len32.to_be_bytes());
    Ok(())
}

/// An incremental reader of a length-prefixed protobuf event stream.
///
/// Feed it bytes as they arrive, in chunks of any size ([`push`](Self::push)), and take
/// complete frames out ([`next_event`](Self::next_event) or [`next_frame`](Self::next_frame))
/// until they answer `None`; at the end of the body call [`finish`](Self::finish), which
/// fails if a partial frame is left. The cost is linear in the bytes pushed whatever the
/// chunk sizes: nothing is rescanned, and consumed bytes are released in amortised
/// constant time.
///
/// A frame header announcing a body longer than the limit
/// ([`DEFAULT_MAX_FRAME_SIZE`] = 16 MiB unless set with
/// [`with_max_frame_size`](Self::with_max_frame_size)) fails at once, before its body is
/// waited for, so a reader that drains after each push never buffers more than one chunk
/// plus one frame. (The reference reader's limit is 10 MiB, counting the 4-byte prefix.)
///
/// Errors are final, as in the reference: after one, every call returns it again.
///
/// ```
/// use aguikit_core::codec::proto::{write_frame, ProtoFrameDecoder};
/// use aguikit_core::event::{TextMessageContent, TextMessageEnd};
/// let mut stream = Vec::new();
/// write_frame(&mut stream, &TextMessageContent::new("m", "Hi").into()).unwrap();
/// write_frame(&mut stream, &TextMessageEnd::new("m").into()).unwrap();
///
/// let mut decoder = ProtoFrameDecoder::new();
/// let mut events = Vec::new();
/// for chunk in stream.chunks(3) {
///     decoder.push(chunk);
///     while let Some(event) = decoder.next_event().unwrap() {
///         events.push(event);
///     }
/// }
/// decoder.finish().unwrap();
/// assert_eq!(events.len(), 2);
/// ```
#[derive(Debug, Clone)]
pub struct ProtoFrameDecoder {
    buf: Vec<u8>,
    /// Start of the unread bytes in `buf`.
    pos: usize,
    max_frame_size: usize,
    failed: Option<ProtoError>,
}

impl Default for ProtoFrameDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl ProtoFrameDecoder {
    /// A decoder with the default frame size limit ([`DEFAULT_MAX_FRAME_SIZE`]).
    pub fn new() -> Self {
        Self::with_max_frame_size(DEFAULT_MAX_FRAME_SIZE)
    }

    /// A decoder accepting bodies of at most `max` bytes.
    pub fn with_max_frame_size(max: usize) -> Self {
        ProtoFrameDecoder {
            buf: Vec::new(),
            pos: 0,
            max_frame_size: max,
            failed: None,
        }
    }

    /// The largest body this decoder accepts, in bytes.
    pub fn max_frame_size(&self) -> usize {
        self.max_frame_size
    }

    /// How many bytes are buffered and not yet returned.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Appends the next bytes of the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.failed.is_some() {
            return;
        }
        // Release consumed bytes once they are at least half the buffer: each byte is
        // moved at most once per halving, so the total work stays linear.
        if self.pos > 0 && self.pos * 2 >= self.buf.len() {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The body of the next complete frame, or `None` if more bytes are needed.
    fn take_body(&mut self) -> Result<Option<std::ops::Range<usize>>, ProtoError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let avail = &self.buf[self.pos..];
        let Some(header) = avail.first_chunk::<4>() else {
            return Ok(None);
        };
        let len = u32::from_be_bytes(*header) as usize;
        if len > self.max_frame_size {
            return Err(self.fail(ProtoError::FrameTooLarge {
                len: len as u64,
                max: self.max_frame_size,
            }));
        }
        if avail.len() - 4 < len {
            return Ok(None);
        }
        let start = self.pos + 4;
        self.pos = start + len;
        Ok(Some(start..self.pos))
    }

    fn fail(&mut self, e: ProtoError) -> ProtoError {
        self.failed = Some(e.clone());
        self.buf = Vec::new();
        self.pos = 0;
        e
    }

    /// The next frame's body, undecoded, or `None` if more bytes are needed.
    pub fn next_frame(&mut self) -> Result<Option<Vec<u8>>, ProtoError> {
        Ok(self.take_body()?.map(|r| self.buf[r].to_vec()))
    }

    /// The next event, or `None` if more bytes are needed.
    ///
    /// A frame holding only an event of a later protocol version is skipped (with a
    /// [`warning`](crate::warning)), as the reference skips it; any other frame that does
    /// not decode ([`decode_event`]) is an error, and so is an empty frame.
    pub fn next_event(&mut self) -> Result<Option<Event>, ProtoError> {
        loop {
            let Some(range) = self.take_body()? else {
                return Ok(None);
            };
            match decode_event(&self.buf[range]) {
                Ok(Some(event)) => return Ok(Some(event)),
                Ok(None) => continue,
                Err(e) => return Err(self.fail(e)),
            }
        }
    }

    /// Ends the stream: an error if a partial frame (or a partial length prefix) is left.
    pub fn finish(&self) -> Result<(), ProtoError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        match self.buffered() {
            0 => Ok(()),
            trailing => Err(ProtoError::TruncatedFrame { trailing }),
        }
    }
}
