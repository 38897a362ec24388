//! `agui check` finds nothing wrong with `agui serve`, and names every problem of a server
//! that misbehaves on purpose.

mod common;

use serde_json::json;

use common::{Serve, agui, assert_has, field_strs, scripted};
use serde_json::Value;

/// `agui check URL --json`: the exit code and the report.
fn check(url: &str) -> (i32, Value) {
    let out = agui(&["check", url, "--json", "--timeout-ms", "3000"]);
    (out.code, out.json())
}

/// The rule of every violation of a report.
fn rules(report: &Value) -> Vec<&str> {
    field_strs(&report["violations"], "rule")
}

/// The name of every run of a report.
fn run_names(report: &Value) -> Vec<&str> {
    field_strs(&report["runs"], "name")
}

#[test]
fn agui_serve_has_no_violation() {
    let server = Serve::start();
    let (code, report) = check(&server.url);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["ok"], true);
    assert_eq!(report["violations"], serde_json::json!([]));
    // Every input was sent, and the demo's interrupt was answered with a resume run.
    assert_eq!(
        run_names(&report),
        [
            "plain",
            "frontend-tools",
            "interrupt",
            "interrupt → resume",
            "history",
            "state",
            "protobuf"
        ]
    );
    let runs = report["runs"].as_array().unwrap();
    for run in runs {
        assert_eq!(run["httpStatus"], 200, "{run:#}");
        assert_eq!(run["terminal"], "RUN_FINISHED", "{run:#}");
        assert!(run["events"].as_u64().unwrap() >= 3, "{run:#}");
    }
    assert_eq!(runs[2]["outcome"], "interrupt");
    assert_eq!(runs[3]["outcome"], "success");
    assert_eq!(runs[6]["contentType"], "application/vnd.ag-ui.event+proto");
    assert_eq!(runs[0]["contentType"], "text/event-stream");

    // The readable report says the same.
    let out = agui(&["check", &server.url]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.trim_end().ends_with("7 runs, no violation"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains('\x1b'), "piped output is plain");
    // Its capabilities were read, and what they declare is what the runs showed.
    let caps = &report["capabilities"];
    assert_eq!(caps["httpStatus"], 200, "{caps:#}");
    assert!(
        caps["url"]
            .as_str()
            .unwrap()
            .ends_with("/agent/capabilities")
    );
    assert_eq!(caps["declared"]["humanInTheLoop"]["interrupts"], true);
    assert_eq!(caps["declared"]["transport"]["httpBinary"], true);
    assert!(
        out.stdout
            .contains("capabilities: identity, transport, tools"),
        "{}",
        out.stdout
    );
}

#[test]
fn capabilities_that_the_runs_contradict_are_violations() {
    let (code, report) = check(&format!("{}/boasting", scripted()));
    assert_eq!(code, 1, "{report:#}");
    let messages: Vec<(String, String)> = report["violations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["rule"] == "capabilities")
        .map(|v| {
            (
                v["input"].as_str().unwrap().to_owned(),
                v["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let has =
        |input: &str, part: &str| messages.iter().any(|(i, m)| i == input && m.contains(part));
    assert!(
        has(
            "protobuf",
            "declares transport.httpBinary: true, but answered the protobuf request with SSE"
        ),
        "{messages:#?}"
    );
    assert!(
        has(
            "interrupt",
            "declares humanInTheLoop.interrupts: true, but the run inviting an interrupt ended with outcome success"
        ),
        "{messages:#?}"
    );
    assert!(
        has(
            "plain",
            "declares state.snapshots: false, but sent STATE_SNAPSHOT"
        ),
        "{messages:#?}"
    );
    // Each names the event it is about.
    let snapshot = report["violations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["input"] == "plain" && v["rule"] == "capabilities")
        .unwrap();
    assert_eq!(
        (&snapshot["index"], &snapshot["eventType"]),
        (&json!(1), &json!("STATE_SNAPSHOT"))
    );
    // In JUnit they fail their runs; SARIF links the rule.
    let out = agui(&[
        "check",
        &format!("{}/boasting", scripted()),
        "--format",
        "junit",
    ]);
    assert!(
        out.stdout.contains("<failure type=\"capabilities\""),
        "{}",
        out.stdout
    );
    let out = agui(&[
        "check",
        &format!("{}/boasting", scripted()),
        "--format",
        "sarif",
    ]);
    assert!(
        out.stdout.contains("\"ruleId\": \"capabilities\""),
        "{}",
        out.stdout
    );

    // A document that is not AgentCapabilities is a violation of its own.
    let (code, report) = check(&format!("{}/bad-caps", scripted()));
    assert_eq!(code, 1, "{report:#}");
    let v = &report["capabilities"]["violations"][0];
    assert_eq!(
        (&v["input"], &v["rule"]),
        (&json!("capabilities"), &json!("capabilities"))
    );
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("not an AgentCapabilities object"),
        "{v}"
    );
    assert_eq!(report["violations"][0], *v);
    let out = agui(&[
        "check",
        &format!("{}/bad-caps", scripted()),
        "--format",
        "junit",
    ]);
    assert!(
        out.stdout.contains("name=\"capabilities\""),
        "{}",
        out.stdout
    );

    // None served is a note only.
    let (code, report) = check(&format!("{}/ok", scripted()));
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["capabilities"]["httpStatus"], 404);
    assert!(
        report["capabilities"]["notes"][0]
            .as_str()
            .unwrap()
            .contains("declares no capabilities"),
        "{report:#}"
    );
}

#[test]
fn a_well_behaved_scripted_server_passes() {
    // Guards the tests below: the scripted server's own framing is not what they detect.
    let (code, report) = check(&format!("{}/ok", scripted()));
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(rules(&report), Vec::<String>::new());
    // Its RUN_STARTED ids are fixed, not the request's: a note, not a violation.
    let notes = report["runs"][0]["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("RUN_STARTED.threadId is \"t\"")),
        "{notes:?}"
    );
}

#[test]
fn content_before_start_missing_finish_and_wrong_type_are_each_reported() {
    let (code, report) = check(&format!("{}/everything", scripted()));
    assert_eq!(code, 1, "{report:#}");
    // Each of the six inputs got the same three problems.
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 6, "no follow-up after a broken run");
    for run in runs {
        let found: Vec<(Option<u64>, Option<&str>, &str)> = run["violations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                (
                    v["index"].as_u64(),
                    v["eventType"].as_str(),
                    v["rule"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            found,
            [
                (None, None, "content-type"),
                (Some(0), Some("TEXT_MESSAGE_CONTENT"), "V3"),
                (Some(5), Some("end of stream"), "no-terminal"),
            ],
            "{run:#}"
        );
    }
    let v = &report["violations"][0];
    assert_eq!(v["input"], "plain");
    assert!(
        v["message"].as_str().unwrap().contains("\"text/plain\""),
        "{v}"
    );
    // The readable report names input, index, type and rule.
    let out = agui(&["check", &format!("{}/everything", scripted())]);
    assert_eq!(out.code, 1);
    assert_has(
        &out.stdout,
        &["event 0 TEXT_MESSAGE_CONTENT: V3: First event must be 'RUN_STARTED'"],
    );
    assert!(
        out.stdout
            .trim_end()
            .ends_with("6 runs, 18 violations in 6 runs"),
        "{}",
        out.stdout
    );
}

#[test]
fn each_fault_alone_is_named() {
    for (path, rule, index) in [
        ("content-before-start", "V3", Some(0)),
        ("no-finish", "no-terminal", Some(4)),
        ("wrong-type", "content-type", None),
        ("malformed", "schema", Some(1)),
        ("not-object", "not-an-object", Some(1)),
        ("http-500", "http-status", None),
        ("drop", "transport", None),
    ] {
        let (code, report) = check(&format!("{}/{path}", scripted()));
        // No input got a 2xx answer from /http-500: nothing could be checked.
        let expected = if path == "http-500" { 2 } else { 1 };
        assert_eq!(code, expected, "{path}: {report:#}");
        let first = &report["runs"][0]["violations"];
        assert_eq!(first.as_array().unwrap().len(), 1, "{path}: {first:#}");
        assert_eq!(first[0]["rule"], rule, "{path}: {first:#}");
        assert_eq!(first[0]["index"].as_u64(), index, "{path}: {first:#}");
        assert_eq!(rules(&report).len(), 6, "{path}: one per input");
    }
    let (_, report) = check(&format!("{}/http-500", scripted()));
    assert_eq!(
        report["violations"][0]["message"],
        r#"HTTP 500 instead of 2xx: {"error":"scripted failure"}"#
    );
}

#[test]
fn a2ui_surface_violations_are_reported_with_their_rule() {
    let (code, report) = check(&format!("{}/a2ui-dangling", scripted()));
    assert_eq!(code, 1, "{report:#}");
    let first = &report["runs"][0]["violations"];
    assert_eq!(first.as_array().unwrap().len(), 1, "{first:#}");
    assert_eq!(first[0]["rule"], "A7", "{first:#}");
    assert_eq!(first[0]["index"], 1, "{first:#}");
    assert_eq!(first[0]["eventType"], "ACTIVITY_SNAPSHOT", "{first:#}");
    let message = first[0]["message"].as_str().unwrap();
    assert!(
        message.contains("'gone'") && message.contains("/children/0"),
        "{message}"
    );
}

#[test]
fn a_stalled_stream_times_out_and_nothing_listening_exits_2() {
    let out = agui(&[
        "check",
        &format!("{}/slow", scripted()),
        "--json",
        "--timeout-ms",
        "300",
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(rules(&out.json())[0], "timeout");

    // A port nobody listens on: bind one, then free it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = agui(&["check", &format!("http://127.0.0.1:{port}/agent")]);
    assert_eq!(out.code, 2, "{out:?}");
    assert_has(&out.stdout, &["request: no response"]);
}

#[test]
fn rules_prints_one_rule_by_its_id() {
    let out = agui(&["rules", "v16"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.starts_with("V16: "), "{}", out.stdout);
    assert_has(
        &out.stdout,
        &["stage: verification", "verdict: reject", "spec: "],
    );
    // Only that rule.
    assert!(!out.stdout.contains("V17"), "{}", out.stdout);
    let json = agui(&["rules", "V16", "--format", "json"]).json();
    assert_eq!(json["id"], "V16");
    assert_eq!(json["stage"], "verification");
    let check = agui(&["rules", "http-status", "--format", "md"]);
    assert!(
        check.stdout.starts_with("### http-status: "),
        "{}",
        check.stdout
    );
    let unknown = agui(&["rules", "V999"]);
    assert_eq!(unknown.code, 2);
    assert_has(
        &unknown.stderr,
        &["no rule or check \"V999\"", "agui rules"],
    );
}

#[test]
fn sarif_and_junit_link_rules_to_the_checked_servers_page_or_the_published_one() {
    let informs = |url: &str| {
        let sarif = agui(&["check", url, "--format", "sarif", "--timeout-ms", "3000"]).json();
        sarif["runs"][0]["tool"]["driver"]["informationUri"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    // `agui serve` serves the rules: its own page, whose rows are the anchors.
    let server = Serve::start_with(&["--store", "memory"]);
    assert_eq!(informs(&server.url), format!("{}rules", server.base));
    let junit = server.agui(&["check", &server.url, "--format", "junit"]);
    assert_eq!(junit.code, 0, "{junit:?}");
    // Any other server: the published RULES.md, never a placeholder host.
    let other = informs(&format!("{}/everything", scripted()));
    assert!(
        other.starts_with("https://docs.rs/crate/aguikit/") && other.ends_with("/source/RULES.md"),
        "{other}"
    );
    let junit = agui(&[
        "check",
        &format!("{}/everything", scripted()),
        "--format",
        "junit",
    ]);
    assert_has(&junit.stdout, &["Help: https://docs.rs/crate/aguikit/"]);
    assert!(!junit.stdout.contains("example.invalid"));
}
