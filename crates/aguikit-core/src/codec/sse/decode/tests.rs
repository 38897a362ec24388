use super::*;

/// Feeds `chunks` one by one, draining after each, then finishes.
fn decode_chunks(decoder: &mut SseDecoder, chunks: &[&[u8]]) -> Result<Vec<SseFrame>, SseError> {
    let mut frames = Vec::new();
    for chunk in chunks {
        decoder.push(chunk);
        while let Some(frame) = decoder.next_frame()? {
            frames.push(frame);
        }
    }
    while let Some(frame) = decoder.finish()? {
        frames.push(frame);
    }
    Ok(frames)
}

/// As `decode_chunks`, through the borrowing API.
fn decode_chunks_ref(
    decoder: &mut SseDecoder,
    chunks: &[&[u8]],
) -> Result<Vec<SseFrame>, SseError> {
    let mut frames = Vec::new();
    for chunk in chunks {
        decoder.push(chunk);
        while let Some(frame) = decoder.next_frame_ref()? {
            frames.push(frame.to_frame());
        }
    }
    while let Some(frame) = decoder.finish_ref()? {
        frames.push(frame.into());
    }
    Ok(frames)
}

/// Decodes `input` in chunks of `size` bytes, with both APIs, and checks they agree.
fn decode_sized(input: &[u8], size: usize) -> Result<Vec<SseFrame>, SseError> {
    let chunks: Vec<&[u8]> = input.chunks(size.max(1)).collect();
    let owned = decode_chunks(&mut SseDecoder::new(), &chunks);
    let lent = decode_chunks_ref(&mut SseDecoder::new(), &chunks);
    assert_eq!(owned, lent, "next_frame and next_frame_ref disagree");
    owned
}

/// Decodes `input` whole, in 1-byte chunks and in 3-byte chunks, checks all agree, and
/// returns the frames' data.
fn data(input: &[u8]) -> Vec<String> {
    let whole = SseDecoder::decode_all(input).unwrap();
    assert_eq!(decode_sized(input, 1).unwrap(), whole, "1-byte chunks");
    assert_eq!(decode_sized(input, 3).unwrap(), whole, "3-byte chunks");
    whole.into_iter().map(|f| f.data).collect()
}

fn err(input: &[u8]) -> SseError {
    let whole = SseDecoder::decode_all(input).unwrap_err();
    assert_eq!(decode_sized(input, 1).unwrap_err(), whole, "1-byte chunks");
    whole
}

/// Asserts that each input fails as invalid UTF-8 at its offset.
fn assert_invalid_utf8(cases: &[(&[u8], u64)]) {
    for &(input, offset) in cases {
        assert_eq!(err(input), SseError::InvalidUtf8 { offset }, "{input:?}");
    }
}

#[test]
fn lf_line_endings() {
    assert_eq!(data(b"data: a\n\ndata: b\n\n"), ["a", "b"]);
}

#[test]
fn crlf_line_endings() {
    assert_eq!(data(b"data: a\r\n\r\ndata: b\r\n\r\n"), ["a", "b"]);
}

#[test]
fn cr_line_endings() {
    assert_eq!(data(b"data: a\r\rdata: b\r\r"), ["a", "b"]);
}

#[test]
fn mixed_line_endings() {
    assert_eq!(
        data(b"data: a\rdata: b\r\ndata: c\n\r\ndata: d\n\r"),
        ["a\nb\nc", "d"]
    );
}

#[test]
fn cr_then_lf_in_the_next_chunk_is_one_line_ending() {
    let mut decoder = SseDecoder::new();
    let frames = decode_chunks(
        &mut decoder,
        &[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"],
    )
    .unwrap();
    assert_eq!(frames, [SseFrame::new("a\nb")]);
}

#[test]
fn cr_at_chunk_end_then_cr_is_a_blank_line() {
    let mut decoder = SseDecoder::new();
    decoder.push(b"data: a\r");
    assert_eq!(decoder.next_frame().unwrap(), None);
    decoder.push(b"\r");
    assert_eq!(decoder.next_frame().unwrap(), Some(SseFrame::new("a")));
    // The LF that now follows belongs to the second CR, not a third line ending.
    decoder.push(b"\ndata: b\n\n");
    assert_eq!(decoder.next_frame().unwrap(), Some(SseFrame::new("b")));
    assert_eq!(decoder.finish().unwrap(), None);
}

#[test]
fn cr_at_the_very_end_of_input() {
    assert_eq!(data(b"data: a\r"), ["a"]);
}

#[test]
fn bom_is_skipped() {
    assert_eq!(data(b"\xEF\xBB\xBFdata: a\n\n"), ["a"]);
}

#[test]
fn bom_split_across_chunks_is_skipped() {
    let input = b"\xEF\xBB\xBFdata: a\n\n";
    for split in 0..=input.len() {
        for second in split..=input.len() {
            let chunks = [&input[..split], &input[split..second], &input[second..]];
            let frames = decode_chunks(&mut SseDecoder::new(), &chunks).unwrap();
            assert_eq!(
                frames,
                [SseFrame::new("a")],
                "splits at {split} and {second}"
            );
        }
    }
}

#[test]
fn only_a_leading_bom_is_skipped() {
    // A second BOM makes the field name "\u{FEFF}data", an unknown field.
    assert_eq!(
        data(b"\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\ndata: b\n\n"),
        ["b"]
    );
    // A BOM later in the stream is ordinary text.
    assert_eq!(data(b"data: a\n\n\xEF\xBB\xBFdata: b\n\n"), ["a"]);
    assert_eq!(data("data: \u{FEFF}x\n\n".as_bytes()), ["\u{FEFF}x"]);
}

#[test]
fn partial_bom_at_end_of_input_is_invalid_utf8() {
    assert_invalid_utf8(&[(b"\xEF\xBB", 0), (b"\xEF\xBBdata: a\n\n", 0)]);
}

#[test]
fn empty_input_gives_nothing() {
    assert_eq!(data(b""), Vec::<String>::new());
}

#[test]
fn utf8_split_at_every_byte_position() {
    // 2-, 3- and 4-byte characters, in data and in an event name.
    let input = "event: é€\ndata: x é € 😀 y\n\n".as_bytes();
    for split in 0..=input.len() {
        let frames =
            decode_chunks(&mut SseDecoder::new(), &[&input[..split], &input[split..]]).unwrap();
        assert_eq!(frames.len(), 1, "split at {split}");
        assert_eq!(frames[0].data, "x é € 😀 y");
        assert_eq!(frames[0].event.as_deref(), Some("é€"));
    }
    assert_eq!(data(input), ["x é € 😀 y"]);
}

#[test]
fn invalid_utf8_is_an_error_with_the_offset() {
    assert_invalid_utf8(&[
        (b"data: a\xFFb\n\n", 7),
        // The offset counts from the stream start, BOM and earlier frames included.
        (b"\xEF\xBB\xBFdata: a\n\ndata: \xC3\x28\n\n", 18),
        // In a comment too: the whole stream must be UTF-8.
        (b": \x80\n\n", 2),
    ]);
}

#[test]
fn invalid_data_is_reported_before_anything_after_it() {
    // The data value's UTF-8 check is put off to save a pass; nothing that follows the
    // line may take effect or be reported first.
    let bad = b"data: \xFF\n";
    let after: [&[u8]; 6] = [
        b"retry: 5\n\n",
        b"id: 1\n\n",
        b"data: x\n\n",
        b"event: e\n\n",
        b"\xFE\n\n",
        b"",
    ];
    for after in after {
        let input = [&bad[..], after].concat();
        assert_eq!(
            err(&input),
            SseError::InvalidUtf8 { offset: 6 },
            "{input:?}"
        );
        for lend in [false, true] {
            let mut decoder = SseDecoder::new();
            decoder.push(&input);
            let result = if lend {
                decoder.next_frame_ref().map(|f| f.map(SseFrame::from))
            } else {
                decoder.next_frame()
            };
            assert_eq!(result, Err(SseError::InvalidUtf8 { offset: 6 }));
            assert_eq!(decoder.retry(), None);
            assert_eq!(decoder.last_event_id(), None);
            assert_eq!(
                decoder.next_frame_ref(),
                Err(SseError::InvalidUtf8 { offset: 6 })
            );
            assert!(decoder.buf.is_empty());
        }
    }
    // A line over the limit after it, with or without the frame's end.
    let mut input = bad.to_vec();
    input.extend(std::iter::repeat_n(b'x', 200));
    for end in [&b""[..], b"\n\n"] {
        let mut decoder = SseDecoder::with_max_frame_size(100);
        decoder.push(&[&input[..], end].concat());
        assert_eq!(
            decoder.next_frame(),
            Err(SseError::InvalidUtf8 { offset: 6 })
        );
    }
    // The error comes as soon as the line is complete, before the frame ends.
    let mut decoder = SseDecoder::new();
    decoder.push(bad);
    assert_eq!(
        decoder.next_frame_ref(),
        Err(SseError::InvalidUtf8 { offset: 6 })
    );
}

#[test]
fn incomplete_utf8_at_end_of_line_or_input_is_an_error() {
    assert_invalid_utf8(&[(b"data: \xE2\x82\n\n", 6), (b"data: \xE2\x82", 6)]);
}

#[test]
fn errors_are_final() {
    let mut decoder = SseDecoder::new();
    decoder.push(b"data: \xFF\n\ndata: ok\n\n");
    let first = decoder.next_frame().unwrap_err();
    decoder.push(b"data: more\n\n");
    assert_eq!(decoder.next_frame().unwrap_err(), first);
    assert_eq!(decoder.finish().unwrap_err(), first);
}

#[test]
fn frames_before_an_error_are_delivered() {
    let mut decoder = SseDecoder::new();
    decoder.push(b"data: ok\n\ndata: \xFF\n\n");
    assert_eq!(decoder.next_frame().unwrap(), Some(SseFrame::new("ok")));
    assert!(decoder.next_frame().is_err());
}

#[test]
fn multi_line_data_is_joined_with_lf() {
    assert_eq!(data(b"data: {\"a\":\ndata: 1}\n\n"), ["{\"a\":\n1}"]);
    assert_eq!(data(b"data: a\ndata:\ndata: b\n\n"), ["a\n\nb"]);
    assert_eq!(data(b"data\ndata\n\n"), ["\n"]);
}

#[test]
fn one_optional_space_is_stripped() {
    assert_eq!(
        data(b"data:a\n\ndata: a\n\ndata:  a\n\ndata:\ta\n\n"),
        ["a", "a", " a", "\ta"]
    );
}

#[test]
fn only_the_first_colon_splits() {
    assert_eq!(data(b"data: a: b:c\n\n"), ["a: b:c"]);
}

#[test]
fn empty_data_line_is_dispatched_with_empty_data() {
    assert_eq!(data(b"data:\n\n"), [""]);
    assert_eq!(data(b"data\n\n"), [""]);
}

#[test]
fn comments_are_ignored() {
    assert_eq!(
        data(b": ping\n\ndata: a\n:inside a frame\ndata: b\n\n:\n\n: keepalive\n\n"),
        ["a\nb"]
    );
}

#[test]
fn unknown_fields_and_indented_lines_are_ignored() {
    assert_eq!(
        data(b"foo: bar\nData: x\n data: y\ndata : z\nDATA\ndata: a\n\n"),
        ["a"]
    );
}

#[test]
fn frames_without_data_are_not_dispatched() {
    assert_eq!(
        data(b"\n\n\n\nevent: e\n\nid: 1\n\nretry: 5\n\n"),
        Vec::<String>::new()
    );
}

#[test]
fn event_field() {
    let frames =
        SseDecoder::decode_all(b"event: a\nevent: b\ndata: x\n\ndata: y\n\nevent:\ndata: z\n\n")
            .unwrap();
    assert_eq!(frames[0].event.as_deref(), Some("b"));
    // The event type does not carry over to the next frame.
    assert_eq!(frames[1].event, None);
    // Empty means the default type: None.
    assert_eq!(frames[2].event, None);
}

#[test]
fn event_without_data_does_not_leak_into_the_next_frame() {
    let frames = SseDecoder::decode_all(b"event: a\n\ndata: x\n\n").unwrap();
    assert_eq!(frames, [SseFrame::new("x")]);
}

#[test]
fn id_field_and_last_event_id() {
    let mut decoder = SseDecoder::new();
    assert_eq!(decoder.last_event_id(), None);
    decoder.push(b"id: 1\ndata: a\n\ndata: b\n\n");
    let a = decoder.next_frame().unwrap().unwrap();
    assert_eq!(a.id.as_deref(), Some("1"));
    assert_eq!(decoder.last_event_id(), Some("1"));
    let b = decoder.next_frame().unwrap().unwrap();
    // The frame reports only its own id; the last event id persists.
    assert_eq!(b.id, None);
    assert_eq!(decoder.last_event_id(), Some("1"));
}

#[test]
fn id_takes_effect_at_the_end_of_its_frame() {
    let mut decoder = SseDecoder::new();
    decoder.push(b"data: a\nid: 7\n");
    assert_eq!(decoder.next_frame().unwrap(), None);
    assert_eq!(decoder.last_event_id(), None);
    decoder.push(b"\n");
    let frame = decoder.next_frame().unwrap().unwrap();
    assert_eq!(frame.id.as_deref(), Some("7"));
    assert_eq!(decoder.last_event_id(), Some("7"));
}

#[test]
fn id_in_a_frame_without_data_still_updates_last_event_id() {
    let mut decoder = SseDecoder::new();
    assert_eq!(decode_chunks(&mut decoder, &[b"id: 9\n\n"]).unwrap(), []);
    assert_eq!(decoder.last_event_id(), Some("9"));
}

#[test]
fn id_with_nul_is_ignored_and_empty_id_resets() {
    let mut decoder = SseDecoder::new();
    let frames = decode_chunks(&mut decoder, &[b"id: 1\n\nid: a\0b\ndata: x\n\n"]).unwrap();
    assert_eq!(frames[0].id, None);
    assert_eq!(decoder.last_event_id(), Some("1"));

    let frames = decode_chunks(&mut SseDecoder::new(), &[b"id: 1\n\nid\ndata: x\n\n"]).unwrap();
    assert_eq!(frames[0].id.as_deref(), Some(""));
    let mut decoder = SseDecoder::new();
    decode_chunks(&mut decoder, &[b"id: 1\n\nid:\n\n"]).unwrap();
    assert_eq!(decoder.last_event_id(), None);
}

#[test]
fn retry_field() {
    let mut decoder = SseDecoder::new();
    let frames = decode_chunks(&mut decoder, &[b"retry: 1500\ndata: a\n\ndata: b\n\n"]).unwrap();
    assert_eq!(frames[0].retry, Some(1500));
    assert_eq!(frames[1].retry, None);
    assert_eq!(decoder.retry(), Some(1500));
}

#[test]
fn invalid_retry_is_ignored() {
    for value in [
        "",
        "abc",
        "12a",
        "-1",
        "+1",
        "1.5",
        " 5 ",
        "  5",
        "5 ",
        "١٢",
        "18446744073709551616",
    ] {
        let input = format!("retry: 7\n\nretry: {value}\ndata: x\n\n");
        let mut decoder = SseDecoder::new();
        let frames = decode_chunks(&mut decoder, &[input.as_bytes()]).unwrap();
        assert_eq!(frames[0].retry, None, "retry: {value:?}");
        assert_eq!(decoder.retry(), Some(7), "retry: {value:?}");
    }
    let frames =
        SseDecoder::decode_all(b"retry:0\ndata: x\n\nretry: 18446744073709551615\ndata: y\n\n")
            .unwrap();
    assert_eq!(frames[0].retry, Some(0));
    assert_eq!(frames[1].retry, Some(u64::MAX));
}

#[test]
fn retry_without_data_updates_the_decoder() {
    let mut decoder = SseDecoder::new();
    decode_chunks(&mut decoder, &[b"retry: 3000\n\n"]).unwrap();
    assert_eq!(decoder.retry(), Some(3000));
}

#[test]
fn all_fields_in_one_frame() {
    let frames =
        SseDecoder::decode_all(b"event: message\nid: 7\nretry: 100\ndata: {\"a\":1}\n\n").unwrap();
    assert_eq!(
        frames,
        [SseFrame {
            data: "{\"a\":1}".to_owned(),
            event: Some("message".to_owned()),
            id: Some("7".to_owned()),
            retry: Some(100),
        }]
    );
}

#[test]
fn finish_delivers_a_frame_without_its_blank_line() {
    assert_eq!(
        data(b"data: {\"a\":1}\n\ndata: {\"a\":2}"),
        ["{\"a\":1}", "{\"a\":2}"]
    );
    assert_eq!(data(b"data: a\n"), ["a"]);
    assert_eq!(data(b"data: a\ndata: b"), ["a\nb"]);
    assert_eq!(data(b"data: a\r\n"), ["a"]);
}

#[test]
fn finish_without_data_gives_nothing() {
    assert_eq!(data(b"data: a\n\n: trailing comment"), ["a"]);
    assert_eq!(data(b"data: a\n\nevent: x\n"), ["a"]);
    let mut decoder = SseDecoder::new();
    assert_eq!(decode_chunks(&mut decoder, &[b"id: 5"]).unwrap(), []);
    assert_eq!(decoder.last_event_id(), Some("5"));
}

#[test]
fn finish_returns_frames_not_yet_taken_then_none() {
    let mut decoder = SseDecoder::new();
    decoder.push(b"data: 1\n\ndata: 2\n\ndata: 3");
    assert_eq!(decoder.finish().unwrap(), Some(SseFrame::new("1")));
    assert_eq!(decoder.next_frame().unwrap(), Some(SseFrame::new("2")));
    assert_eq!(decoder.finish().unwrap(), Some(SseFrame::new("3")));
    assert_eq!(decoder.finish().unwrap(), None);
    assert_eq!(decoder.next_frame().unwrap(), None);
    // Input after the end is ignored.
    decoder.push(b"data: 4\n\n");
    assert_eq!(decoder.finish().unwrap(), None);
}

#[test]
fn reference_verified_cases() {
    // encoding.md section 5: inputs the reference client accepts, with their events.
    assert_eq!(data(b"data: {\"a\":1}\n\ndata: {\"a\":2}\n\n").len(), 2);
    assert_eq!(data(b"data:{\"a\":1}\n\n"), ["{\"a\":1}"]);
    assert_eq!(
        data(b": ping\n\ndata: {\"a\":1}\n\n: keepalive\n\n").len(),
        1
    );
    assert_eq!(data(b"data: {\"a\":1}\n\n\ndata: {\"a\":2}\n\n").len(), 2);
    let chunks: [&[u8]; 4] = [b"da", b"ta: {\"a\"", b":1}\n", b"\ndata: {\"b\":2}\n\n"];
    let frames = decode_chunks(&mut SseDecoder::new(), &chunks).unwrap();
    assert_eq!(
        frames,
        [SseFrame::new("{\"a\":1}"), SseFrame::new("{\"b\":2}")]
    );
    // Where we are more tolerant on purpose: CRLF framing gives every event.
    assert_eq!(
        data(b"data: {\"a\":1}\r\n\r\ndata: {\"a\":2}\r\n\r\n").len(),
        2
    );
}

#[test]
fn max_size_one_huge_unterminated_line() {
    let mut decoder = SseDecoder::with_max_frame_size(100);
    decoder.push(b"data: ok\n\n");
    assert_eq!(decoder.next_frame().unwrap(), Some(SseFrame::new("ok")));
    // The line is refused before its end arrives, without buffering more.
    let mut result = Ok(None);
    for _ in 0..200 {
        decoder.push(b"x");
        result = decoder.next_frame();
        if result.is_err() {
            break;
        }
    }
    assert_eq!(
        result,
        Err(SseError::FrameTooLarge {
            limit: 100,
            offset: 10
        })
    );
    assert!(decoder.buf.is_empty());
}

#[test]
fn max_size_one_huge_terminated_line() {
    let mut input = b"data: ".to_vec();
    input.extend(std::iter::repeat_n(b'x', 200));
    input.extend_from_slice(b"\n\n");
    let mut decoder = SseDecoder::with_max_frame_size(100);
    decoder.push(&input);
    assert_eq!(
        decoder.next_frame(),
        Err(SseError::FrameTooLarge {
            limit: 100,
            offset: 0
        })
    );
}

#[test]
fn max_size_many_data_lines() {
    // 20 lines of 9 bytes of data: 20 * 9 + 19 separators = 199 bytes of data.
    let input = "data: 123456789\n".repeat(20) + "\n";
    let mut decoder = SseDecoder::with_max_frame_size(100);
    decoder.push(input.as_bytes());
    // Line 11 would take the data from 99 to 99 + 1 + 9 = 109 bytes.
    assert_eq!(
        decoder.next_frame(),
        Err(SseError::FrameTooLarge {
            limit: 100,
            offset: 10 * 16
        })
    );
    // Exactly at the limit is fine: 10 lines give 99 bytes, plus one line of "" is 100.
    let input = "data: 123456789\n".repeat(10) + "data:\n\n";
    let mut decoder = SseDecoder::with_max_frame_size(100);
    decoder.push(input.as_bytes());
    assert_eq!(decoder.next_frame().unwrap().unwrap().data.len(), 100);
}

#[test]
fn max_size_counts_per_frame_not_per_stream() {
    let input = "data: 1234567890\n\n".repeat(1000);
    let mut decoder = SseDecoder::with_max_frame_size(16);
    decoder.push(input.as_bytes());
    let mut n = 0;
    while decoder.next_frame().unwrap().is_some() {
        n += 1;
    }
    assert_eq!(n, 1000);
}

#[test]
fn many_comment_lines_are_not_accumulated() {
    let input = ": keep-alive comment\n".repeat(1000) + "data: a\n\n";
    let mut decoder = SseDecoder::with_max_frame_size(32);
    decoder.push(input.as_bytes());
    assert_eq!(decoder.next_frame().unwrap(), Some(SseFrame::new("a")));
}

#[test]
fn error_messages_name_the_offset() {
    assert_eq!(
        SseError::InvalidUtf8 { offset: 12 }.to_string(),
        "invalid UTF-8 in the SSE stream at byte 12"
    );
    let too_large = SseError::FrameTooLarge {
        limit: 100,
        offset: 7,
    };
    assert_eq!(
        too_large.to_string(),
        "SSE frame exceeds the maximum size of 100 bytes (in the line starting at byte 7)"
    );
    assert_eq!(too_large.offset(), 7);
}

#[test]
fn default_limit_is_16_mib() {
    assert_eq!(SseDecoder::new().max_frame_size(), 16 * 1024 * 1024);
    assert_eq!(
        SseDecoder::default().max_frame_size(),
        DEFAULT_MAX_FRAME_SIZE
    );
}

/// Feeds `input` one byte at a time and returns the decoder's work counters.
fn one_byte_at_a_time(input: &[u8]) -> (usize, Stats) {
    let mut decoder = SseDecoder::new();
    let mut frames = 0;
    for byte in input {
        decoder.push(std::slice::from_ref(byte));
        while decoder.next_frame().unwrap().is_some() {
            frames += 1;
        }
    }
    while decoder.finish().unwrap().is_some() {
        frames += 1;
    }
    (frames, decoder.stats().clone())
}

/// Fed one byte at a time, `input` gives `frames` frames, scanning and moving each byte
/// at most once.
fn assert_linear_one_byte_at_a_time(input: &[u8], frames: usize) {
    let (got, stats) = one_byte_at_a_time(input);
    assert_eq!(got, frames);
    let n = input.len() as u64;
    assert!(stats.scanned <= n, "scanned {} of {n} bytes", stats.scanned);
    assert!(stats.moved <= n, "moved {} of {n} bytes", stats.moved);
}

#[test]
fn one_byte_chunks_cost_linear_work_for_one_long_line() {
    let mut input = b"data: ".to_vec();
    input.extend(std::iter::repeat_n(b'x', 100_000));
    input.extend_from_slice(b"\n\n");
    assert_linear_one_byte_at_a_time(&input, 1);
}

#[test]
fn one_byte_chunks_cost_linear_work_for_many_frames() {
    let input = "data: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"delta\":\"hi\"}\r\n\r\n".repeat(5_000);
    assert_linear_one_byte_at_a_time(input.as_bytes(), 5_000);
}

#[test]
fn big_chunks_cost_linear_work() {
    let input = "data: 0123456789abcdef\n\n".repeat(10_000);
    let mut decoder = SseDecoder::new();
    for chunk in input.as_bytes().chunks(4096 + 7) {
        decoder.push(chunk);
        while decoder.next_frame().unwrap().is_some() {}
    }
    let n = input.len() as u64;
    assert!(decoder.stats().scanned <= n);
    assert!(decoder.stats().moved <= n);
    // The buffer does not keep what was consumed.
    assert!(decoder.buf.len() < 2 * (4096 + 7));
}

#[test]
fn borrowed_frames_carry_every_field() {
    let mut decoder = SseDecoder::new();
    decoder.push(b"event: e\nid: 9\nretry: 5\ndata: a\n\ndata: b\ndata: c\n\n");
    assert_eq!(
        decoder.next_frame_ref().unwrap(),
        Some(SseFrameRef {
            data: "a",
            event: Some("e"),
            id: Some("9"),
            retry: Some(5),
        })
    );
    // The next frame does not inherit the previous one's fields.
    assert_eq!(
        decoder.next_frame_ref().unwrap(),
        Some(SseFrameRef {
            data: "b\nc",
            ..SseFrameRef::default()
        })
    );
    assert_eq!(decoder.finish_ref().unwrap(), None);
    assert_eq!(decoder.last_event_id(), Some("9"));
}

#[test]
fn borrowed_and_owned_calls_mix() {
    let input = b"data: 1\n\nid: x\ndata: 2\ndata: 3\n\nevent: e\ndata: 4\n\ndata: 5\n\ndata: 6";
    for split in 0..=input.len() {
        let mut decoder = SseDecoder::new();
        let mut out = Vec::new();
        for (n, chunk) in [&input[..split], &input[split..]].into_iter().enumerate() {
            decoder.push(chunk);
            loop {
                let frame = if (out.len() + n) % 2 == 0 {
                    decoder.next_frame().unwrap()
                } else {
                    decoder.next_frame_ref().unwrap().map(SseFrame::from)
                };
                match frame {
                    Some(f) => out.push(f),
                    None => break,
                }
            }
        }
        while let Some(f) = decoder.finish_ref().unwrap() {
            out.push(f.to_frame());
        }
        assert_eq!(
            out,
            SseDecoder::decode_all(input).unwrap(),
            "split at {split}"
        );
    }
}

#[test]
fn a_data_line_compacted_away_before_its_blank_line_is_kept() {
    // The data line is complete long before the blank line arrives, and the buffer is
    // compacted in between.
    let mut decoder = SseDecoder::new();
    decoder.push(b"data: first\n");
    assert_eq!(decoder.next_frame_ref().unwrap(), None);
    for _ in 0..100 {
        decoder.push(b":");
        assert_eq!(decoder.next_frame_ref().unwrap(), None);
        decoder.push(b"\n");
        assert_eq!(decoder.next_frame_ref().unwrap(), None);
    }
    decoder.push(b"data: second\n\n");
    assert_eq!(
        decoder.next_frame_ref().unwrap().map(|f| f.data),
        Some("first\nsecond")
    );
}

proptest::proptest! {
    #[test]
    fn borrowed_api_matches_owned_api(
        lines in proptest::collection::vec(
            proptest::sample::select(vec![
                "data: {\"a\":1}", "data:x", "data", "", "", ": c", "id: 3", "id", "event: e",
                "event:", "retry: 10", "retry: x", "dat", "data: \u{e9}\u{1F600}",
            ]),
            0..24,
        ),
        seps in proptest::collection::vec(proptest::sample::select(vec!["\n", "\r", "\r\n"]), 24),
        chunk in 1usize..9,
    ) {
        let mut input = String::new();
        for (line, sep) in lines.iter().zip(&seps) {
            input.push_str(line);
            input.push_str(sep);
        }
        let owned = decode_sized(input.as_bytes(), chunk).unwrap();
        proptest::prop_assert_eq!(owned, SseDecoder::decode_all(input.as_bytes()).unwrap());
    }
}

/// Decodes `input` split at the given points (each chunk through both APIs), with results
/// and errors alike.
fn decode_split(input: &[u8], cuts: &[usize], max: usize) -> Result<Vec<SseFrame>, SseError> {
    let mut points: Vec<usize> = cuts.iter().map(|&c| c % (input.len() + 1)).collect();
    points.sort_unstable();
    let mut chunks = Vec::new();
    let mut last = 0;
    for p in points {
        chunks.push(&input[last..p]);
        last = p;
    }
    chunks.push(&input[last..]);
    let owned = decode_chunks(&mut SseDecoder::with_max_frame_size(max), &chunks);
    let lent = decode_chunks_ref(&mut SseDecoder::with_max_frame_size(max), &chunks);
    assert_eq!(owned, lent, "next_frame and next_frame_ref disagree");
    owned
}

#[test]
fn invalid_utf8_split_across_chunks() {
    // Each case: the bytes, and the offset of the first byte that is not UTF-8.
    for (input, offset) in [
        (&b"data: \xE2\x82\xAC\xC3\n\n"[..], 9),
        (b"data: a\xF0\x9F\x98\n\n", 7),
        (b"data: a\xF0\x9F\x98", 7),
        (b"data: \xC0\xAF\n\n", 6),
        (b"data: \xE0\x80\x80\n\n", 6),
        (b"data: \xF5\x80\x80\x80\n\n", 6),
        (b"data: ok\n\ndata: \xFF\n\n", 16),
        (b"\xEF\xBB", 0),
        (b"\xEF\xBB\xBFdata: \xED\xA0\x80\n\n", 9),
    ] {
        for a in 0..=input.len() {
            for b in a..=input.len() {
                assert_eq!(
                    decode_split(input, &[a, b], 1 << 20).map(|f| f.len()),
                    Err(SseError::InvalidUtf8 { offset }),
                    "{input:?} cut at {a} and {b}"
                );
            }
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

    /// However the input is cut, the frames and the error are the same as in one piece
    /// (which the unit tests pin to the per-line rules).
    #[test]
    fn chunking_never_matters(
        pieces in proptest::collection::vec(
            proptest::sample::select(vec![
                &b"data: "[..], b"data:", b"id: 1", b"event: e", b"retry: 7", b": c", b"x",
                b"\n", b"\n", b"\r", b"\r\n", b"\n\n", "é".as_bytes(), "€".as_bytes(),
                "😀".as_bytes(), b"\xEF\xBB\xBF", b"\xFF", b"\x80", b"\xC3", b"\xE2\x82",
                b"\xF0\x9F\x98", b"\xC0\x80", b"\xED\xA0\x80",
            ]),
            0..30,
        ),
        cuts in proptest::collection::vec(0usize..1000, 0..6),
        max in proptest::sample::select(vec![8usize, 30, 1 << 20]),
    ) {
        let input = pieces.concat();
        let mut whole = SseDecoder::with_max_frame_size(max);
        whole.push(&input);
        let mut expected = Vec::new();
        let expected = loop {
            match whole.finish() {
                Ok(Some(frame)) => expected.push(frame),
                Ok(None) => break Ok(expected),
                Err(err) => break Err(err),
            }
        };
        let got = decode_split(&input, &cuts, max);
        proptest::prop_assert_eq!(got.as_ref().map(Vec::len), expected.as_ref().map(Vec::len));
        if let (Ok(got), Ok(expected)) = (&got, &expected) {
            proptest::prop_assert_eq!(got, expected);
        }
        // Frames delivered before an error are compared by the per-call test above; here
        // errors must match exactly.
        if let (Err(got), Err(expected)) = (&got, &expected) {
            proptest::prop_assert_eq!(got, expected);
        }
    }
}
