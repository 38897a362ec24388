//! Unit tests of chunk expansion, one or more per rule (§4 of the client specification).

use super::Expander;
use crate::Event;
use serde_json::{Value, json};

fn ev(v: Value) -> Event {
    Event::from_value(v).expect("test event decodes")
}

/// Expands `input`; the output as JSON, or the failing index and rule.
fn expand(input: Vec<Value>) -> Result<Vec<Value>, (usize, &'static str)> {
    let mut x = Expander::new();
    let mut out = Vec::new();
    for (i, v) in input.into_iter().enumerate() {
        let before = out.len();
        if let Err(e) = x.push(ev(v), &mut out) {
            assert_eq!(out.len(), before, "a rejected chunk appends nothing");
            return Err((i, e.rule));
        }
    }
    x.finish();
    Ok(out
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect())
}

fn run_started() -> Value {
    json!({"type":"RUN_STARTED","threadId":"t","runId":"r"})
}

fn run_finished() -> Value {
    json!({"type":"RUN_FINISHED","threadId":"t","runId":"r"})
}

fn text(id: Option<&str>, delta: Option<&str>, tag: Option<&str>) -> Value {
    let mut v = json!({"type":"TEXT_MESSAGE_CHUNK"});
    if let Some(id) = id {
        v["messageId"] = json!(id);
    }
    if let Some(d) = delta {
        v["delta"] = json!(d);
    }
    if let Some(t) = tag {
        v["subagentRunId"] = json!(t);
    }
    v
}

fn types(out: &[Value]) -> Vec<&str> {
    out.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

#[test]
fn worked_example_of_the_specification() {
    // CH8 opener with role default and metadata, CH9 content with metadata and rawEvent,
    // CH13 timestamp dropped, CH14 metadata on both, CH2 bare END at the run's end.
    let out = expand(vec![
        json!({"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"a",
               "metadata":{"k":1},"rawEvent":{"R":true},"timestamp":5}),
        text(None, Some("b"), None),
        run_finished(),
    ])
    .unwrap();
    assert_eq!(
        out,
        vec![
            json!({"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant","metadata":{"k":1}}),
            json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a","metadata":{"k":1},"rawEvent":{"R":true}}),
            json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"b"}),
            json!({"type":"TEXT_MESSAGE_END","messageId":"m1"}),
            run_finished(),
        ]
    );
}

#[test]
fn ch1_lanes_assemble_independently() {
    let out = expand(vec![
        text(Some("a"), Some("1"), Some("s1")),
        text(Some("b"), Some("2"), Some("s2")),
        text(None, Some("3"), Some("s1")),
        text(None, Some("4"), Some("s2")),
    ])
    .unwrap();
    assert_eq!(
        out[4],
        json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"a","delta":"3","subagentRunId":"s1"})
    );
    assert_eq!(
        out[5],
        json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"b","delta":"4","subagentRunId":"s2"})
    );
}

#[test]
fn ch2_synthesized_end_carries_only_id_and_opener_tag() {
    let out = expand(vec![
        json!({"type":"TOOL_CALL_CHUNK","toolCallId":"c1","toolCallName":"f","delta":"{",
               "subagentRunId":"s1","metadata":{"k":1},"timestamp":3}),
        json!({"type":"STEP_STARTED","stepName":"x","subagentRunId":"s1"}),
    ])
    .unwrap();
    assert_eq!(
        out[2],
        json!({"type":"TOOL_CALL_END","toolCallId":"c1","subagentRunId":"s1"})
    );
    assert_eq!(types(&out)[3], "STEP_STARTED");
}

#[test]
fn own_lane_events_close_only_their_lane() {
    let out = expand(vec![
        text(Some("p"), Some("x"), None),
        text(Some("s"), Some("y"), Some("s1")),
        json!({"type":"STATE_DELTA","delta":[]}),
        text(None, Some("z"), Some("s1")),
    ])
    .unwrap();
    assert_eq!(
        types(&out),
        [
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "STATE_DELTA",
            "TEXT_MESSAGE_CONTENT",
        ]
    );
    assert_eq!(out[4]["messageId"], "p");
    // The parent's message has ended, so an id-less untagged chunk continues the sole
    // open text stream, s1's (CH6).
    assert_eq!(out[6]["messageId"], "s");
}

#[test]
fn every_own_lane_type_closes_the_lane() {
    let closers = [
        json!({"type":"TEXT_MESSAGE_START","messageId":"o"}),
        json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"o","delta":"d"}),
        json!({"type":"TEXT_MESSAGE_END","messageId":"o"}),
        json!({"type":"TOOL_CALL_START","toolCallId":"c","toolCallName":"f"}),
        json!({"type":"TOOL_CALL_ARGS","toolCallId":"c","delta":"d"}),
        json!({"type":"TOOL_CALL_END","toolCallId":"c"}),
        json!({"type":"TOOL_CALL_RESULT","messageId":"r","toolCallId":"c","content":"x"}),
        json!({"type":"STATE_SNAPSHOT","snapshot":{}}),
        json!({"type":"STATE_DELTA","delta":[]}),
        json!({"type":"CUSTOM","name":"n","value":1}),
        json!({"type":"STEP_STARTED","stepName":"s"}),
        json!({"type":"STEP_FINISHED","stepName":"s"}),
        json!({"type":"REASONING_START","messageId":"o"}),
        json!({"type":"REASONING_MESSAGE_START","messageId":"o","role":"reasoning"}),
        json!({"type":"REASONING_MESSAGE_CONTENT","messageId":"o","delta":"d"}),
        json!({"type":"REASONING_MESSAGE_END","messageId":"o"}),
        json!({"type":"REASONING_END","messageId":"o"}),
    ];
    for closer in closers {
        let ty = closer["type"].as_str().unwrap().to_owned();
        let out = expand(vec![text(Some("m"), Some("x"), None), closer]).unwrap();
        assert_eq!(types(&out)[2..], ["TEXT_MESSAGE_END", ty.as_str()], "{ty}");
    }
}

#[test]
fn run_level_events_close_all_lanes_in_opening_order() {
    for closer in [
        run_started(),
        run_finished(),
        json!({"type":"RUN_ERROR","message":"boom"}),
        json!({"type":"MESSAGES_SNAPSHOT","messages":[]}),
    ] {
        let out = expand(vec![
            text(Some("a"), None, Some("s2")),
            text(Some("b"), None, None),
            text(Some("c"), None, Some("s1")),
            closer.clone(),
        ])
        .unwrap();
        let ends: Vec<&Value> = out[3..6].iter().map(|e| &e["messageId"]).collect();
        assert_eq!(ends, [&json!("a"), &json!("b"), &json!("c")]);
        assert_eq!(out[6], closer);
    }
}

#[test]
fn reopening_a_lane_moves_it_to_the_end_of_the_order() {
    let out = expand(vec![
        text(Some("a"), None, None),
        text(Some("b"), None, Some("s1")),
        text(Some("a2"), None, None),
        run_finished(),
    ])
    .unwrap();
    let ends: Vec<&Value> = out[4..6].iter().map(|e| &e["messageId"]).collect();
    assert_eq!(ends, [&json!("b"), &json!("a2")]);
}

#[test]
fn subagent_terminals_close_their_own_lane() {
    for terminal in [
        json!({"type":"SUBAGENT_FINISHED","subagentRunId":"s1"}),
        json!({"type":"SUBAGENT_ERROR","subagentRunId":"s1","message":"x"}),
    ] {
        let out = expand(vec![
            text(Some("p"), None, None),
            text(Some("s"), None, Some("s1")),
            terminal.clone(),
        ])
        .unwrap();
        assert_eq!(
            out[2],
            json!({"type":"TEXT_MESSAGE_END","messageId":"s","subagentRunId":"s1"})
        );
        assert_eq!(out[3], terminal);
        assert_eq!(out.len(), 4, "the parent lane stays open");
    }
}

#[test]
fn some_events_close_nothing() {
    for passive in [
        json!({"type":"RAW","event":{}}),
        json!({"type":"ACTIVITY_SNAPSHOT","messageId":"a","activityType":"P","content":{}}),
        json!({"type":"ACTIVITY_DELTA","messageId":"a","activityType":"P","patch":[]}),
        json!({"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","entityId":"m","encryptedValue":"e"}),
        json!({"type":"SUBAGENT_STARTED","subagentRunId":"s9","name":"n"}),
        json!({"type":"SOMETHING_NEW","x":1}),
    ] {
        let out = expand(vec![
            text(Some("m"), Some("x"), None),
            passive.clone(),
            text(None, Some("y"), None),
        ])
        .unwrap();
        assert_eq!(out[2], passive, "passes through unchanged");
        assert_eq!(out[3]["type"], "TEXT_MESSAGE_CONTENT", "{passive}");
        assert_eq!(out[3]["messageId"], "m");
    }
}

#[test]
fn end_of_stream_discards_pending_streams_silently() {
    let mut x = Expander::new();
    let mut out = Vec::new();
    x.push(ev(text(Some("m"), Some("x"), None)), &mut out)
        .unwrap();
    assert!(x.has_pending());
    x.finish();
    assert!(!x.has_pending());
    assert_eq!(out.len(), 2);
}

#[test]
fn ch3_a_named_id_continues_in_the_lane_holding_it() {
    // Untagged chunk naming a subagent's open message continues it, with the opener's tag.
    let out = expand(vec![
        text(Some("m"), Some("x"), Some("s1")),
        text(Some("m"), Some("y"), None),
    ])
    .unwrap();
    assert_eq!(
        out[2],
        json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"y","subagentRunId":"s1"})
    );
}

#[test]
fn ch3_a_contradicting_tag_is_rejected() {
    assert_eq!(
        expand(vec![
            text(Some("m"), Some("x"), Some("s1")),
            text(Some("m"), Some("y"), Some("s2"))
        ]),
        Err((1, "CH3"))
    );
    assert_eq!(
        expand(vec![
            text(Some("m"), Some("x"), None),
            text(Some("m"), Some("y"), Some("s2"))
        ]),
        Err((1, "CH3"))
    );
}

#[test]
fn ch4_an_unheld_id_opens_in_its_tags_lane() {
    let out = expand(vec![
        text(Some("a"), None, None),
        text(Some("b"), None, Some("s1")),
    ])
    .unwrap();
    // The parent's stream is untouched: no END between the two STARTs.
    assert_eq!(types(&out), ["TEXT_MESSAGE_START", "TEXT_MESSAGE_START"]);
    assert_eq!(out[1]["subagentRunId"], "s1");
}

#[test]
fn ch5_a_tag_names_its_lane() {
    // s1 has no stream: the id-less chunk cannot open one there.
    assert_eq!(
        expand(vec![
            text(Some("a"), None, None),
            text(None, Some("x"), Some("s1"))
        ]),
        Err((1, "CH8"))
    );
}

#[test]
fn ch6_untagged_prefers_the_parent_stream() {
    let out = expand(vec![
        text(Some("s"), None, Some("s1")),
        text(Some("p"), None, None),
        text(None, Some("x"), None),
    ])
    .unwrap();
    assert_eq!(out[2]["messageId"], "p");
}

#[test]
fn ch6_untagged_falls_back_to_the_sole_stream_of_its_kind() {
    let out = expand(vec![
        json!({"type":"TOOL_CALL_CHUNK","toolCallId":"c","toolCallName":"f"}),
        text(Some("s"), None, Some("s1")),
        text(None, Some("x"), None),
    ])
    .unwrap();
    assert_eq!(
        out[2],
        json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"s","delta":"x","subagentRunId":"s1"})
    );
}

#[test]
fn ch6_several_candidates_are_ambiguous() {
    let r = expand(vec![
        text(Some("a"), None, Some("s1")),
        text(Some("b"), None, Some("s2")),
        text(Some("c"), None, Some("s3")),
        text(None, Some("x"), None),
    ]);
    assert_eq!(r, Err((3, "CH6")));
    let mut x = Expander::new();
    let mut out = Vec::new();
    for v in [
        text(Some("a"), None, Some("s1")),
        text(Some("b"), None, Some("s2")),
    ] {
        x.push(ev(v), &mut out).unwrap();
    }
    let e = x
        .push(ev(text(None, Some("x"), None)), &mut out)
        .unwrap_err();
    assert_eq!(
        e.message,
        "Ambiguous TEXT_MESSAGE_CHUNK: it carries neither a messageId nor a subagentRunId, but 2 lanes have an open text message. Attribute the chunk to the subagent it belongs to."
    );
}

#[test]
fn ch6_no_candidate_means_the_parent_lane() {
    // The parent's tool stream is closed by the id-less text chunk, which then fails.
    assert_eq!(
        expand(vec![
            json!({"type":"TOOL_CALL_CHUNK","toolCallId":"c","toolCallName":"f"}),
            text(None, Some("x"), None),
        ]),
        Err((1, "CH8"))
    );
}

#[test]
fn ch7_continuation_fields_must_agree() {
    let opener = json!({"type":"TEXT_MESSAGE_CHUNK","messageId":"m","delta":"a"});
    // Repeating the established (default) role is fine.
    expand(vec![
        opener.clone(),
        json!({"type":"TEXT_MESSAGE_CHUNK","role":"assistant","delta":"b"}),
    ])
    .unwrap();
    let mut x = Expander::new();
    let mut out = Vec::new();
    x.push(ev(opener.clone()), &mut out).unwrap();
    let e = x
        .push(
            ev(json!({"type":"TEXT_MESSAGE_CHUNK","role":"user"})),
            &mut out,
        )
        .unwrap_err();
    assert_eq!(e.rule, "CH7");
    assert_eq!(
        e.message,
        "Cannot continue text message 'm': chunk role 'user' does not match the open stream's role 'assistant'."
    );
    let e = x
        .push(
            ev(json!({"type":"TEXT_MESSAGE_CHUNK","name":"bob"})),
            &mut out,
        )
        .unwrap_err();
    assert_eq!(
        e.message,
        "Cannot continue text message 'm': chunk name 'bob' does not match the open stream's name (absent)."
    );
}

#[test]
fn ch7_tool_continuations_check_name_and_parent() {
    let opener =
        json!({"type":"TOOL_CALL_CHUNK","toolCallId":"c","toolCallName":"f","parentMessageId":"m"});
    expand(vec![
        opener.clone(),
        json!({"type":"TOOL_CALL_CHUNK","toolCallName":"f","parentMessageId":"m","delta":"{}"}),
    ])
    .unwrap();
    assert_eq!(
        expand(vec![
            opener.clone(),
            json!({"type":"TOOL_CALL_CHUNK","toolCallName":"g"})
        ]),
        Err((1, "CH7"))
    );
    assert_eq!(
        expand(vec![
            opener,
            json!({"type":"TOOL_CALL_CHUNK","parentMessageId":"n"})
        ]),
        Err((1, "CH7"))
    );
}

#[test]
fn ch7_reasoning_continuations_check_nothing() {
    let out = expand(vec![
        json!({"type":"REASONING_MESSAGE_CHUNK","messageId":"r","delta":"a"}),
        json!({"type":"REASONING_MESSAGE_CHUNK","delta":"b"}),
        run_finished(),
    ])
    .unwrap();
    assert_eq!(
        out,
        vec![
            json!({"type":"REASONING_MESSAGE_START","messageId":"r","role":"reasoning"}),
            json!({"type":"REASONING_MESSAGE_CONTENT","messageId":"r","delta":"a"}),
            json!({"type":"REASONING_MESSAGE_CONTENT","messageId":"r","delta":"b"}),
            json!({"type":"REASONING_MESSAGE_END","messageId":"r"}),
            run_finished(),
        ]
    );
}

#[test]
fn ch8_a_new_id_or_kind_closes_the_previous_stream() {
    let out = expand(vec![
        text(Some("a"), Some("1"), None),
        text(Some("b"), Some("2"), None),
        json!({"type":"TOOL_CALL_CHUNK","toolCallId":"c","toolCallName":"f","parentMessageId":"b"}),
    ])
    .unwrap();
    assert_eq!(
        types(&out),
        [
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "TOOL_CALL_START",
        ]
    );
    assert_eq!(
        out[6],
        json!({"type":"TOOL_CALL_START","toolCallId":"c","toolCallName":"f","parentMessageId":"b"})
    );
}

#[test]
fn ch8_openers_need_an_id_and_a_tool_name() {
    assert_eq!(expand(vec![text(None, Some("x"), None)]), Err((0, "CH8")));
    assert_eq!(
        expand(vec![json!({"type":"TOOL_CALL_CHUNK","toolCallName":"f"})]),
        Err((0, "CH8"))
    );
    assert_eq!(
        expand(vec![json!({"type":"TOOL_CALL_CHUNK","toolCallId":"c"})]),
        Err((0, "CH8"))
    );
    assert_eq!(
        expand(vec![json!({"type":"REASONING_MESSAGE_CHUNK","delta":"x"})]),
        Err((0, "CH8"))
    );
    let mut x = Expander::new();
    let e = x
        .push(
            ev(json!({"type":"TOOL_CALL_CHUNK","toolCallId":"c"})),
            &mut Vec::new(),
        )
        .unwrap_err();
    assert_eq!(e.message, "First TOOL_CALL_CHUNK must have a toolCallName");
}

#[test]
fn ch8_an_empty_id_is_a_present_id() {
    let out = expand(vec![
        text(Some("a"), Some("1"), None),
        text(Some(""), Some("2"), None),
    ])
    .unwrap();
    assert_eq!(out[2], json!({"type":"TEXT_MESSAGE_END","messageId":"a"}));
    assert_eq!(
        out[3],
        json!({"type":"TEXT_MESSAGE_START","messageId":"","role":"assistant"})
    );
}

#[test]
fn ch8_openers_carry_their_fields() {
    let out = expand(vec![
        json!({"type":"TEXT_MESSAGE_CHUNK","messageId":"m","role":"user","name":"ann","subagentRunId":"s1"}),
        json!({"type":"TOOL_CALL_CHUNK","toolCallId":"c","toolCallName":"f","subagentRunId":"s2","metadata":{"k":1}}),
    ])
    .unwrap();
    assert_eq!(
        out,
        vec![
            json!({"type":"TEXT_MESSAGE_START","messageId":"m","role":"user","name":"ann","subagentRunId":"s1"}),
            json!({"type":"TOOL_CALL_START","toolCallId":"c","toolCallName":"f","subagentRunId":"s2","metadata":{"k":1}}),
        ]
    );
}

#[test]
fn ch9_raw_event_alone_makes_a_content_event() {
    let out = expand(vec![
        json!({"type":"TOOL_CALL_CHUNK","toolCallId":"c","toolCallName":"f","rawEvent":[1]}),
    ])
    .unwrap();
    assert_eq!(
        out[1],
        json!({"type":"TOOL_CALL_ARGS","toolCallId":"c","delta":"","rawEvent":[1]})
    );
}

#[test]
fn ch9_content_takes_the_chunk_tag_else_the_opener_tag() {
    let out = expand(vec![
        json!({"type":"TOOL_CALL_CHUNK","toolCallId":"c","toolCallName":"f","subagentRunId":"s1"}),
        json!({"type":"TOOL_CALL_CHUNK","delta":"a","subagentRunId":"s1"}),
        json!({"type":"TOOL_CALL_CHUNK","toolCallId":"c","delta":"b"}),
    ])
    .unwrap();
    assert_eq!(
        out[1],
        json!({"type":"TOOL_CALL_ARGS","toolCallId":"c","delta":"a","subagentRunId":"s1"})
    );
    assert_eq!(
        out[2],
        json!({"type":"TOOL_CALL_ARGS","toolCallId":"c","delta":"b","subagentRunId":"s1"})
    );
}

#[test]
fn ch10_metadata_only_continuation_emits_a_zero_delta_content() {
    let out = expand(vec![
        json!({"type":"REASONING_MESSAGE_CHUNK","messageId":"r","delta":"a","subagentRunId":"s"}),
        json!({"type":"REASONING_MESSAGE_CHUNK","subagentRunId":"s","metadata":{"usage":1}}),
    ])
    .unwrap();
    assert_eq!(
        out[2],
        json!({"type":"REASONING_MESSAGE_CONTENT","messageId":"r","delta":"","metadata":{"usage":1},"subagentRunId":"s"})
    );
}

#[test]
fn ch11_bare_continuation_emits_nothing() {
    let out = expand(vec![
        text(Some("m"), Some("a"), None),
        json!({"type":"TEXT_MESSAGE_CHUNK","messageId":"m","timestamp":9}),
    ])
    .unwrap();
    assert_eq!(out.len(), 2);
}

#[test]
fn ch12_opener_without_delta_emits_only_the_start() {
    let out = expand(vec![
        json!({"type":"TEXT_MESSAGE_CHUNK","messageId":"m","metadata":{"k":1}}),
    ])
    .unwrap();
    assert_eq!(
        out,
        vec![
            json!({"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant","metadata":{"k":1}})
        ]
    );
}

#[test]
fn ch13_timestamps_are_dropped() {
    let out = expand(vec![
        json!({"type":"TEXT_MESSAGE_CHUNK","messageId":"m","delta":"a","timestamp":1}),
    ])
    .unwrap();
    assert!(out.iter().all(|e| e.get("timestamp").is_none()));
}

#[test]
fn ch14_metadata_lands_on_start_and_content_never_on_the_end() {
    let out = expand(vec![
        json!({"type":"TEXT_MESSAGE_CHUNK","messageId":"a","delta":"x","metadata":{"k":1}}),
        json!({"type":"TEXT_MESSAGE_CHUNK","messageId":"b","delta":"y","metadata":{"k":2}}),
    ])
    .unwrap();
    assert_eq!(out[0]["metadata"], json!({"k":1}));
    assert_eq!(out[1]["metadata"], json!({"k":1}));
    assert_eq!(out[2], json!({"type":"TEXT_MESSAGE_END","messageId":"a"}));
    assert_eq!(out[3]["metadata"], json!({"k":2}));
}

#[test]
fn ch15_unknown_properties_never_reach_expansion() {
    // Decoding strips them (enforcement, EN2), so there is no remainder to carry.
    let out = expand(vec![
        json!({"type":"TEXT_MESSAGE_CHUNK","messageId":"m","delta":"a","extra":1}),
    ])
    .unwrap();
    assert!(out.iter().all(|e| e.get("extra").is_none()));
}

#[test]
fn non_chunk_events_pass_through_unchanged() {
    let input = vec![
        run_started(),
        json!({"type":"TEXT_MESSAGE_START","messageId":"m","timestamp":4,"metadata":{"a":1}}),
        json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"x","rawEvent":{}}),
        json!({"type":"TEXT_MESSAGE_END","messageId":"m"}),
        run_finished(),
    ];
    assert_eq!(expand(input.clone()).unwrap(), input);
}
