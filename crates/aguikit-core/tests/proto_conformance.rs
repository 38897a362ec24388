//! The protobuf codec against the conformance corpus: every event the reference encoded
//! (`expect.proto[i]` not null) encodes to exactly the reference's bytes, and those bytes
//! decode to the event, or to what the reference's own decode returned for it
//! (`expect.protoRoundTrip`). Events the reference has no protobuf form for encode to
//! nothing.
#![cfg(feature = "proto")]

mod common;

use aguikit_core::Event;
use aguikit_core::codec::proto::{decode_event, encode_event};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use common::{cases, json_eq};
use serde_json::Value;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// What decoding event `i` of `case` must give back (as wire JSON).
fn expected_decode<'a>(case: &'a Value, i: usize, raw: &'a Value) -> &'a Value {
    case["expect"]["protoRoundTrip"]
        .as_array()
        .and_then(|list| {
            list.iter()
                .find(|e| e["index"].as_u64() == Some(i as u64))
                .map(|e| &e["decoded"])
        })
        .unwrap_or(raw)
}

#[test]
fn corpus_encodes_byte_exact_and_decodes_back() {
    let mut encoded = 0;
    let mut decoded = 0;
    let mut via_round_trip = 0;
    let mut no_form = 0;
    let mut failures = Vec::new();
    for (name, case) in cases() {
        let Some(protos) = case["expect"].get("proto").and_then(Value::as_array) else {
            continue;
        };
        let events = case["events"].as_array().unwrap();
        assert_eq!(
            protos.len(),
            events.len(),
            "{name}: one proto entry per event"
        );
        for (i, (raw, expect)) in events.iter().zip(protos).enumerate() {
            let event = match Event::from_value(raw.clone()) {
                Ok(e) => e,
                Err(e) => {
                    failures.push(format!("{name}[{i}]: JSON decode failed: {e}"));
                    continue;
                }
            };
            let Some(b64) = expect.as_str() else {
                if encode_event(&event).is_some() {
                    failures.push(format!(
                        "{name}[{i}]: encoded an event with no protobuf form"
                    ));
                } else {
                    no_form += 1;
                }
                continue;
            };
            let want = B64.decode(b64).unwrap();
            match encode_event(&event) {
                Some(got) if got == want => encoded += 1,
                Some(got) => failures.push(format!(
                    "{name}[{i}] {}: encoded\n  got  {}\n  want {}",
                    event.type_str(),
                    hex(&got),
                    hex(&want)
                )),
                None => failures.push(format!("{name}[{i}]: no protobuf form")),
            }
            let target = expected_decode(&case, i, raw);
            match decode_event(&want) {
                Ok(Some(back)) => {
                    let json = serde_json::to_value(&back).unwrap();
                    if json_eq(&json, target) {
                        decoded += 1;
                        if !std::ptr::eq(target, raw) {
                            via_round_trip += 1;
                        }
                    } else {
                        failures.push(format!(
                            "{name}[{i}]: decoded\n  got  {json}\n  want {target}"
                        ));
                    }
                }
                Ok(None) => {
                    failures.push(format!("{name}[{i}]: decoded as a later-protocol event"))
                }
                Err(e) => failures.push(format!("{name}[{i}]: decode failed: {e}")),
            }
        }
    }
    println!(
        "{encoded} byte-exact encodes, {decoded} decodes ({via_round_trip} to the reference's \
         protoRoundTrip value), {no_form} events without a protobuf form"
    );
    common::assert_no_failures(&failures);
    assert!(encoded > 6000, "only {encoded} events encoded");
}

/// The test vectors of the encoding specification (section 6) that are not in the corpus.
#[test]
fn spec_single_vectors() {
    for (json, hex_body) in [
        (
            r#"{"type":"STATE_SNAPSHOT","snapshot":null}"#,
            "3a080a02080612020800",
        ),
        (
            r#"{"type":"TOOL_CALL_RESULT","messageId":"m","toolCallId":"c","content":[]}"#,
            "b2010a0a0208151a016d220163",
        ),
        (
            r#"{"type":"TOOL_CALL_RESULT","messageId":"m","toolCallId":"c","content":""}"#,
            "b2010c0a0208151a016d2201632a00",
        ),
        (
            r#"{"type":"ACTIVITY_SNAPSHOT","messageId":"m","activityType":"plan","content":{}}"#,
            "ba010f0a0208161a016d2204706c616e2a00",
        ),
        (
            r#"{"type":"TEXT_MESSAGE_END","messageId":"m","timestamp":-1}"#,
            "1a120a0d080210ffffffffffffffffff0112016d",
        ),
    ] {
        let event = Event::from_json_str(json).unwrap();
        let body = encode_event(&event).unwrap();
        assert_eq!(hex(&body), hex_body, "{json}");
        let back = decode_event(&body).unwrap().unwrap();
        assert!(
            json_eq(
                &serde_json::to_value(&back).unwrap(),
                &serde_json::from_str(json).unwrap()
            ),
            "{json}"
        );
    }
}
