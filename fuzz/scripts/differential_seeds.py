#!/usr/bin/env python3
"""Writes the committed seeds of the differential fuzz targets (json_reader, json_writer,
proto_json) into fuzz/seeds/<target>/: JSON event texts at the edges of what the fast reader,
the own writer and the protobuf codec handle. `cargo test -p aguikit-core` replays them (with
the conformance corpus) through the same checks the fuzzer runs.

Usage: python3 fuzz/scripts/differential_seeds.py   (from the repository root)
"""
import pathlib

TMC = '"type":"TEXT_MESSAGE_CONTENT"'
SEEDS = {
    # The canonical content layout and small departures from it.
    "content": '{%s,"messageId":"m1","delta":"Hello"}' % TMC,
    "content_spaces": '{ %s , "messageId" : "m1" , "delta" : "Hi" }\n' % TMC,
    "content_reordered": '{"delta":"Hi","messageId":"m1",%s}' % TMC,
    "content_escapes": '{%s,"messageId":"m\\u0031","delta":"a\\"b\\\\c\\n\\ud83d\\ude80\\/"}' % TMC,
    "content_lone_surrogate": '{%s,"messageId":"m1","delta":"\\ud800"}' % TMC,
    "content_control_char": '{%s,"messageId":"m1","delta":"a\x01b"}' % TMC,
    "content_empty_delta": '{%s,"messageId":"m1","delta":""}' % TMC,
    "content_duplicate_delta": '{%s,"messageId":"m1","delta":"a","delta":"b"}' % TMC,
    "content_duplicate_type": '{%s,%s,"messageId":"m1","delta":"a"}' % (TMC, TMC),
    "content_escaped_key": '{%s,"message\\u0049d":"m1","delta":"a"}' % TMC,
    "content_null_delta": '{%s,"messageId":"m1","delta":null}' % TMC,
    "content_trailing": '{%s,"messageId":"m1","delta":"a"} x' % TMC,
    "content_unknown_member": '{%s,"messageId":"m1","delta":"a","extra":[1,{"b":null}]}' % TMC,
    "content_raw_event": '{%s,"messageId":"m1","delta":"a","rawEvent":{"x":1}}' % TMC,
    "content_bom": '\ufeff{%s,"messageId":"m1","delta":"a"}' % TMC,
    # Timestamps at the edges of the safe integer range, and not integers.
    "ts_max": '{%s,"messageId":"m","delta":"d","timestamp":9007199254740991}' % TMC,
    "ts_over": '{%s,"messageId":"m","delta":"d","timestamp":9007199254740992}' % TMC,
    "ts_negative": '{%s,"messageId":"m","delta":"d","timestamp":-9007199254740991}' % TMC,
    "ts_float": '{%s,"messageId":"m","delta":"d","timestamp":1.5}' % TMC,
    "ts_exp": '{%s,"messageId":"m","delta":"d","timestamp":1e3}' % TMC,
    "ts_string": '{%s,"messageId":"m","delta":"d","timestamp":"1"}' % TMC,
    # Value events: numbers of every kind, nesting, repeated keys, index-like keys.
    "snapshot_numbers": '{"type":"STATE_SNAPSHOT","snapshot":{"a":0,"b":-0,"c":1.0,"d":1e400,'
    '"e":123456789012345678,"f":1234567890123456789,"g":18446744073709551616,"h":-1.5e-7,'
    '"i":0.1,"j":2.5E+3}}',
    "snapshot_repeated_key": '{"type":"STATE_SNAPSHOT","snapshot":{"a":1,"b":2,"a":3}}',
    "snapshot_index_keys": '{"type":"STATE_SNAPSHOT","snapshot":{"b":1,"10":2,"2":3,"a":{"1":[]}}}',
    "snapshot_deep_120": '{"type":"STATE_SNAPSHOT","snapshot":' + "[" * 120 + "]" * 120 + "}",
    "snapshot_deep_127": '{"type":"STATE_SNAPSHOT","snapshot":' + "[" * 127 + "]" * 127 + "}",
    "snapshot_deep_130": '{"type":"STATE_SNAPSHOT","snapshot":' + "[" * 130 + "]" * 130 + "}",
    "snapshot_null": '{"type":"STATE_SNAPSHOT","snapshot":null}',
    "snapshot_unicode": '{"type":"STATE_SNAPSHOT","snapshot":{"東京":"naïve 🚀","\\u00e9":"\\u00e9"}}',
    "raw_event": '{"type":"RAW","event":{"k":[true,false,null,"s",1.25]},"source":"s"}',
    "custom_value": '{"type":"CUSTOM","name":"n","value":[{"x":{}},[],""]}',
    "custom_no_value": '{"type":"CUSTOM","name":"n"}',
    # Patch events: every op, extra members, bad pointers, unknown ops.
    "delta_all_ops": '{"type":"STATE_DELTA","delta":[{"op":"add","path":"/a","value":1},'
    '{"op":"remove","path":"/a"},{"op":"replace","path":"/b~1c~0","value":[1]},'
    '{"op":"move","from":"/b","path":"/c"},{"op":"copy","from":"/c","path":"/d"},'
    '{"op":"test","path":"/d","value":{"x":null}}]}',
    "delta_extra_member": '{"type":"STATE_DELTA","delta":[{"op":"add","path":"/a","value":1,"why":"x"}]}',
    "delta_missing_value": '{"type":"STATE_DELTA","delta":[{"op":"add","path":"/a"}]}',
    "delta_bad_pointer": '{"type":"STATE_DELTA","delta":[{"op":"remove","path":"a"}]}',
    "delta_bad_escape": '{"type":"STATE_DELTA","delta":[{"op":"remove","path":"/a~2"}]}',
    "delta_unknown_op": '{"type":"STATE_DELTA","delta":[{"op":"merge","path":"/a","value":1}]}',
    "delta_empty": '{"type":"STATE_DELTA","delta":[]}',
    "activity_delta": '{"type":"ACTIVITY_DELTA","messageId":"a","activityType":"t",'
    '"patch":[{"op":"replace","path":"","value":{}}]}',
    # Events the fast path leaves to serde.
    "messages_snapshot": '{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"1","role":"user",'
    '"content":"hi"},{"id":"2","role":"assistant","toolCalls":[{"id":"t","type":"function",'
    '"function":{"name":"f","arguments":"{}"}}]},{"id":"3","role":"tool","toolCallId":"t",'
    '"content":"ok"}]}',
    "run_started_input": '{"type":"RUN_STARTED","threadId":"t","runId":"r","input":{"threadId":"t",'
    '"runId":"r","state":{},"messages":[],"tools":[],"context":[],"forwardedProps":{}}}',
    "run_error": '{"type":"RUN_ERROR","message":"boom","code":"x"}',
    "tool_call_start": '{"type":"TOOL_CALL_START","toolCallId":"t","toolCallName":"f","parentMessageId":"m"}',
    "text_start_role": '{"type":"TEXT_MESSAGE_START","messageId":"m","role":"developer"}',
    "text_start_bad_role": '{"type":"TEXT_MESSAGE_START","messageId":"m","role":"robot"}',
    "unknown_type": '{"type":"FUTURE_EVENT","x":1}',
    "missing_type": '{"messageId":"m"}',
    "type_not_string": '{"type":1}',
    "not_an_object": '[1,2]',
    "empty": '',
    "truncated": '{%s,"messageId":"m1","del' % TMC,
}
# Bytes that are not UTF-8.
RAW = {
    "not_utf8": b'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"\xff"}',
    "cut_character": b'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"\xe6\x9d"}',
}

root = pathlib.Path(__file__).resolve().parent.parent / "seeds"
for target in ("json_reader", "json_writer", "proto_json"):
    d = root / target
    d.mkdir(parents=True, exist_ok=True)
    for name, text in SEEDS.items():
        (d / name).write_bytes(text.encode("utf-8", "surrogatepass"))
    for name, data in RAW.items():
        (d / name).write_bytes(data)
print(f"{len(SEEDS) + len(RAW)} seeds for each of 3 targets in {root}")
