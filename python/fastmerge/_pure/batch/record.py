"""One JSON line of a log (``src/engine/batch/record.rs``): the record parsed as the engine
reads it (exact numbers, no constants), its stream key as text, and the values too large to
be a key or an order."""

from __future__ import annotations

import math
from typing import Any

from .. import events


def _kind(value: Any) -> str:
    """A value's JSON kind with its article, for bad-line reasons."""
    kind = events.kind_name(value)
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def key_text(value: Any) -> str:
    """A stream key as a string: a JSON string as is, a number as Python's ``str()`` of it
    as the events parser reads it (``-0`` is ``0``, an integer beyond 64 bits a float)."""
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    return repr(value)


def _too_large(value: Any) -> bool:
    """Whether a record's value is a number beyond a float's range (read as an infinity)."""
    return isinstance(value, float) and math.isinf(value)


def _holds_too_large(value: Any) -> bool:
    """Whether ``value`` holds a number beyond a float's range (read as an infinity), in a
    member a repeated key replaces too when it is read with every member
    (:class:`events.Members`)."""
    if isinstance(value, float):
        return math.isinf(value)
    if isinstance(value, dict):
        return any(_holds_too_large(item) for item in value.values())
    if isinstance(value, events.Members):
        return any(_holds_too_large(item) for _, item in value)
    if isinstance(value, list):
        return any(_holds_too_large(item) for item in value)
    return False


def _int(text: str) -> int | float:
    value = int(text)
    return value if -(2**63) <= value < 2**63 else float(text)


def parse_record(data: bytes) -> tuple[dict[str, Any], bool, Any]:
    """A record line as ``events.parse`` reads an event (a value a repeated key replaces
    read all the same), except that a number beyond a float's range reads as an infinity
    instead of failing the line (it fails only where it is read); whether the record holds
    one; and, when it does and a key repeats, the record read with every member kept
    (:class:`events.Members`, where a replaced member may hold it), else None."""
    huge: list[str] = []

    def number(text: str) -> float:
        value = float(text)
        if math.isinf(value):
            huge.append(text)
        return value

    def integer(text: str) -> int | float:
        value = _int(text)
        if isinstance(value, float):
            return number(text)
        return value

    try:
        kept, every = events.loads_members(
            data.decode("utf-8"),
            parse_int=integer,
            parse_float=number,
            parse_constant=_no_constant,
        )
        value = events.json_value(kept)
    except (ValueError, RecursionError, events.EventDataError):
        raise events.EventDataError(events.NOT_JSON) from None
    if not isinstance(value, dict):
        raise events.EventDataError(
            f"a record must be a JSON object, not {events.kind_name(value)}"
        )
    return value, bool(huge), every if huge else None


def _no_constant(name: str) -> Any:
    raise ValueError(name)
