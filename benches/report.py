"""Print the ratio tables of a benchmark run (Markdown, ready for the README).

    python benches/report.py --run [JSON]   # time the benchmarks (pytest benches), then report
    python benches/report.py [JSON]         # report a saved run (pytest --benchmark-json=JSON)

JSON defaults to ``.benchmarks/latest.json``. ``make bench`` builds the extension in release
mode and runs ``report.py --run`` with ``FASTMERGE_BACKEND=rust``.

All times are the median of the rounds (openJiuwen's reduce of 20,000 deltas runs one round).
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_JSON = ROOT / ".benchmarks" / "latest.json"
IMPLS = ("rust", "twin", "openjiuwen")


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
    """(kind, shape, size) -> impl -> median seconds."""
    table: dict[tuple[str, str, int], dict[str, float]] = {}
    for bench in benchmarks:
        info = bench.get("extra_info") or {}
        if not {"kind", "shape", "size", "impl"} <= info.keys():
            continue
        key = (info["kind"], info["shape"], int(info["size"]))
        table.setdefault(key, {})[info["impl"]] = bench["stats"]["median"]
    return table


def groups(benchmarks: list[dict[str, Any]]) -> dict[tuple[str, str, int], str]:
    titles: dict[tuple[str, str, int], str] = {}
    for bench in benchmarks:
        info = bench.get("extra_info") or {}
        if {"kind", "shape", "size"} <= info.keys():
            titles[(info["kind"], info["shape"], int(info["size"]))] = bench["group"]
    return titles


def report(data: dict[str, Any], benchmarks: list[dict[str, Any]]) -> str:
    times = medians(benchmarks)
    titles = groups(benchmarks)
    lines: list[str] = []
    machine = data.get("machine_info", {})
    commit = data.get("commit_info", {})
    cpu = machine.get("cpu", {}).get("brand_raw") or machine.get("processor") or "?"
    lines.append(
        f"Run {data.get('datetime', '?')} · commit {str(commit.get('id', '?'))[:12]}"
        f"{' (dirty)' if commit.get('dirty') else ''} · Python {machine.get('python_version', '?')}"
        f" · {cpu} · median of the rounds"
    )
    lines.append("")
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
    print(report(data, benchmarks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
