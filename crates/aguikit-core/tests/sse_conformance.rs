//! The SSE bytes the reference encoder produced for every conformance case decode to one
//! frame per event, and our encoder frames them byte for byte the same way.
//!
//! The cases live in the shared folder beside the repository (`../shared` from the
//! workspace root); set `AGUI_SHARED_DIR` to use another.

use std::path::{Path, PathBuf};

use aguikit_core::codec::sse::{SseDecoder, SseFrame, write_frame};
use serde_json::Value;

fn shared_dir() -> PathBuf {
    let dir = match std::env::var_os("AGUI_SHARED_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    };
    assert!(
        dir.join("conformance/cases").is_dir(),
        "conformance cases not found: {} has no conformance/cases folder. Put the shared \
         folder beside the repository or point AGUI_SHARED_DIR at it.",
        dir.display()
    );
    dir
}

fn decode_in_chunks(bytes: &[u8], size: usize) -> Result<Vec<SseFrame>, String> {
    let mut decoder = SseDecoder::new();
    let mut frames = Vec::new();
    for chunk in bytes.chunks(size.max(1)) {
        decoder.push(chunk);
        while let Some(frame) = decoder.next_frame().map_err(|e| e.to_string())? {
            frames.push(frame);
        }
    }
    while let Some(frame) = decoder.finish().map_err(|e| e.to_string())? {
        frames.push(frame);
    }
    Ok(frames)
}

/// Checks one case; `Ok(false)` if it records no SSE bytes.
fn check_case(case: &Value) -> Result<bool, String> {
    let Some(sse) = case.pointer("/expect/sse") else {
        return Ok(false);
    };
    let sse = sse.as_str().ok_or("expect.sse is not a string")?;
    let events = case["events"].as_array().ok_or("events is not an array")?;
    for size in [1, 7, sse.len()] {
        let frames = decode_in_chunks(sse.as_bytes(), size)
            .map_err(|e| format!("chunks of {size}: decoding failed: {e}"))?;
        if frames.len() != events.len() {
            return Err(format!(
                "chunks of {size}: {} frames for {} events",
                frames.len(),
                events.len()
            ));
        }
        let mut reencoded = Vec::new();
        for (i, (frame, event)) in frames.iter().zip(events).enumerate() {
            if frame.event.is_some() || frame.id.is_some() || frame.retry.is_some() {
                return Err(format!("frame {i} has fields other than data: {frame:?}"));
            }
            let value: Value = serde_json::from_str(&frame.data)
                .map_err(|e| format!("frame {i} is not JSON ({e}): {}", frame.data))?;
            let object = value
                .as_object()
                .ok_or_else(|| format!("frame {i} is not a JSON object"))?;
            let frame_type = object.get("type").and_then(Value::as_str);
            if frame_type.is_none() || frame_type != event["type"].as_str() {
                return Err(format!(
                    "frame {i} has type {frame_type:?}, event has {}",
                    event["type"]
                ));
            }
            write_frame(&mut reencoded, frame.data.as_bytes());
        }
        if reencoded != sse.as_bytes() {
            return Err(format!(
                "chunks of {size}: re-encoding the frames does not give the same bytes"
            ));
        }
    }
    Ok(true)
}

#[test]
fn reference_sse_bytes_decode_to_one_frame_per_event() {
    let cases_dir = shared_dir().join("conformance/cases");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&cases_dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", cases_dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();

    let mut checked = 0;
    let mut failures = Vec::new();
    for path in &paths {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let result = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read: {e}"))
            .and_then(|text| serde_json::from_str::<Value>(&text).map_err(|e| e.to_string()))
            .and_then(|case| check_case(&case));
        match result {
            Ok(true) => checked += 1,
            Ok(false) => {}
            Err(message) => failures.push(format!("{name}: {message}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        paths.len(),
        failures.join("\n")
    );
    assert!(
        checked > 0,
        "no case in {} records expect.sse",
        cases_dir.display()
    );
    eprintln!(
        "checked the SSE bytes of {checked} of {} cases",
        paths.len()
    );
}
