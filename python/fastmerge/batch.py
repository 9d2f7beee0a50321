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
"""

from __future__ import annotations

import importlib
import json
import os
import re
from concurrent.futures import Future, ThreadPoolExecutor
from typing import (
    IO,
    TYPE_CHECKING,
    Any,
    Callable,
    Iterable,
    Iterator,
    Literal,
    NamedTuple,
    Sequence,
)

from . import _backend, _remote
from . import errors as _errors
from ._paths import expand_paths
from ._types import Provider, SignatureMerge, UsageMerge

if TYPE_CHECKING:
    from ._pure.batch import BatchCore as _Core
    from ._pure.batch import DirectoryWriter as _DirectoryWriter
    from ._pure.batch import split_file as _split_file
    from .messages import AssistantMessage

    _name: str
    _fast_line: Callable[[Any], bytes | None] | None
else:
    _name, _impl = _backend.backend_of(__name__)
    _Core = _impl.BatchCore
    _DirectoryWriter = _impl.DirectoryWriter
    _split_file = _impl.split_file
    # Rust writes the lines of plain data itself (None where it steps aside for json.dumps)
    _fast_line = _impl.json_line if _name == "rust" else None
    AssistantMessage = _backend.messages(_name).AssistantMessage

__all__ = [
    "COLUMNS",
    "ERROR_MODES",
    "INDEX",
    "STATUSES",
    "Batch",
    "ParquetOut",
    "Rows",
    "StreamResult",
    "Written",
    "expand_paths",
    "file_name",
    "json_line",
    "merge_logs",
    "to_arrow",
    "to_directory",
    "to_jsonl",
    "to_parquet",
]

#: ``errors=`` of :func:`merge_logs`.
ERROR_MODES = ("raise", "skip", "collect")
#: A stream's status, best first: every choice complete; one incomplete (cut before its
#: terminal event); one failed (the provider said so); no message (``error``).
STATUSES = ("complete", "incomplete", "failed", "error")


class StreamResult:
    """One stream of a batch: its ``key`` (the group key, or the file's path), the
    ``provider`` read (None if no event could be), its ``messages`` (one per choice; None when
    the stream could not be merged, and then ``error`` says why)."""

    __slots__ = ("key", "provider", "messages", "error")

    def __init__(
        self,
        key: str,
        provider: str | None,
        messages: list[AssistantMessage] | None,
        error: str | None,
    ) -> None:
        self.key = key
        self.provider = provider
        self.messages = messages
        self.error = error

    @property
    def message(self) -> AssistantMessage | None:
        """Choice 0 (the lowest choice seen), or None when the stream could not be merged."""
        return self.messages[0] if self.messages else None

    @property
    def status(self) -> str:
        """The worst of its choices' statuses (see :data:`STATUSES`); ``error`` without a
        message."""
        if not self.messages:
            return "error"
        worst = max(STATUSES.index(m.status or "incomplete") for m in self.messages)
        return STATUSES[worst]

    @property
    def anomalies(self) -> list[dict[str, Any]]:
        """The anomalies of its messages, choice by choice (one recorded on every choice is
        given once)."""
        out: list[dict[str, Any]] = []
        for message in self.messages or ():
            out.extend(a for a in message.anomalies if a not in out)
        return out

    def record(self, to: Provider | None = None) -> dict[str, Any]:
        """The stream as a plain dict: ``key``, ``provider``, ``status``, ``anomalies``,
        ``message`` (choice 0's ``to_dict()``, or with ``to`` the provider's non-streaming
        response holding every choice), ``choices`` (every choice's ``to_dict()``, only when
        there are several and ``to`` is None) and ``error``."""
        out: dict[str, Any] = {
            "key": self.key,
            "provider": self.provider,
            "status": self.status,
            "anomalies": self.anomalies,
            "message": None,
        }
        error = self.error
        if self.messages:
            if to is not None:
                from .render import to_provider

                try:
                    out["message"] = to_provider(self.messages, to)
                except ValueError as exc:  # a shape the target cannot hold
                    out["status"] = "error"
                    error = f"to={to!r}: {exc}"
            else:
                out["message"] = self.messages[0].to_dict()
                if len(self.messages) > 1:
                    out["choices"] = [m.to_dict() for m in self.messages]
        out["error"] = error
        return out

    def __repr__(self) -> str:
        return f"<StreamResult key={self.key!r} provider={self.provider!r} status={self.status}>"


class Written(NamedTuple):
    """A stream's record as it is written (:meth:`Batch.poll_written`): its ``key``,
    ``status`` and ``error`` (the record's: with ``to``, a message the target cannot hold is
    an ``error`` record), ``line`` (the bytes :func:`json_line` gives for
    :meth:`StreamResult.record`; empty when its row was asked for instead), ``row`` (its
    Parquet columns, in :data:`COLUMNS` order, the last, ``message``, as UTF-8 JSON bytes;
    or None when not asked for) and ``merged``
    (whether the stream has a message: False is a :class:`StreamResult` whose status is
    ``error``)."""

    key: str
    status: str
    error: str | None
    line: bytes
    row: tuple[Any, ...] | None
    merged: bool


class Rows(NamedTuple):
    """Records whose Parquet rows the Rust core added to its Arrow columns
    (:meth:`Batch.poll_rows`): how many (``added``), their messages' JSON bytes (``held``),
    the first whose stream has no message (``failed``, a :class:`Written` without its line
    and row; or None), and ``take``, which makes every row added so far a table."""

    added: int
    held: int
    failed: Written | None
    take: Callable[[], Any]


def _written(result: StreamResult, to: Provider | None, row: bool) -> Written:
    """``result`` as written, serialized here."""
    record = result.record(to)
    return Written(
        result.key,
        record["status"],
        record["error"],
        b"" if row else json_line(record),
        _row(result, record) if row else None,
        bool(result.messages),
    )


def _as_written(
    results: Iterable[StreamResult], to: Provider | None, row: bool
) -> Iterator[Written]:
    """``results`` as written: a :class:`Batch`'s by :meth:`Batch.written` (its core
    serializes them), other iterables' here."""
    if isinstance(results, Batch):
        return results.written(to, row)
    return (_written(result, to, row) for result in results)


class Batch:
    """The results of :func:`merge_logs`, as its streams end: iterate it for
    :class:`StreamResult`\\ s. :meth:`progress` and :attr:`counts` say how far it got;
    :meth:`close` (or leaving a ``with`` block) stops early."""

    def __init__(self, core: Any, errors_mode: str, errors_file: IO[str] | None) -> None:
        self._core = core
        self._mode = errors_mode
        self._errors_file = errors_file
        #: ``errors="collect"`` without ``errors_file``: every bad line, ``"file:line: reason"``.
        self.bad_lines: list[str] = []
        #: Streams by status (:data:`STATUSES`) and ``bad_lines``, so far.
        self.counts: dict[str, int] = dict.fromkeys((*STATUSES, "bad_lines"), 0)
        #: What the inputs' directories held that is not read, ``"PATH: reason"``: a link
        #: cycle, a second way to a directory or file already read (see :func:`expand_paths`).
        self.skipped: list[str] = []

    def __iter__(self) -> Batch:
        return self

    def __next__(self) -> StreamResult:
        result = self.poll(None)
        assert result is not None
        return result

    def poll(self, timeout: float | None) -> StreamResult | None:
        """The next stream's :class:`StreamResult`, waiting at most ``timeout`` seconds for it
        (``None``: as long as it takes, as iterating the batch does).

        Returns the result as soon as a stream ends; returns ``None`` when ``timeout`` passed
        and no stream ended, so a caller can draw :meth:`progress` and call again; raises
        ``StopIteration`` once every stream was returned (or after :meth:`close`). Call it in
        a loop instead of iterating when something must happen while the engine reads, such
        as a progress bar. Bad lines met meanwhile go where ``errors=`` says and count in
        :attr:`counts`; ``errors="raise"`` raises :class:`~fastmerge.errors.BatchError` from
        here."""
        while True:
            item = self._core.next(timeout)
            if item is None:
                return None
            if item[0] == "stream":
                return self._result(item)
            self._bad(item)

    def _result(self, item: tuple[Any, ...]) -> StreamResult:
        _, key, provider, choices, error = item
        messages = None if choices is None else [AssistantMessage._from_data(d) for d in choices]
        result = StreamResult(key, provider, messages, error)
        self.counts[result.status] += 1
        return result

    def _bad(self, item: tuple[Any, ...]) -> None:
        _, source, line, reason = item
        self.counts["bad_lines"] += 1
        if self._mode == "raise":
            self.close()
            raise _errors.bad_line(source, line, reason)
        if self._mode == "collect":
            text = str(_errors.bad_line(source, line, reason))
            if self._errors_file is None:
                self.bad_lines.append(text)
            else:
                self._errors_file.write(text + "\n")

    def poll_written(
        self, timeout: float | None, to: Provider | None = None, row: bool = False
    ) -> Written | None:
        """The next result as written (:class:`Written`: its JSON line, or with ``row`` its
        Parquet columns), or None when ``timeout`` seconds passed without one;
        ``StopIteration`` at the end. The same records as :meth:`StreamResult.record` gives;
        the Rust core writes them itself, no message object is made."""
        # the Rust core on local files serializes the records (the twin, a remote input's
        # renamed items and a rendered record take the results' path: the same bytes)
        form = ("row" if row else "jsonl") if to is None and self._writes else None
        while True:
            item = self._core.next(timeout) if form is None else self._core.next(timeout, form)
            if item is None:
                return None
            written = self._written_item(item, to, row)
            if written is not None:
                return written

    def _written_item(
        self, item: tuple[Any, ...], to: Provider | None, row: bool
    ) -> Written | None:
        """A core's item as written, counted; None for a bad line (gone where ``errors=``
        says)."""
        kind = item[0]
        if kind == "record":
            _, key, status, error, line, columns = item
            self.counts[status] += 1
            # without `to`, a record's status is its stream's
            return Written(key, status, error, line, columns, status != "error")
        if kind == "stream":
            result = self._result(item)
            written = _written(result, to, row)
            if written.status != result.status:
                # a message `to` cannot hold is an error record: counted as written
                self.counts[result.status] -= 1
                self.counts[written.status] += 1
            return written
        self._bad(item)
        return None

    def poll_rows(
        self, timeout: float | None, room: tuple[int, int], to: Provider | None = None
    ) -> Written | Rows | None:
        """The next records' Parquet rows, or None when ``timeout`` seconds passed without
        one; ``StopIteration`` at the end. The Rust core on local files adds them to its Arrow
        columns (:class:`Rows`: as many as are ready, at most ``room``, ``(rows, bytes of
        message)``; :meth:`take_rows` makes them a table); otherwise a record comes as
        :meth:`poll_written` gives it with ``row=True``, as does one the core leaves to
        Python."""
        if to is not None or not self._writes:
            return self.poll_written(timeout, to, True)
        while True:
            item = self._core.next_rows(timeout, *room)
            if item is None:
                return None
            if item[0] == "rows":
                _, count, held, statuses, failed = item
                for status, number in zip(STATUSES, statuses, strict=True):
                    self.counts[status] += number
                first = (
                    None
                    if failed is None
                    else Written(failed[0], "error", failed[1], b"", None, False)
                )
                return Rows(count, held, first, self.take_rows)
            written = self._written_item(item, None, True)
            if written is not None:
                return written

    def rows(
        self,
        room: Callable[[], tuple[int, int]],
        to: Provider | None = None,
        timeout: float | None = None,
    ) -> Iterator[Written | Rows | None]:
        """Every remaining record's rows (see :meth:`poll_rows`), ``room()`` asked before
        each; with a ``timeout``, None each time it passed without one."""
        while True:
            try:
                found = self.poll_rows(timeout, room(), to)
            except StopIteration:
                return
            yield found

    def take_rows(self) -> Any:
        """The rows the core added since the last call (:meth:`poll_rows`), as a
        ``pyarrow.Table`` of :data:`COLUMNS`."""
        pa = _pyarrow()
        count, columns = self._core.take_rows()
        return _columns_table(count, columns, pa)

    def written(self, to: Provider | None = None, row: bool = False) -> Iterator[Written]:
        """Every remaining result as written (see :meth:`poll_written`), as streams end."""
        while True:
            try:
                found = self.poll_written(None, to, row)
            except StopIteration:
                return
            assert found is not None
            yield found

    @property
    def _writes(self) -> bool:
        """Whether the core writes records itself (``BatchCore.next``'s ``record``)."""
        return _name == "rust" and type(self._core) is _Core

    def progress(self) -> tuple[int, int, int, int]:
        """How far the batch got: ``(bytes_read, bytes_total, streams_done, bad_lines)``.

        ``bytes_read`` counts the input bytes read so far as stored (a compressed file's
        compressed bytes), of ``bytes_total``, the inputs' sizes added (0 when standard input
        is one of them: its size is not known); ``streams_done`` and ``bad_lines`` count the
        streams and the bad lines handed out so far (by :meth:`poll` or iteration). It neither
        waits nor advances the batch: call it whenever, typically each time :meth:`poll`
        returns (a result, or ``None`` after its timeout) to redraw a progress bar."""
        progress: tuple[int, int, int, int] = self._core.progress()
        return progress

    def close(self) -> None:
        """Stop reading: files close, iteration ends."""
        self._core.close()

    def __enter__(self) -> Batch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def merge_logs(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    group_by: str = "auto",
    event: str | None = None,
    order_by: str | None = None,
    provider: Provider | Literal["auto"] = "auto",
    errors: Literal["raise", "skip", "collect"] = "raise",
    errors_file: IO[str] | None = None,
    jobs: int = 0,
    max_open_streams: int = 0,
    strict: bool = False,
    signature_merge: SignatureMerge = "replace",
    usage: UsageMerge = "merge",
    storage_options: dict[str, Any] | None = None,
) -> Batch:
    """Merge the streams logged in ``paths`` (see the module docstring): a :class:`Batch`
    yielding one :class:`StreamResult` per stream as streams end.

    ``jobs`` threads read (0: all cores; at most 4096; the twin always uses one);
    ``max_open_streams`` bounds the streams open at once (0: no bound; more is a
    ``BatchError`` naming the line).
    ``provider``, ``strict``, ``signature_merge`` and ``usage`` are :class:`fastmerge.Aggregator`'s.
    ``storage_options`` go to fsspec for the URLs among ``paths``.
    """
    if errors not in ERROR_MODES:
        raise _errors.invalid_option("errors", errors, ERROR_MODES)
    if errors_file is not None and errors != "collect":
        raise _errors.batch_option("errors_file needs errors='collect'")
    skipped: list[str] = []
    inputs = expand_paths(paths, skipped, storage_options)

    def core(files: list[str]) -> Any:
        return _Core(
            files,
            group_by,
            event,
            order_by,
            provider,
            strict,
            signature_merge,
            usage,
            jobs,
            max_open_streams,
        )

    if any(_remote.is_url(path) for path in inputs):
        run = Batch(_remote.RemoteCore(core, inputs, storage_options), errors, errors_file)
    else:
        run = Batch(core(inputs), errors, errors_file)
    run.skipped = skipped
    return run


def json_line(value: Any) -> bytes:
    """``value`` as one line of compact UTF-8 JSON (as ``fastmerge merge`` writes; a lone
    surrogate, which UTF-8 cannot encode, makes the line ASCII with escapes). The Rust backend
    writes plain data (exact dicts with str keys, lists, tuples, strs, ints of 64 bits, floats,
    bools, None) itself, to the same bytes."""
    if _fast_line is not None:
        line = _fast_line(value)
        if line is not None:
            return line
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":")).encode("ascii") + b"\n"


#: How many bytes of records :func:`to_jsonl` gathers before it writes them.
BLOCK = 1 << 20


def to_jsonl(results: Iterable[StreamResult], file: IO[bytes], to: Provider | None = None) -> int:
    """Write one JSON line per result (:meth:`StreamResult.record`) to a binary file as
    results come (gathered into writes of about :data:`BLOCK` bytes; a :class:`Batch`'s
    records are written by its core); the number of lines written."""
    return write_jsonl(_as_written(results, to, False), file)


def write_jsonl(records: Iterable[Written], file: IO[bytes]) -> int:
    """Write the lines of ``records`` to a binary file, about :data:`BLOCK` bytes a write;
    the number of lines written."""
    count = 0
    block: list[bytes] = []
    size = 0
    for written in records:
        block.append(written.line)
        size += len(written.line)
        count += 1
        if size >= BLOCK:
            file.write(b"".join(block))
            block.clear()
            size = 0
    if block:
        file.write(b"".join(block))
    return count


#: The index of :func:`to_directory`: one JSON line per file, ``{"key", "file", "status"}``.
INDEX = "index.jsonl"
#: Characters of a key kept in its file name (the others become ``_``).
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
#: The longest stem taken from a key (a file name stays far below 255 bytes).
STEM_LENGTH = 100
#: Names Windows keeps for devices, whatever the extension (``nul.json`` too).
_DEVICES = frozenset(
    ["con", "prn", "aux", "nul"] + [f"{p}{n}" for p in ("com", "lpt") for n in range(10)]
)


def file_name(key: str, taken: set[str]) -> str:
    """A safe, unique file name for a stream's record: the key's letters, digits, ``.``,
    ``_`` and ``-`` (every other run of characters as one ``_``; no leading ``.``; at most
    :data:`STEM_LENGTH` of them; ``_`` for a key that keeps none; a Windows device name gets
    a leading ``_``) and ``.json``, with ``-2``, ``-3``, ... when the name is taken, compared
    case-insensitively (a key met again, keys that read the same, or differ only by case).
    ``taken`` holds the names given so far (lower case) and gets this one."""
    stem = _UNSAFE.sub("_", key).lstrip(".")[:STEM_LENGTH] or "_"
    if stem.split(".")[0].lower() in _DEVICES:
        stem = "_" + stem
    name = f"{stem}.json"
    number = 1
    while name.lower() in taken:
        number += 1
        name = f"{stem}-{number}.json"
    taken.add(name.lower())
    return name


def to_directory(
    results: Iterable[StreamResult], directory: str | os.PathLike[str], to: Provider | None = None
) -> int:
    """Write each result's record (:meth:`StreamResult.record`) to its own file in
    ``directory`` (made if missing), named by :func:`file_name`, as results come; and beside
    them :data:`INDEX`, one line per file, ``{"key", "file", "status"}``, written as each file
    is. The number of files written."""
    return write_directory(_as_written(results, to, False), directory)


_AFTER_KEY = b',"provider":'


def _index_line(written: Written, name: str) -> bytes:
    """The :data:`INDEX` line of ``written`` in file ``name``: ``json_line({"key", "file",
    "status"})``, its key's JSON taken from the record's line when that is the same text (a
    line made ASCII for a lone surrogate elsewhere has the key's other characters escaped)."""
    line = written.line
    if not line.startswith(b'{"key":') or (not written.key.isascii() and line.isascii()):
        return json_line({"key": written.key, "file": name, "status": written.status})
    # every quote inside a JSON string is escaped: the first `,"provider":` ends the key
    end = line.index(_AFTER_KEY, 7)
    # a file name holds only ASCII letters, digits, ".", "_" and "-": nothing to escape
    return b"".join(
        (line[:end], b',"file":"', name.encode(), b'","status":"', written.status.encode(), b'"}\n')
    )


def write_directory(records: Iterable[Written], directory: str | os.PathLike[str]) -> int:
    """Write each of ``records`` to its own file in ``directory``, and :data:`INDEX`, as
    :func:`to_directory` does; the number of files written. The backend's
    ``DirectoryWriter`` writes them: on the Rust backend on a thread of its own, beside the
    batch (each file's open, write and close are system calls the merge does not wait on)."""
    directory = os.fspath(directory)
    os.makedirs(directory, exist_ok=True)
    taken: set[str] = set()
    count = 0
    writer = _DirectoryWriter(directory, INDEX)
    try:
        for written in records:
            name = file_name(written.key, taken)
            writer.put(name, written.line, _index_line(written, name))
            count += 1
    finally:
        # every file queued is written before this returns (or the first error is raised)
        failure = writer.close()
    if failure is not None:
        raise failure
    return count


# -- Arrow and Parquet (the ``fastmerge[parquet]`` extra)

#: The typed columns of :func:`to_arrow`, for the fields an analyst filters on, and the
#: whole record (``message`` and the rest) as JSON text.
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


def _pyarrow() -> Any:
    try:
        # imported by name: pyarrow is an optional extra, without type information
        pyarrow = importlib.import_module("pyarrow")
        importlib.import_module("pyarrow.parquet")
    except ImportError:
        raise ImportError(
            "Arrow and Parquet output need pyarrow: pip install 'fastmerge[parquet]'"
        ) from None
    return pyarrow


def _schema(pa: Any) -> Any:
    return pa.schema([(name, getattr(pa, kind)()) for name, kind in COLUMNS])


def _row(result: StreamResult, record: dict[str, Any]) -> tuple[Any, ...]:
    """The columns of ``result`` in :data:`COLUMNS` order, ``record`` its record."""
    message = result.message
    data = None if message is None else message.to_dict()
    usage = None if data is None else data["usage_metadata"]
    return (
        result.key,
        result.provider,
        None if message is None else message.response_model,
        record["status"],
        None if data is None else data["finish_reason"],
        None if message is None else message.finish_reason_normalized,
        _count(usage, "input_tokens"),
        _count(usage, "output_tokens"),
        _count(usage, "total_tokens"),
        None if data is None else "".join(p["text"] for p in data["parts"] if p["part"] == "text"),
        None if message is None else len(message.tool_calls or ()),
        len(record["anomalies"]),
        record["error"],
        # the message's JSON as UTF-8 bytes, which pyarrow reads as a string column
        None if record["message"] is None else json_line(record["message"])[:-1],
    )


def _count(usage: Any, name: str) -> int | None:
    value = usage.get(name) if isinstance(usage, dict) else None
    return value if type(value) is int else None


def _table(rows: Sequence[tuple[Any, ...]], pa: Any) -> Any:
    """A table of ``rows`` (tuples in :data:`COLUMNS` order), built a column at a time."""
    schema = _schema(pa)
    columns = list(zip(*rows)) if rows else [()] * len(COLUMNS)
    arrays = [
        pa.array(column, type=field.type) for column, field in zip(columns, schema, strict=True)
    ]
    return pa.Table.from_arrays(arrays, schema=schema)


def to_arrow(results: Iterable[StreamResult], to: Provider | None = None) -> Any:
    """A ``pyarrow.Table``, one row per result: the typed columns of :data:`COLUMNS` (usage
    counts of choice 0, its text and number of tool calls) and ``message``, the record's
    message as JSON text. Needs pyarrow (``pip install 'fastmerge[parquet]'``)."""
    pa = _pyarrow()
    return _table(list(_rows(_as_written(results, to, True))), pa)


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


def _columns_table(count: int, columns: tuple[tuple[Any, ...], ...], pa: Any) -> Any:
    """A table of the Rust core's Arrow columns (``BatchCore.take_rows``): each column's
    buffers wrapped, not read."""
    schema = _schema(pa)
    arrays = []
    for field, (nulls, validity, *data) in zip(schema, columns, strict=True):
        buffers = [None if validity is None else pa.py_buffer(validity)]
        buffers += [pa.py_buffer(b) for b in data]
        arrays.append(pa.Array.from_buffers(field.type, count, buffers, null_count=nulls))
    return pa.Table.from_arrays(arrays, schema=schema)


def _write_group(writer: Any, tables: list[Any], pa: Any) -> int:
    """``tables`` written as one row group; their rows."""
    table = pa.concat_tables(tables)
    writer.write_table(table, row_group_size=max(1, table.num_rows))
    return int(table.num_rows)


#: The columns whose Parquet pages keep min/max statistics and try dictionary encoding: the
#: short typed ones. ``text`` and ``message`` are long and nearly all distinct, so their
#: statistics and dictionaries would cost a pass over every byte and help no reader.
_INDEXED = tuple(name for name, _ in COLUMNS if name not in ("text", "message"))


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
            pieces = _as_written(results, to, True)
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

    def __init__(self, path: str | os.PathLike[str], *, rows_per_group: int = 10_000) -> None:
        self._pa = pa = _pyarrow()
        self.rows_per_group = max(1, rows_per_group)
        indexed = list(_INDEXED)
        self._writer = pa.parquet.ParquetWriter(
            os.fspath(path), _schema(pa), use_dictionary=indexed, write_statistics=indexed
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
            self._parts.append(_table(self._rows, self._pa))
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
                    self._made.append(_table([], self._pa))
                if self._made:
                    self.count += _write_group(self._writer, self._made, self._pa)
                    self._made = []
        finally:
            self._pool.shutdown()
            self._writer.close()
