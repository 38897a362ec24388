//! The conformance corpus, application stage: every case with `expect.apply` must end with
//! the reference's messages, state and pending interrupts.
//!
//! The stages before application run as in the client (retired `THINKING_*` translation,
//! chunk expansion); verification is left out because these cases are all valid streams.

mod common;

use aguikit_core::Event;
use aguikit_core::engine::apply::Applier;
use aguikit_core::engine::compat::CompatBoundary;
use aguikit_core::engine::expand::Expander;
use serde_json::json;

#[test]
fn apply_conformance() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for (name, case) in common::cases() {
        let expect = &case["expect"];
        let Some(want) = expect.get("apply") else {
            continue;
        };
        if expect.get("applyNormalized").is_some() {
            continue;
        }
        let events = case["events"].as_array().cloned().unwrap_or_default();
        let mut applier = Applier::new();
        let mut compat = CompatBoundary::new();
        let mut expander = Expander::new();
        let mut expanded = Vec::new();
        for v in events {
            // Events the reference drops (not objects, unknown types) are skipped.
            let Ok(event) = Event::from_value(v).and_then(|e| compat.translate(e)) else {
                continue;
            };
            if matches!(event, Event::Unknown(_)) {
                continue;
            }
            expanded.clear();
            expander
                .push(event, &mut expanded)
                .unwrap_or_else(|e| panic!("{name}: expansion failed: {e}"));
            for e in &expanded {
                applier.push(e);
            }
        }
        let got = json!({
            "messages": serde_json::to_value(applier.messages()).unwrap(),
            "state": applier.state(),
        });
        let want_pending = expect
            .get("pendingInterrupts")
            .cloned()
            .unwrap_or_else(|| json!([]));
        let got_pending = serde_json::to_value(applier.pending_interrupts()).unwrap();
        checked += 1;
        if !common::json_eq(&got, want) {
            failures.push(format!(
                "{name}: apply differs\n  got:  {got}\n  want: {want}"
            ));
        } else if !common::json_eq(&got_pending, &want_pending) {
            failures.push(format!(
                "{name}: pendingInterrupts differ\n  got:  {got_pending}\n  want: {want_pending}"
            ));
        }
    }
    common::report("apply", checked, &failures);
}
