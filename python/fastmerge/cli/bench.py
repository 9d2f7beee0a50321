"""``fastmerge bench [LOG]``: your own log through the Rust batch engine, the pure-Python twin
and a naive pure-Python reduce, checked to agree, timed, as a table.

The naive reduce is what a user writes by hand: ``json.loads`` each line, group by the key,
join the text deltas and tool-call argument fragments (OpenAI Chat, Anthropic and OpenAI
Responses events; other formats are timed but not compared). It knows nothing of usage,
finish reasons, reasoning or anomalies, so the three are compared on what it can know: per
stream, the text and the arguments of each tool call. The Rust and twin results are also
compared whole, record for record.

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
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

from .. import PROVIDERS, _backend
from ..errors import MergeError
from ._common import EXIT_OK, PROG, _fail, _non_negative, check_options

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
        "--repeat", type=_non_negative, default=1, metavar="N", help="best of N runs (default 1)"
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
    try:
        rust_s, rust_out = _best(repeat, lambda: _records(rust_batch, path, options, args.jobs))
        twin_s, twin_out = _best(repeat, lambda: _records(twin_batch, plain, options, 1))
        naive_s, naive_out = _best(repeat, lambda: naive_reduce(plain, options))
    except (MergeError, OSError) as exc:
        return _fail(str(exc))
    results = rust_out
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
    compared, mismatch = _agree(results, reduced, unread)
    if mismatch is not None:
        return _fail(f"the naive reduce and the engines disagree on stream {mismatch!r}")
    size = os.path.getsize(path)
    jobs = args.jobs or os.cpu_count() or 1
    streams = f"{len(records)} stream{'s' * (len(records) != 1)}"
    shown = args.log or "the bundled examples/gateway.jsonl.zst"
    print(f"fastmerge bench: {shown} ({size / 1e6:.1f} MB, {events} events, {streams})")
    print("| engine | time | events/s | time / rust |")
    print("|---|---:|---:|---:|")
    naive = "naive reduce (json.loads + join)"
    rows = [
        (f"rust (BatchCore, {jobs} jobs)", rust_s),
        ("twin (pure Python)", twin_s),
        (naive, naive_s if compared else None),
    ]
    for name, seconds in rows:
        if seconds is None:
            print(f"| {name} | cannot read this log | – | – |")
            continue
        rate = events / seconds if seconds else float("inf")
        print(f"| {name} | {_time(seconds)} | {rate:,.0f} | {seconds / rust_s:.1f}× |")
    read = _read_keys(reduced, unread)
    left = sorted({r.provider or "no event read" for r in results if r.key not in read})
    if compared == len(reduced) and not left:
        naive_says = (
            f"the naive reduce gives the same text and tool-call arguments for {compared} of "
            f"{len(reduced)} streams"
        )
    elif compared:
        naive_says = (
            f"the naive reduce gives the same text and tool-call arguments for {compared} "
            f"streams and cannot read the others ({', '.join(left)})"
        )
    else:
        naive_says = (
            f"the naive reduce cannot read this log ({', '.join(left)}): it joins the text "
            "and tool-call arguments of OpenAI Chat, Anthropic and Responses events given as "
            "strings, as a hand-written script does"
        )
    print(f"agree: rust and twin give the same {len(records)} records; {naive_says}")
    if note is not None:
        print(note)
    return EXIT_OK


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


def _best(repeat: int, work: Callable[[], Any]) -> tuple[float, Any]:
    best = float("inf")
    out: Any = None
    for _ in range(repeat):
        start = time.perf_counter()
        out = work()
        best = min(best, time.perf_counter() - start)
    return best, out


def _records(batch: Any, path: str, options: dict[str, Any], jobs: int) -> list[Any]:
    """Every stream's result (the merged messages), as a user's loop gets them."""
    return list(batch.merge_logs(path, errors="skip", jobs=jobs, **options))


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


def naive_reduce(path: str, options: dict[str, Any]) -> tuple[int, dict[str, Any], set[str]]:
    """(events, key -> {choice: [text, {call index: arguments}]}, keys it cannot read) the
    way a hand-written script merges a log: parse each line, group it, join the fragments. A
    stream it cannot read (content that is not a string, such as Mistral's typed lists) is
    one of the keys it cannot read, as is one of a format it does not know (Gemini, Bedrock,
    Ollama): never a crash."""
    group_by = options["group_by"]
    by_file = group_by in ("auto", "file")
    streams: dict[str, Any] = defaultdict(lambda: defaultdict(lambda: ["", defaultdict(str)]))
    known: set[str] = set()
    unread: set[str] = set()
    count = 0
    for line in _text(path).splitlines():
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


def _agree(results: list[Any], reduced: dict[str, Any], unread: set[str]) -> tuple[int, str | None]:
    """How many streams the naive reduce read agree with the engine's results, or the first
    key that does not (the streams of ``unread`` are not compared)."""
    engine: dict[str, Any] = defaultdict(lambda: defaultdict(lambda: ["", []]))
    for result in results:
        for position, message in enumerate(result.messages or ()):
            choice = message.choice_index if message.choice_index is not None else position
            state = engine[result.key][choice]
            state[0] += message.content if isinstance(message.content, str) else ""
            state[1].extend(call.arguments for call in message.tool_calls or ())
    compared = 0
    for key, choices in reduced.items():
        if key in unread:
            continue
        mine = {
            c: (text, [calls[i] for i in sorted(calls)]) for c, (text, calls) in choices.items()
        }
        theirs = {c: (text, calls) for c, (text, calls) in engine[key].items()}
        if mine != theirs:
            return compared, key
        compared += 1
    return compared, None
