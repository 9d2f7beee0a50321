"""Batch merging on a Dask cluster (the ``fastmerge[dask]`` extra): :func:`merge_logs` runs
the job of :func:`fastmerge.batch.merge_logs` over many workers and gives the same results,
in the same order, byte for byte.

Every task is a pure function of its inputs, so a worker lost mid-job only costs its tasks
being run again elsewhere. Local files (every worker reads them: one machine, or a shared
file system) are planned so that no record's bytes move between processes: one
**aggregate** task per *bucket* (the CRC-32 of a stream key, modulo the buckets; by default
one bucket per host, run there on all its worker threads) runs the
backend's ``BatchCore`` (Rust, GIL released) on every file with ``bucket=(b, buckets)``: the
batch engine's own reader reads the files, finds each line's key (a light scan where it can,
the record reader where it cannot) and reads only the bucket's records, each at its own file
and line. So a stream that crosses files (log rotation) is one stream, and ends, key reuse,
the distance after which an ended stream is no longer joined and ``order_by`` follow the
batch rules exactly; with ``positions=True`` the core tags each item with the record that
decided it: the input position where the single-machine batch decides it. Each file is read
once per bucket (from the page cache, on one machine), and the tasks check that they all
read the same bytes.

Inputs that are fsspec URLs (object storage) take the same plan with ``shuffle="direct"``
(the default): each bucket's task streams every object from its store itself, through fsspec
as one machine does (``_remote.RemoteCore``), so no record moves between workers and only
the plan and the results pass through the scheduler; the objects' sizes seen when the job
was planned are checked by every task (an object stored again meanwhile is an error). Named
pipes, a Bag of lines, and URLs with ``shuffle="groupby"`` or ``"foldby"`` (on several
buckets) are read once: a **split** task per input (``split_file``) sends each bucket its
records as one fragment (their lines as one ``bytes``, their line numbers in an ``array``,
and the input's number of lines), straight to the bucket's task (``"direct"``: one pick per
input and bucket, run where the input was split), or through a Dask Bag shuffle
(``bag.groupby``, or ``foldby``: a two-phase combine). The aggregate task writes them into
its local text at their input-wide line numbers (the other lines blank), which the core
reads: the same rules at the same distances as on one machine.

Either way the items are put in input order on the client and read by
:class:`fastmerge.batch.Batch` (errors modes, counts, records): the same code as one machine.
"""

from __future__ import annotations

import contextlib
import importlib
import marshal
import os
import pickle
import stat
import tempfile
import time
import uuid
from array import array
from bisect import bisect_right
from functools import partial
from operator import itemgetter
from typing import IO, TYPE_CHECKING, Any, Iterable, Iterator, Literal

from . import _backend, _remote
from . import batch as _batch
from . import errors as _errors
from ._types import Provider
from .batch.options import BatchOptions, OptionValues

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["DaskBatch", "client", "merge_logs"]

#: ``shuffle=`` of :func:`merge_logs`.
SHUFFLES = ("direct", "groupby", "foldby")
#: The most buckets :func:`merge_logs` makes: each is a task (two in the split plan), and a
#: graph of millions only stalls the scheduler.
MAX_BUCKETS = 65_536


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
        self, paths: list[str], options: BatchOptions, buckets: int, backend: str | None
    ) -> None:
        self.backend = backend
        #: A file the first tasks (index, split) wait for before they start (tests kill a
        #: worker meanwhile).
        self.hold: str | None = None
        self.paths = paths
        self.options = options
        self.buckets = buckets
        #: False: each file is one stream (``group_by`` auto or file)
        self.records = options.group_by not in ("auto", "file")
        #: fsspec's options for the URLs among ``paths`` (each task opens its own)
        self.storage_options: dict[str, Any] | None = None
        #: The stored size of each input (a local file's, an object's as its store gave it)
        #: when the job was planned: every bucket must read the same bytes (empty: unchecked).
        self.sizes: list[int | None] = []
        #: The URL inputs' versions as their stores told them when the job was planned.
        self.tags: list[str | None] = []
        #: Local files: each bucket's workers (none: any) and its core's threads.
        self.targets: list[tuple[list[str], int]] = []

    def batch(self) -> Any:
        """``fastmerge.batch`` on the job's backend (imported again in a worker process)."""
        return _batch if self.backend is None else _backend._copy("batch", self.backend)

    def core(
        self,
        paths: list[str],
        group_by: str | None = None,
        positions: bool = False,
        bucket: int | None = None,
        jobs: int | None = None,
    ) -> Any:
        """The backend's ``BatchCore`` on ``paths`` with the job's options (with ``bucket``,
        reading only that bucket's records; ``jobs`` in place of the job's)."""
        options = self.options.but(
            group_by=self.options.group_by if group_by is None else group_by,
            jobs=self.options.jobs if jobs is None else jobs,
        )
        return self.batch().run._Core(
            paths,
            **options.core_arguments(),
            positions=positions,
            bucket=None if bucket is None else (bucket, self.buckets),
        )

    def split_file(self, path: str) -> Any:
        """The backend's ``split_file`` of ``path`` with the job's grouping, into its buckets."""
        o = self.options
        split = _backend.load(self.backend or _backend.selected).split_file
        return split(path, o.group_by, o.event, o.order_by, self.buckets)


class Fragment:
    """One bucket's records of one file, in file order (from ``split_file``): the file's
    lines (``total``: its ``\\n``s plus one), its text to the bucket's last record (the
    records at their lines, the others blank) and the records' line numbers. Every bucket
    gets one from every file, empty or not: the lines of each file place the records of the
    next at their input-wide line numbers."""

    __slots__ = ("file", "total", "data", "lines")

    def __init__(self, file: int, total: int, data: bytes, lines: array[int]) -> None:
        self.file = file
        self.total = total
        self.data = data
        self.lines = lines

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.file, self.total, self.data, self.lines)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.file, self.total, self.data, self.lines = state


def _fragments(job: _Job, file: int, split: tuple[int, list[Any]]) -> list[tuple[int, Fragment]]:
    """``split_file``'s result as one fragment for each of the job's buckets."""
    total, parts = split
    found = {bucket: (data, lines) for bucket, data, lines, *_ in parts}
    empty = (b"", array("Q"))
    return [
        (bucket, Fragment(file, total, *found.get(bucket, empty))) for bucket in range(job.buckets)
    ]


def _split(job: _Job, file: int) -> list[tuple[int, Fragment]]:
    """Task 1: one file's records as one fragment per bucket (the backend's ``split_file``)."""
    _hold(job)

    def split(path: str) -> Any:
        return job.split_file(path)

    path = job.paths[file]
    if _remote.is_url(path):
        parts = _remote.read_with(split, path, job.storage_options)
    else:
        parts = split(path)
    return _fragments(job, file, parts)


def _split_lines(job: _Job, items: Iterable[Any], partitions: list[int]) -> list[Any]:
    """Task 1 for a Bag of lines: one partition's lines (``str`` or ``bytes``, one record
    each, with or without their newline) as one fragment per bucket, read as a file named
    ``<bag partition N>`` whose line numbers count the partition's items from 1 (an item
    holding a newline inside reads as several lines)."""
    (partition,) = partitions
    with tempfile.NamedTemporaryFile("wb", suffix=".jsonl", delete=False) as tmp:
        for item in items:
            if isinstance(item, str):
                # a lone surrogate stays as bytes that are not UTF-8: the core's bad line
                item = item.encode("utf-8", "surrogatepass")
            elif not isinstance(item, (bytes, bytearray)):
                raise _errors.wrong_type("an item of the Bag", "a str or bytes line", item)
            tmp.write(item)
            if not item.endswith(b"\n"):  # dask.bag.read_text keeps each line's newline
                tmp.write(b"\n")
    try:
        parts = job.split_file(tmp.name)
    finally:
        os.unlink(tmp.name)
    return _fragments(job, partition, parts)


def _hold(job: _Job) -> None:
    """Wait for the job's hold file, if any (tests kill a worker meanwhile)."""
    while job.hold is not None and not os.path.exists(job.hold):
        time.sleep(0.05)


def _aggregate_local(
    job: _Job, bucket: int, jobs: int = 1
) -> list[tuple[tuple[int, int, int], Any]]:
    """The task of a bucket that reads the inputs itself (local files; URLs when the job has
    one bucket): the core (``jobs`` threads) reads every input and keeps only the bucket's
    records (``bucket=``; every record when it is the only one), each at its own file and
    line; each item with the input position where one machine decides it, its place:
    ``end`` (0: at the deciding record; 1, streams open at the end: at their first record),
    the record's file and line."""
    _hold(job)
    _unchanged(job)
    out: list[tuple[tuple[int, int, int], Any]] = []
    core_of = partial(
        job.core, positions=True, bucket=bucket if job.buckets > 1 else None, jobs=jobs
    )
    if any(_remote.is_url(path) for path in job.paths):
        core = _remote.RemoteCore(core_of, job.paths, job.storage_options)
        try:
            # an object stored again since the plan: not the bytes the other buckets read
            _unchanged(job, now=(core.sizes, core.tags))
        except BaseException:
            core.close()
            raise
    else:
        core = core_of(job.paths)
    try:
        while True:
            try:
                item = core.next()
            except StopIteration:
                break
            out.append((item[-1], item[:-1]))
        read = core.progress()[0]
    finally:
        core.close()
    _unchanged(job, read)
    return out


def _aggregate_local_packed(job: _Job, bucket: int, jobs: int) -> list[bytes]:
    """:func:`_aggregate_local`'s items packed as :meth:`DaskBatch.compute` reads them."""
    return _pack(_aggregate_local(job, bucket, jobs))


def _unchanged(
    job: _Job,
    read: int | None = None,
    now: tuple[list[int | None], list[str | None]] | None = None,
) -> None:
    """Every bucket must read the same input: each input's size is what it was when the job
    was planned (a local file's as it is now; a URL's, and its version where its store tells
    one, as ``now`` says: what its store told the task), and so is the sum of the bytes
    ``read`` (when given); nothing to check without the sizes (a size a store did not give)."""
    if not job.sizes or None in job.sizes:
        return
    for i, (path, size) in enumerate(zip(job.paths, job.sizes)):
        if _remote.is_url(path):
            current = None if now is None else now[0][i]
            if now is not None and job.tags and _retagged(job.tags[i], now[1][i]):
                raise _errors.BatchError(f"{path}: changed while the job read it")
        else:
            try:
                current = os.stat(path).st_size
            except OSError:
                continue  # gone: the core says so, as it says it on one machine
        if current is not None and current != size:
            raise _errors.BatchError(f"{path}: changed while the job read it")
    if read is not None and read != sum(s or 0 for s in job.sizes):
        raise _errors.BatchError(
            f"{', '.join(job.paths)}: changed while the job read them ({read} bytes read, "
            f"{sum(s or 0 for s in job.sizes)} planned)"
        )


def _retagged(planned: str | None, now: str | None) -> bool:
    """Whether an object's version tag (``_remote.Inputs.tags``) says it was stored again:
    both told, by the same field, with other values."""
    if planned is None or now is None:
        return False
    return planned.partition("=")[0] == now.partition("=")[0] and planned != now


def _check_options(job: _Job) -> None:
    """The single-machine core's checks of the options, on an empty input."""
    with tempfile.NamedTemporaryFile("wb", suffix=".jsonl", delete=False) as tmp:
        pass
    try:
        job.core([tmp.name]).close()
    finally:
        os.unlink(tmp.name)


def _aggregate(job: _Job, fragments: list[Fragment]) -> list[tuple[tuple[int, int, int], Any]]:
    """Task 3: a bucket's records through the core, each at its input-wide line number (as
    the single machine reads the files, the other buckets' lines blank); each item with the
    input position where one machine decides it: the core's place of the item (``end`` 0:
    the deciding record; 1, streams open at the end: their first record), the record's file
    and line."""
    fragments = sorted(fragments, key=lambda f: f.file)
    # a blank line first (a record never opens the text: a byte order mark there would go);
    # then file f's line n is the text's line starts[f] + n
    starts: list[int] = []
    at = 1
    for fragment in fragments:
        starts.append(at)
        at += fragment.total
    with tempfile.NamedTemporaryFile("wb", suffix=".jsonl", delete=False) as tmp:
        # piece by piece: joined, the text's fresh pages cost more than its write
        tmp.writelines(_placed(fragments, starts))
    out: list[tuple[tuple[int, int, int], Any]] = []
    try:
        core = job.core([tmp.name], positions=True)
        while True:
            try:
                item = core.next()
            except StopIteration:
                break
            end, _, line = item[-1]
            at = bisect_right(starts, line - 1) - 1
            file, number = fragments[at].file, line - starts[at]
            if item[0] == "bad":  # named by the bucket's input: the job's file and line
                item = ("bad", job.paths[file], number, item[3])
            else:
                item = item[:-1]
            out.append(((end, file, number), item))
        core.close()
    finally:
        os.unlink(tmp.name)
    return out


def _placed(fragments: list[Fragment], starts: list[int]) -> Iterator[bytes]:
    """The fragments' records as the pieces of one text, each record at its line: file f's
    line n on line ``starts[f] + n``, every other line blank (a fragment's text holds its
    records at their lines from its file's first)."""
    yield b"\n"
    at = 2  # the line the next piece starts
    for fragment, start in zip(fragments, starts):
        if fragment.lines:
            yield b"\n" * (start + 1 - at)
            yield fragment.data
            yield b"\n"
            at = start + fragment.lines[-1] + 1


def _whole_file(job: _Job, file: int) -> list[tuple[tuple[int, int, int], Any]]:
    """A file that is one stream (``group_by`` auto or file): its item, at its place."""
    path = job.paths[file]
    if _remote.is_url(path):
        core = _remote.RemoteCore(partial(job.core, group_by="file"), [path], job.storage_options)
    else:
        core = job.core([path], "file")
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


def _pack(pairs: Iterable[Any]) -> list[bytes]:
    """A partition of positioned items as one ``bytes`` (the partition's only element): by
    marshal, which writes the items' plain data (tuples, lists, dicts, strs, numbers; its
    format 4, read by every Python 3) in half pickle's time, or by pickle for anything
    marshal cannot hold. Its first byte says which."""
    items = list(pairs)
    try:
        return [b"m" + marshal.dumps(items, 4)]
    except ValueError:  # an object marshal does not write (a subclass, a class instance)
        return [b"p" + pickle.dumps(items, protocol=pickle.HIGHEST_PROTOCOL)]


def _unpack(part: bytes) -> list[Any]:
    """The items of a partition packed by :func:`_pack`."""
    data = memoryview(part)[1:]
    items: list[Any] = marshal.loads(data) if part[:1] == b"m" else pickle.loads(data)
    return items


class DaskBatch:
    """A batch job on Dask (:func:`merge_logs`): nothing runs until :meth:`compute`,
    :meth:`to_parquet` or iteration; :attr:`items` is the lazy Dask Bag of positioned items."""

    def __init__(
        self,
        job: _Job,
        items: Any,
        total: int,
        errors_mode: str,
        errors_file: IO[str] | None,
        packed: list[Any] | None = None,
    ) -> None:
        self._job = job
        #: A Dask Bag of ``(position, item)`` pairs (items as ``BatchCore.next`` gives them).
        self.items = items
        #: The tasks :meth:`compute` runs instead, each a partition packed (local files: the
        #: tasks of the buckets, each held to its host's workers, which a Bag does not keep).
        self._packed = packed
        self._total = total
        self._mode = errors_mode
        self._errors_file = errors_file

    def compute(self, **kwargs: Any) -> _batch.Batch:
        """Run the job (``kwargs`` go to ``dask.compute``, e.g. ``scheduler=``): a
        :class:`fastmerge.batch.Batch` over the results in single-machine order, with the
        same errors mode (``bad_lines``, ``counts``)."""
        # imported by name: dask.compute has no type information
        dask = importlib.import_module("dask")
        # each partition comes as one packed list, straight from its worker: one frame to
        # move and one call to read, where a Bag's own list is serialized item by item and
        # gathered on one worker first
        if self._packed is not None:
            parts = dask.compute(*self._packed, **kwargs)
        else:
            parts = dask.compute(*self.items.map_partitions(_pack).to_delayed(), **kwargs)
        pairs = [pair for (part,) in parts for pair in _unpack(part)]
        pairs.sort(key=itemgetter(0))
        core = _Items([item for _, item in pairs], self._total)
        batch: Any = self._job.batch()
        result: _batch.Batch = batch.Batch(core, self._mode, self._errors_file)
        return result

    def __iter__(self) -> Iterator[_batch.StreamResult]:
        return iter(self.compute())

    def write(
        self, path: str | os.PathLike[str], format: str = "jsonl", to: Provider | None = None
    ) -> int:
        """Run the job and write its records to ``path`` in ``format``, one of
        :data:`fastmerge.batch.FORMATS` (a file, or for ``"directory"`` a directory); the
        records written."""
        output = _batch.FORMATS.get(format)
        if output is None:
            raise _errors.invalid_option("format", format, tuple(_batch.FORMATS))
        return _batch.write(self.compute(), output.open(os.fspath(path)), to)

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
            count += _batch.write(chunk, _batch.FORMATS["parquet"].open(name), to)
            part += 1
            if len(chunk) < rows_per_file:
                return count


def _workers() -> dict[str, int]:
    """The worker threads of the current Dask client by worker address (none without one)."""
    try:
        distributed = importlib.import_module("distributed")
        nthreads: dict[str, int] = distributed.default_client().nthreads()
    except (ImportError, ValueError):
        return {}
    return nthreads


def _threads() -> int:
    """The worker threads of the current Dask client, or without one this machine's cores:
    the buckets (aggregate tasks) that keep every thread busy once each."""
    return max(sum(_workers().values()) or os.cpu_count() or 1, 1)


def _hosts() -> list[tuple[list[str], int]]:
    """The hosts of the current Dask client's workers, in order of their names, each as its
    workers' addresses and their threads; without a client, this machine: no address, its
    cores."""
    hosts: dict[str, tuple[list[str], int]] = {}
    for address, threads in sorted(_workers().items()):
        host = importlib.import_module("distributed.comm").get_address_host(address)
        addresses, total = hosts.get(host, ([], 0))
        hosts[host] = ([*addresses, address], total + threads)
    return [hosts[host] for host in sorted(hosts)] or [([], os.cpu_count() or 1)]


def merge_logs(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]] | Any,
    options: BatchOptions | None = None,
    *,
    errors: Literal["raise", "skip", "collect"] = "raise",
    errors_file: IO[str] | None = None,
    buckets: int = 0,
    shuffle: Literal["direct", "groupby", "foldby"] = "direct",
    backend: str | None = None,
    storage_options: dict[str, Any] | None = None,
    **option_values: Unpack[OptionValues],
) -> DaskBatch:
    """:func:`fastmerge.batch.merge_logs` on Dask (the current client's cluster, or any Dask
    scheduler): the same results in the same order. The options are that function's
    (:class:`~fastmerge.batch.BatchOptions`, or its fields as keywords; no
    ``max_open_streams``: streams are spread over workers); ``buckets`` is the number of
    aggregate tasks (at most :data:`MAX_BUCKETS`), ``jobs`` the core's threads in each
    task, ``shuffle`` how each bucket gets its records (``"direct"``: local files and URLs
    read by each bucket's task itself, pipes and Bags split and each bucket's fragments sent
    straight from the worker that split the input to the bucket's task; ``"groupby"``: URLs,
    pipes and Bags split, the fragments through Dask Bag's shuffle; ``"foldby"``: the same,
    combined per partition, then across);
    ``backend`` (``"rust"`` or ``"python"``; None: the selected one) the cores the tasks
    run. The paths must be readable from every worker: local files on a shared file system,
    or fsspec URLs
    (``s3://...``; ``storage_options`` go to fsspec there).

    Each aggregate task of local files reads every file whole (no record moves between
    workers), so by default (``buckets=0``) there is one bucket per host of the current
    client's workers (without a client: one, on this machine), held to that host's workers,
    and its core runs as many threads as they have (``jobs=0``): a bucket more on a host
    would only cost it another read of the input. So does a job with URLs among its inputs
    (``shuffle="direct"``): each bucket streams every object from the store, once per host.
    Split (pipes, Bags, URLs with ``"groupby"`` or ``"foldby"`` on several hosts), each input
    is read once, by a split task, and its records moved to their buckets: ``buckets=0`` is
    then the worker threads of the current client, and ``jobs=0`` one thread each.

    ``paths`` may instead be a Dask Bag of log lines (``str`` or ``bytes``, one record each;
    it needs a ``group_by`` key): each partition is read as an input file named
    ``<bag partition N>``, in partition order, so a stream may cross partitions as it may
    cross files."""
    given = {} if options is None else options.core_arguments()
    # made again of this module's class: the tasks pickle it, and workers import only the
    # package's own modules (not a copy of fastmerge.batch on another backend)
    options = BatchOptions(**{**given, **option_values})
    if options.max_open_streams:
        raise _errors.batch_option(
            "max_open_streams cannot be used on Dask: streams are spread over workers"
        )
    jobs = options.jobs
    bag = _dask_bag()
    if errors not in _batch.ERROR_MODES:
        raise _errors.invalid_option("errors", errors, _batch.ERROR_MODES)
    if errors_file is not None and errors != "collect":
        raise _errors.batch_option("errors_file needs errors='collect'")
    if shuffle not in SHUFFLES:
        raise _errors.invalid_option("shuffle", shuffle, SHUFFLES)
    for name, count in (("buckets", buckets), ("jobs", jobs)):
        if type(count) is not int:
            raise _errors.wrong_type(name, "an int", count)
        if count < 0:
            raise _errors.batch_option(f"{name} must be 0 or more, not {count}")
        if name == "buckets" and count > MAX_BUCKETS:
            raise _errors.batch_option(f"buckets must be at most {MAX_BUCKETS}, not {count}")
    options = options.but(jobs=jobs or 1)
    if isinstance(paths, bag.Bag):
        return _merge_bag(paths, errors, errors_file, buckets, backend, shuffle, options)
    expanded = _batch.expand_paths(paths, storage_options=storage_options)
    if "-" in expanded:
        raise _errors.batch_option("standard input cannot be read on a cluster: pass files")
    job = _Job(expanded, options, buckets or _threads(), backend)
    job.storage_options = storage_options
    # the single-machine core checks the options and the paths, with its errors
    planned: list[int | None] = []  # the objects' sizes as their stores give them now
    if any(_remote.is_url(path) for path in expanded):
        check = _remote.RemoteCore(job.core, expanded, storage_options)
        total = check.progress()[1]
        planned = check.sizes
        job.tags = check.tags
        check.close()
    else:
        total = job.core(expanded).progress()[1]
    files = bag.from_sequence(range(len(expanded)), npartitions=max(len(expanded), 1))
    if not job.records:
        items = files.map(partial(_whole_file, job)).flatten()
        return DaskBatch(job, items, total, errors, errors_file)
    # every bucket reads each input itself: regular files and URLs (a pipe is read once)
    local = [None if _remote.is_url(path) else os.stat(path) for path in expanded]
    regular = all(st is not None and stat.S_ISREG(st.st_mode) for st in local)
    no_pipe = all(st is None or stat.S_ISREG(st.st_mode) for st in local)
    hosts = [] if buckets else _hosts()
    if no_pipe and (regular or shuffle == "direct" or len(hosts) == 1):
        # one bucket per host, its core on the host's threads: every bucket reads every
        # input, so a bucket more on a host costs that host a read of the input more. URLs
        # too: each bucket streams each object from its store (ranged reads, no record sent
        # between workers); ``groupby`` and ``foldby`` on several buckets split them instead
        job.sizes = [st.st_size for st in local if st is not None] if regular else planned
        per_host = [(workers, jobs or threads) for workers, threads in hosts]
        job.targets = per_host or [([], jobs or 1)] * buckets
        job.buckets = len(job.targets)
        items, packed = _local_plan(job)
        return DaskBatch(job, items, total, errors, errors_file, packed)
    fragments = files.map(partial(_split, job)).flatten()
    return _shuffle_and_aggregate(job, fragments, shuffle, total, errors, errors_file)


def _local_plan(job: _Job) -> tuple[Any, list[Any]]:
    """A job whose buckets read the inputs themselves: one task per bucket, bucket ``b`` on
    the workers ``job.targets[b][0]`` (any worker when none) with ``job.targets[b][1]``
    threads. The Bag of positioned items, and the same tasks packed, held to their workers
    (for :meth:`DaskBatch.compute`)."""
    targets = job.targets
    bag = _dask_bag()
    dask = importlib.import_module("dask")
    name = f"fastmerge-aggregate-{uuid.uuid4().hex}"
    packed = []
    for b, (workers, jobs) in enumerate(targets):
        # a host's bucket runs there, or on another worker when none of its own is left
        held = dask.annotate(workers=workers, allow_other_workers=True)
        with held if workers else contextlib.nullcontext():
            task = dask.delayed(_aggregate_local_packed, pure=True)
            packed.append(task(job, b, jobs, dask_key_name=(name, b)))
    items = [dask.delayed(_aggregate_local)(job, b, jobs) for b, (_, jobs) in enumerate(targets)]
    return bag.from_delayed(items), packed


def _merge_bag(
    lines: Any,
    errors: str,
    errors_file: IO[str] | None,
    buckets: int,
    backend: str | None,
    shuffle: str,
    options: BatchOptions,
) -> DaskBatch:
    """:func:`merge_logs` of a Bag of lines."""
    bag = _dask_bag()
    n = lines.npartitions
    names = [f"<bag partition {i}>" for i in range(n)]
    job = _Job(names, options, buckets or _threads(), backend)
    if not job.records:
        raise _errors.batch_option(
            "a Bag of lines has no files to read as streams: pass group_by (e.g. group_by="
            "'stream_id')"
        )
    _check_options(job)
    indexes = bag.from_sequence(range(n), npartitions=n)
    fragments = lines.map_partitions(partial(_split_lines, job), indexes)
    # the total size is not known before the lines are read
    return _shuffle_and_aggregate(job, fragments, shuffle, -1, errors, errors_file)


def _direct(job: _Job, fragments: Any) -> Any:
    """The Bag of positioned items of each bucket's fragments handed straight to its
    aggregate task: a pick per input and bucket, run where the input's split is (its other
    buckets' fragments never leave that worker), then one aggregate task per bucket."""
    bag = _dask_bag()
    # imported by name: dask.delayed has no type information
    delayed = importlib.import_module("dask.delayed").delayed
    parts = fragments.to_delayed()
    per_bucket = [
        delayed(_aggregate_picked)(job, [delayed(_pick)(part, b) for part in parts])
        for b in range(job.buckets)
    ]
    return bag.from_delayed(per_bucket)


def _pick(pairs: list[tuple[int, Fragment]], bucket: int) -> list[Fragment]:
    """The fragments of ``bucket`` among one input's ``(bucket, fragment)`` pairs."""
    return [fragment for b, fragment in pairs if b == bucket]


def _aggregate_picked(
    job: _Job, picked: list[list[Fragment]]
) -> list[tuple[tuple[int, int, int], Any]]:
    """:func:`_aggregate` of the fragments picked from every input."""
    return _aggregate(job, [fragment for part in picked for fragment in part])


def _shuffle_and_aggregate(
    job: _Job,
    fragments: Any,
    shuffle: str,
    total: int,
    errors: str,
    errors_file: IO[str] | None,
) -> DaskBatch:
    """Tasks 2 and 3: each bucket's fragments brought together, then aggregated."""
    if shuffle == "direct":
        return DaskBatch(job, _direct(job, fragments), total, errors, errors_file)
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
