//! Chunk expansion on every conformance case: the output must equal `expect.expanded`,
//! and a case with `expect.expandError` must make expansion fail.

mod common;

use agui_core::Event;
use agui_core::engine::expand::Expander;
use serde_json::Value;

/// Expands a case's events; `Err` carries the index of the input event that failed
/// and the message. `None` when an event does not decode (the case records no expansion
/// then).
fn expand(events: &[Value]) -> Option<Result<Vec<Value>, (usize, String)>> {
    let mut x = Expander::new();
    let mut out = Vec::new();
    for (i, v) in events.iter().enumerate() {
        let event = Event::from_value(v.clone()).ok()?;
        if let Err(e) = x.push(event, &mut out) {
            return Some(Err((i, e.to_string())));
        }
    }
    x.finish();
    Some(Ok(out
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect()))
}

#[test]
fn expansion_matches_every_case() {
    let (mut checked, mut failed) = (0, Vec::new());
    for (name, case) in common::cases() {
        let expect = &case["expect"];
        let events = case["events"].as_array().unwrap();
        let (expanded, error) = (expect.get("expanded"), expect.get("expandError"));
        if expanded.is_none() && error.is_none() {
            continue;
        }
        checked += 1;
        let got = expand(events);
        let ok = match (&got, expanded, error) {
            (Some(Ok(out)), Some(want), _) => common::json_eq(&Value::Array(out.clone()), want),
            (Some(Err(_)), None, Some(_)) => true,
            _ => false,
        };
        if !ok {
            failed.push(format!("{name}: got {got:?}"));
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {checked} cases disagree:\n{}",
        failed.len(),
        failed.join("\n")
    );
    eprintln!("expansion agrees on all {checked} cases");
}
