"""aguikit's EventEncoder inside the official Python SDK's server (the interop peers'
``py-server``), answered to the official TypeScript client (``@ag-ui/client`` 1.0) over SSE
and protobuf: the client must see exactly what it sees from the unmodified server, and the
SSE bytes must be the official encoder's (timestamps aside: the server stamps events with
the time)."""

from __future__ import annotations

import json
import re
import subprocess
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from peers import PyServer, interop_dir
from test_client import SSE_ONLY, scenarios

#: What the TypeScript client's report says about a run that must not depend on the server's
#: encoder (durations and the content type aside).
COMPARED = [
    "ok", "error", "events", "messages", "state", "terminal", "outcome", "result",
    "interrupts", "pendingToolCallIds", "runError", "pendingInterrupts", "warnings",
    "unhandledRejections",
]


@pytest.fixture(scope="module")
def official_reports(servers):
    """The TypeScript client's report of every well-formed scenario from the unmodified
    server (made once for both transports)."""
    official, _ = servers
    names = well_formed(official)
    with ThreadPoolExecutor(4) as pool:
        return dict(zip(names, pool.map(lambda n: ts_client(official.url, n, False), names)))


@pytest.fixture(scope="module")
def servers():
    official = PyServer()
    ours = PyServer(aguikit_encoder=True)
    yield official, ours
    official.stop()
    ours.stop()


def ts_client(url: str, scenario: str, proto: bool) -> dict:
    d = interop_dir()
    args = ["node", str(d / "ts-client" / "client.mjs"), url, "--scenario", scenario,
            "--thread", "t-" + scenario, "--run-id", "r1", "--timeout", "30000"]
    if proto:
        args.append("--proto")
    out = subprocess.run(args, capture_output=True, text=True, timeout=90, cwd=str(d))
    try:
        return json.loads(out.stdout)
    except ValueError:
        raise AssertionError(f"client.mjs printed no report: {out.stdout}\n{out.stderr}")


def raw_body(port: int, scenario: str) -> bytes:
    body = json.dumps({
        "threadId": "t-raw", "runId": "r1", "messages": [{"id": "u1", "role": "user", "content": "hello"}],
        "tools": [{"name": "lookup", "description": "d", "parameters": {"type": "object"}}],
        "context": [], "forwardedProps": {"scenario": scenario}, "state": {},
    }).encode()
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/agent", data=body,
        headers={"Content-Type": "application/json", "Accept": "text/event-stream"},
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read()


def well_formed(server):
    return [sc["name"] for sc in scenarios(server)["scenarios"]
            if not sc.get("faulty") and sc["name"] not in ("slow", "connect")]


def test_sse_bytes_are_the_official_encoders(servers):
    official, ours = servers
    stamp = re.compile(rb'"timestamp":\d+')
    for name in well_formed(official):
        want = stamp.sub(b'"timestamp":0', raw_body(official.port, name))
        got = stamp.sub(b'"timestamp":0', raw_body(ours.port, name))
        assert got == want, name


@pytest.mark.parametrize("proto", [False, True], ids=["sse", "protobuf"])
def test_the_typescript_client_sees_the_same_runs(servers, official_reports, proto):
    _, ours = servers
    names = [n for n in official_reports if not (proto and n in SSE_ONLY)]
    assert len(names) >= 15
    with ThreadPoolExecutor(4) as pool:
        reports = list(pool.map(lambda n: ts_client(ours.url, n, proto), names))
    for name, got in zip(names, reports):
        want = official_reports[name]
        assert want["ok"], (name, want)
        for key in COMPARED:
            assert got.get(key) == want.get(key), (name, key, got.get(key), want.get(key))
        want_type = "application/vnd.ag-ui.event+proto" if proto else "text/event-stream"
        assert (got.get("contentType") or "").startswith(want_type), (name, got.get("contentType"))
