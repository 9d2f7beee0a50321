"""The batch engine on a generated gateway log (issue 11's targets), as a table:

- ``orjson``: ``orjson.loads`` of the log's lines alone (the lines already split in memory);
- ``batch jobs=1`` / ``jobs=2``: ``BatchCore`` (Rust) on the file, every item drained
  (``group_by="stream_id"``, ``event="event"``), from the page cache;
- ``zstd`` / ``gzip``: the same log compressed (jobs=2);
- ``peak memory``: RSS above the baseline of a process that drains the batch (jobs=2) and
  writes every item to a file (``VmHWM``; Rust allocations are invisible to tracemalloc).

Targets: batch ≤ 0.5× orjson (moonshot 0.25×); jobs=2 ≥ 1.6× faster than jobs=1; zstd ≤ 1.2×
the uncompressed time; peak ≤ 200 MB above the baseline.

    python benches/batch.py    # 200 MB, 2,000 streams (on a release build: make build-prod)
    python benches/batch.py --mb 20 --streams 200 --rounds 1

The log is made by ``tools/gen_log.py`` (fixed seed) into ``--dir`` and kept there.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import orjson

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {
    "batch jobs=1": "",
    "batch jobs=2": "≤ 0.5× orjson (moonshot 0.25×); ≥ 1.6× faster than jobs=1",
    "zstd, jobs=2": "≤ 1.2× uncompressed",
    "gzip, jobs=2": "reported",
}
OPTIONS = {"group_by": "stream_id", "event": "event"}


def _gen_log() -> Any:
    spec = importlib.util.spec_from_file_location("gen_log", ROOT / "tools" / "gen_log.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_logs(folder: Path, mb: float, streams: int) -> dict[str, Path]:
    """The log, plain and compressed (zstd if the ``zstandard`` package is there), made once
    per size into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"gateway-{streams}-{mb:g}mb"
    plain = folder / f"{stem}.jsonl"
    if not plain.exists():
        records = _gen_log().records(streams, int(mb * 1e6), 64, 20261130)
        with open(plain, "wb") as out:
            out.writelines(records)
    logs = {"plain": plain}
    packed = folder / f"{stem}.jsonl.gz"
    if not packed.exists():
        packed.write_bytes(gzip.compress(plain.read_bytes(), compresslevel=6, mtime=0))
    logs["gzip"] = packed
    try:
        import zstandard
    except ImportError:
        return logs
    packed = folder / f"{stem}.jsonl.zst"
    if not packed.exists():
        packed.write_bytes(zstandard.ZstdCompressor(level=3).compress(plain.read_bytes()))
    logs["zstd"] = packed
    return logs


def drain(core: Any) -> int:
    """Every item of a core; how many."""
    count = 0
    while True:
        try:
            core.next()
        except StopIteration:
            return count
        count += 1


def run_batch(path: Path, jobs: int) -> int:
    from fastmerge import _fastmerge

    return drain(_fastmerge.BatchCore([str(path)], jobs=jobs, **OPTIONS))


def run_orjson(lines: list[bytes]) -> int:
    loads = orjson.loads
    for line in lines:
        loads(line)
    return len(lines)


def best(fn: Callable[[], int], rounds: int) -> tuple[float, int]:
    """The best time of ``rounds`` calls, and the call's result."""
    times = []
    result = 0
    for _ in range(rounds):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


CHILD = r"""
import sys, orjson
from fastmerge import _fastmerge
def peak():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
path, out = sys.argv[1], sys.argv[2]
# a small batch first, so that the set-up (threads, imports) is in the baseline
core = _fastmerge.BatchCore([path], group_by="stream_id", event="event", jobs=2)
core.next(); core.close()
base = peak()
core = _fastmerge.BatchCore([path], group_by="stream_id", event="event", jobs=2)
with open(out, "wb") as sink:
    while True:
        try:
            item = core.next()
        except StopIteration:
            break
        sink.write(orjson.dumps(list(item)) + b"\n")
print(peak() - base)
"""


def peak_memory(path: Path) -> int:
    """Bytes of RSS above the baseline while a batch of ``path`` is drained to a file."""
    out = path.with_suffix(".items.jsonl")
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), str(out)],
        check=True,
        capture_output=True,
        text=True,
    )
    out.unlink()
    return int(done.stdout.strip())


def measure(logs: dict[str, Path], rounds: int, memory: bool = True) -> list[dict[str, Any]]:
    """The table's rows: name, seconds, items, and the ratio to orjson."""
    plain = logs["plain"]
    lines = plain.read_bytes().splitlines()
    rows: list[dict[str, Any]] = []
    seconds, count = best(lambda: run_orjson(lines), rounds)
    rows.append({"row": "orjson.loads of the lines", "seconds": seconds, "items": count})
    base = seconds
    lines.clear()  # not kept while the batches run
    for name, path, jobs in [
        ("batch jobs=1", plain, 1),
        ("batch jobs=2", plain, 2),
        ("zstd, jobs=2", logs.get("zstd"), 2),
        ("gzip, jobs=2", logs["gzip"], 2),
    ]:
        if path is None:
            continue
        seconds, count = best(lambda: run_batch(path, jobs), rounds)  # noqa: B023
        rows.append({"row": name, "seconds": seconds, "items": count, "x_orjson": seconds / base})
    if memory:
        rows.append({"row": "peak RSS above baseline (MB)", "mb": peak_memory(plain) / 1e6})
    return rows


def table(rows: list[dict[str, Any]], size: int) -> str:
    lines = [
        f"log: {size / 1e6:.0f} MB",
        "| row | time (s) | MB/s | × orjson | target |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    by_name = {row["row"]: row for row in rows}
    for row in rows:
        if "mb" in row:
            lines.append(f"| {row['row']} | | | | {row['mb']:.0f} MB (target ≤ 200 MB) |")
            continue
        ratio = f"{row['x_orjson']:.2f}" if "x_orjson" in row else "1.00"
        target = TARGETS.get(row["row"], "")
        if row["row"] == "batch jobs=2" and "batch jobs=1" in by_name:
            speedup = by_name["batch jobs=1"]["seconds"] / row["seconds"]
            target += f" (speed-up {speedup:.2f}×)"
        if row["row"].startswith("zstd") and "batch jobs=2" in by_name:
            target += f" ({row['seconds'] / by_name['batch jobs=2']['seconds']:.2f}×)"
        lines.append(
            f"| {row['row']} | {row['seconds']:.3f} | {size / 1e6 / row['seconds']:.0f} | "
            f"{ratio} | {target} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=200.0)
    parser.add_argument("--streams", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/fastmerge-bench-batch"))
    parser.add_argument("--no-memory", action="store_true")
    args = parser.parse_args(argv)
    logs = make_logs(args.dir, args.mb, args.streams)
    rows = measure(logs, args.rounds, memory=not args.no_memory)
    print(table(rows, logs["plain"].stat().st_size))
    return 0


if __name__ == "__main__":
    sys.exit(main())
