//! One exit-code rule for every network command (`run`, `record`, `check`, `load`): 0
//! success, 1 the run or check failed, 2 usage or connection problems; and `AGUI_TOKEN`
//! sent by each of them unless `--header` gives an `Authorization`. Every command treats a
//! standard output closed early as the end of its output: quietly, exit 0. The stream
//! commands: 0 valid, 1 invalid (what each checks), 2 unreadable, as the README lists.

mod common;

use common::{
    Out, Serve, TEST_TOKEN, agui_command, agui_with_stdin, assert_has, closed_port, run_piped,
    scripted,
};

/// An `agui serve` (in-memory store, demo agent) for one test. Not one shared through a
/// static: a static is never dropped, so its server would outlive the test process.
fn server() -> Serve {
    Serve::start_with(&["--store", "memory"])
}

/// The command's arguments around `url` (the output of `record` is thrown away, `load`
/// makes 3 runs).
fn args<'a>(command: &'a str, url: &'a str, text: &'a str) -> Vec<&'a str> {
    match command {
        "run" => vec![
            "run",
            url,
            "--text",
            text,
            "--json",
            "--timeout-ms",
            "20000",
        ],
        "record" => vec!["record", url, "--text", text, "-o", "-"],
        "check" => vec!["check", url, "--json", "--timeout-ms", "20000"],
        "load" => vec!["load", url, "--text", text, "--runs", "3", "--json"],
        other => panic!("{other}"),
    }
}

const COMMANDS: [&str; 4] = ["run", "record", "check", "load"];

/// `agui ARGS` without `AGUI_TOKEN`.
fn agui(args: &[&str]) -> Out {
    run_piped(agui_command().env_remove("AGUI_TOKEN").args(args))
}

#[test]
fn success_is_0() {
    let s = server();
    for command in COMMANDS {
        let out = s.agui(&args(command, &s.url, "hello"));
        assert_eq!(out.code, 0, "{command}: {out:?}");
    }
}

#[test]
fn run_error_and_failed_checks_are_1() {
    let s = server();
    // The demo agent ends a run with RUN_ERROR when asked to fail.
    for command in ["run", "record", "load"] {
        let out = s.agui(&args(command, &s.url, "fail"));
        assert_eq!(out.code, 1, "{command}: {out:?}");
    }
    // The --json shape is kept: the report names the run error.
    let report = s.agui(&args("run", &s.url, "fail")).json();
    assert_eq!(report["ok"], true);
    assert_eq!(report["status"], "errored");
    assert_eq!(report["terminal"], "RUN_ERROR");
    assert_eq!(report["runError"]["code"], "demo_failure");
    let load = s.agui(&args("load", &s.url, "fail")).json();
    assert_eq!(
        load["failures"],
        serde_json::json!([{"reason": "RUN_ERROR (demo_failure)", "count": 3}])
    );
    assert_eq!(load["terminals"]["RUN_ERROR"], 3);

    // A stream that ends without RUN_FINISHED or RUN_ERROR fails every command.
    let no_finish = format!("{}/no-finish", scripted());
    for command in COMMANDS {
        let out = agui(&args(command, &no_finish, "hello"));
        assert_eq!(out.code, 1, "{command}: {out:?}");
    }
    let report = agui(&args("run", &no_finish, "hello")).json();
    assert_eq!(report["status"], "incomplete");
    // A stream that fails verification, and a connection that breaks mid-stream.
    for path in ["content-before-start", "drop"] {
        let url = format!("{}/{path}", scripted());
        for command in COMMANDS {
            let out = agui(&args(command, &url, "hello"));
            assert_eq!(out.code, 1, "{command} {path}: {out:?}");
        }
    }
}

#[test]
fn usage_and_connection_problems_are_2() {
    let refused = format!("http://127.0.0.1:{}/agent", closed_port());
    let http_500 = format!("{}/http-500", scripted());
    for command in COMMANDS {
        // Rejected before any request, with a message saying what is expected.
        for bad in [
            "not a url",
            "/agent",
            "127.0.0.1:8000/agent",
            "ftp://host/agent",
        ] {
            let out = agui(&args(command, bad, "hello"));
            assert_eq!(out.code, 2, "{command} {bad:?}: {out:?}");
            assert!(
                out.stderr.contains("absolute http(s) URL"),
                "{command}: {}",
                out.stderr
            );
            assert_eq!(out.stdout, "", "{command}: nothing ran");
        }
        let out = agui(&args(command, &refused, "hello"));
        assert_eq!(out.code, 2, "{command} refused: {out:?}");
        let out = agui(&args(command, &http_500, "hello"));
        assert_eq!(out.code, 2, "{command} HTTP 500: {out:?}");
    }
    // The --json reports keep their shape when nothing could be reached.
    let report = agui(&args("run", &refused, "hello")).json();
    assert_eq!(report["ok"], false);
    assert_eq!(report["status"], "failed");
    assert!(report["httpStatus"].is_null());
    let report = agui(&args("check", &http_500, "hello")).json();
    assert_eq!(report["ok"], false);
    assert_eq!(report["violations"][0]["rule"], "http-status");
    // A thread whose history cannot be loaded.
    let out = agui(&["run", &refused, "--thread", "t1"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("loading thread t1"), "{}", out.stderr);
    // A --header that is not `Name: value`.
    let out = agui(&["run", &http_500, "--header", "no colon"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert_has(&out.stderr, &["expected `Name: value`"]);
}

#[test]
fn agui_token_is_sent_and_an_explicit_header_wins() {
    let url = format!("{}/needs-token", scripted());
    for command in COMMANDS {
        let with = |token: Option<&str>, header: Option<&str>| {
            let mut c = agui_command();
            c.env_remove("AGUI_TOKEN");
            if let Some(t) = token {
                c.env("AGUI_TOKEN", t);
            }
            let mut a = args(command, &url, "hello");
            if let Some(h) = header {
                a.extend(["--header", h]);
            }
            run_piped(c.args(a))
        };
        let out = with(Some(TEST_TOKEN), None);
        assert_eq!(out.code, 0, "{command} with AGUI_TOKEN: {out:?}");
        let out = with(None, None);
        assert_eq!(out.code, 2, "{command} without a token: {out:?}");
        let out = with(Some(""), None);
        assert_eq!(out.code, 2, "{command} with an empty AGUI_TOKEN: {out:?}");
        let out = with(Some(TEST_TOKEN), Some("Authorization: Bearer wrong"));
        assert_eq!(out.code, 2, "{command}: --header wins: {out:?}");
        let bearer = format!("authorization: Bearer {TEST_TOKEN}");
        let out = with(Some("wrong"), Some(&bearer));
        assert_eq!(out.code, 0, "{command}: --header wins: {out:?}");
    }
}

#[test]
fn help_states_the_rule_and_the_token() {
    for command in COMMANDS {
        let out = agui(&[command, "--help"]);
        assert_eq!(out.code, 0);
        for needle in [
            "Exit codes",
            "0  success",
            "1  the run or check failed",
            "2  usage or connection problems",
            "AGUI_TOKEN",
        ] {
            assert!(out.stdout.contains(needle), "{command}: {}", out.stdout);
        }
    }
}

/// `agui ARGS` (standard input `stdin`) with its standard output a pipe whose reading end
/// was closed before `agui` started, so that its first write fails with `EPIPE`: the exit
/// code and standard error.
fn with_stdout_closed(args: &[&str], stdin: &[u8]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut child = agui_command()
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    // The command may end before it reads its input.
    let _ = std::io::Write::write_all(&mut input, stdin);
    drop(input);
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_closed_standard_output_ends_every_command_quietly() {
    let s = server();
    let events = [
        r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
        r#"{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}"#,
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"hi"}"#,
        r#"{"type":"TEXT_MESSAGE_END","messageId":"m"}"#,
        r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
    ];
    let jsonl: String = events.iter().map(|e| format!("{e}\n")).collect();
    let sse: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    let url = s.url.as_str();
    let commands: Vec<(Vec<&str>, &str)> = vec![
        (vec!["verify", "-"], &jsonl),
        (vec!["apply", "-"], &jsonl),
        (vec!["expand", "-"], &jsonl),
        (vec!["compact", "-"], &jsonl),
        (vec!["encode", "-"], &jsonl),
        (vec!["encode", "--format", "proto", "-"], &jsonl),
        (vec!["decode", "-"], &sse),
        (vec!["inspect", "-"], &jsonl),
        (vec!["rules"], ""),
        (vec!["rules", "--format", "json"], ""),
        (vec!["--help"], ""),
        (vec!["check", url, "--timeout-ms", "20000"], ""),
        (vec!["check", url, "--format", "json"], ""),
        (vec!["check", url, "--format", "junit"], ""),
        (vec!["check", url, "--format", "sarif"], ""),
        (vec!["load", url, "--runs", "2"], ""),
        (vec!["load", url, "--runs", "2", "--json"], ""),
        (vec!["run", url, "--text", "hello"], ""),
        (vec!["run", url, "--text", "hello", "--json"], ""),
        (vec!["record", url, "--text", "hello", "-o", "-"], ""),
    ];
    for (args, stdin) in commands {
        let (code, stderr) = with_stdout_closed(&args, stdin.as_bytes());
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!stderr.contains("Broken pipe"), "{args:?}: {stderr}");
    }
}

const RS: &str = r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#;
const RF: &str = r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#;
const TS: &str = r#"{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}"#;
const TC: &str = r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"hi"}"#;
const TE: &str = r#"{"type":"TEXT_MESSAGE_END","messageId":"m"}"#;
/// Malformed: a content event without its `delta`.
const MALFORMED: &str = r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m"}"#;

fn lines(events: &[&str]) -> String {
    events.iter().map(|e| format!("{e}\n")).collect()
}

/// `agui ARGS -` reading `input`.
fn stream(args: &[&str], input: &str) -> Out {
    let mut args = args.to_vec();
    args.push("-");
    agui_with_stdin(&args, input.as_bytes())
}

#[test]
fn stream_commands_check_what_the_readme_says_with_its_exit_codes() {
    let valid = lines(&[RS, TS, TC, TE, RF]);
    // Breaks a sequence rule (content after the message ended), every event well formed.
    let out_of_order = lines(&[RS, TS, TE, TC, RF]);
    let malformed = lines(&[RS, TS, MALFORMED, TE, RF]);
    let not_json = format!("{RS}\n{{\"type\":\n{RF}\n");
    let checkers: [&[&str]; 3] = [&["verify"], &["apply"], &["inspect", "--color", "never"]];
    let transformers: [&[&str]; 4] = [
        &["expand"],
        &["compact"],
        &["encode"],
        &["encode", "--format", "proto"],
    ];
    for cmd in checkers.iter().chain(&transformers) {
        assert_eq!(stream(cmd, &valid).code, 0, "{cmd:?} valid");
    }
    // The sequence rules: checked by verify, apply and inspect...
    for cmd in checkers {
        let out = stream(cmd, &out_of_order);
        assert_eq!(out.code, 1, "{cmd:?}: {out:?}");
    }
    // ...not by the transformations, which write the whole stream.
    for cmd in transformers {
        let out = stream(cmd, &out_of_order);
        assert_eq!(out.code, 0, "{cmd:?}: {out:?}");
    }
    assert_eq!(
        stream(&["expand"], &out_of_order)
            .json()
            .as_array()
            .map(Vec::len),
        Some(5)
    );
    // A malformed event, or text that is not JSON, is invalid for every command, named.
    for cmd in checkers.iter().chain(&transformers) {
        for (what, input, at) in [("malformed", &malformed, 2), ("not JSON", &not_json, 1)] {
            let out = stream(cmd, input);
            assert_eq!(out.code, 1, "{cmd:?} {what}: {out:?}");
            if cmd[0] != "verify" && cmd[0] != "apply" && cmd[0] != "inspect" {
                assert!(
                    out.stderr.contains(&format!("event {at}")),
                    "{cmd:?} {what}: {}",
                    out.stderr
                );
            }
        }
    }
    // `encode --format sse` writes the malformed event as given and says so; protobuf stops
    // before it with the frames before it written.
    let sse = stream(&["encode"], &malformed);
    assert_eq!(sse.stdout.matches("data: ").count(), 5, "{}", sse.stdout);
    assert!(sse.stdout.contains(MALFORMED), "{}", sse.stdout);
    assert_has(
        &sse.stderr,
        &["event 2 is malformed and is written as given"],
    );
    let proto = agui_command()
        .args(["encode", "--format", "proto", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(malformed.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    assert_eq!(proto.status.code(), Some(1));
    let frames = {
        let mut bytes = &proto.stdout[..];
        let mut n = 0;
        while let Some((head, rest)) = bytes.split_first_chunk::<4>() {
            bytes = &rest[u32::from_be_bytes(*head) as usize..];
            n += 1;
        }
        n
    };
    assert_eq!(frames, 2);
    // Unreadable input is 2 for every command.
    for cmd in checkers.iter().chain(&transformers) {
        let out = stream(cmd, "hello\n");
        assert_eq!(out.code, 2, "{cmd:?}: {out:?}");
    }
}
