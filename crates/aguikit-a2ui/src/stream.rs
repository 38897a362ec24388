//! Incremental parsing: partial JSON in, complete items out.
//!
//! - [`JsonScanner`] follows a JSON text as it streams in and hands out each value at a
//!   chosen depth as soon as its last byte arrives.
//! - [`RenderArgsParser`] reads the streamed arguments of a `render_a2ui` tool call
//!   (`{"surfaceId": …, "components": [...], "data": {...}}`) and yields the surface id, each
//!   component and the data as they complete.
//! - [`MessageStreamParser`] reads a streamed JSON array of A2UI messages and yields each
//!   message as it completes.
//! - [`TaggedTextParser`] reads model output where A2UI messages sit between `<a2ui-json>`
//!   and `</a2ui-json>` tags, yielding the text around them and the messages inside.
//!
//! Input is untrusted: nesting and buffered size are bounded ([`StreamLimits`]), and any
//! input yields items or an error, never a panic.

use crate::message::Component;
use crate::rules::Violation;
use serde_json::Value;

/// Bounds on streamed input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamLimits {
    /// Most bytes one stream may hold.
    pub max_bytes: usize,
    /// Deepest JSON nesting.
    pub max_depth: usize,
}

impl Default for StreamLimits {
    fn default() -> Self {
        StreamLimits {
            max_bytes: 16 << 20,
            max_depth: 128,
        }
    }
}

/// Why a stream cannot be read further.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamError {
    /// The byte offset in the stream.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for StreamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for StreamError {}

impl StreamError {
    /// The error as an `A17` violation.
    pub fn to_violation(&self) -> Violation {
        Violation::new("A17", self.to_string())
    }
}

/// One step of a path into the streamed document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    /// An object member.
    Key(String),
    /// An array element.
    Index(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// A value (after `[`, `:` or `,` in an array, or at the top).
    Value,
    /// A value or `]` (just after `[`).
    ValueOrEnd,
    /// A key or `}` (just after `{`).
    KeyOrEnd,
    /// A key (after `,` in an object).
    Key,
    /// `:`.
    Colon,
    /// `,` or the closing bracket.
    CommaOrEnd,
    /// Nothing more (the top value is complete).
    Done,
}

#[derive(Debug, Clone)]
struct Frame {
    is_object: bool,
    start: usize,
    index: usize,
    key: Option<String>,
}

#[derive(Debug, Clone, Copy)]
enum Lex {
    None,
    Str {
        start: usize,
        escape: bool,
        is_key: bool,
    },
    Scalar {
        start: usize,
    },
}

/// A completed value: where it sits and its JSON text.
#[derive(Debug, Clone, PartialEq)]
pub struct Completed {
    /// The path from the top value.
    pub path: Vec<Seg>,
    /// The value.
    pub value: Value,
}

/// Follows one JSON text as it streams in; every value at depth `<= emit_depth` (the top
/// value is depth 0) is handed out as soon as it is complete.
#[derive(Debug, Clone)]
pub struct JsonScanner {
    buf: String,
    pos: usize,
    stack: Vec<Frame>,
    expect: Expect,
    lex: Lex,
    emit_depth: usize,
    limits: StreamLimits,
    error: Option<StreamError>,
}

impl JsonScanner {
    /// A scanner that hands out values down to `emit_depth`.
    pub fn new(emit_depth: usize, limits: StreamLimits) -> Self {
        JsonScanner {
            buf: String::new(),
            pos: 0,
            stack: Vec::new(),
            expect: Expect::Value,
            lex: Lex::None,
            emit_depth,
            limits,
            error: None,
        }
    }

    /// Whether the top value is complete.
    pub fn is_done(&self) -> bool {
        self.expect == Expect::Done
    }

    /// Everything received so far.
    pub fn text(&self) -> &str {
        &self.buf
    }

    /// The path of the value being read now (the open containers and their current keys).
    pub fn open_path(&self) -> Vec<Seg> {
        self.stack
            .iter()
            .filter_map(|f| {
                if f.is_object {
                    f.key.clone().map(Seg::Key)
                } else {
                    Some(Seg::Index(f.index))
                }
            })
            .collect()
    }

    /// Feeds a chunk; completed values go to `out`.
    pub fn feed(&mut self, chunk: &str, out: &mut Vec<Completed>) -> Result<(), StreamError> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        if self.buf.len() + chunk.len() > self.limits.max_bytes {
            return self.fail(
                self.buf.len(),
                format!("the stream exceeds {} bytes", self.limits.max_bytes),
            );
        }
        self.buf.push_str(chunk);
        while self.pos < self.buf.len() {
            let b = self.buf.as_bytes()[self.pos];
            let at = self.pos;
            self.pos += 1;
            match self.lex {
                Lex::Str {
                    start,
                    escape,
                    is_key,
                } => {
                    if escape {
                        self.lex = Lex::Str {
                            start,
                            escape: false,
                            is_key,
                        };
                    } else if b == b'\\' {
                        self.lex = Lex::Str {
                            start,
                            escape: true,
                            is_key,
                        };
                    } else if b == b'"' {
                        self.lex = Lex::None;
                        let text = &self.buf[start..=at];
                        if is_key {
                            match serde_json::from_str::<String>(text) {
                                Ok(k) => {
                                    if let Some(f) = self.stack.last_mut() {
                                        f.key = Some(k);
                                    }
                                    self.expect = Expect::Colon;
                                }
                                Err(e) => return self.fail(at, format!("bad key: {e}")),
                            }
                        } else {
                            self.complete(start, at + 1, out)?;
                        }
                    } else if b < 0x20 {
                        return self.fail(at, "a control character inside a string".into());
                    }
                    continue;
                }
                Lex::Scalar { start } => {
                    if matches!(b, b',' | b']' | b'}' | b' ' | b'\n' | b'\r' | b'\t') {
                        self.lex = Lex::None;
                        self.complete(start, at, out)?;
                        // Read the delimiter again, structurally.
                        self.pos = at;
                    }
                    continue;
                }
                Lex::None => {}
            }
            if matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                continue;
            }
            match self.expect {
                Expect::Done => {
                    return self.fail(at, "text after the end of the JSON value".into());
                }
                Expect::Colon => {
                    if b != b':' {
                        return self.fail(at, format!("expected ':' but found {:?}", b as char));
                    }
                    self.expect = Expect::Value;
                }
                Expect::KeyOrEnd | Expect::Key => {
                    if b == b'"' {
                        self.lex = Lex::Str {
                            start: at,
                            escape: false,
                            is_key: true,
                        };
                    } else if b == b'}' && self.expect == Expect::KeyOrEnd {
                        self.close(at, out)?;
                    } else {
                        return self.fail(at, format!("expected a key but found {:?}", b as char));
                    }
                }
                Expect::CommaOrEnd => match (b, self.stack.last().map(|f| f.is_object)) {
                    (b',', Some(true)) => self.expect = Expect::Key,
                    (b',', Some(false)) => {
                        if let Some(f) = self.stack.last_mut() {
                            f.index += 1;
                        }
                        self.expect = Expect::Value;
                    }
                    (b'}', Some(true)) | (b']', Some(false)) => self.close(at, out)?,
                    _ => {
                        return self.fail(
                            at,
                            format!(
                                "expected ',' or a closing bracket but found {:?}",
                                b as char
                            ),
                        );
                    }
                },
                Expect::Value | Expect::ValueOrEnd => {
                    if b == b']' && self.expect == Expect::ValueOrEnd {
                        self.close(at, out)?;
                        continue;
                    }
                    match b {
                        b'{' | b'[' => {
                            if self.stack.len() >= self.limits.max_depth {
                                return self.fail(
                                    at,
                                    format!("JSON nests deeper than {}", self.limits.max_depth),
                                );
                            }
                            self.stack.push(Frame {
                                is_object: b == b'{',
                                start: at,
                                index: 0,
                                key: None,
                            });
                            self.expect = if b == b'{' {
                                Expect::KeyOrEnd
                            } else {
                                Expect::ValueOrEnd
                            };
                        }
                        b'"' => {
                            self.lex = Lex::Str {
                                start: at,
                                escape: false,
                                is_key: false,
                            }
                        }
                        b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
                            self.lex = Lex::Scalar { start: at }
                        }
                        _ => {
                            return self
                                .fail(at, format!("expected a value but found {:?}", b as char));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Ends the stream: a top-level number still open completes; anything else unfinished
    /// is an error.
    pub fn finish(&mut self, out: &mut Vec<Completed>) -> Result<(), StreamError> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        if let Lex::Scalar { start } = self.lex {
            self.lex = Lex::None;
            self.complete(start, self.buf.len(), out)?;
        }
        if self.expect != Expect::Done {
            return self.fail(self.buf.len(), "the JSON value is incomplete".into());
        }
        Ok(())
    }

    fn fail<T>(&mut self, offset: usize, message: String) -> Result<T, StreamError> {
        let e = StreamError { offset, message };
        self.error = Some(e.clone());
        Err(e)
    }

    fn close(&mut self, at: usize, out: &mut Vec<Completed>) -> Result<(), StreamError> {
        let Some(f) = self.stack.pop() else {
            return self.fail(at, "a closing bracket with nothing open".into());
        };
        self.complete(f.start, at + 1, out)
    }

    fn complete(
        &mut self,
        start: usize,
        end: usize,
        out: &mut Vec<Completed>,
    ) -> Result<(), StreamError> {
        if self.stack.len() <= self.emit_depth {
            let text = &self.buf[start..end];
            match serde_json::from_str::<Value>(text) {
                Ok(value) => out.push(Completed {
                    path: self.open_path(),
                    value,
                }),
                Err(e) => return self.fail(start, format!("invalid JSON value: {e}")),
            }
        } else if !matches!(self.buf.as_bytes().get(start), Some(b'{' | b'[' | b'"')) {
            // Scalars deeper down are checked here, since nobody parses them later.
            let text = &self.buf[start..end];
            if serde_json::from_str::<Value>(text).is_err() {
                return self.fail(start, format!("invalid JSON value {text:?}"));
            }
        }
        self.expect = if self.stack.is_empty() {
            Expect::Done
        } else {
            Expect::CommaOrEnd
        };
        Ok(())
    }
}

/// What a `render_a2ui` tool call's arguments yield as they stream in.
#[derive(Debug, Clone, PartialEq)]
pub enum RenderItem {
    /// `surfaceId`.
    SurfaceId(String),
    /// `catalogId`, when the arguments name one.
    CatalogId(String),
    /// One complete element of `components` (its index, the component).
    Component(usize, Component),
    /// An element of `components` that is not a component (its index, the `A1` violations).
    InvalidComponent(usize, Vec<Violation>),
    /// The `components` list is closed (how many elements it has).
    ComponentsDone(usize),
    /// One complete element of a list directly in `data` (the list's key, the element's
    /// index, the element), before `data` is complete: lists of data can be shown item by
    /// item as they stream in.
    DataItem(String, usize, Value),
    /// `data` (the initial data model).
    Data(Value),
    /// Another top-level argument.
    Other(String, Value),
}

/// Reads the streamed arguments of a `render_a2ui` tool call.
#[derive(Debug, Clone)]
pub struct RenderArgsParser {
    scanner: JsonScanner,
}

impl Default for RenderArgsParser {
    fn default() -> Self {
        Self::new(StreamLimits::default())
    }
}

impl RenderArgsParser {
    /// A parser with these limits.
    pub fn new(limits: StreamLimits) -> Self {
        RenderArgsParser {
            scanner: JsonScanner::new(3, limits),
        }
    }

    /// Feeds an argument delta; returns what completed with it.
    pub fn push(&mut self, delta: &str) -> Result<Vec<RenderItem>, StreamError> {
        let mut done = Vec::new();
        self.scanner.feed(delta, &mut done)?;
        Ok(done.into_iter().filter_map(render_item).collect())
    }

    /// Ends the arguments; an unfinished document is an error.
    pub fn finish(&mut self) -> Result<Vec<RenderItem>, StreamError> {
        let mut done = Vec::new();
        self.scanner.finish(&mut done)?;
        Ok(done.into_iter().filter_map(render_item).collect())
    }

    /// The arguments received so far.
    pub fn text(&self) -> &str {
        self.scanner.text()
    }
}

fn render_item(c: Completed) -> Option<RenderItem> {
    match c.path.as_slice() {
        [Seg::Key(k)] => Some(match (k.as_str(), c.value) {
            ("surfaceId", Value::String(s)) => RenderItem::SurfaceId(s),
            ("catalogId", Value::String(s)) => RenderItem::CatalogId(s),
            ("components", Value::Array(a)) => RenderItem::ComponentsDone(a.len()),
            ("data", v) => RenderItem::Data(v),
            (_, v) => RenderItem::Other(k.clone(), v),
        }),
        [Seg::Key(k), Seg::Index(i)] if k == "components" => {
            Some(match Component::from_value(&c.value) {
                Ok(comp) => RenderItem::Component(*i, comp),
                Err(errs) => RenderItem::InvalidComponent(*i, errs),
            })
        }
        [Seg::Key(d), Seg::Key(k), Seg::Index(i)] if d == "data" => {
            Some(RenderItem::DataItem(k.clone(), *i, c.value))
        }
        _ => None,
    }
}

/// Reads a streamed JSON array of A2UI messages (or a single message object) and yields
/// each message (as JSON) as it completes — and, with [`push_items`](Self::push_items),
/// each component of an `updateComponents` as soon as it completes, before its message
/// does.
#[derive(Debug, Clone)]
pub struct MessageStreamParser {
    scanner: JsonScanner,
    single: Option<bool>,
    /// The surface id of the message being read, once its `surfaceId` has arrived.
    surface: Option<(usize, String)>,
}

/// What [`MessageStreamParser::push_items`] yields.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamedItem {
    /// A complete message.
    Message(Value),
    /// A complete component of the `updateComponents` message being read.
    Component {
        /// The index of the message in the stream.
        message: usize,
        /// The message's `surfaceId`, if it came before the components.
        surface_id: Option<String>,
        /// The component.
        component: Value,
    },
}

impl Default for MessageStreamParser {
    fn default() -> Self {
        Self::new(StreamLimits::default())
    }
}

impl MessageStreamParser {
    /// A parser with these limits.
    pub fn new(limits: StreamLimits) -> Self {
        MessageStreamParser {
            // Depth 4: the components of `[{"updateComponents": {"components": [...]}}]`.
            scanner: JsonScanner::new(4, limits),
            single: None,
            surface: None,
        }
    }

    /// Feeds a chunk; returns the messages it completed.
    pub fn push(&mut self, chunk: &str) -> Result<Vec<Value>, StreamError> {
        Ok(only_messages(self.push_items(chunk)?))
    }

    /// Ends the stream.
    pub fn finish(&mut self) -> Result<Vec<Value>, StreamError> {
        Ok(only_messages(self.finish_items()?))
    }

    /// Feeds a chunk; returns the components and messages it completed, in order.
    pub fn push_items(&mut self, chunk: &str) -> Result<Vec<StreamedItem>, StreamError> {
        if self.single.is_none()
            && let Some(b) = chunk.trim_start().bytes().next()
        {
            self.single = Some(b == b'{');
        }
        let mut done = Vec::new();
        self.scanner.feed(chunk, &mut done)?;
        Ok(self.pick(done))
    }

    /// Ends the stream; returns what completed with its end.
    pub fn finish_items(&mut self) -> Result<Vec<StreamedItem>, StreamError> {
        let mut done = Vec::new();
        self.scanner.finish(&mut done)?;
        Ok(self.pick(done))
    }

    fn pick(&mut self, done: Vec<Completed>) -> Vec<StreamedItem> {
        let single = self.single == Some(true);
        let mut out = Vec::new();
        for c in done {
            let (message, rest) = if single {
                (0, c.path.as_slice())
            } else {
                match c.path.split_first() {
                    Some((Seg::Index(i), rest)) => (*i, rest),
                    _ => continue,
                }
            };
            match rest {
                [] => out.push(StreamedItem::Message(c.value)),
                [Seg::Key(_), Seg::Key(k)] if k == "surfaceId" => {
                    if let Value::String(s) = c.value {
                        self.surface = Some((message, s));
                    }
                }
                [Seg::Key(op), Seg::Key(k), Seg::Index(_)]
                    if op == "updateComponents" && k == "components" =>
                {
                    let surface_id = self
                        .surface
                        .as_ref()
                        .filter(|(m, _)| *m == message)
                        .map(|(_, s)| s.clone());
                    out.push(StreamedItem::Component {
                        message,
                        surface_id,
                        component: c.value,
                    });
                }
                _ => {}
            }
        }
        out
    }
}

fn only_messages(items: Vec<StreamedItem>) -> Vec<Value> {
    items
        .into_iter()
        .filter_map(|i| match i {
            StreamedItem::Message(m) => Some(m),
            StreamedItem::Component { .. } => None,
        })
        .collect()
}

fn tagged(item: StreamedItem) -> TaggedItem {
    match item {
        StreamedItem::Message(m) => TaggedItem::Message(m),
        StreamedItem::Component {
            surface_id,
            component,
            ..
        } => TaggedItem::Component {
            surface_id,
            component,
        },
    }
}

/// What model output with `<a2ui-json>` blocks yields.
#[derive(Debug, Clone, PartialEq)]
pub enum TaggedItem {
    /// Text outside the blocks.
    Text(String),
    /// One complete A2UI message from inside a block.
    Message(Value),
    /// One complete component of an `updateComponents` message still being read (its
    /// surface id, when that came first); the message follows once complete.
    Component {
        /// The message's `surfaceId`, if it has arrived.
        surface_id: Option<String>,
        /// The component.
        component: Value,
    },
    /// A block that could not be read (the rest of that block is skipped).
    Error(StreamError),
}

/// The opening tag of an A2UI block in model output.
pub const OPEN_TAG: &str = "<a2ui-json>";
/// The closing tag.
pub const CLOSE_TAG: &str = "</a2ui-json>";

/// Reads model output that carries A2UI messages between [`OPEN_TAG`] and [`CLOSE_TAG`].
#[derive(Debug, Clone)]
pub struct TaggedTextParser {
    pending: String,
    block: Option<Block>,
    limits: StreamLimits,
}

#[derive(Debug, Clone)]
struct Block {
    parser: MessageStreamParser,
    failed: bool,
    started: bool,
}

impl Default for TaggedTextParser {
    fn default() -> Self {
        Self::new(StreamLimits::default())
    }
}

/// The length of the longest suffix of `s` that is a proper prefix of `tag`.
fn partial_tag(s: &str, tag: &str) -> usize {
    (1..tag.len().min(s.len() + 1))
        .rev()
        .find(|n| s.is_char_boundary(s.len() - n) && s.ends_with(&tag[..*n]))
        .unwrap_or(0)
}

impl TaggedTextParser {
    /// A parser with these limits (per block).
    pub fn new(limits: StreamLimits) -> Self {
        TaggedTextParser {
            pending: String::new(),
            block: None,
            limits,
        }
    }

    /// Feeds a chunk of model output; returns the text and messages it completed.
    pub fn push(&mut self, chunk: &str) -> Vec<TaggedItem> {
        self.pending.push_str(chunk);
        let mut out = Vec::new();
        loop {
            if self.block.is_none() {
                match self.pending.find(OPEN_TAG) {
                    Some(i) => {
                        let text: String = self.pending[..i].to_string();
                        if !text.is_empty() {
                            out.push(TaggedItem::Text(text));
                        }
                        self.pending.drain(..i + OPEN_TAG.len());
                        self.block = Some(Block {
                            parser: MessageStreamParser::new(self.limits),
                            failed: false,
                            started: false,
                        });
                    }
                    None => {
                        let keep = partial_tag(&self.pending, OPEN_TAG);
                        let cut = self.pending.len() - keep;
                        if cut > 0 {
                            out.push(TaggedItem::Text(self.pending[..cut].to_string()));
                            self.pending.drain(..cut);
                        }
                        return out;
                    }
                }
            }
            let (body, closed) = match self.pending.find(CLOSE_TAG) {
                Some(i) => (self.pending[..i].to_string(), Some(i)),
                None => {
                    let keep = partial_tag(&self.pending, CLOSE_TAG);
                    let cut = self.pending.len() - keep;
                    (self.pending[..cut].to_string(), None)
                }
            };
            self.pending
                .drain(..closed.map_or(body.len(), |i| i + CLOSE_TAG.len()));
            if let Some(block) = &mut self.block {
                feed_block(block, &body, &mut out);
                if closed.is_some() {
                    if !block.failed && block.started {
                        match block.parser.finish_items() {
                            Ok(items) => out.extend(items.into_iter().map(tagged)),
                            Err(e) => out.push(TaggedItem::Error(e)),
                        }
                    }
                    self.block = None;
                    continue;
                }
            }
            return out;
        }
    }

    /// Ends the output: text held back (a possible partial tag) comes out; an open block
    /// is an error.
    pub fn finish(&mut self) -> Vec<TaggedItem> {
        let mut out = Vec::new();
        let rest = std::mem::take(&mut self.pending);
        match self.block.take() {
            Some(mut b) => {
                feed_block(&mut b, &rest, &mut out);
                if !b.failed {
                    match b.parser.finish_items() {
                        Ok(items) => out.extend(items.into_iter().map(tagged)),
                        Err(e) => out.push(TaggedItem::Error(e)),
                    }
                }
            }
            None => {
                if !rest.is_empty() {
                    out.push(TaggedItem::Text(rest));
                }
            }
        }
        out
    }
}

/// Feeds block text, leaving out Markdown code fences (```` ``` ```` and ```` ```json ````).
fn feed_block(block: &mut Block, body: &str, out: &mut Vec<TaggedItem>) {
    if block.failed {
        return;
    }
    let mut cleaned = String::with_capacity(body.len());
    for line in body.split_inclusive('\n') {
        let t = line.trim();
        if t.starts_with("```") && t[3..].chars().all(|c| c.is_ascii_alphanumeric()) {
            continue;
        }
        cleaned.push_str(line);
    }
    if cleaned.trim().is_empty() {
        return;
    }
    block.started = true;
    match block.parser.push_items(&cleaned) {
        Ok(items) => out.extend(items.into_iter().map(tagged)),
        Err(e) => {
            block.failed = true;
            out.push(TaggedItem::Error(e));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn render_args_yield_components_as_they_complete() {
        let args = r#"{"surfaceId": "s1", "components": [{"id": "root", "component": "Column", "children": ["t"]}, {"id": "t", "component": "Text", "text": "a \"quoted\" ]} text"}], "data": {"n": [1, 2.5, true, null]}}"#;
        let mut p = RenderArgsParser::default();
        let mut all = Vec::new();
        let mut first_component_at = None;
        for (i, ch) in args.char_indices() {
            let items = p.push(&ch.to_string()).unwrap();
            if first_component_at.is_none()
                && items.iter().any(|x| matches!(x, RenderItem::Component(..)))
            {
                first_component_at = Some(i);
            }
            all.extend(items);
        }
        all.extend(p.finish().unwrap());
        // The first component comes out at its own closing brace, not at the end.
        assert_eq!(
            first_component_at,
            Some(args.find(r#"["t"]}"#).unwrap() + 5)
        );
        assert_eq!(all.len(), 9);
        assert_eq!(all[0], RenderItem::SurfaceId("s1".into()));
        let RenderItem::Component(1, t) = &all[2] else {
            panic!("{:?}", all[2]);
        };
        assert_eq!(t.properties["text"], json!("a \"quoted\" ]} text"));
        assert_eq!(all[3], RenderItem::ComponentsDone(2));
        // The elements of a list in data, one by one, then data.
        assert_eq!(all[4], RenderItem::DataItem("n".into(), 0, json!(1)));
        assert_eq!(all[7], RenderItem::DataItem("n".into(), 3, json!(null)));
        assert_eq!(all[8], RenderItem::Data(json!({"n": [1, 2.5, true, null]})));
    }

    #[test]
    fn errors_and_limits() {
        let mut p = RenderArgsParser::default();
        assert!(p.push(r#"{"a": tru"#).is_ok());
        assert!(p.push("x}").is_err());
        assert!(p.push("more").is_err(), "an error sticks");
        let mut p = RenderArgsParser::new(StreamLimits {
            max_bytes: 100,
            max_depth: 3,
        });
        assert!(p.push("[[[[").is_err());
        let mut p = RenderArgsParser::new(StreamLimits {
            max_bytes: 4,
            max_depth: 3,
        });
        assert!(p.push("{\"ab\":").is_err());
        let mut p = RenderArgsParser::default();
        p.push(r#"{"components": [5, {"id": 1}]"#)
            .unwrap_or_default();
        let items = p.push("}").unwrap();
        assert!(items.is_empty());
        let mut p = RenderArgsParser::default();
        let items = p.push(r#"{"components": [5]}"#).unwrap();
        assert!(matches!(items[0], RenderItem::InvalidComponent(0, _)));
        assert!(RenderArgsParser::default().finish().is_err());
        let mut s = JsonScanner::new(0, StreamLimits::default());
        let mut out = Vec::new();
        s.feed("12", &mut out).unwrap();
        s.finish(&mut out).unwrap();
        assert_eq!(out[0].value, json!(12));
        for bad in ["{]", "[1,]x", "\"\u{1}\"", "{\"a\" 1}", "[01x]", "}"] {
            let mut s = JsonScanner::new(3, StreamLimits::default());
            let mut out = Vec::new();
            let r = s.feed(bad, &mut out).and_then(|_| s.finish(&mut out));
            assert!(r.is_err(), "{bad}");
        }
    }

    #[test]
    fn message_streams_yield_components_before_their_message() {
        let mut p = MessageStreamParser::default();
        let items = p
            .push_items(r#"[{"version": "v0.9", "updateComponents": {"surfaceId": "s", "components": [{"id": "a", "component": "Text"}, {"id": "b""#)
            .unwrap();
        assert_eq!(
            items,
            vec![StreamedItem::Component {
                message: 0,
                surface_id: Some("s".into()),
                component: json!({"id": "a", "component": "Text"}),
            }]
        );
        let items = p.push_items(r#", "component": "Text"}]}}]"#).unwrap();
        assert!(
            matches!(&items[0], StreamedItem::Component { component, .. } if component["id"] == "b")
        );
        assert!(
            matches!(&items[1], StreamedItem::Message(m) if m["updateComponents"]["components"].as_array().map(Vec::len) == Some(2))
        );
        assert!(p.finish().unwrap().is_empty());
        let mut single = MessageStreamParser::default();
        let ms = single
            .push(r#"{"version": "v0.9", "deleteSurface": {"surfaceId": "s"}}"#)
            .unwrap();
        assert_eq!(ms.len(), 1);
    }

    #[test]
    fn tagged_text_with_split_tags() {
        let input = "Hello <a2u|i-json>[{\"version\": \"v0.9\", |\"deleteSurface\": {\"surfaceId\": \"s\"}}]</a2|ui-json> bye";
        let mut p = TaggedTextParser::default();
        let mut items = Vec::new();
        for part in input.split('|') {
            items.extend(p.push(part));
        }
        items.extend(p.finish());
        assert_eq!(
            items,
            vec![
                TaggedItem::Text("Hello ".into()),
                TaggedItem::Message(
                    json!({"version": "v0.9", "deleteSurface": {"surfaceId": "s"}})
                ),
                TaggedItem::Text(" bye".into()),
            ]
        );
        let mut p = TaggedTextParser::default();
        let items = p.push("<a2ui-json>\n```json\n{\"a\": 1}\n```\n</a2ui-json>");
        assert_eq!(items, vec![TaggedItem::Message(json!({"a": 1}))]);
        let mut p = TaggedTextParser::default();
        let items = p.push("<a2ui-json>nope</a2ui-json>after");
        assert!(matches!(items[0], TaggedItem::Error(_)));
        assert_eq!(items[1], TaggedItem::Text("after".into()));
    }
}
