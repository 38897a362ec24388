//! Nothing a client sends may corrupt or hide a stored thread, and no client may exhaust
//! the server (issue 15): ingress limits, one run per run id, Last-Event-ID bounds, corrupt
//! records, linear storage, connection and body limits.
// Most of these trials need a store; the file is built with the `store` feature (CI runs
// every test with all features).
#![cfg(feature = "store")]

mod common;

use aguikit_core::Event;
use aguikit_server::aguikit_store::{EventStore, MemoryStore, RawEvent};
use aguikit_server::{AgentServer, Finish, ServerConfig, StoreOptions, agent_fn};
use common::{input, post, post_json, post_value, request, serve, types};
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// An agent that streams a reply of `n` pieces.
fn talker(n: usize) -> AgentServer {
    AgentServer::new(agent_fn(move |_input, ctx| async move {
        let m = ctx.text_message().start().await?;
        for i in 0..n {
            m.delta(format!("piece {i} ")).await?;
        }
        m.end().await?;
        Ok(Finish::success())
    }))
}

fn stored(server: AgentServer, store: Arc<dyn EventStore>) -> AgentServer {
    server.store(StoreOptions::new(store))
}

async fn connect(addr: SocketAddr, thread: &str, headers: &[(&str, &str)]) -> common::Response {
    request(
        addr,
        "GET",
        &format!("/threads/{thread}/connect"),
        headers,
        b"",
    )
    .await
}

fn with_run(mut body: Value, run: &str) -> Value {
    body["runId"] = json!(run);
    body
}

#[tokio::test]
async fn deep_input_is_refused_and_the_thread_stays_readable() {
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let addr = common::spawn(&stored(talker(21), store.clone())).await;
    let first = post_json(addr, "/", &with_run(input("t", "hi"), "r1")).await;
    assert_eq!(first.status, 200);
    let first = first.events().await;
    assert_eq!(first.len(), 25);

    // 126 nested arrays in forwardedProps: the stored RUN_STARTED would nest past what
    // the store decodes. Refused at the door, naming the field.
    let nested = format!("{}{}", "[".repeat(126), "]".repeat(126));
    // serde_json cannot build a Value that deep; send the text itself.
    let text = input("t", "again")
        .to_string()
        .replace(
            "\"forwardedProps\":{}",
            &format!("\"forwardedProps\":{nested}"),
        )
        .replace("\"runId\":\"", "\"runId\":\"r2-");
    let res = post(
        addr,
        "/",
        &[("Content-Type", "application/json")],
        text.as_bytes(),
    )
    .await;
    assert_eq!(res.status, 400);
    let j = res.json().await;
    assert_eq!(j["error"], "too_deep");
    assert!(
        j["field"]
            .as_str()
            .unwrap()
            .starts_with("forwardedProps[0]"),
        "{j}"
    );

    // The earlier run is all there.
    let replay = connect(addr, "t", &[]).await.events().await;
    assert_eq!(replay, first);
}

#[tokio::test]
async fn an_event_too_deep_to_read_back_ends_the_run_and_hides_nothing() {
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let server = AgentServer::new(agent_fn(|_input, ctx| async move {
        ctx.say("before").await?;
        let mut v = json!(1);
        for _ in 0..125 {
            v = json!([v]);
        }
        ctx.state_snapshot(v).await?;
        Ok(Finish::success())
    }));
    let addr = common::spawn(&stored(server, store.clone())).await;
    let events = post_json(addr, "/", &input("deep", "hi"))
        .await
        .events()
        .await;
    let last = events.last().unwrap();
    assert_eq!(last["type"], "RUN_ERROR", "{events:?}");
    assert_eq!(last["code"], "event_too_deep");
    // Everything stored reads back.
    let replay = connect(addr, "deep", &[]).await.events().await;
    assert_eq!(replay, events);
    assert!(store.read("deep", 1).await.is_ok());
}

#[tokio::test]
async fn one_run_per_run_id() {
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let server = AgentServer::new(agent_fn(|_input, ctx| async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        ctx.say("done").await?;
        Ok(Finish::success())
    }));
    let addr = common::spawn(&stored(server, store.clone())).await;
    let body = with_run(input("same", "hi"), "same-run");
    let (a, b) = tokio::join!(post_json(addr, "/", &body), post_json(addr, "/", &body));
    let mut statuses = [a.status, b.status];
    statuses.sort();
    assert_eq!(statuses, [200, 409]);
    let (ok, refused) = if a.status == 200 { (a, b) } else { (b, a) };
    assert_eq!(refused.json().await["error"], "run_exists");
    ok.events().await;
    let all = store.read("same", 1).await.unwrap();
    let starts = all
        .iter()
        .filter(|e| matches!(e.event, Event::RunStarted(_)))
        .count();
    assert_eq!(starts, 1);
    // And after it finished: still 409.
    assert_eq!(post_json(addr, "/", &body).await.status, 409);
}

#[tokio::test]
async fn ids_are_limited() {
    let addr = common::spawn(&talker(1).config(ServerConfig::default().max_id_bytes(64))).await;
    let mut body = input(&"t".repeat(4 << 20), "hi");
    let res = post_json(addr, "/", &body).await;
    assert_eq!(res.status, 400);
    let j = res.json().await;
    assert_eq!(j["error"], "id_too_long");
    assert_eq!(j["field"], "threadId");
    body["threadId"] = json!("t");
    body["messages"][0]["id"] = json!("m".repeat(65));
    let j = post_json(addr, "/", &body).await.json().await;
    assert_eq!(j["field"], "messages[0].id");
    body["messages"][0]["id"] = json!("m".repeat(64));
    assert_eq!(post_json(addr, "/", &body).await.status, 200);
}

#[tokio::test]
async fn last_event_id_out_of_range_is_400_everywhere() {
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let addr = common::spawn(&stored(talker(75), store)).await;
    let body = with_run(input("t", "hi"), "r");
    let events = post_json(addr, "/", &body).await.events().await;
    assert_eq!(events.len(), 79);
    for id in ["18446744073709551615", "99999999999999999999999", "80"] {
        let res = connect(addr, "t", &[("Last-Event-ID", id)]).await;
        assert_eq!(res.status, 400, "{id}");
        let j = res.json().await;
        let message = j["message"].as_str().unwrap();
        assert!(message.contains(id) && message.contains("79"), "{message}");
        assert!(!message.contains("80") || id == "80", "{message}");
        let res = post_value(
            addr,
            "/",
            &[("Content-Type", "application/json"), ("Last-Event-ID", id)],
            &body,
        )
        .await;
        assert_eq!(res.status, 400, "POST {id}");
    }
    // In range: the rest of the run.
    let res = connect(addr, "t", &[("Last-Event-ID", "79")]).await;
    assert_eq!(res.status, 200);
    assert!(res.events().await.is_empty());
    let res = connect(addr, "t", &[("Last-Event-ID", "78")]).await;
    assert_eq!(types(&res.events().await), ["RUN_FINISHED"]);
}

/// A memory store whose stored event `bad` reads back as JSON that does not decode, as a
/// damaged record would, and that refuses (as a backend error) an append that would store
/// past sequence `full_at`. Each append takes `delay` at least, and its size is recorded in
/// `batches`.
#[derive(Clone)]
struct Damaged {
    inner: Arc<MemoryStore>,
    bad: u64,
    full_at: u64,
    delay: Duration,
    batches: Arc<std::sync::Mutex<Vec<usize>>>,
}

impl Damaged {
    fn new(inner: Arc<MemoryStore>) -> Damaged {
        Damaged {
            inner,
            bad: 0,
            full_at: u64::MAX,
            delay: Duration::ZERO,
            batches: Default::default(),
        }
    }
}

impl EventStore for Damaged {
    fn append<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        events: &'a [Event],
    ) -> BoxFuture<'a, aguikit_server::aguikit_store::Result<std::ops::Range<u64>>> {
        Box::pin(async move {
            self.batches.lock().unwrap().push(events.len());
            tokio::time::sleep(self.delay).await;
            let last = self.inner.thread(thread).await.map_or(0, |t| t.last_seq);
            if last + events.len() as u64 > self.full_at {
                return Err(aguikit_server::aguikit_store::StoreError::Backend(
                    "disk full".into(),
                ));
            }
            self.inner.append(thread, run, events).await
        })
    }
    fn read_raw<'a>(
        &'a self,
        thread: &'a str,
        from_seq: u64,
        limit: usize,
    ) -> BoxFuture<'a, aguikit_server::aguikit_store::Result<Vec<RawEvent>>> {
        Box::pin(async move {
            let mut raw = self.inner.read_raw(thread, from_seq, limit).await?;
            for r in &mut raw {
                if r.seq == self.bad {
                    r.json = b"{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":".to_vec();
                }
            }
            Ok(raw)
        })
    }
    fn threads(
        &self,
    ) -> BoxFuture<
        '_,
        aguikit_server::aguikit_store::Result<Vec<aguikit_server::aguikit_store::ThreadInfo>>,
    > {
        self.inner.threads()
    }
    fn thread<'a>(
        &'a self,
        thread: &'a str,
    ) -> BoxFuture<
        'a,
        aguikit_server::aguikit_store::Result<aguikit_server::aguikit_store::ThreadInfo>,
    > {
        self.inner.thread(thread)
    }
    fn runs<'a>(
        &'a self,
        thread: &'a str,
    ) -> BoxFuture<
        'a,
        aguikit_server::aguikit_store::Result<Vec<aguikit_server::aguikit_store::RunInfo>>,
    > {
        self.inner.runs(thread)
    }
    fn subscribe(&self, thread: &str) -> tokio::sync::watch::Receiver<u64> {
        self.inner.subscribe(thread)
    }
    fn poll_interval(&self) -> Option<Duration> {
        self.inner.poll_interval()
    }
    fn tail(
        &self,
        thread: &str,
        from_seq: u64,
    ) -> futures_util::stream::BoxStream<
        'static,
        aguikit_server::aguikit_store::Result<aguikit_server::aguikit_store::StoredEvent>,
    > {
        aguikit_server::aguikit_store::tail_stream(self.clone(), thread, from_seq)
    }
    fn renew_lease<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        until_ms: u64,
    ) -> BoxFuture<'a, aguikit_server::aguikit_store::Result<()>> {
        self.inner.renew_lease(thread, run, until_ms)
    }
    fn lease<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
    ) -> BoxFuture<'a, aguikit_server::aguikit_store::Result<Option<u64>>> {
        self.inner.lease(thread, run)
    }
    fn claim_thread<'a>(
        &'a self,
        thread: &'a str,
        owner: Option<&'a str>,
    ) -> BoxFuture<
        'a,
        aguikit_server::aguikit_store::Result<aguikit_server::aguikit_store::ThreadInfo>,
    > {
        self.inner.claim_thread(thread, owner)
    }
    fn list_threads<'a>(
        &'a self,
        query: &'a aguikit_server::aguikit_store::ThreadQuery,
    ) -> BoxFuture<
        'a,
        aguikit_server::aguikit_store::Result<aguikit_server::aguikit_store::ThreadPage>,
    > {
        self.inner.list_threads(query)
    }
    fn delete_thread<'a>(
        &'a self,
        thread: &'a str,
    ) -> BoxFuture<'a, aguikit_server::aguikit_store::Result<bool>> {
        self.inner.delete_thread(thread)
    }
    fn update_thread<'a>(
        &'a self,
        thread: &'a str,
        update: &'a aguikit_server::aguikit_store::ThreadUpdate,
    ) -> BoxFuture<
        'a,
        aguikit_server::aguikit_store::Result<aguikit_server::aguikit_store::ThreadInfo>,
    > {
        self.inner.update_thread(thread, update)
    }
    fn check_integrity(&self) -> BoxFuture<'_, aguikit_server::aguikit_store::Result<()>> {
        self.inner.check_integrity()
    }
    fn health(&self) -> BoxFuture<'_, aguikit_server::aguikit_store::Result<()>> {
        self.inner.health()
    }
}

#[tokio::test]
async fn a_corrupt_event_never_hides_the_others() {
    let inner = Arc::new(MemoryStore::new());
    let store: Arc<dyn EventStore> = Arc::new(Damaged {
        bad: 10,
        ..Damaged::new(inner.clone())
    });
    let addr = common::spawn(&stored(talker(21), Arc::new(inner.clone()))).await;
    let written = post_json(addr, "/", &input("t", "hi")).await.events().await;
    assert_eq!(written.len(), 25);
    // Another server reads the same records through the damage.
    let addr = common::spawn(&stored(talker(1), store)).await;
    for path in ["/threads/t/connect", "/threads/t/connect?compacted=false"] {
        let res = request(addr, "GET", path, &[], b"").await;
        assert_eq!(res.status, 200);
        let events = res.events().await;
        assert_eq!(events.len(), 10, "{path}: {events:?}");
        assert_eq!(events[..9], written[..9]);
        assert_eq!(events[9]["type"], "RUN_ERROR");
        assert_eq!(events[9]["code"], "corrupt_event");
        assert!(
            events[9]["message"].as_str().unwrap().contains("10"),
            "{}",
            events[9]
        );
    }
    let res = request(addr, "GET", "/threads/t/connect?compacted=true", &[], b"").await;
    assert_eq!(res.status, 200);
    let events = res.events().await;
    let last = events.last().unwrap();
    assert_eq!(last["code"], "corrupt_event", "{events:?}");
    // The thread route reports it, with what could be folded.
    let j = request(addr, "GET", "/threads/t", &[], b"")
        .await
        .json()
        .await;
    assert_eq!(j["error"]["error"], "corrupt_event");
}

#[tokio::test]
async fn a_thread_stores_what_its_runs_add() {
    let store = Arc::new(MemoryStore::new());
    let server = AgentServer::new(agent_fn(|input, ctx| async move {
        let n = input.messages.len();
        ctx.say(format!("reply to {n}")).await?;
        Ok(Finish::success())
    }));
    let addr = common::spawn(&stored(server, store.clone())).await;
    let mut messages: Vec<Value> = Vec::new();
    let mut sent = 0usize;
    const TURNS: usize = 1000;
    for turn in 0..TURNS {
        let text = format!("turn {turn}: what about this, then?");
        sent += text.len();
        messages.push(json!({"id": format!("u{turn}"), "role": "user", "content": text}));
        let body = json!({
            "threadId": "long", "runId": format!("r{turn}"), "messages": messages,
            "state": {}, "tools": [], "context": [], "forwardedProps": {}
        });
        let events = post_json(addr, "/", &body).await.events().await;
        // The client's copy grows as the protocol expects: the agent's reply is kept.
        let reply = events
            .iter()
            .find(|e| e["type"] == "TEXT_MESSAGE_START")
            .unwrap()["messageId"]
            .clone();
        let text: String = events
            .iter()
            .filter(|e| e["type"] == "TEXT_MESSAGE_CONTENT")
            .map(|e| e["delta"].as_str().unwrap().to_owned())
            .collect();
        sent += text.len();
        messages.push(json!({"id": reply, "role": "assistant", "content": text}));
    }
    let raw = store.read_raw("long", 1, usize::MAX).await.unwrap();
    let bytes: usize = raw.iter().map(|r| r.json.len()).sum();
    // Each turn stores its events (with ids and envelopes) once: a small constant times
    // the text, not the whole conversation again (that would be ~500 × larger).
    assert!(
        bytes < 40 * sent,
        "stored {bytes} bytes for {sent} bytes of text over {TURNS} turns"
    );
    // And replaying the thread gives the whole conversation.
    let replay = request(addr, "GET", "/threads/long/connect", &[], b"")
        .await
        .events()
        .await;
    let folded = common::fold(&replay);
    let ids: Vec<&str> = folded.applier().messages().iter().map(|m| m.id()).collect();
    let expected: Vec<&str> = messages.iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ids, expected);
}

#[tokio::test]
async fn a_slow_request_head_is_cut_off() {
    let addr = serve(
        &talker(1).config(ServerConfig::default().header_read_timeout(Duration::from_millis(300))),
    )
    .await;
    let mut slow = tokio::net::TcpStream::connect(addr).await.unwrap();
    slow.write_all(b"GET /health HTTP/1.1\r\n").await.unwrap();
    let mut buf = [0u8; 256];
    // The server closes the connection (possibly after a 408) instead of waiting for ever.
    let closed = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match slow.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => continue,
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "a slow request head kept its connection");
}

#[tokio::test]
async fn health_answers_at_the_connection_limit() {
    let router = talker(1)
        .config(
            ServerConfig::default()
                .max_connections(Some(3))
                .header_read_timeout(Duration::from_secs(30)),
        )
        .path("/agent");
    let app = axum::Router::new()
        .route(
            aguikit_server::HEALTH_PATH,
            axum::routing::get(|| async { "ok" }),
        )
        .merge(router.router());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = router.shutdown_handle();
    tokio::spawn(aguikit_server::serve(
        listener,
        app,
        [handle],
        std::future::pending::<()>(),
    ));
    // Fill the limit with connections that never finish their request head.
    let mut hogs = Vec::new();
    for _ in 0..3 {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(b"GET /agent HTTP/1.1\r\n").await.unwrap();
        hogs.push(s);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let res = request(addr, "GET", "/health", &[], b"").await;
    assert_eq!(res.status, 200);
    assert_eq!(res.text().await, "ok");
    let res = post_json(addr, "/agent", &input("t", "hi")).await;
    assert_eq!(res.status, 503);
    assert_eq!(res.json().await["error"], "too_many_connections");
    drop(hogs);
    // Room again: runs are served.
    let mut served = false;
    for _ in 0..50 {
        let res = post_value(
            addr,
            "/agent",
            &[("Content-Type", "application/json"), ("Host", "localhost")],
            &input("t", "hi"),
        )
        .await;
        if res.status == 200 {
            served = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(served);
}

#[tokio::test]
async fn request_bodies_in_memory_are_bounded() {
    let addr = common::spawn(
        &talker(1).config(
            ServerConfig::default()
                .max_body_bytes(64 * 1024)
                .max_body_bytes_in_flight(64 * 1024)
                .body_wait(Duration::from_millis(300)),
        ),
    )
    .await;
    // One body declared at the limit and sent slowly holds all the room.
    let mut slow = tokio::net::TcpStream::connect(addr).await.unwrap();
    slow.write_all(
        b"POST / HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: 65536\r\n\r\n{",
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let res = post_json(addr, "/", &input("t", "hi")).await;
    assert_eq!(res.status, 503);
    assert_eq!(res.header("retry-after"), Some("1"));
    assert_eq!(res.json().await["error"], "busy");
    drop(slow);
    // The room comes back when that request goes away.
    let mut ok = false;
    for _ in 0..50 {
        if post_json(addr, "/", &input("t", "hi")).await.status == 200 {
            ok = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(ok);
}

/// When the store refuses the run's events, the run's response ends with a `RUN_ERROR`
/// carrying the store's code after what was stored: the client is not left waiting.
#[tokio::test]
async fn a_store_that_refuses_a_run_ends_its_response_with_the_error() {
    let store = Damaged {
        full_at: 12,
        ..Damaged::new(Arc::new(MemoryStore::new()))
    };
    let addr = common::spawn(&stored(talker(21), Arc::new(store.clone()))).await;
    let res = post_json(addr, "/", &input("t", "hi")).await;
    assert_eq!(res.status, 200);
    let events = tokio::time::timeout(Duration::from_secs(10), res.events())
        .await
        .expect("the response ends");
    let stored = store.inner.read("t", 1).await.unwrap();
    assert!(!stored.is_empty() && stored.len() <= 12, "{}", stored.len());
    let last = events.last().unwrap();
    assert_eq!(last["type"], "RUN_ERROR", "{events:?}");
    assert_eq!(last["code"], "store_backend");
    assert!(
        last["message"].as_str().unwrap().contains("disk full"),
        "{last}"
    );
    assert_eq!(events.len(), stored.len() + 1, "{events:?}");
}

/// A slow store slows the agent: events sent but not stored yet count against the run's
/// buffer, so the agent never gets further ahead of the store than the buffer holds (here
/// 4 KiB, four of its 1 KB events) and memory stays bounded.
#[tokio::test]
async fn a_slow_store_slows_the_agent() {
    let store = Damaged {
        delay: Duration::from_millis(5),
        ..Damaged::new(Arc::new(MemoryStore::new()))
    };
    let agent = AgentServer::new(agent_fn(|_input, ctx| async move {
        let m = ctx.text_message().start().await?;
        for _ in 0..60 {
            m.delta("x".repeat(1000)).await?;
        }
        m.end().await?;
        Ok(Finish::success())
    }))
    .config(ServerConfig::default().buffer_bytes(4096));
    let addr = common::spawn(&stored(agent, Arc::new(store.clone()))).await;
    let events = post_json(addr, "/", &input("t", "hi")).await.events().await;
    assert_eq!(events.len(), 64);
    assert_eq!(events[63]["type"], "RUN_FINISHED");
    let batches = store.batches.lock().unwrap().clone();
    assert_eq!(batches.iter().sum::<usize>(), 64, "{batches:?}");
    // Up to four deltas wait to be stored, then one more is accepted (an event always
    // fits); the run's end is pushed without waiting.
    assert!(
        batches.iter().all(|&n| n <= 6),
        "the agent ran ahead of the store: {batches:?}"
    );
}

/// Names of this process's threads (Linux), to see connection threads come and go.
#[cfg(target_os = "linux")]
fn thread_names() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|n| n.trim().to_owned())
        .collect()
}

#[tokio::test]
async fn connections_are_dealt_to_their_threads_and_the_threads_end_with_serve() {
    let store = Arc::new(MemoryStore::new());
    let server = stored(talker(3), store.clone())
        .config(ServerConfig::default().connection_threads(2))
        .path("/agent");
    let app = axum::Router::new()
        .route(
            "/whoami",
            axum::routing::get(|| async { std::thread::current().name().unwrap_or("").to_owned() }),
        )
        .merge(server.router());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(aguikit_server::serve(
        listener,
        app,
        [server.shutdown_handle()],
        async move {
            let _ = stopped.await;
        },
    ));
    let whoami = || async { request(addr, "GET", "/whoami", &[], b"").await.text().await };
    // Both threads are idle: the first connection goes to the first thread, where it stays
    // open; every connection after it goes to the other one, the one with fewer open.
    // (Each step waits a little: a closed connection is counted off its thread just after
    // the client sees it closed, so a request sent at once may find both threads with one.)
    let hog = tokio::net::TcpStream::connect(addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    for _ in 0..3 {
        assert_eq!(whoami().await, "agui-conn-1");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Once the server has seen the first one close, the first thread is chosen again.
    drop(hog);
    let mut names = Vec::new();
    for _ in 0..100 {
        names.push(whoami().await);
        if names.last().unwrap() == "agui-conn-0" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(names.last().unwrap(), "agui-conn-0", "{names:?}");
    // A stored run on a connection thread streams and stores all its events.
    let events = post_json(addr, "/agent", &input("t", "hi"))
        .await
        .events()
        .await;
    assert_eq!(events.last().unwrap()["type"], "RUN_FINISHED");
    let stored = store.read_raw("t", 1, usize::MAX).await.unwrap();
    assert_eq!(stored.len(), events.len());
    #[cfg(target_os = "linux")]
    assert_eq!(
        thread_names()
            .iter()
            .filter(|n| n.starts_with("agui-conn-"))
            .count(),
        2
    );
    // On shutdown, serve returns once the threads have ended.
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(20), serving)
        .await
        .expect("serve returns after the signal")
        .unwrap()
        .unwrap();
    #[cfg(target_os = "linux")]
    assert!(
        !thread_names().iter().any(|n| n.starts_with("agui-conn-")),
        "{:?}",
        thread_names()
    );
}
