"""The ``fastmerge`` command line.

::

    fastmerge merge [--policy openjiuwen|delta|langchain] [--list-merge concat|by_index]
                    [--strict] [--indent N] FILE|-
    fastmerge merge --provider NAME|auto [--to PROVIDER] [--strict] [--allow-incomplete]
                    [--indent N] FILE|-
    fastmerge batch PATHS... [--group-by ...] [--event PATH] ...   (see fastmerge.cli_batch)
    fastmerge bench [LOG] [--group-by ...] [--event PATH]           (see fastmerge.cli_bench)
    fastmerge --version

With ``--provider``, ``fastmerge merge`` reads a recorded provider stream (SSE, JSON lines, or a
JSON array of events; see :class:`fastmerge.Aggregator`), feeds it to an aggregator block by
block (the backend parses the bytes), and prints the message as JSON: ``message.to_dict()``
(a list of them for a stream with several choices), or with ``--to PROVIDER`` the provider's
non-streaming response (:func:`fastmerge.to_provider`). ``--strict`` raises on the first
anomaly (rules §8) instead of recording it. A stream that did not end complete (cut before its
terminal event, or failed by the provider) is still printed, but exits 2 with one line on
stderr, unless ``--allow-incomplete`` is given; a cut tool call is rendered with its raw
arguments and a marker, never as a parsed, executable call (:mod:`fastmerge.render`).

``fastmerge merge`` reads JSON Lines (one JSON value a line; blank lines are skipped) from a
file or, with ``-``, from standard input, and prints :func:`fastmerge.merge_all` of the values
as one JSON document. The input is read line by line and handed to ``merge_all`` as an
iterator: the file is never held in memory as one string. No merge rule lives here.

JSON is read and written with the standard library's :mod:`json` module, whether or not orjson
is installed, so that the output never depends on what else is installed: orjson turns integers
beyond 64 bits into floats and rejects ``NaN`` and lone surrogates, which :mod:`json` reads and
writes back unchanged. Output is compact (``","`` and ``":"`` separators, as orjson writes) or
indented with ``--indent``, UTF-8, not ASCII-escaped; a result holding a lone surrogate, which
UTF-8 cannot encode, is written with every non-ASCII character escaped instead.

Exit status (the ``EXIT_*`` constants): 0 on success; 1 when the input cannot be read or holds
no JSON value (empty or blank: not a ``null`` that would pass for a merged result), a line
is not JSON (the message names the file and the line number), the merge fails (for example
``--strict``, or nesting deeper than :data:`fastmerge.MAX_DEPTH`), or the output cannot be
written; 2 when a provider stream is incomplete or failed (without ``--allow-incomplete``);
64 for a usage error (``EX_USAGE``: argparse's own 2 is taken by the incomplete stream);
130 on Ctrl-C; 141 when the reader of the output went away (``| head``), quietly, as a tool
killed by ``SIGPIPE`` reports it in the shell. Every other failure writes one line on stderr
(a usage error after the usage), in the command line's terms (``--provider``, not the
library's ``provider=``).
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import json
import os
import re
import sys
from typing import IO, Any, BinaryIO, Iterator, NoReturn, Sequence

from . import (
    BACKEND,
    LIST_MERGES,
    POLICIES,
    PROVIDERS,
    Aggregator,
    AnomalyError,
    MergeError,
    __version__,
    merge_all,
    to_provider,
)

__all__ = ["InputError", "build_parser", "dump_json", "main", "read_json_lines"]

EXIT_OK = 0
EXIT_DATA = 1
EXIT_INCOMPLETE = 2
EXIT_USAGE = 64  # sysexits.h EX_USAGE
EXIT_INTERRUPT = 130  # 128 + SIGINT
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what the shell shows for a tool SIGPIPE ended
PROG = "fastmerge"
STDIN = "-"
STDIN_NAME = "<stdin>"


class InputError(Exception):
    """Input that cannot be used: an unreadable file, or a line that is not JSON.

    ``str(error)`` is ``"SOURCE:LINE: REASON"`` (``"SOURCE: REASON"`` when no line is
    concerned), the form compilers and editors understand.
    """

    def __init__(self, source: str, line: int | None, reason: str) -> None:
        self.source = source
        self.line = line
        self.reason = reason
        where = source if line is None else f"{source}:{line}"
        super().__init__(f"{where}: {reason}")


def read_json_lines(stream: IO[bytes], source: str) -> Iterator[Any]:
    """Yield the JSON value of each non-blank line of ``stream``, one line at a time.

    ``source`` names the input in error messages. Lines are numbered from 1, blank lines
    included; a UTF-8 byte order mark at the start is ignored. Raises :class:`InputError` for
    a line that is not UTF-8 or not JSON, and for a read error.
    """
    number = 0
    try:
        for number, raw in enumerate(stream, start=1):
            if number == 1 and raw.startswith(codecs.BOM_UTF8):
                raw = raw[len(codecs.BOM_UTF8) :]
            if not raw.strip():
                continue
            value = _parse_line(raw, source, number)
            yield value
    except OSError as exc:
        raise InputError(source, number + 1, f"cannot read: {_os_reason(exc)}") from exc


def _parse_line(raw: bytes, source: str, number: int) -> Any:
    try:
        # Without its line terminator, so that a column counts from the start of this line.
        text = raw.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError as exc:
        raise InputError(
            source, number, f"not valid UTF-8 (byte {exc.start + 1}: {exc.reason})"
        ) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(source, number, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise InputError(source, number, "invalid JSON: nested too deeply to parse") from None


def dump_json(value: Any, indent: int | None = None) -> bytes:
    """``value`` as UTF-8 JSON followed by a newline (see the module docstring for the format)."""
    separators = (",", ":") if indent is None else (",", ": ")
    text = json.dumps(value, ensure_ascii=False, indent=indent, separators=separators)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate: valid as a JSON escape, not encodable as UTF-8.
        data = json.dumps(value, ensure_ascii=True, indent=indent, separators=separators).encode(
            "ascii"
        )
    return data + b"\n"


def _os_reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _open_input(path: str) -> contextlib.AbstractContextManager[IO[bytes]]:
    if path == STDIN:
        return contextlib.nullcontext(sys.stdin.buffer)
    try:
        return open(path, "rb")
    except OSError as exc:
        raise InputError(path, None, _os_reason(exc)) from None


# A Python argument as the library's messages spell it (``provider=``, ``strict=True``,
# ``list_merge='by_index'``), for the command line's spelling of the same option.
_PY_ARGUMENT = re.compile(r"\b(provider|policy|list_merge|strict)=(?:'([^']*)'|True\b|(?=\s))")


def _flags(message: str) -> str:
    """``message`` with the library's Python arguments named as this command's flags:
    ``list_merge='by_index' requires policy='delta'`` -> ``--list-merge by_index requires
    --policy delta``."""

    def flag(match: re.Match[str]) -> str:
        name = "--" + match[1].replace("_", "-")
        return name if match[2] is None else f"{name} {match[2]}"

    return _PY_ARGUMENT.sub(flag, message)


def _fail(message: str, status: int = EXIT_DATA) -> int:
    with contextlib.suppress(OSError):  # nowhere left to report to
        sys.stderr.write(f"{PROG}: error: {_flags(message)}\n")
        sys.stderr.flush()
    return status


def _write_stdout(data: bytes) -> int:
    out: BinaryIO = sys.stdout.buffer
    try:
        out.write(data)
        out.flush()
    except OSError as exc:
        # Unwritten bytes stay buffered: without this, the flush at interpreter exit fails
        # again and prints a traceback after our line.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        if isinstance(exc, BrokenPipeError):
            return EXIT_BROKEN_PIPE  # the reader went away (``| head``): quietly
        return _fail(f"cannot write the output: {_os_reason(exc)}")
    return EXIT_OK


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {value}")
    return value


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors on :data:`EXIT_USAGE` (argparse's 2 means an incomplete
    stream here), in the command line's terms: one stderr line, naming ``--help``."""

    def error(self, message: str) -> NoReturn:
        self.exit(
            EXIT_USAGE,
            f"{self.prog}: error: {_flags(message)} (see '{self.prog} --help')\n",
        )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``fastmerge`` command."""
    parser = _Parser(
        prog=PROG,
        description="Merge streamed LLM output (chunks, deltas) back into complete messages.",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"{PROG} {__version__} ({BACKEND} backend)",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    merge = commands.add_parser(
        "merge",
        help="merge the values of a JSON Lines file into one JSON value",
        description=(
            "Read JSON Lines (one JSON value a line; blank lines are skipped) and print "
            "fastmerge.merge_all of the values as JSON. Exit status 1 if the input cannot "
            "be read, holds no value, a line is not JSON (reported as FILE:LINE) or the merge "
            "fails."
        ),
    )
    merge.add_argument("file", metavar="FILE", help="a JSON Lines file, or - for standard input")
    merge.add_argument(
        "--policy",
        choices=POLICIES,
        default="openjiuwen",
        help="openjiuwen: drop-in for openJiuwen's merge_parser_content (default); "
        "delta: keeps values against null, never concatenates ids, roles and other "
        "atomic keys",
    )
    merge.add_argument(
        "--list-merge",
        choices=LIST_MERGES,
        default="concat",
        help="concat: lists concatenate (default); by_index: list elements that are "
        "objects with the same integer 'index' merge (needs --policy delta)",
    )
    merge.add_argument(
        "--strict",
        action="store_true",
        help="fail when two values of different kinds meet (needs --policy delta); with "
        "--provider, fail on the first anomaly instead of recording it",
    )
    merge.add_argument(
        "--indent",
        type=_non_negative,
        default=None,
        metavar="N",
        help="indent the output by N spaces (default: compact, one line)",
    )
    merge.add_argument(
        "--provider",
        choices=("auto", *PROVIDERS),
        default=None,
        metavar="NAME",
        help="read FILE as a recorded provider stream of this wire format "
        f"(auto, {', '.join(PROVIDERS)}) and print the aggregated message",
    )
    merge.add_argument(
        "--to",
        choices=PROVIDERS,
        default=None,
        metavar="PROVIDER",
        help="with --provider: print the provider's non-streaming response shape instead "
        "of the message's fields (a cut tool call keeps its raw arguments, marked as cut)",
    )
    merge.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="with --provider: exit 0 for a stream that is incomplete or failed (default: "
        "print it, and exit 2 with one line on stderr)",
    )
    merge.set_defaults(parser=merge)
    from . import cli_batch, cli_bench  # here: they import this module

    cli_batch.add_parser(commands)
    cli_bench.add_parser(commands)
    return parser


_BLOCK = 1 << 16


def _stream_command(args: argparse.Namespace) -> int:
    if args.policy != "openjiuwen" or args.list_merge != "concat":
        args.parser.error("--policy and --list-merge apply to JSON value merges, not --provider")
    source = STDIN_NAME if args.file == STDIN else args.file
    aggregator = Aggregator(args.provider, strict=args.strict)
    try:
        with _open_input(args.file) as stream:
            while block := stream.read(_BLOCK):
                aggregator.feed(block)
        messages = aggregator.finish_choices()
    except InputError as exc:
        return _fail(str(exc))
    except OSError as exc:
        return _fail(f"{source}: cannot read: {_os_reason(exc)}")
    except AnomalyError as exc:
        # --strict failed on the cut itself: the status of a cut stream, though nothing could
        # be printed (so --allow-incomplete cannot accept it)
        cut = exc.code == "truncated"
        return _fail(f"{source}: {exc}", EXIT_INCOMPLETE if cut else EXIT_DATA)
    except MergeError as exc:
        return _fail(f"{source}: {exc}")
    try:
        if args.to is not None:
            result: Any = to_provider(messages, args.to)
        elif len(messages) == 1:
            result = messages[0].to_dict()
        else:
            result = [message.to_dict() for message in messages]
    except ValueError as exc:  # a shape the target cannot hold (n choices for Anthropic)
        return _fail(f"{source}: --to {args.to}: {exc}")
    status = _write_stdout(dump_json(result, args.indent))
    unfinished = _unfinished(messages)
    if status != EXIT_OK or unfinished is None or args.allow_incomplete:
        return status
    return _fail(f"{source}: {unfinished} (--allow-incomplete accepts it)", EXIT_INCOMPLETE)


def _unfinished(messages: Sequence[Any]) -> str | None:
    """What is not complete about a stream's messages (rules §6), or None if they all are."""
    states = [
        (message.choice_index if message.choice_index is not None else position, message.status)
        for position, message in enumerate(messages)
    ]
    bad = [(choice, _STATES.get(status, f"is {status}")) for choice, status in states]
    bad = [(choice, state) for choice, state in bad if state]
    if not bad:
        return None
    if len(states) == 1:
        return f"the stream {bad[0][1]}"
    return ", ".join(f"choice {choice} {state}" for choice, state in bad)


# a message status (rules §6) as _unfinished says it; "" for a complete one
_STATES = {"complete": "", "incomplete": "is incomplete", "failed": "failed"}


def _merge_command(args: argparse.Namespace) -> int:
    if args.provider is not None:
        return _stream_command(args)
    if args.to is not None:
        args.parser.error("--to needs --provider")
    if args.allow_incomplete:
        args.parser.error("--allow-incomplete needs --provider")
    options = {"policy": args.policy, "list_merge": args.list_merge, "strict": args.strict}
    try:
        # An empty merge checks the combination of options, with the library's own message.
        merge_all((), **options)
    except (TypeError, ValueError) as exc:
        args.parser.error(str(exc))
    source = STDIN_NAME if args.file == STDIN else args.file
    read = 0

    def counted(values: Iterator[Any]) -> Iterator[Any]:
        nonlocal read
        for value in values:
            read += 1
            yield value

    try:
        with _open_input(args.file) as stream:
            result = merge_all(counted(read_json_lines(stream, source)), **options)
    except InputError as exc:
        return _fail(str(exc))
    except MergeError as exc:
        return _fail(f"{source}: cannot merge: {exc}")
    if not read:
        # merge_all of nothing is None; printed, `null` would pass for a merged empty input
        return _fail(f"{source}: no JSON value to merge: the input is empty or blank")
    return _write_stdout(dump_json(result, args.indent))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    args = build_parser().parse_args(argv)
    try:
        if args.command == "merge":
            return _merge_command(args)
        if args.command == "batch":
            from . import cli_batch

            return cli_batch.run(args)
        if args.command == "bench":
            from . import cli_bench

            return cli_bench.run(args)
    except KeyboardInterrupt:
        return EXIT_INTERRUPT
    raise AssertionError(f"unhandled command {args.command!r}")  # pragma: no cover


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
