//! `agui serve` as a hostile web page, a careless client and a container runtime meet it:
//! a token by default, security headers on the console, `SIGTERM` handled like Ctrl-C, a
//! damaged database refused at start, and `/health` answering under a connection flood
//! (issues 14 and 15).

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

struct Server {
    child: Child,
    addr: String,
    console: String,
    stderr: tokio::task::JoinHandle<String>,
}

/// Starts `agui serve` with `args` (and `env`), waits for its banner.
async fn start(args: &[&str], env: &[(&str, &str)]) -> Server {
    start_wrapped(None, args, env).await
}

/// [`start`] under `sh -c 'ulimit -n N; exec agui serve ...'` when `fds` is given.
async fn start_wrapped(fds: Option<u32>, args: &[&str], env: &[(&str, &str)]) -> Server {
    let bin = env!("CARGO_BIN_EXE_agui");
    let mut cmd = match fds {
        None => {
            let mut c = Command::new(bin);
            c.arg("serve");
            c
        }
        Some(n) => {
            let mut c = Command::new("sh");
            c.args([
                "-c",
                &format!("ulimit -n {n} && exec \"$0\" serve \"$@\""),
                bin,
            ]);
            c
        }
    };
    cmd.args(["--listen", "127.0.0.1:0"])
        .args(if args.contains(&"--delay-ms") {
            &[][..]
        } else {
            &["--delay-ms", "0"][..]
        })
        .args(args)
        .env_remove("AGUI_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let stderr = tokio::spawn(async move {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s).await;
        s
    });
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut printed = Vec::new();
    loop {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("agui serve printed nothing")
            .unwrap();
        let Some(line) = line else {
            child.wait().await.unwrap();
            panic!("agui serve exited: {printed:#?}\n{}", stderr.await.unwrap());
        };
        let done = line.starts_with("Press Ctrl-C");
        printed.push(line);
        if done {
            break;
        }
    }
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let addr = printed[0]
        .strip_prefix("agui serve: listening on http://")
        .unwrap()
        .trim_end_matches('/')
        .to_owned();
    let console = printed
        .iter()
        .find_map(|l| l.trim_start().strip_prefix("console"))
        .unwrap()
        .trim()
        .to_owned();
    Server {
        child,
        addr,
        console,
        stderr,
    }
}

/// One HTTP/1.0 exchange; the status, the head and the body.
async fn http(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut request = format!("{method} {path} HTTP/1.0\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    let (status, head, body) = common::exchange(addr, &request).await;
    (status, head.to_ascii_lowercase(), body)
}

fn run_body(thread: &str, run: &str, text: &str) -> String {
    serde_json::json!({
        "threadId": thread, "runId": run,
        "messages": [{"id": format!("u-{run}"), "role": "user", "content": text}],
        "state": {}, "tools": [], "context": [], "forwardedProps": {}
    })
    .to_string()
}

fn events(body: &str) -> Vec<serde_json::Value> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

#[tokio::test]
async fn a_token_is_required_by_default_and_printed_in_the_console_url() {
    let server = start(&["--store", "memory"], &[]).await;
    let token = server
        .console
        .split_once("/#token=")
        .unwrap_or_else(|| panic!("no token in {:?}", server.console))
        .1
        .to_owned();
    assert_eq!(token.len(), 64);
    assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
    let json = ("Content-Type", "application/json");
    let body = run_body("t", "r1", "hello");
    let (status, head, reply) = http(&server.addr, "POST", "/agent", &[json], &body).await;
    assert_eq!(status, 401, "{reply}");
    assert!(head.contains("www-authenticate: bearer"));
    assert!(reply.contains("\"unauthorized\""));
    for path in ["/agent/threads", "/agent/threads/t/connect"] {
        let (status, _, _) = http(&server.addr, "GET", path, &[], "").await;
        assert_eq!(status, 401, "{path}");
    }
    let auth = format!("Bearer {token}");
    let (status, _, reply) = http(
        &server.addr,
        "POST",
        "/agent",
        &[json, ("Authorization", &auth)],
        &body,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(events(&reply).last().unwrap()["type"], "RUN_FINISHED");
    // Health and the console need no token; the console carries the security headers.
    let (status, _, health) = http(&server.addr, "GET", "/health", &[], "").await;
    assert_eq!(status, 200);
    assert!(health.contains("\"store\":\"ok\""), "{health}");
    let (status, head, page) = http(&server.addr, "GET", "/", &[], "").await;
    assert_eq!(status, 200);
    assert!(page.contains("<title>agui console</title>"));
    common::assert_has(
        &head,
        &[
            "x-content-type-options: nosniff",
            "referrer-policy: no-referrer",
            "content-security-policy: default-src 'self'",
            "frame-ancestors 'none'",
        ],
    );
    // A cross-site page: no CORS grant, text/plain refused, a rebinding Host refused.
    let (_, head, _) = http(
        &server.addr,
        "OPTIONS",
        "/agent",
        &[
            ("Origin", "https://evil.example"),
            ("Access-Control-Request-Method", "POST"),
        ],
        "",
    )
    .await;
    assert!(!head.contains("access-control-allow-origin"), "{head}");
    let (status, _, _) = http(
        &server.addr,
        "POST",
        "/agent",
        &[("Content-Type", "text/plain"), ("Authorization", &auth)],
        &body,
    )
    .await;
    assert_eq!(status, 415);
    let (status, _, _) = http(
        &server.addr,
        "GET",
        "/agent/threads",
        &[("Host", "evil.example"), ("Authorization", &auth)],
        "",
    )
    .await;
    assert_eq!(status, 421);
}

#[tokio::test]
async fn agui_token_and_no_auth() {
    let token = "an-operator-chosen-token-0123456789";
    let server = start(&["--store", "memory"], &[("AGUI_TOKEN", token)]).await;
    // A token the operator gave is not echoed (issue 36, row 9).
    assert!(
        server.console.ends_with("/#token=YOUR_TOKEN"),
        "{}",
        server.console
    );
    let auth = format!("Bearer {token}");
    let (status, _, _) = http(
        &server.addr,
        "GET",
        "/agent/threads",
        &[("Authorization", &auth)],
        "",
    )
    .await;
    assert_eq!(status, 200);

    let open = start(&["--store", "memory", "--no-auth"], &[]).await;
    assert!(!open.console.contains("token"));
    let (status, _, _) = http(&open.addr, "GET", "/agent/threads", &[], "").await;
    assert_eq!(status, 200);
    let mut child = open.child;
    child.kill().await.unwrap();
    let err = open.stderr.await.unwrap();
    assert!(err.contains("authentication is off"), "{err}");

    // Not on loopback: a loud warning.
    let mut loud = Command::new(env!("CARGO_BIN_EXE_agui"))
        .args([
            "serve",
            "--listen",
            "0.0.0.0:0",
            "--store",
            "memory",
            "--no-auth",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut err = BufReader::new(loud.stderr.take().unwrap()).lines();
    let mut seen = String::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !seen.contains("ANYONE WHO CAN REACH THIS PORT") && Instant::now() < deadline {
        match tokio::time::timeout(Duration::from_secs(20), err.next_line()).await {
            Ok(Ok(Some(l))) => seen.push_str(&l),
            _ => break,
        }
    }
    assert!(seen.contains("ANYONE WHO CAN REACH THIS PORT"), "{seen}");
    loud.kill().await.unwrap();
}

/// A scratch directory for a database.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("agui-safety-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn sigterm(child: &Child) {
    let pid = child.id().unwrap().to_string();
    let ok = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

#[tokio::test]
async fn sigterm_ends_runs_with_shutdown_and_stores_it() {
    let dir = scratch("sigterm");
    let store = format!("sqlite:{}", dir.join("t.db").display());
    let args = [
        "--store",
        store.as_str(),
        "--no-auth",
        "--shutdown-grace-secs",
        "0.3",
    ];
    // A long run: 1000 state updates 50 ms apart.
    let mut server = start(&[&args[..], &["--delay-ms", "50"]].concat(), &[]).await;
    let addr = server.addr.clone();
    let body = run_body("long", "r1", "count to 1000");
    let mut s = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let request = format!(
        "POST /agent HTTP/1.0\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(request.as_bytes()).await.unwrap();
    let mut first = [0u8; 512];
    let n = s.read(&mut first).await.unwrap();
    assert!(n > 0);
    tokio::time::sleep(Duration::from_millis(200)).await;
    sigterm(&server.child);
    let status = tokio::time::timeout(Duration::from_secs(20), server.child.wait())
        .await
        .expect("agui serve stops on SIGTERM")
        .unwrap();
    assert!(status.success(), "{status:?}");
    // Restarted on the same file: the run was closed by the shutdown, not abandoned.
    let again = start(&args, &[]).await;
    let (status, _, history) =
        http(&again.addr, "GET", "/agent/threads/long/connect", &[], "").await;
    assert_eq!(status, 200);
    let history = events(&history);
    let last = history.last().unwrap();
    assert_eq!(last["type"], "RUN_ERROR", "{last}");
    assert_eq!(last["code"], "shutdown");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn a_damaged_database_is_refused_at_start() {
    let dir = scratch("damaged");
    let path = dir.join("t.db");
    {
        let store = aguikit_store::open(&format!("sqlite:{}", path.display()))
            .await
            .unwrap();
        let text = "x".repeat(1000);
        let mut events: Vec<aguikit_core::Event> = vec![
            aguikit_core::event::RunStarted::new("t", "r").into(),
            aguikit_core::event::TextMessageStart::new("m").into(),
        ];
        for _ in 0..2000 {
            events.push(aguikit_core::event::TextMessageContent::new("m", text.clone()).into());
        }
        store.append("t", "r", &events).await.unwrap();
    }
    // Everything in the file itself, not in its WAL (a store checkpoints only every few
    // thousand pages).
    rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    // Four pages in the middle overwritten, as a disk or a careless copy would.
    let mut bytes = std::fs::read(&path).unwrap();
    let page = u16::from_be_bytes([bytes[16], bytes[17]]) as usize;
    let page = if page == 1 { 65536 } else { page };
    assert!(bytes.len() > 20 * page, "{} bytes", bytes.len());
    let middle = bytes.len() / page / 2;
    for k in middle..middle + 4 {
        bytes[k * page..(k + 1) * page].fill(0xAB);
    }
    std::fs::write(&path, bytes).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_agui"))
        .args(["serve", "--listen", "127.0.0.1:0", "--no-auth", "--store"])
        .arg(format!("sqlite:{}", path.display()))
        .stdin(Stdio::null())
        .output();
    let out = tokio::time::timeout(Duration::from_secs(60), out)
        .await
        .expect("agui serve does not start serving a damaged file")
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("integrity") || err.contains("malformed") || err.contains("not a database"),
        "{err}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("listening"));
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn health_answers_through_a_flood_of_slow_connections() {
    // 256 descriptors, as in the report; 200 connections each sending half a request head.
    let server = start_wrapped(
        Some(256),
        &[
            "--store",
            "memory",
            "--no-auth",
            "--header-timeout-secs",
            "3",
        ],
        &[],
    )
    .await;
    let mut hogs = Vec::new();
    for _ in 0..200 {
        match tokio::net::TcpStream::connect(&server.addr).await {
            Ok(mut s) => {
                let _ = s.write_all(b"GET /agent/threads HTTP/1.1\r\n").await;
                hogs.push(s);
            }
            Err(_) => break,
        }
    }
    // /health is answered while the hogs are connected (retrying as a probe would).
    let deadline = Instant::now() + Duration::from_secs(8);
    let mut answered = false;
    while Instant::now() < deadline {
        let probe = async {
            let mut s = tokio::net::TcpStream::connect(&server.addr).await.ok()?;
            s.write_all(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
                .await
                .ok()?;
            let mut out = Vec::new();
            s.read_to_end(&mut out).await.ok()?;
            Some(String::from_utf8_lossy(&out).into_owned())
        };
        if let Ok(Some(reply)) = tokio::time::timeout(Duration::from_secs(1), probe).await
            && reply.starts_with("HTTP/1.0 200")
            && reply.contains("\"ok\"")
        {
            answered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(answered, "/health did not answer during the flood");
    // The slow heads are cut off by the header timeout: every hog is closed.
    let cut = tokio::time::timeout(Duration::from_secs(15), async {
        for s in &mut hogs {
            let mut buf = [0u8; 512];
            loop {
                match s.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => continue,
                }
            }
        }
    })
    .await;
    assert!(cut.is_ok(), "slow connections were kept open");
}

#[test]
fn connection_threads_are_bounded() {
    let out = common::run_piped(common::agui_command().args([
        "serve",
        "--store",
        "memory",
        "--threads",
        "1025",
    ]));
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("0..=1024"), "{}", out.stderr);
}
