"""Print the ratio tables of a benchmark run (Markdown, ready for docs/benchmarks.md).

    python benches/report.py --run [JSON]   # time the benchmarks (pytest benches), then report
    python benches/report.py [JSON]         # report a saved run (pytest --benchmark-json=JSON)

JSON defaults to ``.benchmarks/latest.json``. ``make bench`` builds the extension in release
mode and runs ``report.py --run`` with ``FASTMERGE_BACKEND=rust``.

Three sections: the generic merge (test_bench_merge.py), the message chunks
(test_bench_chunks.py: a table per stream, the linearity of each implementation, ``sum`` and
``fold_chunks``, and the issue's speed targets, reported rather than asserted) and the provider
streams (test_bench_streams.py: ``aggregate`` from raw JSON lines against ``orjson.loads`` and
the SDKs' accumulators, a table per stream, the linearity and the issue's targets). All times
are the median of the rounds (openJiuwen's reduce of 20,000 deltas, openJiuwen's and
LangChain's folds of more than 1,000 chunks and the SDK accumulators on 20,000 events run one
round).
A ratio ``a/b`` above 1 means ``b`` is that many times faster. The ratios come from one run, so
they compare the implementations on the same machine at the same moment.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_JSON = ROOT / ".benchmarks" / "latest.json"
IMPLS = ("rust", "twin", "openjiuwen")
#: The benchmark kinds with their own sections (the generic merge is every other kind).
OTHER_KINDS = ("chunks", "streams", "reads")


def run_benchmarks(json_path: Path, extra: list[str]) -> None:
    """Time every benchmark in ``benches/`` and save pytest-benchmark's JSON to ``json_path``."""
    json_path.parent.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable,
        "-m",
        "pytest",
        str(ROOT / "benches"),
        "-p",
        "no:cacheprovider",
        f"--benchmark-json={json_path}",
        "--benchmark-columns=min,median,mean,rounds",
        "--benchmark-sort=name",
        *extra,
    ]
    print("$", " ".join(command), flush=True)
    subprocess.run(command, cwd=ROOT, check=True)


def load(json_path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    data = json.loads(json_path.read_text("utf-8"))
    return data, data["benchmarks"]


def seconds(value: float | None) -> str:
    if value is None:
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value / 1e-9:.3g} ns"


def ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b == 0:
        return "—"
    r = a / b
    return f"{r:.0f}×" if r >= 100 else f"{r:.3g}×"


def medians(benchmarks: list[dict[str, Any]]) -> dict[tuple[str, str, int], dict[str, float]]:
    """(kind, shape, size) -> impl -> median seconds, for the generic merge."""
    table: dict[tuple[str, str, int], dict[str, float]] = {}
    for bench in benchmarks:
        info = bench.get("extra_info") or {}
        if not {"kind", "shape", "size", "impl"} <= info.keys() or info["kind"] in OTHER_KINDS:
            continue
        key = (info["kind"], info["shape"], int(info["size"]))
        table.setdefault(key, {})[info["impl"]] = bench["stats"]["median"]
    return table


def groups(benchmarks: list[dict[str, Any]]) -> dict[tuple[str, str, int], str]:
    titles: dict[tuple[str, str, int], str] = {}
    for bench in benchmarks:
        info = bench.get("extra_info") or {}
        if {"kind", "shape", "size"} <= info.keys() and info["kind"] not in OTHER_KINDS:
            titles[(info["kind"], info["shape"], int(info["size"]))] = bench["group"]
    return titles


def run_line(data: dict[str, Any]) -> str:
    machine = data.get("machine_info", {})
    commit = data.get("commit_info", {})
    cpu = machine.get("cpu", {}).get("brand_raw") or machine.get("processor") or "?"
    return (
        f"Run {data.get('datetime', '?')} · commit {str(commit.get('id', '?'))[:12]}"
        f"{' (dirty)' if commit.get('dirty') else ''} · Python {machine.get('python_version', '?')}"
        f" · {cpu} · median of the rounds"
    )


def report(data: dict[str, Any], benchmarks: list[dict[str, Any]]) -> str:
    """The generic merge: one row per data set, then the scaling of merge_all."""
    times = medians(benchmarks)
    titles = groups(benchmarks)
    lines: list[str] = []
    if not times:
        return ""
    lines.append(
        "| benchmark | rust | twin | openJiuwen | openJiuwen / rust | openJiuwen / twin "
        "| twin / rust |"
    )
    lines.append("|---|---:|---:|---:|---:|---:|---:|")
    for key in sorted(times, key=lambda k: (k[0] != "merge", k[1], k[2])):
        t = times[key]
        rust, twin, oj = (t.get(name) for name in IMPLS)
        lines.append(
            f"| {titles[key]} | {seconds(rust)} | {seconds(twin)} | {seconds(oj)} "
            f"| {ratio(oj, rust)} | {ratio(oj, twin)} | {ratio(twin, rust)} |"
        )
    sizes = sorted({size for (kind, _, size) in times if kind == "merge_all"})
    if len(sizes) >= 2:
        small, large = sizes[0], sizes[-1]
        lines.append("")
        lines.append(
            f"Scaling of merge_all: time({large}) / time({small}); linear ≈ {large // small}, "
            f"quadratic ≈ {(large // small) ** 2}."
        )
        lines.append("")
        lines.append("| deltas | rust | twin | openJiuwen |")
        lines.append("|---|---:|---:|---:|")
        for shape in sorted({shape for (kind, shape, _) in times if kind == "merge_all"}):
            a = times.get(("merge_all", shape, small), {})
            b = times.get(("merge_all", shape, large), {})
            cells = " | ".join(ratio(b.get(name), a.get(name)) for name in IMPLS)
            lines.append(f"| {shape} | {cells} |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Message chunks (test_bench_chunks.py)

#: The chunk streams in report order, with what one chunk holds.
STREAMS = {
    "text": "token-sized text deltas (4 chars)",
    "text40": "text deltas of 40 chars",
    "logprobs": "token deltas, each with a logprobs entry",
    "reasoning_then_text": "reasoning deltas, then text deltas (4 chars)",
    "tool_calls": "fragments of 3 parallel tool calls, round-robin (4-char arguments)",
    "text_cycled": "token-sized text deltas, 1,000 chunk objects added again and again",
}
CHUNK_IMPLS = ("rust", "twin", "openjiuwen", "langchain")
CHUNK_LABELS = {
    "rust": "rust",
    "twin": "twin",
    "openjiuwen": "openJiuwen",
    "langchain": "LangChain",
}

ChunkKey = tuple[str, int, str, str]  # shape, size, impl, fold ("loop", "sum", "fold_chunks")


def chunk_medians(benchmarks: list[dict[str, Any]]) -> dict[ChunkKey, float]:
    """(shape, size, impl, fold) -> median seconds of the chunk benchmarks."""
    table: dict[ChunkKey, float] = {}
    for bench in benchmarks:
        info = bench.get("extra_info") or {}
        if info.get("kind") != "chunks":
            continue
        key = (info["shape"], int(info["size"]), info["impl"], info.get("fold", "loop"))
        table[key] = bench["stats"]["median"]
    return table


def per_fold(value: float | None, size: int) -> str:
    """``time (time per +)``: a fold of ``size`` chunks makes ``size - 1`` additions."""
    if value is None:
        return "—"
    return f"{seconds(value)} ({seconds(value / max(size - 1, 1))}/+)"


def chunk_report(benchmarks: list[dict[str, Any]]) -> str:
    """One table per stream (time per fold and per ``+``, the ratios), the linearity of each
    implementation, ``sum`` / ``fold_chunks``, and the issue's targets."""
    times = chunk_medians(benchmarks)
    if not times:
        return ""

    def t(shape: str, size: int, impl: str, fold: str = "loop") -> float | None:
        return times.get((shape, size, impl, fold))

    shapes = [s for s in STREAMS if any(k[0] == s for k in times)]
    shapes += sorted({k[0] for k in times} - set(shapes))
    sizes = sorted({k[1] for k in times})
    lines = [
        "Folding a stream of chunk objects with `acc = acc + chunk` in a Python loop, then reading"
        " the checked fields once (the chunks are built before timing). Cells: time per fold"
        " (time per `+`). openJiuwen and LangChain above 1,000 chunks: one round.",
    ]
    header = (
        "| chunks | rust | twin | openJiuwen | LangChain | openJiuwen / rust "
        "| openJiuwen / twin | LangChain / rust | twin / rust |"
    )
    for shape in shapes:
        lines += ["", f"**{shape}**: {STREAMS.get(shape, shape)}", "", header]
        lines.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for size in sizes:
            rust, twin, oj, lc = (t(shape, size, impl) for impl in CHUNK_IMPLS)
            if rust is None and twin is None and oj is None and lc is None:
                continue
            cells = " | ".join(per_fold(v, size) for v in (rust, twin, oj, lc))
            lines.append(
                f"| {size:,} | {cells} | {ratio(oj, rust)} | {ratio(oj, twin)} "
                f"| {ratio(lc, rust)} | {ratio(twin, rust)} |"
            )
    if len(sizes) >= 2:
        small, large = min(sizes), max(sizes)
        lines += [
            "",
            f"Linearity: time({large:,}) / time({small:,}) of the same-sized chunks; "
            f"linear ≈ {large // small}, quadratic ≈ {(large // small) ** 2}.",
            "",
            "| stream | rust | twin | openJiuwen | LangChain |",
            "|---|---:|---:|---:|---:|",
        ]
        for shape in shapes:
            if shape == "text_cycled":
                continue
            cells = " | ".join(
                ratio(t(shape, large, impl), t(shape, small, impl)) for impl in CHUNK_IMPLS
            )
            lines.append(f"| {shape} | {cells} |")
        if "text_cycled" in shapes:
            cells = " | ".join(
                ratio(t("text_cycled", large, impl), t("text", small, impl)) for impl in CHUNK_IMPLS
            )
            lines.append(
                f"| text, {small:,} chunk objects repeated to {large:,} (inputs stay in cache) "
                f"| {cells} |"
            )
    folds = sorted({(k[0], k[1]) for k in times if k[3] != "loop"})
    if folds:
        lines += [
            "",
            "The Rust backend's fold of the same chunks three ways:",
            "",
            "| chunks | `+` in a loop | `sum(chunks)` | `fold_chunks(chunks)` |",
            "|---|---:|---:|---:|",
        ]
        for shape, size in folds:
            cells = " | ".join(
                per_fold(t(shape, size, "rust", fold), size)
                for fold in ("loop", "sum", "fold_chunks")
            )
            lines.append(f"| {shape} × {size:,} | {cells} |")
    lines += ["", *chunk_targets(t, shapes, sizes)]
    return "\n".join(lines)


def chunk_targets(t: Callable[..., float | None], shapes: list[str], sizes: list[int]) -> list[str]:
    """The issue's targets for the chunk classes, against this run (a report, not a test)."""
    small, large = (min(sizes), max(sizes)) if sizes else (1_000, 20_000)
    rows: list[tuple[str, float | None, float, bool]] = []  # what, measured, target, at most

    def speedup(impl: str, shape: str, size: int, target: float) -> None:
        fast, slow = t(shape, size, impl), t(shape, size, "openjiuwen")
        measured = None if fast is None or slow is None or fast == 0 else slow / fast
        what = f"{CHUNK_LABELS[impl]} vs openJiuwen, {shape} × {size:,}: openJiuwen / {impl}"
        rows.append((what, measured, target, False))

    speedup("rust", "text", 1_000, 20)
    speedup("rust", "text40", 20_000, 300)
    speedup("twin", "text", 1_000, 3)
    speedup("twin", "text40", 20_000, 30)
    for impl in ("rust", "twin"):
        worst: tuple[float, str] | None = None
        for shape in shapes:
            a, b = t(shape, small, impl), t(shape, large, impl)
            if a and b is not None and (worst is None or b / a > worst[0]):
                worst = (b / a, shape)
        what = f"{CHUNK_LABELS[impl]} linearity, time({large:,}) / time({small:,}), worst stream"
        if worst is not None:
            what += f" ({worst[1]})"
        rows.append((what, None if worst is None else worst[0], 25, True))
    lines = ["Targets of the issue (reported, not asserted):", "", "| target | measured | |"]
    lines.append("|---|---:|---|")
    for what, measured, target, at_most in rows:
        goal = f"≤ {target:g}" if at_most else f"≥ {target:g}×"
        if measured is None:
            verdict, shown = "not measured", "—"
        else:
            met = measured <= target if at_most else measured >= target
            verdict = "met" if met else "**missed**"
            shown = f"{measured:.3g}" if at_most else ratio(measured, 1.0)
        lines.append(f"| {what} {goal} | {shown} | {verdict} |")
    return lines


# ---------------------------------------------------------------------------------------------
# Provider streams (test_bench_streams.py)

#: The streams in report order, with what they hold.
PROVIDER_STREAMS = {
    "openai_text": "OpenAI Chat chunks, token-sized text deltas",
    "openai_logprobs": "OpenAI Chat chunks, token-sized text deltas, each with a logprobs entry"
    " (3 top_logprobs)",
    "openai_tool_calls": "OpenAI Chat chunks, 3 parallel tool calls, argument fragments"
    " round-robin",
    "anthropic": "Anthropic Messages events: a thinking block (thinking deltas, signature), a"
    " text block and a tool_use block (input_json deltas)",
}
#: The implementations in column order, with their column titles.
STREAM_LABELS = {
    "rust": "rust",
    "rust_lines": "rust lines",
    "rust_feed": "rust feed",
    "twin": "twin",
    "orjson": "orjson",
    "orjson_kept": "orjson kept",
    "baseline": "baseline",
    "openai": "openai",
    "anthropic": "anthropic",
    "litellm": "LiteLLM",
}
#: Compared with the fast path in the ratio columns (``impl / rust``).
STREAM_RATIOS = (
    "rust_lines", "twin", "orjson", "orjson_kept", "baseline", "openai", "anthropic", "litellm"
)  # fmt: skip

StreamKey = tuple[str, int, str]  # shape, size, impl
#: The largest size of the linearity tables (the on-demand 200,000-event stream is left out).
LINEAR_MAX = 20_000


def stream_medians(
    benchmarks: list[dict[str, Any]],
) -> tuple[dict[StreamKey, float], dict[tuple[str, int], int]]:
    """(shape, size, impl) -> median seconds, and (shape, size) -> bytes of the stream."""
    table: dict[StreamKey, float] = {}
    sizes: dict[tuple[str, int], int] = {}
    for bench in benchmarks:
        info = bench.get("extra_info") or {}
        if info.get("kind") != "streams":
            continue
        key = (info["shape"], int(info["size"]), info["impl"])
        table[key] = bench["stats"]["median"]
        sizes[key[:2]] = int(info.get("bytes", 0))
    return table, sizes


def per_event(value: float | None, size: int) -> str:
    """``time (time per event)``."""
    if value is None:
        return "—"
    return f"{seconds(value)} ({seconds(value / size)}/ev)"


def stream_report(benchmarks: list[dict[str, Any]]) -> str:
    """One table per stream (time per stream and per event, each implementation / rust), the
    linearity, and the issue's targets."""
    times, nbytes = stream_medians(benchmarks)
    if not times:
        return ""

    def t(shape: str, size: int, impl: str) -> float | None:
        return times.get((shape, size, impl))

    shapes = [s for s in PROVIDER_STREAMS if any(k[0] == s for k in times)]
    shapes += sorted({k[0] for k in times} - set(shapes))
    sizes = sorted({k[1] for k in times})
    lines = [
        "## Provider streams",
        "",
        "Merging a whole stream from its raw JSON lines (one event per line, as the provider "
        "sends it), parse included, then reading the checked fields of the result once (text, "
        "reasoning and signature, tool-call arguments, logprobs). Columns: **rust** "
        "`fastmerge.aggregate(jsonl_bytes, provider)` on the Rust backend (the fast path); **rust"
        " lines** the same from the list of line bytes; **rust feed** only "
        "`Aggregator.feed(jsonl_bytes)` (the Rust parse and merge, no message built); **twin** "
        "`aggregate(jsonl_bytes)` on the pure-Python backend; **orjson** `orjson.loads` of every "
        "line, no merge, each result dropped (the least parsing in Python costs); **orjson kept** "
        "(logprobs only) `orjson.loads` of only the logprobs entries the message keeps, as one "
        "JSON array, GC paused (what making and freeing the objects the benchmark reads costs "
        "orjson, with no envelope and no merge); **baseline** "
        "the least a pure-Python merge does (`json.loads` of every line, list appends, joins); "
        "**openai** the "
        "SDK's `ChatCompletionStreamState.handle_chunk` of "
        "`ChatCompletionChunk.model_validate(orjson.loads(line))`, then `get_final_completion()`;"
        " **anthropic** the SDK's `accumulate_event` of "
        "`TypeAdapter(RawMessageStreamEvent).validate_python(orjson.loads(line))` (the cheapest "
        "correct ways to build the SDKs' objects); **LiteLLM** `stream_chunk_builder` of the "
        "parsed chunks (it drops chat logprobs). Cells: time per stream (time per event); ratios:"
        " that implementation's time / rust, so above 1× means the fast path is that many times "
        "faster. The SDKs on 20,000 events and openai's on logprobs: one round; openai's on "
        "20,000 logprobs chunks: not run (quadratic, most of an hour).",
    ]
    for shape in shapes:
        impls = [i for i in STREAM_LABELS if any(t(shape, n, i) is not None for n in sizes)]
        ratios = [i for i in STREAM_RATIOS if i in impls]
        size_bytes = ", ".join(
            f"{nbytes[(shape, n)] / 1e6:.3g} MB at {n:,}" for n in sizes if nbytes.get((shape, n))
        )
        lines += ["", f"**{shape}**: {PROVIDER_STREAMS.get(shape, shape)} ({size_bytes})", ""]
        lines.append(
            "| events | "
            + " | ".join(STREAM_LABELS[i] for i in impls)
            + "".join(f" | {STREAM_LABELS[i]} / rust" for i in ratios)
            + " |"
        )
        lines.append("|---:" * (1 + len(impls) + len(ratios)) + "|")
        for size in sizes:
            row = [t(shape, size, i) for i in impls]
            if all(v is None for v in row):
                continue
            rust = t(shape, size, "rust")
            cells = " | ".join(per_event(v, size) for v in row)
            cells += "".join(f" | {ratio(t(shape, size, i), rust)}" for i in ratios)
            lines.append(f"| {size:,} | {cells} |")
    lines += ["", *parse_table(t, shapes, sizes)]
    sizes = [n for n in sizes if n <= LINEAR_MAX]
    if len(sizes) >= 2:
        small, large = min(sizes), max(sizes)
        linear = ("rust", "rust_lines", "rust_feed", "twin", "orjson")
        lines += [
            "",
            f"Linearity: time({large:,}) / time({small:,}); linear ≈ {large // small}.",
            "",
            "| stream | " + " | ".join(STREAM_LABELS[i] for i in linear) + " |",
            "|---" + "|---:" * len(linear) + "|",
        ]
        for shape in shapes:
            cells = " | ".join(ratio(t(shape, large, i), t(shape, small, i)) for i in linear)
            lines.append(f"| {shape} | {cells} |")
    lines += ["", *stream_targets(t, shapes, sizes)]
    return "\n".join(lines)


def parse_table(
    t: Callable[[str, int, str], float | None], shapes: list[str], sizes: list[int]
) -> list[str]:
    """The fast path against parsing alone: rust, ``orjson.loads`` of the lines, the
    pure-Python baseline, and rust's time over each (below 1× the fast path is faster)."""
    lines = [
        "`aggregate(bytes)` against parsing alone (rust / orjson ≤ 1× and rust / baseline < 1×: "
        "merging from bytes costs less than parsing the lines in Python):",
        "",
        "| stream | events | rust | orjson | baseline | rust / orjson | rust / baseline |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for shape in shapes:
        for size in sizes:
            rust, parse, base = (t(shape, size, i) for i in ("rust", "orjson", "baseline"))
            if rust is None:
                continue
            lines.append(
                f"| {shape} | {size:,} | {seconds(rust)} | {seconds(parse)} | {seconds(base)} "
                f"| {ratio(rust, parse)} | {ratio(rust, base)} |"
            )
    kept = [(s, n) for s in shapes for n in sizes if t(s, n, "orjson_kept") is not None]
    if kept:
        lines += [
            "",
            "What the message keeps costs orjson alone (**orjson kept**: only the logprobs "
            "entries, as one array, GC paused; **orjson**: every line, each result dropped):",
            "",
            "| stream | events | rust | orjson | orjson kept | orjson kept / orjson "
            "| rust / orjson | rust / orjson kept |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for shape, size in kept:
            rust, parse, own = (t(shape, size, i) for i in ("rust", "orjson", "orjson_kept"))
            lines.append(
                f"| {shape} | {size:,} | {seconds(rust)} | {seconds(parse)} | {seconds(own)} "
                f"| {ratio(own, parse)} | {ratio(rust, parse)} | {ratio(rust, own)} |"
            )
    return lines


def reads_report(benchmarks: list[dict[str, Any]]) -> str:
    """One read of a large field of a complete message (test_bench_reads.py)."""
    rows: dict[str, dict[str, float]] = {}
    titles: dict[str, str] = {}
    for bench in benchmarks:
        info = bench.get("extra_info") or {}
        if info.get("kind") != "reads":
            continue
        rows.setdefault(info["shape"], {})[info["impl"]] = bench["stats"]["median"]
        titles[info["shape"]] = bench["group"]
    if not rows:
        return ""
    lines = ["## Reads", "", "| read | rust | twin | twin / rust |", "|---|---:|---:|---:|"]
    for shape, t in sorted(rows.items()):
        rust, twin = t.get("rust"), t.get("twin")
        lines.append(
            f"| {titles[shape]} | {seconds(rust)} | {seconds(twin)} | {ratio(twin, rust)} |"
        )
    return "\n".join(lines)


def stream_targets(
    t: Callable[[str, int, str], float | None], shapes: list[str], sizes: list[int]
) -> list[str]:
    """The issue's targets for the fast path, against this run (a report, not a test)."""
    rows: list[tuple[str, float | None, float, bool]] = []  # what, measured, target, at most
    for shape in shapes:
        for size in sizes:
            rust, parse = t(shape, size, "rust"), t(shape, size, "orjson")
            measured = None if rust is None or parse is None or rust == 0 else parse / rust
            what = f"rust faster than `orjson.loads` of the lines alone, {shape} × {size:,}"
            rows.append((what + ": orjson / rust", measured, 1, False))
            base = t(shape, size, "baseline")
            measured = None if rust is None or base is None or rust == 0 else base / rust
            what = f"rust faster than the pure-Python baseline, {shape} × {size:,}"
            rows.append((what + ": baseline / rust", measured, 1, False))
    for shape in shapes:
        for size in sizes:
            rust, sdk = t(shape, size, "rust"), t(shape, size, "openai")
            if sdk is None and not shape.startswith("openai"):
                continue
            measured = None if rust is None or sdk is None or rust == 0 else sdk / rust
            what = f"rust vs openai's ChatCompletionStreamState, {shape} × {size:,}"
            rows.append((what + ": openai / rust", measured, 30, False))
    sizes = [n for n in sizes if n <= LINEAR_MAX]
    if len(sizes) >= 2:
        small, large = min(sizes), max(sizes)
        for shape in shapes:
            a, b = t(shape, small, "rust"), t(shape, large, "rust")
            measured = None if a is None or b is None or a == 0 else b / a
            what = f"rust linear, {shape}: time({large:,}) / time({small:,})"
            rows.append((what, measured, 25, True))
    lines = ["Targets of the issue (reported, not asserted):", "", "| target | measured | |"]
    lines.append("|---|---:|---|")
    for what, measured, target, at_most in rows:
        goal = f"≤ {target:g}" if at_most else f"≥ {target:g}×"
        if measured is None:
            verdict, shown = "not measured", "—"
        else:
            met = measured <= target if at_most else measured >= target
            verdict = "met" if met else "**missed**"
            shown = f"{measured:.3g}" if at_most else ratio(measured, 1.0)
        lines.append(f"| {what} {goal} | {shown} | {verdict} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("json", nargs="?", type=Path, default=DEFAULT_JSON)
    parser.add_argument("--run", action="store_true", help="time the benchmarks first")
    args, extra = parser.parse_known_args(argv)
    if extra and not args.run:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.run:
        run_benchmarks(args.json, extra)
    data, benchmarks = load(args.json)
    print()
    print(f"# fastmerge benchmark ratios ({os.path.relpath(args.json, ROOT)})")
    print()
    print(run_line(data))
    sections = (
        report(data, benchmarks),
        chunk_report(benchmarks),
        stream_report(benchmarks),
        reads_report(benchmarks),
    )
    for section in sections:
        if section:
            print()
            print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
