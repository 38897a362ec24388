//! Who may call an [`AgentServer`](crate::AgentServer), and from where: authentication
//! (a hook that turns a request into a [`Principal`]), the `Host` check against DNS
//! rebinding, the `application/json` requirement on runs, and per-principal quotas.
//!
//! # The model
//!
//! - **Authentication.** With an [`Authenticate`] hook set ([`Access::auth`]), every request
//!   to the agent's routes (the run, the thread routes) must carry credentials the hook
//!   accepts, else `401` with a JSON error and `WWW-Authenticate: Bearer`. [`Tokens`] is the
//!   ready-made hook: bearer tokens, each naming a principal, some of them admins. Without a
//!   hook every caller is the anonymous admin — only right on a trusted network or loopback
//!   with a trusted browser; `agui serve` therefore turns tokens on by default.
//! - **Ownership.** With a store, a thread id names a thread within its owner's namespace:
//!   another principal using the id reaches its own thread (a new one for a run, `404` on the
//!   thread routes), exactly as for an id nobody used (no existence oracle, no squatting), and
//!   never sees another's threads in listings. Admins list every owner's threads and read
//!   another's with `?owner=NAME`. Threads made without authentication have no owner
//!   (`?owner=`). See the `store` module's routes.
//! - **Origins.** No CORS grant unless configured ([`AgentServer::cors`](crate::AgentServer::cors)),
//!   so a web page of another origin can read nothing. A run must be posted as
//!   `application/json` (`415` otherwise): a cross-site "simple request" (`text/plain`, no
//!   preflight) starts nothing.
//! - **Hosts.** On a loopback listener (served by [`serve`](crate::serve), which records
//!   each connection's local address) a request whose `Host` is not a loopback name or
//!   address is refused with `421`, unless listed in [`Access::allowed_hosts`]: a DNS
//!   rebinding page cannot reach a server bound to `127.0.0.1`.
//! - **Quotas.** Runs per minute and concurrent runs per principal ([`Access::runs_per_minute`],
//!   [`Access::concurrent_runs`]); over either, `429` with `Retry-After`.

use crate::api_error::{ApiError, ErrorCode};
use axum::extract::Request;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Who is calling: the result of authentication, attached to every request the agent's
/// routes see (as a request extension).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Principal {
    name: String,
    admin: bool,
    anonymous: bool,
}

impl Principal {
    /// A named principal (`admin`: sees every thread).
    pub fn new(name: impl Into<String>, admin: bool) -> Principal {
        Principal {
            name: name.into(),
            admin,
            anonymous: false,
        }
    }

    /// The caller of a server without authentication: an admin with no name, whose
    /// threads have no owner.
    pub fn anonymous() -> Principal {
        Principal {
            name: "anonymous".into(),
            admin: true,
            anonymous: true,
        }
    }

    /// The principal's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether it sees every thread.
    pub fn is_admin(&self) -> bool {
        self.admin
    }

    /// Whether this is [`Principal::anonymous`].
    pub fn is_anonymous(&self) -> bool {
        self.anonymous
    }

    /// The owner recorded for threads this principal creates (`None` when anonymous).
    pub fn owner(&self) -> Option<&str> {
        (!self.anonymous).then_some(self.name.as_str())
    }

    /// Whether this principal may see a thread owned by `owner`.
    pub fn may_see(&self, owner: Option<&str>) -> bool {
        self.admin || owner == Some(self.name.as_str())
    }
}

/// Turns a request's headers into a [`Principal`], or refuses it (`401`). Implement it to
/// plug any scheme in (sessions, JWTs, mTLS identities put in headers by a proxy...).
pub trait Authenticate: Send + Sync + 'static {
    /// The caller, or `None` when the credentials are missing or wrong.
    fn authenticate(&self, headers: &HeaderMap) -> Option<Principal>;
}

impl<F> Authenticate for F
where
    F: Fn(&HeaderMap) -> Option<Principal> + Send + Sync + 'static,
{
    fn authenticate(&self, headers: &HeaderMap) -> Option<Principal> {
        self(headers)
    }
}

/// Bearer tokens, each naming a principal (`Authorization: Bearer TOKEN`).
///
/// ```
/// use aguikit_server::Tokens;
/// let tokens = Tokens::parse("# name token [admin]\nalice s3cret-alice-token admin\nbob s3cret-bob-token\n").unwrap();
/// assert_eq!(tokens.len(), 2);
/// let single = Tokens::single("one-token-for-everything-0123456789");
/// assert_eq!(single.len(), 1);
/// ```
#[derive(Clone)]
pub struct Tokens {
    entries: Vec<(Vec<u8>, Principal)>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the tokens themselves.
        f.debug_list()
            .entries(self.entries.iter().map(|(_, p)| p))
            .finish()
    }
}

/// The shortest token accepted: shorter ones are guessable.
pub const MIN_TOKEN_LEN: usize = 16;

impl Tokens {
    /// One token for one admin principal named `default`.
    pub fn single(token: impl Into<String>) -> Tokens {
        Tokens {
            entries: vec![(token.into().into_bytes(), Principal::new("default", true))],
        }
    }

    /// A fresh random token (256 bits from the operating system's generator, as 64 hex
    /// digits).
    pub fn random_token() -> String {
        let hex = aguikit_core::id::random_hex;
        format!("{}{}", hex(32), hex(32))
    }

    /// Parses a tokens file. Blank lines and lines starting with `#` are skipped; a line is
    /// either `TOKEN` alone (the admin principal `default`, for a file holding just one
    /// token) or `NAME TOKEN` optionally followed by `admin`. Names and tokens are unique;
    /// tokens have at least [`MIN_TOKEN_LEN`] characters. Errors name the line.
    pub fn parse(text: &str) -> Result<Tokens, String> {
        let mut entries: Vec<(Vec<u8>, Principal)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            let (name, token, admin) = match words.as_slice() {
                [token] => ("default", *token, true),
                [name, token] => (*name, *token, false),
                [name, token, "admin"] => (*name, *token, true),
                [_, _, other] => {
                    return Err(format!(
                        "line {n}: the third word may only be `admin`, not {other:?}"
                    ));
                }
                _ => return Err(format!("line {n}: expected `NAME TOKEN [admin]`")),
            };
            if token.len() < MIN_TOKEN_LEN {
                return Err(format!(
                    "line {n}: the token of {name:?} is shorter than {MIN_TOKEN_LEN} characters"
                ));
            }
            if entries.iter().any(|(_, p)| p.name == name) {
                return Err(format!("line {n}: the name {name:?} appears twice"));
            }
            if entries.iter().any(|(t, _)| t == token.as_bytes()) {
                return Err(format!("line {n}: the token of {name:?} is used twice"));
            }
            entries.push((token.as_bytes().to_vec(), Principal::new(name, admin)));
        }
        if entries.is_empty() {
            return Err("no token in the file".into());
        }
        Ok(Tokens { entries })
    }

    /// How many tokens there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The principal a token stands for.
    pub fn principal(&self, token: &str) -> Option<Principal> {
        use subtle::ConstantTimeEq;
        // Every entry is compared, in constant time per entry, so timing tells nothing
        // about which token nearly matched.
        let mut found = None;
        for (t, p) in &self.entries {
            if bool::from(t.as_slice().ct_eq(token.as_bytes())) {
                found = Some(p.clone());
            }
        }
        found
    }
}

impl Authenticate for Tokens {
    fn authenticate(&self, headers: &HeaderMap) -> Option<Principal> {
        let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
        let (scheme, token) = value.trim().split_once(' ')?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return None;
        }
        self.principal(token.trim())
    }
}

/// The local address of the connection a request came in on: [`serve`](crate::serve) puts
/// it in every request's extensions. The `Host` check applies when it is a loopback
/// address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalAddr(pub SocketAddr);

/// The access policy of an [`AgentServer`](crate::AgentServer): see the [module
/// docs](crate::access).
///
/// ```
/// use aguikit_server::{Access, Tokens};
/// let access = Access::default()
///     .auth(Tokens::single("a-long-random-token-0123456789"))
///     .allowed_hosts(["agui.internal"])
///     .runs_per_minute(Some(60))
///     .concurrent_runs(Some(4));
/// assert!(access.has_auth());
/// ```
#[derive(Clone)]
pub struct Access {
    auth: Option<Arc<dyn Authenticate>>,
    allowed_hosts: Vec<String>,
    host_check: bool,
    runs_per_minute: Option<NonZeroU32>,
    concurrent_runs: Option<usize>,
}

impl Default for Access {
    /// No authentication, the `Host` check on (for loopback listeners), JSON runs only,
    /// no quotas.
    fn default() -> Self {
        Access {
            auth: None,
            allowed_hosts: Vec::new(),
            host_check: true,
            runs_per_minute: None,
            concurrent_runs: None,
        }
    }
}

impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Access")
            .field("auth", &self.auth.is_some())
            .field("allowed_hosts", &self.allowed_hosts)
            .field("host_check", &self.host_check)
            .field("runs_per_minute", &self.runs_per_minute)
            .field("concurrent_runs", &self.concurrent_runs)
            .finish()
    }
}

impl Access {
    /// Requires every request to pass `auth`.
    pub fn auth(mut self, auth: impl Authenticate) -> Self {
        self.auth = Some(Arc::new(auth));
        self
    }

    /// Whether an authentication hook is set.
    pub fn has_auth(&self) -> bool {
        self.auth.is_some()
    }

    /// Extra `Host` names (without port) accepted on a loopback listener, besides
    /// `localhost`, `*.localhost` and loopback addresses.
    pub fn allowed_hosts<I: IntoIterator<Item = S>, S: Into<String>>(mut self, hosts: I) -> Self {
        self.allowed_hosts
            .extend(hosts.into_iter().map(|h| h.into().to_ascii_lowercase()));
        self
    }

    /// Turns the `Host` check off (default on; it only applies on loopback listeners).
    pub fn host_check(mut self, on: bool) -> Self {
        self.host_check = on;
        self
    }

    /// At most this many runs started per principal per minute (`None`: no limit).
    pub fn runs_per_minute(mut self, runs: Option<u32>) -> Self {
        self.runs_per_minute = runs.and_then(NonZeroU32::new);
        self
    }

    /// At most this many runs of one principal at once (`None`: no limit).
    pub fn concurrent_runs(mut self, runs: Option<usize>) -> Self {
        self.concurrent_runs = runs.filter(|n| *n > 0);
        self
    }
}

/// The live state behind an [`Access`]: the rate limiter and the concurrency permits.
pub(crate) struct Gate {
    pub(crate) access: Access,
    limiter: Option<RateLimiter<String, DefaultKeyedStateStore<String>, DefaultClock>>,
    running: Mutex<HashMap<String, Arc<Semaphore>>>,
}

impl Gate {
    pub(crate) fn new(access: Access) -> Gate {
        let limiter = access
            .runs_per_minute
            .map(|n| RateLimiter::keyed(Quota::per_minute(n)));
        Gate {
            access,
            limiter,
            running: Mutex::new(HashMap::new()),
        }
    }

    /// Checks the host and the credentials; the principal, or the refusal.
    #[allow(clippy::result_large_err)]
    pub(crate) fn admit(&self, request: &Request) -> Result<Principal, Response> {
        if self.access.host_check
            && let Some(LocalAddr(local)) = request.extensions().get::<LocalAddr>()
            && local.ip().is_loopback()
            && let Some(host) = host_of(request)
            && !self.host_allowed(&host)
        {
            return Err(ApiError::new(
                ErrorCode::MisdirectedHost,
                format!(
                    "this server listens on loopback and does not answer for Host {host:?}; \
                     add it with --allowed-host (Access::allowed_hosts) if it is yours"
                ),
            )
            .into_response());
        }
        match &self.access.auth {
            None => Ok(Principal::anonymous()),
            Some(auth) => auth.authenticate(request.headers()).ok_or_else(|| {
                // With `WWW-Authenticate: Bearer`.
                ApiError::new(ErrorCode::Unauthorized, "this server needs `Authorization: Bearer TOKEN` (agui serve prints the token in its console URL; set AGUI_TOKEN for the agui commands)").into_response()
            }),
        }
    }

    fn host_allowed(&self, host: &str) -> bool {
        if host == "localhost" || host.ends_with(".localhost") {
            return true;
        }
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        if bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback()) {
            return true;
        }
        self.access.allowed_hosts.iter().any(|h| h == host)
    }

    /// Takes a run slot for `principal`: `Ok(permit)` (held for the run's life) or the `429`.
    #[allow(clippy::result_large_err)]
    pub(crate) fn start_run(
        &self,
        principal: &Principal,
    ) -> Result<Option<OwnedSemaphorePermit>, Response> {
        let key = principal.name.clone();
        let permit = match self.access.concurrent_runs {
            None => None,
            Some(n) => {
                let sem = self
                    .running
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .entry(key.clone())
                    .or_insert_with(|| Arc::new(Semaphore::new(n)))
                    .clone();
                match sem.try_acquire_owned() {
                    Ok(p) => Some(p),
                    Err(_) => {
                        return Err(too_many(
                            format!("{} runs of {:?} are already running (the limit)", n, key),
                            Duration::from_secs(1),
                        ));
                    }
                }
            }
        };
        if let Some(limiter) = &self.limiter
            && let Err(not_until) = limiter.check_key(&key)
        {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            return Err(too_many(
                format!(
                    "{key:?} started its {} runs of this minute (the limit)",
                    self.access.runs_per_minute.map_or(0, |n| n.get())
                ),
                wait,
            ));
        }
        Ok(permit)
    }
}

fn too_many(message: String, wait: Duration) -> Response {
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    ApiError::new(ErrorCode::RateLimited, message)
        .retry_after(secs)
        .into_response()
}

/// The request's `Host` (lowercase, without port), if any.
fn host_of(request: &Request) -> Option<String> {
    let raw = request
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| request.uri().authority().map(|a| a.as_str().to_owned()))?;
    let raw = raw.trim().to_ascii_lowercase();
    let host = if raw.starts_with('[') {
        // [v6]:port
        match raw.find(']') {
            Some(end) => raw[..=end].to_owned(),
            None => raw,
        }
    } else {
        match raw.rsplit_once(':') {
            Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h.to_owned(),
            _ => raw,
        }
    };
    Some(host.trim_end_matches('.').to_owned())
}

/// Whether the request declares a JSON body (`application/json`, any parameters).
pub(crate) fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
}

/// The middleware of the agent's routes: admits the request (host, credentials) and puts
/// the [`Principal`] in its extensions.
pub(crate) async fn middleware(
    gate: Arc<Gate>,
    mut request: Request,
    next: axum::middleware::Next,
) -> Response {
    match gate.admit(&request) {
        Ok(principal) => {
            request.extensions_mut().insert(principal);
            next.run(request).await
        }
        Err(res) => res,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_file() {
        let t =
            Tokens::parse("\n# c\nalice aaaaaaaaaaaaaaaa admin\nbob bbbbbbbbbbbbbbbb\n").unwrap();
        assert_eq!(
            t.principal("aaaaaaaaaaaaaaaa"),
            Some(Principal::new("alice", true))
        );
        assert_eq!(
            t.principal("bbbbbbbbbbbbbbbb"),
            Some(Principal::new("bob", false))
        );
        assert_eq!(t.principal("cccccccccccccccc"), None);
        assert_eq!(t.principal(""), None);
        let one = Tokens::parse("cccccccccccccccc\n").unwrap();
        assert_eq!(
            one.principal("cccccccccccccccc"),
            Some(Principal::new("default", true))
        );
        assert!(Tokens::parse("").unwrap_err().contains("no token"));
        assert!(Tokens::parse("a short").unwrap_err().contains("line 1"));
        assert!(
            Tokens::parse("a aaaaaaaaaaaaaaaa root")
                .unwrap_err()
                .contains("admin")
        );
        assert!(
            Tokens::parse("a aaaaaaaaaaaaaaaa\na bbbbbbbbbbbbbbbb")
                .unwrap_err()
                .contains("twice")
        );
        assert!(
            Tokens::parse("a aaaaaaaaaaaaaaaa\nb aaaaaaaaaaaaaaaa")
                .unwrap_err()
                .contains("line 2")
        );
        let r = Tokens::random_token();
        assert_eq!(r.len(), 64);
        assert_ne!(r, Tokens::random_token());
    }

    #[test]
    fn bearer_header() {
        let t = Tokens::single("aaaaaaaaaaaaaaaa");
        let mut h = HeaderMap::new();
        assert!(t.authenticate(&h).is_none());
        h.insert(
            header::AUTHORIZATION,
            "Bearer aaaaaaaaaaaaaaaa".parse().unwrap(),
        );
        assert_eq!(t.authenticate(&h).unwrap().name(), "default");
        h.insert(
            header::AUTHORIZATION,
            "bearer  aaaaaaaaaaaaaaaa ".parse().unwrap(),
        );
        assert!(t.authenticate(&h).is_some());
        h.insert(
            header::AUTHORIZATION,
            "Basic aaaaaaaaaaaaaaaa".parse().unwrap(),
        );
        assert!(t.authenticate(&h).is_none());
    }

    #[test]
    fn hosts() {
        let gate = Gate::new(Access::default().allowed_hosts(["Agui.Example"]));
        for ok in [
            "localhost",
            "app.localhost",
            "127.0.0.1",
            "127.9.9.9",
            "[::1]",
            "agui.example",
        ] {
            assert!(gate.host_allowed(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "10.0.0.1",
            "localhost.evil.example",
            "[::2]",
        ] {
            assert!(!gate.host_allowed(bad), "{bad}");
        }
        let req = |h: &str| {
            axum::http::Request::builder()
                .header(header::HOST, h)
                .body(axum::body::Body::empty())
                .unwrap()
        };
        assert_eq!(host_of(&req("LOCALHOST:8000")).unwrap(), "localhost");
        assert_eq!(host_of(&req("[::1]:80")).unwrap(), "[::1]");
        assert_eq!(host_of(&req("evil.example.")).unwrap(), "evil.example");
    }

    #[test]
    fn json_content_type() {
        let mut h = HeaderMap::new();
        assert!(!is_json(&h));
        h.insert(header::CONTENT_TYPE, "text/plain".parse().unwrap());
        assert!(!is_json(&h));
        h.insert(
            header::CONTENT_TYPE,
            "Application/JSON; charset=utf-8".parse().unwrap(),
        );
        assert!(is_json(&h));
    }
}
