//! Who may call `agui serve`: the token (or tokens file), the access policy and CORS.

use super::ServeArgs;
use aguikit_server::AllowOrigin;
use aguikit_server::{Access, CorsLayer, Tokens};
use axum::http::{HeaderName, HeaderValue, Method, header};
use std::time::Duration;

/// How callers authenticate, as `agui serve` decides it from its options and environment.
pub enum Auth {
    /// `--no-auth`.
    Off,
    /// One token: drawn at random (`drawn`, shown in the console URL) or given by the
    /// operator in `$AGUI_TOKEN` (never printed).
    Single {
        /// The token.
        token: String,
        /// Drawn by `agui serve` (else given by the operator).
        drawn: bool,
    },
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
            Some(token) => Ok(Auth::Single {
                token,
                drawn: false,
            }),
            None => Ok(Auth::Single {
                token: Tokens::random_token(),
                drawn: true,
            }),
        }
    }

    fn tokens(&self) -> Option<Tokens> {
        match self {
            Auth::Off => None,
            Auth::Single { token, .. } => Some(Tokens::single(token.clone())),
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
            .allow_methods([Method::GET, Method::POST, Method::DELETE, Method::PATCH])
            .allow_headers([
                header::AUTHORIZATION,
                header::CONTENT_TYPE,
                header::ACCEPT,
                HeaderName::from_static("last-event-id"),
            ])
            .max_age(Duration::from_secs(600)),
    ))
}
