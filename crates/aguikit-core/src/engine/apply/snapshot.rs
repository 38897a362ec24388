//! `MESSAGES_SNAPSHOT` merge (rules AP14–AP18).

use super::store::Store;
use crate::Message;
use crate::event::MessagesSnapshot;
use crate::metadata::{AuthoritativeActivityTypes, authoritative_activity_types};
use std::collections::HashMap;

/// Merges a snapshot into the local messages.
///
/// - A local message whose id occurs in the snapshot is kept in its local position and
///   replaced by the snapshot's **last** message with that id. Every local entry with that
///   id gets the same object (so a later change to it shows in each), as in the reference.
/// - A local message whose id does not occur is kept only if it is a preserved client-only
///   message: reasoning when the snapshot has no reasoning message; activity according to the
///   snapshot's `authoritativeActivityTypes` declaration.
/// - Then every snapshot message whose id matched no local message is appended, in snapshot
///   order (a new id occurring twice is appended twice).
pub(super) fn merge_snapshot(store: &mut Store, event: &MessagesSnapshot) {
    let snapshot = &event.messages;
    let mut last: HashMap<&str, usize> = HashMap::with_capacity(snapshot.len());
    for (i, m) in snapshot.iter().enumerate() {
        last.insert(m.id(), i);
    }
    let has_activity = snapshot.iter().any(|m| matches!(m, Message::Activity(_)));
    let has_reasoning = snapshot.iter().any(|m| matches!(m, Message::Reasoning(_)));
    let authority = authoritative_activity_types(event.metadata.as_deref());
    let preserved = |m: &Message| match m {
        Message::Activity(a) => match &authority {
            AuthoritativeActivityTypes::Only(types) => !types.contains(&a.activity_type),
            AuthoritativeActivityTypes::All => false,
            AuthoritativeActivityTypes::Undeclared => !has_activity,
        },
        Message::Reasoning(_) => !has_reasoning,
        _ => false,
    };

    let (old_slots, old_order) = std::mem::take(store).into_parts();
    let mut old_slots: Vec<Option<Message>> = old_slots.into_iter().map(Some).collect();
    let mut moved: Vec<Option<usize>> = vec![None; old_slots.len()];
    let mut slots: Vec<Message> = Vec::with_capacity(old_order.len() + snapshot.len());
    let mut order: Vec<usize> = Vec::with_capacity(old_order.len() + snapshot.len());
    // Snapshot ids that matched a local message → the slot of their replacement.
    let mut replaced: HashMap<&str, usize> = HashMap::new();

    for old in old_order {
        if let Some(slot) = moved[old] {
            order.push(slot);
            continue;
        }
        let Some(message) = old_slots[old].as_ref() else {
            continue;
        };
        if let Some(&i) = last.get(message.id()) {
            let id = snapshot[i].id();
            let slot = *replaced.entry(id).or_insert_with(|| {
                slots.push(snapshot[i].clone());
                slots.len() - 1
            });
            order.push(slot);
        } else if preserved(message)
            && let Some(message) = old_slots[old].take()
        {
            slots.push(message);
            moved[old] = Some(slots.len() - 1);
            order.push(slots.len() - 1);
        }
    }
    for message in snapshot {
        if !replaced.contains_key(message.id()) {
            slots.push(message.clone());
            order.push(slots.len() - 1);
        }
    }
    *store = Store::from_parts(slots, order);
}
