//! Runs every example program to completion and checks what it printed, so that the
//! examples stay true: `cargo test -p aguikit-examples` (CI runs it within
//! `cargo test --workspace`).
#![allow(missing_docs)]

use std::process::{Command, Output};

/// Runs the example binary `exe` with `args`; its output, checked to be UTF-8.
fn run(exe: &str, args: &[&str], env: &[(&str, Option<&str>)]) -> (Output, String) {
    let mut command = Command::new(exe);
    command.args(args);
    for (name, value) in env {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    let output = command.output().expect("the example starts");
    let stdout = String::from_utf8(output.stdout.clone()).expect("UTF-8 output");
    (output, stdout)
}

fn assert_success(exe: &str, output: &Output, stdout: &str) {
    assert!(
        output.status.success(),
        "{exe}: {}\nstdout:\n{stdout}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn host_agent_serves_one_run_of_its_own() {
    let exe = env!("CARGO_BIN_EXE_host_agent");
    let (output, stdout) = run(exe, &[], &[]);
    assert_success(exe, &output, &stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].starts_with("listening on http://127.0.0.1:"),
        "{stdout}"
    );
    let types: Vec<String> = lines[1..]
        .iter()
        .map(|l| {
            let event: serde_json::Value = serde_json::from_str(l).expect(l);
            event["type"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(
        types,
        [
            "RUN_STARTED",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "RUN_FINISHED"
        ],
        "{stdout}"
    );
    assert!(stdout.contains(r#""delta":"You said: ""#), "{stdout}");
    assert!(stdout.contains(r#""delta":"hello""#), "{stdout}");
}

#[test]
fn reconnect_resumes_a_cut_run_with_nothing_lost_or_repeated() {
    let exe = env!("CARGO_BIN_EXE_reconnect");
    let (output, stdout) = run(exe, &[], &[]);
    assert_success(exe, &output, &stdout);
    let counted = (1..=20)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(stdout.contains("run ended: finished\n"), "{stdout}");
    assert!(stdout.contains("reconnections: 1\n"), "{stdout}");
    assert!(stdout.contains(&format!("text: {counted}\n")), "{stdout}");
    assert!(
        stdout.contains(&format!("the session's last message: {counted}\n")),
        "{stdout}"
    );
}

#[test]
fn store_threads_reads_the_conversation_back_from_sqlite_then_postgres() {
    let exe = env!("CARGO_BIN_EXE_store_threads");
    let postgres = std::env::var("AGUI_TEST_POSTGRES_URL")
        .ok()
        .filter(|u| !u.is_empty());
    let (output, stdout) = run(exe, &[], &[]);
    assert_success(exe, &output, &stdout);
    let conversation = "  10 events in 2 runs\n";
    let messages = "  user: a trip to Paris\n  assistant: Noted: a trip to Paris\n  \
                    user: then Rome\n  assistant: Noted: then Rome\n";
    let sqlite = stdout.split("postgres:").next().expect("a SQLite part");
    assert!(
        sqlite.starts_with("sqlite: the file opened again\n"),
        "{stdout}"
    );
    assert!(sqlite.contains(conversation), "{stdout}");
    assert_eq!(sqlite.matches(": Finished\n").count(), 2, "{stdout}");
    assert!(sqlite.ends_with(messages), "{stdout}");
    match postgres {
        Some(_) => {
            let pg = stdout
                .split_once("postgres: read back\n")
                .expect("the PostgreSQL part ran")
                .1;
            assert!(pg.contains(conversation), "{stdout}");
            assert_eq!(pg.matches(": Finished\n").count(), 2, "{stdout}");
            assert!(pg.ends_with(messages), "{stdout}");
        }
        None => {
            println!(
                "AGUI_TEST_POSTGRES_URL is not set: the example's PostgreSQL part is checked to say it was skipped"
            );
            assert!(
                stdout.ends_with(
                    "postgres: skipped (set AGUI_TEST_POSTGRES_URL=postgres://... to run it)\n"
                ),
                "{stdout}"
            );
        }
    }
}

#[test]
fn python_agent_without_an_agent_says_so() {
    let exe = env!("CARGO_BIN_EXE_python_agent");
    let (output, stdout) = run(exe, &[], &[("AGUI_PYTHON_AGENT_URL", None)]);
    assert_success(exe, &output, &stdout);
    assert!(stdout.contains("no Python agent"), "{stdout}");
    assert!(stdout.ends_with("nothing run\n"), "{stdout}");
}

#[test]
fn python_agent_behind_the_gateway() {
    // The official Python SDK's scripted server (the interop peers): set up once, or
    // skipped with a notice when AGUI_SKIP_INTEROP=1.
    let Some(dir) = aguikit_peers::interop_dir() else {
        return;
    };
    let python = aguikit_peers::PyServer::start(dir, "examples");
    let exe = env!("CARGO_BIN_EXE_python_agent");
    let (output, stdout) = run(exe, &[&python.url()], &[]);
    assert_success(exe, &output, &stdout);
    assert!(
        stdout.contains(&format!("in front of {}\n", python.url())),
        "{stdout}"
    );
    assert!(
        stdout.contains("You said: hello from Rust\nrun ended: finished\n"),
        "{stdout}"
    );
    // RUN_STARTED, the text message's START, CONTENT pieces and END, RUN_FINISHED.
    let stored: u64 = stdout
        .split_once("the gateway stored ")
        .and_then(|(_, rest)| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("how many events were stored");
    assert!(stored >= 5, "{stdout}");
}

#[test]
fn openai_bridge_calls_the_back_end_tool_and_answers() {
    let exe = env!("CARGO_BIN_EXE_openai_bridge");
    let (output, stdout) = run(exe, &[], &[("OPENAI_API_KEY", None)]);
    assert_success(exe, &output, &stdout);
    assert_eq!(
        stdout,
        "tool call: get_weather({\"city\":\"Paris\"})\n\
         tool result: {\"city\":\"Paris\",\"celsius\":18,\"sky\":\"sunny\"}\n\
         It is 18°C and sunny in Paris.\n\
         run ended: finished\n"
    );
}

#[test]
fn verify_recording_folds_the_embedded_recording() {
    let exe = env!("CARGO_BIN_EXE_verify_recording");
    let (output, stdout) = run(exe, &[], &[]);
    assert_success(exe, &output, &stdout);
    assert_eq!(
        stdout,
        "the embedded recording: 10 events\n\
         valid: 3 messages, state {\"city\":\"Paris\",\"celsius\":18}\n  \
         assistant: Let me check\n  \
         tool: 18°C, sunny\n  \
         assistant: It is 18°C and sunny.\n"
    );
}

/// Every conformance case: the example's verdict is the reference client's (valid, or
/// invalid at the same event), with the exit code that says so.
#[test]
fn verify_recording_agrees_with_the_reference_on_the_conformance_cases() {
    let exe = env!("CARGO_BIN_EXE_verify_recording");
    let cases = aguikit_peers::shared_dir().join("conformance/cases");
    let mut paths: Vec<_> = std::fs::read_dir(&cases)
        .unwrap_or_else(|e| panic!("{}: {e} (set AGUI_SHARED_DIR)", cases.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    assert!(paths.len() > 100, "{} cases", paths.len());
    let (mut valid, mut invalid) = (0, 0);
    for path in &paths {
        let case: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let verdict = &case["expect"]["verify"];
        let (output, stdout) = run(exe, &[path.to_str().unwrap()], &[]);
        assert!(
            stdout.contains(&format!("the reference client: {verdict}\n")),
            "{}: {stdout}",
            path.display()
        );
        if verdict["ok"] == true {
            assert_eq!(
                output.status.code(),
                Some(0),
                "{}: {stdout}",
                path.display()
            );
            assert!(stdout.contains("\nvalid: "), "{}: {stdout}", path.display());
            valid += 1;
        } else {
            let at = verdict["at"].as_u64().expect("the failing event's index");
            assert_eq!(
                output.status.code(),
                Some(1),
                "{}: {stdout}",
                path.display()
            );
            assert!(
                stdout.contains(&format!("\ninvalid: event {at} (")),
                "{}: {stdout}",
                path.display()
            );
            invalid += 1;
        }
    }
    assert!(valid > 0 && invalid > 0, "{valid} valid, {invalid} invalid");
}
