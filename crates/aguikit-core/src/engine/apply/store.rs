//! The message list of the applier: a slab of messages, the conversation order as a list of
//! slot numbers, and indexes that answer the reference's "first match in order" look-ups in
//! constant time.
//!
//! Why a slab: the reference keeps a JavaScript array of message objects. Most events mutate
//! the object that `messages.find(...)` returns, so with duplicate ids only the first match
//! changes. After a `MESSAGES_SNAPSHOT`, however, several local entries with one id are all
//! replaced by the *same* snapshot object, and a later mutation then shows in each of them.
//! Two order entries naming one slot reproduce that sharing exactly.
//!
//! Cost model: a look-up by message id or tool-call id is one hash probe; appending is O(1);
//! inserting in the middle (tool results) costs O(number of entries after the insertion
//! point), like the reference's `splice`. Structural events (`MESSAGES_SNAPSHOT`, replacing a
//! shared message) rebuild the indexes in O(size of the conversation).

use crate::message::{AssistantMessage, Role};
use crate::{Message, ToolCall};
use std::collections::HashMap;
use std::collections::hash_map::Entry;

/// Sentinel for "this slot is not in the order".
const NOWHERE: usize = usize::MAX;

/// Messages in conversation order, with first-match indexes.
#[derive(Debug, Default, Clone)]
pub(crate) struct Store {
    /// Every message object; a slot may be named by several order entries (sharing).
    slots: Vec<Message>,
    /// How many order entries name each slot.
    refs: Vec<u32>,
    /// The first position of each slot in `order` ([`NOWHERE`] when unreferenced).
    first_pos: Vec<usize>,
    /// The conversation: slot numbers in order.
    order: Vec<usize>,
    /// Message id → slot of the first message in order with that id.
    by_id: HashMap<String, usize>,
    /// Tool-call id → (slot, index in its `toolCalls`) of the first call with that id, in
    /// message order then call order.
    tools: HashMap<String, (usize, usize)>,
    /// The last message id resolved by [`Store::find_hot`] and its slot: streamed deltas
    /// name the same message many times in a row, and comparing a short string that is in
    /// cache is cheaper than hashing it and probing the index.
    hot_message: Hot,
    /// The same for tool-call ids ([`Store::find_tool_hot`]).
    hot_tool: Hot,
}

/// A one-entry look-up cache; `valid` is cleared whenever an index entry may have moved.
#[derive(Debug, Default, Clone)]
struct Hot {
    valid: bool,
    id: String,
    slot: usize,
    index: usize,
}

impl Hot {
    #[inline]
    fn get(&self, id: &str) -> Option<(usize, usize)> {
        (self.valid && self.id == id).then_some((self.slot, self.index))
    }

    fn set(&mut self, id: &str, (slot, index): (usize, usize)) {
        self.id.clear();
        self.id.push_str(id);
        self.slot = slot;
        self.index = index;
        self.valid = true;
    }
}

impl Store {
    /// A store holding `messages` in order, each its own object.
    pub(crate) fn from_messages(messages: Vec<Message>) -> Store {
        let order = (0..messages.len()).collect();
        Store::from_parts(messages, order)
    }

    /// A store from message objects and an order naming them (possibly several times).
    pub(crate) fn from_parts(slots: Vec<Message>, order: Vec<usize>) -> Store {
        let mut store = Store {
            slots,
            order,
            ..Store::default()
        };
        store.rebuild();
        store
    }

    /// Recomputes reference counts, first positions and both indexes from `order`.
    fn rebuild(&mut self) {
        self.hot_message.valid = false;
        self.hot_tool.valid = false;
        let n = self.slots.len();
        self.refs.clear();
        self.refs.resize(n, 0);
        self.first_pos.clear();
        self.first_pos.resize(n, NOWHERE);
        self.by_id.clear();
        self.tools.clear();
        for (pos, &slot) in self.order.iter().enumerate() {
            self.refs[slot] += 1;
            if self.first_pos[slot] != NOWHERE {
                continue;
            }
            self.first_pos[slot] = pos;
            index_ids(&mut self.by_id, &mut self.tools, &self.slots[slot], slot);
        }
    }

    /// Number of entries in the conversation.
    pub(crate) fn len(&self) -> usize {
        self.order.len()
    }

    /// The message at `pos` in conversation order.
    pub(crate) fn at(&self, pos: usize) -> Option<&Message> {
        self.order.get(pos).map(|&s| &self.slots[s])
    }

    /// The messages in conversation order.
    pub(crate) fn iter(&self) -> impl DoubleEndedIterator<Item = &Message> + ExactSizeIterator {
        self.order.iter().map(|&s| &self.slots[s])
    }

    /// The conversation as owned messages (shared objects become copies).
    pub(crate) fn into_messages(self) -> Vec<Message> {
        let Store {
            slots, refs, order, ..
        } = self;
        let mut remaining = refs;
        let mut slots: Vec<Option<Message>> = slots.into_iter().map(Some).collect();
        // Each slot is cloned for all but its last entry, which takes it.
        order
            .into_iter()
            .filter_map(|s| {
                remaining[s] -= 1;
                if remaining[s] == 0 {
                    slots[s].take()
                } else {
                    slots[s].clone()
                }
            })
            .collect()
    }

    /// The slot of the first message with `id`.
    #[inline]
    pub(crate) fn find(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).copied()
    }

    /// [`Store::find`] through the one-entry cache (for streamed deltas).
    #[inline]
    pub(crate) fn find_hot(&mut self, id: &str) -> Option<usize> {
        if let Some((slot, _)) = self.hot_message.get(id) {
            return Some(slot);
        }
        let slot = self.find(id)?;
        self.hot_message.set(id, (slot, 0));
        Some(slot)
    }

    /// [`Store::find_tool`] through the one-entry cache (for streamed arguments).
    #[inline]
    pub(crate) fn find_tool_hot(&mut self, id: &str) -> Option<(usize, usize)> {
        if let Some(found) = self.hot_tool.get(id) {
            return Some(found);
        }
        let found = self.find_tool(id)?;
        self.hot_tool.set(id, found);
        Some(found)
    }

    /// (slot, call index) of the first tool call with `id`.
    #[inline]
    pub(crate) fn find_tool(&self, id: &str) -> Option<(usize, usize)> {
        self.tools.get(id).copied()
    }

    /// The message in `slot`.
    #[inline]
    pub(crate) fn get(&self, slot: usize) -> &Message {
        &self.slots[slot]
    }

    /// The message in `slot`, to change in place (every entry naming the slot sees it).
    #[inline]
    pub(crate) fn get_mut(&mut self, slot: usize) -> &mut Message {
        &mut self.slots[slot]
    }

    /// The tool call at (`slot`, `index`).
    pub(crate) fn tool_call_mut(&mut self, slot: usize, index: usize) -> Option<&mut ToolCall> {
        match &mut self.slots[slot] {
            Message::Assistant(a) => a.tool_calls.as_mut()?.get_mut(index),
            _ => None,
        }
    }

    /// True when more than one order entry names `slot`.
    pub(crate) fn is_shared(&self, slot: usize) -> bool {
        self.refs[slot] > 1
    }

    /// The first position of `slot` in conversation order.
    pub(crate) fn position(&self, slot: usize) -> usize {
        self.first_pos[slot]
    }

    /// Appends a message; returns its slot.
    pub(crate) fn push(&mut self, message: Message) -> usize {
        let pos = self.order.len();
        let slot = self.new_slot(message, pos);
        self.order.push(slot);
        index_ids(&mut self.by_id, &mut self.tools, &self.slots[slot], slot);
        slot
    }

    /// Inserts a message at `pos` (`pos <= len`); returns its slot.
    pub(crate) fn insert(&mut self, pos: usize, message: Message) -> usize {
        if pos >= self.order.len() {
            return self.push(message);
        }
        // The inserted message may become the first match for its id or its tool calls.
        self.hot_message.valid = false;
        self.hot_tool.valid = false;
        let slot = self.new_slot(message, pos);
        self.order.insert(pos, slot);
        // Every entry after `pos` moved one place. A slot's first position moves iff it was
        // at or after `pos`; walking backwards, the first occurrence of each slot is the last
        // one visited, so comparing with the old position updates exactly that one.
        for q in (pos + 1..self.order.len()).rev() {
            let s = self.order[q];
            if self.first_pos[s] == q - 1 {
                self.first_pos[s] = q;
            }
        }
        let first_pos = &self.first_pos;
        let message = &self.slots[slot];
        match self.by_id.entry(message.id().to_owned()) {
            Entry::Vacant(v) => {
                v.insert(slot);
            }
            Entry::Occupied(mut o) => {
                if pos < first_pos[*o.get()] {
                    o.insert(slot);
                }
            }
        }
        for (i, call) in tool_calls(message).iter().enumerate() {
            match self.tools.entry(call.id.clone()) {
                Entry::Vacant(v) => {
                    v.insert((slot, i));
                }
                Entry::Occupied(mut o) => {
                    let (other, _) = *o.get();
                    if other != slot && pos < first_pos[other] {
                        o.insert((slot, i));
                    }
                }
            }
        }
        slot
    }

    fn new_slot(&mut self, message: Message, pos: usize) -> usize {
        let slot = self.slots.len();
        self.slots.push(message);
        self.refs.push(1);
        self.first_pos.push(pos);
        slot
    }

    /// Appends a tool call to the assistant message in `slot` (creating its `toolCalls`).
    /// Returns false when the slot does not hold an assistant message.
    pub(crate) fn push_tool_call(&mut self, slot: usize, call: ToolCall) -> bool {
        let Message::Assistant(a) = &mut self.slots[slot] else {
            return false;
        };
        let calls = a.tool_calls.get_or_insert_with(Vec::new);
        let index = calls.len();
        let id = call.id.clone();
        calls.push(call);
        let first_pos = &self.first_pos;
        match self.tools.entry(id) {
            Entry::Vacant(v) => {
                v.insert((slot, index));
            }
            Entry::Occupied(mut o) => {
                let (other, _) = *o.get();
                if other != slot && first_pos[slot] < first_pos[other] {
                    o.insert((slot, index));
                    self.hot_tool.valid = false;
                }
            }
        }
        true
    }

    /// Replaces the message object in `slot` (every entry naming it sees the new one).
    pub(crate) fn replace_slot(&mut self, slot: usize, message: Message) {
        let had_calls = !tool_calls(&self.slots[slot]).is_empty();
        let has_calls = !tool_calls(&message).is_empty();
        self.slots[slot] = message;
        if had_calls || has_calls {
            self.rebuild();
        }
    }

    /// Puts a new message object at the first position of `slot` only; other entries naming
    /// `slot` keep the old object. Returns the new slot.
    pub(crate) fn replace_first_entry(&mut self, slot: usize, message: Message) -> usize {
        let pos = self.first_pos[slot];
        let new = self.slots.len();
        self.slots.push(message);
        self.refs.push(0);
        self.first_pos.push(NOWHERE);
        self.order[pos] = new;
        self.rebuild();
        new
    }

    /// Takes the store apart: message objects and the order naming them.
    pub(crate) fn into_parts(self) -> (Vec<Message>, Vec<usize>) {
        (self.slots, self.order)
    }

    /// Role of the message at `pos`.
    pub(crate) fn role_at(&self, pos: usize) -> Role {
        self.slots[self.order[pos]].role()
    }
}

/// The tool calls of a message (empty unless it is an assistant message with some).
pub(crate) fn tool_calls(message: &Message) -> &[ToolCall] {
    match message {
        Message::Assistant(AssistantMessage {
            tool_calls: Some(calls),
            ..
        }) => calls,
        _ => &[],
    }
}

/// Indexes `message`, in `slot`, by its id and its tool calls' ids, where no earlier
/// message holds them (the first holder of an id is the one found).
fn index_ids(
    by_id: &mut HashMap<String, usize>,
    tools: &mut HashMap<String, (usize, usize)>,
    message: &Message,
    slot: usize,
) {
    if !by_id.contains_key(message.id()) {
        by_id.insert(message.id().to_owned(), slot);
    }
    for (i, call) in tool_calls(message).iter().enumerate() {
        if !tools.contains_key(&call.id) {
            tools.insert(call.id.clone(), (slot, i));
        }
    }
}
