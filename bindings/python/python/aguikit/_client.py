"""The asynchronous side of the client: ``HttpAgent.arun`` and ``Session.arun``."""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator


def _resolve(future: "asyncio.Future[None]") -> None:
    """Called on the event loop by the native runtime: something may be ready."""
    if not future.done():
        future.set_result(None)


class AsyncRun:
    """The events of one run as an async iterator (``async for event in agent.arun(...)``).

    Closing it (``await run.aclose()``, leaving ``async with``, or dropping it) aborts the
    run and closes its connection.
    """

    def __init__(self, run: Any) -> None:
        self._run = run

    def __aiter__(self) -> "AsyncRun":
        return self

    async def __anext__(self) -> Any:
        while True:
            item = self._run._try_next()
            if item is not None:
                more, event = item
                if not more:
                    raise StopAsyncIteration
                return event
            loop = asyncio.get_running_loop()
            future = loop.create_future()
            self._run._wake(loop, future)
            await future

    async def aclose(self) -> None:
        """Aborts the run."""
        self._run.close()

    async def __aenter__(self) -> "AsyncRun":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self._run.close()

    @property
    def reconnects(self) -> int:
        """Reconnections made with ``Last-Event-ID`` (known once the run ended)."""
        return self._run.reconnects

    @property
    def status_code(self) -> Any:
        """The response's HTTP status (known once the run ended)."""
        return self._run.status_code

    @property
    def content_type(self) -> Any:
        """The response's content type (known once the run ended)."""
        return self._run.content_type
