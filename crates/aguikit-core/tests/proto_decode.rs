//! Decoding protobuf bodies that no conforming encoder writes: malformed bytes fail with a
//! clear error (never a panic); well-formed protobuf whose event breaks the schema is
//! judged exactly as the same event would be over JSON (the reference decode rebuilds the
//! JSON event and the client validates it like any other).
#![cfg(feature = "proto")]

use aguikit_core::Event;
use aguikit_core::codec::proto::{ProtoError, decode_event, encode_event};
use aguikit_core::warning;
use serde_json::{Value, json};

// A tiny protobuf writer for hand-made bodies.
fn varint(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
    out
}
fn key(field: u64, wire_type: u64) -> Vec<u8> {
    varint(field << 3 | wire_type)
}
fn msg(field: u64, parts: &[&[u8]]) -> Vec<u8> {
    let body = parts.concat();
    [key(field, 2), varint(body.len() as u64), body].concat()
}
fn s(field: u64, text: &str) -> Vec<u8> {
    msg(field, &[text.as_bytes()])
}
fn int(field: u64, v: u64) -> Vec<u8> {
    [key(field, 0), varint(v)].concat()
}
/// `base_event` with the given wire type number.
fn base(ty: u64) -> Vec<u8> {
    if ty == 0 {
        msg(1, &[])
    } else {
        msg(1, &[&int(1, ty)])
    }
}
/// A `google.protobuf.Value` holding a string / a struct with one string member.
fn vstr(field: u64, text: &str) -> Vec<u8> {
    msg(field, &[&s(3, text)])
}

fn malformed(body: &[u8]) -> String {
    match decode_event(body) {
        Err(e @ ProtoError::Malformed { .. }) => e.to_string(),
        other => panic!("expected a malformed-body error for {body:02x?}, got {other:?}"),
    }
}

#[test]
fn structurally_broken_bodies_are_malformed() {
    assert!(malformed(&[]).contains("no known event"));
    malformed(&[0x00]); // field 0
    malformed(&[0x0e]); // wire type 6
    malformed(&[0x0f]); // wire type 7
    malformed(&[0x1a, 0x05, 0x0a]); // length beyond the end
    malformed(&[0x1a]); // truncated length
    malformed(&[0x1b]); // unterminated group
    malformed(&[0x1c]); // stray end-group
    malformed(&int(3, 5)); // a known arm as a varint
    malformed(&[0xc0, 0x02, 0x01]); // only an unknown varint: not a later event
    malformed(&msg(40, &[&[0x0a, 0x05]])); // unknown arm whose payload is not protobuf
    // Two different events.
    let both = [msg(3, &[&base(2)]), msg(1, &[&base(0)])].concat();
    assert!(malformed(&both).contains("two different events"));
    // No base_event, or one naming another type.
    assert!(malformed(&msg(3, &[&s(2, "m")])).contains("base_event"));
    assert!(malformed(&msg(3, &[&base(1), &s(2, "m")])).contains("declares"));
    malformed(&msg(3, &[&msg(1, &[&int(1, 99)])]));
    // Not UTF-8.
    malformed(&msg(3, &[&base(2), &msg(2, &[&[0xff, 0xfe][..]])]));
    // Every strict prefix of a real body.
    let body = encode_event(
        &Event::from_json_str(
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r","result":{"a":[1,"x",null]},
                "outcome":{"type":"interrupt","interrupts":[{"id":"i","reason":"r"}]},
                "usage":[{"model":"m","inputTokens":3}],"timestamp":5,"metadata":{"k":true}}"#,
        )
        .unwrap(),
    )
    .unwrap();
    for cut in 0..body.len() {
        malformed(&body[..cut]);
    }
}

#[test]
fn contradictory_content_is_malformed() {
    let part = msg(1, &[&s(1, "hi")]);
    // TOOL_CALL_RESULT with string content and parts.
    let tcr = msg(
        22,
        &[
            &base(21),
            &s(3, "m"),
            &s(4, "c"),
            &s(5, "x"),
            &msg(7, &[&part]),
        ],
    );
    assert!(malformed(&tcr).contains("both"));
    // A content part with two arms.
    let two = msg(1, &[&s(1, "a")]);
    let tcr = msg(22, &[&base(21), &msg(7, &[&two, &msg(2, &[])])]);
    assert!(malformed(&tcr).contains("more than one arm"));
    // A part source with two arms.
    let src = msg(
        1,
        &[
            &msg(1, &[&s(1, "AA"), &s(2, "image/png")]),
            &msg(2, &[&s(1, "u")]),
        ],
    );
    let tcr = msg(22, &[&base(21), &msg(7, &[&msg(2, &[&src])])]);
    assert!(malformed(&tcr).contains("more than one arm"));
    // Messages: parts on a developer message, activity content on a user message, string
    // content next to activity content, string content and parts, an unknown role with two.
    let snapshot = |m: &[u8]| msg(9, &[&base(8), &msg(2, &[m])]);
    for m in [
        [s(1, "d"), s(2, "developer"), s(3, "x"), msg(8, &[&part])].concat(),
        [s(1, "u"), s(2, "user"), s(3, "x"), msg(13, &[])].concat(),
        [
            s(1, "a"),
            s(2, "activity"),
            s(3, "x"),
            s(12, "PLAN"),
            msg(13, &[]),
        ]
        .concat(),
        [s(1, "u"), s(2, "user"), s(3, "x"), msg(8, &[&part])].concat(),
        [s(1, "z"), s(2, "critic"), s(3, "x"), msg(13, &[])].concat(),
    ] {
        malformed(&snapshot(&m));
    }
    // The same inside RUN_STARTED.input.
    let input = msg(
        5,
        &[&msg(5, &[&s(1, "d"), &s(2, "system"), &msg(8, &[&part])])],
    );
    malformed(&msg(12, &[&base(11), &input]));
}

#[test]
fn never_panics_on_mutated_bodies() {
    let events = [
        r#"{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"u","role":"user","content":[{"type":"text","text":"hi"},{"type":"image","source":{"type":"url","value":"u"}}]},{"id":"a","role":"assistant","toolCalls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"id":"p","role":"activity","activityType":"PLAN","content":{"steps":[1,2]}}]}"#,
        r#"{"type":"RUN_STARTED","threadId":"t","runId":"r","input":{"threadId":"t","runId":"r","state":{"a":{"b":[true,null,1.5]}},"messages":[],"tools":[{"name":"n","description":"d","parameters":{"type":"object"}}],"resume":[{"interruptId":"i","status":"resolved","payload":1}]}}"#,
        r#"{"type":"STATE_DELTA","delta":[{"op":"add","path":"/a","value":{"x":[1]}},{"op":"move","from":"/a","path":"/b"}]}"#,
        r#"{"type":"TOOL_CALL_RESULT","messageId":"m","toolCallId":"c","content":[{"type":"document","source":{"type":"file","value":"f","provider":"openai"}}]}"#,
    ];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut outcomes = [0usize; 3];
    for json in events {
        let body = encode_event(&Event::from_json_str(json).unwrap()).unwrap();
        for _ in 0..5000 {
            let mut b = body.clone();
            for _ in 0..1 + next() % 3 {
                let i = (next() % b.len() as u64) as usize;
                match next() % 3 {
                    0 => b[i] = next() as u8,
                    1 => b[i] ^= 1 << (next() % 8),
                    _ => {
                        b.remove(i);
                        if b.is_empty() {
                            break;
                        }
                    }
                }
            }
            let (r, _) = warning::collect(|| decode_event(&b));
            outcomes[match r {
                Ok(_) => 0,
                Err(ProtoError::Malformed { .. }) => 1,
                Err(_) => 2,
            }] += 1;
        }
    }
    assert!(outcomes[1] > 0, "{outcomes:?}");
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    // 5000 nested lists in a CUSTOM value.
    let mut v = s(3, "leaf");
    for _ in 0..5000 {
        v = msg(6, &[&msg(1, &[&v])]);
    }
    let body = msg(11, &[&base(10), &s(2, "c"), &msg(3, &[&v])]);
    malformed(&body);
}

#[test]
fn repeated_arms_merge_and_unknown_fields_are_ignored() {
    let body = [
        msg(3, &[&base(2)]),
        msg(40, &[&s(1, "future field")]),
        msg(3, &[&s(2, "m"), &int(9, 1)]),
    ]
    .concat();
    assert_eq!(
        decode_event(&body).unwrap(),
        Some(Event::from_json_str(r#"{"type":"TEXT_MESSAGE_END","messageId":"m"}"#).unwrap())
    );
    // A later-protocol event: dropped with a warning.
    let (r, warnings) = warning::collect(|| decode_event(&msg(40, &[&s(1, "x")])));
    assert_eq!(r, Ok(None));
    assert_eq!(warnings.len(), 1);
    // Implicit strings come back as "" when absent.
    assert_eq!(
        decode_event(&msg(3, &[&base(2)])).unwrap(),
        Some(Event::from_json_str(r#"{"type":"TEXT_MESSAGE_END","messageId":""}"#).unwrap())
    );
}

/// Decodes `body` and checks the outcome against decoding `json` — the event the
/// reference's `decode` rebuilds from `body` — through this crate's JSON path: both fail,
/// or both give the same event (and at least the same warnings).
fn agrees(body: &[u8], json: Value) {
    let (proto, pw) = warning::collect(|| decode_event(body));
    let (via_json, jw) = warning::collect(|| Event::from_value(json.clone()));
    match (proto, via_json) {
        (Ok(Some(p)), Ok(j)) => {
            assert_eq!(
                serde_json::to_value(&p).unwrap(),
                serde_json::to_value(&j).unwrap(),
                "{json}"
            );
            // Decoding may also report what the reference's decode drops itself (parts
            // naming no known arm), which never reaches the JSON.
            assert!(
                pw.len() >= jw.len(),
                "warnings for {json}: {pw:?} vs {jw:?}"
            );
        }
        (Err(ProtoError::Invalid { .. }), Err(_)) => {}
        (p, j) => panic!("{json}: protobuf gave {p:?}, JSON gave {j:?}"),
    }
}

#[test]
fn schema_rules_match_the_json_path() {
    let tms = |role: &str| msg(1, &[&base(0), &s(2, "m"), &s(3, role)]);
    agrees(
        &tms("tool"),
        json!({"type":"TEXT_MESSAGE_START","messageId":"m","role":"tool"}),
    );
    agrees(
        &tms("user"),
        json!({"type":"TEXT_MESSAGE_START","messageId":"m","role":"user"}),
    );
    agrees(
        &msg(26, &[&base(25), &s(3, "m")]),
        json!({"type":"REASONING_MESSAGE_START","messageId":"m","role":""}),
    );
    agrees(&msg(7, &[&base(6)]), json!({"type":"STATE_SNAPSHOT"}));
    agrees(
        &msg(7, &[&base(6), &msg(2, &[])]),
        json!({"type":"STATE_SNAPSHOT"}),
    );
    agrees(
        &msg(10, &[&base(9), &msg(2, &[&int(1, 0)])]),
        json!({"type":"RAW","event":null}),
    );
    agrees(
        &msg(3, &[&msg(1, &[&int(1, 2), &int(2, 1 << 53)]), &s(2, "m")]),
        json!({"type":"TEXT_MESSAGE_END","messageId":"m","timestamp":9_007_199_254_740_992u64}),
    );
    agrees(
        &msg(
            3,
            &[&msg(1, &[&int(1, 2), &msg(3, &[&int(1, 0)])]), &s(2, "m")],
        ),
        json!({"type":"TEXT_MESSAGE_END","messageId":"m","rawEvent":null}),
    );
    // RUN_FINISHED outcomes.
    let rf = |extra: &[&[u8]]| {
        let mut parts: Vec<&[u8]> = vec![];
        let b = base(12);
        let t = s(2, "t");
        let r = s(3, "r");
        parts.extend([&b[..], &t[..], &r[..]]);
        parts.extend(extra);
        msg(13, &parts)
    };
    let run = |outcome: Value| json!({"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":outcome});
    agrees(
        &rf(&[&s(5, "interrupt")]),
        run(json!({"type":"interrupt","interrupts":[]})),
    );
    agrees(&rf(&[&s(5, "weird")]), run(json!({"type":"weird"})));
    agrees(
        &rf(&[&s(5, "success"), &s(8, "c1")]),
        run(json!({"type":"success","pendingToolCallIds":["c1"]})),
    );
    agrees(&rf(&[&s(5, "cancelled")]), run(json!({"type":"cancelled"})));
    let bad_schema = msg(6, &[&s(1, "i"), &s(2, "r"), &vstr(5, "not an object")]);
    agrees(
        &rf(&[&s(5, "interrupt"), &bad_schema]),
        run(
            json!({"type":"interrupt","interrupts":[{"id":"i","reason":"r","responseSchema":"not an object"}]}),
        ),
    );
    let null_md = msg(6, &[&s(1, "i"), &s(2, "r"), &msg(7, &[&int(1, 0)])]);
    agrees(
        &rf(&[&s(5, "interrupt"), &null_md]),
        run(json!({"type":"interrupt","interrupts":[{"id":"i","reason":"r","metadata":null}]})),
    );
    agrees(
        &rf(&[&msg(7, &[&[key(3, 0), varint(u64::MAX)].concat()])]),
        json!({"type":"RUN_FINISHED","threadId":"t","runId":"r","usage":[{"inputTokens":-1}]}),
    );
    agrees(
        &rf(&[&msg(4, &[&int(1, 0)])]),
        json!({"type":"RUN_FINISHED","threadId":"t","runId":"r","result":null}),
    );
    // SUBAGENT_FINISHED outcomes.
    let sf = |o: &str, ids: &[&str]| {
        let ids: Vec<u8> = ids.iter().flat_map(|i| s(5, i)).collect();
        msg(20, &[&base(17), &s(2, "sa"), &s(4, o), &ids])
    };
    let sub =
        |outcome: Value| json!({"type":"SUBAGENT_FINISHED","subagentRunId":"sa","outcome":outcome});
    agrees(
        &sf("suspended", &["i1"]),
        sub(json!({"type":"suspended","interruptIds":["i1"]})),
    );
    agrees(&sf("suspended", &[]), sub(json!({"type":"suspended"})));
    agrees(&sf("weird", &[]), sub(json!({"type":"weird"})));
    // Messages.
    let snap = |ms: &[&[u8]]| {
        let list: Vec<u8> = ms.iter().flat_map(|m| msg(2, &[m])).collect();
        msg(9, &[&base(8), &list])
    };
    let snapshot = |ms: Value| json!({"type":"MESSAGES_SNAPSHOT","messages":ms});
    agrees(
        &snap(&[
            &[s(1, "x"), s(2, "critic"), s(3, "hm")].concat(),
            &[s(1, "u"), s(2, "user")].concat(),
        ]),
        snapshot(
            json!([{"id":"x","role":"critic","content":"hm"},{"id":"u","role":"user","content":[]}]),
        ),
    );
    agrees(
        &snap(&[&[s(1, "d"), s(2, "developer")].concat()]),
        snapshot(json!([{"id":"d","role":"developer"}])),
    );
    agrees(
        &snap(&[&[s(1, "t"), s(2, "tool"), s(3, "ok")].concat()]),
        snapshot(json!([{"id":"t","role":"tool","content":"ok"}])),
    );
    agrees(
        &snap(&[&[s(1, "p"), s(2, "activity"), s(12, "PLAN")].concat()]),
        snapshot(json!([{"id":"p","role":"activity","activityType":"PLAN"}])),
    );
    let call = msg(5, &[&s(1, "c"), &msg(3, &[])]);
    agrees(
        &snap(&[&[s(1, "a"), s(2, "assistant"), call].concat()]),
        snapshot(
            json!([{"id":"a","role":"assistant","toolCalls":[{"id":"c","type":"","function":{"name":"","arguments":""}}]}]),
        ),
    );
    let call = msg(5, &[&s(1, "c"), &s(2, "function")]);
    agrees(
        &snap(&[&[s(1, "a"), s(2, "assistant"), call].concat()]),
        snapshot(json!([{"id":"a","role":"assistant","toolCalls":[{"id":"c","type":"function"}]}])),
    );
    // Parts: no arm (dropped), a media part without source (invalid), a source with no arm
    // (dropped), null metadata (absent).
    let parts = [
        msg(8, &[]),
        msg(8, &[&msg(2, &[&msg(1, &[])])]),
        msg(8, &[&msg(1, &[&s(1, "hi"), &msg(3, &[&int(1, 0)])])]),
    ]
    .concat();
    agrees(
        &snap(&[&[s(1, "u"), s(2, "user"), parts].concat()]),
        snapshot(
            json!([{"id":"u","role":"user","content":[{"type":"text","text":"hi","metadata":null}]}]),
        ),
    );
    agrees(
        &snap(&[&[s(1, "u"), s(2, "user"), msg(8, &[&msg(3, &[])])].concat()]),
        snapshot(json!([{"id":"u","role":"user","content":[{"type":"audio"}]}])),
    );
    // TOOL_CALL_RESULT role and REASONING_ENCRYPTED_VALUE subtype.
    agrees(
        &msg(
            22,
            &[
                &base(21),
                &s(3, "m"),
                &s(4, "c"),
                &s(5, "x"),
                &s(6, "assistant"),
            ],
        ),
        json!({"type":"TOOL_CALL_RESULT","messageId":"m","toolCallId":"c","content":"x","role":"assistant"}),
    );
    agrees(
        &msg(31, &[&base(30), &s(3, "thing"), &s(4, "e"), &s(5, "v")]),
        json!({"type":"REASONING_ENCRYPTED_VALUE","subtype":"thing","entityId":"e","encryptedValue":"v"}),
    );
    // RUN_STARTED input: arrays always present, resume status checked.
    let resume = msg(9, &[&s(1, "i"), &s(2, "later")]);
    agrees(
        &msg(
            12,
            &[&base(11), &s(2, "t"), &s(3, "r"), &msg(5, &[&resume])],
        ),
        json!({"type":"RUN_STARTED","threadId":"t","runId":"r","input":{"threadId":"","runId":"","messages":[],"tools":[],"context":[],"resume":[{"interruptId":"i","status":"later"}]}}),
    );
    agrees(
        &msg(
            12,
            &[
                &base(11),
                &s(2, "t"),
                &s(3, "r"),
                &msg(5, &[&s(1, "t"), &msg(4, &[&int(1, 0)])]),
            ],
        ),
        json!({"type":"RUN_STARTED","threadId":"t","runId":"r","input":{"threadId":"t","runId":"","state":null,"messages":[],"tools":[],"context":[],"resume":[]}}),
    );
    // JSON Patch operations: unknown op numbers dropped, missing members and bad pointers
    // rejected, stray members kept.
    let op = |parts: &[&[u8]]| msg(2, parts);
    let delta = |ops: &[Vec<u8>]| msg(8, &[&base(7), &ops.concat()]);
    let state_delta = |ops: Value| json!({"type":"STATE_DELTA","delta":ops});
    agrees(
        &delta(&[
            op(&[&int(1, 9), &s(2, "/a")]),
            op(&[&int(1, 1), &s(2, "/b")]),
        ]),
        state_delta(json!([{"op":"9","path":"/a"},{"op":"remove","path":"/b"}])),
    );
    agrees(
        &delta(&[op(&[&s(2, "/a")])]),
        state_delta(json!([{"op":"add","path":"/a"}])),
    );
    agrees(
        &delta(&[op(&[&s(2, "/a"), &msg(4, &[&int(1, 0)])])]),
        state_delta(json!([{"op":"add","path":"/a","value":null}])),
    );
    agrees(
        &delta(&[op(&[&s(2, "a"), &msg(4, &[&int(1, 0)])])]),
        state_delta(json!([{"op":"add","path":"a","value":null}])),
    );
    agrees(
        &delta(&[op(&[&int(1, 3), &s(2, "/a")])]),
        state_delta(json!([{"op":"move","path":"/a"}])),
    );
    agrees(
        &delta(&[op(&[&int(1, 4), &s(2, "/a"), &s(3, "/~2")])]),
        state_delta(json!([{"op":"copy","path":"/a","from":"/~2"}])),
    );
    agrees(
        &delta(&[op(&[&int(1, 1), &s(2, "/a"), &s(3, "/f"), &vstr(4, "v")])]),
        state_delta(json!([{"op":"remove","path":"/a","from":"/f","value":"v"}])),
    );
    agrees(
        &msg(
            24,
            &[
                &base(23),
                &s(3, "m"),
                &s(4, "PLAN"),
                &msg(5, &[&int(1, 2), &s(2, ""), &vstr(4, "x")]),
            ],
        ),
        json!({"type":"ACTIVITY_DELTA","messageId":"m","activityType":"PLAN","patch":[{"op":"replace","path":"","value":"x"}]}),
    );
}

#[test]
fn patch_members_round_trip_as_the_reference_writes_them() {
    // A stray `value` on remove and `from` on add are written (the reference spreads the
    // whole operation into the message); other unknown members are not.
    let e = Event::from_json_str(
        r#"{"type":"STATE_DELTA","delta":[{"op":"remove","path":"/a","value":1,"note":"x"},{"op":"add","path":"/b","from":"/c","value":2}]}"#,
    )
    .unwrap();
    let back = decode_event(&encode_event(&e).unwrap()).unwrap().unwrap();
    assert_eq!(
        serde_json::to_value(&back).unwrap(),
        json!({"type":"STATE_DELTA","delta":[{"op":"remove","path":"/a","value":1},{"op":"add","path":"/b","value":2,"from":"/c"}]})
    );
}
