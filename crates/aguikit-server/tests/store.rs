//! Persistent runs: SSE ids, Last-Event-ID resume after a dropped connection, runs that
//! outlive their client, thread routes and their errors.
#![cfg(feature = "store")]
#![allow(missing_docs)]

use aguikit_server::aguikit_store::{EventStore, MemoryStore, RunStatus};
use aguikit_server::{AgentServer, Finish, StoreOptions, agent_fn};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn server(store: Arc<dyn EventStore>) -> String {
    let agent = agent_fn(|_input, ctx| async move {
        let m = ctx.text_message().start().await?;
        for i in 0..40 {
            m.delta(format!("{i} ")).await?;
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        m.end().await?;
        Ok(Finish::success())
    });
    let app = AgentServer::new(agent)
        .path("/agent")
        .store(StoreOptions::new(store))
        .router();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr.to_string()
}

/// Sends a request; reads until `stop` says so or the connection closes.
async fn request(addr: &str, head: &str, body: &str, stop: impl Fn(&str) -> bool) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let req = format!(
        "{head}\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = tokio::time::timeout(Duration::from_secs(10), s.read(&mut buf))
            .await
            .unwrap()
            .unwrap();
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
        if stop(&String::from_utf8_lossy(&out)) {
            break;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn ids(text: &str) -> Vec<u64> {
    text.lines()
        .filter_map(|l| l.strip_prefix("id: "))
        .map(|n| n.parse().unwrap())
        .collect()
}

const INPUT: &str = r#"{"threadId":"t1","runId":"r1","messages":[],"tools":[],"context":[],"state":{},"forwardedProps":{}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_client_resumes_with_last_event_id_and_the_run_goes_on() {
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let addr = server(store.clone()).await;
    // Drop the connection after a few events.
    let first = request(&addr, "POST /agent HTTP/1.1", INPUT, |t| ids(t).len() >= 5).await;
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    let seen = ids(&first);
    assert_eq!(seen, (1..=seen.len() as u64).collect::<Vec<_>>());
    let last = *seen.last().unwrap();
    // Resume: exactly the missed events, then the live ones, to the end of the run.
    let rest = request(
        &addr,
        &format!("GET /agent/threads/t1/connect HTTP/1.1\r\nLast-Event-ID: {last}"),
        "",
        |_| false,
    )
    .await;
    let more = ids(&rest);
    let total = 1 + 1 + 40 + 1 + 1; // started, start, 40 deltas, end, finished
    assert_eq!(more, (last + 1..=total).collect::<Vec<_>>(), "{rest}");
    assert!(rest.contains("RUN_FINISHED"));
    // The run went on without its client: all of it is stored.
    assert_eq!(store.read("t1", 1).await.unwrap().len() as u64, total);
    // Thread routes.
    let info = request(&addr, "GET /agent/threads/t1 HTTP/1.1", "", |_| false).await;
    assert!(info.contains(r#""status":"finished""#), "{info}");
    let list = request(&addr, "GET /agent/threads HTTP/1.1", "", |_| false).await;
    assert!(list.contains(r#""threadId":"t1""#), "{list}");
    // Compacted history: fewer events, the last one carries the thread's last sequence.
    let compact = request(
        &addr,
        "GET /agent/threads/t1/connect?compacted=true HTTP/1.1",
        "",
        |_| false,
    )
    .await;
    assert_eq!(ids(&compact), vec![total]);
    assert!(compact.matches("data: ").count() < total as usize);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_thread_run_and_sequence_are_json_errors() {
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let addr = server(store.clone()).await;
    let r = request(
        &addr,
        "GET /agent/threads/nope/connect HTTP/1.1",
        "",
        |_| false,
    )
    .await;
    assert!(
        r.starts_with("HTTP/1.1 404") && r.contains(r#""error":"unknown_thread""#),
        "{r}"
    );
    let r = request(&addr, "GET /agent/threads/nope HTTP/1.1", "", |_| false).await;
    assert!(r.starts_with("HTTP/1.1 404"), "{r}");
    request(&addr, "POST /agent HTTP/1.1", INPUT, |_| false).await;
    for (last_event_id, code) in [
        ("abc", "invalid_sequence"),
        ("999", "sequence_out_of_range"),
    ] {
        let head =
            format!("GET /agent/threads/t1/connect HTTP/1.1\r\nLast-Event-ID: {last_event_id}");
        let r = request(&addr, &head, "", |_| false).await;
        assert!(r.starts_with("HTTP/1.1 400") && r.contains(code), "{r}");
    }
    // Branching from an unknown run: 404 before anything runs.
    let branch = INPUT.replace(r#""runId":"r1""#, r#""runId":"r2","parentRunId":"ghost""#);
    let r = request(&addr, "POST /agent HTTP/1.1", &branch, |_| false).await;
    assert!(
        r.starts_with("HTTP/1.1 404") && r.contains("unknown_run"),
        "{r}"
    );
    // Reusing a finished run id: 409.
    let r = request(&addr, "POST /agent HTTP/1.1", INPUT, |_| false).await;
    assert!(r.starts_with("HTTP/1.1 409"), "{r}");
    // Branching from r1 works.
    let ok = INPUT.replace(r#""runId":"r1""#, r#""runId":"r3","parentRunId":"r1""#);
    let r = request(&addr, "POST /agent HTTP/1.1", &ok, |_| false).await;
    assert!(
        r.starts_with("HTTP/1.1 200") && r.contains("RUN_FINISHED"),
        "{r}"
    );
    assert_eq!(
        store
            .run("t1", "r3")
            .await
            .unwrap()
            .parent_run_id
            .as_deref(),
        Some("r1")
    );
}

/// Store-mode responses (the run's own, and a thread followed through `connect`) get
/// keep-alive comments while the run is silent, like plain responses do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_streams_get_keep_alive_comments_while_the_run_is_silent() {
    let agent = agent_fn(|_input, ctx| async move {
        ctx.say("early").await?;
        tokio::time::sleep(Duration::from_millis(450)).await;
        ctx.say("late").await?;
        Ok(Finish::success())
    });
    let app = AgentServer::new(agent)
        .path("/agent")
        .config(
            aguikit_server::ServerConfig::default().keep_alive(Some(Duration::from_millis(100))),
        )
        .store(StoreOptions::new(Arc::new(MemoryStore::new())))
        .router();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let run = {
        let addr = addr.clone();
        tokio::spawn(async move { request(&addr, "POST /agent HTTP/1.1", INPUT, |_| false).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let followed = request(&addr, "GET /agent/threads/t1/connect HTTP/1.1", "", |_| {
        false
    })
    .await;
    let run = run.await.unwrap();
    for (what, body) in [("run", &run), ("connect", &followed)] {
        assert!(body.starts_with("HTTP/1.1 200"), "{what}: {body}");
        let pings = body.matches(": keep-alive\n\n").count();
        assert!(pings >= 2, "{what}: {pings} keep-alives in {body:?}");
        assert!(body.contains("RUN_FINISHED"), "{what}: {body}");
    }
    // The ids are untouched by the comments: 1..=n on the run's own response.
    let seen = ids(&run);
    assert_eq!(seen, (1..=seen.len() as u64).collect::<Vec<_>>());
}

/// A run's own response is handed each event as it is stored; a client that reads nothing
/// until the run is over falls behind by more than the response holds and is served the
/// rest from the store. Either way it gets every event once, in order, numbered with its
/// sequence, byte for byte what a replay of the thread sends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_response_live_or_behind_is_the_stored_run_byte_for_byte() {
    // Thread "live" runs fewer events than a response holds (it cannot fall behind);
    // thread "late" many more.
    let deltas = |thread: &str| if thread == "live" { 20 } else { 300 };
    let agent = agent_fn(move |input, ctx| async move {
        let m = ctx.text_message().start().await?;
        for i in 0..deltas(&input.thread_id) {
            m.delta(format!("{i} ")).await?;
        }
        m.end().await?;
        Ok(Finish::success())
    });
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let server = AgentServer::new(agent).store(StoreOptions::new(store.clone()));
    let post = |thread: &str| {
        let body = INPUT.replace(r#""t1""#, &format!("{thread:?}"));
        axum::http::Request::builder()
            .method("POST")
            .uri("/")
            .header("content-type", "application/json")
            .body(axum::body::Body::from(body))
            .unwrap()
    };
    let connect = |thread: &str| {
        axum::http::Request::builder()
            .uri(format!("/threads/{thread}/connect"))
            .body(axum::body::Body::empty())
            .unwrap()
    };
    let read = |res: axum::response::Response| async move {
        assert_eq!(res.status(), 200);
        let body = axum::body::to_bytes(res.into_body(), usize::MAX)
            .await
            .unwrap();
        String::from_utf8(body.to_vec()).unwrap()
    };
    let total = |thread| 1 + 1 + deltas(thread) + 1 + 1;
    // Read as it comes.
    let live = read(server.handle(post("live")).await).await;
    // Read nothing until the whole run is stored.
    let late = server.handle(post("late")).await;
    for _ in 0..500 {
        if store.run("late", "r1").await.unwrap().status != RunStatus::Running {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(store.read("late", 1).await.unwrap().len(), total("late"));
    let late = read(late).await;
    let router = server.router();
    for (thread, got) in [("live", live), ("late", late)] {
        assert_eq!(
            ids(&got),
            (1..=total(thread) as u64).collect::<Vec<_>>(),
            "{thread}"
        );
        let replay = read(tower_oneshot(&router, connect(thread)).await).await;
        assert_eq!(got, replay, "{thread}");
    }
}

async fn tower_oneshot(
    router: &axum::Router,
    request: axum::http::Request<axum::body::Body>,
) -> axum::response::Response {
    use tower_service::Service;
    // A router is always ready.
    router.clone().call(request).await.unwrap()
}
