//! A fast path for the events that make up the bulk of a stream.
//!
//! The flat events (all members strings, plus `timestamp`: `TEXT_MESSAGE_CONTENT` above
//! all), the patch events (`STATE_DELTA`, `ACTIVITY_DELTA`) and the events that carry one
//! JSON value (`STATE_SNAPSHOT`, `RAW`, `CUSTOM`) are read directly from the text: members
//! are matched by name, strings are sliced out (escapes decoded when there are any) and
//! patch operations are built as typed [`PatchOp`]s. The generic path spends most of its
//! time in serde's machinery instead. The exact layouts producers write for the content
//! events and for patch operations are matched literally, before trying member by member.
//!
//! The fast path accepts only what it can decode *exactly* as the serde path would, and
//! hands anything else to the fallback (the serde path), which then decides and words any
//! error. Accepted: a JSON object, with JSON whitespace anywhere, whose members are the
//! event's own fields, each at most once: strings (any escape JSON allows), `timestamp` as
//! an integer within ±(2^53-1), `type` as a string without escapes (serde ignores it like
//! any member the struct lacks), JSON values, and for the patch events an array of
//! operations whose members are exactly those the `op` defines. Refused (fallback): unknown
//! or repeated members, `rawEvent` and `metadata`, keys with escapes, `null` where serde
//! would refuse it or warn, values of the wrong type, control characters in strings, missing
//! required fields, a role or subtype the enum does not know, an unknown `op` or an invalid
//! pointer, anything after the object but whitespace, and every syntax error. Falling back
//! costs the bytes read so far and nothing else.
//!
//! Each event's reader ([`FastEvent`]) is generated from its field table by `event_types!`:
//! a member is matched by its wire name and read as its type reads itself ([`FastField`]).
//! An event with a required field of a type read nowhere here (`MESSAGES_SNAPSHOT`,
//! `ACTIVITY_SNAPSHOT`) always goes to serde; an optional such field (`RUN_STARTED.input`,
//! `RUN_FINISHED.result`, ...) sends an event that has it there.
//!
//! JSON values (a patch operation's `value`, `STATE_SNAPSHOT.snapshot`, `RAW.event`,
//! `CUSTOM.value`) are built as serde_json builds them; numbers other than integers of up to
//! 18 digits are handed to serde_json itself, and values nested more than 120 levels deep go
//! to the fallback (serde_json's recursion limit decides those).

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::{
    EncryptedValueSubtype, Event, EventType, ReasoningMessageContent, ReasoningRole, StateSnapshot,
    TextMessageContent, TextMessageRole, ToolCallArgs, ToolRole,
};
use crate::content::Content;
use crate::input::RunAgentInput;
use crate::interrupt::{RunOutcome, SubagentOutcome};
use crate::message::Message;
use crate::patch::{JsonPatch, JsonPointer, PatchOp};
use crate::serde_util::MAX_SAFE_INTEGER;
use crate::usage::TokenUsage;

/// Decodes `text` if it is one of the events the fast path reads, in the accepted shape,
/// and otherwise answers `fallback()` (the serde path, which is always correct).
///
/// The event is built straight into the result: `Event` is large, and going through an
/// `Option<Event>` would copy it twice more.
#[inline]
pub(crate) fn decode_or_else<E>(
    text: &str,
    fallback: impl FnOnce() -> Result<Event, E>,
) -> Result<Event, E> {
    let Some((et, after_type)) = event_type(text) else {
        return fallback();
    };
    if let Some(i) = after_type
        && let Some(event) = content_event(et, text, i)
    {
        return Ok(event);
    }
    let mut r = Reader::at_members(text, after_type);
    super::build_fast(et, &mut r, fallback)
}

/// A content event (`TEXT_MESSAGE_CONTENT`, `REASONING_MESSAGE_CONTENT` or
/// `TOOL_CALL_ARGS`) in the layout producers write, read without building the [`Event`]:
/// its strings are borrowed from the text unless they hold escapes. See
/// [`Event::content_parts`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentParts<'a> {
    /// Which of the three events it is.
    pub event_type: EventType,
    /// `messageId` (`toolCallId` for `TOOL_CALL_ARGS`).
    pub id: Cow<'a, str>,
    /// `delta`.
    pub delta: Cow<'a, str>,
}

impl ContentParts<'_> {
    /// The event (what [`Event::from_json_str`] gives for the same text).
    pub fn into_event(self) -> Event {
        let (id, delta) = (self.id.into_owned(), self.delta.into_owned());
        match self.event_type {
            EventType::TextMessageContent => {
                Event::TextMessageContent(TextMessageContent::new(id, delta))
            }
            EventType::ReasoningMessageContent => {
                Event::ReasoningMessageContent(ReasoningMessageContent::new(id, delta))
            }
            _ => Event::ToolCallArgs(ToolCallArgs::new(id, delta)),
        }
    }
}

/// [`Event::content_parts`]: the content events with `{"type":"NAME"` first.
#[inline]
pub(crate) fn content_parts(text: &str) -> Option<ContentParts<'_>> {
    let (et, after_type) = event_type(text)?;
    content_parts_at(et, text, after_type?)
}

/// The content events as producers write them, `{"type":…,"messageId":"…","delta":"…"}`
/// (`toolCallId` for tool calls) and nothing else, are matched as a whole: the bulk of a
/// chat stream, read without looking up a single member name. `i` is where the `type`
/// member ends. Anything else is left to the builders (`None`).
#[inline]
fn content_event(et: EventType, text: &str, i: usize) -> Option<Event> {
    content_parts_at(et, text, i).map(ContentParts::into_event)
}

/// The parts of a content event in the layout [`content_event`] matches.
#[inline]
fn content_parts_at(et: EventType, text: &str, i: usize) -> Option<ContentParts<'_>> {
    const MESSAGE_ID: &str = r#","messageId":""#;
    const TOOL_CALL_ID: &str = r#","toolCallId":""#;
    const DELTA: &str = r#"","delta":""#;
    let id_key = match et {
        EventType::TextMessageContent | EventType::ReasoningMessageContent => MESSAGE_ID,
        EventType::ToolCallArgs => TOOL_CALL_ID,
        _ => return None,
    };
    let b = text.as_bytes();
    if !b.get(i..)?.starts_with(id_key.as_bytes()) {
        return None;
    }
    let id_start = i + id_key.len();
    let (id_end, id_escaped) = string_end(b, id_start)?;
    if !b.get(id_end..)?.starts_with(DELTA.as_bytes()) {
        return None;
    }
    let delta_start = id_end + DELTA.len();
    let (delta_end, delta_escaped) = string_end(b, delta_start)?;
    // The closing brace, then nothing but whitespace.
    let mut r = Reader::new(text);
    r.i = delta_end + 1;
    r.eat(b'}')?;
    if !r.at_end() {
        return None;
    }
    Some(ContentParts {
        event_type: et,
        id: cow_str(text.get(id_start..id_end)?, id_escaped)?,
        delta: cow_str(text.get(delta_start..delta_end)?, delta_escaped)?,
    })
}

/// A string's value from its raw text between the quotes: borrowed unless it has escapes.
#[inline]
fn cow_str(raw: &str, escaped: bool) -> Option<Cow<'_, str>> {
    if escaped {
        unescape(raw).map(Cow::Owned)
    } else {
        Some(Cow::Borrowed(raw))
    }
}

/// [`decode_or_else`] without a fallback: `None` where it would fall back.
#[cfg(any(test, fuzzing))]
pub(crate) fn decode(text: &str) -> Option<Event> {
    decode_or_else(text, || Err(())).ok()
}

/// The type named by the first `type` member, as `scan_type` finds it (the builders then
/// check the whole object); with the usual layout, `{"type":"NAME"` first, also where that
/// member ends.
#[inline]
fn event_type(text: &str) -> Option<(EventType, Option<usize>)> {
    const PREFIX: &str = r#"{"type":""#;
    // A name with an escape or a control character is no wire name.
    if let Some(rest) = text.strip_prefix(PREFIX) {
        let end = memchr::memchr(b'"', rest.as_bytes())?;
        let et = EventType::from_wire(rest.get(..end)?)?;
        return Some((et, Some(PREFIX.len() + end + 1)));
    }
    let mut r = Reader::new(text);
    r.ws();
    r.eat(b'{')?;
    r.ws();
    loop {
        let key = r.key()?;
        let tok = r.tok()?;
        if key == "type" {
            return match tok {
                Tok::Str(name, false) => Some((EventType::from_wire(name)?, None)),
                _ => None,
            };
        }
        r.ws();
        r.eat(b',')?;
        r.ws();
    }
}

/// A member value the flat events use.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Tok<'a> {
    /// A string: its raw text between the quotes, and whether that holds an escape.
    Str(&'a str, bool),
    /// An integer within ±(2^53-1).
    Int(i64),
}

/// The deepest nesting level (the event object is level 1) the fast path builds; deeper
/// values go to serde, whose recursion limit (127 levels) then decides.
const MAX_LEVEL: usize = 120;

/// Reads JSON text strictly, answering `None` for anything it does not accept.
pub(crate) struct Reader<'a> {
    text: &'a str,
    b: &'a [u8],
    /// The next byte to read.
    i: usize,
    /// The next [`members`](Self::members) starts right after a member of its object.
    resume: bool,
    /// Where a required JSON value (the one of `STATE_SNAPSHOT`) is written as text instead
    /// of built, when set ([`state_snapshot_text`]).
    capture: Option<Vec<u8>>,
}

/// The members and items of the JSON objects and arrays being built, on stacks shared by all
/// levels, so that each map and array is allocated once, at its size. Made per event, by
/// the events that carry JSON values.
#[derive(Default)]
pub(crate) struct Stacks {
    members: Vec<(String, Value)>,
    items: Vec<Value>,
    /// The keys of the objects being written by [`Reader::canonical`]: where each is in the
    /// output.
    keys: Vec<(usize, usize)>,
}

impl<'a> Reader<'a> {
    /// A reader of the event object `text` for its builder: after the `type` member when
    /// [`event_type`] found where it ends (the builders would accept that member and ignore
    /// it), else at the object's start.
    fn at_members(text: &'a str, after_type: Option<usize>) -> Self {
        let mut r = Reader::new(text);
        match after_type {
            Some(i) => {
                r.i = i;
                r.resume = true;
            }
            None => r.ws(),
        }
        r
    }

    fn new(text: &'a str) -> Self {
        Reader {
            text,
            b: text.as_bytes(),
            i: 0,
            resume: false,
            capture: None,
        }
    }

    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    /// Whether only whitespace is left.
    #[inline]
    pub(crate) fn at_end(&mut self) -> bool {
        self.ws();
        self.i == self.b.len()
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    #[inline]
    fn eat(&mut self, byte: u8) -> Option<()> {
        if self.peek()? != byte {
            return None;
        }
        self.i += 1;
        Some(())
    }

    /// Past a container's opening byte `open` and the whitespace after it: `Some(true)`
    /// when an element follows, `Some(false)` (past `close` too) when it is empty.
    #[inline]
    fn open(&mut self, open: u8, close: u8) -> Option<bool> {
        self.eat(open)?;
        self.ws();
        if self.peek()? == close {
            self.i += 1;
            return Some(false);
        }
        Some(true)
    }

    /// After a container's element: `Some(true)` past the `,` and the whitespace after
    /// it (another element follows), `Some(false)` past the closing byte `close`.
    #[inline]
    fn next_or_close(&mut self, close: u8) -> Option<bool> {
        self.ws();
        match self.peek()? {
            b',' => {
                self.i += 1;
                self.ws();
                Some(true)
            }
            b if b == close => {
                self.i += 1;
                Some(false)
            }
            _ => None,
        }
    }

    /// A string at the current byte: its raw text and whether it holds an escape.
    #[inline]
    fn string(&mut self) -> Option<(&'a str, bool)> {
        self.eat(b'"')?;
        let (end, escaped) = string_end(self.b, self.i)?;
        let raw = self.text.get(self.i..end)?;
        self.i = end + 1;
        Some((raw, escaped))
    }

    /// A member name without escapes, and the `:` after it.
    #[inline]
    fn key(&mut self) -> Option<&'a str> {
        let (key, escaped) = self.string()?;
        if escaped {
            return None;
        }
        self.ws();
        self.eat(b':')?;
        self.ws();
        Some(key)
    }

    /// A string or an integer.
    #[inline]
    pub(crate) fn tok(&mut self) -> Option<Tok<'a>> {
        match self.peek()? {
            b'"' => {
                let (raw, escaped) = self.string()?;
                Some(Tok::Str(raw, escaped))
            }
            b'-' | b'0'..=b'9' => {
                let (n, next) = integer(self.b, self.i)?;
                self.i = next;
                Some(Tok::Int(n))
            }
            _ => None,
        }
    }

    /// Reads an object, calling `member` with each name; `member` reads the value.
    #[inline]
    pub(crate) fn members(
        &mut self,
        mut member: impl FnMut(&'a str, &mut Self) -> Option<()>,
    ) -> Option<()> {
        if !std::mem::take(&mut self.resume) {
            if !self.open(b'{', b'}')? {
                return Some(());
            }
            let key = self.key()?;
            member(key, self)?;
        }
        while self.next_or_close(b'}')? {
            let key = self.key()?;
            member(key, self)?;
        }
        Some(())
    }

    /// A JSON Patch, as `lenient_patch` reads it when it drops nothing.
    fn patch(&mut self, st: &mut Stacks) -> Option<JsonPatch> {
        let mut ops = Vec::new();
        if self.open(b'[', b']')? {
            loop {
                self.op(st, &mut ops)?;
                if !self.next_or_close(b']')? {
                    break;
                }
            }
        }
        Some(ops)
    }

    /// One patch operation with exactly the members its `op` defines (anything else, such
    /// as members kept as extras or an unknown `op`, is left to serde), pushed on `ops`
    /// (built in place: a `PatchOp` is large enough that moving it shows).
    fn op(&mut self, st: &mut Stacks, ops: &mut JsonPatch) -> Option<()> {
        let start = self.i;
        if self.canonical_op(st, ops).is_some() {
            return Some(());
        }
        self.i = start;
        let (mut op, mut path, mut from, mut value) = (None, None, None, None);
        self.members(|key, r| match key {
            "op" => set(&mut op, r.tok()?),
            "path" => set(&mut path, r.tok()?),
            "from" => set(&mut from, r.tok()?),
            "value" if value.is_none() => {
                // The event, the patch array and this object are levels 1 to 3.
                value = Some(r.value(4, st)?);
                Some(())
            }
            _ => None,
        })?;
        let path = pointer(path?)?;
        let op = op?.text()?;
        let from = match (&*op, from) {
            ("move" | "copy", Some(from)) => Some(pointer(from)?),
            ("move" | "copy", None) | (_, Some(_)) => return None,
            _ => None,
        };
        ops.reserve(1);
        match (&*op, from, value) {
            ("add", None, Some(value)) => ops.push(PatchOp::add(path, value)),
            ("replace", None, Some(value)) => ops.push(PatchOp::replace(path, value)),
            ("test", None, Some(value)) => ops.push(PatchOp::test(path, value)),
            ("remove", None, None) => ops.push(PatchOp::remove(path)),
            ("move", Some(from), None) => ops.push(PatchOp::move_from(from, path)),
            ("copy", Some(from), None) => ops.push(PatchOp::copy_from(from, path)),
            _ => return None,
        }
        Some(())
    }

    /// An operation written as producers write it - `op` first, then `path` (`from` then
    /// `path` for move and copy), then `value` where the op has one, no whitespace - matched
    /// literally. `None` (with nothing pushed) for any other layout, which [`op`](Self::op)
    /// then reads member by member.
    #[inline]
    fn canonical_op(&mut self, st: &mut Stacks, ops: &mut JsonPatch) -> Option<()> {
        #[derive(Clone, Copy)]
        enum Op {
            Add,
            Replace,
            Test,
            Remove,
            Move,
            Copy,
        }
        const LAYOUTS: [(&str, Op); 6] = [
            (r#"{"op":"replace","path":""#, Op::Replace),
            (r#"{"op":"add","path":""#, Op::Add),
            (r#"{"op":"remove","path":""#, Op::Remove),
            (r#"{"op":"test","path":""#, Op::Test),
            (r#"{"op":"move","from":""#, Op::Move),
            (r#"{"op":"copy","from":""#, Op::Copy),
        ];
        let rest = self.b.get(self.i..)?;
        let &(prefix, op) = LAYOUTS
            .iter()
            .find(|(prefix, _)| rest.starts_with(prefix.as_bytes()))?;
        self.i += prefix.len() - 1;
        let first = self.string()?;
        let value = match op {
            Op::Add | Op::Replace | Op::Test => {
                self.literal(b",\"value\":")?;
                let value = self.value(4, st)?;
                self.eat(b'}')?;
                Some(value)
            }
            Op::Remove => {
                self.eat(b'}')?;
                None
            }
            Op::Move | Op::Copy => None,
        };
        let op = match (op, value) {
            (Op::Add, Some(value)) => PatchOp::add(pointer(Tok::Str(first.0, first.1))?, value),
            (Op::Replace, Some(value)) => {
                PatchOp::replace(pointer(Tok::Str(first.0, first.1))?, value)
            }
            (Op::Test, Some(value)) => PatchOp::test(pointer(Tok::Str(first.0, first.1))?, value),
            (Op::Remove, _) => PatchOp::remove(pointer(Tok::Str(first.0, first.1))?),
            (Op::Move | Op::Copy, _) => {
                self.literal(b",\"path\":")?;
                let path = self.string()?;
                self.eat(b'}')?;
                let from = pointer(Tok::Str(first.0, first.1))?;
                let path = pointer(Tok::Str(path.0, path.1))?;
                if matches!(op, Op::Move) {
                    PatchOp::move_from(from, path)
                } else {
                    PatchOp::copy_from(from, path)
                }
            }
            _ => return None,
        };
        ops.push(op);
        Some(())
    }

    /// Exactly `bytes`.
    #[inline]
    fn literal(&mut self, bytes: &[u8]) -> Option<()> {
        if !self.b.get(self.i..)?.starts_with(bytes) {
            return None;
        }
        self.i += bytes.len();
        Some(())
    }

    /// Any JSON value, built as serde_json builds it, whose containers would sit at nesting
    /// `level` (the event object is level 1).
    fn value(&mut self, level: usize, st: &mut Stacks) -> Option<Value> {
        match self.peek()? {
            b'"' => {
                let (raw, escaped) = self.string()?;
                String::from_tok(Tok::Str(raw, escaped)).map(Value::String)
            }
            b't' => self.word("true", Value::Bool(true)),
            b'f' => self.word("false", Value::Bool(false)),
            b'n' => self.word("null", Value::Null),
            b'-' | b'0'..=b'9' => self.number(),
            b'{' if level <= MAX_LEVEL => {
                if !self.open(b'{', b'}')? {
                    return Some(Value::Object(Map::new()));
                }
                let base = st.members.len();
                loop {
                    let (raw, escaped) = self.string()?;
                    let key = String::from_tok(Tok::Str(raw, escaped))?;
                    self.ws();
                    self.eat(b':')?;
                    self.ws();
                    let value = self.value(level + 1, st)?;
                    st.members.push((key, value));
                    if !self.next_or_close(b'}')? {
                        break;
                    }
                }
                // As serde_json: a repeated key keeps its first place and its last value.
                let map: Map<String, Value> = st.members.drain(base..).collect();
                Some(Value::Object(map))
            }
            b'[' if level <= MAX_LEVEL => {
                if !self.open(b'[', b']')? {
                    return Some(Value::Array(Vec::new()));
                }
                let base = st.items.len();
                loop {
                    let item = self.value(level + 1, st)?;
                    st.items.push(item);
                    if !self.next_or_close(b']')? {
                        break;
                    }
                }
                Some(Value::Array(st.items.drain(base..).collect()))
            }
            _ => None,
        }
    }

    /// Writes the JSON value here to `out` exactly as `serde_json` writes the [`Value`] that
    /// [`value`](Self::value) builds of it, without building it: `None` wherever `value`
    /// answers `None`, and for an object with a repeated key (its `Value` keeps one member,
    /// the text would keep both).
    fn canonical(&mut self, level: usize, out: &mut Vec<u8>, st: &mut Stacks) -> Option<()> {
        match self.peek()? {
            b'"' => {
                let (raw, escaped) = self.string()?;
                write_string(out, raw, escaped)
            }
            b't' => self.word_text("true", out),
            b'f' => self.word_text("false", out),
            b'n' => self.word_text("null", out),
            b'-' | b'0'..=b'9' => {
                super::json::write_value(out, &self.number()?);
                Some(())
            }
            b'{' if level <= MAX_LEVEL => {
                if !self.open(b'{', b'}')? {
                    out.extend_from_slice(b"{}");
                    return Some(());
                }
                out.push(b'{');
                let base = st.keys.len();
                loop {
                    let (raw, escaped) = self.string()?;
                    let start = out.len();
                    write_string(out, raw, escaped)?;
                    st.keys.push((start, out.len()));
                    self.ws();
                    self.eat(b':')?;
                    self.ws();
                    out.push(b':');
                    self.canonical(level + 1, out, st)?;
                    if !self.next_or_close(b'}')? {
                        break;
                    }
                    out.push(b',');
                }
                out.push(b'}');
                // Two keys are the same string exactly when they are written the same.
                if repeats(out, &st.keys[base..]) {
                    return None;
                }
                st.keys.truncate(base);
                Some(())
            }
            b'[' if level <= MAX_LEVEL => {
                out.push(b'[');
                if self.open(b'[', b']')? {
                    loop {
                        self.canonical(level + 1, out, st)?;
                        if !self.next_or_close(b']')? {
                            break;
                        }
                        out.push(b',');
                    }
                }
                out.push(b']');
                Some(())
            }
            _ => None,
        }
    }

    /// `word` (`true`, `false` or `null`), written to `out` as it is.
    fn word_text(&mut self, word: &str, out: &mut Vec<u8>) -> Option<()> {
        self.word(word, ())?;
        out.extend_from_slice(word.as_bytes());
        Some(())
    }

    /// `value` if the text here is `word`, which is then read.
    fn word<T>(&mut self, word: &str, value: T) -> Option<T> {
        if !self.b.get(self.i..)?.starts_with(word.as_bytes()) {
            return None;
        }
        self.i += word.len();
        Some(value)
    }

    /// A number, as serde_json reads it: integers of up to 18 digits directly (`u64` when
    /// not negative, `i64` otherwise; `-0` is a float to serde_json), floats of up to
    /// [`MAX_FLOAT_DIGITS`] digits and a short exponent by one exact operation where that
    /// is correctly rounded ([`exact_float`]), else by the standard library's parser (both
    /// correctly rounded, as serde_json's `float_roundtrip` parser is, so all give the
    /// same `f64`), the rest by serde_json. Only the JSON grammar is accepted; an
    /// out-of-range float (serde_json's error) is `None`.
    fn number(&mut self) -> Option<Value> {
        let start = self.i;
        let b = self.b;
        let negative = b[start] == b'-';
        let digits = start + usize::from(negative);
        let mut end = digits;
        let mut n: u64 = 0;
        while let Some(&d @ b'0'..=b'9') = b.get(end) {
            n = n.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
            end += 1;
        }
        let count = end - digits;
        if count == 0 || (count > 1 && b[digits] == b'0') {
            return None;
        }
        if !matches!(b.get(end), Some(b'.' | b'e' | b'E')) {
            if count <= 18 && !(negative && n == 0) {
                self.i = end;
                // Up to 18 digits fit in an i64.
                let n = n as i64;
                return Some(if negative {
                    Value::from(-n)
                } else {
                    Value::from(n as u64)
                });
            }
            // Past 18 digits (a u64, or a float past its range) and `-0`: serde_json's.
            self.i = end;
            return serde_json::from_str(self.text.get(start..end)?).ok();
        }
        // A fraction, then an exponent, each with at least one digit.
        let mut significant = count;
        let mut fraction = 0;
        if b.get(end) == Some(&b'.') {
            end += 1;
            let first = end;
            while let Some(&d @ b'0'..=b'9') = b.get(end) {
                n = n.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
                end += 1;
            }
            fraction = end - first;
            if fraction == 0 {
                return None;
            }
            significant += fraction;
        }
        let (mut exponent, mut exponent_digits) = (0i32, 0);
        if let Some(b'e' | b'E') = b.get(end) {
            end += 1;
            let sign = match b.get(end) {
                Some(b'-') => -1,
                Some(b'+') => 1,
                _ => 0,
            };
            end += usize::from(sign != 0);
            let first = end;
            while let Some(&d @ b'0'..=b'9') = b.get(end) {
                exponent = exponent.wrapping_mul(10).wrapping_add(i32::from(d - b'0'));
                end += 1;
            }
            exponent_digits = end - first;
            if exponent_digits == 0 {
                return None;
            }
            if sign < 0 {
                exponent = -exponent;
            }
        }
        self.i = end;
        let text = self.text.get(start..end)?;
        if significant > MAX_FLOAT_DIGITS || exponent_digits > 4 || !floats_read_here() {
            return serde_json::from_str(text).ok();
        }
        // Up to 19 digits fit in a u64; at most 4 exponent digits in an i32.
        let exponent = exponent - fraction as i32;
        let f = match exact_float(n, exponent) {
            Some(f) => f,
            // Infinite (out of range) is an error to serde_json: `None`.
            None => text.parse::<f64>().ok()?.abs(),
        };
        serde_json::Number::from_f64(if negative { -f } else { f }).map(Value::Number)
    }
}

/// `digits × 10^exponent` when one correctly rounded operation makes it (Clinger's fast
/// path: the digits and the power of ten are both exact `f64`s).
#[inline]
fn exact_float(digits: u64, exponent: i32) -> Option<f64> {
    const POWERS: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];
    if digits > 1 << 53 {
        return None;
    }
    let power = *POWERS.get(exponent.unsigned_abs() as usize)?;
    let digits = digits as f64;
    Some(if exponent < 0 {
        digits / power
    } else {
        digits * power
    })
}

/// The most significant digits (integer and fraction) of a float [`Reader::number`]
/// parses itself: serde_json reads up to 19 with its exact short-number path.
const MAX_FLOAT_DIGITS: usize = 19;

/// Whether the `Number` serde_json makes of a float's text is the one made of the `f64`
/// it reads: not with serde_json's `arbitrary_precision` (which some other crate of a
/// build may turn on), where a number keeps its text (`0.10` stays `0.10`). Asked once.
fn floats_read_here() -> bool {
    static SAME: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SAME.get_or_init(|| {
        serde_json::from_str::<serde_json::Number>("0.10").ok() == serde_json::Number::from_f64(0.1)
    })
}

/// A JSON Pointer member.
fn pointer(tok: Tok<'_>) -> Option<JsonPointer> {
    JsonPointer::try_from(String::from_tok(tok)?).ok()
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

/// Reads `timestamp` (once).
#[inline]
pub(crate) fn timestamp(slot: &mut Option<i64>, tok: Tok<'_>) -> Option<()> {
    match tok {
        Tok::Int(n) if slot.is_none() => {
            *slot = Some(n);
            Some(())
        }
        _ => None,
    }
}

/// Checks a `type` member: serde ignores it, if it is well-formed. (An escaped one is
/// refused: checking its escapes is not worth it.)
#[inline]
pub(crate) fn type_member(tok: Tok<'_>) -> Option<()> {
    matches!(tok, Tok::Str(_, false)).then_some(())
}

/// An event the fast path can read; implemented for every event by `event_types!`, from
/// its field table.
pub(crate) trait FastEvent: Sized {
    /// Whether the fast path reads this event at all (not when a required field has a
    /// type it cannot read, such as `MESSAGES_SNAPSHOT.messages`).
    const FAST: bool;
    /// Reads the event's object: its own fields by their wire names, `timestamp`, and a
    /// `type` member; `None` for anything else (including `rawEvent` and `metadata`).
    fn build(r: &mut Reader<'_>) -> Option<Self>;
}

/// A field type, as the fast path reads it.
pub(crate) trait FastField: Sized {
    /// A required field of this type is never read here: its events go to serde.
    const NEVER: bool = false;
    /// Reads the member's value; `None` to fall back.
    fn read(r: &mut Reader<'_>, st: &mut Stacks) -> Option<Self>;
    /// The value when the member is absent; `None` (fall back) when it is required.
    fn absent() -> Option<Self>;
}

/// Types read from one string member, required (`String`) and optional (`Option<String>`:
/// a `null` is refused, serde either refuses it or reads it as absent with a warning).
macro_rules! string_fields {
    ($($ty:ty),* $(,)?) => {
        $(
            impl FastField for $ty {
                #[inline]
                fn read(r: &mut Reader<'_>, _: &mut Stacks) -> Option<Self> {
                    <$ty as FromTok>::from_tok(r.tok()?)
                }
                #[inline]
                fn absent() -> Option<Self> {
                    None
                }
            }

            impl FastField for Option<$ty> {
                #[inline]
                fn read(r: &mut Reader<'_>, _: &mut Stacks) -> Option<Self> {
                    <$ty as FromTok>::from_tok(r.tok()?).map(Some)
                }
                #[inline]
                fn absent() -> Option<Self> {
                    Some(None)
                }
            }
        )*
    };
}

string_fields!(
    String,
    Content,
    TextMessageRole,
    ToolRole,
    ReasoningRole,
    EncryptedValueSubtype,
);

/// A required JSON value (`STATE_SNAPSHOT.snapshot`, `RAW.event`, `CUSTOM.value`).
impl FastField for Value {
    #[inline]
    fn read(r: &mut Reader<'_>, st: &mut Stacks) -> Option<Self> {
        if let Some(mut out) = r.capture.take() {
            let written = r.canonical(2, &mut out, st);
            r.capture = Some(out);
            return written.map(|()| Value::Null);
        }
        // The event object is level 1.
        r.value(2, st)
    }
    #[inline]
    fn absent() -> Option<Self> {
        None
    }
}

/// A required JSON Patch (`STATE_DELTA.delta`, `ACTIVITY_DELTA.patch`).
impl FastField for JsonPatch {
    #[inline]
    fn read(r: &mut Reader<'_>, st: &mut Stacks) -> Option<Self> {
        r.patch(st)
    }
    #[inline]
    fn absent() -> Option<Self> {
        None
    }
}

/// Field types the fast path does not read: an event with such a member (or, for a
/// required one, every event of its type) goes to serde. An optional JSON value is one of
/// them: serde reads its `null` as absent, with a warning.
macro_rules! unread_fields {
    (required: $($req:ty),* ; optional: $($opt:ty),* $(,)?) => {
        $(
            impl FastField for $req {
                const NEVER: bool = true;
                fn read(_: &mut Reader<'_>, _: &mut Stacks) -> Option<Self> {
                    None
                }
                fn absent() -> Option<Self> {
                    None
                }
            }
        )*
        $(
            impl FastField for Option<$opt> {
                #[inline]
                fn read(_: &mut Reader<'_>, _: &mut Stacks) -> Option<Self> {
                    None
                }
                #[inline]
                fn absent() -> Option<Self> {
                    Some(None)
                }
            }
        )*
    };
}

unread_fields!(
    required: Vec<Message>, Map<String, Value>;
    optional: Value, bool, Box<RunAgentInput>, Vec<TokenUsage>, RunOutcome, SubagentOutcome,
);

/// Writes a string read as `raw` (`escaped`: with escapes to decode) as `serde_json` writes
/// it. A string without escapes has no character that serde_json escapes (the reader
/// refuses control characters), so it is written as it was read.
fn write_string(out: &mut Vec<u8>, raw: &str, escaped: bool) -> Option<()> {
    if escaped {
        super::json::write_str(out, &String::from_tok(Tok::Str(raw, true))?);
    } else {
        out.reserve(raw.len() + 2);
        out.push(b'"');
        out.extend_from_slice(raw.as_bytes());
        out.push(b'"');
    }
    Some(())
}

/// Whether two of `keys` (ranges of `out`) hold the same bytes.
fn repeats(out: &[u8], keys: &[(usize, usize)]) -> bool {
    let key = |&(start, end): &(usize, usize)| &out[start..end];
    if keys.len() <= 16 {
        return keys
            .iter()
            .enumerate()
            .any(|(i, a)| keys[i + 1..].iter().any(|b| key(a) == key(b)));
    }
    let mut sorted: Vec<&[u8]> = keys.iter().map(key).collect();
    sorted.sort_unstable();
    sorted.windows(2).any(|w| w[0] == w[1])
}

/// Decodes a `STATE_SNAPSHOT` with its document written as JSON text (exactly as
/// `serde_json` writes the `Value` the decode would build) instead of built: the event
/// (its `snapshot` `null`) and the text. `None` where the fast path would not decode the
/// event, and for a document with an object whose keys repeat.
pub(crate) fn state_snapshot_text(text: &str) -> Option<(StateSnapshot, Vec<u8>)> {
    let (EventType::StateSnapshot, after_type) = event_type(text)? else {
        return None;
    };
    let mut r = Reader::at_members(text, after_type);
    r.capture = Some(Vec::with_capacity(text.len()));
    let event = <StateSnapshot as FastEvent>::build(&mut r)?;
    if !r.at_end() {
        return None;
    }
    Some((event, r.capture.take()?))
}

/// Reads a JSON value that is the whole of `text` (whitespace aside) as the fast path
/// builds values; `None` for anything it does not accept.
pub(crate) fn parse_value(text: &str) -> Option<Value> {
    let mut r = Reader::new(text);
    r.ws();
    let value = r.value(1, &mut Stacks::default())?;
    r.at_end().then_some(value)
}

/// The event types the fast path reads.
#[cfg(test)]
pub(crate) static FLAT: std::sync::LazyLock<Vec<EventType>> = std::sync::LazyLock::new(|| {
    EventType::ALL
        .iter()
        .copied()
        .filter(|t| super::is_fast(*t))
        .collect()
});

#[cfg(test)]
mod tests;
