//! No panic on any input, and a panic loses nothing (issue 36, row 1): a JSON path named
//! past the depth limit is cut on a character boundary; a handler that panics answers
//! `500 internal` and gives its connection slot back; a stored run whose event would have
//! panicked the store writer ends with a stored `RUN_ERROR`.
#![allow(missing_docs)]

mod common;

use aguikit_server::{AgentServer, Finish, ServerConfig, agent_fn};
use axum::routing::get;
use common::{post, request};
use serde_json::{Value, json};

/// A key whose 200th byte falls inside a two-byte character once it is named with
/// `prefix` before it (the path is cut at 200 bytes).
fn cutting_key(prefix: usize) -> String {
    format!("{}é", "a".repeat(199 - prefix))
}

fn nested(key: &str, depth: usize) -> Value {
    let mut v = json!(1);
    for _ in 0..depth {
        v = json!([v]);
    }
    json!({ key: v })
}

#[tokio::test]
async fn a_path_cut_inside_a_character_is_a_400_not_a_panic() {
    let server = AgentServer::new(agent_fn(|_i, _c| async { Ok(Finish::success()) }))
        .config(ServerConfig::default().max_connections(Some(2)));
    let addr = common::serve(&server).await;
    let mut body = common::input("t", "x");
    body.as_object_mut()
        .unwrap()
        .extend(nested(&cutting_key(0), 80).as_object().unwrap().clone());
    let body = body.to_string();
    // More than the connection limit: a leaked slot would turn later requests into 503s.
    for _ in 0..6 {
        let res = post(
            addr,
            "/",
            &[("Content-Type", "application/json")],
            body.as_bytes(),
        )
        .await;
        assert_eq!(res.status, 400);
        let v = res.json().await;
        assert_eq!(v["error"], "too_deep", "{v}");
        let field = v["field"].as_str().unwrap();
        assert!(field.starts_with(&"a".repeat(199)), "{field}");
        assert!(field.ends_with('…'), "{field}");
    }
    let res = common::post_json(addr, "/", &common::input("t", "x")).await;
    assert_eq!(res.status, 200);
}

#[tokio::test]
async fn a_panicking_handler_answers_500_and_gives_its_connection_back() {
    let server = AgentServer::new(agent_fn(|_i, _c| async { Ok(Finish::success()) }))
        .config(ServerConfig::default().max_connections(Some(2)));
    let router = server
        .router()
        .route(
            "/boom",
            get(|| async {
                if true {
                    panic!("a handler bug");
                }
                "unreachable"
            }),
        )
        .route("/ok", get(|| async { "fine" }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = server.shutdown_handle();
    tokio::spawn(aguikit_server::serve(
        listener,
        router,
        [handle],
        std::future::pending(),
    ));
    for _ in 0..5 {
        let res = request(addr, "GET", "/boom", &[], b"").await;
        assert_eq!(res.status, 500);
        assert_eq!(res.json().await["error"], "internal");
    }
    let res = request(addr, "GET", "/ok", &[], b"").await;
    assert_eq!(res.status, 200, "the panics leaked connection slots");
    assert_eq!(res.text().await, "fine");
}

#[cfg(feature = "store")]
#[tokio::test]
async fn a_stored_run_whose_event_names_a_cut_path_ends_with_a_stored_error() {
    use aguikit_server::StoreOptions;
    use aguikit_server::aguikit_store::{EventStore, MemoryStore, RunStatus};
    use std::sync::Arc;
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    // An event nested past what the store reads back (120 levels), its deepest path cut at
    // 200 bytes inside `é` ("value." precedes the key).
    let agent = agent_fn(|_i, ctx| async move {
        ctx.custom("deep", nested(&cutting_key(6), 130)).await?;
        Ok(Finish::success())
    });
    let server = AgentServer::new(agent).store(StoreOptions::new(store.clone()));
    let addr = common::serve(&server).await;
    let res = common::post_json(addr, "/", &common::input("deep-thread", "x")).await;
    assert_eq!(res.status, 200);
    let events = tokio::time::timeout(std::time::Duration::from_secs(10), res.events())
        .await
        .expect("the run's stream ends");
    let last = events.last().unwrap();
    assert_eq!(last["type"], "RUN_ERROR", "{events:?}");
    assert_eq!(last["code"], "event_too_deep");
    let runs = store.runs("deep-thread").await.unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, RunStatus::Error);
}
