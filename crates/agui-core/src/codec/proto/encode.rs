//! Typed events to protobuf bytes, written field by field straight from the event (no
//! intermediate message structs, no copies of strings or JSON values).
//!
//! Mirrors `@ag-ui/proto` 1.0.0 `encode`: fields in ascending field-number order,
//! implicit-presence strings omitted when empty, explicit ones written whenever set, message
//! fields written whenever set (even empty), JSON values as `google.protobuf.Value` /
//! `Struct` in JavaScript property order. Like the reference, nothing is validated first:
//! an event is encoded as given.

use serde_json::{Map, Value};

use super::tables::{arm_of, proto_type_of};
use super::wkt::{write_struct, write_value};
use super::write::Writer;
use crate::content::{Content, ContentPart, MediaPart, PartSource};
use crate::event::{EncryptedValueSubtype, Event};
use crate::input::{ResumeStatus, RunAgentInput};
use crate::interrupt::{Interrupt, RunOutcome, SubagentOutcome};
use crate::message::{Message, ToolCall};
use crate::patch::JsonPatch;
use crate::usage::TokenUsage;

/// Appends the envelope body of `event` to `out`; `false` (nothing written) when the event
/// has no protobuf form ([`Event::Unknown`]).
pub(crate) fn encode_into(event: &Event, out: &mut Vec<u8>) -> bool {
    let Some(event_type) = event.event_type() else {
        return false;
    };
    let mut w = Writer::new(out);
    w.message(arm_of(event_type), |w| {
        let ty = proto_type_of(event_type);
        body(w, ty, event);
    });
    true
}

/// Writes `base_event` (field 1 of every event message).
fn base(
    w: &mut Writer<'_>,
    ty: u64,
    timestamp: Option<i64>,
    raw_event: Option<&Value>,
    metadata: Option<&Map<String, Value>>,
) {
    w.message(1, |w| {
        if ty != 0 {
            w.varint_field(1, ty);
        }
        if let Some(ts) = timestamp {
            w.int64_field(2, ts);
        }
        if let Some(raw) = raw_event {
            w.message(3, |w| write_value(w, raw));
        }
        if let Some(md) = metadata {
            w.message(4, |w| write_struct(w, md));
        }
    });
}

/// A `google.protobuf.Value` field, when set.
fn value_field(w: &mut Writer<'_>, field: u32, v: Option<&Value>) {
    if let Some(v) = v {
        w.message(field, |w| write_value(w, v));
    }
}

/// A `google.protobuf.Struct` field, when set.
fn struct_field(w: &mut Writer<'_>, field: u32, m: Option<&Map<String, Value>>) {
    if let Some(m) = m {
        w.message(field, |w| write_struct(w, m));
    }
}

/// An object written where the schema has a `google.protobuf.Value` (interrupt
/// `responseSchema` and `metadata`).
fn object_as_value(w: &mut Writer<'_>, field: u32, m: Option<&Map<String, Value>>) {
    if let Some(m) = m {
        w.message(field, |w| w.message(5, |w| write_struct(w, m)));
    }
}

macro_rules! base_of {
    ($w:expr, $ty:expr, $e:expr) => {
        base(
            $w,
            $ty,
            $e.timestamp,
            $e.raw_event.as_ref(),
            $e.metadata.as_ref(),
        )
    };
}

fn body(w: &mut Writer<'_>, ty: u64, event: &Event) {
    match event {
        Event::TextMessageStart(e) => {
            base_of!(w, ty, e);
            w.str_implicit(2, &e.message_id);
            w.opt_str(3, e.role.map(|r| r.as_str()));
            w.opt_str(4, e.name.as_deref());
            w.opt_str(5, e.subagent_run_id.as_deref());
        }
        Event::TextMessageContent(e) => {
            base_of!(w, ty, e);
            w.str_implicit(2, &e.message_id);
            w.str_implicit(3, &e.delta);
            w.opt_str(4, e.subagent_run_id.as_deref());
        }
        Event::TextMessageEnd(e) => {
            base_of!(w, ty, e);
            w.str_implicit(2, &e.message_id);
            w.opt_str(3, e.subagent_run_id.as_deref());
        }
        Event::TextMessageChunk(e) => {
            base_of!(w, ty, e);
            w.opt_str(2, e.message_id.as_deref());
            w.opt_str(3, e.role.map(|r| r.as_str()));
            w.opt_str(4, e.delta.as_deref());
            w.opt_str(5, e.name.as_deref());
            w.opt_str(6, e.subagent_run_id.as_deref());
        }
        Event::ToolCallStart(e) => {
            base_of!(w, ty, e);
            w.str_implicit(2, &e.tool_call_id);
            w.str_implicit(3, &e.tool_call_name);
            w.opt_str(4, e.parent_message_id.as_deref());
            w.opt_str(5, e.subagent_run_id.as_deref());
        }
        Event::ToolCallArgs(e) => {
            base_of!(w, ty, e);
            w.str_implicit(2, &e.tool_call_id);
            w.str_implicit(3, &e.delta);
            w.opt_str(4, e.subagent_run_id.as_deref());
        }
        Event::ToolCallEnd(e) => {
            base_of!(w, ty, e);
            w.str_implicit(2, &e.tool_call_id);
            w.opt_str(3, e.subagent_run_id.as_deref());
        }
        Event::ToolCallChunk(e) => {
            base_of!(w, ty, e);
            w.opt_str(2, e.tool_call_id.as_deref());
            w.opt_str(3, e.tool_call_name.as_deref());
            w.opt_str(4, e.parent_message_id.as_deref());
            w.opt_str(5, e.delta.as_deref());
            w.opt_str(6, e.subagent_run_id.as_deref());
        }
        Event::ToolCallResult(e) => {
            base_of!(w, ty, e);
            w.opt_str(2, e.subagent_run_id.as_deref());
            w.str_implicit(3, &e.message_id);
            w.str_implicit(4, &e.tool_call_id);
            if let Content::Text(s) = &e.content {
                w.str_field(5, s);
            }
            w.opt_str(6, e.role.map(|_| crate::event::ToolRole::AS_STR));
            if let Content::Parts(parts) = &e.content {
                content_parts(w, 7, parts);
            }
        }
        Event::StateSnapshot(e) => {
            base_of!(w, ty, e);
            value_field(w, 2, Some(&e.snapshot));
            w.opt_str(3, e.subagent_run_id.as_deref());
        }
        Event::StateDelta(e) => {
            base_of!(w, ty, e);
            patch(w, 2, &e.delta);
            w.opt_str(3, e.subagent_run_id.as_deref());
        }
        Event::MessagesSnapshot(e) => {
            base_of!(w, ty, e);
            for m in &e.messages {
                w.message(2, |w| message(w, m));
            }
        }
        Event::ActivitySnapshot(e) => {
            base_of!(w, ty, e);
            w.opt_str(2, e.subagent_run_id.as_deref());
            w.str_implicit(3, &e.message_id);
            w.str_implicit(4, &e.activity_type);
            struct_field(w, 5, Some(&e.content));
            if let Some(r) = e.replace {
                w.bool_field(6, r);
            }
        }
        Event::ActivityDelta(e) => {
            base_of!(w, ty, e);
            w.opt_str(2, e.subagent_run_id.as_deref());
            w.str_implicit(3, &e.message_id);
            w.str_implicit(4, &e.activity_type);
            patch(w, 5, &e.patch);
        }
        Event::Raw(e) => {
            base_of!(w, ty, e);
            value_field(w, 2, Some(&e.event));
            w.opt_str(3, e.source.as_deref());
            w.opt_str(4, e.subagent_run_id.as_deref());
        }
        Event::Custom(e) => {
            base_of!(w, ty, e);
            w.str_implicit(2, &e.name);
            value_field(w, 3, Some(&e.value));
            w.opt_str(4, e.subagent_run_id.as_deref());
        }
        Event::RunStarted(e) => {
            base_of!(w, ty, e);
            w.str_implicit(2, &e.thread_id);
            w.str_implicit(3, &e.run_id);
            w.opt_str(4, e.parent_run_id.as_deref());
            if let Some(input) = &e.input {
                w.message(5, |w| run_agent_input(w, input));
            }
            w.opt_str(6, e.protocol_version.as_deref());
        }
        Event::RunFinished(e) => {
            base_of!(w, ty, e);
            w.str_implicit(2, &e.thread_id);
            w.str_implicit(3, &e.run_id);
            value_field(w, 4, e.result.as_ref());
            match &e.outcome {
                None => {}
                Some(RunOutcome::Success {
                    pending_tool_call_ids,
                }) => {
                    w.str_field(5, "success");
                    for id in pending_tool_call_ids.iter().flatten() {
                        w.str_field(8, id);
                    }
                }
                Some(RunOutcome::Interrupt { interrupts }) => {
                    w.str_field(5, "interrupt");
                    for i in interrupts {
                        w.message(6, |w| interrupt(w, i));
                    }
                }
                Some(RunOutcome::Cancelled) => w.str_field(5, "cancelled"),
            }
            usage(w, 7, e.usage.as_deref());
        }
        Event::RunError(e) => {
            base_of!(w, ty, e);
            w.opt_str(2, e.code.as_deref());
            w.str_implicit(3, &e.message);
            usage(w, 4, e.usage.as_deref());
        }
        Event::StepStarted(e) => {
            base_of!(w, ty, e);
            w.str_implicit(2, &e.step_name);
            w.opt_str(3, e.subagent_run_id.as_deref());
        }
        Event::StepFinished(e) => {
            base_of!(w, ty, e);
            w.str_implicit(2, &e.step_name);
            w.opt_str(3, e.subagent_run_id.as_deref());
        }
        Event::ReasoningStart(e) => {
            base_of!(w, ty, e);
            w.opt_str(2, e.subagent_run_id.as_deref());
            w.str_implicit(3, &e.message_id);
        }
        Event::ReasoningMessageStart(e) => {
            base_of!(w, ty, e);
            w.opt_str(2, e.subagent_run_id.as_deref());
            w.str_implicit(3, &e.message_id);
            w.str_implicit(4, crate::event::ReasoningRole::AS_STR);
        }
        Event::ReasoningMessageContent(e) => {
            base_of!(w, ty, e);
            w.opt_str(2, e.subagent_run_id.as_deref());
            w.str_implicit(3, &e.message_id);
            w.str_implicit(4, &e.delta);
        }
        Event::ReasoningMessageEnd(e) => {
            base_of!(w, ty, e);
            w.opt_str(2, e.subagent_run_id.as_deref());
            w.str_implicit(3, &e.message_id);
        }
        Event::ReasoningMessageChunk(e) => {
            base_of!(w, ty, e);
            w.opt_str(2, e.subagent_run_id.as_deref());
            w.opt_str(3, e.message_id.as_deref());
            w.opt_str(4, e.delta.as_deref());
        }
        Event::ReasoningEnd(e) => {
            base_of!(w, ty, e);
            w.opt_str(2, e.subagent_run_id.as_deref());
            w.str_implicit(3, &e.message_id);
        }
        Event::ReasoningEncryptedValue(e) => {
            base_of!(w, ty, e);
            w.opt_str(2, e.subagent_run_id.as_deref());
            w.str_implicit(3, subtype_str(e.subtype));
            w.str_implicit(4, &e.entity_id);
            w.str_implicit(5, &e.encrypted_value);
        }
        Event::SubagentStarted(e) => {
            base_of!(w, ty, e);
            w.str_implicit(2, &e.subagent_run_id);
            w.str_implicit(3, &e.name);
            w.opt_str(4, e.description.as_deref());
            w.opt_str(5, e.parent_subagent_run_id.as_deref());
            w.opt_str(6, e.parent_tool_call_id.as_deref());
            w.opt_str(7, e.parent_message_id.as_deref());
        }
        Event::SubagentFinished(e) => {
            base_of!(w, ty, e);
            w.str_implicit(2, &e.subagent_run_id);
            value_field(w, 3, e.result.as_ref());
            match &e.outcome {
                None => {}
                Some(SubagentOutcome::Success) => w.str_field(4, "success"),
                Some(SubagentOutcome::Suspended { interrupt_ids }) => {
                    w.str_field(4, "suspended");
                    for id in interrupt_ids.iter().flatten() {
                        w.str_field(5, id);
                    }
                }
            }
        }
        Event::SubagentError(e) => {
            base_of!(w, ty, e);
            w.str_implicit(2, &e.subagent_run_id);
            w.str_implicit(3, &e.message);
            w.opt_str(4, e.code.as_deref());
        }
        Event::Unknown(_) => {}
    }
}

/// The wire string of a `REASONING_ENCRYPTED_VALUE` subtype.
pub(crate) fn subtype_str(s: EncryptedValueSubtype) -> &'static str {
    match s {
        EncryptedValueSubtype::ToolCall => "tool-call",
        EncryptedValueSubtype::Message => "message",
    }
}

fn usage(w: &mut Writer<'_>, field: u32, usage: Option<&[TokenUsage]>) {
    for u in usage.unwrap_or_default() {
        w.message(field, |w| {
            w.opt_str(1, u.provider.as_deref());
            w.opt_str(2, u.model.as_deref());
            let counts = [
                u.input_tokens,
                u.output_tokens,
                u.total_tokens,
                u.reasoning_tokens,
                u.cached_input_tokens,
                u.cache_write_input_tokens,
            ];
            for (n, c) in (3..).zip(counts) {
                if let Some(c) = c {
                    w.varint_field(n, c);
                }
            }
        });
    }
}

fn interrupt(w: &mut Writer<'_>, i: &Interrupt) {
    w.str_implicit(1, &i.id);
    w.str_implicit(2, &i.reason);
    w.opt_str(3, i.message.as_deref());
    w.opt_str(4, i.tool_call_id.as_deref());
    object_as_value(w, 5, i.response_schema.as_ref());
    w.opt_str(6, i.expires_at.as_deref());
    object_as_value(w, 7, i.metadata.as_ref());
    w.opt_str(8, i.subagent_run_id.as_deref());
}

fn content_parts(w: &mut Writer<'_>, field: u32, parts: &[ContentPart]) {
    for p in parts {
        w.message(field, |w| match p {
            ContentPart::Text(t) => w.message(1, |w| {
                w.str_implicit(1, &t.text);
                w.opt_str(2, t.id.as_deref());
                value_field(w, 3, t.metadata.as_ref());
            }),
            ContentPart::Image(m) => w.message(2, |w| media_part(w, m)),
            ContentPart::Audio(m) => w.message(3, |w| media_part(w, m)),
            ContentPart::Video(m) => w.message(4, |w| media_part(w, m)),
            ContentPart::Document(m) => w.message(5, |w| media_part(w, m)),
        });
    }
}

fn media_part(w: &mut Writer<'_>, m: &MediaPart) {
    w.message(1, |w| match &m.source {
        PartSource::Data(s) => w.message(1, |w| {
            w.str_implicit(1, &s.value);
            w.str_implicit(2, &s.mime_type);
        }),
        PartSource::Url(s) => w.message(2, |w| {
            w.str_implicit(1, &s.value);
            w.opt_str(2, s.mime_type.as_deref());
        }),
        PartSource::File(s) => w.message(3, |w| {
            w.str_implicit(1, &s.value);
            w.opt_str(2, s.provider.as_deref());
            w.opt_str(3, s.mime_type.as_deref());
        }),
    });
    value_field(w, 2, m.metadata.as_ref());
    w.opt_str(3, m.id.as_deref());
}

fn tool_call(w: &mut Writer<'_>, c: &ToolCall) {
    w.str_implicit(1, &c.id);
    w.str_implicit(2, crate::message::FunctionKind::AS_STR);
    w.message(3, |w| {
        w.str_implicit(1, &c.function.name);
        w.str_implicit(2, &c.function.arguments);
    });
    struct_field(w, 4, c.metadata.as_ref());
    w.opt_str(5, c.encrypted_value.as_deref());
}

/// One `Message` for every role; which content field is used depends on the role.
fn message(w: &mut Writer<'_>, m: &Message) {
    w.str_implicit(1, m.id());
    w.str_implicit(2, m.role().as_str());
    match m {
        Message::Developer(m) => {
            w.str_field(3, &m.content);
            w.opt_str(4, m.name.as_deref());
            struct_field(w, 9, m.metadata.as_ref());
            w.opt_str(10, m.subagent_run_id.as_deref());
            w.opt_str(11, m.encrypted_value.as_deref());
        }
        Message::System(m) => {
            w.str_field(3, &m.content);
            w.opt_str(4, m.name.as_deref());
            struct_field(w, 9, m.metadata.as_ref());
            w.opt_str(10, m.subagent_run_id.as_deref());
            w.opt_str(11, m.encrypted_value.as_deref());
        }
        Message::Assistant(m) => {
            w.opt_str(3, m.content.as_deref());
            w.opt_str(4, m.name.as_deref());
            for c in m.tool_calls.iter().flatten() {
                w.message(5, |w| tool_call(w, c));
            }
            struct_field(w, 9, m.metadata.as_ref());
            w.opt_str(10, m.subagent_run_id.as_deref());
            w.opt_str(11, m.encrypted_value.as_deref());
        }
        Message::User(m) => {
            if let Content::Text(s) = &m.content {
                w.str_field(3, s);
            }
            w.opt_str(4, m.name.as_deref());
            if let Content::Parts(parts) = &m.content {
                content_parts(w, 8, parts);
            }
            struct_field(w, 9, m.metadata.as_ref());
            w.opt_str(10, m.subagent_run_id.as_deref());
            w.opt_str(11, m.encrypted_value.as_deref());
        }
        Message::Tool(m) => {
            if let Content::Text(s) = &m.content {
                w.str_field(3, s);
            }
            w.str_field(6, &m.tool_call_id);
            w.opt_str(7, m.error.as_deref());
            if let Content::Parts(parts) = &m.content {
                content_parts(w, 8, parts);
            }
            struct_field(w, 9, m.metadata.as_ref());
            w.opt_str(10, m.subagent_run_id.as_deref());
            w.opt_str(11, m.encrypted_value.as_deref());
        }
        Message::Activity(m) => {
            struct_field(w, 9, m.metadata.as_ref());
            w.opt_str(10, m.subagent_run_id.as_deref());
            w.str_field(12, &m.activity_type);
            struct_field(w, 13, Some(&m.content));
        }
        Message::Reasoning(m) => {
            w.str_field(3, &m.content);
            struct_field(w, 9, m.metadata.as_ref());
            w.opt_str(10, m.subagent_run_id.as_deref());
            w.opt_str(11, m.encrypted_value.as_deref());
        }
    }
}

fn run_agent_input(w: &mut Writer<'_>, input: &RunAgentInput) {
    w.str_implicit(1, &input.thread_id);
    w.str_implicit(2, &input.run_id);
    w.opt_str(3, input.parent_run_id.as_deref());
    value_field(w, 4, input.state.as_ref());
    for m in &input.messages {
        w.message(5, |w| message(w, m));
    }
    for t in input.tools() {
        w.message(6, |w| {
            w.str_implicit(1, &t.name);
            w.str_implicit(2, &t.description);
            value_field(w, 3, t.parameters.as_ref());
            struct_field(w, 4, t.metadata.as_ref());
        });
    }
    for c in input.context() {
        w.message(7, |w| {
            w.str_implicit(1, &c.description);
            w.str_implicit(2, &c.value);
        });
    }
    value_field(w, 8, input.forwarded_props.as_ref());
    for r in input.resume() {
        w.message(9, |w| {
            w.str_implicit(1, &r.interrupt_id);
            w.str_implicit(
                2,
                match r.status {
                    ResumeStatus::Resolved => "resolved",
                    ResumeStatus::Cancelled => "cancelled",
                },
            );
            value_field(w, 3, r.payload.as_ref());
            struct_field(w, 4, r.metadata.as_ref());
        });
    }
    w.opt_str(10, input.protocol_version.as_deref());
}

/// `repeated JsonPatchOperation`: `op` as the enum (`add` = 0 is not written), `path`,
/// `from`, `value`. Members an operation does not define but the schema has a field for
/// (a `value` on `remove`, a string `from` on `add`) are written too, as the reference does.
fn patch(w: &mut Writer<'_>, field: u32, ops: &JsonPatch) {
    for op in ops {
        w.message(field, |w| super::patch_map::write_op(w, op));
    }
}
