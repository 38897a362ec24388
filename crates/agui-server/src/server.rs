//! The HTTP side: [`AgentServer`] (an axum handler with its limits), routing helpers, and
//! [`serve`] with graceful shutdown.

use crate::agent::{Agent, BoxedAgent};
use crate::body::{RunBody, driver};
use crate::config::ServerConfig;
use crate::context::{RunContext, RunShared};
use crate::encode::FrameEncoder;
use crate::event_ext::now_ms;
use crate::interrupts::InterruptStore;
use crate::negotiate::{Encoding, negotiate};
use crate::sink::Sink;
use agui_core::event::RunStarted;
use agui_core::{PROTOCOL_VERSION, RunAgentInput};
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, post};
use futures_util::StreamExt;
use serde_json::{Value, json};
use std::future::Future;
use std::sync::Arc;
use tokio::sync::watch;
use tower_http::cors::CorsLayer;

/// Serves one agent over HTTP: `POST` a `RunAgentInput`, receive its event stream.
///
/// ```no_run
/// use agui_server::{agent_fn, AgentServer, Finish};
/// # async fn demo() -> std::io::Result<()> {
/// let server = AgentServer::new(agent_fn(|_input, ctx| async move {
///     ctx.say("Hello!").await?;
///     Ok(Finish::success())
/// }))
/// .path("/agent");
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
/// server.serve(listener, agui_server::shutdown_signal()).await
/// # }
/// ```
///
/// Per request: the body is limited (`413`), parsed and validated (`400` for bad JSON or a
/// non-object, `422` naming the field for a schema error), its `resume` is checked
/// against the thread's open interrupts (`422`), the encoding is negotiated from `Accept`,
/// and the response streams `RUN_STARTED`, the agent's events and `RUN_FINISHED` or
/// `RUN_ERROR`. Error bodies are JSON: `{"error": code, "message": text, "field": path?}`.
#[derive(Clone)]
pub struct AgentServer {
    inner: Arc<ServerInner>,
    path: String,
    cors: Option<CorsLayer>,
    #[cfg(feature = "store")]
    store: Option<crate::store::StoreOptions>,
}

struct ServerInner {
    agent: BoxedAgent,
    config: ServerConfig,
    interrupts: Arc<InterruptStore>,
    shutdown: watch::Sender<bool>,
}

impl std::fmt::Debug for AgentServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentServer")
            .field("path", &self.path)
            .field("config", &self.inner.config)
            .finish()
    }
}

impl AgentServer {
    /// Serves `agent` with the default [`ServerConfig`], at path `/`.
    pub fn new(agent: impl Agent) -> Self {
        Self::from_boxed(Arc::new(agent))
    }

    /// Serves an already type-erased agent.
    pub fn from_boxed(agent: BoxedAgent) -> Self {
        Self::build(agent, ServerConfig::default())
    }

    fn build(agent: BoxedAgent, config: ServerConfig) -> Self {
        AgentServer {
            inner: Arc::new(ServerInner {
                interrupts: Arc::new(InterruptStore::new(config.max_interrupt_threads)),
                agent,
                config,
                shutdown: watch::Sender::new(false),
            }),
            path: "/".into(),
            cors: None,
            #[cfg(feature = "store")]
            store: None,
        }
    }

    /// Replaces the configuration (this forgets open interrupts recorded so far).
    pub fn config(self, config: ServerConfig) -> Self {
        let mut s = Self::build(self.inner.agent.clone(), config);
        s.path = self.path;
        s.cors = self.cors;
        #[cfg(feature = "store")]
        {
            s.store = self.store;
        }
        s
    }

    /// Persists every run in a store and serves the thread routes (feature `store`; see
    /// [`StoreOptions`](crate::StoreOptions)).
    #[cfg(feature = "store")]
    pub fn store(mut self, options: crate::store::StoreOptions) -> Self {
        self.store = Some(options);
        self
    }

    /// The path [`router`](Self::router) mounts the agent at (default `/`).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Answers CORS (preflights included) with this layer, e.g.
    /// `CorsLayer::permissive()` or an explicit origin list.
    pub fn cors(mut self, cors: CorsLayer) -> Self {
        self.cors = Some(cors);
        self
    }

    /// The configuration in force.
    pub fn settings(&self) -> &ServerConfig {
        &self.inner.config
    }

    /// A router with the agent at [`path`](Self::path) (other methods get `405`).
    pub fn router(&self) -> Router {
        let router = Router::new().route(&self.path, self.method_router());
        #[cfg(feature = "store")]
        if let Some(options) = &self.store {
            use axum::extract::Path;
            use axum::routing::get;
            let base = self.path.trim_end_matches('/');
            let s = options.store.clone();
            let threads = get(move || crate::store::threads(s.clone()));
            let s = options.store.clone();
            let thread = get(move |Path(id): Path<String>| crate::store::thread(s.clone(), id));
            let s = options.store.clone();
            let keep_alive = self.inner.config.keep_alive;
            let connect = get(
                move |Path(id): Path<String>,
                      uri: axum::http::Uri,
                      headers: axum::http::HeaderMap| {
                    crate::store::connect(s.clone(), id, headers, uri, keep_alive)
                },
            );
            let layer = |m: MethodRouter| match &self.cors {
                Some(cors) => m.layer(cors.clone()),
                None => m,
            };
            return router
                .route(&format!("{base}/threads"), layer(threads))
                .route(&format!("{base}/threads/{{id}}"), layer(thread))
                .route(&format!("{base}/threads/{{id}}/connect"), layer(connect));
        }
        router
    }

    /// The `POST` handler as a method router, to mount in a router of any state.
    pub fn method_router<S: Clone + Send + Sync + 'static>(&self) -> MethodRouter<S> {
        let m = post(handle).with_state(self.clone());
        match &self.cors {
            Some(cors) => m.layer(cors.clone()),
            None => m,
        }
    }

    /// A handle that ends this server's running streams (see [`ShutdownHandle`]).
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        ShutdownHandle {
            inner: self.inner.clone(),
        }
    }

    /// Serves [`router`](Self::router) on `listener` until `signal` resolves, then shuts
    /// down gracefully: no new connections, running streams get
    /// [`ServerConfig::shutdown_grace`] to finish before they end with `RUN_ERROR`
    /// (code `shutdown`).
    pub async fn serve(
        &self,
        listener: tokio::net::TcpListener,
        signal: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        serve(listener, self.router(), [self.shutdown_handle()], signal).await
    }

    /// Handles one request (for use outside axum routing, e.g. in a custom service).
    pub async fn handle(&self, request: Request) -> Response {
        handle(State(self.clone()), request).await
    }
}

/// Extends `axum::Router` with [`agent`](RouterExt::agent).
pub trait RouterExt {
    /// Mounts an agent server at `path`.
    fn agent(self, path: &str, server: &AgentServer) -> Self;
}

impl<S: Clone + Send + Sync + 'static> RouterExt for Router<S> {
    fn agent(self, path: &str, server: &AgentServer) -> Self {
        self.route(path, server.method_router())
    }
}

/// Ends the running streams of an [`AgentServer`] and refuses new runs (`503`).
#[derive(Clone)]
pub struct ShutdownHandle {
    inner: Arc<ServerInner>,
}

impl std::fmt::Debug for ShutdownHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShutdownHandle")
            .field("down", &*self.inner.shutdown.borrow())
            .finish()
    }
}

impl ShutdownHandle {
    /// Ends every running stream now with `RUN_ERROR` (code `shutdown`); new runs get `503`.
    pub fn shutdown_now(&self) {
        self.inner.shutdown.send_replace(true);
    }

    /// Whether [`shutdown_now`](Self::shutdown_now) was called.
    pub fn is_shut_down(&self) -> bool {
        *self.inner.shutdown.borrow()
    }

    fn grace(&self) -> std::time::Duration {
        self.inner.config.shutdown_grace
    }
}

/// Serves `router` on `listener` until `signal` resolves, then shuts down gracefully: no
/// new connections; the running streams of the servers behind `handles` get their
/// `shutdown_grace` (the longest of them) to finish, then end with `RUN_ERROR`
/// (code `shutdown`). Returns when every connection is closed.
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    handles: impl IntoIterator<Item = ShutdownHandle>,
    signal: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let handles: Vec<ShutdownHandle> = handles.into_iter().collect();
    let grace = handles
        .iter()
        .map(ShutdownHandle::grace)
        .max()
        .unwrap_or_default();
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            signal.await;
            tracing::info!(grace_ms = grace.as_millis() as u64, "shutting down");
            tokio::spawn(async move {
                tokio::time::sleep(grace).await;
                for h in &handles {
                    h.shutdown_now();
                }
            });
        })
        .await
}

/// Resolves on Ctrl-C (SIGINT), or never if that signal cannot be listened to.
pub async fn shutdown_signal() {
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// A request the server refuses: a status and a JSON body.
struct ApiError {
    status: StatusCode,
    body: Value,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut res = (self.status, self.body.to_string()).into_response();
        res.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        res
    }
}

/// A JSON error: `{"error": code, "message": ..., ...extra}`.
fn error(status: StatusCode, code: &str, message: impl Into<String>, extra: Value) -> ApiError {
    let mut body = json!({"error": code, "message": message.into()});
    if let (Value::Object(b), Value::Object(e)) = (&mut body, extra) {
        b.extend(e);
    }
    ApiError { status, body }
}

async fn read_body(body: Body, limit: usize) -> Result<Vec<u8>, ApiError> {
    let too_large = || {
        error(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            format!("the request body exceeds the limit of {limit} bytes"),
            json!({"limit": limit}),
        )
    };
    let mut out = Vec::new();
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| {
            error(
                StatusCode::BAD_REQUEST,
                "body_unreadable",
                format!("the request body could not be read: {e}"),
                Value::Null,
            )
        })?;
        if out.len() + chunk.len() > limit {
            return Err(too_large());
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// Parses and validates the run input; errors are the `400`/`422` responses.
fn parse_input(bytes: &[u8]) -> Result<RunAgentInput, ApiError> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'{') {
        let message = match serde_json::from_slice::<Value>(bytes) {
            Ok(_) => "the body must be a JSON object (RunAgentInput)".to_owned(),
            Err(e) => format!("the body is not JSON: {e}"),
        };
        return Err(error(
            StatusCode::BAD_REQUEST,
            "invalid_json",
            message,
            Value::Null,
        ));
    }
    let (parsed, warnings) = agui_core::warning::collect(|| {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let input = serde_path_to_error::deserialize::<_, RunAgentInput>(&mut de);
        (input, de.end())
    });
    let (parsed, trailing) = parsed;
    for w in warnings {
        tracing::debug!(warning = %w, "run input: unknown material dropped");
    }
    if let (Ok(_), Err(e)) = (&parsed, trailing) {
        return Err(error(
            StatusCode::BAD_REQUEST,
            "invalid_json",
            format!("the body is not JSON: {e}"),
            Value::Null,
        ));
    }
    parsed.map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            return error(
                StatusCode::BAD_REQUEST,
                "invalid_json",
                format!("the body is not JSON: {inner}"),
                Value::Null,
            );
        }
        let (field, message) = field_of(&path, &inner.to_string());
        error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_input",
            match &field {
                Some(f) => format!("{f}: {message}"),
                None => message.clone(),
            },
            json!({"field": field}),
        )
    })
}

/// The path of the offending field and the message without location noise: the
/// deserializer's path, extended by `[i]: ` prefixes that lenient array decoding puts in
/// its messages, plus the missing field's name for "missing field" errors.
fn field_of(path: &str, message: &str) -> (Option<String>, String) {
    let mut field = if path == "." {
        String::new()
    } else {
        path.to_owned()
    };
    let mut rest = message;
    while let Some(tail) = rest.strip_prefix('[')
        && let Some((index, after)) = tail.split_once("]: ")
        && index.bytes().all(|b| b.is_ascii_digit())
    {
        field.push_str(&format!("[{index}]"));
        rest = after;
    }
    let rest = match rest.rfind(" at line ") {
        Some(i) if rest[i..].contains(" column ") => &rest[..i],
        _ => rest,
    };
    if let Some(name) = rest
        .strip_prefix("missing field `")
        .and_then(|r| r.split('`').next())
    {
        if !field.is_empty() {
            field.push('.');
        }
        field.push_str(name);
    }
    ((!field.is_empty()).then_some(field), rest.to_owned())
}

async fn handle(State(server): State<AgentServer>, request: Request) -> Response {
    let inner = &server.inner;
    let config = &inner.config;
    if *inner.shutdown.borrow() {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "shutting_down",
            "the server is shutting down",
            Value::Null,
        )
        .into_response();
    }
    let (parts, body) = request.into_parts();
    if let Some(len) = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        && len > config.max_body_bytes as u64
    {
        return error(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            format!(
                "the request body exceeds the limit of {} bytes",
                config.max_body_bytes
            ),
            json!({"limit": config.max_body_bytes}),
        )
        .into_response();
    }
    let bytes = match read_body(body, config.max_body_bytes).await {
        Ok(b) => b,
        Err(res) => return res.into_response(),
    };
    let input = match parse_input(&bytes) {
        Ok(i) => i,
        Err(res) => return res.into_response(),
    };
    drop(bytes);
    // A client resuming a broken response: the stored run goes on where it left off.
    #[cfg(feature = "store")]
    if let Some(options) = &server.store
        && let Some(id) = parts
            .headers
            .get("last-event-id")
            .and_then(|v| v.to_str().ok())
        && let Some(res) = crate::store::reattach(
            options,
            &input.thread_id,
            &input.run_id,
            id,
            config.keep_alive,
        )
        .await
    {
        return res;
    }
    let resumed = if config.check_resume {
        match inner
            .interrupts
            .check(&input.thread_id, input.resume(), now_ms())
        {
            Ok(r) => r,
            Err(e) => {
                tracing::info!(thread_id = %input.thread_id, "resume refused: {}", e.message);
                return error(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "resume_mismatch",
                    e.message.clone(),
                    json!({"field": "resume", "missing": e.missing, "unknown": e.unknown, "expired": e.expired}),
                )
                .into_response();
            }
        }
    } else {
        Vec::new()
    };
    let accept = parts
        .headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok());
    let encoding = negotiate(accept, Encoding::Proto.is_available());
    let span = tracing::info_span!(
        "agui_run",
        thread_id = %input.thread_id,
        run_id = %input.run_id,
        encoding = encoding.content_type(),
    );
    let sink = Sink::new(config, FrameEncoder::new(encoding));
    #[cfg(feature = "store")]
    let taps = server.store.as_ref().map(|_| {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        sink.set_tap(tx);
        rx
    });
    let run = Arc::new(RunShared::new(
        sink,
        input.thread_id.clone(),
        input.run_id.clone(),
        input.state.clone(),
        resumed,
    ));
    let mut started = RunStarted::new(input.thread_id.clone(), input.run_id.clone())
        .with_protocol_version(PROTOCOL_VERSION);
    started.parent_run_id = input.parent_run_id.clone();
    // A stored thread's history must hold what the client sent too (its messages): the
    // stored RUN_STARTED echoes the request.
    #[cfg(feature = "store")]
    if server.store.is_some() {
        started.input = Some(Box::new(input.clone()));
    }
    // RUN_STARTED always fits: nothing precedes it.
    let _ = run.sink.push_runtime(started.into(), false);
    span.in_scope(|| tracing::debug!(messages = input.messages.len(), "run started"));
    let agent = inner
        .agent
        .clone()
        .run_boxed(input, RunContext::new(run.clone()));
    let drive = driver(
        run.clone(),
        agent,
        inner.shutdown.subscribe(),
        inner.interrupts.clone(),
        span.clone(),
    );
    let keep_alive = config.keep_alive;
    #[cfg(feature = "store")]
    let run_for_store = run.clone();
    let body = RunBody::new(run, drive, keep_alive, span);
    #[cfg(feature = "store")]
    if let (Some(options), Some(taps)) = (&server.store, taps) {
        return crate::store::start(options, run_for_store, taps, body, encoding, keep_alive).await;
    }
    let mut res = Response::new(Body::from_stream(body));
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(encoding.content_type()),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    res
}

#[cfg(test)]
mod tests {
    use super::field_of;

    #[test]
    fn field_paths() {
        let f = |p, m| field_of(p, m).0;
        assert_eq!(f(".", "missing field `threadId`"), Some("threadId".into()));
        assert_eq!(
            f("messages[0]", "missing field `id`"),
            Some("messages[0].id".into())
        );
        assert_eq!(
            f("messages[0].content", "invalid type"),
            Some("messages[0].content".into())
        );
        assert_eq!(
            field_of(
                "messages",
                "[0]: [2]: missing field `text` at line 1 column 66"
            ),
            (
                Some("messages[0][2].text".into()),
                "missing field `text`".into()
            )
        );
        assert_eq!(f(".", "something"), None);
    }
}
