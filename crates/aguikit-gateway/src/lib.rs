#![doc = include_str!("../README.md")]
//!
//! # One run
//!
//! The run's input is posted to the upstream as it came (the gateway's own request headers,
//! its `Authorization` among them, are never forwarded: only the headers configured with
//! [`UpstreamBuilder::header`]), asking for protobuf and accepting SSE
//! ([`UpstreamBuilder::wire_format`]). The response is decoded, expanded and verified by the
//! same pipeline as [`aguikit_client::HttpAgent`]'s, and every event is emitted through the
//! run's [`RunContext`]; the runtime, not the upstream, writes `RUN_STARTED` and the
//! terminal event: the upstream's `RUN_FINISHED` (result, outcome, interrupts, usage) or
//! `RUN_ERROR` (message and code) becomes the run's end. A response holding several runs
//! (`RUN_STARTED` again after an end) is relayed as one run: every event in order, the last
//! terminal event as the end.
//!
//! # Failures
//!
//! Whatever goes wrong upstream ends the run with `RUN_ERROR` and one of the stable
//! [`codes`]; the events relayed before it stay delivered (and stored). Each failure is
//! logged (`tracing`, warning level, field `code`) and counted
//! ([`aguikit_server::metrics::UPSTREAM_ERRORS`], labels `upstream` and `code`; a
//! `RUN_ERROR` of the upstream's own is counted as `run_error`).
//!
//! # What an upstream cannot make the gateway do
//!
//! - **Follow a redirect.** A `3xx` ends the run with [`codes::REDIRECT`], naming the
//!   status and the host it pointed to; nothing is sent there, so the configured headers
//!   (the upstream's credentials) only ever go to the configured URL's origin, and no
//!   `Referer` is sent at all.
//! - **Speak to the client through an error body.** What an upstream says in a non-2xx
//!   body (a stack trace, an internal address) goes to the operator's log; the client's
//!   `RUN_ERROR` holds the code, the status and at most a short excerpt, its control
//!   characters replaced ([`UpstreamBuilder::error_excerpt`], 200 characters by default,
//!   0 for none).
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_debug_implementations, missing_docs)]

use aguikit_client::{ClientError, HttpAgent, RunStream, WireFormat};
use aguikit_core::engine::pipeline::PipelineErrorKind;
use aguikit_core::{AgentCapabilities, Event, RunAgentInput};
use aguikit_server::{Agent, AgentError, AgentResult, Finish, RunContext};
use futures_util::StreamExt;
use futures_util::future::Either;
use std::time::Duration;

/// The `code`s of the `RUN_ERROR` that ends a run when its upstream fails: the gateway's
/// rows of [`RunErrorCode`](aguikit_server::RunErrorCode), aguikit's one table of codes.
pub mod codes {
    use aguikit_server::RunErrorCode;

    /// The upstream could not be reached: connection refused, DNS, TLS, a reset before the
    /// response.
    pub const UNREACHABLE: &str = RunErrorCode::UpstreamUnreachable.as_str();
    /// The upstream answered with a status other than 2xx (the message has the status and
    /// the start of the body).
    pub const HTTP_STATUS: &str = RunErrorCode::UpstreamHttpStatus.as_str();
    /// The upstream's response is not an AG-UI event stream (its content type is neither
    /// `text/event-stream` nor the protobuf media type).
    pub const CONTENT_TYPE: &str = RunErrorCode::UpstreamContentType.as_str();
    /// The upstream's response ended without `RUN_FINISHED` or `RUN_ERROR`.
    pub const INCOMPLETE: &str = RunErrorCode::UpstreamIncomplete.as_str();
    /// The connection to the upstream broke in the middle of its response.
    pub const CONNECTION_LOST: &str = RunErrorCode::UpstreamConnectionLost.as_str();
    /// No event came from the upstream within the first-event timeout.
    pub const FIRST_EVENT_TIMEOUT: &str = RunErrorCode::UpstreamFirstEventTimeout.as_str();
    /// No event came from the upstream within the idle timeout since the last one.
    pub const IDLE_TIMEOUT: &str = RunErrorCode::UpstreamIdleTimeout.as_str();
    /// An upstream event breaks a protocol rule (the message names the rule, the event's
    /// index in the upstream's response and its type).
    pub const PROTOCOL_VIOLATION: &str = RunErrorCode::UpstreamProtocolViolation.as_str();
    /// An upstream event cannot be read: not JSON, not an object, no type, a field of the
    /// wrong type, a broken frame (the message names the event's index).
    pub const MALFORMED_EVENT: &str = RunErrorCode::UpstreamMalformedEvent.as_str();
    /// The upstream's response is over a limit (frame size, events, bytes).
    pub const LIMIT_EXCEEDED: &str = RunErrorCode::UpstreamLimitExceeded.as_str();
    /// The request could not be made (the input cannot be encoded).
    pub const REQUEST_FAILED: &str = RunErrorCode::UpstreamRequestFailed.as_str();
    /// The upstream answered with a redirect (`3xx`), which is never followed: the message
    /// names the status and the host of its `Location`.
    pub const REDIRECT: &str = RunErrorCode::UpstreamRedirect.as_str();

    /// Every code above.
    pub const ALL: &[&str] = &[
        UNREACHABLE,
        HTTP_STATUS,
        CONTENT_TYPE,
        INCOMPLETE,
        CONNECTION_LOST,
        FIRST_EVENT_TIMEOUT,
        IDLE_TIMEOUT,
        PROTOCOL_VIOLATION,
        MALFORMED_EVENT,
        LIMIT_EXCEEDED,
        REQUEST_FAILED,
        REDIRECT,
    ];
}

/// An AG-UI agent at another server's URL, served as an [`Agent`].
///
/// Cheap to clone (clones share the connection pool).
#[derive(Clone)]
pub struct Upstream {
    name: String,
    agent: HttpAgent,
    display_url: String,
    /// The URL as the HTTP client writes it in its errors (credentials included), to be
    /// replaced by `display_url` in messages.
    raw_url: String,
    error_excerpt: usize,
    connect_timeout: Duration,
    first_event_timeout: Option<Duration>,
    idle_timeout: Option<Duration>,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the headers: they hold the upstream's credentials.
        f.debug_struct("Upstream")
            .field("name", &self.name)
            .field("url", &self.display_url)
            .field("first_event_timeout", &self.first_event_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .finish_non_exhaustive()
    }
}

/// Configures an [`Upstream`].
///
/// ```
/// use aguikit_gateway::Upstream;
/// use std::time::Duration;
/// let upstream = Upstream::builder("py", "http://user:pw@127.0.0.1:8123/agent?api_key=k&mode=x")
///     .header("X-Api-Key", "secret")
///     .first_event_timeout(Some(Duration::from_secs(30)))
///     .build()
///     .unwrap();
/// assert_eq!(upstream.name(), "py");
/// // The URL as shown (GET /agents, logs): no credentials.
/// assert_eq!(upstream.url(), "http://127.0.0.1:8123/agent?api_key=***&mode=x");
/// ```
#[derive(Debug)]
pub struct UpstreamBuilder {
    name: String,
    url: String,
    headers: Vec<(String, String)>,
    encoding: WireFormat,
    connect_timeout: Duration,
    first_event_timeout: Option<Duration>,
    idle_timeout: Option<Duration>,
    max_frame_size: Option<usize>,
    error_excerpt: usize,
}

/// The default of [`UpstreamBuilder::error_excerpt`], in characters.
pub const DEFAULT_ERROR_EXCERPT: usize = 200;

/// Why an [`Upstream`] could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildError(String);

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BuildError {}

impl Upstream {
    /// A builder for the upstream `name` (used in logs and metrics) at `url`.
    ///
    /// Defaults: ask for protobuf and accept SSE; 10 s to connect; 60 s to the first event;
    /// 5 min between two events; the client's frame size limit (16 MiB); error bodies shown
    /// to clients cut to [`DEFAULT_ERROR_EXCERPT`] characters.
    pub fn builder(name: impl Into<String>, url: impl Into<String>) -> UpstreamBuilder {
        UpstreamBuilder {
            name: name.into(),
            url: url.into(),
            headers: Vec::new(),
            encoding: WireFormat::Proto,
            connect_timeout: Duration::from_secs(10),
            first_event_timeout: Some(Duration::from_secs(60)),
            idle_timeout: Some(Duration::from_secs(300)),
            max_frame_size: None,
            error_excerpt: DEFAULT_ERROR_EXCERPT,
        }
    }

    /// The upstream's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The upstream's URL without credentials: no user or password, and the values of
    /// query parameters whose names suggest a secret (`key`, `token`, `secret`,
    /// `password`, `auth`, `sig`) replaced by `***`.
    pub fn url(&self) -> &str {
        &self.display_url
    }

    /// Ends the run with `RUN_ERROR` `code`, logging and counting it.
    fn fail(&self, code: &'static str, message: String) -> AgentError {
        // The HTTP client names the URL as configured, secrets and all: never past here.
        let message = message.replace(&self.raw_url, &self.display_url);
        tracing::warn!(upstream = %self.name, code, "upstream failed: {message}");
        metrics::counter!(
            aguikit_server::metrics::UPSTREAM_ERRORS,
            "upstream" => self.name.clone(),
            "code" => code,
        )
        .increment(1);
        AgentError::new(format!("upstream {}: {message}", self.name)).with_code(code)
    }

    /// The run's error for a client error of the upstream's response; `received`: events
    /// received so far.
    fn client_failure(&self, e: ClientError, received: usize) -> AgentError {
        let (code, message) = match &e {
            ClientError::Request { message, .. } => match Refused::parse(message) {
                Some(r) => (
                    codes::REDIRECT,
                    format!(
                        "{} answered HTTP {} redirecting to host {}; redirects are not followed",
                        self.display_url, r.status, r.host
                    ),
                ),
                None => (
                    codes::UNREACHABLE,
                    format!("cannot reach {}: {message}", self.display_url),
                ),
            },
            // A 3xx the client did not take for a redirect (no usable Location).
            ClientError::Http { status, .. } if (300..400).contains(status) => (
                codes::REDIRECT,
                format!(
                    "{} answered HTTP {status} (a redirect without a usable Location); redirects are not followed",
                    self.display_url
                ),
            ),
            ClientError::Http { status, body, .. } => {
                // The whole body for the operator; for the client, an excerpt at most.
                tracing::warn!(upstream = %self.name, status, body = %body, "the upstream's error body");
                (
                    codes::HTTP_STATUS,
                    format!(
                        "{} answered HTTP {status}{}",
                        self.display_url,
                        shown(body, self.error_excerpt)
                    ),
                )
            }
            ClientError::ContentType { content_type, body } => {
                tracing::warn!(upstream = %self.name, body = %body, "the start of the upstream's response");
                (
                    codes::CONTENT_TYPE,
                    format!(
                        "the response is not an AG-UI event stream: content type {}{}",
                        content_type
                            .as_deref()
                            .map(|c| format!("{:?}", sanitised(c, 100)))
                            .unwrap_or_else(|| "absent".into()),
                        shown(body, self.error_excerpt)
                    ),
                )
            }
            ClientError::ConnectionLost { .. } => (codes::CONNECTION_LOST, e.to_string()),
            ClientError::Timeout { .. } if received == 0 => {
                (codes::FIRST_EVENT_TIMEOUT, e.to_string())
            }
            ClientError::Timeout { .. } => (codes::IDLE_TIMEOUT, e.to_string()),
            ClientError::Framing { .. } => (codes::MALFORMED_EVENT, e.to_string()),
            ClientError::Protocol(p) => {
                let code = match &p.kind {
                    PipelineErrorKind::Decode(_) => codes::MALFORMED_EVENT,
                    _ => codes::PROTOCOL_VIOLATION,
                };
                (
                    code,
                    format!(
                        "event {} ({}) breaks rule {}: {}",
                        p.index,
                        p.event_type,
                        p.rule(),
                        p.kind
                    ),
                )
            }
            ClientError::LimitExceeded { .. } => (codes::LIMIT_EXCEEDED, e.to_string()),
            _ => (codes::REQUEST_FAILED, e.to_string()),
        };
        self.fail(code, message)
    }
}

impl UpstreamBuilder {
    /// Adds a header sent with every request to the upstream (its credentials, a tenant
    /// header...). `Content-Type` and `Accept` are the gateway's.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The wire format to ask for: [`WireFormat::Proto`] (the default) asks for protobuf
    /// and accepts SSE; [`WireFormat::Sse`] asks for SSE only. The response's content type
    /// decides how it is read.
    pub fn wire_format(mut self, encoding: WireFormat) -> Self {
        self.encoding = encoding;
        self
    }

    /// How long connecting (TCP and TLS) may take; past it the run fails with
    /// [`codes::UNREACHABLE`].
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long the first event may take from the request (connection and response
    /// headers included); past it: [`codes::FIRST_EVENT_TIMEOUT`]. `None`: no limit.
    pub fn first_event_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.first_event_timeout = timeout;
        self
    }

    /// How long the upstream may send no event (SSE comments do not count); past it:
    /// [`codes::IDLE_TIMEOUT`]. `None`: no limit.
    pub fn idle_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// The largest frame accepted from the upstream, in bytes (past it:
    /// [`codes::MALFORMED_EVENT`]).
    pub fn max_frame_size(mut self, bytes: usize) -> Self {
        self.max_frame_size = Some(bytes);
        self
    }

    /// How much of an upstream's error body (a non-2xx answer, or a response that is not
    /// an event stream) the client's `RUN_ERROR` shows, in characters, after control
    /// characters are replaced by spaces and runs of white space folded; 0 shows none. The
    /// whole body (as far as the client reads it) goes to the log. Default
    /// [`DEFAULT_ERROR_EXCERPT`].
    ///
    /// ```
    /// let up = aguikit_gateway::Upstream::builder("py", "http://127.0.0.1:8123/agent")
    ///     .error_excerpt(0)
    ///     .build()
    ///     .unwrap();
    /// # let _ = up;
    /// ```
    pub fn error_excerpt(mut self, chars: usize) -> Self {
        self.error_excerpt = chars;
        self
    }

    /// Builds the upstream; fails on a URL that is not absolute http(s), an invalid header
    /// or an empty name.
    pub fn build(self) -> Result<Upstream, BuildError> {
        if self.name.is_empty() {
            return Err(BuildError("an upstream needs a name".into()));
        }
        let parsed = reqwest::Url::parse(&self.url)
            .map_err(|e| BuildError(format!("upstream {}: invalid URL: {e}", self.name)))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(BuildError(format!(
                "upstream {}: the URL must be http or https",
                self.name
            )));
        }
        let raw_url = parsed.to_string();
        let display_url = display_url(parsed);
        // Redirects are never followed: a 3xx ends the run (`codes::REDIRECT`), so the
        // configured headers go to the configured origin only; no Referer either.
        aguikit_client::install_tls();
        let client = reqwest::Client::builder()
            .tcp_nodelay(true)
            // An idle pooled connection is dropped before the common servers close theirs
            // (uvicorn and Node after 5 s, `agui serve` after its 10 s header timeout): a run
            // posted on a connection the upstream is closing fails with "connection closed
            // before message completed", and a run cannot be retried blindly.
            .pool_idle_timeout(aguikit_client::POOL_IDLE_TIMEOUT)
            .connect_timeout(self.connect_timeout)
            .referer(false)
            .redirect(reqwest::redirect::Policy::custom(|attempt| {
                let refused = Refused {
                    status: attempt.status().as_u16(),
                    host: attempt.url().host_str().unwrap_or("(none)").to_owned(),
                };
                attempt.error(refused)
            }))
            .build()
            .map_err(|e| BuildError(format!("upstream {}: HTTP client: {e}", self.name)))?;
        let mut builder = HttpAgent::builder(&self.url)
            .client(client)
            .wire_format(self.encoding)
            .timeouts(aguikit_client::Timeouts {
                connect: Some(self.connect_timeout),
                // The first-event and idle limits are the gateway's own, counted in events.
                response: None,
                idle: None,
                total: None,
            });
        if let Some(n) = self.max_frame_size {
            builder = builder.max_frame_size(n);
        }
        for (name, value) in &self.headers {
            builder = builder.header(name, value);
        }
        let agent = builder.build().map_err(|e| {
            // The error names the header, never its value.
            BuildError(format!("upstream {}: {e}", self.name))
        })?;
        Ok(Upstream {
            name: self.name,
            agent,
            display_url,
            raw_url,
            error_excerpt: self.error_excerpt,
            connect_timeout: self.connect_timeout,
            first_event_timeout: self.first_event_timeout,
            idle_timeout: self.idle_timeout,
        })
    }
}

/// A redirect the HTTP client refused to follow; its text, which reaches the gateway inside
/// the client's error message, is read back by [`Refused::parse`].
#[derive(Debug)]
struct Refused {
    status: u16,
    host: String,
}

const REFUSED_MARK: &str = "aguikit-gateway refused a redirect: status ";

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{REFUSED_MARK}{} host {}", self.status, self.host)
    }
}

impl std::error::Error for Refused {}

impl Refused {
    /// The refused redirect named in a client error's message.
    fn parse(message: &str) -> Option<Refused> {
        let rest = &message[message.find(REFUSED_MARK)? + REFUSED_MARK.len()..];
        let (status, rest) = rest.split_once(" host ")?;
        let host: String = rest
            .chars()
            .take_while(|c| {
                c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']' | '(' | ')')
            })
            .collect();
        Some(Refused {
            status: status.parse().ok()?,
            host,
        })
    }
}

/// `text` fit for a client's error message: control characters as spaces, white space
/// folded, at most `max` characters.
fn sanitised(text: &str, max: usize) -> String {
    let folded: String = text
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    aguikit_core::fmt::excerpt(&folded, max)
}

/// `: EXCERPT` of an upstream's body for a client's message, or nothing.
fn shown(body: &str, max: usize) -> String {
    let excerpt = sanitised(body, max);
    if max == 0 || excerpt.is_empty() {
        String::new()
    } else {
        format!(": {excerpt}")
    }
}

/// `url` without user, password and secret-looking query values.
fn display_url(mut url: reqwest::Url) -> String {
    let _ = url.set_username("");
    let _ = url.set_password(None);
    if url.query().is_some() {
        let secret = |name: &str| {
            let n = name.to_ascii_lowercase();
            ["key", "token", "secret", "password", "auth", "sig"]
                .iter()
                .any(|s| n.contains(s))
        };
        let pairs: Vec<String> = url
            .query()
            .unwrap_or("")
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, _)) if secret(name) => format!("{name}=***"),
                _ => pair.to_owned(),
            })
            .collect();
        url.set_query(Some(&pairs.join("&")));
    }
    url.to_string()
}

/// How the upstream's response has ended so far: its last terminal event.
enum End {
    Finished(Finish),
    Failed(AgentError),
}

impl Agent for Upstream {
    /// The upstream's own capabilities (`GET {url}/capabilities`, with the configured
    /// headers, within the connect timeout plus the first-event timeout), which the server
    /// completes with its transport (protobuf, resumable streams with a store). An upstream
    /// that serves none (or cannot be reached) declares nothing: the failure is logged.
    async fn capabilities(&self) -> AgentCapabilities {
        let limit =
            self.connect_timeout + self.first_event_timeout.unwrap_or(Duration::from_secs(60));
        match tokio::time::timeout(limit, self.agent.capabilities()).await {
            Ok(Ok(caps)) => caps,
            Ok(Err(e)) => {
                let message = e.to_string().replace(&self.raw_url, &self.display_url);
                tracing::info!(upstream = %self.name, "the upstream's capabilities: {message}");
                AgentCapabilities::default()
            }
            Err(_) => {
                tracing::info!(upstream = %self.name, "the upstream's capabilities: no answer within {limit:?}");
                AgentCapabilities::default()
            }
        }
    }

    async fn run(&self, input: RunAgentInput, ctx: RunContext) -> AgentResult {
        let mut stream: RunStream = self.agent.run(input);
        let mut received = 0usize;
        let mut end: Option<End> = None;
        // One timer for the run, moved on at each event (cheaper than one per event).
        let mut timer = std::pin::pin!(tokio::time::sleep(Duration::ZERO));
        loop {
            let limit = if received == 0 {
                self.first_event_timeout
            } else {
                self.idle_timeout
            };
            let next = match limit {
                None => stream.next().await,
                Some(limit) => {
                    timer.as_mut().reset(tokio::time::Instant::now() + limit);
                    match futures_util::future::select(stream.next(), timer.as_mut()).await {
                        Either::Left((next, _)) => next,
                        // The run has ended; the upstream keeps its response open.
                        Either::Right(_) if end.is_some() => break,
                        Either::Right(_) if received == 0 => {
                            return Err(self.fail(
                                codes::FIRST_EVENT_TIMEOUT,
                                format!("no event within {limit:?} of the request"),
                            ));
                        }
                        Either::Right(_) => {
                            return Err(self.fail(
                                codes::IDLE_TIMEOUT,
                                format!("no event for {limit:?} after {received} event(s)"),
                            ));
                        }
                    }
                }
            };
            let event = match next {
                None => break,
                Some(Ok(event)) => event,
                // A broken connection after the run's end loses nothing.
                Some(Err(ClientError::ConnectionLost { .. } | ClientError::Timeout { .. }))
                    if end.is_some() =>
                {
                    break;
                }
                Some(Err(e)) => return Err(self.client_failure(e, received)),
            };
            received += 1;
            match event {
                Event::RunStarted(_) => {}
                Event::RunFinished(f) => end = Some(End::Finished(Finish::from(f))),
                Event::RunError(e) => {
                    let mut err = AgentError::new(e.message);
                    if let Some(code) = e.code {
                        err = err.with_code(code);
                    }
                    end = Some(End::Failed(err));
                }
                other => ctx.emit(other).await?,
            }
        }
        match end {
            Some(End::Finished(finish)) => Ok(finish),
            Some(End::Failed(err)) => {
                metrics::counter!(
                    aguikit_server::metrics::UPSTREAM_ERRORS,
                    "upstream" => self.name.clone(),
                    "code" => "run_error",
                )
                .increment(1);
                tracing::info!(upstream = %self.name, code = err.code().unwrap_or(""), "the upstream's run failed: {}", err.message());
                Err(err)
            }
            None => Err(self.fail(
                codes::INCOMPLETE,
                format!(
                    "the response ended after {received} event(s) without RUN_FINISHED or RUN_ERROR"
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_shown_without_credentials() {
        let show = |u: &str| display_url(reqwest::Url::parse(u).unwrap());
        assert_eq!(
            show("https://alice:pw@example.test/agent"),
            "https://example.test/agent"
        );
        assert_eq!(
            show("http://127.0.0.1:9/a?scenario=chat&API_KEY=x&access_token=y&sig=z"),
            "http://127.0.0.1:9/a?scenario=chat&API_KEY=***&access_token=***&sig=***"
        );
        assert_eq!(show("http://127.0.0.1:9/a"), "http://127.0.0.1:9/a");
    }

    #[test]
    fn bad_configurations_are_refused() {
        assert!(
            Upstream::builder("", "http://127.0.0.1:1/")
                .build()
                .is_err()
        );
        assert!(
            Upstream::builder("a", "ftp://127.0.0.1:1/")
                .build()
                .is_err()
        );
        assert!(Upstream::builder("a", "not a url").build().is_err());
        let e = Upstream::builder("a", "http://127.0.0.1:1/")
            .header("bad header", "s3cret-value")
            .build()
            .unwrap_err();
        assert!(!e.to_string().contains("s3cret-value"), "{e}");
        let ok = Upstream::builder("a", "http://127.0.0.1:1/")
            .header("X-Key", "s3cret-value")
            .build()
            .unwrap();
        assert!(!format!("{ok:?}").contains("s3cret-value"));
    }

    #[test]
    fn refused_redirects_read_back_and_bodies_are_sanitised() {
        let r = Refused {
            status: 307,
            host: "internal.example".into(),
        };
        let message = format!("error following redirect for url (http://x/?k=1): {r}");
        let back = Refused::parse(&message).unwrap();
        assert_eq!((back.status, back.host.as_str()), (307, "internal.example"));
        assert!(Refused::parse("connection refused").is_none());
        assert_eq!(sanitised("a\n\tb\u{1b}[31m  c", 50), "a b [31m c");
        assert_eq!(sanitised(&"x".repeat(300), 200).chars().count(), 201);
        assert_eq!(shown("trace", 0), "");
        assert_eq!(shown("trace", 3), ": tra…");
    }

    #[test]
    fn codes_are_distinct_and_prefixed() {
        let mut all = codes::ALL.to_vec();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), codes::ALL.len());
        assert!(all.iter().all(|c| c.starts_with("upstream_")));
    }
}
