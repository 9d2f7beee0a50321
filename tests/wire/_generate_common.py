"""The shared parts of the generated streams (``_generate``): minimal values from the SDK models,
the :class:`Case` a generator returns, and the marker strings every stream carries."""

from __future__ import annotations

import base64
import json
import typing
from dataclasses import dataclass, field
from typing import Any, Callable

# ---------------------------------------------------------------------------------------------
# Minimal values from the SDK models


def minimal(annotation: Any, name: str = "") -> Any:
    """The JSON value of a minimal instance of ``annotation``: every required field of a
    model filled, the first member of a union, the first value of a Literal."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return minimal(args[0], name)
    if origin is typing.Union or type(annotation).__name__ == "UnionType":
        members = [a for a in args if a is not type(None)]
        return minimal(members[0], name)
    if origin is typing.Literal:
        return args[0]
    if origin in (list, tuple, set, typing.Sequence) or annotation in (list,):
        return []
    if origin is dict or annotation is dict:
        return {}
    if annotation is str:
        return f"{name or 'x'}_1"
    if annotation is bool:
        return False
    if annotation in (int, float):
        return 0
    if annotation is bytes:
        return base64.b64encode(b"\x00\x01").decode()
    fields = getattr(annotation, "model_fields", None)
    if fields is not None:
        out: dict[str, Any] = {}
        for key, info in fields.items():
            if info.is_required():
                out[info.alias or key] = minimal(info.annotation, key)
        return out
    return {}


def build(model: Any, **values: Any) -> Any:
    """An SDK object of ``model``: its minimal value with ``values`` over it, validated."""
    data = minimal(model)
    data.update(values)
    return model.model_validate(data)


# ---------------------------------------------------------------------------------------------
# Cases


@dataclass
class Case:
    """One generated stream (see the module docstring)."""

    id: str
    provider: str
    events: list[Any]
    covers: set[str]
    kept: list[str] = field(default_factory=list)
    #: the SDK accumulator's response (JSON), and what of the rendered message to compare
    reference: Callable[[], Any] | None = None
    rendered: Callable[[dict[str, Any]], Any] | None = None
    #: an expectation of the message, in words and as a check (compare with the rule)
    expect: Callable[[Any], Any] | None = None


def marker_of(n: int) -> str:
    """The n-th marker string a generated stream carries."""
    return f"M{n:03d}q"


def markers_in(value: Any) -> list[str]:
    """The marker strings inside a JSON value, in order."""
    text = json.dumps(value)
    out = []
    at = text.find("M0")
    while at >= 0:
        out.append(text[at : at + 5])
        at = text.find("M0", at + 5)
    return out
