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
import gzip
import json
import lzma
import os
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

from . import PROVIDERS, _backend
from .cli import EXIT_DATA, EXIT_OK, _fail, _non_negative

__all__ = ["add_parser", "run"]

#: The bundled log and how its records are read.
EXAMPLE = Path(__file__).resolve().parent.parent.parent / "examples" / "gateway.jsonl.zst"
EXAMPLE_OPTIONS = {"group_by": "stream_id", "event": "event"}


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
    parser.add_argument("--group-by", default=None, metavar="auto|file|PATH")
    parser.add_argument("--event", default=None, metavar="PATH")
    parser.add_argument("--provider", choices=("auto", *PROVIDERS), default="auto", metavar="NAME")
    parser.add_argument(
        "--jobs", type=_non_negative, default=0, metavar="N", help="Rust threads (0: all cores)"
    )
    parser.add_argument(
        "--repeat", type=_non_negative, default=1, metavar="N", help="best of N runs (default 1)"
    )
    parser.set_defaults(parser=parser)
    return parser


def run(args: argparse.Namespace) -> int:
    """Run ``fastmerge bench``."""
    if args.log is None:
        if not EXAMPLE.exists():
            return _fail(
                "no LOG given, and the bundled example log (examples/gateway.jsonl.zst of a "
                "checkout) is not beside this installation: pass LOG"
            )
        path = str(EXAMPLE)
        options: dict[str, Any] = {**EXAMPLE_OPTIONS}
    else:
        path = args.log
        options = {"group_by": "auto", "event": None}
    if args.group_by is not None:
        options["group_by"] = args.group_by
    if args.event is not None:
        options["event"] = args.event
    options["provider"] = args.provider
    try:
        built = hasattr(_backend.load("rust"), "BatchCore")
    except ImportError:
        built = False
    if not built:
        return _fail(
            "the Rust extension (fastmerge._fastmerge with BatchCore) is not built, so there "
            "is nothing to compare the twin with: build it (pip install ., or make build-prod "
            "in a checkout) and run fastmerge bench again"
        )
    from .errors import MergeError

    repeat = max(args.repeat, 1)
    # loaded before the clock starts: the runs time reading the log, not importing
    rust_batch, twin_batch = (_backend._copy("batch", name) for name in ("rust", "python"))
    try:
        rust_s, rust_out = _best(repeat, lambda: _records(rust_batch, path, options, args.jobs))
        twin_s, twin_out = _best(repeat, lambda: _records(twin_batch, path, options, 1))
        naive_s, naive_out = _best(repeat, lambda: naive_reduce(path, options))
    except (MergeError, OSError) as exc:
        return _fail(str(exc))
    results = rust_out
    # compared after the clock: the runs time the merge, not writing records
    records = [rust_batch.json_line(r.record()) for r in results]
    events, reduced = naive_out
    if [twin_batch.json_line(r.record()) for r in twin_out] != records:
        return _fail("the Rust engine and the twin disagree: please report it with the log")
    compared, mismatch = _agree(results, reduced)
    if mismatch is not None:
        return _fail(f"the naive reduce and the engines disagree on stream {mismatch!r}")
    size = os.path.getsize(path)
    jobs = args.jobs or os.cpu_count() or 1
    rows = [
        (f"rust (BatchCore, {jobs} jobs)", rust_s),
        ("twin (pure Python)", twin_s),
        ("naive reduce (json.loads + join)", naive_s),
    ]
    streams = f"{len(records)} stream{'s' * (len(records) != 1)}"
    shown = args.log or "the bundled examples/gateway.jsonl.zst"
    print(f"fastmerge bench: {shown} ({size / 1e6:.1f} MB, {events} events, {streams})")
    print("| engine | time | events/s | time / rust |")
    print("|---|---:|---:|---:|")
    for name, seconds in rows:
        rate = events / seconds if seconds else float("inf")
        print(f"| {name} | {_time(seconds)} | {rate:,.0f} | {seconds / rust_s:.1f}× |")
    print(
        f"agree: rust and twin give the same {len(records)} records; the naive reduce gives "
        f"the same text and tool-call arguments for {compared} of {len(reduced)} streams"
        + ("" if compared == len(reduced) else " (the others are of a format it cannot read)")
    )
    return EXIT_OK if compared or not reduced else EXIT_DATA


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
    if data.startswith(b"\x28\xb5\x2f\xfd"):
        import zstandard

        out: bytes = zstandard.ZstdDecompressor().decompressobj().decompress(data)
        return out
    return data


def _get(value: Any, dotted: str | None) -> Any:
    for segment in (dotted or "").split(".") if dotted else ():
        value = value.get(segment) if isinstance(value, dict) else None
    return value


def naive_reduce(path: str, options: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """(events, key -> {choice: [text, {call index: arguments}]}) the way a hand-written
    script merges a log: parse each line, group it, join the fragments."""
    group_by = options["group_by"]
    by_file = group_by in ("auto", "file")
    streams: dict[str, Any] = defaultdict(lambda: defaultdict(lambda: ["", defaultdict(str)]))
    count = 0
    for line in _text(path).splitlines():
        if line.startswith(b"data:"):
            line = line[5:]
        if not line.strip() or line.strip() == b"[DONE]":
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        key = path if by_file else _get(record, group_by)
        event = record if by_file or not options["event"] else _get(record, options["event"])
        if isinstance(event, str):
            if event.strip() == "[DONE]":
                continue
            event = json.loads(event)
        if key is None or not isinstance(event, dict):
            continue
        count += 1
        _fold(streams[str(key)], event)
    return count, streams


def _fold(stream: Any, event: dict[str, Any]) -> None:
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


def _agree(results: list[Any], reduced: dict[str, Any]) -> tuple[int, str | None]:
    """How many streams the naive reduce read that agree with the engine's results, or the
    first key that does not."""
    engine: dict[str, Any] = defaultdict(lambda: defaultdict(lambda: ["", []]))
    for result in results:
        for position, message in enumerate(result.messages or ()):
            choice = message.choice_index if message.choice_index is not None else position
            state = engine[result.key][choice]
            state[0] += message.content if isinstance(message.content, str) else ""
            state[1].extend(call.arguments for call in message.tool_calls or ())
    compared = 0
    for key, choices in reduced.items():
        if not any(text or calls for text, calls in choices.values()):
            continue  # nothing the reduce could read (another wire format)
        mine = {
            c: (text, [calls[i] for i in sorted(calls)]) for c, (text, calls) in choices.items()
        }
        theirs = {c: (text, calls) for c, (text, calls) in engine[key].items()}
        if mine != theirs:
            return compared, key
        compared += 1
    return compared, None
