"""Batch: logged streams back into messages, one result per stream (:func:`merge_logs`).

A log is read by the backend's ``BatchCore``: on the Rust backend the bytes are parsed,
grouped and folded in Rust, on all cores, with the GIL released, and a Python object is made
only for each stream's result; the twin reads the same inputs the same way on one thread.
Either way, a stream's messages are exactly what :func:`fastmerge.aggregate` gives for that
stream alone.

Inputs (``paths``), in this order: each path as given; a directory's files (recursively,
skipping names that start with ``.``) and a glob's matches sorted by path; ``"-"`` is standard
input; an fsspec URL (``s3://``, ``gs://``, ``az://``, ``https://``, ``memory://``, globs and
prefixes too; the ``fastmerge[fsspec]`` extra) is read where it lives, streamed, with the same
results and errors as a local copy, named by its URL (``storage_options``: the filesystem's
options, e.g. ``{"endpoint_url": ...}``; see :mod:`fastmerge._remote`). Compression (gzip,
zstd, bzip2, xz) is told by a file's first bytes, never by its name.

Two shapes of log:

- **one stream per file** (the default, ``group_by="auto"`` without ``event``; or
  ``group_by="file"``): each file is a recorded stream (SSE, JSON lines or a JSON array) and
  its key is its path;
- **records**, many streams interleaved (``group_by=PATH``): one JSON record a line, the stream
  key at ``group_by`` (a dotted path ``metadata.request_id`` or a JSON pointer
  ``/metadata/request_id``) and the event at ``event`` (None: the record is the event; a string
  there is the event's JSON text). Raw provider events group by their response id with
  ``group_by="id"`` (OpenAI Chat) or ``"responseId"`` (Gemini). An event that starts another
  response (the aggregator's ``new_response``) starts a new stream with the same key. A
  stream's last event (OpenAI's usage chunk or ``[DONE]``, Anthropic ``message_stop``,
  Responses ``response.completed``/``failed``/``incomplete``, Bedrock ``metadata``, Ollama
  ``done: true``) is a hint: the stream waits at its last record, and a later record of its key
  joins it unless it starts another response, is another wire format's, or comes 65536 lines
  later; so a result is what :func:`fastmerge.aggregate` gives for its events. Events of one
  stream in several files (log rotation) merge as one file. ``order_by=PATH`` sorts each
  stream's events by a sequence number or timestamp first (streams then end at the end of the
  input).

Results come in the order of their streams' last records in the input. A record that
belongs to no stream (not JSON, no key, no event) is a *bad line*: ``errors="raise"`` raises
:class:`fastmerge.errors.BatchError` naming ``file:line``, ``"skip"`` counts it, ``"collect"``
keeps it as ``"file:line: reason"`` (:attr:`Batch.bad_lines`, or one line each in
``errors_file``). A file that cannot be read, a corrupt compressed file or a bad option is a
``BatchError`` whatever the mode.


The package holds, each in its module: the record schema (:mod:`~fastmerge.batch.schema`), the
options (:mod:`~fastmerge.batch.options`), a stream's result and record
(:mod:`~fastmerge.batch.results`), the run (:mod:`~fastmerge.batch.run`) and the output
formats (:mod:`~fastmerge.batch.formats`, one module each, chosen from one registry).
"""

from __future__ import annotations

from .._paths import expand_paths
from .formats import FORMATS, Format, Writer, write
from .formats.directory import INDEX, STEM_LENGTH, file_name, to_directory, write_directory
from .formats.jsonl import BLOCK, to_jsonl, write_jsonl
from .formats.parquet import GROUP_BYTES, ParquetOut, to_arrow, to_parquet, write_parquet
from .lines import json_line
from .options import ERROR_MODES, BatchOptions
from .results import Rows, StreamResult, Written
from .run import Batch, merge_logs
from .schema import COLUMNS, RECORD_FIELDS, STATUSES

__all__ = [
    "BLOCK",
    "COLUMNS",
    "ERROR_MODES",
    "FORMATS",
    "GROUP_BYTES",
    "INDEX",
    "RECORD_FIELDS",
    "STATUSES",
    "STEM_LENGTH",
    "Batch",
    "BatchOptions",
    "Format",
    "ParquetOut",
    "Rows",
    "StreamResult",
    "Writer",
    "Written",
    "expand_paths",
    "file_name",
    "json_line",
    "merge_logs",
    "to_arrow",
    "to_directory",
    "to_jsonl",
    "to_parquet",
    "write",
    "write_directory",
    "write_jsonl",
    "write_parquet",
]
