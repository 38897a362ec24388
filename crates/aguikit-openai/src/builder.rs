//! [`OpenAiAgentBuilder`]: where the model is, how to call it, and the back-end tools.

use crate::agent::{Inner, OpenAiAgent};
use crate::tools::{BackendTool, ToolResult};
use reqwest::header::{self, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// Why [`OpenAiAgentBuilder::build`] failed.
///
/// ```
/// use aguikit_openai::{BuildError, OpenAiAgent};
/// let err = OpenAiAgent::builder("not a url", "m").build().unwrap_err();
/// assert!(matches!(err, BuildError::InvalidUrl { .. }));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The base URL is not an `http` or `https` URL.
    #[error("invalid base URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A header name or value (the API key included) cannot be sent.
    #[error("invalid header {name:?}: {reason}")]
    InvalidHeader {
        /// The header's name.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A back-end tool has an empty name or the name of another back-end tool.
    #[error("invalid tool {name:?}: {reason}")]
    InvalidTool {
        /// The tool's name.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// `max_steps` is 0: not even one model call would be allowed.
    #[error("max_steps must be at least 1")]
    ZeroSteps,
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(#[source] reqwest::Error),
}

/// Builds an [`OpenAiAgent`]; made by [`OpenAiAgent::builder`].
///
/// ```
/// use aguikit_openai::OpenAiAgent;
/// use serde_json::json;
/// use std::time::Duration;
///
/// let agent = OpenAiAgent::builder("https://api.openai.com/v1", "gpt-4o-mini")
///     .api_key("sk-...")
///     .system_prompt("Answer in one sentence.")
///     .header("OpenAI-Organization", "org-123")
///     .request_timeout(Duration::from_secs(30))
///     .idle_timeout(Duration::from_secs(60))
///     .max_steps(4)
///     .temperature(0.3)
///     .max_tokens(512)
///     .param("parallel_tool_calls", json!(true))
///     .tool(
///         "add",
///         "Adds two integers",
///         json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}),
///         |args| async move {
///             let a = args["a"].as_i64().ok_or("a must be an integer")?;
///             let b = args["b"].as_i64().ok_or("b must be an integer")?;
///             Ok(json!(a + b))
///         },
///     )
///     .build()
///     .unwrap();
/// assert_eq!(agent.endpoint(), "https://api.openai.com/v1/chat/completions");
/// ```
#[must_use = "call .build() to make the agent"]
pub struct OpenAiAgentBuilder {
    base_url: String,
    model: String,
    api_key: Option<String>,
    system_prompt: Option<String>,
    headers: Vec<(String, String)>,
    request_timeout: Duration,
    idle_timeout: Duration,
    max_steps: usize,
    params: Map<String, Value>,
    include_usage: bool,
    provider: String,
    tools: Vec<BackendTool>,
    client: Option<reqwest::Client>,
}

impl std::fmt::Debug for OpenAiAgentBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiAgentBuilder")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("max_steps", &self.max_steps)
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

impl OpenAiAgentBuilder {
    pub(crate) fn new(base_url: String, model: String) -> Self {
        OpenAiAgentBuilder {
            base_url,
            model,
            api_key: None,
            system_prompt: None,
            headers: Vec::new(),
            request_timeout: Duration::from_secs(120),
            idle_timeout: Duration::from_secs(120),
            max_steps: 10,
            params: Map::new(),
            include_usage: true,
            provider: "openai".into(),
            tools: Vec::new(),
            client: None,
        }
    }

    /// Sends `Authorization: Bearer KEY`. Without one no `Authorization` header is sent
    /// (local servers need none). An empty key counts as none.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into()).filter(|k| !k.is_empty());
        self
    }

    /// A system message sent before the conversation on every model call.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// An extra header on every request (e.g. `OpenAI-Organization`, `HTTP-Referer`);
    /// repeat for more. A header of the same name as a built-in one replaces it.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// How long to wait for the response head of each model call (connection included).
    /// Default 120 s. The streamed answer itself is bounded by the idle timeout only, so
    /// long answers are never cut.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How long the stream may stay silent (no chunk, no keep-alive comment) before the
    /// run ends with `RUN_ERROR` (code [`codes::TIMEOUT`](crate::codes::TIMEOUT)).
    /// Default 120 s.
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// The most model calls one run may make (default 10). Each call after the first
    /// answers back-end tool calls; when the model still calls back-end tools in the last
    /// allowed call, they are not run and the run ends with `RUN_ERROR`
    /// (code [`codes::MAX_STEPS`](crate::codes::MAX_STEPS)).
    pub fn max_steps(mut self, steps: usize) -> Self {
        self.max_steps = steps;
        self
    }

    /// Sets `temperature`.
    pub fn temperature(self, temperature: f64) -> Self {
        self.param("temperature", temperature.into())
    }

    /// Sets `top_p`.
    pub fn top_p(self, top_p: f64) -> Self {
        self.param("top_p", top_p.into())
    }

    /// Sets `max_tokens` (for OpenAI's reasoning models, set `max_completion_tokens` with
    /// [`param`](Self::param) instead).
    pub fn max_tokens(self, max_tokens: u64) -> Self {
        self.param("max_tokens", max_tokens.into())
    }

    /// Sets `seed`.
    pub fn seed(self, seed: i64) -> Self {
        self.param("seed", seed.into())
    }

    /// Sets `stop` (up to four sequences for OpenAI).
    pub fn stop<S: Into<String>>(self, stop: impl IntoIterator<Item = S>) -> Self {
        let stop: Vec<Value> = stop.into_iter().map(|s| Value::String(s.into())).collect();
        self.param("stop", Value::Array(stop))
    }

    /// Sets any other request field as given: `presence_penalty`, `tool_choice`,
    /// `parallel_tool_calls`, `reasoning_effort`, `response_format`, `user`, a server's own
    /// extensions... `model`, `messages`, `stream`, `stream_options` and `tools` are the
    /// agent's: setting them here has no effect.
    pub fn param(mut self, key: impl Into<String>, value: Value) -> Self {
        self.params.insert(key.into(), value);
        self
    }

    /// Whether to ask for usage with `stream_options: {"include_usage": true}` (default
    /// on). Turn it off for a server that rejects `stream_options`.
    pub fn include_usage(mut self, on: bool) -> Self {
        self.include_usage = on;
        self
    }

    /// The `provider` of the token usage reported on `RUN_FINISHED` (default `"openai"`).
    pub fn provider(mut self, provider: impl Into<String>) -> Self {
        self.provider = provider.into();
        self
    }

    /// Uses this HTTP client (proxies, custom certificates, pools) instead of a default
    /// one.
    pub fn client(mut self, client: reqwest::Client) -> Self {
        self.client = Some(client);
        self
    }

    /// Registers a back-end tool: the model sees it like a client's tool, but the agent
    /// runs it itself with the parsed arguments (`{}` for empty ones), sends the result
    /// as `TOOL_CALL_RESULT` and calls the model again. Calls in one turn run
    /// concurrently. An `Err` reaches the model as `{"error": message}`; so do arguments
    /// that are not valid JSON, without calling the function.
    ///
    /// ```
    /// # use aguikit_openai::OpenAiAgent;
    /// use serde_json::json;
    /// let builder = OpenAiAgent::builder("http://127.0.0.1:8080/v1", "local")
    ///     .tool("echo", "Returns its arguments", json!({"type": "object"}), |args| async move {
    ///         Ok(args)
    ///     });
    /// # let _ = builder.build().unwrap();
    /// ```
    pub fn tool<F, Fut>(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Value,
        run: F,
    ) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolResult> + Send + 'static,
    {
        self.tools.push(BackendTool {
            name: name.into(),
            description: description.into(),
            parameters,
            run: Arc::new(move |args| Box::pin(run(args))),
        });
        self
    }

    /// Checks the settings and makes the agent.
    pub fn build(self) -> Result<OpenAiAgent, BuildError> {
        let url = endpoint(&self.base_url)?;
        if self.max_steps == 0 {
            return Err(BuildError::ZeroSteps);
        }
        let mut names = HashSet::new();
        for t in &self.tools {
            let reason = if t.name.is_empty() {
                "the name is empty"
            } else if !names.insert(t.name.as_str()) {
                "another back-end tool has this name"
            } else {
                continue;
            };
            return Err(BuildError::InvalidTool {
                name: t.name.clone(),
                reason: reason.into(),
            });
        }
        let headers = self.header_map()?;
        let client = match self.client {
            Some(c) => c,
            None => {
                aguikit_client::install_tls();
                reqwest::Client::builder()
                    // No Nagle delay between a request's header and body segments.
                    .tcp_nodelay(true)
                    .connect_timeout(self.request_timeout)
                    // A redirect is never followed (the run ends with its status, code
                    // `upstream_http`): the API key and the conversation go to the configured
                    // origin only. No Referer either.
                    .redirect(reqwest::redirect::Policy::none())
                    .referer(false)
                    .pool_idle_timeout(aguikit_client::POOL_IDLE_TIMEOUT)
                    .build()
                    .map_err(BuildError::Client)?
            }
        };
        Ok(OpenAiAgent {
            inner: Arc::new(Inner {
                url,
                model: self.model,
                headers,
                system_prompt: self.system_prompt,
                request_timeout: self.request_timeout,
                idle_timeout: self.idle_timeout,
                max_steps: self.max_steps,
                params: self.params,
                include_usage: self.include_usage,
                provider: self.provider,
                tools: self.tools,
                client,
            }),
        })
    }

    fn header_map(&self) -> Result<HeaderMap, BuildError> {
        let mut map = HeaderMap::new();
        map.insert(
            header::ACCEPT,
            HeaderValue::from_static("text/event-stream"),
        );
        map.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if let Some(key) = &self.api_key {
            let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                BuildError::InvalidHeader {
                    name: "authorization".into(),
                    reason: "the API key has characters a header cannot carry".into(),
                }
            })?;
            value.set_sensitive(true);
            map.insert(header::AUTHORIZATION, value);
        }
        let mut replaced = HashSet::new();
        for (name, value) in &self.headers {
            let invalid = |reason: String| BuildError::InvalidHeader {
                name: name.clone(),
                reason,
            };
            let n = HeaderName::from_bytes(name.as_bytes()).map_err(|e| invalid(e.to_string()))?;
            let v = HeaderValue::from_str(value).map_err(|e| invalid(e.to_string()))?;
            // The first extra header of a name replaces a built-in one; later ones add.
            if replaced.insert(n.clone()) {
                map.insert(n, v);
            } else {
                map.append(n, v);
            }
        }
        Ok(map)
    }
}

/// `{base}/chat/completions`, unless the base URL already names that endpoint.
fn endpoint(base_url: &str) -> Result<String, BuildError> {
    let invalid = |reason: &str| BuildError::InvalidUrl {
        url: base_url.to_owned(),
        reason: reason.to_owned(),
    };
    let parsed = reqwest::Url::parse(base_url.trim()).map_err(|e| invalid(&e.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(invalid("the scheme must be http or https"));
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(invalid("the base URL takes no query or fragment"));
    }
    let base = parsed.as_str().trim_end_matches('/');
    Ok(if base.ends_with("/chat/completions") {
        base.to_owned()
    } else {
        format!("{base}/chat/completions")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints() {
        for (base, want) in [
            (
                "http://127.0.0.1:11434/v1",
                "http://127.0.0.1:11434/v1/chat/completions",
            ),
            (
                "https://openrouter.ai/api/v1/",
                "https://openrouter.ai/api/v1/chat/completions",
            ),
            (
                "http://h:1/v1/chat/completions",
                "http://h:1/v1/chat/completions",
            ),
            ("http://h:1", "http://h:1/chat/completions"),
        ] {
            assert_eq!(endpoint(base).unwrap(), want, "{base}");
        }
        assert!(endpoint("ftp://h/v1").is_err());
        assert!(endpoint("h:1/v1").is_err());
        assert!(endpoint("http://h/v1?x=1").is_err());
    }

    #[test]
    fn build_checks() {
        let b = || OpenAiAgent::builder("http://127.0.0.1:1/v1", "m");
        assert!(matches!(
            b().max_steps(0).build(),
            Err(BuildError::ZeroSteps)
        ));
        let noop = |_| async { Ok(Value::Null) };
        assert!(matches!(
            b().tool("t", "", Value::Null, noop)
                .tool("t", "", Value::Null, noop)
                .build(),
            Err(BuildError::InvalidTool { .. })
        ));
        assert!(matches!(
            b().tool("", "", Value::Null, noop).build(),
            Err(BuildError::InvalidTool { .. })
        ));
        assert!(matches!(
            b().header("bad name", "v").build(),
            Err(BuildError::InvalidHeader { .. })
        ));
        assert!(matches!(
            b().api_key("line\nbreak").build(),
            Err(BuildError::InvalidHeader { .. })
        ));
        let agent = b().api_key("secret").build().unwrap();
        assert!(!format!("{agent:?}").contains("secret"));
        assert!(!format!("{:?}", b().api_key("secret")).contains("secret"));
    }

    #[test]
    fn extra_headers_replace_built_ins() {
        let map = OpenAiAgent::builder("http://h/v1", "m")
            .api_key("k")
            .header("Authorization", "Token x")
            .header("X-A", "1")
            .header("X-A", "2")
            .header_map()
            .unwrap();
        assert_eq!(map.get_all("authorization").iter().count(), 1);
        assert_eq!(map["authorization"], "Token x");
        assert_eq!(map.get_all("x-a").iter().count(), 2);
    }
}
