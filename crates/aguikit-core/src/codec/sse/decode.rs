//! The incremental SSE decoder.

use std::mem;

use super::SseFrame;

/// The default for [`SseDecoder::with_max_frame_size`]: 16 MiB.
///
/// Large enough for any realistic AG-UI event (a `MESSAGES_SNAPSHOT` of a long conversation
/// included), small enough that a peer that never ends a line cannot exhaust memory. The
/// reference client fails at 10 Mi characters of unframed text.
pub const DEFAULT_MAX_FRAME_SIZE: usize = 16 * 1024 * 1024;

/// The UTF-8 byte order mark, skipped once at the start of a stream.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Why an SSE byte stream could not be decoded.
///
/// Every error is final: once [`SseDecoder::next_frame`] has returned one, it returns the
/// same error on every later call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SseError {
    /// The stream is not valid UTF-8. SSE streams are always UTF-8; WHATWG would replace
    /// the bad bytes with U+FFFD, but silently altering a protocol payload hides bugs, so
    /// this decoder refuses it. This includes a multi-byte character left incomplete at
    /// the end of the input.
    #[error("invalid UTF-8 in the SSE stream at byte {offset}")]
    InvalidUtf8 {
        /// Offset in the stream (counting from its first byte, BOM included) of the first
        /// byte that is not valid UTF-8.
        offset: u64,
    },
    /// A line, or the data of one frame, is longer than the decoder's maximum frame size
    /// ([`SseDecoder::with_max_frame_size`]).
    #[error(
        "SSE frame exceeds the maximum size of {limit} bytes (in the line starting at byte {offset})"
    )]
    FrameTooLarge {
        /// The configured limit in bytes.
        limit: usize,
        /// Offset in the stream of the start of the line that went over the limit.
        offset: u64,
    },
}

impl SseError {
    /// The offset in the stream (in bytes from its start) where the problem is.
    pub fn offset(&self) -> u64 {
        match self {
            SseError::InvalidUtf8 { offset } | SseError::FrameTooLarge { offset, .. } => *offset,
        }
    }
}

/// An incremental Server-Sent Events decoder: bytes in, [`SseFrame`]s out.
///
/// Feed it the body as it arrives with [`push`](Self::push), in chunks of any size split
/// anywhere (even inside a UTF-8 character or between the CR and LF of a CRLF); after each
/// push call [`next_frame`](Self::next_frame) until it returns `Ok(None)`. At the end of the
/// body call [`finish`](Self::finish) (until it returns `Ok(None)`).
///
/// [`next_frame_ref`](Self::next_frame_ref) and [`finish_ref`](Self::finish_ref) do the same
/// but lend the frame ([`SseFrameRef`]) instead of allocating it: the usual single-line
/// `data` is a slice of the decoder's buffer, so decoding costs no allocation and no copy
/// per frame. Both kinds of call can be mixed freely.
///
/// Parsing follows the WHATWG EventSource rules:
///
/// - Lines end in LF, CRLF or CR. A leading UTF-8 BOM is skipped.
/// - A line starting with `:` is a comment and ignored. Otherwise the field name is what is
///   before the first `:` and the value what is after it, minus one leading space; a line
///   without `:` is a field with an empty value. Unknown fields are ignored.
/// - `data` lines are joined with `\n`; `event` sets [`SseFrame::event`]; `id` sets
///   [`SseFrame::id`] and the [last event id](Self::last_event_id) unless it contains NUL;
///   `retry` sets [`SseFrame::retry`] and [`retry`](Self::retry) if it is ASCII digits only
///   (and fits in a `u64`).
/// - An empty line ends the frame. A frame with at least one `data` line is returned; one
///   without (comments only, or only `id`/`retry`/`event`) is not, though its `id` and
///   `retry` still take effect.
///
/// Where it differs from WHATWG: invalid UTF-8 is an error ([`SseError::InvalidUtf8`]), and
/// a last frame that the body does not end with a blank line is still returned by `finish`
/// (the reference client does this too).
///
/// Decoding costs time linear in the bytes pushed, whatever the chunk sizes: no byte is
/// scanned for line ends twice and the buffer is compacted only when at least half of it has
/// been consumed. Memory stays within a small multiple of the maximum frame size plus the
/// last chunk pushed, provided frames are drained after each push.
///
/// # Example
///
/// ```
/// use aguikit_core::codec::sse::SseDecoder;
///
/// let mut decoder = SseDecoder::new();
/// let mut data = Vec::new();
/// for chunk in [&b"\xEF\xBB\xBFid: 1\r"[..], b"\ndata: {\"a\":", b"1}\r\n\r\n: ping\n\ndata: 2"] {
///     decoder.push(chunk);
///     while let Some(frame) = decoder.next_frame()? {
///         data.push(frame.data);
///     }
/// }
/// while let Some(frame) = decoder.finish()? {
///     data.push(frame.data); // the last frame lacks its blank line, but is delivered
/// }
/// assert_eq!(data, [r#"{"a":1}"#, "2"]);
/// assert_eq!(decoder.last_event_id(), Some("1"));
/// # Ok::<(), aguikit_core::codec::sse::SseError>(())
/// ```
#[derive(Debug, Clone)]
pub struct SseDecoder {
    /// Text pushed and not yet compacted away, checked to be UTF-8 as it was pushed (once,
    /// in bulk, so that frames can be lent as `&str` for free); `buf[pos..]` is unconsumed.
    buf: String,
    /// Bytes pushed that are not in `buf`: the start of a character cut by the end of the
    /// last push (at most 3 bytes) or, once `bad` is set, everything from that byte on.
    raw: Vec<u8>,
    /// `raw[..raw_scan]` is known to hold no CR or LF (used once `bad` is set).
    raw_scan: usize,
    /// Stream offset of the first byte that is not UTF-8, `raw[0]`, once one was pushed. It
    /// is reported when the line holding it is read, as any line error.
    bad: Option<u64>,
    /// Start of the unconsumed text (the start of the current line).
    pos: usize,
    /// `buf[pos..scan]` is known to hold no CR or LF.
    scan: usize,
    /// Stream offset of `buf[0]`.
    base: u64,
    max_frame_size: usize,
    /// Whether the stream start has been checked for a BOM.
    bom_checked: bool,
    /// The last line ended in CR: an LF right after it belongs to the same line ending.
    after_cr: bool,
    /// `finish` was called: no more input will come.
    eof: bool,
    /// `frame` holds a dispatched frame (possibly lent out): clear it before reading on.
    dispatched: bool,
    /// The error returned, returned again on every later call.
    failed: Option<SseError>,
    /// The frame being assembled (or just dispatched).
    frame: PendingFrame,
    last_event_id: String,
    retry: Option<u64>,
    #[cfg(test)]
    stats: Stats,
}

/// Work counters that tests use to check the decoder is linear.
#[cfg(test)]
#[derive(Debug, Clone, Default)]
pub(super) struct Stats {
    /// Bytes passed to the line-end search.
    pub(super) scanned: u64,
    /// Bytes moved by compaction.
    pub(super) moved: u64,
}

/// Where the pending frame's data is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Data {
    /// No `data` line yet.
    #[default]
    None,
    /// One `data` line whose value is still in the buffer, at `buf[start..end]`: the common
    /// case, which costs no copy.
    Buf { start: usize, end: usize },
    /// In `PendingFrame::joined`: several lines, or one that compaction had to move out.
    Joined,
}

/// The frame being assembled. Its strings keep their capacity from frame to frame, so the
/// borrowing API allocates nothing in the steady state.
#[derive(Debug, Clone, Default)]
struct PendingFrame {
    data: Data,
    joined: String,
    /// The last `event` value; `has_event` is false when absent or empty.
    event: String,
    has_event: bool,
    /// The last valid `id` value.
    id: String,
    has_id: bool,
    retry: Option<u64>,
}

impl PendingFrame {
    fn clear(&mut self) {
        self.data = Data::None;
        self.joined.clear();
        self.has_event = false;
        self.has_id = false;
        self.retry = None;
    }
}

/// A frame lent by [`SseDecoder::next_frame_ref`]: the same content as [`SseFrame`], but
/// borrowed from the decoder, valid until its next call.
///
/// ```
/// use aguikit_core::codec::sse::SseDecoder;
///
/// let mut decoder = SseDecoder::new();
/// decoder.push(b"id: 7\ndata: {\"a\":1}\n\ndata: x\ndata: y\n\n");
/// let mut data = Vec::new();
/// while let Some(frame) = decoder.next_frame_ref()? {
///     data.push(frame.data.to_owned()); // or parse it in place
/// }
/// assert_eq!(data, [r#"{"a":1}"#, "x\ny"]);
/// # Ok::<(), aguikit_core::codec::sse::SseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SseFrameRef<'a> {
    /// As [`SseFrame::data`].
    pub data: &'a str,
    /// As [`SseFrame::event`].
    pub event: Option<&'a str>,
    /// As [`SseFrame::id`].
    pub id: Option<&'a str>,
    /// As [`SseFrame::retry`].
    pub retry: Option<u64>,
}

impl SseFrameRef<'_> {
    /// Copies the frame into an owned [`SseFrame`].
    pub fn to_frame(&self) -> SseFrame {
        SseFrame {
            data: self.data.to_owned(),
            event: self.event.map(str::to_owned),
            id: self.id.map(str::to_owned),
            retry: self.retry,
        }
    }
}

impl From<SseFrameRef<'_>> for SseFrame {
    fn from(frame: SseFrameRef<'_>) -> SseFrame {
        frame.to_frame()
    }
}

impl Default for SseDecoder {
    fn default() -> Self {
        SseDecoder::new()
    }
}

/// How many bytes at the end of `bytes` begin a character that continues past them (0 to
/// 3). Bytes that cannot begin one are left to the UTF-8 check.
fn cut_character(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(3) {
        let byte = bytes[bytes.len() - back];
        if byte & 0xC0 != 0x80 {
            let width = match byte {
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                0xF0..=0xF7 => 4,
                _ => 1,
            };
            return if width > back { back } else { 0 };
        }
    }
    0
}

impl SseDecoder {
    /// A decoder with the default maximum frame size, [`DEFAULT_MAX_FRAME_SIZE`] (16 MiB).
    pub fn new() -> Self {
        SseDecoder::with_max_frame_size(DEFAULT_MAX_FRAME_SIZE)
    }

    /// A decoder that fails with [`SseError::FrameTooLarge`] rather than buffer more than
    /// `max_frame_size` bytes for one line or one frame.
    ///
    /// Precisely: a line longer than `max_frame_size` bytes (field name included, line
    /// terminator not) is refused as soon as more than that many bytes of it have arrived,
    /// without waiting for its end; and a frame whose `data` lines joined with `\n` would
    /// exceed `max_frame_size` bytes is refused at the `data` line that crosses the limit.
    /// Comments and other fields are not accumulated, so they only count per line. There is
    /// no other, smaller cap.
    pub fn with_max_frame_size(max_frame_size: usize) -> Self {
        SseDecoder {
            buf: String::new(),
            raw: Vec::new(),
            raw_scan: 0,
            bad: None,
            pos: 0,
            scan: 0,
            base: 0,
            max_frame_size,
            bom_checked: false,
            after_cr: false,
            eof: false,
            dispatched: false,
            failed: None,
            frame: PendingFrame::default(),
            last_event_id: String::new(),
            retry: None,
            #[cfg(test)]
            stats: Stats::default(),
        }
    }

    /// The maximum frame size this decoder enforces, in bytes.
    pub fn max_frame_size(&self) -> usize {
        self.max_frame_size
    }

    /// Decodes a complete byte string: pushes it, finishes, and collects every frame.
    ///
    /// ```
    /// use aguikit_core::codec::sse::SseDecoder;
    ///
    /// let frames = SseDecoder::decode_all(b"data: 1\n\ndata: 2\n\n")?;
    /// assert_eq!(frames.len(), 2);
    /// # Ok::<(), aguikit_core::codec::sse::SseError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`next_frame`](Self::next_frame) and [`finish`](Self::finish).
    pub fn decode_all(input: &[u8]) -> Result<Vec<SseFrame>, SseError> {
        let mut decoder = SseDecoder::new();
        decoder.push(input);
        let mut frames = Vec::new();
        while let Some(frame) = decoder.finish()? {
            frames.push(frame);
        }
        Ok(frames)
    }

    /// Appends a chunk of the body. Nothing is parsed until
    /// [`next_frame`](Self::next_frame) is called; call it until it returns `Ok(None)`
    /// before pushing more, so that the buffer stays bounded.
    ///
    /// The chunk is checked to be UTF-8 here, in one pass; a byte that is not is reported
    /// by [`next_frame`](Self::next_frame) when it reaches the line holding it, exactly as
    /// if the check were made line by line.
    ///
    /// Bytes pushed after an error or after [`finish`](Self::finish) are ignored.
    pub fn push(&mut self, mut chunk: &[u8]) {
        if self.failed.is_some() || self.eof {
            return;
        }
        if self.bad.is_some() {
            self.raw.extend_from_slice(chunk);
            return;
        }
        if !self.raw.is_empty() {
            // Complete the character cut by the last push, or find it invalid.
            let need = 4usize.saturating_sub(self.raw.len()).min(chunk.len());
            let before = self.raw.len();
            self.raw.extend_from_slice(&chunk[..need]);
            let used = match std::str::from_utf8(&self.raw) {
                Ok(_) => self.raw.len(),
                Err(err) if err.valid_up_to() > 0 => err.valid_up_to(),
                Err(err) if err.error_len().is_none() => {
                    // Still cut: the chunk was shorter than the character.
                    return;
                }
                Err(_) => 0,
            };
            if used == 0 {
                // Not UTF-8: everything from here on stays raw.
                self.bad = Some(self.base + self.buf.len() as u64);
                self.raw.truncate(before);
                self.raw.extend_from_slice(chunk);
                return;
            }
            match std::str::from_utf8(&self.raw[..used]) {
                Ok(text) => self.buf.push_str(text),
                Err(_) => debug_assert!(false, "a checked prefix is not UTF-8"),
            }
            chunk = &chunk[used - before..];
            self.raw.clear();
        }
        let cut = cut_character(chunk);
        let (whole, rest) = chunk.split_at(chunk.len() - cut);
        match std::str::from_utf8(whole) {
            Ok(text) => {
                self.buf.push_str(text);
                self.raw.extend_from_slice(rest);
            }
            Err(err) => {
                let (good, bad) = whole.split_at(err.valid_up_to());
                match std::str::from_utf8(good) {
                    Ok(text) => self.buf.push_str(text),
                    Err(_) => debug_assert!(false, "a checked prefix is not UTF-8"),
                }
                self.bad = Some(self.base + self.buf.len() as u64);
                self.raw.extend_from_slice(bad);
                self.raw.extend_from_slice(rest);
            }
        }
    }

    /// Returns the next complete frame, or `Ok(None)` if the bytes pushed so far hold no
    /// further complete frame.
    ///
    /// # Errors
    ///
    /// [`SseError::InvalidUtf8`] for bytes that are not UTF-8, [`SseError::FrameTooLarge`]
    /// for a line or frame over the limit. Errors are final: every later call returns the
    /// same error.
    pub fn next_frame(&mut self) -> Result<Option<SseFrame>, SseError> {
        if !self.advance()? {
            return Ok(None);
        }
        let frame = &mut self.frame;
        let data = match frame.data {
            Data::Buf { start, end } => self.buf[start..end].to_owned(),
            // A dispatched frame has data; `None` cannot happen.
            Data::Joined | Data::None => mem::take(&mut frame.joined),
        };
        Ok(Some(SseFrame {
            data,
            event: frame.has_event.then(|| mem::take(&mut frame.event)),
            id: frame.has_id.then(|| mem::take(&mut frame.id)),
            retry: frame.retry,
        }))
    }

    /// As [`next_frame`](Self::next_frame), but lends the frame instead of allocating it.
    /// The frame borrows the decoder, so it must be dropped before the next call.
    ///
    /// ```
    /// use aguikit_core::codec::sse::SseDecoder;
    ///
    /// let mut decoder = SseDecoder::new();
    /// let mut lengths = Vec::new();
    /// for chunk in [&b"data: {\"a\""[..], b":1}\n\ndata: 2"] {
    ///     decoder.push(chunk);
    ///     while let Some(frame) = decoder.next_frame_ref()? {
    ///         lengths.push(frame.data.len());
    ///     }
    /// }
    /// while let Some(frame) = decoder.finish_ref()? {
    ///     lengths.push(frame.data.len());
    /// }
    /// assert_eq!(lengths, [7, 1]);
    /// # Ok::<(), aguikit_core::codec::sse::SseError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`next_frame`](Self::next_frame).
    pub fn next_frame_ref(&mut self) -> Result<Option<SseFrameRef<'_>>, SseError> {
        if !self.advance()? {
            return Ok(None);
        }
        let frame = &self.frame;
        let data = match frame.data {
            Data::Buf { start, end } => &self.buf[start..end],
            Data::Joined | Data::None => frame.joined.as_str(),
        };
        Ok(Some(SseFrameRef {
            data,
            event: frame.has_event.then_some(frame.event.as_str()),
            id: frame.has_id.then_some(frame.id.as_str()),
            retry: frame.retry,
        }))
    }

    /// Signals the end of the body and returns the next remaining frame; call it (or
    /// [`next_frame`](Self::next_frame)) until it returns `Ok(None)`.
    ///
    /// At the end of the body an unterminated last line is taken as a complete line, and a
    /// frame that was not closed by a blank line is still returned if it has `data`. This
    /// follows the reference client, which delivers such a trailing event, rather than
    /// WHATWG, which discards it. A stream that stops exactly at a frame boundary gives
    /// `Ok(None)`.
    ///
    /// # Errors
    ///
    /// As [`next_frame`](Self::next_frame); an incomplete UTF-8 character at the very end
    /// is [`SseError::InvalidUtf8`].
    pub fn finish(&mut self) -> Result<Option<SseFrame>, SseError> {
        self.eof = true;
        self.next_frame()
    }

    /// As [`finish`](Self::finish), but lends the frame like
    /// [`next_frame_ref`](Self::next_frame_ref).
    ///
    /// # Errors
    ///
    /// As [`finish`](Self::finish).
    pub fn finish_ref(&mut self) -> Result<Option<SseFrameRef<'_>>, SseError> {
        self.eof = true;
        self.next_frame_ref()
    }

    /// WHATWG's "last event ID": the value of the last `id` field (without NUL) of a frame
    /// that has ended, whether or not that frame had data. `None` if there was none or the
    /// last one was empty (an empty `id` resets it). This is what a reconnecting client
    /// sends as `Last-Event-ID`.
    pub fn last_event_id(&self) -> Option<&str> {
        (!self.last_event_id.is_empty()).then_some(self.last_event_id.as_str())
    }

    /// The reconnection time in milliseconds from the last valid `retry` field seen, if any.
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    #[cfg(test)]
    pub(super) fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Reads up to the end of the next frame with data; `Ok(true)` when `self.frame` holds
    /// it. Makes errors final.
    fn advance(&mut self) -> Result<bool, SseError> {
        if let Some(err) = &self.failed {
            return Err(err.clone());
        }
        if self.dispatched {
            self.dispatched = false;
            self.frame.clear();
        }
        self.step().map_err(|err| self.fail(err))
    }

    /// Makes `err` final and releases the buffers.
    fn fail(&mut self, err: SseError) -> SseError {
        self.failed = Some(err.clone());
        self.buf = String::new();
        self.raw = Vec::new();
        self.pos = 0;
        self.scan = 0;
        self.frame = PendingFrame::default();
        err
    }

    fn step(&mut self) -> Result<bool, SseError> {
        if !self.bom_checked {
            // The first bytes of the stream, wherever they are.
            let mut head = [0; 3];
            let mut n = 0;
            for &byte in self.buf.as_bytes()[self.pos..]
                .iter()
                .chain(&self.raw)
                .take(3)
            {
                head[n] = byte;
                n += 1;
            }
            if head[..n] != BOM[..n] {
                self.bom_checked = true;
            } else if n == BOM.len() {
                // A whole BOM is a character, so it is in `buf`.
                self.pos += n;
                self.scan = self.pos;
                self.bom_checked = true;
            } else if self.eof {
                // One or two bytes of a BOM and then the end: not UTF-8, reported below.
                self.bom_checked = true;
            } else {
                return Ok(false);
            }
        }
        loop {
            if self.after_cr {
                match self.buf.as_bytes().get(self.pos) {
                    Some(&byte) => {
                        if byte == b'\n' {
                            self.pos += 1;
                            self.scan = self.scan.max(self.pos);
                        }
                        self.after_cr = false;
                    }
                    // The next byte is raw, so it is no LF.
                    None if !self.raw.is_empty() || self.eof => self.after_cr = false,
                    None => {
                        self.compact();
                        return Ok(false);
                    }
                }
            }
            let start = self.pos;
            if self.whole_data_frame(start) {
                return Ok(true);
            }
            let from = self.scan;
            #[cfg(test)]
            let scanned_before = self.buf.len() - from;
            // The blank line that ends a frame needs no search.
            let found = if let Some(b'\n' | b'\r') = self.buf.as_bytes().get(from) {
                Some(0)
            } else {
                memchr::memchr2(b'\n', b'\r', &self.buf.as_bytes()[from..])
            };
            match found {
                Some(i) => {
                    #[cfg(test)]
                    {
                        self.stats.scanned += i as u64 + 1;
                    }
                    let end = from + i;
                    self.after_cr = self.buf.as_bytes()[end] == b'\r';
                    self.pos = end + 1;
                    self.scan = self.pos;
                    if self.line(start, end)? {
                        return Ok(true);
                    }
                }
                None => {
                    #[cfg(test)]
                    {
                        self.stats.scanned += scanned_before as u64;
                    }
                    let end = self.buf.len();
                    self.scan = end;
                    if !self.raw.is_empty() {
                        return self.line_into_raw(start);
                    }
                    if end - start > self.max_frame_size {
                        return Err(self.too_large(start));
                    }
                    if !self.eof {
                        self.compact();
                        return Ok(false);
                    }
                    if end > start {
                        self.pos = end;
                        // A non-empty line never ends a frame; the end of input does.
                        self.line(start, end)?;
                    }
                    return self.dispatch();
                }
            }
        }
    }

    /// The current line, from `start`, runs past `buf` into `raw`, so it is not UTF-8: it
    /// fails as a line that is not UTF-8 does, once it is complete (or too long).
    fn line_into_raw(&mut self, start: usize) -> Result<bool, SseError> {
        let in_buf = self.buf.len() - start;
        let offset = self.base + self.buf.len() as u64;
        let Some(bad) = self.bad else {
            // The start of a character cut by the end of the input so far.
            if in_buf + self.raw.len() > self.max_frame_size {
                return Err(self.too_large(start));
            }
            if !self.eof {
                self.compact();
                return Ok(false);
            }
            return Err(SseError::InvalidUtf8 { offset });
        };
        let found = memchr::memchr2(b'\n', b'\r', &self.raw[self.raw_scan..]);
        let in_raw = found.map_or(self.raw.len(), |i| self.raw_scan + i);
        self.raw_scan = in_raw;
        if in_buf + in_raw > self.max_frame_size {
            return Err(self.too_large(start));
        }
        if found.is_some() || self.eof {
            return Err(SseError::InvalidUtf8 { offset: bad });
        }
        self.compact();
        Ok(false)
    }

    /// Takes the usual end of a frame, `data:` and a value then two LFs, in one step when
    /// the frame has no data line yet (its `id`, `event` or `retry` lines, if any, were
    /// read already): the same outcome as reading it line by line, for less work. When the
    /// frame is not there whole, records how far the line is known to hold no line break,
    /// so that no byte is searched twice.
    #[inline]
    fn whole_data_frame(&mut self, start: usize) -> bool {
        let buf = self.buf.as_bytes();
        if self.frame.data != Data::None || !buf[start..].starts_with(b"data:") {
            return false;
        }
        let from = self.scan.max(start + 5);
        let found = memchr::memchr2(b'\n', b'\r', &buf[from..]);
        let end = found.map_or(buf.len(), |i| from + i);
        #[cfg(test)]
        {
            self.stats.scanned += (end - from) as u64;
        }
        self.scan = end;
        if found.is_none()
            || buf[end] != b'\n'
            || buf.get(end + 1) != Some(&b'\n')
            || end - start > self.max_frame_size
        {
            return false;
        }
        #[cfg(test)]
        {
            // The line's LF and the blank line.
            self.stats.scanned += 2;
        }
        let value_start = start + 5 + usize::from(buf[start + 5] == b' ');
        self.frame.data = Data::Buf {
            start: value_start,
            end,
        };
        self.pos = end + 2;
        self.scan = self.pos;
        // The frame has data now: `dispatch` commits its id and hands it out.
        matches!(self.dispatch(), Ok(true))
    }

    /// Processes the complete line `buf[start..end]` (terminator excluded); returns whether
    /// the line is empty and ends a frame with data.
    fn line(&mut self, start: usize, end: usize) -> Result<bool, SseError> {
        if start == end {
            return self.dispatch();
        }
        if end - start > self.max_frame_size {
            return Err(self.too_large(start));
        }
        let line = &self.buf[start..end];
        let (name, value, value_start) = match memchr::memchr(b':', line.as_bytes()) {
            Some(0) => return Ok(false), // a comment
            Some(colon) => {
                let skip = usize::from(line.as_bytes().get(colon + 1) == Some(&b' '));
                let value_start = colon + 1 + skip;
                (&line[..colon], &line[value_start..], start + value_start)
            }
            None => (line, "", end),
        };
        let frame = &mut self.frame;
        match name {
            "data" => {
                let held = match frame.data {
                    Data::None => 0,
                    Data::Buf { start, end } => end - start + 1,
                    Data::Joined => frame.joined.len() + 1,
                };
                if held + value.len() > self.max_frame_size {
                    return Err(SseError::FrameTooLarge {
                        limit: self.max_frame_size,
                        offset: self.base + start as u64,
                    });
                }
                match frame.data {
                    // The usual single-line frame stays where it is.
                    Data::None => {
                        frame.data = Data::Buf {
                            start: value_start,
                            end,
                        }
                    }
                    Data::Buf { start, end } => {
                        frame.joined.push_str(&self.buf[start..end]);
                        frame.joined.push('\n');
                        frame.joined.push_str(value);
                        frame.data = Data::Joined;
                    }
                    Data::Joined => {
                        frame.joined.push('\n');
                        frame.joined.push_str(value);
                    }
                }
            }
            "event" => {
                frame.event.clear();
                frame.event.push_str(value);
                frame.has_event = !value.is_empty();
            }
            "id" if !value.contains('\0') => {
                frame.id.clear();
                frame.id.push_str(value);
                frame.has_id = true;
            }
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                // Digits only, so parsing fails only on overflow: ignored like other junk.
                if let Ok(ms) = value.parse::<u64>() {
                    frame.retry = Some(ms);
                    self.retry = Some(ms);
                }
            }
            _ => {}
        }
        Ok(false)
    }

    /// Ends the pending frame: commits its id; returns whether it has data (and is then
    /// held in `self.frame` until the next call).
    fn dispatch(&mut self) -> Result<bool, SseError> {
        if self.frame.has_id {
            self.last_event_id.clone_from(&self.frame.id);
        }
        if self.frame.data == Data::None {
            self.frame.clear();
            Ok(false)
        } else {
            self.dispatched = true;
            Ok(true)
        }
    }

    fn too_large(&self, start: usize) -> SseError {
        SseError::FrameTooLarge {
            limit: self.max_frame_size,
            offset: self.base + start as u64,
        }
    }

    /// Drops consumed text once it is at least half the buffer, so that every byte is moved
    /// at most once on average.
    fn compact(&mut self) {
        let consumed = self.pos;
        if consumed == 0 || consumed < self.buf.len() - consumed {
            return;
        }
        // Pending data still in the buffer is about to go: copy it out, once per frame.
        if let Data::Buf { start, end } = self.frame.data {
            self.frame.joined.push_str(&self.buf[start..end]);
            self.frame.data = Data::Joined;
        }
        #[cfg(test)]
        {
            self.stats.moved += (self.buf.len() - consumed) as u64;
        }
        // `consumed` is the start of a line, so a character boundary.
        self.buf.drain(..consumed);
        self.base += consumed as u64;
        self.pos = 0;
        self.scan -= consumed;
    }
}

#[cfg(test)]
mod tests;
