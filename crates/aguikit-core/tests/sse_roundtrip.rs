//! Property tests: whatever is encoded decodes back to the same frames, whatever the line
//! endings and however the bytes are split into reads.

use aguikit_core::codec::sse::{SseDecoder, SseEncoder, SseFrame, write_comment, write_frame};
use proptest::prelude::*;

/// Characters that exercise the decoder: field syntax, multi-byte UTF-8 of every length,
/// a BOM character, NUL and other controls (but no line breaks).
fn text_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => prop::char::range('a', 'z'),
        1 => prop::sample::select(vec![':', ' ', '\t', '\0', '"', '{', '}']),
        1 => prop::sample::select(vec!['é', '€', '😀', '\u{FEFF}', '\u{2028}', '\u{10FFFF}']),
    ]
}

fn text(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(text_char(), 0..max).prop_map(|chars| chars.into_iter().collect())
}

fn frame() -> impl Strategy<Value = SseFrame> {
    (
        prop::collection::vec(text(12), 1..4),
        prop::option::of(text(8).prop_filter("an empty event decodes as None", |e| !e.is_empty())),
        prop::option::of(text(8).prop_map(|id| id.replace('\0', ""))),
        prop::option::of(any::<u64>()),
    )
        .prop_map(|(lines, event, id, retry)| SseFrame {
            data: lines.join("\n"),
            event,
            id,
            retry,
        })
}

/// Cuts `bytes` into reads of the given sizes (cycled), so splits fall anywhere: inside
/// UTF-8 characters, between CR and LF, inside the BOM.
fn split<'a>(bytes: &'a [u8], sizes: &[usize]) -> Vec<&'a [u8]> {
    let mut chunks = Vec::new();
    let mut rest = bytes;
    let mut i = 0;
    while !rest.is_empty() {
        let n = sizes[i % sizes.len()].min(rest.len());
        chunks.push(&rest[..n]);
        rest = &rest[n..];
        i += 1;
    }
    chunks
}

fn decode(chunks: &[&[u8]]) -> Vec<SseFrame> {
    let mut decoder = SseDecoder::new();
    let mut frames = Vec::new();
    for chunk in chunks {
        decoder.push(chunk);
        while let Some(frame) = decoder.next_frame().expect("valid stream") {
            frames.push(frame);
        }
    }
    while let Some(frame) = decoder.finish().expect("valid stream") {
        frames.push(frame);
    }
    frames
}

/// Rewrites the LF line endings of `lf_stream` with the chosen endings (0 = LF, 1 = CRLF,
/// 2 = CR, cycled). A bare LF right after a CR would merge with it into one line ending,
/// so after a CR an empty line never gets a bare LF.
fn with_line_endings(lf_stream: &[u8], choices: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(lf_stream.len() * 2);
    let mut prev_cr = false;
    let mut line_start = true;
    let mut i = 0;
    for &byte in lf_stream {
        if byte != b'\n' {
            out.push(byte);
            line_start = false;
            continue;
        }
        let mut choice = choices[i % choices.len()] % 3;
        i += 1;
        if choice == 0 && prev_cr && line_start {
            choice = 1;
        }
        match choice {
            0 => out.push(b'\n'),
            1 => out.extend_from_slice(b"\r\n"),
            _ => out.push(b'\r'),
        }
        prev_cr = choice == 2;
        line_start = true;
    }
    out
}

proptest! {
    #[test]
    fn frames_round_trip(
        frames in prop::collection::vec(frame(), 0..8),
        comments in prop::collection::vec(prop::option::of(text(10)), 8),
        bom in any::<bool>(),
        endings in prop::collection::vec(0u8..3, 1..8),
        sizes in prop::collection::vec(1usize..24, 1..8),
        unterminated_last in any::<bool>(),
    ) {
        let mut lf_stream = Vec::new();
        if bom {
            lf_stream.extend_from_slice("\u{FEFF}".as_bytes());
        }
        for (frame, comment) in frames.iter().zip(comments.iter().cycle()) {
            if let Some(comment) = comment {
                write_comment(&mut lf_stream, comment);
            }
            frame.write_to(&mut lf_stream);
        }
        if unterminated_last && !frames.is_empty() {
            // Drop the final blank line: the last frame is still delivered at the end.
            lf_stream.pop();
        }
        let stream = with_line_endings(&lf_stream, &endings);
        let decoded = decode(&split(&stream, &sizes));
        prop_assert_eq!(decoded, frames);
    }

    #[test]
    fn json_frames_round_trip(
        values in prop::collection::vec(
            (text(16), any::<i64>(), any::<bool>(), prop::option::of(text(6).prop_map(|id| id.replace('\0', "")))),
            0..8,
        ),
        sizes in prop::collection::vec(1usize..40, 1..8),
    ) {
        let mut stream = Vec::new();
        let mut encoder = SseEncoder::new();
        let mut expected = Vec::new();
        for (i, (s, n, b, id)) in values.iter().enumerate() {
            let value = serde_json::json!({"type": "CUSTOM", "name": s, "value": [n, b, "a\nb"]});
            if i % 2 == 0 {
                stream.extend_from_slice(encoder.encode_json(&value, id.as_deref()).unwrap());
            } else {
                write_frame(&mut stream, serde_json::to_string(&value).unwrap().as_bytes());
            }
            expected.push(value);
        }
        let decoded = decode(&split(&stream, &sizes));
        prop_assert_eq!(decoded.len(), expected.len());
        for (frame, value) in decoded.iter().zip(&expected) {
            let parsed: serde_json::Value = serde_json::from_str(&frame.data).unwrap();
            prop_assert_eq!(&parsed, value);
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(
        bytes in prop::collection::vec(any::<u8>(), 0..200),
        sizes in prop::collection::vec(1usize..16, 1..4),
        limit in 1usize..64,
    ) {
        // Every split gives the same outcome as one read.
        let run = |chunks: &[&[u8]]| {
            let mut decoder = SseDecoder::with_max_frame_size(limit);
            let mut frames = Vec::new();
            for chunk in chunks {
                decoder.push(chunk);
                loop {
                    match decoder.next_frame() {
                        Ok(Some(frame)) => frames.push(frame),
                        Ok(None) => break,
                        Err(err) => return (frames, Some(err)),
                    }
                }
            }
            loop {
                match decoder.finish() {
                    Ok(Some(frame)) => frames.push(frame),
                    Ok(None) => return (frames, None),
                    Err(err) => return (frames, Some(err)),
                }
            }
        };
        let whole = run(&[&bytes]);
        let (split_frames, split_err) = run(&split(&bytes, &sizes));
        prop_assert_eq!(&split_frames, &whole.0);
        // The error kind is the same; an over-long line may be caught earlier when split.
        prop_assert_eq!(
            split_err.map(|e| std::mem::discriminant(&e)),
            whole.1.map(|e| std::mem::discriminant(&e))
        );
    }
}
