"""The output formats of a batch run, one module each, and their registry (:data:`FORMATS`),
from which ``fastmerge batch`` and :mod:`fastmerge.dask` choose.

Each format's writer implements :class:`Writer`. Adding a format is one module with its writer
and one line in :data:`FORMATS` (and, for the Rust core to write it, its writer in ``src/py/``).
:func:`write` runs a batch into a writer.
"""

from __future__ import annotations

from typing import Callable, Iterable, Literal, NamedTuple, Protocol

from ..._types import Provider
from ..results import Rows, StreamResult, Written
from ..run import Batch, as_written
from .directory import DirectoryOut
from .jsonl import JsonlOut
from .parquet import ParquetOut

__all__ = ["FORMATS", "Format", "Writer", "write"]


class Writer(Protocol):
    """One output of a batch run: its records added as their streams end, then closed."""

    #: True: it takes each record as its Parquet row (:attr:`Written.row`, or the Rust core's
    #: :class:`Rows`); False: as its JSON line (:attr:`Written.line`).
    rows: bool
    #: The records added so far.
    count: int

    def room(self) -> tuple[int, int]:
        """For a writer of rows: the rows and message bytes the core may add before the
        writer must see them (a slice's or a row group's end)."""
        ...

    def add(self, piece: Written | Rows) -> None:
        """Add a record (or, for a writer of rows, the core's rows)."""
        ...

    def close(self, finish: bool = True) -> None:
        """Write what is left (with ``finish``; without it, the run failed) and let go of the
        file."""
        ...


class Format(NamedTuple):
    """An output format: its ``name`` (``--format NAME``), what it writes (``"file"``: one
    file, ``-o FILE``; ``"directory"``: ``--output-dir DIR``), ``open``, which makes its
    writer to a path, and ``stdout``, which makes one to standard output (None: it cannot
    write there)."""

    name: str
    target: Literal["file", "directory"]
    open: Callable[[str], Writer]
    stdout: Callable[[], Writer] | None = None


#: Every output format by name.
FORMATS: dict[str, Format] = {
    "jsonl": Format("jsonl", "file", JsonlOut.open, JsonlOut.stdout),
    "parquet": Format("parquet", "file", ParquetOut),
    "directory": Format("directory", "directory", DirectoryOut),
}


def write(
    results: Iterable[StreamResult],
    writer: Writer,
    to: Provider | None = None,
    *,
    timeout: float | None = None,
    each: Callable[[Written | Rows | None], None] | None = None,
) -> int:
    """Add every result of ``results`` (a :class:`~fastmerge.batch.Batch`'s records as its
    core writes them) to ``writer`` and close it; the records added. With ``each``, it is
    called with each piece before it is added, and with None each time ``timeout`` seconds
    pass without one (a progress bar's moment)."""
    finished = False
    try:
        for piece in pieces(results, writer, to, timeout):
            if each is not None:
                each(piece)
            if piece is not None:
                writer.add(piece)
        finished = True
    finally:
        writer.close(finished)
    return writer.count


def pieces(
    results: Iterable[StreamResult], writer: Writer, to: Provider | None, timeout: float | None
) -> Iterable[Written | Rows | None]:
    """The records of ``results`` in the form ``writer`` takes; with a batch and a
    ``timeout``, None each time it passes without one."""
    if not isinstance(results, Batch):
        return as_written(results, to, writer.rows)
    if writer.rows:
        return results.rows(writer.room, to, timeout)
    return results.records(to, False, timeout)
