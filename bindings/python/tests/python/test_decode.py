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
