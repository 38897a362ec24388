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

use crate::input::{EventReader, ReadError, Source};
use aguikit_core::codec::proto;
use aguikit_core::engine::pipeline::{Pipeline, PipelineError};
use serde::Serialize;
use serde_json::Value;
use std::ops::ControlFlow;

/// The largest recording `POST /api/inspect` takes.
pub const MAX_BYTES: usize = 64 << 20;

// The media type of length-prefixed protobuf.
use aguikit_core::codec::media::PROTO_MEDIA_TYPE as PROTO;

/// One event as read: its JSON bytes (as given to the pipeline) and value, or why it is not JSON.
pub struct Read {
    /// What the pipeline is fed.
    pub bytes: Vec<u8>,
    /// The parsed event, or the parser's message.
    pub value: Result<Value, String>,
}

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

/// The answer of `POST /api/inspect`.
#[derive(Debug, Serialize)]
pub struct Report {
    /// `json-array`, `json-lines`, `sse`, `case` or `protobuf`.
    pub format: &'static str,
    /// No violation.
    pub ok: bool,
    /// Every event as read (`{"error": "..."}` where the text is not JSON).
    pub events: Vec<Value>,
    /// The violations, in stream order.
    pub violations: Vec<ApiViolation>,
    /// The warnings, in stream order.
    pub warnings: Vec<ApiWarning>,
}

/// What a recording holds: its format, its events, and where its bytes became unreadable
/// (the index the next event would have had, and why).
pub type Events = (&'static str, Vec<Read>, Option<(usize, String)>);

/// Reads a recording's events. `proto`: the body was announced as protobuf.
pub fn read_events(bytes: &[u8], proto: bool) -> Result<Events, String> {
    let first = bytes
        .iter()
        .copied()
        .find(|b| !b.is_ascii_whitespace() && *b != 0xEF);
    // A protobuf stream starts with a 4-byte big-endian length: a 0 byte for any frame
    // under 16 MiB. Text formats start with `[`, `{` or an SSE field.
    if proto || first == Some(0) {
        return read_proto(bytes);
    }
    let source = Source::from_reader(
        Box::new(std::io::Cursor::new(bytes.to_vec())),
        "the recording",
    );
    let mut reader = EventReader::new(source, crate::input::DEFAULT_MAX_FRAME_BYTES)
        .map_err(|e| e.to_string())?;
    let format = match reader.format() {
        crate::input::Format::JsonArray => "json-array",
        crate::input::Format::JsonLines => "json-lines",
        crate::input::Format::Sse => "sse",
        crate::input::Format::Case => "case",
    };
    let mut events = Vec::new();
    let result = reader.for_each(|json| {
        events.push(Read {
            bytes: json.to_vec(),
            value: serde_json::from_slice(json).map_err(|e| match format {
                "sse" => format!("invalid JSON in SSE frame: {e}"),
                _ => format!("invalid JSON line: {e}"),
            }),
        });
        ControlFlow::Continue(())
    });
    let broken = match result {
        Ok(()) => None,
        Err(ReadError::Framing { event, message }) => Some((event, message)),
        Err(e) => return Err(e.to_string()),
    };
    Ok((format, events, broken))
}

fn read_proto(bytes: &[u8]) -> Result<Events, String> {
    let mut d =
        proto::ProtoFrameDecoder::with_max_frame_size(crate::input::DEFAULT_MAX_FRAME_BYTES);
    d.push(bytes);
    let mut events = Vec::new();
    loop {
        match d.next_frame() {
            Ok(Some(body)) => match proto::decode_event(&body) {
                Ok(Some(e)) => {
                    let value = serde_json::to_value(&e).map_err(|e| e.to_string())?;
                    events.push(Read {
                        bytes: serde_json::to_vec(&value).map_err(|e| e.to_string())?,
                        value: Ok(value),
                    });
                }
                // An event of a later protocol version: skipped, as the reference does.
                Ok(None) => {}
                Err(e) => {
                    let n = events.len();
                    return Ok(("protobuf", events, Some((n, e.to_string()))));
                }
            },
            Ok(None) => break,
            Err(e) => {
                let n = events.len();
                return Ok(("protobuf", events, Some((n, e.to_string()))));
            }
        }
    }
    let broken = d.finish().err().map(|e| (events.len(), e.to_string()));
    Ok(("protobuf", events, broken))
}

fn event_type(read: Option<&Read>) -> String {
    match read {
        None => "end of stream".into(),
        Some(r) => match &r.value {
            Ok(v) => v
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("(no type)")
                .to_owned(),
            Err(_) => "(not JSON)".into(),
        },
    }
}

fn violation(
    rule: &str,
    message: String,
    index: usize,
    events: &[Read],
    restarted_at: Option<usize>,
) -> ApiViolation {
    let (title, explanation, reference) = crate::rules::describe(rule).unwrap_or(("", "", ""));
    ApiViolation {
        index,
        event_type: event_type(events.get(index)),
        rule: rule.to_owned(),
        message,
        title: title.to_owned(),
        explanation: explanation.to_owned(),
        reference: reference.to_owned(),
        help: format!("/rules#{rule}"),
        restarted_at,
    }
}

/// Verifies `events` run after run: the violations and warnings, by event index.
pub fn verify(events: &[Read]) -> (Vec<ApiViolation>, Vec<ApiWarning>) {
    let mut violations = Vec::new();
    let mut warnings = Vec::new();
    let mut start = 0;
    let mut restarted_at = None;
    loop {
        let mut p = Pipeline::new().with_warnings(true);
        let mut seen_warnings = 0;
        let mut failed: Option<PipelineError> = None;
        for (k, read) in events[start..].iter().enumerate() {
            let result = match &read.value {
                Ok(_) => p.push_json(&read.bytes).map(|_| ()),
                Err(message) => crate::inspect::push_not_json(&mut p, message),
            };
            let all = p.applier().warnings();
            for w in &all[seen_warnings..] {
                warnings.push(ApiWarning {
                    index: start + k,
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
            events,
            restarted_at,
        ));
        // The next run is a new request: verification starts again there.
        let next = events.iter().enumerate().skip(at + 1).find(|(_, r)| {
            r.value
                .as_ref()
                .is_ok_and(|v| v.get("type").and_then(Value::as_str) == Some("RUN_STARTED"))
        });
        match next {
            Some((i, _)) => {
                start = i;
                restarted_at = Some(i);
            }
            None => break,
        }
    }
    warnings.sort_by_key(|w| w.index);
    (violations, warnings)
}

/// Reads and verifies a recording.
pub fn inspect(bytes: &[u8], proto: bool) -> Result<Report, String> {
    let (format, events, broken) = read_events(bytes, proto)?;
    let (mut violations, warnings) = verify(&events);
    if let Some((index, message)) = broken {
        // Unreadable bytes end the recording; a violation at that index came from the
        // pipeline seeing the stream end there.
        violations.retain(|v| v.index < index);
        violations.push(violation(
            "framing",
            format!("the bytes after event {index} cannot be read: {message}"),
            index,
            &events,
            None,
        ));
    }
    let events = events
        .into_iter()
        .map(|r| {
            r.value
                .unwrap_or_else(|e| serde_json::json!({ "error": e }))
        })
        .collect();
    Ok(Report {
        format,
        ok: violations.is_empty(),
        events,
        violations,
        warnings,
    })
}

/// The handler of `POST /api/inspect` (the body is read whole, up to [`MAX_BYTES`]).
pub async fn handler(
    headers: axum::http::HeaderMap,
    body: axum::body::Bytes,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let proto = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with(PROTO));
    let result = tokio::task::spawn_blocking(move || inspect(&body, proto)).await;
    match result {
        Ok(Ok(report)) => axum::Json(report).into_response(),
        Ok(Err(message)) => (
            axum::http::StatusCode::BAD_REQUEST,
            axum::Json(serde_json::json!({"code": "unreadable_recording", "message": message})),
        )
            .into_response(),
        Err(e) => (
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            axum::Json(serde_json::json!({"code": "internal", "message": e.to_string()})),
        )
            .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let r = inspect(&lines(&events), false).unwrap();
        assert_eq!(r.format, "json-lines");
        assert_eq!(r.events.len(), 7);
        assert!(!r.ok);
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
        let r = inspect(&body, false).unwrap();
        assert_eq!((r.format, r.ok, r.events.len()), ("protobuf", true, 3));
        assert_eq!(r.events[1]["delta"], "hi");
        let r = inspect(&body, true).unwrap();
        assert_eq!(r.format, "protobuf");

        let sse = b"data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\ndata: {nope\n\n";
        let r = inspect(sse, false).unwrap();
        assert_eq!(r.format, "sse");
        assert_eq!(r.violations[0].rule, "schema");
        assert_eq!(r.violations[0].index, 1);
        assert!(r.events[1]["error"].is_string());

        assert!(inspect(b"hello", false).is_err());
        let truncated = &body[..body.len() - 3];
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
            let r = inspect(&body, false).unwrap();
            let verify = &case["expect"]["verify"];
            if verify["ok"] == true {
                assert!(r.ok, "{}: {:?}", path.display(), r.violations);
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
