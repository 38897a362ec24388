//! Unit tests of verification, one or more per rule (§5 of the client specification).

use super::Verifier;
use crate::Event;
use serde_json::{Value, json};

fn ev(v: Value) -> Event {
    Event::from_value(v).expect("test event decodes")
}

/// Verifies `events` after a `RUN_STARTED`; the index (within `events`) and rule of the
/// first rejection.
fn verify(events: Vec<Value>) -> Result<(), (usize, &'static str)> {
    let mut all = vec![rs()];
    all.extend(events);
    verify_raw(all).map_err(|(i, r)| (i - 1, r))
}

/// Verifies `events` as given.
fn verify_raw(events: Vec<Value>) -> Result<(), (usize, &'static str)> {
    let mut v = Verifier::new();
    for (i, e) in events.into_iter().enumerate() {
        v.push(&ev(e)).map_err(|e| (i, e.rule))?;
    }
    v.finish().map_err(|e| (usize::MAX, e.rule))
}

fn rejects(events: Vec<Value>, at: usize, rule: &str) {
    assert_eq!(verify(events), Err((at, rule)));
}

fn message(events: Vec<Value>) -> String {
    let mut v = Verifier::new();
    v.push(&ev(rs())).unwrap();
    for e in events {
        if let Err(e) = v.push(&ev(e)) {
            return e.message;
        }
    }
    panic!("accepted")
}

fn rs() -> Value {
    json!({"type":"RUN_STARTED","threadId":"t","runId":"r"})
}
fn rf() -> Value {
    json!({"type":"RUN_FINISHED","threadId":"t","runId":"r"})
}
fn re() -> Value {
    json!({"type":"RUN_ERROR","message":"boom"})
}

/// An event of `ty` with `fields`, tagged with `tag` when given.
fn e(ty: &str, fields: Value, tag: Option<&str>) -> Value {
    let mut v = fields;
    v["type"] = json!(ty);
    if let Some(t) = tag {
        v["subagentRunId"] = json!(t);
    }
    v
}
fn tm_start(id: &str, tag: Option<&str>) -> Value {
    e("TEXT_MESSAGE_START", json!({"messageId": id}), tag)
}
fn tm_content(id: &str, tag: Option<&str>) -> Value {
    e(
        "TEXT_MESSAGE_CONTENT",
        json!({"messageId": id, "delta": "x"}),
        tag,
    )
}
fn tm_end(id: &str, tag: Option<&str>) -> Value {
    e("TEXT_MESSAGE_END", json!({"messageId": id}), tag)
}
fn tc_start(id: &str, parent: Option<&str>, tag: Option<&str>) -> Value {
    let mut v = e(
        "TOOL_CALL_START",
        json!({"toolCallId": id, "toolCallName": "f"}),
        tag,
    );
    if let Some(p) = parent {
        v["parentMessageId"] = json!(p);
    }
    v
}
fn tc_args(id: &str, tag: Option<&str>) -> Value {
    e(
        "TOOL_CALL_ARGS",
        json!({"toolCallId": id, "delta": "{"}),
        tag,
    )
}
fn tc_end(id: &str, tag: Option<&str>) -> Value {
    e("TOOL_CALL_END", json!({"toolCallId": id}), tag)
}
fn step(ty: &str, name: &str, tag: Option<&str>) -> Value {
    e(ty, json!({"stepName": name}), tag)
}
fn sub_started(id: &str, parent: Option<&str>) -> Value {
    let mut v = json!({"type":"SUBAGENT_STARTED","subagentRunId": id, "name": "n"});
    if let Some(p) = parent {
        v["parentSubagentRunId"] = json!(p);
    }
    v
}
fn sub_finished(id: &str) -> Value {
    json!({"type":"SUBAGENT_FINISHED","subagentRunId": id})
}
fn r_start(ty: &str, id: &str, tag: Option<&str>) -> Value {
    let mut v = e(ty, json!({"messageId": id}), tag);
    if ty == "REASONING_MESSAGE_START" {
        v["role"] = json!("reasoning");
    }
    v
}

// ---- V1–V5, V54, V55: the run flow ----

#[test]
fn v1_nothing_but_run_started_after_run_error() {
    rejects(vec![re(), tm_start("m", None)], 1, "V1");
    rejects(vec![re(), re()], 1, "V1");
    rejects(vec![re(), rf()], 1, "V1");
    verify(vec![re(), rs(), rf()]).unwrap();
}

#[test]
fn v2_only_run_error_or_run_started_after_run_finished() {
    rejects(vec![rf(), tm_start("m", None)], 1, "V2");
    rejects(vec![rf(), rf()], 1, "V2");
    verify(vec![rf(), re()]).unwrap();
    verify(vec![rf(), rs(), rf()]).unwrap();
}

#[test]
fn v3_the_first_event_must_start_or_error_the_run() {
    assert_eq!(verify_raw(vec![tm_start("m", None)]), Err((0, "V3")));
    assert_eq!(verify_raw(vec![rf()]), Err((0, "V3")));
    verify_raw(vec![re()]).unwrap();
    verify_raw(vec![re(), rs(), rf()]).unwrap();
    verify_raw(vec![]).unwrap();
}

#[test]
fn v4_no_run_started_while_a_run_is_active() {
    rejects(vec![rs()], 0, "V4");
}

#[test]
fn v5_a_new_run_resets_all_run_state() {
    // An open message does not survive a RUN_ERROR into the next run.
    rejects(
        vec![tm_start("m", None), re(), rs(), tm_content("m", None)],
        3,
        "V16",
    );
    // Owners, steps and subagents are forgotten too.
    verify(vec![
        tm_start("m", Some("s1")),
        tm_end("m", None),
        step("STEP_STARTED", "a", None),
        sub_started("s1", None),
        re(),
        rs(),
        tm_start("m", Some("s2")),
        tm_end("m", None),
        step("STEP_STARTED", "a", None),
        step("STEP_FINISHED", "a", None),
        sub_started("s1", None),
        sub_finished("s1"),
        rf(),
    ])
    .unwrap();
}

#[test]
fn v54_v55_run_finished_and_run_error() {
    verify(vec![rf()]).unwrap();
    // RUN_ERROR with everything still open.
    verify(vec![
        tm_start("m", None),
        tc_start("c", None, None),
        step("STEP_STARTED", "a", None),
        sub_started("s", None),
        re(),
    ])
    .unwrap();
}

// ---- V6–V12, V39, V40, V44, V45, V47: enforced when decoding ----

#[test]
fn decode_time_rules_reject_before_verification() {
    let bad = [
        // V6
        json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"x","subagentRunId":null}),
        // V7
        json!({"type":"SUBAGENT_STARTED","subagentRunId":"s","name":"n","description":null}),
        json!({"type":"SUBAGENT_STARTED","subagentRunId":"s","name":"n","parentSubagentRunId":null}),
        // V8
        json!({"type":"SUBAGENT_FINISHED","subagentRunId":"s","outcome":null}),
        json!({"type":"SUBAGENT_ERROR","subagentRunId":"s","message":"m","code":null}),
        // V10, V11
        json!({"type":"SUBAGENT_FINISHED","subagentRunId":"s","outcome":{"type":"suspended","interruptIds":null}}),
        json!({"type":"SUBAGENT_FINISHED","subagentRunId":"s","outcome":{"type":"suspended","interruptIds":[1]}}),
        // V12
        json!({"type":"RUN_FINISHED","threadId":"t","runId":"r",
               "outcome":{"type":"interrupt","interrupts":[{"id":"i","reason":"x","subagentRunId":null}]}}),
        // V39, V40, V44, V45
        json!({"type":"SUBAGENT_STARTED","name":"n"}),
        json!({"type":"SUBAGENT_STARTED","subagentRunId":"s"}),
        json!({"type":"SUBAGENT_FINISHED"}),
        json!({"type":"SUBAGENT_ERROR","subagentRunId":"s"}),
    ];
    for v in bad {
        assert!(Event::from_value(v.clone()).is_err(), "{v}");
    }
}

#[test]
fn v9_an_unknown_outcome_type_is_stripped_when_decoding() {
    let v = json!({"type":"SUBAGENT_FINISHED","subagentRunId":"s","outcome":{"type":"weird"}});
    let Event::SubagentFinished(f) = ev(v) else {
        panic!()
    };
    assert_eq!(f.outcome, None);
}

// ---- V13–V18: text messages ----

#[test]
fn v13_a_text_message_cannot_start_twice() {
    rejects(vec![tm_start("m", None), tm_start("m", None)], 1, "V13");
    assert_eq!(
        message(vec![tm_start("m", None), tm_start("m", None)]),
        "Cannot send 'TEXT_MESSAGE_START' event: A text message with ID 'm' is already in progress. Complete it with 'TEXT_MESSAGE_END' first."
    );
}

#[test]
fn v14_a_reopen_must_agree_with_the_recorded_owner() {
    rejects(
        vec![
            tm_start("m", Some("s1")),
            tm_end("m", None),
            tm_start("m", Some("s2")),
        ],
        2,
        "V14",
    );
    // The parent is an owner too.
    rejects(
        vec![
            tm_start("m", None),
            tm_end("m", None),
            tm_start("m", Some("s2")),
        ],
        2,
        "V14",
    );
    // Owners seeded by a snapshot, RUN_STARTED.input or a tool result count.
    rejects(
        vec![
            json!({"type":"MESSAGES_SNAPSHOT","messages":[{"id":"m","role":"assistant","subagentRunId":"s1"}]}),
            tm_start("m", Some("s2")),
        ],
        1,
        "V14",
    );
    rejects(
        vec![
            json!({"type":"TOOL_CALL_RESULT","messageId":"m","toolCallId":"c","content":"x"}),
            tm_start("m", Some("s2")),
        ],
        1,
        "V14",
    );
}

#[test]
fn v15_an_untagged_reopen_keeps_the_owner() {
    verify(vec![
        tm_start("m", Some("s1")),
        tm_end("m", None),
        tm_start("m", None),
        tm_content("m", Some("s1")),
        tm_end("m", None),
        tm_start("m", Some("s1")),
        tm_end("m", Some("s1")),
        rf(),
    ])
    .unwrap();
    // ... so an untagged reopen does not hand the message to the parent.
    rejects(
        vec![
            tm_start("m", Some("s1")),
            tm_end("m", None),
            tm_start("m", None),
            tm_content("m", Some("s2")),
        ],
        3,
        "V18",
    );
}

#[test]
fn v16_v17_content_and_end_need_an_open_message() {
    rejects(vec![tm_content("m", None)], 0, "V16");
    rejects(vec![tm_end("m", None)], 0, "V17");
    rejects(
        vec![
            tm_start("m", None),
            tm_end("m", None),
            tm_content("m", None),
        ],
        2,
        "V16",
    );
    assert_eq!(
        message(vec![tm_end("m", None)]),
        "Cannot send 'TEXT_MESSAGE_END' event: No active text message found with ID 'm'. A 'TEXT_MESSAGE_START' event must be sent first."
    );
}

#[test]
fn v18_continuations_must_agree_with_the_opener() {
    rejects(
        vec![tm_start("m", Some("s1")), tm_content("m", Some("s2"))],
        1,
        "V18",
    );
    rejects(vec![tm_start("m", None), tm_end("m", Some("s2"))], 1, "V18");
    verify(vec![
        tm_start("m", Some("s1")),
        tm_content("m", None),
        tm_content("m", Some("s1")),
        tm_end("m", None),
    ])
    .unwrap();
    assert_eq!(
        message(vec![tm_start("m", None), tm_content("m", Some("s2"))]),
        "Cannot send 'TEXT_MESSAGE_CONTENT': subagentRunId 's2' does not match the message 'm' opener's subagent '(the parent agent)'."
    );
}

// ---- V19–V26: tool calls ----

#[test]
fn v19_a_tool_call_cannot_start_twice() {
    rejects(
        vec![tc_start("c", None, None), tc_start("c", None, None)],
        1,
        "V19",
    );
}

#[test]
fn v20_a_tool_call_belongs_to_its_parent_messages_owner() {
    rejects(
        vec![
            tm_start("m", Some("s1")),
            tc_start("c", Some("m"), Some("s2")),
        ],
        1,
        "V20",
    );
    rejects(
        vec![tm_start("m", None), tc_start("c", Some("m"), Some("s2"))],
        1,
        "V20",
    );
    // An unknown parent message constrains nothing.
    verify(vec![
        tc_start("c", Some("zz"), Some("s2")),
        tc_end("c", None),
    ])
    .unwrap();
}

#[test]
fn v21_a_tool_call_reopen_must_agree_with_its_owner() {
    rejects(
        vec![
            tc_start("c", None, Some("s1")),
            tc_end("c", None),
            tc_start("c", None, Some("s2")),
        ],
        2,
        "V21",
    );
    // Seeded from history: an assistant message's tool calls belong to its owner.
    rejects(
        vec![
            json!({"type":"MESSAGES_SNAPSHOT","messages":[{"id":"m","role":"assistant","subagentRunId":"s1",
                "toolCalls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}]}),
            tc_start("c", None, Some("s2")),
        ],
        1,
        "V21",
    );
}

#[test]
fn v22_an_untagged_reopen_inherits_its_parents_owner() {
    rejects(
        vec![
            tm_start("m1", Some("s1")),
            tm_start("m2", Some("s2")),
            tc_start("c", Some("m1"), None),
            tc_end("c", None),
            tc_start("c", Some("m2"), None),
        ],
        4,
        "V22",
    );
}

#[test]
fn v23_the_owner_is_the_tag_else_the_parent_messages_owner() {
    // Inherited from the parent message: a tagged ARGS from another subagent is rejected.
    rejects(
        vec![
            tm_start("m", Some("s1")),
            tc_start("c", Some("m"), None),
            tc_args("c", Some("s2")),
        ],
        2,
        "V25",
    );
    verify(vec![
        tm_start("m", Some("s1")),
        tc_start("c", Some("m"), None),
        tc_args("c", Some("s1")),
        tc_end("c", None),
        tm_end("m", None),
        rf(),
    ])
    .unwrap();
    // No tag, no known parent: the parent agent.
    rejects(
        vec![tc_start("c", None, None), tc_args("c", Some("s1"))],
        1,
        "V25",
    );
}

#[test]
fn v24_args_and_end_need_an_open_tool_call() {
    rejects(vec![tc_args("c", None)], 0, "V24");
    rejects(vec![tc_end("c", None)], 0, "V24");
    rejects(
        vec![
            tc_start("c", None, None),
            tc_end("c", None),
            tc_end("c", None),
        ],
        2,
        "V24",
    );
}

#[test]
fn v25_args_and_end_must_agree_with_the_opener() {
    rejects(
        vec![tc_start("c", None, Some("s1")), tc_args("c", Some("s2"))],
        1,
        "V25",
    );
    rejects(
        vec![tc_start("c", None, Some("s1")), tc_end("c", Some("s2"))],
        1,
        "V25",
    );
}

#[test]
fn v26_tool_results_are_always_allowed_and_re_own_their_message() {
    let result = |tag: Option<&str>| {
        e(
            "TOOL_CALL_RESULT",
            json!({"messageId":"r","toolCallId":"c","content":"x"}),
            tag,
        )
    };
    verify(vec![
        result(None),
        tc_start("c", None, None),
        result(Some("s9")),
        tc_end("c", None),
    ])
    .unwrap();
    // The newest result decides who owns the minted message.
    rejects(
        vec![result(Some("s1")), result(None), tm_start("r", Some("s1"))],
        2,
        "V14",
    );
    verify(vec![
        result(None),
        result(Some("s1")),
        tm_start("r", Some("s1")),
    ])
    .unwrap();
}

// ---- V27–V29: steps ----

#[test]
fn v27_a_step_cannot_start_twice_for_one_owner() {
    rejects(
        vec![
            step("STEP_STARTED", "a", None),
            step("STEP_STARTED", "a", None),
        ],
        1,
        "V27",
    );
    rejects(
        vec![
            step("STEP_STARTED", "a", Some("s")),
            step("STEP_STARTED", "a", Some("s")),
        ],
        1,
        "V27",
    );
    assert_eq!(
        message(vec![
            step("STEP_STARTED", "a", Some("s")),
            step("STEP_STARTED", "a", Some("s"))
        ]),
        "Step \"a\" is already active for 'STEP_STARTED' in subagent 's'"
    );
    // Different owners may share a step name.
    verify(vec![
        step("STEP_STARTED", "a", None),
        step("STEP_STARTED", "a", Some("s")),
    ])
    .unwrap();
    // The empty-string subagent is not the parent.
    verify(vec![
        step("STEP_STARTED", "a", None),
        step("STEP_STARTED", "a", Some("")),
    ])
    .unwrap();
}

#[test]
fn v28_a_step_is_finished_by_whoever_started_it() {
    rejects(
        vec![
            step("STEP_STARTED", "a", None),
            step("STEP_FINISHED", "a", Some("s")),
        ],
        1,
        "V28",
    );
    rejects(
        vec![
            step("STEP_STARTED", "a", Some("s")),
            step("STEP_FINISHED", "a", None),
        ],
        1,
        "V28",
    );
    assert_eq!(
        message(vec![
            step("STEP_STARTED", "a", None),
            step("STEP_FINISHED", "a", Some("s"))
        ]),
        "Cannot send 'STEP_FINISHED' for step \"a\" attributed to subagent 's': that step is open under the parent agent. A step must be finished by whoever started it."
    );
}

#[test]
fn v29_a_step_must_have_been_started() {
    rejects(vec![step("STEP_FINISHED", "a", None)], 0, "V29");
    rejects(
        vec![
            step("STEP_STARTED", "a", None),
            step("STEP_FINISHED", "a", None),
            step("STEP_FINISHED", "a", None),
        ],
        2,
        "V29",
    );
    // Out of order is fine.
    verify(vec![
        step("STEP_STARTED", "a", None),
        step("STEP_STARTED", "b", None),
        step("STEP_FINISHED", "a", None),
        step("STEP_FINISHED", "b", None),
        rf(),
    ])
    .unwrap();
}

// ---- V30, V31: activities ----

fn activity_snapshot(id: &str, replace: Option<bool>, tag: Option<&str>) -> Value {
    let mut v = e(
        "ACTIVITY_SNAPSHOT",
        json!({"messageId": id, "activityType": "P", "content": {}}),
        tag,
    );
    if let Some(r) = replace {
        v["replace"] = json!(r);
    }
    v
}
fn activity_delta(id: &str, tag: Option<&str>) -> Value {
    e(
        "ACTIVITY_DELTA",
        json!({"messageId": id, "activityType": "P", "patch": []}),
        tag,
    )
}

#[test]
fn v30_snapshots_record_the_owner_unless_they_do_not_replace() {
    // A replacing snapshot re-owns.
    verify(vec![
        activity_snapshot("a", None, Some("s1")),
        activity_snapshot("a", Some(true), Some("s2")),
        activity_delta("a", Some("s2")),
    ])
    .unwrap();
    // replace:false does not transfer ownership...
    rejects(
        vec![
            activity_snapshot("a", None, Some("s1")),
            activity_snapshot("a", Some(false), Some("s2")),
            activity_delta("a", Some("s2")),
        ],
        2,
        "V31",
    );
    // ... but does record the owner of a new activity.
    rejects(
        vec![
            activity_snapshot("a", Some(false), Some("s1")),
            activity_delta("a", Some("s2")),
        ],
        1,
        "V31",
    );
    // A seeded activity counts as known.
    rejects(
        vec![
            json!({"type":"MESSAGES_SNAPSHOT","messages":[{"id":"a","role":"activity","activityType":"P","content":{}}]}),
            activity_snapshot("a", Some(false), Some("s2")),
            activity_delta("a", Some("s2")),
        ],
        2,
        "V31",
    );
}

#[test]
fn v31_deltas_must_agree_with_the_owner() {
    rejects(
        vec![
            activity_snapshot("a", None, None),
            activity_delta("a", Some("s1")),
        ],
        1,
        "V31",
    );
    verify(vec![
        activity_delta("unknown", Some("s1")),
        activity_snapshot("a", None, None),
        activity_delta("a", None),
    ])
    .unwrap();
}

// ---- V32–V38: reasoning ----

#[test]
fn v32_v33_reasoning_openers_cannot_repeat_an_open_id() {
    rejects(
        vec![
            r_start("REASONING_START", "r", None),
            r_start("REASONING_START", "r", None),
        ],
        1,
        "V32",
    );
    rejects(
        vec![
            r_start("REASONING_MESSAGE_START", "r", None),
            r_start("REASONING_MESSAGE_START", "r", None),
        ],
        1,
        "V33",
    );
    // A span and a message may share an id.
    verify(vec![
        r_start("REASONING_START", "r", None),
        r_start("REASONING_MESSAGE_START", "r", None),
        e(
            "REASONING_MESSAGE_CONTENT",
            json!({"messageId":"r","delta":"x"}),
            None,
        ),
        e("REASONING_MESSAGE_END", json!({"messageId":"r"}), None),
        e("REASONING_END", json!({"messageId":"r"}), None),
        rf(),
    ])
    .unwrap();
}

#[test]
fn v34_span_and_message_share_the_reasoning_owner() {
    rejects(
        vec![
            r_start("REASONING_START", "r", Some("s1")),
            r_start("REASONING_MESSAGE_START", "r", Some("s2")),
        ],
        1,
        "V34",
    );
    rejects(
        vec![
            json!({"type":"MESSAGES_SNAPSHOT","messages":[{"id":"r","role":"reasoning","content":"x"}]}),
            r_start("REASONING_START", "r", Some("s2")),
        ],
        1,
        "V34",
    );
}

#[test]
fn v35_reasoning_content_and_end_need_an_open_message() {
    rejects(
        vec![e(
            "REASONING_MESSAGE_CONTENT",
            json!({"messageId":"r","delta":"x"}),
            None,
        )],
        0,
        "V35",
    );
    rejects(
        vec![e("REASONING_MESSAGE_END", json!({"messageId":"r"}), None)],
        0,
        "V35",
    );
    // A span is not a message.
    rejects(
        vec![
            r_start("REASONING_START", "r", None),
            e("REASONING_MESSAGE_END", json!({"messageId":"r"}), None),
        ],
        1,
        "V35",
    );
}

#[test]
fn v36_reasoning_end_needs_an_open_span() {
    rejects(
        vec![e("REASONING_END", json!({"messageId":"r"}), None)],
        0,
        "V36",
    );
    rejects(
        vec![
            r_start("REASONING_MESSAGE_START", "r", None),
            e("REASONING_END", json!({"messageId":"r"}), None),
        ],
        1,
        "V36",
    );
}

#[test]
fn v37_reasoning_continuations_must_agree_with_the_opener() {
    let open = r_start("REASONING_MESSAGE_START", "r", Some("s1"));
    rejects(
        vec![
            open.clone(),
            e(
                "REASONING_MESSAGE_CONTENT",
                json!({"messageId":"r","delta":"x"}),
                Some("s2"),
            ),
        ],
        1,
        "V37",
    );
    rejects(
        vec![
            open,
            e(
                "REASONING_MESSAGE_END",
                json!({"messageId":"r"}),
                Some("s2"),
            ),
        ],
        1,
        "V37",
    );
    rejects(
        vec![
            r_start("REASONING_START", "r", None),
            e("REASONING_END", json!({"messageId":"r"}), Some("s2")),
        ],
        1,
        "V37",
    );
}

#[test]
fn v38_encrypted_values_must_agree_with_the_entity_named() {
    let enc = |subtype: &str, id: &str, tag: Option<&str>| {
        e(
            "REASONING_ENCRYPTED_VALUE",
            json!({"subtype": subtype, "entityId": id, "encryptedValue": "e"}),
            tag,
        )
    };
    // Tool calls, even after they closed.
    rejects(
        vec![
            tc_start("x", None, Some("s1")),
            tc_end("x", None),
            enc("tool-call", "x", Some("s2")),
        ],
        2,
        "V38",
    );
    // Messages: text first, then reasoning; ids are per kind.
    rejects(
        vec![tm_start("x", Some("s1")), enc("message", "x", Some("s2"))],
        1,
        "V38",
    );
    rejects(
        vec![
            r_start("REASONING_MESSAGE_START", "y", Some("s1")),
            enc("message", "y", Some("s2")),
        ],
        1,
        "V38",
    );
    verify(vec![
        tc_start("x", None, Some("s1")),
        enc("message", "x", Some("s2")),
        enc("tool-call", "zz", Some("s2")),
    ])
    .unwrap();
}

// ---- V41–V46, V53: subagents ----

#[test]
fn v41_an_active_subagent_cannot_start_again() {
    rejects(
        vec![sub_started("s", None), sub_started("s", None)],
        1,
        "V41",
    );
}

#[test]
fn v42_a_subagent_id_is_used_once_per_run() {
    rejects(
        vec![
            sub_started("s", None),
            sub_finished("s"),
            sub_started("s", None),
        ],
        2,
        "V42",
    );
    rejects(
        vec![
            sub_started("s", None),
            json!({"type":"SUBAGENT_ERROR","subagentRunId":"s","message":"x"}),
            sub_started("s", None),
        ],
        2,
        "V42",
    );
}

#[test]
fn v43_a_parent_subagent_must_have_started_in_this_run() {
    rejects(vec![sub_started("c", Some("p"))], 0, "V43");
    // A parent that already finished is fine.
    verify(vec![
        sub_started("p", None),
        sub_finished("p"),
        sub_started("c", Some("p")),
        sub_finished("c"),
        rf(),
    ])
    .unwrap();
}

#[test]
fn v46_terminals_need_an_active_subagent() {
    rejects(vec![sub_finished("s")], 0, "V46");
    rejects(
        vec![json!({"type":"SUBAGENT_ERROR","subagentRunId":"s","message":"x"})],
        0,
        "V46",
    );
    rejects(
        vec![sub_started("s", None), sub_finished("s"), sub_finished("s")],
        2,
        "V46",
    );
}

#[test]
fn tags_need_not_name_a_live_subagent() {
    verify(vec![
        tm_start("m", Some("never-started")),
        tm_end("m", None),
        sub_started("s", None),
        sub_finished("s"),
        tm_start("n", Some("s")),
        tm_end("n", Some("s")),
        e("STATE_DELTA", json!({"delta": []}), Some("x")),
        e("CUSTOM", json!({"name": "c", "value": 1}), Some("y")),
        e("RAW", json!({"event": {}}), Some("z")),
        rf(),
    ])
    .unwrap();
}

// ---- V48–V53: what RUN_FINISHED requires, in order ----

#[test]
fn v48_to_v53_run_finished_needs_everything_closed_in_that_order() {
    let everything = vec![
        sub_started("s", None),
        tc_start("c", None, None),
        r_start("REASONING_START", "rs", None),
        r_start("REASONING_MESSAGE_START", "rm", None),
        tm_start("m", None),
        step("STEP_STARTED", "a", Some("s")),
    ];
    let closers = [
        ("V48", step("STEP_FINISHED", "a", Some("s"))),
        ("V49", tm_end("m", None)),
        (
            "V50",
            e("REASONING_MESSAGE_END", json!({"messageId":"rm"}), None),
        ),
        ("V51", e("REASONING_END", json!({"messageId":"rs"}), None)),
        ("V52", tc_end("c", None)),
        ("V53", sub_finished("s")),
    ];
    let mut events = everything;
    for (rule, closer) in closers {
        let mut attempt = events.clone();
        attempt.push(rf());
        rejects(attempt, events.len(), rule);
        events.push(closer);
    }
    events.push(rf());
    verify(events).unwrap();
}

#[test]
fn run_finished_lists_what_is_still_open() {
    assert_eq!(
        message(vec![
            step("STEP_STARTED", "b", None),
            step("STEP_STARTED", "a", Some("s")),
            rf()
        ]),
        "Cannot send 'RUN_FINISHED' while steps are still active: b, a (subagent 's')"
    );
    assert_eq!(
        message(vec![tm_start("z", None), tm_start("a", None), rf()]),
        "Cannot send 'RUN_FINISHED' while text messages are still active: z, a"
    );
}

// ---- §5.2: ownership seeding ----

#[test]
fn snapshots_seed_owners_authoritatively() {
    // The snapshot replaces the owner recorded by an earlier opener.
    verify(vec![
        tm_start("m", Some("s1")),
        tm_end("m", None),
        json!({"type":"MESSAGES_SNAPSHOT","messages":[{"id":"m","role":"assistant","subagentRunId":"s2"}]}),
        tm_start("m", Some("s2")),
    ])
    .unwrap();
}

#[test]
fn run_started_input_seeds_only_unowned_ids() {
    let input_run = json!({"type":"RUN_STARTED","threadId":"t","runId":"r2","input":{
        "threadId":"t","runId":"r2",
        "messages":[
            {"id":"m","role":"assistant","subagentRunId":"s1"},
            {"id":"r","role":"reasoning","content":"x","subagentRunId":"s1"}
        ],
        "tools":[],"context":[],"state":{},"forwardedProps":{}}});
    // After a finished run, the input seeds the fresh run.
    rejects(
        vec![rf(), input_run.clone(), tm_start("m", Some("s2"))],
        2,
        "V14",
    );
    rejects(
        vec![
            rf(),
            input_run.clone(),
            r_start("REASONING_START", "r", None),
            e("REASONING_END", json!({"messageId":"r"}), Some("s2")),
        ],
        3,
        "V37",
    );
    // As the first event too.
    assert_eq!(
        verify_raw(vec![input_run, tm_start("m", Some("s2"))]),
        Err((1, "V14"))
    );
}

#[test]
fn stream_end_is_never_rejected() {
    let mut v = Verifier::new();
    for x in [
        rs(),
        tm_start("m", None),
        tc_start("c", None, None),
        sub_started("s", None),
    ] {
        v.push(&ev(x)).unwrap();
    }
    v.finish().unwrap();
}

#[test]
fn unknown_events_are_ignored() {
    let mut v = Verifier::new();
    // Not even counted as the first event.
    v.push(&ev(json!({"type":"SOMETHING","x":1}))).unwrap();
    v.push(&ev(rs())).unwrap();
    v.push(&ev(json!({"type":"THINKING_START"}))).unwrap();
    v.push(&ev(rf())).unwrap();
}

#[test]
fn interleaved_entities_and_concurrent_owners_are_allowed() {
    verify(vec![
        tm_start("a", Some("s1")),
        tm_start("b", Some("s2")),
        tc_start("c", Some("a"), Some("s1")),
        tm_content("b", Some("s2")),
        tc_args("c", None),
        tm_start("d", None),
        tc_end("c", Some("s1")),
        tm_end("a", None),
        tm_end("b", None),
        tm_end("d", None),
        rf(),
    ])
    .unwrap();
}
