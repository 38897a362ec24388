//! JSON Patch operations <-> `ag_ui.JsonPatchOperation`.
//! TEMPORARY: written against the placeholder `JsonPatch = Vec<Value>` until the typed
//! patch module lands.

use serde_json::Value;

use super::wkt::write_value;
use super::write::Writer;

pub(crate) fn write_op(w: &mut Writer<'_>, op: &Value) {
    let n = match op.get("op").and_then(Value::as_str) {
        Some("remove") => 1,
        Some("replace") => 2,
        Some("move") => 3,
        Some("copy") => 4,
        Some("test") => 5,
        _ => 0,
    };
    if n != 0 {
        w.varint_field(1, n);
    }
    w.str_implicit(2, op.get("path").and_then(Value::as_str).unwrap_or(""));
    w.opt_str(3, op.get("from").and_then(Value::as_str));
    if let Some(v) = op.get("value") {
        w.message(4, |w| write_value(w, v));
    }
}

pub(crate) fn read_patch(
    ops: Vec<super::pb::JsonPatchOperation>,
) -> super::decode::R<crate::patch::JsonPatch> {
    Ok(ops
        .into_iter()
        .map(|o| {
            let mut m = serde_json::Map::new();
            let name = match o.op {
                0 => "add".to_string(),
                1 => "remove".into(),
                2 => "replace".into(),
                3 => "move".into(),
                4 => "copy".into(),
                5 => "test".into(),
                n => n.to_string(),
            };
            m.insert("op".into(), Value::String(name));
            m.insert("path".into(), Value::String(o.path));
            if let Some(f) = o.from {
                m.insert("from".into(), Value::String(f));
            }
            if let Some(v) = o.value.and_then(|v| v.0) {
                m.insert("value".into(), v);
            }
            Value::Object(m)
        })
        .collect())
}
