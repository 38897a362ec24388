//! The HTTP side: sending the request, reading the streamed chunks with an idle timeout,
//! and turning every failure into an [`AgentError`] with a clear message and code.

use crate::codes;
use aguikit_core::codec::sse::SseDecoder;
use aguikit_core::fmt::with_causes;
use aguikit_server::AgentError;
use serde_json::Value;
use std::time::Duration;

/// Most bytes read of an error body, or of a whole (non-streamed) JSON completion.
const MAX_ERROR_BODY: usize = 64 * 1024;
const MAX_JSON_BODY: usize = 16 * 1024 * 1024;
/// How much of an error body a message quotes.
const EXCERPT_CHARS: usize = 300;

pub(crate) fn error(code: &str, message: impl Into<String>) -> AgentError {
    AgentError::new(message).with_code(code)
}

/// Sends the request; the response head must arrive within `request_timeout`.
pub(crate) async fn send(
    request: reqwest::RequestBuilder,
    url: &str,
    request_timeout: Duration,
) -> Result<reqwest::Response, AgentError> {
    match tokio::time::timeout(request_timeout, request.send()).await {
        Err(_) => Err(error(
            codes::TIMEOUT,
            format!(
                "the model server at {url} did not answer within {} (request timeout)",
                human(request_timeout)
            ),
        )),
        Ok(Err(e)) if e.is_timeout() => Err(error(
            codes::TIMEOUT,
            format!(
                "the request to the model server at {url} timed out: {}",
                with_causes(&e)
            ),
        )),
        Ok(Err(e)) => Err(error(
            codes::CONNECT,
            format!(
                "could not reach the model server at {url}: {}",
                with_causes(&e)
            ),
        )),
        Ok(Ok(response)) => Ok(response),
    }
}

/// "2 s", "250 ms".
pub(crate) fn human(d: Duration) -> String {
    if d.as_millis().is_multiple_of(1000) {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// Reads one piece of the body within the idle timeout (`None` at its end).
async fn read_piece(
    response: &mut reqwest::Response,
    idle: Duration,
) -> Result<Option<bytes::Bytes>, AgentError> {
    match tokio::time::timeout(idle, response.chunk()).await {
        Err(_) => Err(error(
            codes::TIMEOUT,
            format!(
                "the model server sent nothing for {} (idle timeout)",
                human(idle)
            ),
        )),
        Ok(Err(e)) => Err(error(
            codes::CONNECT,
            format!(
                "the connection to the model server broke while reading its answer: {}",
                with_causes(&e)
            ),
        )),
        Ok(Ok(piece)) => Ok(piece),
    }
}

/// Reads the body up to about `limit` bytes, each piece within the idle timeout.
async fn read_body(
    response: &mut reqwest::Response,
    limit: usize,
    idle: Duration,
) -> Result<Vec<u8>, AgentError> {
    let mut body = Vec::new();
    while body.len() < limit {
        match read_piece(response, idle).await? {
            Some(piece) => body.extend_from_slice(&piece),
            None => break,
        }
    }
    Ok(body)
}

/// What a successful response holds.
pub(crate) enum Answer {
    /// A `text/event-stream` of chunks (the usual case).
    Stream(Box<ChunkReader>),
    /// A whole `chat.completion` object: the server ignored `stream: true`.
    Completion(Value),
}

/// Checks the status (an HTTP error becomes [`codes::HTTP`] with the API's message or an
/// excerpt of the body) and picks how to read the body.
pub(crate) async fn answer(
    mut response: reqwest::Response,
    url: &str,
    idle: Duration,
) -> Result<Answer, AgentError> {
    let status = response.status();
    if !status.is_success() {
        let body = read_body(&mut response, MAX_ERROR_BODY, idle)
            .await
            .unwrap_or_default();
        let detail = error_detail(&body);
        let mut message = format!("the model server at {url} answered HTTP {status}");
        if !detail.is_empty() {
            message.push_str(": ");
            message.push_str(&detail);
        }
        return Err(error(codes::HTTP, message));
    }
    let is_json = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("application/json"));
    if is_json {
        let body = read_body(&mut response, MAX_JSON_BODY, idle).await?;
        let value: Value = serde_json::from_slice(&body).map_err(|e| {
            error(
                codes::MALFORMED,
                format!(
                    "the model server's answer is not JSON ({e}): {}",
                    excerpt(&String::from_utf8_lossy(&body))
                ),
            )
        })?;
        if value.get("error").is_some_and(|e| !e.is_null()) {
            return Err(api_error(&value));
        }
        return Ok(Answer::Completion(value));
    }
    Ok(Answer::Stream(Box::new(ChunkReader {
        response,
        decoder: SseDecoder::new(),
        idle,
        ended: false,
    })))
}

/// The useful part of an error body: the API's message when it is JSON
/// (`{"error": {"message"}}`, `{"error": "..."}`, `{"message"}`, `{"detail"}`), else an
/// excerpt of the text.
fn error_detail(body: &[u8]) -> String {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        let text = |v: &Value| match v {
            Value::String(s) => Some(s.clone()),
            Value::Null => None,
            other => Some(other.to_string()),
        };
        let found = v
            .get("error")
            .and_then(|e| match e {
                Value::Object(o) => o.get("message").and_then(text),
                other => text(other),
            })
            .or_else(|| v.get("message").and_then(text))
            .or_else(|| v.get("detail").and_then(text));
        if let Some(found) = found {
            return excerpt(&found);
        }
    }
    excerpt(&String::from_utf8_lossy(body))
}

/// The first [`EXCERPT_CHARS`] characters of `text`, whitespace collapsed.
fn excerpt(text: &str) -> String {
    let collapsed: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    aguikit_core::fmt::excerpt(&collapsed, EXCERPT_CHARS)
}

/// An error object found in the stream (`{"error": {...}}`), as [`codes::API`].
fn api_error(v: &Value) -> AgentError {
    let e = v.get("error").filter(|e| !e.is_null()).unwrap_or(v);
    let mut message = match e {
        Value::String(s) => s.clone(),
        Value::Object(o) => o
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| e.to_string()),
        other => other.to_string(),
    };
    let mut extra = Vec::new();
    for key in ["type", "code"] {
        match e.get(key) {
            Some(Value::String(s)) if !s.is_empty() => extra.push(format!("{key} {s}")),
            Some(n @ Value::Number(_)) => extra.push(format!("{key} {n}")),
            _ => {}
        }
    }
    if !extra.is_empty() {
        message.push_str(&format!(" ({})", extra.join(", ")));
    }
    error(
        codes::API,
        format!("the model server reported an error: {}", excerpt(&message)),
    )
}

/// What the next read of the stream gave.
pub(crate) enum Next {
    /// One `chat.completion.chunk`.
    Chunk(Value),
    /// `data: [DONE]`: the answer is complete.
    Done,
    /// The body ended without `[DONE]`.
    Eof,
}

/// Reads `chat.completion.chunk`s from an SSE body: comments (keep-alives) and empty
/// frames are skipped, `[DONE]` ends the answer, an error object or a frame that is not
/// JSON is an error.
pub(crate) struct ChunkReader {
    response: reqwest::Response,
    decoder: SseDecoder,
    idle: Duration,
    ended: bool,
}

impl ChunkReader {
    /// The next chunk. Each read of the body must bring something within the idle
    /// timeout (keep-alive comments count: the connection is alive).
    pub(crate) async fn next(&mut self) -> Result<Next, AgentError> {
        loop {
            let frame = if self.ended {
                self.decoder.finish()
            } else {
                self.decoder.next_frame()
            };
            match frame {
                Err(e) => {
                    return Err(error(
                        codes::MALFORMED,
                        format!("the model server's stream is not valid SSE: {e}"),
                    ));
                }
                Ok(Some(frame)) => match read_frame(&frame.data, frame.event.as_deref())? {
                    Some(next) => return Ok(next),
                    None => continue,
                },
                Ok(None) if self.ended => return Ok(Next::Eof),
                Ok(None) => {}
            }
            match read_piece(&mut self.response, self.idle).await? {
                Some(piece) => self.decoder.push(&piece),
                None => self.ended = true,
            }
        }
    }
}

/// One SSE frame's data: `None` for an empty one.
fn read_frame(data: &str, event: Option<&str>) -> Result<Option<Next>, AgentError> {
    let data = data.trim();
    if data == "[DONE]" {
        return Ok(Some(Next::Done));
    }
    if data.is_empty() {
        return Ok(None);
    }
    let value: Value = serde_json::from_str(data).map_err(|e| {
        error(
            codes::MALFORMED,
            format!(
                "the model server sent a chunk that is not JSON ({e}): {}",
                excerpt(data)
            ),
        )
    })?;
    if event == Some("error") || value.get("error").is_some_and(|e| !e.is_null()) {
        return Err(api_error(&value));
    }
    if !value.is_object() {
        return Err(error(
            codes::MALFORMED,
            format!(
                "the model server sent a chunk that is not a JSON object: {}",
                excerpt(data)
            ),
        ));
    }
    Ok(Some(Next::Chunk(value)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn error_details() {
        assert_eq!(
            error_detail(
                br#"{"error":{"message":"Incorrect API key","type":"invalid_request_error"}}"#
            ),
            "Incorrect API key"
        );
        assert_eq!(
            error_detail(br#"{"error":"model not found"}"#),
            "model not found"
        );
        assert_eq!(
            error_detail(br#"{"object":"error","message":"bad"}"#),
            "bad"
        );
        assert_eq!(error_detail(br#"{"detail":"Not Found"}"#), "Not Found");
        assert_eq!(
            error_detail(b"<html>\n  Bad   gateway</html>"),
            "<html> Bad gateway</html>"
        );
        assert_eq!(error_detail(b""), "");
        let long = "x".repeat(1000);
        assert_eq!(
            error_detail(long.as_bytes()).chars().count(),
            EXCERPT_CHARS + 1
        );
    }

    #[test]
    fn api_errors() {
        let e = api_error(
            &json!({"error": {"message": "overloaded", "type": "server_error", "code": 529}}),
        );
        assert_eq!(
            e.message(),
            "the model server reported an error: overloaded (type server_error, code 529)"
        );
        assert_eq!(e.code(), Some(codes::API));
        let e = api_error(&json!({"error": "quota"}));
        assert_eq!(e.message(), "the model server reported an error: quota");
    }

    #[test]
    fn frames() {
        assert!(matches!(read_frame(" [DONE] ", None), Ok(Some(Next::Done))));
        assert!(matches!(read_frame("", None), Ok(None)));
        assert!(matches!(read_frame("{}", None), Ok(Some(Next::Chunk(_)))));
        assert_eq!(
            read_frame("{", None).err().unwrap().code(),
            Some(codes::MALFORMED)
        );
        assert_eq!(
            read_frame("[1]", None).err().unwrap().code(),
            Some(codes::MALFORMED)
        );
        assert_eq!(
            read_frame(r#"{"message":"x"}"#, Some("error"))
                .err()
                .unwrap()
                .code(),
            Some(codes::API)
        );
        assert!(matches!(
            read_frame(r#"{"error":null}"#, None),
            Ok(Some(Next::Chunk(_)))
        ));
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(human(Duration::from_secs(2)), "2 s");
        assert_eq!(human(Duration::from_millis(250)), "250 ms");
    }
}
