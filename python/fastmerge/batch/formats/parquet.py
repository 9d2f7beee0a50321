"""Parquet (the ``fastmerge[parquet]`` extra): one row per stream, the typed columns of
:data:`~fastmerge.batch.schema.COLUMNS`, written a row group at a time (:class:`ParquetOut`);
and :func:`to_arrow`, the same rows as one ``pyarrow.Table``."""

from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Iterable, Iterator

from ..._types import Provider
from .. import arrow
from ..results import Rows, StreamResult, Written
from ..run import Batch, as_written
from ..schema import INDEXED

__all__ = ["GROUP_BYTES", "ParquetOut", "to_arrow", "to_parquet", "write_parquet"]


def to_arrow(results: Iterable[StreamResult], to: Provider | None = None) -> Any:
    """A ``pyarrow.Table``, one row per result: the typed columns of :data:`COLUMNS` (usage
    counts of choice 0, its text and number of tool calls) and ``message``, the record's
    message as JSON text. Needs pyarrow (``pip install 'fastmerge[parquet]'``)."""
    pa = arrow.pyarrow()
    return arrow.table(list(_rows(as_written(results, to, True))), pa)


def _rows(records: Iterable[Written]) -> Iterator[tuple[Any, ...]]:
    """The rows of ``records`` made with their columns."""
    for written in records:
        assert written.row is not None
        yield written.row


#: Message text at which :func:`to_parquet` writes a row group before ``rows_per_group``
#: rows: large messages then neither fill memory nor leave all the writing (compression)
#: until the batch ends, where nothing else runs beside it.
GROUP_BYTES = 8 << 20


#: Rows made Arrow at a time while a row group fills.
_SLICE = 1_000


def _write_group(writer: Any, tables: list[Any], pa: Any) -> int:
    """``tables`` written as one row group; their rows."""
    table = pa.concat_tables(tables)
    writer.write_table(table, row_group_size=max(1, table.num_rows))
    return int(table.num_rows)


#: The columns whose Parquet pages keep min/max statistics and try dictionary encoding: the


def to_parquet(
    results: Iterable[StreamResult],
    path: str | os.PathLike[str],
    to: Provider | None = None,
    *,
    rows_per_group: int = 10_000,
) -> int:
    """Write the results to a Parquet file (the columns of :func:`to_arrow`), a row group at
    a time, so memory holds ``rows_per_group`` rows, never the whole batch (fewer when their
    messages pass :data:`GROUP_BYTES`); the number of rows written."""
    with ParquetOut(path, rows_per_group=rows_per_group) as out:
        if isinstance(results, Batch):
            pieces: Iterable[Written | Rows | None] = results.rows(out.room, to)
        else:
            pieces = as_written(results, to, True)
        for piece in pieces:
            assert piece is not None
            out.add(piece)
    return out.count


def write_parquet(
    records: Iterable[Written | Rows], path: str | os.PathLike[str], *, rows_per_group: int = 10_000
) -> int:
    """Write the rows of ``records`` (made with their columns, or :class:`Rows` of the core)
    to a Parquet file, as :func:`to_parquet` does; the number of rows written."""
    with ParquetOut(path, rows_per_group=rows_per_group) as out:
        for record in records:
            out.add(record)
    return out.count


class ParquetOut:
    """A Parquet file written a row group at a time (:func:`to_parquet`): rows are added
    one by one (:class:`Written`) or as the core's :class:`Rows`, whose ``room()`` keeps
    them from passing a slice's or a row group's end, so that the file is the same either way.

    A row group ends at ``rows_per_group`` rows, or after the row whose message passes
    :data:`GROUP_BYTES`; its rows are made Arrow :data:`_SLICE` at a time as they come
    (beside the merge, not all after the last stream), each slice one chunk (the writer cuts
    pages by chunk). A full group is encoded and compressed on another thread (pyarrow lets
    go of the GIL there) while the next one fills; one group at a time, so memory holds two
    at most."""

    rows = True

    def __init__(self, path: str | os.PathLike[str], *, rows_per_group: int = 10_000) -> None:
        self._pa = pa = arrow.pyarrow()
        self.rows_per_group = max(1, rows_per_group)
        indexed = list(INDEXED)
        self._writer = pa.parquet.ParquetWriter(
            os.fspath(path), arrow.schema(pa), use_dictionary=indexed, write_statistics=indexed
        )
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="fastmerge-parquet")
        self._writing: Future[int] | None = None
        #: rows written to the file, once their groups are
        self.count = 0
        self._rows: list[tuple[Any, ...]] = []  # rows not yet made Arrow, in order
        self._take: Callable[[], Any] | None = None  # the core's rows not yet taken
        self._in_core = 0  # how many
        self._parts: list[Any] = []  # the slice's tables so far (more than one when mixed)
        self._parted = 0  # rows in `_parts`
        self._made: list[Any] = []  # the group's slices
        self._grouped = 0  # rows in `_made`
        self._held = 0  # the bytes of the group's messages

    def __enter__(self) -> ParquetOut:
        return self

    def __exit__(self, kind: Any, *_: Any) -> None:
        self.close(kind is None)

    def _filling(self) -> int:
        """Rows of the slice being filled."""
        return self._parted + len(self._rows) + self._in_core

    def room(self) -> tuple[int, int]:
        """The rows and message bytes the core may add before a slice or group ends."""
        filling = self._filling()
        rows = min(_SLICE - filling, self.rows_per_group - self._grouped - filling)
        return max(1, rows), max(1, GROUP_BYTES - self._held)

    def add(self, piece: Written | Rows) -> None:
        """Add a record's row, or the core's rows."""
        if isinstance(piece, Rows):
            if piece.take != self._take:
                self._flush_core()  # another batch's rows: its own taken first
            self._flush_rows()
            self._take = piece.take
            self._in_core += piece.added
            self._held += piece.held
        else:
            row = piece.row
            assert row is not None
            self._flush_core()
            self._rows.append(row)
            self._held += len(row[-1] or b"")
        if self._filling() >= _SLICE:
            self._end_slice()
        if self._grouped + self._filling() >= self.rows_per_group or self._held >= GROUP_BYTES:
            self._end_slice()
            self._write()

    def _flush_rows(self) -> None:
        if self._rows:
            self._parts.append(arrow.table(self._rows, self._pa))
            self._parted += len(self._rows)
            self._rows = []

    def _flush_core(self) -> None:
        if self._in_core and self._take is not None:
            table = self._take()
            self._parts.append(table)
            self._parted += table.num_rows
            self._in_core = 0

    def _end_slice(self) -> None:
        """The slice's rows made one chunk of the group."""
        self._flush_rows()
        self._flush_core()
        if len(self._parts) == 1:
            self._made.append(self._parts[0])
        elif self._parts:
            # rows of Python and of the core in one slice: one chunk, as one source makes
            self._made.append(self._pa.concat_tables(self._parts).combine_chunks())
        self._grouped += self._parted
        self._parts, self._parted = [], 0

    def _write(self) -> None:
        """The group's tables to the writer's thread (after the group before is written)."""
        if self._writing is not None:
            self.count += self._writing.result()
        self._writing = self._pool.submit(_write_group, self._writer, self._made, self._pa)
        self._made, self._grouped, self._held = [], 0, 0

    def close(self, finish: bool = True) -> None:
        """Write what is left (with ``finish``; an empty file has one empty group) and close
        the file."""
        try:
            if finish:
                self._end_slice()
                if self._writing is not None:
                    self.count += self._writing.result()
                    self._writing = None
                if not self._made and not self.count:
                    # no row: the file still has its schema, in one empty group
                    self._made.append(arrow.table([], self._pa))
                if self._made:
                    self.count += _write_group(self._writer, self._made, self._pa)
                    self._made = []
        finally:
            self._pool.shutdown()
            self._writer.close()
