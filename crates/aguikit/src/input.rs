//! Reading event streams from a file or standard input, incrementally: a JSON array, JSON
//! Lines, an SSE stream, a conformance case file or length-prefixed protobuf, told apart by
//! their first bytes.
//!
//! JSON Lines, SSE and JSON arrays are read in 64 KiB chunks and handed out one event at a
//! time (the JSON text of each event, borrowed from the reader's buffer), so memory does not
//! grow with the input. A case file and a single JSON object are read whole: their elements
//! are then handed out the same way, as JSON text for the typed decoders.
//!
//! Nothing longer than the frame limit (`--max-frame-bytes`) is ever held: a JSON line, an
//! array element, an SSE line or frame, or a document read whole over it ends the reading
//! with [`ReadError::Framing`], naming the limit and the flag, once the limit is passed and
//! not after reading the rest.

use crate::term::{ProgressBar, Unit};
use aguikit_core::codec::proto::{self, ProtoError, ProtoFrameDecoder};
use aguikit_core::codec::sse::{SseDecoder, SseError};
use aguikit_core::event::DecodeError;
use serde_json::Value;
use std::io::Read;
use std::ops::{ControlFlow, Range};

/// One input event as read: its JSON, or why it could not even be parsed as JSON.
pub type RawEvent = Result<Value, String>;

/// The default of `--max-frame-bytes`: the largest SSE frame, JSON line or protobuf body read
/// or written (16 MiB, the limit of the library's decoders).
pub const DEFAULT_MAX_FRAME_BYTES: usize = aguikit_core::codec::sse::DEFAULT_MAX_FRAME_SIZE;

/// How much is read at a time.
const CHUNK: usize = 64 * 1024;

/// Files from this size on get a progress bar while they are read (on a terminal).
const PROGRESS_FROM_BYTES: u64 = 8 << 20;

/// The format an input was detected as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `[ {...}, ... ]`
    JsonArray,
    /// One JSON object per line.
    JsonLines,
    /// `data: {...}` frames.
    Sse,
    /// A conformance case (`{"events": [...], ...}`).
    Case,
    /// Length-prefixed protobuf envelopes (`application/vnd.ag-ui.event+proto`), told apart
    /// by a first byte no text format starts with (a frame under 16 MiB starts with 0).
    Protobuf,
}

/// Why an input could not be read to its end. Every event before the problem was handed out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// The file or standard input could not be read.
    Io(String),
    /// The input is none of the formats, or a JSON array or document is not JSON.
    Unrecognised(String),
    /// The bytes cannot be split into events past this point: an SSE framing error (invalid
    /// UTF-8, a frame over the limit) or a JSON line over the limit. `event` is the index the
    /// next event would have had.
    Framing {
        /// Index of the event that could not be read.
        event: usize,
        /// What is wrong.
        message: String,
    },
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(m) | ReadError::Unrecognised(m) => f.write_str(m),
            ReadError::Framing { message, .. } => f.write_str(message),
        }
    }
}

impl From<ReadError> for String {
    fn from(e: ReadError) -> String {
        e.to_string()
    }
}

/// A byte source: a file (with a progress bar when it is big and standard error is a
/// terminal), standard input, or any reader.
pub struct Source {
    reader: Box<dyn Read + Send>,
    name: String,
    bar: Option<ProgressBar>,
    /// A regular file: a read never waits for a writer.
    regular: bool,
}

impl Source {
    /// Opens FILE, or standard input for `-`.
    pub fn open(path: &str) -> Result<Source, String> {
        if path == "-" {
            return Ok(Source::from_reader(
                Box::new(std::io::stdin()),
                "standard input",
            ));
        }
        let file = std::fs::File::open(path).map_err(|e| format!("reading {path}: {e}"))?;
        let metadata = file.metadata().ok();
        let len = metadata.as_ref().map_or(0, |m| m.len());
        let regular = metadata.as_ref().is_some_and(|m| m.is_file());
        let mut source = Source::from_reader(Box::new(file), path);
        source.regular = regular;
        if len >= PROGRESS_FROM_BYTES {
            source.bar = Some(ProgressBar::stderr(
                &format!("reading {path}"),
                len,
                Unit::Bytes,
            ));
        }
        Ok(source)
    }

    /// Reads from `reader`; `name` names it in errors.
    pub fn from_reader(reader: Box<dyn Read + Send>, name: &str) -> Source {
        Source {
            reader,
            name: name.to_owned(),
            bar: None,
            regular: false,
        }
    }

    /// Appends up to one chunk (64 KiB) to `buf`; 0 at the end of the input.
    pub fn read_chunk(&mut self, buf: &mut Vec<u8>) -> Result<usize, ReadError> {
        let len = buf.len();
        buf.resize(len + CHUNK, 0);
        let n = loop {
            match self.reader.read(&mut buf[len..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    buf.truncate(len);
                    return Err(ReadError::Io(format!("reading {}: {e}", self.name)));
                }
            }
        };
        buf.truncate(len + n);
        if let Some(bar) = &mut self.bar {
            if n == 0 {
                bar.finish();
            } else {
                bar.inc(n as u64);
            }
        }
        Ok(n)
    }
}

/// How the detected input is read.
enum Body {
    /// JSON Lines, streamed: `buf[start..]` is unread, `buf[start..scan]` holds no LF.
    Lines {
        buf: Vec<u8>,
        start: usize,
        scan: usize,
    },
    /// SSE, streamed through the decoder (which holds the bytes pushed so far).
    Sse(Box<SseDecoder>),
    /// Protobuf, streamed through the frame decoder; each event is handed out as its JSON,
    /// written into `json`.
    Proto {
        decoder: Box<ProtoFrameDecoder>,
        json: Vec<u8>,
    },
    /// A JSON array, streamed element by element: `buf[start..]` is unread.
    Array {
        buf: Vec<u8>,
        start: usize,
        scan: ArrayScan,
    },
    /// Read whole, at most `--max-frame-bytes` of it: one JSON document (a case file or one
    /// event).
    Whole { buf: Vec<u8>, layout: Layout },
}

/// Where the events of an input read whole are.
enum Layout {
    /// The elements of the array at this range.
    Array(Range<usize>),
    /// One event: this range.
    One(Range<usize>),
}

/// Reads the events of a stream, one at a time, from a [`Source`].
pub struct EventReader {
    source: Source,
    format: Format,
    body: Body,
    max_frame_bytes: usize,
}

impl EventReader {
    /// Whether the input is a regular file, whose reads never wait for a writer (unlike
    /// standard input or a pipe, which may be live).
    pub fn is_regular_file(&self) -> bool {
        self.source.regular
    }

    /// Opens FILE (or `-`) and detects its format from its first bytes.
    pub fn open(path: &str, max_frame_bytes: usize) -> Result<EventReader, ReadError> {
        let source = Source::open(path).map_err(ReadError::Io)?;
        EventReader::new(source, max_frame_bytes)
    }

    /// Detects the format of `source` from its first bytes. `max_frame_bytes` bounds an SSE
    /// frame and a JSON line.
    pub fn new(mut source: Source, max_frame_bytes: usize) -> Result<EventReader, ReadError> {
        let mut buf = Vec::new();
        let mut eof = false;
        let mut bom_checked = false;
        // The first bytes that are not a BOM or whitespace, and enough of them to tell SSE's
        // field names apart.
        let start = loop {
            if let Some(&first) = buf.first()
                && !bom_checked
                && is_binary_start(first)
            {
                let mut decoder = ProtoFrameDecoder::with_max_frame_size(max_frame_bytes);
                decoder.push(&buf);
                return Ok(EventReader {
                    source,
                    format: Format::Protobuf,
                    body: Body::Proto {
                        decoder: Box::new(decoder),
                        json: Vec::new(),
                    },
                    max_frame_bytes,
                });
            }
            if !bom_checked && (buf.len() >= 3 || eof) {
                if buf.starts_with(b"\xEF\xBB\xBF") {
                    buf.drain(..3);
                }
                bom_checked = true;
            }
            if bom_checked {
                match buf.iter().position(|b| !b.is_ascii_whitespace()) {
                    Some(i) if eof || buf.len() - i >= 8 => break i,
                    Some(_) => {}
                    None if eof => break buf.len(),
                    // Leading blank lines are not kept.
                    None => buf.clear(),
                }
            }
            eof = source.read_chunk(&mut buf)? == 0;
        };
        let rest = &buf[start..];
        let (format, body) = match rest.first() {
            None => (
                Format::JsonLines,
                Body::Lines {
                    buf: Vec::new(),
                    start: 0,
                    scan: 0,
                },
            ),
            Some(b'[') => (
                Format::JsonArray,
                Body::Array {
                    buf,
                    // After the `[`.
                    start: start + 1,
                    scan: ArrayScan::default(),
                },
            ),
            Some(b'{') => detect_object(&mut source, buf, start, eof, max_frame_bytes)?,
            Some(_) if looks_like_sse(rest) => {
                let mut decoder = SseDecoder::with_max_frame_size(max_frame_bytes);
                decoder.push(rest);
                (Format::Sse, Body::Sse(Box::new(decoder)))
            }
            Some(_) => {
                return Err(ReadError::Unrecognised(
                    "unrecognised input: expected a JSON array, JSON Lines, an SSE stream (data: lines), a case file or length-prefixed protobuf".into(),
                ));
            }
        };
        Ok(EventReader {
            source,
            format,
            body,
            max_frame_bytes,
        })
    }

    /// The detected format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Hands the JSON text of every event, in order, to `f` (until it breaks). The text is
    /// one JSON value with perhaps whitespace around it, or not JSON at all (a broken line
    /// or frame); it is valid UTF-8 for SSE only.
    ///
    /// # Errors
    ///
    /// When the input cannot be read to its end; every event before the problem was handed
    /// to `f`. A protobuf event that breaks the schema ([`Item::Undecodable`]) ends the
    /// reading here too.
    pub fn for_each(
        &mut self,
        mut f: impl FnMut(&[u8]) -> ControlFlow<()>,
    ) -> Result<(), ReadError> {
        let mut undecodable = None;
        let mut count = 0;
        let read = self.for_each_item(|item| match item {
            Item::Event(json) => {
                count += 1;
                f(json)
            }
            Item::Undecodable(u) => {
                undecodable = Some(ReadError::Framing {
                    event: count,
                    message: format!("event {count}: {}", u.error),
                });
                ControlFlow::Break(())
            }
            Item::Reading => ControlFlow::Continue(()),
        });
        match undecodable {
            Some(e) => Err(e),
            None => read,
        }
    }

    /// As [`for_each`](Self::for_each), and also tells `f` each time the reader is about to
    /// wait for more input ([`Item::Reading`]): the moment to flush what was written, so that
    /// output follows a live input (`agui record URL -o - | agui decode -`).
    ///
    /// # Errors
    ///
    /// As [`for_each`](Self::for_each).
    pub fn for_each_item(
        &mut self,
        mut f: impl FnMut(Item<'_>) -> ControlFlow<()>,
    ) -> Result<(), ReadError> {
        match &mut self.body {
            Body::Whole { buf, layout } => {
                match layout {
                    Layout::Array(range) => {
                        array_elements(&buf[range.clone()], &mut |json| f(Item::Event(json)));
                    }
                    Layout::One(range) => {
                        let _ = f(Item::Event(&buf[range.clone()]));
                    }
                }
                Ok(())
            }
            Body::Proto { decoder, json } => {
                let mut chunk = Vec::with_capacity(CHUNK);
                let mut count = 0usize;
                let unreadable = |count: usize, e: ProtoError| ReadError::Framing {
                    event: count,
                    message: match e {
                        ProtoError::FrameTooLarge { len, max } => format!(
                            "event {count}: a protobuf frame of {len} bytes, over the limit of \
                             {max} bytes (raise it with --max-frame-bytes)"
                        ),
                        e => format!("event {count}: {e}"),
                    },
                };
                loop {
                    loop {
                        let body = match decoder.next_frame() {
                            Ok(Some(body)) => body,
                            Ok(None) => break,
                            Err(e) => return Err(unreadable(count, e)),
                        };
                        let item = match proto::decode_event(&body) {
                            Ok(Some(event)) => {
                                json.clear();
                                event.write_json(json);
                                Item::Event(json)
                            }
                            // An event of a later protocol version: skipped, as the
                            // reference (and `agui decode`) do.
                            Ok(None) => continue,
                            Err(ProtoError::Invalid {
                                event_type,
                                path,
                                message,
                            }) => {
                                let u = Undecodable {
                                    event_type: event_type.as_str().to_owned(),
                                    error: DecodeError::Invalid {
                                        event_type,
                                        path,
                                        message,
                                        excerpt: String::new(),
                                    },
                                };
                                let _ = f(Item::Undecodable(&u));
                                return Ok(());
                            }
                            Err(e) => return Err(unreadable(count, e)),
                        };
                        count += 1;
                        if f(item).is_break() {
                            return Ok(());
                        }
                    }
                    chunk.clear();
                    if f(Item::Reading).is_break() {
                        return Ok(());
                    }
                    if self.source.read_chunk(&mut chunk)? == 0 {
                        return decoder.finish().map_err(|e| unreadable(count, e));
                    }
                    decoder.push(&chunk);
                }
            }
            Body::Array { buf, start, scan } => {
                let max = self.max_frame_bytes;
                let mut eof = false;
                loop {
                    match scan.next(buf, start, eof, max, &mut |json| f(Item::Event(json)))? {
                        Scanned::Stopped | Scanned::Done => return Ok(()),
                        Scanned::More => {}
                    }
                    // Keep only what is not handed out yet, moving each byte at most once
                    // on average.
                    let keep = *start;
                    if keep > 0 && keep >= buf.len() - keep {
                        buf.drain(..keep);
                        *start -= keep;
                        scan.shift(keep);
                    }
                    if f(Item::Reading).is_break() {
                        return Ok(());
                    }
                    eof = self.source.read_chunk(buf)? == 0;
                }
            }
            Body::Sse(decoder) => {
                let mut chunk = Vec::with_capacity(CHUNK);
                let mut count = 0usize;
                let framing = |count: usize, e: SseError| ReadError::Framing {
                    event: count,
                    message: format!("event {count}: {}", sse_error_message(&e)),
                };
                loop {
                    loop {
                        match decoder.next_frame_ref() {
                            Ok(Some(frame)) => {
                                count += 1;
                                if f(Item::Event(frame.data.as_bytes())).is_break() {
                                    return Ok(());
                                }
                            }
                            Ok(None) => break,
                            Err(e) => return Err(framing(count, e)),
                        }
                    }
                    chunk.clear();
                    if f(Item::Reading).is_break() {
                        return Ok(());
                    }
                    if self.source.read_chunk(&mut chunk)? == 0 {
                        break;
                    }
                    decoder.push(&chunk);
                }
                loop {
                    match decoder.finish_ref() {
                        Ok(Some(frame)) => {
                            count += 1;
                            if f(Item::Event(frame.data.as_bytes())).is_break() {
                                return Ok(());
                            }
                        }
                        Ok(None) => return Ok(()),
                        Err(e) => return Err(framing(count, e)),
                    }
                }
            }
            Body::Lines { buf, start, scan } => {
                let mut count = 0usize;
                loop {
                    while let Some(i) = memchr::memchr(b'\n', &buf[*scan..]) {
                        let end = *scan + i;
                        let line = &buf[*start..end];
                        *start = end + 1;
                        *scan = *start;
                        if let Some(line) = event_line(line) {
                            if line.len() > self.max_frame_bytes {
                                return Err(line_too_long(count, self.max_frame_bytes));
                            }
                            count += 1;
                            if f(Item::Event(line)).is_break() {
                                return Ok(());
                            }
                        }
                    }
                    *scan = buf.len();
                    if buf.len() - *start > self.max_frame_bytes {
                        return Err(line_too_long(count, self.max_frame_bytes));
                    }
                    // Drop the lines read once they are at least half the buffer, so that
                    // every byte is moved at most once on average.
                    if *start > 0 && *start >= buf.len() - *start {
                        buf.drain(..*start);
                        *scan -= *start;
                        *start = 0;
                    }
                    if f(Item::Reading).is_break() {
                        return Ok(());
                    }
                    if self.source.read_chunk(buf)? == 0 {
                        break;
                    }
                }
                if let Some(line) = event_line(&buf[*start..]) {
                    if line.len() > self.max_frame_bytes {
                        return Err(line_too_long(count, self.max_frame_bytes));
                    }
                    let _ = f(Item::Event(line));
                }
                *start = buf.len();
                Ok(())
            }
        }
    }
}

/// What [`EventReader::for_each_item`] hands out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Item<'a> {
    /// The JSON text of the next event.
    Event(&'a [u8]),
    /// The next event, read from protobuf, breaks the schema and has no JSON form: the last
    /// item (the reading stops after it).
    Undecodable(&'a Undecodable),
    /// Every event read so far was handed out; the reader is about to wait for more input.
    Reading,
}

/// A protobuf event that breaks the AG-UI schema: what the JSON decoder would have said of
/// it.
#[derive(Debug, Clone, PartialEq)]
pub struct Undecodable {
    /// Its type.
    pub event_type: String,
    /// What is wrong.
    pub error: DecodeError,
}

/// Whether an input starting with `byte` is binary (protobuf): no text format starts with
/// a control character other than whitespace.
fn is_binary_start(byte: u8) -> bool {
    byte < 0x20 && !byte.is_ascii_whitespace()
}

/// An input starting with `{`: a case file or one event read whole, or JSON Lines streamed.
///
/// The first line decides: when it is a complete JSON value and more follows, the input is
/// JSON Lines; otherwise the whole input is one JSON document (a case file when it is an
/// object with an `events` array and no `type`, else one event) or, when it is not, JSON Lines
/// (a first line that is not JSON is then event 0's error).
///
/// Nothing over `max` bytes is held: a first line longer than that is refused, and so is a
/// document read whole, unless what follows its first line is JSON Lines (a line holding a
/// JSON object), which is then streamed.
fn detect_object(
    source: &mut Source,
    mut buf: Vec<u8>,
    start: usize,
    mut eof: bool,
    max: usize,
) -> Result<(Format, Body), ReadError> {
    let lines = |buf: Vec<u8>| {
        (
            Format::JsonLines,
            Body::Lines {
                buf,
                start,
                scan: start,
            },
        )
    };
    // The first line, whole.
    let mut scan = start;
    let newline = loop {
        if let Some(i) = memchr::memchr(b'\n', &buf[scan..]) {
            break Some(scan + i);
        }
        scan = buf.len();
        if scan - start > max {
            return Err(line_too_long(0, max));
        }
        if eof {
            break None;
        }
        eof = source.read_chunk(&mut buf)? == 0;
    };
    if let Some(nl) = newline
        && serde_json::from_slice::<serde::de::IgnoredAny>(&buf[start..nl]).is_ok()
    {
        // Anything after the first line but whitespace makes it JSON Lines.
        loop {
            if buf[nl + 1..].iter().any(|b| !b.is_ascii_whitespace()) {
                return Ok(lines(buf));
            }
            // Whitespace only so far: not kept.
            buf.truncate(nl + 1);
            if eof || source.read_chunk(&mut buf)? == 0 {
                break;
            }
        }
    }
    // The whole input, if it is at most `max` bytes.
    while !eof && buf.len() - start <= max {
        eof = source.read_chunk(&mut buf)? == 0;
    }
    if buf.len() - start > max {
        // Too long to be read whole: JSON Lines whose first line is not JSON, or one
        // document over the limit. The line after the first tells them apart.
        if newline.is_some_and(|nl| next_line_is_object(&buf[nl + 1..])) {
            return Ok(lines(buf));
        }
        return Err(ReadError::Framing {
            event: 0,
            message: format!(
                "event 0: the input is one JSON document (a case file or an event spread over \
                 lines) longer than the limit of {max} bytes (raise it with --max-frame-bytes)"
            ),
        });
    }
    let end = buf.len();
    if serde_json::from_slice::<serde::de::IgnoredAny>(&buf[start..]).is_err() {
        return Ok(lines(buf));
    }
    let layout = match case_events(&buf[start..end]) {
        Some(events) => {
            return Ok((
                Format::Case,
                Body::Whole {
                    buf,
                    layout: Layout::Array(start + events.start..start + events.end),
                },
            ));
        }
        None => {
            let value = buf[start..end].trim_ascii_end();
            Layout::One(start..start + value.len())
        }
    };
    Ok((Format::JsonLines, Body::Whole { buf, layout }))
}

/// Whether the first non-blank line of `rest` (complete: a newline follows it) is a JSON
/// object, as the lines of JSON Lines are and the second line of a document spread over
/// lines (`  "key": value,`) is not.
fn next_line_is_object(rest: &[u8]) -> bool {
    rest.split(|&b| b == b'\n')
        .map(<[u8]>::trim_ascii)
        .find(|l| !l.is_empty())
        .filter(|l| l.first() == Some(&b'{'))
        .is_some_and(|l| serde_json::from_slice::<serde::de::IgnoredAny>(l).is_ok())
}

/// What [`ArrayScan::next`] stopped at.
enum Scanned {
    /// The bytes so far are scanned: more input is needed.
    More,
    /// The callback asked to stop.
    Stopped,
    /// The array and the input ended.
    Done,
}

/// Where the scan of a JSON array read as a stream is.
#[derive(Debug, Default)]
struct ArrayScan {
    /// Elements handed out.
    count: usize,
    state: ArrayState,
}

/// What a streamed JSON array expects next.
#[derive(Debug, Default, Clone, Copy)]
enum ArrayState {
    /// After `[`: an element or `]`.
    #[default]
    First,
    /// After `,`: an element.
    Value,
    /// After an element: `,` or `]`.
    Next,
    /// Inside an element (which starts at the reader's `start`): the scan goes on at `at`,
    /// `depth` brackets deep, perhaps inside a string.
    In {
        at: usize,
        depth: usize,
        in_string: bool,
        kind: ElementKind,
    },
    /// After `]`: only whitespace may follow.
    Done,
}

/// How an array element ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ElementKind {
    /// At its closing quote.
    String,
    /// At the bracket that closes its first.
    Nested,
    /// Before a `,`, `]`, `}` or whitespace.
    Scalar,
}

impl ArrayScan {
    /// Hands `f` every element of `buf[*start..]` that is complete, advancing `*start` past
    /// what is handed out. `eof`: no byte follows `buf`.
    fn next(
        &mut self,
        buf: &[u8],
        start: &mut usize,
        eof: bool,
        max: usize,
        f: &mut impl FnMut(&[u8]) -> ControlFlow<()>,
    ) -> Result<Scanned, ReadError> {
        let broken = |count: usize, message: String| ReadError::Framing {
            event: count,
            message: format!("event {count}: invalid JSON array: {message}"),
        };
        loop {
            let count = self.count;
            if let ArrayState::In {
                mut at,
                mut depth,
                mut in_string,
                kind,
            } = self.state
            {
                let from = *start;
                let end = loop {
                    if in_string {
                        match memchr::memchr2(b'"', b'\\', buf.get(at..).unwrap_or_default()) {
                            None => {
                                at = at.max(buf.len());
                                break None;
                            }
                            Some(k) if buf[at + k] == b'\\' => at += k + 2,
                            Some(k) => {
                                at += k + 1;
                                in_string = false;
                                if kind == ElementKind::String {
                                    break Some(at);
                                }
                            }
                        }
                        continue;
                    }
                    let Some(&b) = buf.get(at) else {
                        break None;
                    };
                    match (kind, b) {
                        (ElementKind::Scalar, b',' | b']' | b'}') => break Some(at),
                        (ElementKind::Scalar, b) if b.is_ascii_whitespace() => break Some(at),
                        (ElementKind::Nested, b'"') => in_string = true,
                        (ElementKind::Nested, b'{' | b'[') => depth += 1,
                        (ElementKind::Nested, b'}' | b']') => {
                            depth -= 1;
                            if depth == 0 {
                                break Some(at + 1);
                            }
                        }
                        _ => {}
                    }
                    at += 1;
                };
                let Some(end) = end else {
                    if at.min(buf.len()) - from > max {
                        return Err(element_too_long(count, max));
                    }
                    if eof {
                        return Err(broken(count, "the input ends inside this event".into()));
                    }
                    self.state = ArrayState::In {
                        at,
                        depth,
                        in_string,
                        kind,
                    };
                    return Ok(Scanned::More);
                };
                if end - from > max {
                    return Err(element_too_long(count, max));
                }
                self.state = ArrayState::Next;
                self.count += 1;
                *start = end;
                if f(&buf[from..end]).is_break() {
                    return Ok(Scanned::Stopped);
                }
                continue;
            }
            let i = skip_ws(buf, *start);
            *start = i;
            let Some(&b) = buf.get(i) else {
                return match (self.state, eof) {
                    (_, false) => Ok(Scanned::More),
                    (ArrayState::Done, true) => Ok(Scanned::Done),
                    _ => Err(broken(
                        count,
                        "the input ends before its closing `]`".into(),
                    )),
                };
            };
            let found = || {
                let c = buf[i..].utf8_chunks().next().map_or("", |c| c.valid());
                format!(
                    "{:?}",
                    c.chars().next().unwrap_or(char::REPLACEMENT_CHARACTER)
                )
            };
            match (self.state, b) {
                (ArrayState::Done, _) => {
                    return Err(broken(count, format!("{} after its closing `]`", found())));
                }
                (ArrayState::First | ArrayState::Next, b']') => self.state = ArrayState::Done,
                (ArrayState::Next, b',') => self.state = ArrayState::Value,
                (ArrayState::Next, _) => {
                    return Err(broken(
                        count,
                        format!("expected `,` or `]`, found {}", found()),
                    ));
                }
                (ArrayState::First | ArrayState::Value, b',' | b']') => {
                    return Err(broken(
                        count,
                        format!("expected an event, found {}", found()),
                    ));
                }
                (_, b) => {
                    let kind = match b {
                        b'"' => ElementKind::String,
                        b'{' | b'[' => ElementKind::Nested,
                        _ => ElementKind::Scalar,
                    };
                    self.state = ArrayState::In {
                        at: i + 1,
                        depth: usize::from(kind == ElementKind::Nested),
                        in_string: kind == ElementKind::String,
                        kind,
                    };
                    continue;
                }
            }
            *start = i + 1;
        }
    }

    /// The bytes before `n` were dropped from the buffer.
    fn shift(&mut self, n: usize) {
        if let ArrayState::In { at, .. } = &mut self.state {
            *at -= n;
        }
    }
}

fn element_too_long(event: usize, max: usize) -> ReadError {
    ReadError::Framing {
        event,
        message: format!(
            "event {event}: an element of the JSON array longer than the limit of {max} bytes \
             (raise it with --max-frame-bytes)"
        ),
    }
}

fn line_too_long(event: usize, max: usize) -> ReadError {
    ReadError::Framing {
        event,
        message: format!(
            "event {event}: a JSON line longer than the limit of {max} bytes \
             (raise it with --max-frame-bytes)"
        ),
    }
}

/// What an SSE framing error says, with the limit and the flag that raises it when a line
/// or frame is over the limit.
pub fn sse_error_message(e: &SseError) -> String {
    match e {
        SseError::FrameTooLarge { limit, offset } => format!(
            "an SSE line or frame longer than the limit of {limit} bytes, from byte {offset} \
             (raise it with --max-frame-bytes)"
        ),
        _ => e.to_string(),
    }
}

/// Whether `body` starts as an SSE stream does: a field or a comment.
pub fn looks_like_sse(body: &[u8]) -> bool {
    [&b"data:"[..], b":", b"id:", b"event:", b"retry:"]
        .iter()
        .any(|p| body.starts_with(p))
}

/// A line of JSON Lines without its CR, or `None` when it is blank.
fn event_line(line: &[u8]) -> Option<&[u8]> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.iter()
        .any(|b| !b.is_ascii_whitespace())
        .then_some(line)
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The end of the JSON string starting at `b[i]` (its opening quote).
fn string_end(b: &[u8], mut i: usize) -> usize {
    i += 1;
    while let Some(k) = memchr::memchr2(b'"', b'\\', b.get(i..).unwrap_or_default()) {
        if b[i + k] == b'"' {
            return i + k + 1;
        }
        i += k + 2;
    }
    b.len()
}

/// The end of the JSON value starting at `b[i]`, in a document known to be valid JSON.
fn value_end(b: &[u8], mut i: usize) -> usize {
    match b.get(i) {
        Some(b'"') => string_end(b, i),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            while i < b.len() {
                match b[i] {
                    b'"' => {
                        i = string_end(b, i);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            return i + 1;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            b.len()
        }
        _ => {
            while i < b.len() && !matches!(b[i], b',' | b'}' | b']') && !b[i].is_ascii_whitespace()
            {
                i += 1;
            }
            i
        }
    }
}

/// Hands each element of the valid JSON array `doc` (whitespace around it allowed) to `f`.
fn array_elements(doc: &[u8], f: &mut impl FnMut(&[u8]) -> ControlFlow<()>) {
    let mut i = skip_ws(doc, 0) + 1;
    loop {
        i = skip_ws(doc, i);
        match doc.get(i) {
            None | Some(b']') => return,
            Some(b',') => i += 1,
            Some(_) => {
                let end = value_end(doc, i);
                if f(&doc[i..end]).is_break() {
                    return;
                }
                i = end;
            }
        }
    }
}

/// The range of the `events` array when the valid JSON document `doc` is a case file: an
/// object without a `type` member whose (last) `events` member is an array.
fn case_events(doc: &[u8]) -> Option<Range<usize>> {
    let mut i = skip_ws(doc, 0);
    if doc.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    let mut events = None;
    let mut has_type = false;
    loop {
        i = skip_ws(doc, i);
        match doc.get(i) {
            None | Some(b'}') => break,
            Some(b',') => {
                i += 1;
                continue;
            }
            _ => {}
        }
        let key_end = string_end(doc, i);
        let raw_key = &doc[i..key_end];
        let key: std::borrow::Cow<'_, str> = if raw_key.contains(&b'\\') {
            serde_json::from_slice::<String>(raw_key).ok()?.into()
        } else {
            String::from_utf8_lossy(&raw_key[1..raw_key.len().saturating_sub(1)])
        };
        i = skip_ws(doc, key_end) + 1; // the colon
        i = skip_ws(doc, i);
        let end = value_end(doc, i);
        match &*key {
            "type" => has_type = true,
            "events" => events = Some(i..end),
            _ => {}
        }
        i = end;
    }
    events.filter(|r| !has_type && doc.get(r.start) == Some(&b'['))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The format and the events of `input`, read in chunks of `chunk` bytes.
    fn read(input: &[u8], chunk: usize) -> Result<(Format, Vec<String>), ReadError> {
        /// Hands out at most `1` bytes per read, from `2` on.
        struct Trickle(Vec<u8>, usize, usize);
        impl Read for Trickle {
            fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
                let rest = &self.0[self.2..];
                let n = rest.len().min(self.1).min(out.len());
                out[..n].copy_from_slice(&rest[..n]);
                self.2 += n;
                Ok(n)
            }
        }
        let source = Source::from_reader(Box::new(Trickle(input.to_vec(), chunk, 0)), "test");
        let mut reader = EventReader::new(source, 64)?;
        let mut events = Vec::new();
        reader.for_each(|json| {
            events.push(String::from_utf8_lossy(json).into_owned());
            ControlFlow::Continue(())
        })?;
        Ok((reader.format(), events))
    }

    fn both(input: &str) -> (Format, Vec<String>) {
        let whole = read(input.as_bytes(), usize::MAX).unwrap();
        for chunk in [1, 2, 3, 7] {
            assert_eq!(
                read(input.as_bytes(), chunk).unwrap(),
                whole,
                "chunk {chunk}"
            );
        }
        whole
    }

    #[test]
    fn json_lines_are_streamed_line_by_line() {
        let (format, events) = both("\u{feff}\n  {\"a\":1}\r\n\n  \n{\"b\":\n[2]");
        assert_eq!(format, Format::JsonLines);
        assert_eq!(events, ["{\"a\":1}", "{\"b\":", "[2]"]);
    }

    #[test]
    fn one_object_is_one_event_and_a_case_file_gives_its_events() {
        assert_eq!(
            both("{\n  \"type\": \"X\"\n}\n"),
            (
                Format::JsonLines,
                vec!["{\n  \"type\": \"X\"\n}".to_owned()]
            )
        );
        assert_eq!(
            both("{\"name\":\"n\",\"events\":[{\"type\":\"A\"}, 5 ,\"]\"],\"x\":{}}\n \n"),
            (
                Format::Case,
                vec!["{\"type\":\"A\"}".into(), "5".into(), "\"]\"".into()]
            )
        );
        // With a `type`, or `events` not an array: one event.
        assert_eq!(both("{\"type\":\"A\",\"events\":[]}").1.len(), 1);
        assert_eq!(both("{\"events\":{}}").1.len(), 1);
        // The key may be escaped; the last `events` wins.
        assert_eq!(
            both("{\"ev\\u0065nts\":[1],\"events\":[2,3]}"),
            (Format::Case, vec!["2".into(), "3".into()])
        );
    }

    #[test]
    fn a_first_line_that_is_not_json_reads_the_rest_as_lines() {
        assert_eq!(
            both("{\"a\":\n{\"b\":1}\n"),
            (
                Format::JsonLines,
                vec!["{\"a\":".into(), "{\"b\":1}".into()]
            )
        );
    }

    #[test]
    fn arrays_give_their_elements() {
        assert_eq!(
            both(" [ {\"s\":\"a,]\\\"}\"} ,null,[1,[2]], 3.5e1 ,\"x\"] "),
            (
                Format::JsonArray,
                vec![
                    "{\"s\":\"a,]\\\"}\"}".into(),
                    "null".into(),
                    "[1,[2]]".into(),
                    "3.5e1".into(),
                    "\"x\"".into()
                ]
            )
        );
        assert_eq!(both("[]").1.len(), 0);
        assert_eq!(both("[\n]\n\n").1.len(), 0);
        assert_eq!(both("[\"a\\\\\",\"\\\"\"]").1, ["\"a\\\\\"", "\"\\\"\""]);
        // Broken arrays: the events before are handed out, then the error names the next.
        for (text, at, what) in [
            ("[1,", 1, "ends before its closing `]`"),
            ("[1,{\"a\":[", 1, "ends inside this event"),
            ("[1 2]", 1, "expected `,` or `]`, found '2'"),
            ("[1,]", 1, "expected an event, found ']'"),
            ("[,1]", 0, "expected an event, found ','"),
            ("[1] x", 1, "'x' after its closing `]`"),
        ] {
            let err = read(text.as_bytes(), 2).unwrap_err();
            assert!(
                matches!(&err, ReadError::Framing { event, message }
                    if *event == at && message.contains("invalid JSON array") && message.contains(what)),
                "{text}: {err:?}"
            );
        }
    }

    #[test]
    fn array_elements_and_first_lines_over_the_limit_are_refused_without_reading_them_whole() {
        /// `0`, then `x` for ever.
        struct Endless(&'static [u8]);
        impl Read for Endless {
            fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
                if self.0.is_empty() {
                    out.fill(b'x');
                    return Ok(out.len());
                }
                let n = self.0.len().min(out.len());
                out[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        // The second element of an array, then a first line, that never end.
        for (head, before) in [(&b"[{},{\"a\":\""[..], 1), (b"{\"a\":\"", 0)] {
            let mut seen = 0;
            let source = Source::from_reader(Box::new(Endless(head)), "test");
            let err = EventReader::new(source, 64)
                .and_then(|mut r| {
                    r.for_each(|_| {
                        seen += 1;
                        ControlFlow::Continue(())
                    })
                })
                .unwrap_err();
            assert_eq!(seen, before);
            assert!(
                matches!(&err, ReadError::Framing { event, message }
                    if *event == before && message.contains("limit of 64 bytes")
                        && message.contains("--max-frame-bytes")),
                "{err:?}"
            );
        }
    }

    #[test]
    fn a_document_over_the_limit_is_refused_unless_json_lines_follow() {
        let read_64 = |text: String| {
            let source = Source::from_reader(Box::new(std::io::Cursor::new(text)), "test");
            let mut events = 0;
            EventReader::new(source, 64)
                .and_then(|mut r| {
                    r.for_each(|_| {
                        events += 1;
                        ControlFlow::Continue(())
                    })
                })
                .map(|()| events)
        };
        // A case file spread over lines, over the limit.
        let case = format!(
            "{{\n  \"name\": \"{}\",\n  \"events\": []\n}}\n",
            "n".repeat(80)
        );
        let err = read_64(case).unwrap_err();
        assert!(err.to_string().contains("one JSON document"), "{err}");
        // JSON Lines whose first line is broken: streamed, the first line is event 0.
        let lines = format!("{{\"a\":\n{}", "{\"type\":\"X\"}\n".repeat(20));
        assert_eq!(read_64(lines), Ok(21));
    }

    #[test]
    fn sse_is_streamed_frame_by_frame() {
        let (format, events) = both(": c\n\ndata: {\"a\":1}\n\ndata: 2\r\ndata: 3\r\n\r\ndata: 4");
        assert_eq!(format, Format::Sse);
        assert_eq!(events, ["{\"a\":1}", "2\n3", "4"]);
    }

    #[test]
    fn empty_input_has_no_events_and_garbage_is_unrecognised() {
        assert_eq!(both(""), (Format::JsonLines, vec![]));
        assert_eq!(both(" \n\t\n"), (Format::JsonLines, vec![]));
        assert!(matches!(read(b"hello", 2), Err(ReadError::Unrecognised(_))));
    }

    #[test]
    fn lines_and_frames_over_the_limit_are_framing_errors_after_the_events_before() {
        let long = format!("{{\"a\":\"{}\"}}", "x".repeat(100));
        // Reads `text` with a 64-byte limit to its error: the events before, and the error.
        let read_to_error = |text: String| {
            let mut seen = 0;
            let source = Source::from_reader(Box::new(std::io::Cursor::new(text)), "test");
            let err = EventReader::new(source, 64)
                .unwrap()
                .for_each(|_| {
                    seen += 1;
                    ControlFlow::Continue(())
                })
                .unwrap_err();
            (seen, err)
        };
        let (seen, err) = read_to_error(format!("{{}}\n{{}}\n{long}\n"));
        assert_eq!(seen, 2);
        assert!(
            matches!(err, ReadError::Framing { event: 2, .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains("--max-frame-bytes"), "{err}");

        let (seen, err) = read_to_error(format!("data: {{}}\n\ndata: {long}\n\n"));
        assert_eq!(seen, 1);
        assert!(
            matches!(err, ReadError::Framing { event: 1, .. }),
            "{err:?}"
        );
    }
}
