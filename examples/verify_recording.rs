//! Verify a recording (aguikit-core): a recorded AG-UI stream is expanded, checked against
//! the official client's rules and folded into the conversation, with no network at all.
//!
//! ```sh
//! cargo run -p aguikit-examples --bin verify_recording                 # an embedded recording
//! cargo run -p aguikit-examples --bin verify_recording -- run.jsonl    # JSON Lines, a JSON array, SSE or a conformance case
//! ```
//!
//! Prints `valid: ...` and the folded conversation (exit 0), or `invalid: event K (TYPE):
//! rule R: ...` naming the first event that breaks a rule (exit 1); 2 when the file cannot
//! be read. For a conformance case file (`{"events": [...], "expect": {...}}`, as in the
//! shared `conformance/cases`), it also prints what the reference client made of it.
//! `agui verify FILE` is the same check as a command.

use aguikit_core::Pipeline;
use aguikit_core::codec::sse::SseDecoder;
use serde_json::Value;

/// A recording as `agui record` writes one: JSON Lines.
const EMBEDDED: &str = r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","role":"assistant","delta":"Let me check"}
{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"get_weather","parentMessageId":"m1"}
{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"city\":\"Paris\"}"}
{"type":"TOOL_CALL_END","toolCallId":"c1"}
{"type":"TOOL_CALL_RESULT","messageId":"m2","toolCallId":"c1","content":"18°C, sunny"}
{"type":"STATE_SNAPSHOT","snapshot":{"city":"Paris"}}
{"type":"STATE_DELTA","delta":[{"op":"add","path":"/celsius","value":18}]}
{"type":"TEXT_MESSAGE_CHUNK","messageId":"m3","role":"assistant","delta":"It is 18°C and sunny."}
{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}
"#;

fn main() {
    let (name, text) = match std::env::args().nth(1) {
        Some(path) => match std::fs::read_to_string(&path) {
            Ok(text) => (path, text),
            Err(e) => {
                eprintln!("cannot read {path}: {e}");
                std::process::exit(2);
            }
        },
        None => ("the embedded recording".to_owned(), EMBEDDED.to_owned()),
    };
    let (events, reference) = match read_events(&text) {
        Ok(read) => read,
        Err(e) => {
            eprintln!("{name}: {e}");
            std::process::exit(2);
        }
    };
    println!("{name}: {} events", events.len());
    if let Some(verdict) = reference {
        println!("the reference client: {verdict}");
    }

    let mut pipeline = Pipeline::new();
    let mut result = Ok(());
    for event in events {
        if let Err(e) = pipeline.push_value(event) {
            result = Err(e);
            break;
        }
    }
    if let Err(e) = result.and_then(|()| pipeline.finish()) {
        println!(
            "invalid: event {} ({}): rule {}: {}",
            e.index,
            e.event_type,
            e.rule(),
            e.kind
        );
        std::process::exit(1);
    }
    let folded = pipeline.applier();
    println!(
        "valid: {} messages, state {}",
        folded.messages().len(),
        folded.state()
    );
    for message in folded.messages() {
        let role = format!("{:?}", message.role()).to_lowercase();
        println!("  {role}: {}", message.text().unwrap_or("(no text)"));
    }
}

/// The events of a recording in any of the formats `agui` reads, and, for a conformance
/// case, the reference's verdict.
fn read_events(text: &str) -> Result<(Vec<Value>, Option<Value>), String> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') {
        let events = serde_json::from_str(trimmed)
            .map_err(|e| format!("not a JSON array of events: {e}"))?;
        return Ok((events, None));
    }
    if trimmed.starts_with('{')
        && let Ok(Value::Object(mut case)) = serde_json::from_str::<Value>(trimmed)
        && let Some(Value::Array(events)) = case.remove("events")
    {
        return Ok((
            events,
            case.get("expect").and_then(|e| e.get("verify")).cloned(),
        ));
    }
    if trimmed.starts_with("data:") || trimmed.starts_with(':') || trimmed.starts_with("id:") {
        let mut decoder = SseDecoder::new();
        decoder.push(text.as_bytes());
        let mut events = Vec::new();
        let mut add = |data: &str| -> Result<(), String> {
            let event = serde_json::from_str(data)
                .map_err(|e| format!("SSE frame {}: {e}", events.len()))?;
            events.push(event);
            Ok(())
        };
        while let Some(frame) = decoder.next_frame().map_err(|e| e.to_string())? {
            add(&frame.data)?;
        }
        if let Some(frame) = decoder.finish().map_err(|e| e.to_string())? {
            add(&frame.data)?;
        }
        return Ok((events, None));
    }
    let mut events = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        events.push(serde_json::from_str(line).map_err(|e| format!("line {}: {e}", i + 1))?);
    }
    Ok((events, None))
}
