//! Chunk expansion: `TEXT_MESSAGE_CHUNK`, `TOOL_CALL_CHUNK` and `REASONING_MESSAGE_CHUNK`
//! become START / CONTENT / END events (rules CH1–CH15 of the client specification).
//!
//! # Model
//!
//! Expansion keeps at most one *pending stream* per *lane* (CH1). A lane is a subagent
//! tag, or the parent agent when a chunk carries none. A chunk either continues the
//! pending stream of the lane it resolves to (CH3–CH7) or closes that lane and opens a
//! new stream there (CH8); it then emits its content (CH9–CH12). Every other event passes
//! through unchanged, after closing the lanes it concerns (§4.2 of the specification).
//!
//! Lanes are kept in a small vector in the order they were opened. Closing all lanes
//! (run-level events) therefore emits the synthesized ENDs in that order, as the reference
//! does. The number of lanes is the number of producers streaming chunks *at the same
//! time*, which is tiny in practice, so a linear scan beats hashing here.
//!
//! # Decode-time guarantees
//!
//! Events reach this stage typed and valid: a `subagentRunId: null`, a `delta: null` or
//! unknown properties cannot occur, so the reference's special handling of those (the
//! null-tag branch of CH10, CH15's remainder) has nothing to act on here. Events of an
//! unknown type ([`Event::Unknown`]) pass through and close nothing.
//!
//! # Errors
//!
//! A rejected chunk appends nothing to the output. As in the reference, a rejection ends
//! the stream: the expander's state after an error is unspecified (but safe), and it
//! should not be fed further.

use super::Violation;
use crate::Event;
use crate::event::{
    ReasoningMessageChunk, ReasoningMessageContent, ReasoningMessageEnd, ReasoningMessageStart,
    ReasoningRole, TextMessageChunk, TextMessageContent, TextMessageEnd, TextMessageRole,
    TextMessageStart, ToolCallArgs, ToolCallChunk, ToolCallEnd, ToolCallStart,
};
use crate::metadata::Metadata;
use serde_json::Value;

#[cfg(test)]
mod tests;

/// The three kinds of chunk stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Tool,
    Reasoning,
}

impl Kind {
    /// The chunk event's wire type.
    fn chunk_type(self) -> &'static str {
        match self {
            Kind::Text => "TEXT_MESSAGE_CHUNK",
            Kind::Tool => "TOOL_CALL_CHUNK",
            Kind::Reasoning => "REASONING_MESSAGE_CHUNK",
        }
    }

    /// The entity a stream of this kind builds, for messages.
    fn entity(self) -> &'static str {
        match self {
            Kind::Text => "text message",
            Kind::Tool => "tool call",
            Kind::Reasoning => "reasoning message",
        }
    }

    /// The chunk field that names the entity.
    fn id_field(self) -> &'static str {
        match self {
            Kind::Tool => "toolCallId",
            Kind::Text | Kind::Reasoning => "messageId",
        }
    }
}

/// A stream being assembled from chunks, with the fields its opener established (CH1).
#[derive(Debug)]
enum Stream {
    Text {
        message_id: String,
        /// The established role: the opener's, or the assistant default.
        role: TextMessageRole,
        name: Option<String>,
    },
    Tool {
        tool_call_id: String,
        tool_call_name: String,
        parent_message_id: Option<String>,
    },
    Reasoning {
        message_id: String,
    },
}

impl Stream {
    fn kind(&self) -> Kind {
        match self {
            Stream::Text { .. } => Kind::Text,
            Stream::Tool { .. } => Kind::Tool,
            Stream::Reasoning { .. } => Kind::Reasoning,
        }
    }

    fn id(&self) -> &str {
        match self {
            Stream::Text { message_id, .. } | Stream::Reasoning { message_id } => message_id,
            Stream::Tool { tool_call_id, .. } => tool_call_id,
        }
    }
}

/// One lane and its pending stream. The lane's owner is also the tag of the chunk that
/// opened the stream: a stream only ever opens in the lane its own tag names.
#[derive(Debug)]
struct Lane {
    /// The subagent tag, `None` for the parent agent.
    owner: Option<String>,
    stream: Stream,
}

impl Lane {
    /// The synthesized END for this lane's stream: the id and the opener's tag, nothing
    /// else (CH2).
    fn into_end(self) -> Event {
        let tag = self.owner;
        match self.stream {
            Stream::Text { message_id, .. } => TextMessageEnd {
                message_id,
                subagent_run_id: tag,
                ..Default::default()
            }
            .into(),
            Stream::Tool { tool_call_id, .. } => ToolCallEnd {
                tool_call_id,
                subagent_run_id: tag,
                ..Default::default()
            }
            .into(),
            Stream::Reasoning { message_id } => ReasoningMessageEnd {
                message_id,
                subagent_run_id: tag,
                ..Default::default()
            }
            .into(),
        }
    }
}

/// The members every chunk has, taken out of it once its stream is settled.
struct ChunkParts {
    id: Option<String>,
    delta: Option<String>,
    subagent_run_id: Option<String>,
    raw_event: Option<Box<Value>>,
    metadata: Option<Box<Metadata>>,
}

/// What a kind of chunk brings to the expansion every kind shares (`Expander::chunk`).
trait Chunk {
    /// The kind of stream it builds.
    const KIND: Kind;
    /// Its content event.
    type Content: Into<Event>;

    /// The id of the entity it builds, if it names one.
    fn id(&self) -> Option<&str>;

    /// Its subagent tag.
    fn tag(&self) -> &Option<String>;

    /// Its metadata.
    fn metadata(&self) -> &Option<Box<Metadata>>;

    /// The members every chunk has.
    fn into_parts(self) -> ChunkParts;

    /// The content event (CH9).
    fn content(
        id: String,
        delta: String,
        subagent_run_id: Option<String>,
        raw_event: Option<Box<Value>>,
        metadata: Option<Box<Metadata>>,
    ) -> Self::Content;

    /// Checks a continuation against what its stream's opener established (CH7).
    fn agree(&self, stream: &Stream) -> Result<(), Violation>;

    /// The START event (without the tag and metadata, which `Expander::chunk` copies) and
    /// the stream a first chunk opens for `id` (CH8); what the stream keeps is moved out of
    /// the chunk.
    fn open(&mut self, id: String) -> Result<(Event, Stream), Violation>;
}

/// The `Chunk` items that differ between kinds only by names: the kind, the id member and
/// the content event.
macro_rules! chunk_members {
    ($kind:expr, $id:ident, $content:ident) => {
        const KIND: Kind = $kind;
        type Content = $content;

        fn id(&self) -> Option<&str> {
            self.$id.as_deref()
        }

        fn tag(&self) -> &Option<String> {
            &self.subagent_run_id
        }

        fn metadata(&self) -> &Option<Box<Metadata>> {
            &self.metadata
        }

        fn into_parts(self) -> ChunkParts {
            ChunkParts {
                id: self.$id,
                delta: self.delta,
                subagent_run_id: self.subagent_run_id,
                raw_event: self.raw_event,
                metadata: self.metadata,
            }
        }

        fn content(
            $id: String,
            delta: String,
            subagent_run_id: Option<String>,
            raw_event: Option<Box<Value>>,
            metadata: Option<Box<Metadata>>,
        ) -> $content {
            $content {
                $id,
                delta,
                subagent_run_id,
                timestamp: None,
                raw_event,
                metadata,
            }
        }
    };
}

impl Chunk for TextMessageChunk {
    chunk_members!(Kind::Text, message_id, TextMessageContent);

    fn agree(&self, stream: &Stream) -> Result<(), Violation> {
        let Stream::Text { role, name, .. } = stream else {
            return Ok(());
        };
        let role = Some(role.as_str());
        agree(
            Self::KIND,
            stream.id(),
            [
                ("role", self.role.map(|r| r.as_str()), role),
                ("name", self.name.as_deref(), name.as_deref()),
            ],
        )
    }

    fn open(&mut self, id: String) -> Result<(Event, Stream), Violation> {
        let role = self.role.unwrap_or(TextMessageRole::Assistant);
        let start = TextMessageStart {
            message_id: id.clone(),
            role: Some(role),
            name: self.name.clone(),
            ..Default::default()
        };
        let stream = Stream::Text {
            message_id: id,
            role,
            name: self.name.take(),
        };
        Ok((start.into(), stream))
    }
}

impl Chunk for ToolCallChunk {
    chunk_members!(Kind::Tool, tool_call_id, ToolCallArgs);

    fn agree(&self, stream: &Stream) -> Result<(), Violation> {
        let Stream::Tool {
            tool_call_name: name,
            parent_message_id: parent,
            ..
        } = stream
        else {
            return Ok(());
        };
        agree(
            Self::KIND,
            stream.id(),
            [
                ("toolCallName", self.tool_call_name.as_deref(), Some(name)),
                (
                    "parentMessageId",
                    self.parent_message_id.as_deref(),
                    parent.as_deref(),
                ),
            ],
        )
    }

    fn open(&mut self, id: String) -> Result<(Event, Stream), Violation> {
        let Some(name) = self.tool_call_name.as_deref() else {
            return Err(first_without(Self::KIND, "toolCallName"));
        };
        let start = ToolCallStart {
            tool_call_id: id.clone(),
            tool_call_name: name.to_owned(),
            parent_message_id: self.parent_message_id.clone(),
            ..Default::default()
        };
        let stream = Stream::Tool {
            tool_call_id: id,
            tool_call_name: name.to_owned(),
            parent_message_id: self.parent_message_id.take(),
        };
        Ok((start.into(), stream))
    }
}

impl Chunk for ReasoningMessageChunk {
    chunk_members!(Kind::Reasoning, message_id, ReasoningMessageContent);

    /// Reasoning continuations check no fields (CH7).
    fn agree(&self, _stream: &Stream) -> Result<(), Violation> {
        Ok(())
    }

    fn open(&mut self, id: String) -> Result<(Event, Stream), Violation> {
        let start = ReasoningMessageStart {
            message_id: id.clone(),
            role: ReasoningRole,
            ..Default::default()
        };
        let stream = Stream::Reasoning { message_id: id };
        Ok((start.into(), stream))
    }
}

/// Where a chunk goes (CH3–CH6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// An existing lane, by index.
    Lane(usize),
    /// A lane that holds nothing yet; its owner is the chunk's own tag.
    Empty,
}

/// The chunk-expansion state machine.
///
/// ```
/// use aguikit_core::Event;
/// use aguikit_core::engine::expand::Expander;
/// use aguikit_core::event::{RunFinished, TextMessageChunk};
///
/// let mut x = Expander::new();
/// let mut out = Vec::new();
/// let chunk = TextMessageChunk {
///     message_id: Some("m1".into()),
///     delta: Some("Hi".into()),
///     ..Default::default()
/// };
/// x.push(chunk.into(), &mut out).unwrap();
/// x.push(RunFinished::new("t1", "r1").into(), &mut out).unwrap();
/// let types: Vec<&str> = out.iter().map(Event::type_str).collect();
/// assert_eq!(
///     types,
///     ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED"]
/// );
/// ```
#[derive(Debug, Default)]
pub struct Expander {
    /// Lanes holding a pending stream, in the order they were opened.
    lanes: Vec<Lane>,
}

impl Expander {
    /// A fresh expander.
    pub fn new() -> Self {
        Expander::default()
    }

    /// Feeds one event; appends the resulting events to `out`.
    ///
    /// On error nothing is appended.
    #[inline]
    pub fn push(&mut self, event: Event, out: &mut Vec<Event>) -> Result<(), Violation> {
        // Events are large: each is moved once (into `out`), and only a chunk's own
        // payload is moved out of it.
        if !event.is_chunk() {
            if !self.lanes.is_empty() {
                self.close_before(&event, out);
            }
            out.push(event);
            return Ok(());
        }
        let mark = out.len();
        let result = match event {
            Event::TextMessageChunk(c) => self.chunk(c, out),
            Event::ToolCallChunk(c) => self.chunk(c, out),
            Event::ReasoningMessageChunk(c) => self.chunk(c, out),
            _ => Ok(()),
        };
        if result.is_err() {
            out.truncate(mark);
        }
        result
    }

    /// Whether any chunk stream is pending (opened by chunks and not yet closed).
    pub fn has_pending(&self) -> bool {
        !self.lanes.is_empty()
    }

    /// Ends the stream. Pending chunk streams are discarded without an END, as the
    /// reference does when its source completes (§4.2, "End of stream"); the expander is
    /// then empty and may be reused.
    pub fn finish(&mut self) {
        self.lanes.clear();
    }

    /// Closes the lanes a non-chunk event concerns, before it passes (§4.2).
    #[inline(never)]
    fn close_before(&mut self, event: &Event, out: &mut Vec<Event>) {
        use Event::*;
        match event {
            // Events that close the lane of their own tag (parent lane when untagged).
            TextMessageStart(_)
            | TextMessageContent(_)
            | TextMessageEnd(_)
            | ToolCallStart(_)
            | ToolCallArgs(_)
            | ToolCallEnd(_)
            | ToolCallResult(_)
            | StateSnapshot(_)
            | StateDelta(_)
            | Custom(_)
            | StepStarted(_)
            | StepFinished(_)
            | ReasoningStart(_)
            | ReasoningMessageStart(_)
            | ReasoningMessageContent(_)
            | ReasoningMessageEnd(_)
            | ReasoningEnd(_) => self.close_lane(event.subagent_run_id(), out),
            // Run-level events close every lane, in the order they opened.
            RunStarted(_) | RunFinished(_) | RunError(_) | MessagesSnapshot(_) => {
                out.extend(self.lanes.drain(..).map(Lane::into_end));
            }
            // A subagent's terminal closes that subagent's lane.
            SubagentFinished(e) => self.close_lane(Some(&e.subagent_run_id), out),
            SubagentError(e) => self.close_lane(Some(&e.subagent_run_id), out),
            Raw(_)
            | ActivitySnapshot(_)
            | ActivityDelta(_)
            | ReasoningEncryptedValue(_)
            | SubagentStarted(_)
            | Unknown(_) => {}
            // Chunks are expanded, never passed through.
            TextMessageChunk(_) | ToolCallChunk(_) | ReasoningMessageChunk(_) => {}
        }
    }

    fn lane_of(&self, owner: Option<&str>) -> Option<usize> {
        self.lanes.iter().position(|l| l.owner.as_deref() == owner)
    }

    /// Closes the lane of `owner`, if it holds a stream (CH2).
    fn close_lane(&mut self, owner: Option<&str>, out: &mut Vec<Event>) {
        if let Some(i) = self.lane_of(owner) {
            out.push(self.lanes.remove(i).into_end());
        }
    }

    /// Resolves the lane a chunk of `kind` goes to (CH3–CH6).
    fn resolve(
        &self,
        kind: Kind,
        id: Option<&str>,
        tag: Option<&str>,
    ) -> Result<Target, Violation> {
        let lane_or_empty = |owner| self.lane_of(owner).map_or(Target::Empty, Target::Lane);
        if let Some(id) = id {
            // CH3: the id continues wherever it is open; a contradicting tag is rejected.
            let holder = self
                .lanes
                .iter()
                .position(|l| l.stream.kind() == kind && l.stream.id() == id);
            if let Some(i) = holder {
                let owner = self.lanes[i].owner.as_deref();
                if let Some(tag) = tag.filter(|&t| Some(t) != owner) {
                    return Err(lane_mismatch(kind, id, tag, owner));
                }
                return Ok(Target::Lane(i));
            }
            // CH4: an id nobody holds goes to the lane its tag names.
            return Ok(lane_or_empty(tag));
        }
        // CH5: a tag names its lane outright.
        if tag.is_some() {
            return Ok(lane_or_empty(tag));
        }
        // CH6: the parent's own stream of this kind, else the sole one of this kind.
        if let Some(i) = self.lane_of(None)
            && self.lanes[i].stream.kind() == kind
        {
            return Ok(Target::Lane(i));
        }
        let mut of_kind = self
            .lanes
            .iter()
            .enumerate()
            .filter(|(_, l)| l.stream.kind() == kind);
        match (of_kind.next(), of_kind.next()) {
            (Some((i, _)), None) => Ok(Target::Lane(i)),
            (Some(_), Some(_)) => Err(ambiguous(kind, 2 + of_kind.count())),
            (None, _) => Ok(lane_or_empty(None)),
        }
    }

    /// The lane `target` names, if it holds a stream of `kind` that a chunk with `id`
    /// continues (CH7).
    fn continued(&self, target: Target, kind: Kind, id: Option<&str>) -> Option<usize> {
        match target {
            Target::Lane(i) => {
                let s = &self.lanes[i].stream;
                (s.kind() == kind && id.is_none_or(|id| id == s.id())).then_some(i)
            }
            Target::Empty => None,
        }
    }

    /// Records a newly opened stream in its lane (CH8); the lane was emptied first.
    /// Returns the lane's index.
    fn push_lane(&mut self, owner: Option<String>, stream: Stream) -> usize {
        self.lanes.push(Lane { owner, stream });
        self.lanes.len() - 1
    }

    /// Expands one chunk of any kind: continue the stream of the lane it resolves to
    /// (CH3–CH7) or close that lane and open a new stream there (CH8), then emit its
    /// content (CH9–CH12).
    fn chunk<C: Chunk>(&mut self, mut c: C, out: &mut Vec<Event>) -> Result<(), Violation> {
        let kind = C::KIND;
        let target = self.resolve(kind, c.id(), c.tag().as_deref())?;
        let continued = self.continued(target, kind, c.id());
        let lane = match continued {
            Some(i) => {
                c.agree(&self.lanes[i].stream)?;
                i
            }
            None => {
                if let Target::Lane(i) = target {
                    out.push(self.lanes.remove(i).into_end());
                }
                let Some(id) = c.id().map(str::to_owned) else {
                    return Err(first_without(kind, kind.id_field()));
                };
                let (mut start, stream) = c.open(id)?;
                // A START carries its opener's tag and metadata (CH8).
                if let Some(tag) = start.subagent_run_id_mut() {
                    tag.clone_from(c.tag());
                }
                if let Some(metadata) = start.metadata_mut() {
                    metadata.clone_from(c.metadata());
                }
                out.push(start);
                self.push_lane(c.tag().clone(), stream)
            }
        };
        let p = c.into_parts();
        let Some((id, delta, subagent_run_id)) = self.content_fields(
            lane,
            continued.is_some(),
            p.id,
            p.delta,
            p.subagent_run_id,
            p.raw_event.is_some(),
            p.metadata.is_some(),
        ) else {
            return Ok(());
        };
        out.push(C::content(id, delta, subagent_run_id, p.raw_event, p.metadata).into());
        Ok(())
    }

    /// Decides whether a chunk emits a content event and, if so, returns its id, delta and
    /// tag (CH9–CH12).
    ///
    /// A chunk with a delta or a rawEvent emits one (CH9). A continuation with neither
    /// emits a zero-delta one only to carry its metadata (CH10), else nothing (CH11). An
    /// opener with neither emits only its START (CH12). The id is the stream's (a present
    /// chunk id equals it, so it is moved rather than copied); the tag is the chunk's own,
    /// else the opener's — the two agree whenever both exist, since a stream opens in the
    /// lane its tag names and a contradicting tag was rejected (CH3).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn content_fields(
        &self,
        lane: usize,
        continuation: bool,
        id: Option<String>,
        delta: Option<String>,
        tag: Option<String>,
        has_raw_event: bool,
        has_metadata: bool,
    ) -> Option<(String, String, Option<String>)> {
        let emits = delta.is_some() || has_raw_event || (continuation && has_metadata);
        if !emits {
            return None;
        }
        let lane = &self.lanes[lane];
        let id = id.unwrap_or_else(|| lane.stream.id().to_owned());
        let tag = tag.or_else(|| lane.owner.clone());
        Some((id, delta.unwrap_or_default(), tag))
    }
}

/// CH7: a continuation may repeat an established field only with the same value. Each
/// field is `(wire name, the chunk's value, the established value)`, checked in order.
fn agree<const N: usize>(
    kind: Kind,
    id: &str,
    fields: [(&str, Option<&str>, Option<&str>); N],
) -> Result<(), Violation> {
    for (field, incoming, established) in fields {
        match incoming {
            Some(v) if Some(v) != established => {
                return Err(disagreement(kind, id, field, v, established));
            }
            _ => {}
        }
    }
    Ok(())
}

#[cold]
fn disagreement(
    kind: Kind,
    id: &str,
    field: &str,
    incoming: &str,
    established: Option<&str>,
) -> Violation {
    let established = match established {
        Some(v) => format!("'{v}'"),
        None => "(absent)".to_owned(),
    };
    Violation::new(
        "CH7",
        format!(
            "Cannot continue {} '{id}': chunk {field} '{incoming}' does not match the open stream's {field} {established}.",
            kind.entity()
        ),
    )
}

#[cold]
fn lane_mismatch(kind: Kind, id: &str, tag: &str, owner: Option<&str>) -> Violation {
    Violation::new(
        "CH3",
        format!(
            "Cannot continue {} '{id}': chunk subagentRunId '{tag}' does not match the open stream's subagent '{}'.",
            kind.entity(),
            owner.unwrap_or("(the parent agent)")
        ),
    )
}

#[cold]
fn ambiguous(kind: Kind, lanes: usize) -> Violation {
    Violation::new(
        "CH6",
        format!(
            "Ambiguous {}: it carries neither a {} nor a subagentRunId, but {lanes} lanes have an open {}. Attribute the chunk to the subagent it belongs to.",
            kind.chunk_type(),
            kind.id_field(),
            kind.entity()
        ),
    )
}

#[cold]
fn first_without(kind: Kind, field: &str) -> Violation {
    Violation::new(
        "CH8",
        format!("First {} must have a {field}", kind.chunk_type()),
    )
}
