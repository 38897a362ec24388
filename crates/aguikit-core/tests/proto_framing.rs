//! Length-prefixed protobuf stream framing: `write_frame` and the incremental
//! `ProtoFrameDecoder` (split at every position, chunk sizes, limits, truncation, skipping
//! later-protocol frames, sticky errors).
#![cfg(feature = "proto")]

mod common;

use aguikit_core::Event;
use aguikit_core::codec::proto::{
    DEFAULT_MAX_FRAME_SIZE, MEDIA_TYPE, ProtoError, ProtoFrameDecoder, write_frame,
};
use aguikit_core::event::{
    Custom, RunFinished, RunStarted, StateSnapshot, TextMessageContent, TextMessageEnd,
    TextMessageStart,
};
use aguikit_core::warning;
use serde_json::json;

fn sample() -> Vec<Event> {
    vec![
        RunStarted::new("thread-1", "run-1").into(),
        TextMessageStart::new("m1").into(),
        TextMessageContent::new("m1", "Hello, wörld").into(),
        TextMessageContent::new("m1", "x".repeat(300)).into(),
        TextMessageEnd::new("m1").with_timestamp(-1).into(),
        StateSnapshot {
            snapshot: json!({"b": [1, 2.5, null, true], "1": {"z": "y"}}),
            ..Default::default()
        }
        .into(),
        Custom {
            name: "c".into(),
            value: json!(null),
            ..Default::default()
        }
        .into(),
        RunFinished::new("thread-1", "run-1").into(),
    ]
}

fn stream_of(events: &[Event]) -> Vec<u8> {
    let mut out = Vec::new();
    for e in events {
        write_frame(&mut out, e).unwrap();
    }
    out
}

/// Feeds `chunks` and drains after each; returns the events and the end-of-stream result.
fn read<'a>(
    decoder: &mut ProtoFrameDecoder,
    chunks: impl IntoIterator<Item = &'a [u8]>,
) -> (Vec<Event>, Result<(), ProtoError>) {
    let mut events = Vec::new();
    for chunk in chunks {
        decoder.push(chunk);
        loop {
            match decoder.next_event() {
                Ok(Some(e)) => events.push(e),
                Ok(None) => break,
                Err(e) => return (events, Err(e)),
            }
        }
    }
    let end = decoder.finish();
    (events, end)
}

#[test]
fn media_type_and_limit() {
    assert_eq!(MEDIA_TYPE, "application/vnd.ag-ui.event+proto");
    assert_eq!(DEFAULT_MAX_FRAME_SIZE, 16 * 1024 * 1024);
    assert_eq!(
        ProtoFrameDecoder::new().max_frame_size(),
        DEFAULT_MAX_FRAME_SIZE
    );
}

#[test]
fn spec_frame_example() {
    let mut out = Vec::new();
    write_frame(&mut out, &TextMessageEnd::new("msg-1").into()).unwrap();
    assert_eq!(
        out,
        [
            0, 0, 0, 0x0d, 0x1a, 0x0b, 0x0a, 0x02, 0x08, 0x02, 0x12, 0x05, b'm', b's', b'g', b'-',
            b'1'
        ]
    );
}

#[test]
fn split_at_every_position() {
    let events = sample();
    let stream = stream_of(&events);
    for at in 0..=stream.len() {
        let mut d = ProtoFrameDecoder::new();
        let (got, end) = read(&mut d, [&stream[..at], &stream[at..]]);
        assert_eq!(got, events, "split at {at}");
        end.unwrap();
    }
}

#[test]
fn every_small_chunk_size() {
    let events = sample();
    let stream = stream_of(&events);
    for size in 1..=17 {
        let mut d = ProtoFrameDecoder::new();
        let (got, end) = read(&mut d, stream.chunks(size));
        assert_eq!(got, events, "chunks of {size}");
        end.unwrap();
    }
}

#[test]
fn whole_corpus_byte_by_byte() {
    let mut events = Vec::new();
    for (_, case) in common::cases() {
        if case["expect"].get("proto").is_none() {
            continue;
        }
        for raw in case["events"].as_array().unwrap() {
            let e = Event::from_value(raw.clone()).unwrap();
            if !matches!(e, Event::Unknown(_)) {
                events.push(e);
            }
        }
    }
    let stream = stream_of(&events);
    let mut d = ProtoFrameDecoder::new();
    let (got, end) = read(&mut d, stream.chunks(1));
    end.unwrap();
    assert_eq!(got.len(), events.len());
    for (a, b) in got.iter().zip(&events) {
        // Decoding normalises a few things (RUN_STARTED input arrays, stray patch members);
        // a second encode must be stable.
        let mut x = Vec::new();
        let mut y = Vec::new();
        write_frame(&mut x, a).unwrap();
        write_frame(&mut y, b).unwrap();
        if a != b {
            assert!(
                matches!(a.type_str(), "RUN_STARTED" | "STATE_DELTA"),
                "{a:?} != {b:?}"
            );
        }
        assert_eq!(x, y);
    }
}

#[test]
fn large_frame_in_one_byte_chunks_is_linear() {
    // A 4 MiB body pushed one byte at a time, then a small frame: if buffering were
    // quadratic this would take minutes.
    let big: Event = TextMessageContent::new("m", "y".repeat(4 << 20)).into();
    let events = vec![big, TextMessageEnd::new("m").into()];
    let stream = stream_of(&events);
    let started = std::time::Instant::now();
    let mut d = ProtoFrameDecoder::new();
    let (got, end) = read(&mut d, stream.chunks(1));
    end.unwrap();
    assert_eq!(got, events);
    assert!(
        started.elapsed().as_secs() < 30,
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn oversized_frame_fails_before_its_body() {
    let mut d = ProtoFrameDecoder::with_max_frame_size(10);
    let mut stream = Vec::new();
    write_frame(
        &mut stream,
        &TextMessageContent::new("m", "0123456789").into(),
    )
    .unwrap();
    // Only the header is there: the error comes at once.
    d.push(&stream[..4]);
    let err = d.next_event().unwrap_err();
    assert!(
        matches!(err, ProtoError::FrameTooLarge { len, max: 10 } if len as usize == stream.len() - 4),
        "{err:?}"
    );
    assert!(err.to_string().contains("exceeds the limit"));
    // Errors are final.
    d.push(&stream[4..]);
    assert_eq!(d.next_event().unwrap_err(), err);
    assert_eq!(d.finish().unwrap_err(), err);

    // The default limit: a header announcing 16 MiB + 1.
    let mut d = ProtoFrameDecoder::new();
    d.push(&((DEFAULT_MAX_FRAME_SIZE as u32) + 1).to_be_bytes());
    assert!(matches!(
        d.next_frame(),
        Err(ProtoError::FrameTooLarge { .. })
    ));
    // Exactly at the limit is fine (waits for the body).
    let mut d = ProtoFrameDecoder::new();
    d.push(&(DEFAULT_MAX_FRAME_SIZE as u32).to_be_bytes());
    assert_eq!(d.next_frame(), Ok(None));
}

#[test]
fn truncated_stream_fails_at_the_end() {
    let events = sample();
    let stream = stream_of(&events);
    for cut in [1, 2, 3, 4, 5, 20] {
        let mut d = ProtoFrameDecoder::new();
        let (got, end) = read(&mut d, [&stream[..stream.len() - cut]]);
        assert_eq!(got.len(), events.len() - 1, "cut {cut}");
        let err = end.unwrap_err();
        assert!(
            matches!(err, ProtoError::TruncatedFrame { trailing } if trailing > 0),
            "{err:?}"
        );
        assert!(err.to_string().contains("ended mid-frame"));
    }
    // Fewer than four bytes of a header.
    let mut d = ProtoFrameDecoder::new();
    let (_, end) = read(&mut d, [&[0u8, 0][..]]);
    assert_eq!(end, Err(ProtoError::TruncatedFrame { trailing: 2 }));
    // An empty stream is fine.
    assert_eq!(ProtoFrameDecoder::new().finish(), Ok(()));
}

#[test]
fn empty_and_broken_frames_are_fatal() {
    let mut stream = vec![0, 0, 0, 0];
    write_frame(&mut stream, &TextMessageEnd::new("m").into()).unwrap();
    let mut d = ProtoFrameDecoder::new();
    let (got, end) = read(&mut d, [&stream[..]]);
    assert!(got.is_empty());
    assert!(matches!(end, Err(ProtoError::Malformed { .. })));
    // next_frame hands the raw (empty) body over without judging it.
    let mut d = ProtoFrameDecoder::new();
    d.push(&stream);
    assert_eq!(d.next_frame(), Ok(Some(Vec::new())));
    assert!(d.next_frame().unwrap().is_some());
    assert_eq!(d.next_frame(), Ok(None));
    d.finish().unwrap();

    let mut stream = vec![0, 0, 0, 2, 0xff, 0xff];
    write_frame(&mut stream, &TextMessageEnd::new("m").into()).unwrap();
    let mut d = ProtoFrameDecoder::new();
    let (got, end) = read(&mut d, [&stream[..]]);
    assert!(got.is_empty());
    assert!(matches!(end, Err(ProtoError::Malformed { .. })));
}

#[test]
fn later_protocol_frames_are_skipped_with_a_warning() {
    // Envelope field 40 holding a message: an event kind of a later protocol.
    let future = [0xc2, 0x02, 0x03, 0x0a, 0x01, b'x'];
    let mut stream = (future.len() as u32).to_be_bytes().to_vec();
    stream.extend(future);
    write_frame(&mut stream, &TextMessageEnd::new("m").into()).unwrap();
    let ((got, end), warnings) = warning::collect(|| {
        let mut d = ProtoFrameDecoder::new();
        read(&mut d, [&stream[..]])
    });
    end.unwrap();
    assert_eq!(got, vec![Event::from(TextMessageEnd::new("m"))]);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
}

#[test]
fn events_without_protobuf_form_write_nothing() {
    let thinking = Event::from_json_str(r#"{"type":"THINKING_START"}"#).unwrap();
    let mut out = vec![1, 2, 3];
    let err = write_frame(&mut out, &thinking).unwrap_err();
    assert_eq!(
        err,
        ProtoError::NoProtobufForm {
            event_type: "THINKING_START".into()
        }
    );
    assert_eq!(out, [1, 2, 3]);
}
