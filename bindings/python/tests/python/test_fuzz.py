"""No input crashes the interpreter: the conformance corpus (as events, SSE, protobuf,
JSON Lines and case files — the seeds of the Rust fuzz targets), mutated deterministically
(byte flips, insertions, truncations, splices; values swapped for other types, huge numbers,
deep nesting, cycles), fed to every Python entry point. Each call must return or raise an
ordinary exception (``aguikit.Error``, ``TypeError`` or ``ValueError``): never a Rust panic
(``pyo3_runtime.PanicException``), a ``SystemError``, a ``RecursionError``, or a crash.

``AGUI_FUZZ_ITERATIONS`` (default 150, a few seconds in a release build; raise it for a longer run) sets how many mutated inputs each target gets; the
seed is printed, and ``AGUI_FUZZ_SEED`` replays one.
"""

from __future__ import annotations

import json
import os
import random

import pytest

import aguikit
from conftest import all_cases

ITERATIONS = int(os.environ.get("AGUI_FUZZ_ITERATIONS", "150"))
SEED = int(os.environ.get("AGUI_FUZZ_SEED", "20261205"))
PROTO = "application/vnd.ag-ui.event+proto"
ALLOWED = (aguikit.Error, TypeError, ValueError)


def call(f, *args, **kwargs):
    try:
        f(*args, **kwargs)
    except ALLOWED:
        pass
    except BaseException as e:  # noqa: B036 - a panic is a BaseException
        raise AssertionError(f"{f.__name__ if hasattr(f, '__name__') else f} raised {type(e).__name__}: {e}") from e


@pytest.fixture(scope="module")
def seeds():
    sse, proto, events, files = [], [], [], []
    enc, penc = aguikit.EventEncoder(), aguikit.EventEncoder(PROTO)
    for case in all_cases():
        evs = case["events"]
        events.extend(evs)
        files.append(json.dumps(case).encode())
        files.append("".join(json.dumps(e) + "\n" for e in evs).encode())
        if "sse" in case["expect"]:
            sse.append(case["expect"]["sse"].encode())
        for e in evs:
            try:
                proto.append(penc.encode_bytes(e))
            except (aguikit.EncodeError, TypeError):
                pass
        try:
            sse.append(enc.encode_many(evs).encode())
        except (aguikit.EncodeError, TypeError):
            pass
    return {"sse": sse, "proto": proto, "events": events, "files": files}


def mutate_bytes(rng: random.Random, data: bytes, pool) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        op = rng.randrange(7)
        if op == 0 and b:
            b[rng.randrange(len(b))] = rng.randrange(256)
        elif op == 1:
            b[rng.randrange(len(b) + 1):0] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif op == 2 and b:
            del b[rng.randrange(len(b)):]
        elif op == 3:
            other = rng.choice(pool)
            i = rng.randrange(len(other) + 1)
            b[rng.randrange(len(b) + 1):0] = other[i : i + rng.randint(1, 64)]
        elif op == 4:
            b[rng.randrange(len(b) + 1):0] = rng.choice(
                [b"\r", b"\n\n", b"data:", b"\xff\xfe", b"\x00\x00\x00\x05", b"\xef\xbb\xbf", b"{", b"]", b'"\\ud800"']
            )
        elif op == 5 and len(b) > 4:
            i = rng.randrange(len(b) - 4)
            b[i : i + 4] = rng.randrange(1 << 32).to_bytes(4, "big")
        elif op == 6 and b:
            i = rng.randrange(len(b))
            b[i:i] = b[i : i + rng.randint(1, 32)]
    return bytes(b)


def weird(rng: random.Random, depth=0):
    choice = rng.randrange(14)
    if choice == 0:
        return None
    if choice == 1:
        return rng.choice([0, -1, 2**53 + 1, 2**64, -(2**200), 10**400])
    if choice == 2:
        return rng.choice([0.5, float("nan"), float("inf"), -0.0, 1e308])
    if choice == 3:
        return rng.choice(["", "x" * rng.randint(0, 300), "\ud800", "é\x00\u2028", "RUN_STARTED"])
    if choice == 4:
        return rng.choice([True, False])
    if choice == 5 and depth < 3:
        return [weird(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if choice == 6 and depth < 3:
        return {rng.choice(["type", "messageId", "delta", "id", "role", "content", "op", "path", "x"]): weird(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    if choice == 7:
        deep = []
        for _ in range(rng.choice([10, 300, 5000])):
            deep = [deep]
        return deep
    if choice == 8:
        loop = {}
        loop["self"] = loop
        return loop
    if choice == 9:
        return b"\xff bytes"
    if choice == 10:
        return object()
    if choice == 11:
        return {1: 2, (3,): 4} if rng.random() < 0.5 else {1: 2}
    if choice == 12:
        return (1, "two")
    return {"type": rng.choice(["TEXT_MESSAGE_CONTENT", "RUN_STARTED", "STATE_DELTA", "MESSAGES_SNAPSHOT", "FUTURE"])}


def mutate_event(rng: random.Random, event):
    if not isinstance(event, dict) or not event or rng.random() < 0.1:
        return weird(rng)
    e = dict(event)
    for _ in range(rng.randint(1, 3)):
        key = rng.choice(list(e) + ["extra", "message_id", "rawEvent"])
        if rng.random() < 0.2:
            e.pop(key, None)
        else:
            e[key] = weird(rng)
    return e


def test_byte_entry_points_never_crash(seeds):
    rng = random.Random(SEED)
    pool = seeds["sse"] + seeds["proto"] + seeds["files"]
    print(f"seed {SEED}, {ITERATIONS} iterations")
    for i in range(ITERATIONS):
        data = mutate_bytes(rng, rng.choice(pool), pool)
        for fmt in (None, "sse", "proto", "json"):
            call(aguikit.decode, data, fmt)
        call(aguikit.verify, data)
        call(aguikit.apply, data)
        call(aguikit.expand, data)
        call(aguikit.compact, data)
        call(aguikit.decode, data.decode("utf-8", "replace"))
        for cls in (aguikit.SseDecoder, aguikit.ProtoDecoder):
            d = cls(max_frame_size=rng.choice([16, 1024, 1 << 24]))
            pos = 0
            while pos < len(data):
                step = rng.randint(1, 512)
                call(d.feed, data[pos : pos + step])
                pos += step
            call(d.finish)
        call(aguikit.EventEncoder().encode, data)
        call(aguikit.EventEncoder(PROTO).encode, data)


def test_object_entry_points_never_crash(seeds):
    rng = random.Random(SEED + 1)
    events = seeds["events"]
    enc, penc = aguikit.EventEncoder(), aguikit.EventEncoder(PROTO)
    for i in range(ITERATIONS):
        batch = [rng.choice(events) for _ in range(rng.randint(1, 8))]
        batch = [mutate_event(rng, e) if rng.random() < 0.5 else e for e in batch]
        for e in batch:
            call(enc.encode, e)
            call(penc.encode_bytes, e)
        call(enc.encode_many, batch)
        call(aguikit.verify, batch)
        call(aguikit.apply, batch)
        call(aguikit.expand, batch)
        call(aguikit.compact, batch)
        v, a = aguikit.Verifier(), aguikit.Applier()
        for e in batch:
            call(v.push, e)
            call(a.push, e)
        call(v.finish)
        call(lambda: (a.messages, a.state, a.pending_interrupts, a.snapshot()))
        call(aguikit.Applier, messages=weird(rng), state=weird(rng))
        call(aguikit.HttpAgent("http://127.0.0.1:9/agent").run, mutate_event(rng, {"threadId": "t", "runId": "r", "messages": []}))
