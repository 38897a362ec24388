//! Interop with the official peers: for every scenario of the official Python SDK server
//! (`../shared/interop/py-server`), run our client and the official TypeScript client
//! (`ts-client/client.mjs`) and compare what they show.
//!
//! - Well-formed scenarios: both accept the run, with the same messages, state, terminal
//!   event, outcome, interrupts, pending tool calls, result, run error and event types.
//! - Faulty scenarios: ours ends with a clear error (or, for a stream without a terminal
//!   event, accepts it and says it is incomplete), within a time limit and without a panic.
//! - An interrupt answered with a resume (`--auto-resume`), compared the same way.
//! - Protobuf through `ts-bridge/bridge.mjs`, once this build can decode protobuf.
//!
//! Where the TypeScript client itself does not do what the server's scenario list says a
//! conforming client does, the test prints it ("official peers disagree") and does not fail.
//!
//! Needs Node 20+ and Python 3.10+ (`aguikit-peers` installs the peers from the registries
//! with `setup.sh --no-browser`, into `target/interop`, on the first run). Set
//! `AGUI_SKIP_INTEROP=1` to skip; `AGUI_SHARED_DIR` overrides where `shared/` is.

use aguikit::report::{RunOptions, RunSpec, run_report};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::process::{Child, Command};

/// Each client run gets this long; a run that takes longer is a hang.
const RUN_LIMIT: Duration = Duration::from_secs(45);

/// A peer process, killed when dropped.
struct Peer {
    child: Child,
    port: u16,
}

async fn start_peer(dir: &Path, program: &str, args: &[&str], port_file: &str) -> Peer {
    let port_path = dir.join("out").join(port_file);
    let _ = std::fs::remove_file(&port_path);
    let log = std::fs::File::create(dir.join("out").join(format!("{port_file}.log"))).unwrap();
    let child = Command::new(program)
        .args(args)
        .arg("--port")
        .arg("0")
        .arg("--port-file")
        .arg(&port_path)
        .current_dir(dir)
        .stdout(Stdio::from(log.try_clone().unwrap()))
        .stderr(Stdio::from(log))
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("start {program}: {e}"));
    for _ in 0..300 {
        if let Ok(text) = std::fs::read_to_string(&port_path)
            && let Ok(port) = text.trim().parse()
        {
            return Peer { child, port };
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{program} {args:?} did not start within 30 s");
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

/// `GET path` on a loopback port (HTTP/1.0: the body ends with the connection).
async fn get_json(port: u16, path: &str) -> Value {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect to the server");
    s.write_all(format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).await.unwrap();
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("an HTTP response");
    serde_json::from_slice(&raw[split + 4..]).expect("a JSON body")
}

/// One run of the official TypeScript client.
async fn ts_client(dir: &Path, url: &str, args: &[String]) -> Value {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut cmd = Command::from(aguikit_peers::ts_client(dir, url, &args));
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let out = tokio::time::timeout(RUN_LIMIT, cmd.output())
        .await
        .unwrap_or_else(|_| panic!("the TypeScript client hung on {args:?}"))
        .expect("run node");
    aguikit_peers::report(&out)
}

/// One run of our client, in its own task so that a panic is caught and reported.
async fn rust_client(url: &str, options: RunOptions) -> Result<Value, String> {
    let url = url.to_owned();
    let task = tokio::spawn(async move { run_report(&url, &options).await.to_value() });
    match tokio::time::timeout(RUN_LIMIT, task).await {
        Err(_) => Err("hang: no result within the time limit".into()),
        Ok(Err(e)) if e.is_panic() => Err(format!("panic: {e}")),
        Ok(Err(e)) => Err(format!("task failed: {e}")),
        Ok(Ok(v)) => Ok(v),
    }
}

/// Replaces every UUID in a JSON value (ids minted per run) by a placeholder.
fn without_uuids(v: &Value) -> Value {
    fn is_uuid_at(b: &[u8], i: usize) -> bool {
        const SHAPE: [usize; 5] = [8, 4, 4, 4, 12];
        let mut j = i;
        for (k, n) in SHAPE.iter().enumerate() {
            if j + n > b.len() || !b[j..j + n].iter().all(u8::is_ascii_hexdigit) {
                return false;
            }
            j += n;
            if k < 4 {
                if b.get(j) != Some(&b'-') {
                    return false;
                }
                j += 1;
            }
        }
        true
    }
    match v {
        Value::String(s) => {
            let b = s.as_bytes();
            let mut out = String::new();
            let mut i = 0;
            while i < b.len() {
                if is_uuid_at(b, i) {
                    out.push_str("<uuid>");
                    i += 36;
                } else {
                    let c = s[i..].chars().next().unwrap();
                    out.push(c);
                    i += c.len_utf8();
                }
            }
            Value::String(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(without_uuids).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), without_uuids(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The fields both reports must agree on for an accepted run: what a user sees, the
/// event types and the answers a resume sent.
fn compared() -> impl Iterator<Item = &'static str> {
    aguikit_peers::USER_VISIBLE
        .into_iter()
        .chain(["events", "resumedWith"])
}

fn differences(ours: &Value, theirs: &Value) -> Vec<String> {
    let (ours, theirs) = (without_uuids(ours), without_uuids(theirs));
    compared()
        .filter(|k| ours.get(*k) != theirs.get(*k))
        .map(|k| {
            format!(
                "{k}: ours {} / TypeScript {}",
                short(ours.get(k)),
                short(theirs.get(k))
            )
        })
        .collect()
}

fn short(v: Option<&Value>) -> String {
    let s = v.map(Value::to_string).unwrap_or_else(|| "(absent)".into());
    if s.chars().count() > 400 {
        format!("{}…", s.chars().take(400).collect::<String>())
    } else {
        s
    }
}

/// What the TypeScript client does that the server's scenario list says a conforming client
/// does not (or the reverse).
fn peer_disagreements(sc: &Value, ts: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let faulty = sc["faulty"].as_bool().unwrap_or(false);
    let ok = ts["ok"].as_bool().unwrap_or(false);
    if faulty && ok {
        out.push(format!(
            "the TypeScript client accepts this faulty stream ({}), terminal {}",
            sc["fault"], ts["terminal"]
        ));
    }
    if !faulty && !ok {
        out.push(format!(
            "the TypeScript client rejects this well-formed stream: {}",
            ts["error"]
        ));
    }
    if (ok || !faulty) && ts["terminal"] != sc["terminal"] {
        out.push(format!(
            "terminal {} where the server expects {}",
            ts["terminal"], sc["terminal"]
        ));
    }
    if let Some(state) = sc.get("expectState")
        && &ts["state"] != state
    {
        out.push(format!(
            "state {} differs from the expected one",
            ts["state"]
        ));
    }
    if let Some(text) = sc.get("expectText").and_then(Value::as_str) {
        let found = ts["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|m| m["role"] == "assistant" && m["content"] == text);
        if !found {
            out.push("no assistant message with the expected text".into());
        }
    }
    out
}

struct Case {
    name: String,
    args: Vec<String>,
    options: RunOptions,
}

/// The user message the official client sends (`user-1`); ours would get a fresh UUID, and
/// the `echo` scenario compares the inputs as received, so ours is given the same one.
const TS_USER_MESSAGE: &str = r#"{"id":"user-1","role":"user","content":"hello"}"#;

fn ts_messages() -> Value {
    serde_json::from_str(&format!("[{TS_USER_MESSAGE}]")).unwrap()
}

fn case(name: &str, scenario: &str, transport: &str) -> Case {
    let thread = format!("interop-{transport}-{name}");
    let run = format!("run-{name}");
    Case {
        name: name.to_owned(),
        args: vec![
            "--scenario".into(),
            scenario.into(),
            "--thread".into(),
            thread.clone(),
            "--run-id".into(),
            run.clone(),
            "--timeout".into(),
            "20000".into(),
        ],
        options: RunOptions {
            scenario: Some(scenario.to_owned()),
            thread_id: Some(thread),
            run_id: Some(run),
            timeout: Duration::from_secs(20),
            input: Some(
                RunSpec::from_json(&json!({"messages": ts_messages()}).to_string()).unwrap(),
            ),
            ..RunOptions::default()
        },
    }
}

#[derive(Default)]
struct Tally {
    passed: usize,
    failures: Vec<String>,
    disagreements: Vec<String>,
    lines: Vec<String>,
}

impl Tally {
    fn record(&mut self, name: &str, problems: Vec<String>, note: String) {
        if problems.is_empty() {
            self.passed += 1;
            self.lines.push(format!("  ok    {name:<28} {note}"));
        } else {
            self.lines
                .push(format!("  FAIL  {name:<28} {}", problems.join("; ")));
            self.failures
                .push(format!("{name}: {}", problems.join("; ")));
        }
    }
}

/// Runs `case` with both clients and checks ours against theirs (and the scenario).
async fn compare(
    dir: &Path,
    url: &str,
    sc: &Value,
    mut case: Case,
    ts_extra: &[&str],
    proto: bool,
    tally: &mut Tally,
) {
    case.options.proto = proto;
    let mut args = case.args.clone();
    args.extend(ts_extra.iter().map(|s| s.to_string()));
    if proto {
        args.push("--proto".into());
    }
    let (ours, theirs) = tokio::join!(
        rust_client(url, case.options.clone()),
        ts_client(dir, url, &args)
    );
    let faulty = sc["faulty"].as_bool().unwrap_or(false);
    let label = format!("{}{}", if proto { "proto/" } else { "sse/" }, case.name);
    for d in peer_disagreements(sc, &theirs) {
        let line = format!("{label}: {d}");
        if !tally.disagreements.contains(&line) {
            tally.disagreements.push(line);
        }
    }
    let ours = match ours {
        Ok(v) => v,
        Err(e) => {
            tally.record(&label, vec![e], String::new());
            return;
        }
    };
    let mut problems = Vec::new();
    let note;
    if !faulty {
        problems.extend(differences(&ours, &theirs));
        if proto && ours["contentType"] != "application/vnd.ag-ui.event+proto" {
            problems.push(format!(
                "the bridge answered {} instead of protobuf",
                ours["contentType"]
            ));
        }
        note = format!(
            "{} events, status {}",
            ours["events"].as_array().map_or(0, Vec::len),
            ours["status"]
        );
    } else if sc["fault"] == "truncated-stream" {
        if ours["ok"] != true || ours["status"] != "incomplete" {
            problems.push(format!(
                "a truncated stream must be accepted as incomplete, got ok {} status {}",
                ours["ok"], ours["status"]
            ));
        }
        // What was received is kept, as the reference keeps it.
        if ours["messages"] != theirs["messages"] {
            problems.push("messages differ from the TypeScript client's".into());
        }
        note = "accepted, reported incomplete".into();
    } else {
        let error = ours["error"].as_str().unwrap_or("");
        if ours["ok"] != false || error.is_empty() {
            problems.push(format!(
                "a faulty stream must fail with an error, got ok {} status {}",
                ours["ok"], ours["status"]
            ));
        }
        note = format!("error: {error}");
    }
    tally.record(&label, problems, note);
}

/// [`compare`] for the scenario `sc` as listed, over `transport` (`sse` or `proto`).
async fn compare_scenario(dir: &Path, url: &str, sc: &Value, transport: &str, tally: &mut Tally) {
    let name = sc["name"].as_str().unwrap();
    let case = case(name, name, transport);
    compare(dir, url, sc, case, &[], transport == "proto", tally).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interop_with_the_official_peers() {
    let Some(dir) = aguikit_peers::interop_dir() else {
        return;
    };
    let server = start_peer(
        dir,
        ".venv/bin/python",
        &["py-server/server.py"],
        "rust-py-port",
    )
    .await;
    let url = format!("http://127.0.0.1:{}/agent", server.port);

    let listing = get_json(server.port, "/scenarios").await;
    let scenarios: Vec<Value> = listing["scenarios"].as_array().unwrap().clone();
    assert!(scenarios.len() >= 30, "only {} scenarios", scenarios.len());

    let mut tally = Tally::default();
    for sc in &scenarios {
        compare_scenario(dir, &url, sc, "sse", &mut tally).await;
    }

    // A front-end tool given in the input, and an interrupt answered with a resume.
    let by_name = |n: &str| {
        scenarios
            .iter()
            .find(|s| s["name"] == n)
            .cloned()
            .unwrap_or_else(|| panic!("scenario {n} is listed"))
    };
    let tools_input = json!({
        "tools": [{
            "name": "confirm_action",
            "description": "Ask the user to confirm an action",
            "parameters": {"type": "object", "properties": {"question": {"type": "string"}}}
        }],
        "context": [{"description": "locale", "value": "de-CH"}],
        "state": {"draft": true}
    });
    let input_file = dir.join("out").join("rust-interop-tools.json");
    std::fs::write(&input_file, tools_input.to_string()).unwrap();
    let mut with_messages = tools_input.clone();
    with_messages["messages"] = ts_messages();
    let spec = RunSpec::from_json(&with_messages.to_string()).unwrap();
    for (name, scenario) in [
        ("frontend_tool+tools", "frontend_tool"),
        ("echo+tools", "echo"),
    ] {
        let mut c = case(name, scenario, "sse");
        c.options.input = Some(spec.clone());
        c.args.push("--input".into());
        c.args.push(input_file.display().to_string());
        compare(dir, &url, &by_name(scenario), c, &[], false, &mut tally).await;
    }
    let mut resume_case = case("interrupt+resume", "interrupt", "sse");
    resume_case.options.auto_resume = true;
    compare(
        dir,
        &url,
        &by_name("interrupt"),
        resume_case,
        &["--auto-resume"],
        false,
        &mut tally,
    )
    .await;

    // Protobuf (this crate always has it), through the official encoder in the bridge.
    {
        let upstream = url.clone();
        let bridge = start_peer(
            dir,
            "node",
            &["ts-bridge/bridge.mjs", &upstream],
            "rust-bridge-port",
        )
        .await;
        let bridge_url = format!("http://127.0.0.1:{}/agent", bridge.port);
        for sc in &scenarios {
            let faulty = sc["faulty"].as_bool().unwrap_or(false);
            let usable = !faulty
                || matches!(
                    sc["fault"].as_str(),
                    Some("connection-drop" | "truncated-stream" | "http-error")
                );
            if usable {
                compare_scenario(dir, &bridge_url, sc, "proto", &mut tally).await;
            }
        }
        drop(bridge);
    }
    drop(server);

    eprintln!("interop with the official peers:");
    for line in &tally.lines {
        eprintln!("{line}");
    }
    if tally.disagreements.is_empty() {
        eprintln!("official peers disagree: nowhere");
    } else {
        eprintln!("official peers disagree (TypeScript client vs. the server's scenario list):");
        for d in &tally.disagreements {
            eprintln!("  {d}");
        }
    }
    eprintln!(
        "interop summary: {} comparisons agree, {} do not",
        tally.passed,
        tally.failures.len()
    );
    assert!(
        tally.failures.is_empty(),
        "interop failures:\n{}",
        tally.failures.join("\n")
    );
}
