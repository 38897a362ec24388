//! `agui verify --a2ui` and `agui apply --a2ui` on a stream with an `a2ui-surface` activity;
//! without `--a2ui` both commands print what they printed before.

use serde_json::{Value, json};
use std::process::Command;

const STREAM: &str = r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}
{"type":"ACTIVITY_SNAPSHOT","messageId":"a2ui-surface-tc1","activityType":"a2ui-surface","replace":true,"content":{"status":"building","progressTokens":10}}
{"type":"ACTIVITY_SNAPSHOT","messageId":"a2ui-surface-tc1","activityType":"a2ui-surface","replace":true,"content":{"a2ui_operations":[{"version":"v0.9","createSurface":{"surfaceId":"s1","catalogId":"basic"}},{"version":"v0.9","updateComponents":{"surfaceId":"s1","components":[{"id":"root","component":"Column","children":["t","gone"]},{"id":"t","component":"Text","text":"hi"}]}}]}}
{"type":"RUN_FINISHED","threadId":"t","runId":"r"}
"#;

fn agui(args: &[&str], input: &str) -> (Value, i32) {
    let dir = std::env::temp_dir().join(format!("agui-a2ui-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{}.jsonl", args.join("_").replace('-', "")));
    std::fs::write(&file, input).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_agui"))
        .args(args)
        .arg(&file)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let v = serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{text}: {e}"));
    (v, out.status.code().unwrap_or(-1))
}

#[test]
fn verify_reports_a2ui_violations_only_when_asked() {
    let (plain, code) = agui(&["verify"], STREAM);
    assert_eq!((plain, code), (json!({"ok": true}), 0));
    let (v, code) = agui(&["verify", "--a2ui"], STREAM);
    assert_eq!(code, 1);
    assert_eq!(v["ok"], json!(false));
    assert_eq!(v["a2ui"]["activities"], json!(1));
    let found = &v["a2ui"]["violations"][0];
    assert_eq!(found["rule"], json!("A7"));
    assert_eq!(found["at"], json!(2));
    assert_eq!(found["componentId"], json!("root"));
    assert_eq!(found["path"], json!("/children/1"));
    let fixed = STREAM.replace(r#"["t","gone"]"#, r#"["t"]"#);
    let (v, code) = agui(&["verify", "--a2ui"], &fixed);
    assert_eq!((v["ok"].clone(), code), (json!(true), 0));
}

#[test]
fn apply_adds_surfaces_only_when_asked() {
    let (plain, _) = agui(&["apply"], STREAM);
    assert!(plain.get("a2ui").is_none());
    let (v, code) = agui(&["apply", "--a2ui"], STREAM);
    assert_eq!(code, 0);
    let surface = &v["a2ui"][0]["surfaces"][0];
    assert_eq!(surface["surfaceId"], json!("s1"));
    assert_eq!(surface["components"][1]["text"], json!("hi"));
    assert_eq!(v["a2ui"][0]["violations"][0]["rule"], json!("A7"));
}

#[test]
fn inspect_lists_a2ui_violations_and_keeps_the_verdict() {
    let dir = std::env::temp_dir().join(format!("agui-a2ui-inspect-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("s.jsonl");
    std::fs::write(&file, STREAM).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_agui"))
        .args(["inspect", "--color", "never"])
        .arg(&file)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("a2ui 1 surface in 1 a2ui-surface activity, 1 A2UI violation"),
        "{text}"
    );
    assert!(
        text.contains("event 2 rule A7 (surface s1, component root, /children/1)"),
        "{text}"
    );
    // The AG-UI stream itself is valid: inspect's verdict and exit code are unchanged.
    assert!(text.contains("✓ valid"), "{text}");
    assert_eq!(out.status.code(), Some(0));
}
