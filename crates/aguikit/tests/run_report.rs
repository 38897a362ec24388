//! The library side of `agui run`: `run_report` and `render_run` against a scripted
//! loopback server; with `continue_thread`, the stored history is loaded and sent whole,
//! with the new user message under a fresh id; an unknown thread, or a server without
//! stored threads, starts a new one under the id given.
#![allow(missing_docs)]

use aguikit::report::{RunOptions, render_run, run_report};
use aguikit_core::Role;
use aguikit_peers::scripted::{chat, chat_types, serve};
use aguikit_server::aguikit_store::MemoryStore;
use aguikit_server::{AgentServer, Finish, StoreOptions, agent_fn};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

/// An agent that answers with the number of messages it was sent and keeps a turn count in
/// the state; stored in memory when `store`.
async fn server(store: bool) -> String {
    let agent = agent_fn(|input, ctx| async move {
        let turns = input
            .state
            .as_ref()
            .and_then(|s| s["turns"].as_u64())
            .unwrap_or(0);
        ctx.state_snapshot(serde_json::json!({"turns": turns + 1}))
            .await?;
        let m = ctx.text_message().start().await?;
        m.delta(format!("{} messages", input.messages.len()))
            .await?;
        m.end().await?;
        Ok(Finish::success())
    });
    let mut server = AgentServer::new(agent).path("/agent");
    if store {
        server = server.store(StoreOptions::new(Arc::new(MemoryStore::new())));
    }
    let app = server.router();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/agent")
}

fn options(thread: &str, text: &str) -> RunOptions {
    RunOptions {
        text: Some(text.into()),
        thread_id: Some(thread.into()),
        continue_thread: true,
        timeout: Duration::from_secs(20),
        ..RunOptions::default()
    }
}

#[tokio::test]
async fn a_stored_thread_is_continued_with_its_whole_history() {
    let url = server(true).await;
    for (i, text) in ["one", "two", "three"].into_iter().enumerate() {
        let report = run_report(&url, &options("t", text)).await;
        assert!(report.run.ok, "{}", report.to_json_pretty());
        assert_eq!(report.run.status, "finished");
        assert_eq!(report.thread_id, "t");
        // The agent saw the conversation so far plus the new turn.
        let messages = report.messages.as_array().unwrap();
        assert_eq!(messages.len(), 2 * (i + 1));
        assert_eq!(
            messages.last().unwrap()["content"],
            format!("{} messages", 2 * i + 1)
        );
        // The state came back from the store and went to the agent.
        assert_eq!(report.state["turns"], i as u64 + 1);
    }
    let report = run_report(&url, &options("t", "four")).await;
    let messages: Vec<aguikit_core::Message> =
        serde_json::from_value(report.messages.clone()).unwrap();
    let users: Vec<&aguikit_core::Message> =
        messages.iter().filter(|m| m.role() == Role::User).collect();
    assert_eq!(
        users.iter().map(|m| m.text().unwrap()).collect::<Vec<_>>(),
        ["one", "two", "three", "four"]
    );
    let mut ids: Vec<&str> = users.iter().map(|m| m.id()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 4, "each turn has its own id");
}

#[tokio::test]
async fn an_unknown_thread_or_a_server_without_threads_starts_a_new_one() {
    for store in [true, false] {
        let url = server(store).await;
        let report = run_report(&url, &options("fresh", "hi")).await;
        assert!(report.run.ok, "{}", report.to_json_pretty());
        assert_eq!(report.thread_id, "fresh");
        assert_eq!(report.messages.as_array().unwrap().len(), 2);
        assert_eq!(report.messages[1]["content"], "1 messages");
    }
}

#[tokio::test]
async fn a_history_that_cannot_be_loaded_fails_before_the_run() {
    // Nothing listens on port 9 of loopback in tests.
    let report = run_report("http://127.0.0.1:9/agent", &options("t", "hi")).await;
    assert!(!report.run.ok);
    assert_eq!(report.run.status, "failed");
    assert_eq!(report.run.http_status, None);
    let error = report.run.error.unwrap();
    assert!(error.starts_with("loading thread t: "), "{error}");
    assert!(error.contains("/agent/threads/t/connect"), "{error}");
}

#[tokio::test]
async fn run_report_and_live_rendering() {
    let server = serve(|_, req| {
        let body = req.json();
        assert_eq!(body["forwardedProps"], json!({"scenario": "x"}));
        let user = &body["messages"][0];
        assert_eq!(
            (&user["role"], &user["content"]),
            (&json!("user"), &json!("yo"))
        );
        // A fresh v4 UUID, so that every turn of a stored thread keeps its own message.
        let id = user["id"].as_str().unwrap();
        let groups: Vec<usize> = id.split('-').map(str::len).collect();
        assert_eq!(groups, [8, 4, 4, 4, 12], "{id}");
        assert_eq!(&id[14..15], "4", "{id}");
        chat(body["runId"].as_str().unwrap(), "Hello")
    })
    .await;
    let options = RunOptions {
        text: Some("yo".into()),
        scenario: Some("x".into()),
        thread_id: Some("t".into()),
        run_id: Some("r1".into()),
        timeout: Duration::from_secs(10),
        ..RunOptions::default()
    };
    let report = run_report(&server.url, &options).await.to_value();
    assert_eq!(report["ok"], true);
    assert_eq!(report["terminal"], "RUN_FINISHED");
    assert_eq!(report["status"], "finished");
    assert_eq!(report["outcome"], "success");
    assert_eq!(report["httpStatus"], 200);
    assert_eq!(report["threadId"], "t");
    assert_eq!(report["mode"], "run");
    assert_eq!(report["transport"], "sse");
    assert_eq!(report["events"], json!(chat_types(1)));
    assert_eq!(report["messages"][1]["content"], "Hello");
    assert!(report.get("error").is_none());

    let mut out = Vec::new();
    let report = render_run(&server.url, &options, &mut out).await;
    assert_eq!(report.exit_code(), 0);
    let text = String::from_utf8(out).unwrap();
    assert_eq!(text, "── run r1\nassistant: Hello\n── finished\n");
}
