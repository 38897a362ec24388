//! The documents the applier works on: what it needs to see of a JSON tree and to change in
//! it. `serde_json::Value` is one; the engine's compact state document is the other (its
//! elements take a third of a `Value`'s bytes, and an array's removal moves them).

use std::ops::{Index, IndexMut};

use serde_json::{Map, Number, Value};

/// A JSON tree the applier can patch.
pub(crate) trait Node: Sized + Default + Clone {
    /// An array's elements.
    type Items: Items<Self>;
    /// An object's members, in order.
    type Members: Members<Self>;

    /// What this value is.
    fn view(&self) -> View<'_, Self>;

    /// This value's children, to change; `None` for a scalar or `null`.
    fn children(&mut self) -> Option<Children<'_, Self>>;

    /// A value an operation carries, as a node.
    fn from_value(value: Value) -> Self;
}

/// A node, seen.
pub(crate) enum View<'a, N: Node> {
    Null,
    Bool(bool),
    Number(&'a Number),
    String(&'a str),
    Array(&'a N::Items),
    Object(&'a N::Members),
}

/// A container node's children, to change.
pub(crate) enum Children<'a, N: Node> {
    Array(&'a mut N::Items),
    Object(&'a mut N::Members),
}

/// An array's elements.
pub(crate) trait Items<N>: Index<usize, Output = N> + IndexMut<usize> {
    fn len(&self) -> usize;
    /// Inserts at `index` (at most the length).
    fn insert(&mut self, index: usize, value: N);
    /// Removes the element at `index`; `None` past the end.
    fn remove(&mut self, index: usize) -> Option<N>;
    fn iter<'a>(&'a self) -> impl Iterator<Item = &'a N>
    where
        N: 'a;
}

/// An object's members, in order. Keys are unique.
pub(crate) trait Members<N> {
    fn len(&self) -> usize;
    fn get(&self, key: &str) -> Option<&N>;
    fn get_mut(&mut self, key: &str) -> Option<&mut N>;
    fn iter<'a>(&'a self) -> impl Iterator<Item = (&'a str, &'a N)>
    where
        N: 'a;
    /// Adds a member that is not there, after the others.
    fn push(&mut self, key: String, value: N);
    /// Removes a member, returning its position and value.
    fn take(&mut self, key: &str) -> Option<(usize, N)>;
    /// Inserts a member that is not there at `pos` (at most the length).
    fn put(&mut self, pos: usize, key: String, value: N);
}

/// Objects of up to this many members are searched member by member: comparing a few keys
/// costs less than hashing one (both maps hash with SipHash).
pub(crate) const SCAN_MEMBERS: usize = 8;

impl Node for Value {
    type Items = Vec<Value>;
    type Members = Map<String, Value>;

    #[inline]
    fn view(&self) -> View<'_, Self> {
        match self {
            Value::Null => View::Null,
            Value::Bool(b) => View::Bool(*b),
            Value::Number(n) => View::Number(n),
            Value::String(s) => View::String(s),
            Value::Array(items) => View::Array(items),
            Value::Object(map) => View::Object(map),
        }
    }

    #[inline]
    fn children(&mut self) -> Option<Children<'_, Self>> {
        match self {
            Value::Array(items) => Some(Children::Array(items)),
            Value::Object(map) => Some(Children::Object(map)),
            _ => None,
        }
    }

    #[inline]
    fn from_value(value: Value) -> Self {
        value
    }
}

impl Items<Value> for Vec<Value> {
    #[inline]
    fn len(&self) -> usize {
        Vec::len(self)
    }

    #[inline]
    fn insert(&mut self, index: usize, value: Value) {
        Vec::insert(self, index, value);
    }

    #[inline]
    fn remove(&mut self, index: usize) -> Option<Value> {
        (index < self.len()).then(|| Vec::remove(self, index))
    }

    fn iter<'a>(&'a self) -> impl Iterator<Item = &'a Value>
    where
        Value: 'a,
    {
        self.as_slice().iter()
    }
}

impl Members<Value> for Map<String, Value> {
    #[inline]
    fn len(&self) -> usize {
        Map::len(self)
    }

    #[inline]
    fn get(&self, key: &str) -> Option<&Value> {
        if self.len() <= SCAN_MEMBERS {
            self.iter().find_map(|(k, v)| (k == key).then_some(v))
        } else {
            Map::get(self, key)
        }
    }

    #[inline]
    fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        if self.len() <= SCAN_MEMBERS {
            self.iter_mut().find_map(|(k, v)| (k == key).then_some(v))
        } else {
            Map::get_mut(self, key)
        }
    }

    fn iter<'a>(&'a self) -> impl Iterator<Item = (&'a str, &'a Value)>
    where
        Value: 'a,
    {
        Map::iter(self).map(|(k, v)| (k.as_str(), v))
    }

    fn push(&mut self, key: String, value: Value) {
        self.insert(key, value);
    }

    fn take(&mut self, key: &str) -> Option<(usize, Value)> {
        // serde_json's map does not expose an entry's index, which an undo needs to put the
        // member back where it was: find the member, then its position by address.
        let target: *const Value = Members::get(self, key)?;
        let pos = self.values().position(|v| std::ptr::eq(v, target))?;
        Some((pos, self.shift_remove(key)?))
    }

    fn put(&mut self, pos: usize, key: String, value: Value) {
        self.shift_insert(pos, key, value);
    }
}
