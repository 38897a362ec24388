//! The HTTP transport of a run: request, response checks, body decoding, reconnection.
//!
//! It yields events as decoded from the wire (schema-checked, legacy `THINKING_*` events
//! translated, chunks not yet expanded): what the innermost middleware sees.

use crate::config::AgentConfig;
use crate::decode::WireFormat;
use crate::error::{ClientError, FramingError, Progress, TimeoutKind, excerpt_chars, with_causes};
use crate::middleware::EventStream;
use crate::run::RunShared;
use aguikit_core::codec::decoder::{FrameDecoder, FrameRef};
use aguikit_core::codec::media::is_proto_media_type;
use aguikit_core::engine::compat::CompatBoundary;
use aguikit_core::{Event, Message, RunAgentInput};
use bytes::Bytes;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue};
use serde_json::Value;
use std::collections::{HashSet, VecDeque};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// The stream of one run's wire events.
pub(crate) fn stream(
    config: Arc<AgentConfig>,
    shared: Arc<RunShared>,
    input: RunAgentInput,
) -> EventStream {
    let transport = Transport::new(config, shared, input);
    Box::pin(futures_util::stream::unfold(
        transport,
        |mut t| async move {
            let item = t.next().await?;
            Some((item, t))
        },
    ))
}

/// The request body: the input as JSON, activity messages left out (they never go to an
/// agent).
pub(crate) fn encode_input(input: &RunAgentInput) -> Result<Bytes, String> {
    let result = if input
        .messages
        .iter()
        .any(|m| matches!(m, Message::Activity(_)))
    {
        let mut copy = input.clone();
        copy.messages.retain(|m| !matches!(m, Message::Activity(_)));
        serde_json::to_vec(&copy)
    } else {
        serde_json::to_vec(input)
    };
    result
        .map(Bytes::from)
        .map_err(|e| format!("the run input cannot be encoded: {e}"))
}

enum Phase {
    Start,
    Streaming,
    Done,
}

struct Conn {
    response: reqwest::Response,
    decoder: FrameDecoder,
    encoding: WireFormat,
    /// Made with `Last-Event-ID`: frames whose id was already received are replays.
    resumed: bool,
}

struct Transport {
    config: Arc<AgentConfig>,
    shared: Arc<RunShared>,
    body: Result<Bytes, String>,
    phase: Phase,
    conn: Option<Conn>,
    compat: CompatBoundary,
    queue: VecDeque<Result<Event, ClientError>>,
    progress: Progress,
    deadline: Option<Instant>,
    /// SSE ids received in this run: a frame replayed after a reconnection is skipped.
    seen_ids: HashSet<String>,
    last_event_id: Option<String>,
    retry_ms: Option<u64>,
}

impl Transport {
    fn new(config: Arc<AgentConfig>, shared: Arc<RunShared>, input: RunAgentInput) -> Self {
        let body = encode_input(&input);
        Transport {
            config,
            shared,
            body,
            phase: Phase::Start,
            conn: None,
            compat: CompatBoundary::new(),
            queue: VecDeque::new(),
            progress: Progress::default(),
            deadline: None,
            seen_ids: HashSet::new(),
            last_event_id: None,
            retry_ms: None,
        }
    }

    async fn next(&mut self) -> Option<Result<Event, ClientError>> {
        loop {
            if let Some(item) = self.queue.pop_front() {
                return Some(item);
            }
            match self.phase {
                Phase::Done => return None,
                Phase::Start => {
                    self.deadline = self.config.timeouts.total.map(|t| Instant::now() + t);
                    match self.connect(None).await {
                        Ok(()) => self.phase = Phase::Streaming,
                        Err(e) => self.fail(e),
                    }
                }
                Phase::Streaming => self.read().await,
            }
        }
    }

    fn fail(&mut self, error: ClientError) {
        self.queue.push_back(Err(error));
        self.phase = Phase::Done;
        self.conn = None;
    }

    fn timeout_error(&self, (kind, after): (TimeoutKind, Duration)) -> ClientError {
        ClientError::Timeout {
            kind,
            after,
            progress: self.progress.clone(),
        }
    }

    /// Sends the request (again, with `Last-Event-ID`, when resuming) and checks the response.
    async fn connect(&mut self, last_event_id: Option<String>) -> Result<(), ClientError> {
        let config = self.config.clone();
        let body = self.body.clone().map_err(ClientError::Config)?;
        let mut headers = config.headers.clone();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(
            ACCEPT,
            HeaderValue::from_static(config.encoding.accept_header()),
        );
        if let Some(id) = &last_event_id
            && let Ok(v) = HeaderValue::from_str(id)
        {
            headers.insert(LAST_EVENT_ID, v);
        }
        let request = config
            .client
            .post(config.url.clone())
            .headers(headers)
            .body(body)
            .send();
        let response = bounded(
            request,
            config.timeouts.response.map(|d| (d, TimeoutKind::Response)),
            self.deadline,
            self.config.timeouts.total,
        )
        .await
        .map_err(|t| self.timeout_error(t))?
        .map_err(|e| ClientError::Request {
            url: config.url.to_string(),
            message: with_causes(&e),
        })?;

        let status = response.status();
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        self.shared
            .record_response(status.as_u16(), content_type.clone());

        if !status.is_success() {
            return Err(http_error(&config, self.deadline, response, content_type).await);
        }
        let encoding = match &content_type {
            // The reference reads a body without a content type as SSE; so do we.
            None => WireFormat::Sse,
            Some(ct) => match WireFormat::from_media_type(ct) {
                Some(e) => e,
                // Protobuf the client did not ask for, in a build that cannot read it.
                None if is_proto_media_type(ct) => {
                    return Err(ClientError::ContentType {
                        content_type,
                        body: "(protobuf needs the aguikit-client feature \"proto\")".into(),
                    });
                }
                None => {
                    let body = read_text(&config, self.deadline, response, 200).await;
                    return Err(ClientError::ContentType { content_type, body });
                }
            },
        };
        let decoder = FrameDecoder::with_max_frame_size(encoding, config.limits.max_frame_size);
        self.conn = Some(Conn {
            response,
            decoder,
            encoding,
            resumed: last_event_id.is_some(),
        });
        Ok(())
    }

    async fn read(&mut self) {
        let Some(conn) = self.conn.as_mut() else {
            self.phase = Phase::Done;
            return;
        };
        let chunk = bounded(
            conn.response.chunk(),
            self.config.timeouts.idle.map(|d| (d, TimeoutKind::Idle)),
            self.deadline,
            self.config.timeouts.total,
        )
        .await;
        match chunk {
            Err(t) => {
                let e = self.timeout_error(t);
                self.fail(e);
            }
            Ok(Ok(Some(bytes))) => {
                self.progress.bytes += bytes.len() as u64;
                if self.progress.bytes > self.config.limits.max_body_bytes {
                    let e = ClientError::LimitExceeded {
                        what: "the response body",
                        limit: self.config.limits.max_body_bytes,
                        progress: self.progress.clone(),
                    };
                    self.fail(e);
                    return;
                }
                conn.decoder.push(&bytes);
                self.drain(false);
            }
            Ok(Ok(None)) => {
                self.drain(true);
                if matches!(self.phase, Phase::Done) {
                    return;
                }
                if self.progress.open_run.is_some() && self.can_resume() {
                    self.resume("the body ended before the run did".into())
                        .await;
                } else {
                    self.phase = Phase::Done;
                    self.conn = None;
                }
            }
            Ok(Err(e)) => {
                let cause = with_causes(&e);
                // Frames completed before the break are still delivered.
                self.drain(false);
                if matches!(self.phase, Phase::Done) {
                    return;
                }
                if self.can_resume() {
                    self.resume(cause).await;
                } else {
                    let e = ClientError::ConnectionLost {
                        progress: self.progress.clone(),
                        message: cause,
                    };
                    self.fail(e);
                }
            }
        }
    }

    fn can_resume(&self) -> bool {
        self.last_event_id.is_some()
            && self.progress.reconnects < self.config.reconnect.max_attempts
            && self
                .conn
                .as_ref()
                .is_some_and(|c| c.encoding == WireFormat::Sse)
    }

    async fn resume(&mut self, cause: String) {
        self.conn = None;
        let policy = &self.config.reconnect;
        let delay = self
            .retry_ms
            .map(|ms| Duration::from_millis(ms).min(policy.max_delay))
            .unwrap_or(policy.delay);
        if let Err(t) = bounded(
            tokio::time::sleep(delay),
            None,
            self.deadline,
            self.config.timeouts.total,
        )
        .await
        {
            let e = self.timeout_error(t);
            self.fail(e);
            return;
        }
        self.progress.reconnects += 1;
        self.shared.record_reconnect();
        let id = self.last_event_id.clone();
        tracing::debug!(last_event_id = ?id, %cause, "resuming the event stream");
        if let Err(e) = self.connect(id.clone()).await {
            let e = ClientError::ConnectionLost {
                progress: self.progress.clone(),
                message: format!(
                    "{cause}; resuming with Last-Event-ID {} failed: {e}",
                    id.unwrap_or_default()
                ),
            };
            self.fail(e);
        }
    }

    /// Takes every complete frame out of the decoder (at the end of the body, the last
    /// incomplete one too). Frames are read where the decoder holds them (no copy): the
    /// connection is out of `self` meanwhile, and back unless the run failed.
    fn drain(&mut self, at_end: bool) {
        let Some(mut conn) = self.conn.take() else {
            return;
        };
        let resumed = conn.resumed;
        loop {
            // The protobuf decoder reports frames it skips (events of a later protocol).
            let (frame, warnings) = aguikit_core::warning::collect(|| {
                if at_end {
                    conn.decoder.finish_ref()
                } else {
                    conn.decoder.next_frame_ref()
                }
            });
            self.shared.record_warnings(self.progress.events, warnings);
            // Whether a frame was taken; the run's failure, if any.
            let step = match frame {
                Ok(Some(frame)) => self.accept(frame, resumed).map(|()| true),
                Ok(None) => Ok(false),
                Err(source) => Err(ClientError::Framing {
                    source: source.into(),
                    progress: self.progress.clone(),
                }),
            };
            if let Some(ms) = conn.decoder.retry() {
                self.retry_ms = Some(ms);
            }
            match step {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => return self.fail(e),
            }
        }
        self.conn = Some(conn);
    }

    fn accept(&mut self, frame: FrameRef<'_>, resumed: bool) -> Result<(), ClientError> {
        let event = match frame {
            FrameRef::Json { data, id } => {
                if let Some(id) = id {
                    if self.seen_ids.contains(id) {
                        if resumed {
                            return Ok(()); // replayed after a reconnection
                        }
                    } else {
                        self.seen_ids.insert(id.to_owned());
                    }
                    self.last_event_id = Some(id.to_owned());
                }
                self.check_count()?;
                let index = self.progress.events;
                let (decoded, warnings) =
                    aguikit_core::warning::collect(|| Event::from_json_str(data));
                self.shared.record_warnings(index, warnings);
                let event =
                    decoded.map_err(|e| ClientError::protocol(index, type_hint(data), e))?;
                if let Event::Unknown(u) = &event
                    && u.type_str().is_empty()
                {
                    return Err(ClientError::Framing {
                        source: FramingError::NoEventType {
                            excerpt: excerpt_chars(data, 200),
                        },
                        progress: self.progress.clone(),
                    });
                }
                event
            }
            FrameRef::Event(event) => {
                self.check_count()?;
                *event
            }
        };
        let index = self.progress.events;
        let event_type = event.type_str().to_owned();
        let event = self
            .compat
            .translate(event)
            .map_err(|e| ClientError::protocol(index, event_type.clone(), e))?;
        self.progress.events += 1;
        self.progress.last_event = Some(event_type);
        match &event {
            Event::RunStarted(e) => {
                self.progress.open_run = Some(e.run_id.clone());
                self.progress.run_ended = false;
            }
            Event::RunFinished(_) | Event::RunError(_) => {
                self.progress.open_run = None;
                self.progress.run_ended = true;
            }
            _ => {}
        }
        self.queue.push_back(Ok(event));
        Ok(())
    }

    fn check_count(&self) -> Result<(), ClientError> {
        if self.progress.events >= self.config.limits.max_events {
            return Err(ClientError::LimitExceeded {
                what: "the number of events",
                limit: self.config.limits.max_events as u64,
                progress: self.progress.clone(),
            });
        }
        Ok(())
    }
}

/// Reads up to `limit` bytes of a body as text (best effort, within the time limits).
async fn read_text(
    config: &AgentConfig,
    deadline: Option<Instant>,
    mut response: reqwest::Response,
    limit: usize,
) -> String {
    let mut buf = Vec::new();
    while buf.len() < limit {
        let chunk = bounded(
            response.chunk(),
            config.timeouts.idle.map(|d| (d, TimeoutKind::Idle)),
            deadline,
            config.timeouts.total,
        )
        .await;
        match chunk {
            Ok(Ok(Some(bytes))) => buf.extend_from_slice(&bytes),
            _ => break,
        }
    }
    buf.truncate(limit);
    String::from_utf8_lossy(&buf).into_owned()
}

/// R1: the body read as text; parsed when the response says JSON.
async fn http_error(
    config: &AgentConfig,
    deadline: Option<Instant>,
    response: reqwest::Response,
    content_type: Option<String>,
) -> ClientError {
    let status = response.status().as_u16();
    let text = read_text(config, deadline, response, config.limits.max_error_body).await;
    let payload = if content_type
        .as_deref()
        .is_some_and(|c| c.contains("application/json"))
    {
        serde_json::from_str::<Value>(&text).ok()
    } else {
        None
    };
    let body = match &payload {
        Some(v) => serde_json::to_string(v).unwrap_or(text),
        None => text,
    };
    ClientError::Http {
        status,
        body,
        payload,
    }
}

/// The `type` of a JSON frame, for error messages (`?` when it cannot be read).
fn type_hint(data: &str) -> String {
    serde_json::from_str::<Value>(data)
        .ok()
        .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_owned))
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| "?".to_owned())
}

/// Runs `fut` within a wait limit and the run's deadline; says which ran out.
async fn bounded<F: Future>(
    fut: F,
    wait: Option<(Duration, TimeoutKind)>,
    deadline: Option<Instant>,
    total: Option<Duration>,
) -> Result<F::Output, (TimeoutKind, Duration)> {
    let wait_until = wait.map(|(d, k)| (Instant::now() + d, d, k));
    let until = match (wait_until, deadline) {
        (Some((w, _, _)), Some(d)) => Some(w.min(d)),
        (Some((w, _, _)), None) => Some(w),
        (None, d) => d,
    };
    let Some(until) = until else {
        return Ok(fut.await);
    };
    match tokio::time::timeout_at(until, fut).await {
        Ok(v) => Ok(v),
        Err(_) => {
            if deadline.is_some_and(|d| d <= until) {
                Err((TimeoutKind::Total, total.unwrap_or_default()))
            } else {
                let (_, d, k) = wait_until.expect("a wait limit ran out");
                Err((k, d))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aguikit_core::message::ActivityMessage;

    #[test]
    fn activity_messages_are_not_sent() {
        let mut input = RunAgentInput::new("t", "r").with_message(Message::user("u", "hi"));
        input.messages.push(Message::Activity(ActivityMessage {
            id: "a".into(),
            activity_type: "PLAN".into(),
            content: Default::default(),
            metadata: None,
            subagent_run_id: None,
        }));
        let body = encode_input(&input).unwrap();
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["messages"].as_array().unwrap().len(), 1);
        assert_eq!(v["messages"][0]["id"], "u");
    }

    #[test]
    fn type_hints() {
        assert_eq!(type_hint(r#"{"type":"RUN_STARTED"}"#), "RUN_STARTED");
        assert_eq!(type_hint("[1]"), "?");
        assert_eq!(type_hint("{"), "?");
    }

    #[tokio::test]
    async fn bounded_says_which_limit_ran_out() {
        let never = std::future::pending::<()>();
        let r = bounded(
            never,
            Some((Duration::from_millis(10), TimeoutKind::Idle)),
            None,
            None,
        )
        .await;
        assert_eq!(r, Err((TimeoutKind::Idle, Duration::from_millis(10))));
        let never = std::future::pending::<()>();
        let r = bounded(
            never,
            Some((Duration::from_secs(10), TimeoutKind::Idle)),
            Some(Instant::now() + Duration::from_millis(10)),
            Some(Duration::from_millis(10)),
        )
        .await;
        assert_eq!(r, Err((TimeoutKind::Total, Duration::from_millis(10))));
        assert_eq!(bounded(async { 5 }, None, None, None).await, Ok(5));
    }
}
