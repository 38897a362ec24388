//! The conformance corpus, compaction stage: every case with `expect.compact` must compact to
//! exactly the reference's events; a case with `expect.compactError` must fail.

mod common;

use aguikit_core::Event;
use aguikit_core::engine::compact::compact;

#[test]
fn compact_conformance() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for (name, case) in common::cases() {
        let expect = &case["expect"];
        let events: Vec<Event> = common::decodable_events(&case);
        if let Some(want) = expect.get("compact") {
            checked += 1;
            match compact(&events) {
                Ok(out) => {
                    let got = serde_json::to_value(&out).unwrap();
                    if !common::json_eq(&got, want) {
                        failures.push(format!(
                            "{name}: compact differs\n  got:  {got}\n  want: {want}"
                        ));
                    }
                }
                Err(e) => failures.push(format!("{name}: compact failed: {e}")),
            }
        } else if expect.get("compactError").is_some() {
            checked += 1;
            if compact(&events).is_ok() {
                failures.push(format!("{name}: compact should fail"));
            }
        }
    }
    common::report("compact", checked, &failures);
}

#[test]
fn corpus_cases_with_compact_expectations_decode() {
    // Compaction input is the decoded stream: every event of such a case must decode.
    for (name, case) in common::cases() {
        if case["expect"].get("compact").is_none() {
            continue;
        }
        for v in case["events"].as_array().into_iter().flatten() {
            assert!(
                Event::from_value(v.clone()).is_ok() || !v.is_object(),
                "{name}: {v} does not decode"
            );
        }
    }
}

#[test]
fn the_streaming_compactor_agrees_with_compact_on_every_case() {
    use aguikit_core::engine::compact::{Compactor, compact_with_warnings};
    let mut compared = 0;
    for (name, case) in common::cases() {
        let events: Vec<Event> = common::decodable_events(&case);
        let (want, want_warnings) = compact_with_warnings(&events);
        let mut c = Compactor::new();
        let mut got = Vec::new();
        for (i, e) in events.iter().cloned().enumerate() {
            let before = got.len();
            c.push(e, &mut got);
            // What is written is final: it is a prefix of the whole output.
            assert_eq!(
                got[..],
                want[..got.len()],
                "{name}: event {i} wrote events {before}.. that differ from compact's"
            );
        }
        let warnings = c.finish(&mut got);
        assert_eq!(got, want, "{name}");
        assert_eq!(warnings, want_warnings, "{name}");
        compared += 1;
    }
    assert!(compared > 200, "only {compared} cases");
}
