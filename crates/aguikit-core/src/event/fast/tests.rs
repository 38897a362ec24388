//! The fast path must agree with the serde path whenever it answers, and must answer for
//! the plain events that make up a stream.

use super::*;
use crate::event::decode::decode_serde;
use proptest::prelude::*;

/// Runs both paths on `text` (the differential check the `json_reader` fuzz target runs):
/// when the fast path takes the text it must give exactly what serde gives, serde must not
/// have warned, and the public entry points must agree. Returns whether the fast path took it.
fn agree(text: &str) -> bool {
    crate::differential::json_reader(text.as_bytes())
}

#[track_caller]
fn takes(text: &str) {
    assert!(agree(text), "the fast path refused {text:?}");
}

#[track_caller]
fn falls_back(text: &str) {
    assert!(!agree(text), "the fast path took {text:?}");
}

const TMC: &str = r#""type":"TEXT_MESSAGE_CONTENT""#;

#[test]
fn content_parts_borrow_plain_strings_and_answer_only_for_the_producers_layout() {
    use std::borrow::Cow;
    let p = Event::content_parts(r#"{"type":"TOOL_CALL_ARGS","toolCallId":"c","delta":"{}"}  "#)
        .expect("the layout producers write");
    assert_eq!(p.event_type, EventType::ToolCallArgs);
    assert!(matches!(
        (&p.id, &p.delta),
        (Cow::Borrowed("c"), Cow::Borrowed("{}"))
    ));
    let p = Event::content_parts(
        r#"{"type":"REASONING_MESSAGE_CONTENT","messageId":"m\u00e9","delta":"a\nb\ud83d\ude00"}"#,
    )
    .expect("escapes");
    assert_eq!(p.event_type, EventType::ReasoningMessageContent);
    assert!(matches!(&p.id, Cow::Owned(s) if s == "m\u{e9}"));
    assert_eq!(p.delta, "a\nb\u{1F600}");
    let control = "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"d\u{1}\"}";
    for other in [
        r#"{"type":"TEXT_MESSAGE_CONTENT","delta":"d","messageId":"m"}"#,
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"d","timestamp":1}"#,
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"d"}x"#,
        r#"{"type":"TEXT_MESSAGE_CONTENT", "messageId":"m","delta":"d"}"#,
        r#" {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"d"}"#,
        r#"{"type":"TOOL_CALL_ARGS","messageId":"m","delta":"d"}"#,
        r#"{"type":"TEXT_MESSAGE_END","messageId":"m"}"#,
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"\x"}"#,
        control,
    ] {
        assert!(Event::content_parts(other).is_none(), "{other}");
        agree(other);
    }
}

#[test]
fn plain_events_take_the_fast_path() {
    takes(r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"Hi"}"#);
    takes(r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"","delta":""}"#);
    takes(r#"{"type":"TOOL_CALL_ARGS","toolCallId":"c","delta":"{\"q\":1}"}"#);
    takes(
        r#"{"type":"REASONING_MESSAGE_CONTENT","messageId":"m","delta":"x","subagentRunId":"s"}"#,
    );
    takes(r#"{"type":"TEXT_MESSAGE_START","messageId":"m","role":"user","name":"n"}"#);
    takes(r#"{"type":"TEXT_MESSAGE_CHUNK"}"#);
    takes(
        r#"{"type":"TOOL_CALL_RESULT","messageId":"m","toolCallId":"c","content":"r","role":"tool"}"#,
    );
    takes(r#"{"type":"REASONING_MESSAGE_START","messageId":"m","role":"reasoning"}"#);
    takes(
        r#"{"type":"REASONING_ENCRYPTED_VALUE","subtype":"tool-call","entityId":"e","encryptedValue":"v"}"#,
    );
    takes(
        r#"{"type":"RUN_STARTED","threadId":"t","runId":"r","parentRunId":"p","protocolVersion":"1.0"}"#,
    );
    takes(r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r","timestamp":1700000000000}"#);
    takes(r#"{"type":"RUN_ERROR","message":"boom","code":"E"}"#);
    takes(r#"{"type":"SUBAGENT_FINISHED","subagentRunId":"s"}"#);
}

#[test]
fn canonical_content_layout() {
    // The layout producers write is matched whole; it must agree with serde all the same.
    for (t, id) in [
        ("TEXT_MESSAGE_CONTENT", "messageId"),
        ("REASONING_MESSAGE_CONTENT", "messageId"),
        ("TOOL_CALL_ARGS", "toolCallId"),
    ] {
        for (a, d) in [
            ("m", "d"),
            ("", ""),
            (r#"m\"1"#, r"a\nb\u00e9\ud83d\ude00"),
            ("é", "😀"),
        ] {
            takes(&format!(r#"{{"type":"{t}","{id}":"{a}","delta":"{d}"}}"#));
            takes(&format!(
                "{{\"type\":\"{t}\",\"{id}\":\"{a}\",\"delta\":\"{d}\"}} \n"
            ));
        }
        for bad in [
            format!(r#"{{"type":"{t}","{id}":"m","delta":"d"}}x"#),
            format!(r#"{{"type":"{t}","{id}":"m","delta":"d","delta":"e"}}"#),
            format!(r#"{{"type":"{t}","{id}":"m","delta":"d""#),
            format!(r#"{{"type":"{t}","{id}":"m","delta":"{}"}}"#, '\u{1}'),
            format!(r#"{{"type":"{t}","{id}":"m","delta":"\x"}}"#),
            format!(r#"{{"type":"{t}","{id}":"m","delta":"d"}}}}"#),
            format!(r#"{{"type":"{t}","{id}":"m","delta":5}}"#),
        ] {
            falls_back(&bad);
        }
        takes(&format!(
            r#"{{"type":"{t}","{id}":"m","delta":"d","timestamp":5}}"#
        ));
        takes(&format!(r#"{{"type":"{t}","delta":"d","{id}":"m"}}"#));
    }
}

#[test]
fn whitespace_and_member_order() {
    takes(
        " \t\r\n{ \"type\" :\t\"TEXT_MESSAGE_CONTENT\" ,\r\n \"messageId\"\n:\"m\" , \"delta\" : \"d\" }\n\t ",
    );
    takes(r#"{"messageId":"m","type":"TEXT_MESSAGE_CONTENT","delta":"d"}"#);
    takes(r#"{"messageId":"m","delta":"d","type":"TEXT_MESSAGE_CONTENT"}"#);
    takes(r#"{"delta":"d","timestamp":-5,"type":"TEXT_MESSAGE_CONTENT","messageId":"m"}"#);
}

#[test]
fn escapes_and_unicode() {
    takes(&format!(
        r#"{{{TMC},"messageId":"m","delta":"a\"b\\c\/d\b\f\n\r\t\u0041\u00e9\u20AC\ud83d\ude00\u0000z"}}"#
    ));
    takes(&format!(
        r#"{{{TMC},"messageId":"é😀中","delta":"\u00e9 and é"}}"#
    ));
    takes(r#"{"type":"TEXT_MESSAGE_START","messageId":"m","role":"\u0075ser"}"#);
    // serde_json refuses these; so must the fast path.
    for bad in [
        r#"\x"#,
        r#"\ud800"#,
        r#"\udc00"#,
        r#"\ud800\u0041"#,
        r#"\ud800x"#,
        r#"\u12"#,
        r#"\u12g4"#,
        "\u{1}",
        "\n",
        "\t",
        "\u{1f}",
    ] {
        falls_back(&format!(r#"{{{TMC},"messageId":"m","delta":"{bad}"}}"#));
    }
}

#[test]
fn timestamps() {
    for ok in [
        "0",
        "-5",
        "9007199254740991",
        "-9007199254740991",
        "-0",
        "1700000000000",
    ] {
        takes(&format!(
            r#"{{{TMC},"messageId":"m","delta":"d","timestamp":{ok}}}"#
        ));
    }
    for other in [
        "1.0",
        "1.5",
        "1e3",
        "1E3",
        "9007199254740992",
        "-9007199254740992",
        "12345678901234567890",
        "01",
        "-",
        "--1",
        "+1",
        "null",
        "\"1\"",
        "true",
    ] {
        falls_back(&format!(
            r#"{{{TMC},"messageId":"m","delta":"d","timestamp":{other}}}"#
        ));
    }
    falls_back(&format!(
        r#"{{{TMC},"messageId":"m","delta":"d","timestamp":1,"timestamp":2}}"#
    ));
}

#[test]
fn duplicate_unknown_and_missing_members() {
    // serde refuses a repeated field.
    falls_back(&format!(
        r#"{{{TMC},"messageId":"m","delta":"a","delta":"b"}}"#
    ));
    // A repeated `type` is ignored by serde like any member the struct lacks; the first
    // one decides the type.
    takes(&format!(
        r#"{{{TMC},"messageId":"m","type":"RAW","delta":"d"}}"#
    ));
    falls_back(&format!(
        r#"{{{TMC},"messageId":"m","type":5,"delta":"d"}}"#
    ));
    falls_back(&format!(
        r#"{{{TMC},"messageId":"m","type":"R\u0041W","delta":"d"}}"#
    ));
    // Unknown members (dropped by serde), base members the fast path leaves to serde.
    falls_back(&format!(
        r#"{{{TMC},"messageId":"m","delta":"d","extra":"x"}}"#
    ));
    falls_back(&format!(
        r#"{{{TMC},"messageId":"m","delta":"d","rawEvent":{{}}}}"#
    ));
    falls_back(&format!(
        r#"{{{TMC},"messageId":"m","delta":"d","metadata":{{"a":1}}}}"#
    ));
    // Missing required fields.
    falls_back(&format!(r#"{{{TMC},"messageId":"m"}}"#));
    falls_back(r#"{"type":"REASONING_MESSAGE_START","messageId":"m"}"#);
    // Escaped keys.
    falls_back(&format!(r#"{{{TMC},"messageId":"m","delt\u0061":"d"}}"#));
}

#[test]
fn wrong_types_and_nulls() {
    for value in ["5", "true", "null", "[\"d\"]", "{}", "1.5"] {
        falls_back(&format!(r#"{{{TMC},"messageId":"m","delta":{value}}}"#));
    }
    falls_back(&format!(
        r#"{{{TMC},"messageId":"m","delta":"d","subagentRunId":null}}"#
    ));
    // A legacy null (read as absent, with a warning).
    falls_back(
        r#"{"type":"TOOL_CALL_START","toolCallId":"c","toolCallName":"n","parentMessageId":null}"#,
    );
    falls_back(r#"{"type":"TEXT_MESSAGE_START","messageId":"m","role":"tool"}"#);
    falls_back(
        r#"{"type":"TOOL_CALL_RESULT","messageId":"m","toolCallId":"c","content":"r","role":"user"}"#,
    );
    falls_back(r#"{"type":"TOOL_CALL_RESULT","messageId":"m","toolCallId":"c","content":[]}"#);
    falls_back(
        r#"{"type":"REASONING_ENCRYPTED_VALUE","subtype":"x","entityId":"e","encryptedValue":"v"}"#,
    );
    falls_back(r#"{"type":"RUN_STARTED","threadId":"t","runId":"r","input":{}}"#);
}

#[test]
fn syntax_and_other_types() {
    for text in [
        "",
        " ",
        "{}",
        "[]",
        "\"x\"",
        "null",
        "\u{feff}{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"d\"}",
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"d"} x"#,
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"d"}}"#,
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"d",}"#,
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m""delta":"d"}"#,
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta""d"}"#,
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"d""#,
        r#"{,"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"d"}"#,
        r#"{"type":"THINKING_START"}"#,
        r#"{"type":"SOMETHING","a":"b"}"#,
        r#"{"a":"b"}"#,
    ] {
        falls_back(text);
    }
    // Every prefix of a valid event is invalid JSON.
    let full =
        r#" {"type":"TEXT_MESSAGE_CONTENT","messageId":"m\u00e9","delta":"d","timestamp":12} "#;
    for end in 0..full.len() - 2 {
        falls_back(&full[..end]);
    }
}

#[test]
fn bytes_that_are_not_utf8_go_to_serde() {
    for bytes in [
        &b"{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"\xff\"}"[..],
        b"{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"d\",\"x\":\"\xc3\"}",
        b"{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"d\"}\xff",
    ] {
        assert_eq!(Event::from_json_slice(bytes), decode_serde(bytes, None));
    }
}

#[test]
fn plain_text_scanning_at_every_alignment() {
    // Put each special character at every offset of the 8-byte scanning window.
    for len in 0..20 {
        let run = "a".repeat(len);
        takes(&format!(
            r#"{{{TMC},"messageId":"{run}","delta":"{run}\"{run}\\{run}"}}"#
        ));
        takes(&format!(
            r#"{{{TMC},"messageId":"{run}é","delta":"{run}\u0000"}}"#
        ));
        falls_back(&format!(
            r#"{{{TMC},"messageId":"{run}","delta":"{run}{}"}}"#,
            '\u{1f}'
        ));
        falls_back(&format!(r#"{{{TMC},"messageId":"{run}","delta":"{run}"#));
    }
}

#[test]
fn patch_events() {
    let delta = |ops: &str| format!(r#"{{"type":"STATE_DELTA","delta":{ops}}}"#);
    takes(&delta("[]"));
    takes(&delta(" [ ] "));
    takes(&delta(
        r#"[{"op":"add","path":"/a","value":1},{"op":"remove","path":"/b"},
            {"op":"replace","path":"","value":{"x":[1,2,{"y":null}]}},
            {"op":"move","from":"/c","path":"/d"},{"op":"copy","from":"/e","path":"/f/-"},
            {"op":"test","path":"/a~0b/a~1b/0","value":"s\u00e9\n"}]"#,
    ));
    takes(&delta(
        r#"[ { "value" : 1 , "path" : "/a" , "op" : "add" } ]"#,
    ));
    // The layout producers write, matched literally, and near misses of it.
    for ops in [
        r#"[{"op":"add","path":"/a","value":{"b":[1,"x"]}}]"#,
        r#"[{"op":"replace","path":"/a~1b","value":"v"},{"op":"test","path":"","value":null}]"#,
        r#"[{"op":"remove","path":"/a"},{"op":"move","from":"/b","path":"/c"}]"#,
        r#"[{"op":"copy","from":"/b","path":"/c/-"}]"#,
        r#"[{"op":"add","path":"/\u0041","value":1}]"#,
        r#"[{"op":"add","path":"/a","value":1 }]"#,
        r#"[{"op":"remove","path":"/a" }]"#,
    ] {
        takes(&delta(ops));
    }
    for ops in [
        r#"[{"op":"move","from":"/b","path":"/c","x":1}]"#,
        r#"[{"op":"remove","path":"/a","value":1}]"#,
        r#"[{"op":"add","path":"/a","value":1,"value":2}]"#,
        r#"[{"op":"add","path":"a","value":1}]"#,
        r#"[{"op":"move","from":"b","path":"/c"}]"#,
        r#"[{"op":"add","path":"/a","value":01}]"#,
        r#"[{"op":"add","path":"/a","value":[1,]}]"#,
        r#"[{"op":"add","path":"/a"}]"#,
        r#"[{"op":"copy","from":"/b"}]"#,
        r#"[{"op":"addx","path":"/a","value":1}]"#,
    ] {
        falls_back(&delta(ops));
    }
    takes(&delta(
        r#"[{"op":"\u0061dd","path":"/\u0061","value":null}]"#,
    ));
    takes(
        r#"{"type":"ACTIVITY_DELTA","messageId":"m","activityType":"t","patch":[{"op":"remove","path":"/x"}],"subagentRunId":"s","timestamp":3}"#,
    );
    // Every kind of value, parsed exactly as serde_json does.
    for value in [
        "0",
        "-1",
        "123456789012345678",
        "-123456789012345678",
        "1234567890123456789",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775808",
        "-9223372036854775809",
        "-0",
        "0.0",
        "-0.0",
        "1.5",
        "1e5",
        "1E-5",
        "2.5e+3",
        "0.1",
        "1.7976931348623157e308",
        "true",
        "false",
        "null",
        "\"\"",
        "\"a\\\"b\"",
        "{}",
        "[]",
        "{\"a\":{\"b\":[1,\"}\",\"]\",{\"c\":\"\\\"\"}]}}",
        " [ 1 , { } ] ",
    ] {
        takes(&delta(&format!(
            r#"[{{"op":"add","path":"/a","value":{value}}}]"#
        )));
    }
    // Deep values: the fast path builds down to level 120 (the value sits at level 4);
    // deeper ones go to serde, which allows 127 levels.
    let deep = |n: usize| "[".repeat(n) + &"]".repeat(n);
    let op = |value: String| delta(&format!(r#"[{{"op":"add","path":"/a","value":{value}}}]"#));
    takes(&op(deep(117)));
    for n in [118, 124, 125, 300] {
        falls_back(&op(deep(n)));
    }
    for ops in [
        // Dropped by serde (with a warning), or kept as extras.
        r#"[{"op":"spam","path":"/a"}]"#,
        r#"[{"path":"/a"}]"#,
        r#"[{"op":null,"path":"/a"}]"#,
        r#"[{"op":"remove","path":"/a","value":1}]"#,
        r#"[{"op":"add","path":"/a","value":1,"from":"/b"}]"#,
        r#"[{"op":"add","path":"/a","value":1,"x":2}]"#,
        // serde keeps the last of repeated members.
        r#"[{"op":"add","op":"remove","path":"/a"}]"#,
        r#"[{"op":"add","path":"/a","value":1,"value":2}]"#,
        // Errors.
        r#"[{"op":"add","path":"a","value":1}]"#,
        r#"[{"op":"add","path":"/~2","value":1}]"#,
        r#"[{"op":"add","path":5,"value":1}]"#,
        r#"[{"op":"add","value":1}]"#,
        r#"[{"op":"add","path":"/a"}]"#,
        r#"[{"op":"move","path":"/a"}]"#,
        r#"[{"op":"copy","path":"/a","from":"b"}]"#,
        r#"[{"op":"add","path":"/a","value":01}]"#,
        r#"[{"op":"add","path":"/a","value":1.}]"#,
        r#"[{"op":"add","path":"/a","value":-}]"#,
        r#"[{"op":"add","path":"/a","value":1e400}]"#,
        r#"[{"op":"add","path":"/a","value":tru}]"#,
        r#"[{"op":"add","path":"/a","value":nul}]"#,
        r#"[{"op":"add","path":"/a","value":[1,]}]"#,
        r#"[{"op":"add","path":"/a","value":{"a":1,}}]"#,
        r#"[{"op":"add","path":"/a","value":{"a" 1}}]"#,
        r#"[{"op":"add","path":"/a","value":[}]"#,
        r#"[{"op":"add","path":"/a","value":"\x"}]"#,
        r#"[{"op":"remove","path":"/a"},]"#,
        r#"[{"op":"remove","path":"/a"} {"op":"remove","path":"/b"}]"#,
        r#"[5]"#,
        r#"[[]]"#,
        r#"{}"#,
        r#"null"#,
        r#""x""#,
    ] {
        falls_back(&delta(ops));
    }
    falls_back(r#"{"type":"STATE_DELTA","delta":[],"delta":[]}"#);
    falls_back(r#"{"type":"STATE_DELTA"}"#);
    falls_back(r#"{"type":"ACTIVITY_DELTA","messageId":"m","patch":[]}"#);
}

#[test]
fn value_events() {
    for value in [
        "null",
        "0",
        "-0",
        "1.5",
        "\"s\\n\"",
        "[]",
        "{}",
        " { \"a\" : [ 1 , 2.5 , \"x\" , null , true , { } ] , \"b\" : { \"c\" : -7 } } ",
        // A repeated key keeps its first place and its last value, as in serde_json.
        r#"{"a":1,"b":2,"a":3}"#,
        r#"{"\u0061":1,"a\"b":2,"":3}"#,
    ] {
        takes(&format!(
            r#"{{"type":"STATE_SNAPSHOT","snapshot":{value}}}"#
        ));
        takes(&format!(r#"{{"type":"RAW","event":{value},"source":"s"}}"#));
        takes(&format!(
            r#"{{"type":"CUSTOM","name":"n","value":{value},"timestamp":1}}"#
        ));
    }
    let deep = |n: usize| "{\"a\":".repeat(n) + "1" + &"}".repeat(n);
    takes(&format!(
        r#"{{"type":"STATE_SNAPSHOT","snapshot":{}}}"#,
        deep(119)
    ));
    for n in [120, 125, 126, 127, 200] {
        falls_back(&format!(
            r#"{{"type":"STATE_SNAPSHOT","snapshot":{}}}"#,
            deep(n)
        ));
    }
    for text in [
        r#"{"type":"STATE_SNAPSHOT"}"#,
        r#"{"type":"STATE_SNAPSHOT","snapshot":1,"snapshot":2}"#,
        r#"{"type":"STATE_SNAPSHOT","snapshot":{"a":1,}}"#,
        r#"{"type":"STATE_SNAPSHOT","snapshot":{"a" 1}}"#,
        r#"{"type":"STATE_SNAPSHOT","snapshot":{a:1}}"#,
        r#"{"type":"STATE_SNAPSHOT","snapshot":[1 2]}"#,
        r#"{"type":"STATE_SNAPSHOT","snapshot":[1,]}"#,
        r#"{"type":"STATE_SNAPSHOT","snapshot":{"a":1}"#,
        r#"{"type":"STATE_SNAPSHOT","snapshot":nan}"#,
        r#"{"type":"STATE_SNAPSHOT","snapshot":1e999}"#,
        r#"{"type":"RAW"}"#,
        r#"{"type":"RAW","event":1,"source":null}"#,
        r#"{"type":"CUSTOM","value":1}"#,
        r#"{"type":"CUSTOM","name":"n"}"#,
    ] {
        falls_back(text);
    }
}

// ---------------------------------------------------------------------------------------
// Random events
// ---------------------------------------------------------------------------------------

/// What a field holds.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Str,
    /// A string that must be one of these.
    OneOf(&'static [&'static str]),
}

const TEXT_ROLES: Kind = Kind::OneOf(&["developer", "system", "assistant", "user"]);
const TOOL_ROLE: Kind = Kind::OneOf(&["tool"]);
const REASONING_ROLE: Kind = Kind::OneOf(&["reasoning"]);
const SUBTYPES: Kind = Kind::OneOf(&["tool-call", "message"]);
const SUB: (&str, bool, Kind) = opt("subagentRunId");

/// A required string member.
const fn req(name: &'static str) -> (&'static str, bool, Kind) {
    (name, true, Kind::Str)
}

/// An optional string member.
const fn opt(name: &'static str) -> (&'static str, bool, Kind) {
    (name, false, Kind::Str)
}

/// The flat events, written out independently of the fast path: (wire name, required,
/// kind) per member.
#[allow(clippy::type_complexity)]
const TABLE: &[(&str, &[(&str, bool, Kind)])] = &[
    (
        "TEXT_MESSAGE_CONTENT",
        &[req("messageId"), req("delta"), SUB],
    ),
    ("TOOL_CALL_ARGS", &[req("toolCallId"), req("delta"), SUB]),
    (
        "REASONING_MESSAGE_CONTENT",
        &[req("messageId"), req("delta"), SUB],
    ),
    (
        "TEXT_MESSAGE_CHUNK",
        &[
            opt("messageId"),
            ("role", false, TEXT_ROLES),
            opt("delta"),
            opt("name"),
            SUB,
        ],
    ),
    (
        "TOOL_CALL_CHUNK",
        &[
            opt("toolCallId"),
            opt("toolCallName"),
            opt("parentMessageId"),
            opt("delta"),
            SUB,
        ],
    ),
    (
        "REASONING_MESSAGE_CHUNK",
        &[opt("messageId"), opt("delta"), SUB],
    ),
    (
        "TEXT_MESSAGE_START",
        &[
            req("messageId"),
            ("role", false, TEXT_ROLES),
            opt("name"),
            SUB,
        ],
    ),
    ("TEXT_MESSAGE_END", &[req("messageId"), SUB]),
    (
        "TOOL_CALL_START",
        &[
            req("toolCallId"),
            req("toolCallName"),
            opt("parentMessageId"),
            SUB,
        ],
    ),
    ("TOOL_CALL_END", &[req("toolCallId"), SUB]),
    (
        "TOOL_CALL_RESULT",
        &[
            req("messageId"),
            req("toolCallId"),
            req("content"),
            ("role", false, TOOL_ROLE),
            SUB,
        ],
    ),
    ("STEP_STARTED", &[req("stepName"), SUB]),
    ("STEP_FINISHED", &[req("stepName"), SUB]),
    ("REASONING_START", &[req("messageId"), SUB]),
    (
        "REASONING_MESSAGE_START",
        &[req("messageId"), ("role", true, REASONING_ROLE), SUB],
    ),
    ("REASONING_MESSAGE_END", &[req("messageId"), SUB]),
    ("REASONING_END", &[req("messageId"), SUB]),
    (
        "REASONING_ENCRYPTED_VALUE",
        &[
            ("subtype", true, SUBTYPES),
            req("entityId"),
            req("encryptedValue"),
            SUB,
        ],
    ),
    (
        "SUBAGENT_STARTED",
        &[
            req("subagentRunId"),
            req("name"),
            opt("description"),
            opt("parentSubagentRunId"),
            opt("parentToolCallId"),
            opt("parentMessageId"),
        ],
    ),
    ("SUBAGENT_FINISHED", &[req("subagentRunId")]),
    (
        "SUBAGENT_ERROR",
        &[req("subagentRunId"), req("message"), opt("code")],
    ),
    (
        "RUN_STARTED",
        &[
            req("threadId"),
            req("runId"),
            opt("protocolVersion"),
            opt("parentRunId"),
        ],
    ),
    ("RUN_FINISHED", &[req("threadId"), req("runId")]),
    ("RUN_ERROR", &[req("message"), opt("code")]),
];

#[test]
fn the_table_lists_exactly_the_fast_types() {
    let mut table: Vec<_> = TABLE
        .iter()
        .map(|(t, _)| EventType::from_wire(t).unwrap())
        .collect();
    table.extend([
        EventType::StateDelta,
        EventType::ActivityDelta,
        EventType::StateSnapshot,
        EventType::Raw,
        EventType::Custom,
    ]);
    let mut flat = FLAT.to_vec();
    table.sort();
    flat.sort();
    assert_eq!(table, flat);
}

/// A piece of a JSON string's raw text, and whether serde_json accepts it.
fn piece() -> impl Strategy<Value = (String, bool)> {
    prop_oneof![
        6 => "[a-zA-Z0-9 .,:{}\\[\\]-]{0,12}".prop_map(|s| (s, true)),
        2 => prop::sample::select(vec!["é", "😀", "中", "\u{7f}", "\u{80}", "\u{ffff}"])
            .prop_map(|s| (s.to_owned(), true)),
        2 => prop::sample::select(vec![
            r#"\""#, r"\\", r"\/", r"\b", r"\f", r"\n", r"\r", r"\t", r"\u0041", r"\u00E9",
            r"\u20ac", r"\ud83d\ude00", r"\u0000", r"\u001f",
        ])
        .prop_map(|s| (s.to_owned(), true)),
        1 => prop::sample::select(vec![
            r"\x", r"\ud800", r"\udc00", r"\ud800\u0041", r"\u12", "\u{1}", "\n", "\u{1f}",
        ])
        .prop_map(|s| (s.to_owned(), false)),
    ]
}

/// A JSON string: its text (with quotes) and whether serde_json accepts it.
fn string() -> impl Strategy<Value = (String, bool)> {
    prop::collection::vec(piece(), 0..6).prop_map(|pieces| {
        let ok = pieces.iter().all(|(_, ok)| *ok);
        let body: String = pieces.into_iter().map(|(p, _)| p).collect();
        (format!("\"{body}\""), ok)
    })
}

/// A member value: its text and whether it is a plain string the fast path must take.
fn value(kind: Kind) -> impl Strategy<Value = (String, bool)> {
    let named = match kind {
        Kind::Str => string().boxed(),
        Kind::OneOf(names) => prop_oneof![
            4 => prop::sample::select(names.to_vec()).prop_map(|n| (format!("\"{n}\""), true)),
            // The same name with its first letter escaped: serde decodes it.
            1 => prop::sample::select(names.to_vec())
                .prop_map(|n| (format!("\"\\u{:04x}{}\"", n.as_bytes()[0], &n[1..]), true)),
            1 => string().prop_map(|(s, _)| (s, false)),
        ]
        .boxed(),
    };
    prop_oneof![
        12 => named,
        1 => prop::sample::select(vec!["null", "5", "true", "[]", "{}", "1.5", "[\"a\"]"])
            .prop_map(|s| (s.to_owned(), false)),
    ]
}

fn timestamp() -> impl Strategy<Value = (String, bool)> {
    prop_oneof![
        4 => (-9_007_199_254_740_991i64..=9_007_199_254_740_991).prop_map(|n| (n.to_string(), true)),
        1 => prop::sample::select(vec![
            "1.0", "2.5", "1e3", "9007199254740992", "-9007199254740992", "01", "null", "\"1\"",
        ])
        .prop_map(|s| (s.to_owned(), false)),
    ]
}

fn ws() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["", "", "", " ", "\n", "\t", " \r\n "])
}

/// A generated event: its JSON text and whether it is plain enough that the fast path
/// must take it.
fn flat_event() -> impl Strategy<Value = (String, bool)> {
    (0..TABLE.len())
        .prop_flat_map(|t| {
            let (name, fields) = TABLE[t];
            let members: Vec<_> = fields
                .iter()
                .map(|&(key, required, kind)| {
                    // Required members are nearly always there, optional ones half the time.
                    let present = if required { 0.97 } else { 0.5 };
                    (
                        prop::bool::weighted(present),
                        value(kind),
                        Just((key, required)),
                    )
                })
                .collect();
            (
                Just(name),
                members,
                prop::option::weighted(0.3, timestamp()),
                // Extra members: a repeat of a field, an unknown member, a second `type`.
                prop::option::weighted(0.05, 0..fields.len()),
                prop::option::weighted(
                    0.05,
                    prop::sample::select(vec![
                        r#""extra":"x""#,
                        r#""rawEvent":{}"#,
                        r#""metadata":{"a":1}"#,
                        r#""type":"RAW""#,
                        r#""type":5"#,
                    ]),
                ),
                any::<prop::sample::Index>(),
                prop::collection::vec(ws(), 40),
                prop::option::weighted(0.03, prop::sample::select(vec!["x", "}", ",", "{"])),
            )
        })
        .prop_map(
            |(name, members, ts, repeat, extra, type_at, spaces, trailer)| {
                let mut plain = true;
                let mut parts = Vec::new();
                for (present, (text, ok), (key, required)) in &members {
                    if *present {
                        plain &= ok;
                        parts.push(format!("\"{key}\":{text}"));
                    } else {
                        plain &= !required;
                    }
                }
                if let Some((text, ok)) = ts {
                    plain &= ok;
                    parts.push(format!("\"timestamp\":{text}"));
                }
                if let Some(i) = repeat.filter(|&i| members[i].0) {
                    plain = false;
                    parts.push(format!("\"{}\":\"again\"", members[i].2.0));
                }
                let at = type_at.index(parts.len() + 1);
                parts.insert(at, format!("\"type\":\"{name}\""));
                if let Some(extra) = extra {
                    // A second string `type` is ignored by serde (the first decides), and taken.
                    plain &= extra == r#""type":"RAW""#;
                    parts.push(extra.to_owned());
                }
                // Whitespace around every token.
                let mut spaces = spaces.into_iter().cycle();
                let mut sp = || spaces.next().unwrap_or("");
                let mut text = format!("{}{{{}", sp(), sp());
                for (i, part) in parts.iter().enumerate() {
                    if i > 0 {
                        text += &format!("{},{}", sp(), sp());
                    }
                    let (key, value) = part.split_once(':').unwrap_or((part, ""));
                    text += &format!("{key}{}:{}{value}", sp(), sp());
                }
                text += &format!("{}}}{}", sp(), sp());
                if let Some(trailer) = trailer {
                    plain = false;
                    text += trailer;
                }
                (text, plain)
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    /// Whenever the fast path answers, it answers what serde answers; and it answers for
    /// every plain event.
    #[test]
    fn fast_path_agrees_with_serde((text, plain) in flat_event()) {
        let took = agree(&text);
        prop_assert!(took || !plain, "the fast path refused a plain event: {}", text);
    }

    /// Random bytes around the shape of an event never make the paths disagree.
    #[test]
    fn fast_path_agrees_on_mutations((text, _) in flat_event(), at in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let mut bytes = text.into_bytes();
        if !bytes.is_empty() {
            let i = at.index(bytes.len());
            bytes[i] = byte;
        }
        match std::str::from_utf8(&bytes) {
            Ok(text) => {
                agree(text);
            }
            Err(_) => prop_assert_eq!(Event::from_json_slice(&bytes), decode_serde(&bytes, None)),
        }
    }
}

/// A JSON value's text and whether it is valid JSON.
fn json_value() -> impl Strategy<Value = (String, bool)> {
    let leaf = prop_oneof![
        3 => string(),
        3 => any::<i64>().prop_map(|n| (n.to_string(), true)),
        1 => any::<u64>().prop_map(|n| (n.to_string(), true)),
        2 => any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| (serde_json::to_string(&f).unwrap(), true)),
        2 => prop::sample::select(vec![
            "true", "false", "null", "-0", "0", "-0.0", "1e5", "1E-5", "2.5e+3",
            "18446744073709551616", "-9223372036854775809", "123456789012345678",
        ])
        .prop_map(|s| (s.to_owned(), true)),
        1 => prop::sample::select(vec!["01", "1.", "-", "1e", "tru", "nul", "+1", ".5"])
            .prop_map(|s| (s.to_owned(), false)),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|items| {
                let ok = items.iter().all(|(_, ok)| *ok);
                let texts: Vec<_> = items.into_iter().map(|(t, _)| t).collect();
                (format!("[{}]", texts.join(",")), ok)
            }),
            prop::collection::vec(("[a-z]{0,3}", inner), 0..4).prop_map(|members| {
                let ok = members.iter().all(|(_, (_, ok))| *ok);
                let texts: Vec<_> = members
                    .into_iter()
                    .map(|(k, (v, _))| format!("\"{k}\" : {v}"))
                    .collect();
                (format!("{{ {} }}", texts.join(" , ")), ok)
            }),
        ]
    })
}

/// A JSON Pointer's text and whether it is valid.
fn pointer_text() -> impl Strategy<Value = (String, bool)> {
    prop_oneof![
        6 => prop::collection::vec(
            prop::sample::select(vec!["a", "0", "-", "a~0b", "a~1b", "", "é", "x y", "\\u0041"]),
            0..4,
        )
        .prop_map(|tokens| (tokens.iter().map(|t| format!("/{t}")).collect(), true)),
        1 => prop::sample::select(vec!["a", "/~2", "/~", "a/b"]).prop_map(|s| (s.to_owned(), false)),
    ]
}

/// One operation's text and whether the fast path must take it.
fn patch_op() -> impl Strategy<Value = (String, bool)> {
    (
        prop::sample::select(vec![
            "add", "remove", "replace", "move", "copy", "test", "spam",
        ]),
        prop::bool::weighted(0.97),
        pointer_text(),
        pointer_text(),
        json_value(),
        // Whether `from` and `value` are there when the op does not call for them, or
        // missing when it does.
        prop::bool::weighted(0.05),
        prop::option::weighted(
            0.03,
            prop::sample::select(vec![r#""x":1"#, r#""op":"add""#]),
        ),
        any::<prop::sample::Index>(),
    )
        .prop_map(
            |(
                op,
                has_op,
                (path, path_ok),
                (from, from_ok),
                (value, value_ok),
                odd,
                extra,
                shuffle,
            )| {
                let uses_from = matches!(op, "move" | "copy");
                let uses_value = matches!(op, "add" | "replace" | "test");
                let mut plain = has_op && op != "spam" && path_ok && !odd && extra.is_none();
                let mut members = Vec::new();
                if has_op {
                    members.push(format!(r#""op":"{op}""#));
                }
                // `from` before `path`, as producers write it (the rotation varies that).
                if uses_from != odd {
                    members.push(format!(r#""from":"{from}""#));
                    plain &= from_ok;
                }
                members.push(format!(r#""path":"{path}""#));
                if uses_value != odd {
                    members.push(format!(r#""value":{value}"#));
                    plain &= value_ok;
                }
                if let Some(extra) = extra {
                    members.push(extra.to_owned());
                }
                // Half the time in the order producers write, with `op` first.
                let n = members.len();
                if shuffle.index(2 * n) >= n {
                    members.rotate_left(shuffle.index(n));
                }
                (format!("{{{}}}", members.join(",")), plain)
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Patch events: the fast path agrees with serde, and takes every plain one.
    #[test]
    fn patch_fast_path_agrees_with_serde(
        ops in prop::collection::vec(patch_op(), 0..5),
        activity in any::<bool>(),
        ws in ws(),
    ) {
        let plain = ops.iter().all(|(_, plain)| *plain);
        let texts: Vec<_> = ops.into_iter().map(|(t, _)| t).collect();
        let patch = format!("[{ws}{}{ws}]", texts.join(&format!("{ws},{ws}")));
        let text = if activity {
            format!(r#"{{"type":"ACTIVITY_DELTA","messageId":"m","activityType":"a","patch":{patch}}}"#)
        } else {
            format!(r#"{{"type":"STATE_DELTA",{ws}"delta":{ws}{patch}}}"#)
        };
        let took = agree(&text);
        prop_assert!(took || !plain, "the fast path refused a plain event: {}", text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Events carrying one JSON value: the fast path agrees with serde, and takes every
    /// valid one.
    #[test]
    fn value_fast_path_agrees_with_serde(
        (value, ok) in json_value(),
        kind in 0..3usize,
        ws in ws(),
    ) {
        let text = match kind {
            0 => format!(r#"{{"type":"STATE_SNAPSHOT",{ws}"snapshot":{ws}{value}{ws}}}"#),
            1 => format!(r#"{{"type":"RAW","event":{ws}{value}}}"#),
            _ => format!(r#"{{"type":"CUSTOM","value":{value},"name":"n"}}"#),
        };
        let took = agree(&text);
        prop_assert!(took || !ok, "the fast path refused a plain event: {}", text);
    }
}

/// Whether the JSON `text` has an object with a repeated key.
fn has_repeated_key(text: &str) -> bool {
    use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
    struct Repeats(bool);
    impl<'de> Deserialize<'de> for Repeats {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Repeats;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("JSON")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Repeats, A::Error> {
                    let (mut seen, mut any) = (std::collections::HashSet::new(), false);
                    while let Some((k, v)) = m.next_entry::<String, Repeats>()? {
                        any |= !seen.insert(k) || v.0;
                    }
                    Ok(Repeats(any))
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Repeats, A::Error> {
                    let mut any = false;
                    while let Some(v) = s.next_element::<Repeats>()? {
                        any |= v.0;
                    }
                    Ok(Repeats(any))
                }
                fn visit_bool<E>(self, _: bool) -> Result<Repeats, E> {
                    Ok(Repeats(false))
                }
                fn visit_i64<E>(self, _: i64) -> Result<Repeats, E> {
                    Ok(Repeats(false))
                }
                fn visit_u64<E>(self, _: u64) -> Result<Repeats, E> {
                    Ok(Repeats(false))
                }
                fn visit_f64<E>(self, _: f64) -> Result<Repeats, E> {
                    Ok(Repeats(false))
                }
                fn visit_str<E>(self, _: &str) -> Result<Repeats, E> {
                    Ok(Repeats(false))
                }
                fn visit_unit<E>(self) -> Result<Repeats, E> {
                    Ok(Repeats(false))
                }
            }
            d.deserialize_any(V)
        }
    }
    serde_json::from_str::<Repeats>(text).is_ok_and(|r| r.0)
}

/// A `STATE_SNAPSHOT` read with its document as text agrees with the tree the fast path
/// builds: the same event, and exactly the bytes serde_json writes of the tree, which read
/// back as the tree. Where it refuses, the fast path refuses too or the document repeats a
/// key. Returns whether it took the text.
fn text_agrees(text: &str, document: &str) -> bool {
    let tree = decode(text);
    let Some((event, json)) = state_snapshot_text(text) else {
        assert!(
            tree.is_none() || has_repeated_key(document),
            "refused as text, taken as a tree: {text:?}"
        );
        return false;
    };
    let Some(Event::StateSnapshot(mut want)) = tree else {
        panic!("taken as text, refused as a tree: {text:?}");
    };
    let snapshot = std::mem::take(&mut want.snapshot);
    assert_eq!(event, want, "{text:?}");
    assert_eq!(
        String::from_utf8(json.clone()).unwrap(),
        serde_json::to_string(&snapshot).unwrap(),
        "{text:?}"
    );
    assert_eq!(crate::event::value_of_text(&json), snapshot, "{text:?}");
    true
}

#[test]
fn snapshot_documents_as_text() {
    for document in [
        "null",
        "-0",
        "1e5",
        "2.5E-3",
        "18446744073709551616",
        "123456789012345678",
        r#""a\/b \u00e9 \ud83d\ude00 \" \\ \n \u0001""#,
        r#""plain é 😀""#,
        "[]",
        " [ 1 , [ ] , { } , [ [ true ] ] ] ",
        r#"{"a":{"b":[{"c":null}]},"\u0061b":1,"":2,"\"":3}"#,
    ] {
        let text = format!(r#"{{"type":"STATE_SNAPSHOT","snapshot":{document}}}"#);
        assert!(text_agrees(&text, document), "{text}");
    }
    // Members in any order, the subagent tag and a timestamp.
    assert!(text_agrees(
        r#" { "subagentRunId":"s", "type":"STATE_SNAPSHOT","timestamp":5, "snapshot" : {"x":[1]} } "#,
        r#"{"x":[1]}"#,
    ));
    // A repeated key, however deep or far apart: the tree keeps one member.
    let many: Vec<String> = (0..40).map(|i| format!(r#""k{i}":{i}"#)).collect();
    for document in [
        r#"{"a":1,"b":2,"a":3}"#.to_owned(),
        r#"[{"x":{"y":1,"y":1}}]"#.to_owned(),
        format!(r#"{{{},"k39":0}}"#, many.join(",")),
    ] {
        let text = format!(r#"{{"type":"STATE_SNAPSHOT","snapshot":{document}}}"#);
        assert!(decode(&text).is_some());
        assert!(!text_agrees(&text, &document), "{text}");
    }
    // Keys alike but for their escapes are the same key.
    let document = r#"{"ab":1,"\u0061b":2}"#;
    let text = format!(r#"{{"type":"STATE_SNAPSHOT","snapshot":{document}}}"#);
    assert!(!text_agrees(&text, document));
    // 40 distinct keys are no repeat.
    let document = format!("{{{}}}", many.join(","));
    let text = format!(r#"{{"type":"STATE_SNAPSHOT","snapshot":{document}}}"#);
    assert!(text_agrees(&text, &document));
    // As deep as the fast path builds, and no deeper.
    let deep = |n: usize| "[".repeat(n) + "1" + &"]".repeat(n);
    let text = format!(r#"{{"type":"STATE_SNAPSHOT","snapshot":{}}}"#, deep(119));
    assert!(text_agrees(&text, &deep(119)));
    let text = format!(r#"{{"type":"STATE_SNAPSHOT","snapshot":{}}}"#, deep(120));
    assert!(!text_agrees(&text, &deep(120)));
    // Other events, and what the fast path refuses, are not read as text.
    for text in [
        r#"{"type":"CUSTOM","name":"n","value":{}}"#,
        r#"{"type":"STATE_SNAPSHOT"}"#,
        r#"{"type":"STATE_SNAPSHOT","snapshot":{"a":1,}}"#,
        r#"{"type":"STATE_SNAPSHOT","snapshot":1,"snapshot":2}"#,
        r#"{"type":"STATE_SNAPSHOT","snapshot":"\u0000 ok","other":1}"#,
        r#"{"type":"STATE_SNAPSHOT","snapshot":1} x"#,
    ] {
        assert!(state_snapshot_text(text).is_none(), "{text}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// Any document, valid or not, with any whitespace: read as text exactly when the fast
    /// path reads its tree and no key repeats, and then as serde_json writes the tree.
    #[test]
    fn snapshot_text_agrees_with_the_tree((document, _) in json_value(), ws in ws()) {
        let text = format!(r#"{{"type":"STATE_SNAPSHOT",{ws}"snapshot":{ws}{document}{ws}}}"#);
        text_agrees(&text, &document);
    }
}

/// A number's text read by the fast path and by serde_json: the same `Value`, written the
/// same (which `==` alone would not show for `-0.0` and `0.0`), or both refusing it; for a
/// snapshot and for a patch value, through the entry points. Returns whether the fast path
/// answered (by itself, or through serde_json for long numbers).
fn number_agrees(text: &str) -> bool {
    let serde = serde_json::from_str::<Value>(text).ok();
    let mut r = Reader::new(text);
    let fast = r.number().filter(|_| r.at_end());
    if let Some(fast) = &fast {
        let serde = serde
            .as_ref()
            .unwrap_or_else(|| panic!("serde refuses {text:?}"));
        assert_eq!(fast, serde, "{text:?}");
        assert_eq!(fast.to_string(), serde.to_string(), "{text:?}");
    }
    for event in [
        format!(r#"{{"type":"STATE_SNAPSHOT","snapshot":[{text}]}}"#),
        format!(r#"{{"type":"STATE_DELTA","delta":[{{"op":"add","path":"/n","value":{text}}}]}}"#),
    ] {
        agree(&event);
        if let (Some(Event::StateSnapshot(e)), Some(serde)) = (decode(&event), &serde) {
            assert_eq!(e.snapshot[0].to_string(), serde.to_string(), "{event}");
        }
    }
    fast.is_some()
}

#[test]
fn floats_read_as_serde_json_reads_them() {
    for text in [
        "0.0",
        "-0.0",
        "-0e0",
        "0e-5",
        "1.0",
        "1.5",
        "-2.5E+3",
        "1e-7",
        "0.1",
        "0.30000000000000004",
        "9007199254740993.0",
        "2.2250738585072011e-308",
        "2.2250738585072012e-308",
        "4.9406564584124654e-324",
        "2.4703282292062327e-324",
        "2.4703282292062328e-324",
        "1.7976931348623157e308",
        "1.7976931348623158e308",
        "1234567890123456789e-10",
        "0.000000000000000000000000001",
        "-0.881641",
    ] {
        assert!(number_agrees(text), "the fast path refused {text:?}");
    }
    // Out of range: serde_json refuses it, and so does the fast path.
    for text in ["1.7976931348623159e308", "1e400", "-1e309"] {
        assert!(!number_agrees(text), "{text}");
        assert!(serde_json::from_str::<Value>(text).is_err(), "{text}");
    }
    // Long mantissas and exponents go to serde_json itself (and agree).
    for text in [
        "12345678901234567890.5",
        "0.123456789012345678901234567890",
        "1e-99999",
        "-1e-99999999999999999999",
    ] {
        assert!(number_agrees(text), "{text}");
    }
    assert!(!number_agrees("1e00000400"));
    // Not JSON numbers.
    for text in [
        "1.", ".5", "1e", "1e+", "01.5", "-.5", "1.5e-", "+1.5", "1.5.3", "0x1p3",
    ] {
        assert!(!number_agrees(text), "{text}");
        assert!(serde_json::from_str::<Value>(text).is_err(), "{text}");
    }
}

/// Float texts: as serde_json and Rust write them, and digits of every length.
fn float_text() -> impl Strategy<Value = String> {
    let finite = any::<f64>().prop_filter("finite", |f| f.is_finite());
    prop_oneof![
        finite
            .clone()
            .prop_map(|f| serde_json::to_string(&f).unwrap()),
        finite.prop_map(|f| format!("{f:e}")),
        (
            "-?(0|[1-9][0-9]{0,12})",
            "[0-9]{1,12}",
            prop::option::of("[eE][+-]?[0-9]{1,4}"),
        )
            .prop_map(|(i, f, e)| format!("{i}.{f}{}", e.unwrap_or_default())),
        ("-?[1-9][0-9]{0,20}", "[eE][+-]?[0-9]{1,3}").prop_map(|(i, e)| format!("{i}{e}")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    /// Any float the fast path reads is the `Value` serde_json reads, written alike.
    #[test]
    fn random_floats_read_as_serde_json_reads_them(text in float_text()) {
        number_agrees(&text);
    }
}
