//! The reference's behaviour on a document that is not an object or array (see the module
//! documentation of [`patch`](super)), reproduced because it decides whether a patch succeeds.

use super::error::*;
use super::node::{Node, View};
use super::ops::*;

/// JavaScript truthiness of a scalar.
pub(super) fn truthy<N: Node>(v: &N) -> bool {
    match v.view() {
        View::Null => false,
        View::Bool(b) => b,
        View::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        View::String(s) => !s.is_empty(),
        View::Array(_) | View::Object(_) => true,
    }
}

/// The reference's outcome for a non-root operation on a scalar document. Nothing is ever
/// changed; see the module documentation.
pub(super) fn scalar_document<N: Node>(doc: &N, op: &PatchOp) -> Result<(), PatchErrorKind> {
    if op.path().len() > 1 {
        return Err(PatchErrorKind::ScalarDocument);
    }
    let falsy = !truthy(doc);
    let ok = match op {
        PatchOp::Add { .. } => true,
        PatchOp::Remove { .. } | PatchOp::Replace { .. } => falsy,
        PatchOp::Test { .. } => false,
        PatchOp::Move { from, .. } | PatchOp::Copy { from, .. } => match from.len() {
            0 => true,
            1 => falsy,
            _ => false,
        },
    };
    if ok {
        Ok(())
    } else {
        Err(PatchErrorKind::ScalarDocument)
    }
}
