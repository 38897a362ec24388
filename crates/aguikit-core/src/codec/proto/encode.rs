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
use crate::event::{EncryptedValueSubtype, Event, ReasoningRole, TextMessageRole, ToolRole};
use crate::input::{ResumeStatus, RunAgentInput};
use crate::interrupt::Interrupt;
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
        super::fields::body(w, ty, event);
    });
    true
}

/// Writes `base_event` (field 1 of every event message).
pub(super) fn base(
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

/// How a field's type is written under its field number (see `fields.rs`).
pub(super) trait ProtoField {
    fn encode(&self, w: &mut Writer<'_>, field: u32);
}

/// An implicit-presence string: omitted when empty.
impl ProtoField for String {
    #[inline]
    fn encode(&self, w: &mut Writer<'_>, field: u32) {
        w.str_implicit(field, self);
    }
}

/// An explicit-presence string: written whenever set.
impl ProtoField for Option<String> {
    #[inline]
    fn encode(&self, w: &mut Writer<'_>, field: u32) {
        w.opt_str(field, self.as_deref());
    }
}

impl ProtoField for Option<TextMessageRole> {
    #[inline]
    fn encode(&self, w: &mut Writer<'_>, field: u32) {
        w.opt_str(field, self.map(|r| r.as_str()));
    }
}

impl ProtoField for Option<ToolRole> {
    #[inline]
    fn encode(&self, w: &mut Writer<'_>, field: u32) {
        w.opt_str(field, self.map(|_| ToolRole::AS_STR));
    }
}

impl ProtoField for ReasoningRole {
    #[inline]
    fn encode(&self, w: &mut Writer<'_>, field: u32) {
        w.str_implicit(field, ReasoningRole::AS_STR);
    }
}

impl ProtoField for EncryptedValueSubtype {
    #[inline]
    fn encode(&self, w: &mut Writer<'_>, field: u32) {
        w.str_implicit(field, subtype_str(*self));
    }
}

/// Any JSON, as a `google.protobuf.Value`.
impl ProtoField for Value {
    #[inline]
    fn encode(&self, w: &mut Writer<'_>, field: u32) {
        value_field(w, field, Some(self));
    }
}

impl ProtoField for Option<Value> {
    #[inline]
    fn encode(&self, w: &mut Writer<'_>, field: u32) {
        value_field(w, field, self.as_ref());
    }
}

/// A JSON object, as a `google.protobuf.Struct`.
impl ProtoField for Map<String, Value> {
    #[inline]
    fn encode(&self, w: &mut Writer<'_>, field: u32) {
        struct_field(w, field, Some(self));
    }
}

impl ProtoField for Option<bool> {
    #[inline]
    fn encode(&self, w: &mut Writer<'_>, field: u32) {
        if let Some(b) = *self {
            w.bool_field(field, b);
        }
    }
}

impl ProtoField for JsonPatch {
    #[inline]
    fn encode(&self, w: &mut Writer<'_>, field: u32) {
        patch(w, field, self);
    }
}

impl ProtoField for Vec<Message> {
    fn encode(&self, w: &mut Writer<'_>, field: u32) {
        for m in self {
            w.message(field, |w| message(w, m));
        }
    }
}

impl ProtoField for Option<Box<RunAgentInput>> {
    fn encode(&self, w: &mut Writer<'_>, field: u32) {
        if let Some(input) = self {
            w.message(field, |w| run_agent_input(w, input));
        }
    }
}

impl ProtoField for Option<Vec<TokenUsage>> {
    fn encode(&self, w: &mut Writer<'_>, field: u32) {
        usage(w, field, self.as_deref());
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

pub(super) fn interrupt(w: &mut Writer<'_>, i: &Interrupt) {
    w.str_implicit(1, &i.id);
    w.str_implicit(2, &i.reason);
    w.opt_str(3, i.message.as_deref());
    w.opt_str(4, i.tool_call_id.as_deref());
    object_as_value(w, 5, i.response_schema.as_ref());
    w.opt_str(6, i.expires_at.as_deref());
    object_as_value(w, 7, i.metadata.as_ref());
    w.opt_str(8, i.subagent_run_id.as_deref());
}

pub(super) fn content_parts(w: &mut Writer<'_>, field: u32, parts: &[ContentPart]) {
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
