//! Application: folds verified events into messages, state and pending interrupts
//! (rules AP1–AP31 of the client specification).
//!
//! The [`Applier`] is the reference client's default reducer without subscribers: one call to
//! [`Applier::push`] per (expanded, verified) event, each costing time proportional to the
//! event, not to the conversation. Messages are looked up by id through an index that returns
//! the first match in conversation order, as the reference's `messages.find(...)` does;
//! text and argument deltas are appended in place; state patches are applied in place and
//! rolled back when an operation fails. [`Applier::push_owned`] (a folder that does not keep
//! the events) patches a compact copy of the state (`doc.rs`), a third of a `Value`'s size
//! per element, until something looks at [`Applier::state`].
//!
//! ```
//! use aguikit_core::engine::apply::Applier;
//! use aguikit_core::event::{RunStarted, TextMessageStart, TextMessageContent, TextMessageEnd};
//! let mut applier = Applier::new();
//! applier.push(&RunStarted::new("t", "r").into());
//! applier.push(&TextMessageStart::new("m1").into());
//! let changes = applier.push(&TextMessageContent::new("m1", "Hello").into());
//! assert!(changes.messages);
//! applier.push(&TextMessageEnd::new("m1").into());
//! assert_eq!(applier.messages().get(0).and_then(|m| m.text()), Some("Hello"));
//! ```

mod doc;
mod patching;
mod snapshot;
mod state_doc;
mod store;
#[cfg(test)]
mod tests;

pub(crate) use patching::apply as apply_json_patch;

use crate::content::Content;
use crate::event::{
    ActivityDelta, ActivitySnapshot, EncryptedValueSubtype, ReasoningEncryptedValue,
    ReasoningMessageStart, RunFinished, RunStarted, TextMessageRole, TextMessageStart,
    ToolCallResult, ToolCallStart,
};
use crate::message::{
    ActivityMessage, AssistantMessage, DeveloperMessage, ReasoningMessage, SystemMessage,
    ToolMessage, UserMessage,
};
use crate::metadata::{Metadata, merge_metadata};
use crate::{Event, Interrupt, Message, RunOutcome, ToolCall};
use doc::Doc;
use serde::Serialize;
use serde_json::Value;
use state_doc::{StateDoc, Target};
use std::collections::HashSet;
use store::Store;

/// What one event changed: the reference client emits a mutation (and calls
/// `onMessagesChanged` / `onStateChanged`) exactly when these are set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Changes {
    /// The message list changed.
    pub messages: bool,
    /// The state changed.
    pub state: bool,
}

impl Changes {
    const NONE: Changes = Changes {
        messages: false,
        state: false,
    };
    const MESSAGES: Changes = Changes {
        messages: true,
        state: false,
    };
    const STATE: Changes = Changes {
        messages: false,
        state: true,
    };

    fn messages_if(changed: bool) -> Changes {
        Changes {
            messages: changed,
            state: false,
        }
    }

    /// True when nothing changed.
    pub fn is_empty(&self) -> bool {
        !self.messages && !self.state
    }
}

/// Something the reference client reports with a console warning while applying an event;
/// the event (or the failing part of it) is ignored and the run continues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The rule's label in the specification (`AP2`, `AP12`, `K11`, ...).
    pub rule: &'static str,
    /// What happened, for people.
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.rule, self.message)
    }
}

/// How the last applied `RUN_FINISHED` ended its run (what the reference passes to
/// `onRunFinishedEvent`, rule AP28).
#[derive(Debug, Clone, PartialEq)]
pub enum RunEnd {
    /// Success (also an absent outcome).
    Success {
        /// The event's `result`.
        result: Option<Value>,
        /// The outcome's `pendingToolCallIds` when present and non-empty; otherwise the tool
        /// calls started in this run (first-start order) that received no result in it.
        pending_tool_call_ids: Vec<String>,
    },
    /// The run paused on interrupts.
    Interrupt {
        /// The interrupts, as sent.
        interrupts: Vec<Interrupt>,
    },
    /// The run was cancelled.
    Cancelled,
}

/// The application state machine: messages, state, pending interrupts, run outcome.
#[derive(Debug, Clone)]
pub struct Applier {
    store: Store,
    state: StateDoc,
    pending_interrupts: Vec<Interrupt>,
    /// Tool calls started in the current run, in first-start order, and the same as a set.
    run_tool_calls: Vec<String>,
    run_tool_call_set: HashSet<String>,
    /// Tool calls answered in the current run.
    answered: HashSet<String>,
    /// `RUN_FINISHED.result` of the last successful run.
    result: Option<Value>,
    last_run_end: Option<RunEnd>,
    warnings: Vec<Warning>,
}

impl Default for Applier {
    fn default() -> Self {
        Applier::new()
    }
}

/// A read-only view of the conversation, in order. Serializes as the JSON array of messages.
#[derive(Debug, Clone, Copy)]
pub struct Messages<'a> {
    store: &'a Store,
}

impl<'a> Messages<'a> {
    /// Number of messages.
    pub fn len(&self) -> usize {
        self.store.len()
    }

    /// True when there are no messages.
    pub fn is_empty(&self) -> bool {
        self.store.len() == 0
    }

    /// The message at `index` in conversation order.
    pub fn get(&self, index: usize) -> Option<&'a Message> {
        self.store.at(index)
    }

    /// The messages in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &'a Message> + ExactSizeIterator + 'a {
        self.store.iter()
    }

    /// The first message.
    pub fn first(&self) -> Option<&'a Message> {
        self.get(0)
    }

    /// The last message.
    pub fn last(&self) -> Option<&'a Message> {
        self.len().checked_sub(1).and_then(|i| self.get(i))
    }

    /// Owned copies of the messages.
    pub fn to_vec(&self) -> Vec<Message> {
        self.iter().cloned().collect()
    }
}

impl std::ops::Index<usize> for Messages<'_> {
    type Output = Message;

    /// The message at `index`; panics when out of range, like a slice.
    fn index(&self, index: usize) -> &Message {
        match self.store.at(index) {
            Some(m) => m,
            None => panic!(
                "message index {index} out of range for {} messages",
                self.len()
            ),
        }
    }
}

impl<'a> IntoIterator for Messages<'a> {
    type Item = &'a Message;
    type IntoIter = Box<dyn DoubleEndedIterator<Item = &'a Message> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.store.iter())
    }
}

impl Serialize for Messages<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.store.iter())
    }
}

/// Merges event metadata into a target; reports whether anything was merged (AP rules'
/// "MERGE": an empty object still counts).
fn merge(target: &mut Option<Metadata>, incoming: Option<&Metadata>) -> bool {
    merge_metadata(target, incoming);
    incoming.is_some()
}

impl Applier {
    /// No messages, state `{}`.
    pub fn new() -> Self {
        // Compact, like a snapshot given to `push_owned`: a stream that builds its state
        // with deltas alone is patched as fast as one that starts with a snapshot.
        Applier::with_state(Vec::new(), StateDoc::compact(Doc::empty_object()))
    }

    /// Starts from existing messages and state (the reference's `agent.messages` and
    /// `input.state`, AP13). Duplicate ids are allowed; look-ups find the first.
    pub fn with_history(messages: Vec<Message>, state: Value) -> Self {
        Applier::with_state(messages, StateDoc::Tree(state))
    }

    /// Starts from `messages` and the state document `state`.
    fn with_state(messages: Vec<Message>, state: StateDoc) -> Self {
        Applier {
            store: Store::from_messages(messages),
            state,
            pending_interrupts: Vec::new(),
            run_tool_calls: Vec::new(),
            run_tool_call_set: HashSet::new(),
            answered: HashSet::new(),
            result: None,
            last_run_end: None,
            warnings: Vec::new(),
        }
    }

    /// Applies one verified, expanded event given by value: the same as
    /// [`push`](Self::push), but a `STATE_SNAPSHOT`'s document is moved into the state
    /// instead of copied (for a folder that does not keep the events, a large snapshot is
    /// then held once, not twice).
    ///
    /// The snapshot's tree is kept as it came until a `STATE_DELTA` comes (a snapshot that
    /// the next one replaces is never converted); the deltas then patch a compact document
    /// made of it (a third of a `Value`'s bytes per element; a long array is kept in
    /// blocks, so that a removal moves the elements of one block). The outcome is exactly
    /// [`push`](Self::push)'s: the same rules, failures and warnings.
    /// [`state`](Self::state) builds the `Value` the first time it is asked and keeps it
    /// (or hands out the snapshot's own tree); from then on the patches go to that
    /// `Value`, so looking after every event costs at most one conversion per snapshot. [`write_state_json`](Self::write_state_json) writes the
    /// compact document without building a `Value`.
    ///
    /// ```
    /// use aguikit_core::engine::apply::{Applier, Changes};
    /// use aguikit_core::event::{Event, StateSnapshot};
    /// let mut a = Applier::new();
    /// let changes = a.push_owned(Event::StateSnapshot(StateSnapshot::new(serde_json::json!({"n": 1}))));
    /// assert_eq!(changes, Changes { messages: false, state: true });
    /// assert_eq!(a.state()["n"], 1);
    /// ```
    pub fn push_owned(&mut self, event: Event) -> Changes {
        match event {
            Event::StateSnapshot(e) => {
                self.state = StateDoc::given(e.snapshot);
                Changes::STATE
            }
            Event::StateDelta(e) => {
                let outcome = match self.state.target() {
                    Target::Tree(tree) => patching::apply_owned(tree, e.delta),
                    Target::Compact(doc) => patching::apply_owned(doc, e.delta),
                };
                self.state_patched(outcome)
            }
            other => self.push(&other),
        }
    }

    /// What a state delta's outcome changed (a failed patch is a warning, AP12).
    fn state_patched(&mut self, outcome: Result<(), String>) -> Changes {
        match outcome {
            Ok(()) => Changes::STATE,
            Err(err) => {
                self.warn("AP12", format!("Failed to apply state patch: {err}"));
                Changes::NONE
            }
        }
    }

    /// Applies one verified, expanded event and says what it changed.
    ///
    /// Events the reference reducer only hands to subscribers (steps, raw, custom, run error,
    /// reasoning spans, subagent lifecycle) and unknown events change nothing. A `*_CHUNK`
    /// event is never applied (AP31): it is reported as a warning and ignored.
    pub fn push(&mut self, event: &Event) -> Changes {
        match event {
            Event::TextMessageStart(e) => self.text_start(e),
            Event::TextMessageContent(e) => self.append(
                &e.message_id,
                &e.delta,
                e.metadata.as_deref(),
                "TEXT_MESSAGE",
            ),
            Event::TextMessageEnd(e) => {
                self.end(&e.message_id, e.metadata.as_deref(), "TEXT_MESSAGE")
            }
            Event::ReasoningMessageStart(e) => self.reasoning_start(e),
            Event::ReasoningMessageContent(e) => self.append(
                &e.message_id,
                &e.delta,
                e.metadata.as_deref(),
                "REASONING_MESSAGE",
            ),
            Event::ReasoningMessageEnd(e) => {
                self.end(&e.message_id, e.metadata.as_deref(), "REASONING_MESSAGE")
            }
            Event::ToolCallStart(e) => self.tool_start(e),
            Event::ToolCallArgs(e) => {
                self.tool_args(&e.tool_call_id, &e.delta, e.metadata.as_deref())
            }
            Event::ToolCallEnd(e) => self.tool_end(&e.tool_call_id, e.metadata.as_deref()),
            Event::ToolCallResult(e) => self.tool_result(e),
            Event::StateSnapshot(e) => {
                self.state = StateDoc::Tree(e.snapshot.clone());
                Changes::STATE
            }
            Event::StateDelta(e) => {
                let outcome = apply_json_patch(self.state.get_mut(), &e.delta);
                self.state_patched(outcome)
            }
            Event::MessagesSnapshot(e) => {
                snapshot::merge_snapshot(&mut self.store, e);
                Changes::MESSAGES
            }
            Event::ActivitySnapshot(e) => self.activity_snapshot(e),
            Event::ActivityDelta(e) => self.activity_delta(e),
            Event::ReasoningEncryptedValue(e) => self.encrypted_value(e),
            Event::RunStarted(e) => self.run_started(e),
            Event::RunFinished(e) => {
                self.run_finished(e);
                Changes::NONE
            }
            Event::TextMessageChunk(_)
            | Event::ToolCallChunk(_)
            | Event::ReasoningMessageChunk(_) => {
                self.warn(
                    "AP31",
                    format!(
                        "{} must be transformed before being applied; ignored",
                        event.type_str()
                    ),
                );
                Changes::NONE
            }
            Event::RunError(_)
            | Event::StepStarted(_)
            | Event::StepFinished(_)
            | Event::Raw(_)
            | Event::Custom(_)
            | Event::ReasoningStart(_)
            | Event::ReasoningEnd(_)
            | Event::SubagentStarted(_)
            | Event::SubagentFinished(_)
            | Event::SubagentError(_)
            | Event::Unknown(_) => Changes::NONE,
        }
    }

    /// The messages, in conversation order.
    pub fn messages(&self) -> Messages<'_> {
        Messages { store: &self.store }
    }

    /// The first message (in conversation order) with this id.
    pub fn message(&self, id: &str) -> Option<&Message> {
        self.store.find(id).map(|slot| self.store.get(slot))
    }

    /// The state.
    pub fn state(&self) -> &Value {
        self.state.get()
    }

    /// Appends the state's JSON to `out`, exactly as `serde_json::to_vec` writes
    /// [`state`](Self::state). A large snapshot that a [`Pipeline`] folded without handing
    /// events back is kept as this text until a patch needs its tree; it is then written
    /// as it is kept, and no tree is built.
    ///
    /// [`Pipeline`]: super::pipeline::Pipeline
    ///
    /// ```
    /// use aguikit_core::engine::apply::Applier;
    /// let a = Applier::with_history(vec![], serde_json::json!({"n": 1, "s": "\u{e9} \"q\""}));
    /// let mut json = Vec::new();
    /// a.write_state_json(&mut json);
    /// assert_eq!(json, serde_json::to_vec(a.state()).unwrap());
    /// ```
    pub fn write_state_json(&self, out: &mut Vec<u8>) {
        self.state.write_json(out);
    }

    /// Whether the state is kept as text.
    #[cfg(test)]
    pub(crate) fn state_is_text(&self) -> bool {
        matches!(self.state, StateDoc::Text { .. })
    }

    /// Whether the state is a snapshot's tree, moved in and not yet patched.
    #[cfg(test)]
    pub(crate) fn state_is_given(&self) -> bool {
        matches!(self.state, StateDoc::Given { .. })
    }

    /// Whether the state is kept as a compact document.
    #[cfg(test)]
    pub(crate) fn state_is_compact(&self) -> bool {
        matches!(self.state, StateDoc::Compact { .. })
    }

    /// Replaces the state with a snapshot's document given as the JSON text `serde_json`
    /// writes of it, kept as text until something needs its tree.
    pub(crate) fn snapshot_text(&mut self, json: Box<[u8]>) {
        self.state = StateDoc::Text {
            json,
            tree: std::sync::OnceLock::new(),
        };
    }

    /// The interrupts of the last `RUN_FINISHED`, if its outcome was an interrupt (AP28);
    /// empty after any other `RUN_FINISHED`. `RUN_ERROR` leaves them as they were.
    pub fn pending_interrupts(&self) -> &[Interrupt] {
        &self.pending_interrupts
    }

    /// `RUN_FINISHED.result` of the last run that finished with success (AP29); `None` when
    /// there was none or it carried no result. A cancelled or interrupted run leaves it.
    pub fn result(&self) -> Option<&Value> {
        self.result.as_ref()
    }

    /// How the last applied `RUN_FINISHED` ended its run.
    pub fn last_run_end(&self) -> Option<&RunEnd> {
        self.last_run_end.as_ref()
    }

    /// Warnings reported so far (events or parts of events ignored), oldest first.
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// Takes the warnings reported so far, leaving none.
    pub fn take_warnings(&mut self) -> Vec<Warning> {
        std::mem::take(&mut self.warnings)
    }

    /// Takes the applier apart: messages (in order), state, pending interrupts.
    pub fn into_parts(self) -> (Vec<Message>, Value, Vec<Interrupt>) {
        (
            self.store.into_messages(),
            self.state.into_value(),
            self.pending_interrupts,
        )
    }

    fn warn(&mut self, rule: &'static str, message: String) {
        self.warnings.push(Warning { rule, message });
    }

    // ---- text and reasoning messages (AP1–AP4, AP21, AP24, AP25) ----

    /// AP1: reuse an existing message (only MERGE) or create one.
    fn text_start(&mut self, e: &TextMessageStart) -> Changes {
        let metadata = e.metadata.as_deref();
        if let Some(changes) = self.reuse("TEXT_MESSAGE_START", &e.message_id, metadata) {
            return changes;
        }
        let (id, name) = (e.message_id.clone(), e.name.clone());
        let mut message = match e.role.unwrap_or_default() {
            TextMessageRole::Assistant => Message::Assistant(AssistantMessage {
                id,
                content: Some(String::new()),
                name,
                ..Default::default()
            }),
            TextMessageRole::User => Message::User(UserMessage {
                id,
                content: Content::Text(String::new()),
                name,
                ..Default::default()
            }),
            TextMessageRole::System => Message::System(SystemMessage {
                id,
                name,
                ..Default::default()
            }),
            TextMessageRole::Developer => Message::Developer(DeveloperMessage {
                id,
                name,
                ..Default::default()
            }),
        };
        *message.metadata_mut() = e.metadata.as_deref().cloned();
        *message.subagent_run_id_mut() = e.subagent_run_id.clone();
        self.store.push(message);
        Changes::MESSAGES
    }

    /// AP24: reuse any non-activity message with the id, or create a reasoning message.
    fn reasoning_start(&mut self, e: &ReasoningMessageStart) -> Changes {
        let metadata = e.metadata.as_deref();
        if let Some(changes) = self.reuse("REASONING_MESSAGE_START", &e.message_id, metadata) {
            return changes;
        }
        self.store.push(Message::Reasoning(ReasoningMessage {
            id: e.message_id.clone(),
            content: String::new(),
            encrypted_value: None,
            metadata: e.metadata.as_deref().cloned(),
            subagent_run_id: e.subagent_run_id.clone(),
        }));
        Changes::MESSAGES
    }

    /// AP1 / AP24: a START for a message that already exists only MERGEs its metadata
    /// (an activity message is left alone, with a warning, AP21). `None` when no message
    /// has the id, for the caller to create it.
    fn reuse(
        &mut self,
        event_type: &str,
        id: &str,
        metadata: Option<&Metadata>,
    ) -> Option<Changes> {
        let slot = self.store.find(id)?;
        let message = self.store.get_mut(slot);
        if message.role() == crate::Role::Activity {
            self.warn_activity(event_type, id);
            return Some(Changes::NONE);
        }
        Some(Changes::messages_if(merge(
            message.metadata_mut(),
            metadata,
        )))
    }

    /// AP2 / AP25: append a delta to the first message with the id, then MERGE.
    fn append(
        &mut self,
        id: &str,
        delta: &str,
        metadata: Option<&Metadata>,
        kind: &'static str,
    ) -> Changes {
        let Some(slot) = self.message_or_warn(id, kind, "CONTENT") else {
            return Changes::NONE;
        };
        let message = self.store.get_mut(slot);
        if !append_text(message, delta) {
            self.warn_activity(&format!("{kind}_CONTENT"), id);
            return Changes::NONE;
        }
        if metadata.is_some() {
            merge_metadata(message.metadata_mut(), metadata);
        }
        Changes::MESSAGES
    }

    /// AP3 / AP25: MERGE into the first message with the id.
    fn end(&mut self, id: &str, metadata: Option<&Metadata>, kind: &'static str) -> Changes {
        let Some(slot) = self.message_or_warn(id, kind, "END") else {
            return Changes::NONE;
        };
        let message = self.store.get_mut(slot);
        if message.role() == crate::Role::Activity {
            self.warn_activity(&format!("{kind}_END"), id);
            return Changes::NONE;
        }
        Changes::messages_if(merge(message.metadata_mut(), metadata))
    }

    /// The slot of the first message with the id, or `None` after the warning that there is
    /// none (AP2, AP3, AP25). `kind` and `event` make the event type (`TEXT_MESSAGE` and
    /// `END` for `TEXT_MESSAGE_END`).
    fn message_or_warn(&mut self, id: &str, kind: &'static str, event: &str) -> Option<usize> {
        let found = self.store.find_hot(id);
        if found.is_none() {
            self.warn(
                rule_of(kind),
                format!("{kind}_{event}: No message found with ID '{id}'"),
            );
        }
        found
    }

    fn warn_activity(&mut self, event_type: &str, id: &str) {
        self.warn(
            "AP21",
            format!(
                "{event_type}: Message '{id}' is an activity message — message ids must be \
                 unique across activity and other messages"
            ),
        );
    }

    // ---- tool calls (AP5–AP10) ----

    /// AP5: replay onto an existing call, or attach a new call to its assistant message.
    fn tool_start(&mut self, e: &ToolCallStart) -> Changes {
        if !self.run_tool_call_set.contains(&e.tool_call_id) {
            self.run_tool_call_set.insert(e.tool_call_id.clone());
            self.run_tool_calls.push(e.tool_call_id.clone());
        }
        if let Some((slot, index)) = self.store.find_tool(&e.tool_call_id) {
            let Some(call) = self.store.tool_call_mut(slot, index) else {
                return Changes::NONE;
            };
            let renamed = call.function.name != e.tool_call_name;
            let old_name = if renamed {
                Some(std::mem::replace(
                    &mut call.function.name,
                    e.tool_call_name.clone(),
                ))
            } else {
                None
            };
            let merged = merge(&mut call.metadata, e.metadata.as_deref());
            if let Some(old) = old_name {
                self.warn(
                    "AP5",
                    format!(
                        "TOOL_CALL_START: tool call '{}' already exists with name '{old}' — \
                         updating it to '{}'",
                        e.tool_call_id, e.tool_call_name
                    ),
                );
            }
            return Changes::messages_if(merged || renamed);
        }

        let parent = e.parent_message_id.as_deref().filter(|p| !p.is_empty());
        let slot = match parent {
            Some(parent) => match self.store.find(parent) {
                Some(slot) if self.store.get(slot).role() == crate::Role::Assistant => slot,
                Some(slot) => {
                    let role = self.store.get(slot).role().as_str();
                    self.warn(
                        "AP5",
                        format!(
                            "TOOL_CALL_START: parentMessageId '{parent}' matches a '{role}' \
                             message, not assistant — falling back to toolCallId"
                        ),
                    );
                    self.create_assistant(&e.tool_call_id, e)
                }
                None => self.create_assistant(parent, e),
            },
            None => self.create_assistant(&e.tool_call_id, e),
        };
        let mut call = ToolCall::new(e.tool_call_id.clone(), e.tool_call_name.clone(), "");
        call.metadata = e.metadata.as_deref().cloned();
        self.store.push_tool_call(slot, call);
        Changes::MESSAGES
    }

    /// Creates the assistant message a tool call attaches to. The reference tags it only when
    /// no message with its id existed before (it tests "was created" by id).
    fn create_assistant(&mut self, id: &str, e: &ToolCallStart) -> usize {
        let preexisting = self.store.find(id).is_some();
        self.store.push(Message::Assistant(AssistantMessage {
            id: id.to_owned(),
            tool_calls: Some(Vec::new()),
            subagent_run_id: if preexisting {
                None
            } else {
                e.subagent_run_id.clone()
            },
            ..Default::default()
        }))
    }

    /// AP7: append to the first tool call with the id.
    fn tool_args(&mut self, id: &str, delta: &str, metadata: Option<&Metadata>) -> Changes {
        let Some(call) = self.tool_call_or_warn(id, "AP7", "TOOL_CALL_ARGS") else {
            return Changes::NONE;
        };
        call.function.arguments.push_str(delta);
        if metadata.is_some() {
            merge_metadata(&mut call.metadata, metadata);
        }
        Changes::MESSAGES
    }

    /// AP8: MERGE into the first tool call with the id.
    fn tool_end(&mut self, id: &str, metadata: Option<&Metadata>) -> Changes {
        let Some(call) = self.tool_call_or_warn(id, "AP8", "TOOL_CALL_END") else {
            return Changes::NONE;
        };
        Changes::messages_if(merge(&mut call.metadata, metadata))
    }

    /// The first tool call with the id, or `None` after the rule's warning that there is none.
    fn tool_call_or_warn(
        &mut self,
        id: &str,
        rule: &'static str,
        event_type: &str,
    ) -> Option<&mut ToolCall> {
        let found = self.store.find_tool_hot(id);
        if found.is_none_or(|(slot, index)| self.store.tool_call_mut(slot, index).is_none()) {
            self.warn(
                rule,
                format!("{event_type}: No message found containing tool call with ID '{id}'"),
            );
            return None;
        }
        let (slot, index) = found?;
        self.store.tool_call_mut(slot, index)
    }

    /// AP10: a tool message right after the assistant message holding the call (after any
    /// tool messages already following it), or at the end.
    fn tool_result(&mut self, e: &ToolCallResult) -> Changes {
        if !self.answered.contains(&e.tool_call_id) {
            self.answered.insert(e.tool_call_id.clone());
        }
        let message = Message::Tool(ToolMessage {
            id: e.message_id.clone(),
            content: e.content.clone(),
            tool_call_id: e.tool_call_id.clone(),
            error: None,
            encrypted_value: None,
            metadata: e.metadata.as_deref().cloned(),
            subagent_run_id: e.subagent_run_id.clone(),
        });
        match self.store.find_tool(&e.tool_call_id) {
            Some((owner, _)) => {
                let mut at = self.store.position(owner) + 1;
                while at < self.store.len() && self.store.role_at(at) == crate::Role::Tool {
                    at += 1;
                }
                self.store.insert(at, message);
            }
            None => {
                self.store.push(message);
            }
        }
        Changes::MESSAGES
    }

    // ---- activities (AP19, AP20) ----

    /// AP19.
    fn activity_snapshot(&mut self, e: &ActivitySnapshot) -> Changes {
        let replace = e.replace.unwrap_or(true);
        let fresh = || {
            Message::Activity(ActivityMessage {
                id: e.message_id.clone(),
                activity_type: e.activity_type.clone(),
                content: e.content.clone(),
                metadata: None,
                subagent_run_id: e.subagent_run_id.clone(),
            })
        };
        let Some(slot) = self.store.find(&e.message_id) else {
            let mut message = fresh();
            merge(message.metadata_mut(), e.metadata.as_deref());
            self.store.push(message);
            return Changes::MESSAGES;
        };
        let is_activity = self.store.get(slot).role() == crate::Role::Activity;
        let shared = self.store.is_shared(slot);
        let target = match (is_activity, replace) {
            (true, true) if shared => {
                let metadata = self.store.get(slot).metadata().cloned();
                let mut message = fresh();
                *message.metadata_mut() = metadata;
                self.store.replace_first_entry(slot, message)
            }
            (true, true) => {
                if let Message::Activity(a) = self.store.get_mut(slot) {
                    a.activity_type.clone_from(&e.activity_type);
                    a.content.clone_from(&e.content);
                    a.subagent_run_id.clone_from(&e.subagent_run_id);
                }
                slot
            }
            (true, false) => slot,
            (false, true) if shared => self.store.replace_first_entry(slot, fresh()),
            (false, true) => {
                self.store.replace_slot(slot, fresh());
                slot
            }
            (false, false) => return Changes::MESSAGES,
        };
        merge(
            self.store.get_mut(target).metadata_mut(),
            e.metadata.as_deref(),
        );
        Changes::MESSAGES
    }

    /// AP20. One divergence: a patch that turns the content into something other than an
    /// object (a root `replace` with an array, a root `remove`) is treated as failing,
    /// because an activity message's content is an object here; the reference would store
    /// the non-object.
    fn activity_delta(&mut self, e: &ActivityDelta) -> Changes {
        let Some(slot) = self.store.find(&e.message_id) else {
            return Changes::NONE;
        };
        if self.store.get(slot).role() != crate::Role::Activity {
            self.warn(
                "AP20",
                format!(
                    "ACTIVITY_DELTA: Message '{}' is not an activity message",
                    e.message_id
                ),
            );
            return Changes::NONE;
        }
        let merged = merge(
            self.store.get_mut(slot).metadata_mut(),
            e.metadata.as_deref(),
        );
        let shared = self.store.is_shared(slot);
        let Message::Activity(activity) = self.store.get_mut(slot) else {
            return Changes::messages_if(merged);
        };
        // Patch in place unless the patch may turn the content into a non-object (an
        // operation on the root) or the object is shared; then patch a copy.
        let in_place = !shared && !patching::writes_root(&e.patch);
        let mut doc = if in_place {
            Value::Object(std::mem::take(&mut activity.content))
        } else {
            Value::Object(activity.content.clone())
        };
        let outcome = apply_json_patch(&mut doc, &e.patch);
        let failure = match (outcome, doc) {
            (Ok(()), Value::Object(content)) => {
                if shared {
                    let mut copy = activity.clone();
                    copy.content = content;
                    copy.activity_type.clone_from(&e.activity_type);
                    self.store
                        .replace_first_entry(slot, Message::Activity(copy));
                } else {
                    activity.content = content;
                    activity.activity_type.clone_from(&e.activity_type);
                }
                return Changes::MESSAGES;
            }
            (Ok(()), other) => format!(
                "the patched content is not an object ({}); content kept",
                json_kind(&other)
            ),
            (Err(err), doc) => {
                if in_place && let Value::Object(content) = doc {
                    activity.content = content;
                }
                err
            }
        };
        self.warn(
            "AP20",
            format!(
                "Failed to apply activity patch for '{}': {failure}",
                e.message_id
            ),
        );
        Changes::messages_if(merged)
    }

    // ---- reasoning encrypted values (AP26) ----

    fn encrypted_value(&mut self, e: &ReasoningEncryptedValue) -> Changes {
        let value = || Some(e.encrypted_value.clone());
        match e.subtype {
            EncryptedValueSubtype::ToolCall => {
                let call = self
                    .store
                    .find_tool(&e.entity_id)
                    .and_then(|(slot, index)| self.store.tool_call_mut(slot, index));
                match call {
                    Some(call) => {
                        call.encrypted_value = value();
                        Changes::MESSAGES
                    }
                    None => Changes::NONE,
                }
            }
            EncryptedValueSubtype::Message => {
                let Some(slot) = self.store.find(&e.entity_id) else {
                    return Changes::NONE;
                };
                match self.store.get_mut(slot).encrypted_value_mut() {
                    Some(target) => {
                        *target = value();
                        Changes::MESSAGES
                    }
                    None => Changes::NONE,
                }
            }
        }
    }

    // ---- runs (AP27–AP29) ----

    /// AP27: new tool-call tally; append unknown input messages.
    fn run_started(&mut self, e: &RunStarted) -> Changes {
        self.run_tool_calls.clear();
        self.run_tool_call_set.clear();
        self.answered.clear();
        let Some(input) = &e.input else {
            return Changes::NONE;
        };
        for message in &input.messages {
            if self.store.find(message.id()).is_none() {
                self.store.push(message.clone());
            }
        }
        Changes::MESSAGES
    }

    /// AP28, AP29.
    fn run_finished(&mut self, e: &RunFinished) {
        let end = match &e.outcome {
            Some(RunOutcome::Interrupt { interrupts }) => RunEnd::Interrupt {
                interrupts: interrupts.clone(),
            },
            Some(RunOutcome::Cancelled) => RunEnd::Cancelled,
            Some(RunOutcome::Success {
                pending_tool_call_ids: Some(named),
            }) if !named.is_empty() => RunEnd::Success {
                result: e.result.clone(),
                pending_tool_call_ids: named.clone(),
            },
            Some(RunOutcome::Success { .. }) | None => RunEnd::Success {
                result: e.result.clone(),
                pending_tool_call_ids: self
                    .run_tool_calls
                    .iter()
                    .filter(|id| !self.answered.contains(*id))
                    .cloned()
                    .collect(),
            },
        };
        match &end {
            RunEnd::Interrupt { interrupts } => self.pending_interrupts.clone_from(interrupts),
            RunEnd::Success { result, .. } => {
                self.pending_interrupts.clear();
                self.result.clone_from(result);
            }
            RunEnd::Cancelled => self.pending_interrupts.clear(),
        }
        self.last_run_end = Some(end);
    }
}

fn rule_of(kind: &str) -> &'static str {
    if kind == "TEXT_MESSAGE" {
        "AP2"
    } else {
        "AP25"
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Appends a delta to a message's text the way the reference does (`content` if it is a
/// string, else `""`, plus the delta: parts content is replaced). False for activities.
fn append_text(message: &mut Message, delta: &str) -> bool {
    match message {
        Message::Assistant(m) => m.content.get_or_insert_with(String::new).push_str(delta),
        Message::Developer(m) => m.content.push_str(delta),
        Message::System(m) => m.content.push_str(delta),
        Message::Reasoning(m) => m.content.push_str(delta),
        Message::User(UserMessage { content, .. }) | Message::Tool(ToolMessage { content, .. }) => {
            match content {
                Content::Text(text) => text.push_str(delta),
                Content::Parts(_) => *content = Content::Text(delta.to_owned()),
            }
        }
        Message::Activity(_) => return false,
    }
    true
}
