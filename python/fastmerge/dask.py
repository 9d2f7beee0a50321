"""Batch merging on a Dask cluster (the ``fastmerge[dask]`` extra): :func:`merge_logs` runs
the job of :func:`fastmerge.batch.merge_logs` over many workers and gives the same results,
in the same order, byte for byte.

How it runs (one Dask task per step, every task a pure function of its inputs, so a worker
lost mid-job only costs its tasks being run again elsewhere):

1. **split**, one task per input file: the file's records are read (decompressed, numbered)
   and sent to a *bucket* by a hash of their stream key; a bucket's share of a file is one
   fragment, its raw lines as one ``bytes`` with their line numbers in an ``array`` (one
   pickled object per bucket and file, never one per record);
2. **shuffle** (``bag.groupby``, or ``foldby``: a two-phase combine) brings each bucket's
   fragments together; they are put in input order (file, then line);
3. **aggregate**, one task per bucket: the backend's ``BatchCore`` (Rust, GIL released) reads
   the bucket's records in input order, so a stream that crosses files (log rotation) is one
   stream, and ends, key reuse and ``order_by`` follow the batch rules exactly; each item is
   tagged with the input position where the single-machine batch decides it;
4. the items are put in that order on the client and read by :class:`fastmerge.batch.Batch`
   (errors modes, counts, records): the same code as one machine.

Positions come from the core itself: a marker line (``0``, a bad line the core reports where
it stands) follows every record in a bucket's input, so the bad lines before a stream's item
say which record decided it.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import tempfile
import time
import zlib
from array import array
from functools import partial
from itertools import repeat
from operator import itemgetter
from typing import IO, Any, Iterable, Iterator, Literal

import jiter

from . import _backend
from . import batch as _batch
from . import errors as _errors
from ._pure import batch as _spec
from ._types import Provider, SignatureMerge, UsageMerge

__all__ = ["DaskBatch", "client", "merge_logs"]

#: The line that follows every record in a bucket's input: a bad line (a number is not a
#: record) the core reports in place, cheap to read.
MARKER = b"0"
#: ``shuffle=`` of :func:`merge_logs`.
SHUFFLES = ("groupby", "foldby")


def _dask_bag() -> Any:
    try:
        import dask.bag
    except ImportError:
        raise ImportError("fastmerge.dask needs Dask: pip install 'fastmerge[dask]'") from None
    return dask.bag


@contextlib.contextmanager
def client(address: str = "local", **cluster: Any) -> Iterator[Any]:
    """A ``distributed.Client`` of the scheduler at ``address``, or for ``"local"`` of a new
    ``LocalCluster(**cluster)`` on this machine (closed on exit); the default client of the
    ``with`` block, so :meth:`DaskBatch.compute` runs there."""
    _dask_bag()
    # imported by name: distributed has no type information
    distributed = importlib.import_module("distributed")

    with contextlib.ExitStack() as stack:
        if address == "local":
            cluster.setdefault("dashboard_address", ":0")  # never a port already taken
            target: Any = stack.enter_context(distributed.LocalCluster(**cluster))
        else:
            target = address
        yield stack.enter_context(distributed.Client(target))


class _Job:
    """What every task needs (picklable, small): the inputs and the batch options."""

    def __init__(
        self, paths: list[str], options: dict[str, Any], buckets: int, backend: str | None
    ) -> None:
        self.backend = backend
        #: A file the split tasks wait for before they start (tests kill a worker meanwhile).
        self.hold: str | None = None
        self.paths = paths
        self.options = options
        self.buckets = buckets
        self.key = (
            None
            if options["group_by"] in ("auto", "file")
            else _spec.parse_path("group_by", options["group_by"])
        )
        event = options["event"]
        self.event = None if event is None else _spec.parse_path("event", event)

    def batch(self) -> Any:
        """``fastmerge.batch`` on the job's backend (imported again in a worker process)."""
        return _batch if self.backend is None else _backend._copy("batch", self.backend)

    def core(self, paths: list[str], group_by: str | None = None) -> Any:
        """The backend's ``BatchCore`` on ``paths`` with the job's options."""
        o = self.options
        return self.batch()._Core(
            paths,
            o["group_by"] if group_by is None else group_by,
            o["event"],
            o["order_by"],
            o["provider"],
            o["strict"],
            o["signature_merge"],
            o["usage"],
            o["jobs"],
            0,
        )


class Fragment:
    """One bucket's records of one file, in file order: their lines joined by ``\\n``, their
    line numbers, and per record its key's index in ``keys`` (-1: no key found, the core
    says why) and whether its event is the ``[DONE]`` sentinel."""

    __slots__ = ("file", "data", "lines", "keys", "key_of", "done")

    def __init__(self, file: int) -> None:
        self.file = file
        self.data = bytearray()
        self.lines = array("Q")
        self.keys: list[str] = []
        self.key_of = array("l")
        self.done = array("b")

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.file, bytes(self.data), self.lines, self.keys, self.key_of, self.done)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.file, data, self.lines, self.keys, self.key_of, self.done = state
        self.data = bytearray(data)


def _record_key(job: _Job, line: bytes) -> tuple[str, bool] | None:
    """A record's stream key text and whether its event is ``[DONE]``, by the twin's record
    rules; None when no key is found (the line goes to bucket 0, whose core says why).
    Parsed with jiter, not the twin's stricter reader: this only routes a line to its bucket,
    and the bucket's core reads it again (a line the core finds bad is reported there)."""
    assert job.key is not None
    try:
        record = jiter.from_json(line)
    except ValueError:
        return None
    if not isinstance(record, dict):
        return None
    key = _spec.resolve(record, job.key)
    if isinstance(key, int) and not isinstance(key, bool) and not -(2**63) <= key < 2**63:
        key = float(key)  # as the cores read an int beyond 64 bits
    if key is _spec._MISSING or key is None or not (isinstance(key, str) or _spec._number(key)):
        return None
    event: Any = record
    if job.event is not None:
        event = _spec.resolve(record, job.event)
    return _spec.key_text(key), _spec._done(event)


def _split(job: _Job, file: int) -> list[tuple[int, Fragment]]:
    """Task 1: one file's records as one fragment per bucket."""
    while job.hold is not None and not os.path.exists(job.hold):
        time.sleep(0.05)
    path = job.paths[file]
    reader = _spec.BatchCore([path], "file")  # the twin reads lines as the cores do
    fragments: dict[int, Fragment] = {}
    index: dict[int, dict[str, int]] = {}
    for number, line in reader._lines(path):
        found = _record_key(job, line)
        # a line without a key goes to bucket 0, whose core words its reason
        bucket = 0 if found is None else zlib.crc32(found[0].encode()) % job.buckets
        fragment = fragments.get(bucket)
        if fragment is None:
            fragment = fragments[bucket] = Fragment(file)
            index[bucket] = {}
        if fragment.lines:
            fragment.data += b"\n"
        fragment.data += line
        fragment.lines.append(number)
        if found is None:
            fragment.key_of.append(-1)
            fragment.done.append(0)
        else:
            keys = index[bucket]
            at = keys.get(found[0])
            if at is None:
                at = keys[found[0]] = len(fragment.keys)
                fragment.keys.append(found[0])
            fragment.key_of.append(at)
            fragment.done.append(found[1])
    return sorted(fragments.items(), key=itemgetter(0))


def _aggregate(job: _Job, fragments: list[Fragment]) -> list[tuple[tuple[int, int, int], Any]]:
    """Task 3: a bucket's records, in input order, through the core; each item with the
    input position where one machine decides it (phase 0: the deciding record; phase 1,
    streams open at the end: their first record)."""
    fragments = sorted(fragments, key=lambda f: f.file)
    where: list[tuple[int, int]] = []  # record index -> (file, line)
    keys: list[str | None] = []
    done: list[int] = []
    with tempfile.NamedTemporaryFile("wb", suffix=".jsonl", delete=False) as tmp:
        # a marker first: a record never opens the file (a byte order mark there would go)
        tmp.write(MARKER + b"\n")
        for fragment in fragments:
            # every record followed by a marker (a record holds no newline)
            tmp.write(fragment.data.replace(b"\n", b"\n" + MARKER + b"\n") + b"\n" + MARKER + b"\n")
            where.extend(zip(repeat(fragment.file), fragment.lines))
            keys.extend(None if k < 0 else fragment.keys[k] for k in fragment.key_of)
            done.extend(fragment.done)
    out: list[tuple[tuple[int, int, int], Any]] = []
    try:
        core = job.core([tmp.name])
        markers = 0
        ended: dict[int, str] = {}  # record index -> key of the stream it ended
        bad: set[int] = set()
        last: list[Any] = []  # items of streams open at the end
        while True:
            try:
                item = core.next()
            except StopIteration:
                break
            if item[0] == "bad":
                if item[2] % 2:  # the marker lines are the odd ones
                    markers += 1
                    continue
                at = item[2] // 2 - 1
                bad.add(at)
                file, line = where[at]
                out.append(((0, file, line), ("bad", job.paths[file], line, item[3])))
            elif markers <= len(where):
                at = markers - 1
                ended[at] = item[1]
                out.append(((0, *where[at]), item))
            else:
                last.append(item)
        core.close()
    finally:
        os.unlink(tmp.name)
    if last:
        # the first record of each key's stream still open at the end: the first one after
        # its last end that opens a stream (not a bad line, not a lone [DONE])
        first: dict[str, int] = {}
        for at, key in enumerate(keys):
            if key is None or at in bad:
                continue
            if ended.get(at) == key:
                first.pop(key, None)
            elif key not in first and not done[at]:
                first[key] = at
        for item in last:
            out.append(((1, *where[first[item[1]]]), item))
    return out


def _whole_file(job: _Job, file: int) -> list[tuple[tuple[int, int, int], Any]]:
    """A file that is one stream (``group_by`` auto or file): its item, at its place."""
    core = job.core([job.paths[file]], "file")
    items = []
    while True:
        try:
            items.append(((0, file, 0), core.next()))
        except StopIteration:
            return items


class _Items:
    """Items already in order, as a ``BatchCore`` gives them (for :class:`batch.Batch`)."""

    def __init__(self, items: list[Any], total: int) -> None:
        self._items = iter(items)
        self._total = total
        self._done = 0
        self._bad = 0

    def next(self, timeout: float | None = None) -> Any:
        item = next(self._items)
        if item[0] == "stream":
            self._done += 1
        else:
            self._bad += 1
        return item

    def progress(self) -> tuple[int, int, int, int]:
        return (self._total, self._total, self._done, self._bad)

    def close(self) -> None:
        self._items = iter(())


class DaskBatch:
    """A batch job on Dask (:func:`merge_logs`): nothing runs until :meth:`compute`,
    :meth:`to_parquet` or iteration; :attr:`items` is the lazy Dask Bag of positioned items."""

    def __init__(
        self, job: _Job, items: Any, total: int, errors_mode: str, errors_file: IO[str] | None
    ) -> None:
        self._job = job
        #: A Dask Bag of ``(position, item)`` pairs (items as ``BatchCore.next`` gives them).
        self.items = items
        self._total = total
        self._mode = errors_mode
        self._errors_file = errors_file

    def compute(self, **kwargs: Any) -> _batch.Batch:
        """Run the job (``kwargs`` go to ``dask.compute``, e.g. ``scheduler=``): a
        :class:`fastmerge.batch.Batch` over the results in single-machine order, with the
        same errors mode (``bad_lines``, ``counts``)."""
        pairs = self.items.compute(**kwargs)
        pairs.sort(key=itemgetter(0))
        core = _Items([item for _, item in pairs], self._total)
        batch: Any = self._job.batch()
        result: _batch.Batch = batch.Batch(core, self._mode, self._errors_file)
        return result

    def __iter__(self) -> Iterator[_batch.StreamResult]:
        return iter(self.compute())

    def to_parquet(
        self,
        path: str | os.PathLike[str],
        to: Provider | None = None,
        *,
        rows_per_file: int = 100_000,
    ) -> int:
        """Write the results into the directory ``path`` as Parquet files of
        ``rows_per_file`` rows (``part-00000.parquet``, ... in result order); the rows written."""
        os.makedirs(path, exist_ok=True)
        results = iter(self.compute())
        count = part = 0
        while True:
            chunk = [r for _, r in zip(range(rows_per_file), results)]
            if not chunk and part:
                return count
            name = os.path.join(os.fspath(path), f"part-{part:05d}.parquet")
            count += _batch.to_parquet(chunk, name, to)
            part += 1
            if len(chunk) < rows_per_file:
                return count


def merge_logs(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    group_by: str = "auto",
    event: str | None = None,
    order_by: str | None = None,
    provider: Provider | Literal["auto"] = "auto",
    errors: Literal["raise", "skip", "collect"] = "raise",
    errors_file: IO[str] | None = None,
    strict: bool = False,
    signature_merge: SignatureMerge = "replace",
    usage: UsageMerge = "merge",
    buckets: int = 0,
    jobs: int = 1,
    shuffle: Literal["groupby", "foldby"] = "groupby",
    backend: str | None = None,
) -> DaskBatch:
    """:func:`fastmerge.batch.merge_logs` on Dask (the current client's cluster, or any Dask
    scheduler): the same results in the same order. The options are that function's (no
    ``max_open_streams``: streams are spread over workers); ``buckets`` is the number of
    aggregate tasks (0: as many as input files), ``jobs`` the core's threads in each task,
    ``shuffle`` how fragments meet (``"groupby"``: a shuffle; ``"foldby"``: combine per
    partition, then across); ``backend`` (``"rust"`` or ``"python"``; None: the selected one)
    the cores the tasks run. The paths must be readable from every worker."""
    bag = _dask_bag()
    if errors not in _batch.ERROR_MODES:
        raise _errors.invalid_option("errors", errors, _batch.ERROR_MODES)
    if errors_file is not None and errors != "collect":
        raise _errors.batch_option("errors_file needs errors='collect'")
    if shuffle not in SHUFFLES:
        raise _errors.invalid_option("shuffle", shuffle, SHUFFLES)
    expanded = _batch.expand_paths(paths)
    if "-" in expanded:
        raise _errors.batch_option("standard input cannot be read on a cluster: pass files")
    options = dict(
        group_by=group_by,
        event=event,
        order_by=order_by,
        provider=provider,
        strict=strict,
        signature_merge=signature_merge,
        usage=usage,
        jobs=jobs,
    )
    job = _Job(expanded, options, max(buckets or len(expanded), 1), backend)
    # the single-machine core checks the options and the paths, with its errors
    total = job.core(expanded).progress()[1]
    files = bag.from_sequence(range(len(expanded)), npartitions=max(len(expanded), 1))
    if job.key is None:
        items = files.map(partial(_whole_file, job)).flatten()
        return DaskBatch(job, items, total, errors, errors_file)
    fragments = files.map(partial(_split, job)).flatten()
    if shuffle == "groupby":
        grouped = fragments.groupby(itemgetter(0), npartitions=job.buckets)
        per_bucket = grouped.map(lambda pair: [f for _, f in pair[1]])
    else:
        per_bucket = fragments.foldby(
            itemgetter(0),
            lambda acc, pair: [*acc, pair[1]],
            [],
            lambda a, b: a + b,
            [],
        ).map(itemgetter(1))
    items = per_bucket.map(partial(_aggregate, job)).flatten()
    return DaskBatch(job, items, total, errors, errors_file)
