"""The twin of the plan steps of ``fastmerge.dask`` on inputs every task reads itself
(``engine/batch/split.rs``: ``index_file``, ``write_bucket``): which bucket each record of an
input goes to, by line number, and one bucket's records of the inputs as one text that the
batch reads at the same input-wide line numbers. Lines and records are read as
:class:`~fastmerge._pure.batch.BatchCore` reads them. Line numbers cross as little-endian
``u64``s in one ``bytes`` per list."""

from __future__ import annotations

import sys
import zlib
from array import array
from typing import IO

from .. import errors
from .batch import BatchCore


def _packed(numbers: array[int]) -> bytes:
    if sys.byteorder == "big":
        numbers = array("Q", numbers)
        numbers.byteswap()
    return numbers.tobytes()


def _unpacked(data: bytes) -> array[int]:
    numbers = array("Q")
    numbers.frombytes(data)
    if sys.byteorder == "big":
        numbers.byteswap()
    return numbers


def index_file(
    path: str, group_by: str, event: str | None, order_by: str | None, buckets: int
) -> tuple[int, list[tuple[int, bytes]]]:
    """One input's records as the line numbers of each bucket: ``(lines, [(bucket,
    numbers)])`` — the input's ``\\n``s plus one, and per bucket that has any, in bucket order,
    its records' 1-based line numbers, ascending. A key's bucket is ``zlib.crc32`` of its
    UTF-8 text modulo ``buckets`` (as ``split_file``); a bad line's is 0, or the bucket of the
    key :func:`quick_key` finds in it (a bad line belongs to no stream: any one bucket reports
    it where it is); blank lines go to none."""
    if type(path) is not str:
        raise errors.wrong_type("path", "a str", path)
    if type(buckets) is not int:
        raise errors.wrong_type("buckets", "an int", buckets)
    if buckets < 1:
        raise errors.batch_option(f"buckets must be 1 or more, not {buckets}")
    core = BatchCore([path], group_by, event, order_by)
    if core._key is None:
        raise errors.batch_option(
            "index_file cuts records by their stream key: pass group_by (e.g. stream_id)"
        )
    own: dict[int, array[int]] = {}
    name = quoted = b""
    if len(core._key) == 1:  # a key at the top of the record: looked for by a light scan first
        name = core._key[0].encode("utf-8", "surrogatepass")
        quoted = b'"' + name + b'"'
    for line, data in core._lines(path):
        key = quick_key(data, name, quoted) if quoted else None
        if key is None:
            found = core._record(data)
            bucket = 0 if isinstance(found, str) else zlib.crc32(found[0].encode()) % buckets
        else:
            bucket = zlib.crc32(key) % buckets
        own.setdefault(bucket, array("Q")).append(line)
    return core._lines_read, [(bucket, _packed(own[bucket])) for bucket in sorted(own)]


def write_bucket(
    paths: list[str],
    own: list[bytes],
    out: str,
    group_by: str,
    event: str | None,
    order_by: str | None,
) -> list[int]:
    """The inputs ``paths`` read in turn as the batch reads them, written to the file ``out``
    as one text of records at the batch's input-wide line numbers: an empty line, then each
    input's lines, those whose numbers ``own`` holds for it as they are, every other line
    empty. The batch reads this text's line ``1 + base + n`` where it reads the input's line
    ``n`` (``base``: the lines of the inputs before it), so the distances between records
    stay the same; the first empty line keeps a byte order mark opening a record a record's.
    Returns each input's lines (its ``\\n``s plus one)."""
    if not isinstance(paths, list) or not all(type(p) is str for p in paths):
        raise errors.wrong_type("paths", "a list of str", paths)
    if type(own) is not list:
        raise errors.wrong_type("own", "a list of bytes", own)
    for numbers in own:
        if type(numbers) is not bytes:
            raise errors.wrong_type("own", "a list of bytes", own)
        if len(numbers) % 8:
            raise errors.batch_option("own holds line numbers as 8 bytes each")
    if type(out) is not str:
        raise errors.wrong_type("out", "a str", out)
    core = BatchCore(list(paths), group_by, event, order_by)
    if len(own) != len(paths):
        raise errors.batch_option(
            f"write_bucket needs the lines of each of its {len(paths)} inputs, not of {len(own)}"
        )
    if core._key is None:
        raise errors.batch_option(
            "write_bucket reads records by their stream key: pass group_by (e.g. stream_id)"
        )
    totals = []
    try:
        sink: IO[bytes] = open(out, "wb")
    except OSError as exc:
        raise errors.file_error(out, exc.errno or 0) from None
    with sink:
        sink.write(b"\n")
        for path, packed in zip(paths, own):
            wanted = set(_unpacked(packed))
            done = 0  # the lines written of this input
            for line, data in core._lines(path):
                if line in wanted:
                    sink.write(b"\n" * (line - 1 - done) + data + b"\n")
                    done = line
            sink.write(b"\n" * (core._lines_read - done))
            totals.append(core._lines_read)
    return totals


_BLANKS = b" \t\r\n"


def quick_key(line: bytes, name: bytes, quoted: bytes) -> bytes | None:
    """The bytes of the string that is the member ``name`` (``quoted``: ``b'"name"'``) of
    the JSON object on ``line``, found by a light scan that checks only the object's
    structure: the last of duplicates, as the record reader takes it. None — read the line
    the thorough way — unless the object's members up to it read plainly (no member name
    with an escape) and the value is a string without escapes. On a line the record reader
    reads, this is the key it reads; on any other line, bytes that look like one."""
    at = _skip_blanks(line, 0)
    if line[at : at + 1] != b"{":
        return None
    at = _skip_blanks(line, at + 1)
    found = None
    while True:
        if line[at : at + 1] != b'"':
            return None
        end = _plain_string_end(line, at)
        if end is None:
            return None
        member = line[at + 1 : end]
        at = _skip_blanks(line, end + 1)
        if line[at : at + 1] != b":":
            return None
        at = _skip_blanks(line, at + 1)
        if member == name:
            if line[at : at + 1] != b'"':
                return None
            end = _plain_string_end(line, at)
            if end is None:
                return None
            found = line[at + 1 : end]
            at = end + 1
            # no other member of that name can follow where its quoted name does not, and no
            # escape could spell it
            if line.find(b"\\", at) < 0 and line.find(quoted, at) < 0:
                return found
        else:
            skipped = _skip_value(line, at)
            if skipped is None:
                return None
            at = skipped
        at = _skip_blanks(line, at)
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


def _plain_string_end(line: bytes, at: int) -> int | None:
    """Where the string opening at ``at`` closes (its ``"``); None when it holds an escape."""
    end = _next_quote_or_escape(line, at + 1)
    return end if end is not None and line[end] == 0x22 else None


def _next_quote_or_escape(line: bytes, start: int) -> int | None:
    found = [i for i in (line.find(b'"', start), line.find(b"\\", start)) if i >= 0]
    return min(found) if found else None


def _string_end(line: bytes, at: int) -> int | None:
    """Where the string opening at ``at`` closes (its ``"``), escapes skipped."""
    start = at + 1
    while True:
        end = _next_quote_or_escape(line, start)
        if end is None:
            return None
        if line[end] == 0x22:
            return end
        start = end + 2


def _skip_value(line: bytes, at: int) -> int | None:
    """Where the value starting at ``at`` ends (its structure only: strings and brackets)."""
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
            elif b in b"}]":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return None
    i = at
    while i < len(line) and line[i] not in b",}] \t\r\n":
        i += 1
    return i if i > at else None
