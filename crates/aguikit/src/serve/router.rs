//! The router of `agui serve`: the agents and their thread routes, `GET /agents`, the
//! console, the rules page, `/api/inspect`, `/metrics` and `/health`.

use super::site::{Site, assets, security_headers};
use crate::observe;
use aguikit_server::{AgentServer, BoxedAgent, StoreOptions};
use axum::Router;
use axum::http::header;
use axum::response::{Html, IntoResponse};
use axum::routing::{get, post};
use std::time::Duration;

/// Where the main agent is mounted (the others at `/agents/NAME`).
const MAIN_PATH: &str = "/agent";

/// An agent `agui serve` mounts, and what `GET /agents` says of it.
pub struct Mounted {
    /// The agent.
    pub agent: BoxedAgent,
    /// Its entry in `GET /agents`.
    pub info: AgentInfo,
}

/// One entry of `GET /agents`: what a client (an agent picker) needs to call an agent.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AgentInfo {
    /// `agent` for the one at `/agent`, else the `NAME` of `--upstream NAME=URL`.
    pub name: String,
    /// Where to `POST` runs (threads under `PATH/threads`).
    pub path: String,
    /// `demo`, `openai` or `upstream`.
    pub kind: &'static str,
    /// An upstream's URL, without credentials.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream: Option<String>,
}

impl AgentInfo {
    /// The entry of the agent at `/agent`.
    pub fn main(kind: &'static str, upstream: Option<String>) -> AgentInfo {
        AgentInfo {
            name: "agent".into(),
            path: MAIN_PATH.into(),
            kind,
            upstream,
        }
    }
}

/// The router: the agent (with its thread routes when there is a store), the console and
/// the health check (which reports the store's state). The console's files and `/health`
/// need no token; everything under `/agent` does when `site.access` has authentication.
#[cfg(test)]
pub fn router(agent: BoxedAgent, store: Option<StoreOptions>, site: Site) -> (Router, AgentServer) {
    let main = Mounted {
        agent,
        info: AgentInfo::main("demo", None),
    };
    let (router, mut servers) = router_for(vec![main], store, site, None);
    (router, servers.remove(0))
}

/// The router of several agents, each at its `info.path` with its thread routes (sharing
/// `store`), `GET /agents` listing them, and `GET /metrics` when `metrics` is given; those
/// two need the API token like the agents. Returns the agents' servers too (their shutdown
/// handles), in the order given.
pub fn router_for(
    agents: Vec<Mounted>,
    store: Option<StoreOptions>,
    site: Site,
    metrics: Option<metrics_exporter_prometheus::PrometheusHandle>,
) -> (Router, Vec<AgentServer>) {
    let probe = store.as_ref().map(|s| s.store.clone());
    let infos: Vec<AgentInfo> = agents.iter().map(|m| m.info.clone()).collect();
    let servers: Vec<AgentServer> = agents
        .into_iter()
        .map(|m| {
            let mut server = AgentServer::from_boxed(m.agent)
                .config(site.config.clone())
                .path(m.info.path.clone())
                .access(site.access.clone());
            if let Some(cors) = &site.cors {
                server = server.cors(cors.clone());
            }
            if let Some(store) = &store {
                // The agents share the store, each named agent in a scope of its own:
                // `/agents/b/threads` lists b's threads only, and a thread of another agent
                // is unknown there. The agent at /agent keeps the unscoped threads (those
                // stored before agents had scopes among them).
                let store = match m.info.path == MAIN_PATH {
                    true => store.clone(),
                    false => store.clone().scope(m.info.name.clone()),
                };
                server = server.store(store);
            }
            server
        })
        .collect();
    let mut router = Router::new()
        .route("/", get(|| async { Html(assets::INDEX) }))
        .route("/index.html", get(|| async { Html(assets::INDEX) }))
        // The rules the engine checks, for people (the console links each violation to its
        // row) and as JSON.
        .route("/rules", get(|| async { Html(crate::rules::html()) }))
        .route(
            "/rules.json",
            get(|| async { axum::Json(crate::rules::json()) }),
        )
        .route(
            aguikit_server::HEALTH_PATH,
            get(move || health(probe.clone())),
        );
    for &(path, content_type, text) in assets::FILES {
        router = router.route(
            path,
            get(move || async move { ([(header::CONTENT_TYPE, content_type)], text) }),
        );
    }
    if let Some(guard) = servers.first() {
        // The console's debugger: the engine reads and verifies a recording (with the token),
        // a limited number at once.
        let inspect_limits = crate::inspect_api::Limits::default();
        let inspect_server = guard.clone();
        router = router.route(
            "/api/inspect",
            guard.guarded(post(move |request: axum::extract::Request| {
                crate::inspect_api::handler(inspect_server.clone(), inspect_limits.clone(), request)
            })),
        );
        let listing = serde_json::json!({ "agents": infos });
        router = router.route(
            "/agents",
            guard.guarded(get(move || {
                let listing = listing.clone();
                async move { axum::Json(listing) }
            })),
        );
        if let Some(handle) = metrics {
            router = router.route(
                "/metrics",
                guard.guarded(get(move || {
                    let handle = handle.clone();
                    async move { observe::render(&handle) }
                })),
            );
        }
    }
    // Each agent at its path and, with a store, its thread routes under PATH/threads.
    for server in &servers {
        router = router.merge(server.router());
    }
    let router = router.layer(axum::middleware::map_response(security_headers));
    (router, servers)
}

/// `GET /health`: `200 {"status":"ok",...}`, or `503` with `"status":"degraded"` and the
/// store's error when the store does not answer or cannot read its threads.
async fn health(
    store: Option<std::sync::Arc<dyn aguikit_store::EventStore>>,
) -> axum::response::Response {
    let base =
        serde_json::json!({"status": "ok", "protocolVersion": aguikit_core::PROTOCOL_VERSION});
    let Some(store) = store else {
        return axum::Json(base).into_response();
    };
    // The trivial query, then a read of the threads: a database that answers but has lost
    // its tables (or never had them) is not a working store.
    let probe = async {
        store.health().await?;
        let one = aguikit_store::ThreadQuery {
            limit: 1,
            ..Default::default()
        };
        store.list_threads(&one).await.map(|_| ())
    };
    match tokio::time::timeout(Duration::from_secs(2), probe).await {
        Ok(Ok(())) => {
            let mut body = base;
            body["store"] = "ok".into();
            axum::Json(body).into_response()
        }
        outcome => {
            let why = match outcome {
                Ok(Err(e)) => e.to_string(),
                _ => "the store did not answer within 2 s".into(),
            };
            (
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                axum::Json(serde_json::json!({
                    "status": "degraded",
                    "protocolVersion": aguikit_core::PROTOCOL_VERSION,
                    "store": why,
                })),
            )
                .into_response()
        }
    }
}
