//! The options of `agui serve` and their parsers.

use super::LogFormat;
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
    /// The most bytes of events (as stored JSON) one stored run may have, at least 1024:
    /// the event that would pass it is not stored, and the run ends with RUN_ERROR (code
    /// `run_too_large`). Default 64 MiB.
    #[arg(long, value_name = "BYTES", default_value_t = 64 << 20,
          value_parser = clap::value_parser!(u64).range(1024..))]
    pub max_run_bytes: u64,
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
    /// Seconds a request body may take to arrive, from the end of its head (408
    /// body_timeout past it).
    #[arg(long, value_name = "SECS", default_value = "60", value_parser = parse_secs)]
    pub body_timeout_secs: Duration,
    /// The slowest a request body may arrive, in bytes per second on average, checked from
    /// 5 s after its head on (408 body_too_slow); 0 for no minimum.
    #[arg(long, value_name = "BYTES", default_value_t = 16 * 1024)]
    pub min_body_rate: usize,
    /// Serve the AG-UI agent at URL at /agent (instead of the demo agent); `NAME=URL`
    /// serves it at /agents/NAME (repeatable; GET /agents lists them). Its runs are stored,
    /// resumable and served in SSE or protobuf like the built-in agents'.
    #[arg(
        long = "upstream",
        value_name = "[NAME=]URL",
        conflicts_with = "openai_base_url"
    )]
    pub upstreams: Vec<String>,
    /// Put the A2UI middleware in front of the upstreams and the model (the demo agent
    /// always has it): a `render_a2ui` tool call becomes `a2ui-surface` activities as its
    /// arguments stream in, and a user's action on a surface
    /// (`forwardedProps.a2uiAction.userAction`) reaches the agent as a `log_a2ui_event`
    /// tool call and its result. The model (--openai-base-url) is offered the
    /// `render_a2ui` tool.
    #[arg(long)]
    pub a2ui: bool,
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
    /// Characters of an upstream's error body (a non-2xx answer) shown to the client in
    /// its RUN_ERROR, control characters replaced; 0 for none. The whole body goes to the
    /// log.
    #[arg(long, value_name = "CHARS", default_value_t = aguikit_gateway::DEFAULT_ERROR_EXCERPT)]
    pub upstream_error_excerpt: usize,
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

/// A positive number of seconds (fractions allowed).
pub fn parse_secs(text: &str) -> Result<Duration, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| *s > 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| format!("{text:?} is not a positive number of seconds"))
}
