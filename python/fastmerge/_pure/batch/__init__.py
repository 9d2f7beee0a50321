"""The twin of the engine's batch reader (``src/engine/batch/``): logged streams in, one item
per stream out. Single-threaded and readable: it is the specification of ``BatchCore``.

Inputs are files (``"-"`` is stdin), read as bytes; a gzip, zstd, bzip2 or xz file is told by
its magic bytes, never by its name, and concatenated members or frames are read whole.

Two shapes of input:

- **one stream per file** (``group_by="file"``, or ``"auto"`` without ``event``): each file is
  fed whole to one aggregator, exactly as ``aggregate(file_bytes)`` reads it (SSE, JSON lines,
  a JSON array): the corpus shape;
- **records** (``group_by=PATH``): one JSON record per non-blank line; the stream key is at
  ``group_by`` in the record, the event at ``event`` (None: the record is the event). A
  stream's result is what ``aggregate`` gives for its events (spec §6), at both ends:

  - an event that starts another response (the aggregator's ``new_response`` rule, asked
    before the event is read) starts a new stream with the same key, with or without
    ``order_by``; the stream before it is returned whole, without the anomaly;
  - an end event (the adapter's ``ends_stream``, or ``[DONE]``; without ``order_by``) is a
    hint, not a wall: the stream stops being open (``max_open_streams`` counts open streams)
    and waits at its last record; a later record of its key joins it unless it starts
    another response or comes :data:`PARK_LINES` lines or more after that record (counted
    through the inputs: each file's ``\n``s plus one), which returns it first. The end of
    the input returns every waiting stream.

  With ``order_by`` a stream's events are buffered and stably sorted by that value first.
  A number beyond a float's range is read only where the record is read: as the key or the
  ``order_by`` value it makes a bad line, inside the event it makes the event unreadable (as
  ``aggregate`` reads its text); elsewhere in the record it is not read.

Items (:meth:`BatchCore.next`), in input order of their positions:

- ``("stream", key, provider, choices, error)``: ``choices`` is what ``AggregatorCore.finish()``
  returns for the stream's events, or None with ``error``, the message of the ``MergeError``
  the aggregator raised (no readable event, strict mode, ...);
- ``("bad", source, line, reason)``: a record that belongs to no stream (``line`` is 1-based,
  in the decompressed text).

With ``positions=True`` every item ends with its place ``(end, file, line)``, its position:
``end`` 0 with the record (``file`` its input's index in ``paths``, ``line`` 1-based) that is
the bad line, that started another response after an open stream, or that is the last record
of a stream that ended; for a stream still open at the end of the input, its first record,
``end`` 1 (the streams of one key's sorted events all there). A file read as one stream:
``(0, file, 0)``.

An input that cannot be read on (a compressed file cut or corrupt, a line over the limit) ends
the input there (E106): every stream read is returned as at the end of the input (the waiting
ones at their last records, the open ones at their first, each what ``aggregate`` gives for the
events read: the whole lines decompressed before the damage; a file read as one stream, the
bytes decompressed before it), then the error.
``too_many_streams`` is raised where the stream that is one too many opens, after every item
placed before that record (a waiting stream there is decided by the records after it, as the
Rust engine's shards read on until its collector gets there).

:func:`split_file` cuts one input's records into buckets by their stream key (the split step of
``fastmerge.dask``), reading lines and records with the rules above.

The package mirrors ``src/engine/batch/``: :mod:`.input` (``input.rs``), :mod:`.path`
(``path.rs``), :mod:`.record` (``record.rs``), :mod:`.bucket` (``bucket.rs``), and this module
(``mod.rs``: ``BatchCore``, the streams, their ends; and ``split_file``, the engine's
``split.rs``, which runs a ``BatchCore`` here and so stays beside it). The engine's
``reader.rs`` and ``shard.rs`` (the reader thread and the shard threads) have no counterpart:
the twin is single-threaded, and its order is the one the engine's threads reproduce.
"""

from __future__ import annotations

import errno
import heapq
import itertools
import json
import os
import sys
import time
from array import array
from typing import IO, Any, Callable, Iterator

from ... import errors
from .. import events
from ..aggregate import AggregatorCore
from .bucket import Sorter
from .directory import DirectoryWriter
from .input import _BLANK, _DECODERS, _MAGIC, _decompress, _Stored, _without_bom
from .path import _MISSING, parse_path, resolve
from .record import _holds_too_large, _kind, _number, _too_large, key_text, parse_record

__all__ = ["BatchCore", "DirectoryWriter", "split_file"]

#: Bytes read from an input at a time.
CHUNK = 1 << 16
#: Lines of input after an ended stream's last record within which a record of its key that
#: belongs to the same response still joins it; past them the stream is returned (memory holds
#: the ended streams of this many lines at most). The engine's ``PARK_LINES``.
PARK_LINES = 1 << 16
#: Records read between two looks at ``next``'s deadline.
TICK = 256


class _Unreadable:
    """An event that holds a number beyond a float's range: its JSON text (with
    ``Infinity``), which the aggregator cannot read, as it cannot read the logged text."""

    __slots__ = ("text",)

    def __init__(self, event: Any) -> None:
        self.text = _text_of(event)


def _text_of(value: Any) -> str:
    """``value``'s JSON text; read with every member (:class:`events.Members`), a repeated
    key's every value written, as the log held them."""
    if isinstance(value, events.Members):
        return "{" + ",".join(f"{json.dumps(k)}:{_text_of(v)}" for k, v in value) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_text_of(item) for item in value) + "]"
    return json.dumps(value)


class _Stream:
    """A stream being read: its aggregator, the first error it raised, (with ``order_by``)
    its events waiting to be sorted, and once it ended, its last record."""

    __slots__ = ("key", "core", "error", "waiting", "first", "last", "at")

    def __init__(self, key: str, core: AggregatorCore, first: tuple[int, int]) -> None:
        self.key = key
        self.core = core
        #: where its first record is: (input index, line)
        self.first = first
        self.error: str | None = None
        self.waiting: list[tuple[Any, Any]] = []  # (order_by value, event)
        #: once it ended: its last record's place (0, input index, line) and input-wide line
        self.last: tuple[int, int, int] = (0, 0, 0)
        self.at = 0


class BatchCore:
    """Logged streams -> one item per stream (``fastmerge.batch.merge_logs``'s engine); see
    the module docstring. ``jobs`` is accepted and ignored: the twin reads on one thread."""

    #: The twin hands out streams; records are written by ``fastmerge.batch`` (the Rust core
    #: writes them itself: ``next(timeout, "jsonl"|"row")``).
    WRITES_RECORDS = False

    def __init__(
        self,
        paths: list[str],
        group_by: str = "auto",
        event: str | None = None,
        order_by: str | None = None,
        provider: str = "auto",
        strict: bool = False,
        signature_merge: str = "replace",
        usage: str = "merge",
        jobs: int = 0,
        max_open_streams: int = 0,
        positions: bool = False,
        bucket: tuple[int, int] | None = None,
    ) -> None:
        if not isinstance(paths, list) or not all(type(p) is str for p in paths):
            raise errors.wrong_type("paths", "a list of str", paths)
        for path in paths:
            _check_path_text(path)
        for name, value in (("jobs", jobs), ("max_open_streams", max_open_streams)):
            if type(value) is not int:
                raise errors.wrong_type(name, "an int", value)
            if value < 0:
                raise errors.batch_option(f"{name} must be 0 or more, not {value}")
            if name == "jobs" and value > MAX_JOBS:  # the engine's threads (the twin has none)
                limit = f"at most {MAX_JOBS}, not {min(value, _COUNT_MAX)}"
                raise errors.batch_option(f"jobs must be {limit}")
        if type(positions) is not bool:
            raise errors.wrong_type("positions", "a bool", positions)
        if bucket is not None:
            bucket = _bucket_arg(bucket)
        self._positions = positions
        try:
            # the aggregator's own checks of its options, as batch errors
            AggregatorCore(provider, strict, signature_merge, usage)
        except ValueError as exc:
            raise errors.batch_option(str(exc)) from None
        self._options = (provider, strict, signature_merge, usage)
        # every argument's type before any path's syntax (as the binding converts them)
        texts: tuple[tuple[str, object], ...] = (
            ("group_by", group_by),
            ("event", event),
            ("order_by", order_by),
        )
        for name, text in texts:
            if type(text) is not str and (text is not None or name == "group_by"):
                raise errors.wrong_type(name, "a str", text)
        self._max_line = max_line_bytes()
        self._event = None if event is None else parse_path("event", event)
        self._order = None if order_by is None else parse_path("order_by", order_by)
        if group_by in ("auto", "file") and event is not None:
            raise errors.batch_option(
                "wrapper records need a stream key: pass group_by (e.g. group_by='stream_id')"
            )
        self._key: list[str] | None = None
        if group_by not in ("auto", "file"):
            self._key = parse_path("group_by", group_by)
        elif order_by is not None:
            raise errors.batch_option(
                "order_by sorts the records of a stream: pass group_by (e.g. "
                "group_by='stream_id'); a file read as one stream is read in its order"
            )
        self._sorter: Sorter | None = None
        if bucket is not None:
            self._bucket, buckets = bucket
            if self._key is None:
                raise errors.batch_option(
                    "bucket reads records by their stream key: pass group_by (e.g. stream_id)"
                )
            if buckets == 0:
                raise errors.batch_option("buckets must be 1 or more, not 0")
            if self._bucket >= buckets:
                raise errors.batch_option(
                    f"bucket must be below buckets ({buckets}), not {self._bucket}"
                )
            self._sorter = Sorter(self._key, buckets, self._record)
        self._group_by = group_by
        self._names = (event, order_by)  # the paths as given, for bad-line reasons
        self._paths = list(paths)
        self._limit = max_open_streams
        total = 0
        for path in self._paths:
            if path == "-":
                total = -1
                continue
            try:
                size = os.stat(path).st_size
            except OSError as exc:
                raise errors.file_error(path, exc.errno or 0) from None
            if os.path.isdir(path):
                raise errors.file_error(path, errno.EISDIR)
            if total >= 0:
                total += size
        self._total = max(total, 0)
        self._read = 0
        self._done = 0
        self._bad = 0
        self._closed = False
        self._file: IO[bytes] | None = None
        self._lines_read = 0
        self._items: Iterator[tuple[Any, ...] | None] = (
            self._files() if self._key is None else self._records()
        )

    # -- the interface

    def next(self, timeout: float | None = None) -> tuple[Any, ...] | None:
        """The next item, or None when ``timeout`` seconds passed without one; raises
        ``StopIteration`` when every item was returned (and after an error or :meth:`close`)."""
        if self._closed:
            raise StopIteration
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                item = next(self._items)
            except BaseException:
                self.close()  # the input is exhausted, or broken where it raised
                raise
            if item is not None:
                if item[0] == "stream":
                    self._done += 1
                else:
                    self._bad += 1
                return item if self._positions else item[:-1]
            if deadline is not None and time.monotonic() >= deadline:
                return None

    def progress(self) -> tuple[int, int, int, int]:
        """``(bytes_read, bytes_total, streams_done, bad_lines)``: input bytes as stored
        (compressed bytes of a compressed file); ``bytes_total`` is 0 when stdin is an input.
        The counts are of the items returned so far."""
        return (self._read, self._total, self._done, self._bad)

    def close(self) -> None:
        """Stop early: the open file is closed and :meth:`next` raises ``StopIteration``."""
        self._closed = True
        if self._file is not None and self._file is not sys.stdin.buffer:
            self._file.close()
        self._file = None

    # -- reading

    def _open(self, path: str) -> IO[bytes]:
        if path == "-":
            return sys.stdin.buffer
        try:
            return open(path, "rb")
        except OSError as exc:
            raise errors.file_error(path, exc.errno or 0) from None

    def _raw(self, file: IO[bytes], path: str) -> Iterator[bytes]:
        """The stored bytes of one input, counted as read."""
        while True:
            try:
                chunk = file.read(CHUNK)
            except OSError as exc:
                raise errors.file_error(path, exc.errno or 0) from None
            if not chunk:
                return
            self._read += len(chunk)
            yield chunk

    def _decoded(self, path: str) -> Iterator[bytes]:
        """One input's bytes, decompressed when its first bytes are a compression format's
        magic; members and frames one after another are read whole."""
        self._file = self._open(path)
        try:
            stored = _Stored(self._raw(self._file, path))
            head = stored.peek(6)
            fmt = next((name for magic, name in _MAGIC if head.startswith(magic)), None)
            if fmt is None:
                yield from stored.rest()
                return
            new = _DECODERS[fmt]()
            if new is None:
                raise errors.batch_option(
                    f"{path}: zstd input needs the 'zstandard' package (pip install zstandard)"
                )
            yield from _decompress(path, fmt, new, stored)
        finally:
            if self._file is not None and self._file is not sys.stdin.buffer:
                self._file.close()
            self._file = None

    def _lines(self, path: str) -> Iterator[tuple[int, bytes]]:
        """The non-blank lines of one input with their 1-based numbers (a byte order mark
        opening the input is not part of its first line: the three bytes, never fewer); once
        read whole, the input's ``\n``s plus one are ``_lines_read``. A line cut by a damaged
        input is not read. Each byte is copied a bounded number of times, however long the
        line (its pieces are joined once, when its end comes)."""
        number = 0
        limit = self._max_line
        pending: list[bytes] = []  # the start of the line not ended yet, in pieces
        held = 0  # its bytes
        for chunk in _without_bom(self._decoded(path)):
            end = chunk.rfind(b"\n")
            if end < 0:
                pending.append(chunk)
                held += len(chunk)
                if held - chunk.endswith(b"\r") > limit:
                    # a line past the limit ends the input; it is never held whole
                    raise errors.long_line(path, number + 1, limit)
                continue
            if pending:
                pending.append(chunk[: end + 1])
                data = b"".join(pending)
            else:
                data = chunk[: end + 1]
            pending = [chunk[end + 1 :]] if end + 1 < len(chunk) else []
            held = len(pending[0]) if pending else 0
            lines = data.split(b"\n")
            lines.pop()  # empty: the data ends with a line end
            for line in lines:
                number += 1
                if len(line) - line.endswith(b"\r") > limit:  # without the \r of a \r\n
                    raise errors.long_line(path, number, limit)
                if line.strip(_BLANK):
                    yield number, line
            if pending and held - pending[-1].endswith(b"\r") > limit:
                raise errors.long_line(path, number + 1, limit)
        self._lines_read = number + 1
        rest = b"".join(pending)
        if rest.strip(_BLANK):
            yield number + 1, rest

    # -- one stream per file

    # The items of the generators below end with their place (see the module docstring).

    def _files(self) -> Iterator[tuple[Any, ...] | None]:
        for file, path in enumerate(self._paths):
            stream = _Stream(path, AggregatorCore(*self._options), (file, 0))
            fed = False
            try:
                for chunk in self._decoded(path):
                    fed = True
                    if stream.error is None:
                        self._guard(stream, stream.core.feed, chunk)
                    yield None
            except errors.BatchError:
                # damage ends the input (E106): the stream of the bytes decoded before it (none
                # make no stream), then the error
                if fed:
                    yield (*self._end(stream), (0, file, 0))
                raise
            yield (*self._end(stream), (0, file, 0))

    # -- records

    def _records(self) -> Iterator[tuple[Any, ...] | None]:
        assert self._key is not None
        open_: dict[str, _Stream] = {}  # open streams, in the order of their first records
        parked: dict[str, _Stream] = {}  # ended streams, in the order of their last records
        # items decided, by position (ended streams placed before them may still come)
        ready: list[tuple[tuple[int, int, int], int, tuple[Any, ...]]] = []
        serial = itertools.count()
        # too_many_streams met at a place: raised once every item before it is decided
        raising: tuple[tuple[int, int, int], errors.BatchError] | None = None

        def put(item: tuple[Any, ...], place: tuple[int, int, int]) -> None:
            heapq.heappush(ready, (place, next(serial), (*item, place)))

        def unpark(key: str) -> None:
            stream = parked.pop(key)
            for item in self._finish(stream):
                put(item, stream.last)

        def due() -> Iterator[tuple[Any, ...]]:
            """The items before the first ended stream (before the error that is waiting)."""
            bound = next(iter(parked.values())).last if parked else None
            if raising is not None and (bound is None or raising[0] < bound):
                bound = raising[0]
            while ready and (bound is None or ready[0][0] < bound):
                yield heapq.heappop(ready)[2]

        def ripe() -> bool:
            """Whether the waiting error's turn came: no ended stream placed before it."""
            assert raising is not None
            return not parked or next(iter(parked.values())).last > raising[0]

        sorter = self._sorter
        count = 0
        base = 0  # the input-wide number of the current input's line 0
        try:
            for file, path in enumerate(self._paths):
                for line, data in self._lines(path):
                    if sorter is not None and sorter.bucket(data) != self._bucket:
                        continue  # another bucket's: as if blank
                    count += 1
                    if count % TICK == 0:
                        yield None
                    at = base + line
                    while parked:
                        first = next(iter(parked.values()))
                        if at - first.at < PARK_LINES:
                            break
                        unpark(first.key)
                    place = (0, file, line)
                    found = self._record(data)
                    if isinstance(found, str):
                        put(("bad", path, line, found), place)
                    else:
                        key, event, order = found
                        stream = parked.get(key)
                        if stream is not None:
                            if _done(event):
                                continue  # the sentinel after a stream that ended: nothing
                            if at - stream.at >= PARK_LINES or self._opens(stream, event, True):
                                unpark(key)
                        else:
                            stream = open_.get(key)
                            if (
                                stream is not None
                                and self._order is None
                                and self._opens(stream, event)
                            ):
                                # another response starts here: the stream ends before it
                                del open_[key]
                                for item in self._finish(stream):
                                    put(item, place)
                        stream = open_.get(key) or parked.get(key)
                        if stream is None:
                            if _done(event):
                                continue  # the sentinel after a stream that ended: nothing
                            if raising is None and self._limit and len(open_) >= self._limit:
                                raising = (place, errors.too_many_streams(self._limit, path, line))
                            core = AggregatorCore(*self._options)
                            stream = open_[key] = _Stream(key, core, (file, line))
                        if self._order is not None:
                            stream.waiting.append((order, event))
                        elif key in parked:
                            # a record that joined an ended stream: the stream waits here now
                            self._add(stream, event)
                            del parked[key]
                            stream.last, stream.at = place, at
                            parked[key] = stream
                        elif self._add(stream, event):
                            del open_[key]
                            stream.last, stream.at = place, at
                            parked[key] = stream
                    yield from due()
                    if raising is not None and ripe():
                        raise raising[1]
                base += self._lines_read
        except errors.BatchError as exc:
            if raising is not None and exc is raising[1]:
                raise
            # an input that cannot be read ends the input there (E106): every stream read is
            # returned as at the end of the input, ended and open ones, then the error (or
            # the one waiting before them, which returns only the items placed before it)
            for key in list(parked):
                unpark(key)
            yield from due()
            if raising is not None:
                raise raising[1] from None
            for stream in open_.values():
                for item in self._finish(stream):
                    yield (*item, (1, *stream.first))
            raise exc from None
        for key in list(parked):
            unpark(key)
        yield from due()
        if raising is not None:
            raise raising[1]
        for stream in open_.values():
            for item in self._finish(stream):
                yield (*item, (1, *stream.first))

    def _record(self, data: bytes) -> tuple[str, Any, Any] | str:
        """A record line's (key, event, order_by value), or the reason it is a bad line."""
        try:
            record, huge, every = parse_record(data)
        except events.EventDataError as exc:
            return exc.detail
        return self._found(record, huge, every)

    def _found(
        self, record: dict[str, Any], huge: bool = False, every: Any = None
    ) -> tuple[str, Any, Any] | str:
        """A record's (key, event, order_by value), or the reason it belongs to no stream;
        ``huge``: whether the record holds a number beyond a float's range."""
        assert self._key is not None
        key = resolve(record, self._key)
        if key is _MISSING or key is None:
            return f"no stream key at {self._group_by}"
        if not isinstance(key, str) and not _number(key):
            return f"the stream key at {self._group_by} is {_kind(key)}, not a string or a number"
        if huge and _too_large(key):
            return f"the stream key at {self._group_by} is a number too large for a float"
        event: Any = record
        if self._event is not None:
            event = resolve(record, self._event)
            if event is _MISSING or event is None:
                return f"no event at {self._names[0]}"
        order = None
        if self._order is not None:
            order = resolve(record, self._order)
            if order is _MISSING or order is None:
                return f"no order_by value at {self._names[1]}"
            if not isinstance(order, str) and not _number(order):
                return (
                    f"the order_by value at {self._names[1]} is {_kind(order)}, "
                    "not a number or a string"
                )
            if huge and _too_large(order):
                return f"the order_by value at {self._names[1]} is a number too large for a float"
        if huge:
            # the event's text as the aggregator reads it: with a repeated key, every member
            # (a replaced one is read too)
            text = record if every is None else every
            text = text if self._event is None else resolve(text, self._event)
            if _holds_too_large(text):
                event = _Unreadable(text)
        return key_text(key), event, order

    # -- streams

    @staticmethod
    def _opens(stream: _Stream, event: Any, ended: bool = False) -> bool:
        """Whether the event starts another response than the one the stream's aggregator
        read (spec §6): the aggregator's own ``new_response`` rule, asked before the event
        is read; after the stream's end event (``ended``) also an event its adapter does not
        know (another wire format's: no part of the response that ended). A string event is
        read as one object's JSON (SSE lines or an array never start one); an event that
        cannot be read never does."""
        core = stream.core
        if core.adapter is None or core.new_response_at is not None:
            return False
        if isinstance(event, str):
            try:
                event = events.parse(event.encode())
            except events.EventDataError:
                return False
        if not isinstance(event, dict):
            return False
        if not core.adapter.knows(event):
            return ended
        return core.adapter.new_response(event) is not None

    def _add(self, stream: _Stream, event: Any) -> bool:
        """Fold one event into its stream; whether it is the stream's last (``ends_stream``
        of the stream's adapter). An event that is a JSON string is the event's text (a
        logged SSE ``data:`` payload); ``[DONE]`` is the OpenAI sentinel: it ends the stream
        and is not an event, as in an SSE stream."""
        if _done(event):
            return True
        if isinstance(event, _Unreadable):
            if stream.error is None:
                self._guard(stream, stream.core.add_text, event.text)
            return False
        if isinstance(event, str):
            if stream.error is None:
                self._guard(stream, stream.core.add_text, event)
            try:
                event = events.parse(event.encode())
            except events.EventDataError:
                return False
        elif stream.error is None:
            # an object is the event; a number, boolean or array goes to the aggregator too,
            # which records it as an unreadable event
            self._guard(stream, stream.core.add, event)
        adapter = stream.core.adapter
        return adapter is not None and isinstance(event, dict) and adapter.ends_stream(event)

    @staticmethod
    def _guard(stream: _Stream, call: Callable[[Any], None], data: Any) -> None:
        """Call into the stream's aggregator; the first error it raises is the stream's
        (the aggregator is then closed: the stream's later events are not read)."""
        try:
            call(data)
        except errors.MergeError as exc:
            stream.error = str(exc)

    def _finish(self, stream: _Stream) -> list[tuple[Any, ...]]:
        """The stream's items: with ``order_by`` its waiting events sorted and folded, a new
        stream with the same key at each event that starts another response; then each
        aggregator's end of stream."""
        items = []
        if stream.waiting:
            waiting, stream.waiting = stream.waiting, []
            numbers = [_number(order) for order, _ in waiting]
            if any(numbers) and not all(numbers):
                stream.error = f"order_by values of stream {stream.key} mix numbers and strings"
                return [("stream", stream.key, None, None, stream.error)]
            waiting.sort(key=lambda pair: pair[0])  # stable: ties keep input order
            for _, event in waiting:
                if self._opens(stream, event):
                    items.append(self._end(stream))
                    stream = _Stream(stream.key, AggregatorCore(*self._options), stream.first)
                self._add(stream, event)
        items.append(self._end(stream))
        return items

    @staticmethod
    def _end(stream: _Stream) -> tuple[Any, ...]:
        """One stream's item: its aggregator's end of stream, or the error it raised."""
        choices = None
        if stream.error is None:
            try:
                choices = stream.core.finish()
            except errors.MergeError as exc:
                stream.error = str(exc)
        return ("stream", stream.key, stream.core.provider, choices, stream.error)


def _bucket_arg(value: object) -> tuple[int, int]:
    """``BatchCore``'s ``bucket``: a tuple ``(bucket, buckets)`` of two ints, 0 or more;
    beyond any count, as large as one can be (as the engine holds it)."""
    if type(value) is not tuple or len(value) != 2 or any(type(v) is not int for v in value):
        raise errors.wrong_type("bucket", "a tuple (bucket, buckets) of int", value)
    for name, count in zip(("bucket", "buckets"), value):
        if count < 0:
            raise errors.batch_option(f"{name} must be 0 or more, not {count}")
    return (min(value[0], _COUNT_MAX), min(value[1], _COUNT_MAX))


def _check_path_text(path: str) -> None:
    """A name the file system holds as bytes that are not UTF-8 comes as lone surrogates,
    which the engine cannot name its items and errors by: refused by name, on both backends
    (the twin could read it, and then name it as the engine cannot)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise errors.batch_option(
            f"{path!r}: the file name is not UTF-8: rename the file (the batch engine names "
            "each input by its text)"
        ) from None


#: The largest count the engine holds (a ``usize``).
_COUNT_MAX = 2**64 - 1
#: The most worker threads the engine starts (``jobs``): each is a thread and a queue, and
#: every block of the input goes to each one, so far more than any machine's cores only
#: stalls the run or exhausts the system's threads.
MAX_JOBS = 4096
#: The longest record line read (its bytes, without the line end), unless
#: :data:`MAX_LINE_VARIABLE` says another: a longer one ends its input with an error, so that
#: memory holds no more than it (1 GiB, far past any record a provider's stream makes).
MAX_LINE_BYTES = 1 << 30
MAX_LINE_VARIABLE = "FASTMERGE_MAX_LINE_BYTES"


def max_line_bytes() -> int:
    """The longest record line read: :data:`MAX_LINE_VARIABLE`'s value (ASCII digits, 1 or
    more, at most ``2**64 - 1``), or :data:`MAX_LINE_BYTES` when it is unset."""
    value = os.environ.get(MAX_LINE_VARIABLE)
    if value is None:
        return MAX_LINE_BYTES
    if value.isascii() and value.isdigit() and 0 < int(value) <= _COUNT_MAX:
        return int(value)
    raise errors.batch_option(f"{MAX_LINE_VARIABLE} must be a whole number of bytes, 1 or more")


def _done(event: Any) -> bool:
    """Whether a record's event is OpenAI's ``[DONE]`` sentinel: a string that is ``[DONE]``
    between ASCII blanks."""
    return isinstance(event, str) and event.strip(" \t\r\n") == "[DONE]"


def split_file(
    path: str,
    group_by: str,
    event: str | None = None,
    order_by: str | None = None,
    buckets: int = 1,
) -> tuple[int, list[tuple[int, bytes, array[int]]]]:
    """One input's lines (its ``\\n``s plus one, as the batch counts them between records) and
    its records cut into ``buckets`` buckets by their stream key (the split step of
    ``fastmerge.dask``): per bucket that has any, in bucket order, ``(bucket, data, lines)`` —
    the input's text from its first line to the bucket's last record, the records at their
    lines and every other line blank (written at the input's place, the records keep their
    line numbers), and their 1-based line numbers (``array('Q')``). Lines are read as
    :class:`BatchCore` reads them (options checked as it checks them), each in the bucket
    :class:`~.bucket.Sorter` gives it (``zlib.crc32`` of the key's UTF-8 text modulo
    ``buckets``): the bucket's core reads the record."""
    if type(path) is not str:
        raise errors.wrong_type("path", "a str", path)
    _check_path_text(path)
    if type(buckets) is not int:
        raise errors.wrong_type("buckets", "an int", buckets)
    if buckets < 1:
        raise errors.batch_option(f"buckets must be 1 or more, not {buckets}")
    core = BatchCore([path], group_by, event, order_by)
    if core._key is None:
        raise errors.batch_option(
            "split_file cuts records by their stream key: pass group_by (e.g. stream_id)"
        )
    sorter = Sorter(core._key, buckets, core._record)
    # per bucket: its text's pieces and its records' line numbers
    parts: dict[int, tuple[list[bytes], array[int]]] = {}
    for line, data in core._lines(path):
        pieces, numbers = parts.setdefault(sorter.bucket(data), ([], array("Q")))
        # the lines since the record before (none: since the input's first)
        pieces.append(b"\n" * (line - (numbers[-1] if numbers else 1)))
        pieces.append(data)
        numbers.append(line)
    return core._lines_read, [
        (bucket, b"".join(pieces), numbers) for bucket, (pieces, numbers) in sorted(parts.items())
    ]
