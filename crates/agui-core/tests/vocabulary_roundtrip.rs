//! Every event of every conformance case that the reference recorded as well-formed (the
//! cases with an `sse` expectation) decodes into a typed event, re-encodes to structurally
//! equal JSON, and survives a second round trip unchanged.

mod common;

use agui_core::Event;
use common::{cases, json_eq};

#[test]
fn well_formed_events_round_trip() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for (name, case) in cases() {
        if case["expect"].get("sse").is_none() {
            continue;
        }
        for (i, raw) in case["events"].as_array().unwrap().iter().enumerate() {
            let text = serde_json::to_string(raw).unwrap();
            let event = match Event::from_json_str(&text) {
                Ok(e) => e,
                Err(e) => {
                    failures.push(format!("{name}[{i}]: decode failed: {e}"));
                    continue;
                }
            };
            let back: serde_json::Value = serde_json::from_slice(&event.to_json_vec()).unwrap();
            if !json_eq(&back, raw) {
                failures.push(format!("{name}[{i}]: re-encoded as {back}, expected {raw}"));
                continue;
            }
            let again = Event::from_json_slice(&event.to_json_vec()).unwrap();
            if again != event {
                failures.push(format!("{name}[{i}]: second round trip differs"));
            }
            checked += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked > 500, "only {checked} events checked");
    println!("{checked} well-formed events round-tripped");
}
