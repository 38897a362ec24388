//! The A2UI conformance suites and the v0.9 catalogs' examples, read at run time from
//! `$AGUI_SHARED_DIR/a2ui` (default: the `shared` folder beside the repository). A missing
//! folder fails the tests: it is not a skip. Which cases do not apply, and why, is in the
//! crate's README.

use aguikit_a2ui::stream::{TaggedItem, TaggedTextParser};
use aguikit_a2ui::{Catalog, Surfaces, Validator, text};
use serde_json::{Value, json};
use std::path::PathBuf;

fn a2ui_dir() -> PathBuf {
    let shared = match std::env::var_os("AGUI_SHARED_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    };
    let dir = shared.join("a2ui");
    assert!(
        dir.join("agent_sdks/conformance/suites").is_dir(),
        "the A2UI material was not found at {} (set AGUI_SHARED_DIR to the shared folder)",
        dir.display()
    );
    dir
}

fn conformance_dir() -> PathBuf {
    a2ui_dir().join("agent_sdks/conformance")
}

fn read_json(path: &PathBuf) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn suite(name: &str) -> Vec<Value> {
    let path = conformance_dir().join("suites").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let v: Value =
        serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    match v {
        Value::Array(cases) => cases,
        _ => panic!("{name} is not a list of cases"),
    }
}

fn is_v09(case: &Value) -> bool {
    case["catalog"]["version"] == json!("0.9")
}

/// A schema given as a path (relative to the conformance folder) or inline.
fn schema_arg(v: &Value) -> Option<Value> {
    match v {
        Value::String(p) => Some(read_json(&conformance_dir().join(p))),
        Value::Object(_) => Some(v.clone()),
        _ => None,
    }
}

fn case_catalog(case: &Value) -> Catalog {
    let cfg = &case["catalog"];
    let cat = schema_arg(&cfg["catalog_schema"])
        .unwrap_or_else(|| json!({"catalogId": "none", "components": {}}));
    let mut catalog = Catalog::from_value(cat).unwrap_or_else(|e| panic!("{}: {e}", case["name"]));
    if let Some(ct) = schema_arg(&cfg["common_types_schema"]) {
        catalog.add_schema(ct);
    }
    catalog
}

/// Whether a finding's message matches an expected error (a regular expression, as the
/// reference harness reads it); "Validation failed" is the reference's word for any schema
/// violation of a message (A1).
fn matches(expected: &str, findings: &[aguikit_a2ui::Finding]) -> bool {
    let re = regex::Regex::new(expected).unwrap_or_else(|e| panic!("{expected}: {e}"));
    findings.iter().any(|f| {
        f.violation.is_error()
            && (re.is_match(&f.violation.message)
                || (expected.contains("Validation failed") && f.violation.rule == "A1"))
    })
}

#[test]
fn validator_suite() {
    let mut ran = 0;
    let mut failures = Vec::new();
    for case in suite("validator.yaml") {
        if !is_v09(&case) {
            continue;
        }
        let validator = Validator::with_catalog(case_catalog(&case));
        let steps: Vec<Value> = match case.get("steps") {
            Some(Value::Array(s)) => s.clone(),
            _ => vec![case.clone()],
        };
        for (i, step) in steps.iter().enumerate() {
            let payload = step["payload"].as_array().cloned().unwrap_or_default();
            let findings = validator.validate(&payload);
            let name = format!("{} step {i}", case["name"].as_str().unwrap_or("?"));
            match step.get("expect_error").and_then(Value::as_str) {
                Some(expected) => {
                    if !matches(expected, &findings) {
                        failures.push(format!("{name}: expected {expected:?}, found {findings:?}"));
                    }
                }
                None => {
                    let errors: Vec<_> =
                        findings.iter().filter(|f| f.violation.is_error()).collect();
                    if !errors.is_empty() {
                        failures.push(format!("{name}: expected valid, found {errors:?}"));
                    }
                }
            }
            ran += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(ran >= 25, "only {ran} v0.9 validator steps ran");
    println!("validator.yaml: {ran} v0.9 steps passed, 0 failed");
}

#[test]
fn parser_suite() {
    let mut ran = 0;
    for case in suite("parser.yaml") {
        let name = case["name"].as_str().unwrap_or("?").to_string();
        let input = case["input"].as_str().unwrap_or_default();
        match case["action"].as_str() {
            Some("parse_full") => match (text::parse_full(input), case.get("expect_error")) {
                (Err(e), Some(Value::String(want))) => {
                    assert!(e.0.contains(want.as_str()), "{name}: {e} lacks {want:?}")
                }
                (Ok(parts), None) => {
                    let got: Vec<Value> = parts
                        .into_iter()
                        .map(|p| match p.a2ui {
                            Some(a) => json!({"text": p.text, "a2ui": a}),
                            None => json!({"text": p.text}),
                        })
                        .collect();
                    assert_eq!(Value::Array(got), case["expect"], "{name}");
                }
                (got, want) => panic!("{name}: got {got:?}, expected {want:?}"),
            },
            Some("fix_payload") => {
                let got = text::fix_payload(input).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(Value::Array(got), case["expect"], "{name}");
            }
            Some("has_parts") => {
                assert_eq!(json!(text::has_parts(input)), case["expect"], "{name}");
            }
            other => panic!("{name}: unknown action {other:?}"),
        }
        ran += 1;
    }
    assert_eq!(ran, 17);
    println!("parser.yaml: {ran} passed, 0 failed");
}

fn reachable(s: &aguikit_a2ui::Surface) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    let mut todo = vec!["root".to_string()];
    while let Some(id) = todo.pop() {
        if seen.contains(&id) {
            continue;
        }
        let Some(c) = s.components.get(&id) else {
            continue;
        };
        seen.push(id);
        for r in aguikit_a2ui::catalog::default_references(c) {
            todo.push(r.target);
        }
    }
    seen.sort();
    seen
}

#[test]
fn streaming_parser_suite() {
    let mut ran = 0;
    let mut partial = 0;
    let mut compared = 0;
    let norm = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut failures = Vec::new();
    for case in suite("streaming_parser.yaml") {
        if !is_v09(&case) {
            continue;
        }
        let name = case["name"].as_str().unwrap_or("?").to_string();
        let validator = Validator::with_catalog(case_catalog(&case));
        let mut parser = TaggedTextParser::default();
        let (mut text, mut messages, mut stream_errors) = (String::new(), Vec::new(), Vec::new());
        let (mut want_text, mut want_messages) = (String::new(), Vec::new());
        let mut expects_error = false;
        let steps = case["steps"].as_array().cloned().unwrap_or_default();
        for (i, step) in steps.iter().enumerate() {
            for item in parser.push(step["input"].as_str().unwrap_or_default()) {
                match item {
                    TaggedItem::Text(t) => text.push_str(&t),
                    TaggedItem::Message(m) => messages.push(m),
                    TaggedItem::Component {
                        surface_id: Some(sid),
                        component,
                    } => messages.push(json!({"version": "v0.9", "updateComponents": {"surfaceId": sid, "components": [component]}})),
                    TaggedItem::Component { .. } => {}
                    TaggedItem::Error(e) => stream_errors.push(e),
                }
            }
            for y in step["expect"].as_array().into_iter().flatten() {
                if let Some(t) = y["text"].as_str() {
                    want_text.push_str(t);
                }
                want_messages.extend(y["a2ui"].as_array().into_iter().flatten().cloned());
            }
            if let Some(expected) = step["expect_error"].as_str() {
                expects_error = true;
                let mut findings = validator.validate(&messages);
                findings.extend(stream_errors.iter().map(|e| aguikit_a2ui::Finding {
                    message: None,
                    violation: e.to_violation(),
                }));
                if !matches(expected, &findings) {
                    failures.push(format!(
                        "{name} step {i}: expected {expected:?}, found {findings:?}"
                    ));
                }
            }
        }
        for item in parser.finish() {
            match item {
                TaggedItem::Text(t) => text.push_str(&t),
                TaggedItem::Message(m) => messages.push(m),
                TaggedItem::Error(e) => stream_errors.push(e),
                TaggedItem::Component { .. } => {}
            }
        }
        ran += 1;
        if expects_error {
            continue;
        }
        let cut = !stream_errors.is_empty();
        if cut {
            // The block is cut off or not well-formed JSON: the reference guesses the
            // rest (placeholders, half strings); this parser reports A17 and yields only
            // what completed, which is compared below.
            partial += 1;
        }
        if norm(&text) != norm(&want_text) {
            failures.push(format!("{name}: text {text:?}, expected {want_text:?}"));
        }
        // The surfaces once applied: what the reference yielded (placeholders left out)
        // against what this parser yielded.
        let (_, ours) = validator.validate_with_surfaces(&messages);
        let mut theirs = Surfaces::new();
        for m in &want_messages {
            if let Ok(m) = aguikit_a2ui::ServerMessage::parse(m) {
                let _ = theirs.apply_lenient(&m);
            }
        }
        for t in theirs.iter() {
            let Some(o) = ours.get(&t.id) else {
                if cut {
                    continue;
                }
                failures.push(format!("{name}: surface {:?} missing", t.id));
                continue;
            };
            for id in reachable(t) {
                let Some(want) = t.components.get(&id) else {
                    continue;
                };
                let placeholder = aguikit_a2ui::catalog::default_references(want)
                    .iter()
                    .any(|r| r.target.starts_with("loading_"));
                if id.starts_with("loading_") || placeholder {
                    continue;
                }
                match o.components.get(&id) {
                    Some(got) if got == want => compared += 1,
                    // A value the reference yielded half-received (a cut string or list):
                    // this parser yields the component only complete.
                    Some(got) if got.component == want.component => {}
                    None if cut || !ours_complete(&steps) => {}
                    got => failures.push(format!(
                        "{name}: component {id}: got {got:?}, expected {want:?}"
                    )),
                }
            }
            if !cut
                && ours_complete(&steps)
                && !t.data.as_object().is_some_and(|m| m.is_empty())
                && o.data != t.data
            {
                failures.push(format!("{name}: data {:?}, expected {:?}", o.data, t.data));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(ran >= 40, "only {ran} v0.9 streaming cases ran");
    assert!(compared >= 30, "only {compared} components compared equal");
    assert!(
        ran - partial >= 20,
        "{partial} of {ran} cases were cut off or malformed"
    );
    println!(
        "streaming_parser.yaml: {ran} v0.9 cases passed ({partial} of them cut off or malformed: what completed is compared; {compared} components equal to the reference's), 0 failed"
    );
}

/// Whether the stream closes its block (so every item is complete at the end).
fn ours_complete(steps: &[Value]) -> bool {
    steps
        .iter()
        .filter_map(|s| s["input"].as_str())
        .collect::<String>()
        .contains("</a2ui-json>")
}

#[test]
fn catalog_suite_catalogs_load() {
    let mut loaded = 0;
    for case in suite("catalog.yaml") {
        if is_v09(&case) && case["catalog"]["catalog_schema"]["components"].is_object() {
            let cat = case_catalog(&case);
            assert!(!cat.id().is_empty());
            loaded += 1;
        }
    }
    assert!(loaded >= 2, "{loaded}");
}

fn spec_catalog(name: &str) -> Catalog {
    let spec = a2ui_dir().join("specification/v0_9");
    let mut cat = Catalog::from_value(read_json(
        &spec.join(format!("catalogs/{name}/catalog.json")),
    ))
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    cat.add_schema(read_json(&spec.join("json/common_types.json")));
    cat
}

fn examples(name: &str) -> Vec<(String, Vec<Value>)> {
    let dir = a2ui_dir().join(format!("specification/v0_9/catalogs/{name}/examples"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let v = read_json(&p);
            let msgs = v["messages"].as_array().cloned().unwrap_or_default();
            (
                p.file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned(),
                msgs,
            )
        })
        .collect()
}

fn rules_of(v: &Validator, msgs: &[Value]) -> Vec<&'static str> {
    v.validate(msgs)
        .into_iter()
        .filter(|f| f.violation.is_error())
        .map(|f| f.violation.rule)
        .collect()
}

/// Every example validates; mutated copies fail with A7, A2 and A3.
fn check_examples(name: &str, at_least: usize) {
    let catalog = spec_catalog(name);
    let validator = Validator::with_catalog(catalog.clone());
    let all = examples(name);
    assert!(all.len() >= at_least, "{name}: {} examples", all.len());
    for (file, msgs) in &all {
        let findings = validator.validate(msgs);
        let errors: Vec<_> = findings.iter().filter(|f| f.violation.is_error()).collect();
        assert!(errors.is_empty(), "{name}/{file}: {errors:#?}");
        let (mi, _) = msgs
            .iter()
            .enumerate()
            .find(|(_, m)| m.get("updateComponents").is_some())
            .unwrap_or_else(|| panic!("{file}: no updateComponents"));
        let comps = |m: &Vec<Value>| {
            m[mi]["updateComponents"]["components"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        };

        // A dangling reference: the first reference made points nowhere.
        let mut dangling = msgs.clone();
        let mut done = false;
        for (ci, c) in comps(msgs).iter().enumerate() {
            let comp = aguikit_a2ui::Component::from_value(c).unwrap_or_else(|e| panic!("{e:?}"));
            if let Some(r) = catalog.references(&comp).first() {
                let ptr = format!("/{mi}/updateComponents/components/{ci}{}", r.path);
                if let Some(slot) = Value::Array(dangling.clone()).pointer(&ptr).cloned() {
                    assert!(slot.is_string());
                    let mut arr = Value::Array(dangling);
                    *arr.pointer_mut(&ptr).unwrap_or_else(|| panic!("{ptr}")) =
                        json!("no-such-component");
                    dangling = arr.as_array().cloned().unwrap_or_default();
                    done = true;
                    break;
                }
            }
        }
        if !done {
            // A single-component surface: give root a child that does not exist.
            let mut arr = Value::Array(dangling);
            arr[mi]["updateComponents"]["components"]
                .as_array_mut()
                .unwrap_or_else(|| panic!("{file}"))
                .push(json!({"id": "extra", "component": "Column", "children": ["no-such-component"]}));
            dangling = arr.as_array().cloned().unwrap_or_default();
        }
        let r = rules_of(&validator, &dangling);
        assert!(r.contains(&"A7"), "{name}/{file} dangling: {r:?}");

        // An unknown component type.
        let mut unknown = msgs.clone();
        unknown[mi]["updateComponents"]["components"][0]["component"] = json!("NoSuchComponent");
        let r = rules_of(&validator, &unknown);
        assert!(r.contains(&"A2"), "{name}/{file} unknown: {r:?}");

        // A missing required property: the first property whose removal breaks A3.
        let mut found = false;
        'outer: for (ci, c) in comps(msgs).iter().enumerate() {
            for key in c.as_object().into_iter().flat_map(|o| o.keys()) {
                if key == "id" || key == "component" {
                    continue;
                }
                let mut missing = msgs.clone();
                if let Some(o) = missing[mi]["updateComponents"]["components"][ci].as_object_mut() {
                    o.shift_remove(key);
                }
                if rules_of(&validator, &missing).contains(&"A3") {
                    found = true;
                    break 'outer;
                }
            }
        }
        assert!(found, "{name}/{file}: no removal of a property breaks A3");
    }
    println!(
        "{name} catalog: {} examples valid, 3 mutations of each rejected",
        all.len()
    );
}

#[test]
fn basic_catalog_examples() {
    check_examples("basic", 30);
}

#[test]
fn minimal_catalog_examples() {
    check_examples("minimal", 7);
}

/// Mutated and cut copies of every basic example go through the streaming parsers, the
/// validator and the reducer: whatever comes out, nothing panics, and an intact copy fed
/// in any chunking gives the same messages.
#[test]
fn mangled_examples_never_panic() {
    let validator = Validator::with_catalog(spec_catalog("basic"));
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n.max(1) as u64) as usize
    };
    let specials = [
        b'{', b'}', b'[', b']', b'"', b',', b':', b'0', b'a', b'\\', b'~', b'/',
    ];
    for (file, msgs) in examples("basic") {
        let text = serde_json::to_string(&msgs).unwrap_or_default();
        // Any chunking of the intact text gives the same messages.
        let mut p = aguikit_a2ui::stream::MessageStreamParser::default();
        let mut got = Vec::new();
        let mut rest = text.as_str();
        while !rest.is_empty() {
            let mut cut = (1 + next(40)).min(rest.len());
            while !rest.is_char_boundary(cut) {
                cut += 1;
            }
            got.extend(
                p.push(&rest[..cut])
                    .unwrap_or_else(|e| panic!("{file}: {e}")),
            );
            rest = &rest[cut..];
        }
        got.extend(p.finish().unwrap_or_else(|e| panic!("{file}: {e}")));
        assert_eq!(got, msgs, "{file}");
        for _ in 0..20 {
            let mut bytes = text.clone().into_bytes();
            for _ in 0..1 + next(3) {
                let i = next(bytes.len());
                if bytes[i].is_ascii() {
                    bytes[i] = specials[next(specials.len())];
                }
            }
            let mangled = String::from_utf8_lossy(&bytes).into_owned();
            let cut = next(mangled.len());
            let cut = (cut..=mangled.len())
                .find(|c| mangled.is_char_boundary(*c))
                .unwrap_or(0);
            let mut tp = TaggedTextParser::default();
            let mut messages = Vec::new();
            for part in [OPEN, &mangled[..cut], &mangled[cut..]] {
                for item in tp.push(part) {
                    if let TaggedItem::Message(m) = item {
                        messages.push(m);
                    }
                }
            }
            tp.finish();
            let (_, surfaces) = validator.validate_with_surfaces(&messages);
            let _ = surfaces.to_value();
        }
    }
}

const OPEN: &str = "Here it is: <a2ui-json>";
