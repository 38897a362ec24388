"""The client (HttpAgent, Session) against ``agui serve`` — including resume across a cut
connection — and against the official Python SDK server."""

from __future__ import annotations

import asyncio
import json
import urllib.request

import pytest

import aguikit
from aguikit import HttpAgent, Session
from peers import AguiServe, CuttingProxy, PyServer


@pytest.fixture(scope="module")
def serve():
    s = AguiServe("--delay-ms", "2")
    yield s
    s.stop()


def text_of(events):
    return "".join(e.get("delta", "") for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")


def normalized(events):
    """The events without timestamps and run input, ids numbered by first appearance."""
    ids = {}
    out = []
    for e in events:
        e = {k: v for k, v in e.items() if k not in ("timestamp", "input")}
        for k, v in e.items():
            if k.endswith("Id") and isinstance(v, str):
                e[k] = ids.setdefault(v, len(ids))
        out.append(e)
    return out


def test_runs_the_demo_agent_over_sse_and_protobuf(serve):
    for fmt in ["sse", "proto"]:
        agent = HttpAgent(serve.url, headers=serve.headers, format=fmt)
        run = agent.run(text="count to 5")
        events = list(run)
        types = [e["type"] for e in events]
        assert types[0] == "RUN_STARTED" and types[-1] == "RUN_FINISHED", types
        assert "STATE_DELTA" in types
        assert run.status_code == 200
        want = "application/vnd.ag-ui.event+proto" if fmt == "proto" else "text/event-stream"
        assert (run.content_type or "").startswith(want)
        # What the client yields verifies and folds.
        aguikit.verify(events)
        assert aguikit.apply(events)["state"]


def test_async_iteration_gives_the_same_events(serve):
    agent = HttpAgent(serve.url, headers=serve.headers)

    async def main():
        out = []
        async for e in agent.arun({"threadId": "async-1", "runId": "r1"}, text="count to 3"):
            out.append(e)
        return out

    events = asyncio.run(main())
    assert [e["type"] for e in events][-1] == "RUN_FINISHED"
    again = list(agent.run({"threadId": "async-2", "runId": "r1"}, text="count to 3"))
    assert [e["type"] for e in events] == [e["type"] for e in again]


def test_a_session_keeps_the_conversation_across_runs(serve):
    agent = HttpAgent(serve.url, headers=serve.headers)
    s = Session(agent)
    assert s.status is None
    first = list(s.run("count to 2"))
    assert s.status == "finished"
    n = len(s.messages)
    assert n >= 2 and s.messages[0]["role"] == "user"
    assert s.state
    list(s.run("hello again"))
    assert len(s.messages) > n
    assert s.messages[0] == (s.messages[0] | {})
    assert first[0]["threadId"] == s.thread_id


def test_resume_across_a_cut_connection(serve):
    agent = HttpAgent(serve.url, headers=serve.headers)
    whole = list(agent.run({"threadId": "whole", "runId": "r1"}, text="count to 30"))
    # The size of the same run's response, through a proxy that does not cut.
    meter = CuttingProxy(serve.port, None)
    list(HttpAgent(meter.url, headers=serve.headers).run({"threadId": "meter", "runId": "r1"}, text="count to 30"))
    total = meter.sent[0]
    meter.close()
    assert total > 2000
    for cut in [total // 4, total // 2, (total * 3) // 4]:
        proxy = CuttingProxy(serve.port, cut)
        agent = HttpAgent(proxy.url, headers=serve.headers, reconnect_delay=0.01, idle_timeout=20)
        run = agent.run({"threadId": f"cut-{cut}", "runId": "r1"}, text="count to 30")
        events = list(run)
        proxy.close()
        assert len(proxy.sent) == 2, f"one reconnection after {cut} bytes"
        assert run.reconnects == 1
        # Nothing lost, nothing repeated.
        assert normalized(events) == normalized(whole), cut
        assert text_of(events) == text_of(whole)


def test_a_cut_without_resume_is_a_connection_error(serve):
    meter = CuttingProxy(serve.port, 600)
    agent = HttpAgent(meter.url, headers=serve.headers, reconnect_attempts=0, idle_timeout=20)
    got = []
    with pytest.raises(aguikit.ConnectionLostError) as e:
        for ev in agent.run(text="count to 30"):
            got.append(ev)
    meter.close()
    assert isinstance(e.value, ConnectionError) and isinstance(e.value, aguikit.ClientError)
    assert e.value.events_received == len(got)


def test_clear_errors(serve):
    with pytest.raises(aguikit.HttpError) as e:
        list(HttpAgent(serve.url).run(text="hi"))
    assert e.value.status == 401
    with pytest.raises(aguikit.RequestError):
        list(HttpAgent("http://127.0.0.1:9/agent", connect_timeout=2).run(text="hi"))
    with pytest.raises(aguikit.ConfigError):
        HttpAgent("ftp://example/agent")
    with pytest.raises(aguikit.ConfigError):
        HttpAgent(serve.url, format="xml")
    with pytest.raises(ValueError):
        HttpAgent(serve.url, timeout=-1)
    slow = AguiServe("--delay-ms", "400")
    try:
        agent = HttpAgent(slow.url, headers=slow.headers, idle_timeout=0.1, reconnect_attempts=0)
        with pytest.raises(aguikit.TimeoutError) as t:
            list(agent.run(text="count to 5"))
        assert t.value.kind == "idle"
        assert isinstance(t.value, TimeoutError)
    finally:
        slow.stop()


def test_closing_a_run_aborts_it(serve):
    agent = HttpAgent(serve.url, headers=serve.headers)
    run = agent.run(text="count to 200")
    first = next(run)
    assert first["type"] == "RUN_STARTED"
    run.close()
    assert list(run) == []


def scenarios(server):
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/scenarios") as r:
        return json.load(r)


@pytest.fixture(scope="module")
def py_server():
    s = PyServer()
    yield s
    s.stop()


#: Scenarios that write SSE text of their own (comments, raw frames): no protobuf form.
SSE_ONLY = {"sse_variants", "unknown_event", "slow", "connect"}


def check_scenarios(server, fmt):
    items = [(sc["name"], sc) for sc in scenarios(server)["scenarios"]]
    checked = 0
    for name, sc in items:
        if name in ("slow", "connect", "two_runs") or sc.get("faulty"):
            continue
        if fmt == "proto" and name in SSE_ONLY:
            continue
        agent = HttpAgent(server.url, format=fmt, timeout=30)
        session = Session(agent)
        try:
            events = list(session.run("hello", forwarded_props={"scenario": name}))
        except aguikit.Error as e:
            raise AssertionError(f"scenario {name} over {fmt}: {e}") from e
        assert events, name
        terminal = sc.get("terminal")
        if terminal:
            assert events[-1]["type"] == terminal, (name, events[-1])
        if "expectState" in sc:
            assert session.state == sc["expectState"], name
        if "expectText" in sc:
            texts = [m.get("content") for m in session.messages if m["role"] == "assistant"]
            assert sc["expectText"] in texts, (name, texts)
        checked += 1
    assert checked >= 15
    return items


def test_against_the_official_python_server(py_server):
    items = check_scenarios(py_server, "sse")
    # Faulty scenarios fail cleanly, with a clear error (or, without a terminal event,
    # end as an incomplete run).
    for name, sc in items:
        if not sc.get("faulty"):
            continue
        agent = HttpAgent(py_server.url, timeout=30, reconnect_attempts=0)
        s = Session(agent)
        try:
            list(s.run("hello", forwarded_props={"scenario": name}))
        except aguikit.ClientError as e:
            assert str(e), name
            continue
        assert s.status in ("incomplete", "errored"), (name, s.status)


def test_against_the_official_server_with_aguikit_encoding_protobuf():
    server = PyServer(aguikit_encoder=True)
    try:
        check_scenarios(server, "proto")
        run = HttpAgent(server.url, format="proto").run(text="hi")
        list(run)
        assert run.content_type == "application/vnd.ag-ui.event+proto"
    finally:
        server.stop()
