//! The conformance corpus (`../shared/conformance/cases`), one named test per case.
//!
//! Each case runs through the library exactly as `agui` runs it and every expectation the
//! reference recorded is compared: the verdict (`ok`, `at`), the folded messages, state and
//! pending interrupts (with `<minted:N>` placeholders where the reference mints ids), chunk
//! expansion, compaction, the SSE bytes frame by frame, and the protobuf bytes.

mod common;

use aguikit_core::Event;
use aguikit_core::codec::{proto, sse};
use aguikit_core::engine::compact::compact;
use aguikit_core::engine::expand::Expander;
use aguikit_core::engine::pipeline::Pipeline;
use common::{cases, json_eq};
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
use std::collections::HashMap;

fn main() {
    let args = Arguments::from_args();
    let trials = cases()
        .into_iter()
        .map(|(name, case)| Trial::test(name, move || run_case(&case)))
        .collect();
    libtest_mimic::run(&args, trials).exit();
}

fn run_case(case: &Value) -> Result<(), Failed> {
    let expect = &case["expect"];
    let events: Vec<Value> = case["events"].as_array().cloned().unwrap_or_default();
    let mut errors = Vec::new();

    // Verification and application.
    let mut p = Pipeline::new();
    for v in &events {
        if p.push_value(v.clone()).is_err() {
            break;
        }
    }
    if p.error().is_none() {
        let _ = p.finish();
    }
    let want_ok = expect["verify"]["ok"].as_bool().unwrap_or(false);
    match (p.error(), want_ok) {
        (None, true) => {}
        (None, false) => errors.push(format!(
            "verify: accepted, but the reference fails at {}",
            expect["verify"]["at"]
        )),
        (Some(e), true) => errors.push(format!("verify: rejected ({e}), the reference accepts")),
        (Some(e), false) => {
            if Some(e.index as u64) != expect["verify"]["at"].as_u64() {
                errors.push(format!(
                    "verify: failed at {} ({e}), the reference at {}",
                    e.index, expect["verify"]["at"]
                ));
            }
        }
    }
    // Without folding, the verdict is the same (`agui verify` runs that way).
    let mut v = Pipeline::new().with_apply(false);
    for e in &events {
        if v.push_json(e.to_string().as_bytes()).is_err() {
            break;
        }
    }
    if v.error().is_none() {
        let _ = v.finish();
    }
    let verdict = |p: &Pipeline| p.error().map(|e| (e.index, e.rule().to_owned()));
    if verdict(&v) != verdict(&p) {
        errors.push(format!(
            "verify without folding: {:?}, with: {:?}",
            verdict(&v),
            verdict(&p)
        ));
    }
    if !v.applier().messages().is_empty() {
        errors.push("verify without folding: messages were folded".into());
    }
    if want_ok && p.error().is_none() {
        let a = p.applier();
        let got = serde_json::json!({
            "messages": serde_json::to_value(a.messages()).unwrap(),
            "state": a.state(),
        });
        if let Some(want) = expect.get("apply") {
            if !json_eq(&got, want) {
                errors.push(format!("apply: got {got}\n   want {want}"));
            }
        } else if let Some(want) = expect.get("applyNormalized")
            && !matches_minted(&got, want, &mut HashMap::new())
        {
            errors.push(format!("applyNormalized: got {got}\n   want {want}"));
        }
        let pending = serde_json::to_value(a.pending_interrupts()).unwrap();
        let want_pending = expect
            .get("pendingInterrupts")
            .cloned()
            .unwrap_or(Value::Array(vec![]));
        if !json_eq(&pending, &want_pending) {
            errors.push(format!(
                "pendingInterrupts: got {pending}, want {want_pending}"
            ));
        }
    }

    let decoded: Result<Vec<Event>, String> = events
        .iter()
        .map(|v| Event::from_value(v.clone()).map_err(|e| e.to_string()))
        .collect();

    // Chunk expansion alone.
    if expect.get("expanded").is_some() || expect.get("expandError").is_some() {
        let result = decoded.clone().and_then(|evs| {
            let mut x = Expander::new();
            let mut out = Vec::new();
            for e in evs {
                x.push(e, &mut out).map_err(|v| v.to_string())?;
            }
            Ok(out)
        });
        check_stage(
            &mut errors,
            ("expanded", "expand"),
            result,
            expect.get("expanded"),
        );
    }

    // Compaction.
    if expect.get("compact").is_some() || expect.get("compactError").is_some() {
        let result = decoded
            .clone()
            .and_then(|evs| compact(&evs).map_err(|v| v.to_string()));
        check_stage(
            &mut errors,
            ("compact", "compact"),
            result,
            expect.get("compact"),
        );
    }

    // SSE bytes, frame by frame.
    if let Some(want) = expect.get("sse").and_then(Value::as_str) {
        match &decoded {
            Err(e) => errors.push(format!("sse: an event did not decode: {e}")),
            Ok(evs) => {
                let mut buf = Vec::new();
                for e in evs {
                    sse::write_frame(&mut buf, &e.to_json_vec());
                }
                let got = sse::SseDecoder::decode_all(&buf).unwrap();
                let want = sse::SseDecoder::decode_all(want.as_bytes()).unwrap();
                let same = got.len() == want.len()
                    && got.iter().zip(&want).all(|(g, w)| {
                        let g: Value = serde_json::from_str(&g.data).unwrap();
                        let w: Value = serde_json::from_str(&w.data).unwrap();
                        json_eq(&g, &w)
                    });
                if !same || !(buf.is_empty() || buf.ends_with(b"\n\n")) {
                    errors.push(format!(
                        "sse: got {}\n   want {want:?}",
                        String::from_utf8_lossy(&buf)
                    ));
                }
            }
        }
    }

    // Protobuf bodies, byte for byte (null where the reference has no protobuf form).
    if let (Some(want), Ok(evs)) = (expect.get("proto").and_then(Value::as_array), &decoded) {
        use base64::Engine as _;
        for (i, (e, w)) in evs.iter().zip(want).enumerate() {
            let got = proto::encode_event(e);
            let want = w
                .as_str()
                .map(|b| base64::engine::general_purpose::STANDARD.decode(b).unwrap());
            if got != want {
                errors.push(format!("proto[{i}]: got {got:?}, want {want:?}"));
            }
        }
    }

    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n").into())
    }
}

/// Structural equality where a `"<minted:N>"` string in `want` stands for one id chosen by
/// the implementation: the same N must be the same string, different N different strings.
fn matches_minted(got: &Value, want: &Value, seen: &mut HashMap<String, String>) -> bool {
    if let (Value::String(g), Value::String(w)) = (got, want)
        && let Some(n) = w.strip_prefix("<minted:").and_then(|r| r.strip_suffix('>'))
    {
        if let Some(prev) = seen.get(n) {
            return prev == g;
        }
        if seen.values().any(|v| v == g) {
            return false;
        }
        seen.insert(n.to_owned(), g.clone());
        return true;
    }
    match (got, want) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| matches_minted(a, b, seen))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| matches_minted(v, w, seen)))
        }
        _ => json_eq(got, want),
    }
}

/// Compares one stage's outcome with the case's expectation: the events `want` names, or,
/// without `want`, a failure (the reference throws). `labels` name the stage in a
/// difference and in an unexpected outcome.
fn check_stage(
    errors: &mut Vec<String>,
    (differs, outcome): (&str, &str),
    result: Result<Vec<Event>, String>,
    want: Option<&Value>,
) {
    match (result, want) {
        (Ok(out), Some(want)) => {
            let got = serde_json::to_value(&out).unwrap();
            if !json_eq(&got, want) {
                errors.push(format!("{differs}: got {got}\n   want {want}"));
            }
        }
        (Ok(_), None) => errors.push(format!("{outcome}: succeeded, the reference throws")),
        (Err(e), Some(_)) => errors.push(format!("{outcome}: failed: {e}")),
        (Err(_), None) => {}
    }
}
