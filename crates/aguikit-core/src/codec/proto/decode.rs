//! Protobuf bytes to typed events.
//!
//! The bytes are first checked the way the reference checks them (see `scan`), then decoded
//! by the prost-generated types, then moved (not copied) into the typed event. The result is
//! what the reference client ends up with: `@ag-ui/proto` `decode` rebuilds a JSON event,
//! and the client's validation stage then judges it exactly as it judges an event that
//! arrived over SSE. So the rules of this crate's JSON decoding apply here too: unknown
//! union members (message roles, content parts, outcome types, patch operations) are
//! dropped with a warning, anything else the schema rejects is an error.

use serde_json::{Map, Value};

use super::error::ProtoError;
use super::pb;
use super::scan::{self, ArmRef};
use super::tables::{type_of_arm, type_of_proto};
use super::wkt::{ProtoStruct, ProtoValue};
use crate::content::{
    Content, ContentPart, DataSource, FileSource, MediaPart, PartSource, TextPart, UrlSource,
};
use crate::event::*;
use crate::input::{Context, ResumeEntry, ResumeStatus, RunAgentInput, Tool};
use crate::interrupt::{Interrupt, RunOutcome, SubagentOutcome};
use crate::message::{
    ActivityMessage, AssistantMessage, DeveloperMessage, FunctionCall, FunctionKind, Message,
    ReasoningMessage, SystemMessage, ToolCall, ToolMessage, UserMessage,
};
use crate::patch::JsonPatch;
use crate::serde_util::MAX_SAFE_INTEGER;
use crate::usage::TokenUsage;
use crate::warning;

/// Why an event could not be rebuilt (turned into a [`ProtoError`] with the event type).
#[derive(Debug)]
pub(crate) enum Fail {
    /// Structurally broken (the reference's decode throws).
    Malformed(String),
    /// Breaks the schema (the reference client's validation fails).
    Invalid { path: String, message: String },
}

pub(crate) type R<T> = Result<T, Fail>;

impl Fail {
    pub(crate) fn invalid(path: impl Into<String>, message: impl Into<String>) -> Fail {
        Fail::Invalid {
            path: path.into(),
            message: message.into(),
        }
    }

    fn missing(field: &str) -> Fail {
        Fail::invalid(field, format!("missing field `{field}`"))
    }

    /// Prefixes the path with `prefix` (`messages[2]`, `input`, ...).
    fn at(self, prefix: impl std::fmt::Display) -> Fail {
        match self {
            Fail::Invalid { path, message } => Fail::Invalid {
                path: if path.starts_with('[') {
                    format!("{prefix}{path}")
                } else {
                    format!("{prefix}.{path}")
                },
                message,
            },
            m => m,
        }
    }
}

/// Decodes one envelope body. `Ok(None)`: an event of a later protocol version, dropped.
pub(crate) fn decode(body: &[u8]) -> Result<Option<Event>, ProtoError> {
    let arm = match scan::check_envelope(body) {
        Ok(Some(arm)) => arm,
        Ok(None) if scan::names_only_future_arms(body) => {
            warning::report("protobuf event of a later protocol version (unknown arm) dropped");
            return Ok(None);
        }
        Ok(None) => {
            return Err(ProtoError::malformed(
                "the envelope carries no known event",
                body,
            ));
        }
        Err(why) => return Err(ProtoError::malformed(why, body)),
    };
    // Only the arm's own message is decoded (the envelope's other fields are unknown ones,
    // already checked): no envelope-sized enum is built and moved around.
    let Some(event_type) = type_of_arm(arm.field) else {
        return Err(ProtoError::malformed("unknown event arm", body));
    };
    match super::fields::convert_arm(event_type, body, &arm) {
        Ok(event) => Ok(Some(event)),
        Err(Fail::Malformed(reason)) => Err(ProtoError::malformed(reason, body)),
        Err(Fail::Invalid { path, message }) => Err(ProtoError::Invalid {
            event_type,
            path,
            message,
        }),
    }
}

/// Decodes the arm's message: its payloads merged in order, as protobuf merges repeated
/// occurrences of a message field.
/// (Decoded in place: event messages are large, and moving them costs more than reading.)
pub(super) fn arm_message<M: prost::Message>(body: &[u8], arm: &ArmRef, m: &mut M) -> R<()> {
    let malformed = |e: prost::DecodeError| Fail::Malformed(e.to_string());
    if !arm.repeated {
        return m.merge(&body[arm.first.clone()]).map_err(malformed);
    }
    for range in scan::payloads(body, arm.field) {
        m.merge(&body[range]).map_err(malformed)?;
    }
    Ok(())
}

/// The base fields, checked against the arm.
pub(super) struct Base {
    pub(super) timestamp: Option<i64>,
    pub(super) raw_event: Option<Value>,
    pub(super) metadata: Option<Map<String, Value>>,
}

pub(super) fn base(t: EventType, b: Option<pb::BaseEvent>) -> R<Base> {
    let b = b.ok_or_else(|| Fail::Malformed(format!("{t} without base_event")))?;
    if type_of_proto(b.r#type) != Some(t) {
        return Err(Fail::Malformed(format!(
            "the envelope carries {t} but the base event declares type {}",
            type_of_proto(b.r#type).map_or_else(|| b.r#type.to_string(), |d| d.to_string())
        )));
    }
    let timestamp = match b.timestamp {
        Some(ts) if !(-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(&ts) => {
            return Err(Fail::invalid(
                "timestamp",
                format!("{ts} is out of range: expected a safe integer (|n| <= 2^53-1)"),
            ));
        }
        ts => ts,
    };
    Ok(Base {
        timestamp,
        raw_event: any_opt(b.raw_event),
        metadata: b.metadata.map(ProtoStruct::into_map),
    })
}

/// An optional "any JSON" field: absent, unset or (legacy) `null` read as absent.
fn any_opt(v: Option<ProtoValue>) -> Option<Value> {
    match v.and_then(|v| v.0) {
        Some(Value::Null) => {
            warning::report("legacy `null` read as absent");
            None
        }
        v => v,
    }
}

/// A required "any JSON" field (`null` allowed).
fn any_required(v: Option<ProtoValue>, field: &str) -> R<Value> {
    v.and_then(|v| v.0).ok_or_else(|| Fail::missing(field))
}

/// An optional field that must hold a JSON object when present.
fn object_opt(v: Option<ProtoValue>, field: &str) -> R<Option<Map<String, Value>>> {
    match v.and_then(|v| v.0) {
        None => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(other) => Err(Fail::invalid(
            field,
            format!("invalid type: {}, expected a map", kind(&other)),
        )),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "sequence",
        Value::Object(_) => "map",
    }
}

fn unknown_variant(field: &str, got: &str, expected: &str) -> Fail {
    Fail::invalid(
        field,
        format!("unknown variant `{got}`, expected {expected}"),
    )
}

fn text_role(role: Option<String>, field: &str) -> R<Option<TextMessageRole>> {
    Ok(Some(match role.as_deref() {
        None => return Ok(None),
        Some("developer") => TextMessageRole::Developer,
        Some("system") => TextMessageRole::System,
        Some("assistant") => TextMessageRole::Assistant,
        Some("user") => TextMessageRole::User,
        Some(other) => {
            return Err(unknown_variant(
                &wire(field),
                other,
                "one of `developer`, `system`, `assistant`, `user`",
            ));
        }
    }))
}

fn literal<T>(field: &str, got: &str, lit: &str, value: T) -> R<T> {
    if got == lit {
        Ok(value)
    } else {
        Err(Fail::invalid(
            field,
            format!("invalid value: string {got:?}, expected \"{lit}\""),
        ))
    }
}

fn usage(list: Vec<pb::Usage>) -> R<Option<Vec<TokenUsage>>> {
    if list.is_empty() {
        return Ok(None);
    }
    let count = |v: Option<i64>, field: &str| -> R<Option<u64>> {
        match v {
            None => Ok(None),
            Some(n) if (0..=MAX_SAFE_INTEGER).contains(&n) => Ok(Some(n as u64)),
            Some(n) => Err(Fail::invalid(
                field,
                format!("{n} is out of range: expected a non-negative safe integer"),
            )),
        }
    };
    list.into_iter()
        .enumerate()
        .map(|(i, u)| {
            Ok(TokenUsage {
                provider: u.provider,
                model: u.model,
                input_tokens: count(u.input_tokens, "inputTokens")?,
                output_tokens: count(u.output_tokens, "outputTokens")?,
                total_tokens: count(u.total_tokens, "totalTokens")?,
                reasoning_tokens: count(u.reasoning_tokens, "reasoningTokens")?,
                cached_input_tokens: count(u.cached_input_tokens, "cachedInputTokens")?,
                cache_write_input_tokens: count(
                    u.cache_write_input_tokens,
                    "cacheWriteInputTokens",
                )?,
            })
            .map_err(|f: Fail| f.at(format_args!("usage[{i}]")))
        })
        .collect::<R<Vec<_>>>()
        .map(Some)
}

fn interrupt(i: pb::Interrupt) -> R<Interrupt> {
    Ok(Interrupt {
        id: i.id,
        reason: i.reason,
        message: i.message,
        tool_call_id: i.tool_call_id,
        response_schema: object_opt(i.response_schema, "responseSchema")?,
        expires_at: i.expires_at,
        metadata: object_opt(i.metadata, "metadata")?,
        subagent_run_id: i.subagent_run_id,
    })
}

/// `RUN_FINISHED.outcome` from its wire string and payload fields.
pub(super) fn run_outcome(
    outcome: String,
    interrupts: Vec<pb::Interrupt>,
    pending: Vec<String>,
) -> R<Option<RunOutcome>> {
    Ok(Some(match outcome.as_str() {
        "" => return Ok(None),
        "success" => RunOutcome::Success {
            pending_tool_call_ids: (!pending.is_empty()).then_some(pending),
        },
        "interrupt" => {
            if interrupts.is_empty() {
                return Err(Fail::invalid(
                    "outcome.interrupts",
                    "an interrupt outcome needs at least one interrupt",
                ));
            }
            RunOutcome::Interrupt {
                interrupts: interrupts
                    .into_iter()
                    .enumerate()
                    .map(|(k, i)| {
                        interrupt(i).map_err(|f| f.at(format_args!("outcome.interrupts[{k}]")))
                    })
                    .collect::<R<_>>()?,
            }
        }
        "cancelled" => RunOutcome::Cancelled,
        other => {
            warning::report(format!("outcome removed: unknown type {other:?}"));
            return Ok(None);
        }
    }))
}

pub(super) fn subagent_outcome(outcome: String, ids: Vec<String>) -> Option<SubagentOutcome> {
    Some(match outcome.as_str() {
        "" => return None,
        "success" => SubagentOutcome::Success,
        "suspended" => SubagentOutcome::Suspended {
            interrupt_ids: (!ids.is_empty()).then_some(ids),
        },
        other => {
            warning::report(format!("outcome removed: unknown type {other:?}"));
            return None;
        }
    })
}

/// A media part; `Ok(None)` when its source names no known arm (dropped, as an unknown
/// union member is).
fn media(
    source: Option<pb::InputContentSource>,
    metadata: Option<ProtoValue>,
    id: Option<String>,
) -> R<Option<MediaPart>> {
    use pb::input_content_source::Source;
    let source = source.ok_or_else(|| Fail::missing("source"))?;
    let source = match source.source {
        None => {
            warning::report("content part removed: its source names no known kind");
            return Ok(None);
        }
        Some(Source::Data(s)) => PartSource::Data(DataSource {
            value: s.value,
            mime_type: s.mime_type,
        }),
        Some(Source::Url(s)) => PartSource::Url(UrlSource {
            value: s.value,
            mime_type: s.mime_type,
        }),
        Some(Source::File(s)) => PartSource::File(FileSource {
            value: s.value,
            provider: s.provider,
            mime_type: s.mime_type,
        }),
    };
    Ok(Some(MediaPart {
        source,
        id,
        metadata: any_opt(metadata),
    }))
}

fn parts(list: Vec<pb::InputContent>) -> R<Vec<ContentPart>> {
    use pb::input_content::Part;
    let mut out = Vec::with_capacity(list.len());
    for (i, p) in list.into_iter().enumerate() {
        // The four media kinds differ only by their protobuf type and content part variant.
        let (source, metadata, id, kind): (_, _, _, fn(MediaPart) -> ContentPart) = match p.part {
            None => {
                warning::report(format!("[{i}]: content part removed: no known kind"));
                continue;
            }
            Some(Part::Text(t)) => {
                out.push(ContentPart::Text(TextPart {
                    text: t.text,
                    id: t.id,
                    metadata: any_opt(t.metadata),
                }));
                continue;
            }
            Some(Part::Image(m)) => (m.source, m.metadata, m.id, ContentPart::Image),
            Some(Part::Audio(m)) => (m.source, m.metadata, m.id, ContentPart::Audio),
            Some(Part::Video(m)) => (m.source, m.metadata, m.id, ContentPart::Video),
            Some(Part::Document(m)) => (m.source, m.metadata, m.id, ContentPart::Document),
        };
        let part = media(source, metadata, id).map_err(|f| f.at(format_args!("[{i}]")))?;
        out.extend(part.map(kind));
    }
    Ok(out)
}

/// String content if present, else the parts (possibly none).
pub(super) fn content(text: Option<String>, list: Vec<pb::InputContent>) -> R<Content> {
    match text {
        Some(s) => Ok(Content::Text(s)),
        None => parts(list).map(Content::Parts).map_err(|f| f.at("content")),
    }
}

fn tool_call(c: pb::ToolCall) -> R<ToolCall> {
    let kind = literal("type", &c.r#type, FunctionKind::AS_STR, FunctionKind)?;
    let f = c.function.ok_or_else(|| Fail::missing("function"))?;
    Ok(ToolCall {
        id: c.id,
        kind,
        function: FunctionCall {
            name: f.name,
            arguments: f.arguments,
        },
        encrypted_value: c.encrypted_value,
        metadata: c.metadata.map(ProtoStruct::into_map),
    })
}

/// One message of any role; `Ok(None)` for an unknown role (dropped with a warning).
fn message(m: pb::Message) -> R<Option<Message>> {
    let has_text = m.content.is_some();
    let has_parts = !m.content_parts.is_empty();
    let has_map = m.activity_content.is_some();
    let role = m.role.as_str();
    if !crate::message::ROLES.contains(&role) {
        if usize::from(has_text) + usize::from(has_parts) + usize::from(has_map) > 1 {
            return Err(Fail::Malformed(
                "a message carries more than one content form".into(),
            ));
        }
        warning::report(format!("message removed: unknown role {role:?}"));
        return Ok(None);
    }
    let uses_parts = matches!(role, "user" | "tool");
    let uses_map = role == "activity";
    if has_parts && !uses_parts {
        return Err(Fail::Malformed(format!(
            "a {role} message carries content parts"
        )));
    }
    if has_map && !uses_map {
        return Err(Fail::Malformed(format!(
            "a {role} message carries activity content"
        )));
    }
    if uses_map && has_text {
        return Err(Fail::Malformed(
            "activity content cannot ride with other content forms".into(),
        ));
    }
    if uses_parts && has_text && has_parts {
        return Err(Fail::Malformed(
            "a message carries both string content and content parts".into(),
        ));
    }
    let text = |c: Option<String>| c.ok_or_else(|| Fail::missing("content"));
    // The members of the role here; those every message carries are set below.
    let id = m.id;
    let mut message = match role {
        "developer" => Message::Developer(DeveloperMessage {
            id,
            content: text(m.content)?,
            name: m.name,
            ..Default::default()
        }),
        "system" => Message::System(SystemMessage {
            id,
            content: text(m.content)?,
            name: m.name,
            ..Default::default()
        }),
        "assistant" => Message::Assistant(AssistantMessage {
            id,
            content: m.content,
            name: m.name,
            tool_calls: if m.tool_calls.is_empty() {
                None
            } else {
                Some(
                    m.tool_calls
                        .into_iter()
                        .enumerate()
                        .map(|(i, c)| {
                            tool_call(c).map_err(|f| f.at(format_args!("toolCalls[{i}]")))
                        })
                        .collect::<R<_>>()?,
                )
            },
            ..Default::default()
        }),
        "user" => Message::User(UserMessage {
            id,
            content: content(m.content, m.content_parts)?,
            name: m.name,
            ..Default::default()
        }),
        "tool" => Message::Tool(ToolMessage {
            id,
            content: content(m.content, m.content_parts)?,
            tool_call_id: m.tool_call_id.ok_or_else(|| Fail::missing("toolCallId"))?,
            error: m.error,
            ..Default::default()
        }),
        "activity" => Message::Activity(ActivityMessage {
            id,
            activity_type: m
                .activity_type
                .ok_or_else(|| Fail::missing("activityType"))?,
            content: m
                .activity_content
                .ok_or_else(|| Fail::missing("content"))?
                .into_map(),
            ..Default::default()
        }),
        _ => Message::Reasoning(ReasoningMessage {
            id,
            content: text(m.content)?,
            ..Default::default()
        }),
    };
    *message.metadata_mut() = m.metadata.map(ProtoStruct::into_map);
    *message.subagent_run_id_mut() = m.subagent_run_id;
    if let Some(encrypted_value) = message.encrypted_value_mut() {
        *encrypted_value = m.encrypted_value;
    }
    Ok(Some(message))
}

fn messages(list: Vec<pb::Message>, field: &str) -> R<Vec<Message>> {
    let mut out = Vec::with_capacity(list.len());
    for (i, m) in list.into_iter().enumerate() {
        out.extend(message(m).map_err(|f| f.at(format_args!("{field}[{i}]")))?);
    }
    Ok(out)
}

fn run_agent_input(i: pb::RunAgentInput) -> R<RunAgentInput> {
    let tools = i
        .tools
        .into_iter()
        .map(|t| Tool {
            name: t.name,
            description: t.description,
            parameters: any_opt(t.parameters),
            metadata: t.metadata.map(ProtoStruct::into_map),
        })
        .collect();
    let context = i
        .context
        .into_iter()
        .map(|c| Context {
            description: c.description,
            value: c.value,
        })
        .collect();
    let resume = i
        .resume
        .into_iter()
        .enumerate()
        .map(|(k, r)| {
            let status = match r.status.as_str() {
                "resolved" => ResumeStatus::Resolved,
                "cancelled" => ResumeStatus::Cancelled,
                other => {
                    return Err(unknown_variant(
                        &format!("resume[{k}].status"),
                        other,
                        "one of `resolved`, `cancelled`",
                    ));
                }
            };
            Ok(ResumeEntry {
                interrupt_id: r.interrupt_id,
                status,
                payload: any_opt(r.payload),
                metadata: r.metadata.map(ProtoStruct::into_map),
            })
        })
        .collect::<R<_>>()?;
    Ok(RunAgentInput {
        thread_id: i.thread_id,
        run_id: i.run_id,
        protocol_version: i.protocol_version,
        parent_run_id: i.parent_run_id,
        // `null` state reads as absent, silently (a plain optional field).
        state: i.state.and_then(|v| v.0).filter(|v| !v.is_null()),
        messages: messages(i.messages, "messages")?,
        // The reference always materialises these three arrays.
        tools: Some(tools),
        context: Some(context),
        forwarded_props: any_opt(i.forwarded_props),
        resume: Some(resume),
    })
}

/// How a field's type is read from the message field of the same name (see `fields.rs`);
/// `field` is the field's Rust name, which error paths give in its wire form.
pub(super) trait FromPb<S>: Sized {
    fn from_pb(s: S, field: &'static str) -> R<Self>;
}

/// Taken as it is (strings, optional strings, `bool`s).
impl<T> FromPb<T> for T {
    #[inline]
    fn from_pb(s: T, _: &'static str) -> R<T> {
        Ok(s)
    }
}

/// The wire (camelCase) name of a field, for error paths.
fn wire(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut upper = false;
    for c in field.chars() {
        match c {
            '_' => upper = true,
            c if upper => {
                out.extend(c.to_uppercase());
                upper = false;
            }
            c => out.push(c),
        }
    }
    out
}

impl FromPb<Option<String>> for Option<TextMessageRole> {
    fn from_pb(s: Option<String>, field: &'static str) -> R<Self> {
        text_role(s, field)
    }
}

impl FromPb<Option<String>> for Option<ToolRole> {
    fn from_pb(s: Option<String>, field: &'static str) -> R<Self> {
        match s {
            None => Ok(None),
            Some(r) => literal(&wire(field), &r, ToolRole::AS_STR, ToolRole).map(Some),
        }
    }
}

impl FromPb<String> for ReasoningRole {
    fn from_pb(s: String, field: &'static str) -> R<Self> {
        literal(&wire(field), &s, ReasoningRole::AS_STR, ReasoningRole)
    }
}

impl FromPb<String> for EncryptedValueSubtype {
    fn from_pb(s: String, field: &'static str) -> R<Self> {
        match s.as_str() {
            "tool-call" => Ok(EncryptedValueSubtype::ToolCall),
            "message" => Ok(EncryptedValueSubtype::Message),
            other => Err(unknown_variant(
                &wire(field),
                other,
                "one of `tool-call`, `message`",
            )),
        }
    }
}

/// A required "any JSON" field (`null` allowed).
impl FromPb<Option<ProtoValue>> for Value {
    #[inline]
    fn from_pb(v: Option<ProtoValue>, field: &'static str) -> R<Self> {
        any_required(v, &wire(field))
    }
}

/// An optional "any JSON" field: absent, unset or (legacy) `null` read as absent.
impl FromPb<Option<ProtoValue>> for Option<Value> {
    #[inline]
    fn from_pb(v: Option<ProtoValue>, _: &'static str) -> R<Self> {
        Ok(any_opt(v))
    }
}

/// A required JSON object.
impl FromPb<Option<ProtoStruct>> for Map<String, Value> {
    fn from_pb(v: Option<ProtoStruct>, field: &'static str) -> R<Self> {
        Ok(v.ok_or_else(|| Fail::missing(&wire(field)))?.into_map())
    }
}

impl FromPb<Vec<pb::JsonPatchOperation>> for JsonPatch {
    fn from_pb(ops: Vec<pb::JsonPatchOperation>, field: &'static str) -> R<Self> {
        super::patch_map::read_patch(ops).map_err(|f| f.at(wire(field)))
    }
}

impl FromPb<Vec<pb::Message>> for Vec<Message> {
    fn from_pb(list: Vec<pb::Message>, field: &'static str) -> R<Self> {
        messages(list, &wire(field))
    }
}

impl FromPb<Option<pb::RunAgentInput>> for Option<Box<RunAgentInput>> {
    fn from_pb(i: Option<pb::RunAgentInput>, field: &'static str) -> R<Self> {
        match i {
            None => Ok(None),
            Some(i) => Ok(Some(Box::new(
                run_agent_input(i).map_err(|f| f.at(wire(field)))?,
            ))),
        }
    }
}

impl FromPb<Vec<pb::Usage>> for Option<Vec<TokenUsage>> {
    fn from_pb(list: Vec<pb::Usage>, _: &'static str) -> R<Self> {
        usage(list)
    }
}
