//! Small edits on any [`Event`]: attribution, metadata and timestamps, for every variant.

use agui_core::Event;
use agui_core::metadata::Metadata;
use serde_json::Value;

/// Runs `$body` with `$v` bound to the inner struct of every known variant.
macro_rules! with_inner {
    ($event:expr, $v:ident => $body:expr, $u:ident => $unknown:expr) => {
        match $event {
            Event::RunStarted($v) => $body,
            Event::RunFinished($v) => $body,
            Event::RunError($v) => $body,
            Event::StepStarted($v) => $body,
            Event::StepFinished($v) => $body,
            Event::TextMessageStart($v) => $body,
            Event::TextMessageContent($v) => $body,
            Event::TextMessageEnd($v) => $body,
            Event::TextMessageChunk($v) => $body,
            Event::ToolCallStart($v) => $body,
            Event::ToolCallArgs($v) => $body,
            Event::ToolCallEnd($v) => $body,
            Event::ToolCallChunk($v) => $body,
            Event::ToolCallResult($v) => $body,
            Event::StateSnapshot($v) => $body,
            Event::StateDelta($v) => $body,
            Event::MessagesSnapshot($v) => $body,
            Event::ActivitySnapshot($v) => $body,
            Event::ActivityDelta($v) => $body,
            Event::Raw($v) => $body,
            Event::Custom($v) => $body,
            Event::ReasoningStart($v) => $body,
            Event::ReasoningMessageStart($v) => $body,
            Event::ReasoningMessageContent($v) => $body,
            Event::ReasoningMessageEnd($v) => $body,
            Event::ReasoningMessageChunk($v) => $body,
            Event::ReasoningEnd($v) => $body,
            Event::ReasoningEncryptedValue($v) => $body,
            Event::SubagentStarted($v) => $body,
            Event::SubagentFinished($v) => $body,
            Event::SubagentError($v) => $body,
            Event::Unknown($u) => $unknown,
            #[allow(unreachable_patterns)]
            _ => {}
        }
    };
}

/// Sets `subagentRunId` on an attributable event that has none. Run-scoped events,
/// `MESSAGES_SNAPSHOT` and the subagent lifecycle events (whose id is an identity, not a
/// tag) are left alone.
pub(crate) fn tag_subagent(event: &mut Event, id: &str) {
    macro_rules! tag {
        ($($variant:ident),*) => {
            match event {
                $(Event::$variant(e) if e.subagent_run_id.is_none() => {
                    e.subagent_run_id = Some(id.to_owned());
                })*
                _ => {}
            }
        };
    }
    tag!(
        StepStarted,
        StepFinished,
        TextMessageStart,
        TextMessageContent,
        TextMessageEnd,
        TextMessageChunk,
        ToolCallStart,
        ToolCallArgs,
        ToolCallEnd,
        ToolCallChunk,
        ToolCallResult,
        StateSnapshot,
        StateDelta,
        ActivitySnapshot,
        ActivityDelta,
        Raw,
        Custom,
        ReasoningStart,
        ReasoningMessageStart,
        ReasoningMessageContent,
        ReasoningMessageEnd,
        ReasoningMessageChunk,
        ReasoningEnd,
        ReasoningEncryptedValue
    );
}

/// Merges `metadata` into the event's own (keys already on the event win).
pub(crate) fn stamp_metadata(event: &mut Event, metadata: &Metadata) {
    fn merge(slot: &mut Option<Metadata>, metadata: &Metadata) {
        let target = slot.get_or_insert_with(Metadata::new);
        for (k, v) in metadata {
            if !target.contains_key(k) {
                target.insert(k.clone(), v.clone());
            }
        }
    }
    with_inner!(event, e => merge(&mut e.metadata, metadata), u => {
        let slot = u.0.entry("metadata").or_insert_with(|| Value::Object(Metadata::new()));
        if let Value::Object(target) = slot {
            for (k, v) in metadata {
                if !target.contains_key(k) {
                    target.insert(k.clone(), v.clone());
                }
            }
        }
    });
}

/// Sets `timestamp` when the event has none.
pub(crate) fn stamp_timestamp(event: &mut Event, ms: i64) {
    with_inner!(event, e => {
        if e.timestamp.is_none() {
            e.timestamp = Some(ms);
        }
    }, u => {
        u.0.entry("timestamp").or_insert_with(|| Value::from(ms));
    });
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Whether the event is one of the three the runtime owns.
pub(crate) fn is_lifecycle(event: &Event) -> bool {
    matches!(
        event,
        Event::RunStarted(_) | Event::RunFinished(_) | Event::RunError(_)
    )
}

/// Whether the event is a `*_CHUNK` shorthand (which needs expansion before verification).
pub(crate) fn is_chunk(event: &Event) -> bool {
    matches!(
        event,
        Event::TextMessageChunk(_) | Event::ToolCallChunk(_) | Event::ReasoningMessageChunk(_)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use agui_core::event::{Custom, RunStarted, TextMessageContent};
    use serde_json::json;

    #[test]
    fn tags_only_attributable_events_without_a_tag() {
        let mut e: Event = TextMessageContent::new("m", "x").into();
        tag_subagent(&mut e, "sa");
        assert_eq!(e.subagent_run_id(), Some("sa"));
        let mut e: Event = TextMessageContent::new("m", "x")
            .with_subagent_run_id("other")
            .into();
        tag_subagent(&mut e, "sa");
        assert_eq!(e.subagent_run_id(), Some("other"));
        let mut e: Event = RunStarted::new("t", "r").into();
        tag_subagent(&mut e, "sa");
        assert_eq!(e.subagent_run_id(), None);
    }

    #[test]
    fn metadata_merges_without_overwriting() {
        let mut e: Event = Custom::new("c", json!(1))
            .with_metadata(json!({"a": 1}).as_object().unwrap().clone())
            .into();
        stamp_metadata(&mut e, json!({"a": 2, "b": 3}).as_object().unwrap());
        assert_eq!(
            e.metadata().unwrap(),
            json!({"a": 1, "b": 3}).as_object().unwrap()
        );
    }

    #[test]
    fn timestamp_is_kept_when_present() {
        let mut e: Event = Custom::new("c", json!(1)).with_timestamp(5).into();
        stamp_timestamp(&mut e, 9);
        assert_eq!(e.timestamp(), Some(5));
        let mut e: Event = Custom::new("c", json!(1)).into();
        stamp_timestamp(&mut e, 9);
        assert_eq!(e.timestamp(), Some(9));
    }
}
