"""Paths into a record (``src/engine/batch/path.rs``): ``group_by``, ``event`` and ``order_by``
as a JSON pointer (RFC 6901) when the text starts with ``/``, else a dotted path; a segment of
digits indexes an array."""

from __future__ import annotations

from typing import Any

from ... import errors
from ..events import Members


def parse_path(name: str, text: Any) -> list[str]:
    """The segments of a record path: a JSON pointer (RFC 6901) if it starts with ``/``,
    else a dotted path. An empty or malformed path is a ``BatchError``."""
    if type(text) is not str:
        raise errors.wrong_type(name, "a str", text)
    if not text:
        raise errors.batch_option(f"{name} is empty: pass a dotted path or a JSON pointer")
    if text.startswith("/"):
        segments = []
        for raw in text[1:].split("/"):
            rest = raw.replace("~0", "").replace("~1", "")
            if "~" in rest:
                raise errors.batch_option(
                    f"{name} {text!r} is not a valid JSON pointer: '~' must be followed by 0 or 1"
                )
            segments.append(raw.replace("~1", "/").replace("~0", "~"))
        return segments
    segments = text.split(".")
    if "" in segments:
        raise errors.batch_option(f"{name} {text!r} has an empty segment")
    return segments


_MISSING = object()


def resolve(value: Any, segments: list[str]) -> Any:
    """The value at a path in a record, or ``_MISSING``. A segment of digits indexes an array
    (without a leading zero, as in a JSON pointer); on an object every segment is a key."""
    for segment in segments:
        if isinstance(value, dict):
            if segment not in value:
                return _MISSING
            value = value[segment]
        elif isinstance(value, Members):
            # read with every member (a repeated key's): the last one's, as a dict keeps
            found = [item for key, item in value if key == segment]
            if not found:
                return _MISSING
            value = found[-1]
        elif isinstance(value, list):
            if (
                not segment.isdigit()
                or not segment.isascii()
                or (len(segment) > 1 and segment[0] == "0")
            ):
                return _MISSING
            index = int(segment)
            if index >= len(value):
                return _MISSING
            value = value[index]
        else:
            return _MISSING
    return value
