//! RFC 6902 JSON Patch operations and their application. (Placeholder until the real module lands.)

/// A JSON Patch.
pub type JsonPatch = Vec<serde_json::Value>;

pub(crate) fn lenient_patch<'de, D: serde::Deserializer<'de>>(d: D) -> Result<JsonPatch, D::Error> {
    serde::Deserialize::deserialize(d)
}
