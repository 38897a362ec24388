//! `agui serve` and `agui check` against peers we did not write (`../shared/interop`): the
//! official TypeScript client (`@ag-ui/client` 1.0.0, full pipeline) runs every demo
//! behaviour against `agui serve`, and `agui check` runs against the official Python SDK
//! server's scenarios — clean on the well-formed ones, non-zero naming the problem on every
//! faulty one.
//!
//! The peers are set up by `aguikit-peers` (copied to `<workspace>/target/interop`, installed
//! with `setup.sh --no-browser`). Node, npm and python3 are required: without them, or if
//! the setup fails, the tests fail. `AGUI_SKIP_INTEROP=1` skips them, with a printed notice.

mod common;

use aguikit_peers::{PyServer, WELL_FORMED};
use common::{Serve, agui};
use serde_json::{Value, json};
use std::path::Path;

/// The set-up interop folder (`None`: skipped); see [`aguikit_peers::interop_dir`].
fn require_interop() -> Option<&'static Path> {
    aguikit_peers::interop_dir()
}

/// `node ts-client/client.mjs URL ARGS`: the official client's report.
fn ts_client(dir: &Path, url: &str, args: &[&str]) -> Value {
    let out = aguikit_peers::ts_client(dir, url, args)
        .args(["--timeout", "20000"])
        .args(["--header", &format!("Authorization:{}", common::bearer())])
        .output()
        .expect("node runs");
    aguikit_peers::report(&out)
}

/// Runs one demo behaviour through the official client and checks what every run must show.
fn behaviour(args: &[&str], terminal: &str) -> Option<Value> {
    let dir = require_interop()?;
    let server = Serve::start();
    let report = ts_client(dir, &server.url, args);
    assert_eq!(report["ok"], true, "{args:?}: {report:#}");
    assert_eq!(report["warnings"], json!([]), "{args:?}: {report:#}");
    assert_eq!(report["unhandledRejections"], json!([]), "{report:#}");
    assert_eq!(report["httpStatus"], 200, "{report:#}");
    assert_eq!(report["terminal"], terminal, "{args:?}: {report:#}");
    Some(report)
}

fn messages<'a>(report: &'a Value, role: &str) -> Vec<&'a Value> {
    report["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == role)
        .collect()
}

/// The text of a message.
fn content(message: &Value) -> &str {
    message["content"].as_str().unwrap()
}

fn events(report: &Value) -> Vec<&str> {
    report["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect()
}

#[test]
fn ts_client_plain_message() {
    let Some(r) = behaviour(&["--text", "hello there"], "RUN_FINISHED") else {
        return;
    };
    assert_eq!(r["contentType"], "text/event-stream");
    assert_eq!(r["outcome"], "success");
    let replies = messages(&r, "assistant");
    assert_eq!(replies.len(), 1, "{r:#}");
    assert!(
        content(replies[0]).starts_with("You said: \"hello there\"."),
        "{r:#}"
    );
}

#[test]
fn ts_client_plain_message_over_protobuf() {
    let Some(r) = behaviour(&["--text", "hello", "--proto"], "RUN_FINISHED") else {
        return;
    };
    assert_eq!(r["contentType"], "application/vnd.ag-ui.event+proto");
    assert_eq!(messages(&r, "assistant").len(), 1, "{r:#}");
}

#[test]
fn ts_client_weather_tool_call() {
    let Some(r) = behaviour(&["--text", "weather in Paris"], "RUN_FINISHED") else {
        return;
    };
    let ev = events(&r);
    for t in [
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
    ] {
        assert!(ev.contains(&t), "no {t}: {ev:?}");
    }
    let call = messages(&r, "assistant")
        .into_iter()
        .find_map(|m| m["toolCalls"].as_array())
        .expect("an assistant message with a tool call");
    assert_eq!(call[0]["function"]["name"], "get_weather");
    let args: Value =
        serde_json::from_str(call[0]["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({"city": "Paris", "unit": "celsius"}));
    let tool = messages(&r, "tool");
    assert_eq!(tool.len(), 1, "{r:#}");
    assert_eq!(tool[0]["toolCallId"], call[0]["id"]);
    assert!(tool[0]["content"].as_str().unwrap().contains("\"Paris\""));
}

#[test]
fn ts_client_plan_activity() {
    let Some(r) = behaviour(&["--text", "plan a trip"], "RUN_FINISHED") else {
        return;
    };
    assert!(events(&r).contains(&"ACTIVITY_DELTA"), "{r:#}");
    let activity = messages(&r, "activity");
    assert_eq!(activity.len(), 1, "{r:#}");
    assert_eq!(activity[0]["activityType"], "PLAN");
    let steps = activity[0]["content"]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 4);
    assert!(steps.iter().all(|s| s["status"] == "done"), "{steps:?}");
}

#[test]
fn ts_client_think_reasoning() {
    let Some(r) = behaviour(&["--text", "think about tea"], "RUN_FINISHED") else {
        return;
    };
    let ev = events(&r);
    assert!(ev.contains(&"REASONING_START") && ev.contains(&"REASONING_END"));
    let reasoning = messages(&r, "reasoning");
    assert_eq!(reasoning.len(), 1, "{r:#}");
    assert!(content(reasoning[0]).contains("think about tea"), "{r:#}");
    assert!(content(messages(&r, "assistant")[0]).contains("Having thought about tea"));
}

#[test]
fn ts_client_research_subagents() {
    let Some(r) = behaviour(&["--text", "research rust"], "RUN_FINISHED") else {
        return;
    };
    let ev = events(&r);
    assert_eq!(
        ev.iter().filter(|t| **t == "SUBAGENT_STARTED").count(),
        2,
        "{ev:?}"
    );
    assert_eq!(ev.iter().filter(|t| **t == "SUBAGENT_FINISHED").count(), 2);
    let attributed: Vec<&str> = messages(&r, "assistant")
        .into_iter()
        .filter_map(|m| m["subagentRunId"].as_str())
        .collect();
    assert_eq!(attributed.len(), 6, "{r:#}");
    let mut lanes = attributed.clone();
    lanes.sort_unstable();
    lanes.dedup();
    assert_eq!(lanes.len(), 2, "two subagents: {attributed:?}");
}

#[test]
fn ts_client_approve_then_auto_resume() {
    let Some(r) = behaviour(&["--text", "approve", "--auto-resume"], "RUN_FINISHED") else {
        return;
    };
    let first = &r["firstRun"];
    assert_eq!(first["outcome"], "interrupt", "{r:#}");
    assert_eq!(first["interrupts"][0]["reason"], "approval");
    assert_eq!(r["outcome"], "success");
    assert_eq!(r["result"], json!({"approved": true}));
    assert_eq!(r["pendingInterrupts"], json!([]));
    let texts: Vec<&str> = messages(&r, "assistant")
        .into_iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(
        texts.contains(&"Approved: the demo action is done."),
        "{texts:?}"
    );
}

#[test]
fn ts_client_count_state_deltas() {
    let Some(r) = behaviour(&["--text", "count to 3"], "RUN_FINISHED") else {
        return;
    };
    assert_eq!(r["state"], json!({"count": 3}), "{r:#}");
    assert!(
        events(&r).iter().filter(|t| **t == "STATE_DELTA").count() >= 3,
        "{r:#}"
    );
}

#[test]
fn ts_client_fail_ends_in_run_error() {
    let Some(r) = behaviour(&["--text", "fail"], "RUN_ERROR") else {
        return;
    };
    assert_eq!(r["runError"]["code"], "demo_failure", "{r:#}");
    assert_eq!(events(&r).last(), Some(&"RUN_ERROR"));
}

/// The official Python SDK server's agent endpoint.
fn py_server(dir: &Path) -> (PyServer, String) {
    let server = PyServer::start(dir, "aguikit-check");
    let url = server.url();
    (server, url)
}

fn check(url: &str) -> (i32, Value) {
    let out = agui(&["check", url, "--json", "--timeout-ms", "10000"]);
    (out.code, out.json())
}

#[test]
fn check_reports_every_faulty_py_scenario() {
    let Some(dir) = require_interop() else { return };
    let (_server, url) = py_server(dir);
    // Each scenario, the rule and event index the plain input's violation must name.
    for (scenario, rule, index) in [
        ("fault_malformed_json", "schema", Some(3)),
        ("fault_not_object", "not-an-object", Some(3)),
        ("fault_schema", "schema", Some(3)),
        ("fault_missing_field", "schema", Some(1)),
        ("fault_sequence", "V16", Some(1)),
        ("fault_first_event", "V3", Some(0)),
        ("fault_after_finish", "V2", Some(2)),
        ("fault_unclosed", "V49", Some(4)),
        ("fault_drop", "transport", None),
        ("fault_truncated", "no-terminal", Some(3)),
        ("fault_http_500", "http-status", None),
    ] {
        let url = format!("{url}?scenario={scenario}");
        let (code, report) = check(&url);
        // Every input answered with HTTP 500: nothing could be checked (exit 2).
        let expected = if scenario == "fault_http_500" { 2 } else { 1 };
        assert_eq!(code, expected, "{scenario}: {report:#}");
        assert_eq!(report["ok"], false);
        let plain: Vec<&Value> = report["violations"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v["input"] == "plain")
            .collect();
        assert_eq!(plain.len(), 1, "{scenario}: {plain:#?}");
        assert_eq!(plain[0]["rule"], rule, "{scenario}: {plain:#?}");
        assert_eq!(plain[0]["index"].as_u64(), index, "{scenario}: {plain:#?}");
        // Every input hits the same scripted fault.
        for run in report["runs"].as_array().unwrap() {
            assert!(
                !run["violations"].as_array().unwrap().is_empty(),
                "{scenario}: {run:#}"
            );
        }
    }
}

#[test]
fn check_passes_well_formed_py_scenarios_and_follows_up() {
    let Some(dir) = require_interop() else { return };
    let (_server, url) = py_server(dir);
    let reports: Vec<(&str, i32, Value)> = std::thread::scope(|s| {
        let handles: Vec<_> = WELL_FORMED
            .iter()
            .map(|scenario| {
                let url = format!("{url}?scenario={scenario}");
                s.spawn(move || {
                    let (code, report) = check(&url);
                    (*scenario, code, report)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (scenario, code, report) in &reports {
        assert_eq!(*code, 0, "{scenario}: {report:#}");
        // The Python SDK validates every request body: every input was accepted.
        for run in report["runs"].as_array().unwrap() {
            assert_eq!(run["httpStatus"], 200, "{scenario}: {run:#}");
        }
    }
    let report = |name: &str| &reports.iter().find(|r| r.0 == name).unwrap().2;
    // The interrupt scenario pauses every input; each is answered with a resume run that
    // the Python SDK server finishes successfully.
    let runs = report("interrupt")["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 12);
    for pair in runs.chunks(2) {
        assert_eq!(pair[0]["outcome"], "interrupt", "{pair:?}");
        assert!(pair[1]["name"].as_str().unwrap().ends_with(" → resume"));
        assert_eq!(pair[1]["outcome"], "success", "{pair:?}");
    }
    // The front-end tool call left pending is answered with a tool message.
    let runs = report("frontend_tool")["runs"].as_array().unwrap();
    let answer = runs
        .iter()
        .find(|r| r["name"] == "frontend-tools → tool results")
        .unwrap_or_else(|| panic!("{runs:#?}"));
    assert_eq!(answer["violations"], json!([]));
    // An event type from the future is no violation, but it is noted.
    let notes = &report("unknown_event")["runs"][0]["notes"];
    assert!(
        notes
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("unknown event type")),
        "{notes:#}"
    );
}
