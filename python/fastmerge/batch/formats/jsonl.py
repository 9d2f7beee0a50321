"""JSON lines: one record a line (:meth:`~fastmerge.batch.StreamResult.record` as
:func:`~fastmerge.batch.json_line` writes it), to a file or standard output."""

from __future__ import annotations

import os
import sys
from typing import IO, Iterable

from ..._types import Provider
from ..results import Rows, StreamResult, Written
from ..run import as_written

__all__ = ["BLOCK", "JsonlOut", "to_jsonl", "write_jsonl"]

#: How many bytes of records :func:`to_jsonl` gathers before it writes them.
BLOCK = 1 << 20


def to_jsonl(results: Iterable[StreamResult], file: IO[bytes], to: Provider | None = None) -> int:
    """Write one JSON line per result (:meth:`StreamResult.record`) to a binary file as
    results come (gathered into writes of about :data:`BLOCK` bytes; a :class:`Batch`'s
    records are written by its core); the number of lines written."""
    return write_jsonl(as_written(results, to, False), file)


def write_jsonl(records: Iterable[Written], file: IO[bytes]) -> int:
    """Write the lines of ``records`` to a binary file, about :data:`BLOCK` bytes a write;
    the number of lines written."""
    out = JsonlOut(file)
    for written in records:
        out.add(written)
    out.close()
    return out.count


class JsonlOut:
    """The ``jsonl`` format's writer: records' lines to a binary ``file``, gathered into
    writes of about :data:`BLOCK` bytes, or with ``each`` each line written and flushed as its
    stream ends (standard output); ``own``: the writer closes the file."""

    rows = False

    def __init__(self, file: IO[bytes], *, each: bool = False, own: bool = False) -> None:
        self._file = file
        self._each = each
        self._own = own
        self._block: list[bytes] = []
        self._size = 0
        #: the records written (or gathered to be)
        self.count = 0

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> JsonlOut:
        """A writer to the file ``path`` (made or emptied)."""
        return cls(open(path, "wb"), own=True)  # noqa: SIM115 (closed by close())

    @classmethod
    def stdout(cls) -> JsonlOut:
        """A writer to standard output."""
        return cls(sys.stdout.buffer, each=True)

    def room(self) -> tuple[int, int]:
        """Unused: lines are not rows."""
        return (1, 1)

    def add(self, piece: Written | Rows) -> None:
        """Write ``piece``'s line (a :class:`Written` made without its row)."""
        assert isinstance(piece, Written)
        self.count += 1
        if self._each:
            # a record is written (and flushed) when its stream ends
            self._file.write(piece.line)
            self._file.flush()
            return
        self._block.append(piece.line)
        self._size += len(piece.line)
        if self._size >= BLOCK:
            self._flush()

    def _flush(self) -> None:
        if self._block:
            self._file.write(b"".join(self._block))
            self._block.clear()
            self._size = 0

    def close(self, finish: bool = True) -> None:
        """Write what is gathered (with ``finish``), and close the file if the writer owns it."""
        try:
            if finish:
                self._flush()
        finally:
            if self._own:
                self._file.close()
