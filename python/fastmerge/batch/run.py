"""A batch run: :func:`merge_logs` starts the backend's ``BatchCore`` on the inputs and
:class:`Batch` hands out its streams as they end (results, records as written, or Parquet
rows), with the counts, the bad lines and the progress."""

from __future__ import annotations

import os
from typing import IO, TYPE_CHECKING, Any, Callable, Iterable, Iterator, Literal

from .. import _backend, _remote
from .. import errors as _errors
from .._paths import expand_paths
from .._types import Provider
from . import arrow
from .options import ERROR_MODES, BatchOptions, OptionValues
from .results import Rows, StreamResult, Written, written
from .schema import STATUSES

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .._pure.batch import BatchCore as _Core
    from ..messages import AssistantMessage
else:
    _Core = _backend.backend_of(__name__)[1].BatchCore
    AssistantMessage = _backend.messages(_backend.backend_of(__name__)[0]).AssistantMessage

__all__ = ["Batch", "as_written", "merge_logs"]


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
            found = self._written_item(item, to, row)
            if found is not None:
                return found

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
            written_ = written(result, to, row)
            if written_.status != result.status:
                # a message `to` cannot hold is an error record: counted as written
                self.counts[result.status] -= 1
                self.counts[written_.status] += 1
            return written_
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
            found = self._written_item(item, None, True)
            if found is not None:
                return found

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
        pa = arrow.pyarrow()
        count, columns = self._core.take_rows()
        return arrow.columns_table(count, columns, pa)

    def written(self, to: Provider | None = None, row: bool = False) -> Iterator[Written]:
        """Every remaining result as written (see :meth:`poll_written`), as streams end."""
        for found in self.records(to, row):
            assert found is not None
            yield found

    def records(
        self, to: Provider | None = None, row: bool = False, timeout: float | None = None
    ) -> Iterator[Written | None]:
        """Every remaining result as written (see :meth:`poll_written`), as streams end; with
        a ``timeout``, None each time it passed without one."""
        while True:
            try:
                found = self.poll_written(timeout, to, row)
            except StopIteration:
                return
            yield found

    @property
    def _writes(self) -> bool:
        """Whether the core writes records itself (``BatchCore.next``'s ``record``)."""
        return type(self._core) is _Core and _Core.WRITES_RECORDS

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


def as_written(
    results: Iterable[StreamResult], to: Provider | None, row: bool
) -> Iterator[Written]:
    """``results`` as written: a :class:`Batch`'s by :meth:`Batch.written` (its core
    serializes them), other iterables' here."""
    if isinstance(results, Batch):
        return results.written(to, row)
    return (written(result, to, row) for result in results)


def merge_logs(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    options: BatchOptions | None = None,
    *,
    errors: Literal["raise", "skip", "collect"] = "raise",
    errors_file: IO[str] | None = None,
    storage_options: dict[str, Any] | None = None,
    **option_values: Unpack[OptionValues],
) -> Batch:
    """Merge the streams logged in ``paths`` (see :mod:`fastmerge.batch`): a :class:`Batch`
    yielding one :class:`StreamResult` per stream as streams end.

    ``options`` (:class:`BatchOptions`), or its fields as keywords (``group_by=``,
    ``event=``, ``order_by=``, ``provider=``, ``strict=``, ``signature_merge=``, ``usage=``,
    ``jobs=``, ``max_open_streams=``; with ``options``, they replace its values): ``jobs``
    threads read (0: all cores; at most 4096; the twin always uses one);
    ``max_open_streams`` bounds the streams open at once (0: no bound; more is a
    ``BatchError`` naming the line). ``provider``, ``strict``, ``signature_merge`` and
    ``usage`` are :class:`fastmerge.Aggregator`'s.
    ``storage_options`` go to fsspec for the URLs among ``paths``.
    """
    options = BatchOptions(**option_values) if options is None else options.but(**option_values)
    if errors not in ERROR_MODES:
        raise _errors.invalid_option("errors", errors, ERROR_MODES)
    if errors_file is not None and errors != "collect":
        raise _errors.batch_option("errors_file needs errors='collect'")
    skipped: list[str] = []
    inputs = expand_paths(paths, skipped, storage_options)

    def core(files: list[str]) -> Any:
        return _Core(files, **options.core_arguments())

    if any(_remote.is_url(path) for path in inputs):
        run = Batch(_remote.RemoteCore(core, inputs, storage_options), errors, errors_file)
    else:
        run = Batch(core(inputs), errors, errors_file)
    run.skipped = skipped
    return run
