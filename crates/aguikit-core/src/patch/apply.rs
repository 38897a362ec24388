//! Application: each operation in place, with an undo log that restores the document exactly
//! (object key order included) when a later operation fails.

use std::borrow::Cow;
use std::mem;

use serde_json::Value;

use super::equal::*;
use super::error::*;
use super::node::*;
use super::ops::*;
use super::pointer::*;
use super::quirks::*;

/// Applies `ops` to `doc` in place, atomically.
///
/// On failure `doc` is restored exactly (object key order included) and the error names
/// the failing operation. See the [module documentation](crate::patch) for the semantics.
///
/// # Examples
///
/// ```
/// use aguikit_core::patch::{apply_patch, JsonPatch};
/// use serde_json::json;
///
/// let mut doc = json!({"a": 1, "l": [1, 2]});
/// let ok: JsonPatch = serde_json::from_value(json!([
///     {"op": "replace", "path": "/a", "value": 2},
///     {"op": "add", "path": "/l/-", "value": 3},
/// ]))
/// .unwrap();
/// apply_patch(&mut doc, &ok).unwrap();
/// assert_eq!(doc, json!({"a": 2, "l": [1, 2, 3]}));
///
/// let bad: JsonPatch = serde_json::from_value(json!([
///     {"op": "remove", "path": "/a"},
///     {"op": "replace", "path": "/missing/x", "value": 0},
/// ]))
/// .unwrap();
/// let err = apply_patch(&mut doc, &bad).unwrap_err();
/// assert_eq!(err.to_string(), "operation 1 (replace /missing/x): path not found");
/// assert_eq!(doc, json!({"a": 2, "l": [1, 2, 3]})); // untouched
/// ```
pub fn apply_patch(doc: &mut Value, ops: &[PatchOp]) -> Result<(), PatchError> {
    run(doc, ops, |_, op| op.value().cloned().unwrap_or(Value::Null))
}

/// Applies `ops` to any [`Node`], moving the operations' values into it.
pub(crate) fn apply_owned_to<N: Node>(doc: &mut N, mut ops: JsonPatch) -> Result<(), PatchError> {
    let mut values: Vec<Value> = ops
        .iter_mut()
        .map(|op| match op {
            PatchOp::Add { value, .. } | PatchOp::Replace { value, .. } => mem::take(value),
            _ => Value::Null,
        })
        .collect();
    run(doc, &ops, |index, _| {
        N::from_value(mem::take(&mut values[index]))
    })
}

/// Like [`apply_patch`], but moves the operations' values into the document instead of
/// cloning them.
pub fn apply_patch_owned(doc: &mut Value, ops: JsonPatch) -> Result<(), PatchError> {
    apply_owned_to(doc, ops)
}

/// Applies `ops` to a copy of `doc` and returns it; `doc` is never changed.
pub fn apply_patch_to(doc: &Value, ops: &[PatchOp]) -> Result<Value, PatchError> {
    let mut copy = doc.clone();
    apply_patch(&mut copy, ops)?;
    Ok(copy)
}

/// How to undo one change. `at` is the location the change was made at; replaying the
/// log backwards resolves each `at` in exactly the document the change produced.
pub(super) struct Undo<'p, N> {
    at: &'p JsonPointer,
    action: UndoAction<N>,
}

pub(super) enum UndoAction<N> {
    /// The whole document was replaced; this is the old one.
    RestoreRoot(N),
    /// A member was inserted (at the end).
    RemoveMember,
    /// A member's value was replaced; this is the old value.
    RestoreMember(N),
    /// A member was removed from this position. `None` when the value went on to a new
    /// location (a `move`): undoing that insertion supplies it.
    ReinsertMember(usize, Option<N>),
    /// An element was inserted at this index.
    RemoveElement(usize),
    /// An element was replaced; this is the old value.
    RestoreElement(usize, N),
    /// An element was removed from this index (`None` as for `ReinsertMember`).
    ReinsertElement(usize, Option<N>),
}

pub(super) fn run<'p, N: Node>(
    doc: &mut N,
    ops: &'p [PatchOp],
    mut value_of: impl FnMut(usize, &'p PatchOp) -> N,
) -> Result<(), PatchError> {
    let mut log: Vec<Undo<'p, N>> = Vec::new();
    for (index, op) in ops.iter().enumerate() {
        if let Err(kind) = apply_op(doc, op, || value_of(index, op), &mut log) {
            rollback(doc, log);
            return Err(PatchError {
                index,
                op: op.op(),
                path: op.path().clone(),
                from: op.from().cloned(),
                kind,
            });
        }
    }
    Ok(())
}

/// A failed lookup while walking a pointer.
pub(super) enum Miss {
    NotFound,
    BadIndex(String),
}

impl Miss {
    pub(super) fn on_path(self) -> PatchErrorKind {
        match self {
            Miss::NotFound => PatchErrorKind::PathNotFound,
            Miss::BadIndex(token) => PatchErrorKind::InvalidArrayIndex { token },
        }
    }
}

/// An array reference token.
pub(super) enum Index {
    /// `-`: past the last element.
    End,
    /// A valid index (saturated at `usize::MAX`).
    At(usize),
}

pub(super) fn array_index(token: &str) -> Result<Index, Miss> {
    if token == "-" {
        return Ok(Index::End);
    }
    let bytes = token.as_bytes();
    let valid = !bytes.is_empty()
        && bytes.iter().all(u8::is_ascii_digit)
        && (bytes.len() == 1 || bytes[0] != b'0');
    if !valid {
        return Err(Miss::BadIndex(token.to_owned()));
    }
    let index = bytes.iter().try_fold(0usize, |acc, &b| {
        acc.checked_mul(10)?.checked_add(usize::from(b - b'0'))
    });
    Ok(Index::At(index.unwrap_or(usize::MAX)))
}

/// An existing element's index: `-` and out-of-range indexes do not exist.
pub(super) fn existing_index(token: &str, len: usize) -> Result<usize, Miss> {
    match array_index(token)? {
        Index::At(i) if i < len => Ok(i),
        _ => Err(Miss::NotFound),
    }
}

pub(super) fn walk<'v, N: Node>(mut cur: &'v N, tokens: Tokens<'_>) -> Result<&'v N, Miss> {
    for token in tokens {
        cur = match cur.view() {
            View::Object(map) => map.get(&token).ok_or(Miss::NotFound)?,
            View::Array(items) => &items[existing_index(&token, items.len())?],
            _ => return Err(Miss::NotFound),
        };
    }
    Ok(cur)
}

pub(super) fn walk_mut<'v, N: Node>(
    mut cur: &'v mut N,
    tokens: Tokens<'_>,
) -> Result<&'v mut N, Miss> {
    for token in tokens {
        cur = match cur.children() {
            Some(Children::Object(map)) => map.get_mut(&token).ok_or(Miss::NotFound)?,
            Some(Children::Array(items)) => {
                let i = existing_index(&token, items.len())?;
                &mut items[i]
            }
            None => return Err(Miss::NotFound),
        };
    }
    Ok(cur)
}

/// The container holding the location `ptr` (non-root) and the location's decoded last
/// token.
pub(super) fn parent_mut<'v, 'p, N: Node>(
    doc: &'v mut N,
    ptr: &'p JsonPointer,
) -> Result<(&'v mut N, Cow<'p, str>), Miss> {
    let (parent, last) = ptr.split_last().ok_or(Miss::NotFound)?;
    Ok((walk_mut(doc, Tokens::of(parent))?, decode_token(last)))
}

/// What to do when an insertion index is past the end of an array.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Bounds {
    /// Fail (`add`).
    Strict,
    /// Append (`move`/`copy` targets, as in the reference).
    Clamp,
}

/// Inserts at `ptr` (non-root) with `add` semantics, returning how to undo it.
pub(super) fn insert_at<N: Node>(
    doc: &mut N,
    ptr: &JsonPointer,
    bounds: Bounds,
    value: impl FnOnce() -> N,
) -> Result<UndoAction<N>, PatchErrorKind> {
    let (parent, last) = parent_mut(doc, ptr).map_err(Miss::on_path)?;
    match parent.children() {
        Some(Children::Object(map)) => match map.get_mut(&last) {
            Some(slot) => Ok(UndoAction::RestoreMember(mem::replace(slot, value()))),
            None => {
                map.push(last.into_owned(), value());
                Ok(UndoAction::RemoveMember)
            }
        },
        Some(Children::Array(items)) => {
            let len = items.len();
            let index = match array_index(&last).map_err(Miss::on_path)? {
                Index::End => len,
                Index::At(i) if i <= len => i,
                Index::At(_) if bounds == Bounds::Clamp => len,
                Index::At(index) => return Err(PatchErrorKind::IndexOutOfBounds { index, len }),
            };
            items.insert(index, value());
            Ok(UndoAction::RemoveElement(index))
        }
        None => Err(PatchErrorKind::PathNotFound),
    }
}

/// Checks, without changing anything, that [`insert_at`] could insert at `ptr`
/// (non-root) in the document as it is, array bounds aside.
pub(super) fn check_insert_target<N: Node>(
    doc: &N,
    ptr: &JsonPointer,
) -> Result<(), PatchErrorKind> {
    let (parent, last) = ptr.split_last().ok_or(PatchErrorKind::PathNotFound)?;
    match walk(doc, Tokens::of(parent)).map_err(Miss::on_path)?.view() {
        View::Object(_) => Ok(()),
        View::Array(_) => array_index(&decode_token(last))
            .map(drop)
            .map_err(Miss::on_path),
        _ => Err(PatchErrorKind::PathNotFound),
    }
}

/// Replaces the existing value at `ptr` (non-root), returning how to undo it.
pub(super) fn replace_at<N: Node>(
    doc: &mut N,
    ptr: &JsonPointer,
    value: impl FnOnce() -> N,
) -> Result<UndoAction<N>, PatchErrorKind> {
    let (parent, last) = parent_mut(doc, ptr).map_err(Miss::on_path)?;
    match parent.children() {
        Some(Children::Object(map)) => match map.get_mut(&last) {
            Some(slot) => Ok(UndoAction::RestoreMember(mem::replace(slot, value()))),
            None => Err(PatchErrorKind::PathNotFound),
        },
        Some(Children::Array(items)) => {
            let i = existing_index(&last, items.len()).map_err(Miss::on_path)?;
            Ok(UndoAction::RestoreElement(
                i,
                mem::replace(&mut items[i], value()),
            ))
        }
        None => Err(PatchErrorKind::PathNotFound),
    }
}

/// Removes the value at `ptr` (non-root), returning it and where it was.
pub(super) fn remove_at<N: Node>(doc: &mut N, ptr: &JsonPointer) -> Result<(N, RemovedFrom), Miss> {
    let (parent, last) = parent_mut(doc, ptr)?;
    match parent.children() {
        Some(Children::Object(map)) => {
            let (pos, value) = map.take(&last).ok_or(Miss::NotFound)?;
            Ok((value, RemovedFrom::Member(pos)))
        }
        Some(Children::Array(items)) => {
            let i = existing_index(&last, items.len())?;
            let value = items.remove(i).ok_or(Miss::NotFound)?;
            Ok((value, RemovedFrom::Element(i)))
        }
        None => Err(Miss::NotFound),
    }
}

pub(super) enum RemovedFrom {
    Member(usize),
    Element(usize),
}

impl RemovedFrom {
    pub(super) fn undo<N>(self, value: Option<N>) -> UndoAction<N> {
        match self {
            RemovedFrom::Member(pos) => UndoAction::ReinsertMember(pos, value),
            RemovedFrom::Element(i) => UndoAction::ReinsertElement(i, value),
        }
    }
}

pub(super) fn apply_op<'p, N: Node>(
    doc: &mut N,
    op: &'p PatchOp,
    value: impl FnOnce() -> N,
    log: &mut Vec<Undo<'p, N>>,
) -> Result<(), PatchErrorKind> {
    let path = op.path();
    if path.has_banned_token() || op.from().is_some_and(JsonPointer::has_banned_token) {
        return Err(PatchErrorKind::BannedToken);
    }
    if path.is_root() {
        return apply_at_root(doc, op, value, log);
    }
    match doc.view() {
        View::Null => return Err(PatchErrorKind::NullDocument),
        View::Bool(_) | View::Number(_) | View::String(_) => return scalar_document(doc, op),
        View::Array(_) | View::Object(_) => {}
    }
    let action = match op {
        PatchOp::Add { .. } => insert_at(doc, path, Bounds::Strict, value)?,
        PatchOp::Replace { .. } => replace_at(doc, path, value)?,
        PatchOp::Remove { .. } => {
            let (old, from) = remove_at(doc, path).map_err(Miss::on_path)?;
            from.undo(Some(old))
        }
        PatchOp::Test { value, .. } => {
            return test_value(walk(doc, path.tokens()).map_err(Miss::on_path)?, value);
        }
        PatchOp::Copy { from, .. } => {
            let copied = copy_from(doc, from)?;
            insert_at(doc, path, Bounds::Clamp, || copied)?
        }
        PatchOp::Move { from, .. } => {
            if from.is_root() {
                // The whole document into one of its own children.
                return Err(PatchErrorKind::MoveIntoOwnChild);
            }
            // Like the reference: check the target against the document as it is, then
            // remove, then insert at the target as it resolves after the removal (an index
            // shift can make `/0/1` valid after moving `/0` away).
            check_insert_target(doc, path)?;
            let (moved, removed_from) = take_from(doc, from)?;
            let mut moved = Some(moved);
            let result = insert_at(doc, path, Bounds::Clamp, || {
                moved.take().unwrap_or_default()
            })
            .map_err(|kind| {
                if from.is_proper_prefix_of(path) {
                    PatchErrorKind::MoveIntoOwnChild
                } else {
                    kind
                }
            });
            // If the insertion failed, the value is still here: the undo entry keeps it.
            log.push(Undo {
                at: from,
                action: removed_from.undo(moved),
            });
            result?
        }
    };
    log.push(Undo { at: path, action });
    Ok(())
}

/// The outcome of a `test` op that found `found` where it expected `expected`.
fn test_value<N: Node>(found: &N, expected: &Value) -> Result<(), PatchErrorKind> {
    if node_equal(found, expected) {
        Ok(())
    } else {
        Err(PatchErrorKind::TestFailed)
    }
}

/// A clone of the value at a `copy`'s `from`, or `FromNotFound`.
fn copy_from<N: Node>(doc: &N, from: &JsonPointer) -> Result<N, PatchErrorKind> {
    walk(doc, from.tokens())
        .cloned()
        .map_err(|_| PatchErrorKind::FromNotFound)
}

/// Removes the value at a `move`'s `from`, or fails with `FromNotFound`.
fn take_from<N: Node>(doc: &mut N, from: &JsonPointer) -> Result<(N, RemovedFrom), PatchErrorKind> {
    remove_at(doc, from).map_err(|_| PatchErrorKind::FromNotFound)
}

pub(super) fn apply_at_root<'p, N: Node>(
    doc: &mut N,
    op: &'p PatchOp,
    value: impl FnOnce() -> N,
    log: &mut Vec<Undo<'p, N>>,
) -> Result<(), PatchErrorKind> {
    let path = op.path();
    let new_root = match op {
        PatchOp::Add { .. } | PatchOp::Replace { .. } => value(),
        PatchOp::Remove { .. } => N::default(),
        PatchOp::Test { value, .. } => return test_value(doc, value),
        PatchOp::Copy { from, .. } => copy_from(doc, from)?,
        PatchOp::Move { from, .. } => {
            if from.is_root() {
                return Ok(());
            }
            // Take the value out (the remainder of the old document is what the undo log
            // restores), rather than cloning it.
            let (moved, removed_from) = take_from(doc, from)?;
            log.push(Undo {
                at: from,
                action: removed_from.undo(None),
            });
            moved
        }
    };
    let old = mem::replace(doc, new_root);
    log.push(Undo {
        at: path,
        action: UndoAction::RestoreRoot(old),
    });
    Ok(())
}

/// Replays `log` backwards. Each action displaces the value currently at its location
/// into `carry`, which a following `Reinsert*(_, None)` (the other half of a `move`)
/// consumes.
pub(super) fn rollback<N: Node>(doc: &mut N, log: Vec<Undo<'_, N>>) {
    let mut carry: Option<N> = None;
    for Undo { at, action } in log.into_iter().rev() {
        if let UndoAction::RestoreRoot(old) = action {
            carry = Some(mem::replace(doc, old));
            continue;
        }
        let Ok((parent, last)) = parent_mut(doc, at) else {
            debug_assert!(false, "rollback: {at} no longer resolves");
            continue;
        };
        let replayed = match (parent.children(), action) {
            (Some(Children::Object(map)), UndoAction::RemoveMember) => {
                carry = map.take(&last).map(|(_, value)| value);
                carry.is_some()
            }
            (Some(Children::Object(map)), UndoAction::RestoreMember(old)) => {
                match map.get_mut(&last) {
                    Some(slot) => {
                        carry = Some(mem::replace(slot, old));
                        true
                    }
                    None => false,
                }
            }
            (Some(Children::Object(map)), UndoAction::ReinsertMember(pos, value)) => {
                match value.or_else(|| carry.take()) {
                    Some(value) if pos <= map.len() => {
                        map.put(pos, last.into_owned(), value);
                        true
                    }
                    _ => false,
                }
            }
            (Some(Children::Array(items)), UndoAction::RemoveElement(i)) if i < items.len() => {
                carry = items.remove(i);
                carry.is_some()
            }
            (Some(Children::Array(items)), UndoAction::RestoreElement(i, old))
                if i < items.len() =>
            {
                carry = Some(mem::replace(&mut items[i], old));
                true
            }
            (Some(Children::Array(items)), UndoAction::ReinsertElement(i, value))
                if i <= items.len() =>
            {
                match value.or_else(|| carry.take()) {
                    Some(value) => {
                        items.insert(i, value);
                        true
                    }
                    None => false,
                }
            }
            _ => false,
        };
        debug_assert!(replayed, "rollback: could not undo a change at {at}");
    }
}
