//! [`HttpAgent`]: one AG-UI agent behind an HTTP endpoint, and its configuration.

use crate::config::AgentConfig;
pub use crate::config::{Limits, ReconnectPolicy, Timeouts};
use crate::decode::WireFormat;
use crate::error::ClientError;
use crate::middleware::{Middleware, Next};
use crate::run::RunShared;
use crate::run::RunStream;
use aguikit_core::{AgentCapabilities, RunAgentInput};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use std::sync::Arc;
use std::time::Duration;

/// An AG-UI agent behind an HTTP endpoint: one run is one `POST` of the run input, answered
/// with an event stream (SSE or protobuf).
///
/// [`run`](Self::run) returns a [`RunStream`] of events that are decoded, passed through the
/// agent's middleware, expanded (chunks become START/CONTENT/END) and verified against the
/// protocol rules, exactly as the official TypeScript client hands them to its reducer. To
/// fold them into messages and state, use a [`Session`](crate::Session).
///
/// Cloning is cheap: clones share the connection pool and the configuration.
///
/// ```no_run
/// use aguikit_client::HttpAgent;
/// use aguikit_core::{Message, RunAgentInput};
/// use futures_util::StreamExt;
/// # async fn demo() -> Result<(), aguikit_client::ClientError> {
/// let agent = HttpAgent::builder("http://127.0.0.1:8000/agent")
///     .bearer_token("secret")
///     .build()?;
/// let input = RunAgentInput::new("thread-1", "run-1").with_message(Message::user("u1", "Hi"));
/// let mut events = agent.run(input);
/// while let Some(event) = events.next().await {
///     println!("{}", event?.type_str());
/// }
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct HttpAgent {
    pub(crate) config: Arc<AgentConfig>,
}

impl std::fmt::Debug for HttpAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpAgent")
            .field("url", &self.config.url.as_str())
            .field("encoding", &self.config.encoding)
            .field("middleware", &self.config.middleware.len())
            .finish_non_exhaustive()
    }
}

impl HttpAgent {
    /// An agent at `url` with the default configuration.
    pub fn new(url: &str) -> Result<HttpAgent, ClientError> {
        HttpAgent::builder(url).build()
    }

    /// A builder for an agent at `url`.
    pub fn builder(url: &str) -> HttpAgentBuilder {
        HttpAgentBuilder {
            url: url.to_owned(),
            headers: HeaderMap::new(),
            header_error: None,
            encoding: WireFormat::Sse,
            timeouts: Timeouts::default(),
            limits: Limits::default(),
            reconnect: ReconnectPolicy::default(),
            middleware: Vec::new(),
            client: None,
        }
    }

    /// The agent's URL.
    pub fn url(&self) -> &str {
        self.config.url.as_str()
    }

    /// The wire format the agent asks for.
    pub fn wire_format(&self) -> WireFormat {
        self.config.encoding
    }

    /// A copy of this agent with one more middleware (innermost of those already there).
    pub fn with_middleware(&self, middleware: impl Middleware) -> HttpAgent {
        let mut config = AgentConfig {
            url: self.config.url.clone(),
            headers: self.config.headers.clone(),
            encoding: self.config.encoding,
            timeouts: self.config.timeouts.clone(),
            limits: self.config.limits.clone(),
            reconnect: self.config.reconnect.clone(),
            client: self.config.client.clone(),
            middleware: self.config.middleware.clone(),
        };
        config.middleware.push(Arc::new(middleware));
        HttpAgent {
            config: Arc::new(config),
        }
    }

    /// The agent's capabilities (AG-UI 1.0 `AgentCapabilities`): `GET {url}/capabilities`
    /// (the agent's URL with `/capabilities` appended to its path, its query kept), with
    /// the agent's headers, as `aguikit-server` serves them.
    ///
    /// Errors: [`ClientError::Http`] for a status other than 2xx (404: the agent serves no
    /// capabilities), [`ClientError::Request`] when no response came,
    /// [`ClientError::Timeout`] past the response or total time limit,
    /// [`ClientError::LimitExceeded`] for a body over the frame size limit,
    /// [`ClientError::Capabilities`] for a body that is not an `AgentCapabilities` object.
    pub async fn capabilities(&self) -> Result<AgentCapabilities, ClientError> {
        let config = &self.config;
        let mut url = config.url.clone();
        url.path_segments_mut()
            .map_err(|()| ClientError::Config(format!("{} cannot have a path", config.url)))?
            .pop_if_empty()
            .push("capabilities");
        let request_error = |e: reqwest::Error| ClientError::Request {
            url: url.to_string(),
            message: crate::error::with_causes(&e),
        };
        let mut request = config
            .client
            .get(url.clone())
            .headers(config.headers.clone())
            .header(reqwest::header::ACCEPT, "application/json");
        let limit = [config.timeouts.response, config.timeouts.total]
            .into_iter()
            .flatten()
            .min();
        if let Some(limit) = limit {
            request = request.timeout(limit);
        }
        let timed_out = |e: &reqwest::Error| {
            limit
                .filter(|_| e.is_timeout())
                .map(|after| ClientError::Timeout {
                    kind: crate::error::TimeoutKind::Response,
                    after,
                    progress: crate::error::Progress::default(),
                })
        };
        let mut response = request
            .send()
            .await
            .map_err(|e| timed_out(&e).unwrap_or_else(|| request_error(e)))?;
        let status = response.status();
        let max = config.limits.max_frame_size;
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| timed_out(&e).unwrap_or_else(|| request_error(e)))?
        {
            body.extend_from_slice(&chunk);
            if body.len() > max && status.is_success() {
                return Err(ClientError::LimitExceeded {
                    what: "the capabilities document",
                    limit: max as u64,
                    progress: crate::error::Progress::default(),
                });
            }
            if body.len() > config.limits.max_error_body && !status.is_success() {
                body.truncate(config.limits.max_error_body);
                break;
            }
        }
        if !status.is_success() {
            let text = String::from_utf8_lossy(&body).into_owned();
            let payload = serde_json::from_str(&text).ok();
            return Err(ClientError::Http {
                status: status.as_u16(),
                body: text,
                payload,
            });
        }
        serde_json::from_slice::<AgentCapabilities>(&body).map_err(|e| {
            ClientError::Capabilities(format!(
                "{url} answered what is not an AgentCapabilities object: {e}"
            ))
        })
    }

    /// Starts a run. Nothing is sent until the stream is first polled.
    ///
    /// The input is sent as given, except that activity messages are left out (they never
    /// go to an agent). The stream ends after the body ends, or with the first error; it is
    /// aborted by dropping it or with [`RunStream::abort`].
    pub fn run(&self, input: RunAgentInput) -> RunStream {
        let shared = Arc::new(RunShared::default());
        let next = Next::new(self.config.clone(), shared.clone());
        let events = next.run(input);
        RunStream::new(events, shared)
    }
}

/// Configures an [`HttpAgent`].
///
/// ```
/// use aguikit_client::{WireFormat, HttpAgent};
/// use std::time::Duration;
/// let agent = HttpAgent::builder("http://127.0.0.1:8000/agent")
///     .header("x-tenant", "acme")
///     .total_timeout(Duration::from_secs(120))
///     .max_events(100_000)
///     .wire_format(WireFormat::Sse)
///     .build()
///     .unwrap();
/// assert_eq!(agent.url(), "http://127.0.0.1:8000/agent");
/// ```
pub struct HttpAgentBuilder {
    url: String,
    headers: HeaderMap,
    header_error: Option<String>,
    encoding: WireFormat,
    timeouts: Timeouts,
    limits: Limits,
    reconnect: ReconnectPolicy,
    middleware: Vec<Arc<dyn Middleware>>,
    client: Option<reqwest::Client>,
}

impl std::fmt::Debug for HttpAgentBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpAgentBuilder")
            .field("url", &self.url)
            .field("encoding", &self.encoding)
            .finish_non_exhaustive()
    }
}

impl HttpAgentBuilder {
    /// Adds a request header (sent on every run). `Content-Type` and `Accept` are always set
    /// by the client and override headers of the same name.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        match (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            (Ok(n), Ok(mut v)) => {
                if n == reqwest::header::AUTHORIZATION {
                    v.set_sensitive(true);
                }
                self.headers.append(n, v);
            }
            _ => {
                self.header_error
                    .get_or_insert_with(|| format!("invalid header {name:?}"));
            }
        }
        self
    }

    /// Adds `Authorization: Bearer <token>`.
    pub fn bearer_token(self, token: &str) -> Self {
        self.header("authorization", &format!("Bearer {token}"))
    }

    /// The wire format to ask for (default SSE). The response's `Content-Type` decides how
    /// it is decoded.
    pub fn wire_format(mut self, encoding: WireFormat) -> Self {
        self.encoding = encoding;
        self
    }

    /// All time limits at once.
    pub fn timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = timeouts;
        self
    }

    /// The connection time limit.
    pub fn connect_timeout(mut self, limit: Duration) -> Self {
        self.timeouts.connect = Some(limit);
        self
    }

    /// The time limit to the response headers.
    pub fn response_timeout(mut self, limit: Duration) -> Self {
        self.timeouts.response = Some(limit);
        self
    }

    /// The time limit between two reads of the body.
    pub fn idle_timeout(mut self, limit: Duration) -> Self {
        self.timeouts.idle = Some(limit);
        self
    }

    /// The time limit of a whole run.
    pub fn total_timeout(mut self, limit: Duration) -> Self {
        self.timeouts.total = Some(limit);
        self
    }

    /// All limits at once.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The largest frame, in bytes.
    pub fn max_frame_size(mut self, bytes: usize) -> Self {
        self.limits.max_frame_size = bytes;
        self
    }

    /// The most events per run.
    pub fn max_events(mut self, events: usize) -> Self {
        self.limits.max_events = events;
        self
    }

    /// The most body bytes per run.
    pub fn max_body_bytes(mut self, bytes: u64) -> Self {
        self.limits.max_body_bytes = bytes;
        self
    }

    /// How streams with SSE ids are resumed (default: 3 attempts).
    pub fn reconnect(mut self, policy: ReconnectPolicy) -> Self {
        self.reconnect = policy;
        self
    }

    /// Appends a middleware; the first one added is the outermost (sees the input first and
    /// the events last).
    pub fn middleware(mut self, middleware: impl Middleware) -> Self {
        self.middleware.push(Arc::new(middleware));
        self
    }

    /// Uses this reqwest client (its own TLS, proxy and pool settings) instead of building
    /// one; the connect timeout is then the client's, and so is `TCP_NODELAY` (reqwest turns
    /// it on by default; this crate's own client always does).
    pub fn client(mut self, client: reqwest::Client) -> Self {
        self.client = Some(client);
        self
    }

    /// Builds the agent.
    pub fn build(self) -> Result<HttpAgent, ClientError> {
        if let Some(e) = self.header_error {
            return Err(ClientError::Config(e));
        }
        let url = reqwest::Url::parse(&self.url)
            .map_err(|e| ClientError::Config(format!("invalid URL {:?}: {e}", self.url)))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ClientError::Config(format!(
                "URL {:?} is not http or https",
                self.url
            )));
        }
        if self.limits.max_frame_size == 0 || self.limits.max_events == 0 {
            return Err(ClientError::Config("limits must be positive".into()));
        }
        let client = match self.client {
            Some(c) => c,
            None => {
                install_tls();
                // TCP_NODELAY: a request's header and body (and a small response) must not
                // wait for the peer's delayed ACK (40 ms per run on a reused connection).
                let mut b = reqwest::Client::builder()
                    .tcp_nodelay(true)
                    .pool_idle_timeout(crate::POOL_IDLE_TIMEOUT);
                if let Some(t) = self.timeouts.connect {
                    b = b.connect_timeout(t);
                }
                b.build().map_err(|e| {
                    ClientError::Config(format!("HTTP client: {}", crate::error::with_causes(&e)))
                })?
            }
        };
        Ok(HttpAgent {
            config: Arc::new(AgentConfig {
                url,
                headers: self.headers,
                encoding: self.encoding,
                timeouts: self.timeouts,
                limits: self.limits,
                reconnect: self.reconnect,
                client,
                middleware: self.middleware,
            }),
        })
    }
}

/// Makes rustls usable for reqwest clients built without a default crypto provider (this
/// crate's, and any other built with `rustls-no-provider`): installs the ring provider as
/// the process default unless the application installed one already. Called by
/// [`HttpAgentBuilder::build`]; call it before building another reqwest client yourself.
pub fn install_tls() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing a race against another installer is fine: either provider works.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builder_rejects_bad_input() {
        assert!(matches!(
            HttpAgent::builder("not a url").build(),
            Err(ClientError::Config(_))
        ));
        assert!(matches!(
            HttpAgent::builder("ftp://127.0.0.1/x").build(),
            Err(ClientError::Config(_))
        ));
        assert!(matches!(
            HttpAgent::builder("http://127.0.0.1/x")
                .header("bad header", "v")
                .build(),
            Err(ClientError::Config(_))
        ));
    }

    #[test]
    fn builder_keeps_settings() {
        let a = HttpAgent::builder("https://127.0.0.1:9/agent")
            .bearer_token("t")
            .max_events(5)
            .build()
            .unwrap();
        assert_eq!(a.config.limits.max_events, 5);
        assert!(
            a.config
                .headers
                .get("authorization")
                .unwrap()
                .is_sensitive()
        );
        assert_eq!(a.wire_format(), WireFormat::Sse);
        assert!(format!("{a:?}").contains("127.0.0.1"));
    }
}
