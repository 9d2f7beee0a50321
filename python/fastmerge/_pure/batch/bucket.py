"""Which bucket of ``fastmerge.dask`` a record line belongs to
(``src/engine/batch/bucket.rs``'s ``Sorter``; :class:`Quick` is
``src/engine/batch/record.rs``'s ``route_key``): ``BatchCore(bucket=(b, n))`` reads only
bucket ``b``'s lines, each at its own line number."""

from __future__ import annotations

import zlib
from typing import Callable

from ..events import MAX_JSON_DEPTH


class Sorter:
    """Which bucket each record line goes to: ``zlib.crc32`` of its stream key's UTF-8 text
    modulo ``buckets`` (as ``split_file``), the key found by :class:`Quick` where it can be,
    else by ``record`` (the record reader: the key, event and order, or a bad line's reason);
    a bad line's is 0, or the bucket of the key the light scan finds in it (a bad line
    belongs to no stream: any one bucket reports it where it is)."""

    def __init__(
        self, key: list[str], buckets: int, record: Callable[[bytes], tuple[str, ...] | str]
    ) -> None:
        self._quick = Quick(key)
        self._buckets = buckets
        self._record = record

    def bucket(self, line: bytes) -> int:
        """The bucket of a line that is not blank."""
        key = self._quick.key(line)
        if key is not None:
            return zlib.crc32(key) % self._buckets
        found = self._record(line)
        return 0 if isinstance(found, str) else zlib.crc32(found[0].encode()) % self._buckets


_BLANKS = b" \t\r\n"
#: What ends a value that is not a string, object or array.
_VALUE_ENDS = b",}] \t\r\n"


class Quick:
    """A light scan for a stream key at a path of object members (``group_by``): it checks
    only the structure of the objects it walks (strings and brackets) and takes the last of
    duplicate members, as the record reader does. It finds nothing — the record reader reads
    the line — unless every name of the path is plain ASCII, every member name it passes
    reads plainly (no escape) and the key is a string without escapes. On a line the record
    reader reads, what it finds is the key the reader reads; on any other line, bytes that
    look like one (the same as the engine's scan finds: the bucket of a bad line is that of
    those bytes)."""

    def __init__(self, segments: list[str]) -> None:
        # a plain name (ASCII, no quote, backslash or slash) is spelled otherwise only with a
        # `\u00` escape: a text without both can be known to hold no member of that name
        plain = all(
            s and all(0x20 <= ord(c) < 0x7F and c not in '"\\/' for c in s) for s in segments
        )
        self._segments = [(s.encode(), b'"' + s.encode() + b'"') for s in segments] if plain else []

    def key(self, line: bytes) -> bytes | None:
        """The key's bytes on ``line``, or None: read it the thorough way."""
        at = _skip_blanks(line, 0)
        for depth, (name, quoted) in enumerate(self._segments):
            found = _member(line, at, name, quoted)
            if found is None:
                return None
            value, end = found
            last = depth == len(self._segments) - 1
            if last and line[value : value + 1] == b'"':
                key = line[value + 1 : end - 1]
                return None if b"\\" in key else key
            if last or line[value : value + 1] != b"{":
                return None
            at = value
        return None


def _member(line: bytes, at: int, name: bytes, quoted: bytes) -> tuple[int, int] | None:
    """Where the value of the last member ``name`` (``quoted``: ``b'"name"'``) of the object
    at ``at`` (its ``{``) starts and ends; None when the object has none, is not one, or a
    member name has an escape. The scan stops at a member of that name after which no other
    can follow: no quoted name, nor a ``\\u00`` escape that could spell one."""
    if line[at : at + 1] != b"{":
        return None
    at = _skip_blanks(line, at + 1)
    found = None
    while True:
        if line[at : at + 1] != b'"':
            return None
        # a name read plainly: its text up to the next quote, unless a backslash comes first
        close = _next_quote_or_escape(line, at + 1)
        if close is None or line[close] != 0x22:
            return None
        this = line[at + 1 : close]
        at = _skip_blanks(line, close + 1)
        if line[at : at + 1] != b":":
            return None
        value = _skip_blanks(line, at + 1)
        end = _skip_value(line, value)
        if end is None:
            return None
        if this == name:
            found = (value, end)
            if line.find(quoted, end) < 0 and line.find(b"\\u00", end) < 0:
                return found
        at = _skip_blanks(line, end)
        c = line[at : at + 1]
        if c == b",":
            at = _skip_blanks(line, at + 1)
        elif c == b"}":
            return found
        else:
            return None


def _skip_blanks(line: bytes, at: int) -> int:
    while line[at : at + 1] and line[at] in _BLANKS:
        at += 1
    return at


def _next_quote_or_escape(line: bytes, start: int) -> int | None:
    found = [i for i in (line.find(b'"', start), line.find(b"\\", start)) if i >= 0]
    return min(found) if found else None


def _string_end(line: bytes, at: int) -> int | None:
    """Where the string opening at ``at`` closes (its ``"``), escapes passed over."""
    start = at + 1
    while True:
        end = _next_quote_or_escape(line, start)
        if end is None:
            return None
        if line[end] == 0x22:
            return end
        start = end + 2


def _skip_value(line: bytes, at: int) -> int | None:
    """Where the value starting at ``at`` ends, by its structure only: a string to its closing
    quote, an object or array by its brackets (at most :data:`MAX_JSON_DEPTH` levels: deeper
    is left to the record reader), anything else to the next ``,``, ``}``, ``]`` or blank (at
    least one byte)."""
    c = line[at : at + 1]
    if not c:
        return None
    if c == b'"':
        end = _string_end(line, at)
        return None if end is None else end + 1
    if c in (b"{", b"["):
        depth = 0
        i = at
        while i < len(line):
            b = line[i]
            if b == 0x22:
                end = _string_end(line, i)
                if end is None:
                    return None
                i = end
            elif b in b"{[":
                depth += 1
                if depth > MAX_JSON_DEPTH:
                    return None
            elif b in b"}]":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return None
    i = at
    while i < len(line) and line[i] not in _VALUE_ENDS:
        i += 1
    return i if i > at else None
