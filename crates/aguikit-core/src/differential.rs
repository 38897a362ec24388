//! Differential checks of the hand-written fast paths against what they stand in for: the
//! fast JSON reader against the serde path, the events' own JSON writer against
//! `serde_json::to_vec`, and the protobuf form against the JSON form.
//!
//! Each check takes arbitrary bytes and panics, naming what disagreed, when the two sides
//! differ. They are the bodies of the fuzz targets `json_reader`, `json_writer` and
//! `proto_json` (`fuzz/`, where cargo-fuzz compiles this module with `--cfg fuzzing`), and
//! the unit tests below replay on stable, in `cargo test`, the committed seeds
//! (`fuzz/seeds/<target>/`) and every event of the conformance corpus in several layouts.
//! This module is not part of the API: it exists only under `cfg(test)` or `cfg(fuzzing)`.

use crate::Event;
use crate::event::{decode_serde, fast_decode};
use crate::warning;

/// The fast reader and the serde path agree on `bytes`: the public entry points give what
/// the serde path gives (the same event or the same error), and when the fast path takes
/// the text it gives exactly that event, with no warning from serde (the fast path must not
/// take what serde would warn about); the parts of a content event
/// ([`Event::content_parts`]), when they answer, are that event. Returns whether the fast
/// path took the text.
pub fn json_reader(bytes: &[u8]) -> bool {
    let (slow, warnings) = warning::collect(|| decode_serde(bytes, None));
    assert_eq!(
        Event::from_json_slice(bytes),
        slow,
        "from_json_slice disagrees with the serde path on {}",
        show(bytes)
    );
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    assert_eq!(
        Event::from_json_str(text),
        slow,
        "from_json_str disagrees with the serde path on {}",
        show(bytes)
    );
    // The parts of a content event, when they answer, are the event the entry points give.
    if let Some(parts) = Event::content_parts(text) {
        assert_eq!(
            Ok(parts.into_event()),
            slow,
            "content_parts disagrees with the serde path on {}",
            show(bytes)
        );
    }
    let Some(fast) = fast_decode(text) else {
        return false;
    };
    assert_eq!(
        slow.as_ref(),
        Ok(&fast),
        "the fast reader disagrees with serde on {}",
        show(bytes)
    );
    assert!(
        warnings.is_empty(),
        "the fast reader took {} although serde warns {warnings:?}",
        show(bytes)
    );
    true
}

/// The events' own writer writes the bytes `serde_json::to_vec` writes for every event the
/// reader accepts from `bytes`, and those bytes read back as the same event.
pub fn json_writer(bytes: &[u8]) {
    let Ok(event) = Event::from_json_slice(bytes) else {
        return;
    };
    let own = event.to_json_vec();
    let serde = match serde_json::to_vec(&event) {
        Ok(v) => v,
        Err(e) => panic!("serde_json cannot write {event:?}: {e}"),
    };
    assert!(
        own == serde,
        "the own writer differs from serde_json\n own:   {}\n serde: {}",
        show(&own),
        show(&serde)
    );
    match Event::from_json_slice(&own) {
        Ok(again) => assert_eq!(again, event, "JSON round trip of {}", show(&own)),
        Err(e) => panic!("the written JSON does not read back: {e}\n{}", show(&own)),
    }
}

/// The protobuf form carries what the JSON form does, for every event the JSON reader
/// accepts from `bytes`: its protobuf body decodes; that decoded event (in the shape the
/// reference's own round trip gives) encodes to the same body; and its JSON reads back as
/// itself, so both forms agree on it.
#[cfg(feature = "proto")]
pub fn proto_json(bytes: &[u8]) {
    use crate::codec::proto::{decode_event, encode_event};
    let Ok(event) = Event::from_json_slice(bytes) else {
        return;
    };
    // `None`: an event with no protobuf form (an unknown type, kept as is).
    let Some(body) = encode_event(&event) else {
        assert!(
            matches!(event, Event::Unknown(_)),
            "no protobuf form for {}",
            show(bytes)
        );
        return;
    };
    let decoded = match decode_event(&body) {
        Ok(Some(e)) => e,
        Ok(None) => panic!("the protobuf body of {} names no known event", show(bytes)),
        Err(e) => panic!("the protobuf body of {} does not decode: {e}", show(bytes)),
    };
    assert_eq!(
        encode_event(&decoded).as_deref(),
        Some(&body[..]),
        "the protobuf round trip of {} is not a fixed point: {decoded:?}",
        show(bytes)
    );
    let json = decoded.to_json_vec();
    match Event::from_json_slice(&json) {
        Ok(again) => assert_eq!(
            again,
            decoded,
            "JSON of the protobuf-decoded event {} reads back differently",
            show(&json)
        ),
        Err(e) => panic!(
            "JSON of the protobuf-decoded event does not read: {e}\n{}",
            show(&json)
        ),
    }
}

/// The bytes for a message: as text when they are UTF-8 (cut at 2,000 characters).
fn show(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    match text.char_indices().nth(2000) {
        Some((i, _)) => format!("{}… ({} bytes)", &text[..i], bytes.len()),
        None => text.into_owned(),
    }
}

#[cfg(test)]
mod tests {
    //! The CI smoke of the differential fuzz targets: their seeds and the conformance
    //! corpus, through the same checks the fuzzer runs.
    use super::*;
    use serde_json::{Map, Value};
    use std::path::{Path, PathBuf};

    fn repo() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    /// The committed seeds of one target (what once disagreed, or nearly).
    fn seeds(target: &str) -> Vec<(String, Vec<u8>)> {
        let dir = repo().join("fuzz/seeds").join(target);
        let mut out: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .map(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read(&p).unwrap())
            })
            .collect();
        out.sort();
        assert!(out.len() >= 10, "the seeds of {target} are missing");
        out
    }

    /// Every event of the conformance corpus, as the corpus writes it (compact), with
    /// whitespace, and with its members in reverse order.
    fn corpus() -> Vec<Vec<u8>> {
        let shared = std::env::var_os("AGUI_SHARED_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| repo().join("../shared"));
        let dir = shared.join("conformance/cases");
        let mut out = Vec::new();
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| {
            panic!(
                "the conformance corpus at {}: {e} (set AGUI_SHARED_DIR)",
                dir.display()
            )
        });
        for entry in entries {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|x| x != "json") {
                continue;
            }
            let case: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            for event in case["events"].as_array().into_iter().flatten() {
                out.push(serde_json::to_vec(event).unwrap());
                out.push(serde_json::to_vec_pretty(event).unwrap());
                if let Value::Object(members) = event {
                    let reversed: Map<String, Value> = members
                        .iter()
                        .rev()
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    out.push(serde_json::to_vec(&Value::Object(reversed)).unwrap());
                }
            }
        }
        assert!(out.len() >= 10_000, "the conformance corpus is incomplete");
        out
    }

    fn replay<T>(target: &str, check: fn(&[u8]) -> T) {
        for (name, bytes) in seeds(target) {
            if let Err(panic) = std::panic::catch_unwind(|| check(&bytes)) {
                let what = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default();
                panic!("seed {target}/{name}: {what}");
            }
        }
        for bytes in corpus() {
            check(&bytes);
        }
    }

    #[test]
    fn the_fast_reader_agrees_with_serde_on_the_seeds_and_the_corpus() {
        replay("json_reader", json_reader);
    }

    #[test]
    fn the_own_writer_agrees_with_serde_json_on_the_seeds_and_the_corpus() {
        replay("json_writer", json_writer);
    }

    #[cfg(feature = "proto")]
    #[test]
    fn protobuf_agrees_with_json_on_the_seeds_and_the_corpus() {
        replay("proto_json", proto_json);
    }
}
