//! The stream commands as streams: the frame limit `encode` and `decode` share, the frame a
//! decoding error names and the events written before it, input that is not SSE, every
//! input format giving the same result, and output that follows a live input.

mod common;

use common::{agui, agui_command, agui_with_stdin, assert_has, scratch};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

const RS: &str = r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#;
const RF: &str = r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#;
const TS: &str = r#"{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}"#;
const TE: &str = r#"{"type":"TEXT_MESSAGE_END","messageId":"m"}"#;

fn content(delta: &str) -> String {
    serde_json::json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": delta})
        .to_string()
}

fn jsonl(events: &[&str]) -> String {
    events.iter().map(|e| format!("{e}\n")).collect()
}

fn sse(events: &[&str]) -> String {
    events.iter().map(|e| format!("data: {e}\n\n")).collect()
}

/// Writes `text` to a scratch file named `name`; returns its path.
fn file(name: &str, text: impl AsRef<[u8]>) -> String {
    let path = scratch(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn encode_refuses_what_decode_would_refuse_with_the_same_limit() {
    // The third event's frame is exactly `limit` bytes: `data: ` and its JSON.
    let big = content(&"x".repeat(1000));
    let limit = "data: ".len() + big.len();
    let input = file("limit.jsonl", jsonl(&[RS, TS, &big, TE, RF]));
    let at = |n: usize| n.to_string();

    // At the limit: written, and read back whole with the same limit.
    let encoded = agui(&["encode", "--max-frame-bytes", &at(limit), &input]);
    assert_eq!(encoded.code, 0, "{encoded:?}");
    let wire = file("limit.sse", &encoded.stdout);
    let decoded = agui(&["decode", "--max-frame-bytes", &at(limit), &wire]);
    assert_eq!(decoded.code, 0, "{decoded:?}");
    assert_eq!(decoded.stdout.lines().count(), 5);

    // One byte less: `encode` refuses the event, naming it, after writing the two before...
    let refused = agui(&["encode", "--max-frame-bytes", &at(limit - 1), &input]);
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(
        refused.stderr.contains("event 2 (TEXT_MESSAGE_CONTENT)")
            && refused.stderr.contains("--max-frame-bytes"),
        "{}",
        refused.stderr
    );
    assert_eq!(refused.stdout, sse(&[RS, TS]));
    // ...exactly where `decode` with that limit stops on the longer stream.
    let stopped = agui(&["decode", "--max-frame-bytes", &at(limit - 1), &wire]);
    assert_eq!(stopped.code, 2, "{stopped:?}");
    assert!(stopped.stderr.contains("frame 2"), "{}", stopped.stderr);
    assert_eq!(stopped.stdout.lines().count(), 2);

    // The same over protobuf, where the limit is the body's size (and that of the event's
    // JSON when it is read: an array element is a frame too).
    let input = file(
        "limit.json",
        format!("[{}]", [RS, TS, &big, TE, RF].join(",")),
    );
    let pb = file(
        "limit.pb",
        wire_bytes(&["encode", "--format", "proto", &input]),
    );
    let largest = proto_bodies(&std::fs::read(&pb).unwrap())
        .into_iter()
        .max()
        .unwrap();
    // `agui COMMAND --format proto --max-frame-bytes N FILE`.
    let proto_at = |command: &str, n: usize, file: &str| {
        agui(&[
            command,
            "--format",
            "proto",
            "--max-frame-bytes",
            &at(n),
            file,
        ])
    };
    assert!(big.len() > largest);
    assert_eq!(proto_at("encode", big.len(), &input).code, 0);
    let refused = proto_at("encode", largest - 1, &input);
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(refused.stderr.contains("event 2"), "{}", refused.stderr);
    assert_eq!(proto_at("decode", largest, &pb).code, 0);
    let stopped = proto_at("decode", largest - 1, &pb);
    assert_eq!(stopped.code, 2, "{stopped:?}");
    assert!(stopped.stderr.contains("frame 2"), "{}", stopped.stderr);
    assert_eq!(stopped.stdout.lines().count(), 2);
}

/// The raw bytes `agui ARGS` writes.
fn wire_bytes(args: &[&str]) -> Vec<u8> {
    let out = agui_command().args(args).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    out.stdout
}

/// The body sizes of a length-prefixed protobuf stream.
fn proto_bodies(mut bytes: &[u8]) -> Vec<usize> {
    let mut sizes = Vec::new();
    while let Some((head, rest)) = bytes.split_first_chunk::<4>() {
        let n = u32::from_be_bytes(*head) as usize;
        sizes.push(n);
        bytes = &rest[n..];
    }
    sizes
}

#[test]
fn encode_and_decode_have_the_same_documented_default_limit() {
    let default_of = |cmd: &str| {
        let help = agui(&[cmd, "--help"]).stdout;
        help.split_once("--max-frame-bytes")
            .and_then(|(_, after)| after.split_once("[default: "))
            .and_then(|(_, d)| d.split(']').next())
            .map(str::to_owned)
            .unwrap_or_else(|| panic!("no default in `agui {cmd} --help`:\n{help}"))
    };
    let defaults: Vec<String> = [
        "encode", "decode", "verify", "apply", "expand", "compact", "inspect",
    ]
    .iter()
    .map(|c| default_of(c))
    .collect();
    assert!(defaults.iter().all(|d| *d == defaults[0]), "{defaults:?}");
    assert_eq!(defaults[0], (16 << 20).to_string());
}

#[test]
fn an_event_over_the_default_limit_is_refused_by_encode_not_only_by_decode() {
    let big = content(&"y".repeat(16 << 20));
    let room = (32 << 20).to_string();
    // An array element is a frame: refused when read, naming the event, after the frames
    // before it were written.
    let array = file("huge.json", format!("[{RS},{TS},{big}]"));
    let refused = agui(&["encode", &array]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert_has(&refused.stderr, &["event 2", "--max-frame-bytes"]);
    assert_eq!(refused.stdout, sse(&[RS, TS]));
    // JSON Lines: the line is over the limit already when read.
    let lines = file("huge.jsonl", jsonl(&[RS, TS, &big]));
    let read = agui(&["encode", &lines]);
    assert_eq!(read.code, 2, "{}", read.stderr);
    assert!(read.stderr.contains("event 2"), "{}", read.stderr);
    // With a higher limit the stream is written; `decode` needs the same limit to read it.
    let written = agui(&["encode", "--max-frame-bytes", &room, &array]);
    assert_eq!(written.code, 0, "{}", written.stderr);
    let wire = file("huge.sse", &written.stdout);
    let decoded = agui(&["decode", &wire]);
    assert_eq!(decoded.code, 2, "{}", decoded.stderr);
    assert!(decoded.stderr.contains("frame 2"), "{}", decoded.stderr);
    assert_eq!(decoded.stdout.lines().count(), 2);
    let decoded = agui(&["decode", "--max-frame-bytes", &room, &wire]);
    assert_eq!(decoded.code, 0, "{}", decoded.stderr);
    assert_eq!(decoded.stdout.lines().count(), 3);
}

#[test]
fn sse_decode_names_the_bad_frame_and_writes_the_events_before() {
    // The third frame is not JSON: exit 1 (an invalid event), frames 0 and 1 written.
    let input = format!(
        "{}data: {{\"type\":\"RUN_FIN\n\n{}",
        sse(&[RS, TS]),
        sse(&[RF])
    );
    let out = agui(&["decode", &file("bad-json.sse", input)]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("frame 2:"), "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", out.stdout);
    assert!(lines[1].contains("TEXT_MESSAGE_START"));

    // The third frame is not UTF-8: the stream cannot be read on (exit 2), same frame named.
    let mut bytes = sse(&[RS, TS]).into_bytes();
    bytes.extend_from_slice(b"data: {\"type\":\"RUN_FINISHED\",\"threadId\":\"\xff\"}\n\n");
    let out = agui(&["decode", &file("bad-utf8.sse", bytes)]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("frame 2:"), "{}", out.stderr);
    assert_eq!(out.stdout.lines().count(), 2);

    // A well-formed frame whose event is malformed: exit 1, named.
    let input = sse(&[RS, r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m"}"#, RF]);
    let out = agui(&["decode", &file("bad-event.sse", input)]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("frame 1:"), "{}", out.stderr);
    assert_eq!(out.stdout.lines().count(), 1);
}

#[test]
fn decode_sse_refuses_input_that_is_not_sse() {
    for (name, input) in [
        ("lines.jsonl", jsonl(&[RS, RF])),
        ("array.json", format!("[{RS},{RF}]")),
        ("words.txt", "hello world\n".to_owned()),
    ] {
        let out = agui(&["decode", "--format", "sse", &file(name, input)]);
        assert_eq!(out.code, 2, "{name}: {out:?}");
        assert!(
            out.stderr.contains("not an SSE stream"),
            "{name}: {}",
            out.stderr
        );
        assert!(out.stdout.is_empty(), "{name}: {}", out.stdout);
    }
    // An empty stream, or one of comments only, is SSE without events.
    for input in ["", "\n\n", ": keep-alive\n\n"] {
        let out = agui_with_stdin(&["decode", "-"], input.as_bytes());
        assert_eq!(
            (out.code, out.stdout.as_str()),
            (0, ""),
            "{input:?}: {out:?}"
        );
    }
    // A BOM and blank lines before the first field are fine.
    let out = agui_with_stdin(
        &["decode", "-"],
        format!("\u{feff}\n\n{}", sse(&[RS])).as_bytes(),
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout.lines().count(), 1);
}

#[test]
fn proto_decode_names_the_frame_and_keeps_the_events_before() {
    let input = file("proto-src.jsonl", jsonl(&[RS, TS, &content("hi"), TE, RF]));
    let mut wire = wire_bytes(&["encode", "--format", "proto", &input]);
    // Cut inside the last frame: exit 2, the four before written.
    wire.truncate(wire.len() - 3);
    let out = agui(&["decode", "--format", "proto", &file("cut.pb", &wire)]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("frame 4"), "{}", out.stderr);
    assert_eq!(out.stdout.lines().count(), 4);
    // A frame whose body is not an event: exit 1, named.
    let mut wire = wire_bytes(&["encode", "--format", "proto", &input]);
    let first = u32::from_be_bytes(wire[..4].try_into().unwrap()) as usize;
    let mut broken = wire[..4 + first].to_vec();
    broken.extend_from_slice(&[0, 0, 0, 2, 0xff, 0xff]);
    broken.extend_from_slice(&wire.split_off(4 + first));
    let out = agui(&["decode", "--format", "proto", &file("broken.pb", &broken)]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("frame 1"), "{}", out.stderr);
    assert_eq!(out.stdout.lines().count(), 1);
}

#[test]
fn every_input_format_gives_the_same_result() {
    let events = [RS, TS, &content("Hel"), &content("lo"), TE, RF];
    let proto = wire_bytes(&[
        "encode",
        "--format",
        "proto",
        &file("same-src.jsonl", jsonl(&events)),
    ]);
    let inputs: [(&str, Vec<u8>); 6] = [
        ("same.jsonl", jsonl(&events).into()),
        (
            "same.crlf.jsonl",
            events
                .iter()
                .map(|e| format!("{e}\r\n"))
                .collect::<String>()
                .into(),
        ),
        ("same.sse", sse(&events).into()),
        ("same.json", format!("[{}]", events.join(",\n  ")).into()),
        (
            "same.case.json",
            format!(
                "{{\n  \"name\": \"x\",\n  \"events\": [{}]\n}}",
                events.join(",")
            )
            .into(),
        ),
        ("same.pb", proto),
    ];
    for cmd in [
        &["apply"][..],
        &["verify"],
        &["expand"],
        &["compact"],
        &["encode"],
        &["encode", "--format", "proto"],
    ] {
        let mut seen: Option<(String, String)> = None;
        for (name, text) in &inputs {
            let path = file(name, text);
            let mut args = cmd.to_vec();
            args.push(&path);
            let from_file = agui(&args);
            assert_eq!(from_file.code, 0, "{cmd:?} {name}: {from_file:?}");
            args.pop();
            args.push("-");
            let from_stdin = agui_with_stdin(&args, text);
            assert_eq!(
                from_stdin.stdout, from_file.stdout,
                "{cmd:?} {name} from stdin"
            );
            match &seen {
                None => seen = Some((name.to_string(), from_file.stdout)),
                Some((first, out)) => {
                    assert_eq!(&from_file.stdout, out, "{cmd:?}: {name} vs {first}")
                }
            }
        }
    }
    // `inspect` shows the same timeline, its header naming the format.
    let timeline = |name: &str, text: &[u8]| {
        let out = agui(&["inspect", "--color", "never", &file(name, text)]);
        assert_eq!(out.code, 0, "{name}: {out:?}");
        let (head, rest) = out.stdout.split_once('\n').unwrap();
        (head.to_owned(), rest.to_owned())
    };
    let (head, lines) = timeline("same.jsonl", &inputs[0].1);
    let (pb_head, pb_lines) = timeline("same.pb", &inputs[5].1);
    assert!(head.starts_with("6 events (JSON Lines),"), "{head}");
    assert_eq!(pb_head.replace("(protobuf)", "(JSON Lines)"), head);
    assert_eq!(pb_lines, lines);
}

#[test]
fn a_protobuf_stream_that_breaks_is_named_where_it_breaks() {
    let events = [RS, TS, &content("a"), TE];
    let wire = wire_bytes(&[
        "encode",
        "--format",
        "proto",
        &file("pb-src.jsonl", jsonl(&events)),
    ]);
    // Content after its message ended: invalid there for the checkers.
    let out_of_order = wire_bytes(&[
        "encode",
        "--format",
        "proto",
        &file("pb-order.jsonl", jsonl(&[RS, TS, TE, &content("a")])),
    ]);
    let out_of_order = file("out-of-order.pb", &out_of_order);
    for cmd in ["verify", "apply"] {
        let out = agui(&[cmd, &out_of_order]);
        assert_eq!(out.code, 1, "{cmd}: {out:?}");
        assert_eq!(out.json()["at"], 3, "{cmd}");
    }
    let out = agui(&["inspect", "--color", "never", &out_of_order]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stdout.contains("breaks at event 3"), "{}", out.stdout);
    // A well-formed body whose event breaks the schema (a role no message has): invalid
    // there, as its JSON would be.
    let bad_role = wire_bytes(&[
        "encode",
        "--format",
        "proto",
        &file("pb-role.jsonl", jsonl(&[RS, TS])),
    ]);
    let at = bad_role.windows(9).position(|w| w == b"assistant").unwrap();
    let mut bad_role = bad_role;
    bad_role[at + 8] = b'X';
    let bad_role = file("bad-role.pb", &bad_role);
    let out = agui(&["verify", &bad_role]);
    assert_eq!(out.code, 1, "{out:?}");
    let verdict = out.json();
    assert_eq!(
        (verdict["at"].as_u64(), verdict["rule"].as_str()),
        (Some(1), Some("schema"))
    );
    assert_has(&out.stdout, &["TEXT_MESSAGE_START", "assistanX"]);
    for cmd in ["apply", "inspect", "expand", "compact", "encode"] {
        let out = agui(&[cmd, &bad_role]);
        assert_eq!(out.code, 1, "{cmd}: {out:?}");
    }
    // A body that is not an event, after the first frame: unreadable from there (exit 2),
    // named, for every command.
    let first = u32::from_be_bytes(wire[..4].try_into().unwrap()) as usize;
    let mut broken = wire[..4 + first].to_vec();
    broken.extend_from_slice(&[0, 0, 0, 2, 0xff, 0xff]);
    broken.extend_from_slice(&wire[4 + first..]);
    let broken = file("broken-body.pb", &broken);
    for cmd in ["verify", "apply", "inspect", "expand", "compact", "encode"] {
        let out = agui(&[cmd, &broken]);
        assert_eq!(out.code, 2, "{cmd}: {out:?}");
        assert!(out.stderr.contains("event 1"), "{cmd}: {}", out.stderr);
    }
    // Cut inside a frame.
    let cut = file("cut-frame.pb", &wire[..wire.len() - 2]);
    let out = agui(&["verify", &cut]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("event 3"), "{}", out.stderr);
}

#[test]
fn expand_and_compact_stop_at_an_invalid_event_with_a_valid_array_of_what_came_before() {
    let input = file(
        "invalid-later.jsonl",
        jsonl(&[
            RS,
            TS,
            &content("a"),
            TE,
            r#"{"type":"TEXT_MESSAGE_CONTENT"}"#,
            RF,
        ]),
    );
    for cmd in ["expand", "compact"] {
        let out = agui(&[cmd, &input]);
        assert_eq!(out.code, 1, "{cmd}: {out:?}");
        assert!(out.stderr.contains("event 4"), "{cmd}: {}", out.stderr);
        let array = out.json();
        let types: Vec<&str> = array
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["type"].as_str().unwrap())
            .collect();
        assert_eq!(
            types,
            [
                "RUN_STARTED",
                "TEXT_MESSAGE_START",
                "TEXT_MESSAGE_CONTENT",
                "TEXT_MESSAGE_END"
            ],
            "{cmd}"
        );
    }
}

#[test]
fn a_json_line_over_the_limit_stops_the_reading_naming_its_event() {
    let long = content(&"z".repeat(300));
    let input = file("long-line.jsonl", jsonl(&[RS, TS, &long, TE, RF]));
    let out = agui(&["verify", "--max-frame-bytes", "200", &input]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("event 2") && out.stderr.contains("--max-frame-bytes"),
        "{}",
        out.stderr
    );
    assert_eq!(
        agui(&["verify", "--max-frame-bytes", "400", &input]).code,
        0
    );
}

/// Reads lines from a child's output on a thread; `next` waits up to a minute for one.
struct Lines(std::sync::mpsc::Receiver<String>);

impl Lines {
    fn of(out: impl Read + Send + 'static) -> Lines {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Lines(rx)
    }

    fn next(&self) -> Option<String> {
        self.0.recv_timeout(Duration::from_secs(60)).ok()
    }
}

/// `agui COMMAND -` with its standard input and output piped.
fn reading_stdin(command: &str) -> std::process::Child {
    agui_command()
        .args([command, "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn output_follows_a_live_input() {
    // `decode` prints each event while its input is still open.
    let mut child = reading_stdin("decode");
    let mut stdin = child.stdin.take().unwrap();
    let lines = Lines::of(child.stdout.take().unwrap());
    for event in [RS, TS] {
        stdin.write_all(sse(&[event]).as_bytes()).unwrap();
        stdin.flush().unwrap();
        let line = lines.next().expect("an event before the input ends");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&line).unwrap(),
            serde_json::from_str::<serde_json::Value>(event).unwrap()
        );
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());

    // `verify` and `apply` (which decodes on a thread of its own) stop at the first invalid
    // event without waiting for the rest of the input.
    for command in ["verify", "apply"] {
        let mut child = reading_stdin(command);
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(jsonl(&[RS, &content("orphan")]).as_bytes())
            .unwrap();
        stdin.flush().unwrap();
        let lines = Lines::of(child.stdout.take().unwrap());
        let verdict = lines.next().expect("a verdict while the input is open");
        assert!(
            verdict.contains(r#""ok":false,"at":1"#),
            "{command}: {verdict}"
        );
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "{command} did not end");
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(status.code(), Some(1), "{command}");
        drop(stdin);
    }
}

#[test]
fn inspect_reads_standard_input_twice_through_a_temporary_copy() {
    let events = [RS, TS, &content("Hello"), TE, RF];
    let path = file("inspect.sse", sse(&events));
    let from_file = agui(&["inspect", "--color", "never", &path]);
    let from_stdin = agui_with_stdin(
        &["inspect", "--color", "never", "-"],
        sse(&events).as_bytes(),
    );
    assert_eq!(from_file.code, 0, "{from_file:?}");
    assert_eq!(from_stdin.stdout, from_file.stdout);
    // A path that is a pipe cannot be opened twice either.
    #[cfg(target_os = "linux")]
    {
        let from_pipe = agui_with_stdin(
            &["inspect", "--color", "never", "/dev/stdin"],
            sse(&events).as_bytes(),
        );
        assert_eq!(from_pipe.stdout, from_file.stdout);
    }
    assert!(
        from_file.stdout.starts_with("5 events (SSE)"),
        "{}",
        from_file.stdout
    );
}

/// A `STATE_SNAPSHOT` of over a megabyte (its document kept as text by `apply`): rows of
/// escaped strings, floats and large integers, then `tail` as last members.
fn large_snapshot(tail: &str) -> String {
    let rows: Vec<String> = (0..12_000)
        .map(|i| {
            format!(
                r#"{{"id":{i},"name":"\u00e9 \"{i}\" \/","v":[1.5,-0,1E300,18446744073709551615],"ok":false}}"#
            )
        })
        .collect();
    format!(
        r#"{{"type":"STATE_SNAPSHOT","snapshot":{{"rows":[{}]{tail}}}}}"#,
        rows.join(", ")
    )
}

#[test]
fn apply_writes_large_snapshots_as_serde_json_writes_their_documents() {
    let first = large_snapshot(r#","n":1"#);
    let second = large_snapshot(r#","n":2"#);
    let repeated = large_snapshot(r#","rows":"none""#);
    let delta = r#"{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/n","value":3}]}"#;
    for (name, events) in [
        ("one", vec![RS, &first, RF]),
        ("two", vec![RS, &first, TS, &content("x"), TE, &second, RF]),
        ("patched", vec![RS, &first, delta, RF]),
        ("repeated", vec![RS, &repeated, RF]),
    ] {
        // What the state must be: the last snapshot's document, patched, as serde_json
        // reads and writes it.
        let mut want: serde_json::Value = serde_json::json!({});
        for e in &events {
            let e: serde_json::Value = serde_json::from_str(e).unwrap();
            match e["type"].as_str() {
                Some("STATE_SNAPSHOT") => want = e["snapshot"].clone(),
                Some("STATE_DELTA") => want["n"] = 3.into(),
                _ => {}
            }
        }
        let path = file(&format!("large-{name}.sse"), sse(&events));
        let out = agui(&["apply", &path]);
        assert_eq!(out.code, 0, "{name}: {out:?}");
        let state_at = out.stdout.find(r#","state":"#).unwrap() + r#","state":"#.len();
        let end = out.stdout.rfind(r#","pendingInterrupts":"#).unwrap();
        assert_eq!(
            &out.stdout[state_at..end],
            serde_json::to_string(&want).unwrap(),
            "{name}"
        );
        let applied: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(applied["state"], want, "{name}");
        assert_eq!(
            applied["pendingInterrupts"],
            serde_json::json!([]),
            "{name}"
        );
    }
}

/// Every stream command, as `agui` arguments before the file.
const STREAM_COMMANDS: [&[&str]; 8] = [
    &["verify"],
    &["apply"],
    &["inspect", "--color", "never"],
    &["expand"],
    &["compact"],
    &["encode"],
    &["encode", "--format", "proto"],
    &["decode"],
];

/// Whether `stderr` refuses a frame at the limit of 1024 bytes, naming the flag.
fn refused_at_1024(stderr: &str) -> bool {
    stderr.contains("limit of 1024 bytes") && stderr.contains("--max-frame-bytes")
}

#[test]
fn the_frame_limit_holds_for_the_first_line_and_for_array_elements() {
    // Just over 1024 bytes: the only line of a file, one element of an array.
    let long =
        serde_json::json!({"type": "CUSTOM", "name": "pad", "value": "p".repeat(1000)}).to_string();
    assert!((1025..1064).contains(&long.len()), "{}", long.len());
    let inputs = [
        ("first-line.jsonl", long.clone()),
        ("first-line-nl.jsonl", format!("{long}\n")),
        ("element.json", format!("[{RS},\n{long},{RF}]")),
        (
            "case-over.json",
            format!("{{\n\"name\":\"x\",\"events\":[{long}]\n}}"),
        ),
    ];
    for cmd in STREAM_COMMANDS {
        let sse = cmd[0] == "decode";
        for (name, text) in &inputs {
            let text = if sse {
                format!("data: {}\n\n", text.replace('\n', " "))
            } else {
                text.clone()
            };
            let path = file(&format!("limit-{}-{name}", cmd.join("-")), &text);
            let mut args = cmd.to_vec();
            args.extend(["--max-frame-bytes", "1024", &path]);
            let out = agui(&args);
            assert_eq!(out.code, 2, "{cmd:?} {name}: {out:?}");
            assert!(
                refused_at_1024(&out.stderr),
                "{cmd:?} {name}: {}",
                out.stderr
            );
            // With room, the same input is read.
            let at = args.len() - 2;
            args[at] = "4096";
            let out = agui(&args);
            assert_ne!(out.code, 2, "{cmd:?} {name} with room: {out:?}");
        }
    }
}

#[test]
fn a_huge_first_line_from_a_pipe_is_refused_before_it_is_read_whole() {
    // A writer offers 256 MiB of one line (or of one array element); every command must
    // stop at the limit, long before the writer is done.
    const OFFER: usize = 256 << 20;
    for cmd in STREAM_COMMANDS {
        for head in [
            &br#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":""#[..],
            b"[{},\"",
            b"data: {\"",
        ] {
            let sse = cmd[0] == "decode";
            if sse != head.starts_with(b"data:") {
                continue;
            }
            let mut args = cmd.to_vec();
            args.extend(["--max-frame-bytes", "1024", "-"]);
            let mut child = agui_command()
                .args(&args)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let mut stdin = child.stdin.take().unwrap();
            let head = head.to_vec();
            let writer = std::thread::spawn(move || {
                let block = vec![b'x'; 64 << 10];
                let mut written = 0;
                if stdin.write_all(&head).is_err() {
                    return written;
                }
                while written < OFFER {
                    match stdin.write(&block) {
                        Ok(n) => written += n,
                        Err(_) => break,
                    }
                }
                written
            });
            let mut stderr = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut stderr)
                .unwrap();
            let status = child.wait().unwrap();
            let written = writer.join().unwrap();
            assert_eq!(status.code(), Some(2), "{cmd:?}: {stderr}");
            assert!(refused_at_1024(&stderr), "{cmd:?}: {stderr}");
            assert!(
                written < OFFER,
                "{cmd:?}: the whole offer ({written} bytes) was read before the refusal"
            );
        }
    }
}

#[test]
fn verify_strict_fails_what_verify_only_warns_about() {
    let cases = [
        (
            r#"{"type":"FOO_BAR","x":1}"#,
            "unknown event type \"FOO_BAR\"",
        ),
        (
            r#"{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"1","role":"user","content":"hi","zzz":2}]}"#,
            "`messages[0].zzz` is not a field",
        ),
        (
            r#"{"type":"CUSTOM","name":"n","value":1,"extra":true}"#,
            "`extra` is not a field",
        ),
    ];
    for (event, says) in cases {
        let input = file("strict.jsonl", jsonl(&[RS, event, RF]));
        let lenient = agui(&["verify", &input]);
        assert_eq!((lenient.code, lenient.stdout.trim()), (0, r#"{"ok":true}"#));
        let strict = agui(&["verify", "--strict", &input]);
        assert_eq!(strict.code, 1, "{event}: {strict:?}");
        let verdict = strict.json();
        assert_eq!(verdict["at"], 1, "{event}");
        assert_eq!(verdict["rule"], "strict", "{event}");
        assert_has(verdict["error"].as_str().unwrap(), &["event 1", says]);
    }
    // A stream with nothing undeclared passes; one that breaks a rule gives that rule.
    let clean = file(
        "strict-clean.jsonl",
        jsonl(&[RS, TS, &content("a"), TE, RF]),
    );
    let out = agui(&["verify", "--strict", &clean]);
    assert_eq!((out.code, out.stdout.trim()), (0, r#"{"ok":true}"#));
    let broken = file("strict-broken.jsonl", jsonl(&[RS, &content("a"), RF]));
    let out = agui(&["verify", "--strict", &broken]);
    assert_eq!(out.code, 1);
    assert_eq!(out.json()["rule"], "V16");
}
