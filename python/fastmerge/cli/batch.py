"""``fastmerge batch``: merge logged streams, one JSON record per stream (:mod:`fastmerge.batch`).

::

    fastmerge batch PATHS... [--group-by auto|file|PATH] [--event PATH] [--order-by PATH]
                    [--provider NAME] [--to PROVIDER] [--strict] [--format jsonl|parquet]
                    [-o FILE | --output-dir DIR] [--errors raise|skip|collect]
                    [--errors-file FILE] [--jobs N] [--max-open-streams N]
                    [--dask ADDRESS|local] [--quiet]

Records go to standard output (or ``-o/--output FILE``) as JSON lines as streams end, or one
file per stream in ``--output-dir DIR`` (named from the key, see
:func:`fastmerge.batch.file_name`, with ``index.jsonl`` mapping each key to its file), or a
Parquet file (``--format parquet -o FILE``, needs pyarrow). ``--output`` naming a directory is
refused (it writes one file; ``--output-dir`` writes a file per stream). A progress bar (bytes
read of total, streams done, rate) is drawn on standard error when it is a terminal, unless
``--quiet``; a summary line follows the run.
``--dask ADDRESS`` runs the same job on a Dask cluster (its scheduler's address; ``local``: a
LocalCluster on this machine) with the same output (:mod:`fastmerge.dask`).

Exit status: 0 when every stream is complete; 2 when some stream is incomplete or failed and
nothing else went wrong; 1 when a stream could not be merged (status ``error``), a line was bad
(with ``--errors skip`` or ``collect`` too: the line was not used), the input holds no stream
(an empty log; files of nothing or blanks say ``FILE: empty input, no records`` in one line),
or the input cannot be read;
64 for a usage error (options that cannot be used together, a path option that is not a
path); 130 on Ctrl-C; 141 when the reader of the output went away.

``-o FILE`` is written under a temporary name beside it and renamed to ``FILE`` when the run
ends without an error, so that ``FILE`` is never left half written (a special file, such as a
FIFO or ``/dev/null``, is written directly). Ctrl-C says on standard error what was written
and where: nothing to ``FILE`` (its temporary file removed), or the files ``--output-dir``
holds, or the records already on standard output.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import tempfile
import time
from typing import IO, TYPE_CHECKING, Any, Callable, Literal

from .. import PROVIDERS, MergeError
from ._common import (
    EXIT_DATA,
    EXIT_INCOMPLETE,
    EXIT_OK,
    _fail,
    _non_negative,
    _stdout_failed,
    check_options,
)

if TYPE_CHECKING:
    from .. import batch

__all__ = ["add_parser", "looks_like", "run", "summary"]

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
    from ..batch.formats import FORMATS  # the output formats' registry

    parser.add_argument(
        "--format",
        choices=tuple(name for name, f in FORMATS.items() if f.target == "file"),
        default="jsonl",
        help="default: jsonl",
    )
    parser.add_argument(
        "-o", "--output", dest="out", metavar="FILE", help="write to FILE (default: stdout)"
    )
    parser.add_argument(
        "--output-dir",
        dest="out_dir",
        metavar="DIR",
        help="write one file per stream in DIR (named from its key) and DIR/index.jsonl "
        "(key -> file)",
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
        "--jobs",
        type=_non_negative,
        default=0,
        metavar="N",
        help="threads (0: all cores; at most 4096)",
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
    from .. import batch

    if args.errors_file is not None and args.errors not in (None, "collect"):
        args.parser.error(f"--errors-file needs --errors collect, not --errors {args.errors}")
    mode: Literal["raise", "skip", "collect"] = args.errors or (
        "collect" if args.errors_file is not None else "raise"
    )
    if args.out is not None and args.out_dir is not None:
        args.parser.error("-o/--output FILE and --output-dir DIR exclude each other")
    if args.out is not None and (os.path.isdir(args.out) or args.out.endswith(("/", os.sep))):
        args.parser.error(
            f"-o/--output {args.out} is a directory: -o/--output writes one file; for a file "
            f"per stream, pass --output-dir {args.out}"
        )
    output = batch.FORMATS[args.format]
    if output.stdout is None and args.out is None:
        args.parser.error(f"--format {args.format} needs -o FILE")
    if args.dask is not None and args.max_open_streams:
        args.parser.error("--max-open-streams cannot be used with --dask")
    check_options(
        args.parser,
        batch,
        group_by=args.group_by,
        event=args.event,
        order_by=args.order_by,
        provider=args.provider,
        jobs=args.jobs,
    )
    empty = _empty(args.paths)
    if empty:
        # nothing to merge and nothing written: one line, as a pipeline's error
        return _fail(f"{', '.join(empty)}: empty input, no records", EXIT_DATA)
    stderr_tty = _isatty(sys.stderr)
    progress = not args.quiet and stderr_tty
    with contextlib.ExitStack() as stack:
        errors_file: IO[str] | None = None
        if mode == "collect":
            if args.errors_file is None:
                errors_file = sys.stderr
            else:
                try:
                    errors_file = open(  # closed below, and by the stack
                        args.errors_file, "w", encoding="utf-8", errors="surrogateescape"
                    )
                except OSError as exc:
                    return _fail(f"{args.errors_file}: {exc.strerror or exc}", EXIT_DATA)
                # closed at the end of the run, where a failed write is reported; on an
                # earlier return another error is the one reported
                stack.callback(_close_quietly, errors_file)
        skipped: list[str] = []
        options = batch.BatchOptions(
            group_by=args.group_by,
            event=args.event,
            order_by=args.order_by,
            provider=args.provider,
            strict=args.strict,
            jobs=args.jobs,
            max_open_streams=args.max_open_streams,
        )
        try:
            if args.dask is not None:
                batch.expand_paths(args.paths, skipped)  # what the walk leaves out, said here
                run_ = _on_dask(stack, args.dask, args.paths, options, mode, errors_file)
            else:
                run_ = batch.merge_logs(args.paths, options, errors=mode, errors_file=errors_file)
        except (MergeError, ImportError, OSError) as exc:
            return _fail(str(exc), EXIT_DATA)
        stack.enter_context(run_)
        for note in skipped or run_.skipped:
            with contextlib.suppress(OSError):
                sys.stderr.write(f"fastmerge: {note}\n")
        failed: list[batch.Written] = []
        bar = _Bar(run_) if progress else None
        landing = _Landing(args.out)
        stack.callback(landing.discard)  # a run that did not land leaves no temporary file
        count = [0]  # the records handed to the writer
        output = batch.FORMATS["directory" if args.out_dir is not None else args.format]
        try:
            if output.target == "directory":
                writer = output.open(args.out_dir)
            elif landing.path is None:
                assert output.stdout is not None  # a format without it needs -o (checked)
                writer = output.stdout()
            else:
                writer = output.open(landing.path)

            def each(piece: batch.Written | batch.Rows | None) -> None:
                if bar is not None:
                    bar.draw()
                if isinstance(piece, batch.Rows):
                    _note_failed(piece.failed, failed)
                    count[0] += piece.added
                elif piece is not None:
                    _note_failed(piece, failed)
                    count[0] += 1

            batch.write(run_, writer, args.to, timeout=None if bar is None else REDRAW, each=each)
            landing.land()
        except KeyboardInterrupt:
            _clear(progress)
            _interrupted(args, count[0])
            raise
        except MergeError as exc:
            _clear(progress)
            return _fail(_with_hint(str(exc)), EXIT_DATA)
        except ImportError as exc:  # a format's optional package (pyarrow)
            return _fail(str(exc), EXIT_DATA)
        except OSError as exc:
            _clear(progress)
            if output.target == "file" and landing.path is None:
                return _stdout_failed(exc)
            # the file is named when there is one: --output-dir writes many
            where = f" {exc.filename}" if exc.filename else ""
            return _fail(f"cannot write the output{where}: {exc.strerror or exc}", EXIT_DATA)
        if errors_file is not None and errors_file is not sys.stderr:
            try:
                errors_file.close()  # its last lines are written here (a full disk says so)
            except OSError as exc:
                _clear(progress)
                where = f"cannot write the errors file {args.errors_file}"
                return _fail(f"{where}: {exc.strerror or exc}", EXIT_DATA)
        counts = run_.counts
    _clear(progress)
    if not args.quiet and (_stream_count(counts) or counts["bad_lines"]):
        # a summary of nothing is left to the error line below
        with contextlib.suppress(OSError):
            sys.stderr.write(f"fastmerge: {summary(counts)}\n")
    if failed:
        # the reason is in the record too, but a record file is not where one looks first
        many = counts["error"]
        first = failed[0]
        return _fail(
            f"{many} stream{'s' * (many != 1)} could not be merged; the first, "
            f"{first.key!r}: {first.error}",
            EXIT_DATA,
        )
    if counts["error"] or counts["bad_lines"]:
        return EXIT_DATA
    if not _stream_count(counts):
        # an empty log (or only blank lines) is never a silent success
        names = ", ".join("standard input" if p == "-" else p for p in args.paths)
        return _fail(f"no stream in the input: no line of {names} holds an event", EXIT_DATA)
    if counts["incomplete"] or counts["failed"]:
        return EXIT_INCOMPLETE
    return EXIT_OK


def _close_quietly(file: IO[str]) -> None:
    """Close ``file``, its failure left unsaid (another error is being reported)."""
    with contextlib.suppress(OSError):
        file.close()


def _note_failed(record: batch.Written | None, failed: list[batch.Written]) -> None:
    """Keep ``record`` in ``failed`` when it is the first without a message (or an error
    record)."""
    if record is not None and (not record.merged or record.status == "error") and not failed:
        failed.append(record)


#: The most of a file that is read to say what it is (empty, blank, binary, raw events).
_BLANK_READ = 1 << 16


def _empty(paths: list[str]) -> list[str]:
    """``paths`` when each is a file of nothing but blanks (none is read as a stream); else
    an empty list (a directory, a glob, standard input, a URL, a file with something in it)."""
    for path in paths:
        try:
            if not os.path.isfile(path) or os.path.getsize(path) > _BLANK_READ:
                return []
            with open(path, "rb") as file:
                if file.read().strip():
                    return []
        except OSError:
            return []  # said by the run, as any input that cannot be read
    return paths


_NOT_JSON_AT_1 = re.compile(
    r"(?s)(.*):1: (?:not valid JSON|a record must be a JSON object, not array)"
)
_NO_KEY = re.compile(r"(?s)(.*):([0-9]+): no stream key at .*")


def _with_hint(message: str) -> str:
    """A bad first line's message, with what the file looks like and the command that reads
    it when it is not JSON lines (an SSE capture, a JSON array, one indented document, binary
    input); a line without the stream key, with what it is when it is a provider's event."""
    no_key = _NO_KEY.fullmatch(message)
    if no_key is not None and no_key[1] != "-":
        provider = _event_of(no_key[1], int(no_key[2]))
        if provider is None:
            return message
        return (
            f"{message}: these lines look like raw {provider} events, not records: each file "
            "of them is one stream (fastmerge batch without --group-by), or merge one with "
            "fastmerge merge; --group-by reads records that carry a stream key"
        )
    match = _NOT_JSON_AT_1.fullmatch(message)
    if match is None or match[1] == "-":
        return message
    path = match[1]
    if _binary(path):
        return f"{message}: binary input, not provider events"  # as fastmerge merge says
    shape = looks_like(path)
    if shape is None:
        return message
    if shape == "a JSON array":
        how = (
            f"fastmerge batch {path} without --group-by (each file one stream), or fastmerge "
            f"merge --provider auto {path}; an array of wrapper records needs to be JSON lines "
            "first (jq -c '.[]')"
        )
    else:
        how = (
            f"fastmerge merge --provider auto {path}, or fastmerge batch {path} without "
            "--group-by (each file one stream)"
        )
    return (
        f"{message}: it looks like {shape} (one stream), not JSON lines of records: read it "
        f"with {how}"
    )


_SSE_FIELD = re.compile(rb"(event|data|id|retry)[ \t]*:|:")


def looks_like(path: str) -> str | None:
    """What the start of file ``path`` (decompressed when its compression is one the standard
    library reads) looks like when it is not JSON lines: ``"an SSE capture"``, ``"a JSON
    array"``, ``"one JSON document over several lines"``; None otherwise or unreadable."""
    import json

    head = _head(path)
    if head is None:
        return None
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    first = text.split(b"\n", 1)[0].strip()
    if _SSE_FIELD.match(first):
        return "an SSE capture"
    if text.startswith(b"["):
        return "a JSON array"
    if first == b"{":
        return "one JSON document over several lines"
    if first.startswith(b"{") and b"\n" in text.strip():
        try:
            json.loads(text)
        except ValueError:
            return None
        return "one JSON document over several lines"
    return None


def _head(path: str) -> bytes | None:
    """The first 64 KiB of file ``path``, decompressed when its compression is one the
    standard library reads; None when it cannot be read (or is zstd)."""
    import bz2
    import gzip
    import lzma

    opener: Any = open
    try:
        with open(path, "rb") as file:
            magic = file.read(6)
    except OSError:
        return None
    if magic.startswith(b"\x1f\x8b"):
        opener = gzip.open
    elif magic.startswith(b"BZh"):
        opener = bz2.open
    elif magic.startswith(b"\xfd7zXZ\x00"):
        opener = lzma.open
    elif magic.startswith(b"\x28\xb5\x2f\xfd"):
        return None  # zstd: the standard library cannot look
    try:
        with opener(path, "rb") as file:
            head: bytes = file.read(_BLANK_READ)
    except (OSError, EOFError, lzma.LZMAError):
        return None
    return head


def _binary(path: str) -> bool:
    """Whether file ``path`` is binary input, as the aggregator says of one (so that
    ``fastmerge merge`` and ``batch`` word it alike)."""
    from .. import Aggregator, EventError

    head = _head(path)
    if head is None:
        return False
    aggregator = Aggregator("auto")
    try:
        aggregator.feed(head)
        aggregator.finish()
    except EventError as exc:
        return exc.detail == "binary input, not provider events"
    except MergeError:
        pass
    return False


def _event_of(path: str, line: int) -> str | None:
    """The provider whose raw event line ``line`` of file ``path`` is (read in its first
    64 KiB), or None."""
    from .. import Aggregator

    head = _head(path)
    if head is None:
        return None
    lines = head.split(b"\n")
    whole = len(head) < _BLANK_READ  # else its last line may be cut
    if line > len(lines) - (not whole):
        return None
    aggregator = Aggregator("auto")
    try:
        aggregator.feed(lines[line - 1] + b"\n")
    except MergeError:
        return None
    return aggregator.provider


def _on_dask(
    stack: contextlib.ExitStack[Any],
    address: str,
    paths: list[str],
    options: batch.BatchOptions,
    mode: Literal["raise", "skip", "collect"],
    errors_file: IO[str] | None,
) -> batch.Batch:
    """The job of ``--dask``, run to the end on the cluster (a LocalCluster for ``local``,
    closed with the run): its results, in the single-machine order."""
    from .. import dask as fdask

    client = stack.enter_context(fdask.client(address))
    job = fdask.merge_logs(paths, options, errors=mode, errors_file=errors_file)
    return job.compute(scheduler=client)


def summary(counts: dict[str, int]) -> str:
    """The summary line: streams by status, and bad lines."""
    from .. import batch

    total = _stream_count(counts)
    parts = ", ".join(f"{counts[status]} {status}" for status in batch.STATUSES)
    bad = counts["bad_lines"]
    return f"{total} stream{'s' * (total != 1)} ({parts}); {bad} bad line{'s' * (bad != 1)}"


def _stream_count(counts: dict[str, int]) -> int:
    """How many streams the run counted, whatever their status."""
    from .. import batch

    return sum(counts[status] for status in batch.STATUSES)


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class _Landing:
    """Where ``-o FILE`` is written: a temporary file beside it (``path``), renamed to
    ``FILE`` by :meth:`land`, removed by :meth:`discard` (which a run that did not land ends
    with); ``FILE`` itself when it is a special file (a FIFO, ``/dev/null``) or no temporary
    file can be made beside it; None for standard output."""

    def __init__(self, target: str | None) -> None:
        self.target = target
        self.path: Any = target
        self.temporary: str | None = None
        if target is None or (os.path.exists(target) and not os.path.isfile(target)):
            return
        directory, name = os.path.split(os.path.abspath(target))
        try:
            fd, self.temporary = tempfile.mkstemp(
                prefix=f".{name}.", suffix=".partial", dir=directory
            )
        except OSError:
            return  # a directory this user cannot add to: FILE is written as it is
        os.close(fd)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(self.temporary, 0o666 & ~mask)  # as open() would make FILE
        self.path = self.temporary

    def land(self) -> None:
        if self.temporary is not None and self.target is not None:
            os.replace(self.temporary, self.target)
            self.temporary = None

    def discard(self) -> None:
        if self.temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.temporary)
            self.temporary = None


def _interrupted(args: argparse.Namespace, count: int) -> None:
    """What an interrupt leaves, said on standard error."""
    what = f"{count} record{'s' if count != 1 else ''}"
    if args.out_dir is not None:
        index = os.path.join(args.out_dir, "index.jsonl")
        line = f"interrupted: {what} written to {args.out_dir} (listed in {index})"
    elif args.out is not None:
        line = f"interrupted after {what}: nothing written to {args.out}"
    else:
        line = f"interrupted: {what} written to standard output"
    with contextlib.suppress(OSError):
        sys.stderr.write(f"fastmerge: {line}\n")


class _Bar:
    """The progress line on stderr: bytes read of total, streams done, rate (drawn by
    ``draw_line``: ``fastmerge bench`` puts the engine and the round before it)."""

    def __init__(self, run_: batch.Batch, draw_line: Callable[[str], None] | None = None) -> None:
        self.run = run_
        self.draw_line = draw_line or _draw
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
        self.draw_line(line)


def _draw(line: str) -> None:
    """``line`` on stderr in place of the last one drawn."""
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
