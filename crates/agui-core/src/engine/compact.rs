//! Compaction: shrinks a stored stream (rules K1–K13 of the client specification).
//!
//! Each text message's and tool call's deltas collapse into one content/args event emitted
//! right after its start, when its end arrives; events that arrived while it was open move
//! after it; state events between run boundaries collapse into one `STATE_SNAPSHOT` when the
//! window holds a snapshot. The function is pure and linear in the size of the stream.
//!
//! ```
//! use agui_core::engine::compact::compact;
//! use agui_core::event::{TextMessageStart, TextMessageContent, TextMessageEnd};
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
    let mut c = Compactor::default();
    for event in events {
        c.push(event);
    }
    c.finish()
}

/// The start event of a stream kind and how to build its collapsed delta event.
trait Kind {
    type Start: Clone;
    fn metadata(start: &mut Self::Start) -> &mut Option<Metadata>;
    fn start_event(start: Self::Start) -> Event;
    fn collapsed(id: String, delta: String, metadata: Option<Metadata>) -> Event;
}

struct Text;
struct Tool;

impl Kind for Text {
    type Start = TextMessageStart;
    fn metadata(start: &mut TextMessageStart) -> &mut Option<Metadata> {
        &mut start.metadata
    }
    fn start_event(start: TextMessageStart) -> Event {
        Event::TextMessageStart(start)
    }
    fn collapsed(id: String, delta: String, metadata: Option<Metadata>) -> Event {
        let mut e = TextMessageContent::new(id, delta);
        e.metadata = metadata;
        Event::TextMessageContent(e)
    }
}

impl Kind for Tool {
    type Start = ToolCallStart;
    fn metadata(start: &mut ToolCallStart) -> &mut Option<Metadata> {
        &mut start.metadata
    }
    fn start_event(start: ToolCallStart) -> Event {
        Event::ToolCallStart(start)
    }
    fn collapsed(id: String, delta: String, metadata: Option<Metadata>) -> Event {
        let mut e = ToolCallArgs::new(id, delta);
        e.metadata = metadata;
        Event::ToolCallArgs(e)
    }
}

/// K1: one pending stream (text message or tool call).
struct Pending<'a, K: Kind> {
    /// Creation order among the pending streams of this kind.
    seq: u64,
    start: Option<K::Start>,
    /// Concatenated deltas and how many content/args events contributed.
    delta: String,
    deltas: usize,
    /// Metadata of content/args events, and of starts replayed after content.
    post_start: Option<Metadata>,
    /// Events that arrived while this stream was open (K8).
    others: Vec<&'a Event>,
}

/// The pending streams of one kind, in creation order.
struct Lanes<'a, K: Kind> {
    pending: HashMap<String, Pending<'a, K>>,
    /// seq → id of the pending streams that have a start (those that capture other events).
    started: BTreeMap<u64, String>,
    next_seq: u64,
}

impl<K: Kind> Default for Lanes<'_, K> {
    fn default() -> Self {
        Lanes {
            pending: HashMap::new(),
            started: BTreeMap::new(),
            next_seq: 0,
        }
    }
}

impl<'a, K: Kind> Lanes<'a, K> {
    fn entry(&mut self, id: &str) -> &mut Pending<'a, K> {
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
                let mut merged = K::metadata(&mut previous).take();
                merge_metadata(&mut merged, metadata);
                if merged.is_some() {
                    *K::metadata(&mut start) = merged;
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
    fn end(&mut self, id: &str, end: &'a Event, out: &mut Vec<Event>) {
        self.entry(id);
        if let Some(p) = self.pending.remove(id) {
            self.started.remove(&p.seq);
            flush(id.to_owned(), p, Some(end), out);
        }
    }

    /// K8: hands an event to the first open stream that has a start.
    fn capture(&mut self, event: &'a Event) -> bool {
        let Some((_, id)) = self.started.first_key_value() else {
            return false;
        };
        match self.pending.get_mut(id) {
            Some(p) => {
                p.others.push(event);
                true
            }
            None => false,
        }
    }

    /// K10: flushes every remaining stream in creation order, without an end.
    fn drain(self, out: &mut Vec<Event>) {
        let mut rest: Vec<(String, Pending<'a, K>)> = self.pending.into_iter().collect();
        rest.sort_by_key(|(_, p)| p.seq);
        for (id, p) in rest {
            flush(id, p, None, out);
        }
    }
}

/// K9: start, one collapsed delta event, end, then the captured events.
fn flush<K: Kind>(id: String, p: Pending<'_, K>, end: Option<&Event>, out: &mut Vec<Event>) {
    if let Some(start) = p.start {
        out.push(K::start_event(start));
    }
    if p.deltas > 0 {
        out.push(K::collapsed(id, p.delta, p.post_start));
    }
    if let Some(end) = end {
        out.push(end.clone());
    }
    out.extend(p.others.into_iter().cloned());
}

#[derive(Default)]
struct Compactor<'a> {
    out: Vec<Event>,
    texts: Lanes<'a, Text>,
    tools: Lanes<'a, Tool>,
    /// K6: state events since the last run boundary.
    state: Vec<&'a Event>,
    warnings: Vec<Warning>,
}

impl<'a> Compactor<'a> {
    fn push(&mut self, event: &'a Event) {
        match event {
            Event::TextMessageStart(e) => {
                self.texts.start(&e.message_id, e, e.metadata.as_ref());
            }
            Event::TextMessageContent(e) => {
                self.texts
                    .delta(&e.message_id, &e.delta, e.metadata.as_ref());
            }
            Event::TextMessageEnd(e) => self.texts.end(&e.message_id, event, &mut self.out),
            Event::ToolCallStart(e) => {
                self.tools.start(&e.tool_call_id, e, e.metadata.as_ref());
            }
            Event::ToolCallArgs(e) => {
                self.tools
                    .delta(&e.tool_call_id, &e.delta, e.metadata.as_ref());
            }
            Event::ToolCallEnd(e) => self.tools.end(&e.tool_call_id, event, &mut self.out),
            Event::RunStarted(_) | Event::RunFinished(_) | Event::RunError(_) => {
                self.flush_state();
                self.out.push(event.clone());
            }
            Event::StateSnapshot(_) | Event::StateDelta(_) => self.state.push(event),
            _ => {
                if !self.texts.capture(event) && !self.tools.capture(event) {
                    self.out.push(event.clone());
                }
            }
        }
    }

    /// K11: a window without a snapshot passes through; otherwise one snapshot of the state
    /// after the last snapshot and the deltas that follow it, carrying every event's metadata.
    fn flush_state(&mut self) {
        let window = std::mem::take(&mut self.state);
        let Some(last) = window
            .iter()
            .rposition(|e| matches!(e, Event::StateSnapshot(_)))
        else {
            self.out.extend(window.into_iter().cloned());
            return;
        };
        let mut state = Value::Null;
        for event in &window[last..] {
            match event {
                Event::StateSnapshot(e) => state = e.snapshot.clone(),
                Event::StateDelta(e) => {
                    if let Err(err) = apply_json_patch(&mut state, &e.delta) {
                        self.warnings.push(Warning {
                            rule: "K11",
                            message: format!("Failed to apply state patch while compacting: {err}"),
                        });
                    }
                }
                _ => {}
            }
        }
        let mut metadata = None;
        for event in &window {
            merge_metadata(&mut metadata, event.metadata());
        }
        let mut snapshot = StateSnapshot::new(state);
        snapshot.metadata = metadata;
        self.out.push(Event::StateSnapshot(snapshot));
    }

    fn finish(mut self) -> (Vec<Event>, Vec<Warning>) {
        std::mem::take(&mut self.texts).drain(&mut self.out);
        std::mem::take(&mut self.tools).drain(&mut self.out);
        self.flush_state();
        (self.out, self.warnings)
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
        let events: Vec<Event> = [
            json!({"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/zz", "value": 0}],
                   "metadata": {"d0": 1}}),
            json!({"type": "STATE_SNAPSHOT", "snapshot": {"old": true}, "metadata": {"s1": 1}}),
            json!({"type": "STATE_SNAPSHOT", "snapshot": {"n": 1}, "timestamp": 3,
                   "subagentRunId": "s"}),
            json!({"type": "STATE_DELTA", "delta": [{"op": "remove", "path": "/missing"}],
                   "metadata": {"bad": 1}}),
            json!({"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/n", "value": 2}]}),
        ]
        .into_iter()
        .map(ev)
        .collect();
        let (out, warnings) = compact_with_warnings(&events);
        assert_eq!(
            serde_json::to_value(out).unwrap(),
            json!([{"type": "STATE_SNAPSHOT", "snapshot": {"n": 2},
                    "metadata": {"d0": 1, "s1": 1, "bad": 1}}])
        );
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].rule, "K11");
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
