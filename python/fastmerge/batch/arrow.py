"""Arrow tables of the record's columns (:data:`~fastmerge.batch.schema.COLUMNS`), from rows
made in Python or from the Rust core's column buffers. pyarrow is the ``fastmerge[parquet]``
extra, imported only here, when a table is asked for."""

from __future__ import annotations

import importlib
from typing import Any, Sequence

from .schema import COLUMNS

__all__ = ["columns_table", "pyarrow", "schema", "table"]


def pyarrow() -> Any:
    """The pyarrow module (with ``pyarrow.parquet`` loaded), or an ImportError that says how
    to install it."""
    try:
        # imported by name: pyarrow is an optional extra, without type information
        pyarrow = importlib.import_module("pyarrow")
        importlib.import_module("pyarrow.parquet")
    except ImportError:
        raise ImportError(
            "Arrow and Parquet output need pyarrow: pip install 'fastmerge[parquet]'"
        ) from None
    return pyarrow


def schema(pa: Any) -> Any:
    """The Arrow schema of :data:`~fastmerge.batch.schema.COLUMNS`."""
    return pa.schema([(name, getattr(pa, kind)()) for name, kind in COLUMNS])


def table(rows: Sequence[tuple[Any, ...]], pa: Any) -> Any:
    """A table of ``rows`` (tuples in :data:`COLUMNS` order), built a column at a time."""
    arrow_schema = schema(pa)
    columns = list(zip(*rows)) if rows else [()] * len(COLUMNS)
    arrays = [
        pa.array(column, type=field.type)
        for column, field in zip(columns, arrow_schema, strict=True)
    ]
    return pa.Table.from_arrays(arrays, schema=arrow_schema)


def columns_table(count: int, columns: tuple[tuple[Any, ...], ...], pa: Any) -> Any:
    """A table of the Rust core's Arrow columns (``BatchCore.take_rows``): each column's
    buffers wrapped, not read."""
    arrow_schema = schema(pa)
    arrays = []
    for field, (nulls, validity, *data) in zip(arrow_schema, columns, strict=True):
        buffers = [None if validity is None else pa.py_buffer(validity)]
        buffers += [pa.py_buffer(b) for b in data]
        arrays.append(pa.Array.from_buffers(field.type, count, buffers, null_count=nulls))
    return pa.Table.from_arrays(arrays, schema=arrow_schema)
