//! JSON Patch application for the engine (state deltas, activity deltas, compaction), over
//! the crate's atomic in-place applier.

use crate::patch::{JsonPatch, Node, PatchOp, apply_owned_to, apply_patch};
use serde_json::Value;

/// Applies `ops` to `doc` atomically: on error `doc` is unchanged and the error says which
/// operation failed and why.
pub(crate) fn apply(doc: &mut Value, ops: &[PatchOp]) -> Result<(), String> {
    apply_patch(doc, ops).map_err(|e| e.to_string())
}

/// As [`apply`], moving the operations' values into `doc` instead of cloning them.
pub(crate) fn apply_owned<N: Node>(doc: &mut N, ops: JsonPatch) -> Result<(), String> {
    apply_owned_to(doc, ops).map_err(|e| e.to_string())
}

/// True when an operation of `ops` writes the document root (so it may change its type).
pub(crate) fn writes_root(ops: &JsonPatch) -> bool {
    ops.iter()
        .any(|op| !matches!(op, PatchOp::Test { .. }) && op.path().is_root())
}
