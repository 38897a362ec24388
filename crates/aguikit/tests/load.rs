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
