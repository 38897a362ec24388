//! Unit tests of the applier, rule by rule (client specification §6).

use super::*;
use serde_json::json;

fn ev(v: Value) -> Event {
    let e = Event::from_value(v.clone()).unwrap_or_else(|err| panic!("{v}: {err}"));
    assert!(!matches!(e, Event::Unknown(_)), "{v} decoded as unknown");
    e
}

fn run(events: &[Value]) -> Applier {
    let mut a = Applier::new();
    for v in events {
        a.push(&ev(v.clone()));
    }
    a
}

fn msgs(a: &Applier) -> Value {
    serde_json::to_value(a.messages()).unwrap()
}

fn rules(a: &Applier) -> Vec<&'static str> {
    a.warnings().iter().map(|w| w.rule).collect()
}

fn start(id: &str) -> Value {
    json!({"type": "TEXT_MESSAGE_START", "messageId": id})
}
fn content(id: &str, delta: &str) -> Value {
    json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": id, "delta": delta})
}
fn end(id: &str) -> Value {
    json!({"type": "TEXT_MESSAGE_END", "messageId": id})
}
fn tstart(id: &str, name: &str) -> Value {
    json!({"type": "TOOL_CALL_START", "toolCallId": id, "toolCallName": name})
}
fn tstart_p(id: &str, name: &str, parent: &str) -> Value {
    json!({"type": "TOOL_CALL_START", "toolCallId": id, "toolCallName": name, "parentMessageId": parent})
}
fn targs(id: &str, delta: &str) -> Value {
    json!({"type": "TOOL_CALL_ARGS", "toolCallId": id, "delta": delta})
}
fn tend(id: &str) -> Value {
    json!({"type": "TOOL_CALL_END", "toolCallId": id})
}
fn tresult(mid: &str, call: &str, c: &str) -> Value {
    json!({"type": "TOOL_CALL_RESULT", "messageId": mid, "toolCallId": call, "content": c})
}
fn snapshot(messages: Value) -> Value {
    json!({"type": "MESSAGES_SNAPSHOT", "messages": messages})
}
fn ids(a: &Applier) -> Vec<String> {
    a.messages().iter().map(|m| m.id().to_owned()).collect()
}

// ---- AP1–AP4: text messages ----

#[test]
fn ap1_start_creates_message_with_default_role_name_and_tag() {
    let a = run(&[
        start("m1"),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "m2", "role": "user", "name": "bob",
               "subagentRunId": "s1", "metadata": {"k": 1}}),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "m3", "role": "system"}),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "m4", "role": "developer"}),
    ]);
    assert_eq!(
        msgs(&a),
        json!([
            {"id": "m1", "role": "assistant", "content": ""},
            {"id": "m2", "role": "user", "content": "", "name": "bob", "subagentRunId": "s1",
             "metadata": {"k": 1}},
            {"id": "m3", "role": "system", "content": ""},
            {"id": "m4", "role": "developer", "content": ""},
        ])
    );
}

#[test]
fn ap1_start_on_existing_message_reuses_it_and_only_merges() {
    let mut a = run(&[snapshot(json!([
        {"id": "u1", "role": "user", "content": [{"type": "text", "text": "hi"}]}
    ]))]);
    let c = a.push(&ev(json!({"type": "TEXT_MESSAGE_START", "messageId": "u1",
                              "role": "assistant", "name": "x", "subagentRunId": "s"})));
    assert_eq!(c, Changes::NONE, "no metadata: nothing changes");
    let c = a.push(&ev(
        json!({"type": "TEXT_MESSAGE_START", "messageId": "u1", "metadata": {}}),
    ));
    assert_eq!(
        c,
        Changes::MESSAGES,
        "an empty metadata object still merges"
    );
    assert_eq!(
        msgs(&a),
        json!([{"id": "u1", "role": "user", "content": [{"type": "text", "text": "hi"}],
                "metadata": {}}])
    );
}

#[test]
fn ap2_content_appends_and_merges() {
    let mut a = run(&[start("m1")]);
    let c = a.push(&ev(content("m1", "Hel")));
    assert_eq!(c, Changes::MESSAGES);
    a.push(&ev(
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "lo",
                       "subagentRunId": "other", "metadata": {"a": 1}}),
    ));
    assert_eq!(
        msgs(&a),
        json!([{"id": "m1", "role": "assistant", "content": "Hello", "metadata": {"a": 1}}])
    );
}

#[test]
fn ap2_content_for_unknown_message_warns() {
    let mut a = Applier::new();
    assert_eq!(a.push(&ev(content("nope", "x"))), Changes::NONE);
    assert_eq!(rules(&a), ["AP2"]);
    assert!(a.messages().is_empty());
}

#[test]
fn ap2_content_replaces_parts_content_with_the_delta() {
    let a = run(&[
        snapshot(json!([
            {"id": "u1", "role": "user", "content": [{"type": "text", "text": "old"}]},
            {"id": "t1", "role": "tool", "toolCallId": "c", "content": [{"type": "text", "text": "o"}]},
        ])),
        content("u1", "new"),
        content("u1", "er"),
        content("t1", "x"),
    ]);
    assert_eq!(
        msgs(&a),
        json!([
            {"id": "u1", "role": "user", "content": "newer"},
            {"id": "t1", "role": "tool", "toolCallId": "c", "content": "x"},
        ])
    );
}

#[test]
fn ap2_content_gives_a_tool_call_message_its_text() {
    let a = run(&[tstart("c1", "f"), content("c1", "text")]);
    assert_eq!(
        msgs(&a),
        json!([{"id": "c1", "role": "assistant", "content": "text",
                "toolCalls": [{"id": "c1", "type": "function",
                               "function": {"name": "f", "arguments": ""}}]}])
    );
}

#[test]
fn ap3_end_merges_metadata_only_when_present() {
    let mut a = run(&[start("m1"), content("m1", "x")]);
    assert_eq!(a.push(&ev(end("m1"))), Changes::NONE);
    let c = a.push(&ev(
        json!({"type": "TEXT_MESSAGE_END", "messageId": "m1", "metadata": {"usage": 3}}),
    ));
    assert_eq!(c, Changes::MESSAGES);
    assert_eq!(
        a.messages().get(0).unwrap().metadata(),
        json!({"usage": 3}).as_object()
    );
    a.push(&ev(end("ghost")));
    assert_eq!(rules(&a), ["AP2"]);
}

#[test]
fn ap4_reopening_continues_appending() {
    let a = run(&[
        start("m1"),
        content("m1", "a"),
        end("m1"),
        start("m1"),
        content("m1", "b"),
        end("m1"),
    ]);
    assert_eq!(
        msgs(&a),
        json!([{"id": "m1", "role": "assistant", "content": "ab"}])
    );
}

#[test]
fn ap1_ap2_ap3_metadata_merges_last_write_wins() {
    let a = run(&[
        json!({"type": "TEXT_MESSAGE_START", "messageId": "m", "metadata":
               {"source": "o", "stage": "start", "tags": ["a", "b"]}}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x",
               "metadata": {"stage": "content"}}),
        json!({"type": "TEXT_MESSAGE_END", "messageId": "m",
               "metadata": {"stage": "end", "tags": ["z"], "n": null}}),
    ]);
    assert_eq!(
        msgs(&a)[0]["metadata"],
        json!({"source": "o", "stage": "end", "tags": ["z"], "n": null})
    );
}

// ---- AP21: activity id collisions ----

#[test]
fn ap21_text_and_reasoning_events_never_touch_an_activity() {
    let mut a = run(&[json!({"type": "ACTIVITY_SNAPSHOT", "messageId": "x",
                              "activityType": "PLAN", "content": {"s": 1}})]);
    let before = msgs(&a);
    for e in [
        json!({"type": "TEXT_MESSAGE_START", "messageId": "x", "metadata": {"m": 1}}),
        content("x", "d"),
        json!({"type": "TEXT_MESSAGE_END", "messageId": "x", "metadata": {"m": 1}}),
        json!({"type": "REASONING_MESSAGE_START", "messageId": "x", "role": "reasoning"}),
        json!({"type": "REASONING_MESSAGE_CONTENT", "messageId": "x", "delta": "d"}),
        json!({"type": "REASONING_MESSAGE_END", "messageId": "x"}),
    ] {
        assert_eq!(a.push(&ev(e)), Changes::NONE);
    }
    assert_eq!(msgs(&a), before);
    assert_eq!(rules(&a), ["AP21"; 6]);
}

// ---- AP5–AP10: tool calls ----

#[test]
fn ap5_no_parent_creates_assistant_keyed_by_tool_call_id() {
    let a = run(&[
        json!({"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "f",
               "subagentRunId": "s", "metadata": {"k": 1}}),
        json!({"type": "TOOL_CALL_START", "toolCallId": "c2", "toolCallName": "g",
               "parentMessageId": ""}),
    ]);
    assert_eq!(
        msgs(&a),
        json!([
            {"id": "c1", "role": "assistant", "subagentRunId": "s", "toolCalls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": ""},
                 "metadata": {"k": 1}}]},
            {"id": "c2", "role": "assistant", "toolCalls": [
                {"id": "c2", "type": "function", "function": {"name": "g", "arguments": ""}}]},
        ])
    );
}

#[test]
fn ap5_parent_assistant_gets_the_call_and_keeps_its_tag() {
    let a = run(&[
        json!({"type": "TEXT_MESSAGE_START", "messageId": "a1", "subagentRunId": "s1"}),
        json!({"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "f",
               "parentMessageId": "a1", "subagentRunId": "s2"}),
    ]);
    assert_eq!(
        msgs(&a),
        json!([{"id": "a1", "role": "assistant", "content": "", "subagentRunId": "s1",
                "toolCalls": [{"id": "c1", "type": "function",
                               "function": {"name": "f", "arguments": ""}}]}])
    );
}

#[test]
fn ap5_parent_of_another_role_falls_back_to_tool_call_id() {
    let a = run(&[
        json!({"type": "TEXT_MESSAGE_START", "messageId": "u1", "role": "user"}),
        tstart_p("c1", "f", "u1"),
    ]);
    assert_eq!(ids(&a), ["u1", "c1"]);
    assert_eq!(rules(&a), ["AP5"]);
}

#[test]
fn ap5_ap6_unknown_parent_creates_it_and_text_joins_it() {
    let a = run(&[
        tstart_p("c1", "f", "a1"),
        targs("c1", "{}"),
        tend("c1"),
        start("a1"),
        content("a1", "done"),
        end("a1"),
    ]);
    assert_eq!(
        msgs(&a),
        json!([{"id": "a1", "role": "assistant", "content": "done",
                "toolCalls": [{"id": "c1", "type": "function",
                               "function": {"name": "f", "arguments": "{}"}}]}])
    );
}

#[test]
fn ap5_created_message_with_an_existing_id_is_a_duplicate_without_tag() {
    // The parent names a user message, so the new assistant is keyed by the tool call id,
    // which already names a message: a duplicate results and the reference does not tag it.
    let a = run(&[
        json!({"type": "TEXT_MESSAGE_START", "messageId": "c1", "role": "user"}),
        json!({"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "f",
               "parentMessageId": "c1", "subagentRunId": "s"}),
        content("c1", "x"),
    ]);
    assert_eq!(
        msgs(&a),
        json!([
            {"id": "c1", "role": "user", "content": "x"},
            {"id": "c1", "role": "assistant", "toolCalls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": ""}}]},
        ])
    );
}

#[test]
fn ap5_replayed_start_renames_and_merges_into_the_call() {
    let mut a = run(&[tstart("c1", "f"), targs("c1", "{\"a\":1}"), tend("c1")]);
    assert_eq!(a.push(&ev(tstart("c1", "f"))), Changes::NONE);
    let c = a.push(&ev(json!({"type": "TOOL_CALL_START", "toolCallId": "c1",
                              "toolCallName": "g", "parentMessageId": "zzz",
                              "metadata": {"r": 1}})));
    assert_eq!(c, Changes::MESSAGES);
    assert_eq!(
        msgs(&a),
        json!([{"id": "c1", "role": "assistant", "toolCalls": [
            {"id": "c1", "type": "function", "function": {"name": "g", "arguments": "{\"a\":1}"},
             "metadata": {"r": 1}}]}])
    );
    assert_eq!(rules(&a), ["AP5"]);
}

#[test]
fn ap7_ap8_args_and_end_go_to_the_call_not_the_message() {
    let mut a = run(&[
        start("a1"),
        tstart_p("c1", "f", "a1"),
        tstart_p("c2", "g", "a1"),
        json!({"type": "TOOL_CALL_ARGS", "toolCallId": "c2", "delta": "{", "metadata": {"x": 1}}),
        targs("c1", "[1]"),
        targs("c2", "}"),
        json!({"type": "TOOL_CALL_END", "toolCallId": "c2", "metadata": {"y": 2}}),
    ]);
    assert_eq!(a.push(&ev(tend("c1"))), Changes::NONE);
    let m = msgs(&a);
    assert!(m[0].get("metadata").is_none());
    assert_eq!(m[0]["toolCalls"][0]["function"]["arguments"], "[1]");
    assert_eq!(m[0]["toolCalls"][1]["function"]["arguments"], "{}");
    assert_eq!(m[0]["toolCalls"][1]["metadata"], json!({"x": 1, "y": 2}));
    a.push(&ev(targs("zz", "x")));
    a.push(&ev(tend("zz")));
    assert_eq!(rules(&a), ["AP7", "AP8"]);
}

#[test]
fn ap7_args_go_to_the_first_call_with_the_id() {
    let a = run(&[
        snapshot(json!([
            {"id": "a1", "role": "assistant", "toolCalls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": "1"}},
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": "2"}}]},
            {"id": "a2", "role": "assistant", "toolCalls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": "3"}}]},
        ])),
        targs("c", "x"),
    ]);
    let m = msgs(&a);
    assert_eq!(m[0]["toolCalls"][0]["function"]["arguments"], "1x");
    assert_eq!(m[0]["toolCalls"][1]["function"]["arguments"], "2");
    assert_eq!(m[1]["toolCalls"][0]["function"]["arguments"], "3");
}

#[test]
fn ap9_restarting_a_closed_call_appends_to_its_arguments() {
    let a = run(&[
        tstart("c1", "f"),
        targs("c1", "{\"a\":1}"),
        tend("c1"),
        tstart("c1", "f"),
        targs("c1", "{\"b\":2}"),
        tend("c1"),
    ]);
    assert_eq!(
        msgs(&a)[0]["toolCalls"][0]["function"]["arguments"],
        "{\"a\":1}{\"b\":2}"
    );
}

#[test]
fn ap10_results_go_after_their_call_skipping_tool_messages() {
    let a = run(&[
        start("a1"),
        tstart_p("c1", "f", "a1"),
        tend("c1"),
        tstart_p("c2", "g", "a1"),
        tend("c2"),
        end("a1"),
        start("m2"),
        content("m2", "later"),
        end("m2"),
        tresult("t2", "c2", "two"),
        tresult("t1", "c1", "one"),
    ]);
    assert_eq!(ids(&a), ["a1", "t2", "t1", "m2"]);
}

#[test]
fn ap10_result_without_owner_is_appended_and_duplicates_are_kept() {
    let a = run(&[
        start("m1"),
        json!({"type": "TOOL_CALL_RESULT", "messageId": "t", "toolCallId": "nope",
               "content": [{"type": "text", "text": "p"}], "role": "tool",
               "subagentRunId": "s", "metadata": {"k": 1}}),
        tresult("t", "nope", "again"),
    ]);
    assert_eq!(
        msgs(&a),
        json!([
            {"id": "m1", "role": "assistant", "content": ""},
            {"id": "t", "role": "tool", "toolCallId": "nope",
             "content": [{"type": "text", "text": "p"}], "subagentRunId": "s",
             "metadata": {"k": 1}},
            {"id": "t", "role": "tool", "toolCallId": "nope", "content": "again"},
        ])
    );
}

#[test]
fn ap10_an_inserted_result_becomes_the_first_match_for_its_id() {
    // t1 exists at the end; a result with the same message id lands right after a1, before
    // it, so later look-ups by that id find the inserted one.
    let a = run(&[
        tstart_p("c1", "f", "a1"),
        start("m2"),
        tresult("dup", "other", "late"),
        tresult("dup", "c1", "early"),
        content("dup", "+"),
    ]);
    assert_eq!(ids(&a), ["a1", "dup", "m2", "dup"]);
    let m = msgs(&a);
    assert_eq!(m[1]["content"], "early+");
    assert_eq!(m[3]["content"], "late");
}

#[test]
fn ap10_insertion_keeps_later_lookups_right() {
    // After an insertion in the middle, every message behind it still resolves to itself.
    let mut events = vec![tstart_p("c0", "f", "a0")];
    for i in 1..20 {
        events.push(start(&format!("m{i}")));
    }
    events.push(tresult("t0", "c0", "r"));
    for i in 1..20 {
        events.push(content(&format!("m{i}"), &format!("{i}")));
    }
    events.push(tstart_p("c9", "g", "m9"));
    events.push(tresult("t9", "c9", "r9"));
    let a = run(&events);
    let mut want = vec!["a0".to_string(), "t0".to_string()];
    want.extend((1..10).map(|i| format!("m{i}")));
    want.push("t9".into());
    want.extend((10..20).map(|i| format!("m{i}")));
    assert_eq!(ids(&a), want);
    for m in a.messages().iter().filter(|m| m.id().starts_with('m')) {
        assert_eq!(m.text(), Some(&m.id()[1..]));
    }
}

// ---- AP11–AP13: state ----

#[test]
fn ap11_snapshot_replaces_state_with_any_value() {
    let mut a = Applier::new();
    assert_eq!(
        a.push(&ev(json!({"type": "STATE_SNAPSHOT", "snapshot": [1, 2]}))),
        Changes::STATE
    );
    assert_eq!(a.state(), &json!([1, 2]));
    a.push(&ev(json!({"type": "STATE_SNAPSHOT", "snapshot": null})));
    assert_eq!(a.state(), &Value::Null);
}

#[test]
fn ap12_delta_applies_in_place() {
    let a = run(&[
        json!({"type": "STATE_SNAPSHOT", "snapshot": {"a": 1, "l": [1]}}),
        json!({"type": "STATE_DELTA", "delta": [
            {"op": "replace", "path": "/a", "value": 2},
            {"op": "add", "path": "/l/-", "value": 2},
            {"op": "add", "path": "/b", "value": {"c": true}}]}),
    ]);
    assert_eq!(a.state(), &json!({"a": 2, "l": [1, 2], "b": {"c": true}}));
}

#[test]
fn ap12_a_failing_operation_discards_the_whole_patch() {
    let mut a = run(&[json!({"type": "STATE_SNAPSHOT", "snapshot": {"a": 1}})]);
    let c = a.push(&ev(json!({"type": "STATE_DELTA", "delta": [
        {"op": "replace", "path": "/a", "value": 2},
        {"op": "add", "path": "/b", "value": 3},
        {"op": "test", "path": "/a", "value": 99}]})));
    assert_eq!(c, Changes::NONE);
    assert_eq!(a.state(), &json!({"a": 1}));
    assert_eq!(rules(&a), ["AP12"]);
    let c = a.push(&ev(json!({"type": "STATE_DELTA", "delta": [
        {"op": "remove", "path": "/missing"}]})));
    assert_eq!(c, Changes::NONE);
    assert_eq!(a.state(), &json!({"a": 1}));
}

#[test]
fn ap12_owned_deltas_fold_as_borrowed_ones() {
    // `push_owned` moves a delta's values into the state instead of cloning them; the
    // state, the changes and the warnings must be those of `push`.
    let events = [
        json!({"type": "STATE_SNAPSHOT", "snapshot": {"a": 1, "l": [1], "o": {"x": 1, "y": 2}}}),
        json!({"type": "STATE_DELTA", "delta": [
            {"op": "add", "path": "/l/-", "value": {"deep": [1, 2]}},
            {"op": "replace", "path": "/a", "value": "two"},
            {"op": "copy", "from": "/l/1", "path": "/c"},
            {"op": "move", "from": "/o/x", "path": "/o/z"}]}),
        json!({"type": "STATE_DELTA", "delta": [
            {"op": "add", "path": "/kept", "value": 1},
            {"op": "test", "path": "/a", "value": "three"}]}),
        json!({"type": "STATE_DELTA", "delta": [{"op": "remove", "path": "/o/y"}]}),
    ];
    let (mut borrowed, mut owned) = (Applier::new(), Applier::new());
    for v in &events {
        let e = ev(v.clone());
        assert_eq!(owned.push_owned(e.clone()), borrowed.push(&e), "{v}");
        assert_eq!(owned.state(), borrowed.state(), "{v}");
    }
    assert_eq!(
        owned.state(),
        &json!({"a": "two", "l": [1, {"deep": [1, 2]}], "o": {"z": 1}, "c": {"deep": [1, 2]}})
    );
    assert_eq!(rules(&owned), ["AP12"]);
    assert_eq!(owned.warnings(), borrowed.warnings());
}

#[test]
fn ap12_owned_state_is_patched_compact_until_someone_looks() {
    // `push_owned` keeps a snapshot as the tree it came as, and the first patch makes it a
    // compact document, which the patches then change; a look at the state builds the
    // tree (or, before any patch, hands out the snapshot's), which the next patch then
    // keeps current instead. At every step the state, its JSON and the warnings are those
    // of `push`.
    let snapshot = json!({"type": "STATE_SNAPSHOT", "snapshot": {
        "items": [{"id": 1}, {"id": 2}, {"id": 3}],
        "wide": {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8, "i": 9}}});
    let deltas = [
        json!({"type": "STATE_DELTA", "delta": [
            {"op": "remove", "path": "/items/0"},
            {"op": "add", "path": "/wide/j", "value": {"deep": [1.5, "é"]}},
            {"op": "move", "from": "/wide/a", "path": "/items/-"}]}),
        json!({"type": "STATE_DELTA", "delta": [
            {"op": "copy", "from": "/wide/j", "path": "/items/0"},
            {"op": "test", "path": "/items/0/deep/0", "value": 1.5}]}),
        json!({"type": "STATE_DELTA", "delta": [
            {"op": "remove", "path": "/wide/b"},
            {"op": "replace", "path": "/missing", "value": 1}]}),
    ];
    let (mut borrowed, mut owned) = (Applier::new(), Applier::new());
    // A new applier's `{}` is compact too: deltas without a snapshot are patched there.
    assert!(owned.state_is_compact());
    let e =
        ev(json!({"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/n", "value": [1]}]}));
    assert_eq!(owned.push_owned(e.clone()), borrowed.push(&e));
    assert!(owned.state_is_compact());
    let json_of = |a: &Applier| {
        let mut out = Vec::new();
        a.write_state_json(&mut out);
        String::from_utf8(out).unwrap()
    };
    for look_after in 0..=deltas.len() {
        for (i, v) in std::iter::once(&snapshot).chain(&deltas).enumerate() {
            let e = ev(v.clone());
            assert_eq!(owned.push_owned(e.clone()), borrowed.push(&e), "{v}");
            assert_eq!(json_of(&owned), json_of(&borrowed), "{v}");
            // The snapshot stays the tree it came as until the first patch; from then on
            // the state is compact until the look, and a tree after it.
            assert_eq!(owned.state_is_given(), i == 0, "step {i}");
            assert_eq!(
                owned.state_is_compact(),
                (1..=look_after).contains(&i),
                "step {i}"
            );
            if i == look_after {
                assert_eq!(owned.state(), borrowed.state(), "{v}");
            }
        }
        assert_eq!(owned.warnings(), borrowed.warnings());
    }
    assert_eq!(
        owned.state(),
        &json!({"items": [{"deep": [1.5, "é"]}, {"id": 2}, {"id": 3}, 1],
            "wide": {"b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8, "i": 9,
                "j": {"deep": [1.5, "é"]}}})
    );
    assert_eq!(rules(&owned), ["AP12"; 4]);
}

#[test]
fn ap12_empty_patch_still_changes_state() {
    let mut a = Applier::new();
    assert_eq!(
        a.push(&ev(json!({"type": "STATE_DELTA", "delta": []}))),
        Changes::STATE
    );
    assert_eq!(a.state(), &json!({}));
}

#[test]
fn ap12_patch_on_null_state_fails() {
    let mut a = Applier::with_history(Vec::new(), Value::Null);
    let c = a.push(&ev(json!({"type": "STATE_DELTA", "delta": [
        {"op": "add", "path": "/a", "value": 1}]})));
    assert_eq!(c, Changes::NONE);
    assert_eq!(a.state(), &Value::Null);
}

#[test]
fn ap13_history_state_is_the_starting_state_and_run_input_state_is_ignored() {
    let mut a = Applier::with_history(Vec::new(), json!({"from": "agent"}));
    a.push(&ev(
        json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r",
                       "input": {"threadId": "t", "runId": "r", "messages": [],
                                 "state": {"from": "input"}, "tools": [], "context": []}}),
    ));
    assert_eq!(a.state(), &json!({"from": "agent"}));
}

// ---- AP14–AP18: messages snapshot ----

#[test]
fn ap15_replaces_wholesale_in_local_order_and_deletes_missing() {
    let a = run(&[
        start("a"),
        content("a", "local"),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "u", "role": "user",
               "metadata": {"lost": true}}),
        start("gone"),
        tstart("c", "f"),
        tresult("t", "c", "r"),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "sys", "role": "system"}),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "dev", "role": "developer"}),
        snapshot(json!([
            {"id": "new", "role": "user", "content": "n"},
            {"id": "u", "role": "user", "content": "server u"},
            {"id": "a", "role": "assistant", "content": "server a"},
        ])),
    ]);
    assert_eq!(
        msgs(&a),
        json!([
            {"id": "a", "role": "assistant", "content": "server a"},
            {"id": "u", "role": "user", "content": "server u"},
            {"id": "new", "role": "user", "content": "n"},
        ])
    );
}

#[test]
fn ap16_reasoning_is_preserved_only_when_the_snapshot_has_none() {
    let local = [
        json!({"type": "REASONING_MESSAGE_START", "messageId": "r1", "role": "reasoning"}),
        json!({"type": "REASONING_MESSAGE_START", "messageId": "r2", "role": "reasoning"}),
    ];
    let mut events = local.to_vec();
    events.push(snapshot(
        json!([{"id": "u", "role": "user", "content": "x"}]),
    ));
    assert_eq!(ids(&run(&events)), ["r1", "r2", "u"]);

    let mut events = local.to_vec();
    events.push(snapshot(
        json!([{"id": "r9", "role": "reasoning", "content": "s"}]),
    ));
    assert_eq!(ids(&run(&events)), ["r9"]);
}

fn activity(id: &str, kind: &str) -> Value {
    json!({"type": "ACTIVITY_SNAPSHOT", "messageId": id, "activityType": kind, "content": {}})
}

fn activity_case(metadata: Option<Value>, snapshot_messages: Value) -> Vec<String> {
    let mut snap = snapshot(snapshot_messages);
    if let Some(m) = metadata {
        snap["metadata"] = m;
    }
    ids(&run(&[
        activity("p", "PLAN"),
        activity("s", "SEARCH"),
        snap,
    ]))
}

#[test]
fn ap16_activity_authority() {
    let user = json!([{"id": "u", "role": "user", "content": "x"}]);
    let with_activity = json!([{"id": "z", "role": "activity", "activityType": "OTHER",
                                "content": {}}]);
    // Undeclared: all-or-nothing on whether the snapshot carries an activity.
    assert_eq!(activity_case(None, user.clone()), ["p", "s", "u"]);
    assert_eq!(activity_case(None, with_activity.clone()), ["z"]);
    assert_eq!(
        activity_case(Some(json!({"@ag-ui/client": {"other": 1}})), user.clone()),
        ["p", "s", "u"]
    );
    // null: the snapshot owns every type.
    assert_eq!(
        activity_case(
            Some(json!({"@ag-ui/client": {"authoritativeActivityTypes": null}})),
            user.clone()
        ),
        ["u"]
    );
    // A list: only listed types may be deleted; an empty list preserves all.
    assert_eq!(
        activity_case(
            Some(json!({"@ag-ui/client": {"authoritativeActivityTypes": ["PLAN"]}})),
            with_activity.clone()
        ),
        ["s", "z"]
    );
    assert_eq!(
        activity_case(
            Some(json!({"@ag-ui/client": {"authoritativeActivityTypes": []}})),
            with_activity.clone()
        ),
        ["p", "s", "z"]
    );
    // Invalid declarations read as an empty list.
    assert_eq!(
        activity_case(Some(json!({"@ag-ui/client": "yes"})), with_activity.clone()),
        ["p", "s", "z"]
    );
    assert_eq!(
        activity_case(
            Some(json!({"@ag-ui/client": {"authoritativeActivityTypes": [1]}})),
            with_activity
        ),
        ["p", "s", "z"]
    );
}

#[test]
fn ap16_a_matching_id_updates_even_an_undeletable_activity() {
    let a = run(&[
        activity("p", "PLAN"),
        json!({"type": "MESSAGES_SNAPSHOT", "metadata":
               {"@ag-ui/client": {"authoritativeActivityTypes": []}},
               "messages": [{"id": "p", "role": "activity", "activityType": "PLAN",
                             "content": {"v": 2}}]}),
    ]);
    assert_eq!(msgs(&a)[0]["content"], json!({"v": 2}));
}

#[test]
fn ap17_duplicate_ids_in_the_snapshot() {
    let a = run(&[
        start("k"),
        snapshot(json!([
            {"id": "k", "role": "user", "content": "k1"},
            {"id": "n", "role": "user", "content": "n1"},
            {"id": "k", "role": "user", "content": "k2"},
            {"id": "n", "role": "user", "content": "n2"},
        ])),
    ]);
    assert_eq!(
        msgs(&a),
        json!([
            {"id": "k", "role": "user", "content": "k2"},
            {"id": "n", "role": "user", "content": "n1"},
            {"id": "n", "role": "user", "content": "n2"},
        ])
    );
}

#[test]
fn ap17_local_duplicates_share_the_snapshot_object_afterwards() {
    // Two local messages with id n are both replaced by the same snapshot object, so a
    // later delta to "the first n" shows in both, as in the reference.
    let mut a = run(&[
        snapshot(json!([
            {"id": "n", "role": "user", "content": "1"},
            {"id": "n", "role": "user", "content": "2"},
        ])),
        start("between"),
        snapshot(json!([
            {"id": "n", "role": "assistant", "content": "s"},
            {"id": "between", "role": "assistant", "content": "b"},
        ])),
        content("n", "+"),
    ]);
    assert_eq!(ids(&a), ["n", "n", "between"]);
    let m = msgs(&a);
    assert_eq!(m[0]["content"], "s+");
    assert_eq!(m[1]["content"], "s+");
    // Replacing the first entry (an activity snapshot on the id) breaks the sharing there.
    a.push(&ev(activity("n", "PLAN")));
    let m = msgs(&a);
    assert_eq!(m[0]["role"], "activity");
    assert_eq!(m[1]["content"], "s+");
    let (owned, _, _) = a.into_parts();
    assert_eq!(owned.len(), 3);
}

#[test]
fn ap18_snapshot_metadata_is_not_merged() {
    let a = run(&[json!({"type": "MESSAGES_SNAPSHOT", "metadata": {"k": 1},
                         "messages": [{"id": "u", "role": "user", "content": "x"}]})]);
    assert_eq!(
        msgs(&a),
        json!([{"id": "u", "role": "user", "content": "x"}])
    );
}

#[test]
fn ap15_index_is_rebuilt_after_a_snapshot() {
    let a = run(&[
        tstart_p("c1", "f", "a1"),
        snapshot(json!([
            {"id": "x", "role": "user", "content": "q"},
            {"id": "a1", "role": "assistant", "toolCalls": [
                {"id": "c9", "type": "function", "function": {"name": "g", "arguments": ""}}]},
        ])),
        targs("c1", "lost"),
        targs("c9", "ok"),
        tresult("t9", "c9", "r"),
    ]);
    assert_eq!(ids(&a), ["a1", "t9", "x"]);
    assert_eq!(msgs(&a)[0]["toolCalls"][0]["function"]["arguments"], "ok");
    assert_eq!(rules(&a), ["AP7"]);
}

// ---- AP19–AP20: activities ----

#[test]
fn ap19_snapshot_creates_then_replaces_keeping_metadata() {
    let a = run(&[
        json!({"type": "ACTIVITY_SNAPSHOT", "messageId": "p", "activityType": "PLAN",
               "content": {"v": 1}, "subagentRunId": "s", "metadata": {"a": 1}}),
        start("m"),
        json!({"type": "ACTIVITY_SNAPSHOT", "messageId": "p", "activityType": "PLAN2",
               "content": {"v": 2}, "metadata": {"b": 2}}),
    ]);
    assert_eq!(
        msgs(&a),
        json!([
            {"id": "p", "role": "activity", "activityType": "PLAN2", "content": {"v": 2},
             "metadata": {"a": 1, "b": 2}},
            {"id": "m", "role": "assistant", "content": ""},
        ])
    );
}

#[test]
fn ap19_replace_false_merges_metadata_only() {
    let mut a = run(&[json!({"type": "ACTIVITY_SNAPSHOT", "messageId": "p",
                              "activityType": "PLAN", "content": {"v": 1},
                              "subagentRunId": "s"})]);
    let c = a.push(&ev(json!({"type": "ACTIVITY_SNAPSHOT", "messageId": "p",
                              "activityType": "X", "content": {"v": 2}, "replace": false,
                              "metadata": {"m": 1}})));
    assert_eq!(c, Changes::MESSAGES);
    assert_eq!(
        msgs(&a),
        json!([{"id": "p", "role": "activity", "activityType": "PLAN", "content": {"v": 1},
                "subagentRunId": "s", "metadata": {"m": 1}}])
    );
}

#[test]
fn ap19_non_activity_is_replaced_entirely_or_left_alone() {
    let mut a = run(&[
        json!({"type": "TEXT_MESSAGE_START", "messageId": "m", "metadata": {"old": 1}}),
        tstart_p("c1", "f", "m"),
    ]);
    let c = a.push(&ev(json!({"type": "ACTIVITY_SNAPSHOT", "messageId": "m",
                              "activityType": "X", "content": {}, "replace": false,
                              "metadata": {"n": 1}})));
    assert_eq!(
        c,
        Changes::MESSAGES,
        "the reference emits a mutation anyway"
    );
    assert_eq!(msgs(&a)[0]["role"], "assistant");
    a.push(&ev(
        json!({"type": "ACTIVITY_SNAPSHOT", "messageId": "m", "activityType": "X",
                       "content": {"k": 1}, "metadata": {"n": 1}}),
    ));
    assert_eq!(
        msgs(&a),
        json!([{"id": "m", "role": "activity", "activityType": "X", "content": {"k": 1},
                "metadata": {"n": 1}}])
    );
    // The tool call went with the message.
    a.push(&ev(targs("c1", "x")));
    assert_eq!(rules(&a), ["AP7"]);
}

#[test]
fn ap20_delta_patches_content_and_sets_type() {
    let mut a = run(&[json!({"type": "ACTIVITY_SNAPSHOT", "messageId": "p",
                              "activityType": "PLAN", "content": {"steps": []}})]);
    let c = a.push(&ev(json!({"type": "ACTIVITY_DELTA", "messageId": "p",
                              "activityType": "PLAN2", "metadata": {"k": 1},
                              "patch": [{"op": "add", "path": "/steps/-", "value": "s1"}]})));
    assert_eq!(c, Changes::MESSAGES);
    assert_eq!(
        msgs(&a),
        json!([{"id": "p", "role": "activity", "activityType": "PLAN2",
                "content": {"steps": ["s1"]}, "metadata": {"k": 1}}])
    );
}

#[test]
fn ap20_failing_patch_keeps_content_but_merges_metadata() {
    let mut a = run(&[json!({"type": "ACTIVITY_SNAPSHOT", "messageId": "p",
                              "activityType": "PLAN", "content": {"v": 1}})]);
    let c = a.push(&ev(json!({"type": "ACTIVITY_DELTA", "messageId": "p",
                              "activityType": "NEW", "metadata": {"k": 1},
                              "patch": [{"op": "replace", "path": "/v", "value": 2},
                                        {"op": "remove", "path": "/nope"}]})));
    assert_eq!(c, Changes::MESSAGES);
    assert_eq!(
        msgs(&a),
        json!([{"id": "p", "role": "activity", "activityType": "PLAN", "content": {"v": 1},
                "metadata": {"k": 1}}])
    );
    assert_eq!(rules(&a), ["AP20"]);
    let c = a.push(&ev(json!({"type": "ACTIVITY_DELTA", "messageId": "p",
                              "activityType": "NEW",
                              "patch": [{"op": "remove", "path": "/nope"}]})));
    assert_eq!(c, Changes::NONE);
}

#[test]
fn ap20_unknown_id_is_silent_and_non_activity_warns() {
    let mut a = run(&[start("m")]);
    let delta = |id: &str| {
        ev(
            json!({"type": "ACTIVITY_DELTA", "messageId": id, "activityType": "X",
                  "patch": [], "metadata": {"k": 1}}),
        )
    };
    assert_eq!(a.push(&delta("nope")), Changes::NONE);
    assert!(a.warnings().is_empty());
    assert_eq!(a.push(&delta("m")), Changes::NONE);
    assert_eq!(rules(&a), ["AP20"]);
    assert!(msgs(&a)[0].get("metadata").is_none());
}

#[test]
fn ap20_root_replacement_with_an_object_works() {
    let a = run(&[
        activity("p", "PLAN"),
        json!({"type": "ACTIVITY_DELTA", "messageId": "p", "activityType": "PLAN",
               "patch": [{"op": "replace", "path": "", "value": {"all": "new"}}]}),
    ]);
    assert_eq!(msgs(&a)[0]["content"], json!({"all": "new"}));
}

#[test]
fn ap20_a_patch_making_the_content_a_non_object_is_refused() {
    let mut a = run(&[json!({"type": "ACTIVITY_SNAPSHOT", "messageId": "p",
                              "activityType": "PLAN", "content": {"v": 1}})]);
    for op in [
        json!({"op": "replace", "path": "", "value": [1, 2]}),
        json!({"op": "remove", "path": ""}),
    ] {
        let c = a.push(&ev(json!({"type": "ACTIVITY_DELTA", "messageId": "p",
                                  "activityType": "X", "patch": [op]})));
        assert_eq!(c, Changes::NONE);
    }
    assert_eq!(msgs(&a)[0]["content"], json!({"v": 1}));
    assert_eq!(msgs(&a)[0]["activityType"], "PLAN");
    assert_eq!(rules(&a), ["AP20", "AP20"]);
}

// ---- AP23–AP26: reasoning ----

#[test]
fn ap23_spans_create_nothing() {
    let a = run(&[
        json!({"type": "REASONING_START", "messageId": "r", "metadata": {"k": 1}}),
        json!({"type": "REASONING_END", "messageId": "r"}),
    ]);
    assert!(a.messages().is_empty());
}

#[test]
fn ap24_ap25_reasoning_message_lifecycle() {
    let a = run(&[
        json!({"type": "REASONING_MESSAGE_START", "messageId": "r", "role": "reasoning",
               "subagentRunId": "s", "metadata": {"a": 1}}),
        json!({"type": "REASONING_MESSAGE_CONTENT", "messageId": "r", "delta": "thi"}),
        json!({"type": "REASONING_MESSAGE_CONTENT", "messageId": "r", "delta": "nk"}),
        json!({"type": "REASONING_MESSAGE_END", "messageId": "r", "metadata": {"b": 2}}),
    ]);
    assert_eq!(
        msgs(&a),
        json!([{"id": "r", "role": "reasoning", "content": "think", "subagentRunId": "s",
                "metadata": {"a": 1, "b": 2}}])
    );
}

#[test]
fn ap24_reasoning_reuses_a_text_message() {
    let a = run(&[
        start("m"),
        content("m", "text "),
        json!({"type": "REASONING_MESSAGE_START", "messageId": "m", "role": "reasoning"}),
        json!({"type": "REASONING_MESSAGE_CONTENT", "messageId": "m", "delta": "more"}),
    ]);
    assert_eq!(
        msgs(&a),
        json!([{"id": "m", "role": "assistant", "content": "text more"}])
    );
    let mut a = Applier::new();
    a.push(&ev(
        json!({"type": "REASONING_MESSAGE_CONTENT", "messageId": "x", "delta": "d"}),
    ));
    assert_eq!(rules(&a), ["AP25"]);
}

#[test]
fn ap26_encrypted_values() {
    let mut a = run(&[
        start("m"),
        tstart_p("c1", "f", "m"),
        activity("act", "PLAN"),
    ]);
    let enc = |subtype: &str, id: &str, v: &str| {
        ev(
            json!({"type": "REASONING_ENCRYPTED_VALUE", "subtype": subtype, "entityId": id,
                  "encryptedValue": v, "metadata": {"no": 1}}),
        )
    };
    assert_eq!(a.push(&enc("tool-call", "c1", "E1")), Changes::MESSAGES);
    assert_eq!(a.push(&enc("message", "m", "E2")), Changes::MESSAGES);
    assert_eq!(a.push(&enc("message", "m", "E3")), Changes::MESSAGES);
    assert_eq!(a.push(&enc("message", "act", "E4")), Changes::NONE);
    assert_eq!(a.push(&enc("message", "c1", "E5")), Changes::NONE);
    assert_eq!(a.push(&enc("tool-call", "m", "E6")), Changes::NONE);
    assert!(a.warnings().is_empty());
    assert_eq!(
        msgs(&a)[0],
        json!({"id": "m", "role": "assistant", "content": "", "encryptedValue": "E3",
               "toolCalls": [{"id": "c1", "type": "function",
                              "function": {"name": "f", "arguments": ""},
                              "encryptedValue": "E1"}]})
    );
}

// ---- AP27–AP31: runs ----

fn run_started_with(messages: Value) -> Value {
    json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r",
           "input": {"threadId": "t", "runId": "r", "messages": messages, "tools": [],
                     "context": [], "state": {}}})
}

#[test]
fn ap27_input_messages_are_appended_when_unknown() {
    let mut a = run(&[start("a"), content("a", "local")]);
    let c = a.push(&ev(run_started_with(json!([
        {"id": "a", "role": "assistant", "content": "remote"},
        {"id": "u", "role": "user", "content": "hi"},
        {"id": "u", "role": "user", "content": "dup"},
    ]))));
    assert_eq!(c, Changes::MESSAGES);
    assert_eq!(
        msgs(&a),
        json!([
            {"id": "a", "role": "assistant", "content": "local"},
            {"id": "u", "role": "user", "content": "hi"},
        ])
    );
    assert_eq!(a.push(&ev(run_started_with(json!([])))), Changes::MESSAGES);
    assert_eq!(
        a.push(&ev(
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r2"})
        )),
        Changes::NONE
    );
}

fn finished(outcome: Option<Value>) -> Value {
    let mut e = json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "result": 7});
    if let Some(o) = outcome {
        e["outcome"] = o;
    }
    e
}

#[test]
fn ap28_pending_tool_calls_are_derived_per_run() {
    let a = run(&[
        json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r1"}),
        tstart("old", "f"),
        json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r2"}),
        tstart("c1", "f"),
        tstart("c2", "g"),
        tstart("c1", "f"),
        tresult("t2", "c2", "ok"),
        tstart("c3", "h"),
        finished(None),
    ]);
    assert_eq!(
        a.last_run_end(),
        Some(&RunEnd::Success {
            result: Some(json!(7)),
            pending_tool_call_ids: vec!["c1".into(), "c3".into()],
        })
    );
    let a = run(&[
        tstart("c1", "f"),
        finished(Some(
            json!({"type": "success", "pendingToolCallIds": ["x"]}),
        )),
    ]);
    assert!(
        matches!(a.last_run_end(), Some(RunEnd::Success { pending_tool_call_ids, .. })
                     if pending_tool_call_ids == &["x".to_string()])
    );
    let a = run(&[
        tstart("c1", "f"),
        finished(Some(json!({"type": "success", "pendingToolCallIds": []}))),
    ]);
    assert!(
        matches!(a.last_run_end(), Some(RunEnd::Success { pending_tool_call_ids, .. })
                     if pending_tool_call_ids == &["c1".to_string()])
    );
}

#[test]
fn ap28_interrupts_are_recorded_and_cleared() {
    let mut a = run(&[finished(Some(json!({"type": "interrupt", "interrupts": [
        {"id": "i1", "reason": "tool_call", "toolCallId": "c", "metadata": {"m": 1}}]})))]);
    assert_eq!(
        serde_json::to_value(a.pending_interrupts()).unwrap(),
        json!([{"id": "i1", "reason": "tool_call", "toolCallId": "c", "metadata": {"m": 1}}])
    );
    a.push(&ev(json!({"type": "RUN_ERROR", "message": "boom"})));
    assert_eq!(a.pending_interrupts().len(), 1, "RUN_ERROR leaves them");
    a.push(&ev(finished(Some(json!({"type": "cancelled"})))));
    assert!(a.pending_interrupts().is_empty());
    assert_eq!(a.last_run_end(), Some(&RunEnd::Cancelled));
}

#[test]
fn ap29_result_is_the_last_successful_runs() {
    let mut a = run(&[finished(None)]);
    assert_eq!(a.result(), Some(&json!(7)));
    a.push(&ev(finished(Some(json!({"type": "cancelled"})))));
    assert_eq!(a.result(), Some(&json!(7)), "cancelled leaves it");
    a.push(&ev(
        json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}),
    ));
    assert_eq!(a.result(), None, "a success without result clears it");
}

#[test]
fn ap30_hook_only_events_change_nothing() {
    let mut a = run(&[start("m")]);
    for e in [
        json!({"type": "RUN_ERROR", "message": "x"}),
        json!({"type": "STEP_STARTED", "stepName": "s"}),
        json!({"type": "STEP_FINISHED", "stepName": "s"}),
        json!({"type": "RAW", "event": {}}),
        json!({"type": "CUSTOM", "name": "n", "value": 1}),
        json!({"type": "SUBAGENT_STARTED", "subagentRunId": "s", "name": "n"}),
        json!({"type": "SUBAGENT_FINISHED", "subagentRunId": "s"}),
        json!({"type": "SUBAGENT_ERROR", "subagentRunId": "s", "message": "m"}),
    ] {
        assert_eq!(a.push(&ev(e)), Changes::NONE);
    }
    assert!(a.warnings().is_empty());
}

#[test]
fn ap31_chunks_are_not_applied() {
    let mut a = Applier::new();
    let c = a.push(&ev(
        json!({"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "x"}),
    ));
    assert_eq!(c, Changes::NONE);
    assert!(a.messages().is_empty());
    assert_eq!(rules(&a), ["AP31"]);
    assert_eq!(a.take_warnings().len(), 1);
    assert!(a.warnings().is_empty());
}

#[test]
fn history_with_duplicate_ids_finds_the_first() {
    let a = Applier::with_history(
        vec![Message::user("d", "1"), Message::user("d", "2")],
        json!({}),
    );
    assert_eq!(a.message("d").and_then(Message::text), Some("1"));
    let mut a = a;
    a.push(&ev(content("d", "+")));
    assert_eq!(ids(&a), ["d", "d"]);
    assert_eq!(msgs(&a)[0]["content"], "1+");
    assert_eq!(msgs(&a)[1]["content"], "2");
}

// ---- differential test against a direct model of the reference ----

mod model {
    //! A direct transcription of the reference reducer over a vector of shared objects
    //! (`Rc<RefCell<_>>` stands for a JavaScript object reference), with linear look-ups.

    use crate::Message;
    use crate::content::Content;
    use crate::event::{EncryptedValueSubtype, Event};
    use crate::message::{ActivityMessage, AssistantMessage, ToolMessage};
    use crate::metadata::merge_metadata;
    use std::cell::RefCell;
    use std::rc::Rc;

    pub type Obj = Rc<RefCell<Message>>;

    #[derive(Default)]
    pub struct Model {
        pub messages: Vec<Obj>,
    }

    fn obj(m: Message) -> Obj {
        Rc::new(RefCell::new(m))
    }

    impl Model {
        fn find(&self, id: &str) -> Option<usize> {
            self.messages.iter().position(|m| m.borrow().id() == id)
        }

        fn find_tool(&self, id: &str) -> Option<(usize, usize)> {
            self.messages
                .iter()
                .enumerate()
                .find_map(|(i, m)| match &*m.borrow() {
                    Message::Assistant(a) => a
                        .tool_calls
                        .as_ref()?
                        .iter()
                        .position(|c| c.id == id)
                        .map(|j| (i, j)),
                    _ => None,
                })
        }

        pub fn push(&mut self, event: &Event) {
            match event {
                Event::TextMessageStart(e) => match self.find(&e.message_id) {
                    Some(i) => {
                        let mut m = self.messages[i].borrow_mut();
                        if m.role() != crate::Role::Activity {
                            merge_metadata(m.metadata_mut(), e.metadata.as_deref());
                        }
                    }
                    None => {
                        let mut m = Message::assistant(e.message_id.clone(), "");
                        *m.metadata_mut() = e.metadata.as_deref().cloned();
                        self.messages.push(obj(m));
                    }
                },
                Event::TextMessageContent(e) => {
                    if let Some(i) = self.find(&e.message_id) {
                        let mut m = self.messages[i].borrow_mut();
                        if super::append_text(&mut m, &e.delta) {
                            merge_metadata(m.metadata_mut(), e.metadata.as_deref());
                        }
                    }
                }
                Event::ToolCallStart(e) => {
                    if let Some((i, j)) = self.find_tool(&e.tool_call_id) {
                        if let Message::Assistant(a) = &mut *self.messages[i].borrow_mut() {
                            let c = &mut a.tool_calls.as_mut().unwrap()[j];
                            c.function.name.clone_from(&e.tool_call_name);
                            merge_metadata(&mut c.metadata, e.metadata.as_deref());
                        }
                        return;
                    }
                    let parent = e.parent_message_id.as_deref().filter(|p| !p.is_empty());
                    let existing = parent.and_then(|p| self.find(p));
                    let target = match (parent, existing) {
                        (Some(_), Some(i))
                            if self.messages[i].borrow().role() == crate::Role::Assistant =>
                        {
                            i
                        }
                        (Some(p), None) => self.create(p),
                        _ => self.create(&e.tool_call_id),
                    };
                    if let Message::Assistant(a) = &mut *self.messages[target].borrow_mut() {
                        let mut c = crate::ToolCall::new(
                            e.tool_call_id.clone(),
                            e.tool_call_name.clone(),
                            "",
                        );
                        c.metadata = e.metadata.as_deref().cloned();
                        a.tool_calls.get_or_insert_with(Vec::new).push(c);
                    }
                }
                Event::ToolCallArgs(e) => {
                    if let Some((i, j)) = self.find_tool(&e.tool_call_id)
                        && let Message::Assistant(a) = &mut *self.messages[i].borrow_mut()
                    {
                        a.tool_calls.as_mut().unwrap()[j]
                            .function
                            .arguments
                            .push_str(&e.delta);
                    }
                }
                Event::ToolCallResult(e) => {
                    let m = obj(Message::Tool(ToolMessage {
                        id: e.message_id.clone(),
                        content: e.content.clone(),
                        tool_call_id: e.tool_call_id.clone(),
                        ..Default::default()
                    }));
                    match self.find_tool(&e.tool_call_id) {
                        Some((i, _)) => {
                            let mut at = i + 1;
                            while at < self.messages.len()
                                && self.messages[at].borrow().role() == crate::Role::Tool
                            {
                                at += 1;
                            }
                            self.messages.insert(at, m);
                        }
                        None => self.messages.push(m),
                    }
                }
                Event::MessagesSnapshot(e) => {
                    let last = |id: &str| e.messages.iter().rposition(|m| m.id() == id);
                    let has_activity = e.messages.iter().any(|m| m.role() == crate::Role::Activity);
                    let has_reasoning = e
                        .messages
                        .iter()
                        .any(|m| m.role() == crate::Role::Reasoning);
                    let snap: Vec<Obj> = e.messages.iter().cloned().map(obj).collect();
                    let mut kept = Vec::new();
                    for m in &self.messages {
                        let (id, role) = (m.borrow().id().to_owned(), m.borrow().role());
                        if let Some(i) = last(&id) {
                            kept.push(snap[i].clone());
                        } else if (role == crate::Role::Activity && !has_activity)
                            || (role == crate::Role::Reasoning && !has_reasoning)
                        {
                            kept.push(m.clone());
                        }
                    }
                    let kept_ids: Vec<String> =
                        kept.iter().map(|m| m.borrow().id().to_owned()).collect();
                    for m in snap {
                        let id = m.borrow().id().to_owned();
                        if !kept_ids.contains(&id) {
                            kept.push(m);
                        }
                    }
                    self.messages = kept;
                }
                Event::ActivitySnapshot(e) => {
                    let fresh = Message::Activity(ActivityMessage {
                        id: e.message_id.clone(),
                        activity_type: e.activity_type.clone(),
                        content: e.content.clone(),
                        metadata: None,
                        subagent_run_id: e.subagent_run_id.clone(),
                    });
                    match self.find(&e.message_id) {
                        None => self.messages.push(obj(fresh)),
                        Some(i) => {
                            let old = self.messages[i].borrow().clone();
                            let mut new = fresh;
                            if let Message::Activity(_) = old {
                                *new.metadata_mut() = old.metadata().cloned();
                            }
                            self.messages[i] = obj(new);
                        }
                    }
                }
                Event::ReasoningEncryptedValue(e) => match e.subtype {
                    EncryptedValueSubtype::ToolCall => {
                        if let Some((i, j)) = self.find_tool(&e.entity_id)
                            && let Message::Assistant(a) = &mut *self.messages[i].borrow_mut()
                        {
                            a.tool_calls.as_mut().unwrap()[j].encrypted_value =
                                Some(e.encrypted_value.clone());
                        }
                    }
                    EncryptedValueSubtype::Message => {
                        if let Some(i) = self.find(&e.entity_id)
                            && let Some(v) = self.messages[i].borrow_mut().encrypted_value_mut()
                        {
                            *v = Some(e.encrypted_value.clone());
                        }
                    }
                },
                _ => {}
            }
            let _ = Content::default();
        }

        fn create(&mut self, id: &str) -> usize {
            self.messages.push(obj(Message::Assistant(AssistantMessage {
                id: id.to_owned(),
                tool_calls: Some(Vec::new()),
                ..Default::default()
            })));
            self.messages.len() - 1
        }

        pub fn json(&self) -> serde_json::Value {
            serde_json::Value::Array(
                self.messages
                    .iter()
                    .map(|m| serde_json::to_value(&*m.borrow()).unwrap())
                    .collect(),
            )
        }
    }
}

/// xorshift64*: a small deterministic generator for the differential test.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn random_event(rng: &mut Rng) -> Value {
    let id = |rng: &mut Rng| format!("m{}", rng.below(6));
    let call = |rng: &mut Rng| format!("c{}", rng.below(5));
    match rng.below(20) {
        0..=2 => json!({"type": "TEXT_MESSAGE_START", "messageId": id(rng),
                        "metadata": {"s": rng.below(3)}}),
        3..=6 => content(&id(rng), &format!("{}", rng.below(10))),
        7..=8 => {
            if rng.below(3) == 0 {
                tstart(&call(rng), "f")
            } else {
                tstart_p(&call(rng), &format!("n{}", rng.below(3)), &id(rng))
            }
        }
        9..=10 => targs(&call(rng), "x"),
        11..=13 => tresult(&id(rng), &call(rng), "r"),
        14 => {
            let n = rng.below(4);
            let msgs: Vec<Value> = (0..n)
                .map(|_| {
                    if rng.below(4) == 0 {
                        json!({"id": id(rng), "role": "assistant", "content": "s",
                               "toolCalls": [{"id": call(rng), "type": "function",
                                              "function": {"name": "f", "arguments": ""}}]})
                    } else {
                        json!({"id": id(rng), "role": "user", "content": "s"})
                    }
                })
                .collect();
            snapshot(Value::Array(msgs))
        }
        15..=16 => activity(&id(rng), "A"),
        17 => json!({"type": "REASONING_ENCRYPTED_VALUE", "subtype": "tool-call",
                     "entityId": call(rng), "encryptedValue": "e"}),
        18 => json!({"type": "REASONING_ENCRYPTED_VALUE", "subtype": "message",
                     "entityId": id(rng), "encryptedValue": "e"}),
        _ => json!({"type": "TEXT_MESSAGE_END", "messageId": id(rng)}),
    }
}

#[test]
fn differential_against_a_linear_model() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..400 {
        let mut a = Applier::new();
        let mut m = model::Model::default();
        let mut trace = Vec::new();
        for _ in 0..60 {
            let v = random_event(&mut rng);
            let e = ev(v.clone());
            trace.push(v);
            a.push(&e);
            m.push(&e);
            assert_eq!(
                msgs(&a),
                m.json(),
                "round {round} diverged after {}",
                Value::Array(trace.clone())
            );
        }
        let (owned, _, _) = a.into_parts();
        assert_eq!(serde_json::to_value(owned).unwrap(), m.json());
    }
}
