"""fastmerge.dask on a LocalCluster (2 worker processes, 1 thread each) beside the
single-machine batch (Rust, jobs=2) on the generated gateway log split into 8 files, and where
the cluster's time goes: the tasks' compute time by step (split, shuffle, aggregate), the
transfers between workers, and the rest (scheduler, start-up of the job, sorting on the client).

A smoke run (``--benchmark-disable``, CI) uses a 2 MB log and checks that both give the same
records; the issue's numbers (release build, ``make build-prod``)::

    python benches/test_bench_dask.py --mb 200 --streams 2000
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import batch as _logs
import distributed
import pytest

from fastmerge import batch
from fastmerge import dask as fdask

OPTIONS: dict[str, Any] = {"group_by": "stream_id", "event": "event"}


def split_files(log: Path, files: int) -> list[str]:
    """The log cut into ``files`` files at line ends (next to it, made once)."""
    paths = [log.with_suffix(f".part{i}of{files}.jsonl") for i in range(files)]
    if not all(p.exists() for p in paths):
        data = log.read_bytes()
        cuts = [0, *(data.index(b"\n", len(data) * i // files) + 1 for i in range(1, files))]
        for path, a, b in zip(paths, cuts, [*cuts[1:], len(data)]):
            path.write_bytes(data[a:b])
    return [str(p) for p in paths]


def single(paths: list[str]) -> tuple[float, list[bytes]]:
    start = time.perf_counter()
    out = [batch.json_line(r.record()) for r in batch.merge_logs(paths, jobs=2, **OPTIONS)]
    return time.perf_counter() - start, out


def on_cluster(
    client: Any, paths: list[str], shuffle: str
) -> tuple[float, dict[str, float], list[bytes]]:
    """Wall time, the seconds by step, and the records."""
    with distributed.get_task_stream(client) as stream:
        start = time.perf_counter()
        job = fdask.merge_logs(paths, shuffle=shuffle, **OPTIONS)  # type: ignore[arg-type]
        out = [batch.json_line(r.record()) for r in job.compute()]
        wall = time.perf_counter() - start
    # Dask fuses a bag's steps into one task, named after them: the split runs in the first
    # step of the shuffle ("shuffle-group" / "foldby-a"), the core in "aggregate-..."
    steps: dict[str, float] = defaultdict(float)
    for task in stream.data:
        key = task["key"][0] if isinstance(task["key"], tuple) else task["key"]
        name = str(key).rsplit("-", 1)[0]
        for part in task["startstops"]:
            seconds = part["stop"] - part["start"]
            steps[name if part["action"] == "compute" else "transfer"] += seconds
    return wall, dict(steps), out


def _cluster() -> Any:
    return distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )


@pytest.mark.parametrize("shuffle", ["groupby", "foldby"])
def test_local_cluster_beside_one_machine(tmp_path: Path, shuffle: str) -> None:
    log = _logs.make_logs(tmp_path, 2.0, 40)["plain"]
    paths = split_files(log, 8)
    _, expected = single(paths)
    with _cluster() as cluster, distributed.Client(cluster) as client:
        wall, steps, out = on_cluster(client, paths, shuffle)
    assert out == expected
    assert len(out) == 40
    assert wall > 0 and any("aggregate" in name for name in steps)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=200.0)
    parser.add_argument("--streams", type=int, default=2000)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--dir", default="/tmp/fastmerge-bench")
    args = parser.parse_args()
    log = _logs.make_logs(Path(args.dir), args.mb, args.streams)["plain"]
    paths = split_files(log, args.files)
    seconds, expected = single(paths)
    print(f"{args.mb:g} MB, {args.streams} streams, {args.files} files")
    print(f"single machine (Rust, jobs=2)    {seconds:7.2f} s")
    with _cluster() as cluster, distributed.Client(cluster) as client:
        for shuffle in ("groupby", "foldby"):
            wall, steps, out = on_cluster(client, paths, shuffle)
            assert out == expected, "the cluster's records differ"
            busy = sum(steps.values())
            top = sorted(steps.items(), key=lambda kv: -kv[1])[:4]
            parts = ", ".join(f"{k} {v:.2f}" for k, v in top)
            print(
                f"LocalCluster 2x1, {shuffle:8}   {wall:7.2f} s  (task seconds: {parts}; "
                f"{busy:.2f} busy of {2 * wall:.2f} worker-seconds)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
