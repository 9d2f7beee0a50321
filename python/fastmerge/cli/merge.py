"""``fastmerge merge``: one recorded provider stream, or the values of a JSON Lines file merged
into one, printed as JSON. No merge rule lives here: the aggregator and ``merge_all`` do the
merging.

The input's first block is shown to an ``Aggregator("auto")`` first, and what it reads as a
provider's stream is aggregated as ``--provider auto`` would (a stream is never merged field by
field by mistake); the lines are merged as JSON values when they are events of no provider, or
when asked (``--policy`` / ``--list-merge``). Records that hold provider events (a gateway's
log) are refused with a line naming ``fastmerge batch``; a compressed input fails with the
aggregator's own wording."""

from __future__ import annotations

import argparse
import codecs
import contextlib
import json
import sys
from typing import IO, Any, Iterable, Iterator, Literal, NamedTuple, Sequence

from .. import (
    LIST_MERGES,
    POLICIES,
    PROVIDERS,
    Aggregator,
    AnomalyError,
    EventError,
    MergeError,
    merge_all,
    to_provider,
)
from .._types import Provider
from ..errors import MergeConflictError
from ._common import (
    EXIT_DATA,
    EXIT_INCOMPLETE,
    EXIT_OK,
    STDIN,
    STDIN_NAME,
    _fail,
    _non_negative,
    _os_reason,
    _write_stdout,
    dump_json,
)

__all__ = ["InputError", "add_parser", "read_json_lines", "run"]


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


def read_json_lines(stream: Iterable[bytes], source: str) -> Iterator[Any]:
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


def _open_input(path: str) -> contextlib.AbstractContextManager[IO[bytes]]:
    if path == STDIN:
        return contextlib.nullcontext(sys.stdin.buffer)
    try:
        return open(path, "rb")
    except OSError as exc:
        raise InputError(path, None, _os_reason(exc)) from None


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Add the ``merge`` command to the subparsers ``commands``."""
    merge: argparse.ArgumentParser = commands.add_parser(
        "merge",
        help="merge a recorded provider stream (SSE, JSON lines or a JSON array of events; "
        "its provider detected, or --provider) into its message, or the values of a JSON Lines "
        "file into one JSON value",
        description=(
            "Read FILE as a recorded provider stream (SSE, JSON lines or a JSON array of "
            "events) when its first events are a provider's (or --provider names one), and "
            "print the aggregated message. Otherwise, or with --policy or --list-merge, read "
            "JSON Lines (one JSON value a line; blank lines are skipped) and print "
            "fastmerge.merge_all of the values as JSON; records that hold provider events are "
            "refused with a hint to use fastmerge batch. Exit status 1 if the input cannot be "
            "read, holds no value, a line is not JSON (reported as FILE:LINE), the input is "
            "compressed or records of events, or the merge fails; 2 for an incomplete or "
            "failed provider stream."
        ),
    )
    merge.add_argument(
        "file",
        metavar="FILE",
        help="a JSON Lines file (with --provider, a recorded stream), or - for standard input",
    )
    merge.add_argument(
        "--policy",
        choices=POLICIES,
        default=None,
        help="merge the lines as JSON values, even provider events, with this policy: "
        "openjiuwen: drop-in for openJiuwen's merge_parser_content (the default for lines "
        "of no provider); delta: keeps values against null, never concatenates ids, roles "
        "and other atomic keys",
    )
    merge.add_argument(
        "--list-merge",
        choices=LIST_MERGES,
        default=None,
        help="merge the lines as JSON values: concat: lists concatenate (the default); "
        "by_index: list elements that are objects with the same integer 'index' merge "
        "(needs --policy delta)",
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
        f"(auto, {', '.join(PROVIDERS)}) and print the aggregated message (without it, "
        "a stream is detected as with auto)",
    )
    merge.add_argument(
        "--to",
        choices=PROVIDERS,
        default=None,
        metavar="PROVIDER",
        help="for a provider stream: print the provider's non-streaming response shape "
        "instead of the message's fields (a cut tool call keeps its raw arguments, marked as "
        "cut)",
    )
    merge.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="for a provider stream: exit 0 for a stream that is incomplete or failed "
        "(default: print it, and exit 2 with one line on stderr)",
    )
    merge.set_defaults(parser=merge)
    return merge


def run(args: argparse.Namespace) -> int:
    """Run ``fastmerge merge`` with the parsed ``args``; return the exit status."""
    return _merge_command(args)


_BLOCK = 1 << 16


def _stream_command(args: argparse.Namespace) -> int:
    """``--provider NAME``: the input read as that provider's stream."""
    if args.policy is not None or args.list_merge is not None:
        args.parser.error("--policy and --list-merge apply to JSON value merges, not --provider")
    source = STDIN_NAME if args.file == STDIN else args.file
    try:
        with _open_input(args.file) as stream:
            return _aggregate(args, args.provider, source, b"", stream)
    except InputError as exc:
        return _fail(str(exc))


def _aggregate(
    args: argparse.Namespace,
    provider: Provider | Literal["auto"],
    source: str,
    head: bytes,
    stream: IO[bytes],
) -> int:
    """``head`` and the rest of ``stream`` fed to an ``Aggregator(provider)``; the message
    printed (or its provider's response, ``--to``), and the exit status."""
    aggregator = Aggregator(provider, strict=args.strict)
    try:
        if head:
            aggregator.feed(head)
        while block := stream.read(_BLOCK):
            aggregator.feed(block)
        messages = aggregator.finish_choices()
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


class _Sniffed(NamedTuple):
    """What the aggregator made of an input's first block."""

    provider: str | None  # the wire format ``provider="auto"`` read it as
    compressed: str | None  # the aggregator's "...-compressed input: decompress it first"
    wrapped: str | None = None  # records holding events: the aggregator's hint (batch)


#: How the aggregator's hint about records that hold provider events begins.
_WRAPPED = "its "


def _sniff(head: bytes) -> _Sniffed:
    """``head`` (an input's first block) as ``Aggregator("auto")`` reads it: the wire format
    it detects, or what the aggregator says a compressed input is. The aggregator's own
    detection, so that ``merge`` and ``merge --provider auto`` never disagree on an input."""
    aggregator = Aggregator("auto")
    try:
        aggregator.feed(head)
        if aggregator.provider is not None:
            return _Sniffed(aggregator.provider, None)
        aggregator.finish()
    except EventError as exc:
        # no event in it: the aggregator says what the input was
        if not exc.event and exc.detail.endswith("-compressed input: decompress it first"):
            return _Sniffed(None, exc.detail)
        _, _, hint = exc.detail.rpartition("; ")
        if hint.startswith(_WRAPPED) and "fastmerge batch --group-by" in hint:
            return _Sniffed(None, None, hint)
    except MergeError:
        pass
    return _Sniffed(None, None)


def _one_document(head: bytes) -> bool:
    """Whether ``head`` (the whole input, when shorter than a block) is one JSON document
    written over several lines, such as a pretty-printed response."""
    if len(head) >= _BLOCK or b"\n" not in head.strip():
        return False
    try:
        json.loads(head)
    except (ValueError, RecursionError):
        return False
    return True


def _read_head(stream: IO[bytes], source: str) -> bytes:
    """Up to one block of ``stream``: what one read gives (``read1``), so that a pipe still
    open is read as far as it came and a bad line is reported as soon as it arrives."""
    read = getattr(stream, "read1", stream.read)
    try:
        head: bytes = read(_BLOCK)
        return head
    except OSError as exc:
        raise InputError(source, 1, f"cannot read: {_os_reason(exc)}") from exc


def _lines(head: bytes, stream: IO[bytes]) -> Iterator[bytes]:
    """The lines of ``head`` then of the rest of ``stream``, a line across the two joined."""
    # split on "\n" only, as iterating a binary file does (a "\r" stays in its line)
    *whole, partial = head.split(b"\n")
    for line in whole:
        yield line + b"\n"
    if partial:
        yield partial + stream.readline()
    yield from stream


# a message status (rules §6) as _unfinished says it; "" for a complete one
_STATES = {"complete": "", "incomplete": "is incomplete", "failed": "failed"}


def _check_options(args: argparse.Namespace, options: dict[str, Any]) -> None:
    """A usage error for options the JSON value merge does not take together, in the
    library's own words (an empty merge checks them)."""
    try:
        merge_all((), **options)
    except (TypeError, ValueError) as exc:
        args.parser.error(str(exc))


def _merge_command(args: argparse.Namespace) -> int:
    if args.provider is not None:
        return _stream_command(args)
    asked = args.policy is not None or args.list_merge is not None
    if asked and args.to is not None:
        args.parser.error("--to needs a provider stream, not --policy or --list-merge")
    if asked and args.allow_incomplete:
        args.parser.error(
            "--allow-incomplete needs a provider stream, not --policy or --list-merge"
        )
    options = {
        "policy": args.policy or "openjiuwen",
        "list_merge": args.list_merge or "concat",
        "strict": args.strict,
    }
    if asked:
        _check_options(args, options)
    source = STDIN_NAME if args.file == STDIN else args.file
    read = 0

    def counted(values: Iterator[Any]) -> Iterator[Any]:
        nonlocal read
        for value in values:
            read += 1
            yield value

    sniffed = _Sniffed(None, None)
    try:
        with _open_input(args.file) as stream:
            head = _read_head(stream, source)
            sniffed = _sniff(head)
            if not asked and (
                sniffed.provider is not None or args.to is not None or args.allow_incomplete
            ):
                # a provider's stream: aggregated, as --provider auto does
                return _aggregate(args, "auto", source, head, stream)
            if not asked and sniffed.wrapped is not None:
                return _fail(
                    f"{source}: the lines are records that hold provider events: "
                    f"{sniffed.wrapped} (--policy merges them as JSON values)"
                )
            if not asked:
                _check_options(args, options)  # --strict, say, is the stream's option too
            result = merge_all(counted(read_json_lines(_lines(head, stream), source)), **options)
    except InputError as exc:
        if not read and exc.line is not None and sniffed.compressed is not None:
            return _fail(f"{source}: {sniffed.compressed}")
        if not read and exc.line == 1 and _one_document(head):
            return _fail(
                f"{source}: one JSON document over several lines, not one JSON value a line: "
                "merge reads JSON Lines, SSE or a JSON array of a provider's events (jq -c "
                "writes a document on one line)"
            )
        return _fail(str(exc))
    except (MergeError, MergeConflictError) as exc:  # --policy langchain: LangChain's class
        return _fail(f"{source}: cannot merge: {exc}")
    if not read:
        # merge_all of nothing is None; printed, `null` would pass for a merged empty input
        return _fail(f"{source}: no JSON value to merge: the input is empty or blank")
    return _write_stdout(dump_json(result, args.indent))
