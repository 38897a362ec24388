//! Every event of every conformance case that the reference recorded as well-formed (the
//! cases with an `sse` expectation) decodes into a typed event, re-encodes to structurally
//! equal JSON, and survives a second round trip unchanged.

mod common;

use aguikit_core::Event;
use common::{cases, json_eq};

#[test]
fn well_formed_events_round_trip() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for (name, case) in cases() {
        if case["expect"].get("sse").is_none() {
            continue;
        }
        for (i, raw) in case["events"].as_array().unwrap().iter().enumerate() {
            let text = serde_json::to_string(raw).unwrap();
            let event = match Event::from_json_str(&text) {
                Ok(e) => e,
                Err(e) => {
                    failures.push(format!("{name}[{i}]: decode failed: {e}"));
                    continue;
                }
            };
            let back: serde_json::Value = serde_json::from_slice(&event.to_json_vec()).unwrap();
            if !json_eq(&back, raw) {
                failures.push(format!("{name}[{i}]: re-encoded as {back}, expected {raw}"));
                continue;
            }
            let again = Event::from_json_slice(&event.to_json_vec()).unwrap();
            if again != event {
                failures.push(format!("{name}[{i}]: second round trip differs"));
            }
            checked += 1;
        }
    }
    common::assert_no_failures(&failures);
    assert!(checked > 500, "only {checked} events checked");
    println!("{checked} well-formed events round-tripped");
}

/// The events' own JSON writer ([`Event::write_json`], behind `to_json_vec` and the SSE
/// encoder) writes, for every event of every case that decodes (well-formed or not, known
/// type or not), the bytes serde_json's derived serialization writes.
#[test]
fn the_events_own_writer_writes_serde_jsons_bytes() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for (name, case) in cases() {
        for (i, raw) in case["events"].as_array().unwrap().iter().enumerate() {
            let Ok(event) = Event::from_json_str(&serde_json::to_string(raw).unwrap()) else {
                continue;
            };
            let mut own = Vec::new();
            event.write_json(&mut own);
            let serde = serde_json::to_vec(&event).unwrap();
            if own != serde {
                failures.push(format!(
                    "{name}[{i}]: wrote {} where serde_json writes {}",
                    String::from_utf8_lossy(&own),
                    String::from_utf8_lossy(&serde)
                ));
            }
            checked += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked > 1000, "only {checked} events checked");
}

/// `Event` stays small: every event is moved several times on its way (decoder, pipeline,
/// sink, store), and the rare base fields (`rawEvent`, `metadata`) are boxed for that reason
/// (see `event/macros.rs`). A variant that grows it past this fails here, not silently.
#[cfg(target_pointer_width = "64")]
#[test]
fn an_event_is_208_bytes() {
    assert_eq!(std::mem::size_of::<aguikit_core::Event>(), 208);
}
