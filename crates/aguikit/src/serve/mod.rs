//! `agui serve`: the demo agent (or, with `--openai-base-url`, a model behind an
//! OpenAI-compatible API, or with `--upstream URL` any AG-UI agent) at `POST /agent`, more
//! AG-UI agents at `POST /agents/NAME` (`--upstream NAME=URL`), listed by `GET /agents`, the
//! web console at `GET /` (its modules beside it), the rules page at `GET /rules`, the
//! console's verifier at `POST /api/inspect`, `GET /health`, `GET /metrics`.

mod args;
mod auth;
mod router;
mod site;
mod store;
#[cfg(test)]
mod tests;
mod upstream;

pub use args::ServeArgs;
pub use auth::{Auth, access, cors};
#[cfg(test)]
pub use router::router;
pub use router::{AgentInfo, Mounted, router_for};
pub use site::Site;
pub use store::default_store;
pub use upstream::{OpenAiOptions, upstream, upstream_specs};

use crate::demo::DemoAgent;
use crate::observe::{self, LogFormat};
use aguikit_a2ui::middleware::MiddlewareConfig;
use aguikit_server::a2ui::A2uiAgent;
use aguikit_server::{Agent, AgentServer, BoxedAgent, ServerConfig, StoreOptions, boxed};
use axum::Router;
use axum::routing::get;
use std::time::Duration;
use store::{default_threads, describe_store};

/// `agent`, behind the A2UI middleware when `a2ui` is set (offering the `render_a2ui` tool
/// when `offer_tool` is).
pub fn a2ui_agent(agent: impl Agent, a2ui: bool, offer_tool: bool) -> BoxedAgent {
    if !a2ui {
        return boxed(agent);
    }
    let config = MiddlewareConfig {
        inject_tool: offer_tool,
        ..MiddlewareConfig::default()
    };
    boxed(A2uiAgent::with_config(agent, config))
}

/// Binds, prints the URL on standard output, serves until Ctrl-C or SIGTERM.
pub async fn serve(args: ServeArgs) -> Result<(), String> {
    observe::init_logging(args.log_format, &args.log_level)?;
    let auth = Auth::resolve(&args, std::env::var("AGUI_TOKEN").ok())?;
    let cors = cors(&args.cors_origins)?;
    let specs = upstream_specs(&args.upstreams, &args.upstream_headers)?;
    let mut upstreams = Vec::new();
    for spec in &specs {
        upstreams.push((spec.name.clone(), upstream(spec, &args)?));
    }
    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let openai = args
        .openai_base_url
        .clone()
        .zip(args.model.clone())
        .map(|(base_url, model)| OpenAiOptions {
            base_url,
            model,
            api_key_env: args.api_key_env.clone(),
            system_prompt: args.system_prompt.clone(),
        });
    let main_upstream = upstreams
        .iter()
        .position(|(name, _)| name.is_none())
        .map(|i| upstreams.remove(i).1);
    let a2ui_note = if args.a2ui { ", with A2UI" } else { "" };
    let (agent, about, info) = match (&openai, main_upstream) {
        (_, Some(up)) => {
            let about = format!("upstream {}{a2ui_note}", up.url());
            let info = AgentInfo::main("upstream", Some(up.url().to_owned()));
            (a2ui_agent(up, args.a2ui, false), about, info)
        }
        (Some(o), None) => {
            let (agent, key_note) = o.agent()?;
            let about = format!(
                "model {} at {} ({key_note}){a2ui_note}",
                agent.model(),
                agent.endpoint()
            );
            (
                a2ui_agent(agent, args.a2ui, true),
                about,
                AgentInfo::main("openai", None),
            )
        }
        // The demo's A2UI scenarios are render_a2ui calls: the middleware paints them.
        (None, None) => (
            a2ui_agent(
                DemoAgent::new(Duration::from_millis(args.delay_ms)),
                true,
                false,
            ),
            "the demo agent".into(),
            AgentInfo::main("demo", None),
        ),
    };
    let mut mounted = vec![Mounted { agent, info }];
    let mut agent_lines = String::new();
    for (name, up) in upstreams {
        let name = name.unwrap_or_default();
        let path = format!("/agents/{name}");
        agent_lines.push_str(&format!(
            "\n  agent    POST http://{addr}{path}: upstream {}{a2ui_note}",
            up.url()
        ));
        mounted.push(Mounted {
            info: AgentInfo {
                name,
                path,
                kind: "upstream",
                upstream: Some(up.url().to_owned()),
            },
            agent: a2ui_agent(up, args.a2ui, false),
        });
    }
    let metrics = observe::install_metrics()?;
    let (metrics_route, metrics_line) = match &args.metrics_listen {
        None => (
            Some(metrics.clone()),
            format!("http://{addr}/metrics (with the API token)"),
        ),
        Some(at) => {
            let l = tokio::net::TcpListener::bind(at)
                .await
                .map_err(|e| format!("--metrics-listen {at}: {e}"))?;
            let at = l.local_addr().map_err(|e| e.to_string())?;
            let handle = metrics.clone();
            let app = Router::new().route(
                "/metrics",
                get(move || {
                    let handle = handle.clone();
                    async move { observe::render(&handle) }
                }),
            );
            tokio::spawn(async move {
                if let Err(e) = axum::serve(l, app).await {
                    tracing::error!("the metrics listener stopped: {e}");
                }
            });
            (None, format!("http://{at}/metrics (no token)"))
        }
    };
    let (locator, warning) = match &args.store {
        Some(l) => (l.clone(), None),
        None => default_store(
            std::env::var("XDG_DATA_HOME").ok().as_deref(),
            std::env::var("HOME").ok().as_deref(),
        )?,
    };
    if let Some(w) = warning {
        eprintln!("agui serve: {w}");
    }
    refuse_unusable_locator(&locator)?;
    let store = aguikit_store::open(&locator)
        .await
        .map_err(|e| format!("--store {}: {e}", describe_store(&locator)))?;
    store.check_integrity().await.map_err(|e| {
        format!(
            "--store {}: the store failed its integrity check, so agui serve will not start on it: {e}",
            describe_store(&locator)
        )
    })?;
    probe_store(&*store).await.map_err(|e| {
        format!(
            "--store {}: the store cannot be written and read back, so agui serve will not start on it: {e}",
            describe_store(&locator)
        )
    })?;
    let site = Site {
        access: access(&args, &auth),
        cors,
        config: ServerConfig::default()
            .shutdown_grace(args.shutdown_grace_secs)
            .header_read_timeout(args.header_timeout_secs)
            .max_connections(args.max_connections)
            .connection_threads(args.threads.unwrap_or_else(|| default_threads(&locator)))
            .max_body_bytes(args.max_body_bytes)
            .body_timeout(args.body_timeout_secs)
            .min_body_rate(args.min_body_rate),
    };
    let (router, servers) = router_for(
        mounted,
        Some(
            StoreOptions::new(store)
                .cancel_on_disconnect(args.cancel_on_disconnect)
                .lease(args.run_lease_secs)
                .max_run_bytes(args.max_run_bytes),
        ),
        site,
        metrics_route,
    );
    let loopback = addr.ip().is_loopback();
    if !loopback {
        eprintln!(
            "agui serve: warning: listening on {addr}, which is not a loopback address: other machines can reach this server"
        );
    }
    if matches!(auth, Auth::Off) {
        if loopback {
            eprintln!(
                "agui serve: authentication is off (--no-auth): any program on this machine can run the agent and read every thread"
            );
        } else {
            eprintln!(
                "\n  !!! WARNING: authentication is off (--no-auth) on a non-loopback listener ({addr}):\n  !!! ANYONE WHO CAN REACH THIS PORT CAN RUN THE AGENT AND READ EVERY STORED THREAD.\n"
            );
        }
    }
    // The banner goes out once; a closed stdout (`agui serve | head -1`) must not take the
    // server down, so write errors are ignored rather than panicking as `println!` would.
    {
        use std::io::Write;
        let mode = if args.cancel_on_disconnect {
            " (runs are cancelled when their client disconnects)"
        } else {
            " (runs outlive their clients)"
        };
        // A token agui serve drew is shown (nobody else knows it); one the operator gave
        // is not: the banner ends up in terminals' scrollback, CI logs and journals.
        let console = match &auth {
            Auth::Off => format!("http://{addr}/"),
            Auth::Single { token, drawn: true } => format!("http://{addr}/#token={token}"),
            Auth::Single { drawn: false, .. } | Auth::File(_) => {
                format!("http://{addr}/#token=YOUR_TOKEN")
            }
        };
        let auth_line = match &auth {
            Auth::Off => "off (--no-auth)".to_owned(),
            Auth::Single { drawn: true, .. } => {
                "bearer token (in the console URL; AGUI_TOKEN=... for the agui commands)".to_owned()
            }
            Auth::Single { drawn: false, .. } => {
                "bearer token from $AGUI_TOKEN (not shown; put it after #token= in the console URL)"
                    .to_owned()
            }
            Auth::File(t) => format!("{} named tokens from --token-file", t.len()),
        };
        let mut out = std::io::stdout().lock();
        let _ = writeln!(
            out,
            "agui serve: listening on http://{addr}/\n  console  {console}\n  agent    POST http://{addr}/agent: {about}{agent_lines}\n  agents   GET http://{addr}/agents\n  threads  GET http://{addr}/agent/threads, GET|DELETE .../threads/ID, GET .../threads/ID/connect\n  store    {}{mode}\n  auth     {auth_line}\n  health   http://{addr}/health\n  metrics  {metrics_line}\nPress Ctrl-C to stop.",
            describe_store(&locator)
        );
        let _ = out.flush();
    }
    aguikit_server::serve(
        listener,
        router,
        servers.iter().map(AgentServer::shutdown_handle),
        aguikit_server::shutdown_signal(),
    )
    .await
    .map_err(|e| e.to_string())
}

/// Refuses a store locator that opens but cannot keep anything: `sqlite:` without a path,
/// or an in-memory SQLite name (each connection of the pool would get a database of its
/// own: writes land in one, reads look in another). `--store memory` is the in-memory
/// store.
fn refuse_unusable_locator(locator: &str) -> Result<(), String> {
    if let Some(path) = locator.strip_prefix("sqlite:") {
        let path = path.trim();
        if path.is_empty() {
            return Err(
                "--store sqlite: needs a path (sqlite:PATH, e.g. sqlite:agui.sqlite3); for a store in memory use --store memory".into(),
            );
        }
        if path == ":memory:" || path.starts_with("file::memory:") || path.contains("mode=memory") {
            return Err(format!(
                "--store sqlite:{path} is an in-memory SQLite database, which each connection would see empty; use --store memory"
            ));
        }
    }
    Ok(())
}

/// Writes a short run to a thread of its own, reads it back and deletes the thread: a
/// store that cannot do this (tables missing, a file it cannot write) is refused at start
/// instead of answering every request with an error.
async fn probe_store(store: &dyn aguikit_store::EventStore) -> Result<(), String> {
    use aguikit_core::Event;
    use aguikit_core::event::{RunFinished, RunStarted};
    let thread = format!("agui-startup-probe-{}", aguikit_core::id::random_hex(16));
    let events: [Event; 2] = [
        RunStarted::new(thread.clone(), "probe").into(),
        RunFinished::new(thread.clone(), "probe").into(),
    ];
    let outcome = async {
        store
            .append(&thread, "probe", &events)
            .await
            .map_err(|e| format!("writing: {e}"))?;
        let back = store
            .read(&thread, 1)
            .await
            .map_err(|e| format!("reading back: {e}"))?;
        let types: Vec<_> = back.iter().map(|e| e.event.event_type()).collect();
        let wrote: Vec<_> = events.iter().map(Event::event_type).collect();
        if types != wrote {
            return Err(format!(
                "reading back gave {} event(s) instead of the {} written",
                back.len(),
                events.len()
            ));
        }
        Ok(())
    }
    .await;
    let deleted = store.delete_thread(&thread).await;
    outcome?;
    deleted
        .map(|_| ())
        .map_err(|e| format!("deleting the probe: {e}"))
}
