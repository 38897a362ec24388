"""aguikit.asgi: a Starlette app served by uvicorn, read by aguikit's client and by the
official TypeScript client, over SSE and protobuf; the verifying development mode."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
import urllib.request

import pytest
import uvicorn
from ag_ui.core import RunFinishedEvent, TextMessageStartEvent
from starlette.applications import Starlette
from starlette.routing import Route

import aguikit
from aguikit import HttpAgent
from aguikit.asgi import EXCEPTION_CODE, INCOMPLETE_CODE, VIOLATION_CODE, EventStreamResponse

GOOD = [
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
    TextMessageStartEvent(message_id="m", role="assistant"),
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "Hello"},
    b'{"type":"TEXT_MESSAGE_END","messageId":"m"}',
    {"type": "STATE_SNAPSHOT", "snapshot": {"n": 1}},
    RunFinishedEvent(thread_id="t", run_id="r"),
]
BAD = [
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "nobody", "delta": "x"},
    {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
]


async def good(request):
    async def events():
        for e in GOOD:
            yield e

    return EventStreamResponse(events(), request)


async def sync_good(request):
    return EventStreamResponse(iter(GOOD), request, verify=True)


async def bad(request):
    return EventStreamResponse(iter(BAD), request, verify=request.query_params.get("verify") == "1")


async def unfinished(request):
    return EventStreamResponse(iter(GOOD[:3]), request, verify=True)


async def raises(request):
    async def events():
        yield GOOD[0]
        yield GOOD[1]
        raise RuntimeError("boom")

    return EventStreamResponse(events(), request)


APP = Starlette(routes=[
    Route("/raises", raises, methods=["POST"]),
    Route("/good", good, methods=["POST"]),
    Route("/sync", sync_good, methods=["POST"]),
    Route("/bad", bad, methods=["POST"]),
    Route("/unfinished", unfinished, methods=["POST"]),
])


@pytest.fixture(scope="module")
def base():
    sock = socket.create_server(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(APP, log_level="warning", lifespan="off"))
    t = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    t.start()
    deadline = time.time() + 20
    while not server.started and time.time() < deadline:
        time.sleep(0.02)
    assert server.started
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    t.join(10)


def post(url, accept):
    req = urllib.request.Request(url, data=b"{}", headers={"Accept": accept, "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=20) as r:
        return r.headers.get("content-type"), r.read()


def test_sse_and_protobuf_by_accept(base):
    ct, body = post(base + "/good", "text/event-stream")
    assert ct.startswith("text/event-stream")
    assert body.startswith(b'data: {"type":"RUN_STARTED"')
    ct2, proto = post(base + "/good", "application/vnd.ag-ui.event+proto")
    assert ct2 == "application/vnd.ag-ui.event+proto"
    assert aguikit.decode(proto) == aguikit.decode(body)
    assert post(base + "/good", "*/*")[0].startswith("text/event-stream")
    for fmt in ["sse", "proto"]:
        events = list(HttpAgent(base + "/good", format=fmt).run())
        assert [e["type"] for e in events] == [
            "RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
            "STATE_SNAPSHOT", "RUN_FINISHED",
        ]
    assert list(HttpAgent(base + "/sync").run())[-1]["type"] == "RUN_FINISHED"


def test_development_mode_ends_a_bad_stream_with_run_error(base):
    # Without verification the client refuses the stream.
    with pytest.raises(aguikit.ProtocolError) as e:
        list(HttpAgent(base + "/bad").run())
    assert e.value.index == 1
    # With it, the offending event is replaced by a RUN_ERROR the client accepts.
    for fmt in ["sse", "proto"]:
        events = list(HttpAgent(base + "/bad?verify=1", format=fmt).run())
        assert [e["type"] for e in events] == ["RUN_STARTED", "RUN_ERROR"]
        assert events[-1]["code"] == VIOLATION_CODE
        assert "V" in events[-1]["message"] and "event 1" in events[-1]["message"]
    _, body = post(base + "/bad?verify=1", "text/event-stream")
    aguikit.verify(body)
    # A stream that ends with a run still open gets its RUN_ERROR at the end.
    events = list(HttpAgent(base + "/unfinished").run())
    assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] == INCOMPLETE_CODE
    # An exception in the middle of a run ends it with a RUN_ERROR too.
    events = list(HttpAgent(base + "/raises").run())
    assert [e["type"] for e in events] == ["RUN_STARTED", "TEXT_MESSAGE_START", "RUN_ERROR"]
    assert events[-1]["code"] == EXCEPTION_CODE and "boom" in events[-1]["message"]


def test_the_typescript_client_reads_it(base):
    if os.environ.get("AGUI_SKIP_INTEROP") == "1":
        pytest.skip("AGUI_SKIP_INTEROP=1: the official TypeScript client is not used")
    d = os.environ["AGUI_INTEROP_DIR"]
    for proto in [False, True]:
        args = ["node", os.path.join(d, "ts-client", "client.mjs"), base + "/good", "--timeout", "20000"]
        if proto:
            args.append("--proto")
        out = subprocess.run(args, capture_output=True, text=True, timeout=90, cwd=d)
        report = json.loads(out.stdout)
        assert report["ok"], report
        assert report["terminal"] == "RUN_FINISHED"
        assert report["state"] == {"n": 1}
        assert report["messages"][-1]["content"] == "Hello"
        assert report["warnings"] == []
        want = "application/vnd.ag-ui.event+proto" if proto else "text/event-stream"
        assert report["contentType"].startswith(want)
