"""Serving AG-UI streams from Starlette or FastAPI (``pip install aguikit[asgi]``).

:class:`EventStreamResponse` streams an iterator (sync or async) of events — dicts,
``ag_ui.core`` models or JSON bytes — as SSE, or as protobuf when the request's ``Accept``
header asks for it. With ``verify=True`` (a development mode) the outgoing stream is checked
with the reference client's rules as it goes: at the first violation a ``RUN_ERROR`` (code
``protocol_violation``) is sent in place of the offending event and the stream ends, so that
clients see a clean failure instead of a stream they would reject; the violation is logged.
"""

from __future__ import annotations

import json
import logging
from typing import Any, AsyncIterator, Iterable, Mapping, Optional, Union, AsyncIterable

from starlette.requests import Request
from starlette.responses import StreamingResponse

from ._aguikit import EventEncoder, Verifier
from .errors import VerificationError

__all__ = ["EventStreamResponse", "VIOLATION_CODE", "INCOMPLETE_CODE", "EXCEPTION_CODE"]

log = logging.getLogger("aguikit.asgi")

#: The ``RUN_ERROR.code`` sent when ``verify=True`` catches a violation.
VIOLATION_CODE = "protocol_violation"
#: The ``RUN_ERROR.code`` sent when ``verify=True`` sees the events end with a run open.
INCOMPLETE_CODE = "incomplete_run"
#: The ``RUN_ERROR.code`` sent when the events' iterator raises while a run is open.
EXCEPTION_CODE = "agent_exception"

Events = Union[Iterable[Any], AsyncIterable[Any]]


async def _each(events: Events) -> AsyncIterator[Any]:
    if hasattr(events, "__aiter__"):
        async for e in events:  # type: ignore[union-attr]
            yield e
    else:
        for e in events:  # type: ignore[union-attr]
            yield e


class EventStreamResponse(StreamingResponse):
    """A streaming response of AG-UI events with content negotiation.

    ``events``: an iterator or async iterator of events. ``request`` (or ``accept``, the
    ``Accept`` header itself) decides the format: protobuf when it names
    ``application/vnd.ag-ui.event+proto`` at least as strongly as ``text/event-stream``,
    SSE otherwise. ``verify=True`` checks every outgoing event (see the module docs).
    """

    def __init__(
        self,
        events: Events,
        request: Optional[Request] = None,
        *,
        accept: Optional[str] = None,
        verify: bool = False,
        status_code: int = 200,
        headers: Optional[Mapping[str, str]] = None,
    ) -> None:
        if accept is None and request is not None:
            accept = request.headers.get("accept")
        #: The encoder chosen for this response.
        self.encoder = EventEncoder(accept=accept)
        all_headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        all_headers.update(headers or {})
        super().__init__(
            self._body(events, verify),
            status_code=status_code,
            media_type=self.encoder.get_content_type(),
            headers=all_headers,
        )

    async def _body(self, events: Events, verify: bool) -> AsyncIterator[bytes]:
        encoder = self.encoder
        verifier = Verifier() if verify else None
        open_run = False
        try:
            async for event in _each(events):
                if verifier is not None:
                    try:
                        verifier.push(event)
                    except VerificationError as e:
                        yield self._violation(e)
                        return
                kind = _type_of(event)
                if kind == "RUN_STARTED":
                    open_run = True
                elif kind in ("RUN_FINISHED", "RUN_ERROR"):
                    open_run = False
                yield encoder.encode_bytes(event)
        except Exception as e:
            if not open_run:
                raise
            # The run is open: end it cleanly, so that clients see a failed run rather
            # than a broken connection.
            log.exception("the agent's events raised while a run was open")
            yield self._run_error(f"the agent failed: {type(e).__name__}: {e}", EXCEPTION_CODE)
            return
        if verifier is not None:
            try:
                verifier.finish()
            except VerificationError as e:
                yield self._violation(e)
                return
            if open_run:
                log.error("the agent's AG-UI stream ended without RUN_FINISHED or RUN_ERROR")
                yield self._run_error(
                    "the agent's stream ended without RUN_FINISHED or RUN_ERROR", INCOMPLETE_CODE
                )

    def _run_error(self, message: str, code: str) -> bytes:
        return self.encoder.encode_bytes({"type": "RUN_ERROR", "message": message, "code": code})

    def _violation(self, e: VerificationError) -> bytes:
        log.error("outgoing AG-UI stream breaks %s at event %s (%s): %s", e.rule, e.index, e.event_type, e.message)
        return self._run_error(
            f"the agent's stream broke protocol rule {e.rule} at event {e.index} ({e.event_type}): {e.message}",
            VIOLATION_CODE,
        )


def _type_of(event: Any) -> Optional[str]:
    """The wire type of an event given as a dict, a model or JSON bytes."""
    if isinstance(event, dict):
        t = event.get("type")
    elif isinstance(event, (bytes, bytearray, str)):
        if (b'"RUN_' if not isinstance(event, str) else '"RUN_') not in event:
            return None
        try:
            t = json.loads(event).get("type")
        except (ValueError, AttributeError):
            return None
    else:
        t = getattr(event, "type", None)
    return getattr(t, "value", t)
