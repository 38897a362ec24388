//! A2UI in AG-UI streams: `agui verify --a2ui` checks the surfaces that `a2ui-surface`
//! activities carry (rules A1–A17 of `aguikit_a2ui`), `agui apply --a2ui` adds the folded
//! surfaces to its output. Without `--a2ui` both commands are unchanged.

use crate::input::{EventReader, Item};
use crate::stream::StreamOptions;
use aguikit_a2ui::agui::{ActivityFolder, EventFinding, violation_json};
use aguikit_a2ui::{Catalog, Validator};
use aguikit_core::Event;
use aguikit_core::engine::pipeline::Pipeline;
use serde_json::{Value, json};
use std::ops::ControlFlow;
use std::path::Path;
use std::process::ExitCode;

/// The validator: with the catalog at `path` when given (its `common_types.json` is looked
/// for beside it, then where the A2UI specification keeps it, `../../json/`), else the
/// message schema and the semantic rules only.
pub fn validator(path: Option<&Path>) -> Result<Validator, String> {
    let Some(path) = path else {
        return Ok(Validator::new());
    };
    let read = |p: &Path| -> Result<Value, String> {
        let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))
    };
    let doc = read(path)?;
    let needs_common = doc.to_string().contains("common_types.json");
    let mut catalog = Catalog::from_value(doc).map_err(|e| format!("{}: {e}", path.display()))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let candidates = [
        dir.join("common_types.json"),
        dir.join("../../json/common_types.json"),
    ];
    match candidates.iter().find(|p| p.is_file()) {
        Some(common) => catalog.add_schema(read(common)?),
        None if needs_common => {
            return Err(format!(
                "{} refers to common_types.json, which is neither beside it nor in ../../json/",
                path.display()
            ));
        }
        None => {}
    }
    Ok(Validator::with_catalog(catalog))
}

/// A finding of the stream as JSON: the event index first.
fn finding_json(f: &EventFinding) -> Value {
    let mut v = violation_json(&f.violation, f.operation);
    if let Value::Object(m) = &mut v {
        m.insert("at".into(), json!(f.event));
        m.insert("messageId".into(), json!(f.message_id));
    }
    v
}

/// `agui verify --a2ui`: the AG-UI verdict (as `agui verify` prints it) plus `"a2ui"`:
/// `{"activities": N, "violations": [...]}`. `ok` is false, and the exit code 1, when the
/// stream is invalid or an A2UI rule of severity error is broken.
pub fn verify(file: &str, opts: StreamOptions, catalog: Option<&Path>) -> Result<ExitCode, String> {
    let mut folder = ActivityFolder::new(validator(catalog)?);
    let mut reader = EventReader::open(file, opts.max_frame_bytes)?;
    let mut p = Pipeline::new().with_apply(false).with_emitted(false);
    let mut findings = Vec::new();
    reader.for_each_item(|item| {
        let index = p.events_seen();
        let pushed = match item {
            Item::Event(json) => p.push_json(json).map(|_| Some(json)),
            Item::Undecodable(u) => crate::stream::push_undecodable(&mut p, u).map(|()| None),
            Item::Reading => Ok(None),
        };
        match pushed {
            Ok(Some(json)) => {
                if let Ok(event) = Event::from_json_slice(json) {
                    findings.extend(folder.push(index, &event));
                }
                ControlFlow::Continue(())
            }
            Ok(None) => ControlFlow::Continue(()),
            Err(_) => ControlFlow::Break(()),
        }
    })?;
    if p.error().is_none() {
        let _ = p.finish();
    }
    let errors = findings.iter().filter(|f| f.violation.is_error()).count();
    let mut verdict = match p.error() {
        Some(e) => crate::stream::failure(e),
        None => json!({"ok": errors == 0}),
    };
    verdict["a2ui"] = json!({
        "activities": folder.activities().count(),
        "violations": findings.iter().map(finding_json).collect::<Vec<_>>(),
    });
    let ok = verdict["ok"] == json!(true);
    crate::out::print(&format!("{verdict}\n"));
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The `a2ui-surface` activities among folded messages, as `agui apply --a2ui` prints them
/// (`"a2ui"`: one object per activity with its surfaces and violations).
pub fn surfaces_json<'a>(messages: impl IntoIterator<Item = &'a aguikit_core::Message>) -> Value {
    let acts = aguikit_a2ui::agui::surfaces_from_messages(messages, &Validator::new());
    Value::Array(acts.iter().map(|a| a.to_value()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_catalog_without_its_common_types_is_refused() {
        let dir = std::env::temp_dir().join(format!("agui-a2ui-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cat = dir.join("catalog.json");
        std::fs::write(
            &cat,
            r#"{"catalogId": "c", "components": {"T": {"$ref": "common_types.json#/$defs/X"}}}"#,
        )
        .unwrap();
        assert!(
            validator(Some(&cat))
                .unwrap_err()
                .contains("common_types.json")
        );
        std::fs::write(
            dir.join("common_types.json"),
            r#"{"$defs": {"X": {"type": "object"}}}"#,
        )
        .unwrap();
        assert!(validator(Some(&cat)).unwrap().catalog().is_some());
        assert!(validator(None).unwrap().catalog().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
