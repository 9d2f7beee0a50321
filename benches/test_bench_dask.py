"""fastmerge.dask on a LocalCluster (2 worker processes, 1 thread each) beside the
single-machine batch (Rust, jobs=2) on the same 2 cores, on the generated gateway log split
into 8 files, and where the cluster's time goes: the tasks' compute time by step (local
files and URLs with ``shuffle="direct"``: ``aggregate``, one task per bucket; URLs split:
the split fused into the first step of the shuffle, then ``aggregate``), the transfers
between workers, and the rest (scheduler, start-up of the job, the items' way to the client,
sorting there). Beside the wall times, the CPU seconds of every process (the client with the
LocalCluster's scheduler, and the workers): on a shared machine the steadier of the two.

Local files are planned so that no record's bytes move between workers (each aggregate task
reads the files itself), one bucket per host: here one, its core on the host's two threads;
beside it the same plan with a bucket per worker (``buckets=2``: each reads every file).
``file://`` URLs take the same plan (each bucket reads them through fsspec: here one bucket,
each file read once; ``buckets=2``: each reads every file); beside it the split plan
(``groupby``, ``foldby``: each file read once by a split task, its records sent to their
buckets by the shuffle).

With ``--s3`` the same files are objects on moto's S3 server (in this process, on the same
cores: ``remote.s3_objects``), and the single machine reads those objects too (the same
``storage_options``): the plan of URLs, one bucket per host (here one, on its two threads), or
``buckets=2`` (the shape of several hosts: each bucket's task reads every object from the
store itself, nothing moves between workers), beside the split plan (``groupby``: each object
read once, its records moved to their buckets).

A smoke run (``--benchmark-disable``, CI) uses a 2 MB log and checks that every plan gives
the single machine's records; the numbers (release build, ``make build-prod``), each the best
of ``--rounds`` rounds run side by side after a round that warms the workers up, with the
median of each round's ratio (the cluster over the single machine just before it)::

    python benches/test_bench_dask.py --mb 200 --streams 2000
    python benches/test_bench_dask.py --mb 200 --streams 2000 --s3
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import batch as _logs
import distributed
import pytest
import remote

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


def single(
    paths: list[str], storage: dict[str, Any] | None = None
) -> tuple[float, float, list[bytes]]:
    """Wall time, CPU time (all threads), and the records."""
    start, cpu = time.perf_counter(), time.process_time()
    run = batch.merge_logs(paths, jobs=2, storage_options=storage, **OPTIONS)
    out = [batch.json_line(r.record()) for r in run]
    return time.perf_counter() - start, time.process_time() - cpu, out


def _cpu(client: Any) -> float:
    """The CPU seconds of this process (the client, and a LocalCluster's scheduler) and of
    every worker process so far."""
    workers = client.run(time.process_time)
    return time.process_time() + sum(workers.values())


def on_cluster(
    client: Any,
    paths: list[str],
    shuffle: str = "groupby",
    buckets: int = 0,
    storage: dict[str, Any] | None = None,
) -> tuple[float, float, dict[str, float], list[bytes]]:
    """Wall time, CPU time (every process), the seconds by step, and the records (``buckets``
    0: the plan's own)."""
    cpu = _cpu(client)
    with distributed.get_task_stream(client) as stream:
        start = time.perf_counter()
        job = fdask.merge_logs(
            paths,
            shuffle=shuffle,  # type: ignore[arg-type]
            buckets=buckets,
            storage_options=storage,
            **OPTIONS,
        )
        out = [batch.json_line(r.record()) for r in job.compute()]
        wall = time.perf_counter() - start
    cpu = _cpu(client) - cpu
    # a step's tasks are named after it ("fastmerge-index-<token>"); Dask fuses a bag's steps
    # into one task named after them all ("shuffle-group", "foldby-a" hold the split)
    steps: dict[str, float] = defaultdict(float)
    for task in stream.data:
        key = task["key"][0] if isinstance(task["key"], tuple) else task["key"]
        name = str(key).rsplit("-", 1)[0]
        for part in task["startstops"]:
            seconds = part["stop"] - part["start"]
            steps[name if part["action"] == "compute" else "transfer"] += seconds
    return wall, cpu, dict(steps), out


def _cluster() -> Any:
    return distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )


def urls(paths: list[str]) -> list[str]:
    """The files as ``file://`` URLs: the plan of remote inputs."""
    return [Path(p).resolve().as_uri() for p in paths]


@pytest.mark.parametrize(
    ("plan", "shuffle", "buckets"),
    [
        ("local", "direct", 0),
        ("local", "direct", 2),
        ("urls", "direct", 0),
        ("urls", "direct", 2),
        ("urls", "groupby", 2),
        ("urls", "foldby", 2),
    ],
)
def test_local_cluster_beside_one_machine(
    tmp_path: Path, plan: str, shuffle: str, buckets: int
) -> None:
    log = _logs.make_logs(tmp_path, 2.0, 40)["plain"]
    paths = split_files(log, 8)
    expected = single(paths)[2]
    inputs = paths if plan == "local" else urls(paths)
    with _cluster() as cluster, distributed.Client(cluster) as client:
        wall, _, steps, out = on_cluster(client, inputs, shuffle, buckets)
    assert out == expected
    assert len(out) == 40
    assert wall > 0 and any("aggregate" in name for name in steps)
    if shuffle == "direct":  # no task waits for another: nothing moves between workers
        assert set(steps) == {"fastmerge-aggregate"}


def objects(paths: list[str]) -> dict[str, bytes]:
    """The files as the objects of an S3 bucket (key: bytes)."""
    return {Path(p).name: Path(p).read_bytes() for p in paths}


@pytest.mark.parametrize(("shuffle", "buckets"), [("direct", 0), ("direct", 2), ("groupby", 2)])
def test_s3_objects_on_the_cluster_beside_one_machine_on_them(
    tmp_path: Path, shuffle: str, buckets: int
) -> None:
    """The same objects on moto's S3, read by the single machine and by the cluster."""
    log = _logs.make_logs(tmp_path, 2.0, 40)["plain"]
    with remote.s3_objects(objects(split_files(log, 8))) as (inputs, storage):
        expected = single(inputs, storage)[2]
        with _cluster() as cluster, distributed.Client(cluster) as client:
            _, _, steps, out = on_cluster(client, inputs, shuffle, buckets, storage)
    assert out == expected
    assert len(out) == 40
    if shuffle == "direct":  # every bucket's task reads the objects: nothing else runs
        assert set(steps) == {"fastmerge-aggregate"}
    else:
        assert "transfer" in steps or any("shuffle" in name for name in steps)


Run = tuple[str, list[str], str, int]


def measure(
    rounds: int, base: list[str], runs: list[Run], storage: dict[str, Any] | None
) -> dict[str, list[tuple[float, float, dict[str, float]]]]:
    """``rounds`` rounds, each the single machine on ``base`` and then every run on the
    cluster, after a round that warms the workers up: each run's wall and CPU seconds and
    its steps, by name (``"single"``: the single machine)."""
    rows: dict[str, list[tuple[float, float, dict[str, float]]]] = defaultdict(list)
    expected = single(base, storage)[2]
    with _cluster() as cluster, distributed.Client(cluster) as client:
        for _, inputs, shuffle, buckets in runs:  # warm-up: imports and caches of the workers
            assert on_cluster(client, inputs, shuffle, buckets, storage)[3] == expected
        for _ in range(rounds):
            seconds, cpu, out = single(base, storage)
            assert out == expected
            rows["single"].append((seconds, cpu, {}))
            for name, inputs, shuffle, buckets in runs:
                wall, cpu, steps, out = on_cluster(client, inputs, shuffle, buckets, storage)
                assert out == expected, "the cluster's records differ"
                rows[name].append((wall, cpu, steps))
    return rows


def report(rows: dict[str, list[tuple[float, float, dict[str, float]]]], single_name: str) -> None:
    """Each run's best time over the single machine's, with the round-by-round ratio."""
    best, best_cpu = (min(row[i] for row in rows["single"]) for i in (0, 1))
    median = statistics.median(row[0] for row in rows["single"])
    print(f"{single_name:36} {best:6.2f} s         (median {median:.2f}; CPU {best_cpu:.2f} s)")
    for name, measured in rows.items():
        if name == "single":
            continue
        wall, _, steps = min(measured, key=lambda row: row[0])
        cpu = min(row[1] for row in measured)
        median = statistics.median(row[0] for row in measured)
        # each round's cluster time over the single machine's just before it (the same load)
        paired = statistics.median(c[0] / s[0] for c, s in zip(measured, rows["single"]))
        busy = sum(steps.values())
        top = sorted(steps.items(), key=lambda kv: -kv[1])[:4]
        parts = ", ".join(f"{k.removeprefix('fastmerge-')} {v:.2f}" for k, v in top)
        print(
            f"LocalCluster 2x1, {name:28} {wall:6.2f} s  {wall / best:4.2f}x  (round by "
            f"round {paired:.2f}x; median {median:.2f}; CPU {cpu:.2f} s, {cpu / best_cpu:.2f}x; "
            f"task seconds: {parts}; {busy:.2f} busy of {2 * wall:.2f} worker-seconds)"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=200.0)
    parser.add_argument("--streams", type=int, default=2000)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "fastmerge-bench"))
    parser.add_argument("--no-urls", action="store_true", help="skip the file:// URL rows")
    parser.add_argument(
        "--s3", action="store_true", help="the files as S3 objects (moto), on both sides"
    )
    args = parser.parse_args()
    log = _logs.make_logs(Path(args.dir), args.mb, args.streams)["plain"]
    paths = split_files(log, args.files)
    print(f"{args.mb:g} MB, {args.streams} streams, {args.files} files; best of {args.rounds}")
    if args.s3:
        with remote.s3_objects(objects(paths)) as (inputs, storage):
            runs: list[Run] = [
                ("S3 URLs (a bucket per host)", inputs, "direct", 0),
                ("S3 URLs, 2 buckets, direct", inputs, "direct", 2),
                ("S3 URLs, 2 buckets, groupby", inputs, "groupby", 2),
            ]
            rows = measure(args.rounds, inputs, runs, storage)
        report(rows, "single machine on S3 (Rust, jobs=2)")
        return 0
    # local files: the plan's bucket per host (one here, on its two threads), and a bucket
    # per worker (each reading every file)
    runs = [("local files", paths, "direct", 0), ("local files, 2 buckets", paths, "direct", 2)]
    if not args.no_urls:
        runs += [("file:// URLs", urls(paths), "direct", 0)]
        runs += [("file:// URLs, 2 buckets, direct", urls(paths), "direct", 2)]
        runs += [("file:// URLs, split, groupby", urls(paths), "groupby", 2)]
        runs += [("file:// URLs, split, foldby", urls(paths), "foldby", 2)]
    report(measure(args.rounds, paths, runs, None), "single machine (Rust, jobs=2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
