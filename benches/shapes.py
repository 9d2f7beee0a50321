"""One stream, one thing varied at a time: does a shape fall off the fast path?

    python benches/shapes.py                              # every provider (release build)
    python benches/shapes.py --provider openai-chat --repeat 21
    python benches/shapes.py --json > shapes.json

For each provider, two real corpus streams (a longer one and a short one, ``_shapes.BASES``),
each written as the baseline (the recorded events as compact JSON lines) and as every
variation of ``_shapes.variations``: OpenAI Chat without ``role`` in the first delta, with the
``finish_reason`` on the last content chunk, without the usage chunk, without ``logprobs:
null``, without ``system_fingerprint``, with a gateway's fields (``provider``,
``x_request_id``, ``usage: null`` on every chunk), with today's ``service_tier`` /
``obfuscation``; Anthropic without ``ping``, without ``usage`` in ``message_delta``; Responses
without ``sequence_number``, ``obfuscation`` or ``logprobs``; Gemini with ``usageMetadata`` on
the last chunk only, without ``modelVersion`` / ``responseId``, as one JSON array; Bedrock
without the ``p`` padding, without metrics, without the metadata event; and for every provider
keys sorted, unknown extra keys, Python's ``json.dumps`` spacing, ``\\u`` escapes and SSE
framing. A variation that leaves a stream's bytes as they were (no non-ASCII text to escape,
keys already sorted) is not a row.

Every row's message is checked against the baseline's before timing (equal but for the fields
the variation changes, ``_shapes.check``). All rows of one stream are timed side by side in one
run (interleaved, the **minimum** of ``--repeat`` samples, each sample at least a millisecond):
``aggregate(bytes, provider)``, its ratio to the fastest row of the stream, and to
``orjson.loads`` of the row's own lines.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable

import orjson
from _corpus import CORPUS, orjson_lines, settle, side_by_side
from _shapes import BASES, Variation, build, check, variations
from corpus import aggregate_of, header

#: What ``shapes.py`` and its smoke test hold of one row: the variation, bytes and lines.
Row = tuple[Variation, bytes, list[bytes]]


def base_events(provider: str, name: str) -> list[dict[str, Any]]:
    folder = BASES[provider][0]
    data = (CORPUS / folder / f"{name}.jsonl").read_bytes()
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def rows_of(provider: str, name: str) -> list[Row]:
    """The baseline and the variations that change the stream's bytes."""
    events = base_events(provider, name)
    rows: list[Row] = []
    for variation in variations(provider):
        data, lines = build(events, variation, provider)
        if rows and data == rows[0][1]:
            continue
        rows.append((variation, data, lines))
    return rows


def checked(provider: str, rows: list[Row], aggregate: Callable[..., Any]) -> None:
    """Every row's message equals the baseline's but for what its variation changes."""
    base = aggregate(rows[0][1], provider)
    for variation, data, _ in rows[1:]:
        wrong = check(base, aggregate(data, provider), variation)
        if wrong:
            raise AssertionError(f"{provider}: {variation.name!r} changes {', '.join(wrong)}")


def measure(
    provider: str, name: str, aggregate: Callable[..., Any], repeat: int, stat: str
) -> list[dict[str, Any]]:
    rows = rows_of(provider, name)
    checked(provider, rows, aggregate)
    calls: dict[str, Callable[[], Any]] = {}
    for i, (_, data, lines) in enumerate(rows):
        calls[f"{i} orjson"] = lambda lines=lines: orjson_lines(lines)
        calls[f"{i} bytes"] = lambda data=data: aggregate(data, provider)
    settle()
    seconds = side_by_side(calls, repeat, stat)
    fastest = min(seconds[f"{i} bytes"] for i in range(len(rows)))
    out = []
    for i, (variation, _, lines) in enumerate(rows):
        t = seconds[f"{i} bytes"]
        out.append(
            {
                "provider": provider,
                "stream": name,
                "shape": variation.name,
                "events": len(lines),
                "seconds": t,
                "orjson_seconds": seconds[f"{i} orjson"],
                "x_fastest": t / fastest,
                "x_orjson": t / seconds[f"{i} orjson"],
            }
        )
    return out


def table(rows: list[dict[str, Any]]) -> str:
    lines = []
    stream = None
    for r in rows:
        if r["stream"] != stream:
            stream = r["stream"]
            lines += [
                "",
                f"**{r['provider']}: {stream}** ({r['events']} events)",
                "",
                "| shape | aggregate(bytes) | × fastest shape | × orjson |",
                "|---|---:|---:|---:|",
            ]
        lines.append(
            f"| {r['shape']} | {r['seconds'] * 1e6:.1f} µs | {r['x_fastest']:.2f}× "
            f"| {r['x_orjson']:.2f}× |"
        )
    worst = max(rows, key=lambda r: r["x_fastest"])
    lines += [
        "",
        f"Slowest shape against its stream's fastest: {worst['x_fastest']:.2f}× "
        f"({worst['provider']}: {worst['stream']}, {worst['shape']}).",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--provider", choices=tuple(BASES), help="one provider (default: all)")
    parser.add_argument("--repeat", type=int, default=9, help="samples per row (default 9)")
    parser.add_argument("--stat", choices=("min", "median"), default="min")
    parser.add_argument("--backend", choices=("rust", "python"), default="rust")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    aggregate = aggregate_of(args.backend)
    rows = []
    for provider, (_, names) in BASES.items():
        if args.provider in (None, provider):
            for name in names:
                rows += measure(provider, name, aggregate, args.repeat, args.stat)
    if args.json:
        out = {"backend": args.backend, "repeat": args.repeat, "stat": args.stat}
        print(json.dumps({**out, "rows": rows}, indent=1))
        return 0
    print(header(args.backend, args.repeat, args.stat))
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
