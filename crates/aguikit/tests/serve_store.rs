//! `agui serve --store sqlite:PATH`: a run's events are stored, served again by the
//! thread's `connect` route (with their sequences as SSE ids), and still there after the
//! server restarts on the same file; and two servers sharing one PostgreSQL database.
//!
//! A libtest-mimic harness, so that the PostgreSQL test is reported as *ignored* when
//! `AGUI_TEST_POSTGRES_URL` is not set, never as passed.

mod common;

use common::TOKEN;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

/// Starts `agui serve` on a free port with `args`; returns the process and its base URL.
async fn serve(args: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agui"))
        .arg("serve")
        .env("AGUI_TOKEN", TOKEN)
        .args(["--listen", "127.0.0.1:0"])
        .args(if args.contains(&"--delay-ms") {
            &[][..]
        } else {
            &["--delay-ms", "0"][..]
        })
        .args(args)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut printed = Vec::new();
    let url = loop {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("agui serve printed nothing")
            .unwrap()
            .expect("agui serve exited");
        printed.push(line.clone());
        if let Some(rest) = line.strip_prefix("agui serve: listening on ") {
            break rest.trim_end_matches('/').to_owned();
        }
    };
    // The remaining startup lines, including the store's.
    loop {
        let line = lines.next_line().await.unwrap().unwrap();
        let done = line.starts_with("Press Ctrl-C");
        printed.push(line);
        if done {
            break;
        }
    }
    let store_line = printed
        .iter()
        .find(|l| l.trim_start().starts_with("store "))
        .unwrap_or_else(|| panic!("no store line in {printed:#?}"));
    assert!(
        store_line.contains("sqlite:")
            || store_line.contains("postgres")
            || (args.contains(&"memory") && store_line.contains("memory")),
        "{store_line}"
    );
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, url)
}

/// The `data:` payloads of an SSE body, and the `id:`s.
fn frames(body: &str) -> (Vec<serde_json::Value>, Vec<u64>) {
    let mut data = Vec::new();
    let mut ids = Vec::new();
    for line in body.lines() {
        if let Some(d) = line.strip_prefix("data: ") {
            data.push(serde_json::from_str(d).unwrap());
        } else if let Some(id) = line.strip_prefix("id: ") {
            ids.push(id.parse().unwrap());
        }
    }
    (data, ids)
}

/// One HTTP/1.0 exchange (no chunked encoding: the body ends with the connection);
/// returns the status and the body.
async fn http(url: &str, method: &str, path: &str, body: &str) -> (u16, String) {
    http_with(url, method, path, "", body).await
}

/// [`http`] with extra header lines (each ending in `\r\n`).
async fn http_with(
    url: &str,
    method: &str,
    path: &str,
    headers: &str,
    body: &str,
) -> (u16, String) {
    let addr = url.strip_prefix("http://").unwrap();
    let request = format!(
        "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n\
         Accept: text/event-stream\r\n{headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let (status, _, body) = common::exchange(addr, &request).await;
    (status, body)
}

/// A run input of one user message.
fn run_input(thread: &str, text: &str) -> serde_json::Value {
    serde_json::json!({
        "threadId": thread, "runId": "r1",
        "messages": [{"id": "u1", "role": "user", "content": text}],
        "tools": [], "context": []
    })
}

/// A thread id no earlier test run used (the PostgreSQL database outlives the tests).
fn unique_thread(prefix: &str) -> String {
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    )
}

/// Starts `input` (on `thread`) as a run through `url_a` and, once it has started,
/// follows the thread through `url_b` (asking up to `tries` times, 20 ms apart): its
/// history, then live to the end. `what` names the second process in failures. Returns
/// the run's live body from A and the body B sent.
async fn follow_through(
    url_a: &str,
    url_b: &str,
    thread: &str,
    input: &str,
    tries: usize,
    what: &str,
) -> (String, String) {
    let started = {
        let (url_a, input) = (url_a.to_owned(), input.to_owned());
        tokio::spawn(async move { http(&url_a, "POST", "/agent", &input).await })
    };
    let mut followed = None;
    for _ in 0..tries {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let running = !started.is_finished();
        let (status, body) = connect(url_b, thread).await;
        if status == 200 {
            assert!(running, "the run ended before the second {what} was asked");
            followed = Some(body);
            break;
        }
    }
    let followed =
        followed.unwrap_or_else(|| panic!("the thread never showed up on the second {what}"));
    let (status, live) = started.await.unwrap();
    assert_eq!(status, 200, "{live}");
    (live, followed)
}

/// `GET /agent/threads/{thread}/connect?after=0`: the status and the thread's events.
async fn connect(url: &str, thread: &str) -> (u16, String) {
    http(
        url,
        "GET",
        &format!("/agent/threads/{thread}/connect?after=0"),
        "",
    )
    .await
}

/// The events of a thread the server has.
async fn history(url: &str, thread: &str) -> String {
    let (status, body) = connect(url, thread).await;
    assert_eq!(status, 200, "{body}");
    body
}

async fn a_sqlite_store_keeps_threads_across_restarts() {
    let dir = std::env::temp_dir().join(format!("agui-serve-store-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let locator = format!("sqlite:{}", dir.join("x.db").display());

    let (mut server, url) = serve(&["--store", &locator]).await;
    let input = run_input("t-store", "Hello");
    let (status, live) = http(&url, "POST", "/agent", &input.to_string()).await;
    assert_eq!(status, 200, "{live}");
    let (live_events, live_ids) = frames(&live);
    assert!(live_events.len() >= 3, "{live}");
    assert_eq!(live_events[0]["type"], "RUN_STARTED");
    assert_eq!(live_events.last().unwrap()["type"], "RUN_FINISHED");
    assert_eq!(live_ids, (1..=live_events.len() as u64).collect::<Vec<_>>());

    let stored = history(&url, "t-store").await;
    let (stored_events, stored_ids) = frames(&stored);
    assert_eq!(stored_events, live_events);
    assert_eq!(stored_ids, live_ids);

    // Unknown threads are a JSON 404.
    let (status, body) = http(&url, "GET", "/agent/threads/nope/connect", "").await;
    assert_eq!(status, 404, "{body}");
    assert!(body.contains(r#""error""#), "{body}");

    server.kill().await.unwrap();
    let (mut server, url) = serve(&["--store", &locator]).await;
    let again = history(&url, "t-store").await;
    assert_eq!(frames(&again), (live_events, live_ids));
    let (status, listed) = http(&url, "GET", "/agent/threads", "").await;
    assert_eq!(status, 200, "{listed}");
    assert!(listed.contains("t-store"), "{listed}");
    server.kill().await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two `agui serve` processes on one PostgreSQL database: a run started through one is
/// followed live through the other. Needs `AGUI_TEST_POSTGRES_URL` (set by `.ci/run`);
/// without it the trial is ignored.
async fn two_servers_share_threads_through_postgres(pg: String) {
    let (mut a, url_a) = serve(&["--store", &pg, "--delay-ms", "20"]).await;
    let (mut b, url_b) = serve(&["--store", &pg, "--delay-ms", "20"]).await;
    let thread = unique_thread("t-two");
    let input = run_input(&thread, "Hello").to_string();
    // Through B, once the run has started on A: its history, then live to the end.
    let (live, followed) = follow_through(&url_a, &url_b, &thread, &input, 100, "server").await;
    let (live_events, live_ids) = frames(&live);
    assert_eq!(live_events.last().unwrap()["type"], "RUN_FINISHED");
    assert_eq!(frames(&followed), (live_events.clone(), live_ids.clone()));

    // A client of A that lost its connection after event 2 resumes through B: the same
    // request with Last-Event-ID gets the rest of the run, not a new run.
    let (status, rest) = http_with(&url_b, "POST", "/agent", "Last-Event-ID: 2\r\n", &input).await;
    assert_eq!(status, 200, "{rest}");
    assert_eq!(
        frames(&rest),
        (live_events[2..].to_vec(), live_ids[2..].to_vec())
    );
    a.kill().await.unwrap();
    b.kill().await.unwrap();
}

/// Two gateways (`agui serve --upstream`) on one PostgreSQL database in front of one
/// upstream: a run driven through A is followed live through B, event for event.
async fn two_gateways_share_threads_through_postgres(pg: String) {
    let dir = std::env::temp_dir().join(format!("agui-gw-pg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let upstream_store = format!("sqlite:{}", dir.join("up.db").display());
    let (mut upstream, upstream_url) =
        serve(&["--store", &upstream_store, "--no-auth", "--delay-ms", "20"]).await;
    let agent = format!("{upstream_url}/agent");
    let (mut a, url_a) = serve(&["--store", &pg, "--upstream", &agent]).await;
    let (mut b, url_b) = serve(&["--store", &pg, "--upstream", &agent]).await;
    let thread = unique_thread("t-gw");
    let input = run_input(&thread, "Hello through two gateways").to_string();
    let (live, followed) = follow_through(&url_a, &url_b, &thread, &input, 200, "gateway").await;
    let (live_events, live_ids) = frames(&live);
    assert_eq!(live_events.last().unwrap()["type"], "RUN_FINISHED");
    assert!(live.contains("Hello through two gateways"), "{live}");
    assert_eq!(frames(&followed), (live_events, live_ids));
    a.kill().await.unwrap();
    b.kill().await.unwrap();
    upstream.kill().await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A server killed in the middle of a run (no chance to end it): once the run's lease has
/// expired, a restarted server closes it with `RUN_ERROR` code `abandoned` for whoever
/// follows the thread, instead of leaving it "running" forever.
async fn a_run_whose_server_died_is_closed_as_abandoned() {
    let dir = std::env::temp_dir().join(format!("agui-serve-dead-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let locator = format!("sqlite:{}", dir.join("x.db").display());
    let args = [
        "--store",
        &locator,
        "--delay-ms",
        "300",
        "--run-lease-secs",
        "1",
    ];
    let (mut server, url) = serve(&args).await;
    let input = run_input("t-dead", "Hello").to_string();
    let mut s = tokio::net::TcpStream::connect(url.strip_prefix("http://").unwrap())
        .await
        .unwrap();
    let request = format!(
        "POST /agent HTTP/1.0\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n\
         Accept: text/event-stream\r\nContent-Length: {}\r\n\r\n{input}",
        input.len()
    );
    s.write_all(request.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("TEXT_MESSAGE_CONTENT") {
        let n = tokio::time::timeout(Duration::from_secs(30), s.read(&mut buf))
            .await
            .unwrap()
            .unwrap();
        assert!(
            n > 0,
            "the run ended early: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
    server.kill().await.unwrap();
    drop(s);

    let (mut server, url) = serve(&args).await;
    let (status, body) = http(&url, "GET", "/agent/threads/t-dead", "").await;
    assert_eq!(status, 200, "{body}");
    let started = std::time::Instant::now();
    let history = history(&url, "t-dead").await;
    let (events, ids) = frames(&history);
    assert_eq!(ids, (1..=events.len() as u64).collect::<Vec<_>>());
    assert_eq!(events[0]["type"], "RUN_STARTED");
    let last = events.last().unwrap();
    assert_eq!(last["type"], "RUN_ERROR", "{history}");
    assert_eq!(last["code"], "abandoned", "{history}");
    assert!(started.elapsed() < Duration::from_secs(20));
    let (status, body) = http(&url, "GET", "/agent/threads/t-dead", "").await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#""status":"error""#), "{body}");
    server.kill().await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A run input on `thread` with run id `run` and one user message (its id from the run's).
fn run_on(thread: &str, run: &str) -> String {
    serde_json::json!({
        "threadId": thread, "runId": run,
        "messages": [{"id": format!("u-{run}"), "role": "user", "content": "Hello"}],
        "tools": [], "context": []
    })
    .to_string()
}

/// The thread's stored stream (`connect`), verified by the engine as a client folds it
/// (chunk expansion, verification, application): panics naming the first event that
/// breaks a rule. Returns the events.
async fn verified_history(url: &str, thread: &str) -> Vec<serde_json::Value> {
    let body = history(url, thread).await;
    let (events, ids) = frames(&body);
    assert_eq!(ids, (1..=events.len() as u64).collect::<Vec<_>>(), "{body}");
    let mut pipeline = aguikit_core::engine::pipeline::Pipeline::new();
    for (i, e) in events.iter().enumerate() {
        let event = aguikit_core::Event::from_json_slice(&serde_json::to_vec(e).unwrap())
            .unwrap_or_else(|err| panic!("event {i} of {thread}: {err}: {body}"));
        if let Err(err) = pipeline.push(event) {
            panic!("thread {thread}: event {i} breaks the stream: {err}\n{body}");
        }
    }
    events
}

/// The runs of a thread (`GET /agent/threads/{id}`), and its owner.
async fn runs_and_owner(url: &str, thread: &str) -> (Vec<serde_json::Value>, serde_json::Value) {
    let (status, body) = http(url, "GET", &format!("/agent/threads/{thread}"), "").await;
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    (
        v["runs"].as_array().cloned().unwrap_or_default(),
        v["thread"]["owner"].clone(),
    )
}

/// `tries` rounds of `per_round` runs posted at once on one thread that has a run already
/// (a double submit, through the servers of `urls` in turn): each answer is a run (200)
/// or `409 thread_busy`, never two runs at once; some rounds must have refused one (the
/// requests really raced). Afterwards the thread's stored stream verifies and holds
/// exactly the runs that were answered 200, none left running.
async fn racing_runs(urls: &[String], thread: &str, tries: usize, per_round: usize) {
    let (status, body) = http(&urls[0], "POST", "/agent", &run_on(thread, "r0")).await;
    assert_eq!(status, 200, "{body}");
    let (mut ran, mut refused) = (1, 0);
    for round in 0..tries {
        let posts: Vec<_> = (0..per_round)
            .map(|i| {
                let url = urls[i % urls.len()].clone();
                let input = run_on(thread, &format!("r{round}-{i}"));
                tokio::spawn(async move { http(&url, "POST", "/agent", &input).await })
            })
            .collect();
        let mut won = 0;
        for p in posts {
            let (status, body) = p.await.unwrap();
            match status {
                200 => {
                    assert!(body.contains("RUN_FINISHED"), "{body}");
                    won += 1;
                }
                409 => {
                    assert!(body.contains(r#""error":"thread_busy""#), "{body}");
                    refused += 1;
                }
                other => panic!("round {round}: {other} {body}"),
            }
        }
        assert!(won >= 1, "round {round}: every run was refused");
        ran += won;
    }
    assert!(
        refused > 0,
        "no request was ever refused: the runs did not race"
    );
    let events = verified_history(&urls[0], thread).await;
    let started = events.iter().filter(|e| e["type"] == "RUN_STARTED").count();
    assert_eq!(started, ran);
    let (runs, _) = runs_and_owner(&urls[urls.len() - 1], thread).await;
    assert_eq!(runs.len(), ran);
    assert!(runs.iter().all(|r| r["status"] == "finished"), "{runs:?}");
}

/// A double submit on a thread (SQLite and memory stores): one run at a time, the other
/// request `409 thread_busy`, and the stored stream verifies (it used to interleave both
/// runs and read back truncated).
async fn double_submits_on_one_thread_get_one_run() {
    let dir = std::env::temp_dir().join(format!("agui-serve-double-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let locator = format!("sqlite:{}", dir.join("x.db").display());
    for store in [locator.as_str(), "memory"] {
        let (mut server, url) = serve(&["--delay-ms", "20", "--store", store]).await;
        racing_runs(&[url], &unique_thread("t-double"), 30, 3).await;
        server.kill().await.unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A delete racing a new run on a thread, 30 times: they are serialised. Either the delete
/// wins (204) and the run makes a new thread of its own, owned by its principal, that
/// holds only that run; or the run wins and the delete is `409 thread_busy` while it goes
/// on. A deleted thread never comes back otherwise (it used to come back without an
/// owner, holding the end of a run without its start).
async fn a_delete_racing_a_run_never_revives_the_thread() {
    let dir = std::env::temp_dir().join(format!("agui-serve-delrace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let locator = format!("sqlite:{}", dir.join("x.db").display());
    let (mut server, url) = serve(&["--store", &locator, "--delay-ms", "5"]).await;
    let (mut deleted, mut busy) = (0, 0);
    for round in 0..30 {
        let thread = format!("t-del-{round}");
        let (status, body) = http(&url, "POST", "/agent", &run_on(&thread, "r0")).await;
        assert_eq!(status, 200, "{body}");
        let post = {
            let (url, input) = (url.clone(), run_on(&thread, "r1"));
            tokio::spawn(async move { http(&url, "POST", "/agent", &input).await })
        };
        // Staggered a little differently each round, so that both orders happen.
        tokio::time::sleep(Duration::from_micros(300 * (round % 7))).await;
        let (del, del_body) = http(&url, "DELETE", &format!("/agent/threads/{thread}"), "").await;
        let (status, body) = post.await.unwrap();
        assert_eq!(status, 200, "{body}");
        let events = verified_history(&url, &thread).await;
        let (runs, owner) = runs_and_owner(&url, &thread).await;
        assert_eq!(
            owner, "default",
            "round {round}: the thread has lost its owner"
        );
        let run_ids: Vec<&str> = runs.iter().filter_map(|r| r["runId"].as_str()).collect();
        match del {
            204 => {
                deleted += 1;
                // A new thread: only the new run, from its RUN_STARTED.
                assert_eq!(run_ids, ["r1"], "round {round}");
                assert_eq!(events[0]["type"], "RUN_STARTED");
                assert_eq!(events[0]["runId"], "r1");
            }
            409 => {
                busy += 1;
                assert!(del_body.contains(r#""error":"thread_busy""#), "{del_body}");
                assert_eq!(run_ids, ["r0", "r1"], "round {round}");
            }
            other => panic!("round {round}: DELETE answered {other}: {del_body}"),
        }
    }
    assert_eq!(deleted + busy, 30);
    // While a run goes on, a delete is refused; once it has ended, the thread goes.
    let (mut slow, slow_url) = serve(&["--store", &locator, "--delay-ms", "200"]).await;
    let post = {
        let (url, input) = (slow_url.clone(), run_on("t-slow", "r0"));
        tokio::spawn(async move { http(&url, "POST", "/agent", &input).await })
    };
    let mut refused = false;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let (del, body) = http(&slow_url, "DELETE", "/agent/threads/t-slow", "").await;
        if del == 409 {
            assert!(body.contains(r#""error":"thread_busy""#), "{body}");
            assert!(!post.is_finished());
            refused = true;
            break;
        }
        assert_eq!(del, 404, "{body}");
    }
    assert!(refused, "the run never showed up");
    assert_eq!(post.await.unwrap().0, 200);
    let (del, body) = http(&slow_url, "DELETE", "/agent/threads/t-slow", "").await;
    assert_eq!(del, 204, "{body}");
    slow.kill().await.unwrap();
    server.kill().await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A server killed in the middle of a run leaves the thread claimed: a new run on it is
/// `409 thread_busy` until the run's lease expires, not forever; then it goes through,
/// after the dead run is closed as abandoned, and the stream verifies.
async fn a_stale_claim_holds_a_thread_for_one_lease_only() {
    let dir = std::env::temp_dir().join(format!("agui-serve-stale-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let locator = format!("sqlite:{}", dir.join("x.db").display());
    let args = ["--store", &locator, "--run-lease-secs", "2"];
    let (mut server, url) = serve(&[&args[..], &["--delay-ms", "300"]].concat()).await;
    let post = {
        let (url, input) = (url.clone(), run_on("t-stale", "r0"));
        tokio::spawn(async move { http(&url, "POST", "/agent", &input).await })
    };
    // Killed once the run is stored (the thread's JSON answers at once; `connect` would
    // follow the run to its end).
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        if http(&url, "GET", "/agent/threads/t-stale", "").await.0 == 200 {
            break;
        }
    }
    assert!(
        !post.is_finished(),
        "the run ended before the server was killed"
    );
    server.kill().await.unwrap();
    let _ = post.await;
    let killed = std::time::Instant::now();
    let (mut server, url) = serve(&args).await;
    let mut busy = 0;
    let through = loop {
        let (status, body) = http(&url, "POST", "/agent", &run_on("t-stale", "r1")).await;
        match status {
            200 => break killed.elapsed(),
            409 => {
                assert!(body.contains(r#""error":"thread_busy""#), "{body}");
                busy += 1;
            }
            other => panic!("{other}: {body}"),
        }
        assert!(
            killed.elapsed() < Duration::from_secs(20),
            "the thread stayed claimed"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(through >= Duration::from_secs(1), "{through:?}");
    let events = verified_history(&url, "t-stale").await;
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    let error = kinds
        .iter()
        .position(|k| *k == "RUN_ERROR")
        .expect("closed as abandoned");
    assert_eq!(events[error]["code"], "abandoned");
    assert_eq!(kinds[error + 1], "RUN_STARTED");
    assert_eq!(kinds.last(), Some(&"RUN_FINISHED"));
    eprintln!("refused {busy} times, through after {through:?}");
    server.kill().await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two `agui serve` processes on one PostgreSQL database, double submits split between
/// them: one run at a time across the servers (the store's row lock), and the stream
/// verifies.
async fn racing_runs_across_two_servers_sharing_postgres(pg: String) {
    let (mut a, url_a) = serve(&["--store", &pg, "--delay-ms", "20"]).await;
    let (mut b, url_b) = serve(&["--store", &pg, "--delay-ms", "20"]).await;
    racing_runs(&[url_a, url_b], &unique_thread("t-pg-race"), 30, 4).await;
    a.kill().await.unwrap();
    b.kill().await.unwrap();
}

/// `agui serve --token-file FILE ARGS` (no `AGUI_TOKEN`): the process and its base URL.
async fn serve_tokens(tokens: &str, args: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agui"))
        .arg("serve")
        .env_remove("AGUI_TOKEN")
        .args([
            "--listen",
            "127.0.0.1:0",
            "--delay-ms",
            "0",
            "--token-file",
            tokens,
        ])
        .args(args)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let url = loop {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("agui serve printed nothing")
            .unwrap()
            .expect("agui serve exited");
        if let Some(rest) = line.strip_prefix("agui serve: listening on ") {
            break rest.trim_end_matches('/').to_owned();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, url)
}

/// One HTTP/1.0 exchange as the principal of `token`: the status and the body as JSON
/// (`null` when it is not JSON).
async fn http_as(
    url: &str,
    token: &str,
    method: &str,
    path: &str,
    body: &str,
) -> (u16, serde_json::Value) {
    let addr = url.strip_prefix("http://").unwrap();
    let request = format!(
        "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let (status, _, body) = common::exchange(addr, &request).await;
    (status, serde_json::from_str(&body).unwrap_or_default())
}

/// A run on `thread` (run `run`) with one user message `text`.
fn said(thread: &str, run: &str, text: &str) -> String {
    serde_json::json!({
        "threadId": thread, "runId": run,
        "messages": [{"id": format!("u-{run}-{text}"), "role": "user", "content": text}],
        "tools": [], "context": []
    })
    .to_string()
}

/// The user messages of a thread (`GET .../threads/{id}`'s fold).
fn user_texts(thread: &serde_json::Value) -> Vec<String> {
    thread["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str().map(str::to_owned))
        .collect()
}

/// Threads are per principal: a thread id names a thread within its owner's namespace.
/// Principal B using A's thread id gets B's own new thread, exactly as for an id nobody
/// used (it used to be a 404 for a known id and a 200 for an unknown one: an existence
/// oracle, and ids could be squatted); A's thread is untouched. Admins list every owner's
/// threads, each named with its owner, and read one with `?owner=NAME`.
async fn threads_are_per_principal() {
    let dir = std::env::temp_dir().join(format!("agui-serve-owners-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (ta, tb, tr) = (
        "alice-token-0123456789abcdef",
        "bob-token-0123456789abcdefgh",
        "root-token-0123456789abcdefg",
    );
    let tokens = dir.join("tokens");
    std::fs::write(&tokens, format!("alice {ta}\nbob {tb}\nroot {tr} admin\n")).unwrap();
    let locator = format!("sqlite:{}", dir.join("x.db").display());
    let (mut server, url) = serve_tokens(tokens.to_str().unwrap(), &["--store", &locator]).await;
    for thread in ["x", "y"] {
        let (status, _) = http_as(&url, ta, "POST", "/agent", &said(thread, "r1", "alice's")).await;
        assert_eq!(status, 200);
    }
    // Alice's id and an unknown id look alike to Bob, on every route.
    for (route, method) in [("", "GET"), ("/connect", "GET"), ("", "DELETE")] {
        let (known, k) = http_as(&url, tb, method, &format!("/agent/threads/y{route}"), "").await;
        let (unknown, u) = http_as(&url, tb, method, &format!("/agent/threads/q{route}"), "").await;
        assert_eq!((known, unknown), (404, 404), "{method} {route}");
        let msg =
            |v: &serde_json::Value, id: &str| v["message"].as_str().unwrap_or("").replace(id, "ID");
        assert_eq!(k["error"], u["error"]);
        assert_eq!(msg(&k, "\"y\""), msg(&u, "\"q\""));
    }
    // Bob's run on "y" (with the run id Alice used) makes his own thread.
    let (status, _) = http_as(&url, tb, "POST", "/agent", &said("y", "r1", "bob's")).await;
    assert_eq!(status, 200);
    let (status, bobs) = http_as(&url, tb, "GET", "/agent/threads/y", "").await;
    assert_eq!(status, 200, "{bobs}");
    assert_eq!(
        (bobs["threadId"].as_str(), bobs["owner"].as_str()),
        (Some("y"), Some("bob"))
    );
    assert_eq!(user_texts(&bobs), ["bob's"]);
    assert_eq!(bobs["runs"].as_array().unwrap().len(), 1);
    let (status, alices) = http_as(&url, ta, "GET", "/agent/threads/y", "").await;
    assert_eq!(status, 200, "{alices}");
    assert_eq!(user_texts(&alices), ["alice's"]);
    assert_eq!(alices["runs"].as_array().unwrap().len(), 1);
    // Each lists their own.
    let listed = |v: &serde_json::Value| -> Vec<(String, String)> {
        let mut l: Vec<(String, String)> = v["threads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["owner"].as_str().unwrap_or("").to_owned(),
                    t["threadId"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        l.sort();
        l
    };
    let pair = |o: &str, t: &str| (o.to_owned(), t.to_owned());
    let (_, mine) = http_as(&url, tb, "GET", "/agent/threads", "").await;
    assert_eq!(listed(&mine), [pair("bob", "y")]);
    let (_, mine) = http_as(&url, ta, "GET", "/agent/threads?owner=bob", "").await;
    assert_eq!(listed(&mine), [pair("alice", "x"), pair("alice", "y")]);
    // An admin lists everyone's, named with their owner, and reads one by naming it.
    let (_, all) = http_as(&url, tr, "GET", "/agent/threads", "").await;
    assert_eq!(
        listed(&all),
        [pair("alice", "x"), pair("alice", "y"), pair("bob", "y")]
    );
    let (_, only) = http_as(&url, tr, "GET", "/agent/threads?owner=bob", "").await;
    assert_eq!(listed(&only), [pair("bob", "y")]);
    let (status, read) = http_as(&url, tr, "GET", "/agent/threads/y?owner=alice", "").await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(user_texts(&read), ["alice's"]);
    let (status, _) = http_as(
        &url,
        tr,
        "GET",
        "/agent/threads/y/connect?owner=bob&after=0",
        "",
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = http_as(&url, tr, "GET", "/agent/threads/y", "").await;
    assert_eq!(status, 404, "the admin's own namespace has no thread y");
    // Only admins name another's namespace.
    let (status, _) = http_as(&url, tb, "GET", "/agent/threads/y?owner=alice", "").await;
    assert_eq!(status, 404);
    let (status, _) = http_as(&url, tb, "DELETE", "/agent/threads/y?owner=alice", "").await;
    assert_eq!(status, 404);
    // Bob deletes his; Alice's stays.
    let (status, _) = http_as(&url, tb, "DELETE", "/agent/threads/y", "").await;
    assert_eq!(status, 204);
    let (status, _) = http_as(&url, ta, "GET", "/agent/threads/y", "").await;
    assert_eq!(status, 200);
    server.kill().await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Threads are per agent: behind `--upstream a=URL --upstream b=URL` (one store), an
/// agent's thread list holds the threads run through it only (and still only the caller's),
/// and a thread of `a` is unknown through `b` on every thread route; a run through `b` on
/// the id of `a`'s thread starts b's own thread, so a's history never reaches b. (Every
/// agent's list used to show every agent's threads, and a run through `b` continued a's.)
async fn threads_are_per_agent() {
    let dir = std::env::temp_dir().join(format!("agui-serve-agents-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (ta, tb, tr) = (
        "alice-token-0123456789abcdef",
        "bob-token-0123456789abcdefgh",
        "root-token-0123456789abcdefg",
    );
    let tokens = dir.join("tokens");
    std::fs::write(&tokens, format!("alice {ta}\nbob {tb}\nroot {tr} admin\n")).unwrap();
    let (mut up_a, url_a) = serve(&["--no-auth", "--store", "memory"]).await;
    let (mut up_b, url_b) = serve(&["--no-auth", "--store", "memory"]).await;
    let locator = format!("sqlite:{}", dir.join("x.db").display());
    let (mut gateway, url) = serve_tokens(
        tokens.to_str().unwrap(),
        &[
            "--store",
            &locator,
            "--upstream",
            &format!("a={url_a}/agent"),
            "--upstream",
            &format!("b={url_b}/agent"),
        ],
    )
    .await;
    for (token, path, thread, text) in [
        (ta, "/agents/a", "t1", "alice to a"),
        (ta, "/agents/b", "t2", "alice to b"),
        (ta, "/agent", "t3", "alice to the demo"),
        (tb, "/agents/b", "t1", "bob to b"),
    ] {
        let (status, body) = http_as(&url, token, "POST", path, &said(thread, "r1", text)).await;
        assert_eq!(status, 200, "{path} {thread}: {body}");
    }
    let listed = |v: &serde_json::Value| -> Vec<(String, String)> {
        let mut l: Vec<(String, String)> = v["threads"]
            .as_array()
            .unwrap_or_else(|| panic!("{v}"))
            .iter()
            .map(|t| {
                (
                    t["owner"].as_str().unwrap_or("").to_owned(),
                    t["threadId"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        l.sort();
        l
    };
    let pair = |o: &str, t: &str| (o.to_owned(), t.to_owned());
    for (token, path, want) in [
        (ta, "/agents/a", vec![pair("alice", "t1")]),
        (ta, "/agents/b", vec![pair("alice", "t2")]),
        (ta, "/agent", vec![pair("alice", "t3")]),
        (tb, "/agents/a", vec![]),
        (tb, "/agents/b", vec![pair("bob", "t1")]),
        (tb, "/agent", vec![]),
        // An admin sees every owner's threads, still per agent.
        (
            tr,
            "/agents/b",
            vec![pair("alice", "t2"), pair("bob", "t1")],
        ),
        (tr, "/agents/a", vec![pair("alice", "t1")]),
    ] {
        let (status, list) = http_as(&url, token, "GET", &format!("{path}/threads"), "").await;
        assert_eq!(status, 200, "{path}: {list}");
        assert_eq!(listed(&list), want, "{path} as {token}");
    }
    // Alice's thread t1 of a is unknown through b and through /agent, on every route.
    for path in ["/agents/b", "/agent"] {
        for (route, method) in [("", "GET"), ("/connect", "GET"), ("", "DELETE")] {
            let (status, body) =
                http_as(&url, ta, method, &format!("{path}/threads/t1{route}"), "").await;
            assert_eq!(status, 404, "{method} {path}/threads/t1{route}: {body}");
        }
    }
    // An admin naming alice's namespace does not reach another agent's threads either.
    let (status, _) = http_as(&url, tr, "GET", "/agents/b/threads/t1?owner=alice", "").await;
    assert_eq!(status, 404);
    // Alice continuing "t1" through b starts b's own thread: nothing of a's in it.
    let (status, body) = http_as(
        &url,
        ta,
        "POST",
        "/agents/b",
        &said("t1", "r2", "alice to b again"),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, through_b) = http_as(&url, ta, "GET", "/agents/b/threads/t1", "").await;
    assert_eq!(status, 200, "{through_b}");
    assert_eq!(user_texts(&through_b), ["alice to b again"]);
    assert_eq!(through_b["runs"].as_array().unwrap().len(), 1);
    let (status, through_a) = http_as(&url, ta, "GET", "/agents/a/threads/t1", "").await;
    assert_eq!(status, 200, "{through_a}");
    assert_eq!(user_texts(&through_a), ["alice to a"]);
    assert_eq!(through_a["runs"].as_array().unwrap().len(), 1);
    // What reached upstream b: b's runs only (its own store keeps each thread it was sent).
    let mut sent_to_b = Vec::new();
    let (_, list) = http(&url_b, "GET", "/agent/threads", "").await;
    let list: serde_json::Value = serde_json::from_str(&list).unwrap();
    for t in list["threads"].as_array().unwrap() {
        let id = t["threadId"].as_str().unwrap();
        let (_, thread) = http(&url_b, "GET", &format!("/agent/threads/{id}"), "").await;
        sent_to_b.extend(user_texts(&serde_json::from_str(&thread).unwrap()));
    }
    sent_to_b.sort();
    assert_eq!(sent_to_b, ["alice to b", "alice to b again", "bob to b"]);
    // Deleting b's t1 leaves a's.
    let (status, _) = http_as(&url, ta, "DELETE", "/agents/b/threads/t1", "").await;
    assert_eq!(status, 204);
    let (status, _) = http_as(&url, ta, "GET", "/agents/a/threads/t1", "").await;
    assert_eq!(status, 200);
    for child in [&mut gateway, &mut up_a, &mut up_b] {
        child.kill().await.unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A stored run has a size cap (`--max-run-bytes`): the agent's reply to a long message
/// passes it, and the run ends there with `RUN_ERROR` (code `run_too_large`), live and
/// stored; what is stored stays under the cap and verifies. (A run through the gateway
/// used to be stored whole, 1 GB, and its first read took 6.5 GB.)
async fn a_stored_run_past_its_size_cap_ends_as_run_too_large() {
    let dir = std::env::temp_dir().join(format!("agui-serve-cap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let locator = format!("sqlite:{}", dir.join("x.db").display());
    let (mut server, url) = serve(&["--store", &locator, "--max-run-bytes", "4096"]).await;
    let long = "many words ".repeat(800);
    let input = serde_json::json!({
        "threadId": "t-cap", "runId": "r1",
        "messages": [{"id": "u1", "role": "user", "content": long}],
        "tools": [], "context": []
    })
    .to_string();
    let (status, live) = http(&url, "POST", "/agent", &input).await;
    assert_eq!(status, 200, "{live}");
    let (events, _) = frames(&live);
    let last = events.last().unwrap();
    assert_eq!(
        (last["type"].as_str(), last["code"].as_str()),
        (Some("RUN_ERROR"), Some("run_too_large")),
        "{live}"
    );
    let stored = verified_history(&url, "t-cap").await;
    assert_eq!(stored, events);
    // The events after RUN_STARTED (which holds the client's input) stay under the cap.
    let after_start: usize = stored[1..].iter().map(|e| e.to_string().len()).sum();
    assert!(after_start <= 4096 + 512, "{after_start}");
    let (runs, _) = runs_and_owner(&url, "t-cap").await;
    assert_eq!(runs[0]["status"], "error");
    // A short run on the thread is stored whole.
    let (status, live) = http(&url, "POST", "/agent", &run_on("t-cap", "r2")).await;
    assert_eq!(status, 200, "{live}");
    assert!(live.contains("RUN_FINISHED"), "{live}");
    server.kill().await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A run that ends waiting on an interrupt is listed as `interrupted` (in the thread's
/// `runs[].status` and the list's `lastStatus`), not `finished`; its resume is `finished`.
async fn an_interrupted_run_is_listed_as_interrupted() {
    let (mut server, url) = serve(&["--store", "memory"]).await;
    let ask = serde_json::json!({
        "threadId": "t-int", "runId": "r1",
        "messages": [{"id": "u1", "role": "user", "content": "approve"}],
        "tools": [], "context": []
    });
    let (status, live) = http(&url, "POST", "/agent", &ask.to_string()).await;
    assert_eq!(status, 200, "{live}");
    assert!(live.contains(r#""type":"interrupt""#), "{live}");
    let (runs, _) = runs_and_owner(&url, "t-int").await;
    assert_eq!(runs[0]["status"], "interrupted");
    let (status, body) = http(&url, "GET", "/agent/threads/t-int", "").await;
    assert_eq!(status, 200);
    let thread: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        thread["pendingInterrupts"].as_array().map(Vec::len),
        Some(1),
        "{body}"
    );
    let (_, list) = http(&url, "GET", "/agent/threads", "").await;
    let list: serde_json::Value = serde_json::from_str(&list).unwrap();
    assert_eq!(list["threads"][0]["lastStatus"], "interrupted", "{list}");
    server.kill().await.unwrap();
}

/// Runs `test` on a fresh multi-threaded runtime.
fn block_on(test: impl std::future::Future<Output = ()>) -> Result<(), libtest_mimic::Failed> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(test);
    Ok(())
}

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let pg = std::env::var("AGUI_TEST_POSTGRES_URL")
        .ok()
        .filter(|u| !u.is_empty());
    if pg.is_none() {
        eprintln!("postgres: AGUI_TEST_POSTGRES_URL is not set: its test is reported as ignored");
    }
    let trials = vec![
        libtest_mimic::Trial::test("a_sqlite_store_keeps_threads_across_restarts", || {
            block_on(a_sqlite_store_keeps_threads_across_restarts())
        }),
        libtest_mimic::Trial::test("a_run_whose_server_died_is_closed_as_abandoned", || {
            block_on(a_run_whose_server_died_is_closed_as_abandoned())
        }),
        libtest_mimic::Trial::test(
            "a_stored_run_past_its_size_cap_ends_as_run_too_large",
            || block_on(a_stored_run_past_its_size_cap_ends_as_run_too_large()),
        ),
        libtest_mimic::Trial::test("an_interrupted_run_is_listed_as_interrupted", || {
            block_on(an_interrupted_run_is_listed_as_interrupted())
        }),
        libtest_mimic::Trial::test("threads_are_per_principal", || {
            block_on(threads_are_per_principal())
        }),
        libtest_mimic::Trial::test(
            "threads_are_per_agent",
            || block_on(threads_are_per_agent()),
        ),
        libtest_mimic::Trial::test("double_submits_on_one_thread_get_one_run", || {
            block_on(double_submits_on_one_thread_get_one_run())
        }),
        libtest_mimic::Trial::test("a_delete_racing_a_run_never_revives_the_thread", || {
            block_on(a_delete_racing_a_run_never_revives_the_thread())
        }),
        libtest_mimic::Trial::test("a_stale_claim_holds_a_thread_for_one_lease_only", || {
            block_on(a_stale_claim_holds_a_thread_for_one_lease_only())
        }),
        libtest_mimic::Trial::test("racing_runs_across_two_servers_sharing_postgres", {
            let pg = pg.clone().unwrap_or_default();
            move || block_on(racing_runs_across_two_servers_sharing_postgres(pg))
        })
        .with_ignored_flag(pg.is_none()),
        libtest_mimic::Trial::test("two_servers_share_threads_through_postgres", {
            let pg = pg.clone().unwrap_or_default();
            move || block_on(two_servers_share_threads_through_postgres(pg))
        })
        .with_ignored_flag(pg.is_none()),
        libtest_mimic::Trial::test("two_gateways_share_threads_through_postgres", {
            let pg = pg.clone().unwrap_or_default();
            move || block_on(two_gateways_share_threads_through_postgres(pg))
        })
        .with_ignored_flag(pg.is_none()),
    ];
    libtest_mimic::run(&args, trials).exit();
}
