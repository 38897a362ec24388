//! Interop with the official A2UI middleware (issue 40 item 6): `@ag-ui/a2ui-middleware`
//! 0.0.10 with the official client (`@ag-ui/client` 1.0.0), in front of the demo agent of
//! `agui serve` (its render_a2ui calls, without a middleware), gives event for event what
//! `agui serve` gives with its own middleware in front of the same agent: the same
//! `a2ui-surface` snapshots (message ids, lifecycle, operations, data) at the same places,
//! for each demo scenario; `agui verify --a2ui` accepts the official middleware's streams;
//! a user's action reaches an agent as the same `log_a2ui_event` result.
//!
//! The official packages are installed from the npm registry into `tests/a2ui_interop`
//! (`npm ci`, from its lockfile; `.ci/run` does it too). Node and npm are required: without
//! them, or when the install fails, the tests fail, unless `AGUI_SKIP_INTEROP=1`, which
//! skips them with a printed notice.

mod common;

#[allow(dead_code)] // the test uses the agent, not the help text
#[path = "../src/demo.rs"]
mod demo;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

/// The versions the comparison is about.
const MIDDLEWARE: (&str, &str) = ("@ag-ui/a2ui-middleware", "0.0.10");
const CLIENT: (&str, &str) = ("@ag-ui/client", "1.0.0");

/// The demo's A2UI scenarios: what the user says, the surface it paints.
const SCENARIOS: [(&str, &str); 3] = [
    ("flight status", "flight-status"),
    ("book a table", "book-table"),
    ("compare plans", "compare-plans"),
];

/// The installed version of a package of the test's node folder, if any.
fn installed(dir: &Path, package: &str) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("node_modules").join(package).join("package.json"))
        .ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    v["version"].as_str().map(str::to_owned)
}

/// `tests/a2ui_interop` with the official packages installed (`npm ci` when they are
/// missing or of other versions), once per process; `None`, with a notice, when
/// `AGUI_SKIP_INTEROP=1`.
///
/// # Panics
///
/// When Node or npm is missing or the install fails, and skipping was not asked for.
fn official_dir() -> Option<&'static Path> {
    if aguikit_peers::skip_requested() {
        eprintln!("SKIPPED A2UI interop test (AGUI_SKIP_INTEROP=1)");
        return None;
    }
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/a2ui_interop");
        for tool in ["node", "npm"] {
            let found = Command::new(tool)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success());
            if !found {
                return Err(format!(
                    "{tool} is not installed (the official middleware needs Node 20+)"
                ));
            }
        }
        let current = [MIDDLEWARE, CLIENT]
            .iter()
            .all(|(p, v)| installed(&dir, p).as_deref() == Some(*v));
        if !current {
            let out = Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund"])
                .current_dir(&dir)
                .output()
                .map_err(|e| format!("running npm ci: {e}"))?;
            if !out.status.success() {
                return Err(format!(
                    "npm ci in {} failed:\n{}\n{}",
                    dir.display(),
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
        for (p, v) in [MIDDLEWARE, CLIENT] {
            let got = installed(&dir, p);
            if got.as_deref() != Some(v) {
                return Err(format!("{p} is {got:?} after npm ci, not {v}"));
            }
        }
        Ok(dir)
    });
    match dir {
        Ok(d) => Some(d.as_path()),
        Err(why) => panic!("A2UI interop test cannot run: {why} (set AGUI_SKIP_INTEROP=1 to skip)"),
    }
}

/// `node official.mjs URL ARGS`: the official client's run through the official middleware
/// (it must accept the run).
fn official(dir: &Path, url: &str, args: &[&str]) -> Value {
    let out = Command::new("node")
        .arg("official.mjs")
        .arg(url)
        .args(args)
        .args(["--timeout", "20000"])
        .current_dir(dir)
        .output()
        .expect("node runs");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "official.mjs printed no report ({e}):\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(report["ok"], json!(true), "{url} {args:?}: {report:#}");
    assert_eq!(report["warnings"], json!([]), "{url} {args:?}: {report:#}");
    report
}

/// The demo agent alone (no middleware), served in this process.
fn raw_demo() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| common::serve_agent(|| demo::DemoAgent::new(Duration::ZERO)))
}

/// `agui serve` (its demo agent behind aguikit's middleware), shared by the tests.
fn served() -> &'static common::Serve {
    static SERVE: OnceLock<common::Serve> = OnceLock::new();
    SERVE.get_or_init(|| common::Serve::start_with(&["--store", "memory"]))
}

/// What `agui serve` streams for `text`, recorded, as events.
fn ours(text: &str) -> Vec<Value> {
    let serve = served();
    let file = common::scratch(&format!("a2ui-interop-{}.jsonl", text.replace(' ', "-")));
    let out = serve.agui(&[
        "record",
        &serve.url,
        "--text",
        text,
        "-o",
        &file.to_string_lossy(),
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The id of the `render_a2ui` call among the events (empty when none).
fn render_call(events: &[Value]) -> String {
    events
        .iter()
        .find(|e| {
            e["type"] == json!("TOOL_CALL_START") && e["toolCallName"] == json!("render_a2ui")
        })
        .and_then(|e| e["toolCallId"].as_str())
        .unwrap_or("")
        .to_owned()
}

/// The events with what may differ between two runs of the demo taken out: each keeps its
/// type; the `render_a2ui` call's id becomes `CALL` wherever it appears (message ids
/// included); activities keep their message id, type, `replace` and content; tool
/// arguments their delta; tool results their call and content; text its delta.
fn comparable(events: &[Value]) -> Vec<Value> {
    let call = render_call(events);
    let id = |v: &Value| -> Value {
        match v.as_str() {
            Some(s) if !call.is_empty() => json!(s.replace(&call, "CALL")),
            _ => v.clone(),
        }
    };
    events
        .iter()
        .map(|e| {
            let t = e["type"].clone();
            match e["type"].as_str().unwrap_or("") {
                "ACTIVITY_SNAPSHOT" => json!({
                    "type": t, "messageId": id(&e["messageId"]), "activityType": e["activityType"],
                    "replace": e["replace"], "content": e["content"]
                }),
                "TOOL_CALL_START" => json!({"type": t, "toolCallId": id(&e["toolCallId"]), "toolCallName": e["toolCallName"]}),
                "TOOL_CALL_ARGS" => json!({"type": t, "toolCallId": id(&e["toolCallId"]), "delta": e["delta"]}),
                "TOOL_CALL_RESULT" => json!({"type": t, "toolCallId": id(&e["toolCallId"]), "content": e["content"]}),
                "TEXT_MESSAGE_CONTENT" => json!({"type": t, "delta": e["delta"]}),
                _ => json!({"type": t}),
            }
        })
        .collect()
}

/// `agui apply --a2ui` of the events: the folded `a2ui-surface` activities, the call's id
/// as `CALL`.
fn applied_surfaces(events: &[Value], tag: &str) -> Value {
    let file = common::scratch(&format!("a2ui-interop-apply-{tag}.jsonl"));
    let lines: String = events.iter().map(|e| format!("{e}\n")).collect();
    std::fs::write(&file, lines).unwrap();
    let out = common::agui(&["apply", "--a2ui", &file.to_string_lossy()]);
    assert_eq!(out.code, 0, "{out:?}");
    let a2ui = out.json()["a2ui"].clone();
    let call = render_call(events);
    if call.is_empty() {
        return a2ui;
    }
    serde_json::from_str(&a2ui.to_string().replace(&call, "CALL")).unwrap()
}

/// For each demo scenario, the official middleware in front of the demo agent gives the
/// same events as `agui serve` with aguikit's middleware: the same `a2ui-surface`
/// snapshots (building, progress, the surface, list items, the data) in the same places,
/// the same message ids, the same surfaces once folded; and `agui verify --a2ui` accepts
/// the official stream against the spec's basic catalog.
#[test]
fn the_official_middleware_paints_the_demo_as_ours_does() {
    let Some(dir) = official_dir() else {
        return;
    };
    let catalog = common::shared_dir().join("a2ui/specification/v0_9/catalogs/basic/catalog.json");
    assert!(catalog.is_file(), "{} is missing", catalog.display());
    for (text, surface) in SCENARIOS {
        let report = official(dir, raw_demo(), &["--text", text]);
        let theirs: Vec<Value> = report["events"].as_array().cloned().unwrap_or_default();
        let ours = ours(text);
        let (a, b) = (comparable(&theirs), comparable(&ours));
        let snapshots = a
            .iter()
            .filter(|e| e["type"] == json!("ACTIVITY_SNAPSHOT"))
            .count();
        assert!(
            snapshots >= 3,
            "{text}: the official middleware painted nothing: {a:#?}"
        );
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            assert_eq!(x, y, "{text}: event {i} differs (official, then ours)");
        }
        assert_eq!(a.len(), b.len(), "{text}: official {a:#?}\nours {b:#?}");
        let (sa, sb) = (
            applied_surfaces(&theirs, "official"),
            applied_surfaces(&ours, "ours"),
        );
        assert_eq!(sa, sb, "{text}");
        assert_eq!(sa[0]["surfaces"][0]["surfaceId"], json!(surface), "{sa:#}");
        // Our verifier accepts the official middleware's stream.
        let file = common::scratch(&format!("a2ui-interop-official-{surface}.jsonl"));
        let lines: String = theirs.iter().map(|e| format!("{e}\n")).collect();
        std::fs::write(&file, lines).unwrap();
        let out = common::agui(&[
            "verify",
            "--a2ui",
            "--a2ui-catalog",
            &catalog.to_string_lossy(),
            &file.to_string_lossy(),
        ]);
        let v = out.json();
        assert_eq!(v["ok"], json!(true), "{text}: {v:#}");
        assert_eq!(v["a2ui"]["violations"], json!([]), "{text}: {v:#}");
        // What the official client folds: the surface activity and the call's result.
        let messages = report["messages"].as_array().cloned().unwrap_or_default();
        assert!(
            messages
                .iter()
                .any(|m| m["role"] == json!("activity")
                    && m["activityType"] == json!("a2ui-surface")),
            "{text}: {messages:#?}"
        );
    }
}

/// A user's action (`forwardedProps.a2uiAction.userAction`) reaches an agent as the same
/// `log_a2ui_event` result through the official middleware and through `agui serve --a2ui`
/// (the agent says the last message it was sent).
#[test]
fn a_users_action_reaches_the_agent_as_the_same_logged_result() {
    let Some(dir) = official_dir() else {
        return;
    };
    let echo = format!("{}/echo-last", common::scripted());
    let input = common::scratch("a2ui-interop-action.json");
    std::fs::write(
        &input,
        json!({"messages": [{"id": "u1", "role": "user", "content": "book a table"}],
               "forwardedProps": {"a2uiAction": {"userAction": {
            "name": "book", "surfaceId": "book-table", "sourceComponentId": "submit",
            "context": {"name": "Ada", "people": 4}
        }}}})
        .to_string(),
    )
    .unwrap();
    let input = input.to_string_lossy().into_owned();
    let report = official(dir, &echo, &["--input", &input]);
    let said = |messages: &Value| -> Option<Value> {
        messages
            .as_array()?
            .iter()
            .find(|m| m["role"] == json!("assistant") && m["content"].is_string())
            .map(|m| m["content"].clone())
    };
    let theirs = said(&report["messages"]);
    assert_eq!(
        theirs,
        Some(json!(
            r#"User performed action "book" on surface "book-table" (component: submit). Context: {"name":"Ada","people":4}"#
        )),
        "{report:#}"
    );
    let serve = common::Serve::start_with(&[
        "--store",
        "memory",
        "--a2ui",
        "--upstream",
        &format!("echo={echo}"),
    ]);
    let file = common::scratch("a2ui-interop-action.jsonl");
    let out = serve.agui(&[
        "record",
        &format!("{}agents/echo", serve.base),
        "--input",
        &input,
        "-o",
        &file.to_string_lossy(),
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let applied = common::agui(&["apply", &file.to_string_lossy()]).json();
    assert_eq!(said(&applied["messages"]), theirs, "{applied:#}");
}
