//! `agui threads list|show|delete|export` against `agui serve --store memory`.

mod common;

use common::{Serve, assert_has};

/// A server with threads `a` ("first") and `b` ("second"), in that order.
fn server_with_two_threads() -> Serve {
    let server = Serve::start_with(&["--store", "memory"]);
    for (id, text) in [("a", "first"), ("b", "second")] {
        let out = server.agui(&["run", &server.url, "--thread", id, "--text", text]);
        assert_eq!(out.code, 0, "{out:?}");
    }
    server
}

fn ids(page: &serde_json::Value) -> Vec<&str> {
    page["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["threadId"].as_str().unwrap())
        .collect()
}

#[test]
fn list_pages_and_all() {
    let server = server_with_two_threads();
    let out = server.agui(&["threads", "list", &server.url, "--json"]);
    assert_eq!(out.code, 0, "{out:?}");
    let page = out.json();
    assert_eq!(ids(&page), ["b", "a"], "{page:#}");
    assert_eq!(page["threads"][0]["title"], "second");
    assert_eq!(page["nextCursor"], serde_json::Value::Null);

    // One a page: the cursor leads to the next one.
    let out = server.agui(&["threads", "list", &server.url, "--limit", "1", "--json"]);
    assert_eq!(out.code, 0, "{out:?}");
    let first = out.json();
    assert_eq!(ids(&first), ["b"]);
    let cursor = first["nextCursor"]
        .as_str()
        .expect("a next page")
        .to_owned();
    let out = server.agui(&[
        "threads",
        "list",
        &server.url,
        "--limit",
        "1",
        "--cursor",
        &cursor,
        "--json",
    ]);
    assert_eq!(ids(&out.json()), ["a"], "{out:?}");

    let out = server.agui(&[
        "threads",
        "list",
        &server.url,
        "--limit",
        "1",
        "--all",
        "--json",
    ]);
    let all = out.json();
    assert_eq!(ids(&all), ["b", "a"], "{out:?}");
    assert_eq!(all["nextCursor"], serde_json::Value::Null);

    // The readable list, and its hint to the next page.
    let out = server.agui(&["threads", "list", &server.url, "--limit", "1"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_has(
        &out.stdout,
        &["b ", "1 runs", "finished", "second", "more: --cursor "],
    );
    assert!(!out.stdout.contains("first"), "{}", out.stdout);

    let out = server.agui(&["threads", "list", &server.url, "--limit", "0"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert_has(&out.stderr, &["--limit must be from 1 to 1000"]);
}

#[test]
fn show_gives_messages_and_runs() {
    let server = server_with_two_threads();
    let out = server.agui(&["threads", "show", &server.url, "a", "--json"]);
    assert_eq!(out.code, 0, "{out:?}");
    let t = out.json();
    assert_eq!(t["threadId"], "a");
    assert_eq!(t["messages"][0]["content"], "first", "{t:#}");
    assert_eq!(t["runs"].as_array().unwrap().len(), 1);

    let out = server.agui(&["threads", "show", &server.url, "a"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_has(
        &out.stdout,
        &["thread a", "runs     1", "finished", "user      first"],
    );

    let out = server.agui(&["threads", "show", &server.url, "nope"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_has(&out.stderr, &["HTTP 404", "nope"]);
}

#[test]
fn delete_removes_threads_and_names_those_it_could_not() {
    let server = server_with_two_threads();
    let out = server.agui(&["threads", "delete", &server.url, "a", "nope"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_has(&out.stdout, &["deleted a"]);
    assert_has(&out.stderr, &["HTTP 404", "nope was not deleted"]);
    let out = server.agui(&["threads", "list", &server.url, "--json"]);
    assert_eq!(ids(&out.json()), ["b"], "{out:?}");

    // An id with a space and a slash is one path segment.
    let odd = "x/y z";
    let out = server.agui(&["run", &server.url, "--thread", odd, "--text", "odd"]);
    assert_eq!(out.code, 0, "{out:?}");
    let out = server.agui(&["threads", "show", &server.url, odd, "--json"]);
    assert_eq!(out.json()["threadId"], odd, "{out:?}");
    let out = server.agui(&["threads", "delete", &server.url, odd]);
    assert_eq!(out.code, 0, "{out:?}");
    let out = server.agui(&["threads", "list", &server.url, "--json"]);
    assert_eq!(ids(&out.json()), ["b"], "{out:?}");
}

#[test]
fn export_writes_json_lines_that_apply() {
    let server = server_with_two_threads();
    let file = common::scratch("export.jsonl");
    let path = file.to_str().unwrap();
    let out = server.agui(&["threads", "export", &server.url, "b", "-o", path]);
    assert_eq!(out.code, 0, "{out:?}");
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "RUN_STARTED", "{text}");
    assert_eq!(lines[0]["threadId"], "b");
    assert_eq!(lines.last().unwrap()["type"], "RUN_FINISHED", "{text}");
    assert_has(&out.stderr, &[&format!("{} events written", lines.len())]);
    let folded = server.agui(&["apply", path]);
    assert_eq!(folded.code, 0, "{folded:?}");
    assert_has(&folded.stdout, &["second"]);

    // To standard output, compacted: fewer events, the same conversation.
    let out = server.agui(&["threads", "export", &server.url, "b", "--compacted"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.lines().count() < lines.len(), "{}", out.stdout);

    let out = server.agui(&["threads", "export", &server.url, "nope"]);
    assert_eq!(out.code, 1, "{out:?}");
}

#[test]
fn without_the_token_the_server_refuses_and_the_hint_says_why() {
    let server = server_with_two_threads();
    let out = common::run_piped(common::agui_command().env_remove("AGUI_TOKEN").args([
        "threads",
        "list",
        &server.url,
    ]));
    assert_eq!(out.code, 2, "{out:?}");
    assert_has(&out.stderr, &["HTTP 401", "AGUI_TOKEN"]);
}
