//! One run over raw HTTP, for `record`, `check` and `load`: the request is sent as the
//! reference client sends it, and the response is read byte for byte into the events as they
//! arrived, before any expansion or verification, together with what happened at the HTTP
//! level (status, content type, a broken or timed-out body).
//!
//! The `aguikit_client` crate would hide exactly what these commands need to see: it refuses a
//! wrong content type before reading the body, and stops at the first malformed event.

use crate::input::RawEvent;
use crate::net::fresh_id;
use aguikit_core::codec::decoder::{Frame, FrameDecoder, FrameRef};
use aguikit_core::codec::media::WireFormat;
use aguikit_core::engine::pipeline::{Pipeline, PipelineError};
use aguikit_core::fmt::with_causes;
use aguikit_core::{Message, RunAgentInput};
use serde_json::Value;
use std::time::{Duration, Instant};

/// The SSE and protobuf media types (aguikit-core's).
pub use aguikit_core::codec::media::{PROTO_MEDIA_TYPE as PROTO, SSE_MEDIA_TYPE as SSE};

/// How much of a non-stream body is kept for messages.
const EXCERPT_BYTES: usize = 2048;

/// Builds the HTTP client (installing the TLS crypto provider when none is).
pub fn client() -> Result<reqwest::Client, String> {
    aguikit_client::install_tls();
    reqwest::Client::builder()
        .tcp_nodelay(true)
        .connect_timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| format!("HTTP client: {e}"))
}

/// What to send.
#[derive(Debug, Clone)]
pub struct Request {
    /// The agent's endpoint, parsed once (a run parses no URL: `agui load` makes thousands).
    pub url: reqwest::Url,
    /// The run input (the JSON body).
    pub input: RunAgentInput,
    /// Ask for protobuf (`Accept` prefers it, SSE still admitted).
    pub proto: bool,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// Limit of the whole exchange.
    pub timeout: Duration,
}

/// One event as it arrived.
#[derive(Debug, Clone)]
pub struct Received {
    /// The event's JSON, or why the frame is not JSON.
    pub event: RawEvent,
    /// The SSE `data` exactly as received (`None` for protobuf, which has no text form).
    pub text: Option<String>,
    /// When it arrived, from the start of the request.
    pub at: Duration,
}

/// Why a response could not be read to its end. Everything received before stays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// No response at all (connect, DNS, reset before the headers).
    Request(String),
    /// The body broke off (connection lost mid-stream).
    Transport(String),
    /// The bytes could not be split into events (SSE or protobuf framing).
    Framing(String),
    /// The time limit ran out.
    Timeout(Duration),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Request(m) => write!(f, "request failed: {m}"),
            Failure::Transport(m) => write!(f, "the connection broke mid-stream: {m}"),
            Failure::Framing(m) => write!(f, "malformed event stream: {m}"),
            Failure::Timeout(d) => write!(f, "timed out after {} ms", d.as_millis()),
        }
    }
}

/// What came back.
#[derive(Debug, Clone, Default)]
pub struct Response {
    /// HTTP status.
    pub status: Option<u16>,
    /// `Content-Type`, as sent.
    pub content_type: Option<String>,
    /// The events, in order of arrival.
    pub events: Vec<Received>,
    /// Why reading stopped early, if it did.
    pub failure: Option<Failure>,
    /// The start of the body when it was not an event stream (error statuses).
    pub body_excerpt: String,
    /// Body bytes read.
    pub bytes: u64,
    /// From sending the request to the end of the body.
    pub elapsed: Duration,
}

impl Response {
    /// Whether the status is 2xx.
    pub fn status_ok(&self) -> bool {
        self.status.is_some_and(|s| (200..300).contains(&s))
    }

    /// The stream's encoding from the content type: `Some(true)` protobuf, `Some(false)`
    /// SSE, `None` neither.
    pub fn encoding(&self) -> Option<bool> {
        let format = WireFormat::from_media_type(self.content_type.as_deref()?)?;
        Some(format == WireFormat::Proto)
    }

    /// The JSON values of the events (what the engine is fed).
    pub fn raw_events(&self) -> Vec<RawEvent> {
        self.events.iter().map(|r| r.event.clone()).collect()
    }

    /// The `type` of the last event that is a terminal one, if any event after the last
    /// `RUN_STARTED` is (`None`: the stream ended with a run still open, or had no run).
    pub fn terminal(&self) -> Option<&'static str> {
        self.events.iter().fold(None, |terminal, r| {
            match r.event.as_ref().ok().and_then(event_type) {
                Some(ty) => terminal_after(terminal, ty),
                None => terminal,
            }
        })
    }
}

/// The terminal event type of the stream after an event of type `ty`, given the one before:
/// a `RUN_STARTED` opens a run (no terminal yet), a `RUN_FINISHED` or `RUN_ERROR` ends it,
/// anything else leaves it.
pub fn terminal_after(before: Option<&'static str>, ty: &str) -> Option<&'static str> {
    match ty {
        "RUN_STARTED" => None,
        "RUN_FINISHED" => Some("RUN_FINISHED"),
        "RUN_ERROR" => Some("RUN_ERROR"),
        _ => before,
    }
}

/// The `type` of an event's JSON.
pub fn event_type(v: &Value) -> Option<&str> {
    v.get("type").and_then(Value::as_str)
}

/// A run input: the spec's parts, else one user message with `text` (default `hello`),
/// state `{}`, a fresh thread and run id (every id made here a fresh UUID).
pub fn input_from(spec: Option<&aguikit::report::RunSpec>, text: Option<&str>) -> RunAgentInput {
    let spec = spec.cloned().unwrap_or_default();
    let mut input = RunAgentInput::new(
        spec.thread_id.unwrap_or_else(fresh_id),
        spec.run_id.unwrap_or_else(fresh_id),
    );
    input.messages = spec
        .messages
        .unwrap_or_else(|| vec![Message::user(fresh_id(), text.unwrap_or("hello"))]);
    input.state = Some(
        spec.state
            .unwrap_or_else(|| Value::Object(Default::default())),
    );
    input.tools = Some(spec.tools.unwrap_or_default());
    input.context = Some(spec.context.unwrap_or_default());
    input.forwarded_props = spec.forwarded_props;
    input.resume = spec.resume;
    input
}

/// Sends one run and reads the whole response. Never fails: every problem is in the
/// [`Response`]. `on_event` sees each event as it arrives (for live progress).
pub async fn fetch(
    client: &reqwest::Client,
    req: &Request,
    mut on_event: impl FnMut(&Received),
) -> Response {
    let mut events = Vec::new();
    let mut out = fetch_frames(client, req, |frame, at| {
        let (event, text) = received(frame.into_frame());
        let r = Received { event, text, at };
        on_event(&r);
        events.push(r);
    })
    .await;
    out.events = events;
    out
}

/// Sends one run and lends each frame of the response to `on_frame` as it arrives, with
/// its arrival time from the start of the request; nothing is kept (`events` stays empty).
/// Never fails: every problem is in the [`Response`].
pub async fn fetch_frames(
    client: &reqwest::Client,
    req: &Request,
    mut on_frame: impl FnMut(FrameRef<'_>, Duration),
) -> Response {
    let t0 = Instant::now();
    let deadline = tokio::time::Instant::now() + req.timeout;
    let mut out = Response::default();
    let body = match serde_json::to_vec(&req.input) {
        Ok(b) => b,
        Err(e) => {
            out.failure = Some(Failure::Request(format!("encoding the input: {e}")));
            return out;
        }
    };
    let mut builder = client
        .post(req.url.clone())
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(
            reqwest::header::ACCEPT,
            if req.proto {
                WireFormat::Proto
            } else {
                WireFormat::Sse
            }
            .accept_header(),
        )
        .body(body);
    for (k, v) in &req.headers {
        builder = builder.header(k.as_str(), v.as_str());
    }
    // One timer for the whole exchange, registered once (a timeout per read registered and
    // cancelled a timer for every chunk).
    let expired = tokio::time::sleep_until(deadline);
    tokio::pin!(expired);
    let response = match within(expired.as_mut(), builder.send()).await {
        Err(_) => {
            out.failure = Some(Failure::Timeout(req.timeout));
            out.elapsed = t0.elapsed();
            return out;
        }
        Ok(Err(e)) => {
            out.failure = Some(Failure::Request(with_causes(&e)));
            out.elapsed = t0.elapsed();
            return out;
        }
        Ok(Ok(r)) => r,
    };
    out.status = Some(response.status().as_u16());
    out.content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let mut decoder = if !out.status_ok() {
        // An error body is not a stream: keep its start for the message.
        Decoder::Excerpt
    } else {
        // SSE, or an unknown content type read as SSE so that the events' own problems are
        // found too.
        let format = WireFormat::from_content_type(out.content_type.as_deref());
        Decoder::Frames(Box::new(FrameDecoder::new(format)))
    };
    let mut response = response;
    loop {
        let chunk = match within(expired.as_mut(), response.chunk()).await {
            Err(_) => {
                out.failure = Some(Failure::Timeout(req.timeout));
                break;
            }
            Ok(Err(e)) => {
                out.failure = Some(Failure::Transport(with_causes(&e)));
                break;
            }
            Ok(Ok(None)) => {
                if let Err(e) = decoder.finish(t0, &mut on_frame) {
                    out.failure = Some(Failure::Framing(e));
                }
                break;
            }
            Ok(Ok(Some(c))) => c,
        };
        out.bytes += chunk.len() as u64;
        if let Err(e) = decoder.push(&chunk, &mut out, t0, &mut on_frame) {
            out.failure = Some(Failure::Framing(e));
            break;
        }
    }
    out.elapsed = t0.elapsed();
    out
}

/// `f`'s output, or `Err` once `expired` has (checked after `f`: an output ready when the
/// deadline passes is still taken).
async fn within<T>(
    mut expired: std::pin::Pin<&mut tokio::time::Sleep>,
    f: impl std::future::Future<Output = T>,
) -> Result<T, ()> {
    tokio::select! {
        biased;
        out = f => Ok(out),
        () = &mut expired => Err(()),
    }
}

/// How the body is read: as frames of an event stream, or (an error status) as text.
enum Decoder {
    Frames(Box<FrameDecoder>),
    Excerpt,
}

impl Decoder {
    fn push(
        &mut self,
        chunk: &[u8],
        out: &mut Response,
        t0: Instant,
        on_frame: &mut impl FnMut(FrameRef<'_>, Duration),
    ) -> Result<(), String> {
        match self {
            Decoder::Excerpt => {
                let room = EXCERPT_BYTES.saturating_sub(out.body_excerpt.len());
                let take = &chunk[..chunk.len().min(room)];
                out.body_excerpt.push_str(&String::from_utf8_lossy(take));
                Ok(())
            }
            Decoder::Frames(d) => {
                d.push(chunk);
                while let Some(frame) = d.next_frame_ref().map_err(|e| frame_error(&e))? {
                    on_frame(frame, t0.elapsed());
                }
                Ok(())
            }
        }
    }

    fn finish(
        &mut self,
        t0: Instant,
        on_frame: &mut impl FnMut(FrameRef<'_>, Duration),
    ) -> Result<(), String> {
        match self {
            Decoder::Excerpt => Ok(()),
            Decoder::Frames(d) => {
                while let Some(frame) = d.finish_ref().map_err(|e| frame_error(&e))? {
                    on_frame(frame, t0.elapsed());
                }
                Ok(())
            }
        }
    }
}

/// A framing error as these commands have always worded it (without the format's prefix).
fn frame_error(e: &aguikit_core::codec::decoder::FrameError) -> String {
    use aguikit_core::codec::decoder::FrameError;
    match e {
        FrameError::Sse(e) => e.to_string(),
        FrameError::Proto(e) => e.to_string(),
        other => other.to_string(),
    }
}

/// A frame as the event's JSON and, for SSE, the `data` text exactly as received
/// (protobuf has no text form).
pub fn received(frame: Frame) -> (RawEvent, Option<String>) {
    match frame {
        Frame::Json { data, .. } => {
            let event = serde_json::from_str::<Value>(&data).map_err(|e| format!("not JSON: {e}"));
            (event, Some(data))
        }
        Frame::Event(event) => (
            serde_json::to_value(&*event).map_err(|e| format!("not JSON: {e}")),
            None,
        ),
    }
}

/// Feeds one event as it arrived (its JSON, or why the frame is not JSON) to `p`.
pub fn push_raw(p: &mut Pipeline, raw: RawEvent) -> Result<(), PipelineError> {
    match raw {
        Ok(v) => p.push_value(v).map(|_| ()),
        Err(e) => crate::inspect::push_not_json(p, &e),
    }
}

/// Runs the client pipeline (expansion, verification, application) over `events`, folding
/// into `applier`, recording the stages' warnings when `warnings`; stops at the first error,
/// which is returned with the pipeline.
pub fn verify_events(
    events: &[RawEvent],
    applier: aguikit_core::engine::apply::Applier,
    warnings: bool,
) -> (Pipeline, Option<PipelineError>) {
    let mut p = Pipeline::with_applier(applier).with_warnings(warnings);
    for raw in events {
        if let Err(e) = push_raw(&mut p, raw.clone()) {
            return (p, Some(e));
        }
    }
    let error = p.finish().err();
    (p, error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn received(v: Value) -> Received {
        Received {
            event: Ok(v),
            text: None,
            at: Duration::ZERO,
        }
    }

    #[test]
    fn terminal_is_that_of_the_last_run() {
        let mut r = Response::default();
        assert_eq!(r.terminal(), None);
        r.events.push(received(json!({"type": "RUN_STARTED"})));
        r.events.push(received(json!({"type": "RUN_FINISHED"})));
        assert_eq!(r.terminal(), Some("RUN_FINISHED"));
        r.events.push(received(json!({"type": "RUN_STARTED"})));
        assert_eq!(r.terminal(), None);
        r.events.push(received(json!({"type": "RUN_ERROR"})));
        assert_eq!(r.terminal(), Some("RUN_ERROR"));
    }

    #[test]
    fn encoding_follows_the_media_type_only() {
        let with = |ct: &str| Response {
            content_type: Some(ct.into()),
            ..Response::default()
        };
        assert_eq!(
            with("text/event-stream; charset=utf-8").encoding(),
            Some(false)
        );
        assert_eq!(
            with("Application/Vnd.Ag-Ui.Event+Proto").encoding(),
            Some(true)
        );
        assert_eq!(with("text/plain").encoding(), None);
        assert_eq!(Response::default().encoding(), None);
    }

    #[test]
    fn default_input_has_one_user_message_and_empty_state() {
        let input = input_from(None, Some("hi there"));
        assert_eq!(input.messages.len(), 1);
        assert_eq!(input.messages[0].text(), Some("hi there"));
        assert_eq!(input.state, Some(json!({})));
        assert_ne!(input.thread_id, input.run_id);
    }
}
