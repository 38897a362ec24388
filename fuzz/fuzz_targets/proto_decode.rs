//! `decode_event` on arbitrary bytes, and `ProtoFrameDecoder` fed the same bytes in chunks.
//! Every decoded event must survive `encode_event` → `decode_event` unchanged: a decoded
//! event is already in the shape the reference's own round trip gives (e.g. `RUN_STARTED`
//! input with `tools`/`context`/`resume` present), so the round trip from there is lossless.
#![no_main]

use aguikit_core::Event;
use aguikit_core::codec::proto::{ProtoFrameDecoder, decode_event, encode_event};
use libfuzzer_sys::fuzz_target;

fn roundtrip(event: &Event) {
    let body = encode_event(event).expect("a decoded event has a protobuf form");
    let again = decode_event(&body)
        .unwrap_or_else(|e| panic!("re-encoded event does not decode: {e}\nevent: {event:?}"));
    assert_eq!(
        again.as_ref(),
        Some(event),
        "protobuf round trip changed the event"
    );
    // The JSON form of a protobuf-decoded event must decode too.
    let json = event.to_json_vec();
    let from_json = Event::from_json_slice(&json).unwrap_or_else(|e| {
        panic!(
            "JSON of a decoded event does not decode: {e}\n{}",
            String::from_utf8_lossy(&json)
        )
    });
    assert_eq!(
        &from_json, event,
        "JSON round trip changed a protobuf-decoded event"
    );
}

fuzz_target!(|input: &[u8]| {
    if let Ok(Some(event)) = decode_event(input) {
        roundtrip(&event);
    }

    // Stream framing: byte 0 picks the chunk size, the rest is the stream.
    let Some((&c, stream)) = input.split_first() else {
        return;
    };
    let chunk = (c as usize % 17) + 1;
    let mut decoder = ProtoFrameDecoder::with_max_frame_size(1 << 16);
    let mut failed = None;
    'outer: for piece in stream.chunks(chunk) {
        decoder.push(piece);
        loop {
            match decoder.next_event() {
                Ok(Some(event)) => roundtrip(&event),
                Ok(None) => break,
                Err(e) => {
                    failed = Some(e);
                    break 'outer;
                }
            }
        }
    }
    if let Some(e) = failed {
        // Errors are final.
        assert_eq!(decoder.next_event().err(), Some(e.clone()));
        assert_eq!(decoder.finish().err(), Some(e));
    } else {
        let _ = decoder.finish();
    }
});
