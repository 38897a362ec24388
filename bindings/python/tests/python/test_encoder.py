"""EventEncoder: byte-identical SSE to the official ``ag_ui.encoder.EventEncoder`` on every
event of the conformance corpus (given as ``ag_ui.core`` models, as dicts and as JSON bytes),
Accept negotiation, protobuf, and errors."""

from __future__ import annotations

import json
import math
import random
import struct

import pytest
from ag_ui.core import (
    CustomEvent,
    Event,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageStartEvent,
)
from ag_ui.encoder import EventEncoder as OfficialEncoder
from pydantic import TypeAdapter

import aguikit
from aguikit import EventEncoder

EVENT = TypeAdapter(Event)
PROTO = "application/vnd.ag-ui.event+proto"


def corpus_events(cases):
    """Every corpus event the official SDK accepts, with its model."""
    out = []
    for case in cases:
        for e in case["events"]:
            try:
                model = EVENT.validate_python(e)
            except Exception:
                continue
            out.append((e, model))
    return out


def test_byte_identical_to_the_official_encoder(cases):
    official = OfficialEncoder()
    ours = EventEncoder()
    events = corpus_events(cases)
    assert len(events) > 5000
    for raw, model in events:
        want = official.encode(model)
        assert ours.encode(model) == want, raw
        assert ours.encode(raw) == want, raw
        assert ours.encode(json.dumps(raw).encode()) == want, raw
        assert ours.encode_bytes(raw) == want.encode()
    # Many at once: the concatenation.
    some = [m for _, m in events[:500]]
    assert ours.encode_many(some) == "".join(official.encode(m) for m in some)


def test_dicts_with_snake_case_names_and_extras_match_their_models():
    official = OfficialEncoder()
    ours = EventEncoder()
    for d in [
        {"type": "TEXT_MESSAGE_START", "message_id": "m", "role": "assistant", "x": None},
        {"type": "TOOL_CALL_START", "tool_call_name": "f", "tool_call_id": "c", "zz": [1, {"a": None}]},
        {"type": "REASONING_MESSAGE_START", "messageId": "r"},  # the model's default role
        {"type": "MESSAGES_SNAPSHOT", "messages": [
            {"role": "assistant", "id": "a", "toolCalls": [{"id": "t", "function": {"arguments": "{}", "name": "f"}}]},
            {"content": [{"text": "hi", "type": "text"}], "role": "user", "id": "u"},
            {"toolCallId": "t", "content": "ok", "role": "tool", "id": "t1", "error": None},
        ]},
        {"runId": "r", "threadId": "t", "type": "RUN_STARTED", "input": {
            "runId": "r", "threadId": "t", "messages": [], "tools": [{"description": "d", "name": "n"}],
            "forwardedProps": {"b": 1, "a": None}}},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": {"interrupts": [
            {"reason": "why", "id": "i", "expiresAt": None}], "type": "interrupt"}},
        {"type": "STATE_DELTA", "delta": [{"path": "/a", "from": "/b", "op": "move"}]},
    ]:
        want = official.encode(EVENT.validate_python(d))
        assert EventEncoder().encode(d) == want, d
        assert ours.encode(d) == want


def test_models_with_every_value_type():
    official = OfficialEncoder()
    ours = EventEncoder()
    values = [
        1.0, -0.0, 0.1, 1e21, 1e16, 1e15, 1.5e-7, 1e-5, 1e300, 5e-324, float("inf"), float("nan"),
        2**70, -(2**63), 2**64 - 1, True, None, "é\u2028\x00\x1f\"\\/", (1, 2), {"k": {3: [None]}},
        b"bytes", [], {}, {1, 2},
    ]
    for v in values:
        m = CustomEvent(name="n", value=v, raw_event={"v": v})
        assert ours.encode(m) == official.encode(m), v
    m = TextMessageStartEvent(message_id="m", role="assistant", extra_field=None, raw_event=None)
    assert ours.encode(m) == official.encode(m)


def test_floats_are_written_as_pydantic_writes_them():
    import pydantic_core

    ours = EventEncoder()
    rng = random.Random(7)
    for _ in range(20000):
        bits = rng.getrandbits(64)
        f = struct.unpack("<d", bits.to_bytes(8, "little"))[0]
        if math.isnan(f) or math.isinf(f):
            continue
        want = pydantic_core.to_json(f).decode()
        got = ours.encode({"type": "CUSTOM", "name": "n", "value": f})
        assert got == f'data: {{"type":"CUSTOM","name":"n","value":{want}}}\n\n', f
    for f in [1e-7, 1e-6, 1e-5, 123456789.0, 1e22, 9007199254740993.0, 0.1 + 0.2]:
        want = pydantic_core.to_json(f).decode()
        assert ours.encode({"type": "CUSTOM", "name": "n", "value": f}).endswith(f"{want}}}\n\n")


@pytest.mark.parametrize(
    "accept,proto",
    [
        (None, False),
        ("", False),
        ("text/event-stream", False),
        ("application/json", False),
        ("*/*", False),
        (PROTO, True),
        (" APPLICATION/VND.AG-UI.EVENT+PROTO ", True),
        (f"{PROTO};q=0", False),
        (f"text/event-stream, {PROTO};q=0.5", False),
        (f"text/event-stream;q=0.5, {PROTO}", True),
        (f"{PROTO}, text/event-stream", True),
    ],
)
def test_accept_negotiation(accept, proto):
    enc = EventEncoder(accept=accept)
    assert enc.get_content_type() == (PROTO if proto else "text/event-stream")
    assert enc.format == ("proto" if proto else "sse")
    out = enc.encode(RunStartedEvent(thread_id="t", run_id="r"))
    assert isinstance(out, bytes if proto else str)


def test_protobuf_frames_decode_back():
    enc = EventEncoder(PROTO)
    events = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        TextMessageStartEvent(message_id="m", role="assistant"),
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "héllo"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    body = b"".join(enc.encode(e) for e in events)
    assert body == enc.encode_many(events)
    back = aguikit.decode(body)
    assert [e["type"] for e in back] == [
        "RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED",
    ]
    assert back[2]["delta"] == "héllo"
    aguikit.verify(body)


def test_invalid_events_are_refused_with_the_field_named():
    enc = EventEncoder()
    with pytest.raises(aguikit.EncodeError) as e:
        enc.encode({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m"})
    assert "delta" in str(e.value)
    with pytest.raises(aguikit.EncodeError) as e:
        enc.encode({"type": "TEXT_MESSAGE_CONTENT", "messageId": 7, "delta": "x"})
    assert "messageId" in str(e.value)
    with pytest.raises(aguikit.EncodeError):
        enc.encode(b"{not json")
    with pytest.raises(aguikit.EncodeError) as e:
        enc.encode({"type": "CUSTOM", "name": "n", "value": {"when": object()}})
    assert "$.value.when" in str(e.value)
    deep = []
    for _ in range(1000):
        deep = [deep]
    with pytest.raises(aguikit.EncodeError):
        enc.encode({"type": "CUSTOM", "name": "n", "value": deep})
    loop = {}
    loop["self"] = loop
    with pytest.raises(aguikit.EncodeError):
        enc.encode({"type": "CUSTOM", "name": "n", "value": loop})
    with pytest.raises(TypeError):
        enc.encode(42)
    # No protobuf form for an unknown type (SSE writes it as given, like the reference).
    assert EventEncoder().encode({"type": "FUTURE", "b": 1, "a": None}) == 'data: {"type":"FUTURE","b":1,"a":null}\n\n'
    with pytest.raises(aguikit.EncodeError):
        EventEncoder(PROTO).encode({"type": "FUTURE"})
    # Every error is an aguikit.Error and a ValueError.
    assert issubclass(aguikit.EncodeError, aguikit.Error)
    assert issubclass(aguikit.EncodeError, ValueError)


def test_a_model_of_another_library_writes_itself():
    from pydantic import BaseModel

    class Mine(BaseModel):
        type: str = "CUSTOM"
        name: str = "n"
        value: int = 1

    assert EventEncoder().encode(Mine()) == 'data: {"type":"CUSTOM","name":"n","value":1}\n\n'
    # Inside an SDK model, a value only pydantic can write: the model writes itself.
    import datetime

    when = datetime.datetime(2024, 1, 2, 3, 4, 5)
    m = CustomEvent(name="n", value={"when": when})
    assert EventEncoder().encode(m) == OfficialEncoder().encode(m)
