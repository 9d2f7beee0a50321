"""The twin of the engine's event reading (``src/engine/events.rs``): provider events as JSON
values. The bytes that carry them are cut into events by :mod:`.transport`.

Every event an aggregator folds is first made a *JSON value*: dicts with str keys, lists, str,
int, float, bool, None. Both backends read events the same way, so they agree on every input:

- an int outside the 64-bit signed range becomes the nearest float (JSON text and Python ints
  alike; serde_json and ``float(text)`` round the same way);
- a str must be valid Unicode text (a lone surrogate is not JSON text);
- tuples read as lists, dict subclasses through ``items()``, str / int / float subclasses
  (SDK enums) as their base values; anything else is an error;
- nesting deeper than :data:`MAX_JSON_DEPTH` levels is an error.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

#: Deepest nesting of an event (the top-level object is level 1).
MAX_JSON_DEPTH = 100
_I64_MIN = -(2**63)
_I64_MAX = 2**63 - 1


class EventDataError(Exception):
    """An event that is not a JSON object; ``detail`` is the error's text (the aggregator adds
    the event's number)."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


NOT_JSON = "not valid JSON"


def _int(text: str) -> int | float:
    value = int(text)
    if _I64_MIN <= value <= _I64_MAX:
        return value
    return _float(text)


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError("out of range")
    return value


def _constant(name: str) -> Any:
    raise ValueError(name)


class Members(list):  # type: ignore[type-arg]
    """An object's members as ``(key, value)`` pairs, a repeated key's every value kept."""


def loads(text: str, **hooks: Any) -> Any:
    """``json.loads(text, **hooks)``, read as the engine reads JSON text: the last of a
    repeated key's values is kept, and the others are read all the same, so that a lone
    surrogate or nesting deeper than :data:`MAX_JSON_DEPTH` in one of them makes the text
    :class:`EventDataError` too (the engine checks the text, not what is kept of it)."""
    return loads_members(text, **hooks)[0]


def loads_members(text: str, **hooks: Any) -> tuple[Any, Any]:
    """:func:`loads`'s value, and the text read with every member kept (objects as
    :class:`Members`) when a key repeats, else None."""
    repeated = False

    def members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal repeated
        value = dict(pairs)
        repeated = repeated or len(value) < len(pairs)
        return value

    value = json.loads(text, object_pairs_hook=members, **hooks)
    if not repeated:
        return value, None
    # rare: read again with every member kept, and check them all
    every = json.loads(text, object_pairs_hook=Members, **hooks)
    _check_members(every, 1)
    return value, every


def _check_members(value: Any, depth: int) -> None:
    """:func:`json_value`'s checks of every value in ``value`` (objects as :class:`Members`)."""
    if isinstance(value, list):
        if depth > MAX_JSON_DEPTH:
            raise EventDataError(f"nested deeper than {MAX_JSON_DEPTH} levels")
        for item in value:
            if isinstance(value, Members):
                key, item = item
                json_value(key)
            _check_members(item, depth + 1)
    else:
        json_value(value, depth)


def parse(data: bytes) -> dict[str, Any]:
    """One event from JSON text (UTF-8 bytes). Text that does not parse, or that holds a lone
    surrogate or nests deeper than :data:`MAX_JSON_DEPTH` (even in a value a repeated key
    replaces), is :data:`NOT_JSON` (what a JSON parser in Rust rejects); valid JSON that is
    not an object says what it is."""
    try:
        value = json_value(
            loads(
                data.decode("utf-8"),
                parse_int=_int,
                parse_float=_float,
                parse_constant=_constant,
            )
        )
    except (ValueError, RecursionError, EventDataError):
        raise EventDataError(NOT_JSON) from None
    if not isinstance(value, dict):
        raise EventDataError(f"an event must be a JSON object, not {kind_name(value)}")
    return value


def kind_name(value: Any) -> str:
    """The JSON name of a value's kind (for messages)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def json_value(value: Any, depth: int = 1) -> Any:
    """``value`` as a JSON value (a copy); :class:`EventDataError` for what is not one. ``bytes``
    (a blob as boto3 yields it) is its base64 text, as the HTTP API carries it. The walk is
    depth first, in dict order, so both backends report the same first error."""
    if value is None or value is True or value is False:
        return value
    if isinstance(value, str):
        text = str(value)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise EventDataError("a string with a lone surrogate is not JSON text") from None
        return text
    if isinstance(value, int):
        number = int(value)
        if _I64_MIN <= number <= _I64_MAX:
            return number
        try:
            return float(number)
        except OverflowError:
            raise EventDataError("an integer too large for a float is not a JSON number") from None
    if isinstance(value, float):
        return float(value)
    if isinstance(value, bytes):
        # a blob as an SDK yields it (boto3's redactedContent, image bytes): the base64 text
        # the HTTP API carries [E103]
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, (dict, list, tuple)):
        if depth > MAX_JSON_DEPTH:
            raise EventDataError(f"nested deeper than {MAX_JSON_DEPTH} levels")
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if not isinstance(key, str):
                    raise EventDataError(f"object keys must be strings, not {type(key).__name__}")
                out[json_value(key)] = json_value(item, depth + 1)
            return out
        return [json_value(item, depth + 1) for item in value]
    raise EventDataError(f"{type(value).__name__} is not a JSON value")


def event_object(value: Any) -> dict[str, Any]:
    """A checked event: a JSON object (the top level of every provider event)."""
    if not isinstance(value, dict):
        raise EventDataError(f"an event must be a JSON object, not {kind_name(value)}")
    result: dict[str, Any] = json_value(value)
    return result


def utf8(data: str | bytes) -> bytes:
    """Transport text as UTF-8 bytes."""
    if isinstance(data, bytes):
        return data
    try:
        return data.encode("utf-8")
    except UnicodeEncodeError:
        raise EventDataError("a string with a lone surrogate is not JSON text") from None
