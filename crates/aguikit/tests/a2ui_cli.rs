//! `agui verify --a2ui` and `agui apply --a2ui` on a stream with an `a2ui-surface` activity;
//! without `--a2ui` both commands print what they printed before.

mod common;

#[allow(dead_code)] // the test uses the agent and its surfaces, not the help text
#[path = "../src/demo.rs"]
mod demo;

use serde_json::{Value, json};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

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

/// The demo agent (behind the A2UI middleware) served in this process on a free loopback
/// port; its `/agent` URL.
fn demo_url() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    // As `agui serve` serves it: behind the A2UI middleware.
    URL.get_or_init(|| {
        common::serve_agent(|| {
            aguikit_server::a2ui::A2uiAgent::new(demo::DemoAgent::new(Duration::ZERO))
        })
    })
}

/// The demo's three A2UI scenarios, recorded, verify against the spec's basic catalog, and
/// a user's action on the booking form is answered.
#[test]
fn the_demo_surfaces_verify_against_the_basic_catalog() {
    let catalog = common::shared_dir().join("a2ui/specification/v0_9/catalogs/basic/catalog.json");
    assert!(catalog.is_file(), "{} is missing", catalog.display());
    let catalog = catalog.to_string_lossy().into_owned();
    for (text, surface) in [
        ("flight status", "flight-status"),
        ("book a table", "book-table"),
        ("compare plans", "compare-plans"),
    ] {
        let file = common::scratch(&format!("a2ui-demo-{}.jsonl", surface));
        let out = common::agui(&[
            "record",
            demo_url(),
            "--text",
            text,
            "-o",
            &file.to_string_lossy(),
        ]);
        assert_eq!(out.code, 0, "{out:?}");
        let out = common::agui(&[
            "verify",
            "--a2ui",
            "--a2ui-catalog",
            &catalog,
            &file.to_string_lossy(),
        ]);
        let v = out.json();
        assert_eq!(v["ok"], json!(true), "{text}: {v:#}");
        assert_eq!(v["a2ui"]["violations"], json!([]), "{text}: {v:#}");
        let out = common::agui(&["apply", "--a2ui", &file.to_string_lossy()]);
        let applied = out.json();
        let act = &applied["a2ui"][0];
        assert_eq!(
            act["surfaces"][0]["surfaceId"],
            json!(surface),
            "{applied:#}"
        );
        assert!(
            act["surfaces"][0]["dataModel"]
                .as_object()
                .is_some_and(|m| !m.is_empty())
        );
        // The middleware's convention: the render_a2ui call is answered.
        let results: Vec<&Value> = applied["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == json!("tool"))
            .collect();
        assert_eq!(results[0]["content"], json!(r#"{"status":"rendered"}"#));
    }
    let input = common::scratch("a2ui-action.json");
    std::fs::write(
        &input,
        json!({"forwardedProps": {"a2uiAction": {"userAction": {
            "name": "book", "surfaceId": "book-table", "sourceComponentId": "submit",
            "context": {"name": "Ada", "people": 4, "date": "2026-12-24"}
        }}}})
        .to_string(),
    )
    .unwrap();
    let file = common::scratch("a2ui-action.jsonl");
    let out = common::agui(&[
        "record",
        demo_url(),
        "--input",
        &input.to_string_lossy(),
        "-o",
        &file.to_string_lossy(),
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let applied = common::agui(&["apply", &file.to_string_lossy()]).json();
    let said = applied["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(said, "Booked a table for 4 under the name Ada, 2026-12-24.");
}

/// `agui serve --upstream NAME=URL --a2ui`: an upstream's streamed `render_a2ui` call
/// reaches the client as `a2ui-surface` activities that verify against the basic catalog
/// (the surface, then with its data), and the call is answered; a user's action reaches the
/// upstream as the `log_a2ui_event` result the official middleware writes. Without `--a2ui`
/// the gateway relays the call as it came.
#[test]
fn the_gateway_with_a2ui_paints_an_upstreams_render_calls() {
    let base = common::scripted();
    let catalog = common::shared_dir().join("a2ui/specification/v0_9/catalogs/basic/catalog.json");
    assert!(catalog.is_file(), "{} is missing", catalog.display());
    let catalog = catalog.to_string_lossy().into_owned();
    let gateway = |a2ui: bool| {
        let mut args = vec![
            "--store".to_owned(),
            "memory".to_owned(),
            "--no-auth".to_owned(),
            "--upstream".to_owned(),
            format!("x={base}/a2ui-render"),
            "--upstream".to_owned(),
            format!("echo={base}/echo-last"),
        ];
        if a2ui {
            args.push("--a2ui".to_owned());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        common::Serve::start_with(&args)
    };
    let serve = gateway(true);
    let file = common::scratch("a2ui-gateway.jsonl");
    let file_arg = file.to_string_lossy().into_owned();
    let out = serve.agui(&[
        "record",
        &format!("{}agents/x", serve.base),
        "--text",
        "show the build",
        "-o",
        &file_arg,
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let out = common::agui(&["verify", "--a2ui", "--a2ui-catalog", &catalog, &file_arg]);
    let v = out.json();
    assert_eq!(v["ok"], json!(true), "{v:#}");
    assert_eq!(v["a2ui"]["violations"], json!([]), "{v:#}");
    assert_eq!(v["a2ui"]["activities"], json!(1), "{v:#}");
    let applied = common::agui(&["apply", "--a2ui", &file_arg]).json();
    let surface = &applied["a2ui"][0]["surfaces"][0];
    assert_eq!(
        applied["a2ui"][0]["messageId"],
        json!("a2ui-surface-tc-a2ui")
    );
    assert_eq!(surface["surfaceId"], json!("status"), "{applied:#}");
    assert_eq!(surface["dataModel"], json!({"build": {"state": "passing"}}));
    assert_eq!(
        surface["components"].as_array().map(Vec::len),
        Some(4),
        "{applied:#}"
    );
    // The snapshots in order: building, the surface, the surface with its data; then the
    // middleware's answer to the call, before RUN_FINISHED.
    let recorded = std::fs::read_to_string(&file).unwrap();
    let events: Vec<Value> = recorded
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let contents: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == json!("ACTIVITY_SNAPSHOT"))
        .map(|e| &e["content"])
        .collect();
    assert_eq!(contents[0], &json!({"status": "building"}));
    let ops: Vec<usize> = contents
        .iter()
        .filter_map(|c| c["a2ui_operations"].as_array().map(Vec::len))
        .collect();
    assert_eq!(ops, [2, 3], "{contents:#?}");
    let n = events.len();
    assert_eq!(events[n - 1]["type"], json!("RUN_FINISHED"));
    assert_eq!(events[n - 2]["type"], json!("TOOL_CALL_RESULT"));
    assert_eq!(events[n - 2]["toolCallId"], json!("tc-a2ui"));
    assert_eq!(events[n - 2]["content"], json!(r#"{"status":"rendered"}"#));

    // A user's action reaches the upstream as the logged tool call's result.
    let input = common::scratch("a2ui-gateway-action.json");
    std::fs::write(
        &input,
        json!({"forwardedProps": {"a2uiAction": {"userAction": {
            "name": "retry", "surfaceId": "status", "sourceComponentId": "state",
            "context": {"build": 7}
        }}}})
        .to_string(),
    )
    .unwrap();
    let file = common::scratch("a2ui-gateway-action.jsonl");
    let out = serve.agui(&[
        "record",
        &format!("{}agents/echo", serve.base),
        "--input",
        &input.to_string_lossy(),
        "-o",
        &file.to_string_lossy(),
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let applied = common::agui(&["apply", &file.to_string_lossy()]).json();
    let said = applied["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == json!("assistant")))
        .map(|m| m["content"].clone());
    assert_eq!(
        said,
        Some(json!(
            r#"User performed action "retry" on surface "status" (component: state). Context: {"build":7}"#
        )),
        "{applied:#}"
    );
    drop(serve);

    // Without --a2ui: the call as the upstream sent it, no activity.
    let serve = gateway(false);
    let file = common::scratch("a2ui-gateway-plain.jsonl");
    let out = serve.agui(&[
        "record",
        &format!("{}agents/x", serve.base),
        "--text",
        "show the build",
        "-o",
        &file.to_string_lossy(),
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let recorded = std::fs::read_to_string(&file).unwrap();
    assert!(!recorded.contains("ACTIVITY_SNAPSHOT"), "{recorded}");
    assert!(!recorded.contains("TOOL_CALL_RESULT"), "{recorded}");
    assert!(recorded.contains("TOOL_CALL_ARGS"), "{recorded}");
}

/// `GET /agent/threads/ID` of `agui serve` has `surfaces` (the thread's `a2ui-surface`
/// activities folded, as `agui apply --a2ui` prints them) only when the thread has some.
#[test]
fn a_stored_thread_read_has_its_surfaces() {
    let serve = common::Serve::start_with(&["--store", "memory"]);
    let record = |thread: &str, text: &str| {
        let input = common::scratch(&format!("a2ui-thread-{thread}.json"));
        std::fs::write(
            &input,
            json!({"threadId": thread, "messages": [{"id": format!("u-{thread}"), "role": "user", "content": text}]}).to_string(),
        )
        .unwrap();
        let out = serve.agui(&[
            "record",
            &serve.url,
            "--input",
            &input.to_string_lossy(),
            "-o",
            "-",
        ]);
        assert_eq!(out.code, 0, "{out:?}");
    };
    record("a2ui-flight", "flight status");
    record("a2ui-plain", "hello");
    let (status, body) = serve.get("/agent/threads/a2ui-flight");
    assert_eq!(status, 200, "{body}");
    let thread: Value = serde_json::from_str(&body).unwrap();
    let acts = thread["surfaces"].as_array().expect("surfaces");
    assert_eq!(acts.len(), 1, "{thread:#}");
    assert!(
        acts[0]["messageId"]
            .as_str()
            .is_some_and(|id| id.starts_with("a2ui-surface-")),
        "{thread:#}"
    );
    let surface = &acts[0]["surfaces"][0];
    assert_eq!(surface["surfaceId"], json!("flight-status"));
    assert_eq!(surface["dataModel"]["flight"]["status"], json!("On time"));
    assert_eq!(acts[0]["violations"], json!([]));
    let (status, body) = serve.get("/agent/threads/a2ui-plain");
    assert_eq!(status, 200, "{body}");
    let thread: Value = serde_json::from_str(&body).unwrap();
    assert!(thread.get("surfaces").is_none(), "{thread:#}");
    assert!(thread["messages"].as_array().is_some_and(|m| m.len() == 2));
}
