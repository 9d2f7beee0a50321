"""fastmerge.dask on a LocalCluster (2 worker processes) gives the single-machine batch's
records, byte for byte and in the same order, when streams cross file boundaries; and when a
worker is killed mid-job."""

from __future__ import annotations

import gzip
import json
import os
import time
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator

import dask
import dask.bag
import distributed
import pytest
from _batch import batch_module, chat, lines, wrap, write
from test_batch_equality import generated_log

from fastmerge import cli, errors
from fastmerge import dask as fdask


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    with distributed.Client(cluster) as client:
        yield client
    cluster.close()


@pytest.fixture
def batch(backend_name: str) -> ModuleType:
    return batch_module(backend_name)


def split_log(tmp_path: Path, data: bytes, files: int) -> list[str]:
    """``data`` cut into ``files`` files at line ends inside streams (the lines stay whole)."""
    cuts = [0]
    for i in range(1, files):
        cuts.append(data.index(b"\n", len(data) * i // files) + 1)
    cuts.append(len(data))
    return [
        write(tmp_path / f"log.{i:02d}.jsonl", data[a:b], "gzip" if i % 3 == 1 else None)
        for i, (a, b) in enumerate(zip(cuts, cuts[1:]))
    ]


def tricky_log() -> tuple[bytes, int]:
    """A generated gateway log with, spliced in: bad lines, a key reused after its stream
    ended, a lone ``[DONE]``, a stream still open at the end and an unreadable event; and
    the number of bad lines."""
    base = generated_log(40, 120_000).splitlines(keepends=True)
    extra = wrap(
        [
            *[("reused", e) for e in chat("r1", ["one"])],
            ("reused", "[DONE]"),
            *[("reused", e) for e in chat("r2", ["two", "three"])],
            # a key beyond 64 bits: the cores read it as a float, so must the split
            *[(10**22, e) for e in chat("big", ["x"])],
        ]
    )
    tail = wrap([*[("open", e) for e in chat("o", ["cut"], usage=False)], ("odd", 7)])
    out = []
    bad = 0
    for i, line in enumerate(base):
        out.append(line)
        if i % 37 == 5:
            out.append(b"not json\n")
            bad += 1
        if i % 53 == 7:
            out.append(lines([{"stream_id": None, "event": {}}]))
            out.append(b'{"stream_id": "\xff", "event": {}}\n')  # not UTF-8
            bad += 2
        if extra and i % 20 == 3:
            out.append(lines([extra.pop(0)]))
    assert not extra
    return b"".join(out) + lines(tail), bad


def records(run: Any) -> list[bytes]:
    return [fdask._batch.json_line(r.record()) for r in run]


@pytest.mark.parametrize("shuffle", ["groupby", "foldby"])
def test_eight_files_give_the_single_machine_records_byte_for_byte(
    client: Any, batch: ModuleType, backend_name: str, tmp_path: Path, shuffle: str
) -> None:
    data, bad = tricky_log()
    paths = split_log(tmp_path, data, 8)
    options: dict[str, Any] = dict(group_by="stream_id", event="event", errors="collect")
    one = batch.merge_logs(paths, **options)
    expected = records(one)
    job = fdask.merge_logs(paths, buckets=3, shuffle=shuffle, backend=backend_name, **options)
    run = job.compute()
    assert records(run) == expected
    assert run.bad_lines == one.bad_lines
    assert run.counts == one.counts
    # 40 generated streams, "reused" twice, 1e22, "open" (no usage chunk: ends at the end of the
    # input), "odd" (no readable event: an error)
    assert len(one.bad_lines) == bad > 15
    assert one.counts == {
        "complete": 44,
        "incomplete": 0,
        "failed": 0,
        "error": 1,
        "bad_lines": bad,
    }
    keys = [r.split(b'"key":')[1].split(b",")[0] for r in expected]
    assert keys.count(b'"reused"') == 2
    assert keys.count(b'"1e+22"') == 1


def test_order_by_and_the_raise_mode_match_the_single_machine(
    client: Any, batch: ModuleType, backend_name: str, tmp_path: Path
) -> None:
    data = generated_log(20, 60_000)
    reversed_ = b"".join(reversed(data.splitlines(keepends=True)))
    paths = split_log(tmp_path, reversed_, 4)
    options: dict[str, Any] = dict(group_by="stream_id", event="event", order_by="seq")
    expected = records(batch.merge_logs(paths, **options))
    assert len(expected) == 20
    job = fdask.merge_logs(paths, backend=backend_name, **options)
    assert records(job.compute()) == expected
    # errors="raise": the first bad line in input order is the error, as on one machine
    bad = paths + [write(tmp_path / "bad.jsonl", b'{"stream_id": 1}\nnope\n')]
    with pytest.raises(errors.BatchError) as one:
        records(batch.merge_logs(bad, **options))
    with pytest.raises(errors.BatchError) as many:
        records(fdask.merge_logs(bad, backend=backend_name, **options).compute())
    assert str(many.value) == str(one.value) == f"{bad[-1]}:1: no event at event"


def test_files_that_are_one_stream_each(
    client: Any, batch: ModuleType, backend_name: str, tmp_path: Path
) -> None:
    paths = [
        write(tmp_path / f"s{i}.jsonl", lines(chat(f"s{i}", ["a", "b"][: i % 2 + 1])))
        for i in range(3)
    ]
    expected = records(batch.merge_logs(paths))
    assert records(fdask.merge_logs(paths, backend=backend_name).compute()) == expected
    assert [json.loads(e)["key"] for e in expected] == paths


def test_bad_options_and_paths_are_the_single_machine_errors(tmp_path: Path) -> None:
    with pytest.raises(errors.BatchError, match="No such file or directory"):
        fdask.merge_logs([str(tmp_path / "missing")], group_by="stream_id")
    with pytest.raises(errors.BatchError, match="group_by 'a..b' has an empty segment"):
        fdask.merge_logs([write(tmp_path / "x", b"")], group_by="a..b")


def text(line: bytes) -> str | bytes:
    """A line as str where it is UTF-8 (a Bag may hold either)."""
    try:
        return line.decode()
    except UnicodeDecodeError:
        return line


@pytest.mark.parametrize("shuffle", ["groupby", "foldby"])
def test_a_bag_of_lines_gives_the_records_of_its_partitions_read_as_files(
    client: Any, batch: ModuleType, backend_name: str, tmp_path: Path, shuffle: str
) -> None:
    """A Bag of lines (bytes, or str) is read as if each partition were a file, in
    partition order: the same records as those files on one machine, and the same bad lines
    named by partition."""
    data, bad = tricky_log()
    paths = split_log(tmp_path, data, 4)
    chunks = []
    for i, path in enumerate(paths):
        with open(path, "rb") as file:
            raw = file.read()
        if raw[:2] == b"\x1f\x8b":  # split_log gzips some files
            raw = gzip.decompress(raw)
        # as dask.bag.read_text gives them (newlines kept), or without their newline
        lines_ = raw.splitlines(keepends=i < 2)
        chunks.append([text(line) for line in lines_] if i % 2 else lines_)
    bag = dask.bag.from_delayed([dask.delayed(chunk) for chunk in chunks])
    assert bag.npartitions == 4
    options: dict[str, Any] = dict(group_by="stream_id", event="event", errors="collect")
    one = batch.merge_logs(paths, **options)
    run = fdask.merge_logs(bag, shuffle=shuffle, backend=backend_name, **options).compute()
    assert records(run) == records(one)
    named = one.bad_lines
    for i, path in enumerate(paths):
        named = [line.replace(f"{path}:", f"<bag partition {i}>:") for line in named]
    assert run.bad_lines == named
    assert len(named) == bad
    assert run.counts == one.counts


def test_a_bag_needs_a_key_and_lines(client: Any, backend_name: str) -> None:
    lines_ = dask.bag.from_sequence([b'{"k": "a", "e": {}}'], npartitions=1)
    with pytest.raises(errors.BatchError, match="a Bag of lines has no files"):
        fdask.merge_logs(lines_, backend=backend_name)
    with pytest.raises(errors.BatchError, match="group_by 'a..b' has an empty segment"):
        fdask.merge_logs(lines_, group_by="a..b", backend=backend_name)
    odd = dask.bag.from_sequence([{"k": "a"}], npartitions=1)
    job = fdask.merge_logs(odd, group_by="k", event="e", backend=backend_name)
    with pytest.raises(TypeError, match="an item of the Bag"):
        job.compute()


@pytest.mark.single_run
def test_a_worker_killed_mid_job_leaves_the_same_result(client: Any, tmp_path: Path) -> None:
    data, bad = tricky_log()
    paths = split_log(tmp_path, data, 8)
    options: dict[str, Any] = dict(group_by="stream_id", event="event", errors="collect")
    expected = records(batch_module("rust").merge_logs(paths, **options))
    flag = str(tmp_path / "go")
    job = fdask.merge_logs(paths, backend="rust", **options)
    job._job.hold = flag
    future = client.compute(job.items)
    # both workers hold split tasks, waiting on the flag: kill one, then let the rest go
    deadline = time.monotonic() + 30
    while len(client.processing()) < 2 or not all(client.processing().values()):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    pids = client.run(os.getpid)
    victim = sorted(pids)[0]
    os.kill(pids[victim], 9)
    open(flag, "w").close()
    pairs = future.result(timeout=120)
    pairs.sort(key=lambda pair: pair[0])
    got = fdask._Items([item for _, item in pairs], 0)
    run = batch_module("rust").Batch(got, "collect", None)
    assert records(run) == expected
    assert len(run.bad_lines) == bad
    client.wait_for_workers(2, timeout=60)


@pytest.mark.single_run
@pytest.mark.parametrize("where", ["address", "local"])
def test_the_cli_on_dask_writes_what_it_writes_on_one_machine(
    client: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path, where: str
) -> None:
    data, bad = tricky_log()
    paths = split_log(tmp_path, data, 8)
    argv = ["batch", *paths, "--group-by", "stream_id", "--event", "event", "--errors", "collect"]
    assert cli.main(argv) == 1  # bad lines
    one = capsys.readouterr()
    address = client.scheduler.address if where == "address" else "local"
    assert cli.main([*argv, "--dask", address]) == 1
    many = capsys.readouterr()
    assert many.out == one.out
    assert many.err == one.err
    assert one.err.count(": not valid JSON\n") + one.err.count(": no stream key at") == bad
    assert one.out.count("\n") == 45
