//! Protobuf responses (feature `proto`): negotiated only when explicitly preferred, and
//! carrying the same events as SSE.
#![cfg(feature = "proto")]

mod common;
#[path = "../examples/every_emitter.rs"]
#[allow(dead_code)]
mod every_emitter;

use aguikit_core::Event;
use aguikit_core::codec::proto::ProtoFrameDecoder;
use aguikit_core::engine::pipeline::Pipeline;
use common::*;
use serde_json::Value;

const PROTO_FIRST: &str = "application/vnd.ag-ui.event+proto, text/event-stream;q=0.5";

async fn proto_events(
    addr: std::net::SocketAddr,
    accept: &str,
    body: &Value,
) -> (Option<String>, Vec<Event>) {
    let res = post_accepting(addr, "/agent", accept, body).await;
    let ct = res.header("content-type").map(str::to_owned);
    let bytes = res.body().await;
    let mut d = ProtoFrameDecoder::new();
    d.push(&bytes);
    let mut out = Vec::new();
    while let Some(e) = d.next_event().unwrap() {
        out.push(e);
    }
    d.finish().unwrap();
    (ct, out)
}

#[tokio::test]
async fn protobuf_carries_the_same_events_as_sse() {
    let addr = spawn(&every_emitter::server()).await;
    let body = input("t-proto", "hello");
    let (ct, events) = proto_events(addr, PROTO_FIRST, &body).await;
    assert_eq!(ct.as_deref(), Some("application/vnd.ag-ui.event+proto"));
    let sse = post_json(addr, "/agent", &body).await.events().await;
    let proto_types: Vec<&str> = events.iter().map(Event::type_str).collect();
    assert_eq!(proto_types, types(&sse));
    let mut p = Pipeline::new();
    for e in events {
        p.push(e).unwrap();
    }
    p.finish().unwrap();
}

#[tokio::test]
async fn wildcards_and_lower_preference_get_sse() {
    let addr = spawn(&every_emitter::server()).await;
    for accept in [
        "*/*",
        "application/*",
        "text/event-stream, application/vnd.ag-ui.event+proto;q=0.5",
    ] {
        let res = post_accepting(addr, "/agent", accept, &input("t", "x")).await;
        assert_sse(&res, accept);
    }
}

#[tokio::test]
async fn protobuf_runs_end_with_run_error_too() {
    let server =
        aguikit_server::AgentServer::new(aguikit_server::agent_fn(|_i, _ctx| async move {
            Err(aguikit_server::AgentError::new("nope").with_code("x"))
        }))
        .path("/agent");
    let addr = spawn(&server).await;
    let (_, events) = proto_events(addr, PROTO_FIRST, &input("t", "x")).await;
    assert!(matches!(events.last(), Some(Event::RunError(e)) if e.code.as_deref() == Some("x")));
}

/// With a store, a protobuf response carries the run's events as they are stored (the
/// stored RUN_STARTED first), in protobuf frames.
#[cfg(feature = "store")]
#[tokio::test]
async fn protobuf_runs_with_a_store_carry_the_stored_events() {
    use aguikit_server::StoreOptions;
    use aguikit_server::aguikit_store::{EventStore, MemoryStore};
    let store = std::sync::Arc::new(MemoryStore::new());
    let server = every_emitter::server().store(StoreOptions::new(store.clone()));
    let addr = spawn(&server).await;
    let (ct, events) = proto_events(addr, PROTO_FIRST, &input("t-proto-store", "hello")).await;
    assert_eq!(ct.as_deref(), Some("application/vnd.ag-ui.event+proto"));
    let stored = store.read("t-proto-store", 1).await.unwrap();
    let stored_types: Vec<&str> = stored.iter().map(|s| s.event.type_str()).collect();
    let proto_types: Vec<&str> = events.iter().map(Event::type_str).collect();
    assert_eq!(proto_types, stored_types);
    assert!(stored_types.len() > 10, "{stored_types:?}");
    let mut p = Pipeline::new();
    for e in events {
        p.push(e).unwrap();
    }
    p.finish().unwrap();
}
