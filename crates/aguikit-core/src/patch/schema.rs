//! JSON Schemas of the pointer and operation types (feature `schema`).

use std::borrow::Cow;

use super::ops::*;
use super::pointer::*;

#[cfg(feature = "schema")]
impl schemars::JsonSchema for JsonPointer {
    fn schema_name() -> Cow<'static, str> {
        "JsonPointer".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "An RFC 6901 JSON Pointer.",
            "pattern": "^(/([^/~]|~[01])*)*$"
        })
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for PatchOp {
    fn schema_name() -> Cow<'static, str> {
        "PatchOp".into()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let ptr = g.subschema_for::<JsonPointer>();
        let op = |name: &str, fields: &[&str]| {
            let mut props = serde_json::Map::new();
            props.insert(
                "op".into(),
                serde_json::json!({"type": "string", "const": name}),
            );
            let mut required = vec![serde_json::json!("op")];
            for f in fields {
                let schema = if *f == "value" {
                    serde_json::json!({})
                } else {
                    ptr.clone().to_value()
                };
                props.insert((*f).into(), schema);
                required.push(serde_json::json!(f));
            }
            serde_json::json!({"type": "object", "properties": props, "required": required})
        };
        schemars::json_schema!({
            "description": "One RFC 6902 operation. Extra members are allowed and kept.",
            "oneOf": [
                op("add", &["path", "value"]),
                op("remove", &["path"]),
                op("replace", &["path", "value"]),
                op("move", &["from", "path"]),
                op("copy", &["from", "path"]),
                op("test", &["path", "value"]),
            ]
        })
    }
}
