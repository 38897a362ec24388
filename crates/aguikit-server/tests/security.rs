//! What a hostile web page or client can do to an `AgentServer`: authentication, CORS,
//! content type, the `Host` check, thread ownership and quotas (issue 14).

mod common;

#[cfg(feature = "store")]
use aguikit_server::StoreOptions;
#[cfg(feature = "store")]
use aguikit_server::aguikit_store::MemoryStore;
use aguikit_server::{Access, AgentServer, AllowOrigin, CorsLayer, Finish, Tokens, agent_fn};
use common::{input, post, post_value, request, serve};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

const ALICE: &str = "alice-token-0123456789abcdef";
const BOB: &str = "bob-token-0123456789abcdef";
const ROOT: &str = "root-token-0123456789abcdef";

fn tokens() -> Tokens {
    Tokens::parse(&format!("alice {ALICE}\nbob {BOB}\nroot {ROOT} admin\n")).unwrap()
}

/// A server whose agent counts its runs and says hello.
fn counting(runs: Arc<AtomicUsize>) -> AgentServer {
    AgentServer::new(agent_fn(move |_input, ctx| {
        let runs = runs.clone();
        async move {
            runs.fetch_add(1, Ordering::SeqCst);
            ctx.say("hello").await?;
            Ok(Finish::success())
        }
    }))
    .path("/agent")
}

/// POSTs `body` to `/agent` with the bearer `token` (none: anonymous).
async fn post_as(addr: SocketAddr, token: Option<&str>, body: &Value) -> common::Response {
    let auth = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "text/event-stream"),
        ("Host", "127.0.0.1"),
    ];
    if let Some(a) = &auth {
        headers.push(("Authorization", a.as_str()));
    }
    post_value(addr, "/agent", &headers, body).await
}

#[cfg(feature = "store")]
async fn get(addr: SocketAddr, token: &str, path: &str) -> common::Response {
    let auth = format!("Bearer {token}");
    request(
        addr,
        "GET",
        path,
        &[("Authorization", &auth), ("Host", "localhost")],
        b"",
    )
    .await
}

/// A [`counting`] server that wants a token and stores its threads (in memory).
#[cfg(feature = "store")]
fn guarded_with_store(runs: &Arc<AtomicUsize>) -> AgentServer {
    counting(runs.clone())
        .access(Access::default().auth(tokens()))
        .store(StoreOptions::new(Arc::new(MemoryStore::new())))
}

#[cfg(feature = "store")]
#[tokio::test]
async fn every_api_route_needs_a_token() {
    let runs = Arc::new(AtomicUsize::new(0));
    let server = guarded_with_store(&runs);
    let addr = serve(&server).await;
    for token in [None, Some("wrong-token-0123456789abcdef")] {
        let res = post_as(addr, token, &input("t", "hi")).await;
        assert_eq!(res.status, 401);
        assert_eq!(res.header("www-authenticate"), Some("Bearer"));
        let j = res.json().await;
        assert_eq!(j["error"], "unauthorized");
    }
    for path in [
        "/agent/threads",
        "/agent/threads/t",
        "/agent/threads/t/connect",
    ] {
        let res = request(addr, "GET", path, &[("Host", "localhost")], b"").await;
        assert_eq!(res.status, 401, "{path}");
    }
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    let res = post_as(addr, Some(ALICE), &input("t", "hi")).await;
    assert_eq!(res.status, 200);
    let events = res.events().await;
    assert_eq!(events.last().unwrap()["type"], "RUN_FINISHED");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_foreign_origin_gets_no_cors_grant() {
    let runs = Arc::new(AtomicUsize::new(0));
    // Default: no CORS layer at all.
    let addr = serve(&counting(runs.clone())).await;
    let preflight = |addr, origin: &'static str| async move {
        request(
            addr,
            "OPTIONS",
            "/agent",
            &[
                ("Host", "127.0.0.1"),
                ("Origin", origin),
                ("Access-Control-Request-Method", "POST"),
                (
                    "Access-Control-Request-Headers",
                    "content-type,authorization",
                ),
            ],
            b"",
        )
        .await
    };
    let res = preflight(addr, "https://evil.example").await;
    assert!(res.header("access-control-allow-origin").is_none());
    assert!(res.header("access-control-allow-headers").is_none());
    // With a named origin: that origin is granted, others are not; never `*`.
    let allowed = counting(runs.clone()).cors(
        CorsLayer::new()
            .allow_origin(AllowOrigin::exact("https://app.example".parse().unwrap()))
            .allow_methods([axum::http::Method::POST])
            .allow_headers([axum::http::header::CONTENT_TYPE]),
    );
    let addr = serve(&allowed).await;
    let res = preflight(addr, "https://app.example").await;
    assert_eq!(
        res.header("access-control-allow-origin"),
        Some("https://app.example")
    );
    let res = preflight(addr, "https://evil.example").await;
    assert!(
        res.header("access-control-allow-origin")
            .is_none_or(|o| o != "https://evil.example" && o != "*")
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_text_plain_cross_site_post_starts_nothing() {
    let runs = Arc::new(AtomicUsize::new(0));
    let addr = serve(&counting(runs.clone())).await;
    let body = input("t", "hi").to_string();
    for ctype in [
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
    ] {
        let res = post(
            addr,
            "/agent",
            &[
                ("Host", "127.0.0.1"),
                ("Origin", "https://evil.example"),
                ("Content-Type", ctype),
            ],
            body.as_bytes(),
        )
        .await;
        assert_eq!(res.status, 415, "{ctype}");
        assert!(res.header("access-control-allow-origin").is_none());
        assert_eq!(res.json().await["error"], "unsupported_media_type");
    }
    // No content type at all: refused as well.
    let res = post(addr, "/agent", &[("Host", "127.0.0.1")], body.as_bytes()).await;
    assert_eq!(res.status, 415);
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_foreign_host_gets_421_on_a_loopback_listener() {
    let runs = Arc::new(AtomicUsize::new(0));
    let server = counting(runs.clone()).access(Access::default().allowed_hosts(["agui.test"]));
    let addr = serve(&server).await;
    let body = input("t", "hi").to_string();
    let send = |host: String| {
        let body = body.clone();
        async move {
            post(
                addr,
                "/agent",
                &[
                    ("Host", host.as_str()),
                    ("Content-Type", "application/json"),
                ],
                body.as_bytes(),
            )
            .await
        }
    };
    let res = send("evil.example".into()).await;
    assert_eq!(res.status, 421);
    assert_eq!(res.json().await["error"], "misdirected_host");
    let res = send(format!("evil.example:{}", addr.port())).await;
    assert_eq!(res.status, 421);
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    for ok in [
        format!("127.0.0.1:{}", addr.port()),
        format!("localhost:{}", addr.port()),
        "agui.test".to_owned(),
    ] {
        let res = send(ok.clone()).await;
        assert_eq!(res.status, 200, "{ok}");
        res.events().await;
    }
    assert_eq!(runs.load(Ordering::SeqCst), 3);
}

#[cfg(feature = "store")]
#[tokio::test]
async fn another_principals_thread_is_out_of_reach_and_its_id_names_your_own() {
    let runs = Arc::new(AtomicUsize::new(0));
    let server = guarded_with_store(&runs);
    let addr = serve(&server).await;
    let mut body = input("alice-thread", "hi");
    body["runId"] = json!("r1");
    let res = post_as(addr, Some(ALICE), &body).await;
    assert_eq!(res.status, 200);
    res.events().await;

    // Alice sees it.
    let res = get(addr, ALICE, "/agent/threads/alice-thread").await;
    assert_eq!(res.status, 200);
    let list = get(addr, ALICE, "/agent/threads").await.json().await;
    assert_eq!(list["threads"].as_array().unwrap().len(), 1);

    // Bob gets 404 everywhere, as for a thread that does not exist, and an empty listing.
    for path in [
        "/agent/threads/alice-thread",
        "/agent/threads/alice-thread/connect",
    ] {
        let res = get(addr, BOB, path).await;
        assert_eq!(res.status, 404, "{path}");
        let j = res.json().await;
        let missing = get(addr, BOB, &path.replace("alice-thread", "no-such-thread"))
            .await
            .json()
            .await;
        assert_eq!(j["error"], missing["error"]);
        assert_eq!(
            j["message"].as_str().unwrap().replace("alice-thread", "X"),
            missing["message"]
                .as_str()
                .unwrap()
                .replace("no-such-thread", "X")
        );
    }
    let list = get(addr, BOB, "/agent/threads").await.json().await;
    assert_eq!(list["threads"], json!([]));
    let res = request(
        addr,
        "DELETE",
        "/agent/threads/alice-thread",
        &[
            ("Authorization", &format!("Bearer {BOB}")),
            ("Host", "localhost"),
        ],
        b"",
    )
    .await;
    assert_eq!(res.status, 404);
    // A thread id names a thread within its owner's namespace: Bob's run on Alice's id is
    // a run on his own new thread, as for any id he has not used (no oracle, no squatting).
    let mut theirs = input("alice-thread", "let me in");
    theirs["runId"] = json!("r2");
    let res = post_as(addr, Some(BOB), &theirs).await;
    assert_eq!(res.status, 200);
    res.events().await;
    let bobs = get(addr, BOB, "/agent/threads/alice-thread")
        .await
        .json()
        .await;
    assert_eq!(bobs["owner"], "bob");
    assert_eq!(bobs["runs"].as_array().unwrap().len(), 1);
    let alices = get(addr, ALICE, "/agent/threads/alice-thread")
        .await
        .json()
        .await;
    assert_eq!(alices["owner"], "alice");
    assert_eq!(alices["runs"].as_array().unwrap().len(), 1);

    // The admin sees every thread, each named with its owner, and reads one by naming it.
    let list = get(addr, ROOT, "/agent/threads").await.json().await;
    let mut owners: Vec<&str> = list["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            assert_eq!(t["threadId"], "alice-thread");
            t["owner"].as_str().unwrap()
        })
        .collect();
    owners.sort();
    assert_eq!(owners, ["alice", "bob"]);
    assert_eq!(
        get(addr, ROOT, "/agent/threads/alice-thread?owner=alice")
            .await
            .status,
        200
    );
    assert_eq!(
        get(addr, ROOT, "/agent/threads/alice-thread").await.status,
        404
    );
    // Alice's run and Bob's.
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn quotas_answer_429_with_retry_after() {
    let runs = Arc::new(AtomicUsize::new(0));
    let server =
        counting(runs.clone()).access(Access::default().auth(tokens()).runs_per_minute(Some(2)));
    let addr = serve(&server).await;
    for i in 0..2 {
        let mut body = input("t", "hi");
        body["runId"] = json!(format!("r{i}"));
        let res = post_as(addr, Some(ALICE), &body).await;
        assert_eq!(res.status, 200);
        res.events().await;
    }
    let res = post_as(addr, Some(ALICE), &input("t", "hi")).await;
    assert_eq!(res.status, 429);
    let retry: u64 = res.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    assert_eq!(res.json().await["error"], "rate_limited");
    // Another principal has its own quota.
    let res = post_as(addr, Some(BOB), &input("t2", "hi")).await;
    assert_eq!(res.status, 200);
    res.events().await;
    assert_eq!(runs.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn concurrent_runs_are_limited_per_principal() {
    let (release, released) = tokio::sync::watch::channel(false);
    let server = AgentServer::new(agent_fn(move |_input, ctx| {
        let mut released = released.clone();
        async move {
            ctx.say("waiting").await?;
            let _ = released.wait_for(|r| *r).await;
            Ok(Finish::success())
        }
    }))
    .path("/agent")
    .access(Access::default().auth(tokens()).concurrent_runs(Some(1)));
    let addr = serve(&server).await;
    let mut first = post_as(addr, Some(ALICE), &input("a", "hi")).await;
    assert_eq!(first.status, 200);
    let mut decoder = aguikit_core::codec::sse::SseDecoder::new();
    first.read_events(2, &mut decoder).await;
    let res = post_as(addr, Some(ALICE), &input("b", "hi")).await;
    assert_eq!(res.status, 429);
    assert!(res.header("retry-after").is_some());
    // Bob is not held back by Alice's run.
    let mut bob = post_as(addr, Some(BOB), &input("c", "hi")).await;
    assert_eq!(bob.status, 200);
    bob.read_events(2, &mut decoder).await;
    release.send_replace(true);
    first.body().await;
    bob.body().await;
    // The slot is free again once the run ended.
    let mut again = None;
    for _ in 0..50 {
        let res = post_as(addr, Some(ALICE), &input("d", "hi")).await;
        if res.status == 200 {
            again = Some(res);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let events = again
        .expect("a new run once the first ended")
        .events()
        .await;
    assert_eq!(events.last().unwrap()["type"], "RUN_FINISHED");
}

/// An agent that asks for a confirmation on every run.
fn asking() -> AgentServer {
    AgentServer::new(agent_fn(|_input, ctx| async move {
        ctx.interrupt(aguikit_core::Interrupt::new("confirm-1", "confirmation"));
        Ok(Finish::success())
    }))
    .path("/agent")
}

/// Issue 36 item 4: a principal never sees another's open interrupts through a thread id
/// they share, with a store or without one (the server's interrupt map was keyed by the
/// client's thread id alone: Bob's run on Alice's id was refused, naming her interrupt).
#[tokio::test]
async fn open_interrupts_are_the_callers_own() {
    #[cfg_attr(not(feature = "store"), allow(unused_mut))]
    let mut servers = vec![(asking().access(Access::default().auth(tokens())), false)];
    #[cfg(feature = "store")]
    servers.push((
        asking()
            .access(Access::default().auth(tokens()))
            .store(StoreOptions::new(Arc::new(MemoryStore::new()))),
        true,
    ));
    for (server, stored) in servers {
        let addr = serve(&server).await;
        let mut n = 0;
        let mut run = async |token: &str| {
            n += 1;
            let mut body = input("shared-id", "hi");
            body["runId"] = json!(format!("run-{n}"));
            let res = post_as(addr, Some(token), &body).await;
            let status = res.status;
            if status != 200 {
                panic!("{token}: {status} {}", res.text().await);
            }
            let events = res.events().await;
            events.last().cloned().unwrap_or_default()
        };
        let alice = run(ALICE).await;
        assert_eq!(alice["outcome"]["type"], "interrupt", "{alice}");
        // Bob's thread of that id has nothing open: his run goes on.
        let bob = run(BOB).await;
        assert_eq!(bob["type"], "RUN_FINISHED", "{bob}");
        assert!(!bob.to_string().contains("resume_missing"), "{bob}");
        // A run id used twice is refused naming the thread as the caller names it.
        if stored {
            let mut body = input("shared-id", "hi");
            body["runId"] = json!("run-1");
            let res = post_as(addr, Some(ALICE), &body).await;
            assert_eq!(res.status, 409);
            let text = res.text().await;
            assert!(text.contains(r#"thread \"shared-id\""#), "{text}");
        }
        // Alice's is still open: hers is refused until she answers.
        let again = run(ALICE).await;
        assert_eq!(again["code"], "resume_missing", "{again}");
        assert!(again.to_string().contains("confirm-1"), "{again}");
    }
}

/// `PATCH /agent/threads/{id}` (rename, fork origin) and `GET /agent/threads?q=` (search)
/// reach the caller's own threads only, and refuse what they cannot take.
#[cfg(feature = "store")]
#[tokio::test]
async fn threads_are_renamed_and_searched_by_their_owner_only() {
    let runs = Arc::new(AtomicUsize::new(0));
    let server = guarded_with_store(&runs);
    let addr = serve(&server).await;
    for (token, thread, text) in [
        (ALICE, "alice-thread", "Plan a trip"),
        (BOB, "bob-thread", "my secret plan"),
    ] {
        let res = post_as(addr, Some(token), &input(thread, text)).await;
        assert_eq!(res.status, 200);
        res.events().await;
    }
    let listed = |token: &'static str, q: &str| {
        let q = q.to_owned();
        async move {
            let res = get(addr, token, &format!("/agent/threads?q={q}")).await;
            assert_eq!(res.status, 200, "q={q}");
            let j = res.json().await;
            j["threads"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["threadId"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        }
    };
    // Search: the caller's own threads, by title or content, without case.
    assert_eq!(listed(ALICE, "PLAN").await, ["alice-thread"]);
    assert_eq!(listed(BOB, "plan").await, ["bob-thread"]);
    assert!(listed(ALICE, "secret").await.is_empty());
    assert_eq!(listed(BOB, "my+secret").await, ["bob-thread"]);
    assert_eq!(listed(ALICE, "a%20trip").await, ["alice-thread"]);
    assert_eq!(listed(ALICE, "").await, ["alice-thread"]);
    for bad in ["%zz".to_owned(), "x".repeat(201)] {
        let res = get(addr, ALICE, &format!("/agent/threads?q={bad}")).await;
        assert_eq!(res.status, 400, "q={bad}");
        let j = res.json().await;
        assert_eq!(
            (j["error"].as_str(), j["field"].as_str()),
            (Some("invalid_query"), Some("q")),
            "{j}"
        );
    }
    assert_eq!(
        listed(ALICE, Box::leak("é".repeat(200).into_boxed_str()))
            .await
            .len(),
        0
    );

    let patch = |token: Option<&'static str>, path: &'static str, body: Vec<u8>| async move {
        let auth = token.map(|t| format!("Bearer {t}"));
        let mut headers = vec![("Host", "localhost"), ("Content-Type", "application/json")];
        if let Some(a) = &auth {
            headers.push(("Authorization", a.as_str()));
        }
        request(addr, "PATCH", path, &headers, &body).await
    };
    let body = |v: Value| serde_json::to_vec(&v).unwrap();
    // Only with a token, and only one's own thread: Bob's id names a thread of his own.
    let res = patch(
        None,
        "/agent/threads/alice-thread",
        body(json!({"title": "x"})),
    )
    .await;
    assert_eq!(res.status, 401);
    let res = patch(
        Some(BOB),
        "/agent/threads/alice-thread",
        body(json!({"title": "mine"})),
    )
    .await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json().await["error"], "unknown_thread");
    // A rename, white space collapsed: answered with the listing entry, and kept.
    let res = patch(
        Some(ALICE),
        "/agent/threads/alice-thread",
        body(json!({"title": "  Trip\n to\tOslo "})),
    )
    .await;
    assert_eq!(res.status, 200);
    let j = res.json().await;
    assert_eq!(
        (j["threadId"].as_str(), j["title"].as_str()),
        (Some("alice-thread"), Some("Trip to Oslo")),
        "{j}"
    );
    let thread = get(addr, ALICE, "/agent/threads/alice-thread")
        .await
        .json()
        .await;
    assert_eq!(thread["title"], "Trip to Oslo");
    assert_eq!(thread["forkOf"], Value::Null);
    assert_eq!(listed(ALICE, "oslo").await, ["alice-thread"]);
    let bobs = get(addr, BOB, "/agent/threads/bob-thread")
        .await
        .json()
        .await;
    assert_eq!(bobs["title"], "my secret plan");
    // Where a fork comes from.
    let fork = json!({"threadId": "bob-thread", "runId": "r9"});
    let res = patch(
        Some(ALICE),
        "/agent/threads/alice-thread",
        body(json!({"forkOf": fork})),
    )
    .await;
    assert_eq!(res.status, 200);
    let list = get(addr, ALICE, "/agent/threads").await.json().await;
    assert_eq!(list["threads"][0]["forkOf"], fork);
    assert_eq!(list["threads"][0]["title"], "Trip to Oslo");
    let thread = get(addr, ALICE, "/agent/threads/alice-thread")
        .await
        .json()
        .await;
    assert_eq!(thread["forkOf"], fork);
    // What is refused, naming the field.
    let long = "t".repeat(201);
    for (sent, field) in [
        (b"not json".to_vec(), ""),
        (body(json!([1])), ""),
        (body(json!({})), ""),
        (body(json!({"name": "x"})), ""),
        (body(json!({"title": ""})), "title"),
        (body(json!({"title": " \n "})), "title"),
        (body(json!({"title": 5})), "title"),
        (body(json!({"title": "bell\u{7}"})), "title"),
        (body(json!({"title": long})), "title"),
        (body(json!({"forkOf": {"threadId": "x"}})), "forkOf"),
        (
            body(json!({"forkOf": {"threadId": "", "runId": "r"}})),
            "forkOf",
        ),
        (body(json!({"forkOf": "x"})), "forkOf"),
    ] {
        let res = patch(Some(ALICE), "/agent/threads/alice-thread", sent.clone()).await;
        assert_eq!(res.status, 400, "{}", String::from_utf8_lossy(&sent));
        let j = res.json().await;
        assert_eq!(
            (j["error"].as_str(), j["field"].as_str()),
            (Some("invalid_update"), Some(field)),
            "{j}"
        );
    }
    let huge = body(json!({"title": "x".repeat(9000)}));
    let res = patch(Some(ALICE), "/agent/threads/alice-thread", huge).await;
    assert_eq!(res.status, 413);
    let res = patch(
        Some(ALICE),
        "/agent/threads/no-such-thread",
        body(json!({"title": "x"})),
    )
    .await;
    assert_eq!(res.status, 404);
    let thread = get(addr, ALICE, "/agent/threads/alice-thread")
        .await
        .json()
        .await;
    assert_eq!(thread["title"], "Trip to Oslo");
}
