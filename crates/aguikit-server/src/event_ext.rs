//! Small edits on any [`Event`]: attribution, metadata and timestamps, for every variant.

use aguikit_core::Event;
use aguikit_core::metadata::Metadata;
use serde_json::Value;

/// Sets `subagentRunId` on an attributable event that has none. Run-scoped events,
/// `MESSAGES_SNAPSHOT` and the subagent lifecycle events (whose id is an identity, not a
/// tag) are left alone.
pub(crate) fn tag_subagent(event: &mut Event, id: &str) {
    if let Some(slot) = event.subagent_run_id_mut()
        && slot.is_none()
    {
        *slot = Some(id.to_owned());
    }
}

/// Merges `metadata` into the event's own (keys already on the event win).
pub(crate) fn stamp_metadata(event: &mut Event, metadata: &Metadata) {
    fn merge(target: &mut Metadata, metadata: &Metadata) {
        for (k, v) in metadata {
            if !target.contains_key(k) {
                target.insert(k.clone(), v.clone());
            }
        }
    }
    match event.metadata_mut() {
        Some(slot) => merge(slot.get_or_insert_with(Box::default), metadata),
        None => {
            if let Event::Unknown(u) = event {
                let slot =
                    u.0.entry("metadata")
                        .or_insert_with(|| Value::Object(Metadata::new()));
                if let Value::Object(target) = slot {
                    merge(target, metadata);
                }
            }
        }
    }
}

/// Sets `timestamp` when the event has none.
pub(crate) fn stamp_timestamp(event: &mut Event, ms: i64) {
    match event.timestamp_mut() {
        Some(slot) => {
            if slot.is_none() {
                *slot = Some(ms);
            }
        }
        None => {
            if let Event::Unknown(u) = event {
                u.0.entry("timestamp").or_insert_with(|| Value::from(ms));
            }
        }
    }
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
    use aguikit_core::event::{Custom, RunStarted, TextMessageContent};
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
