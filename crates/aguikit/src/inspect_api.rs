//! `POST /api/inspect` of `agui serve`: the engine reads and verifies a recording for the
//! console, so the console's debugger shows exactly the Rust verifier's verdicts.
//!
//! The body is a recording in any format `agui inspect` reads (a JSON array, JSON Lines,
//! an SSE stream, a case file) or length-prefixed protobuf (`Content-Type:
//! application/vnd.ag-ui.event+proto`, or told apart by its first byte). The answer:
//!
//! ```json
//! {"format": "sse", "ok": false, "events": [{...}, ...],
//!  "violations": [{"index": 7, "eventType": "TEXT_MESSAGE_START", "rule": "V13",
//!                  "message": "...", "title": "...", "explanation": "...",
//!                  "reference": "...", "help": "/rules#V13"}],
//!  "warnings": [{"index": 3, "message": "..."}]}
//! ```
//!
//! Verification is the client pipeline `agui verify` runs (expansion, verification,
//! application), event by event. As in the reference client, a violation ends the stream's
//! verification; since a recording of a thread holds many runs, each a request of its own,
//! verification then starts again at the next `RUN_STARTED` (that violation carries
//! `restartedAt`: the index it started from). The first violation is always the one
//! `agui verify` reports.
//!
//! A recording with `a2ui-surface` activities also gets `surfaces`: each activity as it
//! stands at the end of the recording, folded into A2UI surfaces (`messageId`, `status`
//! when it has one, `surfaces`, `violations` with their A2UI rule ids), as the stored
//! thread's read and `agui apply --a2ui` give them.

use crate::input::{EventReader, ReadError, Source};
use aguikit_core::codec::proto;
use aguikit_core::engine::pipeline::{Pipeline, PipelineError};
use aguikit_server::{ApiError, ErrorCode};
use serde::Serialize;
use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};

/// The largest recording `POST /api/inspect` takes.
pub const MAX_BYTES: usize = 64 << 20;

/// How many inspections run at once, over all callers (each holds its recording, about
/// twice its size, while it runs).
pub const MAX_CONCURRENT: usize = 2;

/// How many inspections one principal runs at once.
pub const MAX_CONCURRENT_PER_PRINCIPAL: usize = 1;

// The media type of length-prefixed protobuf.
use aguikit_core::codec::media::PROTO_MEDIA_TYPE as PROTO;

/// A violation, with its rule's explanation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiViolation {
    /// Index of the event (equal to the number of events: at the end of the stream).
    pub index: usize,
    /// Its type (`end of stream` at the end).
    pub event_type: String,
    /// The rule id (`V13`, `CH8`, `schema`, or `framing` for unreadable bytes).
    pub rule: String,
    /// The engine's message.
    pub message: String,
    /// The rule's title.
    pub title: String,
    /// Why an event breaks it.
    pub explanation: String,
    /// What the reference client does.
    pub reference: String,
    /// The rule's entry on the rules page of this server.
    pub help: String,
    /// Where verification started again after an earlier violation (absent for the first).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restarted_at: Option<usize>,
}

/// A warning of the pipeline or the reducer (the reference client would log it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ApiWarning {
    /// Index of the event.
    pub index: usize,
    /// What happened.
    pub message: String,
}

/// The events of a recording as read, kept compact: their JSON text one after another in
/// one buffer and where each ends (four bytes an event: a recording of a million tiny
/// events is a million offsets, not a million parsed trees), and where its bytes became
/// unreadable.
#[derive(Debug, Default)]
pub struct Recording {
    /// `json-array`, `json-lines`, `sse`, `case` or `protobuf`.
    pub format: &'static str,
    text: Vec<u8>,
    /// Where event `i`'s text ends in `text` (it starts where event `i - 1`'s ends).
    ends: Vec<u32>,
    /// The events that are not JSON (their text is not kept), by index, with why.
    not_json: Vec<(u32, Box<str>)>,
    /// Where the bytes became unreadable: the index the next event would have had, and why.
    pub broken: Option<(usize, String)>,
}

/// Just an event's `type`, read without building the rest.
#[derive(serde::Deserialize)]
struct TypeOnly<'a> {
    #[serde(borrow, rename = "type")]
    kind: Option<Cow<'a, str>>,
}

impl Recording {
    fn with_capacity(format: &'static str, bytes: usize) -> Recording {
        Recording {
            format,
            text: Vec::with_capacity(bytes),
            ..Recording::default()
        }
    }

    /// Adds an event (its text is left out when it is not JSON). Offsets fit in `u32`: the
    /// route takes at most [`MAX_BYTES`] of text.
    fn push(&mut self, json: &[u8], not_json: Option<String>) {
        let index = self.ends.len() as u32;
        match not_json {
            Some(message) => self.not_json.push((index, message.into_boxed_str())),
            None => self.text.extend_from_slice(json),
        }
        self.ends.push(self.text.len() as u32);
    }

    /// How many events were read.
    fn len(&self) -> usize {
        self.ends.len()
    }

    /// The JSON text of event `i`, or why it is not JSON.
    fn json(&self, i: usize) -> Result<&[u8], &str> {
        if let Ok(k) = self.not_json.binary_search_by_key(&(i as u32), |(j, _)| *j) {
            return Err(&self.not_json[k].1);
        }
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        Ok(&self.text[start..self.ends[i] as usize])
    }

    /// The `type` of event `i` (`end of stream` past the last one).
    fn event_type(&self, i: usize) -> String {
        if i >= self.len() {
            return "end of stream".into();
        }
        match self.json(i) {
            Err(_) => "(not JSON)".into(),
            Ok(json) => match serde_json::from_slice::<TypeOnly>(json) {
                Ok(TypeOnly { kind: Some(kind) }) => kind.into_owned(),
                _ => "(no type)".into(),
            },
        }
    }
}

/// Reads a recording's events. `proto`: the body was announced as protobuf.
pub fn read_events(bytes: axum::body::Bytes, proto: bool) -> Result<Recording, String> {
    let first = bytes
        .iter()
        .copied()
        .find(|b| !b.is_ascii_whitespace() && *b != 0xEF);
    // A protobuf stream starts with a 4-byte big-endian length: a 0 byte for any frame
    // under 16 MiB. Text formats start with `[`, `{` or an SSE field.
    if proto || first == Some(0) {
        return Ok(read_proto(&bytes));
    }
    let size = bytes.len();
    // The reader reads the body in place (a `Bytes` clone shares it).
    let source = Source::from_reader(Box::new(std::io::Cursor::new(bytes)), "the recording");
    let mut reader = EventReader::new(source, crate::input::DEFAULT_MAX_FRAME_BYTES)
        .map_err(|e| e.to_string())?;
    let format = match reader.format() {
        crate::input::Format::JsonArray => "json-array",
        crate::input::Format::JsonLines => "json-lines",
        crate::input::Format::Sse => "sse",
        crate::input::Format::Case => "case",
        crate::input::Format::Protobuf => "protobuf",
    };
    // The events' text is at most the body's.
    let mut recording = Recording::with_capacity(format, size);
    let result = reader.for_each(|json| {
        // Checked, not built: the pipeline parses it again, typed.
        let not_json = serde_json::from_slice::<serde::de::IgnoredAny>(json)
            .err()
            .map(|e| match format {
                "sse" => format!("invalid JSON in SSE frame: {e}"),
                _ => format!("invalid JSON line: {e}"),
            });
        recording.push(json, not_json);
        ControlFlow::Continue(())
    });
    match result {
        Ok(()) => {}
        Err(ReadError::Framing { event, message }) => recording.broken = Some((event, message)),
        Err(e) => return Err(e.to_string()),
    }
    recording.text.shrink_to_fit();
    Ok(recording)
}

fn read_proto(bytes: &[u8]) -> Recording {
    // The JSON form is larger than the protobuf one: a guess, the buffer grows past it.
    let mut recording = Recording::with_capacity("protobuf", bytes.len().saturating_mul(2));
    let mut d =
        proto::ProtoFrameDecoder::with_max_frame_size(crate::input::DEFAULT_MAX_FRAME_BYTES);
    d.push(bytes);
    let mut json = Vec::new();
    loop {
        let failed = match d.next_frame() {
            Ok(Some(body)) => match proto::decode_event(&body) {
                Ok(Some(e)) => {
                    json.clear();
                    match serde_json::to_writer(&mut json, &e) {
                        Ok(()) => {
                            recording.push(&json, None);
                            continue;
                        }
                        Err(e) => e.to_string(),
                    }
                }
                // An event of a later protocol version: skipped, as the reference does.
                Ok(None) => continue,
                Err(e) => e.to_string(),
            },
            Ok(None) => break,
            Err(e) => e.to_string(),
        };
        recording.broken = Some((recording.len(), failed));
        return recording;
    }
    recording.broken = d.finish().err().map(|e| (recording.len(), e.to_string()));
    recording.text.shrink_to_fit();
    recording
}

fn violation(
    rule: &str,
    message: String,
    index: usize,
    recording: &Recording,
    restarted_at: Option<usize>,
) -> ApiViolation {
    let (title, explanation, reference) = crate::rules::describe(rule).unwrap_or(("", "", ""));
    ApiViolation {
        index,
        event_type: recording.event_type(index),
        rule: rule.to_owned(),
        message,
        title: title.to_owned(),
        explanation: explanation.to_owned(),
        reference: reference.to_owned(),
        help: format!("/rules#{rule}"),
        restarted_at,
    }
}

/// Verifies a recording run after run: the violations and warnings, by event index.
pub fn verify(recording: &Recording) -> (Vec<ApiViolation>, Vec<ApiWarning>) {
    let mut violations = Vec::new();
    let mut warnings = Vec::new();
    let mut start = 0;
    let mut restarted_at = None;
    let n = recording.len();
    loop {
        let mut p = Pipeline::new().with_warnings(true);
        let mut seen_warnings = 0;
        let mut failed: Option<PipelineError> = None;
        for i in start..n {
            let result = match recording.json(i) {
                Ok(json) => p.push_json(json).map(|_| ()),
                Err(message) => crate::inspect::push_not_json(&mut p, message),
            };
            let all = p.applier().warnings();
            for w in &all[seen_warnings..] {
                warnings.push(ApiWarning {
                    index: i,
                    message: w.to_string(),
                });
            }
            seen_warnings = all.len();
            if let Err(e) = result {
                failed = Some(e);
                break;
            }
        }
        if failed.is_none() {
            failed = p.finish().err();
        }
        for (i, w) in p.warnings() {
            warnings.push(ApiWarning {
                index: start + i,
                message: w.clone(),
            });
        }
        let Some(e) = failed else { break };
        let at = start + e.index;
        violations.push(violation(
            e.rule(),
            crate::inspect::error_message(&e),
            at,
            recording,
            restarted_at,
        ));
        // The next run is a new request: verification starts again there.
        let next = (at + 1..n).find(|&i| recording.event_type(i) == "RUN_STARTED");
        match next {
            Some(i) => {
                start = i;
                restarted_at = Some(i);
            }
            None => break,
        }
    }
    warnings.sort_by_key(|w| w.index);
    (violations, warnings)
}

/// The `a2ui-surface` activities of a recording as they stand at its end (one object per
/// activity, as `SurfaceActivity::to_value` writes it); `None` when it has none.
pub fn surfaces(recording: &Recording) -> Option<serde_json::Value> {
    let mut folder = aguikit_a2ui::agui::ActivityFolder::new(aguikit_a2ui::Validator::new());
    for i in 0..recording.len() {
        let Ok(json) = recording.json(i) else {
            continue;
        };
        // Only activities are parsed.
        if memchr::memmem::find(json, b"ACTIVITY_").is_none() {
            continue;
        }
        if let Ok(event) = aguikit_core::Event::from_json_slice(json) {
            folder.push(i, &event);
        }
    }
    let activities: Vec<serde_json::Value> = folder.activities().map(|a| a.to_value()).collect();
    (!activities.is_empty()).then_some(serde_json::Value::Array(activities))
}

/// The answer of `POST /api/inspect`: the recording's events as read, with the verdicts.
#[derive(Debug)]
pub struct Report {
    recording: Recording,
    /// The violations, in stream order.
    pub violations: Vec<ApiViolation>,
    /// The warnings, in stream order.
    pub warnings: Vec<ApiWarning>,
    /// The A2UI surfaces, when the recording has `a2ui-surface` activities.
    pub surfaces: Option<serde_json::Value>,
}

impl Report {
    /// No violation.
    pub fn ok(&self) -> bool {
        self.violations.is_empty()
    }

    /// The answer's JSON: `format`, `ok`, `events` (each event's text as read, or
    /// `{"error": "..."}` where it is not JSON), `violations` and `warnings`. The events
    /// are copied as they are, never parsed into trees, so the answer costs about the
    /// recording's size once.
    #[cfg(test)]
    pub fn to_json(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.recording.text.len() + self.recording.len() + 1024);
        // Writing into memory cannot fail.
        self.write_json(&mut out).expect("writing to memory");
        out
    }

    /// Writes the answer's JSON to `w`, piece by piece: `format`, `ok`, `events` (each
    /// event's text as read, or `{"error": "..."}` where it is not JSON), `violations`,
    /// `warnings`, and `surfaces` when there are A2UI surfaces.
    pub fn write_json(&self, w: &mut impl std::io::Write) -> std::io::Result<()> {
        let r = &self.recording;
        w.write_all(b"{\"format\":")?;
        serde_json::to_writer(&mut *w, r.format)?;
        w.write_all(if self.ok() {
            b",\"ok\":true"
        } else {
            b",\"ok\":false"
        })?;
        w.write_all(b",\"events\":[")?;
        for i in 0..r.len() {
            if i > 0 {
                w.write_all(b",")?;
            }
            match r.json(i) {
                Ok(json) => w.write_all(json)?,
                Err(message) => {
                    serde_json::to_writer(&mut *w, &serde_json::json!({ "error": message }))?
                }
            }
        }
        w.write_all(b"],\"violations\":")?;
        serde_json::to_writer(&mut *w, &self.violations)?;
        w.write_all(b",\"warnings\":")?;
        serde_json::to_writer(&mut *w, &self.warnings)?;
        if let Some(surfaces) = &self.surfaces {
            w.write_all(b",\"surfaces\":")?;
            serde_json::to_writer(&mut *w, surfaces)?;
        }
        w.write_all(b"}")
    }
}

/// Hands what is written to a response body in chunks (from a blocking thread): the answer
/// is never in memory whole beside the recording. A body whose reader went away is a
/// broken pipe.
struct ChunkWriter {
    buf: Vec<u8>,
    tx: tokio::sync::mpsc::Sender<Result<axum::body::Bytes, std::io::Error>>,
}

impl ChunkWriter {
    const CHUNK: usize = 256 << 10;

    fn send(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::replace(&mut self.buf, Vec::with_capacity(Self::CHUNK));
        self.tx
            .blocking_send(Ok(chunk.into()))
            .map_err(|_| std::io::ErrorKind::BrokenPipe.into())
    }
}

impl std::io::Write for ChunkWriter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= Self::CHUNK {
            self.send()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.send()
    }
}

/// Reads and verifies a recording (the body is dropped once read: only the compact
/// [`Recording`] is kept).
pub fn inspect(bytes: impl Into<axum::body::Bytes>, proto: bool) -> Result<Report, String> {
    let recording = read_events(bytes.into(), proto)?;
    // The body is gone; its pages (freed on a connection thread) are not kept beside the
    // fold that follows.
    crate::release_free_memory();
    let (mut violations, warnings) = verify(&recording);
    if let Some((index, message)) = &recording.broken {
        // Unreadable bytes end the recording; a violation at that index came from the
        // pipeline seeing the stream end there.
        let index = *index;
        violations.retain(|v| v.index < index);
        let message = format!("the bytes after event {index} cannot be read: {message}");
        violations.push(violation("framing", message, index, &recording, None));
    }
    let surfaces = surfaces(&recording);
    Ok(Report {
        recording,
        violations,
        warnings,
        surfaces,
    })
}

/// Who is inspecting: a limit on concurrent inspections overall and per principal, taken
/// before the body is read (a caller over it reads nothing and gets `429`).
#[derive(Debug, Clone)]
pub struct Limits {
    total: usize,
    per_principal: usize,
    running: Arc<Mutex<(usize, HashMap<String, usize>)>>,
}

/// An inspection slot, given back when dropped (also when the inspection panics).
#[derive(Debug)]
pub struct InspectSlot {
    limits: Limits,
    principal: String,
}

impl Drop for InspectSlot {
    fn drop(&mut self) {
        let mut running = self
            .limits
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        running.0 -= 1;
        if let Some(n) = running.1.get_mut(&self.principal) {
            *n -= 1;
            if *n == 0 {
                running.1.remove(&self.principal);
            }
        }
    }
}

impl Default for Limits {
    fn default() -> Limits {
        Limits::new(MAX_CONCURRENT, MAX_CONCURRENT_PER_PRINCIPAL)
    }
}

impl Limits {
    /// At most `total` inspections at once, `per_principal` of them one caller's.
    pub fn new(total: usize, per_principal: usize) -> Limits {
        Limits {
            total,
            per_principal,
            running: Arc::default(),
        }
    }

    /// A slot for `principal`, or `None` when either limit is reached.
    pub fn try_acquire(&self, principal: &str) -> Option<InspectSlot> {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        let mine = running.1.get(principal).copied().unwrap_or(0);
        if running.0 >= self.total || mine >= self.per_principal {
            return None;
        }
        running.0 += 1;
        *running.1.entry(principal.to_owned()).or_insert(0) += 1;
        Some(InspectSlot {
            limits: self.clone(),
            principal: principal.to_owned(),
        })
    }
}

/// The error answer (`Retry-After: 1` when the caller should come back).
fn refusal(code: ErrorCode, message: String) -> axum::response::Response {
    use axum::response::IntoResponse;
    let error = ApiError::new(code, message);
    match code {
        ErrorCode::TooManyInspections => error.retry_after(1),
        _ => error,
    }
    .into_response()
}

/// The handler of `POST /api/inspect`: a slot is taken first (`429 too_many_inspections`
/// when the caller or the server is at its limit), then the body is read by `server`
/// ([`AgentServer::read_body`](aguikit_server::AgentServer::read_body): up to
/// [`MAX_BYTES`], else `413`; at the server's body pace, else `408`; in its body budgets,
/// else `503 busy`), then read and verified on a blocking thread, so that other
/// connections and `/health` are served meanwhile.
pub async fn handler(
    server: aguikit_server::AgentServer,
    limits: Limits,
    request: axum::extract::Request,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let principal = request
        .extensions()
        .get::<aguikit_server::Principal>()
        .cloned()
        .unwrap_or_else(aguikit_server::Principal::anonymous);
    let Some(slot) = limits.try_acquire(principal.name()) else {
        return refusal(
            ErrorCode::TooManyInspections,
            format!(
                "at most {} inspection(s) at once per caller and {} in all; retry when one has ended",
                limits.per_principal, limits.total
            ),
        );
    };
    let proto = request
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with(PROTO));
    // Read as the server reads a run input: its limits on size and pace, and room in its
    // body budgets (given back once the recording is read).
    let (body, room) = match server.read_body(&principal, request, MAX_BYTES).await {
        Ok(read) => read,
        Err(refused) => return refused,
    };
    let result = tokio::task::spawn_blocking(move || {
        let report = inspect(body, proto);
        drop(room);
        (slot, report)
    })
    .await;
    match result {
        Ok((slot, Ok(report))) => {
            // The answer is written on a blocking thread as the client reads it; the slot
            // is held until it is all sent (or the client has gone).
            let (tx, rx) = tokio::sync::mpsc::channel(4);
            tokio::task::spawn_blocking(move || {
                let _slot = slot;
                let mut w = ChunkWriter {
                    buf: Vec::with_capacity(ChunkWriter::CHUNK),
                    tx,
                };
                if report.write_json(&mut w).is_ok() {
                    let _ = std::io::Write::flush(&mut w);
                }
                // The recording and its fold are given back to the system now, not when
                // the allocator's decay gets to them.
                drop(report);
                crate::release_free_memory();
            });
            let chunks = futures_util::stream::unfold(rx, |mut rx| async move {
                rx.recv().await.map(|chunk| (chunk, rx))
            });
            (
                [(axum::http::header::CONTENT_TYPE, "application/json")],
                axum::body::Body::from_stream(chunks),
            )
                .into_response()
        }
        Ok((_, Err(message))) => refusal(ErrorCode::UnreadableRecording, message),
        Err(e) => refusal(ErrorCode::Internal, e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn lines(events: &[Value]) -> Vec<u8> {
        events
            .iter()
            .map(|e| format!("{e}\n"))
            .collect::<String>()
            .into_bytes()
    }

    #[test]
    fn a_violation_in_an_early_run_does_not_hide_a_later_one() {
        use serde_json::json;
        let events = [
            json!({"type":"RUN_STARTED","threadId":"t","runId":"r1"}),
            json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"x"}),
            json!({"type":"RUN_FINISHED","threadId":"t","runId":"r1"}),
            json!({"type":"RUN_STARTED","threadId":"t","runId":"r2"}),
            json!({"type":"TEXT_MESSAGE_START","messageId":"m2"}),
            json!({"type":"STATE_DELTA","delta":[{"op":"remove","path":"/nope"}]}),
            json!({"type":"RUN_FINISHED","threadId":"t","runId":"r2"}),
        ];
        let r = inspect(lines(&events), false).unwrap();
        let answer: Value = serde_json::from_slice(&r.to_json()).unwrap();
        assert_eq!(answer["format"], "json-lines");
        assert_eq!(answer["events"].as_array().unwrap().len(), 7);
        assert_eq!(answer["events"][3], events[3]);
        assert_eq!(answer["ok"], false);
        assert_eq!(answer["violations"][1]["restartedAt"], 3);
        let got: Vec<(usize, &str, Option<usize>)> = r
            .violations
            .iter()
            .map(|v| (v.index, v.rule.as_str(), v.restarted_at))
            .collect();
        assert_eq!(got, [(1, "V16", None), (6, "V49", Some(3))]);
        assert_eq!(r.violations[0].event_type, "TEXT_MESSAGE_CONTENT");
        assert_eq!(r.violations[0].help, "/rules#V16");
        assert!(!r.violations[0].reference.is_empty());
        // The failing patch is a reducer warning on its event, not a violation.
        assert!(r.warnings.iter().any(|w| w.index == 5), "{:?}", r.warnings);
    }

    #[test]
    fn a2ui_surfaces_only_when_the_recording_has_some() {
        use serde_json::json;
        let plain = inspect(
            lines(&[
                json!({"type":"RUN_STARTED","threadId":"t","runId":"r"}),
                json!({"type":"RUN_FINISHED","threadId":"t","runId":"r"}),
            ]),
            false,
        )
        .unwrap();
        let v: Value = serde_json::from_slice(&plain.to_json()).unwrap();
        assert!(v.get("surfaces").is_none(), "{v}");
        let ops = json!([
            {"version": "v0.9", "createSurface": {"surfaceId": "s", "catalogId": "c"}},
            {"version": "v0.9", "updateComponents": {"surfaceId": "s", "components": [
                {"id": "root", "component": "Column", "children": ["gone"]}]}}
        ]);
        let report = inspect(
            lines(&[
                json!({"type":"RUN_STARTED","threadId":"t","runId":"r"}),
                json!({"type":"ACTIVITY_SNAPSHOT","messageId":"a2ui-surface-x","activityType":"a2ui-surface","replace":true,"content":{"status":"building"}}),
                json!({"type":"ACTIVITY_SNAPSHOT","messageId":"a2ui-surface-x","activityType":"a2ui-surface","replace":true,"content":{"a2ui_operations": ops}}),
                json!({"type":"ACTIVITY_SNAPSHOT","messageId":"plan","activityType":"PLAN","replace":true,"content":{"a": 1}}),
                json!({"type":"RUN_FINISHED","threadId":"t","runId":"r"}),
            ]),
            false,
        )
        .unwrap();
        let v: Value = serde_json::from_slice(&report.to_json()).unwrap();
        assert_eq!(v["ok"], json!(true));
        let acts = v["surfaces"].as_array().unwrap();
        assert_eq!(acts.len(), 1, "{v}");
        assert_eq!(acts[0]["messageId"], json!("a2ui-surface-x"));
        assert_eq!(acts[0]["surfaces"][0]["surfaceId"], json!("s"));
        assert_eq!(acts[0]["violations"][0]["rule"], json!("A7"));
    }

    #[test]
    fn sse_protobuf_and_broken_input() {
        use aguikit_core::event::{RunFinished, RunStarted, TextMessageChunk};
        let evs: Vec<aguikit_core::Event> = vec![
            RunStarted::new("t", "r").into(),
            TextMessageChunk::new()
                .with_message_id("m")
                .with_delta("hi")
                .into(),
            RunFinished::new("t", "r").into(),
        ];
        let mut body = Vec::new();
        for e in &evs {
            proto::write_frame(&mut body, e).unwrap();
        }
        let r = inspect(body.clone(), false).unwrap();
        let answer: Value = serde_json::from_slice(&r.to_json()).unwrap();
        assert_eq!((r.recording.format, r.ok()), ("protobuf", true));
        assert_eq!(answer["events"].as_array().unwrap().len(), 3);
        assert_eq!(answer["events"][1]["delta"], "hi");
        let r = inspect(body.clone(), true).unwrap();
        assert_eq!(r.recording.format, "protobuf");

        let sse = b"data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\ndata: {nope\n\n";
        let r = inspect(&sse[..], false).unwrap();
        assert_eq!(r.recording.format, "sse");
        assert_eq!(r.violations[0].rule, "schema");
        assert_eq!(r.violations[0].index, 1);
        assert_eq!(r.violations[0].event_type, "(not JSON)");
        let answer: Value = serde_json::from_slice(&r.to_json()).unwrap();
        assert!(answer["events"][1]["error"].is_string());

        assert!(inspect(&b"hello"[..], false).is_err());
        let truncated = body[..body.len() - 3].to_vec();
        let r = inspect(truncated, false).unwrap();
        assert_eq!(r.violations.last().unwrap().rule, "framing");
    }

    /// The first violation is the one `agui verify` reports, for every case of the corpus.
    #[test]
    fn the_first_violation_is_the_verifiers_verdict_on_the_corpus() {
        let Ok(shared) = std::env::var("AGUI_SHARED_DIR") else {
            eprintln!("AGUI_SHARED_DIR is not set: the corpus check is skipped");
            return;
        };
        let dir = std::path::Path::new(&shared).join("conformance/cases");
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            let case: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            let body = serde_json::to_vec(&case["events"]).unwrap();
            let r = inspect(body, false).unwrap();
            let verify = &case["expect"]["verify"];
            if verify["ok"] == true {
                assert!(r.ok(), "{}: {:?}", path.display(), r.violations);
            } else {
                let at = verify["at"].as_u64().unwrap() as usize;
                assert_eq!(r.violations[0].index, at, "{}", path.display());
                assert!(
                    crate::rules::describe(&r.violations[0].rule).is_some(),
                    "{}: rule {} has no entry",
                    path.display(),
                    r.violations[0].rule
                );
            }
            n += 1;
        }
        assert!(n > 200, "only {n} cases");
    }
}
