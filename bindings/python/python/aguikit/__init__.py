"""aguikit: the AG-UI protocol for Python, native.

Encode events exactly as the official ``ag-ui-protocol`` SDK does (and in protobuf when a
client asks), decode SSE and protobuf recordings, verify streams with the reference client's
rules, fold them into messages and state, expand and compact them, run agents over HTTP
(with ``Last-Event-ID`` resume) and serve streams from Starlette or FastAPI.

Everything is implemented by the Rust crates of aguikit (``aguikit-core``,
``aguikit-client``); long work runs without the GIL.
"""

from __future__ import annotations

from . import errors
from ._aguikit import (
    PROTOCOL_VERSION,
    Applier,
    EventEncoder,
    HttpAgent,
    ProtoDecoder,
    Run,
    Session,
    SseDecoder,
    Verifier,
    __version__,
    apply,
    compact,
    decode,
    expand,
    verify,
)
from .errors import (
    ClientError,
    ConfigError,
    ConnectionLostError,
    ContentTypeError,
    DecodeError,
    EncodeError,
    Error,
    HttpError,
    InterruptError,
    LimitExceededError,
    ProtocolError,
    RequestError,
    StreamError,
    TimeoutError,
    VerificationError,
)

__all__ = [
    "PROTOCOL_VERSION",
    "__version__",
    "EventEncoder",
    "decode",
    "SseDecoder",
    "ProtoDecoder",
    "verify",
    "Verifier",
    "apply",
    "Applier",
    "expand",
    "compact",
    "HttpAgent",
    "Session",
    "Run",
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
    "errors",
]
