"""Input files as decompressed bytes (``src/engine/batch/input.rs``): the format told by the
first bytes (magic numbers), never by the name: gzip, zstd, bzip2 and xz, each read whole
(concatenated members and frames), and what may follow a member by each format's own rule."""

from __future__ import annotations

import bz2
import lzma
import zlib
from typing import Any, Callable, Iterator

from ... import errors

_MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
)
_BLANK = b" \t\r\n"
#: Stored bytes a member's decoder is given at a time, counted from the member's start (the
#: engine's ``STEP``). A step's decompressed bytes are given only once the whole step decoded:
#: a damaged step gives none (a module raises without the bytes of the call that failed), so
#: both backends name the same offset and read the same lines before the damage.
STEP = 1 << 14
_BOM = b"\xef\xbb\xbf"


def _zstd() -> Any:
    try:
        import zstandard
    except ImportError:
        return None
    return zstandard.ZstdDecompressor().decompressobj


_DECODERS: dict[str, Callable[[], Callable[[], Any] | None]] = {
    "gzip": lambda: lambda: zlib.decompressobj(wbits=31),
    "zstd": _zstd,
    "bzip2": lambda: bz2.BZ2Decompressor,
    "xz": lambda: lambda: lzma.LZMADecompressor(format=lzma.FORMAT_XZ),
}


def _without_bom(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """The chunks of an input without the byte order mark that opens it (its three bytes;
    fewer at the end of the input are bytes like any others)."""
    head = b""
    for chunk in chunks:
        head += chunk
        if len(head) >= len(_BOM) or not _BOM.startswith(head):
            break
    if head.startswith(_BOM):
        head = head[len(_BOM) :]
    if head:
        yield head
    yield from chunks


class _Stored:
    """An input's stored bytes, in the chunks read, with a look at the next bytes (the magic
    number; between two members of a compressed input): the engine's ``Stored``."""

    def __init__(self, raw: Iterator[bytes]) -> None:
        self._raw = raw
        self._buf = b""  # bytes read and not taken yet

    def peek(self, n: int) -> bytes:
        """The next ``n`` bytes, without taking them (fewer at the end of the input)."""
        while len(self._buf) < n:
            chunk = next(self._raw, b"")
            if not chunk:
                break
            self._buf += chunk
        return self._buf[:n]

    def take(self, n: int | None = None) -> bytes:
        """The next bytes (the ones looked at, or the next chunk); with ``n``, the next ``n``
        bytes (fewer at the end of the input); empty at the end."""
        if n is not None:
            data = self.peek(n)
            self._buf = self._buf[len(data) :]
            return data
        data, self._buf = self._buf, b""
        return data or next(self._raw, b"")

    def put_back(self, data: bytes) -> None:
        """Bytes a decoder took past its member's end (they come next)."""
        self._buf = data + self._buf

    def skip_zeros(self) -> int:
        """Takes the null bytes that come next; how many."""
        count = 0
        while True:
            data = self.take()
            if not data:
                return count
            rest = data.lstrip(b"\0")
            count += len(data) - len(rest)
            if rest:
                self.put_back(rest)
                return count

    def rest(self) -> Iterator[bytes]:
        """The bytes not taken yet, to the end."""
        while True:
            data = self.take()
            if not data:
                return
            yield data


def _starts_member(fmt: str, head: bytes) -> bool:
    """Whether ``head`` (the next stored bytes, all of them when fewer than six) can start a
    member of ``fmt``: its whole magic, or the magic's start cut by the end of the input. A
    gzip header's method (deflate) and reserved flag bits are judged once they are there."""
    magic = next(m for m, name in _MAGIC if name == fmt)
    if magic.startswith(head[: len(magic)]):
        return fmt != "gzip" or len(head) < 4 or (head[2] == 8 and not head[3] & 0xE0)
    # a zstd skippable frame: 0x50 to 0x5f, then 2a 4d 18
    return fmt == "zstd" and head[0] & 0xF0 == 0x50 and b"\x2a\x4d\x18".startswith(head[1:4])


def _decompress(path: str, fmt: str, new: Callable[[], Any], stored: _Stored) -> Iterator[bytes]:
    """The decompressed bytes of a compressed input: one decoder per member or frame, a new
    one on the bytes after each, given :data:`STEP` of its member's bytes at a time (a step's
    bytes come once it decoded whole); input that ends inside one is truncated. After a member
    comes the next one; for xz, stream padding (null bytes, a multiple of four, between or
    after streams: the .xz format, §2.2); for gzip, null bytes up to the end of the input
    (what ``gzip -d`` accepts without a word). Anything else is corrupt, except a member's
    magic cut by the end of the input (truncated). The error names how many decompressed
    bytes were given before it."""
    given = 0
    after = False  # whether a member was read
    while True:
        if after:
            zeros = stored.skip_zeros() if fmt in ("gzip", "xz") else 0
            ended = not stored.peek(1)
            if fmt == "xz" and zeros % 4:
                raise errors.compressed_error(path, fmt, False, given)
            if ended:
                return
            if fmt == "gzip" and zeros:
                # null bytes are the end, never between members
                raise errors.compressed_error(path, fmt, False, given)
        if not _starts_member(fmt, stored.peek(6)):
            raise errors.compressed_error(path, fmt, False, given)
        decoder = new()
        while not decoder.eof:
            piece = stored.take(STEP)
            if not piece:
                raise errors.compressed_error(path, fmt, True, given)
            try:
                out = decoder.decompress(piece)
                # bz2 keeps back what a block gives when the piece ends with the block: the
                # whole of the step's output is asked for (the others give it in one call)
                while fmt == "bzip2" and not decoder.eof and (more := decoder.decompress(b"")):
                    out += more
            except Exception as exc:  # zlib.error, OSError, lzma.LZMAError, ZstdError, ...
                raise errors.compressed_error(path, fmt, False, given) from exc
            if out:
                given += len(out)
                yield out
        stored.put_back(decoder.unused_data)
        after = True
