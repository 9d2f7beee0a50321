"""The batch engine on a generated gateway log of interleaved OpenAI streams:
``orjson.loads`` of the lines alone, then ``BatchCore`` (Rust) with 1 and 2 jobs, on the log
zstd- and gzip-compressed, DuckDB's ``read_json`` + ``GROUP BY`` (the baseline a user would
reach for, checked to agree on every stream's text and finish reason), the same rows on the
small-record log (``tools/gen_log.py --short``), and the peak memory of a drain to a file
(``batch.py``).

A smoke run (``--benchmark-disable``, CI) uses a 2 MB log of 40 streams and checks each row's
item count; a timed run (``pytest benches/test_bench_batch.py``) uses 20 MB, or
``FASTMERGE_BENCH_BATCH_MB`` MB (``=200`` for the issue's log of 2,000 streams). The table
with the targets: ``python benches/batch.py`` (200 MB by default).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import batch
import pytest
from _bench import REQUESTED, _load_rust

SMOKE = (2.0, 40)
#: records of the small-record log, per stream of the large one (100 a stream)
SHORT_PER_STREAM = 100


@pytest.fixture(scope="module")
def sizes(request: pytest.FixtureRequest) -> tuple[float, int]:
    if request.config.getoption("benchmark_disable"):
        return SMOKE
    mb = float(os.environ.get("FASTMERGE_BENCH_BATCH_MB", "20"))
    return mb, max(40, int(mb * 10))


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory, sizes: tuple[float, int]) -> dict[str, Path]:
    why = _load_rust()
    if isinstance(why, str):
        if REQUESTED == "rust":
            pytest.fail(f"FASTMERGE_BACKEND=rust but {why}")
        pytest.skip(why)
    mb, streams = sizes
    return batch.make_logs(tmp_path_factory.mktemp("batch"), mb, streams)


def test_orjson_loads_of_the_lines(
    benchmark: Any, logs: dict[str, Path], sizes: tuple[float, int]
) -> None:
    lines = logs["plain"].read_bytes().splitlines()
    benchmark.group = f"batch: a {sizes[0]:g} MB log of {sizes[1]} streams"
    count = benchmark.pedantic(batch.run_orjson, args=(lines,), rounds=3, iterations=1)
    assert count == len(lines)


@pytest.mark.parametrize(("log", "jobs"), [("plain", 1), ("plain", 2), ("zstd", 2), ("gzip", 2)])
def test_batch(
    benchmark: Any, logs: dict[str, Path], sizes: tuple[float, int], log: str, jobs: int
) -> None:
    if log not in logs:
        pytest.skip("zstd needs the 'zstandard' package to write the log")
    benchmark.group = f"batch: a {sizes[0]:g} MB log of {sizes[1]} streams"
    benchmark.extra_info.update(log=log, jobs=jobs)
    count = benchmark.pedantic(batch.run_batch, args=(logs[log], jobs), rounds=3, iterations=1)
    assert count == sizes[1]  # one item per stream, no bad line


def test_peak_memory_of_a_drain_to_a_file(logs: dict[str, Path]) -> None:
    # the smoke log is small: this checks the measurement runs and stays far below the bound
    assert 0 <= batch.peak_memory(logs["plain"]) <= 200e6


def test_duckdb_read_json_group_by(
    benchmark: Any, logs: dict[str, Path], sizes: tuple[float, int]
) -> None:
    batch.check_duckdb(logs["plain"], batch.run_duckdb(logs["plain"]))
    benchmark.group = f"batch: a {sizes[0]:g} MB log of {sizes[1]} streams"
    rows = benchmark.pedantic(batch.run_duckdb, args=(logs["plain"],), rounds=3, iterations=1)
    assert len(rows) == sizes[1]


@pytest.fixture(scope="module")
def short_log(
    tmp_path_factory: pytest.TempPathFactory, logs: dict[str, Path], sizes: tuple[float, int]
) -> Path:
    streams = sizes[1]
    folder = tmp_path_factory.mktemp("short")
    return batch.make_short_log(folder, streams * SHORT_PER_STREAM, streams)


def test_orjson_loads_of_the_short_records(
    benchmark: Any, short_log: Path, sizes: tuple[float, int]
) -> None:
    lines = short_log.read_bytes().splitlines()
    benchmark.group = f"batch: a log of {len(lines)} short records of {sizes[1]} streams"
    count = benchmark.pedantic(batch.run_orjson, args=(lines,), rounds=3, iterations=1)
    assert count == sizes[1] * SHORT_PER_STREAM


@pytest.mark.parametrize("jobs", [1, 2])
def test_batch_of_short_records(
    benchmark: Any, short_log: Path, sizes: tuple[float, int], jobs: int
) -> None:
    benchmark.group = (
        f"batch: a log of {sizes[1] * SHORT_PER_STREAM} short records of {sizes[1]} streams"
    )
    benchmark.extra_info.update(jobs=jobs)
    count = benchmark.pedantic(batch.run_batch, args=(short_log, jobs), rounds=3, iterations=1)
    assert count == sizes[1]  # one item per stream, no bad line
