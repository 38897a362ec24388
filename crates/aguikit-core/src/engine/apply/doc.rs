//! The compact state document: the state a folder that does not hand events back patches.
//!
//! A `serde_json::Value` with ordered objects takes 72 bytes, whatever it holds, and a
//! patch that removes or inserts an array element moves every element after it: on a state
//! of a few thousand items most of the applier's time went into those moves. A [`Doc`]
//! takes 24 bytes (an array and an object live behind one pointer); a long array is kept
//! in blocks, so that a removal moves the elements of one block; an object of up to
//! [`SCAN_MEMBERS`] members is a plain list, searched without hashing, and a larger one an
//! index map (SipHash, as serde_json's). The patch operations are the same code as for a
//! `Value` ([`crate::patch::Node`]), so the semantics cannot drift apart.

use std::fmt;
use std::hash::RandomState;
use std::ops::{Index, IndexMut};

use indexmap::IndexMap;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::patch::{Children, Items, Members, Node, SCAN_MEMBERS, View};

/// An object's members, in order; keys are unique.
#[derive(Debug, Clone)]
pub(crate) enum DocMembers {
    /// Up to [`SCAN_MEMBERS`] members.
    Few(Vec<(Box<str>, Doc)>),
    /// More: an index map. An object that grows past the limit moves here and stays.
    Many(IndexMap<Box<str>, Doc, RandomState>),
}

/// A JSON value, compact. Converts to and from `Value` without loss, members in order.
#[derive(Debug, Clone, Default)]
pub(crate) enum Doc {
    #[default]
    Null,
    Bool(bool),
    Number(Number),
    String(Box<str>),
    // Boxed so that an element takes 24 bytes: the elements are what a removal moves.
    Array(Box<DocItems>),
    Object(Box<DocMembers>),
}

/// An array's elements: one vector while short, then blocks of at most [`BLOCK`]
/// elements, so that an insertion or a removal moves the elements of one block, not of the
/// whole array.
#[derive(Debug, Clone)]
pub(crate) enum DocItems {
    /// Up to [`BLOCK`] elements.
    Flat(Vec<Doc>),
    /// More; no block is empty. `len` is the number of elements and `starts[b]` the index
    /// of block `b`'s first element, so that an element is found by a binary search.
    Blocks {
        len: usize,
        blocks: Vec<Vec<Doc>>,
        starts: Vec<usize>,
    },
}

/// The most elements a block holds (a removal moves at most this many 24-byte elements);
/// a full block splits in two, and a block of under a quarter of it takes in its successor
/// when both fit in one.
const BLOCK: usize = 128;

impl DocItems {
    /// The elements of `items`, in blocks if there are many.
    pub(crate) fn from_vec(items: Vec<Doc>) -> Self {
        if items.len() <= BLOCK {
            return DocItems::Flat(items);
        }
        // Half-full blocks: room to grow on either side of any element.
        let len = items.len();
        let mut blocks = Vec::with_capacity(len.div_ceil(BLOCK / 2));
        let mut items = items.into_iter();
        while items.len() > 0 {
            blocks.push(items.by_ref().take(BLOCK / 2).collect());
        }
        let starts = (0..blocks.len()).map(|b| b * (BLOCK / 2)).collect();
        DocItems::Blocks {
            len,
            blocks,
            starts,
        }
    }

    /// The block holding element `index` (< len) and the element's index in it; past the
    /// end, the last block and an index past its end (only an insertion asks for the end).
    #[inline]
    fn locate(starts: &[usize], index: usize) -> (usize, usize) {
        // `starts[0]` is 0, so at least one start is at or before `index`.
        let b = starts.partition_point(|&s| s <= index) - 1;
        (b, index - starts[b])
    }
}

impl DocMembers {
    /// No members, room for `len`.
    fn with_capacity(len: usize) -> Self {
        if len <= SCAN_MEMBERS {
            DocMembers::Few(Vec::with_capacity(len))
        } else {
            DocMembers::Many(IndexMap::with_capacity_and_hasher(len, RandomState::new()))
        }
    }

    /// The index map of these members, which it becomes if it was a list.
    fn many(&mut self) -> &mut IndexMap<Box<str>, Doc, RandomState> {
        if let DocMembers::Few(list) = self {
            let mut map = IndexMap::with_capacity_and_hasher(list.len() + 1, RandomState::new());
            map.extend(list.drain(..));
            *self = DocMembers::Many(map);
        }
        match self {
            DocMembers::Many(map) => map,
            DocMembers::Few(_) => unreachable!("the list was just made a map"),
        }
    }

    /// Sets member `key`: a new key goes last, a repeated one keeps its place and takes
    /// the new value (as a `Value`'s map does).
    fn set(&mut self, key: Box<str>, value: Doc) {
        if let DocMembers::Many(map) = self {
            // The index map's own insert keeps a repeated key's place: one lookup, not two.
            map.insert(key, value);
            return;
        }
        match self.get_mut(&key) {
            Some(slot) => *slot = value,
            None => self.add(key, value),
        }
    }

    /// Adds a member that is not there, last.
    fn add(&mut self, key: Box<str>, value: Doc) {
        match self {
            DocMembers::Few(list) if list.len() < SCAN_MEMBERS => list.push((key, value)),
            _ => {
                self.many().insert(key, value);
            }
        }
    }
}

impl From<Value> for Doc {
    fn from(value: Value) -> Self {
        match value {
            Value::Null => Doc::Null,
            Value::Bool(b) => Doc::Bool(b),
            Value::Number(n) => Doc::Number(n),
            Value::String(s) => Doc::String(s.into_boxed_str()),
            Value::Array(items) => Doc::array(items.into_iter().map(Doc::from).collect()),
            Value::Object(map) => {
                let mut out = DocMembers::with_capacity(map.len());
                for (key, value) in map {
                    out.add(key.into_boxed_str(), Doc::from(value));
                }
                Doc::Object(Box::new(out))
            }
        }
    }
}

impl Doc {
    /// `{}`.
    pub(crate) fn empty_object() -> Doc {
        Doc::Object(Box::new(DocMembers::Few(Vec::new())))
    }

    /// An array of `items`.
    fn array(items: Vec<Doc>) -> Doc {
        Doc::Array(Box::new(DocItems::from_vec(items)))
    }

    /// The document as a `Value`.
    pub(crate) fn to_value(&self) -> Value {
        match self {
            Doc::Null => Value::Null,
            Doc::Bool(b) => Value::Bool(*b),
            Doc::Number(n) => Value::Number(n.clone()),
            Doc::String(s) => Value::String(s.to_string()),
            Doc::Array(items) => Value::Array(Items::iter(&**items).map(Doc::to_value).collect()),
            Doc::Object(map) => {
                let mut out = Map::with_capacity(map.len());
                for (key, value) in map.iter() {
                    out.insert(key.to_owned(), value.to_value());
                }
                Value::Object(out)
            }
        }
    }

    /// The document as a `Value`, taken apart on the way.
    pub(crate) fn into_value(self) -> Value {
        match self {
            Doc::Null => Value::Null,
            Doc::Bool(b) => Value::Bool(b),
            Doc::Number(n) => Value::Number(n),
            Doc::String(s) => Value::String(s.into_string()),
            Doc::Array(items) => Value::Array(match *items {
                DocItems::Flat(items) => items.into_iter().map(Doc::into_value).collect(),
                DocItems::Blocks { len, blocks, .. } => {
                    let mut out = Vec::with_capacity(len);
                    out.extend(blocks.into_iter().flatten().map(Doc::into_value));
                    out
                }
            }),
            Doc::Object(map) => {
                let mut out = Map::with_capacity(map.len());
                let mut put = |key: Box<str>, value: Doc| {
                    out.insert(key.into_string(), value.into_value());
                };
                match *map {
                    DocMembers::Few(list) => list.into_iter().for_each(|(k, v)| put(k, v)),
                    DocMembers::Many(map) => map.into_iter().for_each(|(k, v)| put(k, v)),
                }
                Value::Object(out)
            }
        }
    }

    /// The document of a JSON text that `serde_json` wrote (a snapshot kept as text); a
    /// repeated key keeps its first place and its last value, as in a `Value`.
    pub(crate) fn of_text(json: &[u8]) -> Doc {
        serde_json::from_slice(json).unwrap_or_else(|_| {
            debug_assert!(false, "a document's text does not read back");
            Doc::Null
        })
    }
}

impl Node for Doc {
    type Items = DocItems;
    type Members = DocMembers;

    #[inline]
    fn view(&self) -> View<'_, Self> {
        match self {
            Doc::Null => View::Null,
            Doc::Bool(b) => View::Bool(*b),
            Doc::Number(n) => View::Number(n),
            Doc::String(s) => View::String(s),
            Doc::Array(items) => View::Array(&**items),
            Doc::Object(map) => View::Object(&**map),
        }
    }

    #[inline]
    fn children(&mut self) -> Option<Children<'_, Self>> {
        match self {
            Doc::Array(items) => Some(Children::Array(&mut **items)),
            Doc::Object(map) => Some(Children::Object(&mut **map)),
            _ => None,
        }
    }

    #[inline]
    fn from_value(value: Value) -> Self {
        Doc::from(value)
    }
}

impl Index<usize> for DocItems {
    type Output = Doc;

    /// Element `index`; panics past the end, like a slice.
    #[inline]
    fn index(&self, index: usize) -> &Doc {
        match self {
            DocItems::Flat(items) => &items[index],
            DocItems::Blocks { blocks, starts, .. } => {
                let (b, i) = DocItems::locate(starts, index);
                &blocks[b][i]
            }
        }
    }
}

impl IndexMut<usize> for DocItems {
    #[inline]
    fn index_mut(&mut self, index: usize) -> &mut Doc {
        match self {
            DocItems::Flat(items) => &mut items[index],
            DocItems::Blocks { blocks, starts, .. } => {
                let (b, i) = DocItems::locate(starts, index);
                &mut blocks[b][i]
            }
        }
    }
}

impl Items<Doc> for DocItems {
    #[inline]
    fn len(&self) -> usize {
        match self {
            DocItems::Flat(items) => items.len(),
            DocItems::Blocks { len, .. } => *len,
        }
    }

    fn insert(&mut self, index: usize, value: Doc) {
        match self {
            DocItems::Flat(items) if items.len() < BLOCK => items.insert(index, value),
            DocItems::Flat(items) => {
                let mut all = std::mem::take(items);
                all.insert(index, value);
                *self = DocItems::from_vec(all);
            }
            DocItems::Blocks {
                len,
                blocks,
                starts,
            } => {
                let (mut b, mut i) = DocItems::locate(starts, index);
                if blocks[b].len() == BLOCK {
                    let tail = blocks[b].split_off(BLOCK / 2);
                    blocks.insert(b + 1, tail);
                    starts.insert(b + 1, starts[b] + BLOCK / 2);
                    if i > BLOCK / 2 {
                        (b, i) = (b + 1, i - BLOCK / 2);
                    }
                }
                blocks[b].insert(i, value);
                starts[b + 1..].iter_mut().for_each(|s| *s += 1);
                *len += 1;
            }
        }
    }

    fn remove(&mut self, index: usize) -> Option<Doc> {
        let (len, blocks, starts) = match self {
            DocItems::Flat(items) => return (index < items.len()).then(|| items.remove(index)),
            DocItems::Blocks {
                len,
                blocks,
                starts,
            } => (len, blocks, starts),
        };
        if index >= *len {
            return None;
        }
        let (b, i) = DocItems::locate(starts, index);
        let value = blocks[b].remove(i);
        starts[b + 1..].iter_mut().for_each(|s| *s -= 1);
        *len -= 1;
        let size = blocks[b].len();
        if size == 0 {
            blocks.remove(b);
            starts.remove(b);
        } else if size < BLOCK / 4 {
            // Join a small block with a neighbour it fits with.
            if b + 1 < blocks.len() && size + blocks[b + 1].len() <= BLOCK {
                let next = blocks.remove(b + 1);
                starts.remove(b + 1);
                blocks[b].extend(next);
            } else if b > 0 && size + blocks[b - 1].len() <= BLOCK {
                let this = blocks.remove(b);
                starts.remove(b);
                blocks[b - 1].extend(this);
            }
        }
        if *len <= BLOCK / 2 {
            let all = std::mem::take(blocks).into_iter().flatten().collect();
            *self = DocItems::Flat(all);
        }
        Some(value)
    }

    fn iter<'a>(&'a self) -> impl Iterator<Item = &'a Doc>
    where
        Doc: 'a,
    {
        let (flat, blocks) = match self {
            DocItems::Flat(items) => (Some(items.iter()), None),
            DocItems::Blocks { blocks, .. } => (None, Some(blocks.iter().flatten())),
        };
        flat.into_iter()
            .flatten()
            .chain(blocks.into_iter().flatten())
    }
}

impl Members<Doc> for DocMembers {
    #[inline]
    fn len(&self) -> usize {
        match self {
            DocMembers::Few(list) => list.len(),
            DocMembers::Many(map) => map.len(),
        }
    }

    #[inline]
    fn get(&self, key: &str) -> Option<&Doc> {
        match self {
            DocMembers::Few(list) => list.iter().find_map(|(k, v)| (**k == *key).then_some(v)),
            DocMembers::Many(map) => map.get(key),
        }
    }

    #[inline]
    fn get_mut(&mut self, key: &str) -> Option<&mut Doc> {
        match self {
            DocMembers::Few(list) => list
                .iter_mut()
                .find_map(|(k, v)| (**k == *key).then_some(v)),
            DocMembers::Many(map) => map.get_mut(key),
        }
    }

    fn iter<'a>(&'a self) -> impl Iterator<Item = (&'a str, &'a Doc)>
    where
        Doc: 'a,
    {
        let (few, many) = match self {
            DocMembers::Few(list) => (Some(list.iter().map(|(k, v)| (&**k, v))), None),
            DocMembers::Many(map) => (None, Some(map.iter().map(|(k, v)| (&**k, v)))),
        };
        few.into_iter().flatten().chain(many.into_iter().flatten())
    }

    fn push(&mut self, key: String, value: Doc) {
        self.add(key.into_boxed_str(), value);
    }

    fn take(&mut self, key: &str) -> Option<(usize, Doc)> {
        match self {
            DocMembers::Few(list) => {
                let pos = list.iter().position(|(k, _)| **k == *key)?;
                Some((pos, list.remove(pos).1))
            }
            DocMembers::Many(map) => map
                .shift_remove_full(key)
                .map(|(pos, _, value)| (pos, value)),
        }
    }

    fn put(&mut self, pos: usize, key: String, value: Doc) {
        match self {
            DocMembers::Few(list) if list.len() < SCAN_MEMBERS => {
                list.insert(pos, (key.into_boxed_str(), value));
            }
            _ => {
                self.many().shift_insert(pos, key.into_boxed_str(), value);
            }
        }
    }
}

impl<'de> Deserialize<'de> for Doc {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Doc, D::Error> {
        deserializer.deserialize_any(DocVisitor)
    }
}

/// Reads a [`Doc`] as serde_json reads a `Value`.
struct DocVisitor;

impl<'de> Visitor<'de> for DocVisitor {
    type Value = Doc;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<Doc, E> {
        Ok(Doc::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Doc, E> {
        Ok(Doc::Number(n.into()))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Doc, E> {
        Ok(Doc::Number(n.into()))
    }

    fn visit_f64<E>(self, f: f64) -> Result<Doc, E> {
        Ok(Number::from_f64(f).map_or(Doc::Null, Doc::Number))
    }

    fn visit_str<E>(self, s: &str) -> Result<Doc, E> {
        Ok(Doc::String(s.into()))
    }

    fn visit_string<E>(self, s: String) -> Result<Doc, E> {
        Ok(Doc::String(s.into_boxed_str()))
    }

    fn visit_unit<E>(self) -> Result<Doc, E> {
        Ok(Doc::Null)
    }

    fn visit_none<E>(self) -> Result<Doc, E> {
        Ok(Doc::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Doc, D::Error> {
        Doc::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Doc, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Doc::array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Doc, A::Error> {
        let mut out = DocMembers::with_capacity(map.size_hint().unwrap_or(0));
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value()?;
            out.set(key.into_boxed_str(), value);
        }
        Ok(Doc::Object(Box::new(out)))
    }
}

#[cfg(test)]
mod tests;
