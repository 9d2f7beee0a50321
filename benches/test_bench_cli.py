"""``fastmerge batch`` (the command) beside the API it runs, on the same logs, in one process:

- ``orjson``: ``orjson.loads`` of the log's lines alone (the lines already split in memory);
- ``API``: ``fastmerge.batch.merge_logs`` drained (a :class:`StreamResult` per stream, its
  messages built); ``BatchCore``: the Rust core's items drained;
- ``CLI -o``: ``fastmerge batch LOG -o FILE`` (JSON lines), ``CLI --output-dir``: a file per
  stream and ``index.jsonl``, ``CLI parquet``: ``--format parquet -o FILE``; each through
  ``fastmerge.cli.main`` in this process (no interpreter start), ``--quiet``, 2 jobs.

Logs (``tools/gen_log.py``'s generator, fixed seeds): ``gateway``, a wrapper log of OpenAI Chat
streams (``{"ts", "stream_id", "seq", "event": {...}}``, about 100 KB a stream); ``chunks``,
short raw ``chat.completion.chunk`` records (about 175 bytes, 100 a stream, grouped by
``id``); ``wrapped``, the same chunks under ``event`` in a wrapper record; ``logprobs``, half
as many chunks in a tenth of the streams, each delta with its token's logprobs (5
alternatives), so that each record is large (about 200 KB of message).

Target: every CLI row within 1.2× the API's time. A smoke run (``--benchmark-disable``, CI)
uses small logs and checks that each output holds exactly the API's records (bytes, files,
Parquet rows); a timed run (``pytest benches/test_bench_cli.py``) uses ``FASTMERGE_BENCH_CLI_MB``
MB of gateway log (20 by default) and chunk logs of 10 records a stream. The table, on a
release build (``make build-prod``)::

    python benches/test_bench_cli.py                 # 200 MB gateway log, 200,000 chunks,
                                                     # 100,000 with logprobs
    python benches/test_bench_cli.py --mb 20 --records 20000 --rounds 3
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import orjson
import pytest

ROOT = Path(__file__).resolve().parent.parent
if __name__ != "__main__":
    from _bench import REQUESTED, _load_rust

#: How each log is grouped.
OPTIONS: dict[str, dict[str, str]] = {
    "gateway": {"group_by": "stream_id", "event": "event"},
    "chunks": {"group_by": "id"},
    "wrapped": {"group_by": "stream_id", "event": "event"},
    "logprobs": {"group_by": "id"},
}
JOBS = 2
WORDS = "the stream of tokens arrives in small pieces and every piece must be kept".split()


def _gen_log() -> Any:
    spec = importlib.util.spec_from_file_location("gen_log", ROOT / "tools" / "gen_log.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _logprob(token: str, rng: random.Random) -> dict[str, Any]:
    """A token's logprobs entry as OpenAI sends it, with 5 alternatives."""
    return {
        "token": token,
        "logprob": -rng.random() * 5,
        "bytes": list(token.encode()),
        "top_logprobs": [
            {"token": w, "logprob": -rng.random() * 9, "bytes": list(w.encode())}
            for w in rng.sample(WORDS, 5)
        ],
    }


def chunk_records(
    records: int, streams: int, wrapped: bool, seed: int = 20261204, logprobs: bool = False
) -> list[bytes]:
    """``records`` short OpenAI text-chunk lines of ``streams`` streams, 64 in flight at once
    (interleaved as a gateway logs them): a role chunk, text deltas of one word, the finish
    chunk. ``wrapped``: each under ``event`` of ``{"stream_id", "seq", "event"}``;
    ``logprobs``: each delta with its token's logprobs."""
    rng = random.Random(seed)
    per = max(3, records // streams)
    pending = list(range(streams))
    pending.reverse()
    active: list[list[int]] = []
    out = []
    while pending or active:
        while pending and len(active) < 64:
            active.append([pending.pop(), 0])
        pick = rng.randrange(len(active))
        stream, seq = active[pick]
        if seq == 0:
            delta: dict[str, Any] = {"role": "assistant", "content": ""}
        elif seq == per - 1:
            delta = {}
        else:
            delta = {"content": " " + rng.choice(WORDS)}
        choice = {"index": 0, "delta": delta, "finish_reason": "stop" if seq == per - 1 else None}
        if logprobs and "content" in delta and delta["content"]:
            choice["logprobs"] = {"content": [_logprob(delta["content"], rng)]}
        event = {
            "id": f"chatcmpl-{stream:06d}",
            "object": "chat.completion.chunk",
            "created": 1770933892 + stream,
            "model": "gpt-4o-mini",
            "choices": [choice],
        }
        record: Any = {"stream_id": f"req-{stream:06d}", "seq": seq, "event": event}
        out.append(orjson.dumps(record if wrapped else event) + b"\n")
        active[pick][1] += 1
        if seq + 1 == per:
            active.pop(pick)
    return out


def make_logs(folder: Path, mb: float, streams: int, records: int) -> dict[str, Path]:
    """The three logs in ``folder``, made once per size."""
    folder.mkdir(parents=True, exist_ok=True)
    logs = {
        "gateway": folder / f"gateway-{streams}-{mb:g}mb.jsonl",
        "chunks": folder / f"chunks-{streams}-{records}.jsonl",
        "wrapped": folder / f"wrapped-{streams}-{records}.jsonl",
        "logprobs": folder / f"logprobs-{streams // 10}-{records // 2}.jsonl",
    }
    if not logs["gateway"].exists():
        with open(logs["gateway"], "wb") as out:
            out.writelines(_gen_log().records(streams, int(mb * 1e6), 64, 20261130))
    for name, wrapped in (("chunks", False), ("wrapped", True)):
        if not logs[name].exists():
            logs[name].write_bytes(b"".join(chunk_records(records, streams, wrapped)))
    if not logs["logprobs"].exists():
        lines = chunk_records(records // 2, streams // 10, False, logprobs=True)
        logs["logprobs"].write_bytes(b"".join(lines))
    return logs


# -- the rows


def run_orjson(lines: list[bytes]) -> int:
    loads = orjson.loads
    for line in lines:
        loads(line)
    return len(lines)


def run_api(log: Path, name: str) -> int:
    """``merge_logs`` drained: every stream's result, its messages built."""
    from fastmerge import batch

    return sum(1 for _ in batch.merge_logs([str(log)], jobs=JOBS, **OPTIONS[name]))


def run_core(log: Path, name: str) -> int:
    """The Rust ``BatchCore``'s items drained."""
    from fastmerge import _fastmerge

    core = _fastmerge.BatchCore([str(log)], jobs=JOBS, **OPTIONS[name])
    count = 0
    while True:
        try:
            core.next()
        except StopIteration:
            return count
        count += 1


def flags(name: str) -> list[str]:
    options = OPTIONS[name]
    out = ["--group-by", options["group_by"], "--jobs", str(JOBS), "--quiet"]
    if "event" in options:
        out += ["--event", options["event"]]
    return out


def run_cli(log: Path, name: str, output: list[str]) -> int:
    """``fastmerge batch LOG ... OUTPUT`` in this process; its exit status (0: all complete)."""
    from fastmerge import cli

    return cli.main(["batch", str(log), *flags(name), *output])


def cli_jsonl(log: Path, name: str, out: Path) -> int:
    return run_cli(log, name, ["-o", str(out)])


def cli_directory(log: Path, name: str, out: Path) -> int:
    return run_cli(log, name, ["--output-dir", str(out)])


def fresh(out: Path) -> None:
    """Before a timed run, not in it: no output left, so files are made, not rewritten."""
    if out.is_dir():
        shutil.rmtree(out)
    elif out.exists():
        out.unlink()


def cli_parquet(log: Path, name: str, out: Path) -> int:
    return run_cli(log, name, ["--format", "parquet", "-o", str(out)])


# -- what the smoke run checks


def api_lines(log: Path, name: str) -> list[bytes]:
    """The API's records, as ``json_line`` writes them."""
    from fastmerge import batch

    return [
        batch.json_line(r.record())
        for r in batch.merge_logs([str(log)], jobs=JOBS, **OPTIONS[name])
    ]


def check_jsonl(out: Path, expected: list[bytes]) -> None:
    assert out.read_bytes() == b"".join(expected)


def check_directory(out: Path, expected: list[bytes]) -> None:
    index = [json.loads(line) for line in (out / "index.jsonl").read_bytes().splitlines()]
    assert [(out / entry["file"]).read_bytes() for entry in index] == expected
    assert [entry["status"] for entry in index] == [json.loads(line)["status"] for line in expected]


def check_parquet(out: Path, log: Path, name: str) -> None:
    import pyarrow.parquet as pq

    from fastmerge import batch

    # the results as a list take the Python path: the rows from the messages themselves
    results = list(batch.merge_logs([str(log)], jobs=JOBS, **OPTIONS[name]))
    assert pq.read_table(out).to_pylist() == batch.to_arrow(results).to_pylist()


# -- pytest-benchmark

SMOKE = (2.0, 40, 4_000)


@pytest.fixture(scope="module")
def sizes(request: pytest.FixtureRequest) -> tuple[float, int, int]:
    if request.config.getoption("benchmark_disable"):
        return SMOKE
    mb = float(os.environ.get("FASTMERGE_BENCH_CLI_MB", "20"))
    streams = max(40, int(mb * 10))
    return mb, streams, streams * 10


@pytest.fixture(scope="module")
def logs(
    tmp_path_factory: pytest.TempPathFactory, sizes: tuple[float, int, int]
) -> dict[str, Path]:
    why = _load_rust()
    if isinstance(why, str):
        if REQUESTED == "rust":
            pytest.fail(f"FASTMERGE_BACKEND=rust but {why}")
        pytest.skip(why)
    return make_logs(tmp_path_factory.mktemp("cli"), *sizes)


LOGS = tuple(OPTIONS)


@pytest.mark.parametrize("name", LOGS)
def test_orjson_loads_of_the_lines(benchmark: Any, logs: dict[str, Path], name: str) -> None:
    lines = logs[name].read_bytes().splitlines()
    benchmark.group = f"cli: {name}"
    assert benchmark.pedantic(run_orjson, args=(lines,), rounds=3, iterations=1) == len(lines)


@pytest.mark.parametrize("name", LOGS)
@pytest.mark.parametrize("run", [run_api, run_core], ids=["api", "core"])
def test_api(
    benchmark: Any, logs: dict[str, Path], sizes: tuple[float, int, int], name: str, run: Any
) -> None:
    benchmark.group = f"cli: {name}"
    streams = sizes[1] // 10 if name == "logprobs" else sizes[1]
    assert benchmark.pedantic(run, args=(logs[name], name), rounds=3, iterations=1) == streams


@pytest.mark.parametrize("name", LOGS)
@pytest.mark.parametrize("output", ["jsonl", "directory", "parquet"])
def test_cli(benchmark: Any, logs: dict[str, Path], tmp_path: Path, name: str, output: str) -> None:
    if output == "parquet":
        if os.environ.get("CI"):
            import pyarrow  # noqa: F401 (the test extra: CI must not skip)
        pytest.importorskip("pyarrow")
    log = logs[name]
    out = tmp_path / ("out" if output == "directory" else f"out.{output}")
    runner = {"jsonl": cli_jsonl, "directory": cli_directory, "parquet": cli_parquet}[output]
    benchmark.group = f"cli: {name}"
    benchmark.extra_info.update(log=name, output=output)
    status = benchmark.pedantic(
        runner, args=(log, name, out), setup=lambda: fresh(out), rounds=3, iterations=1
    )
    assert status == 0  # every stream complete
    # the output holds exactly the API's records
    if output == "jsonl":
        check_jsonl(out, api_lines(log, name))
    elif output == "directory":
        check_directory(out, api_lines(log, name))
    else:
        check_parquet(out, log, name)


# -- the table (python benches/test_bench_cli.py)


#: What the timed runs write (removed before each, untimed).
OUTPUTS: list[Path] = []


def timed(fn: Callable[[], Any]) -> tuple[float, float]:
    """``(wall, cpu)`` seconds of one call; ``cpu``: the process's CPU time, every thread's
    (steadier than the wall clock on a machine shared with other jobs)."""
    for out in OUTPUTS:
        fresh(out)
    start, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - start, time.process_time() - cpu


def measure(
    logs: dict[str, Path], rounds: int, out_dir: Path
) -> list[tuple[str, str, float, float]]:
    """``(log, row, wall, cpu)``, the least of ``rounds`` each, for every log and row; a
    log's rows run side by side (round-robin, so that a burst of load on the machine lands
    on all of them alike)."""
    rows: list[tuple[str, str, float, float]] = []
    OUTPUTS[:] = [out_dir / "out.jsonl", out_dir / "dir", out_dir / "out.parquet"]
    for name, log in logs.items():
        lines = log.read_bytes().splitlines()
        work: dict[str, Callable[[], Any]] = {
            "orjson": lambda: run_orjson(lines),  # noqa: B023
            "API (merge_logs drained)": lambda: run_api(log, name),  # noqa: B023
            "BatchCore drained": lambda: run_core(log, name),  # noqa: B023
            "CLI -o FILE": lambda: cli_jsonl(log, name, out_dir / "out.jsonl"),  # noqa: B023
            "CLI --output-dir": lambda: cli_directory(log, name, out_dir / "dir"),  # noqa: B023
            "CLI --format parquet": lambda: cli_parquet(log, name, out_dir / "out.parquet"),  # noqa: B023
        }
        times: dict[str, list[tuple[float, float]]] = {row: [] for row in work}
        for _ in range(rounds):
            for row, fn in work.items():
                times[row].append(timed(fn))
        lines.clear()
        for row, pairs in times.items():
            rows.append((name, row, min(w for w, _ in pairs), min(c for _, c in pairs)))
    return rows


def table(rows: list[tuple[str, str, float, float]], logs: dict[str, Path]) -> str:
    out = [
        "| log | row | wall (s) | × orjson | CLI / API | CPU (s) | CLI / API (CPU) |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    seconds = {(name, row): (w, c) for name, row, w, c in rows}
    for name, row, wall, cpu in rows:
        size = logs[name].stat().st_size / 1e6
        api_wall, api_cpu = seconds[(name, "API (merge_logs drained)")]
        cli = row.startswith("CLI")
        out.append(
            f"| {name} ({size:.0f} MB) | {row} | {wall:.3f} "
            f"| {wall / seconds[(name, 'orjson')][0]:.2f} "
            f"| {f'{wall / api_wall:.2f}×' if cli else ''} | {cpu:.3f} "
            f"| {f'{cpu / api_cpu:.2f}×' if cli else ''} |"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=200.0, help="size of the gateway log")
    parser.add_argument("--streams", type=int, default=2000)
    parser.add_argument("--records", type=int, default=200_000, help="of the chunk logs")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--dir", type=Path, default=Path(tempfile.gettempdir()) / "fastmerge-bench-cli"
    )
    parser.add_argument(
        "--out-dir", type=Path, default=None, help="where the outputs go (default: a temp dir)"
    )
    args = parser.parse_args(argv)
    logs = make_logs(args.dir, args.mb, args.streams, args.records)
    with tempfile.TemporaryDirectory(dir=args.out_dir) as out_dir:
        rows = measure(logs, args.rounds, Path(out_dir))
    print(table(rows, logs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
