"""The twin of the engine's stream framing (``src/engine/transport.rs``): the transports that
carry provider events (SSE, JSON lines, a streamed JSON array), and :func:`diagnose`, which says
what an input with no event in it was.

A transport turns raw bytes, split anywhere (inside a line, inside a UTF-8 sequence), into event
payloads. Its kind is read from the stream's first non-blank byte: ``{`` JSON values one after
another (JSON lines, or concatenated objects; also ``"``, ``-`` and digits, JSON that is not an
object), ``[`` a JSON array of events (Gemini without ``alt=sse``), anything else server-sent
events (``data:`` lines; ``event:``, ``id:``, ``retry:`` and comments ignored; ``[DONE]``
skipped).

A transport never fails (spec §8): what is not an event is a payload of its own that
:func:`parse` rejects, and the aggregator skips it with an ``unreadable_event`` anomaly. In SSE
every ``data:`` payload is one event. In JSON values, one that does not open with ``{`` runs to
the end of its line (in an array, to the next ``,`` or ``]``) and a raw newline inside a string
ends the value it is in; brackets that never close make the rest of the stream one value, cut
by its end (``truncated``), since nothing tells them from a value still arriving.
"""

from __future__ import annotations

import re

from .events import NOT_JSON, EventDataError, parse

_BOM = b"\xef\xbb\xbf"
_WS = b" \t\r\n"

#: How many of a stream's first bytes a transport keeps, to say what the input was when no
#: event could be read from it (:func:`diagnose`).
HEAD = 512
_EOL = re.compile(rb"[\r\n]")
_STRUCT = re.compile(rb'[{}\[\]"]')  # outside strings, the bytes the scanner acts on
_STR_STOP = re.compile(rb'["\\\n]')  # inside a string: its end, an escape, a raw newline
_JUNK_END = re.compile(rb"\n")
_ARRAY_JUNK_END = re.compile(rb"[\n,\]]")


class Transport:
    """Raw stream bytes in, complete event payloads (bytes) out; :meth:`feed` as bytes arrive,
    :meth:`finish` at the end (a last line without its newline, a last event without its blank
    line, are still read). It never fails: bytes that are not an event become a payload of
    their own, which :func:`parse` rejects, so the aggregator can skip it and read on. Each
    byte is scanned once however the stream is split (``pos`` keeps the scan's place)."""

    __slots__ = (
        "kind",
        "buf",
        "pos",
        "data",
        "has_data",
        "depth",
        "in_str",
        "esc",
        "junk",
        "start",
        "bom",
        "head",
        "total",
    )

    def __init__(self) -> None:
        self.kind: str | None = None  # "sse" | "json" | "array", from the first non-blank byte
        self.buf = bytearray()
        self.pos = 0  # how far buf has been scanned (sse: its first, unfinished line)
        self.data: list[bytes] = []  # sse: the data lines of the event being read
        self.has_data = False
        self.depth = 0  # json/array scanner: open brackets, inside a string, after a backslash
        self.in_str = False
        self.esc = False
        self.junk = False  # json/array: the value being scanned does not open with {
        self.start = -1  # json/array: where the value being scanned starts, -1 between values
        self.bom = True  # a UTF-8 byte order mark may still open the stream
        self.head = b""  # the stream's first HEAD bytes, and how many bytes came in all
        self.total = 0

    def feed(self, data: bytes, out: list[bytes]) -> None:
        if len(self.head) < HEAD:
            self.head += data[: HEAD - len(self.head)]
        self.total += len(data)
        self.buf += data
        if self.bom:
            if len(self.buf) < 3 and _BOM.startswith(self.buf):
                return
            self.bom = False
            if self.buf.startswith(_BOM):
                del self.buf[:3]
        if self.kind is None:
            stripped = self.buf.lstrip(_WS)
            if not stripped:
                return
            first = stripped[0]
            # a JSON value that is not an object is still JSON (and an unreadable event),
            # never an SSE field name
            if first == 123 or first in b'"-0123456789':
                self.kind = "json"
            else:
                self.kind = "array" if first == 91 else "sse"
        if self.kind == "sse":
            self._sse(out, False)
        else:
            self._scan(out, False)

    def finish(self, out: list[bytes]) -> bytes | None:
        """The events still in the buffer go to ``out``; the return value is the *tail*, the
        last event when the stream ended inside it (an SSE event without its blank line, a
        JSON object not closed), or None. The aggregator reads a tail that parses and flags
        one that does not as ``truncated``."""
        tail: bytes | None = None
        if self.kind == "sse":
            self._sse(out, True)
            if self.has_data:
                tail = self._take()
        elif self.kind is not None:
            self._scan(out, True)
            if self.start >= 0:
                tail = bytes(self.buf)  # a value cut by the end of the stream
        self.buf = bytearray()
        self.pos = 0
        return tail

    def diagnosis(self) -> str | None:
        """What the stream's first bytes were, for an input with no event in it; None for an
        input of nothing but blanks (the empty input, worded by :func:`errors.empty_input`)."""
        return diagnose(self.head, self.total)

    # -- server-sent events

    def _sse(self, out: list[bytes], final: bool) -> None:
        buf = self.buf
        n = len(buf)
        start = 0
        frm = self.pos
        while True:
            match = _EOL.search(buf, frm)
            if match is None:
                if final and start < n:
                    self._line(bytes(buf[start:n]), out)
                    start = n
                frm = n
                break
            end = match.start()
            if buf[end] == 13 and end + 1 == n and not final:
                frm = end  # a \r at the end: maybe the first half of \r\n
                break
            self._line(bytes(buf[start:end]), out)
            start = end + 2 if buf[end] == 13 and end + 1 < n and buf[end + 1] == 10 else end + 1
            frm = start
        del buf[:start]
        self.pos = frm - start

    def _line(self, line: bytes, out: list[bytes]) -> None:
        if not line:
            if self.has_data:
                self._dispatch(out)
            return
        if line[:1] == b":":
            return  # a comment
        colon = line.find(b":")
        if colon < 0:
            field, value = line, b""
        else:
            field, value = line[:colon], line[colon + 1 :]
            if value[:1] == b" ":
                value = value[1:]
        if field == b"data":
            self.data.append(value)
            self.has_data = True

    def _dispatch(self, out: list[bytes]) -> None:
        payload = self._take()
        if payload is not None:
            out.append(payload)

    def _take(self) -> bytes | None:
        """The event being read (its data lines joined), or None for an empty one or
        ``[DONE]``; the next event starts empty."""
        payload = b"\n".join(self.data)
        self.data = []
        self.has_data = False
        stripped = payload.strip(_WS)
        return payload if stripped and stripped != b"[DONE]" else None

    # -- JSON values one after another, or the elements of one array

    def _scan(self, out: list[bytes], final: bool) -> None:
        """The whole values in the buffer. Where the next event starts is known even after a
        bad one: a value that does not open with ``{`` runs to the end of its line (in an
        array, to the next ``,`` or ``]``), and a raw newline inside a string (never valid
        JSON) ends the value it is in. Unbalanced brackets cannot be told apart from a value
        still arriving: the rest of the stream is then read as that value, cut by the end
        (``truncated``)."""
        buf = self.buf
        n = len(buf)
        pos = self.pos
        depth, in_str, esc, junk, start = self.depth, self.in_str, self.esc, self.junk, self.start
        array = self.kind == "array"
        while pos < n:
            if start < 0:
                c = buf[pos]
                # between values: blanks; in an array its brackets and commas
                if c in (32, 9, 10, 13) or (array and c in (44, 91, 93)):  # ' ' \t \n \r , [ ]
                    pos += 1
                    continue
                start = pos
                depth = 0
                junk = c != 123  # {
                continue
            if junk:
                match = (_ARRAY_JUNK_END if array else _JUNK_END).search(buf, pos)
                if match is None:
                    pos = n
                    break
                pos = match.start()
                out.append(bytes(buf[start:pos]))
                start = -1
                junk = False
                continue
            if in_str:
                if esc:
                    esc = False
                    pos += 1
                    continue
                match = _STR_STOP.search(buf, pos)
                if match is None:
                    pos = n
                    break
                pos = match.start()
                c = buf[pos]
                if c == 92:  # backslash
                    esc = True
                elif c == 34:  # "
                    in_str = False
                else:  # a raw newline: this value is broken, the next starts after it
                    out.append(bytes(buf[start:pos]))
                    start = -1
                    in_str = False
                pos += 1
                continue
            match = _STRUCT.search(buf, pos)
            if match is None:
                pos = n
                break
            pos = match.start()
            c = buf[pos]
            if c == 34:
                in_str = True
            elif c in (123, 91):
                depth += 1
            else:
                depth -= 1
                if depth == 0:
                    out.append(bytes(buf[start : pos + 1]))
                    start = -1
            pos += 1
        if final and junk:
            # a value that is not an object, ended by the end of the stream: whole, and bad
            if start >= 0:
                out.append(bytes(buf[start:]))
                start = -1
            junk = False
        # keep only what is not yet read
        keep = start if start >= 0 else pos
        del buf[:keep]
        self.pos = pos - keep
        self.start = 0 if start >= 0 else -1
        self.depth, self.in_str, self.esc, self.junk = depth, in_str, esc, junk


_MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"PK\x03\x04", "zip"),
)
_PATH_ENDINGS = (b".json", b".jsonl", b".ndjson", b".sse", b".txt", b".log", b".gz", b".zst")
_CONTROL = bytes(c for c in range(32) if c not in (9, 10, 12, 13))


def diagnose(head: bytes, total: int) -> str | None:
    """What an input with no event in it was, from its first bytes (``head``) and its length:
    the detail of the aggregator's "no event could be read" error; None for an input of
    nothing but blanks, which the aggregator calls empty (``errors.empty_input``)."""
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return f"{name}-compressed input: decompress it first"
    try:
        head.decode("utf-8")
        valid = True
    except UnicodeDecodeError as exc:
        # a UTF-8 sequence cut at the end of the head is still text
        valid = exc.reason == "unexpected end of data" and len(head) == HEAD
    whole = total == len(head)
    if head.startswith(_BOM):
        head = head[3:]
    text = head.strip(_WS)
    if not text:
        return None
    if not valid or any(c in _CONTROL for c in head):
        return "binary input, not provider events"
    line = text.split(b"\n", 1)[0].strip(_WS)
    if (
        whole
        and b"\n" not in text
        and b" " not in text
        and (b"/" in text or b"\\" in text or text.endswith(_PATH_ENDINGS))
    ):
        return (
            "the input is text that looks like a file path, not a stream; pass a "
            "pathlib.Path to read a file"
        )
    try:
        parse(line)
    except EventDataError as exc:
        if exc.detail != NOT_JSON:
            return exc.detail
    return "no JSON object, JSON array or SSE data: line in the input"
