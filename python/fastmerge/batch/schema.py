"""The record schema, declared once: the fields of a stream's record (:data:`RECORD_FIELDS`)
and the typed Parquet columns (:data:`COLUMNS`).

The Python writers read these tables; the Rust core's writers declare the same names in
``src/py/batch_record.rs`` (``RECORD_FIELDS``) and ``src/py/batch_columns.rs`` (``COLUMNS``),
given to Python as ``BatchCore.RECORD_FIELDS`` and ``BatchCore.COLUMNS``, and a test holds
both to these tables (``tests/batch/test_schema.py``). Adding a column is a line here, its
cell in :mod:`fastmerge.batch.results` and its column in ``batch_columns.rs``.
"""

from __future__ import annotations

__all__ = ["COLUMNS", "INDEXED", "RECORD_FIELDS", "STATUSES"]

#: A stream's status, best first: every choice complete; one incomplete (cut before its
#: terminal event); one failed (the provider said so); no message (``error``).
STATUSES = ("complete", "incomplete", "failed", "error")

#: The keys of a stream's record (:meth:`~fastmerge.batch.StreamResult.record`), in the order
#: a JSON line writes them; ``choices`` is there only for a stream of several choices.
RECORD_FIELDS = ("key", "provider", "status", "anomalies", "message", "choices", "error")

#: The typed columns of :func:`~fastmerge.batch.to_arrow`, for the fields an analyst filters
#: on, and the whole record (``message`` and the rest) as JSON text.
COLUMNS = (
    ("key", "string"),
    ("provider", "string"),
    ("model", "string"),
    ("status", "string"),
    ("finish_reason", "string"),
    ("finish_reason_normalized", "string"),
    ("input_tokens", "int64"),
    ("output_tokens", "int64"),
    ("total_tokens", "int64"),
    ("text", "string"),
    ("tool_calls", "int64"),
    ("anomalies", "int64"),
    ("error", "string"),
    ("message", "string"),
)

#: The columns whose Parquet pages keep min/max statistics and try dictionary encoding: the
#: short typed ones. ``text`` and ``message`` are long and nearly all distinct, so their
#: statistics and dictionaries would cost a pass over every byte and help no reader.
INDEXED = tuple(name for name, _ in COLUMNS if name not in ("text", "message"))
