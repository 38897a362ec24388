//! `agui replay FILE URL` against `agui serve --store memory`: a thread exported and sent
//! again comes back equal, run by run; a recording edited, or one without its inputs, comes
//! back different (exit 1) and says why; a server that refuses the runs is exit 2.

mod common;

use common::{Serve, assert_has, scratch};
use serde_json::Value;

/// A thread of two runs on `server`, exported as JSON Lines: the path and its events.
fn exported_thread(server: &Serve, name: &str) -> (String, Vec<Value>) {
    for text in ["weather in Paris", "count to 5"] {
        let out = server.agui(&["run", &server.url, "--thread", name, "--text", text]);
        assert_eq!(out.code, 0, "{out:?}");
    }
    let path = scratch(&format!("{name}.jsonl"));
    let path = path.to_str().unwrap().to_owned();
    let out = server.agui(&["threads", "export", &server.url, name, "-o", &path]);
    assert_eq!(out.code, 0, "{out:?}");
    let events = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (path, events)
}

fn write(name: &str, events: &[Value]) -> String {
    let path = scratch(name);
    let text: String = events.iter().map(|e| format!("{e}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn a_stored_thread_sent_again_comes_back_equal_run_by_run() {
    let server = Serve::start_with(&["--store", "memory"]);
    let (path, _) = exported_thread(&server, "rp");
    let out = server.agui(&["replay", &path, &server.url, "--thread", "rp-again"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_has(
        &out.stdout,
        &[
            "== run 1 of 2",
            "== run 2 of 2",
            "(13 events, after 30 events of history)",
            "every one came back equal",
        ],
    );
    // Each run on a thread of its own: the last holds the same conversation as the
    // original.
    let original = server
        .agui(&["threads", "show", &server.url, "rp", "--json"])
        .json();
    let again = server
        .agui(&["threads", "show", &server.url, "rp-again-2", "--json"])
        .json();
    let texts = |t: &Value| -> Vec<String> {
        t["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["content"].as_str().unwrap_or("").to_owned())
            .collect()
    };
    assert_eq!(texts(&again), texts(&original));
    assert_eq!(again["runs"].as_array().unwrap().len(), 1);
    let first = server
        .agui(&["threads", "show", &server.url, "rp-again-1", "--json"])
        .json();
    // Run 1 said: the question, a reply, a tool result and the answer.
    assert_eq!(texts(&first), texts(&original)[..4]);
}

#[test]
fn a_run_that_comes_back_otherwise_is_reported_with_its_divergence() {
    let server = Serve::start_with(&["--store", "memory"]);
    let (_, mut events) = exported_thread(&server, "rd");
    // The recorded reply of run 2 said something else.
    let n = events.len();
    let content = events
        .iter()
        .rposition(|e| e["type"] == "TEXT_MESSAGE_CONTENT")
        .unwrap();
    assert!(content > 30 && content < n);
    events[content]["delta"] = Value::from("(edited)");
    let path = write("rd-edited.jsonl", &events);
    let out = server.agui(&["replay", &path, &server.url, "--json"]);
    assert_eq!(out.code, 1, "{out:?}");
    let report = out.json();
    assert_eq!(report["equal"], false);
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(
        (runs[0]["equal"].clone(), runs[1]["equal"].clone()),
        (true.into(), false.into())
    );
    assert_eq!(runs[1]["divergence"]["index"], content - 30);
    assert_eq!(runs[1]["divergence"]["path"], "/delta");
    assert_eq!(runs[1]["divergence"]["left"], "(edited)");
    assert_eq!(runs[1]["messages"]["equal"], false);
    assert!(runs[1]["recordedRunId"].is_string() && runs[1]["sentRunId"].is_string());
    let out = server.agui(&["replay", &path, &server.url, "--color", "never"]);
    assert_eq!(out.code, 1);
    assert_has(&out.stdout, &["A and B differ", "1 differ"]);
}

#[test]
fn a_recording_without_inputs_is_sent_what_it_folds_and_says_so() {
    let server = Serve::start_with(&["--store", "memory"]);
    let (_, mut events) = exported_thread(&server, "rn");
    for e in &mut events {
        if let Some(o) = e.as_object_mut() {
            o.remove("input");
        }
    }
    let path = write("rn-bare.jsonl", &events);
    let out = server.agui(&["replay", &path, &server.url, "--json"]);
    // Run 1 was sent no message: the demo answers otherwise.
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("run 1: the recording holds no input"),
        "{out:?}"
    );
    let report = out.json();
    let notes = report["runs"][0]["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("no message is sent")),
        "{notes:?}"
    );
}

#[test]
fn refused_runs_and_unreadable_recordings_exit_2() {
    let server = Serve::start_with(&["--store", "memory"]);
    let (path, _) = exported_thread(&server, "rx");
    let out = server.agui(&[
        "replay",
        &path,
        &server.url,
        "--header",
        "Authorization: Bearer wrong-token-0123456789abcdef",
    ]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("run 1 was not replayed: HTTP 401"),
        "{out:?}"
    );
    let missing = scratch("rx-missing.jsonl");
    let out = server.agui(&["replay", missing.to_str().unwrap(), &server.url]);
    assert_eq!(out.code, 2, "{out:?}");
    let none = write(
        "rx-none.jsonl",
        &[serde_json::json!({"type": "CUSTOM", "name": "x", "value": 1})],
    );
    let out = server.agui(&["replay", &none, &server.url]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("no RUN_STARTED"), "{out:?}");
    let out = server.agui(&["replay", &path, "not a url"]);
    assert_eq!(out.code, 2, "{out:?}");
}
