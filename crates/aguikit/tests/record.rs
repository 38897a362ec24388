//! `agui record` against an in-process demo agent and the scripted server: the file holds
//! the events as received, `agui verify` accepts it, and a broken stream is kept as it came.

mod common;

#[allow(dead_code)] // the test uses the agent, not the help text
#[path = "../src/demo.rs"]
mod demo;

use common::{Out, agui, assert_has, scratch, scripted};
use serde_json::Value;
use std::sync::OnceLock;
use std::time::Duration;

/// The demo agent served in this process on a free loopback port; its `/agent` URL.
fn demo_url() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| common::serve_agent(|| demo::DemoAgent::new(Duration::ZERO)))
}

/// `agui record URL ARGS -o OUTPUT`.
fn record(url: &str, args: &[&str], output: &std::path::Path) -> Out {
    let mut all = vec!["record", url];
    all.extend_from_slice(args);
    all.extend(["-o", output.to_str().unwrap()]);
    agui(&all)
}

/// `agui record` of the scripted server's `path` (see [`scripted`]) into `output`.
fn record_scripted(path: &str, output: &std::path::Path) -> Out {
    record(&format!("{}{path}", scripted()), &[], output)
}

fn lines(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn types(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[test]
fn a_recording_of_the_demo_agent_verifies() {
    let file = scratch("weather.jsonl");
    let out = record(demo_url(), &["--text", "weather in Paris"], &file);
    assert_eq!(out.code, 0, "{out:?}");
    let recorded = lines(&file);
    let summary = out.stdout.trim_end();
    assert_eq!(summary.lines().count(), 1, "{summary}");
    assert!(
        summary.starts_with(&format!(
            "recorded {} events to {} (HTTP 200 text/event-stream, ",
            recorded.len(),
            file.display()
        )),
        "{summary}"
    );
    assert!(
        summary.ends_with("valid, ends with RUN_FINISHED"),
        "{summary}"
    );
    let types = types(&recorded);
    assert_eq!(types.first().map(String::as_str), Some("RUN_STARTED"));
    assert_eq!(types.last().map(String::as_str), Some("RUN_FINISHED"));
    for t in ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_RESULT"] {
        assert!(types.iter().any(|x| x == t), "no {t} in {types:?}");
    }
    let verify = agui(&["verify", file.to_str().unwrap()]);
    assert_eq!(verify.code, 0, "{verify:?}");
    assert_eq!(verify.json(), serde_json::json!({"ok": true}));
    let applied = agui(&["apply", file.to_str().unwrap()]).json();
    let tool = applied["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("a tool message");
    assert!(
        tool["content"].as_str().unwrap().contains("Paris"),
        "{tool}"
    );
}

#[test]
fn protobuf_input_file_and_standard_output() {
    let input = scratch("count-input.json");
    std::fs::write(
        &input,
        r#"{"threadId": "thread-rec", "messages": [{"id": "u1", "role": "user", "content": "count to 3"}], "state": {"count": 0}}"#,
    )
    .unwrap();
    let out = record(
        demo_url(),
        &["--proto", "--input", input.to_str().unwrap()],
        std::path::Path::new("-"),
    );
    assert_eq!(out.code, 0, "{out:?}");
    // The events go to standard output, the summary to standard error.
    assert_has(
        &out.stderr,
        &["(HTTP 200 application/vnd.ag-ui.event+proto, "],
    );
    let recorded: Vec<String> = out.stdout.lines().map(str::to_owned).collect();
    let first: Value = serde_json::from_str(&recorded[0]).unwrap();
    assert_eq!(first["threadId"], "thread-rec");
    assert_eq!(
        types(&recorded)
            .iter()
            .filter(|t| *t == "STATE_DELTA")
            .count(),
        4
    );
    let file = scratch("count.jsonl");
    std::fs::write(&file, &out.stdout).unwrap();
    let applied = agui(&["apply", file.to_str().unwrap()]).json();
    assert_eq!(applied["state"], serde_json::json!({"count": 3}));
}

#[test]
fn events_are_saved_as_received_before_expansion() {
    let file = scratch("chunks.jsonl");
    let out = record_scripted("/chunks", &file);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        types(&lines(&file)),
        [
            "RUN_STARTED",
            "TEXT_MESSAGE_CHUNK",
            "TEXT_MESSAGE_CHUNK",
            "RUN_FINISHED"
        ]
    );
    // Byte for byte what the server sent in each data line.
    assert_eq!(
        lines(&file)[1],
        r#"{"type":"TEXT_MESSAGE_CHUNK","messageId":"m","delta":"Hel"}"#
    );
}

#[test]
fn a_broken_stream_is_kept_and_inspect_finds_the_break() {
    let file = scratch("malformed.jsonl");
    let out = record_scripted("/malformed", &file);
    // Recorded, but the run failed verification.
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stdout
            .trim_end()
            .ends_with("breaks at event 1 (not JSON): schema: not JSON: EOF while parsing a value at line 1 column 29"),
        "{}",
        out.stdout
    );
    let saved = lines(&file);
    assert_eq!(saved.len(), 3);
    assert_eq!(saved[1], r#"{"type":"TEXT_MESSAGE_START","#);
    let inspect = agui(&["inspect", file.to_str().unwrap()]);
    assert_eq!(inspect.code, 1);
    assert!(
        inspect
            .stdout
            .contains("✗ breaks at event 1 (not JSON): rule schema"),
        "{}",
        inspect.stdout
    );
}

#[test]
fn stamped_recordings_have_times_and_failures_exit_1_or_2() {
    let file = scratch("stamped.jsonl");
    let out = record(demo_url(), &["--text", "think about tea", "--stamp"], &file);
    assert_eq!(out.code, 0, "{out:?}");
    for l in lines(&file) {
        let v: Value = serde_json::from_str(&l).unwrap();
        assert!(v["timestamp"].is_i64(), "{l}");
    }
    let inspect = agui(&["inspect", file.to_str().unwrap()]);
    assert!(
        inspect.stdout.lines().nth(1).unwrap().contains("+0.000s"),
        "{}",
        inspect.stdout
    );
    assert!(inspect.stdout.contains("reasoning"), "{}", inspect.stdout);

    let http_500 = record_scripted("/http-500", &scratch("never.jsonl"));
    // No run at all: a connection problem.
    assert_eq!(http_500.code, 2);
    assert_has(&http_500.stderr, &["nothing recorded: HTTP 500"]);
    assert!(!scratch("never.jsonl").exists());
    let dropped = scratch("dropped.jsonl");
    let out = record_scripted("/drop", &dropped);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(lines(&dropped).len(), 3, "what arrived is kept");
    assert_has(&out.stdout, &["the connection broke"]);
}
