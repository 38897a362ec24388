//! Structural checks the reference decoder makes that plain protobuf decoding does not.
//!
//! Protobuf lets a later oneof arm replace an earlier one; the reference instead rejects an
//! envelope naming two *different* events, and a content part or part source carrying two
//! different arms in one occurrence (repeated occurrences of the same arm merge, as usual).
//! It also tells an envelope holding only arms of a later protocol version (dropped with a
//! warning, like an unknown event type over SSE) from broken bytes.

use std::ops::Range;

/// Why the bytes are not a well-formed envelope.
pub(crate) type ScanError = &'static str;

/// Number of envelope arms known to AG-UI 1.0 (fields 1..=31).
const LAST_ARM: u64 = 31;

/// Where the scan descends: the messages that hold content parts.
#[derive(Clone, Copy)]
enum Node {
    Envelope,
    /// An event message: which field holds parts or messages, and what they are.
    ToolCallResult,
    MessagesSnapshot,
    RunStarted,
    RunAgentInput,
    Message,
    InputContent,
    MediaPart,
    InputContentSource,
}

impl Node {
    /// The child node reached through length-delimited field `field`, if any.
    fn child(self, field: u64) -> Option<Node> {
        use Node::*;
        match (self, field) {
            (Envelope, 22) => Some(ToolCallResult),
            (Envelope, 9) => Some(MessagesSnapshot),
            (Envelope, 12) => Some(RunStarted),
            (ToolCallResult, 7) => Some(InputContent),
            (MessagesSnapshot, 2) => Some(Message),
            (RunStarted, 5) => Some(RunAgentInput),
            (RunAgentInput, 5) => Some(Message),
            (Message, 8) => Some(InputContent),
            (InputContent, 2..=5) => Some(MediaPart),
            (MediaPart, 1) => Some(InputContentSource),
            _ => None,
        }
    }

    /// The oneof arms of this node that must not differ within one occurrence.
    fn arms(self) -> Option<std::ops::RangeInclusive<u64>> {
        match self {
            Node::Envelope => Some(1..=LAST_ARM),
            Node::InputContent => Some(1..=5),
            Node::InputContentSource => Some(1..=3),
            _ => None,
        }
    }
}

/// Reads a varint (at most ten bytes).
#[inline]
fn varint(data: &[u8], pos: &mut usize) -> Result<u64, ScanError> {
    let mut v = 0u64;
    for shift in (0..70).step_by(7) {
        let Some(&b) = data.get(*pos) else {
            return Err("truncated varint");
        };
        *pos += 1;
        if shift < 64 {
            v |= u64::from(b & 0x7f) << shift;
        }
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err("varint longer than ten bytes")
}

/// The known arm of an envelope: its field number and where its payloads are.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ArmRef {
    /// The envelope field number (1..=31).
    pub(crate) field: u32,
    /// The first payload.
    pub(crate) first: Range<usize>,
    /// Whether the arm occurs more than once (its payloads then merge, in order).
    pub(crate) repeated: bool,
}

/// Checks the envelope (no two different known arms, no part or source with two arms,
/// well-formed top level) and finds its known arm, if any.
pub(crate) fn check_envelope(data: &[u8]) -> Result<Option<ArmRef>, ScanError> {
    // Fast path, the shape every encoder writes: one length-delimited known arm that holds
    // no content parts, spanning the whole body.
    let mut pos = 0;
    if let Ok(key) = varint(data, &mut pos)
        && key & 7 == 2
        && matches!(key >> 3, 1..=LAST_ARM)
        && Node::Envelope.child(key >> 3).is_none()
        && let Ok(len) = varint(data, &mut pos)
        && len == (data.len() - pos) as u64
    {
        return Ok(Some(ArmRef {
            field: (key >> 3) as u32,
            first: pos..data.len(),
            repeated: false,
        }));
    }
    let mut arm = None;
    scan(data, Node::Envelope, &mut arm)?;
    Ok(arm)
}

/// Every payload of envelope field `field`, in order (the envelope has been checked).
pub(crate) fn payloads(data: &[u8], field: u32) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut pos = 0;
    let mut groups = 0u32;
    std::iter::from_fn(move || {
        while pos < data.len() {
            let key = varint(data, &mut pos).ok()?;
            let (f, wire_type) = (key >> 3, key & 7);
            match wire_type {
                0 => {
                    varint(data, &mut pos).ok()?;
                }
                1 => pos += 8,
                5 => pos += 4,
                3 => groups += 1,
                4 => groups = groups.saturating_sub(1),
                _ => {
                    let len = varint(data, &mut pos).ok()? as usize;
                    let range = pos..pos + len;
                    pos += len;
                    if groups == 0 && f == u64::from(field) {
                        return Some(range);
                    }
                }
            }
        }
        None
    })
}

fn scan(data: &[u8], node: Node, found: &mut Option<ArmRef>) -> Result<(), ScanError> {
    let mut pos = 0;
    // Open groups, by field number: their contents belong to no field of this message.
    let mut groups: Vec<u64> = Vec::new();
    let mut seen_arm = 0u64;
    let arms = node.arms();
    let envelope = matches!(node, Node::Envelope);
    while pos < data.len() {
        let key = varint(data, &mut pos)?;
        let field = key >> 3;
        if field == 0 {
            return Err("field number 0");
        }
        let wire_type = key & 7;
        match wire_type {
            3 => {
                if envelope && groups.is_empty() && field <= LAST_ARM {
                    return Err("an event arm that is not a message");
                }
                groups.push(field);
                continue;
            }
            4 => {
                if groups.pop() != Some(field) {
                    return Err("unbalanced end-group tag");
                }
                continue;
            }
            _ => {}
        }
        let top = groups.is_empty();
        // The envelope counts an arm whatever its wire type; inner oneofs only as messages.
        if top && arms.as_ref().is_some_and(|r| r.contains(&field)) && (envelope || wire_type == 2)
        {
            if seen_arm != 0 && seen_arm != field {
                return Err(match node {
                    Node::Envelope => "the envelope carries two different events",
                    Node::InputContent => "a content part carries more than one arm",
                    _ => "a part source carries more than one arm",
                });
            }
            seen_arm = field;
            if envelope && wire_type != 2 {
                return Err("an event arm that is not a message");
            }
        }
        match wire_type {
            0 => {
                varint(data, &mut pos)?;
            }
            1 => pos += 8,
            5 => pos += 4,
            2 => {
                let len = varint(data, &mut pos)?;
                if len > (data.len() - pos) as u64 {
                    return Err("length beyond the end of the message");
                }
                let end = pos + len as usize;
                if top {
                    if let Some(child) = node.child(field) {
                        scan(&data[pos..end], child, found)?;
                    }
                    if envelope && field <= LAST_ARM {
                        match found {
                            Some(arm) => arm.repeated = true,
                            None => {
                                *found = Some(ArmRef {
                                    field: field as u32,
                                    first: pos..end,
                                    repeated: false,
                                })
                            }
                        }
                    }
                }
                pos = end;
            }
            _ => return Err("invalid wire type"),
        }
        if pos > data.len() {
            return Err("value beyond the end of the message");
        }
    }
    if !groups.is_empty() {
        return Err("unterminated group");
    }
    Ok(())
}

/// A varint of at most `max_bytes` bytes whose last byte is at most `last_max` (a tag or
/// length must fit 32 bits, a value 64): `None` when unreadable or too wide.
fn bounded_varint(data: &[u8], pos: &mut usize, max_bytes: usize, last_max: u8) -> Option<u64> {
    let mut v = 0u64;
    for i in 0..max_bytes {
        let b = *data.get(*pos)?;
        *pos += 1;
        if i + 1 == max_bytes && b > last_max {
            return None;
        }
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

fn varint32(data: &[u8], pos: &mut usize) -> Option<u64> {
    bounded_varint(data, pos, 5, 0x0f)
}

fn varint64(data: &[u8], pos: &mut usize) -> Option<u64> {
    bounded_varint(data, pos, 10, 0x01)
}

/// Walks `data` as one protobuf message level (without descending into fields). For the
/// envelope, a top-level known arm means "not a later-protocol event", and every top-level
/// length-delimited field must itself walk as a message; returns how many there were.
/// `None` when the bytes are broken.
fn walk(data: &[u8], envelope: bool) -> Option<usize> {
    let mut pos = 0;
    let mut groups: Vec<u64> = Vec::new();
    let mut future = 0;
    while pos < data.len() {
        let key = varint32(data, &mut pos)?;
        let field = key >> 3;
        if field == 0 {
            return None;
        }
        let top = groups.is_empty();
        let known = envelope && top && (1..=LAST_ARM).contains(&field);
        match key & 7 {
            3 => {
                if known {
                    return None;
                }
                groups.push(field);
            }
            4 => {
                if groups.pop() != Some(field) {
                    return None;
                }
            }
            0 => {
                if known {
                    return None;
                }
                varint64(data, &mut pos)?;
            }
            1 => {
                if known {
                    return None;
                }
                pos += 8;
            }
            5 => {
                if known {
                    return None;
                }
                pos += 4;
            }
            2 => {
                let len = varint32(data, &mut pos)?;
                if len > (data.len().saturating_sub(pos)) as u64 {
                    return None;
                }
                let end = pos + len as usize;
                if envelope && top {
                    if known || walk(&data[pos..end], false).is_none() {
                        return None;
                    }
                    future += 1;
                }
                pos = end;
            }
            _ => return None,
        }
        if pos > data.len() {
            return None;
        }
    }
    groups.is_empty().then_some(future)
}

/// Whether an envelope with no known arm names one or more arms of a later protocol
/// (unknown length-delimited fields whose payloads are well-formed protobuf) and nothing
/// broken: such a frame is an event this build predates, to be dropped, not an error.
pub(crate) fn names_only_future_arms(data: &[u8]) -> bool {
    walk(data, true).is_some_and(|future| future > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_different_arms_are_rejected() {
        // text_message_end twice: merged, fine; then text_message_start: rejected.
        let end = [0x1a, 0x04, 0x0a, 0x02, 0x08, 0x02];
        let mut twice = end.to_vec();
        twice.extend(end);
        let arm = check_envelope(&twice).unwrap().unwrap();
        assert_eq!(
            (arm.field, arm.first.clone(), arm.repeated),
            (3, 2..6, true)
        );
        assert_eq!(payloads(&twice, 3).collect::<Vec<_>>(), [2..6, 8..12]);
        twice.extend([0x0a, 0x02, 0x0a, 0x00]);
        assert!(check_envelope(&twice).is_err());
    }

    #[test]
    fn part_arms_are_checked_per_occurrence() {
        // TOOL_CALL_RESULT whose one part carries a text and an image arm.
        let part = [0x0a, 0x00, 0x12, 0x00];
        let mut tcr = vec![0x3a, part.len() as u8];
        tcr.extend(part);
        let mut env = vec![0xb2, 0x01, tcr.len() as u8];
        env.extend(&tcr);
        assert_eq!(
            check_envelope(&env),
            Err("a content part carries more than one arm")
        );
    }

    #[test]
    fn structural_garbage_is_rejected() {
        for bad in [
            &[0x00][..],
            &[0x0f],
            &[0x0e],
            &[0x0c],
            &[0x0b],
            &[0x0a, 0x05, 0x00],
            &[0x80],
        ] {
            assert!(check_envelope(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn later_protocol_arms() {
        // Field 40, a message holding field 1 = "x".
        assert!(names_only_future_arms(&[
            0xc2, 0x02, 0x03, 0x0a, 0x01, b'x'
        ]));
        // Its payload is not protobuf.
        assert!(!names_only_future_arms(&[0xc2, 0x02, 0x02, 0x0a, 0x05]));
        // Nothing at all.
        assert!(!names_only_future_arms(&[]));
        // Only a varint.
        assert!(!names_only_future_arms(&[0xc0, 0x02, 0x01]));
        // A known arm.
        assert!(!names_only_future_arms(&[0x0a, 0x00]));
    }
}
