"""Every recorded stream of ``tests/corpus``: ``aggregate`` beside ``orjson.loads`` of its lines.

    python benches/corpus.py      # the whole corpus (on a release build: make build-prod)
    python benches/corpus.py --provider gemini --streams --repeat 21
    python benches/corpus.py --json > corpus.json

For each stream (``_corpus.py`` says how the forms are made), timed side by side in one run:

- ``orjson``: ``[orjson.loads(l) for l in lines]`` of its event lines (each result dropped): the
  unit of every ratio;
- ``bytes``: ``fastmerge.aggregate(data_bytes, provider=P)``, the file's bytes;
- ``dicts``: ``aggregate(dicts, provider=P)``, the ``orjson.loads`` dicts made before timing;
- ``sdk``: ``aggregate(sdk_objects, provider=P)``, the provider SDK's event objects made before
  timing (none for Bedrock: botocore yields dicts).

Each form is called in turn, ``--repeat`` times (interleaved: the machine's noise falls on each
alike), each sample lasting at least a millisecond (short streams are called several times);
a stream's time is the **minimum** of its samples (``--stat median`` for the median). Ratios are
fastmerge's time / orjson's time on the same stream. Per provider (its corpus folder): streams,
median events, and for each form the median ratio and the worst one (with its stream); then
an overall row over every stream. Before timing, every form's message is checked against the
one from bytes (``_corpus.check_forms``). ``--backend python`` times the pure-Python twin.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import warnings
from typing import Any, Callable

from _corpus import (
    KINDS,
    NO_SDK,
    CorpusStream,
    check_forms,
    corpus_streams,
    orjson_lines,
    settle,
    side_by_side,
)

#: The timed forms besides orjson, in report order.
FORMS = ("bytes", "dicts", "sdk")


def aggregate_of(backend: str) -> Callable[..., Any]:
    """``aggregate`` of one backend (``rust`` or ``python``), whatever FASTMERGE_BACKEND says."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastmerge import _backend

    return _backend.aggregate_module(backend).aggregate


def calls(stream: CorpusStream, aggregate: Callable[..., Any]) -> dict[str, Callable[[], Any]]:
    """The timed calls on one stream: orjson, then each form it has."""
    provider, lines, data, dicts = stream.provider, stream.lines, stream.data, stream.dicts
    out: dict[str, Callable[[], Any]] = {
        "orjson": lambda: orjson_lines(lines),
        "bytes": lambda: aggregate(data, provider),
        "dicts": lambda: aggregate(dicts, provider),
    }
    objects = stream.sdk
    if objects is not None:
        out["sdk"] = lambda: aggregate(objects, provider)
    return out


def measure(
    streams: list[CorpusStream], aggregate: Callable[..., Any], repeat: int, stat: str
) -> list[dict[str, Any]]:
    """One row per stream: its name, events, seconds per form and ratios to orjson."""
    rows = []
    for stream in streams:
        check_forms(stream, aggregate)
        settle()
        seconds = side_by_side(calls(stream, aggregate), repeat, stat)
        base = seconds["orjson"]
        rows.append(
            {
                "folder": stream.folder,
                "provider": stream.provider,
                "stream": stream.name,
                "events": stream.events,
                "bytes_size": len(stream.data),
                "seconds": seconds,
                "ratio": {form: seconds[form] / base for form in FORMS if form in seconds},
            }
        )
        stream.drop()
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Streams, median events, and per form the median and worst ratio (and its stream)."""
    out: dict[str, Any] = {
        "streams": len(rows),
        "median_events": statistics.median(r["events"] for r in rows),
    }
    for form in FORMS:
        have = [r for r in rows if form in r["ratio"]]
        if not have:
            continue
        worst = max(have, key=lambda r: r["ratio"][form])
        out[form] = {
            "median": statistics.median(r["ratio"][form] for r in have),
            "worst": worst["ratio"][form],
            "worst_stream": f"{worst['folder']}/{worst['stream']}",
        }
    return out


def summaries(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per corpus folder (in the corpus' order), then ``all``."""
    out = {}
    for folder in KINDS:
        mine = [r for r in rows if r["folder"] == folder]
        if mine:
            out[folder] = summary(mine)
    out["all"] = summary(rows)
    return out


def _cell(entry: dict[str, Any] | None, with_name: bool = True) -> tuple[str, str]:
    if entry is None:
        return "–", "–"
    worst = f"{entry['worst']:.2f}×"
    if with_name:
        worst += f" ({entry['worst_stream'].split('/', 1)[1]})"
    return f"{entry['median']:.2f}×", worst


def table(by_folder: dict[str, dict[str, Any]], header: str) -> str:
    lines = [
        header,
        "",
        "| provider | streams | median events | bytes: median | bytes: worst "
        "| dicts: median | dicts: worst | SDK objects: median | SDK objects: worst |",
        "|---|---:|---:|---:|---|---:|---|---:|---|",
    ]
    wire = KINDS
    for folder, s in by_folder.items():
        name = "**all**" if folder == "all" else f"{folder} ({wire[folder]})"
        cells = [c for form in FORMS for c in _cell(s.get(form))]
        lines.append(
            f"| {name} | {s['streams']} | {s['median_events']:g} | " + " | ".join(cells) + " |"
        )
    notes = [f"{f}: no SDK objects, {why}" for f, why in NO_SDK.items() if f in by_folder]
    return "\n".join(lines + [""] + notes)


def stream_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| stream | events | orjson | bytes | dicts | SDK objects |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        cells = [f"{r['ratio'][f]:.2f}×" if f in r["ratio"] else "–" for f in FORMS]
        lines.append(
            f"| {r['folder']}/{r['stream']} | {r['events']} | "
            f"{r['seconds']['orjson'] * 1e6:.1f} µs | " + " | ".join(cells) + " |"
        )
    return "\n".join(lines)


def header(backend: str, repeat: int, stat: str) -> str:
    from fastmerge import __version__

    build = "the pure-Python twin"
    if backend == "rust":
        from fastmerge import _fastmerge

        build = f"{_fastmerge.BUILD_PROFILE} build"
    return (
        f"fastmerge {__version__}, {backend} backend ({build}); each time the {stat} of "
        f"{repeat} interleaved samples"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--provider", help="a corpus folder (gemini) or wire format (openai-chat)")
    parser.add_argument("--repeat", type=int, default=9, help="samples per form (default 9)")
    parser.add_argument("--stat", choices=("min", "median"), default="min")
    parser.add_argument("--backend", choices=("rust", "python"), default="rust")
    parser.add_argument("--streams", action="store_true", help="also a row per stream")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    streams = corpus_streams(args.provider)
    if not streams:
        parser.error(f"no corpus stream of {args.provider!r} (folders: {', '.join(KINDS)})")
    rows = measure(streams, aggregate_of(args.backend), args.repeat, args.stat)
    by_folder = summaries(rows)
    if args.json:
        out = {"backend": args.backend, "repeat": args.repeat, "stat": args.stat}
        print(json.dumps({**out, "summary": by_folder, "streams": rows}, indent=1))
        return 0
    said = header(args.backend, args.repeat, args.stat)
    print(table(by_folder, f"{said}; ratio = fastmerge time / orjson.loads of the same lines"))
    if args.streams:
        print()
        print(stream_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
