"""Generate an interleaved gateway log of OpenAI Chat streams, the input of ``fastmerge batch``.

One JSON line per record, in the shape a gateway or proxy logs a streamed response::

    {"ts": "2026-11-30T12:00:00.000123Z", "stream_id": "req-000042", "seq": 7, "event": {...}}

``event`` is the ``chat.completion.chunk`` the provider sent (the ``data:`` payload of its SSE
stream), in the shape of a current ``stream_options.include_usage`` stream: the role chunk,
token-sized ``content`` deltas (every tenth stream: two parallel tool calls instead), the
``finish_reason`` chunk, then the usage-only chunk with ``choices: []``, which ends the stream.
``seq`` numbers a stream's records from 0 and ``ts`` grows with the line, so ``--order-by seq``
and ``--order-by ts`` give file order. About ``--concurrent`` streams are in flight at once (a
stream starts when one ends), as on a gateway, so a reader holds only those open.

With ``--short N``, the log is instead N short records (about 175 bytes): each stream a role
chunk, one-word text deltas and a finish chunk, with no usage chunk, as many small gateways
log them; the benchmarks' small-record log.

Everything comes from a fixed seed: the same arguments give the same bytes.

    python tools/gen_log.py --streams 2000 --size-mb 200 -o /tmp/gateway.jsonl
    python tools/gen_log.py --streams 2000 --short 200000 -o /tmp/short.jsonl
    python tools/gen_log.py --streams 200 --size-mb 2 --compress zstd -o examples/gateway.jsonl.zst
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import io
import json
import lzma
import random
import sys
from typing import IO, Any, Iterator

WORDS = (
    "the stream of tokens arrives in small pieces and every piece must be kept in order so "
    "that the merged message equals what the model wrote with its usage and finish reason"
).split()


def _chunk(stream: int, choices: list[dict[str, Any]], usage: Any = None) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{stream:06d}",
        "object": "chat.completion.chunk",
        "created": 1770933892 + stream,
        "model": "gpt-4.1-2025-04-14",
        "service_tier": "default",
        "system_fingerprint": "fp_de604bd877",
        "choices": choices,
        "usage": usage,
    }


def _choice(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}


def stream_events(stream: int, deltas: int, rng: random.Random) -> list[dict[str, Any]]:
    """The chunks of stream number ``stream``: ``deltas`` content (or arguments) deltas."""
    events = [_chunk(stream, [_choice({"role": "assistant", "content": "", "refusal": None})])]
    if stream % 10 == 9:
        for call in range(2):
            head = {"index": call, "id": f"call_{stream:06d}_{call}", "type": "function"}
            head["function"] = {"name": f"tool_{call}", "arguments": ""}
            events.append(_chunk(stream, [_choice({"tool_calls": [head]})]))
        for i in range(deltas):
            piece = {"index": i % 2, "function": {"arguments": rng.choice(WORDS) + " "}}
            events.append(_chunk(stream, [_choice({"tool_calls": [piece]})]))
        finish = "tool_calls"
    else:
        for _ in range(deltas):
            events.append(_chunk(stream, [_choice({"content": " " + rng.choice(WORDS)})]))
        finish = "stop"
    events.append(_chunk(stream, [_choice({}, finish)]))
    usage = {"prompt_tokens": 57, "completion_tokens": deltas, "total_tokens": 57 + deltas}
    events.append(_chunk(stream, [], usage))
    return events


def records(streams: int, size: int, concurrent: int, seed: int) -> Iterator[bytes]:
    """The log's lines (with their newline): ``streams`` streams, about ``size`` bytes."""
    rng = random.Random(seed)
    # one record is ~330 bytes; spread the size evenly over the streams
    deltas = max(1, size // max(1, streams) // 330 - 3)
    pending = list(range(streams))
    pending.reverse()
    active: list[tuple[str, list[dict[str, Any]], int]] = []
    line = 0
    while pending or active:
        while pending and len(active) < concurrent:
            n = pending.pop()
            active.append((f"req-{n:06d}", stream_events(n, deltas + rng.randrange(-2, 3), rng), 0))
        pick = rng.randrange(len(active))
        key, events, seq = active[pick]
        micros = 123 + line * 37
        minute, second = micros // 60_000_000 % 60, micros // 1_000_000 % 60
        ts = f"2026-11-30T12:{minute:02d}:{second:02d}.{micros % 1_000_000:06d}Z"
        record = {"ts": ts, "stream_id": key, "seq": seq, "event": events[seq]}
        yield json.dumps(record, separators=(",", ":")).encode() + b"\n"
        line += 1
        if seq + 1 == len(events):
            active.pop(pick)
        else:
            active[pick] = (key, events, seq + 1)


def short_records(records_: int, streams: int, concurrent: int, seed: int) -> Iterator[bytes]:
    """``records_`` short records (with their newline) of ``streams`` streams of the same
    length, about ``concurrent`` in flight at once: ``{"stream_id", "seq", "event"}`` with a
    role chunk, one-word text deltas, then the finish chunk."""
    rng = random.Random(seed)
    per = max(3, records_ // max(1, streams))
    pending = list(range(streams))
    pending.reverse()
    active: list[list[int]] = []
    while pending or active:
        while pending and len(active) < concurrent:
            active.append([pending.pop(), 0])
        pick = rng.randrange(len(active))
        stream, seq = active[pick]
        if seq == 0:
            delta: dict[str, Any] = {"role": "assistant", "content": ""}
        elif seq == per - 1:
            delta = {}
        else:
            delta = {"content": " " + rng.choice(WORDS)}
        event = {
            "id": f"chatcmpl-{stream:06d}",
            "object": "chat.completion.chunk",
            "created": 1770933892 + stream,
            "model": "gpt-4o-mini",
            "choices": [
                {"index": 0, "delta": delta, "finish_reason": "stop" if seq == per - 1 else None}
            ],
        }
        record = {"stream_id": f"req-{stream:06d}", "seq": seq, "event": event}
        yield json.dumps(record, separators=(",", ":")).encode() + b"\n"
        active[pick][1] += 1
        if seq + 1 == per:
            active.pop(pick)


def _open(path: str, compress: str | None) -> IO[bytes]:
    raw: IO[bytes] = sys.stdout.buffer if path == "-" else open(path, "wb")
    if compress is None:
        return raw
    if compress == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="wb", mtime=0)  # mtime=0: same bytes each run
    if compress == "bz2":
        return bz2.BZ2File(raw, "wb")
    if compress == "xz":
        return lzma.LZMAFile(raw, "wb")
    import zstandard  # not in the standard library before Python 3.14

    return zstandard.ZstdCompressor().stream_writer(raw, closefd=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--streams", type=int, default=2000, help="streams in the log")
    parser.add_argument(
        "--size-mb", type=float, default=200.0, help="about how many MB the log takes"
    )
    parser.add_argument("--concurrent", type=int, default=64, help="streams in flight at once")
    parser.add_argument(
        "--short",
        type=int,
        metavar="N",
        help="N short text-chunk records instead (the small-record log; --size-mb unused)",
    )
    parser.add_argument("--seed", type=int, default=20261130, help="the random seed")
    parser.add_argument(
        "--compress", choices=("gzip", "zstd", "bz2", "xz"), help="compress the output"
    )
    parser.add_argument("-o", "--output", default="-", help="the file to write ('-': stdout)")
    args = parser.parse_args(argv)
    out = _open(args.output, args.compress)
    buffered = io.BufferedWriter(out, 1 << 20) if args.compress else out  # type: ignore[arg-type]
    if args.short is not None:
        lines = short_records(args.short, args.streams, args.concurrent, args.seed)
    else:
        lines = records(args.streams, int(args.size_mb * 1e6), args.concurrent, args.seed)
    for line in lines:
        buffered.write(line)
    buffered.flush()
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
