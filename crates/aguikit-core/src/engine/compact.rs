//! Compaction: shrinks a stored stream (rules K1–K13 of the client specification).
//!
//! Each text message's and tool call's deltas collapse into one content/args event emitted
//! right after its start, when its end arrives; events that arrived while it was open move
//! after it; state events between run boundaries collapse into one `STATE_SNAPSHOT` when the
//! window holds a snapshot. The function is pure and linear in the size of the stream.
//!
//! ```
//! use aguikit_core::engine::compact::compact;
//! use aguikit_core::event::{TextMessageStart, TextMessageContent, TextMessageEnd};
//! let events = vec![
//!     TextMessageStart::new("m1").into(),
//!     TextMessageContent::new("m1", "Hel").into(),
//!     TextMessageContent::new("m1", "lo").into(),
//!     TextMessageEnd::new("m1").into(),
//! ];
//! let out = compact(&events).unwrap();
//! assert_eq!(out.len(), 3);
//! assert_eq!(out[1], TextMessageContent::new("m1", "Hello").into());
//! ```

use super::Violation;
use super::apply::{Warning, apply_json_patch};
use crate::Event;
use crate::event::{
    StateSnapshot, TextMessageContent, TextMessageStart, ToolCallArgs, ToolCallStart,
};
use crate::metadata::{Metadata, merge_metadata};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// Compacts a stream of events. Never fails today (the reference's compaction does not
/// throw: a state delta that cannot be applied is skipped with a warning, see
/// [`compact_with_warnings`]); the `Result` leaves room for limits.
pub fn compact(events: &[Event]) -> Result<Vec<Event>, Violation> {
    Ok(compact_with_warnings(events).0)
}

/// Compacts a stream of events and returns the warnings the reference prints (K11: state
/// deltas that could not be applied while collapsing a state window).
pub fn compact_with_warnings(events: &[Event]) -> (Vec<Event>, Vec<Warning>) {
    let mut c = Inner::<&Event>::default();
    let mut out = Vec::new();
    for event in events {
        c.push(event, &mut out);
    }
    let warnings = c.finish(&mut out);
    (out, warnings)
}

/// Compaction fed one event at a time, for streams too large to hold: the same output as
/// [`compact`], emitted as soon as it is final.
///
/// An event is written out when nothing later can move it: a text message or tool call when
/// its end arrives (with the events captured while it was open), run events at once, a state
/// window at the next run boundary. What is held is the open streams (their joined deltas and
/// captured events), the events of a state window that has no snapshot yet, and the state of a
/// window that has one (folded as its deltas arrive, not kept as events).
///
/// ```
/// use aguikit_core::engine::compact::{Compactor, compact};
/// use aguikit_core::event::{Event, TextMessageContent, TextMessageEnd, TextMessageStart};
/// let events: Vec<Event> = vec![
///     TextMessageStart::new("m1").into(),
///     TextMessageContent::new("m1", "Hel").into(),
///     TextMessageContent::new("m1", "lo").into(),
///     TextMessageEnd::new("m1").into(),
/// ];
/// let mut c = Compactor::new();
/// let mut out = Vec::new();
/// for e in events.iter().cloned() {
///     c.push(e, &mut out);
/// }
/// assert_eq!(out.len(), 3, "written when the end arrived");
/// let warnings = c.finish(&mut out);
/// assert!(warnings.is_empty());
/// assert_eq!(out, compact(&events).unwrap());
/// ```
#[derive(Default)]
pub struct Compactor {
    inner: Inner<Event>,
}

impl std::fmt::Debug for Compactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compactor")
            .field("open_text_messages", &self.inner.texts.pending.len())
            .field("open_tool_calls", &self.inner.tools.pending.len())
            .finish_non_exhaustive()
    }
}

impl Compactor {
    /// A compactor at the start of a stream.
    pub fn new() -> Self {
        Compactor::default()
    }

    /// Feeds the next event; appends to `out` the events that became final.
    pub fn push(&mut self, event: Event, out: &mut Vec<Event>) {
        self.inner.push(event, out);
    }

    /// Ends the stream: appends the rest (unterminated streams in creation order, then the
    /// last state window) and returns the warnings (K11), as [`compact_with_warnings`].
    pub fn finish(self, out: &mut Vec<Event>) -> Vec<Warning> {
        self.inner.finish(out)
    }
}

/// An event as the compactor holds it: borrowed from the caller's slice ([`compact`]) or
/// owned ([`Compactor`]).
trait Held: Sized {
    fn event(&self) -> &Event;
    fn into_event(self) -> Event;
}

impl Held for &Event {
    fn event(&self) -> &Event {
        self
    }
    fn into_event(self) -> Event {
        self.clone()
    }
}

impl Held for Event {
    fn event(&self) -> &Event {
        self
    }
    fn into_event(self) -> Event {
        self
    }
}

/// What a start, content or end event does to the pending streams of its kind.
enum Step<'e, S> {
    Start(&'e str, &'e S, Option<&'e Metadata>),
    Delta(&'e str, &'e str, Option<&'e Metadata>),
    End(&'e str),
}

/// The start event of a stream kind and how to build its collapsed delta event.
trait Kind {
    type Start: Clone;
    fn metadata(start: &mut Self::Start) -> &mut Option<Box<Metadata>>;
    fn start_event(start: Self::Start) -> Event;
    fn collapsed(id: String, delta: String, metadata: Option<Metadata>) -> Event;
    /// The step an event takes in a stream of this kind (`None` for other events).
    fn step(event: &Event) -> Option<Step<'_, Self::Start>>;
}

struct Text;
struct Tool;

/// Implements `Kind` for a stream kind from its START, content and END event types (each
/// an `Event` variant of the same name) and the field that names the stream.
macro_rules! stream_kind {
    ($kind:ident, $start:ident, $content:ident, $end:ident, $id:ident) => {
        impl Kind for $kind {
            type Start = $start;
            fn metadata(start: &mut $start) -> &mut Option<Box<Metadata>> {
                &mut start.metadata
            }
            fn start_event(start: $start) -> Event {
                Event::$start(start)
            }
            fn collapsed(id: String, delta: String, metadata: Option<Metadata>) -> Event {
                let mut e = $content::new(id, delta);
                e.metadata = metadata.map(Box::new);
                Event::$content(e)
            }
            fn step(event: &Event) -> Option<Step<'_, $start>> {
                match event {
                    Event::$start(e) => Some(Step::Start(&e.$id, e, e.metadata.as_deref())),
                    Event::$content(e) => {
                        Some(Step::Delta(&e.$id, &e.delta, e.metadata.as_deref()))
                    }
                    Event::$end(e) => Some(Step::End(&e.$id)),
                    _ => None,
                }
            }
        }
    };
}

stream_kind!(
    Text,
    TextMessageStart,
    TextMessageContent,
    TextMessageEnd,
    message_id
);
stream_kind!(Tool, ToolCallStart, ToolCallArgs, ToolCallEnd, tool_call_id);

/// K1: one pending stream (text message or tool call).
struct Pending<K: Kind, E> {
    /// Creation order among the pending streams of this kind.
    seq: u64,
    start: Option<K::Start>,
    /// Concatenated deltas and how many content/args events contributed.
    delta: String,
    deltas: usize,
    /// Metadata of content/args events, and of starts replayed after content.
    post_start: Option<Metadata>,
    /// Events that arrived while this stream was open (K8).
    others: Vec<E>,
}

/// The pending streams of one kind, in creation order.
struct Lanes<K: Kind, E> {
    pending: HashMap<String, Pending<K, E>>,
    /// seq → id of the pending streams that have a start (those that capture other events).
    started: BTreeMap<u64, String>,
    next_seq: u64,
}

impl<K: Kind, E> Default for Lanes<K, E> {
    fn default() -> Self {
        Lanes {
            pending: HashMap::new(),
            started: BTreeMap::new(),
            next_seq: 0,
        }
    }
}

impl<K: Kind, E: Held> Lanes<K, E> {
    fn entry(&mut self, id: &str) -> &mut Pending<K, E> {
        if !self.pending.contains_key(id) {
            let seq = self.next_seq;
            self.next_seq += 1;
            self.pending.insert(
                id.to_owned(),
                Pending {
                    seq,
                    start: None,
                    delta: String::new(),
                    deltas: 0,
                    post_start: None,
                    others: Vec::new(),
                },
            );
        }
        self.pending.get_mut(id).expect("inserted above")
    }

    /// K2: a start, before or after content was buffered.
    fn start(&mut self, id: &str, event: &K::Start, metadata: Option<&Metadata>) {
        let p = self.entry(id);
        let mut start = event.clone();
        if p.deltas == 0 {
            // A start replayed before any content: its metadata merges over the previous
            // start's, which it replaces.
            if let Some(mut previous) = p.start.take() {
                let mut merged = K::metadata(&mut previous).take().map(|m| *m);
                merge_metadata(&mut merged, metadata);
                if merged.is_some() {
                    *K::metadata(&mut start) = merged.map(Box::new);
                }
            }
        } else {
            // After content: its fields win, its metadata goes after the content, and the
            // start keeps the metadata it had.
            let carried = p.start.as_mut().and_then(|s| K::metadata(s).take());
            *K::metadata(&mut start) = carried;
            merge_metadata(&mut p.post_start, metadata);
        }
        p.start = Some(start);
        let seq = p.seq;
        self.started.entry(seq).or_insert_with(|| id.to_owned());
    }

    /// K3: a content/args event.
    fn delta(&mut self, id: &str, delta: &str, metadata: Option<&Metadata>) {
        let p = self.entry(id);
        p.delta.push_str(delta);
        p.deltas += 1;
        merge_metadata(&mut p.post_start, metadata);
    }

    /// K4: an end flushes and forgets the stream.
    fn end(&mut self, id: &str, end: E, out: &mut Vec<Event>) {
        self.entry(id);
        if let Some(p) = self.pending.remove(id) {
            self.started.remove(&p.seq);
            flush(id.to_owned(), p, Some(end), out);
        }
    }

    /// K2–K4: takes a start, content or end event of this kind; gives back any other.
    fn take(&mut self, held: E, out: &mut Vec<Event>) -> Result<(), E> {
        match K::step(held.event()) {
            Some(Step::Start(id, start, metadata)) => self.start(id, start, metadata),
            Some(Step::Delta(id, delta, metadata)) => self.delta(id, delta, metadata),
            Some(Step::End(id)) => {
                let id = id.to_owned();
                self.end(&id, held, out);
            }
            None => return Err(held),
        }
        Ok(())
    }

    /// K8: hands an event to the first open stream that has a start; gives it back when
    /// there is none.
    fn capture(&mut self, event: E) -> Result<(), E> {
        let Some((_, id)) = self.started.first_key_value() else {
            return Err(event);
        };
        match self.pending.get_mut(id) {
            Some(p) => {
                p.others.push(event);
                Ok(())
            }
            None => Err(event),
        }
    }

    /// K10: flushes every remaining stream in creation order, without an end.
    fn drain(self, out: &mut Vec<Event>) {
        let mut rest: Vec<(String, Pending<K, E>)> = self.pending.into_iter().collect();
        rest.sort_by_key(|(_, p)| p.seq);
        for (id, p) in rest {
            flush(id, p, None, out);
        }
    }
}

/// K9: start, one collapsed delta event, end, then the captured events.
fn flush<K: Kind, E: Held>(id: String, p: Pending<K, E>, end: Option<E>, out: &mut Vec<Event>) {
    if let Some(start) = p.start {
        out.push(K::start_event(start));
    }
    if p.deltas > 0 {
        out.push(K::collapsed(id, p.delta, p.post_start));
    }
    if let Some(end) = end {
        out.push(end.into_event());
    }
    out.extend(p.others.into_iter().map(Held::into_event));
}

/// K6, K11: the state events since the last run boundary, folded as they arrive.
struct StateWindow<E> {
    /// The window's events while it has no snapshot (they pass through unchanged if none
    /// comes).
    held: Vec<E>,
    /// Once the window has a snapshot: the last one with the deltas after it applied.
    state: Option<Value>,
    /// The metadata of every event of the window, merged in order.
    metadata: Option<Metadata>,
    /// Deltas after the last snapshot that could not be applied.
    warnings: Vec<Warning>,
}

impl<E> Default for StateWindow<E> {
    fn default() -> Self {
        StateWindow {
            held: Vec::new(),
            state: None,
            metadata: None,
            warnings: Vec::new(),
        }
    }
}

impl<E: Held> StateWindow<E> {
    fn push(&mut self, event: E) {
        merge_metadata(&mut self.metadata, event.event().metadata());
        match (event.event(), &mut self.state) {
            (Event::StateSnapshot(_), _) => {
                // Everything before the last snapshot only contributes its metadata.
                self.held.clear();
                self.warnings.clear();
                if let Event::StateSnapshot(e) = event.into_event() {
                    self.state = Some(e.snapshot);
                }
            }
            (Event::StateDelta(e), Some(state)) => {
                if let Err(err) = apply_json_patch(state, &e.delta) {
                    self.warnings.push(Warning {
                        rule: "K11",
                        message: format!("Failed to apply state patch while compacting: {err}"),
                    });
                }
            }
            _ => self.held.push(event),
        }
    }

    /// K11: a window without a snapshot passes through; otherwise one snapshot of the state
    /// after the last snapshot and the deltas that follow it, carrying every event's metadata.
    fn flush(&mut self, out: &mut Vec<Event>, warnings: &mut Vec<Warning>) {
        let window = std::mem::take(self);
        match window.state {
            None => out.extend(window.held.into_iter().map(Held::into_event)),
            Some(state) => {
                let mut snapshot = StateSnapshot::new(state);
                snapshot.metadata = window.metadata.map(Box::new);
                out.push(Event::StateSnapshot(snapshot));
                warnings.extend(window.warnings);
            }
        }
    }
}

struct Inner<E> {
    texts: Lanes<Text, E>,
    tools: Lanes<Tool, E>,
    state: StateWindow<E>,
    warnings: Vec<Warning>,
}

impl<E> Default for Inner<E> {
    fn default() -> Self {
        Inner {
            texts: Lanes::default(),
            tools: Lanes::default(),
            state: StateWindow::default(),
            warnings: Vec::new(),
        }
    }
}

impl<E: Held> Inner<E> {
    fn push(&mut self, held: E, out: &mut Vec<Event>) {
        let Err(held) = self.texts.take(held, out) else {
            return;
        };
        let Err(held) = self.tools.take(held, out) else {
            return;
        };
        match held.event() {
            Event::RunStarted(_) | Event::RunFinished(_) | Event::RunError(_) => {
                self.state.flush(out, &mut self.warnings);
                out.push(held.into_event());
            }
            Event::StateSnapshot(_) | Event::StateDelta(_) => self.state.push(held),
            _ => {
                if let Err(held) = self.texts.capture(held)
                    && let Err(held) = self.tools.capture(held)
                {
                    out.push(held.into_event());
                }
            }
        }
    }

    fn finish(mut self, out: &mut Vec<Event>) -> Vec<Warning> {
        std::mem::take(&mut self.texts).drain(out);
        std::mem::take(&mut self.tools).drain(out);
        self.state.flush(out, &mut self.warnings);
        self.warnings
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ev(v: Value) -> Event {
        Event::from_value(v).unwrap()
    }

    fn compact_json(events: Value) -> Value {
        let events: Vec<Event> = events.as_array().unwrap().iter().cloned().map(ev).collect();
        serde_json::to_value(compact(&events).unwrap()).unwrap()
    }

    /// `compact_with_warnings` on a JSON array of events, the output back as JSON.
    fn compact_json_with_warnings<const N: usize>(events: [Value; N]) -> (Value, Vec<Warning>) {
        let events: Vec<Event> = events.into_iter().map(ev).collect();
        let (out, warnings) = compact_with_warnings(&events);
        (serde_json::to_value(out).unwrap(), warnings)
    }

    #[test]
    fn k2_k3_k4_k9_collapse_a_text_stream() {
        let out = compact_json(json!([
            {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "user", "timestamp": 1},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "a", "timestamp": 2,
             "rawEvent": {"r": 1}, "subagentRunId": "s", "metadata": {"x": 1}},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "b",
             "metadata": {"x": 2, "y": 3}},
            {"type": "TEXT_MESSAGE_END", "messageId": "m", "timestamp": 3, "metadata": {"e": 1}},
        ]));
        assert_eq!(
            out,
            json!([
                {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "user", "timestamp": 1},
                {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "ab",
                 "metadata": {"x": 2, "y": 3}},
                {"type": "TEXT_MESSAGE_END", "messageId": "m", "timestamp": 3,
                 "metadata": {"e": 1}},
            ])
        );
    }

    #[test]
    fn k2_replayed_start_before_content_merges_metadata() {
        let out = compact_json(json!([
            {"type": "TEXT_MESSAGE_START", "messageId": "m", "metadata": {"a": 1, "b": 1}},
            {"type": "TEXT_MESSAGE_START", "messageId": "m", "name": "n", "metadata": {"b": 2}},
            {"type": "TEXT_MESSAGE_START", "messageId": "m", "name": "o"},
            {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        ]));
        assert_eq!(
            out,
            json!([
                {"type": "TEXT_MESSAGE_START", "messageId": "m", "name": "o",
                 "metadata": {"a": 1, "b": 2}},
                {"type": "TEXT_MESSAGE_END", "messageId": "m"},
            ])
        );
    }

    #[test]
    fn k2_replayed_start_after_content_stages_its_metadata() {
        let out = compact_json(json!([
            {"type": "TEXT_MESSAGE_START", "messageId": "m", "metadata": {"s": 1}},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "a", "metadata": {"c": 1}},
            {"type": "TEXT_MESSAGE_START", "messageId": "m", "name": "late",
             "metadata": {"c": 2, "r": 1}},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "b"},
        ]));
        assert_eq!(
            out,
            json!([
                {"type": "TEXT_MESSAGE_START", "messageId": "m", "name": "late",
                 "metadata": {"s": 1}},
                {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "ab",
                 "metadata": {"c": 2, "r": 1}},
            ])
        );
        // Content first, start later without metadata: the start carries none.
        let out = compact_json(json!([
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "a"},
            {"type": "TEXT_MESSAGE_START", "messageId": "m", "metadata": {"k": 1}},
        ]));
        assert_eq!(
            out,
            json!([
                {"type": "TEXT_MESSAGE_START", "messageId": "m"},
                {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "a",
                 "metadata": {"k": 1}},
            ])
        );
    }

    #[test]
    fn k5_tool_calls_collapse_the_same_way() {
        let out = compact_json(json!([
            {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f",
             "parentMessageId": "a"},
            {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{\"a\"", "timestamp": 5},
            {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": ":1}"},
            {"type": "TOOL_CALL_END", "toolCallId": "c"},
            {"type": "TOOL_CALL_RESULT", "messageId": "t", "toolCallId": "c", "content": "ok"},
        ]));
        assert_eq!(
            out,
            json!([
                {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f",
                 "parentMessageId": "a"},
                {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{\"a\":1}"},
                {"type": "TOOL_CALL_END", "toolCallId": "c"},
                {"type": "TOOL_CALL_RESULT", "messageId": "t", "toolCallId": "c",
                 "content": "ok"},
            ])
        );
    }

    #[test]
    fn k6_k7_state_moves_to_the_run_boundary() {
        let out = compact_json(json!([
            {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
            {"type": "STATE_SNAPSHOT", "snapshot": {"a": 1}, "metadata": {"x": 1}},
            {"type": "TEXT_MESSAGE_START", "messageId": "m"},
            {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/b", "value": 2}],
             "subagentRunId": "s", "timestamp": 9, "metadata": {"y": 2}},
            {"type": "TEXT_MESSAGE_END", "messageId": "m"},
            {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
        ]));
        assert_eq!(
            out,
            json!([
                {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
                {"type": "TEXT_MESSAGE_START", "messageId": "m"},
                {"type": "TEXT_MESSAGE_END", "messageId": "m"},
                {"type": "STATE_SNAPSHOT", "snapshot": {"a": 1, "b": 2},
                 "metadata": {"x": 1, "y": 2}},
                {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
            ])
        );
    }

    #[test]
    fn k7_run_events_are_emitted_even_inside_an_open_stream() {
        let out = compact_json(json!([
            {"type": "TEXT_MESSAGE_START", "messageId": "m"},
            {"type": "RUN_ERROR", "message": "x"},
            {"type": "CUSTOM", "name": "n", "value": 1},
        ]));
        assert_eq!(
            out,
            json!([
                {"type": "RUN_ERROR", "message": "x"},
                {"type": "TEXT_MESSAGE_START", "messageId": "m"},
                {"type": "CUSTOM", "name": "n", "value": 1},
            ])
        );
    }

    #[test]
    fn k8_other_events_follow_the_first_open_text_message_then_tool_call() {
        let out = compact_json(json!([
            {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f"},
            {"type": "STEP_STARTED", "stepName": "tool-time"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "headless", "delta": "h"},
            {"type": "TEXT_MESSAGE_START", "messageId": "m2"},
            {"type": "TEXT_MESSAGE_START", "messageId": "m1"},
            {"type": "CUSTOM", "name": "a", "value": 1},
            {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
            {"type": "TEXT_MESSAGE_END", "messageId": "m2"},
            {"type": "RAW", "event": {}},
            {"type": "TOOL_CALL_END", "toolCallId": "c"},
            {"type": "TEXT_MESSAGE_END", "messageId": "headless"},
            {"type": "STEP_FINISHED", "stepName": "tool-time"},
        ]));
        assert_eq!(
            out,
            json!([
                {"type": "TEXT_MESSAGE_START", "messageId": "m1"},
                {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
                {"type": "TEXT_MESSAGE_START", "messageId": "m2"},
                {"type": "TEXT_MESSAGE_END", "messageId": "m2"},
                {"type": "CUSTOM", "name": "a", "value": 1},
                {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f"},
                {"type": "TOOL_CALL_END", "toolCallId": "c"},
                {"type": "STEP_STARTED", "stepName": "tool-time"},
                {"type": "RAW", "event": {}},
                {"type": "TEXT_MESSAGE_CONTENT", "messageId": "headless", "delta": "h"},
                {"type": "TEXT_MESSAGE_END", "messageId": "headless"},
                {"type": "STEP_FINISHED", "stepName": "tool-time"},
            ])
        );
    }

    #[test]
    fn k8_unknown_events_are_other_events() {
        let out = compact_json(json!([
            {"type": "TEXT_MESSAGE_START", "messageId": "m"},
            {"type": "THINKING_START"},
            {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        ]));
        assert_eq!(out[2], json!({"type": "THINKING_START"}));
    }

    #[test]
    fn k10_unterminated_streams_flush_at_the_end_in_creation_order() {
        let out = compact_json(json!([
            {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "x"},
            {"type": "TEXT_MESSAGE_START", "messageId": "b"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a", "delta": "1"},
            {"type": "STATE_DELTA", "delta": []},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "b", "delta": "2"},
        ]));
        assert_eq!(
            out,
            json!([
                {"type": "TEXT_MESSAGE_START", "messageId": "b"},
                {"type": "TEXT_MESSAGE_CONTENT", "messageId": "b", "delta": "2"},
                {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a", "delta": "1"},
                {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "x"},
                {"type": "STATE_DELTA", "delta": []},
            ])
        );
    }

    #[test]
    fn k4_an_id_streamed_again_after_its_end_is_a_new_entry() {
        let out = compact_json(json!([
            {"type": "TEXT_MESSAGE_START", "messageId": "a"},
            {"type": "TEXT_MESSAGE_END", "messageId": "a"},
            {"type": "TEXT_MESSAGE_START", "messageId": "b"},
            {"type": "TEXT_MESSAGE_START", "messageId": "a"},
            {"type": "CUSTOM", "name": "c", "value": 0},
            {"type": "TEXT_MESSAGE_END", "messageId": "a"},
        ]));
        // b was created first among the pending entries, so it captures CUSTOM.
        assert_eq!(
            out[3],
            json!({"type": "TEXT_MESSAGE_END", "messageId": "a"})
        );
        assert_eq!(
            out[4],
            json!({"type": "TEXT_MESSAGE_START", "messageId": "b"})
        );
        assert_eq!(out[5], json!({"type": "CUSTOM", "name": "c", "value": 0}));
    }

    #[test]
    fn k11_windows_without_snapshot_pass_through() {
        let events = json!([
            {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/a", "value": 1}],
             "timestamp": 4},
            {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/b", "value": 1}]},
            {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        ]);
        assert_eq!(compact_json(events.clone()), events);
    }

    #[test]
    fn k11_last_snapshot_wins_metadata_of_all_and_failing_delta_skipped() {
        let (out, warnings) = compact_json_with_warnings([
            json!({"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/zz", "value": 0}],
                   "metadata": {"d0": 1}}),
            json!({"type": "STATE_SNAPSHOT", "snapshot": {"old": true}, "metadata": {"s1": 1}}),
            json!({"type": "STATE_SNAPSHOT", "snapshot": {"n": 1}, "timestamp": 3,
                   "subagentRunId": "s"}),
            json!({"type": "STATE_DELTA", "delta": [{"op": "remove", "path": "/missing"}],
                   "metadata": {"bad": 1}}),
            json!({"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/n", "value": 2}]}),
        ]);
        assert_eq!(
            out,
            json!([{"type": "STATE_SNAPSHOT", "snapshot": {"n": 2},
                    "metadata": {"d0": 1, "s1": 1, "bad": 1}}])
        );
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].rule, "K11");
    }

    #[test]
    fn k11_deltas_before_the_last_snapshot_are_not_applied_and_do_not_warn() {
        let (out, warnings) = compact_json_with_warnings([
            json!({"type": "STATE_SNAPSHOT", "snapshot": {"a": 1}}),
            json!({"type": "STATE_DELTA", "delta": [{"op": "remove", "path": "/missing"}]}),
            json!({"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/b", "value": 2}]}),
            json!({"type": "STATE_SNAPSHOT", "snapshot": {"c": 3}}),
            json!({"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/d", "value": 4}]}),
        ]);
        assert_eq!(
            out,
            json!([{"type": "STATE_SNAPSHOT", "snapshot": {"c": 3, "d": 4}}])
        );
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn k11_state_windows_split_at_run_boundaries() {
        let out = compact_json(json!([
            {"type": "STATE_SNAPSHOT", "snapshot": 1},
            {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
            {"type": "STATE_SNAPSHOT", "snapshot": 2},
            {"type": "STATE_SNAPSHOT", "snapshot": 3},
            {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
            {"type": "STATE_SNAPSHOT", "snapshot": 4},
        ]));
        assert_eq!(
            out,
            json!([
                {"type": "STATE_SNAPSHOT", "snapshot": 1},
                {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
                {"type": "STATE_SNAPSHOT", "snapshot": 3},
                {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
                {"type": "STATE_SNAPSHOT", "snapshot": 4},
            ])
        );
    }

    #[test]
    fn k12_streams_are_reordered_by_end() {
        let out = compact_json(json!([
            {"type": "TEXT_MESSAGE_START", "messageId": "a"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a", "delta": "1"},
            {"type": "TEXT_MESSAGE_START", "messageId": "b"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "b", "delta": "2"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a", "delta": "3"},
            {"type": "TEXT_MESSAGE_END", "messageId": "b"},
            {"type": "TEXT_MESSAGE_END", "messageId": "a"},
        ]));
        let ids: Vec<&str> = out
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["messageId"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["b", "b", "b", "a", "a", "a"]);
        assert_eq!(out[4]["delta"], "13");
    }

    #[test]
    fn k13_nothing_else_is_merged() {
        let events = json!([
            {"type": "MESSAGES_SNAPSHOT", "messages": []},
            {"type": "REASONING_MESSAGE_START", "messageId": "r", "role": "reasoning"},
            {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r", "delta": "a"},
            {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r", "delta": "b"},
            {"type": "REASONING_MESSAGE_END", "messageId": "r"},
        ]);
        assert_eq!(compact_json(events.clone()), events);
        assert_eq!(compact_json(json!([])), json!([]));
    }
}
