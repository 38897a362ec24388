//! `agui diff A B`: two recordings (in any format `decode` reads) and two runs of a stored
//! thread; the first divergence, the folds as unified diffs, `--json`, and the exit codes
//! (0 equal, 1 different, 2 usage and read problems).

mod common;

use common::{Serve, agui, agui_with_stdin, assert_has, scratch};
use serde_json::{Value, json};

/// A run saying `text` in one or more deltas, with state `{"n": n}`; ids made of `tag`.
fn recording(tag: &str, deltas: &[&str], n: u64) -> Vec<Value> {
    let (t, r, m) = (format!("t-{tag}"), format!("r-{tag}"), format!("m-{tag}"));
    let mut v = vec![json!({"type": "RUN_STARTED", "threadId": t, "runId": r, "timestamp": 1})];
    v.push(json!({"type": "TEXT_MESSAGE_START", "messageId": m, "role": "assistant"}));
    for d in deltas {
        v.push(json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": m, "delta": d}));
    }
    v.push(json!({"type": "TEXT_MESSAGE_END", "messageId": m}));
    v.push(json!({"type": "STATE_SNAPSHOT", "snapshot": {"n": n}}));
    v.push(json!({"type": "RUN_FINISHED", "threadId": t, "runId": r}));
    v
}

/// Writes events as JSON Lines to a scratch file.
fn write(name: &str, events: &[Value]) -> String {
    let path = scratch(name);
    let text: String = events.iter().map(|e| format!("{e}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn equal_recordings_exit_0_whatever_their_ids_and_timestamps() {
    let a = write("eq-a.jsonl", &recording("a", &["Hello"], 1));
    let mut b = recording("b", &["Hello"], 1);
    b[2]["timestamp"] = json!(99);
    let b = write("eq-b.jsonl", &b);
    let out = agui(&["diff", &a, &b]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_has(
        &out.stdout,
        &["events     equal", "messages   equal", "A and B are equal"],
    );
    // Exactly, the thread ids differ at once.
    let out = agui(&["diff", "--exact", &a, &b, "--json"]);
    assert_eq!(out.code, 1, "{out:?}");
    let report = out.json();
    assert_eq!(report["equal"], false);
    assert_eq!(report["divergence"]["index"], 0);
    assert_eq!(report["divergence"]["path"], "/threadId");
    assert_eq!(report["divergence"]["left"], "t-a");
    assert_eq!(report["divergence"]["right"], "t-b");
}

#[test]
fn a_divergence_names_the_event_the_field_and_both_values() {
    let a = write("dv-a.jsonl", &recording("a", &["Hel", "lo"], 1));
    let b = write("dv-b.jsonl", &recording("b", &["Hel", "p!"], 2));
    let out = agui(&["diff", &a, &b, "--color", "never"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_has(
        &out.stdout,
        &[
            "events     differ at event 3 (A: TEXT_MESSAGE_CONTENT, B: TEXT_MESSAGE_CONTENT), field /delta\n  A  \"lo\"\n  B  \"p!\"\n",
            "messages   differ\n  --- A messages\n  +++ B messages\n",
            "-    \"content\": \"Hello\"",
            "+    \"content\": \"Help!\"",
            "state      differ",
            "-  \"n\": 1\n",
            "+  \"n\": 2\n",
            "A and B differ",
        ],
    );
    let out = agui(&["diff", &a, &b, "--json"]);
    assert_eq!(out.code, 1);
    let report = out.json();
    assert_eq!(
        (
            &report["divergence"]["index"],
            &report["divergence"]["leftType"]
        ),
        (&json!(3), &json!("TEXT_MESSAGE_CONTENT"))
    );
    assert_eq!(report["messages"]["left"][0]["content"], "Hello");
    assert_eq!(report["messages"]["right"][0]["content"], "Help!");
    assert_eq!(report["state"]["equal"], false);
    assert_eq!(report["pendingInterrupts"]["equal"], true);
    // A shorter stream diverges where it ends.
    let short = recording("a", &["Hel", "lo"], 1);
    let c = write("dv-c.jsonl", &short[..5]);
    let out = agui(&["diff", &a, &c, "--json"]);
    assert_eq!(out.code, 1);
    let d = &out.json()["divergence"];
    assert_eq!((&d["index"], &d["path"]), (&json!(5), &json!("")));
    assert_eq!((&d["rightType"], &d["right"]), (&Value::Null, &Value::Null));
}

#[test]
fn folded_compares_what_the_streams_say_not_how_they_split_it() {
    let a = write("fo-a.jsonl", &recording("a", &["Hel", "lo"], 1));
    let b = write("fo-b.jsonl", &recording("b", &["H", "ell", "o"], 1));
    let out = agui(&["diff", &a, &b]);
    assert_eq!(out.code, 1, "{out:?}");
    let out = agui(&["diff", "--folded", &a, &b]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_has(
        &out.stdout,
        &[
            "events     differ at event 2",
            "A and B fold to the same messages",
        ],
    );
    // A field left out on purpose.
    let mut c = recording("a", &["Hel", "lo"], 1);
    c[1]["rawEvent"] = json!({"upstream": "x"});
    let c = write("fo-c.jsonl", &c);
    assert_eq!(agui(&["diff", &a, &c]).code, 1);
    assert_eq!(agui(&["diff", &a, &c, "--ignore", "rawEvent"]).code, 0);
}

#[test]
fn every_format_decode_reads_is_compared_as_its_events() {
    let events = recording("a", &["Hel", "lo"], 1);
    let jsonl = write("fmt.jsonl", &events);
    let array = scratch("fmt-array.json");
    std::fs::write(&array, Value::Array(events.clone()).to_string()).unwrap();
    let mut written = vec![array.to_string_lossy().into_owned()];
    for format in ["sse", "proto"] {
        let path = scratch(&format!("fmt.{format}"));
        let encoded = common::agui_command()
            .args(["encode", "--format", format, &jsonl])
            .output()
            .unwrap();
        assert!(encoded.status.success(), "{encoded:?}");
        std::fs::write(&path, encoded.stdout).unwrap();
        written.push(path.to_string_lossy().into_owned());
    }
    for other in &written {
        let out = agui(&["diff", "--exact", &jsonl, other]);
        assert_eq!(out.code, 0, "{other}: {out:?}");
    }
    // Standard input on one side.
    let text = std::fs::read(&jsonl).unwrap();
    let out = agui_with_stdin(&["diff", "-", &written[1]], &text);
    assert_eq!(out.code, 0, "{out:?}");
}

#[test]
fn read_problems_exit_2() {
    let a = write("bad-a.jsonl", &recording("a", &["x"], 1));
    let missing = scratch("bad-missing.jsonl");
    let out = agui(&["diff", &a, missing.to_str().unwrap()]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("bad-missing.jsonl"), "{out:?}");
    let broken = scratch("bad-broken.jsonl");
    std::fs::write(
        &broken,
        "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n{not json\n",
    )
    .unwrap();
    let out = agui(&["diff", &a, broken.to_str().unwrap()]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("event 1 is not JSON"), "{out:?}");
    let out = agui_with_stdin(&["diff", "-", "-"], b"");
    assert_eq!(out.code, 2, "{out:?}");
    let out = agui(&["diff", &a]);
    assert_eq!(out.code, 2, "{out:?}");
}

#[test]
fn two_runs_of_a_stored_thread() {
    let server = Serve::start_with(&["--store", "memory"]);
    for text in ["hi", "hi", "approve"] {
        let out = server.agui(&["run", &server.url, "--thread", "t", "--text", text]);
        assert_eq!(out.code, 0, "{out:?}");
    }
    // Runs 1 and 2 said the same (each compared by what it added to the thread).
    let out = server.agui(&["diff", "--thread", &server.url, "t", "1", "2"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_has(
        &out.stdout,
        &["(#1) of thread t", "(#2) of thread t", "A and B are equal"],
    );
    // The last run was asked something else: its input differs first.
    let out = server.agui(&["diff", "--thread", &server.url, "t", "2", "-1", "--json"]);
    assert_eq!(out.code, 1, "{out:?}");
    let report = out.json();
    assert_eq!(report["divergence"]["index"], 0);
    assert_eq!(report["divergence"]["path"], "/input/messages/0/content");
    assert_eq!(
        (
            &report["divergence"]["left"],
            &report["divergence"]["right"]
        ),
        (&json!("hi"), &json!("approve"))
    );
    assert_eq!(report["pendingInterrupts"]["equal"], false);
    assert_eq!(
        report["right"]["historyEvents"],
        report["left"]["events"].as_u64().unwrap() * 2
    );
    // A run by its id.
    let show = server.agui(&["threads", "show", &server.url, "t", "--json"]);
    let first = show.json()["runs"][0]["runId"].as_str().unwrap().to_owned();
    let out = server.agui(&["diff", "--thread", &server.url, "t", &first, "1"]);
    assert_eq!(out.code, 0, "{out:?}");
    // No such run, no such thread.
    let out = server.agui(&["diff", "--thread", &server.url, "t", "1", "4"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("no run \"4\": the thread has 3 run(s)"),
        "{out:?}"
    );
    let out = server.agui(&["diff", "--thread", &server.url, "nope", "1", "2"]);
    assert_eq!(out.code, 2, "{out:?}");
}
