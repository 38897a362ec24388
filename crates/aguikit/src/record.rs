//! `agui record URL -o FILE`: runs an agent once and saves its stream as JSON Lines, each
//! event exactly as it arrived (before chunk expansion), then says in one line what was
//! recorded and whether it verifies.

use crate::inspect::{error_message, failing_type};
use crate::term::human_bytes;
use crate::wire::{self, Received, Request};
use aguikit_core::engine::apply::Applier;
use serde_json::Value;
use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Options of `agui record`.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// The agent's endpoint.
    pub url: String,
    /// The user message (default `hello`).
    pub text: Option<String>,
    /// Parts of the run input.
    pub input: Option<aguikit::report::RunSpec>,
    /// Ask for protobuf.
    pub proto: bool,
    /// Where to write (`-` for standard output).
    pub output: String,
    /// Extra request headers.
    pub headers: Vec<(String, String)>,
    /// Limit of the run.
    pub timeout: Duration,
    /// Add the arrival time as `timestamp` to events that carry none.
    pub stamp: bool,
}

/// Runs `agui record`: 0 when the stream was recorded whole, verifies and ends with
/// `RUN_FINISHED`; 1 when it was recorded but the run failed (`RUN_ERROR`, a verification
/// failure, no terminal event, a body that broke off: what arrived is still saved); 2 on a
/// usage or I/O error, a URL that is not an absolute http(s) URL (nothing is sent), no
/// response, or a status other than 2xx (nothing is recorded).
pub async fn run(opts: RecordOptions) -> Result<ExitCode, String> {
    let url = crate::net::check_url(&opts.url)?;
    let client = wire::client()?;
    let request = Request {
        url,
        input: wire::input_from(opts.input.as_ref(), opts.text.as_deref()),
        proto: opts.proto,
        headers: opts.headers.clone(),
        timeout: opts.timeout,
    };
    let started = SystemTime::now();
    let response = wire::fetch(&client, &request, |_| {}).await;
    if !response.status_ok() {
        let why = match (&response.failure, response.status) {
            (Some(f), _) => f.to_string(),
            (None, Some(s)) => format!(
                "HTTP {s}: {}",
                crate::inspect::excerpt(response.body_excerpt.trim(), 300)
            ),
            (None, None) => "no response".into(),
        };
        eprintln!("agui record: nothing recorded: {why}");
        return Ok(ExitCode::from(crate::net::UNREACHABLE));
    }
    let mut lines = Vec::with_capacity(response.bytes as usize + response.events.len());
    for r in &response.events {
        lines.extend_from_slice(line(r, opts.stamp.then_some(started)).as_bytes());
        lines.push(b'\n');
    }
    if opts.output == "-" {
        let mut out = crate::out::Output(std::io::stdout().lock());
        out.write_all(&lines)
            .and_then(|()| out.flush())
            .map_err(|e| format!("writing standard output: {e}"))?;
    } else {
        std::fs::write(&opts.output, &lines)
            .map_err(|e| format!("writing {}: {e}", opts.output))?;
    }

    let raw = response.raw_events();
    let (_, error) = wire::verify_events(&raw, Applier::new(), false);
    let n = response.events.len();
    let verdict = match (&error, response.terminal()) {
        (Some(e), _) if e.index >= n => {
            format!(
                "breaks at the end of the stream: {}: {}",
                e.rule(),
                error_message(e)
            )
        }
        (Some(e), _) => format!(
            "breaks at event {} {}: {}: {}",
            e.index,
            parenthesised(&failing_type(e, &raw)),
            e.rule(),
            error_message(e)
        ),
        (None, Some(t)) => format!("valid, ends with {t}"),
        (None, None) => "valid, but without RUN_FINISHED or RUN_ERROR".into(),
    };
    let content_type = response
        .content_type
        .as_deref()
        .unwrap_or("no content type");
    let target = if opts.output == "-" {
        "standard output".to_owned()
    } else {
        opts.output.clone()
    };
    let summary = format!(
        "recorded {n} event{} to {target} (HTTP {} {content_type}, {}, {} ms): {verdict}",
        if n == 1 { "" } else { "s" },
        response.status.unwrap_or(0),
        human_bytes(response.bytes),
        response.elapsed.as_millis(),
    );
    let summary = match &response.failure {
        Some(f) => format!("{summary}; {f}"),
        None => summary,
    };
    if opts.output == "-" {
        eprintln!("{summary}");
    } else {
        crate::out::outln!("{summary}");
    }
    let succeeded = response.failure.is_none()
        && error.is_none()
        && response.terminal() == Some("RUN_FINISHED");
    Ok(ExitCode::from(if succeeded {
        0
    } else {
        crate::net::FAILED
    }))
}

/// `(TYPE)`, or the label as it is when it already has parentheses.
fn parenthesised(ty: &str) -> String {
    if ty.starts_with('(') {
        ty.to_owned()
    } else {
        format!("({ty})")
    }
}

/// One JSON Lines line for an event: its SSE data verbatim when that is one line, else the
/// JSON re-encoded (protobuf events, multi-line data), else the text with its line breaks
/// turned into spaces (so that a frame that is not JSON stays one line, and stays not JSON).
fn line(r: &Received, stamp_from: Option<SystemTime>) -> String {
    if let (Some(start), Ok(Value::Object(obj))) = (stamp_from, &r.event)
        && !obj.contains_key("timestamp")
    {
        let ms = (start + r.at)
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        let mut obj = obj.clone();
        obj.insert("timestamp".into(), Value::from(ms));
        return Value::Object(obj).to_string();
    }
    match (&r.text, &r.event) {
        (Some(text), _) if !text.contains(['\n', '\r']) => text.clone(),
        (_, Ok(v)) => v.to_string(),
        (Some(text), Err(_)) => text.replace(['\n', '\r'], " "),
        (None, Err(e)) => serde_json::to_string(e).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn received(event: Result<Value, String>, text: Option<&str>) -> Received {
        Received {
            event,
            text: text.map(str::to_owned),
            at: Duration::from_millis(250),
        }
    }

    #[test]
    fn lines_keep_what_arrived() {
        let data = r#"{"type":"RUN_STARTED", "threadId":"t","runId":"r"}"#;
        let v: Value = serde_json::from_str(data).unwrap();
        assert_eq!(line(&received(Ok(v.clone()), Some(data)), None), data);
        assert_eq!(
            line(&received(Ok(v), Some("{\"type\":\n\"X\"}")), None),
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#
        );
        assert_eq!(
            line(&received(Err("bad".into()), Some("{\"a\":\n")), None),
            "{\"a\": "
        );
    }

    #[test]
    fn stamping_adds_arrival_time_only_where_missing() {
        let start = UNIX_EPOCH + Duration::from_secs(1000);
        let l = line(
            &received(Ok(json!({"type": "RUN_STARTED"})), None),
            Some(start),
        );
        assert_eq!(l, r#"{"type":"RUN_STARTED","timestamp":1000250}"#);
        let l = line(
            &received(Ok(json!({"type": "RUN_STARTED", "timestamp": 5})), None),
            Some(start),
        );
        assert_eq!(l, r#"{"type":"RUN_STARTED","timestamp":5}"#);
    }
}
