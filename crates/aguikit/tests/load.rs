//! `agui load` against `agui serve`: every run verifies; failures are grouped by reason.

mod common;

use common::{Serve, agui, assert_has, scripted};

/// With several threads the runs are the same, and the report says how many made them.
#[test]
fn runs_on_several_threads_verify_the_same() {
    let server = Serve::start();
    let out = agui(&[
        "load",
        &server.url,
        "--runs",
        "40",
        "--concurrency",
        "8",
        "--threads",
        "3",
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let r = out.json();
    assert_eq!(r["threads"], 3);
    assert_eq!(r["okCount"], 40, "{r:#}");
    assert_eq!(r["terminals"], serde_json::json!({"RUN_FINISHED": 40}));
}

#[test]
fn fifty_runs_eight_at_a_time_all_ok() {
    let server = Serve::start();
    let out = agui(&[
        "load",
        &server.url,
        "--runs",
        "50",
        "--concurrency",
        "8",
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let r = out.json();
    assert_eq!(r["runs"], 50);
    assert_eq!(r["concurrency"], 8);
    assert_eq!(r["threads"], 1);
    assert_eq!(r["okCount"], 50, "{r:#}");
    assert_eq!(r["failed"], 0);
    assert_eq!(r["failures"], serde_json::json!([]));
    assert_eq!(r["terminals"], serde_json::json!({"RUN_FINISHED": 50}));
    // The demo's reply to "hello" has the same events every time.
    let events = r["events"].as_u64().unwrap();
    assert!(events >= 50 * 5 && events.is_multiple_of(50), "{events}");
    let lat = &r["latencyMs"];
    let (p50, p90, p99, max) = (
        lat["p50"].as_f64().unwrap(),
        lat["p90"].as_f64().unwrap(),
        lat["p99"].as_f64().unwrap(),
        lat["max"].as_f64().unwrap(),
    );
    assert!(0.0 < p50 && p50 <= p90 && p90 <= p99 && p99 <= max, "{lat}");
    assert!(r["firstEventMs"]["p50"].as_f64().unwrap() <= max);
    assert!(r["runsPerSec"].as_f64().unwrap() > 0.0);
    let eps = r["eventsPerSec"].as_f64().unwrap();
    let rps = r["runsPerSec"].as_f64().unwrap();
    let per_run = events as f64 / 50.0;
    assert!(
        (eps / rps - per_run).abs() < 0.5,
        "{eps} / {rps} vs {per_run}"
    );
    // No progress bar when standard error is not a terminal.
    assert_eq!(out.stderr, "");
}

#[test]
fn protobuf_and_the_readable_report() {
    let server = Serve::start();
    let out = agui(&[
        "load",
        &server.url,
        "--runs",
        "20",
        "--concurrency",
        "4",
        "--proto",
        "--text",
        "count to 3",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.starts_with(&format!(
            "agui load {} · 20 runs · concurrency 4 · proto-requested\n",
            server.url
        )),
        "{}",
        out.stdout
    );
    assert_has(
        &out.stdout,
        &[
            "\n  ok           20/20\n",
            "\n  terminals    RUN_FINISHED 20\n",
            "\n  failures     none\n",
        ],
    );
    assert!(!out.stdout.contains('\x1b'));
}

#[test]
fn failures_are_grouped_by_reason() {
    let out = agui(&[
        "load",
        &format!("{}/http-500", scripted()),
        "--runs",
        "10",
        "--concurrency",
        "3",
        "--json",
    ]);
    // No run got a 2xx answer: a connection problem.
    assert_eq!(out.code, 2, "{out:?}");
    let r = out.json();
    assert_eq!(r["okCount"], 0);
    assert_eq!(
        r["failures"],
        serde_json::json!([{"reason": "HTTP 500", "count": 10}])
    );
    let out = agui(&[
        "load",
        &format!("{}/content-before-start", scripted()),
        "--runs",
        "4",
        "--json",
    ]);
    assert_eq!(out.code, 1);
    assert_eq!(
        out.json()["failures"],
        serde_json::json!([{"reason": "V3 at TEXT_MESSAGE_CONTENT", "count": 4}])
    );
    let bad = agui(&["load", "http://127.0.0.1:9/agent", "--runs", "0"]);
    assert_eq!(bad.code, 2);
}

/// The ids of the threads `GET /agent/threads` lists (the first page, up to 1000, with load
/// threads).
fn listed_threads(server: &Serve) -> Vec<String> {
    let (status, body) = server.get("/agent/threads?limit=1000&load=true");
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    v["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["threadId"].as_str().unwrap().to_owned())
        .collect()
}

/// Every thread a load makes is marked by its id, and `--cleanup` deletes them all, leaving
/// the others alone.
#[test]
fn cleanup_deletes_every_thread_the_load_made() {
    let server = Serve::start_with(&["--store", "memory"]);
    let mine = server.agui(&["run", &server.url, "--text", "keep me", "--thread", "mine"]);
    assert_eq!(mine.code, 0, "{mine:?}");

    let out = server.agui(&[
        "load",
        &server.url,
        "--runs",
        "12",
        "--concurrency",
        "4",
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.json().get("cleanup").is_none(), "{}", out.stdout);
    let listed = listed_threads(&server);
    assert_eq!(listed.len(), 13, "{listed:?}");
    let load: Vec<&String> = listed.iter().filter(|t| *t != "mine").collect();
    assert!(
        load.iter().all(|t| t.starts_with("agui-load-")),
        "{listed:?}"
    );

    let out = server.agui(&[
        "load",
        &server.url,
        "--runs",
        "12",
        "--concurrency",
        "4",
        "--cleanup",
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let r = out.json();
    assert_eq!(r["okCount"], 12, "{r:#}");
    assert_eq!(
        r["cleanup"],
        serde_json::json!({"deleted": 12, "failures": []}),
        "{r:#}"
    );
    // The first load's threads stay (they were not this load's), the second's are gone.
    assert_eq!(listed_threads(&server).len(), 13);

    let out = server.agui(&["load", &server.url, "--runs", "3", "--cleanup"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_has(&out.stdout, &["cleanup", "3 threads deleted"]);
    assert_eq!(listed_threads(&server).len(), 13);
}

/// A server that keeps no threads cannot delete them: the report says why and the exit
/// code is 1, although every run succeeded.
#[test]
fn cleanup_against_a_server_without_threads_fails_with_the_reason() {
    let url = format!("{}/ok", scripted());
    let out = agui(&["load", &url, "--runs", "3", "--cleanup", "--json"]);
    assert_eq!(out.code, 1, "{out:?}");
    let r = out.json();
    assert_eq!(r["okCount"], 3, "{r:#}");
    assert_eq!(r["cleanup"]["deleted"], 0, "{r:#}");
    let failures = r["cleanup"]["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1, "{r:#}");
    assert_eq!(failures[0]["count"], 3, "{r:#}");
    assert_eq!(failures[0]["reason"], "DELETE answered HTTP 404", "{r:#}");
}

/// The thread list leaves load threads out unless asked (`?load=true`), then marks them;
/// a page is filled past them.
#[test]
fn load_threads_are_hidden_from_the_thread_list_unless_asked() {
    let server = Serve::start_with(&["--store", "memory"]);
    let mine = server.agui(&["run", &server.url, "--text", "keep me", "--thread", "mine"]);
    assert_eq!(mine.code, 0, "{mine:?}");
    let out = server.agui(&["load", &server.url, "--runs", "30", "--concurrency", "4"]);
    assert_eq!(out.code, 0, "{out:?}");

    // 30 newer load threads, then `mine`: a page of 50 is `mine` alone.
    for query in ["", "?limit=50"] {
        let (status, body) = server.get(&format!("/agent/threads{query}"));
        assert_eq!(status, 200, "{body}");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["threads"].as_array().unwrap().len(), 1, "{query}: {v:#}");
        assert_eq!(v["threads"][0]["threadId"], "mine", "{v:#}");
        assert!(v["threads"][0].get("load").is_none(), "{v:#}");
        assert_eq!(v["nextCursor"], serde_json::Value::Null, "{query}: {v:#}");
    }
    // Pages of one: a request reads a bounded number of store pages, so a page may come
    // back short, with its cursor; following the cursors gives `mine` alone.
    let mut listed = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..30 {
        let query = match &cursor {
            Some(c) => format!("?limit=1&cursor={c}"),
            None => "?limit=1".to_owned(),
        };
        let (status, body) = server.get(&format!("/agent/threads{query}"));
        assert_eq!(status, 200, "{body}");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        for t in v["threads"].as_array().unwrap() {
            listed.push(t["threadId"].as_str().unwrap().to_owned());
        }
        cursor = v["nextCursor"].as_str().map(str::to_owned);
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(cursor, None, "the pages do not end");
    assert_eq!(listed, ["mine"]);
    let (_, body) = server.get("/agent/threads?limit=1000&load=true");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let threads = v["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 31, "{v:#}");
    let marked = threads.iter().filter(|t| t["load"] == true).count();
    assert_eq!(marked, 30, "{v:#}");
    // `agui threads list` shows what the route shows; `--load` includes them, marked.
    let out = server.agui(&["threads", "list", &server.url, "--json"]);
    assert_eq!(
        out.json()["threads"].as_array().unwrap().len(),
        1,
        "{out:?}"
    );
    let out = server.agui(&["threads", "list", &server.url, "--load"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout.lines().count(), 31, "{}", out.stdout);
    assert_eq!(out.stdout.matches("  [load]").count(), 30, "{}", out.stdout);
}
