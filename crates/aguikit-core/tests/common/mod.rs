//! Helpers shared by the integration tests: locating `../shared` and loading conformance cases.
#![allow(dead_code)]

use serde_json::Value;
use std::path::PathBuf;

/// The shared folder (spec, conformance cases, test data): `AGUI_SHARED_DIR`, or the
/// `shared` folder beside the repository root.
pub fn shared_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("AGUI_SHARED_DIR") {
        return PathBuf::from(dir);
    }
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    assert!(
        p.join("conformance/cases").is_dir(),
        "the shared folder was not found at {} (set AGUI_SHARED_DIR)",
        p.display()
    );
    p
}

/// Every conformance case as (file stem, parsed JSON), sorted by name.
pub fn cases() -> Vec<(String, Value)> {
    let dir = shared_dir().join("conformance/cases");
    let mut out: Vec<(String, Value)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&p).unwrap();
            (name, serde_json::from_str(&text).unwrap())
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(
        out.len() >= 200,
        "expected the full conformance corpus, found {}",
        out.len()
    );
    out
}

/// Structural JSON equality as the conformance checker defines it: key order ignored,
/// numbers compared as doubles, absent differs from null.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// The events of a case that decode (the reference drops the others: non-objects, unknown
/// shapes), in order.
pub fn decodable_events(case: &Value) -> Vec<aguikit_core::Event> {
    case["events"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| aguikit_core::Event::from_value(v.clone()).ok())
        .collect()
}

/// Prints how many cases a stage checked and fails with every disagreement.
pub fn report(stage: &str, checked: usize, failures: &[String]) {
    println!(
        "{stage} conformance: {checked} checked, {} agree",
        checked - failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Fails with every collected failure, counted.
pub fn assert_no_failures(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
