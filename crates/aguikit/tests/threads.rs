//! `agui run URL --thread ID` continues a stored thread: every run sends the whole
//! conversation, each user turn under its own id, and the store keeps every turn.

mod common;

use common::{Out, Serve};
use serde_json::Value;

/// `agui serve` with an in-memory store.
fn server() -> Serve {
    Serve::start_with(&["--store", "memory"])
}

/// `agui run URL --thread THREAD --text TEXT --json`, which must exit 0.
fn turn(server: &Serve, thread: &str, text: &str) -> Value {
    let out: Out = server.agui(&[
        "run",
        &server.url,
        "--thread",
        thread,
        "--text",
        text,
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    out.json()
}

/// The `data:` events of an SSE body.
fn events(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| serde_json::from_str(d.trim_start()).unwrap())
        .collect()
}

/// `(role, id, text)` of each message.
fn summary(messages: &Value) -> Vec<(String, String, String)> {
    messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_owned(),
                m["id"].as_str().unwrap().to_owned(),
                m["content"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

fn is_uuid(id: &str) -> bool {
    let groups: Vec<&str> = id.split('-').collect();
    groups.iter().map(|g| g.len()).collect::<Vec<_>>() == [8, 4, 4, 4, 12]
        && groups
            .iter()
            .all(|g| g.chars().all(|c| c.is_ascii_hexdigit()))
}

#[test]
fn three_turns_continued_from_the_cli_are_all_sent_and_stored() {
    let server = server();
    // An unknown thread starts under the id given.
    let first = turn(&server, "t1", "one");
    assert_eq!(first["threadId"], "t1");
    turn(&server, "t1", "two");
    let third = turn(&server, "t1", "three");

    // The third run's report: the whole conversation, each turn answered.
    let messages = summary(&third["messages"]);
    let roles: Vec<&str> = messages.iter().map(|(r, _, _)| r.as_str()).collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant"
        ],
        "{messages:#?}"
    );
    let users: Vec<&(String, String, String)> =
        messages.iter().filter(|(r, _, _)| r == "user").collect();
    assert_eq!(
        users.iter().map(|(_, _, t)| t.as_str()).collect::<Vec<_>>(),
        ["one", "two", "three"]
    );
    assert!(
        messages[5].2.contains("\"three\""),
        "the reply answers the last turn: {messages:#?}"
    );

    // What the server stored: three runs, each RUN_STARTED carrying the input it got.
    let (status, body) = server.get("/agent/threads/t1/connect?after=0");
    assert_eq!(status, 200, "{body}");
    let inputs: Vec<Value> = events(&body)
        .into_iter()
        .filter(|e| e["type"] == "RUN_STARTED")
        .map(|e| e["input"]["messages"].clone())
        .collect();
    assert_eq!(inputs.len(), 3, "{body}");
    // The server stores each run's input with only the messages the thread did not hold
    // yet (linear storage): as the client re-sent the earlier turns with their own ids,
    // each stored RUN_STARTED holds exactly the new turn.
    assert_eq!(
        inputs
            .iter()
            .map(|m| m.as_array().unwrap().len())
            .collect::<Vec<_>>(),
        [1, 1, 1],
        "each run's stored input holds only its new turn: {inputs:#?}"
    );
    let sent: Vec<(String, String, String)> = inputs.iter().flat_map(summary).collect();
    let sent_users: Vec<(&str, &str)> = sent
        .iter()
        .filter(|(r, _, _)| r == "user")
        .map(|(_, id, t)| (id.as_str(), t.as_str()))
        .collect();
    assert_eq!(
        sent_users.iter().map(|(_, t)| *t).collect::<Vec<_>>(),
        ["one", "two", "three"],
        "{sent:#?}"
    );
    // The thread route shows every turn.
    let (status, body) = server.get("/agent/threads/t1");
    assert_eq!(status, 200, "{body}");
    let thread: Value = serde_json::from_str(&body).unwrap();
    let texts: Vec<&str> = thread["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["one", "two", "three"], "{thread:#}");
    let mut ids: Vec<&str> = sent_users.iter().map(|(id, _)| *id).collect();
    assert!(ids.iter().all(|id| is_uuid(id)), "{ids:?}");
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 3, "distinct user message ids");
    // The same ids as in the report: the stored thread and the client agree.
    for (_, id, _) in &users {
        assert!(ids.contains(&id.as_str()), "{id} not sent");
    }

    // Replaying the stored thread gives every turn once.
    let (_, body) = server.get("/agent/threads/t1/connect?after=0");
    let mut replay = aguikit_core::engine::apply::Applier::new();
    for e in events(&body) {
        replay.push(&aguikit_core::Event::from_value(e).unwrap());
    }
    let stored = summary(&serde_json::to_value(replay.messages()).unwrap());
    assert_eq!(stored, messages);
}

#[test]
fn two_runs_make_different_uuid_message_ids() {
    let server = server();
    let id = |out: Out| -> String {
        assert_eq!(out.code, 0, "{out:?}");
        let report = out.json();
        let id = report["messages"][0]["id"].as_str().unwrap().to_owned();
        // The demo agent's reply has a UUID too.
        let reply = report["messages"][1]["id"].as_str().unwrap();
        assert!(is_uuid(reply), "{reply}");
        id
    };
    let a = id(server.agui(&["run", &server.url, "--text", "hi", "--json"]));
    let b = id(server.agui(&["run", &server.url, "--text", "hi", "--json"]));
    assert!(is_uuid(&a) && is_uuid(&b), "{a} {b}");
    assert_ne!(a, b);

    // `agui record`: the user message in RUN_STARTED's input.
    let recorded = || -> String {
        let out = server.agui(&["record", &server.url, "--text", "hi", "-o", "-"]);
        assert_eq!(out.code, 0, "{out:?}");
        let first: Value = serde_json::from_str(out.stdout.lines().next().unwrap()).unwrap();
        first["input"]["messages"][0]["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let (a, b) = (recorded(), recorded());
    assert!(is_uuid(&a) && is_uuid(&b), "{a} {b}");
    assert_ne!(a, b);
}
