//! Metadata: an open JSON object carried by events, messages, tool calls, tools, interrupts.

use serde_json::{Map, Value};

/// An open map of string keys to any JSON value (a `null` under a key is meaningful).
pub type Metadata = Map<String, Value>;

/// The key reserved for the protocol itself (by convention; nothing in 1.0 writes it).
pub const AGUI_METADATA_KEY: &str = "ag-ui";

/// The key the TypeScript client package reads and writes on `MESSAGES_SNAPSHOT`.
pub const CLIENT_METADATA_KEY: &str = "@ag-ui/client";

/// Merges `incoming` into `target` the way the reference `mergeMetadata` does: shallow, key
/// by key, last write wins, never recursing. An absent `incoming` leaves `target` untouched.
///
/// ```
/// use aguikit_core::metadata::merge_metadata;
/// use serde_json::json;
/// let mut target = json!({"a": 1, "b": {"x": 1}}).as_object().cloned();
/// let incoming = json!({"b": {"y": 2}, "c": null});
/// merge_metadata(&mut target, incoming.as_object());
/// assert_eq!(serde_json::Value::Object(target.unwrap()), json!({"a": 1, "b": {"y": 2}, "c": null}));
/// ```
pub fn merge_metadata(target: &mut Option<Metadata>, incoming: Option<&Metadata>) {
    let Some(incoming) = incoming else { return };
    let t = target.get_or_insert_with(Map::new);
    for (k, v) in incoming {
        t.insert(k.clone(), v.clone());
    }
}

/// The `authoritativeActivityTypes` declaration of a `MESSAGES_SNAPSHOT`'s metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthoritativeActivityTypes {
    /// Not declared: the snapshot owns activities only if it contains one.
    Undeclared,
    /// `null`: the snapshot owns every activity type.
    All,
    /// The snapshot owns exactly these types (an empty list owns none).
    Only(Vec<String>),
}

/// Reads `metadata["@ag-ui/client"].authoritativeActivityTypes` as the reference does.
pub fn authoritative_activity_types(metadata: Option<&Metadata>) -> AuthoritativeActivityTypes {
    let Some(v) = metadata.and_then(|m| m.get(CLIENT_METADATA_KEY)) else {
        return AuthoritativeActivityTypes::Undeclared;
    };
    let Some(obj) = v.as_object() else {
        return AuthoritativeActivityTypes::Only(Vec::new());
    };
    match obj.get("authoritativeActivityTypes") {
        None => AuthoritativeActivityTypes::Undeclared,
        Some(Value::Null) => AuthoritativeActivityTypes::All,
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
            AuthoritativeActivityTypes::Only(
                items
                    .iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect(),
            )
        }
        Some(_) => AuthoritativeActivityTypes::Only(Vec::new()),
    }
}
