//! Runs the public RFC 6902 conformance suite (json-patch-tests: `tests.json` and
//! `spec_tests.json`) against `aguikit_core::patch`.
//!
//! The data lives in the shared folder beside the repository
//! (`shared/testdata/json-patch-tests`), or under `$AGUI_SHARED_DIR`. A missing folder is a
//! failure, never a silent pass.

use std::path::{Path, PathBuf};

use aguikit_core::engine::apply::Applier;
use aguikit_core::event::{Event, StateDelta, StateSnapshot};
use aguikit_core::patch::{JsonPatch, PatchError, apply_patch_to};
use serde_json::Value;

/// Suite cases where the reference patcher (fast-json-patch 3.1.1, validate=true)
/// deliberately differs from the suite and we follow the reference: `(file, index,
/// reason)`. Each listed case must actually disagree with the suite, so the list cannot go
/// stale.
///
/// Empty on purpose. The reference also disagrees with `tests.json` cases 87 and 88 (it
/// lets `test` read `/00` and `/01` as array indexes), but the AG-UI spec (client.md AP12)
/// states that leading-zero index tokens fail, so we follow the suite there.
const FOLLOW_REFERENCE: &[(&str, usize, &str)] = &[];

fn shared_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("AGUI_SHARED_DIR") {
        let dir = PathBuf::from(dir);
        assert!(
            dir.is_dir(),
            "AGUI_SHARED_DIR is set to {} but that is not a directory",
            dir.display()
        );
        return dir;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    assert!(
        dir.is_dir(),
        "the shared data folder was not found at {} (it sits beside the repository root); \
         set AGUI_SHARED_DIR to its location",
        dir.display()
    );
    dir
}

#[derive(Default)]
struct Tally {
    passed: usize,
    expected_errors: usize,
    disabled: Vec<String>,
    followed_reference: Vec<String>,
    failures: Vec<String>,
    /// Cases folded by an applier that keeps the state compact (`push_owned`, the state
    /// never looked at before the end), and where that disagreed with `apply_patch_to`.
    folded: usize,
    fold_mismatches: Vec<String>,
}

/// Folds `doc` and `ops` as a snapshot and a delta through [`Applier::push_owned`], which
/// patches its compact state document, and checks that the outcome is `by_value`'s: the
/// same document (written before anything builds its tree), or the failure as an `AP12`
/// warning with the document unchanged.
fn fold_compact(
    doc: &Value,
    ops: JsonPatch,
    by_value: &Result<Value, PatchError>,
) -> Result<(), String> {
    let mut applier = Applier::new();
    applier.push_owned(Event::StateSnapshot(StateSnapshot::new(doc.clone())));
    applier.push_owned(Event::StateDelta(StateDelta::new(ops)));
    let mut written = Vec::new();
    applier.write_state_json(&mut written);
    let warned = applier
        .warnings()
        .iter()
        .map(|w| w.message.clone())
        .collect::<Vec<_>>();
    let (want_doc, want_warnings) = match by_value {
        Ok(patched) => (patched, vec![]),
        Err(e) => (doc, vec![format!("Failed to apply state patch: {e}")]),
    };
    let want = serde_json::to_vec(want_doc).unwrap();
    if written != want || warned != want_warnings {
        return Err(format!(
            "folded to {} with warnings {warned:?}; apply_patch_to gives {} with {want_warnings:?}",
            String::from_utf8_lossy(&written),
            String::from_utf8_lossy(&want),
        ));
    }
    Ok(())
}

fn run_file(name: &str, tally: &mut Tally) {
    let path = shared_dir().join("testdata/json-patch-tests").join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let cases: Vec<Value> =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name} is not JSON: {e}"));
    for (index, case) in cases.iter().enumerate() {
        let Some(raw_patch) = case.get("patch") else {
            continue; // a comment-only record
        };
        let comment = case.get("comment").and_then(Value::as_str).unwrap_or("");
        let label = format!("{name}#{index} ({comment})");
        if case.get("disabled") == Some(&Value::Bool(true)) {
            tally.disabled.push(label);
            continue;
        }
        let doc = &case["doc"];
        let outcome = match serde_json::from_value::<JsonPatch>(raw_patch.clone()) {
            Err(e) => Err(format!("parse: {e}")),
            Ok(ops) => {
                let by_value = apply_patch_to(doc, &ops);
                tally.folded += 1;
                if let Err(why) = fold_compact(doc, ops, &by_value) {
                    tally.fold_mismatches.push(format!("{label}: {why}"));
                }
                by_value.map_err(|e| format!("apply: {e}"))
            }
        };
        let agrees = match (case.get("expected"), case.get("error"), &outcome) {
            (Some(expected), _, Ok(got)) => got == expected,
            (Some(_), _, Err(_)) => false,
            (None, Some(_), result) => {
                if result.is_err() {
                    tally.expected_errors += 1;
                }
                result.is_err()
            }
            (None, None, result) => result.is_ok(),
        };
        let follows_reference = FOLLOW_REFERENCE
            .iter()
            .find(|(file, i, _)| *file == name && *i == index);
        match (agrees, follows_reference) {
            (true, None) => tally.passed += 1,
            (false, Some((_, _, reason))) => {
                tally.followed_reference.push(format!("{label}: {reason}"));
            }
            (true, Some(_)) => tally.failures.push(format!(
                "{label}: listed in FOLLOW_REFERENCE but agrees with the suite"
            )),
            (false, None) => tally
                .failures
                .push(format!("{label}: patch {raw_patch} gave {outcome:?}")),
        }
    }
}

#[test]
fn rfc6902_suite() {
    let mut tally = Tally::default();
    run_file("tests.json", &mut tally);
    run_file("spec_tests.json", &mut tally);

    let ran = tally.passed + tally.failures.len() + tally.followed_reference.len();
    println!(
        "json-patch-tests: {} cases run, {} agree with the suite ({} of them expected errors), \
         {} follow the reference instead, {} disabled (skipped):",
        ran,
        tally.passed,
        tally.expected_errors,
        tally.followed_reference.len(),
        tally.disabled.len()
    );
    for label in &tally.disabled {
        println!("  disabled: {label}");
    }
    for label in &tally.followed_reference {
        println!("  follows reference: {label}");
    }
    assert!(ran > 100, "expected over 100 suite cases, ran {ran}");
    assert!(
        tally.folded > 90,
        "expected over 90 folded cases, folded {}",
        tally.folded
    );
    assert!(
        tally.fold_mismatches.is_empty(),
        "{} case(s) folded by the applier's compact state differ from apply_patch_to:\n{}",
        tally.fold_mismatches.len(),
        tally.fold_mismatches.join("\n")
    );
    assert!(
        tally.failures.is_empty(),
        "{} suite case(s) failed:\n{}",
        tally.failures.len(),
        tally.failures.join("\n")
    );
}
