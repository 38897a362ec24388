//! The protobuf numbering of event types: the `EventType` enum value and the envelope arm
//! of each event (two numberings, both different from the JSON declaration order).

use crate::event::EventType;

/// `(type, EventType enum value, envelope arm)` for all 31 event types, in the declaration
/// order of [`EventType`] (so a type's row is its discriminant).
const TABLE: [(EventType, u64, u32); 31] = [
    (EventType::RunStarted, 11, 12),
    (EventType::RunFinished, 12, 13),
    (EventType::RunError, 13, 14),
    (EventType::StepStarted, 14, 15),
    (EventType::StepFinished, 15, 16),
    (EventType::TextMessageStart, 0, 1),
    (EventType::TextMessageContent, 1, 2),
    (EventType::TextMessageEnd, 2, 3),
    (EventType::TextMessageChunk, 19, 17),
    (EventType::ToolCallStart, 3, 4),
    (EventType::ToolCallArgs, 4, 5),
    (EventType::ToolCallEnd, 5, 6),
    (EventType::ToolCallChunk, 20, 18),
    (EventType::ToolCallResult, 21, 22),
    (EventType::StateSnapshot, 6, 7),
    (EventType::StateDelta, 7, 8),
    (EventType::MessagesSnapshot, 8, 9),
    (EventType::ActivitySnapshot, 22, 23),
    (EventType::ActivityDelta, 23, 24),
    (EventType::Raw, 9, 10),
    (EventType::Custom, 10, 11),
    (EventType::ReasoningStart, 24, 25),
    (EventType::ReasoningMessageStart, 25, 26),
    (EventType::ReasoningMessageContent, 26, 27),
    (EventType::ReasoningMessageEnd, 27, 28),
    (EventType::ReasoningMessageChunk, 28, 29),
    (EventType::ReasoningEnd, 29, 30),
    (EventType::ReasoningEncryptedValue, 30, 31),
    (EventType::SubagentStarted, 16, 19),
    (EventType::SubagentFinished, 17, 20),
    (EventType::SubagentError, 18, 21),
];

/// Index of `t` in [`TABLE`].
fn row(t: EventType) -> usize {
    t as usize
}

/// The `EventType` enum value of `t` on the protobuf wire.
pub(crate) fn proto_type_of(t: EventType) -> u64 {
    TABLE[row(t)].1
}

/// The envelope arm (field number of `ag_ui.Event`) carrying `t`.
pub(crate) fn arm_of(t: EventType) -> u32 {
    TABLE[row(t)].2
}

/// The event type carried by envelope arm `arm`.
pub(crate) fn type_of_arm(arm: u32) -> Option<EventType> {
    TABLE.iter().find(|r| r.2 == arm).map(|r| r.0)
}

/// The event type named by a wire `EventType` enum value.
pub(crate) fn type_of_proto(value: i32) -> Option<EventType> {
    TABLE
        .iter()
        .find(|r| r.1 as i64 == i64::from(value))
        .map(|r| r.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_has_distinct_numbers() {
        for t in EventType::ALL {
            assert_eq!(type_of_arm(arm_of(*t)), Some(*t));
            assert_eq!(type_of_proto(proto_type_of(*t) as i32), Some(*t));
        }
        assert_eq!(EventType::ALL.len(), TABLE.len());
        for (i, t) in EventType::ALL.iter().enumerate() {
            assert_eq!(TABLE[i].0, *t, "row {i}");
        }
    }
}
