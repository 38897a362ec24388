//! The HTTP side: [`AgentServer`] (an axum handler with its limits), routing helpers, and
//! [`serve`] with graceful shutdown.

use crate::access::{Access, Gate, Principal};
use crate::agent::{Agent, BoxedAgent};
use crate::api_error::{ApiError, ErrorCode};
use crate::body::{RunBody, driver};
use crate::config::ServerConfig;
use crate::context::{RunContext, RunShared};
use crate::encode::FrameEncoder;
use crate::interrupts::InterruptStore;
use crate::negotiate::{WireFormat, negotiate};
use crate::sink::Sink;
use aguikit_core::event::RunStarted;
use aguikit_core::{AgentCapabilities, PROTOCOL_VERSION, RunAgentInput};
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, post};
use futures_util::StreamExt;
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, watch};
use tower_http::cors::CorsLayer;

/// Serves one agent over HTTP: `POST` a `RunAgentInput`, receive its event stream.
///
/// ```no_run
/// use aguikit_server::{agent_fn, AgentServer, Finish};
/// # async fn demo() -> std::io::Result<()> {
/// let server = AgentServer::new(agent_fn(|_input, ctx| async move {
///     ctx.say("Hello!").await?;
///     Ok(Finish::success())
/// }))
/// .path("/agent");
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
/// server.serve(listener, aguikit_server::shutdown_signal()).await
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
    gate: Arc<Gate>,
    #[cfg(feature = "store")]
    store: Option<crate::store::StoreOptions>,
}

struct ServerInner {
    agent: BoxedAgent,
    config: ServerConfig,
    interrupts: Arc<InterruptStore>,
    shutdown: watch::Sender<bool>,
    /// Request-body bytes in memory at once, in KiB.
    body_budget: Arc<Semaphore>,
    /// The same per principal (by name), made when first needed.
    principal_budgets: std::sync::Mutex<std::collections::HashMap<String, Arc<Semaphore>>>,
    runs: Arc<Runs>,
}

/// Counts the runs (and their store writers) still going, for a shutdown that waits for
/// their last event to be stored.
#[derive(Default)]
pub(crate) struct Runs {
    n: AtomicUsize,
    idle: Notify,
}

/// One running run or store writer; counted until dropped.
pub(crate) struct RunGuard(Arc<Runs>);

impl Runs {
    pub(crate) fn enter(self: &Arc<Self>) -> RunGuard {
        self.n.fetch_add(1, Ordering::AcqRel);
        RunGuard(self.clone())
    }

    /// Waits until no run is going, at most `timeout`; whether that happened.
    async fn wait_idle(&self, timeout: std::time::Duration) -> bool {
        let wait = async {
            loop {
                let idle = self.idle.notified();
                if self.n.load(Ordering::Acquire) == 0 {
                    return;
                }
                idle.await;
            }
        };
        tokio::time::timeout(timeout, wait).await.is_ok()
    }
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        if self.0.n.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

impl ServerInner {
    /// The body budget of `principal` (see
    /// [`ServerConfig::max_body_bytes_in_flight_per_principal`]).
    fn principal_budget(&self, principal: &Principal) -> Arc<Semaphore> {
        let mut budgets = self
            .principal_budgets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(b) = budgets.get(principal.name()) {
            return b.clone();
        }
        // Budgets nobody holds are dropped before the map grows past a bound (principals
        // come from the operator's tokens, but an `Authenticate` may name many).
        if budgets.len() >= 1024 {
            budgets.retain(|_, b| Arc::strong_count(b) > 1);
        }
        let kib = self
            .config
            .max_body_bytes_in_flight_per_principal
            .max(self.config.max_body_bytes)
            .div_ceil(1024)
            .min(Semaphore::MAX_PERMITS);
        budgets
            .entry(principal.name().to_owned())
            .or_insert_with(|| Arc::new(Semaphore::new(kib)))
            .clone()
    }
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
                body_budget: Arc::new(Semaphore::new(
                    config
                        .max_body_bytes_in_flight
                        .max(config.max_body_bytes)
                        .div_ceil(1024)
                        .min(Semaphore::MAX_PERMITS),
                )),
                principal_budgets: Default::default(),
                config,
                shutdown: watch::Sender::new(false),
                runs: Arc::default(),
            }),
            path: "/".into(),
            cors: None,
            gate: Arc::new(Gate::new(Access::default())),
            #[cfg(feature = "store")]
            store: None,
        }
    }

    /// Replaces the configuration (this forgets open interrupts recorded so far).
    pub fn config(self, config: ServerConfig) -> Self {
        let mut s = Self::build(self.inner.agent.clone(), config);
        s.path = self.path;
        s.cors = self.cors;
        s.gate = self.gate;
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

    /// Answers CORS (preflights included) with this layer, e.g. an explicit origin list.
    /// Default: no CORS grant, so pages of other origins can read nothing. (A permissive
    /// layer lets any web page the user visits drive the agent and read threads.)
    pub fn cors(mut self, cors: CorsLayer) -> Self {
        self.cors = Some(cors);
        self
    }

    /// Sets who may call the agent's routes and from where (see [`Access`]; default: no
    /// authentication, the `Host` check on loopback listeners, JSON runs only).
    pub fn access(mut self, access: Access) -> Self {
        self.gate = Arc::new(Gate::new(access));
        self
    }

    /// The access policy in force (set with [`access`](Self::access); named as
    /// `std::process::Command` names the getters of what its builder methods set).
    pub fn get_access(&self) -> &Access {
        &self.gate.access
    }

    /// The configuration in force (set with [`config`](Self::config)).
    pub fn get_config(&self) -> &ServerConfig {
        &self.inner.config
    }

    /// What the agent declares about itself ([`Agent::capabilities`](crate::Agent::capabilities)),
    /// with `transport` as this server serves it: `streaming` (SSE), `httpBinary` (protobuf,
    /// with the `proto` feature) and `resumable` (with a store: `Last-Event-ID` and the
    /// thread's `connect` route); the agent's own `transport` (an upstream's, behind a
    /// gateway) is replaced, since this server is the transport.
    pub async fn capabilities(&self) -> AgentCapabilities {
        let mut caps = self.inner.agent.clone().capabilities_boxed().await;
        #[cfg(feature = "store")]
        let resumable = self.store.is_some();
        #[cfg(not(feature = "store"))]
        let resumable = false;
        caps.transport = Some(aguikit_core::capabilities::TransportCapabilities {
            streaming: Some(true),
            http_binary: Some(crate::negotiate::PROTO_AVAILABLE),
            resumable: Some(resumable),
            ..Default::default()
        });
        caps
    }

    /// A router with the agent at [`path`](Self::path) (other methods get `405`) and its
    /// capabilities at `{path}/capabilities` (`GET`, [`capabilities`](Self::capabilities),
    /// with the same access checks).
    pub fn router(&self) -> Router {
        let base = self.path.trim_end_matches('/');
        let server = self.clone();
        let capabilities = axum::routing::get(move || {
            let server = server.clone();
            async move {
                let body = serde_json::to_vec(&server.capabilities().await).unwrap_or_default();
                ([(header::CONTENT_TYPE, "application/json")], body).into_response()
            }
        });
        let router = Router::new()
            .route(&self.path, self.method_router())
            .route(&format!("{base}/capabilities"), self.guard(capabilities));
        #[cfg(feature = "store")]
        if let Some(options) = &self.store {
            use axum::Extension;
            use axum::extract::Path;
            use axum::routing::get;
            let o = options.clone();
            let threads = get(
                move |Extension(p): Extension<Principal>, uri: axum::http::Uri| {
                    crate::store::threads(o.clone(), p, uri)
                },
            );
            let o = options.clone();
            let o2 = options.clone();
            let o3 = options.clone();
            let thread = get(
                move |Extension(p): Extension<Principal>,
                      Path(id): Path<String>,
                      uri: axum::http::Uri| {
                    crate::store::thread(o.clone(), p, id, uri)
                },
            )
            .delete(
                move |Extension(p): Extension<Principal>,
                      Path(id): Path<String>,
                      uri: axum::http::Uri| {
                    crate::store::delete(o2.clone(), p, id, uri)
                },
            )
            .patch(
                move |Extension(p): Extension<Principal>,
                      Path(id): Path<String>,
                      uri: axum::http::Uri,
                      body: axum::body::Body| {
                    crate::store::update(o3.clone(), p, id, uri, body)
                },
            );
            let o = options.clone();
            let keep_alive = self.inner.config.keep_alive;
            let connect = get(
                move |Extension(p): Extension<Principal>,
                      Path(id): Path<String>,
                      uri: axum::http::Uri,
                      headers: axum::http::HeaderMap| {
                    crate::store::connect(o.clone(), p, id, headers, uri, keep_alive)
                },
            );
            return router
                .route(&format!("{base}/threads"), self.guard(threads))
                .route(&format!("{base}/threads/{{id}}"), self.guard(thread))
                .route(
                    &format!("{base}/threads/{{id}}/connect"),
                    self.guard(connect),
                );
        }
        router
    }

    /// Wraps a route in the access middleware, then (outermost, so preflights are answered
    /// without credentials) the CORS layer when one is set.
    fn guard<S: Clone + Send + Sync + 'static>(&self, m: MethodRouter<S>) -> MethodRouter<S> {
        let gate = self.gate.clone();
        let m = m.layer(axum::middleware::from_fn(
            move |request: Request, next: axum::middleware::Next| {
                crate::access::middleware(gate.clone(), request, next)
            },
        ));
        match &self.cors {
            Some(cors) => m.layer(cors.clone()),
            None => m,
        }
    }

    /// Wraps any route (an operator's `/metrics`, a listing of agents) in this server's
    /// access checks and CORS layer: the same credentials, `Host` check and origins as the
    /// agent's own routes. The handler finds the caller's [`Principal`] in the request's
    /// extensions.
    pub fn guarded<S: Clone + Send + Sync + 'static>(
        &self,
        route: MethodRouter<S>,
    ) -> MethodRouter<S> {
        self.guard(route)
    }

    /// The `POST` handler as a method router, to mount in a router of any state (with the
    /// access checks and CORS layer of this server).
    pub fn method_router<S: Clone + Send + Sync + 'static>(&self) -> MethodRouter<S> {
        self.guard(post(handle).with_state(self.clone()))
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
        if let Ok(addr) = listener.local_addr()
            && !addr.ip().is_loopback()
            && !self.gate.access.has_auth()
        {
            tracing::warn!(
                %addr,
                "serving without authentication on a non-loopback address: anyone who can reach it can run the agent (set Access::auth)"
            );
        }
        serve(listener, self.router(), [self.shutdown_handle()], signal).await
    }

    /// Reads the body of `request` as this server reads a run input, for a route of the
    /// application's own beside the agent's: at most `limit` bytes (`413`, a declared
    /// `Content-Length` over it refused unread), with room in the server's body budgets
    /// (the global one and `principal`'s; `503 busy` when none is free within
    /// [`ServerConfig::body_wait`]), at the server's pace (`408` past
    /// [`ServerConfig::body_timeout`] or under [`ServerConfig::min_body_rate`]). The room is
    /// held until the returned [`BodyRoom`] is dropped: keep it while the body is in
    /// memory. An error is the response to send.
    #[allow(clippy::result_large_err)]
    pub async fn read_body(
        &self,
        principal: &Principal,
        request: Request,
        limit: usize,
    ) -> Result<(Vec<u8>, BodyRoom), Response> {
        let declared = declared_length(request.headers(), limit)?;
        let inner = &self.inner;
        let config = &inner.config;
        let mine = inner.principal_budget(principal);
        read_body(
            request.into_body(),
            limit,
            declared,
            [&mine, &inner.body_budget],
            config.body_wait,
            Pace {
                timeout: config.body_timeout,
                min_rate: config.min_body_rate,
            },
        )
        .await
    }

    /// Handles one request (for use outside axum routing, e.g. in a custom service); the
    /// access checks apply.
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

    pub(crate) fn grace(&self) -> std::time::Duration {
        self.inner.config.shutdown_grace
    }

    pub(crate) fn config(&self) -> &ServerConfig {
        &self.inner.config
    }

    /// Waits until every run of the server has ended and stored its last event, at most
    /// `timeout`; whether they all did.
    pub async fn wait_runs(&self, timeout: std::time::Duration) -> bool {
        self.inner.runs.wait_idle(timeout).await
    }
}

/// Serves `router` on `listener` until `signal` resolves, then shuts down gracefully: no
/// new connections; the running streams of the servers behind `handles` get their
/// `shutdown_grace` (the longest of them) to finish, then end with `RUN_ERROR`
/// (code `shutdown`). Returns when every connection is closed and every run (including
/// runs that outlived their client in a store) has stored its end.
///
/// Every accepted socket gets `TCP_NODELAY`; each connection must send a request head
/// within [`ServerConfig::header_read_timeout`] (also the idle keep-alive limit); at most
/// [`ServerConfig::max_connections`] are served, and past that, connections answer
/// [`HEALTH_PATH`](crate::HEALTH_PATH) and `503` for the rest. The first handle's
/// configuration gives these settings. Each request carries its [`LocalAddr`](crate::LocalAddr),
/// which the `Host` check of [`Access`](crate::Access) uses. With
/// [`ServerConfig::connection_threads`], connections are served on threads of their own,
/// which end before this returns.
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    handles: impl IntoIterator<Item = ShutdownHandle>,
    signal: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    crate::listen::run(listener, router, handles.into_iter().collect(), signal).await
}

/// Resolves on Ctrl-C (SIGINT) or, on Unix, `SIGTERM` (what container runtimes and
/// service managers send), or never if neither can be listened to.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}

/// From how long after a request's head the body's minimum rate
/// ([`ServerConfig::min_body_rate`]) is enforced: a body's first bytes may be slow (a
/// connection warming up), a body trickling for longer is refused.
pub const BODY_RATE_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// How a request body must arrive: how long in all, and how fast.
struct Pace {
    timeout: std::time::Duration,
    min_rate: usize,
}

impl Pace {
    /// When the body must have sent more than `read` bytes.
    fn deadline(&self, started: tokio::time::Instant, read: usize) -> tokio::time::Instant {
        let by_rate = match self.min_rate {
            0 => self.timeout,
            rate => BODY_RATE_GRACE.max(std::time::Duration::from_secs_f64(
                read as f64 / rate as f64,
            )),
        };
        started + by_rate.min(self.timeout)
    }

    /// The answer when the body missed its deadline.
    fn refusal(&self, started: tokio::time::Instant, read: usize) -> Response {
        let mut res = if started.elapsed() >= self.timeout {
            ApiError::new(
                ErrorCode::BodyTimeout,
                format!(
                    "the request body did not arrive within {} s (the limit)",
                    self.timeout.as_secs_f64()
                ),
            )
            .with("limit", self.timeout.as_secs_f64())
            .into_response()
        } else {
            ApiError::new(ErrorCode::BodyTooSlow, format!(
                    "the request body arrives slower than {} bytes/s (the limit): {read} bytes in {:.1} s",
                    self.min_rate,
                    started.elapsed().as_secs_f64()
                )).with("limit", self.min_rate).into_response()
        };
        res.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        res
    }
}

/// Room for a request body, given back when dropped: in the server's global body budget
/// ([`ServerConfig::max_body_bytes_in_flight`]) and in its principal's
/// ([`ServerConfig::max_body_bytes_in_flight_per_principal`]). See
/// [`AgentServer::read_body`].
#[derive(Debug)]
pub struct BodyRoom(Option<OwnedSemaphorePermit>, Option<OwnedSemaphorePermit>);

/// The `Content-Length` a request declares, or its `413` when that is over `limit` (the
/// body is then refused unread).
#[allow(clippy::result_large_err)]
fn declared_length(headers: &header::HeaderMap, limit: usize) -> Result<Option<u64>, Response> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    match declared {
        Some(len) if len > limit as u64 => Err(ApiError::new(
            ErrorCode::BodyTooLarge,
            format!("the request body exceeds the limit of {limit} bytes"),
        )
        .with("limit", limit)
        .into_response()),
        _ => Ok(declared),
    }
}

impl BodyRoom {
    fn merge(&mut self, more: BodyRoom) {
        for (mine, theirs) in [(&mut self.0, more.0), (&mut self.1, more.1)] {
            match (mine.as_mut(), theirs) {
                (Some(m), Some(t)) => m.merge(t),
                (None, Some(t)) => *mine = Some(t),
                _ => {}
            }
        }
    }
}

/// Reads the body into one buffer (sized from `Content-Length` when declared), holding
/// room in both `budgets` (the global one and the principal's) for every byte read; the
/// room is given back once the body is parsed. The body must arrive at `pace`.
async fn read_body(
    body: Body,
    limit: usize,
    declared: Option<u64>,
    budgets: [&Arc<Semaphore>; 2],
    wait: std::time::Duration,
    pace: Pace,
) -> Result<(Vec<u8>, BodyRoom), Response> {
    let started = tokio::time::Instant::now();
    let too_large = || {
        ApiError::new(
            ErrorCode::BodyTooLarge,
            format!("the request body exceeds the limit of {limit} bytes"),
        )
        .with("limit", limit)
        .into_response()
    };
    let busy = || {
        ApiError::new(
            ErrorCode::Busy,
            "too many request bodies are being received at once; try again shortly",
        )
        .retry_after(1)
        .into_response()
    };
    // Room is taken in units of 1 KiB (semaphores count in u32).
    let units = |bytes: usize| u32::try_from(bytes.div_ceil(1024)).unwrap_or(u32::MAX);
    let take = |n: u32| {
        let [mine, all] = budgets.map(Arc::clone);
        async move {
            // The principal's room first: a caller over its share waits without holding
            // any of the others'.
            let both = async {
                let mine = mine.acquire_many_owned(n).await.ok()?;
                let all = all.acquire_many_owned(n).await.ok()?;
                Some(BodyRoom(Some(all), Some(mine)))
            };
            tokio::time::timeout(wait, both).await.ok().flatten()
        }
    };
    let expected = declared.map_or(0, |n| n as usize).min(limit);
    let Some(mut permit) = take(units(expected)).await else {
        return Err(busy());
    };
    let mut held = expected.div_ceil(1024) * 1024;
    let mut out = Vec::with_capacity(expected);
    let mut stream = body.into_data_stream();
    loop {
        let next = tokio::time::timeout_at(pace.deadline(started, out.len()), stream.next());
        let Ok(next) = next.await else {
            return Err(pace.refusal(started, out.len()));
        };
        let Some(chunk) = next else {
            break;
        };
        let chunk = chunk.map_err(|e| {
            ApiError::new(
                ErrorCode::BodyUnreadable,
                format!("the request body could not be read: {e}"),
            )
            .into_response()
        })?;
        if out.len() + chunk.len() > limit {
            return Err(too_large());
        }
        if out.len() + chunk.len() > held {
            let more = out.len() + chunk.len() - held;
            let Some(extra) = take(units(more)).await else {
                return Err(busy());
            };
            held += more.div_ceil(1024) * 1024;
            permit.merge(extra);
        }
        out.extend_from_slice(&chunk);
    }
    Ok((out, permit))
}

/// Parses and validates the run input; errors are the `400`/`422` responses.
#[allow(clippy::result_large_err)]
fn parse_input(bytes: &[u8]) -> Result<RunAgentInput, Response> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'{') {
        let message = match serde_json::from_slice::<Value>(bytes) {
            Ok(_) => "the body must be a JSON object (RunAgentInput)".to_owned(),
            Err(e) => format!("the body is not JSON: {e}"),
        };
        return Err(ApiError::new(ErrorCode::InvalidJson, message).into_response());
    }
    // A valid body is parsed once, without tracking paths; the path of an error comes
    // from a second, tracked parse of the refused body.
    let (fast, warnings) = aguikit_core::warning::collect(|| {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let input = <RunAgentInput as serde::Deserialize>::deserialize(&mut de);
        (input, de.end())
    });
    for w in warnings {
        tracing::debug!(warning = %w, "run input: unknown material dropped");
    }
    if let (Ok(input), Ok(())) = fast {
        return Ok(input);
    }
    let ((parsed, trailing), _) = aguikit_core::warning::collect(|| {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let input = serde_path_to_error::deserialize::<_, RunAgentInput>(&mut de);
        (input, de.end())
    });
    if let (Ok(_), Err(e)) = (&parsed, trailing) {
        return Err(
            ApiError::new(ErrorCode::InvalidJson, format!("the body is not JSON: {e}"))
                .into_response(),
        );
    }
    parsed.map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            return ApiError::new(
                ErrorCode::InvalidJson,
                format!("the body is not JSON: {inner}"),
            )
            .into_response();
        }
        let (field, message) = field_of(&path, &inner.to_string());
        ApiError::new(
            ErrorCode::InvalidInput,
            match &field {
                Some(f) => format!("{f}: {message}"),
                None => message.clone(),
            },
        )
        .with("field", field)
        .into_response()
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
    let principal = match request.extensions().get::<Principal>() {
        Some(p) => p.clone(),
        None => match server.gate.admit(&request) {
            Ok(p) => p,
            Err(res) => return res,
        },
    };
    let inner = &server.inner;
    let config = &inner.config;
    if *inner.shutdown.borrow() {
        return ApiError::new(ErrorCode::ShuttingDown, "the server is shutting down")
            .into_response();
    }
    let (parts, body) = request.into_parts();
    // A browser sends a cross-site `text/plain` POST without asking first: runs are JSON.
    if !crate::access::is_json(&parts.headers) {
        return ApiError::new(
            ErrorCode::UnsupportedMediaType,
            "a run is posted as `Content-Type: application/json`",
        )
        .into_response();
    }
    let declared = match declared_length(&parts.headers, config.max_body_bytes) {
        Ok(d) => d,
        Err(res) => return res,
    };
    // Quotas and rate limits before the body is read: a caller past them holds no room
    // and no time. (A resume with Last-Event-ID starts no run: it is not counted.)
    #[cfg(feature = "store")]
    let resuming = server.store.is_some() && parts.headers.contains_key("last-event-id");
    #[cfg(not(feature = "store"))]
    let resuming = false;
    let mut quota = if resuming {
        None
    } else {
        match server.gate.start_run(&principal) {
            Ok(p) => Some(p),
            Err(res) => return res,
        }
    };
    let mine = inner.principal_budget(&principal);
    let (bytes, permit) = match read_body(
        body,
        config.max_body_bytes,
        declared,
        [&mine, &inner.body_budget],
        config.body_wait,
        Pace {
            timeout: config.body_timeout,
            min_rate: config.min_body_rate,
        },
    )
    .await
    {
        Ok(b) => b,
        Err(res) => return res,
    };
    if let Err(path) = crate::ingress::check_depth(&bytes, config.max_depth) {
        return ApiError::new(
            ErrorCode::TooDeep,
            format!(
                "{path}: the body nests deeper than {} levels (the limit)",
                config.max_depth
            ),
        )
        .with("field", path)
        .with("limit", config.max_depth)
        .into_response();
    }
    #[cfg_attr(not(feature = "store"), allow(unused_mut))]
    let mut input = match parse_input(&bytes) {
        Ok(i) => i,
        Err(res) => return res,
    };
    drop(bytes);
    drop(permit);
    if let Some((field, len)) = crate::ingress::long_id(&input, config.max_id_bytes) {
        return ApiError::new(
            ErrorCode::IdTooLong,
            format!(
                "{field}: an id of {len} bytes is longer than the limit of {} bytes",
                config.max_id_bytes
            ),
        )
        .with("field", field)
        .with("limit", config.max_id_bytes)
        .into_response();
    }
    // A client resuming a broken response: the stored run goes on where it left off.
    #[cfg(feature = "store")]
    if let Some(options) = &server.store
        && let Some(id) = parts
            .headers
            .get("last-event-id")
            .and_then(|v| v.to_str().ok())
        && let Some(res) = crate::store::reattach(
            options,
            &principal,
            &input.thread_id,
            &input.run_id,
            id,
            config.keep_alive,
        )
        .await
    {
        return res;
    }
    let permit = match quota.take() {
        Some(p) => p,
        None => match server.gate.start_run(&principal) {
            Ok(p) => p,
            Err(res) => return res,
        },
    };
    // The thread's open interrupts are found under the caller's own name for it.
    let interrupt_key = crate::interrupts::key(&principal, &input.thread_id);
    let mut started = RunStarted::new(input.thread_id.clone(), input.run_id.clone())
        .with_protocol_version(PROTOCOL_VERSION);
    started.parent_run_id = input.parent_run_id.clone();
    // With a store, the thread's owner is checked (the first run of a new thread claims
    // it, storing its RUN_STARTED) and its history folded: the interrupts it left open
    // are the store's, whichever server ran it.
    #[cfg(feature = "store")]
    let mut prepared = match &server.store {
        Some(options) => {
            match crate::store::prepare(options, &principal, &mut input, &started).await {
                Ok(p) => {
                    inner.interrupts.set(&interrupt_key, p.pending.clone());
                    Some(p)
                }
                Err(res) => return res,
            }
        }
        None => None,
    };
    // The interrupt contract (interrupts.md §6): a resume that does not answer the
    // thread's open interrupts, or names none, ends the run with RUN_ERROR.
    let (resumed, refused) = if config.check_resume {
        match inner.interrupts.check(
            &interrupt_key,
            &input.thread_id,
            input.resume(),
            std::time::SystemTime::now(),
        ) {
            Ok(r) => (r, None),
            Err(e) => {
                tracing::info!(thread_id = %input.thread_id, code = e.code(), "resume refused: {}", e.message);
                (Vec::new(), Some(e))
            }
        }
    } else {
        (Vec::new(), None)
    };
    let accept = parts
        .headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok());
    let encoding = negotiate(accept, crate::negotiate::PROTO_AVAILABLE);
    let span = tracing::info_span!(
        "agui_run",
        thread_id = %input.thread_id,
        run_id = %input.run_id,
        encoding = encoding.media_type(),
    );
    // With a store, the run is claimed first (one run per run id, the thread's owner
    // checked) by storing its RUN_STARTED, which echoes what the thread did not hold yet.
    #[cfg(feature = "store")]
    let claimed = match (&server.store, &mut prepared) {
        (Some(options), Some(prepared)) => {
            match crate::store::claim(options, prepared, &mut input, &started).await {
                Ok(first) => Some(first),
                Err(res) => return res,
            }
        }
        _ => None,
    };
    let meter = crate::metrics::RunMeter::start(&server.path);
    let sink = Sink::new(
        config,
        FrameEncoder::new(encoding),
        Some(meter.first_event()),
    );
    // RUN_STARTED always fits: nothing precedes it. A stored run's is sent from the store.
    #[cfg(feature = "store")]
    let _ = match claimed {
        Some(_) => sink.start_tapped(started.into()),
        None => sink.push_runtime(started.into(), false),
    };
    #[cfg(not(feature = "store"))]
    let _ = sink.push_runtime(started.into(), false);
    let run = Arc::new(RunShared::new(
        sink,
        interrupt_key,
        input.thread_id.clone(),
        input.run_id.clone(),
        input.state.clone(),
        resumed,
    ));
    span.in_scope(|| tracing::debug!(messages = input.messages.len(), "run started"));
    let agent =
        match refused {
            None => inner
                .agent
                .clone()
                .run_boxed(input, RunContext::new(run.clone())),
            Some(e) => Box::pin(async move {
                Err(crate::AgentError::new(e.message.clone()).with_code(e.code()))
            }),
        };
    let guard = inner.runs.enter();
    let drive = driver(
        run.clone(),
        agent,
        inner.shutdown.subscribe(),
        inner.interrupts.clone(),
        span.clone(),
        meter,
    );
    let drive: futures_util::future::BoxFuture<'static, ()> = Box::pin(async move {
        drive.await;
        drop(permit);
        drop(guard);
    });
    let keep_alive = config.keep_alive;
    #[cfg(feature = "store")]
    let run_for_store = run.clone();
    let body = RunBody::new(run, drive, keep_alive, span);
    #[cfg(feature = "store")]
    if let (Some(options), Some(first)) = (&server.store, claimed) {
        return crate::store::start(
            options,
            run_for_store,
            body,
            encoding,
            keep_alive,
            first,
            inner.runs.enter(),
        )
        .await;
    }
    stream_response(Body::from_stream(body.metered(encoding)), encoding)
}

/// An event-stream response: `body` with the encoding's content type, not to be cached or
/// buffered by proxies.
pub(crate) fn stream_response(body: Body, encoding: WireFormat) -> Response {
    let mut res = Response::new(body);
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(encoding.media_type()),
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
