"""Fold a chunk stream once in a fresh interpreter, the way a program meets it.

    python benches/fresh_fold.py            # the table (Markdown), ratios from this run
    python benches/fresh_fold.py --one IMPL SHAPE SIZE    # one fold, prints its seconds

pytest-benchmark (``test_bench_chunks.py``) builds each stream, collects garbage, then times many
rounds: the heap is settled, which is kind to openJiuwen, whose pydantic objects the garbage
collector otherwise walks again and again while a fold promotes them (its 20,000-chunk fold
takes about 0.6 s settled and over 4 s here). This script times what a program does: build the
chunks, then fold them once with ``acc = acc + chunk``, in a new interpreter per fold (the
median of ``--repeat`` interpreters), so no implementation inherits another's heap.
"""

from __future__ import annotations

import argparse
import random
import statistics
import string
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
IMPLS = ("rust", "twin", "openjiuwen")
STREAMS = {"text": 4, "text40": 40}  # shape -> characters per delta
SIZES = (1_000, 20_000)


def chunk_class(impl: str) -> Any:
    if impl == "openjiuwen":
        sys.path.insert(0, str(ROOT / "tests"))
        from _support.openjiuwen import load

        module = load()
        if module is None:
            raise SystemExit("openjiuwen is not installed")
        return module.AssistantMessageChunk
    from fastmerge import _backend

    return _backend.messages("rust" if impl == "rust" else "python").AssistantMessageChunk


def one(impl: str, shape: str, size: int) -> float:
    """Build ``size`` chunks of ``shape``, fold them once; the fold's seconds."""
    cls = chunk_class(impl)
    rng = random.Random(7)
    width = STREAMS[shape]
    deltas = ["".join(rng.choice(string.ascii_letters) for _ in range(width)) for _ in range(size)]
    chunks = [cls(content=d) for d in deltas]
    start = time.perf_counter()
    acc = chunks[0]
    for chunk in chunks[1:]:
        acc = acc + chunk
    content = acc.content
    seconds = time.perf_counter() - start
    assert content == "".join(deltas), "wrong fold"
    return seconds


def measure(impl: str, shape: str, size: int, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, __file__, "--one", impl, shape, str(size)],
            capture_output=True,
            text=True,
            check=True,
        )
        times.append(float(out.stdout))
    return statistics.median(times)


def fmt(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} µs"


def table(repeat: int) -> str:
    times = {
        (impl, shape, size): measure(impl, shape, size, repeat)
        for shape in STREAMS
        for size in SIZES
        for impl in IMPLS
    }
    lines = [
        f"Folding once in a fresh interpreter (build the chunks, then `acc = acc + chunk`; "
        f"median of {repeat} interpreters):",
        "",
        "| stream | rust | twin | openJiuwen | openJiuwen / rust | openJiuwen / twin |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for shape in STREAMS:
        for size in SIZES:
            rust, twin, oj = (times[(impl, shape, size)] for impl in IMPLS)
            lines.append(
                f"| {shape} × {size:,} | {fmt(rust)} | {fmt(twin)} | {fmt(oj)} "
                f"| {oj / rust:.3g}× | {oj / twin:.3g}× |"
            )
    small, large = SIZES
    lines += ["", f"time({large:,}) / time({small:,}):", ""]
    lines += ["| stream | rust | twin | openJiuwen |", "|---|---:|---:|---:|"]
    for shape in STREAMS:
        cells = " | ".join(
            f"{times[(impl, shape, large)] / times[(impl, shape, small)]:.3g}×" for impl in IMPLS
        )
        lines.append(f"| {shape} | {cells} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--one", nargs=3, metavar=("IMPL", "SHAPE", "SIZE"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.one:
        impl, shape, size = args.one
        print(one(impl, shape, int(size)))
        return
    print(table(args.repeat))


if __name__ == "__main__":
    main()
