//! The agents `agui serve` can put behind its routes besides the demo: upstream AG-UI
//! agents (`--upstream`) and an OpenAI-compatible model (`--openai-base-url`).

use super::ServeArgs;
use aguikit_gateway::Upstream;
use aguikit_openai::OpenAiAgent;

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
        .wire_format(args.upstream_encoding)
        .connect_timeout(args.upstream_connect_timeout_secs)
        .first_event_timeout(Some(args.upstream_first_event_timeout_secs))
        .idle_timeout(Some(args.upstream_idle_timeout_secs))
        .error_excerpt(args.upstream_error_excerpt);
    for (name, value) in &spec.headers {
        b = b.header(name, value);
    }
    b.build().map_err(|e| format!("--upstream: {e}"))
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
