//! Back-end tools: Rust async functions the agent runs itself.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use std::sync::Arc;

/// What a back-end tool returns: a JSON value for the model, or an error message (which
/// the model receives as `{"error": message}`, so it can correct itself).
///
/// ```
/// use aguikit_openai::ToolResult;
/// use serde_json::json;
/// fn add(a: i64, b: i64) -> ToolResult {
///     a.checked_add(b).map(|s| json!(s)).ok_or_else(|| "overflow".to_owned())
/// }
/// assert_eq!(add(1, 2), Ok(json!(3)));
/// ```
pub type ToolResult = Result<Value, String>;

pub(crate) type ToolFn = Arc<dyn Fn(Value) -> BoxFuture<'static, ToolResult> + Send + Sync>;

/// A registered back-end tool.
#[derive(Clone)]
pub(crate) struct BackendTool {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) parameters: Value,
    pub(crate) run: ToolFn,
}

impl std::fmt::Debug for BackendTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackendTool")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Parses a call's argument text. Models send `""` for a tool without parameters: that
/// is `{}`.
pub(crate) fn parse_args(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_str(text).map_err(|e| format!("the arguments are not valid JSON: {e}"))
}

/// The text of a tool's answer, as the model and the client receive it: a string result
/// as is, any other value as JSON, an error as `{"error": message}`.
pub(crate) fn result_text(result: &ToolResult) -> String {
    match result {
        Ok(Value::String(s)) => s.clone(),
        Ok(v) => v.to_string(),
        Err(e) => json!({ "error": e }).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_arguments_are_an_empty_object() {
        assert_eq!(parse_args(""), Ok(json!({})));
        assert_eq!(parse_args("  "), Ok(json!({})));
        assert_eq!(parse_args(r#"{"a":1}"#), Ok(json!({"a": 1})));
        assert!(parse_args("{").unwrap_err().contains("not valid JSON"));
    }

    #[test]
    fn result_text_shapes() {
        assert_eq!(result_text(&Ok(json!("plain"))), "plain");
        assert_eq!(result_text(&Ok(json!({"a": 1}))), r#"{"a":1}"#);
        assert_eq!(result_text(&Err("boom".into())), r#"{"error":"boom"}"#);
    }
}
