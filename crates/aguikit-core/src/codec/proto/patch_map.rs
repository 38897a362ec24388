//! JSON Patch operations <-> `ag_ui.JsonPatchOperation` (`op` enum, `path`, `from`,
//! `value`).

use serde_json::Value;

use super::decode::{Fail, R};
use super::pb;
use super::wkt::write_value;
use super::write::Writer;
use crate::patch::{Extra, JsonPatch, JsonPointer, PatchOp};
use crate::warning;

/// The `JsonPatchOperationType` names, by enum value.
const OPS: [&str; 6] = ["add", "remove", "replace", "move", "copy", "test"];

/// Writes one operation. Like the reference (which spreads the whole JSON operation into
/// the message), members an operation does not define are written when the schema has a
/// field for them: a `value` on `remove`/`move`/`copy`, a string `from` on the others.
pub(crate) fn write_op(w: &mut Writer<'_>, op: &PatchOp) {
    let n = match op {
        PatchOp::Add { .. } => 0,
        PatchOp::Remove { .. } => 1,
        PatchOp::Replace { .. } => 2,
        PatchOp::Move { .. } => 3,
        PatchOp::Copy { .. } => 4,
        PatchOp::Test { .. } => 5,
    };
    if n != 0 {
        w.varint_field(1, n);
    }
    w.str_implicit(2, op.path().as_str());
    let extra = op.extra();
    match op.from() {
        Some(from) => w.str_field(3, from.as_str()),
        None => w.opt_str(3, extra.get("from").and_then(Value::as_str)),
    }
    if let Some(v) = op.value().or_else(|| extra.get("value")) {
        w.message(4, |w| write_value(w, v));
    }
}

/// Reads a patch as the reference client reads the JSON its decoder rebuilds: an
/// operation whose enum value has no name is dropped with a warning; a bad pointer, a
/// missing `from` or `value` is an error; members the operation does not define are kept
/// in `extra`.
pub(crate) fn read_patch(ops: Vec<pb::JsonPatchOperation>) -> R<JsonPatch> {
    let mut out = Vec::with_capacity(ops.len());
    for (i, o) in ops.into_iter().enumerate() {
        let Some(&name) = usize::try_from(o.op).ok().and_then(|n| OPS.get(n)) else {
            warning::report(format!(
                "JSON Patch operation {i} has unknown `op` \"{}\" dropped",
                o.op
            ));
            continue;
        };
        out.push(read_op(name, o).map_err(|f| match f {
            Fail::Invalid { path, message } => Fail::invalid(format!("[{i}].{path}"), message),
            m => m,
        })?);
    }
    Ok(out)
}

fn pointer(member: &str, s: String) -> R<JsonPointer> {
    JsonPointer::try_from(s).map_err(|e| Fail::invalid(member, format!("invalid `{member}`: {e}")))
}

fn read_op(name: &'static str, o: pb::JsonPatchOperation) -> R<PatchOp> {
    let missing = |member: &str| {
        Fail::invalid(
            member,
            format!("`{name}` operation is missing the `{member}` member"),
        )
    };
    let path = pointer("path", o.path)?;
    let mut from = o.from;
    let mut value = o.value.and_then(|v| v.0);
    let uses_from = matches!(name, "move" | "copy");
    let uses_value = matches!(name, "add" | "replace" | "test");
    // Members the operation does not define ride along, in the order the reference's
    // decoder writes them.
    let mut extra = Extra::new();
    if !uses_from && let Some(f) = from.take() {
        extra.insert("from".to_owned(), Value::String(f));
    }
    if !uses_value && let Some(v) = value.take() {
        extra.insert("value".to_owned(), v);
    }
    let from = match (uses_from, from) {
        (true, Some(f)) => Some(pointer("from", f)?),
        (true, None) => return Err(missing("from")),
        (false, _) => None,
    };
    let value = match (uses_value, value) {
        (true, None) => return Err(missing("value")),
        (_, v) => v,
    };
    Ok(match (name, from, value) {
        ("move", Some(from), _) => PatchOp::Move { from, path, extra },
        ("copy", Some(from), _) => PatchOp::Copy { from, path, extra },
        ("add", _, Some(value)) => PatchOp::Add { path, value, extra },
        ("replace", _, Some(value)) => PatchOp::Replace { path, value, extra },
        ("test", _, Some(value)) => PatchOp::Test { path, value, extra },
        _ => PatchOp::Remove { path, extra },
    })
}
