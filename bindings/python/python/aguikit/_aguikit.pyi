"""Type stubs of the native module ``aguikit._aguikit`` (re-exported by ``aguikit``)."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, Iterable, Iterator, List, Literal, Mapping, Optional, Sequence, Tuple, Union

__version__: str
PROTOCOL_VERSION: str

#: One event as the functions take it: a dict with wire names, an ``ag_ui.core`` event
#: model, or the JSON text of one event as bytes.
EventLike = Union[Dict[str, Any], bytes, bytearray, Any]
#: Events as the engine functions take them: an iterable of events, or a whole recording
#: as bytes or text (SSE, JSON Lines, a JSON array, a case file or length-prefixed protobuf).
Events = Union[Iterable[EventLike], bytes, bytearray, memoryview, str]
Format = Optional[Literal["sse", "proto", "json"]]

class EventEncoder:
    """A drop-in for ``ag_ui.encoder.EventEncoder`` that also speaks protobuf."""

    def __init__(self, accept: Optional[str] = None) -> None: ...
    def get_content_type(self) -> str:
        """``text/event-stream``, or ``application/vnd.ag-ui.event+proto`` when negotiated."""
    @property
    def format(self) -> Literal["sse", "proto"]: ...
    def encode(self, event: EventLike) -> Union[str, bytes]:
        """The SSE frame (``str``), or the protobuf frame (``bytes``) when negotiated."""
    def encode_bytes(self, event: EventLike) -> bytes:
        """The frame as bytes, whatever the format."""
    def encode_many(self, events: Iterable[EventLike]) -> Union[str, bytes]:
        """The frames of several events, concatenated."""

def decode(
    data: Union[bytes, bytearray, memoryview, str],
    format: Format = None,
    *,
    models: bool = False,
    max_frame_size: int = ...,
) -> List[Any]:
    """The events of a recording (dicts, or ``ag_ui.core`` models with ``models=True``)."""

class SseDecoder:
    """An incremental SSE decoder."""

    def __init__(self, *, models: bool = False, max_frame_size: int = ...) -> None: ...
    def feed(self, data: Union[bytes, bytearray, memoryview, str]) -> List[Any]: ...
    def finish(self) -> List[Any]: ...
    @property
    def last_event_id(self) -> Optional[str]: ...
    @property
    def retry(self) -> Optional[int]: ...

class ProtoDecoder:
    """An incremental decoder of length-prefixed protobuf."""

    def __init__(self, *, models: bool = False, max_frame_size: int = ...) -> None: ...
    def feed(self, data: Union[bytes, bytearray, memoryview]) -> List[Any]: ...
    def finish(self) -> List[Any]: ...

def verify(events: Events, *, format: Format = None, max_frame_size: int = ...) -> None:
    """Raises ``VerificationError`` at the first event that breaks a rule."""

def apply(events: Events, *, format: Format = None, max_frame_size: int = ...) -> Dict[str, Any]:
    """``{"messages", "state", "pendingInterrupts"}`` after the whole stream."""

def expand(events: Events, *, format: Format = None, max_frame_size: int = ...) -> List[Dict[str, Any]]:
    """The events with ``*_CHUNK`` expanded into START / CONTENT / END."""

def compact(events: Events, *, format: Format = None, max_frame_size: int = ...) -> List[Dict[str, Any]]:
    """The events compacted as the reference's ``compactEvents`` does."""

class Verifier:
    """Verification one event at a time."""

    def __init__(self) -> None: ...
    def push(self, event: EventLike) -> None: ...
    def extend(self, events: Events, *, format: Format = None, max_frame_size: int = ...) -> None: ...
    def finish(self) -> None: ...
    @property
    def events_seen(self) -> int: ...

class Applier:
    """Verification and folding one event at a time."""

    def __init__(self, messages: Optional[Sequence[Any]] = None, state: Any = None) -> None: ...
    def push(self, event: EventLike) -> None: ...
    def extend(self, events: Events, *, format: Format = None, max_frame_size: int = ...) -> None: ...
    def finish(self) -> None: ...
    @property
    def messages(self) -> List[Dict[str, Any]]: ...
    @property
    def state(self) -> Any: ...
    @property
    def pending_interrupts(self) -> List[Dict[str, Any]]: ...
    @property
    def result(self) -> Any: ...
    @property
    def events_seen(self) -> int: ...
    def snapshot(self) -> Dict[str, Any]: ...

class Run:
    """The events of one run (a blocking iterator); closing it aborts the run."""

    def __iter__(self) -> Iterator[Any]: ...
    def __next__(self) -> Any: ...
    def close(self) -> None: ...
    def __enter__(self) -> Run: ...
    def __exit__(self, *exc: Any) -> None: ...
    @property
    def reconnects(self) -> int: ...
    @property
    def status_code(self) -> Optional[int]: ...
    @property
    def content_type(self) -> Optional[str]: ...
    def _try_next(self) -> Optional[Tuple[bool, Any]]: ...
    def _wake(self, loop: asyncio.AbstractEventLoop, future: "asyncio.Future[None]") -> None: ...

class HttpAgent:
    """An AG-UI agent behind an HTTP endpoint."""

    def __init__(
        self,
        url: str,
        *,
        headers: Optional[Union[Mapping[str, str], Sequence[Tuple[str, str]]]] = None,
        format: Literal["sse", "proto"] = "sse",
        timeout: Optional[float] = None,
        connect_timeout: Optional[float] = 30.0,
        response_timeout: Optional[float] = 60.0,
        idle_timeout: Optional[float] = 300.0,
        reconnect_attempts: int = 3,
        reconnect_delay: float = 0.5,
        max_events: int = 10_000_000,
        max_frame_size: int = ...,
    ) -> None: ...
    @property
    def url(self) -> str: ...
    def run(self, input: Any = None, *, text: Optional[str] = None, models: bool = False) -> Run: ...
    def arun(self, input: Any = None, *, text: Optional[str] = None, models: bool = False) -> Any:
        """An ``aguikit._client.AsyncRun`` (``async for event in ...``)."""

class Session:
    """A conversation thread: messages and state kept across runs."""

    def __init__(
        self,
        agent: HttpAgent,
        *,
        thread_id: Optional[str] = None,
        messages: Optional[Sequence[Any]] = None,
        state: Any = None,
    ) -> None: ...
    def run(
        self,
        text: Optional[str] = None,
        *,
        run_id: Optional[str] = None,
        tools: Optional[Sequence[Any]] = None,
        context: Optional[Sequence[Any]] = None,
        forwarded_props: Any = None,
        models: bool = False,
    ) -> Run: ...
    def arun(
        self,
        text: Optional[str] = None,
        *,
        run_id: Optional[str] = None,
        tools: Optional[Sequence[Any]] = None,
        context: Optional[Sequence[Any]] = None,
        forwarded_props: Any = None,
        models: bool = False,
    ) -> Any: ...
    def resume(self, answers: Sequence[Any], *, run_id: Optional[str] = None, models: bool = False) -> Run: ...
    def aresume(self, answers: Sequence[Any], *, run_id: Optional[str] = None, models: bool = False) -> Any: ...
    def add_user_message(self, text: str) -> str: ...
    def add_message(self, message: Any) -> None: ...
    @property
    def thread_id(self) -> str: ...
    @property
    def messages(self) -> List[Dict[str, Any]]: ...
    @property
    def state(self) -> Any: ...
    @property
    def pending_interrupts(self) -> List[Dict[str, Any]]: ...
    @property
    def status(self) -> Optional[str]: ...
    @property
    def result(self) -> Any: ...
    @property
    def error(self) -> Optional[Dict[str, Any]]: ...
