"""A value as one line of JSON (:func:`json_line`): the bytes of a JSONL record, of
``fastmerge merge``'s output and of a directory's index."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Callable

from .. import _backend

__all__ = ["json_line"]

if TYPE_CHECKING:
    _fast_line: Callable[[Any], bytes | None] | None
else:
    # a backend that writes the lines of plain data itself has ``json_line`` (None where it
    # steps aside for json.dumps); the twin has none: json.dumps is its writer
    _fast_line = getattr(_backend.backend_of(__name__)[1], "json_line", None)


def json_line(value: Any) -> bytes:
    """``value`` as one line of compact UTF-8 JSON (as ``fastmerge merge`` writes; a lone
    surrogate, which UTF-8 cannot encode, makes the line ASCII with escapes). The Rust backend
    writes plain data (exact dicts with str keys, lists, tuples, strs, ints of 64 bits, floats,
    bools, None) itself, to the same bytes."""
    if _fast_line is not None:
        line = _fast_line(value)
        if line is not None:
            return line
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":")).encode("ascii") + b"\n"
