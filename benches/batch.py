"""The batch engine on generated gateway logs, as a table:

- ``orjson``: ``orjson.loads`` of the log's lines alone (the lines already split in memory);
- ``batch jobs=1`` / ``jobs=2``: ``BatchCore`` (Rust) on the file, every item drained
  (``group_by="stream_id"``, ``event="event"``), from the page cache;
- ``zstd`` / ``gzip``: the same log compressed (jobs=2);
- ``duckdb``: what a user would write instead, DuckDB's ``read_json`` with ``GROUP BY`` and
  ``string_agg`` of the text deltas in ``seq`` order and the finish reason (checked to agree
  with the batch on every stream's text and finish reason);
- ``peak memory``: RSS above the baseline of a process that drains the batch (jobs=2) and
  writes every item to a file (``VmHWM``; Rust allocations are invisible to tracemalloc);
- the same rows on the small-record log (``tools/gen_log.py --short``: 200,000 records of
  about 220 bytes, 2,000 streams), where the cost per record counts most; and the same records
  with 16 and with 2,000 streams in flight at once (``--concurrent``: a busy gateway's log is
  the latter). Its streams end without a usage chunk, so each ended stream is parked (rules §6).

Targets: batch jobs=2 ≤ 0.3× orjson on the large-record log and ≤ 0.5× on the small-record
log, 2,000 in flight within 1.2× of 16; jobs=2 ≥ 1.6× faster than jobs=1; zstd ≤ 1.2× the
uncompressed time; peak ≤ 200 MB above the baseline. Instructions per record against the
single-stream path per event: ``python benches/instructions.py batch``.

    python benches/batch.py    # 200 MB, 2,000 streams (on a release build: make build-prod)
    python benches/batch.py --mb 20 --streams 200 --short 20000 --rounds 1

The log is made by ``tools/gen_log.py`` (fixed seed) into ``--dir`` and kept there.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import orjson

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {
    "batch jobs=1": "",
    "batch jobs=2": "≤ 0.3× orjson; ≥ 1.6× faster than jobs=1",
    "zstd, jobs=2": "≤ 1.2× uncompressed",
    "gzip, jobs=2": "reported",
    "duckdb read_json + GROUP BY": "the baseline a user would reach for",
    "short records: batch jobs=1": "",
    "short records: batch jobs=2": "≤ 0.5× orjson",
    "short records, 2000 in flight: batch jobs=2": "≤ 0.5× orjson; ≤ 1.2× 16 in flight",
}
OPTIONS: dict[str, Any] = {"group_by": "stream_id", "event": "event"}


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


def make_short_log(folder: Path, records: int, streams: int, concurrent: int = 64) -> Path:
    """The small-record log (``gen_log.short_records``, ``concurrent`` streams in flight), made
    once per size into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    suffix = "" if concurrent == 64 else f"-c{concurrent}"
    path = folder / f"short-{streams}-{records}{suffix}.jsonl"
    if not path.exists():
        with open(path, "wb") as out:
            out.writelines(_gen_log().short_records(records, streams, concurrent, 20261204))
    return path


#: DuckDB's answer to "each stream's text and finish reason" (``choices[1]``: lists are
#: 1-based; the usage chunk's empty ``choices`` gives NULL, which both aggregates skip)
DUCKDB_QUERY = """
SELECT stream_id,
       string_agg(event.choices[1].delta.content, '' ORDER BY seq) AS content,
       max(event.choices[1].finish_reason) AS finish_reason
FROM read_json(?, format = 'newline_delimited')
GROUP BY stream_id
"""


def run_duckdb(path: Path) -> list[tuple[str, str | None, str | None]]:
    """Each stream's key, text and finish reason, by DuckDB (one thread per core)."""
    import duckdb

    with duckdb.connect() as con:
        return con.execute(DUCKDB_QUERY, [str(path)]).fetchall()


def check_duckdb(path: Path, rows: list[tuple[str, str | None, str | None]]) -> None:
    """DuckDB's rows agree with the batch: each stream's text (the tool-call streams have
    none) and finish reason."""
    from fastmerge import batch

    expected = {}
    for result in batch.merge_logs([str(path)], **OPTIONS):
        message = result.message
        assert message is not None, result.record()
        expected[result.key] = (message.content or None, message.finish_reason)
    got = {key: (content or None, finish) for key, content, finish in rows}
    assert got == expected, "duckdb and the batch disagree"


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


def measure(
    logs: dict[str, Path],
    rounds: int,
    memory: bool = True,
    short: Path | None = None,
    in_flight: tuple[int, int] | None = None,
) -> list[dict[str, Any]]:
    """The table's rows: name, seconds, items, and the ratio to orjson of the same log."""
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
    check_duckdb(plain, run_duckdb(plain))
    seconds, count = best(lambda: len(run_duckdb(plain)), rounds)
    name = "duckdb read_json + GROUP BY"
    rows.append({"row": name, "seconds": seconds, "items": count, "x_orjson": seconds / base})
    if short is not None:
        lines = short.read_bytes().splitlines()
        base, count = best(lambda: run_orjson(lines), rounds)
        name = "short records: orjson.loads of the lines"
        rows.append({"row": name, "seconds": base, "items": count, "size": short})
        lines.clear()
        for jobs in (1, 2):
            seconds, count = best(lambda: run_batch(short, jobs), rounds)  # noqa: B023
            name = f"short records: batch jobs={jobs}"
            rows.append(
                {"row": name, "seconds": seconds, "items": count, "x_orjson": seconds / base}
            )
        if in_flight is not None:
            rows.extend(_in_flight(short.parent, *in_flight, base, rounds))
    if memory:
        rows.append({"row": "peak RSS above baseline (MB)", "mb": peak_memory(plain) / 1e6})
    return rows


def _in_flight(
    folder: Path, records: int, streams: int, base: float, rounds: int
) -> list[dict[str, Any]]:
    """The small-record log's rows with its streams 16 and 2,000 at a time (the same records:
    ``gen_log --concurrent``; no usage chunk, so every ended stream is parked, rules §6), timed
    side by side; ``base``: orjson of the default log's lines (the same bytes but for order)."""
    rows = []
    for concurrent in (16, 2000):
        log = make_short_log(folder, records, streams, concurrent)
        for jobs in (1, 2):
            seconds, count = best(lambda: run_batch(log, jobs), rounds)  # noqa: B023
            name = f"short records, {concurrent} in flight: batch jobs={jobs}"
            rows.append(
                {"row": name, "seconds": seconds, "items": count, "x_orjson": seconds / base}
            )
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
        if "size" in row:
            # the small-record log's rows: their ratios are to its own orjson row
            size = row["size"].stat().st_size
            lines.append(f"| **small-record log: {size / 1e6:.0f} MB** | | | | |")
        ratio = f"{row['x_orjson']:.2f}" if "x_orjson" in row else "1.00"
        target = TARGETS.get(row["row"], "")
        one = row["row"].replace("jobs=2", "jobs=1")
        if row["row"].endswith("batch jobs=2") and one in by_name:
            speedup = by_name[one]["seconds"] / row["seconds"]
            target += f" (speed-up {speedup:.2f}×)"
        sixteen = row["row"].replace("2000 in flight", "16 in flight")
        if "2000 in flight" in row["row"] and sixteen in by_name:
            target += f" ({row['seconds'] / by_name[sixteen]['seconds']:.2f}× 16 in flight)"
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
    parser.add_argument(
        "--short", type=int, default=200_000, help="records of the small-record log (0: none)"
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--dir", type=Path, default=Path(tempfile.gettempdir()) / "fastmerge-bench-batch"
    )
    parser.add_argument("--no-memory", action="store_true")
    args = parser.parse_args(argv)
    logs = make_logs(args.dir, args.mb, args.streams)
    short = make_short_log(args.dir, args.short, args.streams) if args.short else None
    in_flight = (args.short, args.streams) if args.short else None
    rows = measure(logs, args.rounds, not args.no_memory, short, in_flight)
    print(table(rows, logs["plain"].stat().st_size))
    return 0


if __name__ == "__main__":
    sys.exit(main())
