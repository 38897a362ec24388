//! The checked-in JSON Schemas (`schema/*.schema.json`) equal what the types generate.
//! Regenerate them with `AGUI_UPDATE_SCHEMA=1 cargo test -p aguikit-core --features schema --test schema_drift`.
#![cfg(feature = "schema")]

use aguikit_core::{AgentCapabilities, Event, EventType, RunAgentInput};
use std::path::PathBuf;

fn check(file: &str, schema: schemars::Schema) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("schema")
        .join(file);
    let generated = serde_json::to_string_pretty(&schema).unwrap() + "\n";
    if std::env::var_os("AGUI_UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let stored = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    assert!(
        stored == generated,
        "{file} is out of date: regenerate it with AGUI_UPDATE_SCHEMA=1 (see this file's docs)"
    );
}

#[test]
fn event_schema_is_current() {
    check("event.schema.json", schemars::schema_for!(Event));
}

#[test]
fn run_agent_input_schema_is_current() {
    check(
        "run-agent-input.schema.json",
        schemars::schema_for!(RunAgentInput),
    );
}

#[test]
fn capabilities_schema_is_current() {
    check(
        "agent-capabilities.schema.json",
        schemars::schema_for!(AgentCapabilities),
    );
}

#[test]
fn event_schema_names_every_event_type() {
    let text = serde_json::to_string(&schemars::schema_for!(Event)).unwrap();
    for t in EventType::ALL {
        assert!(
            text.contains(&format!("\"{}\"", t.as_str())),
            "{t} missing from the schema"
        );
    }
}
