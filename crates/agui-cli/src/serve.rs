//! `agui serve`: the demo agent (or, with `--openai-base-url`, a model behind an
//! OpenAI-compatible API) at `POST /agent`, the web console at `GET /`, `GET /health`.

use crate::demo::DemoAgent;
use agui_openai::OpenAiAgent;
use agui_server::{AgentServer, BoxedAgent, CorsLayer, ServerConfig, StoreOptions, boxed};
use axum::Router;
use axum::http::header;
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use std::time::Duration;

/// Options of `agui serve`.
pub struct ServeOptions {
    /// `ADDR:PORT` to listen on (port 0 picks a free one).
    pub listen: String,
    /// Pause between the demo agent's streamed pieces.
    pub delay: Duration,
    /// Serve this model instead of the demo agent.
    pub openai: Option<OpenAiOptions>,
    /// The store locator (`memory`, `sqlite:PATH`, `postgres://...`); `None`: the default.
    pub store: Option<String>,
    /// Cancel a run when its client disconnects instead of letting it go on.
    pub cancel_on_disconnect: bool,
    /// How long a run's lease lasts (see [`StoreOptions::lease`]).
    pub run_lease: Duration,
}

/// The default store: SQLite in the user's data directory (created if missing), or memory
/// (with a warning) when neither `$XDG_DATA_HOME` nor `$HOME` is set. Returns the locator
/// and, for the memory fallback, a warning to print.
pub fn default_store(
    xdg_data_home: Option<&str>,
    home: Option<&str>,
) -> Result<(String, Option<String>), String> {
    let dir = match (
        xdg_data_home.filter(|s| !s.is_empty()),
        home.filter(|s| !s.is_empty()),
    ) {
        (Some(xdg), _) => std::path::PathBuf::from(xdg).join("agui"),
        (None, Some(home)) => std::path::PathBuf::from(home).join(".local/share/agui"),
        (None, None) => {
            return Ok((
                "memory".into(),
                Some(
                    "warning: neither $XDG_DATA_HOME nor $HOME is set; threads are kept in memory \
                     and lost when the server stops (use --store sqlite:PATH to keep them)"
                        .into(),
                ),
            ));
        }
    };
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok((
        format!("sqlite:{}", dir.join("agui.sqlite3").display()),
        None,
    ))
}

/// The store as shown in the startup lines: a PostgreSQL URL without its password.
fn describe_store(locator: &str) -> String {
    if let Some((scheme, rest)) = locator.split_once("://")
        && let Some((userinfo, host)) = rest.split_once('@')
        && let Some((user, _password)) = userinfo.split_once(':')
    {
        return format!("{scheme}://{user}:***@{host}");
    }
    locator.to_owned()
}

/// Options of `agui serve --openai-base-url`.
pub struct OpenAiOptions {
    /// The API's base URL (`.../v1`).
    pub base_url: String,
    /// The model to ask for.
    pub model: String,
    /// The environment variable holding the API key.
    pub api_key_env: String,
    /// A system prompt sent before every conversation.
    pub system_prompt: Option<String>,
}

impl OpenAiOptions {
    /// The agent, with the API key read from the environment (unset or empty: none), and
    /// a line saying where the key came from (never the key).
    pub fn agent(&self) -> Result<(OpenAiAgent, String), String> {
        let mut builder = OpenAiAgent::builder(&self.base_url, &self.model);
        let var = &self.api_key_env;
        let key_note = match std::env::var(var) {
            Ok(key) if !key.is_empty() => {
                builder = builder.api_key(key);
                format!("API key from ${var}")
            }
            _ => format!("no API key (${var} is not set)"),
        };
        if let Some(prompt) = &self.system_prompt {
            builder = builder.system_prompt(prompt);
        }
        let agent = builder
            .build()
            .map_err(|e| format!("--openai-base-url: {e}"))?;
        Ok((agent, key_note))
    }
}

/// The console's files, embedded in the binary.
mod assets {
    pub const INDEX: &str = include_str!("../console/index.html");
    pub const APP: &str = include_str!("../console/app.js");
    pub const STYLE: &str = include_str!("../console/style.css");
}

/// The router: the agent (with its thread routes when there is a store), the console and
/// the health check.
pub fn router(agent: BoxedAgent, store: Option<StoreOptions>) -> (Router, AgentServer) {
    let mut agent = AgentServer::from_boxed(agent)
        .config(ServerConfig::default())
        .path("/agent")
        .cors(CorsLayer::permissive());
    if let Some(store) = store {
        agent = agent.store(store);
    }
    let router = Router::new()
        .route("/", get(|| async { Html(assets::INDEX) }))
        .route(
            "/app.js",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
                    assets::APP,
                )
            }),
        )
        .route(
            "/style.css",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
                    assets::STYLE,
                )
            }),
        )
        .route("/health", get(health))
        // The agent at /agent and, with a store, its thread routes under /agent/threads.
        .merge(agent.router());
    (router, agent)
}

async fn health() -> impl IntoResponse {
    axum::Json(serde_json::json!({"status": "ok", "protocolVersion": agui_core::PROTOCOL_VERSION}))
}

/// Binds, prints the URL on standard output, serves until Ctrl-C.
pub async fn serve(opts: ServeOptions) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind(&opts.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", opts.listen))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let (agent, about) = match &opts.openai {
        Some(o) => {
            let (agent, key_note) = o.agent()?;
            let about = format!(
                "model {} at {} ({key_note})",
                agent.model(),
                agent.endpoint()
            );
            (boxed(agent), about)
        }
        None => (boxed(DemoAgent::new(opts.delay)), "the demo agent".into()),
    };
    let (locator, warning) = match &opts.store {
        Some(l) => (l.clone(), None),
        None => default_store(
            std::env::var("XDG_DATA_HOME").ok().as_deref(),
            std::env::var("HOME").ok().as_deref(),
        )?,
    };
    if let Some(w) = warning {
        eprintln!("agui serve: {w}");
    }
    let store = agui_store::open(&locator)
        .await
        .map_err(|e| format!("--store {}: {e}", describe_store(&locator)))?;
    let (router, agent) = router(
        agent,
        Some(
            StoreOptions::new(store)
                .cancel_on_disconnect(opts.cancel_on_disconnect)
                .lease(opts.run_lease),
        ),
    );
    // The banner goes out once; a closed stdout (`agui serve | head -1`) must not take the
    // server down, so write errors are ignored rather than panicking as `println!` would.
    {
        use std::io::Write;
        let mode = if opts.cancel_on_disconnect {
            " (runs are cancelled when their client disconnects)"
        } else {
            " (runs outlive their clients)"
        };
        let mut out = std::io::stdout().lock();
        let _ = writeln!(
            out,
            "agui serve: listening on http://{addr}/\n  console  http://{addr}/\n  agent    POST http://{addr}/agent: {about}\n  threads  GET http://{addr}/agent/threads, GET .../threads/ID/connect\n  store    {}{mode}\n  health   http://{addr}/health\nPress Ctrl-C to stop.",
            describe_store(&locator)
        );
        let _ = out.flush();
    }
    agui_server::serve(
        listener,
        router,
        [agent.shutdown_handle()],
        agui_server::shutdown_signal(),
    )
    .await
    .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
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
        let (router, _server) = router(boxed(agent), None);
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
        assert_eq!(seen[0].0.as_deref(), Some("Bearer agui-cli"));
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
}
