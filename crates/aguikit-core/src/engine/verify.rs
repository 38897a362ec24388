//! Verification: the ordering and ownership rules V1–V55 of the client specification.
//! Each rule id this stage reports is explained in [`super::rules`] (a test there checks
//! that every id used here is in the table).
//!
//! # State
//!
//! Per run: the open text messages, tool calls, reasoning spans and reasoning messages;
//! four owner maps (message, tool call, activity, reasoning: id → owner tag, `None` being
//! the parent agent, which is an owner too) kept for the whole run; the open steps per
//! (owner, name); the active subagents and those closed in this run; and the run flags.
//! A `RUN_STARTED` after a finished or errored run resets all of it (V5).
//!
//! # Decode-time guarantees
//!
//! Events reach this stage typed, so several rules of the table are enforced by decoding
//! and have no code here:
//! - V6, V7, V8, V10, V12: a `null` in an optional field (an event's tag, a subagent
//!   lifecycle field, `outcome.interruptIds`, an interrupt's tag) cannot be represented,
//!   and decoding rejects it.
//! - V47: a message's `subagentRunId: null` cannot be represented either; rejecting it
//!   is the decoder's job (it currently reads it as absent instead).
//! - V9: an outcome of unknown type is stripped at decode; `SUBAGENT_STARTED` and
//!   `SUBAGENT_ERROR` carry no outcome at all.
//! - V11: `interruptIds` is a list of strings.
//! - V39, V40, V44, V45: `subagentRunId`, `name` and `message` are required strings.
//!
//! Events of an unknown type ([`Event::Unknown`]) never reach verification in the
//! pipeline (enforcement drops them first); if one does, it is ignored and changes
//! nothing. Chunk events are expected to be expanded first; an unexpanded chunk is only
//! checked against the run rules V1–V3, as in the reference.
//!
//! # Cost
//!
//! Continuation events (`*_CONTENT`, `TOOL_CALL_ARGS`) cost one set lookup, plus one owner
//! lookup when they carry a tag; nothing is allocated or formatted unless the event is
//! rejected.
//!
//! # Errors
//!
//! As in the reference, a rejection ends the stream: after an error the verifier's
//! state is unspecified (but safe), and it should not be fed further.

use super::Violation;
use crate::event::EncryptedValueSubtype;
use crate::message::Message;
use crate::{Event, EventType};
use std::collections::{HashMap, HashSet};

#[cfg(test)]
mod tests;

/// Ids are hashed on every streamed event, and chosen by the agent (or an upstream, or
/// whoever wrote a recording): the maps keyed by them use the keyed hasher of
/// [`crate::hash`], as fast as an unkeyed one on short ids, and immune to ids chosen to
/// collide.
type Build = crate::hash::RandomState;

/// An owner: the tag of the event that opened an entity, `None` for the parent agent.
type Owner = Option<String>;
type Owners = HashMap<String, Owner, Build>;

/// The kinds of stream that CONTENT / ARGS / END events continue.
#[derive(Debug, Clone, Copy)]
enum Continued {
    Text,
    Tool,
    Reasoning,
}

/// The stream a content event (TEXT_MESSAGE_CONTENT, TOOL_CALL_ARGS,
/// REASONING_MESSAGE_CONTENT) continues: its kind, id and tag; `None` for other events.
#[inline]
fn content_of(event: &Event) -> Option<(Continued, &String, &Option<String>)> {
    match event {
        Event::TextMessageContent(e) => Some((Continued::Text, &e.message_id, &e.subagent_run_id)),
        Event::ToolCallArgs(e) => Some((Continued::Tool, &e.tool_call_id, &e.subagent_run_id)),
        Event::ReasoningMessageContent(e) => {
            Some((Continued::Reasoning, &e.message_id, &e.subagent_run_id))
        }
        _ => None,
    }
}

impl Continued {
    /// The event that adds content to a stream of this kind.
    fn content_type(self) -> EventType {
        match self {
            Continued::Text => EventType::TextMessageContent,
            Continued::Tool => EventType::ToolCallArgs,
            Continued::Reasoning => EventType::ReasoningMessageContent,
        }
    }
}

/// A set of open ids that remembers the order they were opened in (for error messages
/// that list them, in the reference's order).
#[derive(Debug, Default)]
struct OpenSet {
    ids: HashMap<String, u64, Build>,
    next: u64,
}

impl OpenSet {
    #[inline]
    fn contains(&self, id: &str) -> bool {
        self.ids.contains_key(id)
    }

    fn insert(&mut self, id: &str) {
        self.ids.insert(id.to_owned(), self.next);
        self.next += 1;
    }

    #[inline]
    fn remove(&mut self, id: &str) {
        self.ids.remove(id);
    }

    fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    fn clear(&mut self) {
        self.ids.clear();
    }

    /// The open ids, oldest first, comma-separated.
    fn list(&self) -> String {
        let mut ids: Vec<(&String, &u64)> = self.ids.iter().collect();
        ids.sort_by_key(|&(_, seq)| *seq);
        let ids: Vec<&str> = ids.into_iter().map(|(id, _)| id.as_str()).collect();
        ids.join(", ")
    }
}

/// Open steps, keyed by (owner, step name): a parent and a subagent may each have a step
/// of the same name open (V27–V29).
#[derive(Debug, Default)]
struct Steps {
    parent: OpenSet,
    subagents: HashMap<String, OpenSet, Build>,
}

impl Steps {
    fn of(&self, owner: Option<&str>) -> Option<&OpenSet> {
        match owner {
            None => Some(&self.parent),
            Some(s) => self.subagents.get(s),
        }
    }

    fn of_mut(&mut self, owner: Option<&str>) -> &mut OpenSet {
        match owner {
            None => &mut self.parent,
            Some(s) => {
                if !self.subagents.contains_key(s) {
                    self.subagents.insert(s.to_owned(), OpenSet::default());
                }
                self.subagents.get_mut(s).expect("just inserted")
            }
        }
    }

    fn is_open(&self, owner: Option<&str>, name: &str) -> bool {
        self.of(owner).is_some_and(|s| s.contains(name))
    }

    /// Some owner other than `owner` with `name` open.
    fn other_owner(&self, owner: Option<&str>, name: &str) -> Option<Option<&str>> {
        if owner.is_some() && self.parent.contains(name) {
            return Some(None);
        }
        let mut others: Vec<(&String, &OpenSet)> = self
            .subagents
            .iter()
            .filter(|(s, set)| Some(s.as_str()) != owner && set.contains(name))
            .collect();
        others.sort_by_key(|(s, _)| s.as_str());
        others.first().map(|(s, _)| Some(s.as_str()))
    }

    fn any_open(&self) -> bool {
        !self.parent.is_empty() || self.subagents.values().any(|s| !s.is_empty())
    }

    /// Every open step as `name` or `name (subagent 's')`.
    fn list(&self) -> String {
        let mut parts = Vec::new();
        if !self.parent.is_empty() {
            parts.push(self.parent.list());
        }
        let mut subs: Vec<(&String, &OpenSet)> = self
            .subagents
            .iter()
            .filter(|(_, s)| !s.is_empty())
            .collect();
        subs.sort_by_key(|(s, _)| s.as_str());
        for (owner, set) in subs {
            let mut names: Vec<(&String, &u64)> = set.ids.iter().collect();
            names.sort_by_key(|&(_, seq)| *seq);
            for (name, _) in names {
                parts.push(format!("{name} (subagent '{owner}')"));
            }
        }
        parts.join(", ")
    }

    fn clear(&mut self) {
        self.parent.clear();
        self.subagents.clear();
    }
}

/// The verification state machine.
///
/// ```
/// use aguikit_core::engine::verify::Verifier;
/// use aguikit_core::event::{RunFinished, RunStarted, TextMessageContent, TextMessageStart};
///
/// let mut v = Verifier::new();
/// v.push(&RunStarted::new("t1", "r1").into()).unwrap();
/// v.push(&TextMessageStart::new("m1").into()).unwrap();
/// v.push(&TextMessageContent::new("m1", "Hi").into()).unwrap();
/// // The message is still open.
/// let err = v.push(&RunFinished::new("t1", "r1").into()).unwrap_err();
/// assert_eq!(err.rule, "V49");
/// ```
#[derive(Debug, Default)]
pub struct Verifier {
    first_event_received: bool,
    run_started: bool,
    run_finished: bool,
    run_error: bool,
    messages: OpenSet,
    tool_calls: OpenSet,
    reasoning_spans: OpenSet,
    reasoning_messages: OpenSet,
    message_owners: Owners,
    tool_call_owners: Owners,
    activity_owners: Owners,
    reasoning_owners: Owners,
    steps: Steps,
    active_subagents: OpenSet,
    closed_subagents: HashSet<String, Build>,
}

impl Verifier {
    /// A fresh verifier.
    pub fn new() -> Self {
        Verifier::default()
    }

    /// Checks one (already expanded) event.
    #[inline]
    pub fn push(&mut self, event: &Event) -> Result<(), Violation> {
        // Fast path: inside a run, the run-flow rules V1–V4 cannot fire for a content
        // event, which then only needs its open check and tag check.
        if self.run_active()
            && let Some((kind, id, tag)) = content_of(event)
        {
            return self.continue_stream(kind, kind.content_type(), id, tag.as_deref());
        }
        self.push_any(event)
    }

    #[inline(never)]
    fn push_any(&mut self, event: &Event) -> Result<(), Violation> {
        let Some(ty) = event.event_type() else {
            return Ok(());
        };
        self.check_run_flow(ty)?;
        match event {
            Event::TextMessageContent(_)
            | Event::ToolCallArgs(_)
            | Event::ReasoningMessageContent(_) => {
                let (kind, id, tag) = content_of(event).expect("a content event");
                self.continue_stream(kind, ty, id, tag.as_deref())
            }
            Event::TextMessageStart(e) => {
                let (id, tag) = (e.message_id.as_str(), e.subagent_run_id.as_deref());
                self.refuse_reopen(ty, id)?;
                let owner = self.message_owners.get(id);
                tag_check(ty, "V14", tag, owner, "message", id)?;
                self.messages.insert(id);
                if owner.is_none() {
                    self.message_owners
                        .insert(id.to_owned(), tag.map(str::to_owned));
                }
                Ok(())
            }
            Event::TextMessageEnd(e) => self.end_stream(
                Continued::Text,
                ty,
                &e.message_id,
                e.subagent_run_id.as_deref(),
            ),
            Event::ToolCallStart(e) => self.start_tool_call(
                &e.tool_call_id,
                e.parent_message_id.as_deref(),
                e.subagent_run_id.as_deref(),
            ),
            Event::ToolCallEnd(e) => self.end_stream(
                Continued::Tool,
                ty,
                &e.tool_call_id,
                e.subagent_run_id.as_deref(),
            ),
            Event::ToolCallResult(e) => {
                // V26: always allowed; the minted message is owned by the result's tag.
                self.message_owners
                    .insert(e.message_id.clone(), e.subagent_run_id.clone());
                Ok(())
            }
            Event::StepStarted(e) => {
                let (name, owner) = (e.step_name.as_str(), e.subagent_run_id.as_deref());
                if self.steps.is_open(owner, name) {
                    return Err(step_already_open(name, owner));
                }
                self.steps.of_mut(owner).insert(name);
                Ok(())
            }
            Event::StepFinished(e) => {
                let (name, owner) = (e.step_name.as_str(), e.subagent_run_id.as_deref());
                if !self.steps.is_open(owner, name) {
                    return Err(match self.steps.other_owner(owner, name) {
                        Some(other) => step_open_elsewhere(name, owner, other),
                        None => Violation::new(
                            "V29",
                            format!(
                                "Cannot send 'STEP_FINISHED' for step \"{name}\" that was not started"
                            ),
                        ),
                    });
                }
                self.steps.of_mut(owner).remove(name);
                Ok(())
            }
            Event::ActivitySnapshot(e) => {
                // V30: always allowed; a new or replacing snapshot (re)records the owner.
                let known = self.activity_owners.contains_key(&e.message_id);
                if !known || e.replace != Some(false) {
                    self.activity_owners
                        .insert(e.message_id.clone(), e.subagent_run_id.clone());
                }
                Ok(())
            }
            Event::ActivityDelta(e) => {
                let id = e.message_id.as_str();
                let owner = self.activity_owners.get(id);
                tag_check(
                    ty,
                    "V31",
                    e.subagent_run_id.as_deref(),
                    owner,
                    "activity",
                    id,
                )
            }
            Event::ReasoningStart(e) => {
                let (id, tag) = (e.message_id.as_str(), e.subagent_run_id.as_deref());
                self.refuse_reopen(ty, id)?;
                self.open_reasoning(ty, id, tag, true)
            }
            Event::ReasoningMessageStart(e) => {
                let (id, tag) = (e.message_id.as_str(), e.subagent_run_id.as_deref());
                self.refuse_reopen(ty, id)?;
                self.open_reasoning(ty, id, tag, false)
            }
            Event::ReasoningMessageEnd(e) => self.end_stream(
                Continued::Reasoning,
                ty,
                &e.message_id,
                e.subagent_run_id.as_deref(),
            ),
            Event::ReasoningEnd(e) => {
                let id = e.message_id.as_str();
                if !self.reasoning_spans.contains(id) {
                    return Err(Violation::new(
                        "V36",
                        format!(
                            "Cannot send 'REASONING_END' event: No active reasoning span found with ID '{id}'. A 'REASONING_START' event must be sent first."
                        ),
                    ));
                }
                let owner = self.reasoning_owners.get(id);
                tag_check(
                    ty,
                    "V37",
                    e.subagent_run_id.as_deref(),
                    owner,
                    "reasoning message",
                    id,
                )?;
                self.reasoning_spans.remove(id);
                Ok(())
            }
            Event::ReasoningEncryptedValue(e) => {
                // V38: checked against the entity the subtype names; unknown ids pass.
                let id = e.entity_id.as_str();
                let (owner, kind) = match e.subtype {
                    EncryptedValueSubtype::ToolCall => (self.tool_call_owners.get(id), "tool call"),
                    EncryptedValueSubtype::Message => (
                        self.message_owners
                            .get(id)
                            .or_else(|| self.reasoning_owners.get(id)),
                        "message",
                    ),
                };
                tag_check(ty, "V38", e.subagent_run_id.as_deref(), owner, kind, id)
            }
            Event::SubagentStarted(e) => {
                // V39/V40: `subagentRunId` and `name` are required strings (decode-time).
                let id = e.subagent_run_id.as_str();
                if self.active_subagents.contains(id) {
                    return Err(Violation::new(
                        "V41",
                        format!(
                            "Cannot send 'SUBAGENT_STARTED': subagent '{id}' is already active. Finish it with 'SUBAGENT_FINISHED' first."
                        ),
                    ));
                }
                if self.closed_subagents.contains(id) {
                    return Err(Violation::new(
                        "V42",
                        format!(
                            "Cannot send 'SUBAGENT_STARTED': subagent '{id}' has already finished in this run. Subagent IDs are per-invocation and cannot be reused."
                        ),
                    ));
                }
                if let Some(parent) = e.parent_subagent_run_id.as_deref()
                    && !self.active_subagents.contains(parent)
                    && !self.closed_subagents.contains(parent)
                {
                    return Err(Violation::new(
                        "V43",
                        format!(
                            "Cannot send 'SUBAGENT_STARTED': parentSubagentRunId '{parent}' has not been started in this run."
                        ),
                    ));
                }
                self.active_subagents.insert(id);
                Ok(())
            }
            // V44/V45: `subagentRunId` and `message` are required strings (decode-time).
            Event::SubagentFinished(e) => self.end_subagent(ty, &e.subagent_run_id),
            Event::SubagentError(e) => self.end_subagent(ty, &e.subagent_run_id),
            Event::MessagesSnapshot(e) => {
                self.seed_owners(&e.messages, true);
                Ok(())
            }
            Event::RunStarted(e) => {
                self.run_started = true;
                if let Some(input) = &e.input {
                    self.seed_owners(&input.messages, false);
                }
                Ok(())
            }
            Event::RunFinished(_) => self.finish_run(),
            Event::RunError(_) => {
                // V55: allowed whenever V1 does not fire.
                self.run_error = true;
                Ok(())
            }
            Event::StateSnapshot(_)
            | Event::StateDelta(_)
            | Event::Raw(_)
            | Event::Custom(_)
            | Event::TextMessageChunk(_)
            | Event::ToolCallChunk(_)
            | Event::ReasoningMessageChunk(_)
            | Event::Unknown(_) => Ok(()),
        }
    }

    /// Checks the end of the stream.
    ///
    /// Nothing is rejected here: the reference accepts a stream that ends mid-run,
    /// with messages, tool calls, steps or subagents still open (§1.3, §5.3).
    pub fn finish(&mut self) -> Result<(), Violation> {
        Ok(())
    }

    /// Whether a run has started and has neither finished nor errored.
    #[inline]
    pub fn run_active(&self) -> bool {
        self.run_started && !self.run_finished && !self.run_error
    }

    /// V1–V5: what may follow what at the run level. Resets the run state on a
    /// `RUN_STARTED` that follows a finished or errored run.
    #[inline]
    fn check_run_flow(&mut self, ty: EventType) -> Result<(), Violation> {
        if self.run_error && ty != EventType::RunStarted {
            return Err(after_run_error(ty));
        }
        if self.run_finished && ty != EventType::RunError && ty != EventType::RunStarted {
            return Err(after_run_finished(ty));
        }
        if !self.first_event_received {
            self.first_event_received = true;
            if ty != EventType::RunStarted && ty != EventType::RunError {
                return Err(Violation::new("V3", "First event must be 'RUN_STARTED'"));
            }
        } else if ty == EventType::RunStarted {
            if self.run_active() {
                return Err(Violation::new(
                    "V4",
                    "Cannot send 'RUN_STARTED' while a run is still active. The previous run must be finished with 'RUN_FINISHED' before starting a new run.",
                ));
            }
            if self.run_finished || self.run_error {
                self.reset_run();
            }
        }
        Ok(())
    }

    /// V5: a new run after a finished or errored one starts from nothing.
    fn reset_run(&mut self) {
        self.messages.clear();
        self.tool_calls.clear();
        self.reasoning_spans.clear();
        self.reasoning_messages.clear();
        self.message_owners.clear();
        self.tool_call_owners.clear();
        self.activity_owners.clear();
        self.reasoning_owners.clear();
        self.steps.clear();
        self.active_subagents.clear();
        self.closed_subagents.clear();
        self.run_finished = false;
        self.run_error = false;
        self.run_started = true;
    }

    /// Checks an END as [`continue_stream`](Self::continue_stream) does, then closes the
    /// stream.
    fn end_stream(
        &mut self,
        kind: Continued,
        ty: EventType,
        id: &str,
        tag: Option<&str>,
    ) -> Result<(), Violation> {
        self.continue_stream(kind, ty, id, tag)?;
        match kind {
            Continued::Text => self.messages.remove(id),
            Continued::Tool => self.tool_calls.remove(id),
            Continued::Reasoning => self.reasoning_messages.remove(id),
        }
        Ok(())
    }

    /// Refuses to open a stream that is already open: V13 (text message), V19 (tool call),
    /// V32 (reasoning span), V33 (reasoning message).
    #[inline]
    fn refuse_reopen(&self, ty: EventType, id: &str) -> Result<(), Violation> {
        let (open, rule, what, end) = match ty {
            EventType::TextMessageStart => {
                (&self.messages, "V13", "A text message", "TEXT_MESSAGE_END")
            }
            EventType::ToolCallStart => (&self.tool_calls, "V19", "A tool call", "TOOL_CALL_END"),
            EventType::ReasoningStart => (
                &self.reasoning_spans,
                "V32",
                "A reasoning span",
                "REASONING_END",
            ),
            EventType::ReasoningMessageStart => (
                &self.reasoning_messages,
                "V33",
                "A reasoning message",
                "REASONING_MESSAGE_END",
            ),
            other => unreachable!("{other} opens no stream"),
        };
        if open.contains(id) {
            return Err(already_open(ty, rule, what, id, end));
        }
        Ok(())
    }

    /// Checks an event that continues a stream: the stream must be open (V16/V17 for a
    /// text message, V24 for a tool call, V35 for a reasoning message), then a tag must
    /// name its owner (V18, V25, V37).
    #[inline]
    fn continue_stream(
        &self,
        kind: Continued,
        ty: EventType,
        id: &str,
        tag: Option<&str>,
    ) -> Result<(), Violation> {
        let (open, owners, rule, what) = match kind {
            Continued::Text => (&self.messages, &self.message_owners, "V18", "message"),
            Continued::Tool => (&self.tool_calls, &self.tool_call_owners, "V25", "tool call"),
            Continued::Reasoning => (
                &self.reasoning_messages,
                &self.reasoning_owners,
                "V37",
                "reasoning message",
            ),
        };
        if !open.contains(id) {
            return Err(match kind {
                Continued::Text => no_active_text_message(ty, id),
                Continued::Tool => no_active_tool_call(ty, id),
                Continued::Reasoning => no_active_reasoning_message(ty, id),
            });
        }
        match tag {
            None => Ok(()),
            Some(_) => tag_check(ty, rule, tag, owners.get(id), what, id),
        }
    }

    /// V34 then open: spans and messages share the reasoning owner map; the first
    /// opener records the owner.
    fn open_reasoning(
        &mut self,
        ty: EventType,
        id: &str,
        tag: Option<&str>,
        span: bool,
    ) -> Result<(), Violation> {
        let owner = self.reasoning_owners.get(id);
        tag_check(ty, "V34", tag, owner, "reasoning message", id)?;
        let recorded = owner.is_some();
        if span {
            self.reasoning_spans.insert(id);
        } else {
            self.reasoning_messages.insert(id);
        }
        if !recorded {
            self.reasoning_owners
                .insert(id.to_owned(), tag.map(str::to_owned));
        }
        Ok(())
    }

    /// V19–V23.
    fn start_tool_call(
        &mut self,
        id: &str,
        parent_message_id: Option<&str>,
        tag: Option<&str>,
    ) -> Result<(), Violation> {
        let ty = EventType::ToolCallStart;
        self.refuse_reopen(ty, id)?;
        // V20: a tool call belongs to the message that carries it.
        let inherited = match parent_message_id {
            Some(parent) => match self.message_owners.get(parent) {
                Some(owner) => {
                    if let Some(t) = tag
                        && Some(t) != owner.as_deref()
                    {
                        return Err(Violation::new(
                            "V20",
                            format!(
                                "Cannot send 'TOOL_CALL_START': subagentRunId '{t}' does not match its parent message '{parent}' owner '{}'. A tool call belongs to the message that carries it.",
                                owner_name(owner.as_deref())
                            ),
                        ));
                    }
                    Some(owner)
                }
                None => None,
            },
            None => None,
        };
        let existing = self.tool_call_owners.get(id);
        if let Some(existing) = existing {
            // V21: a reopen must not contradict the recorded owner.
            tag_check(ty, "V21", tag, Some(existing), "tool call", id)?;
            // V22: an untagged reopen's effective owner is its parent message's.
            if tag.is_none()
                && let Some(inherited) = inherited
                && inherited != existing
            {
                return Err(Violation::new(
                    "V22",
                    format!(
                        "Cannot send 'TOOL_CALL_START': tool call '{id}' is owned by '{}' but its parent message '{}' is owned by '{}'. A tool call belongs to the message that carries it.",
                        owner_name(existing.as_deref()),
                        parent_message_id.unwrap_or_default(),
                        owner_name(inherited.as_deref())
                    ),
                ));
            }
        }
        // V23: record the owner if none: the tag, else the parent message's owner.
        let owner = match (existing, tag) {
            (Some(_), _) => None,
            (None, Some(t)) => Some(Some(t.to_owned())),
            (None, None) => Some(inherited.cloned().flatten()),
        };
        self.tool_calls.insert(id);
        if let Some(owner) = owner {
            self.tool_call_owners.insert(id.to_owned(), owner);
        }
        Ok(())
    }

    /// V46 for SUBAGENT_FINISHED / SUBAGENT_ERROR.
    fn end_subagent(&mut self, ty: EventType, id: &str) -> Result<(), Violation> {
        if !self.active_subagents.contains(id) {
            return Err(Violation::new(
                "V46",
                format!(
                    "Cannot send '{ty}': no active subagent found with ID '{id}'. A 'SUBAGENT_STARTED' event must be sent first."
                ),
            ));
        }
        self.active_subagents.remove(id);
        self.closed_subagents.insert(id.to_owned());
        Ok(())
    }

    /// V48–V54.
    fn finish_run(&mut self) -> Result<(), Violation> {
        let open = |rule, what, list: String| {
            Violation::new(
                rule,
                format!("Cannot send 'RUN_FINISHED' while {what} are still active: {list}"),
            )
        };
        if self.steps.any_open() {
            return Err(open("V48", "steps", self.steps.list()));
        }
        if !self.messages.is_empty() {
            return Err(open("V49", "text messages", self.messages.list()));
        }
        if !self.reasoning_messages.is_empty() {
            return Err(open(
                "V50",
                "reasoning messages",
                self.reasoning_messages.list(),
            ));
        }
        if !self.reasoning_spans.is_empty() {
            return Err(open("V51", "reasoning spans", self.reasoning_spans.list()));
        }
        if !self.tool_calls.is_empty() {
            return Err(open("V52", "tool calls", self.tool_calls.list()));
        }
        if !self.active_subagents.is_empty() {
            return Err(open("V53", "subagents", self.active_subagents.list()));
        }
        self.run_finished = true;
        Ok(())
    }

    /// §5.2: history seeds owners. A snapshot (`authoritative`) replaces recorded owners;
    /// `RUN_STARTED.input` only fills ids nobody owns yet. Each assistant message's tool
    /// calls are owned by the message's owner.
    fn seed_owners(&mut self, messages: &[Message], authoritative: bool) {
        for m in messages {
            let bucket = match m {
                Message::Reasoning(_) => &mut self.reasoning_owners,
                Message::Activity(_) => &mut self.activity_owners,
                _ => &mut self.message_owners,
            };
            let tag = m.subagent_run_id();
            seed(bucket, m.id(), tag, authoritative);
            if let Message::Assistant(a) = m {
                for call in a.tool_calls.iter().flatten() {
                    seed(&mut self.tool_call_owners, &call.id, tag, authoritative);
                }
            }
        }
    }
}

fn seed(owners: &mut Owners, id: &str, tag: Option<&str>, authoritative: bool) {
    if authoritative || !owners.contains_key(id) {
        owners.insert(id.to_owned(), tag.map(str::to_owned));
    }
}

/// TAG-CHECK: a present tag must equal the recorded owner, if any (the parent agent,
/// `None`, is an owner too). An absent tag or an unknown id never disagrees.
#[inline]
fn tag_check(
    ty: EventType,
    rule: &'static str,
    tag: Option<&str>,
    owner: Option<&Owner>,
    kind: &str,
    id: &str,
) -> Result<(), Violation> {
    match (tag, owner) {
        (Some(tag), Some(owner)) if owner.as_deref() != Some(tag) => {
            Err(owner_mismatch(ty, rule, tag, owner.as_deref(), kind, id))
        }
        _ => Ok(()),
    }
}

fn owner_name(owner: Option<&str>) -> &str {
    owner.unwrap_or("(the parent agent)")
}

#[cold]
fn owner_mismatch(
    ty: EventType,
    rule: &'static str,
    tag: &str,
    owner: Option<&str>,
    kind: &str,
    id: &str,
) -> Violation {
    Violation::new(
        rule,
        format!(
            "Cannot send '{ty}': subagentRunId '{tag}' does not match the {kind} '{id}' opener's subagent '{}'.",
            owner_name(owner)
        ),
    )
}

#[cold]
fn after_run_error(ty: EventType) -> Violation {
    Violation::new(
        "V1",
        format!(
            "Cannot send event type '{ty}': The run has already errored with 'RUN_ERROR'. No further events can be sent."
        ),
    )
}

#[cold]
fn after_run_finished(ty: EventType) -> Violation {
    Violation::new(
        "V2",
        format!(
            "Cannot send event type '{ty}': The run has already finished with 'RUN_FINISHED'. Start a new run with 'RUN_STARTED'."
        ),
    )
}

#[cold]
fn already_open(ty: EventType, rule: &'static str, what: &str, id: &str, end: &str) -> Violation {
    Violation::new(
        rule,
        format!(
            "Cannot send '{ty}' event: {what} with ID '{id}' is already in progress. Complete it with '{end}' first."
        ),
    )
}

#[cold]
fn no_active_text_message(ty: EventType, id: &str) -> Violation {
    let (rule, hint) = if ty == EventType::TextMessageEnd {
        ("V17", "A 'TEXT_MESSAGE_START' event must be sent first.")
    } else {
        (
            "V16",
            "Start a text message with 'TEXT_MESSAGE_START' first.",
        )
    };
    Violation::new(
        rule,
        format!("Cannot send '{ty}' event: No active text message found with ID '{id}'. {hint}"),
    )
}

#[cold]
fn no_active_tool_call(ty: EventType, id: &str) -> Violation {
    let hint = if ty == EventType::ToolCallEnd {
        "A 'TOOL_CALL_START' event must be sent first."
    } else {
        "Start a tool call with 'TOOL_CALL_START' first."
    };
    Violation::new(
        "V24",
        format!("Cannot send '{ty}' event: No active tool call found with ID '{id}'. {hint}"),
    )
}

#[cold]
fn no_active_reasoning_message(ty: EventType, id: &str) -> Violation {
    Violation::new(
        "V35",
        format!(
            "Cannot send '{ty}' event: No active reasoning message found with ID '{id}'. Start a reasoning message with 'REASONING_MESSAGE_START' first."
        ),
    )
}

#[cold]
fn step_already_open(name: &str, owner: Option<&str>) -> Violation {
    let within = owner
        .map(|s| format!(" in subagent '{s}'"))
        .unwrap_or_default();
    Violation::new(
        "V27",
        format!("Step \"{name}\" is already active for 'STEP_STARTED'{within}"),
    )
}

#[cold]
fn step_open_elsewhere(name: &str, owner: Option<&str>, other: Option<&str>) -> Violation {
    let who = |o: Option<&str>| match o {
        Some(s) => format!("subagent '{s}'"),
        None => "the parent agent".to_owned(),
    };
    Violation::new(
        "V28",
        format!(
            "Cannot send 'STEP_FINISHED' for step \"{name}\" attributed to {}: that step is open under {}. A step must be finished by whoever started it.",
            who(owner),
            who(other)
        ),
    )
}
