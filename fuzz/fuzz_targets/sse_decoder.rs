//! Feeds arbitrary bytes to `SseDecoder` in chunks whose sizes come from the input's first
//! bytes, and checks that it never panics, that what it returns is well formed, that its
//! errors are sticky, and that the chunking does not change the outcome.
#![no_main]

use aguikit_core::codec::sse::{SseDecoder, SseError, SseFrame};
use libfuzzer_sys::fuzz_target;

/// Decodes `body` pushed in chunks of the given sizes (cycled; 0 means "push nothing, then
/// drain", which exercises draining an empty push). Returns the frames and the final error.
fn run(body: &[u8], sizes: &[u8], max: usize) -> (Vec<SseFrame>, Option<SseError>) {
    let mut decoder = SseDecoder::with_max_frame_size(max);
    let mut frames = Vec::new();
    let mut rest = body;
    let mut i = 0usize;
    let mut error: Option<SseError> = None;
    let record = |r: Result<Option<SseFrame>, SseError>,
                  frames: &mut Vec<SseFrame>,
                  error: &mut Option<SseError>|
     -> bool {
        match r {
            Ok(Some(f)) => {
                assert!(error.is_none(), "frame returned after an error");
                frames.push(f);
                true
            }
            Ok(None) => {
                assert!(error.is_none(), "Ok(None) returned after an error");
                false
            }
            Err(e) => {
                if let Some(prev) = error.as_ref() {
                    assert_eq!(prev, &e, "error is not sticky");
                }
                *error = Some(e);
                false
            }
        }
    };
    while !rest.is_empty() {
        let n = if sizes.is_empty() {
            rest.len()
        } else {
            sizes[i % sizes.len()] as usize
        };
        i += 1;
        if n == 0 {
            decoder.push(&[]);
            while record(decoder.next_frame(), &mut frames, &mut error) {}
        }
        let n = n.clamp(1, rest.len());
        decoder.push(&rest[..n]);
        rest = &rest[n..];
        while record(decoder.next_frame(), &mut frames, &mut error) {}
        if error.is_some() {
            // Once failed, every later call repeats the same error, pushes included.
            decoder.push(rest);
            record(decoder.next_frame(), &mut frames, &mut error);
            record(decoder.finish(), &mut frames, &mut error);
            return (frames, error);
        }
    }
    while record(decoder.finish(), &mut frames, &mut error) {}
    if error.is_some() {
        record(decoder.next_frame(), &mut frames, &mut error);
        record(decoder.finish(), &mut frames, &mut error);
    } else {
        // Finished and drained: stays drained.
        assert_eq!(decoder.finish(), Ok(None));
        assert_eq!(decoder.next_frame(), Ok(None));
    }
    (frames, error)
}

fn check_frame(f: &SseFrame, max: usize) {
    // `String` guarantees UTF-8; check it again on the bytes in case of unsafe tricks.
    assert!(std::str::from_utf8(f.data.as_bytes()).is_ok());
    // Line terminators never leak into values; only `\n` joins data lines.
    assert!(!f.data.contains('\r'));
    assert!(f.data.len() <= max, "frame data over the limit");
    for v in [&f.event, &f.id].into_iter().flatten() {
        assert!(!v.contains('\r') && !v.contains('\n'));
    }
    if let Some(id) = &f.id {
        assert!(!id.contains('\0'));
    }
    if let Some(e) = &f.event {
        assert!(!e.is_empty());
    }
}

fuzz_target!(|input: &[u8]| {
    // Header: byte 0 = number of chunk-size bytes that follow (mod 8), byte 1 picks a
    // frame-size limit; the rest is the body.
    let Some((&k, rest)) = input.split_first() else {
        return;
    };
    let k = (k % 8) as usize;
    if rest.len() < k + 1 {
        return;
    }
    let (sizes, rest) = rest.split_at(k);
    let (&m, body) = rest.split_first().unwrap();
    let max = match m % 4 {
        0 => aguikit_core::codec::sse::DEFAULT_MAX_FRAME_SIZE,
        1 => 1 + (m as usize),
        2 => 16,
        _ => 0,
    };

    let (frames, error) = run(body, sizes, max);
    for f in &frames {
        check_frame(f, max);
    }
    // Chunking must not change the outcome (frames and error), except that a frame-size
    // error is detected at the same stream offset either way.
    let (frames1, error1) = run(body, &[], max);
    assert_eq!(error, error1, "chunking changed the error");
    if error.is_none() {
        assert_eq!(frames, frames1, "chunking changed the frames");
    } else {
        // Frames returned before the error are a prefix of the whole-input run's frames.
        let n = frames.len().min(frames1.len());
        assert_eq!(frames[..n], frames1[..n]);
    }
});
