//! `agui serve`: the demo agent (or, with `--openai-base-url`, a model behind an
//! OpenAI-compatible API, or with `--upstream URL` any AG-UI agent) at `POST /agent`, more
//! AG-UI agents at `POST /agents/NAME` (`--upstream NAME=URL`), listed by `GET /agents`, the
//! web console at `GET /` (its modules beside it), the rules page at `GET /rules`, the
//! console's verifier at `POST /api/inspect`, `GET /health`, `GET /metrics`.

use crate::demo::DemoAgent;
use crate::observe::{self, LogFormat};
use aguikit_gateway::Upstream;
use aguikit_openai::OpenAiAgent;
use aguikit_server::AllowOrigin;
use aguikit_server::{
    Access, AgentServer, BoxedAgent, CorsLayer, ServerConfig, StoreOptions, Tokens, boxed,
};
use axum::Router;
use axum::http::{HeaderName, HeaderValue, Method, header};
use axum::response::{Html, IntoResponse};
use axum::routing::{get, post};
use std::time::Duration;

/// The options of `agui serve`.
#[derive(clap::Args)]
pub struct ServeArgs {
    /// Address to listen on (`ADDR:PORT`; port 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1:8000")]
    pub listen: String,
    /// Pause between the demo agent's streamed pieces, in milliseconds.
    #[arg(long, default_value_t = 40)]
    pub delay_ms: u64,
    /// Serve the model behind this OpenAI-compatible Chat Completions API instead of
    /// the demo agent (e.g. https://api.openai.com/v1, http://127.0.0.1:11434/v1).
    #[arg(long, value_name = "URL", requires = "model")]
    // The URLs are examples in the `--help` text, not links.
    #[allow(rustdoc::bare_urls)]
    pub openai_base_url: Option<String>,
    /// The model to ask for (with --openai-base-url).
    #[arg(long, value_name = "NAME", requires = "openai_base_url")]
    pub model: Option<String>,
    /// The environment variable holding the API key (unset or empty: no key is sent).
    #[arg(long, value_name = "VAR", default_value = "OPENAI_API_KEY")]
    pub api_key_env: String,
    /// A system prompt sent before every conversation (with --openai-base-url).
    #[arg(long, value_name = "TEXT", requires = "openai_base_url")]
    pub system_prompt: Option<String>,
    /// Where threads are kept: `memory`, `sqlite:PATH` or `postgres://...` (default: SQLite
    /// in the user's data directory, $XDG_DATA_HOME/agui/agui.sqlite3 or
    /// ~/.local/share/agui/agui.sqlite3).
    #[arg(long, value_name = "LOCATOR")]
    pub store: Option<String>,
    /// Cancel a run when the client that started it disconnects (default: the run goes
    /// on and can be resumed).
    #[arg(long)]
    pub cancel_on_disconnect: bool,
    /// Seconds a run's lease lasts without renewal: when a server dies mid-run, the
    /// run is closed with RUN_ERROR (code `abandoned`) once its lease has expired.
    #[arg(long, value_name = "SECS", default_value = "30", value_parser = parse_secs)]
    pub run_lease_secs: Duration,
    /// Serve without authentication: anyone who can reach the port can run the agent
    /// and read every thread. Default: a bearer token is required (from $AGUI_TOKEN,
    /// --token-file, or drawn at random and printed in the console's URL).
    #[arg(long, conflicts_with = "token_file")]
    pub no_auth: bool,
    /// A file of tokens: one `TOKEN` alone, or lines `NAME TOKEN [admin]`, each a
    /// principal that owns the threads it creates (admins see all).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<std::path::PathBuf>,
    /// Allow web pages of this origin (e.g. `https://app.example`) to call the API
    /// (CORS; repeatable). Default: none, the console is same-origin.
    #[arg(long = "cors-origin", value_name = "ORIGIN")]
    pub cors_origins: Vec<String>,
    /// Accept this `Host` name too on a loopback listener (repeatable); others get 421,
    /// which stops DNS rebinding.
    #[arg(long = "allowed-host", value_name = "NAME")]
    pub allowed_hosts: Vec<String>,
    /// Most runs one principal may start per minute (429 past it).
    #[arg(long, value_name = "N")]
    pub runs_per_minute: Option<u32>,
    /// Most runs one principal may have going at once (429 past it).
    #[arg(long, value_name = "N")]
    pub concurrent_runs: Option<usize>,
    /// Seconds running runs get to finish on Ctrl-C or SIGTERM before they are ended
    /// with RUN_ERROR (code `shutdown`).
    #[arg(long, value_name = "SECS", default_value = "5", value_parser = parse_secs)]
    pub shutdown_grace_secs: Duration,
    /// Seconds a client may take to send a request's head (also how long an idle
    /// kept-alive connection stays open).
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = parse_secs)]
    pub header_timeout_secs: Duration,
    /// Most client connections at once (default: derived from the file-descriptor
    /// limit). Past it, /health still answers and everything else gets 503.
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,
    /// Threads that serve connections, each running its own single-threaded runtime, so
    /// that a run and the tasks it starts stay on one thread; 0: connections share one
    /// work-stealing runtime. Default: one per core, or 0 with a PostgreSQL store (whose
    /// connections live on the shared runtime). At most 1024.
    #[arg(long, value_name = "N",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=1024))]
    pub threads: Option<usize>,
    /// Largest request body in bytes (413 past it).
    #[arg(long, value_name = "BYTES", default_value_t = 10 * 1024 * 1024)]
    pub max_body_bytes: usize,
    /// Serve the AG-UI agent at URL at /agent (instead of the demo agent); `NAME=URL`
    /// serves it at /agents/NAME (repeatable; GET /agents lists them). Its runs are stored,
    /// resumable and served in SSE or protobuf like the built-in agents'.
    #[arg(
        long = "upstream",
        value_name = "[NAME=]URL",
        conflicts_with = "openai_base_url"
    )]
    pub upstreams: Vec<String>,
    /// A header sent to the upstreams, e.g. their credentials (`'X-Api-Key: ...'`);
    /// `'NAME=Header: value'` for one upstream only (repeatable). The gateway's own token
    /// is never forwarded.
    #[arg(long = "upstream-header", value_name = "[NAME=]HEADER: VALUE")]
    pub upstream_headers: Vec<String>,
    /// What to ask upstreams for: `proto` (protobuf, accepting SSE) or `sse`.
    #[arg(long, default_value = "proto", value_parser = upstream_encoding_parser())]
    pub upstream_encoding: aguikit_client::WireFormat,
    /// Seconds to connect to an upstream (past it: RUN_ERROR `upstream_unreachable`).
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = parse_secs)]
    pub upstream_connect_timeout_secs: Duration,
    /// Seconds an upstream may take to its first event (RUN_ERROR
    /// `upstream_first_event_timeout`).
    #[arg(long, value_name = "SECS", default_value = "60", value_parser = parse_secs)]
    pub upstream_first_event_timeout_secs: Duration,
    /// Seconds an upstream may send no event (RUN_ERROR `upstream_idle_timeout`).
    #[arg(long, value_name = "SECS", default_value = "300", value_parser = parse_secs)]
    pub upstream_idle_timeout_secs: Duration,
    /// Serve GET /metrics on this address (`ADDR:PORT`, no token: keep it internal) instead
    /// of on the main listener, where it needs the API token.
    #[arg(long, value_name = "ADDR:PORT")]
    pub metrics_listen: Option<String>,
    /// Log lines on standard error: `text` or `json` (one object per line, with the run's
    /// thread and run ids).
    #[arg(long, value_enum, default_value = "text")]
    pub log_format: LogFormat,
    /// What to log: a level (`error`, `warn`, `info`, `debug`, `trace`, `off`) or targets
    /// (`warn,aguikit_server=debug`).
    #[arg(long, value_name = "FILTER", default_value = "info")]
    pub log_level: String,
}

/// The values of `--upstream-encoding`: what to ask upstreams for.
fn upstream_encoding_parser()
-> impl clap::builder::TypedValueParser<Value = aguikit_client::WireFormat> {
    crate::stream::wire_format_parser([
        (
            aguikit_client::WireFormat::Proto,
            "Protobuf, accepting SSE (servers that only speak SSE answer SSE)",
        ),
        (aguikit_client::WireFormat::Sse, "SSE only"),
    ])
}

/// One `--upstream`: its name (`None`: the agent at /agent) and URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamSpec {
    /// `NAME` of `NAME=URL`.
    pub name: Option<String>,
    /// The agent's URL.
    pub url: String,
    /// `(header, value)` pairs for this upstream.
    pub headers: Vec<(String, String)>,
}

/// Parses the `--upstream` and `--upstream-header` options: names are letters, digits,
/// `-` and `_`, each used once; at most one upstream without a name; a header scoped to a
/// name must name an upstream.
pub fn upstream_specs(
    upstreams: &[String],
    headers: &[String],
) -> Result<Vec<UpstreamSpec>, String> {
    let mut specs: Vec<UpstreamSpec> = Vec::new();
    for u in upstreams {
        let u = u.trim();
        let lower = u.to_ascii_lowercase();
        let (name, url) = if lower.starts_with("http://") || lower.starts_with("https://") {
            (None, u)
        } else {
            match u.split_once('=') {
                Some((name, url)) => (Some(name.trim()), url.trim()),
                None => {
                    return Err(format!(
                        "--upstream {u:?}: expected URL or NAME=URL with an http(s) URL"
                    ));
                }
            }
        };
        if let Some(n) = name {
            let ok = !n.is_empty()
                && n.len() <= 64
                && n.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
            if !ok {
                return Err(format!(
                    "--upstream {u:?}: the name must be 1 to 64 letters, digits, '-' or '_'"
                ));
            }
        }
        if specs.iter().any(|s| s.name.as_deref() == name) {
            return Err(match name {
                Some(n) => format!("--upstream: the name {n:?} is used twice"),
                None => "--upstream: only one upstream can be served at /agent; name the others (NAME=URL)".into(),
            });
        }
        specs.push(UpstreamSpec {
            name: name.map(str::to_owned),
            url: url.to_owned(),
            headers: Vec::new(),
        });
    }
    for h in headers {
        let Some((left, value)) = h.split_once(':') else {
            return Err(
                "--upstream-header: expected 'Header: value' or 'NAME=Header: value' (no ':' found)"
                    .into(),
            );
        };
        let (scope, header) = match left.split_once('=') {
            Some((scope, header)) => (Some(scope.trim()), header.trim()),
            None => (None, left.trim()),
        };
        let pair = (header.to_owned(), value.trim().to_owned());
        match scope {
            None => specs.iter_mut().for_each(|s| s.headers.push(pair.clone())),
            Some(scope) => match specs.iter_mut().find(|s| s.name.as_deref() == Some(scope)) {
                Some(s) => s.headers.push(pair),
                None => {
                    return Err(format!(
                        "--upstream-header {header}: no upstream is named {scope:?}"
                    ));
                }
            },
        }
    }
    if specs.is_empty() && !headers.is_empty() {
        return Err("--upstream-header needs an --upstream".into());
    }
    Ok(specs)
}

/// Builds the upstream agent of `spec` with the timeouts and encoding of `args`.
pub fn upstream(spec: &UpstreamSpec, args: &ServeArgs) -> Result<Upstream, String> {
    let mut b = Upstream::builder(spec.name.as_deref().unwrap_or("agent"), &spec.url)
        .encoding(args.upstream_encoding)
        .connect_timeout(args.upstream_connect_timeout_secs)
        .first_event_timeout(Some(args.upstream_first_event_timeout_secs))
        .idle_timeout(Some(args.upstream_idle_timeout_secs));
    for (name, value) in &spec.headers {
        b = b.header(name, value);
    }
    b.build().map_err(|e| format!("--upstream: {e}"))
}

/// A positive number of seconds (fractions allowed).
pub fn parse_secs(text: &str) -> Result<Duration, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| *s > 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| format!("{text:?} is not a positive number of seconds"))
}

/// How callers authenticate, as `agui serve` decides it from its options and environment.
pub enum Auth {
    /// `--no-auth`.
    Off,
    /// One token (given or drawn), shown in the console URL.
    Single(String),
    /// A tokens file with named principals.
    File(Tokens),
}

impl Auth {
    /// `--no-auth`, else `--token-file`, else `$AGUI_TOKEN`, else a random token.
    pub fn resolve(args: &ServeArgs, env_token: Option<String>) -> Result<Auth, String> {
        if args.no_auth {
            return Ok(Auth::Off);
        }
        if let Some(path) = &args.token_file {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("--token-file {}: {e}", path.display()))?;
            let tokens = Tokens::parse(&text)
                .map_err(|e| format!("--token-file {}: {e}", path.display()))?;
            return Ok(Auth::File(tokens));
        }
        match env_token
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty())
        {
            Some(t) if t.len() < aguikit_server::access::MIN_TOKEN_LEN => Err(format!(
                "$AGUI_TOKEN is shorter than {} characters; use a longer, random token",
                aguikit_server::access::MIN_TOKEN_LEN
            )),
            Some(t) if t.chars().any(|c| c.is_whitespace() || c.is_control()) => {
                Err("$AGUI_TOKEN must not contain spaces or control characters".into())
            }
            Some(t) => Ok(Auth::Single(t)),
            None => Ok(Auth::Single(Tokens::random_token())),
        }
    }

    fn tokens(&self) -> Option<Tokens> {
        match self {
            Auth::Off => None,
            Auth::Single(t) => Some(Tokens::single(t.clone())),
            Auth::File(t) => Some(t.clone()),
        }
    }
}

/// The access policy of `agui serve`.
pub fn access(args: &ServeArgs, auth: &Auth) -> Access {
    let mut access = Access::default()
        .allowed_hosts(args.allowed_hosts.iter().cloned())
        .runs_per_minute(args.runs_per_minute)
        .concurrent_runs(args.concurrent_runs);
    if let Some(tokens) = auth.tokens() {
        access = access.auth(tokens);
    }
    access
}

/// The CORS layer for `--cors-origin` (none without it). `*` is refused: name origins.
pub fn cors(origins: &[String]) -> Result<Option<CorsLayer>, String> {
    if origins.is_empty() {
        return Ok(None);
    }
    let mut list = Vec::new();
    for o in origins {
        let o = o.trim().trim_end_matches('/');
        if o == "*" {
            return Err("--cors-origin '*' would let any web page drive the agent; name the origins (e.g. https://app.example)".into());
        }
        let ok = (o.starts_with("http://") || o.starts_with("https://"))
            && !o["https://".len().min(o.len())..].contains('/');
        if !ok {
            return Err(format!(
                "--cors-origin {o:?} is not an origin (scheme://host[:port], no path)"
            ));
        }
        list.push(
            HeaderValue::from_str(o).map_err(|_| format!("--cors-origin {o:?} is not valid"))?,
        );
    }
    Ok(Some(
        CorsLayer::new()
            .allow_origin(AllowOrigin::list(list))
            .allow_methods([Method::GET, Method::POST, Method::DELETE])
            .allow_headers([
                header::AUTHORIZATION,
                header::CONTENT_TYPE,
                header::ACCEPT,
                HeaderName::from_static("last-event-id"),
            ])
            .max_age(Duration::from_secs(600)),
    ))
}

/// Connection threads when `--threads` is not given: one per core, so that a run, the
/// memory store's or SQLite writer's hand-offs and its socket wake no other runtime
/// thread; none with PostgreSQL, whose pooled connections and group writers are tasks of
/// the shared runtime: a run woken by them is best run where they are (with a thread per
/// core, `agui load` measured 3-6% fewer runs per second there, and 10-13% more with the
/// memory and SQLite stores).
fn default_threads(locator: &str) -> usize {
    if aguikit_store::is_postgres(locator) {
        0
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
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

/// The console's files, embedded in the binary: the page, its stylesheet and its ES
/// modules, each served at `/NAME` (the page imports the modules by relative URL).
mod assets {
    /// The page, at `/` and `/index.html`.
    pub const INDEX: &str = include_str!("../console/index.html");
    const JS: &str = "text/javascript; charset=utf-8";
    /// `(path, content type, text)` of every other file.
    pub const FILES: &[(&str, &str, &str)] = &[
        (
            "/style.css",
            "text/css; charset=utf-8",
            include_str!("../console/style.css"),
        ),
        ("/app.js", JS, include_str!("../console/app.js")),
        ("/api.js", JS, include_str!("../console/api.js")),
        ("/dom.js", JS, include_str!("../console/dom.js")),
        ("/events.js", JS, include_str!("../console/events.js")),
        ("/expand.js", JS, include_str!("../console/expand.js")),
        ("/fold.js", JS, include_str!("../console/fold.js")),
        ("/inspector.js", JS, include_str!("../console/inspector.js")),
        ("/patch.js", JS, include_str!("../console/patch.js")),
        ("/recording.js", JS, include_str!("../console/recording.js")),
        ("/redact.js", JS, include_str!("../console/redact.js")),
        ("/render.js", JS, include_str!("../console/render.js")),
        ("/sse.js", JS, include_str!("../console/sse.js")),
        ("/timeline.js", JS, include_str!("../console/timeline.js")),
        ("/util.js", JS, include_str!("../console/util.js")),
    ];
}

/// How the router guards the agent: who may call it, from which origins, with which limits.
#[derive(Default)]
pub struct Site {
    /// The access policy (authentication, hosts, quotas).
    pub access: Access,
    /// CORS grants (none by default).
    pub cors: Option<CorsLayer>,
    /// Limits of the HTTP runtime.
    pub config: ServerConfig,
}

/// The security headers of every response: the console may only load its own files, may
/// not be framed, and leaks no `Referer`.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
                   img-src 'self' data:; connect-src 'self' http: https:; frame-ancestors 'none'; \
                   base-uri 'none'; form-action 'none'";

async fn security_headers(mut res: axum::response::Response) -> axum::response::Response {
    let h = res.headers_mut();
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    res
}

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
            path: "/agent".into(),
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
                server = server.store(store.clone());
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
        // The console's debugger: the engine reads and verifies a recording (with the token).
        router = router.route(
            "/api/inspect",
            guard.guarded(post(crate::inspect_api::handler)).layer(
                axum::extract::DefaultBodyLimit::max(crate::inspect_api::MAX_BYTES),
            ),
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
/// store's error when the store does not answer.
async fn health(
    store: Option<std::sync::Arc<dyn aguikit_store::EventStore>>,
) -> axum::response::Response {
    let base =
        serde_json::json!({"status": "ok", "protocolVersion": aguikit_core::PROTOCOL_VERSION});
    let Some(store) = store else {
        return axum::Json(base).into_response();
    };
    match tokio::time::timeout(Duration::from_secs(2), store.health()).await {
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
    let (agent, about, info) = match (&openai, main_upstream) {
        (_, Some(up)) => {
            let about = format!("upstream {}", up.url());
            let info = AgentInfo::main("upstream", Some(up.url().to_owned()));
            (boxed(up), about, info)
        }
        (Some(o), None) => {
            let (agent, key_note) = o.agent()?;
            let about = format!(
                "model {} at {} ({key_note})",
                agent.model(),
                agent.endpoint()
            );
            (boxed(agent), about, AgentInfo::main("openai", None))
        }
        (None, None) => (
            boxed(DemoAgent::new(Duration::from_millis(args.delay_ms))),
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
            "\n  agent    POST http://{addr}{path}: upstream {}",
            up.url()
        ));
        mounted.push(Mounted {
            info: AgentInfo {
                name,
                path,
                kind: "upstream",
                upstream: Some(up.url().to_owned()),
            },
            agent: boxed(up),
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
    let store = aguikit_store::open(&locator)
        .await
        .map_err(|e| format!("--store {}: {e}", describe_store(&locator)))?;
    store.check_integrity().await.map_err(|e| {
        format!(
            "--store {}: the store failed its integrity check, so agui serve will not start on it: {e}",
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
            .max_body_bytes(args.max_body_bytes),
    };
    let (router, servers) = router_for(
        mounted,
        Some(
            StoreOptions::new(store)
                .cancel_on_disconnect(args.cancel_on_disconnect)
                .lease(args.run_lease_secs),
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
        let console = match &auth {
            Auth::Off => format!("http://{addr}/"),
            Auth::Single(t) => format!("http://{addr}/#token={t}"),
            Auth::File(_) => format!("http://{addr}/#token=YOUR_TOKEN"),
        };
        let auth_line = match &auth {
            Auth::Off => "off (--no-auth)".to_owned(),
            Auth::Single(_) => {
                "bearer token (in the console URL; AGUI_TOKEN=... for the agui commands)".to_owned()
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
}
