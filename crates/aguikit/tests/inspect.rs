//! `agui inspect` on the conformance cases: the timeline, the messages, the exact event and
//! rule where a stream breaks, and plain output when piped.

mod common;

use common::{agui, agui_with_stdin, assert_has, case, shared_dir};
use serde_json::Value;

fn case_json(name: &str) -> Value {
    serde_json::from_slice(&std::fs::read(case(name)).unwrap()).unwrap()
}

/// The timeline lines: those that start with a mark and an event index.
fn timeline(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter(|l| {
            let l = l.trim_start_matches('✗').trim_start();
            l.split_whitespace()
                .next()
                .is_some_and(|w| w.parse::<usize>().is_ok())
        })
        .collect()
}

#[test]
fn a_valid_case_gets_one_line_per_event_and_its_messages() {
    let c = case_json("text-message-basic");
    let events = c["events"].as_array().unwrap();
    let out = agui(&["inspect", case("text-message-basic").to_str().unwrap()]);
    assert_eq!(out.code, 0, "{out:?}");
    let lines = timeline(&out.stdout);
    assert_eq!(lines.len(), events.len(), "{}", out.stdout);
    for (line, event) in lines.iter().zip(events) {
        assert!(
            line.contains(event["type"].as_str().unwrap()),
            "{line} vs {event}"
        );
    }
    // The messages the reference folds the stream into, each with role and id.
    let messages = c["expect"]["apply"]["messages"].as_array().unwrap();
    assert!(
        out.stdout
            .contains(&format!("\n{} message", messages.len())),
        "{}",
        out.stdout
    );
    for m in messages {
        let line = out
            .stdout
            .lines()
            .find(|l| {
                l.contains(m["id"].as_str().unwrap())
                    && l.trim_start().starts_with(m["role"].as_str().unwrap())
            })
            .unwrap_or_else(|| panic!("no summary of {m} in\n{}", out.stdout));
        if let Some(text) = m["content"].as_str() {
            let n = text.chars().count();
            assert!(line.contains(&format!("{n} char")), "{line}");
        }
    }
    assert!(
        out.stdout
            .trim_end()
            .ends_with("✓ valid, ends with RUN_FINISHED"),
        "{}",
        out.stdout
    );
}

#[test]
fn invalid_cases_name_the_reference_index_and_the_rule() {
    for (name, ty, rule) in [
        ("invalid-chunk-ambiguous-lanes", "TEXT_MESSAGE_CHUNK", "CH6"),
        (
            "invalid-event-before-run-started",
            "TEXT_MESSAGE_START",
            "V3",
        ),
        (
            "invalid-text-unfinished-at-run-finished",
            "RUN_FINISHED",
            "V49",
        ),
        ("invalid-timestamp-string", "RUN_STARTED", "schema"),
    ] {
        // The index is the reference client's verdict, from the case file.
        let at = case_json(name)["expect"]["verify"]["at"].as_u64().unwrap();
        let out = agui(&["inspect", case(name).to_str().unwrap()]);
        assert_eq!(out.code, 1, "{name}: {out:?}");
        let verdict = out.stdout.trim_end().lines().last().unwrap();
        assert!(
            verdict.starts_with(&format!("✗ breaks at event {at} ({ty}): rule {rule}: ")),
            "{name}: {verdict}"
        );
        // The breaking event is marked in the timeline, with the rule right under it.
        let lines: Vec<&str> = out.stdout.lines().collect();
        let marked = lines
            .iter()
            .position(|l| l.starts_with('✗') && !l.starts_with("✗ breaks"))
            .unwrap_or_else(|| panic!("{name}: nothing marked\n{}", out.stdout));
        let idx: u64 = lines[marked]
            .trim_start_matches('✗')
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(idx, at, "{name}: {}", lines[marked]);
        assert!(lines[marked].contains(ty), "{}", lines[marked]);
        assert!(
            lines[marked + 1]
                .trim_start()
                .starts_with(&format!("^ {rule}: ")),
            "{name}: {}",
            lines[marked + 1]
        );
    }
}

#[test]
fn every_conformance_case_breaks_where_the_reference_does() {
    let dir = shared_dir().join("conformance/cases");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let c: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let verify = &c["expect"]["verify"];
        let out = agui(&["inspect", path.to_str().unwrap()]);
        let name = path.file_name().unwrap().to_string_lossy();
        if verify["ok"] == true {
            assert_eq!(out.code, 0, "{name}:\n{}", out.stdout);
            assert!(out.stdout.contains("✓ valid"), "{name}");
        } else {
            assert_eq!(out.code, 1, "{name}:\n{}", out.stdout);
            let at = verify["at"].as_u64().unwrap();
            let n = c["events"].as_array().unwrap().len() as u64;
            let verdict = out.stdout.trim_end().lines().last().unwrap();
            let want = if at == n {
                "✗ breaks at the end of the stream".to_owned()
            } else {
                format!("✗ breaks at event {at} ")
            };
            assert!(verdict.starts_with(&want), "{name}: {verdict}");
        }
        checked += 1;
    }
    assert!(checked > 200, "only {checked} cases");
}

#[test]
fn piped_output_is_plain_and_colours_can_be_forced() {
    let file = case("common-fields-everywhere");
    let file = file.to_str().unwrap();
    let piped = agui(&["inspect", file]);
    assert_eq!(piped.code, 0);
    assert!(!piped.stdout.contains('\x1b'), "{:?}", piped.stdout);
    assert!(!piped.stderr.contains('\x1b'));
    let forced = agui(&["inspect", "--color", "always", file]);
    assert!(
        forced.stdout.contains("\x1b[33mTOOL_CALL_START"),
        "{:?}",
        forced.stdout
    );
    // Same text once the escapes are gone.
    let stripped = strip_ansi(&forced.stdout);
    assert_eq!(stripped, piped.stdout);
    // Timestamps give each event its time since the first one.
    assert_has(&piped.stdout, &["   +0.009s  RUN_FINISHED"]);
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for d in chars.by_ref() {
                if d == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn sse_from_standard_input_reads_like_the_case() {
    let file = case("subagent-basic");
    let sse = agui(&["encode", "--format", "sse", file.to_str().unwrap()]);
    assert_eq!(sse.code, 0);
    let from_sse = agui_with_stdin(&["inspect", "-"], sse.stdout.as_bytes());
    let from_case = agui(&["inspect", file.to_str().unwrap()]);
    assert_eq!(from_sse.code, 0, "{from_sse:?}");
    assert!(from_sse.stdout.contains("(SSE)"), "{}", from_sse.stdout);
    assert_eq!(
        from_sse.stdout.lines().skip(1).collect::<Vec<_>>(),
        from_case.stdout.lines().skip(1).collect::<Vec<_>>()
    );
    // Subagent events carry the subagent's name.
    let name = case_json("subagent-basic")["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == "SUBAGENT_STARTED")
        .map(|e| e["name"].as_str().unwrap().to_owned())
        .unwrap();
    assert!(
        from_case.stdout.contains(&format!("[{name}]")),
        "{}",
        from_case.stdout
    );
}

#[test]
fn malformed_lines_and_missing_files() {
    let out = agui_with_stdin(
        &["inspect", "-"],
        b"{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n{\"type\":\n",
    );
    assert_eq!(out.code, 1);
    assert_has(
        &out.stdout,
        &["✗ breaks at event 1 (not JSON): rule schema: invalid JSON"],
    );
    let missing = agui(&["inspect", "/nonexistent/stream.jsonl"]);
    assert_eq!(missing.code, 2);
    assert!(missing.stderr.contains("reading /nonexistent/stream.jsonl"));
}

#[test]
fn a_warning_is_shown_once_in_plain_words() {
    let input = [
        r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
        r#"{"type":"FOO_BAR","x":1}"#,
        r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
    ]
    .join("\n");
    let out = agui_with_stdin(&["inspect", "--color", "never", "-"], input.as_bytes());
    assert_eq!(out.code, 0, "{out:?}");
    let warnings: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.trim_start().starts_with('!'))
        .collect();
    assert_eq!(
        warnings,
        [r#"     ! unknown event type "FOO_BAR" dropped"#],
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("String("), "{}", out.stdout);
}

#[test]
fn the_time_column_says_when_a_recording_was_not_stamped() {
    let unstamped = [
        r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
        r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
    ]
    .join("\n");
    let out = agui_with_stdin(&["inspect", "--color", "never", "-"], unstamped.as_bytes());
    assert_eq!(out.code, 0, "{out:?}");
    let mut lines = out.stdout.lines();
    assert_has(
        lines.next().unwrap(),
        &[
            "2 events (JSON Lines)",
            "no timestamps",
            "agui record --stamp",
        ],
    );
    // No empty column: the type follows the index.
    assert_eq!(
        lines.next().unwrap(),
        "  0  RUN_STARTED                thread t · run r"
    );

    // Partly stamped: the header says how many; the others have an empty time.
    let partly = [
        r#"{"type":"RUN_STARTED","threadId":"t","runId":"r","timestamp":1000}"#,
        r#"{"type":"CUSTOM","name":"n","value":1}"#,
        r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r","timestamp":1250}"#,
    ]
    .join("\n");
    let out = agui_with_stdin(&["inspect", "--color", "never", "-"], partly.as_bytes());
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "3 events (JSON Lines), 0.250 s (2 of 3 events timestamped)"
    );
    assert!(lines[1].contains("   +0.000s  RUN_STARTED"), "{}", lines[1]);
    assert!(lines[2].contains("             CUSTOM"), "{}", lines[2]);
    assert!(
        lines[3].contains("   +0.250s  RUN_FINISHED"),
        "{}",
        lines[3]
    );
}
