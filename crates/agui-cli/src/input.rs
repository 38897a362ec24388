//! Reading event streams from files: a JSON array, JSON Lines, an SSE stream or a conformance
//! case file, told apart by their content.

use serde_json::Value;
use std::io::Read;

/// One input event as read: its JSON, or why it could not even be parsed as JSON.
pub type RawEvent = Result<Value, String>;

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
}

/// Reads FILE, or standard input for `-`.
pub fn read_source(path: &str) -> Result<Vec<u8>, String> {
    if path == "-" {
        let mut buf = Vec::new();
        std::io::stdin()
            .read_to_end(&mut buf)
            .map_err(|e| format!("reading standard input: {e}"))?;
        Ok(buf)
    } else {
        std::fs::read(path).map_err(|e| format!("reading {path}: {e}"))
    }
}

/// Detects the format and splits the input into events.
pub fn parse_events(bytes: &[u8]) -> Result<(Format, Vec<RawEvent>), String> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let body = &bytes[start..];
    match body.first() {
        None => Ok((Format::JsonLines, Vec::new())),
        Some(b'[') => {
            let v: Value =
                serde_json::from_slice(body).map_err(|e| format!("invalid JSON array: {e}"))?;
            let Value::Array(items) = v else {
                unreachable!("starts with [")
            };
            Ok((Format::JsonArray, items.into_iter().map(Ok).collect()))
        }
        Some(b'{') => {
            // A case file is one object holding `events`; otherwise JSON Lines.
            if let Ok(Value::Object(mut obj)) = serde_json::from_slice::<Value>(body) {
                if !obj.contains_key("type")
                    && let Some(Value::Array(events)) = obj.remove("events")
                {
                    return Ok((Format::Case, events.into_iter().map(Ok).collect()));
                }
                return Ok((Format::JsonLines, vec![Ok(Value::Object(obj))]));
            }
            Ok((Format::JsonLines, json_lines(body)))
        }
        Some(_) if looks_like_sse(body) => Ok((Format::Sse, sse_events(body)?)),
        Some(_) => Err("unrecognised input: expected a JSON array, JSON Lines, an SSE stream (data: lines) or a case file".into()),
    }
}

fn looks_like_sse(body: &[u8]) -> bool {
    [&b"data:"[..], b":", b"id:", b"event:", b"retry:"]
        .iter()
        .any(|p| body.starts_with(p))
}

fn json_lines(body: &[u8]) -> Vec<RawEvent> {
    body.split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| l.iter().any(|b| !b.is_ascii_whitespace()))
        .map(|l| serde_json::from_slice(l).map_err(|e| format!("invalid JSON line: {e}")))
        .collect()
}

fn sse_events(body: &[u8]) -> Result<Vec<RawEvent>, String> {
    let mut decoder = agui_core::codec::sse::SseDecoder::new();
    decoder.push(body);
    let mut out = Vec::new();
    loop {
        match decoder.next_frame() {
            Ok(Some(frame)) => out.push(
                serde_json::from_str(&frame.data)
                    .map_err(|e| format!("invalid JSON in SSE frame: {e}")),
            ),
            Ok(None) => break,
            Err(e) => return Err(e.to_string()),
        }
    }
    if let Some(frame) = decoder.finish().map_err(|e| e.to_string())? {
        out.push(
            serde_json::from_str(&frame.data)
                .map_err(|e| format!("invalid JSON in SSE frame: {e}")),
        );
    }
    Ok(out)
}
