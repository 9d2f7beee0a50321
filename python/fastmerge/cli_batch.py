"""``fastmerge batch``: merge logged streams, one JSON record per stream (:mod:`fastmerge.batch`).

::

    fastmerge batch PATHS... [--group-by auto|file|PATH] [--event PATH] [--order-by PATH]
                    [--provider NAME] [--to PROVIDER] [--strict] [--format jsonl|parquet]
                    [-o FILE | --output DIR] [--errors raise|skip|collect] [--errors-file FILE]
                    [--jobs N] [--max-open-streams N] [--dask ADDRESS|local] [--quiet]

Records go to standard output (or ``-o FILE``) as JSON lines as streams end, or one
``KEY.json`` file per stream in ``--output DIR``, or a Parquet file (``--format parquet -o
FILE``, needs pyarrow). A progress bar (bytes read of total, streams done, rate) is drawn on
standard error when it is a terminal, unless ``--quiet``; a summary line follows the run.
``--dask ADDRESS`` runs the same job on a Dask cluster (its scheduler's address; ``local``: a
LocalCluster on this machine) with the same output (:mod:`fastmerge.dask`).

Exit status: 0 when every stream is complete; 2 when some stream is incomplete or failed and
nothing else went wrong; 1 when a stream could not be merged (status ``error``), a line was bad
(with ``--errors skip`` or ``collect`` too: the line was not used), the input holds no stream
(an empty log), or the input cannot be read;
64 for a usage error; 130 on Ctrl-C; 141 when the reader of the output went away.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import time
from typing import IO, TYPE_CHECKING, Any, Iterator, Literal

from . import PROVIDERS, MergeError
from .cli import EXIT_DATA, EXIT_INCOMPLETE, EXIT_OK, _fail, _non_negative, _write_stdout

if TYPE_CHECKING:
    from . import batch

__all__ = ["add_parser", "run", "summary"]

#: How often the progress bar is redrawn, in seconds (and how long a poll of the core waits).
REDRAW = 0.1


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """The ``batch`` subcommand on ``commands`` (the ``fastmerge`` parser's subparsers)."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "batch",
        help="merge logged streams (many files, interleaved logs, compressed): one record a stream",
        description=(
            "Merge the provider streams logged in PATHS (files, directories, globs, - for "
            "standard input; gzip, zstd, bzip2 and xz read by their magic bytes) and write "
            "one JSON record per stream: key, provider, status, anomalies, message, error. "
            "Exit status 0 when every stream is complete, 2 when some is incomplete or "
            "failed, 1 when a stream could not be merged, a line was bad, or an input "
            "cannot be read."
        ),
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files, directories, globs, -")
    parser.add_argument(
        "--group-by",
        default="auto",
        metavar="auto|file|PATH",
        help="the stream key in each record: a dotted path (stream_id, metadata.request_id) "
        "or a JSON pointer (/metadata/request_id); id groups raw OpenAI chunks, responseId "
        "raw Gemini chunks; auto/file (default): each file is one stream",
    )
    parser.add_argument(
        "--event",
        default=None,
        metavar="PATH",
        help="the provider event inside each record (a wrapper such as "
        '{"ts":..., "stream_id":..., "event":{...}}); default: the record is the event',
    )
    parser.add_argument(
        "--order-by",
        default=None,
        metavar="PATH",
        help="sort each stream's events by this sequence number or timestamp (default: "
        "input order)",
    )
    parser.add_argument(
        "--provider",
        choices=("auto", *PROVIDERS),
        default="auto",
        metavar="NAME",
        help=f"the wire format (auto: read from each stream; {', '.join(PROVIDERS)})",
    )
    parser.add_argument(
        "--to",
        choices=PROVIDERS,
        default=None,
        metavar="PROVIDER",
        help="write each message as this provider's non-streaming response",
    )
    parser.add_argument("--strict", action="store_true", help="a stream's first anomaly fails it")
    parser.add_argument(
        "--format", choices=("jsonl", "parquet"), default="jsonl", help="default: jsonl"
    )
    parser.add_argument("-o", dest="out", metavar="FILE", help="write to FILE (default: stdout)")
    parser.add_argument(
        "--output", dest="out_dir", metavar="DIR", help="write one KEY.json file per stream"
    )
    parser.add_argument(
        "--errors",
        choices=("raise", "skip", "collect"),
        default=None,
        help="a line that belongs to no stream: raise (default) stops; skip counts it; "
        "collect writes FILE:LINE: REASON to --errors-file (default: stderr)",
    )
    parser.add_argument(
        "--errors-file", metavar="FILE", help="where --errors collect writes (implies collect)"
    )
    parser.add_argument(
        "--jobs", type=_non_negative, default=0, metavar="N", help="threads (0: all cores)"
    )
    parser.add_argument(
        "--max-open-streams",
        type=_non_negative,
        default=0,
        metavar="N",
        help="fail when more than N streams are open at once (0: no limit)",
    )
    parser.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run on the Dask cluster at ADDRESS ('local': a LocalCluster here); needs "
        "fastmerge[dask]",
    )
    parser.add_argument(
        "--quiet", action="store_true", help="no progress bar and no summary on stderr"
    )
    parser.set_defaults(parser=parser)
    return parser


def run(args: argparse.Namespace) -> int:
    """Run ``fastmerge batch`` (the backend's batch core is loaded here, not by ``fastmerge
    merge``)."""
    from . import batch

    if args.errors_file is not None and args.errors not in (None, "collect"):
        args.parser.error(f"--errors-file needs --errors collect, not --errors {args.errors}")
    mode: Literal["raise", "skip", "collect"] = args.errors or (
        "collect" if args.errors_file is not None else "raise"
    )
    if args.out is not None and args.out_dir is not None:
        args.parser.error("-o and --output exclude each other")
    if args.format == "parquet" and args.out is None:
        args.parser.error("--format parquet needs -o FILE")
    if args.dask is not None and args.max_open_streams:
        args.parser.error("--max-open-streams cannot be used with --dask")
    stderr_tty = _isatty(sys.stderr)
    progress = not args.quiet and stderr_tty
    with contextlib.ExitStack() as stack:
        errors_file: IO[str] | None = None
        if mode == "collect":
            if args.errors_file is None:
                errors_file = sys.stderr
            else:
                try:
                    errors_file = stack.enter_context(
                        open(args.errors_file, "w", encoding="utf-8", errors="surrogateescape")
                    )
                except OSError as exc:
                    return _fail(f"{args.errors_file}: {exc.strerror or exc}", EXIT_DATA)
        try:
            if args.dask is not None:
                run_ = _on_dask(stack, args, mode, errors_file)
            else:
                run_ = batch.merge_logs(
                    args.paths,
                    group_by=args.group_by,
                    event=args.event,
                    order_by=args.order_by,
                    provider=args.provider,
                    errors=mode,
                    errors_file=errors_file,
                    jobs=args.jobs,
                    max_open_streams=args.max_open_streams,
                    strict=args.strict,
                )
        except (MergeError, ImportError, OSError) as exc:
            return _fail(str(exc), EXIT_DATA)
        stack.enter_context(run_)
        results = _results(run_, _Bar(run_) if progress else None)
        try:
            written = _write(args, results)
        except MergeError as exc:
            _clear(progress)
            return _fail(str(exc), EXIT_DATA)
        except OSError as exc:
            _clear(progress)
            return _fail(f"cannot write the output: {exc.strerror or exc}", EXIT_DATA)
        if written is not None:
            return written
        counts = run_.counts
    _clear(progress)
    if not args.quiet:
        with contextlib.suppress(OSError):
            sys.stderr.write(f"fastmerge: {summary(counts)}\n")
    if counts["error"] or counts["bad_lines"]:
        return EXIT_DATA
    if not _stream_count(counts):
        # an empty log (or only blank lines) is never a silent success
        names = ", ".join("standard input" if p == "-" else p for p in args.paths)
        return _fail(f"no stream in the input: no line of {names} holds an event", EXIT_DATA)
    if counts["incomplete"] or counts["failed"]:
        return EXIT_INCOMPLETE
    return EXIT_OK


def _on_dask(
    stack: contextlib.ExitStack[Any],
    args: argparse.Namespace,
    mode: Literal["raise", "skip", "collect"],
    errors_file: IO[str] | None,
) -> batch.Batch:
    """The job of ``--dask``, run to the end on the cluster (a LocalCluster for ``local``,
    closed with the run): its results, in the single-machine order."""
    from . import dask as fdask

    client = stack.enter_context(fdask.client(args.dask))
    job = fdask.merge_logs(
        args.paths,
        group_by=args.group_by,
        event=args.event,
        order_by=args.order_by,
        provider=args.provider,
        errors=mode,
        errors_file=errors_file,
        jobs=args.jobs or 1,
        strict=args.strict,
    )
    return job.compute(scheduler=client)


def summary(counts: dict[str, int]) -> str:
    """The summary line: streams by status, and bad lines."""
    from . import batch

    total = _stream_count(counts)
    parts = ", ".join(f"{counts[status]} {status}" for status in batch.STATUSES)
    bad = counts["bad_lines"]
    return f"{total} stream{'s' * (total != 1)} ({parts}); {bad} bad line{'s' * (bad != 1)}"


def _stream_count(counts: dict[str, int]) -> int:
    """How many streams the run counted, whatever their status."""
    from . import batch

    return sum(counts[status] for status in batch.STATUSES)


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _results(run_: batch.Batch, bar: _Bar | None) -> Iterator[batch.StreamResult]:
    """The run's results; with a bar, the core is polled so the bar moves between them."""
    if bar is None:
        yield from run_
        return
    while True:
        try:
            result = run_.poll(REDRAW)
        except StopIteration:
            return
        bar.draw()
        if result is not None:
            yield result


def _write(args: argparse.Namespace, results: Iterator[batch.StreamResult]) -> int | None:
    """Write the records; None, or an exit status that ends the run."""
    from . import batch

    if args.out_dir is not None:
        os.makedirs(args.out_dir, exist_ok=True)
        names: set[str] = set()
        for result in results:
            name = _file_name(result.key, names)
            with open(os.path.join(args.out_dir, name), "wb") as file:
                file.write(batch.json_line(result.record(args.to)))
        return None
    if args.format == "parquet":
        try:
            batch.to_parquet(results, args.out, args.to)
        except ImportError as exc:
            return _fail(str(exc), EXIT_DATA)
        return None
    if args.out is None:
        for result in results:
            # a record is written (and flushed) when its stream ends
            status = _write_stdout(batch.json_line(result.record(args.to)))
            if status != EXIT_OK:
                return status
        return None
    with open(args.out, "wb") as out:
        batch.to_jsonl(results, out, args.to)
    return None


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _file_name(key: str, taken: set[str]) -> str:
    """A file name for a stream's record: its key with unsafe characters as ``_``, and
    ``-2``, ``-3``, ... for a key met again (or two keys that read the same)."""
    stem = _UNSAFE.sub("_", key).strip(".") or "_"
    name = f"{stem}.json"
    number = 1
    while name in taken:
        number += 1
        name = f"{stem}-{number}.json"
    taken.add(name)
    return name


class _Bar:
    """The progress line on stderr: bytes read of total, streams done, rate."""

    def __init__(self, run_: batch.Batch) -> None:
        self.run = run_
        self.start = time.monotonic()
        self.last = 0.0

    def draw(self) -> None:
        now = time.monotonic()
        if now - self.last < REDRAW:
            return
        self.last = now
        read, total, done, bad = self.run.progress()
        rate = read / max(now - self.start, 1e-9)
        of = f" / {_mb(total)}" + (f" ({100 * read // total}%)" if total else "") if total else ""
        line = f"{_mb(read)}{of}  {done} streams  {_mb(rate)}/s"
        if bad:
            line += f"  {bad} bad lines"
        with contextlib.suppress(OSError):
            sys.stderr.write(f"\r{line}\x1b[K")
            sys.stderr.flush()


def _mb(count: float) -> str:
    return f"{count / 1e6:.1f} MB"


def _clear(progress: bool) -> None:
    if progress:
        with contextlib.suppress(OSError):
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
