//! `agui serve`: the demo agent at `POST /agent`, the web console at `GET /`, `GET /health`.

use crate::demo::DemoAgent;
use agui_server::{AgentServer, CorsLayer, RouterExt, ServerConfig};
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
}

/// The console's files, embedded in the binary.
mod assets {
    pub const INDEX: &str = include_str!("../console/index.html");
    pub const APP: &str = include_str!("../console/app.js");
    pub const STYLE: &str = include_str!("../console/style.css");
}

/// The router: the agent, the console and the health check.
pub fn router(delay: Duration) -> (Router, AgentServer) {
    let agent = AgentServer::new(DemoAgent::new(delay))
        .config(ServerConfig::default())
        .path("/agent")
        .cors(CorsLayer::permissive());
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
        .agent("/agent", &agent);
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
    let (router, agent) = router(opts.delay);
    println!("agui serve: listening on http://{addr}/");
    println!("  console  http://{addr}/");
    println!("  agent    POST http://{addr}/agent");
    println!("  health   http://{addr}/health");
    println!("Press Ctrl-C to stop.");
    use std::io::Write;
    let _ = std::io::stdout().flush();
    agui_server::serve(
        listener,
        router,
        [agent.shutdown_handle()],
        agui_server::shutdown_signal(),
    )
    .await
    .map_err(|e| e.to_string())
}
