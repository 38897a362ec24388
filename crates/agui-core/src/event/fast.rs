//! A fast path for the flat events: those whose members are all strings (and `timestamp`).
//!
//! These are nearly every event of a chat stream (`TEXT_MESSAGE_CONTENT` above all), and
//! the generic path spends most of its time in serde's machinery rather than in the bytes.
//! Here the object is read directly: members are matched by name and strings are sliced out
//! of the input (decoding escapes when there are any).
//!
//! The fast path accepts only what it can decode *exactly* as the serde path would, and
//! answers `None` for anything else, so that the caller falls back to the serde path, which
//! then decides (and words any error). Accepted: a JSON object, with JSON whitespace
//! anywhere, whose members are the event's own string fields, `timestamp` as an integer
//! within ±(2^53-1), and `type` as a string without escapes; strings may hold any escape
//! JSON allows. Refused (fallback): an unknown or repeated member (`type` excepted, which
//! serde ignores like any unknown member), a key with an escape, `null`, numbers that are
//! not plain integers, objects and arrays as values, control characters in strings, a
//! missing required field, a role or subtype the enum does not know, anything after the
//! object but whitespace, and every syntax error. Fallback costs one wasted scan of the
//! bytes read so far and nothing else.

use std::borrow::Cow;

use super::types::*;
use super::{EncryptedValueSubtype, Event, EventType, ReasoningRole, TextMessageRole, ToolRole};
use crate::content::Content;
use crate::serde_util::MAX_SAFE_INTEGER;

/// Decodes `text` if it is a flat event in the simple shape; `None` means "use the serde
/// path" (which is always correct, so `None` is never wrong).
#[inline]
pub(crate) fn decode(text: &str) -> Option<Event> {
    let start = Cursor::open(text)?;
    let mut c = start.clone();
    // The first `type` member decides the event type, as in `scan_type`.
    let mut first = true;
    let et = loop {
        let (key, tok) = c.member()??;
        if key == "type" {
            match tok {
                Tok::Str(t, false) => break EventType::from_wire(t)?,
                _ => return None,
            }
        }
        first = false;
    };
    // Members are read again from the start, unless `type` was the first: every builder
    // ignores `type` members, so it can skip that one.
    let c = if first { c } else { start };
    build(et, c)
}

/// A member value the fast path understands.
#[derive(Debug, Clone, Copy)]
enum Tok<'a> {
    /// A string: its raw text between the quotes, and whether that holds an escape.
    Str(&'a str, bool),
    /// An integer within ±(2^53-1).
    Int(i64),
}

/// Reads the members of one JSON object, strictly.
#[derive(Debug, Clone)]
struct Cursor<'a> {
    text: &'a str,
    /// Next byte to read: the start of a member, or the `}` of an empty object.
    at: usize,
    /// No member has been read yet.
    first: bool,
    /// The closing brace and the end of the input have been checked.
    done: bool,
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = b.get(i) {
        i += 1;
    }
    i
}

impl<'a> Cursor<'a> {
    fn open(text: &'a str) -> Option<Self> {
        let b = text.as_bytes();
        let i = skip_ws(b, 0);
        if b.get(i) != Some(&b'{') {
            return None;
        }
        Some(Cursor {
            text,
            at: skip_ws(b, i + 1),
            first: true,
            done: false,
        })
    }

    /// The next member; `Some(None)` at the end of the object (and of the input), `None`
    /// for anything the fast path does not accept.
    #[inline]
    fn member(&mut self) -> Option<Option<(&'a str, Tok<'a>)>> {
        if self.done {
            return Some(None);
        }
        let b = self.text.as_bytes();
        let mut i = self.at;
        if b.get(i) != Some(&b'"') {
            // `{}`; a `}` after a comma is a syntax error.
            if self.first && b.get(i) == Some(&b'}') {
                return self.close(i);
            }
            return None;
        }
        let (end, escaped) = string_end(b, i + 1)?;
        if escaped {
            return None;
        }
        let key = self.text.get(i + 1..end)?;
        i = skip_ws(b, end + 1);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        let tok = match *b.get(i)? {
            b'"' => {
                let (end, escaped) = string_end(b, i + 1)?;
                let raw = self.text.get(i + 1..end)?;
                i = end + 1;
                Tok::Str(raw, escaped)
            }
            b'-' | b'0'..=b'9' => {
                let (n, next) = integer(b, i)?;
                i = next;
                Tok::Int(n)
            }
            _ => return None,
        };
        i = skip_ws(b, i);
        match *b.get(i)? {
            b',' => self.at = skip_ws(b, i + 1),
            b'}' => {
                self.close(i)?;
            }
            _ => return None,
        }
        self.first = false;
        Some(Some((key, tok)))
    }

    /// Checks that the `}` at `i` is followed only by whitespace.
    fn close(&mut self, i: usize) -> Option<Option<(&'a str, Tok<'a>)>> {
        if skip_ws(self.text.as_bytes(), i + 1) != self.text.len() {
            return None;
        }
        self.done = true;
        Some(None)
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `x` that is zero. Bits above the lowest set one may be
/// false positives; the lowest is exact.
#[inline]
fn zero_bytes(x: u64) -> u64 {
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// Flags the bytes of `x` that end a plain string run: `"`, `\` and controls (< 0x20).
/// The lowest flag is exact (see [`zero_bytes`]).
#[inline]
fn specials(x: u64) -> u64 {
    zero_bytes(x ^ (ONES * u64::from(b'"')))
        | zero_bytes(x ^ (ONES * u64::from(b'\\')))
        | (x.wrapping_sub(ONES * 0x20) & !x & HIGHS)
}

/// Finds the closing quote of a string whose content starts at `i`; returns its index and
/// whether the string holds an escape. `None` for a control character or no closing quote.
#[inline]
fn string_end(b: &[u8], mut i: usize) -> Option<(usize, bool)> {
    let mut escaped = false;
    loop {
        // Eight bytes at a time through the plain run.
        while let Some(chunk) = b.get(i..i + 8) {
            let mut word = [0; 8];
            word.copy_from_slice(chunk);
            let flags = specials(u64::from_le_bytes(word));
            if flags != 0 {
                i += (flags.trailing_zeros() / 8) as usize;
                break;
            }
            i += 8;
        }
        match *b.get(i)? {
            b'"' => return Some((i, escaped)),
            b'\\' => {
                // What follows is checked when the string is decoded.
                escaped = true;
                i += 2;
            }
            0..0x20 => return None,
            _ => i += 1,
        }
    }
}

/// Reads a JSON integer at `i` (`-?(0|[1-9][0-9]*)`, not followed by a fraction or an
/// exponent) within ±(2^53-1); returns it and the index after it.
fn integer(b: &[u8], mut i: usize) -> Option<(i64, usize)> {
    let negative = b[i] == b'-';
    i += usize::from(negative);
    let start = i;
    let mut n: i64 = 0;
    while let Some(&d @ b'0'..=b'9') = b.get(i) {
        if i - start == 16 {
            return None;
        }
        n = n * 10 + i64::from(d - b'0');
        i += 1;
    }
    let digits = i - start;
    if digits == 0 || (digits > 1 && b[start] == b'0') || n > MAX_SAFE_INTEGER {
        return None;
    }
    if let Some(b'.' | b'e' | b'E') = b.get(i) {
        return None;
    }
    Some((if negative { -n } else { n }, i))
}

/// The value of four hex digits.
fn hex4(digits: &[u8]) -> Option<u32> {
    let mut v = 0;
    for &d in digits.get(..4)? {
        v = v * 16 + char::from(d).to_digit(16)?;
    }
    Some(v)
}

/// Decodes the escapes of a string's raw text, as serde_json does; `None` for an invalid
/// escape or a lone surrogate (errors in serde_json).
fn unescape(raw: &str) -> Option<String> {
    let b = raw.as_bytes();
    let mut out = String::with_capacity(raw.len());
    let mut i = 0;
    loop {
        let next = memchr::memchr(b'\\', &b[i..]).map_or(b.len(), |k| i + k);
        out.push_str(raw.get(i..next)?);
        if next == b.len() {
            return Some(out);
        }
        let kind = *b.get(next + 1)?;
        i = next + 2;
        let c = match kind {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let unit = hex4(b.get(i..)?)?;
                i += 4;
                match unit {
                    0xD800..=0xDBFF => {
                        if b.get(i..i + 2)? != b"\\u" {
                            return None;
                        }
                        let low = hex4(b.get(i + 2..)?)?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return None;
                        }
                        i += 6;
                        char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))?
                    }
                    0xDC00..=0xDFFF => return None,
                    _ => char::from_u32(unit)?,
                }
            }
            _ => return None,
        };
        out.push(c);
    }
}

impl<'a> Tok<'a> {
    /// The decoded text of a string.
    fn text(self) -> Option<Cow<'a, str>> {
        match self {
            Tok::Str(raw, false) => Some(Cow::Borrowed(raw)),
            Tok::Str(raw, true) => unescape(raw).map(Cow::Owned),
            Tok::Int(_) => None,
        }
    }
}

/// A field type the fast path can build from a string.
trait FromTok: Sized {
    fn from_tok(tok: Tok<'_>) -> Option<Self>;
}

impl FromTok for String {
    #[inline]
    fn from_tok(tok: Tok<'_>) -> Option<Self> {
        match tok {
            Tok::Str(raw, false) => Some(raw.to_owned()),
            Tok::Str(raw, true) => unescape(raw),
            Tok::Int(_) => None,
        }
    }
}

impl FromTok for Content {
    fn from_tok(tok: Tok<'_>) -> Option<Self> {
        String::from_tok(tok).map(Content::Text)
    }
}

impl FromTok for TextMessageRole {
    fn from_tok(tok: Tok<'_>) -> Option<Self> {
        Some(match &*tok.text()? {
            "developer" => TextMessageRole::Developer,
            "system" => TextMessageRole::System,
            "assistant" => TextMessageRole::Assistant,
            "user" => TextMessageRole::User,
            _ => return None,
        })
    }
}

impl FromTok for ToolRole {
    fn from_tok(tok: Tok<'_>) -> Option<Self> {
        (tok.text()? == ToolRole::AS_STR).then_some(ToolRole)
    }
}

impl FromTok for ReasoningRole {
    fn from_tok(tok: Tok<'_>) -> Option<Self> {
        (tok.text()? == ReasoningRole::AS_STR).then_some(ReasoningRole)
    }
}

impl FromTok for EncryptedValueSubtype {
    fn from_tok(tok: Tok<'_>) -> Option<Self> {
        Some(match &*tok.text()? {
            "tool-call" => EncryptedValueSubtype::ToolCall,
            "message" => EncryptedValueSubtype::Message,
            _ => return None,
        })
    }
}

/// Keeps the first value of a member; a repeated member is refused (serde reports it).
#[inline]
fn set<'a>(slot: &mut Option<Tok<'a>>, tok: Tok<'a>) -> Option<()> {
    if slot.is_some() {
        return None;
    }
    *slot = Some(tok);
    Some(())
}

/// Implemented by the flat event structs.
trait Flat: Sized {
    /// Reads the members left in `c` into the event.
    fn build(c: Cursor<'_>) -> Option<Self>;
}

/// Declares the flat events: each field as `name: req|opt Type = "wireName"` (`opt` for
/// `Option<Type>`). Every flat event also has `timestamp`, `rawEvent` and `metadata`; the
/// fast path reads `timestamp` and leaves events with the other two to serde.
macro_rules! flat_events {
    ($( $ty:ident { $( $field:ident : $kind:ident $fty:ty = $key:literal ),* $(,)? } )*) => {
        $(
            impl Flat for $ty {
                #[inline]
                fn build(mut c: Cursor<'_>) -> Option<Self> {
                    $( let mut $field: Option<Tok<'_>> = None; )*
                    let mut timestamp: Option<i64> = None;
                    while let Some((key, tok)) = c.member()? {
                        match key {
                            $( $key => set(&mut $field, tok)?, )*
                            "timestamp" => match tok {
                                Tok::Int(n) if timestamp.is_none() => timestamp = Some(n),
                                _ => return None,
                            },
                            // serde ignores `type` like any member the struct lacks.
                            "type" => {
                                if !matches!(tok, Tok::Str(_, false)) {
                                    return None;
                                }
                            }
                            _ => return None,
                        }
                    }
                    Some($ty {
                        $( $field: flat_events!(@get $kind $fty, $field), )*
                        timestamp,
                        raw_event: None,
                        metadata: None,
                    })
                }
            }
        )*
    };
    (@get req $fty:ty, $f:ident) => { <$fty as FromTok>::from_tok($f?)? };
    (@get opt $fty:ty, $f:ident) => {
        match $f {
            Some(tok) => Some(<$fty as FromTok>::from_tok(tok)?),
            None => None,
        }
    };
}

flat_events! {
    TextMessageContent {
        message_id: req String = "messageId",
        delta: req String = "delta",
        subagent_run_id: opt String = "subagentRunId",
    }
    ToolCallArgs {
        tool_call_id: req String = "toolCallId",
        delta: req String = "delta",
        subagent_run_id: opt String = "subagentRunId",
    }
    ReasoningMessageContent {
        message_id: req String = "messageId",
        delta: req String = "delta",
        subagent_run_id: opt String = "subagentRunId",
    }
    TextMessageChunk {
        message_id: opt String = "messageId",
        role: opt TextMessageRole = "role",
        delta: opt String = "delta",
        name: opt String = "name",
        subagent_run_id: opt String = "subagentRunId",
    }
    ToolCallChunk {
        tool_call_id: opt String = "toolCallId",
        tool_call_name: opt String = "toolCallName",
        parent_message_id: opt String = "parentMessageId",
        delta: opt String = "delta",
        subagent_run_id: opt String = "subagentRunId",
    }
    ReasoningMessageChunk {
        message_id: opt String = "messageId",
        delta: opt String = "delta",
        subagent_run_id: opt String = "subagentRunId",
    }
    TextMessageStart {
        message_id: req String = "messageId",
        role: opt TextMessageRole = "role",
        name: opt String = "name",
        subagent_run_id: opt String = "subagentRunId",
    }
    TextMessageEnd {
        message_id: req String = "messageId",
        subagent_run_id: opt String = "subagentRunId",
    }
    ToolCallStart {
        tool_call_id: req String = "toolCallId",
        tool_call_name: req String = "toolCallName",
        parent_message_id: opt String = "parentMessageId",
        subagent_run_id: opt String = "subagentRunId",
    }
    ToolCallEnd {
        tool_call_id: req String = "toolCallId",
        subagent_run_id: opt String = "subagentRunId",
    }
    ToolCallResult {
        message_id: req String = "messageId",
        tool_call_id: req String = "toolCallId",
        content: req Content = "content",
        role: opt ToolRole = "role",
        subagent_run_id: opt String = "subagentRunId",
    }
    StepStarted {
        step_name: req String = "stepName",
        subagent_run_id: opt String = "subagentRunId",
    }
    StepFinished {
        step_name: req String = "stepName",
        subagent_run_id: opt String = "subagentRunId",
    }
    ReasoningStart {
        message_id: req String = "messageId",
        subagent_run_id: opt String = "subagentRunId",
    }
    ReasoningMessageStart {
        message_id: req String = "messageId",
        role: req ReasoningRole = "role",
        subagent_run_id: opt String = "subagentRunId",
    }
    ReasoningMessageEnd {
        message_id: req String = "messageId",
        subagent_run_id: opt String = "subagentRunId",
    }
    ReasoningEnd {
        message_id: req String = "messageId",
        subagent_run_id: opt String = "subagentRunId",
    }
    ReasoningEncryptedValue {
        subtype: req EncryptedValueSubtype = "subtype",
        entity_id: req String = "entityId",
        encrypted_value: req String = "encryptedValue",
        subagent_run_id: opt String = "subagentRunId",
    }
    SubagentStarted {
        subagent_run_id: req String = "subagentRunId",
        name: req String = "name",
        description: opt String = "description",
        parent_subagent_run_id: opt String = "parentSubagentRunId",
        parent_tool_call_id: opt String = "parentToolCallId",
        parent_message_id: opt String = "parentMessageId",
    }
    SubagentError {
        subagent_run_id: req String = "subagentRunId",
        message: req String = "message",
        code: opt String = "code",
    }
}

/// `RUN_STARTED`, `RUN_FINISHED`, `RUN_ERROR` and `SUBAGENT_FINISHED` have non-string
/// optional members (`input`, `result`, `outcome`, `usage`) that the macro cannot express;
/// their string-only forms are built here.
impl Flat for RunStarted {
    fn build(mut c: Cursor<'_>) -> Option<Self> {
        let (mut thread_id, mut run_id, mut protocol_version, mut parent_run_id) =
            (None, None, None, None);
        let mut timestamp = None;
        while let Some((key, tok)) = c.member()? {
            match key {
                "threadId" => set(&mut thread_id, tok)?,
                "runId" => set(&mut run_id, tok)?,
                "protocolVersion" => set(&mut protocol_version, tok)?,
                "parentRunId" => set(&mut parent_run_id, tok)?,
                "timestamp" => match tok {
                    Tok::Int(n) if timestamp.is_none() => timestamp = Some(n),
                    _ => return None,
                },
                "type" if matches!(tok, Tok::Str(_, false)) => {}
                _ => return None,
            }
        }
        let mut e = RunStarted::new(String::from_tok(thread_id?)?, String::from_tok(run_id?)?);
        e.protocol_version = optional(protocol_version)?;
        e.parent_run_id = optional(parent_run_id)?;
        e.timestamp = timestamp;
        Some(e)
    }
}

/// An optional string member: `Some(None)` when absent, `None` when not acceptable.
fn optional(tok: Option<Tok<'_>>) -> Option<Option<String>> {
    match tok {
        Some(tok) => String::from_tok(tok).map(Some),
        None => Some(None),
    }
}

impl Flat for RunError {
    fn build(mut c: Cursor<'_>) -> Option<Self> {
        let (mut message, mut code, mut timestamp) = (None, None, None);
        while let Some((key, tok)) = c.member()? {
            match key {
                "message" => set(&mut message, tok)?,
                "code" => set(&mut code, tok)?,
                "timestamp" => match tok {
                    Tok::Int(n) if timestamp.is_none() => timestamp = Some(n),
                    _ => return None,
                },
                "type" if matches!(tok, Tok::Str(_, false)) => {}
                _ => return None,
            }
        }
        let mut e = RunError::new(String::from_tok(message?)?);
        e.code = optional(code)?;
        e.timestamp = timestamp;
        Some(e)
    }
}

impl Flat for RunFinished {
    fn build(mut c: Cursor<'_>) -> Option<Self> {
        let (mut thread_id, mut run_id, mut timestamp) = (None, None, None);
        while let Some((key, tok)) = c.member()? {
            match key {
                "threadId" => set(&mut thread_id, tok)?,
                "runId" => set(&mut run_id, tok)?,
                "timestamp" => match tok {
                    Tok::Int(n) if timestamp.is_none() => timestamp = Some(n),
                    _ => return None,
                },
                "type" if matches!(tok, Tok::Str(_, false)) => {}
                _ => return None,
            }
        }
        let mut e = RunFinished::new(String::from_tok(thread_id?)?, String::from_tok(run_id?)?);
        e.timestamp = timestamp;
        Some(e)
    }
}

impl Flat for SubagentFinished {
    fn build(mut c: Cursor<'_>) -> Option<Self> {
        let (mut subagent_run_id, mut timestamp) = (None, None);
        while let Some((key, tok)) = c.member()? {
            match key {
                "subagentRunId" => set(&mut subagent_run_id, tok)?,
                "timestamp" => match tok {
                    Tok::Int(n) if timestamp.is_none() => timestamp = Some(n),
                    _ => return None,
                },
                "type" if matches!(tok, Tok::Str(_, false)) => {}
                _ => return None,
            }
        }
        let mut e = SubagentFinished::new(String::from_tok(subagent_run_id?)?);
        e.timestamp = timestamp;
        Some(e)
    }
}

/// Generates `build`, which builds a flat event of any of the given types (`None` for the
/// other types), and the list of those types.
macro_rules! flat_dispatch {
    ($($ty:ident),* $(,)?) => {
        #[inline]
        fn build(et: EventType, c: Cursor<'_>) -> Option<Event> {
            match et {
                $( EventType::$ty => $ty::build(c).map(Event::$ty), )*
                _ => None,
            }
        }

        /// The event types the fast path handles.
        #[cfg(test)]
        pub(crate) const FLAT: &[EventType] = &[$(EventType::$ty),*];
    };
}

flat_dispatch!(
    TextMessageContent,
    ToolCallArgs,
    ReasoningMessageContent,
    TextMessageChunk,
    ToolCallChunk,
    ReasoningMessageChunk,
    TextMessageStart,
    TextMessageEnd,
    ToolCallStart,
    ToolCallEnd,
    ToolCallResult,
    StepStarted,
    StepFinished,
    ReasoningStart,
    ReasoningMessageStart,
    ReasoningMessageEnd,
    ReasoningEnd,
    ReasoningEncryptedValue,
    SubagentStarted,
    SubagentFinished,
    SubagentError,
    RunStarted,
    RunFinished,
    RunError,
);

#[cfg(test)]
mod tests;
