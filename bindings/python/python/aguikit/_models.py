"""Event dicts to ``ag_ui.core`` models (the optional ``ag-ui-protocol`` dependency)."""

from __future__ import annotations

from typing import Any, Dict, List

from .errors import DecodeError

_CLASSES: Dict[str, Any] = {}


def _classes() -> Dict[str, Any]:
    if not _CLASSES:
        try:
            from ag_ui.core import events
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError(
                "models=True needs the official SDK: pip install ag-ui-protocol"
            ) from e
        for name in events.__all__:
            cls = getattr(events, name)
            fields = getattr(cls, "model_fields", None)
            if not fields or "type" not in fields:
                continue
            default = fields["type"].default
            value = getattr(default, "value", default)
            if isinstance(value, str):
                _CLASSES[value] = cls
    return _CLASSES


def to_model(event: Dict[str, Any]) -> Any:
    """The ``ag_ui.core`` model of one event dict."""
    cls = _classes().get(event.get("type"))  # type: ignore[arg-type]
    if cls is None:
        raise DecodeError(
            f"event type {event.get('type')!r} has no ag_ui.core model", None
        )
    return cls.model_validate(event)


def to_models(events: List[Dict[str, Any]]) -> List[Any]:
    """The ``ag_ui.core`` models of event dicts."""
    return [to_model(e) for e in events]
