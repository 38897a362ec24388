"""The exceptions aguikit raises: every one is a subclass of :class:`Error`.

Those about bad input are also ``ValueError``s, the client's time limits are also the
built-in ``TimeoutError`` and a lost connection is also a ``ConnectionError``, so code that
already catches those keeps working.
"""

from __future__ import annotations

import builtins
from typing import Any, List, Optional

__all__ = [
    "Error",
    "EncodeError",
    "DecodeError",
    "VerificationError",
    "ClientError",
    "ConfigError",
    "RequestError",
    "HttpError",
    "ContentTypeError",
    "ConnectionLostError",
    "TimeoutError",
    "StreamError",
    "LimitExceededError",
    "ProtocolError",
    "InterruptError",
]


class Error(Exception):
    """The base class of every exception aguikit raises."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        #: The message, for people.
        self.message = message

    def __str__(self) -> str:
        return self.message


class EncodeError(Error, ValueError):
    """An event could not be encoded: it is not a valid AG-UI event (the message names the
    field), holds a value with no JSON form, or has no protobuf form (an unknown type)."""


class DecodeError(Error, ValueError):
    """Bytes could not be read as AG-UI events.

    ``index`` is the 0-based index of the event (or frame) where reading stopped, when it
    is known; ``events`` holds the events read before it in the same call, when the caller
    would otherwise lose them (the incremental decoders' ``feed``).
    """

    def __init__(
        self,
        message: str,
        index: Optional[int] = None,
        events: Optional[List[Any]] = None,
    ) -> None:
        super().__init__(message)
        #: The index of the event or frame that could not be read, or ``None``.
        self.index = index
        #: The events decoded before the failure in the same call (may be empty).
        self.events = events if events is not None else []


class VerificationError(Error):
    """A stream breaks a rule of the AG-UI protocol, exactly where the reference client
    (``@ag-ui/client`` 1.0) would fail it.

    Attributes: ``index`` (0-based index of the input event whose arrival failed; the number
    of events when the stream failed at its end), ``rule`` (``V13``, ``CH8``, ``schema``...),
    ``event_type``, ``message``, ``explanation`` (the rule in one line) and ``reference``
    (what the reference client does with such a stream).
    """

    def __init__(
        self,
        message: str,
        index: int = 0,
        rule: str = "",
        event_type: str = "",
        explanation: str = "",
        reference: str = "",
    ) -> None:
        super().__init__(message)
        #: Index of the input event whose arrival failed.
        self.index = index
        #: The rule broken (``V1``-``V55``, ``CH3``-``CH8``, ``schema``).
        self.rule = rule
        #: The wire type of that event (``"end of stream"`` at the end).
        self.event_type = event_type
        #: The rule, explained in one line.
        self.explanation = explanation
        #: What the reference client does with such a stream.
        self.reference = reference

    def __str__(self) -> str:
        return f"event {self.index} ({self.event_type}): {self.rule}: {self.message}"


class ClientError(Error):
    """A run of :class:`aguikit.HttpAgent` failed. ``events_received`` says how far it got
    (events received before the failure) when the failure came mid-stream."""

    def __init__(self, message: str, events_received: Optional[int] = None) -> None:
        super().__init__(message)
        #: Events received before the failure, when it came mid-stream.
        self.events_received = events_received


class ConfigError(ClientError, ValueError):
    """The agent or run is misconfigured: a bad URL, header, format or input."""


class RequestError(ClientError, ConnectionError):
    """The request could not be sent or no response came (DNS, connect, TLS, reset)."""


class HttpError(ClientError):
    """The agent answered with a status other than 2xx. ``status``, ``body`` (text, cut at
    the error-body limit) and ``payload`` (the body parsed, when it was JSON)."""

    def __init__(
        self, message: str, status: int = 0, body: str = "", payload: Any = None
    ) -> None:
        super().__init__(message)
        #: The HTTP status.
        self.status = status
        #: The body, as text.
        self.body = body
        #: The body parsed as JSON, or ``None``.
        self.payload = payload


class ContentTypeError(ClientError):
    """The response is not an AG-UI event stream (its ``content_type`` is another one)."""

    def __init__(self, message: str, content_type: Optional[str] = None) -> None:
        super().__init__(message)
        #: The response's Content-Type, or ``None`` when it had none.
        self.content_type = content_type


class ConnectionLostError(ClientError, ConnectionError):
    """The connection broke (or the body ended) before the run did, and could not be
    resumed with ``Last-Event-ID``."""


class TimeoutError(ClientError, builtins.TimeoutError):
    """A time limit ran out; ``kind`` is ``response``, ``idle`` or ``total`` (a connect timeout is a :class:`RequestError`)."""

    def __init__(
        self, message: str, kind: str = "", events_received: Optional[int] = None
    ) -> None:
        super().__init__(message, events_received)
        #: Which limit: ``response``, ``idle`` or ``total``.
        self.kind = kind


class StreamError(ClientError, DecodeError):
    """The response's bytes could not be split into events (bad SSE, a frame over the
    limit, a truncated protobuf frame)."""

    def __init__(self, message: str, events_received: Optional[int] = None) -> None:
        ClientError.__init__(self, message, events_received)
        self.index = events_received
        self.events = []


class LimitExceededError(ClientError):
    """A configured limit (events per run, body bytes) was exceeded."""


class ProtocolError(ClientError, VerificationError):
    """The agent's stream is malformed or breaks a protocol rule: a :class:`ClientError`
    with everything a :class:`VerificationError` says."""

    def __init__(self, message: str, **fields: Any) -> None:
        VerificationError.__init__(self, message, **fields)
        self.events_received = self.index


class InterruptError(ClientError, ValueError):
    """A resume does not answer the pending interrupts as the protocol requires (an
    unanswered, expired, unknown or twice-answered interrupt, or none pending)."""
