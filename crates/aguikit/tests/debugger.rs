//! The debugger's command-line and server parts: `agui check --format junit|sarif`,
//! `agui rules`, the console's modules and rules page served by `agui serve`, its
//! `POST /api/inspect`, and the console's engine modules against the conformance corpus
//! under Node.

mod common;

use common::{Serve, agui, assert_has, closed_port, field_strs, scripted, shared_dir};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;

/// A raw HTTP/1.0 request to the server: status, headers (lowercase names), body.
fn request(
    server: &Serve,
    method: &str,
    path: &str,
    token: bool,
    body: &[u8],
) -> (u16, String, Vec<u8>) {
    let addr = server
        .base
        .trim_start_matches("http://")
        .trim_end_matches('/');
    let mut s = TcpStream::connect(addr).unwrap();
    let auth = if token {
        format!("Authorization: Bearer {}\r\n", server.token)
    } else {
        String::new()
    };
    write!(
        s,
        "{method} {path} HTTP/1.0\r\nHost: {addr}\r\n{auth}Content-Type: application/octet-stream\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    s.write_all(body).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, head, raw[split + 4..].to_vec())
}

#[test]
fn check_writes_junit_and_sarif_with_the_readme_exit_codes() {
    let bad = format!("{}/everything", scripted());
    let out = agui(&["check", &bad, "--format", "junit", "--timeout-ms", "3000"]);
    assert_eq!(out.code, 1, "{out:?}");
    let x = &out.stdout;
    assert!(x.starts_with("<?xml"), "{x}");
    assert_has(
        x,
        &[
            "<testsuites name=\"agui check\"",
            "<testcase classname=\"agui.check\" name=\"plain\"",
            "<failure type=\"",
            "Help: ",
        ],
    );

    let out = agui(&[
        "check",
        &bad,
        "--format",
        "sarif",
        "--timeout-ms",
        "3000",
        "--rules-url",
        "http://docs.example/rules",
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    let s = out.json();
    assert_eq!(s["version"], "2.1.0");
    let run = &s["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let results = run["results"].as_array().unwrap();
    assert!(!results.is_empty());
    let ids = field_strs(&run["results"], "ruleId");
    // The same problems the JSON report names.
    let json = agui(&["check", &bad, "--json", "--timeout-ms", "3000"]).json();
    assert_eq!(ids, field_strs(&json["violations"], "rule"));
    for r in results {
        let k = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[k]["id"], r["ruleId"]);
        assert_eq!(
            rules[k]["helpUri"],
            format!(
                "http://docs.example/rules#{}",
                r["ruleId"].as_str().unwrap()
            )
        );
    }
    assert!(
        results
            .iter()
            .any(|r| r["properties"]["eventIndex"] == 0 && r["ruleId"] == "V3"),
        "{results:#?}"
    );

    // A server without violations: 0 in every format.
    let server = Serve::start();
    for format in ["junit", "sarif"] {
        let out = agui(&["check", &server.url, "--format", format]);
        assert_eq!(out.code, 0, "{format}: {out:?}");
    }
    let sarif = agui(&["check", &server.url, "--format", "sarif"]).json();
    assert_eq!(sarif["runs"][0]["results"], serde_json::json!([]));
    // Nothing to check: 2, and still a report.
    let url = format!("http://127.0.0.1:{}/agent", closed_port());
    let out = agui(&["check", &url, "--format", "junit", "--timeout-ms", "2000"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert_has(&out.stdout, &["<failure type=\"request\""]);
    // --json and --format conflict.
    assert_eq!(
        agui(&["check", &url, "--json", "--format", "sarif"]).code,
        2
    );
}

#[test]
fn rules_lists_every_rule_in_each_format() {
    let out = agui(&["rules", "--format", "json"]);
    assert_eq!(out.code, 0, "{out:?}");
    let j: Value = out.json();
    let ids = field_strs(&j["rules"], "id");
    for n in 1..=55 {
        assert!(ids.contains(&format!("V{n}").as_str()), "V{n}");
    }
    for id in ["CH3", "CH6", "CH7", "CH8", "schema"] {
        assert!(ids.contains(&id), "{id}");
    }
    assert!(j["transportChecks"].as_array().unwrap().len() >= 9);
    let md = agui(&["rules", "--format", "md"]);
    let committed =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/RULES.md")).unwrap();
    assert_eq!(md.stdout, committed, "RULES.md is stale");
    let text = agui(&["rules"]);
    assert_eq!(text.code, 0);
    assert!(
        text.stdout.lines().any(|l| l.starts_with("V16 ")),
        "{}",
        text.stdout
    );
}

#[test]
fn serve_serves_the_console_modules_the_rules_and_the_verifier() {
    let server = Serve::start_with(&["--store", "memory"]);
    // The page loads its modules by relative URL; each is JavaScript, under the CSP.
    let (status, head, page) = request(&server, "GET", "/", false, b"");
    assert_eq!(status, 200);
    assert!(
        head.contains("content-security-policy: default-src 'self'; script-src 'self'"),
        "{head}"
    );
    let page = String::from_utf8(page).unwrap();
    assert!(page.contains(r#"<script type="module" src="app.js"></script>"#));
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("console");
    let mut modules = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if !name.ends_with(".js") {
            continue;
        }
        let (status, head, body) = request(&server, "GET", &format!("/{name}"), false, b"");
        assert_eq!(status, 200, "/{name}");
        assert!(
            head.contains("content-type: text/javascript"),
            "/{name}: {head}"
        );
        assert_eq!(
            body,
            std::fs::read(dir.join(&name)).unwrap(),
            "/{name} is not the file"
        );
        modules += 1;
        // Every module a module imports is served too.
        for line in String::from_utf8(body).unwrap().lines() {
            if let Some(rest) = line.strip_prefix("import ")
                && let Some(at) = rest.find("from \"./")
            {
                let target = rest[at + 8..].split('"').next().unwrap();
                assert!(dir.join(target).exists(), "{name} imports {target}");
            }
        }
    }
    assert!(modules >= 10, "{modules} modules");

    let (status, _, rules) = request(&server, "GET", "/rules", false, b"");
    assert_eq!(status, 200);
    let rules = String::from_utf8(rules).unwrap();
    assert!(
        rules.contains(r#"<tr id="V16""#) && !rules.contains("<script"),
        "{rules}"
    );
    let (status, _, json) = request(&server, "GET", "/rules.json", false, b"");
    assert_eq!(status, 200);
    let json: Value = serde_json::from_slice(&json).unwrap();
    assert!(json["rules"].as_array().unwrap().len() >= 60);

    // The verifier needs the token, and says what `agui verify` says.
    let recording = std::fs::read(common::case("invalid-text-start-while-active")).unwrap();
    let (status, _, _) = request(&server, "POST", "/api/inspect", false, &recording);
    assert_eq!(status, 401);
    let (status, _, body) = request(&server, "POST", "/api/inspect", true, &recording);
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let report: Value = serde_json::from_slice(&body).unwrap();
    let path = common::scratch("inspect-recording");
    std::fs::write(&path, &recording).unwrap();
    let verdict = agui(&["verify", path.to_str().unwrap()]).json();
    assert_eq!(report["ok"], verdict["ok"], "{report:#}");
    assert_eq!(verdict["ok"], false);
    {
        assert_eq!(report["violations"][0]["index"], verdict["at"]);
        assert_eq!(report["violations"][0]["rule"], verdict["rule"]);
        let help = report["violations"][0]["help"].as_str().unwrap();
        assert_eq!(
            help,
            format!("/rules#{}", verdict["rule"].as_str().unwrap())
        );
    }
    let _ = std::fs::remove_file(path);
    let (status, _, body) = request(&server, "POST", "/api/inspect", true, b"not a recording");
    assert_eq!(status, 400, "{}", String::from_utf8_lossy(&body));
}

/// The console knows exactly the event types the Rust engine knows: its `KNOWN` list
/// (`console/events.js`, kept by hand) against `EventType::ALL`.
#[test]
fn the_consoles_event_types_are_the_engines() {
    let js = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("console/events.js"),
    )
    .unwrap();
    let list = js
        .split_once("export const KNOWN = new Set([")
        .and_then(|(_, rest)| rest.split_once("]);"))
        .expect("console/events.js declares KNOWN as a Set of strings")
        .0;
    let mut console: Vec<&str> = list
        .split(',')
        .map(|s| s.trim().trim_matches('"'))
        .filter(|s| !s.is_empty())
        .collect();
    let mut engine: Vec<&str> = aguikit_core::EventType::ALL
        .iter()
        .map(|t| t.as_str())
        .collect();
    console.sort_unstable();
    engine.sort_unstable();
    assert_eq!(
        console, engine,
        "console/events.js KNOWN differs from EventType::ALL"
    );
}

/// The console's engine modules (SSE, JSON Patch, expansion, the reducer) give the
/// reference's results on the conformance corpus (`console/test/corpus.test.mjs`).
#[test]
fn the_consoles_engine_passes_the_corpus_under_node() {
    let node = std::env::var_os("NODE").unwrap_or_else(|| "node".into());
    let version = std::process::Command::new(&node).arg("--version").output();
    // No skip: a machine without Node would otherwise pass this test having run nothing.
    let Some(version) = version.ok().filter(|o| o.status.success()) else {
        panic!(
            "the console's engine is tested under Node.js 18+: install it (or name it in $NODE)"
        );
    };
    let major: u32 = String::from_utf8_lossy(&version.stdout)
        .trim()
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    assert!(
        major >= 18,
        "node:test needs Node 18+, found {:?}",
        version.stdout
    );
    let out = std::process::Command::new(&node)
        .args(["--test", "console/test/"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("AGUI_SHARED_DIR", shared_dir())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{}",
        stdout
            .lines()
            .filter(|l| l.starts_with("not ok") || l.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n"),
        String::from_utf8_lossy(&out.stderr)
    );
    let passed: usize = stdout
        .lines()
        .find_map(|l| l.strip_prefix("# pass "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    assert!(passed > 500, "only {passed} console corpus tests passed");
}
