"""``fastmerge bench [LOG]``: your own log through the Rust batch engine, the pure-Python twin
and a naive pure-Python reduce, checked to agree, timed, as a table.

The naive reduce is what a user writes by hand: ``json.loads`` each line, group by the key,
join the text deltas and tool-call argument fragments (OpenAI Chat, Anthropic and OpenAI
Responses events; other formats are timed but not compared). It knows nothing of usage,
finish reasons, reasoning or anomalies, so the three are compared on what it can know: per
stream, the text and the arguments of each tool call. The Rust and twin results are also
compared whole, record for record.

A stream the naive reduce reads differently (an Anthropic server tool's input joined as a
tool call's arguments, arguments a Responses server sends whole instead of in deltas) is
counted and named under the table, never the end of the report: only the Rust engine and the
twin disagreeing is an error. The table names the extension's build profile and gives each
engine's best, median and worst of ``--repeat`` rounds; a progress line is drawn on standard
error while it runs, when that is a terminal (as ``fastmerge batch`` draws its bar).

Without LOG it runs the bundled example, ``examples/gateway.jsonl.zst`` of a checkout (200
interleaved OpenAI streams, ``--group-by stream_id --event event``).
"""

from __future__ import annotations

import argparse
import bz2
import contextlib
import gzip
import importlib.util
import json
import lzma
import math
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from .. import PROVIDERS, _backend
from ..errors import MergeError
from ._common import EXIT_OK, PROG, _fail, _non_negative, check_options
from .batch import REDRAW, _Bar, _clear, _draw, _isatty

__all__ = ["add_parser", "run"]

#: The bundled log of a checkout, its copy in the installed package, and how its records
#: are read.
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "gateway.jsonl.zst"
PACKAGED = Path(__file__).resolve().parents[1] / "_data" / "gateway.jsonl.zst"
EXAMPLE_OPTIONS = {"group_by": "stream_id", "event": "event"}
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """The ``bench`` subcommand on ``commands`` (the ``fastmerge`` parser's subparsers)."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "bench",
        help="time your log through the Rust engine, the pure-Python twin and a naive reduce",
        description=(
            "Merge LOG (default: the bundled examples/gateway.jsonl.zst) with the Rust batch "
            "engine, the pure-Python twin and a naive pure-Python reduce (json.loads, group, "
            "join), check that they agree, and print their times, events/s and ratios."
        ),
    )
    parser.add_argument("log", nargs="?", metavar="LOG", help="a log file (as fastmerge batch)")
    parser.add_argument(
        "--group-by",
        default=None,
        metavar="auto|file|PATH",
        help="the stream key in each record, as fastmerge batch (default: one stream a file; "
        "the bundled log: stream_id)",
    )
    parser.add_argument(
        "--event",
        default=None,
        metavar="PATH",
        help="the provider event inside each record, as fastmerge batch (the bundled log: event)",
    )
    parser.add_argument(
        "--provider",
        choices=("auto", *PROVIDERS),
        default="auto",
        metavar="NAME",
        help=f"the wire format of the events (auto, {', '.join(PROVIDERS)}; default auto)",
    )
    parser.add_argument(
        "--jobs", type=_non_negative, default=0, metavar="N", help="Rust threads (0: all cores)"
    )
    parser.add_argument(
        "--repeat",
        type=_non_negative,
        default=3,
        metavar="N",
        help="rounds per engine (default 3): the table gives the best, median and worst",
    )
    parser.set_defaults(parser=parser)
    return parser


#: Printed on stderr before timing a debug build of the extension.
DEBUG_WARNING = (
    "warning: the Rust extension is a debug build (make dev / make build-dev): its times are "
    "many times slower than a release build's; build one with make build-prod or pip install ."
)


def _warn(message: str) -> None:
    with contextlib.suppress(OSError):
        sys.stderr.write(f"{PROG}: {message}\n")


def bundled() -> Path | None:
    """The bundled example log: the installed package's copy, or a checkout's
    ``examples/gateway.jsonl.zst``; None when neither is there."""
    for path in (PACKAGED, EXAMPLE):
        if path.is_file():
            return path
    return None


def _is_bundled(path: str) -> bool:
    """Whether ``path`` holds the bundled log (it, or a copy of it)."""
    for example in (PACKAGED, EXAMPLE):
        try:
            if os.path.samefile(path, example):
                return True
            if os.path.getsize(path) == os.path.getsize(example):
                with open(path, "rb") as mine, open(example, "rb") as theirs:
                    if mine.read() == theirs.read():
                        return True
        except OSError:
            continue
    return False


def run(args: argparse.Namespace) -> int:
    """Run ``fastmerge bench``."""
    example = bundled()
    if args.log is None:
        if example is None:
            return _fail(
                "no LOG given, and the bundled example log (examples/gateway.jsonl.zst) is "
                "not beside this installation: pass LOG"
            )
        path = str(example)
    else:
        path = args.log
    # the bundled log is read as its records say, however it is named
    is_example = args.log is None or _is_bundled(args.log)
    options: dict[str, Any] = (
        {**EXAMPLE_OPTIONS} if is_example else {"group_by": "auto", "event": None}
    )
    if args.group_by is not None:
        options["group_by"] = args.group_by
    if args.event is not None:
        options["event"] = args.event
    options["provider"] = args.provider
    from .. import batch

    check_options(args.parser, batch, **options, jobs=args.jobs)
    if not os.path.isfile(path):
        return _fail(f"{path}: not a file: fastmerge bench times one log file")
    try:
        rust = _backend.load("rust")
        built = hasattr(rust, "BatchCore")
    except ImportError:
        built = False
    if not built:
        return _fail(
            "the Rust extension (fastmerge._fastmerge with BatchCore) is not built, so there "
            "is nothing to compare the twin with: build it (pip install ., or make build-prod "
            "in a checkout) and run fastmerge bench again"
        )
    if getattr(rust, "BUILD_PROFILE", None) == "debug":
        _warn(DEBUG_WARNING)
    with tempfile.TemporaryDirectory(prefix="fastmerge-bench-") as tmp:
        plain, note = path, None
        if _zstd_without_zstandard(path):
            # the engine reads zstd itself; the twin and the naive reduce would need zstandard
            plain = os.path.join(tmp, "log")
            try:
                data = rust.read_input(path)
            except MergeError as exc:
                return _fail(str(exc))
            with open(plain, "wb") as file:
                file.write(data)
            note = (
                "note: the twin and the naive reduce read the log as the Rust engine "
                "decompressed it before the clock started (in Python, zstd needs the "
                "'zstandard' package: pip install zstandard)"
            )
        return _bench(args, path, plain, options, note)


def _bench(
    args: argparse.Namespace,
    path: str,
    plain: str,
    options: dict[str, Any],
    note: str | None,
) -> int:
    """Time ``path`` on the Rust engine and ``plain`` (the same log, decompressed when Python
    cannot) on the twin and the naive reduce; print the table."""
    repeat = max(args.repeat, 1)
    # loaded before the clock starts: the runs time reading the log, not importing
    rust_batch, twin_batch = (_backend._copy("batch", name) for name in ("rust", "python"))
    shown = _isatty(sys.stderr)  # the progress line, where fastmerge batch draws its bar
    try:
        rust_s, results = _rounds(
            repeat, "rust", shown, lambda tick: _records(rust_batch, path, options, args.jobs, tick)
        )
        twin_s, twin_out = _rounds(
            repeat, "twin", shown, lambda tick: _records(twin_batch, plain, options, 1, tick)
        )
        naive_s, naive_out = _rounds(
            repeat, "naive reduce", shown, lambda tick: naive_reduce(plain, options, tick)
        )
    except (MergeError, OSError) as exc:
        return _fail(str(exc))
    finally:
        _clear(shown)
    if not any(r.message is not None for r in results):
        # a table of zeros would pass for a timing: an empty or unreadable log is an error
        reason = results[0].error if results else "no stream in the input"
        return _fail(f"{args.log or path}: nothing to time: no stream could be merged ({reason})")
    # compared after the clock: the runs time the merge, not writing records
    records = [rust_batch.json_line(r.record()) for r in results]
    if plain != path:
        # the twin's keys of a stream per file are the file it read: named as the engine's
        twin_out = [_renamed(r, plain, path) for r in twin_out]
    events, reduced, unread = naive_out
    if [twin_batch.json_line(r.record()) for r in twin_out] != records:
        return _fail("the Rust engine and the twin disagree: please report it with the log")
    if plain != path:
        reduced = {path if k == plain else k: v for k, v in reduced.items()}
        unread = {path if k == plain else k for k in unread}
    compared, differ = _agree(results, reduced, unread)
    read = compared + len(differ)
    size = os.path.getsize(path)
    streams = f"{len(records)} stream{'s' * (len(records) != 1)}"
    rounds = f"{repeat} round{'s' * (repeat != 1)} each"
    log = args.log or "the bundled examples/gateway.jsonl.zst"
    print(f"fastmerge bench: {log} ({size / 1e6:.1f} MB, {events} events, {streams}; {rounds})")
    _table(args.jobs, events, [rust_s, twin_s, naive_s if read else None])
    known = _read_keys(reduced, unread)
    left = sorted({r.provider or "no event read" for r in results if r.key not in known})
    same = "the naive reduce gives the same text and tool-call arguments for"
    if not read:
        naive_says = (
            f"the naive reduce cannot read this log ({', '.join(left)}): it joins the text "
            "and tool-call arguments of OpenAI Chat, Anthropic and Responses events given as "
            "strings, as a hand-written script does"
        )
    elif not left:
        naive_says = f"{same} {compared} of {read} streams"
    elif not differ:
        naive_says = f"{same} {compared} streams and cannot read the others ({', '.join(left)})"
    else:
        naive_says = (
            f"{same} {compared} of the {read} streams it reads, and cannot read the others "
            f"({', '.join(left)})"
        )
    print(f"agree: rust and twin give the same {len(records)} records; {naive_says}")
    if read:
        print(f"streams where the naive reduce differs: {_differs(differ)}")
    if note is not None:
        print(note)
    return EXIT_OK


#: The naive reduce's row.
NAIVE = "naive reduce (json.loads + join)"


def _table(jobs: int, events: int, times: list[list[float] | None]) -> None:
    """The Markdown table: per engine, the best, median and worst round, events per second
    and the best time as a multiple of the Rust engine's (``times``: the Rust engine's rounds,
    the twin's, the naive reduce's or None when it read no stream)."""
    profile = getattr(_backend.load("rust"), "BUILD_PROFILE", None) or "unknown"
    names = [
        f"rust (BatchCore, {profile} build, {jobs or os.cpu_count() or 1} jobs)",
        "twin (pure Python)",
        NAIVE,
    ]
    print("| engine | best | median | worst | events/s | best / rust's |")
    print("|---|---:|---:|---:|---:|---:|")
    rust = max(min(times[0] or (1.0,)), 1e-9)  # a clock that read 0: no division by it
    for name, rounds in zip(names, times):
        if rounds is None:
            print(f"| {name} | cannot read this log | – | – | – | – |")
            continue
        best = min(rounds)
        rate = events / best if best else float("inf")
        spread = f"{_time(best)} | {_time(statistics.median(rounds))} | {_time(max(rounds))}"
        print(f"| {name} | {spread} | {rate:,.0f} | {best / rust:.1f}× |")


#: How many of the streams the naive reduce reads differently are named.
NAMED = 5


def _differs(differ: list[tuple[str, str]]) -> str:
    """The count of the streams the naive reduce reads differently, then the first few, each
    with what differs, and why it can."""
    if not differ:
        return "0"
    named = ", ".join(f"{key!r} ({what})" for key, what in differ[:NAMED])
    more = f", and {len(differ) - NAMED} more" if len(differ) > NAMED else ""
    return (
        f"{len(differ)}: {named}{more} (it joins every fragment it sees; the engines follow "
        "each provider's rules, e.g. a server tool's input is no tool call's arguments, and "
        "arguments sent whole count)"
    )


def _zstd_without_zstandard(path: str) -> bool:
    """Whether ``path`` is zstd-compressed and Python has no ``zstandard`` to read it."""
    try:
        with open(path, "rb") as file:
            if file.read(4) != ZSTD_MAGIC:
                return False
    except OSError:
        return False
    return importlib.util.find_spec("zstandard") is None


def _renamed(result: Any, old: str, new: str) -> Any:
    if result.key == old:
        result.key = new
    return result


#: What draws one progress line on standard error (or None: no progress shown).
Tick = Optional[Callable[[str], None]]


def _rounds(
    repeat: int, engine: str, shown: bool, work: Callable[[Tick], Any]
) -> tuple[list[float], Any]:
    """The time of each of ``repeat`` runs of ``work``, and the last run's output. With
    ``shown``, ``work`` is given a function that draws its progress on standard error, after
    the engine and the round."""
    times = []
    out: Any = None
    for round_ in range(1, repeat + 1):
        label = f"{engine}, round {round_} of {repeat}: "
        tick: Tick = (lambda line, label=label: _draw(label + line)) if shown else None
        start = time.perf_counter()
        out = work(tick)
        times.append(time.perf_counter() - start)
    return times, out


def _records(
    batch: Any, path: str, options: dict[str, Any], jobs: int, tick: Tick = None
) -> list[Any]:
    """Every stream's result (the merged messages), as a user's loop gets them; with
    ``tick``, polled so that the progress line moves between them (fastmerge batch's bar)."""
    run_ = batch.merge_logs(path, errors="skip", jobs=jobs, **options)
    if tick is None:
        return list(run_)
    bar = _Bar(run_, tick)
    out: list[Any] = []
    with run_:
        while True:
            bar.draw()
            try:
                result = run_.poll(REDRAW)
            except StopIteration:
                return out
            if result is not None:
                out.append(result)


def _time(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    return f"{seconds * 1e3:.1f} ms"


# -- the naive reduce


def _text(path: str) -> bytes:
    """The log's bytes, decompressed with the standard library (zstd with zstandard)."""
    with open(path, "rb") as file:
        data = file.read()
    if data.startswith(b"\x1f\x8b"):
        return gzip.decompress(data)
    if data.startswith(b"BZh"):
        return bz2.decompress(data)
    if data.startswith(b"\xfd7zXZ\x00"):
        return lzma.decompress(data)
    if data.startswith(ZSTD_MAGIC):
        import zstandard

        out: bytes = zstandard.ZstdDecompressor().decompressobj().decompress(data)
        return out
    return data


def _get(value: Any, dotted: str | None) -> Any:
    for segment in (dotted or "").split(".") if dotted else ():
        value = value.get(segment) if isinstance(value, dict) else None
    return value


def naive_reduce(
    path: str, options: dict[str, Any], tick: Tick = None
) -> tuple[int, dict[str, Any], set[str]]:
    """(events, key -> {choice: [text, {call index: arguments}]}, keys it cannot read) the
    way a hand-written script merges a log: parse each line, group it, join the fragments. A
    stream it cannot read (content that is not a string, such as Mistral's typed lists) is
    one of the keys it cannot read, as is one of a format it does not know (Gemini, Bedrock,
    Ollama): never a crash. ``tick`` is given its progress every few thousand lines."""
    group_by = options["group_by"]
    by_file = group_by in ("auto", "file")
    streams: dict[str, Any] = defaultdict(lambda: defaultdict(lambda: ["", defaultdict(str)]))
    known: set[str] = set()
    unread: set[str] = set()
    count = 0
    lines = _text(path).splitlines()
    for number, line in enumerate(lines):
        if tick is not None and not number % TICK_LINES:
            tick(f"{number:,} of {len(lines):,} lines ({100 * number // len(lines)}%)")
        if line.startswith(b"data:"):
            line = line[5:]
        if not line.strip() or line.strip() == b"[DONE]":
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, or nested deeper than json reads
            continue
        key = path if by_file else _get(record, group_by)
        event = record if by_file or not options["event"] else _get(record, options["event"])
        if isinstance(event, str):
            if event.strip() == "[DONE]":
                continue
            try:
                event = json.loads(event)
            except (ValueError, RecursionError):
                continue
        key = _key_name(key)
        if key is None or not isinstance(event, dict):
            continue
        count += 1
        try:
            if _fold(streams[key], event):
                known.add(key)
        except (TypeError, AttributeError, ValueError):
            unread.add(key)
    unread.update(key for key in streams if key not in known)
    return count, streams, unread


#: How often the naive reduce draws its progress, in lines.
TICK_LINES = 8192


def _key_name(key: Any) -> str | None:
    """A stream key named as the engines name it, so that their streams are compared by
    the same names: a string as is, a number as Python writes it once read as the engines read
    numbers (an integer past 64 bits is a float); None for what is no key to them (their bad
    line: a boolean, an object, a number past a float's range)."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool) or not isinstance(key, (int, float)):
        return None
    if isinstance(key, int) and -(2**63) <= key < 2**63:
        return str(key)
    try:
        number = float(key)
    except OverflowError:
        return None
    return repr(number) if math.isfinite(number) else None


def _fold(stream: Any, event: dict[str, Any]) -> bool:
    """Join one event's fragments into ``stream``; whether it was of a format the naive
    reduce knows. Raises TypeError (and the like) on a shape it does not expect."""
    kind = event.get("type")
    if isinstance(event.get("choices"), list):  # OpenAI Chat
        for choice in event["choices"]:
            delta = choice.get("delta") or {}
            state = stream[choice.get("index", 0)]
            state[0] += delta.get("content") or ""
            for call in delta.get("tool_calls") or ():
                state[1][call.get("index", 0)] += (call.get("function") or {}).get(
                    "arguments"
                ) or ""
    elif kind == "content_block_delta":  # Anthropic
        delta = event.get("delta") or {}
        if delta.get("type") == "text_delta":
            stream[0][0] += delta.get("text", "")
        elif delta.get("type") == "input_json_delta":
            stream[0][1][event.get("index", 0)] += delta.get("partial_json", "")
    elif kind == "response.output_text.delta":  # OpenAI Responses
        stream[0][0] += event.get("delta", "")
    elif kind == "response.function_call_arguments.delta":
        stream[0][1][event.get("output_index", 0)] += event.get("delta", "")
    elif not isinstance(kind, str) or not kind.startswith(_KNOWN_TYPES):
        return False
    return True


#: The other event types of the formats the naive reduce reads (they carry no fragment).
_KNOWN_TYPES = ("message_", "content_block_", "ping", "response.", "error")


def _read_keys(reduced: dict[str, Any], unread: set[str]) -> set[str]:
    return {key for key in reduced if key not in unread}


def _agree(
    results: list[Any], reduced: dict[str, Any], unread: set[str]
) -> tuple[int, list[tuple[str, str]]]:
    """How many streams the naive reduce read agree with the engine's results, and each key
    that does not, with what differs (``text``, ``tool-call arguments``, or both; the streams
    of ``unread`` are not compared). A choice without text or arguments is none on either
    side: a failed response's empty message is what the naive reduce reads as nothing."""
    engine: dict[str, Any] = defaultdict(lambda: defaultdict(lambda: ["", []]))
    for result in results:
        for position, message in enumerate(result.messages or ()):
            choice = message.choice_index if message.choice_index is not None else position
            state = engine[result.key][choice]
            state[0] += message.content if isinstance(message.content, str) else ""
            state[1].extend(call.arguments for call in message.tool_calls or ())
    compared = 0
    differ: list[tuple[str, str]] = []
    for key, choices in reduced.items():
        if key in unread:
            continue
        mine = _choices(
            (c, text, [calls[i] for i in sorted(calls)]) for c, (text, calls) in choices.items()
        )
        theirs = _choices((c, text, calls) for c, (text, calls) in engine[key].items())
        if mine == theirs:
            compared += 1
            continue
        what = []
        if {c: t for c, (t, _) in mine.items()} != {c: t for c, (t, _) in theirs.items()}:
            what.append("text")
        if {c: a for c, (_, a) in mine.items() if a} != {c: a for c, (_, a) in theirs.items() if a}:
            what.append("tool-call arguments")
        differ.append((key, " and ".join(what) or "choices"))
    return compared, differ


def _choices(choices: Iterable[tuple[Any, str, list[str]]]) -> dict[Any, tuple[str, list[str]]]:
    """Choice -> (text, arguments), without the choices that hold neither."""
    return {c: (text, calls) for c, text, calls in choices if text or calls}
