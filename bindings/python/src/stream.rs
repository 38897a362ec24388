//! A whole recording in memory, read as `agui` reads its input: SSE, JSON Lines, a JSON
//! array, a conformance case file (its `events`), one JSON event, or length-prefixed
//! protobuf, told apart by the first bytes (a protobuf stream starts with a 0 byte: the
//! high byte of a frame length under 16 MiB).

use aguikit_core::Event;
use aguikit_core::codec::proto::{self, ProtoError, ProtoFrameDecoder};
use aguikit_core::codec::sse::{SseDecoder, SseError};
use serde_json::Value;
use std::ops::ControlFlow;

/// The largest frame read, by default (16 MiB, as `agui`).
pub const DEFAULT_MAX_FRAME: usize = aguikit_core::codec::sse::DEFAULT_MAX_FRAME_SIZE;

/// A recording's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `data: {...}` frames.
    Sse,
    /// Length-prefixed protobuf envelopes.
    Proto,
    /// JSON: an array, JSON Lines, a case file or one event.
    Json,
}

impl Format {
    /// Parses a `format=` argument.
    pub fn parse(name: &str) -> Option<Format> {
        match name {
            "sse" => Some(Format::Sse),
            "proto" | "protobuf" => Some(Format::Proto),
            "json" | "jsonl" => Some(Format::Json),
            _ => None,
        }
    }
}

/// One event of a recording, as read (borrowed where it can be).
#[derive(Debug)]
pub enum Item<'a> {
    /// The JSON text of one event, not yet known to be UTF-8 (a JSON line).
    Text(&'a [u8]),
    /// The JSON text of one event, already checked to be UTF-8 (an SSE frame's data: the
    /// SSE decoder checks it).
    Str(&'a str),
    /// One element of a JSON array or case file.
    Value(Value),
    /// A protobuf event.
    Event(Box<Event>),
}

impl Item<'_> {
    /// Decodes the item into an event.
    pub fn decode(self) -> Result<Event, aguikit_core::event::DecodeError> {
        match self {
            Item::Text(t) => Event::from_json_slice(t),
            Item::Str(t) => Event::from_json_str(t),
            Item::Value(v) => Event::from_value(v),
            Item::Event(e) => Ok(*e),
        }
    }
}

/// Where a recording's bytes became unreadable: the index the next event would have had,
/// and why.
pub type Broken = Option<(usize, String)>;

/// The bytes after a BOM and leading whitespace.
fn start(bytes: &[u8]) -> &[u8] {
    let b = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let i = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    &b[i..]
}

/// Whether `body` starts as an SSE stream does: a field or a comment.
fn looks_like_sse(body: &[u8]) -> bool {
    [&b"data:"[..], b":", b"id:", b"event:", b"retry:"]
        .iter()
        .any(|p| body.starts_with(p))
}

/// The format of `bytes`, detected from its first bytes, or why it is none.
pub fn detect(bytes: &[u8]) -> Result<Format, String> {
    let rest = start(bytes);
    if bytes.first() == Some(&0) {
        return Ok(Format::Proto);
    }
    match rest.first() {
        None | Some(b'[' | b'{') => Ok(Format::Json),
        Some(_) if looks_like_sse(rest) => Ok(Format::Sse),
        Some(_) => Err(
            "unrecognised input: expected SSE (data: lines), JSON Lines, a JSON array, a case file or length-prefixed protobuf"
                .into(),
        ),
    }
}

/// Hands every event of a recording to `f`, in order, until `f` breaks. Returns the
/// format read, and where the bytes became unreadable (every event before was handed out),
/// or why the input is no recording at all.
pub fn each(
    bytes: &[u8],
    format: Option<Format>,
    max_frame: usize,
    mut f: impl FnMut(Item<'_>) -> ControlFlow<()>,
) -> Result<(Format, Broken), String> {
    let format = match format {
        Some(f) => f,
        None => detect(bytes)?,
    };
    let broken = match format {
        Format::Sse => each_sse(bytes, max_frame, &mut f),
        Format::Proto => each_proto(bytes, max_frame, &mut f),
        Format::Json => each_json(bytes, max_frame, &mut f)?,
    };
    Ok((format, broken))
}

fn each_sse(
    bytes: &[u8],
    max_frame: usize,
    f: &mut impl FnMut(Item<'_>) -> ControlFlow<()>,
) -> Broken {
    let mut d = SseDecoder::with_max_frame_size(max_frame);
    d.push(bytes);
    let mut n = 0usize;
    loop {
        match d.finish_ref() {
            Ok(Some(frame)) => {
                n += 1;
                if f(Item::Str(frame.data)).is_break() {
                    return None;
                }
            }
            Ok(None) => return None,
            Err(e) => return Some((n, sse_message(&e))),
        }
    }
}

/// An SSE framing error for people.
pub fn sse_message(e: &SseError) -> String {
    match e {
        SseError::FrameTooLarge { .. } => {
            format!("{e} (raise the limit with max_frame_size=)")
        }
        _ => e.to_string(),
    }
}

fn each_proto(
    bytes: &[u8],
    max_frame: usize,
    f: &mut impl FnMut(Item<'_>) -> ControlFlow<()>,
) -> Broken {
    let mut d = ProtoFrameDecoder::with_max_frame_size(max_frame);
    d.push(bytes);
    let mut frame = 0usize;
    loop {
        match d.next_frame() {
            Ok(Some(body)) => {
                match proto::decode_event(&body) {
                    Ok(Some(e)) => {
                        if f(Item::Event(Box::new(e))).is_break() {
                            return None;
                        }
                    }
                    // An event of a later protocol version: skipped, as the reference does.
                    Ok(None) => {}
                    Err(e) => return Some((frame, proto_message(&e, frame))),
                }
                frame += 1;
            }
            Ok(None) => break,
            Err(e) => return Some((frame, proto_message(&e, frame))),
        }
    }
    d.finish().err().map(|e| (frame, proto_message(&e, frame)))
}

/// A protobuf error for people.
pub fn proto_message(e: &ProtoError, frame: usize) -> String {
    match e {
        ProtoError::FrameTooLarge { .. } if frame == 0 => format!(
            "frame {frame}: {e} (is the input length-prefixed protobuf? if so, raise max_frame_size=)"
        ),
        _ => format!("frame {frame}: {e}"),
    }
}

fn each_json(
    bytes: &[u8],
    max_frame: usize,
    f: &mut impl FnMut(Item<'_>) -> ControlFlow<()>,
) -> Result<Broken, String> {
    let body = start(bytes);
    match body.first() {
        None => Ok(None),
        Some(b'[') => {
            let v: Value =
                serde_json::from_slice(body).map_err(|e| format!("invalid JSON array: {e}"))?;
            if let Value::Array(items) = v {
                for item in items {
                    if f(Item::Value(item)).is_break() {
                        break;
                    }
                }
            }
            Ok(None)
        }
        _ => {
            // One JSON document (a case file or one event) when the whole is one value;
            // JSON Lines otherwise.
            if let Ok(v) = serde_json::from_slice::<Value>(body) {
                match v {
                    Value::Object(mut o)
                        if !o.contains_key("type")
                            && o.get("events").is_some_and(Value::is_array) =>
                    {
                        if let Some(Value::Array(items)) = o.remove("events") {
                            for item in items {
                                if f(Item::Value(item)).is_break() {
                                    break;
                                }
                            }
                        }
                    }
                    v => {
                        let _ = f(Item::Value(v));
                    }
                }
                return Ok(None);
            }
            let mut n = 0usize;
            for line in body.split(|&b| b == b'\n') {
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                if line.len() > max_frame {
                    return Ok(Some((
                        n,
                        format!(
                            "a JSON line longer than the limit of {max_frame} bytes (raise it with max_frame_size=)"
                        ),
                    )));
                }
                n += 1;
                if f(Item::Text(line)).is_break() {
                    break;
                }
            }
            Ok(None)
        }
    }
}
