"""The whole conformance corpus through the Python API, every operation: verification
(verdict and index), application (messages, state, pending interrupts), chunk expansion,
compaction, SSE and protobuf encoding. Each case runs through the list-of-dicts entry
points, the recording-as-bytes entry points and the incremental classes."""

from __future__ import annotations

import base64
import json
from typing import Any, Dict, Optional

import pytest

import aguikit
from conftest import CASE_FILES, json_eq, load_case


def minted_eq(got: Any, want: Any, seen: Dict[str, str]) -> bool:
    """As json_eq, where "<minted:N>" in want stands for one id of our choosing."""
    if isinstance(want, str) and want.startswith("<minted:") and want.endswith(">"):
        if not isinstance(got, str):
            return False
        n = want[len("<minted:") : -1]
        if n in seen:
            return seen[n] == got
        if got in seen.values():
            return False
        seen[n] = got
        return True
    if isinstance(got, list) and isinstance(want, list):
        return len(got) == len(want) and all(minted_eq(a, b, seen) for a, b in zip(got, want))
    if isinstance(got, dict) and isinstance(want, dict):
        return got.keys() == want.keys() and all(minted_eq(got[k], want[k], seen) for k in got)
    return json_eq(got, want)


def verdict(run) -> Optional[int]:
    """None when valid, else the failing index (VerificationError.index)."""
    try:
        run()
    except aguikit.VerificationError as e:
        assert e.rule, "a verification error names its rule"
        assert isinstance(e.reference, str) and isinstance(e.explanation, str)
        return e.index
    return None


def as_jsonl(events) -> bytes:
    return "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events).encode()


@pytest.mark.parametrize("path", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_case(path):
    case = load_case(path)
    events = case["events"]
    expect = case["expect"]
    want_at = None if expect["verify"]["ok"] else expect["verify"]["at"]

    # Verification, four ways: a list of dicts, a JSON array, JSON Lines, incrementally.
    assert verdict(lambda: aguikit.verify(events)) == want_at
    assert verdict(lambda: aguikit.verify(json.dumps(events).encode())) == want_at
    if all(isinstance(e, dict) for e in events):
        assert verdict(lambda: aguikit.verify(as_jsonl(events))) == want_at

    def incremental():
        v = aguikit.Verifier()
        for e in events:
            v.push(e)
        v.finish()

    assert verdict(incremental) == want_at

    # Application.
    if want_at is None:
        got = aguikit.apply(events)
        folded = {"messages": got["messages"], "state": got["state"]}
        if "apply" in expect:
            assert json_eq(folded, expect["apply"]), (folded, expect["apply"])
        elif "applyNormalized" in expect:
            assert minted_eq(folded, expect["applyNormalized"], {}), folded
        assert json_eq(got["pendingInterrupts"], expect.get("pendingInterrupts", []))
        a = aguikit.Applier()
        for e in events:
            a.push(e)
        a.finish()
        if "apply" in expect:
            assert json_eq({"messages": a.messages, "state": a.state}, expect["apply"])
        assert json_eq(a.pending_interrupts, expect.get("pendingInterrupts", []))
    else:
        with pytest.raises(aguikit.VerificationError):
            aguikit.apply(events)

    # Chunk expansion.
    if "expanded" in expect:
        assert json_eq(aguikit.expand(events), expect["expanded"])
    if "expandError" in expect:
        with pytest.raises(aguikit.VerificationError):
            aguikit.expand(events)

    # Compaction.
    if "compact" in expect:
        assert json_eq(aguikit.compact(events), expect["compact"])
    if "compactError" in expect:
        with pytest.raises(aguikit.Error):
            aguikit.compact(events)

    # SSE: frame by frame, each frame's JSON structurally the reference's.
    if "sse" in expect:
        sse = aguikit.EventEncoder().encode_many(events)
        got = sse.split("\n\n")
        assert got[-1] == "" and all(f.startswith("data: ") for f in got[:-1])
        want = [f for f in expect["sse"].split("\n\n") if f]
        assert len(got) - 1 == len(want)
        for g, w in zip(got, want):
            assert "\n" not in g
            assert json_eq(json.loads(g[6:]), json.loads(w[6:])), (g, w)
        # The recording reads back to the same events.
        assert json_eq(aguikit.decode(sse.encode()), aguikit.decode(expect["sse"].encode()))

    # Protobuf: each event's body byte for byte, framed with its length.
    if "proto" in expect:
        enc = aguikit.EventEncoder("application/vnd.ag-ui.event+proto")
        for e, want in zip(events, expect["proto"]):
            if want is None:
                with pytest.raises(aguikit.EncodeError):
                    enc.encode_bytes(e)
                continue
            body = base64.b64decode(want)
            assert enc.encode_bytes(e) == len(body).to_bytes(4, "big") + body
        framed = b"".join(
            enc.encode_bytes(e) for e, w in zip(events, expect["proto"]) if w is not None
        )
        # A protobuf recording gives the same verdict as the events.
        if all(w is not None for w in expect["proto"]):
            assert verdict(lambda: aguikit.verify(framed)) == want_at
