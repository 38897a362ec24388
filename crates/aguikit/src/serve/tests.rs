//! Tests of `agui serve`'s parts: options, auth, the router and its security headers.

use super::*;
use aguikit_gateway::Upstream;
use axum::http::header;
use axum::routing::post;
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};

/// Posts `body` to `path` over a plain socket (blocking, on a blocking thread) and
/// returns the whole response.
async fn http(addr: std::net::SocketAddr, method: &str, path: &str, body: &str) -> String {
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: text/event-stream\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    tokio::task::spawn_blocking(move || {
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        let mut out = Vec::new();
        s.read_to_end(&mut out).unwrap();
        String::from_utf8_lossy(&out).into_owned()
    })
    .await
    .unwrap()
}

/// What the model server saw: the `Authorization` header and the body.
type Seen = (Option<String>, serde_json::Value);

async fn listen(router: Router) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    addr
}

#[tokio::test]
async fn openai_options_serve_the_model_at_agent() {
    // A model server on loopback that records the Authorization header and the body.
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let record = seen.clone();
    let model = Router::new().route(
        "/v1/chat/completions",
        post(move |headers: axum::http::HeaderMap, body: String| {
            let record = record.clone();
            async move {
                let auth = headers
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                record
                    .lock()
                    .unwrap()
                    .push((auth, serde_json::from_str(&body).unwrap()));
                (
                    [(header::CONTENT_TYPE, "text/event-stream")],
                    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi from the model\"}}]}\n\n\
                     data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n\
                     data: [DONE]\n\n",
                )
            }
        }),
    );
    let model_addr = listen(model).await;
    let options = OpenAiOptions {
        base_url: format!("http://{model_addr}/v1"),
        model: "tiny".into(),
        // Set by cargo for every test run: stands in for a real key variable.
        api_key_env: "CARGO_PKG_NAME".into(),
        system_prompt: Some("Be kind.".into()),
    };
    let (agent, note) = options.agent().unwrap();
    assert_eq!(note, "API key from $CARGO_PKG_NAME");
    let (router, _server) = router(boxed(agent), None, Site::default());
    let addr = listen(router).await;

    let input = r#"{"threadId":"t","runId":"r","messages":[{"id":"u1","role":"user","content":"Hello"}],"tools":[],"context":[]}"#;
    let response = http(addr, "POST", "/agent", input).await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(
        response.contains(r#""delta":"Hi from the model""#),
        "{response}"
    );
    assert!(response.contains(r#""type":"RUN_FINISHED""#), "{response}");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].0.as_deref(), Some("Bearer aguikit"));
    assert_eq!(seen[0].1["model"], "tiny");
    assert_eq!(
        seen[0].1["messages"],
        serde_json::json!([
            {"role": "system", "content": "Be kind."},
            {"role": "user", "content": "Hello"}
        ])
    );

    // The console and the health check are still there.
    let health = http(addr, "GET", "/health", "").await;
    assert!(health.contains(r#""status":"ok""#), "{health}");
    let page = http(addr, "GET", "/", "").await;
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
}

#[test]
fn connection_threads_follow_the_cores_except_with_postgres() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(default_threads("memory"), cores);
    assert_eq!(default_threads("sqlite:/data/agui.sqlite3"), cores);
    assert_eq!(default_threads("postgres://u@127.0.0.1/db"), 0);
    assert_eq!(default_threads("postgresql://u@127.0.0.1/db"), 0);
}

#[test]
fn the_default_store_is_sqlite_in_the_data_directory() {
    let base = std::env::temp_dir().join(format!("agui-default-store-{}", std::process::id()));
    let xdg = base.join("xdg");
    let (l, w) = default_store(Some(xdg.to_str().unwrap()), Some("/nonexistent")).unwrap();
    assert_eq!(
        l,
        format!("sqlite:{}", xdg.join("agui/agui.sqlite3").display())
    );
    assert!(w.is_none());
    assert!(xdg.join("agui").is_dir());
    let home = base.join("home");
    let (l, _) = default_store(Some(""), Some(home.to_str().unwrap())).unwrap();
    assert_eq!(
        l,
        format!(
            "sqlite:{}",
            home.join(".local/share/agui/agui.sqlite3").display()
        )
    );
    assert!(home.join(".local/share/agui").is_dir());
    let (l, w) = default_store(None, None).unwrap();
    assert_eq!(l, "memory");
    assert!(w.unwrap().contains("in memory"));
    let _ = std::fs::remove_dir_all(base);
    assert_eq!(
        describe_store("postgres://u:secret@127.0.0.1/test"),
        "postgres://u:***@127.0.0.1/test"
    );
}

#[test]
fn upstream_options_parse() {
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let specs = upstream_specs(
        &v(&[
            "http://127.0.0.1:1/a?x=1",
            "py=http://127.0.0.1:2/agent",
            "ts_2=https://h.example/agent",
        ]),
        &v(&["X-All: 1", "py=Authorization: Bearer abc:def"]),
    )
    .unwrap();
    assert_eq!(specs.len(), 3);
    assert_eq!(specs[0].name, None);
    assert_eq!(specs[0].url, "http://127.0.0.1:1/a?x=1");
    assert_eq!(specs[1].name.as_deref(), Some("py"));
    assert_eq!(
        specs[1].headers,
        [
            ("X-All".to_owned(), "1".to_owned()),
            ("Authorization".to_owned(), "Bearer abc:def".to_owned())
        ]
    );
    assert_eq!(specs[2].headers.len(), 1);
    for (ups, headers, says) in [
        (&["http://a/1", "http://b/2"][..], &[][..], "only one"),
        (&["py=http://a/1", "py=http://b/2"][..], &[][..], "twice"),
        (&["bad name=http://a/1"][..], &[][..], "name"),
        (&["127.0.0.1:8000"][..], &[][..], "NAME=URL"),
        (
            &["py=http://a/1"][..],
            &["nope=X: 1"][..],
            "no upstream is named",
        ),
        (&["py=http://a/1"][..], &["no colon"][..], "':'"),
        (&[][..], &["X: 1"][..], "needs an --upstream"),
    ] {
        let e = upstream_specs(&v(ups), &v(headers)).unwrap_err();
        assert!(e.contains(says), "{ups:?} {headers:?}: {e}");
    }
}

#[tokio::test]
async fn the_agents_listing_names_each_agent_and_its_path() {
    let up = Upstream::builder("py", "http://u:p@127.0.0.1:1/agent")
        .build()
        .unwrap();
    let agents = vec![
        Mounted {
            agent: boxed(DemoAgent::new(Duration::ZERO)),
            info: AgentInfo::main("demo", None),
        },
        Mounted {
            info: AgentInfo {
                name: "py".into(),
                path: "/agents/py".into(),
                kind: "upstream",
                upstream: Some(up.url().to_owned()),
            },
            agent: boxed(up),
        },
    ];
    let (router, servers) = router_for(agents, None, Site::default(), None);
    assert_eq!(servers.len(), 2);
    let addr = listen(router).await;
    let listing = http(addr, "GET", "/agents", "").await;
    assert!(listing.starts_with("HTTP/1.1 200"), "{listing}");
    let body: serde_json::Value =
        serde_json::from_str(listing.split_once("\r\n\r\n").unwrap().1).unwrap();
    assert_eq!(
        body,
        serde_json::json!({"agents": [
            {"name": "agent", "path": "/agent", "kind": "demo"},
            {"name": "py", "path": "/agents/py", "kind": "upstream", "upstream": "http://127.0.0.1:1/agent"}
        ]})
    );
    // The upstream cannot be reached: the run ends with its code.
    let input = r#"{"threadId":"t","runId":"r","messages":[],"tools":[],"context":[]}"#;
    let run = http(addr, "POST", "/agents/py", input).await;
    assert!(run.contains(r#""code":"upstream_unreachable""#), "{run}");
    // No metrics route unless asked for.
    assert!(
        http(addr, "GET", "/metrics", "")
            .await
            .starts_with("HTTP/1.1 404")
    );
}

#[test]
fn a_missing_key_variable_means_no_key() {
    let options = OpenAiOptions {
        base_url: "http://127.0.0.1:1/v1".into(),
        model: "m".into(),
        api_key_env: "AGUI_TEST_SURELY_UNSET_KEY_VARIABLE".into(),
        system_prompt: None,
    };
    let (_, note) = options.agent().unwrap();
    assert_eq!(
        note,
        "no API key ($AGUI_TEST_SURELY_UNSET_KEY_VARIABLE is not set)"
    );
}
