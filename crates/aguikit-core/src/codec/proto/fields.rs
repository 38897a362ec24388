//! The protobuf form of every event: its `ag_ui` message and the number of each of its
//! fields, declared once. The encoder ([`body`]) and the decoder ([`convert_arm`]) are
//! generated from this table.
//!
//! A row is `field = number`: the field is written with that number as its type writes
//! itself (`encode::ProtoField`) and read back from the message field of the same name
//! (`decode::FromPb`). A field carried by several protobuf fields names them all and the
//! hook (in [`hooks`]) that maps them: `outcome = 5 | 6 | 8 => run_outcome`. Rows are in
//! the order the reference encoder writes them (ascending numbers, except where noted),
//! which is also the order in which they are decoded and checked. A field of the JSON
//! vocabulary with no row here has no protobuf form (the `.proto` schema lacks it): it is
//! not written, and decodes as absent. Such a field must be named in the tests'
//! `NO_PROTOBUF_FORM` list: a field added to an event with neither a row nor that entry
//! fails a test, instead of being dropped from protobuf unnoticed.

use super::decode::{FromPb, R, arm_message, base};
use super::encode::{ProtoField, base as write_base};
use super::pb;
use super::scan::ArmRef;
use super::write::Writer;
use crate::event::*;

macro_rules! proto_fields {
    ($(
        $ty:ident($pb:ident) {
            $( $f:ident = $($n:literal)|+ $(=> $hook:ident)? ),* $(,)?
        }
    )*) => {
        /// Writes the message of `event` (inside its envelope arm): `base_event`, then the
        /// event's own fields. `ty` is the event's protobuf `EventType` value.
        pub(super) fn body(w: &mut Writer<'_>, ty: u64, event: &Event) {
            match event {
                $(
                    Event::$ty(e) => {
                        write_base(w, ty, e.timestamp, e.raw_event.as_deref(), e.metadata.as_deref());
                        $( proto_fields!(@encode w, e, $f, [$($n),+] $(, $hook)?); )*
                    }
                )*
                Event::Unknown(_) => {}
            }
        }

        /// Each event type: the fields with a protobuf row, and all its fields in the JSON
        /// vocabulary (for the test that no field is left without a row unnoticed).
        #[cfg(test)]
        pub(super) const ROWS: &[(&str, &[&str], &[&str])] = &[$(
            (
                stringify!($ty),
                &[$(stringify!($f)),*],
                <$ty as crate::event::EventFields>::FIELDS,
            )
        ),*];

        /// Decodes the arm's message into the typed event: the base fields first, then the
        /// rows in order.
        #[inline(always)]
        pub(super) fn convert_arm(t: EventType, body: &[u8], arm: &ArmRef) -> R<Event> {
            Ok(match t {
                $(
                    EventType::$ty => {
                        let mut m = pb::$pb::default();
                        arm_message(body, arm, &mut m)?;
                        let b = base(t, m.base_event.take())?;
                        let mut e = $ty {
                            timestamp: b.timestamp,
                            raw_event: b.raw_event.map(Box::new),
                            metadata: b.metadata.map(Box::new),
                            ..Default::default()
                        };
                        $( proto_fields!(@decode e, m, $f $(, $hook)?); )*
                        Event::$ty(e)
                    }
                )*
            })
        }
    };

    (@encode $w:ident, $e:ident, $f:ident, [$n:literal]) => {
        ProtoField::encode(&$e.$f, $w, $n)
    };
    (@encode $w:ident, $e:ident, $f:ident, [$($n:literal),+], $hook:ident) => {
        hooks::$hook::encode(&$e.$f, $w, [$($n),+])
    };
    (@decode $e:ident, $m:ident, $f:ident) => {
        $e.$f = FromPb::from_pb(std::mem::take(&mut $m.$f), stringify!($f))?
    };
    (@decode $e:ident, $m:ident, $f:ident, $hook:ident) => {
        hooks::$hook::decode(&mut $e.$f, &mut $m)?
    };
}

proto_fields! {
    RunStarted(RunStartedEvent) {
        thread_id = 2,
        run_id = 3,
        parent_run_id = 4,
        input = 5,
        protocol_version = 6,
    }
    RunFinished(RunFinishedEvent) {
        thread_id = 2,
        run_id = 3,
        result = 4,
        // Written as this crate always has: the outcome's payload (6 or 8) right after it.
        outcome = 5 | 6 | 8 => run_outcome,
        usage = 7,
    }
    RunError(RunErrorEvent) {
        code = 2,
        message = 3,
        usage = 4,
    }
    StepStarted(StepStartedEvent) {
        step_name = 2,
        subagent_run_id = 3,
    }
    StepFinished(StepFinishedEvent) {
        step_name = 2,
        subagent_run_id = 3,
    }
    TextMessageStart(TextMessageStartEvent) {
        message_id = 2,
        role = 3,
        name = 4,
        subagent_run_id = 5,
    }
    TextMessageContent(TextMessageContentEvent) {
        message_id = 2,
        delta = 3,
        subagent_run_id = 4,
    }
    TextMessageEnd(TextMessageEndEvent) {
        message_id = 2,
        subagent_run_id = 3,
    }
    TextMessageChunk(TextMessageChunkEvent) {
        message_id = 2,
        role = 3,
        delta = 4,
        name = 5,
        subagent_run_id = 6,
    }
    ToolCallStart(ToolCallStartEvent) {
        tool_call_id = 2,
        tool_call_name = 3,
        parent_message_id = 4,
        subagent_run_id = 5,
    }
    ToolCallArgs(ToolCallArgsEvent) {
        tool_call_id = 2,
        delta = 3,
        subagent_run_id = 4,
    }
    ToolCallEnd(ToolCallEndEvent) {
        tool_call_id = 2,
        subagent_run_id = 3,
    }
    ToolCallChunk(ToolCallChunkEvent) {
        tool_call_id = 2,
        tool_call_name = 3,
        parent_message_id = 4,
        delta = 5,
        subagent_run_id = 6,
    }
    ToolCallResult(ToolCallResultEvent) {
        subagent_run_id = 2,
        message_id = 3,
        tool_call_id = 4,
        // String content (5) or content parts (7), around `role`.
        content = 5 => content_text,
        role = 6,
        content = 7 => content_parts,
    }
    StateSnapshot(StateSnapshotEvent) {
        snapshot = 2,
        subagent_run_id = 3,
    }
    StateDelta(StateDeltaEvent) {
        delta = 2,
        subagent_run_id = 3,
    }
    MessagesSnapshot(MessagesSnapshotEvent) {
        messages = 2,
    }
    ActivitySnapshot(ActivitySnapshotEvent) {
        subagent_run_id = 2,
        message_id = 3,
        activity_type = 4,
        content = 5,
        replace = 6,
    }
    ActivityDelta(ActivityDeltaEvent) {
        subagent_run_id = 2,
        message_id = 3,
        activity_type = 4,
        patch = 5,
    }
    Raw(RawEvent) {
        event = 2,
        source = 3,
        subagent_run_id = 4,
    }
    Custom(CustomEvent) {
        name = 2,
        value = 3,
        subagent_run_id = 4,
    }
    ReasoningStart(ReasoningStartEvent) {
        subagent_run_id = 2,
        message_id = 3,
    }
    ReasoningMessageStart(ReasoningMessageStartEvent) {
        subagent_run_id = 2,
        message_id = 3,
        role = 4,
    }
    ReasoningMessageContent(ReasoningMessageContentEvent) {
        subagent_run_id = 2,
        message_id = 3,
        delta = 4,
    }
    ReasoningMessageEnd(ReasoningMessageEndEvent) {
        subagent_run_id = 2,
        message_id = 3,
    }
    ReasoningMessageChunk(ReasoningMessageChunkEvent) {
        subagent_run_id = 2,
        message_id = 3,
        delta = 4,
    }
    ReasoningEnd(ReasoningEndEvent) {
        subagent_run_id = 2,
        message_id = 3,
    }
    ReasoningEncryptedValue(ReasoningEncryptedValueEvent) {
        subagent_run_id = 2,
        subtype = 3,
        entity_id = 4,
        encrypted_value = 5,
    }
    SubagentStarted(SubagentStartedEvent) {
        subagent_run_id = 2,
        name = 3,
        description = 4,
        parent_subagent_run_id = 5,
        parent_tool_call_id = 6,
        parent_message_id = 7,
    }
    SubagentFinished(SubagentFinishedEvent) {
        subagent_run_id = 2,
        result = 3,
        outcome = 4 | 5 => subagent_outcome,
    }
    SubagentError(SubagentErrorEvent) {
        subagent_run_id = 2,
        message = 3,
        code = 4,
    }
}

/// Fields carried by more than one protobuf field: how each is written (with the numbers
/// its row gives) and read back.
mod hooks {
    use super::super::decode::{self, Fail, R};
    use super::super::encode;
    use super::super::pb;
    use super::super::write::Writer;
    use crate::content::Content;
    use crate::interrupt::{RunOutcome, SubagentOutcome};

    /// `TOOL_CALL_RESULT.content` as a string (`content`).
    pub(super) mod content_text {
        use super::*;

        pub(crate) fn encode(c: &Content, w: &mut Writer<'_>, [text]: [u32; 1]) {
            if let Content::Text(s) = c {
                w.str_field(text, s);
            }
        }

        /// Only checks that the two forms are not both present (before `role` is read); the
        /// content is read with the parts.
        pub(crate) fn decode(_: &mut Content, m: &mut pb::ToolCallResultEvent) -> R<()> {
            if m.content.is_some() && !m.content_parts.is_empty() {
                return Err(Fail::Malformed(
                    "TOOL_CALL_RESULT carries both string content and content parts".into(),
                ));
            }
            Ok(())
        }
    }

    /// `TOOL_CALL_RESULT.content` as parts (`content_parts`).
    pub(super) mod content_parts {
        use super::*;

        pub(crate) fn encode(c: &Content, w: &mut Writer<'_>, [parts]: [u32; 1]) {
            if let Content::Parts(list) = c {
                encode::content_parts(w, parts, list);
            }
        }

        /// The string if present, else the parts (possibly none).
        pub(crate) fn decode(c: &mut Content, m: &mut pb::ToolCallResultEvent) -> R<()> {
            *c = decode::content(m.content.take(), std::mem::take(&mut m.content_parts))?;
            Ok(())
        }
    }

    /// `RUN_FINISHED.outcome`: its type (`outcome`), and its payload (`interrupts` or
    /// `pending_tool_call_ids`).
    pub(super) mod run_outcome {
        use super::*;

        pub(crate) fn encode(
            o: &Option<RunOutcome>,
            w: &mut Writer<'_>,
            [kind, interrupts, pending]: [u32; 3],
        ) {
            match o {
                None => {}
                Some(RunOutcome::Success {
                    pending_tool_call_ids,
                }) => {
                    w.str_field(kind, "success");
                    for id in pending_tool_call_ids.iter().flatten() {
                        w.str_field(pending, id);
                    }
                }
                Some(RunOutcome::Interrupt { interrupts: list }) => {
                    w.str_field(kind, "interrupt");
                    for i in list {
                        w.message(interrupts, |w| encode::interrupt(w, i));
                    }
                }
                Some(RunOutcome::Cancelled) => w.str_field(kind, "cancelled"),
            }
        }

        pub(crate) fn decode(o: &mut Option<RunOutcome>, m: &mut pb::RunFinishedEvent) -> R<()> {
            *o = decode::run_outcome(
                std::mem::take(&mut m.outcome),
                std::mem::take(&mut m.interrupts),
                std::mem::take(&mut m.pending_tool_call_ids),
            )?;
            Ok(())
        }
    }

    /// `SUBAGENT_FINISHED.outcome`: its type (`outcome`) and its `interrupt_ids`.
    pub(super) mod subagent_outcome {
        use super::*;

        pub(crate) fn encode(
            o: &Option<SubagentOutcome>,
            w: &mut Writer<'_>,
            [kind, ids]: [u32; 2],
        ) {
            match o {
                None => {}
                Some(SubagentOutcome::Success) => w.str_field(kind, "success"),
                Some(SubagentOutcome::Suspended { interrupt_ids }) => {
                    w.str_field(kind, "suspended");
                    for id in interrupt_ids.iter().flatten() {
                        w.str_field(ids, id);
                    }
                }
            }
        }

        pub(crate) fn decode(
            o: &mut Option<SubagentOutcome>,
            m: &mut pb::SubagentFinishedEvent,
        ) -> R<()> {
            *o = decode::subagent_outcome(
                std::mem::take(&mut m.outcome),
                std::mem::take(&mut m.interrupt_ids),
            );
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    /// The fields of the JSON vocabulary that the `.proto` schema has no field for, so that
    /// protobuf does not carry them (as the reference encoder drops them). A field added to
    /// an event must get a row in the table above or an entry here: this list is the
    /// decision, the test below holds it.
    const NO_PROTOBUF_FORM: &[(&str, &str)] = &[];

    #[test]
    fn every_event_field_has_a_protobuf_row_or_is_declared_to_have_none() {
        let mut missing = Vec::new();
        for (ty, rows, fields) in super::ROWS {
            for f in *fields {
                let declared = NO_PROTOBUF_FORM.contains(&(ty, f));
                match (rows.contains(f), declared) {
                    (true, true) => missing.push(format!("{ty}.{f} has a row and is in NO_PROTOBUF_FORM")),
                    (false, false) => missing.push(format!(
                        "{ty}.{f} has no protobuf row: add one (with its .proto number) or list it in NO_PROTOBUF_FORM"
                    )),
                    _ => {}
                }
            }
            for r in *rows {
                assert!(fields.contains(r), "{ty}: the row {r} names no field");
            }
        }
        for (ty, f) in NO_PROTOBUF_FORM {
            assert!(
                super::ROWS
                    .iter()
                    .any(|(t, _, fields)| t == ty && fields.contains(f)),
                "NO_PROTOBUF_FORM names {ty}.{f}, which is not a field"
            );
        }
        assert!(missing.is_empty(), "{}", missing.join("\n"));
    }
}
