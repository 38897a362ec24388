"""Decoding: format detection, the incremental decoders split at every byte, errors with
their index, and ag_ui.core models on request."""

from __future__ import annotations

import json

import pytest
from ag_ui.core import TextMessageContentEvent

import aguikit

PROTO = "application/vnd.ag-ui.event+proto"
EVENTS = [
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
    {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "h\u00e9llo \U0001F600"},
    {"type": "TEXT_MESSAGE_END", "messageId": "m"},
    {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
]


def test_every_format_is_detected():
    sse = aguikit.EventEncoder().encode_many(EVENTS).encode()
    proto = aguikit.EventEncoder(PROTO).encode_many(EVENTS)
    jsonl = "".join(json.dumps(e) + "\n" for e in EVENTS).encode()
    array = json.dumps(EVENTS).encode()
    case = json.dumps({"name": "x", "events": EVENTS, "expect": {}}).encode()
    crlf = sse.replace(b"\n", b"\r\n")
    bom = b"\xef\xbb\xbf" + b": comment\n" + sse
    for data in [sse, proto, jsonl, array, case, crlf, bom, sse.decode()]:
        assert aguikit.decode(data) == EVENTS, data[:40]
    assert aguikit.decode(sse, "sse") == EVENTS
    assert aguikit.decode(proto, "proto") == EVENTS
    assert aguikit.decode(b"") == []
    with pytest.raises(aguikit.DecodeError):
        aguikit.decode(b"hello")
    with pytest.raises(ValueError):
        aguikit.decode(sse, "xml")


def test_incremental_decoders_at_every_split():
    sse = aguikit.EventEncoder().encode_many(EVENTS).encode()
    proto = aguikit.EventEncoder(PROTO).encode_many(EVENTS)
    for data, cls in [(sse, aguikit.SseDecoder), (proto, aguikit.ProtoDecoder)]:
        for split in range(len(data) + 1):
            d = cls()
            got = d.feed(data[:split]) + d.feed(data[split:]) + d.finish()
            assert got == EVENTS, (cls, split)
    # One byte at a time (UTF-8 split across reads).
    d = aguikit.SseDecoder()
    got = []
    for i in range(len(sse)):
        got += d.feed(sse[i : i + 1])
    assert got + d.finish() == EVENTS
    # A last frame without its blank line, ids and retry.
    d = aguikit.SseDecoder()
    assert d.feed(b'retry: 250\nid: 7\ndata: {"type":"RUN_STARTED","threadId":"t","runId":"r"}') == []
    assert d.finish() == EVENTS[:1]
    assert d.last_event_id == "7" and d.retry == 250


def test_errors_name_the_frame_and_keep_what_came_before():
    sse = aguikit.EventEncoder().encode_many(EVENTS[:2]).encode()
    bad = sse + b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":1}\n\n' + sse
    with pytest.raises(aguikit.DecodeError) as e:
        aguikit.decode(bad)
    assert e.value.index == 2 and e.value.events == EVENTS[:2]
    d = aguikit.SseDecoder()
    with pytest.raises(aguikit.DecodeError) as e:
        d.feed(bad)
    assert e.value.index == 2 and e.value.events == EVENTS[:2]
    # Decoding goes on after a bad frame.
    assert d.feed(b"") == EVENTS[:2]
    # Limits.
    with pytest.raises(aguikit.DecodeError):
        aguikit.SseDecoder(max_frame_size=10).feed(sse)
    proto = aguikit.EventEncoder(PROTO).encode_many(EVENTS)
    p = aguikit.ProtoDecoder()
    assert p.feed(proto[:-3]) == EVENTS[:-1]
    with pytest.raises(aguikit.DecodeError):
        p.finish()
    with pytest.raises(aguikit.DecodeError):
        aguikit.decode(b"\x00\x00\x00\x09abc")
    with pytest.raises(TypeError):
        aguikit.decode([1, 2])


def test_models_on_request():
    sse = aguikit.EventEncoder().encode_many(EVENTS).encode()
    models = aguikit.decode(sse, models=True)
    assert isinstance(models[2], TextMessageContentEvent)
    assert models[2].delta == EVENTS[2]["delta"]
    d = aguikit.SseDecoder(models=True)
    assert isinstance(d.feed(sse)[2], TextMessageContentEvent)


def test_recordings_verify_and_fold_with_a_named_failure():
    sse = aguikit.EventEncoder().encode_many(EVENTS).encode()
    aguikit.verify(sse)
    out = aguikit.apply(sse)
    assert out["messages"] == [{"id": "m", "role": "assistant", "content": EVENTS[2]["delta"]}]
    broken = aguikit.EventEncoder().encode_many([EVENTS[0], EVENTS[2]]).encode()
    with pytest.raises(aguikit.VerificationError) as e:
        aguikit.verify(broken)
    assert (e.value.index, e.value.rule, e.value.event_type) == (1, "V16", "TEXT_MESSAGE_CONTENT")
    assert "verifyEvents" in e.value.reference
    # Truncated bytes: the events before are checked, then the DecodeError says where.
    with pytest.raises(aguikit.DecodeError) as e:
        aguikit.verify(aguikit.EventEncoder(PROTO).encode_many(EVENTS)[:-2])
    assert e.value.index == 4
    a = aguikit.Applier(messages=[{"id": "u", "role": "user", "content": "hi"}], state={"k": 1})
    a.extend(sse)
    assert [m["id"] for m in a.messages] == ["u", "m"] and a.state == {"k": 1}


def frames(*texts: str) -> bytes:
    return "".join(f"data: {t}\n\n" for t in texts).encode()


def ordered(events):
    """Events with their key order made visible (dict equality ignores it)."""
    if isinstance(events, dict):
        return [(k, ordered(v)) for k, v in events.items()]
    if isinstance(events, list):
        return [ordered(v) for v in events]
    return (type(events).__name__, events)


# Content events as producers write them (the bulk of a stream, read without building the
# event) next to the same events written otherwise (read through the general path).
TRICKY = [
    r'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"plain"}',
    r'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"plain"}',
    r'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m\u00e9","delta":"\ud83d\ude00 \"q\" \\ \/ \b\f\n\r\t \u0000"}',
    '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m\u00e9","delta":"h\u00e9llo \U0001F600"}',
    r'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":""}',
    '{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"' + "x" * 64 + '"}',
    '{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"' + "x" * 65 + '"}',
    '{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"' + "x" * 65 + '"}',
    r'{"type":"REASONING_MESSAGE_CONTENT","messageId":"m1","delta":"r"}',
    r'{"type":"REASONING_MESSAGE_CONTENT","messageId":"m2","delta":"r"}',
    r'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"plain"}  ',
    # Otherwise: member order, whitespace, timestamp, unknown members, a duplicate.
    r'{"delta":"d","type":"TEXT_MESSAGE_CONTENT","messageId":"m1"}',
    r'{ "type" : "TEXT_MESSAGE_CONTENT" , "messageId" : "m1" , "delta" : "d" }',
    r'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"d","timestamp":1700000000000}',
    r'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"d","extra":{"a":[1]}}',
    r'{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"\u00e9","subagentRunId":"s"}',
]

TRICKY_DECODED = [
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "plain"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "plain"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m\u00e9", "delta": "\U0001F600 \"q\" \\ / \b\f\n\r\t \x00"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m\u00e9", "delta": "h\u00e9llo \U0001F600"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": ""},
    {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "x" * 64},
    {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "x" * 65},
    {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "x" * 65},
    {"type": "REASONING_MESSAGE_CONTENT", "messageId": "m1", "delta": "r"},
    {"type": "REASONING_MESSAGE_CONTENT", "messageId": "m2", "delta": "r"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "plain"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "d"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "d"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "d", "timestamp": 1700000000000},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "d"},
    {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "\u00e9", "subagentRunId": "s"},
]


def test_decoded_dicts_are_exact_whichever_path_reads_them():
    want = ordered(TRICKY_DECODED)
    sse = frames(*TRICKY)
    jsonl = "".join(t.strip() + "\n" for t in TRICKY).encode()
    assert ordered(aguikit.decode(sse)) == want
    assert ordered(aguikit.decode(sse.decode())) == want
    assert ordered(aguikit.decode(jsonl)) == want
    d = aguikit.SseDecoder()
    assert ordered(d.feed(sse) + d.finish()) == want
    # One event per call: the strings a field remembers from call to call stay right.
    assert ordered([aguikit.decode(frames(t))[0] for t in TRICKY]) == want
    # Across batches (events are converted a few hundred at a time): a long recording
    # whose ids change at every event, and whose deltas sometimes repeat.
    texts = [
        '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m%d","delta":"%s"}' % (i % 7, "ab"[i % 3 == 0] * (i % 70))
        for i in range(2000)
    ]
    assert ordered(aguikit.decode(frames(*texts))) == ordered([json.loads(t) for t in texts])
    assert all(type(e["delta"]) is str for e in aguikit.decode(frames(*texts)))


def test_random_content_events_agree_with_json_loads():
    # Random strings, written with and without escapes, through both paths: the layout
    # producers write, and the same event with a space after the type (the general path).
    import random

    rng = random.Random(39)
    alphabet = "ab \"\\/\b\f\n\r\t\x00\x1f\x7f\u00e9\u2028\ud7ff\ue000\uffff\U0001F600\U0010FFFF"
    for _ in range(300):
        delta = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 90)))
        mid = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 12)))
        ascii_only = rng.random() < 0.5
        d, m = json.dumps(delta, ensure_ascii=ascii_only), json.dumps(mid, ensure_ascii=ascii_only)
        kind, key = rng.choice(
            [("TEXT_MESSAGE_CONTENT", "messageId"), ("REASONING_MESSAGE_CONTENT", "messageId"), ("TOOL_CALL_ARGS", "toolCallId")]
        )
        fast = '{"type":"%s","%s":%s,"delta":%s}' % (kind, key, m, d)
        general = '{"type": "%s","%s":%s,"delta":%s}' % (kind, key, m, d)
        want = ordered([{"type": kind, key: mid, "delta": delta}] * 2)
        assert ordered(aguikit.decode(frames(fast, general))) == want, fast


def test_json_values_keep_numbers_keys_and_order():
    # Floats to their shortest repr, integers beyond 64 bits as floats (as serde_json reads
    # them), a repeated key keeps its first place and its last value, as json.loads does.
    text = (
        '{"type":"CUSTOM","name":"n","value":{"z":1,"a":[0.1,1e300,-0.0,2.5e-8,'
        "18446744073709551615,-9223372036854775808,123456789012345678901234567890,"
        '"\\u00e9\\ud83d\\ude00"],"d":1,"b":{"x":null,"y":true},"d":2}}'
    )
    got = aguikit.decode(frames(text))[0]
    value = got["value"]
    assert list(value) == ["z", "a", "d", "b"] and value["d"] == 2
    assert value["a"][:4] == [0.1, 1e300, -0.0, 2.5e-8]
    assert repr(value["a"][2]) == "-0.0"
    assert value["a"][4:6] == [18446744073709551615, -9223372036854775808]
    assert type(value["a"][6]) is float and value["a"][6] == 1.2345678901234568e29
    assert value["a"][7] == "\u00e9\U0001F600"
    assert value["b"] == {"x": None, "y": True}
    assert ordered(got)[:2] == [("type", ("str", "CUSTOM")), ("name", ("str", "n"))]
    # A state snapshot whose document is a string, and one with an object.
    texts = [
        '{"type":"STATE_SNAPSHOT","snapshot":"s"}',
        '{"type":"STATE_SNAPSHOT","snapshot":"s"}',
        '{"type":"STATE_SNAPSHOT","snapshot":{"type":"t","delta":"d"}}',
    ]
    assert ordered(aguikit.decode(frames(*texts))) == ordered([json.loads(t) for t in texts])


def test_decoding_inside_a_finalizer_run_while_decoding():
    # The garbage collector can run finalizers while a decode builds its dicts; a
    # finalizer that decodes too must get its own events right, and so must the outer one.
    import gc

    inner = frames(*TRICKY)
    seen = []
    decoding = []

    class Cycle:
        def __init__(self):
            self.me = self

        def __del__(self):
            seen.append((bool(decoding), ordered(aguikit.decode(inner))))

    texts = [
        '{"type":"TEXT_MESSAGE_CONTENT","messageId":"o%d","delta":"x%d"}' % (i % 3, i) for i in range(600)
    ]
    texts.append('{"type":"RUN_STARTED","threadId":"t","runId":"r","input":{"threadId":"t","runId":"r","state":{"a":[{"b":1}]},"messages":[],"tools":[],"context":[],"forwardedProps":{}}}')
    old = gc.get_threshold()
    try:
        gc.set_threshold(1)
        for _ in range(50):
            Cycle()
        decoding.append(True)
        got = aguikit.decode(frames(*texts))
        decoding.clear()
    finally:
        gc.set_threshold(*old)
        gc.collect()
    assert ordered(got[:-1]) == ordered([json.loads(t) for t in texts[:-1]])
    assert got[-1]["input"]["state"] == {"a": [{"b": 1}]}
    assert any(during for during, _ in seen), "no finalizer ran during the decode"
    assert all(s == ordered(TRICKY_DECODED) for _, s in seen)
