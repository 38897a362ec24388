//! `agui serve --upstream`: the gateway in front of other AG-UI servers.
//!
//! - Against the official peers (`../shared/interop`, copied to `target/interop`; skipped
//!   with a notice when `AGUI_SKIP_INTEROP=1`): for every well-formed scenario of the Python
//!   SDK server, the official TypeScript client gets through the gateway the same messages,
//!   state, terminal event, outcome and interrupts as directly, over SSE and over protobuf;
//!   every faulty scenario ends with `RUN_ERROR` and the code naming its fault.
//! - Against `agui serve` as the upstream: a client dropped mid-run resumes through the
//!   gateway with nothing lost or repeated; the gateway killed with SIGKILL mid-run and
//!   restarted on its SQLite file closes the run as abandoned; the upstream killed mid-run
//!   ends the run with `upstream_connection_lost`; the upstream's credentials are its own;
//!   `GET /agents` lists the agents without credentials; `/metrics` parses as Prometheus
//!   text and its counters move with the runs; `--log-format json` logs each run with its
//!   thread and run ids.

mod common;

use aguikit_peers::{PyServer, WELL_FORMED};
use common::TOKEN;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

// ---- processes ------------------------------------------------------------------------

/// An `agui serve` process, killed (SIGKILL) when dropped.
struct Proc {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    base: String,
    /// Standard error, when captured.
    stderr: Option<std::sync::Arc<std::sync::Mutex<String>>>,
}

impl Proc {
    /// `agui serve --listen 127.0.0.1:0 ARGS` with `AGUI_TOKEN` = [`TOKEN`]; reads the URL
    /// from its banner.
    fn agui(args: &[&str]) -> Proc {
        Proc::agui_with(args, false)
    }

    fn agui_with(args: &[&str], capture_stderr: bool) -> Proc {
        let mut child = common::agui_command()
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(args)
            .env("AGUI_TOKEN", TOKEN)
            .stdout(Stdio::piped())
            .stderr(if capture_stderr {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .spawn()
            .expect("agui serve starts");
        let stderr = child.stderr.take().map(|mut err| {
            let text = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
            let sink = text.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = err.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    sink.lock()
                        .unwrap()
                        .push_str(&String::from_utf8_lossy(&buf[..n]));
                }
            });
            text
        });
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut base = None;
        loop {
            let mut line = String::new();
            if stdout.read_line(&mut line).unwrap_or(0) == 0 {
                panic!("agui serve {args:?} exited before its banner ended");
            }
            if let Some(rest) = line.trim().strip_prefix("agui serve: listening on ") {
                base = Some(rest.trim_end_matches('/').to_owned());
            }
            if line.starts_with("Press Ctrl-C") {
                break;
            }
        }
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        Proc {
            child,
            base: base.expect("a listening line"),
            stderr,
        }
    }

    /// A gateway (`agui serve --upstream`) with a memory store in front of the agent at
    /// `base` + `/agent`.
    fn memory_gateway(base: &str) -> Proc {
        Proc::agui(&["--store", "memory", "--upstream", &format!("{base}/agent")])
    }

    /// The upstream: `agui serve` without authentication, in memory, pausing `delay_ms`
    /// between streamed pieces.
    fn upstream(delay_ms: u64) -> Proc {
        Proc::agui(&[
            "--no-auth",
            "--store",
            "memory",
            "--delay-ms",
            &delay_ms.to_string(),
        ])
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn stderr(&self) -> String {
        self.stderr
            .as_ref()
            .map(|s| s.lock().unwrap().clone())
            .unwrap_or_default()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

// ---- HTTP -------------------------------------------------------------------------------

/// Opens a connection to `base` and sends an HTTP/1.0 request with the token (the answer
/// ends with the connection), giving up reading after `read_limit`.
fn send(
    base: &str,
    method: &str,
    path: &str,
    headers: &str,
    body: &str,
    read_limit: Duration,
) -> TcpStream {
    let addr = base.trim_start_matches("http://");
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(read_limit)).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nAccept: text/event-stream\r\n{headers}\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    s
}

/// `POST /agent` with `input`, read until `done(what was read)` holds (the stream must not
/// end before): the open connection and what was read, head included.
fn run_until(base: &str, input: &str, done: impl Fn(&str) -> bool) -> (TcpStream, String) {
    let mut s = send(base, "POST", "/agent", "", input, Duration::from_secs(30));
    let mut seen = String::new();
    let mut buf = [0u8; 4096];
    while !done(&seen) {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "the run ended early: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    (s, seen)
}

/// One HTTP/1.0 exchange with the token (the body ends with the connection): the status
/// and the body.
fn http(base: &str, method: &str, path: &str, headers: &str, body: &str) -> (u16, String) {
    let mut s = send(base, method, path, headers, body, Duration::from_secs(60));
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    common::status_and_body(&String::from_utf8_lossy(&out))
}

/// `POST {path}` of a one-message run on `thread` saying `text`: the status and the body.
fn post_run(base: &str, path: &str, thread: &str, text: &str) -> (u16, String) {
    http(base, "POST", path, "", &run_input(thread, text))
}

/// The SSE frames of a body: `(id, event)`.
fn frames(body: &str) -> Vec<(Option<u64>, Value)> {
    let mut out = Vec::new();
    for block in body.split("\n\n") {
        let mut id = None;
        let mut data = None;
        for line in block.lines() {
            if let Some(v) = line.strip_prefix("id: ") {
                id = v.trim().parse().ok();
            } else if let Some(v) = line.strip_prefix("data: ") {
                data = Some(serde_json::from_str(v).unwrap_or_else(|e| panic!("{e}: {v}")));
            }
        }
        if let Some(d) = data {
            out.push((id, d));
        }
    }
    out
}

fn run_input(thread: &str, text: &str) -> String {
    json!({
        "threadId": thread, "runId": format!("{thread}-r1"),
        "messages": [{"id": "u1", "role": "user", "content": text}],
        "tools": [], "context": [], "state": {}
    })
    .to_string()
}

/// Waits for `f` to hold, at most 30 s.
fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !f() {
        assert!(t0.elapsed() < Duration::from_secs(30), "never: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

// ---- the official peers ------------------------------------------------------------------

/// The set-up interop folder (`None`: skipped); see [`aguikit_peers::interop_dir`].
fn interop() -> Option<&'static Path> {
    aguikit_peers::interop_dir()
}

/// The official Python SDK server on a free port.
fn py_server(dir: &Path) -> PyServer {
    PyServer::start(dir, "aguikit-gateway")
}

/// `node ts-client/client.mjs URL ARGS`: the official client's report.
fn ts_client(dir: &Path, url: &str, args: &[&str]) -> Value {
    let out = aguikit_peers::ts_client(dir, url, args)
        .args(["--timeout", "20000"])
        .args(["--header", &format!("Authorization:Bearer {TOKEN}")])
        .output()
        .expect("node runs");
    aguikit_peers::report(&out)
}

/// What a user sees of a run, with the thread's id and every generated id (message, tool
/// call, run ids; random in a resumed run) replaced by its order of appearance, so runs on
/// different threads compare.
fn seen(report: &Value, thread: &str) -> Value {
    fn walk(v: &Value, key: &str, thread: &str, ids: &mut HashMap<String, usize>) -> Value {
        match v {
            Value::String(s) => {
                let s = s.replace(thread, "THREAD");
                let is_id = key == "id" || key.ends_with("Id") || key.ends_with("Ids");
                if is_id {
                    let n = ids.len();
                    Value::String(format!("ID{}", ids.entry(s).or_insert(n)))
                } else {
                    Value::String(s)
                }
            }
            Value::Array(a) => Value::Array(a.iter().map(|x| walk(x, key, thread, ids)).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, x)| (k.clone(), walk(x, k, thread, ids)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    let mut ids = HashMap::new();
    let mut picked = serde_json::Map::new();
    for key in aguikit_peers::USER_VISIBLE {
        let v = report.get(key).cloned().unwrap_or(Value::Null);
        picked.insert(key.into(), walk(&v, key, thread, &mut ids));
    }
    if let Some(first) = report.get("firstRun") {
        for key in ["terminal", "outcome", "interrupts"] {
            let v = first.get(key).cloned().unwrap_or(Value::Null);
            picked.insert(format!("first.{key}"), walk(&v, key, thread, &mut ids));
        }
    }
    Value::Object(picked)
}

#[test]
fn the_official_client_sees_the_same_runs_through_the_gateway() {
    let Some(dir) = interop() else { return };
    let direct = py_server(dir);
    let behind = py_server(dir);
    let gateway = Proc::memory_gateway(&behind.base());
    let gateway_url = format!("{}/agent", gateway.base);
    let direct_url = format!("{}/agent", direct.base());
    let pid = std::process::id();
    let compare = |scenario: &str| -> Vec<String> {
        let mut problems = Vec::new();
        let extra: &[&str] = if scenario == "interrupt" {
            &["--auto-resume"]
        } else {
            &[]
        };
        let run = |url: &str, transport: &str, proto: bool| {
            let thread = format!("t-{scenario}-{transport}-{pid}");
            let mut args = vec![
                "--scenario",
                scenario,
                "--thread",
                &thread,
                "--run-id",
                "run-1",
            ];
            args.extend_from_slice(extra);
            if proto {
                args.push("--proto");
            }
            let report = ts_client(dir, url, &args);
            (seen(&report, &thread), report)
        };
        let (want, direct_report) = run(&direct_url, "direct", false);
        if direct_report["ok"] != true {
            problems.push(format!("{scenario}: direct run failed: {direct_report:#}"));
        }
        for (transport, proto, content_type) in [
            ("sse", false, "text/event-stream"),
            ("proto", true, "application/vnd.ag-ui.event+proto"),
        ] {
            let (got, report) = run(&gateway_url, transport, proto);
            if report["contentType"] != content_type {
                problems.push(format!(
                    "{scenario}/{transport}: content type {}",
                    report["contentType"]
                ));
            }
            if report["unhandledRejections"] != json!([]) {
                problems.push(format!("{scenario}/{transport}: {report:#}"));
            }
            if got != want {
                problems.push(format!(
                    "{scenario}/{transport} differs:\ndirect:  {want}\ngateway: {got}"
                ));
            }
        }
        problems
    };
    let problems: Vec<String> = std::thread::scope(|s| {
        let chunks: Vec<Vec<&str>> = WELL_FORMED.chunks(6).map(<[&str]>::to_vec).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                s.spawn(move || chunk.iter().flat_map(|sc| compare(sc)).collect::<Vec<_>>())
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn every_faulty_scenario_ends_with_the_code_of_its_fault() {
    let Some(dir) = interop() else { return };
    let behind = py_server(dir);
    let gateway = Proc::memory_gateway(&behind.base());
    let url = format!("{}/agent", gateway.base);
    let mut problems = Vec::new();
    for (scenario, code) in [
        ("fault_malformed_json", "upstream_malformed_event"),
        ("fault_not_object", "upstream_malformed_event"),
        ("fault_schema", "upstream_malformed_event"),
        ("fault_missing_field", "upstream_malformed_event"),
        ("fault_sequence", "upstream_protocol_violation"),
        ("fault_first_event", "upstream_protocol_violation"),
        ("fault_after_finish", "upstream_protocol_violation"),
        ("fault_unclosed", "upstream_protocol_violation"),
        ("fault_drop", "upstream_connection_lost"),
        ("fault_truncated", "upstream_incomplete"),
        ("fault_http_500", "upstream_http_status"),
    ] {
        let report = ts_client(dir, &url, &["--scenario", scenario]);
        // The official client accepts the gateway's stream: a clean RUN_ERROR.
        if report["ok"] != true
            || report["terminal"] != "RUN_ERROR"
            || report["runError"]["code"] != code
            || report["warnings"] != json!([])
        {
            problems.push(format!("{scenario}: want {code}: {report:#}"));
        }
        if code == "upstream_protocol_violation" {
            let message = report["runError"]["message"].as_str().unwrap_or("");
            if !(message.contains("event ") && message.contains("breaks rule V")) {
                problems.push(format!("{scenario}: no rule and index in {message:?}"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

// ---- against agui serve as the upstream --------------------------------------------------

#[test]
fn a_dropped_client_resumes_through_the_gateway_with_nothing_lost_or_repeated() {
    let upstream = Proc::upstream(150);
    let gateway = Proc::memory_gateway(&upstream.base);
    let input = run_input("t-drop", "hello there, how are you");
    // Read the live stream until two events after RUN_STARTED have come, then hang up.
    let (s, seen) = run_until(&gateway.base, &input, |seen| {
        frames(seen.split_once("\r\n\r\n").map_or("", |x| x.1)).len() >= 3
    });
    drop(s);
    let first = frames(seen.split_once("\r\n\r\n").unwrap().1);
    let last_id = first.last().unwrap().0.expect("SSE ids");
    assert!(
        !first.iter().any(|(_, e)| e["type"] == "RUN_FINISHED"),
        "the run ended before the client dropped"
    );
    // The same request with Last-Event-ID: the rest of the run (the gateway kept reading
    // the upstream meanwhile), not a new run.
    let (status, rest) = http(
        &gateway.base,
        "POST",
        "/agent",
        &format!("Last-Event-ID: {last_id}\r\n"),
        &input,
    );
    assert_eq!(status, 200, "{rest}");
    let rest = frames(&rest);
    let mut all = first.clone();
    all.extend(rest);
    let ids: Vec<u64> = all.iter().map(|(id, _)| id.unwrap()).collect();
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>());
    assert_eq!(all.last().unwrap().1["type"], "RUN_FINISHED");
    // What the client pieced together is the stored thread, event for event.
    let (status, history) = http(
        &gateway.base,
        "GET",
        "/agent/threads/t-drop/connect?after=0",
        "",
        "",
    );
    assert_eq!(status, 200);
    assert_eq!(frames(&history), all);
    let text: String = all
        .iter()
        .filter(|(_, e)| e["type"] == "TEXT_MESSAGE_CONTENT")
        .map(|(_, e)| e["delta"].as_str().unwrap())
        .collect();
    assert!(text.contains("hello there, how are you"), "{text}");
}

#[test]
fn a_gateway_killed_mid_run_closes_the_run_as_abandoned_after_a_restart() {
    let upstream = Proc::upstream(300);
    let dir = std::env::temp_dir().join(format!("aguikit-gateway-dead-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let locator = format!("sqlite:{}", dir.join("g.db").display());
    let up = format!("{}/agent", upstream.base);
    let args = [
        "--store",
        &locator,
        "--run-lease-secs",
        "1",
        "--upstream",
        &up,
    ];
    let mut gateway = Proc::agui(&args);
    let input = run_input("t-dead", "Hello");
    let (s, _) = run_until(&gateway.base, &input, |seen| {
        seen.contains("TEXT_MESSAGE_CONTENT")
    });
    gateway.kill(); // SIGKILL: no chance to end the run
    drop(s);
    let gateway = Proc::agui(&args);
    let (status, history) = http(
        &gateway.base,
        "GET",
        "/agent/threads/t-dead/connect?after=0",
        "",
        "",
    );
    assert_eq!(status, 200, "{history}");
    let events = frames(&history);
    assert_eq!(events[0].1["type"], "RUN_STARTED");
    assert!(
        events
            .iter()
            .any(|(_, e)| e["type"] == "TEXT_MESSAGE_CONTENT"),
        "{history}"
    );
    let last = &events.last().unwrap().1;
    assert_eq!(last["type"], "RUN_ERROR", "{history}");
    assert_eq!(last["code"], "abandoned", "{history}");
    drop(gateway);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_upstream_killed_mid_run_ends_the_run_with_its_code() {
    let mut upstream = Proc::upstream(300);
    let gateway = Proc::memory_gateway(&upstream.base);
    let input = run_input("t-upstream-dies", "Hello");
    let (mut s, mut seen) = run_until(&gateway.base, &input, |seen| {
        seen.contains("TEXT_MESSAGE_CONTENT")
    });
    upstream.kill();
    let mut rest = Vec::new();
    s.read_to_end(&mut rest).unwrap();
    seen.push_str(&String::from_utf8_lossy(&rest));
    let events = frames(seen.split_once("\r\n\r\n").unwrap().1);
    let last = &events.last().unwrap().1;
    assert_eq!(last["type"], "RUN_ERROR", "{seen}");
    assert_eq!(last["code"], "upstream_connection_lost", "{seen}");
    // Everything before the failure was delivered, numbered without gaps.
    let ids: Vec<u64> = events.iter().map(|(id, _)| id.unwrap()).collect();
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>());
}

#[test]
fn named_upstreams_are_listed_without_credentials_and_get_their_own_headers() {
    // The upstream wants its own token, not the gateway's.
    let token_file = common::scratch("upstream-tokens");
    std::fs::write(&token_file, "upstream-only-token-0123456789\n").unwrap();
    let upstream = Proc::agui(&[
        "--store",
        "memory",
        "--delay-ms",
        "0",
        "--token-file",
        token_file.to_str().unwrap(),
    ]);
    let port = upstream.base.rsplit(':').next().unwrap().to_owned();
    let with_creds = format!("http://someone:pw@127.0.0.1:{port}/agent?api_key=zzz");
    let gateway = Proc::agui(&[
        "--store",
        "memory",
        "--delay-ms",
        "0",
        "--upstream",
        &format!("good={with_creds}"),
        "--upstream",
        &format!("bare=http://127.0.0.1:{port}/agent"),
        "--upstream-header",
        "good=Authorization: Bearer upstream-only-token-0123456789",
    ]);
    let (status, listing) = http(&gateway.base, "GET", "/agents", "", "");
    assert_eq!(status, 200, "{listing}");
    let listing: Value = serde_json::from_str(&listing).unwrap();
    assert_eq!(
        listing,
        json!({"agents": [
            {"name": "agent", "path": "/agent", "kind": "demo"},
            {"name": "good", "path": "/agents/good", "kind": "upstream",
             "upstream": format!("http://127.0.0.1:{port}/agent?api_key=***")},
            {"name": "bare", "path": "/agents/bare", "kind": "upstream",
             "upstream": format!("http://127.0.0.1:{port}/agent")},
        ]})
    );
    // The listing needs the token, like the agents.
    let addr = gateway.base.trim_start_matches("http://").to_owned();
    let mut s = TcpStream::connect(&addr).unwrap();
    write!(s, "GET /agents HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.0 401"), "{out}");

    let (status, body) = post_run(&gateway.base, "/agents/good", "t-good", "Hello");
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        frames(&body).last().unwrap().1["type"],
        "RUN_FINISHED",
        "{body}"
    );
    // Without the upstream's header the gateway's own token does not get through.
    let (status, body) = post_run(&gateway.base, "/agents/bare", "t-bare", "Hello");
    assert_eq!(status, 200, "{body}");
    let last = frames(&body).last().unwrap().1.clone();
    assert_eq!(last["code"], "upstream_http_status", "{body}");
    assert!(last["message"].as_str().unwrap().contains("401"), "{body}");
    // Each agent has its own thread routes.
    let (status, _) = http(&gateway.base, "GET", "/agents/good/threads/t-good", "", "");
    assert_eq!(status, 200);
}

/// Parses the Prometheus text exposition format: every sample as `name{labels}` → value.
/// Panics (naming the line) on anything that is not a comment, a blank line or a sample.
fn prometheus(text: &str) -> HashMap<String, f64> {
    let mut samples = HashMap::new();
    let mut types = HashMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("# ") {
            let mut words = rest.splitn(3, ' ');
            match (words.next(), words.next(), words.next()) {
                (Some("HELP"), Some(_), _) => {}
                (Some("TYPE"), Some(name), Some(kind)) => {
                    assert!(
                        ["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind),
                        "line {n}: {line}"
                    );
                    types.insert(name.to_owned(), kind.to_owned());
                }
                _ => panic!("line {n}: {line}"),
            }
            continue;
        }
        let (series, value) = line
            .rsplit_once(' ')
            .unwrap_or_else(|| panic!("line {n}: {line}"));
        let value: f64 = match value {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            v => v
                .parse()
                .unwrap_or_else(|_| panic!("line {n}: value {v:?}")),
        };
        let name = series.split('{').next().unwrap();
        assert!(
            !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':'),
            "line {n}: name {name:?}"
        );
        if let Some(labels) = series.strip_prefix(name)
            && !labels.is_empty()
        {
            assert!(
                labels.starts_with('{') && labels.ends_with('}'),
                "line {n}: {line}"
            );
            for pair in labels[1..labels.len() - 1]
                .split("\",")
                .filter(|p| !p.is_empty())
            {
                let (k, v) = pair
                    .split_once("=\"")
                    .unwrap_or_else(|| panic!("line {n}: {line}"));
                assert!(
                    k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'),
                    "line {n}"
                );
                assert!(!v.contains('\n'));
            }
        }
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| name.strip_suffix(s))
            .filter(|base| types.contains_key(*base))
            .unwrap_or(name);
        assert!(types.contains_key(family), "line {n}: no TYPE for {name}");
        samples.insert(series.to_owned(), value);
    }
    samples
}

#[test]
fn metrics_parse_as_prometheus_text_and_move_with_the_runs() {
    let upstream = Proc::upstream(0);
    let gateway = Proc::agui_with(
        &[
            "--store",
            "memory",
            "--upstream",
            &format!("{}/agent", upstream.base),
            "--upstream",
            "down=http://127.0.0.1:9/agent",
            "--log-format",
            "json",
        ],
        true,
    );
    let scrape = || {
        let (status, body) = http(&gateway.base, "GET", "/metrics", "", "");
        assert_eq!(status, 200, "{body}");
        prometheus(&body)
    };
    let get = |m: &HashMap<String, f64>, k: &str| m.get(k).copied().unwrap_or(0.0);
    let before = scrape();
    for i in 0..2 {
        let (status, body) = post_run(&gateway.base, "/agent", &format!("t-metrics-{i}"), "Hello");
        assert_eq!(status, 200, "{body}");
    }
    let (_, body) = post_run(&gateway.base, "/agents/down", "t-down", "Hi");
    assert!(body.contains("upstream_unreachable"), "{body}");
    // Refused: no token.
    let addr = gateway.base.trim_start_matches("http://").to_owned();
    let mut s = TcpStream::connect(&addr).unwrap();
    write!(s, "GET /agent/threads HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.0 401"), "{out}");

    let mut after = scrape();
    // A run is counted as ended once its last event is stored: wait for it.
    eventually("three runs ended", || {
        after = scrape();
        get(
            &after,
            r#"agui_runs_ended_total{agent="/agent",outcome="finished"}"#,
        ) - get(
            &before,
            r#"agui_runs_ended_total{agent="/agent",outcome="finished"}"#,
        ) == 2.0
            && get(
                &after,
                r#"agui_runs_ended_total{agent="/agents/down",outcome="error"}"#,
            ) == 1.0
    });
    let moved = |k: &str| get(&after, k) - get(&before, k);
    assert_eq!(moved(r#"agui_runs_started_total{agent="/agent"}"#), 2.0);
    assert_eq!(
        moved(r#"agui_runs_started_total{agent="/agents/down"}"#),
        1.0
    );
    assert!(moved(r#"agui_events_sent_total{encoding="sse"}"#) >= 2.0 * 5.0);
    assert!(moved(r#"agui_bytes_sent_total{encoding="sse"}"#) > 500.0);
    assert_eq!(
        moved(r#"agui_upstream_errors_total{upstream="down",code="upstream_unreachable"}"#),
        1.0
    );
    assert!(moved(r#"agui_requests_rejected_total{reason="unauthorized"}"#) >= 1.0);
    assert_eq!(get(&after, r#"agui_runs_active{agent="/agent"}"#), 0.0);
    assert!(moved("agui_store_append_seconds_count") >= 3.0);
    assert!(moved(r#"agui_run_duration_seconds_count{agent="/agent"}"#) == 2.0);
    assert!(moved(r#"agui_run_first_event_seconds_count{agent="/agent"}"#) == 2.0);
    // The upstream (agui serve itself) counts its own runs too, in its own process.

    // One JSON log line per run end, inside the run's span with its ids.
    // Log lines are written by a thread of their own, a few milliseconds later.
    eventually("the run logs", || {
        let logs = gateway.stderr();
        logs.contains("t-metrics-1") && logs.contains("upstream_unreachable")
    });
    let logs = gateway.stderr();
    let ended: Vec<Value> = logs
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["fields"]["message"] == "run ended")
        .collect();
    assert!(
        ended
            .iter()
            .any(|l| l["span"]["thread_id"] == "t-metrics-0"
                && l["span"]["run_id"] == "t-metrics-0-r1"),
        "{logs}"
    );
    let failure = logs
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|l| l["fields"]["code"] == "upstream_unreachable")
        .unwrap_or_else(|| panic!("no log line for the upstream failure: {logs}"));
    assert_eq!(failure["span"]["thread_id"], "t-down");
}

#[test]
fn metrics_on_their_own_listener_need_no_token() {
    let port = common::closed_port();
    let at = format!("127.0.0.1:{port}");
    let gateway = Proc::agui(&[
        "--store",
        "memory",
        "--delay-ms",
        "0",
        "--metrics-listen",
        &at,
    ]);
    // Not on the main listener then.
    let (status, _) = http(&gateway.base, "GET", "/metrics", "", "");
    assert_eq!(status, 404);
    let mut s = TcpStream::connect(&at).unwrap();
    write!(s, "GET /metrics HTTP/1.0\r\nHost: {at}\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.0 200"), "{out}");
    let body = out.split_once("\r\n\r\n").unwrap().1;
    prometheus(body);
}
