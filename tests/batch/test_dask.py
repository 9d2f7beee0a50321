"""fastmerge.dask on a LocalCluster (2 worker processes) gives the single-machine batch's
records, byte for byte and in the same order, when streams cross file boundaries; and when a
worker is killed mid-job."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
import time
import zlib
from decimal import Decimal
from pathlib import Path
from types import ModuleType
from typing import Any

import dask
import dask.bag
import distributed
import pytest
from _support.batch import batch_module, chat, chunk, generated_log, lines, wrap, write

from fastmerge import cli, errors
from fastmerge import dask as fdask
from fastmerge.batch import BatchOptions


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


@pytest.mark.parametrize(
    ("where", "shuffle", "buckets"),
    [
        ("files", "direct", 3),
        ("files", "direct", 0),
        ("urls", "direct", 0),
        ("mixed", "direct", 0),
        ("urls", "direct", 3),
        ("urls", "groupby", 3),
        ("urls", "foldby", 3),
    ],
)
def test_eight_files_give_the_single_machine_records_byte_for_byte(
    client: Any,
    batch: ModuleType,
    backend_name: str,
    tmp_path: Path,
    where: str,
    shuffle: str,
    buckets: int,
) -> None:
    """Local files (every bucket's task reads them: three buckets, or the one of the cluster's
    one host), and the same files as URLs: read by each bucket's task itself (``direct``: the
    one host's bucket, or three; also among local files), or split once, each bucket's
    fragments brought to its task by a Dask Bag shuffle (``groupby``, ``foldby``)."""
    data, bad = tricky_log()
    paths = split_log(tmp_path, data, 8)
    options: dict[str, Any] = dict(group_by="stream_id", event="event", errors="collect")
    one = batch.merge_logs(paths, **options)
    expected = records(one)
    inputs = paths if where == "files" else [Path(p).as_uri() for p in paths]
    if where == "mixed":
        inputs = [p if i % 2 else u for i, (p, u) in enumerate(zip(paths, inputs))]
    job = fdask.merge_logs(
        inputs, buckets=buckets, shuffle=shuffle, backend=backend_name, **options
    )
    # the plan: the buckets read the inputs themselves, or the inputs are split and moved
    assert (job._packed is not None) == (where == "files" or shuffle == "direct")
    assert job._job.buckets == (buckets or 1)
    run = job.compute()
    assert records(run) == expected
    # a bad line is named by its input as given: the URL where the job read one
    renamed = []
    for line in one.bad_lines:
        (path, url) = next((p, u) for p, u in zip(paths, inputs) if line.startswith(f"{p}:"))
        renamed.append(url + line[len(path) :])
    assert run.bad_lines == renamed
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


@pytest.mark.parametrize("shuffle", ["direct", "groupby", "foldby"])
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
    # two buckets (one host has one by default): a task on each worker
    job = fdask.merge_logs(paths, backend="rust", buckets=2, **options)
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


def odd_lines() -> bytes:
    """Records whose keys a light scan could misread: duplicate keys (the last counts), a
    key after an event that quotes its name, an escaped member name that spells it, keys
    with escapes, numbers, a key inside an object, CRLF ends, blank lines, bad lines."""
    events = {k: chat(k, ["w"]) for k in ("a", "b", "c", "d", "é")}
    rows = [
        b'{"stream_id": "zz", "event": %s, "stream_id": "a"}' % json.dumps(events["a"][0]).encode(),
        b'{"event": {"content": "\\"stream_id\\": \\"b\\""}, "stream_id": "a"}',
        # (spelled before the event: after it, the engine reads the line as not JSON and the
        # twin reads key "a")
        b'{"stream_id": "b", "stream\\u005fid": "a", "event": %s}'
        % json.dumps(events["a"][1]).encode(),
        b'{"stream_id": "b", "event": %s}\r' % json.dumps(events["b"][0]).encode(),
        b"   ",
        b'{"stream_id": "c\\u0301", "event": %s}' % json.dumps(events["c"][0]).encode(),
        b'{"stream_id": 12, "event": %s}' % json.dumps(events["d"][0]).encode(),
        b'{"stream_id": "\xc3\xa9", "event": %s}' % json.dumps(events["\xe9"][0]).encode(),
        b'{"meta": {"stream_id": "x"}, "stream_id": "d", "event": %s}'
        % json.dumps(events["d"][1]).encode(),
        b'{"stream_id": "a", "event": {"a": [1, {"b": "}"}]}, "x": tru}',  # not JSON
        b'{"stream_id": "a" "event": {}}',
        b"[1, 2]",
        b'{"stream_id": "e", "event": {"x": "\\\\"}, "stream_id": "f"}',
    ]
    for key in ("a", "b", "d"):
        rows += lines([{"stream_id": key, "event": e} for e in events[key][2:]]).split(b"\n")
    return b"\n".join(rows)  # no line end after the last line


@pytest.mark.single_run
@pytest.mark.parametrize("buckets", [1, 3])
def test_bucket_cores_agree_across_backends(tmp_path: Path, buckets: int) -> None:
    """``BatchCore(bucket=(b, n))`` gives the same items on both backends, with any jobs:
    each stream in the bucket of the key the record reader reads, each bad line in exactly
    one bucket, each item at its place in the whole batch, which they make up together."""
    data = b"\xef\xbb\xbf" + odd_lines()
    paths = [write(tmp_path / "a.jsonl", data), write(tmp_path / "b.jsonl", data, "gzip")]
    args = ("stream_id", "event", None)

    def drain(name: str, bucket: tuple[int, int] | None, jobs: int = 1) -> list[Any]:
        core = batch_module(name).run._Core(paths, *args, jobs=jobs, positions=True, bucket=bucket)
        out = []
        while True:
            try:
                out.append(core.next())
            except StopIteration:
                return out

    whole = drain("python", None)
    assert sum(item[0] == "bad" for item in whole) >= 6 and len(whole) > 10
    assert drain("rust", None, 2) == whole
    every = []
    for b in range(buckets):
        got = drain("python", (b, buckets))
        for jobs in (1, 2):
            assert drain("rust", (b, buckets), jobs) == got
        for item in got:
            if item[0] == "stream":
                assert zlib.crc32(item[1].encode()) % buckets == b
        every += got
    assert sorted(every, key=lambda item: item[-1]) == whole


@pytest.mark.parametrize(
    ("bucket", "error", "text"),
    [
        ([0, 2], TypeError, "bucket must be a tuple (bucket, buckets) of int"),
        ((0,), TypeError, "bucket must be a tuple"),
        ((0, True), TypeError, "bucket must be a tuple"),
        ((-1, 2), errors.BatchError, "bucket must be 0 or more, not -1"),
        ((0, -2), errors.BatchError, "buckets must be 0 or more, not -2"),
        ((0, 0), errors.BatchError, "buckets must be 1 or more, not 0"),
        ((2, 2), errors.BatchError, "bucket must be below buckets (2), not 2"),
        ((2**70, 2**70), errors.BatchError, "bucket must be below buckets"),
    ],
)
def test_a_wrong_bucket_is_the_same_error_on_both_backends(
    tmp_path: Path, bucket: Any, error: type[Exception], text: str
) -> None:
    path = write(tmp_path / "a.jsonl", lines(wrap([("a", e) for e in chat("a", ["x"])])))
    raised = []
    for name in ("rust", "python"):
        with pytest.raises(error) as caught:
            batch_module(name).run._Core([path], "stream_id", "event", bucket=bucket)
        raised.append(str(caught.value))
    assert raised[0] == raised[1]
    assert text in raised[0]
    for name in ("rust", "python"):
        with pytest.raises(errors.BatchError, match="bucket reads records by their stream key"):
            batch_module(name).run._Core([path], "file", bucket=(0, 2))


@pytest.mark.parametrize("buckets", [1, 2, 5])
def test_odd_records_bom_and_blank_lines_give_the_single_machine_records(
    client: Any, batch: ModuleType, backend_name: str, tmp_path: Path, buckets: int
) -> None:
    data = odd_lines()
    paths = [
        write(tmp_path / "0.jsonl", b"\xef\xbb\xbf\xef\xbb\xbf" + data),  # one BOM stays
        write(tmp_path / "1.jsonl", b"\n\n" + data + b"\n", "gzip"),
        write(tmp_path / "2.jsonl", b"\xef\xbb\xbf" + data + b"\n\n\n"),
    ]
    options: dict[str, Any] = dict(group_by="stream_id", event="event", errors="collect")
    one = batch.merge_logs(paths, **options)
    expected = records(one)
    job = fdask.merge_logs(paths, buckets=buckets, backend=backend_name, **options)
    run = job.compute()
    assert records(run) == expected
    assert run.bad_lines == one.bad_lines
    assert run.counts == one.counts
    assert f"{paths[0]}:1: not valid JSON" in one.bad_lines  # the BOM left on the first line
    assert len(expected) >= 8  # 'a' in each file (a new response), b, d, c\u0301, 12, é...


@pytest.mark.parametrize("where", ["files", "urls"])
def test_an_ended_stream_is_joined_within_the_park_lines_only(
    client: Any, batch: ModuleType, backend_name: str, tmp_path: Path, where: str
) -> None:
    """A record of an ended stream's key joins it up to PARK_LINES lines of input later
    (blank lines and the other buckets' records count), and starts another stream after:
    the distance is the input's, not the bucket's."""
    gap = 1 << 16  # PARK_LINES
    key = "k0"
    other = next(
        k
        for k in ("k1", "k2", "k3", "k4")
        if zlib.crc32(k.encode()) % 2 == 1 - zlib.crc32(b"k0") % 2
    )
    first = chat("one", ["a"])
    late = chunk("one", choices=[{"index": 0, "delta": {"content": "late"}}])
    near = lines(wrap([(key, e) for e in first])) + lines(
        wrap([(other, e) for e in chat("o", ["b"])])
    )
    paths = [
        write(tmp_path / "near.jsonl", near + b"\n" * 10 + lines(wrap([(key, late)]))),
        write(tmp_path / "blank.jsonl", b"\n" * gap),
        write(
            tmp_path / "far.jsonl",
            lines(
                wrap([(other, e) for e in chat("p", ["c"])]) + [{"stream_id": key, "event": late}]
            )
            + lines([{"stream_id": key, "event": late}]),
        ),
    ]
    options: dict[str, Any] = dict(group_by="stream_id", event="event")
    expected = records(batch.merge_logs(paths, **options))
    keys = [json.loads(r)["key"] for r in expected]
    assert keys.count(key) == 2  # joined once (10 lines on), a new stream past PARK_LINES
    inputs = paths if where == "files" else [Path(p).as_uri() for p in paths]
    job = fdask.merge_logs(inputs, buckets=2, backend=backend_name, **options)
    assert records(job.compute()) == expected


def test_buckets_must_be_a_count(tmp_path: Path) -> None:
    path = write(tmp_path / "x.jsonl", b"")
    with pytest.raises(errors.BatchError, match="buckets must be 0 or more, not -1"):
        fdask.merge_logs([path], group_by="k", buckets=-1)
    with pytest.raises(TypeError, match="buckets"):
        fdask.merge_logs([path], group_by="k", buckets=1.0)  # type: ignore[arg-type]
    # a graph of millions of tasks would only stall the scheduler
    with pytest.raises(errors.BatchError, match="buckets must be at most 65536, not 65537"):
        fdask.merge_logs([path], group_by="k", buckets=fdask.MAX_BUCKETS + 1)
    # jobs beyond the engine's threads: the core's check, before any task
    with pytest.raises(errors.BatchError, match="jobs must be at most 4096, not 5000"):
        fdask.merge_logs([path], group_by="k", jobs=5000)


def local_job(paths: list[str], backend_name: str, **options: Any) -> Any:
    """A job on local files as :func:`fdask.merge_logs` makes it (its tasks run here)."""
    o = BatchOptions(group_by="stream_id", event="event", jobs=1)
    job = fdask._Job(paths, o.but(**options), 2, backend_name)
    job.sizes = [os.path.getsize(p) for p in paths]
    return job


def test_a_bucket_task_raises_what_its_core_raises(backend_name: str, tmp_path: Path) -> None:
    """A bucket's task never returns the items of an input cut short: a damaged file raises
    the reader's error, a file that is not what the job planned says so, a missing one is
    the core's file error, and so are bad options."""
    data = lines(wrap([("a", e) for e in chat("a", ["x", "y"])]))
    paths = [write(tmp_path / "a.jsonl", data), write(tmp_path / "b.jsonl", data, "gzip")]
    job = local_job(paths, backend_name)
    bucket = zlib.crc32(b"a") % 2
    assert fdask._aggregate_local(job, 1 - bucket) == []
    items = fdask._aggregate_local(job, bucket)
    # file 1's records join the stream ended in file 0 (the same response): one item, at its
    # last record (file 1's usage chunk, line 5), as on one machine
    assert [item[1][1] for item in items] == ["a"]
    assert items[0][0] == (0, 1, 5)
    one = batch_module(backend_name).run._Core(paths, "stream_id", "event", positions=True)
    assert one.next()[-1] == (0, 1, 5)
    packed = Path(paths[1]).read_bytes()
    Path(paths[1]).write_bytes(packed[: len(packed) // 2])
    job.sizes[1] = len(packed) // 2
    with pytest.raises(errors.BatchError, match=f"{paths[1]}: .*gzip"):
        fdask._aggregate_local(job, bucket)
    Path(paths[1]).write_bytes(data)  # not the bytes the job planned
    with pytest.raises(errors.BatchError, match=f"{paths[1]}: changed while the job read it"):
        fdask._aggregate_local(job, bucket)
    broken = local_job(paths, backend_name, provider="nope")
    with pytest.raises(errors.BatchError, match="provider"):
        fdask._aggregate_local(broken, bucket)
    Path(paths[1]).rename(tmp_path / "gone")
    with pytest.raises(errors.BatchError, match=f"{paths[1]}: No such file"):
        fdask._aggregate_local(job, bucket)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_named_pipe_is_read_once(
    client: Any, batch: ModuleType, backend_name: str, tmp_path: Path
) -> None:
    """Every bucket reads each regular file; an input that is not one (a named pipe) is read
    once, by the plan that sends its records to their buckets."""
    data, _ = tricky_log()
    pipe = str(tmp_path / "pipe.jsonl")
    os.mkfifo(pipe)
    other = write(tmp_path / "other.jsonl", data[: len(data) // 3])

    def feed() -> None:
        with open(pipe, "wb") as sink:
            sink.write(data)

    options: dict[str, Any] = dict(group_by="stream_id", event="event", errors="collect")
    runs = []
    for run in (
        lambda: batch.merge_logs([other, pipe], **options),
        lambda: fdask.merge_logs([other, pipe], backend=backend_name, **options).compute(),
    ):
        feeder = threading.Thread(target=feed, daemon=True)
        feeder.start()
        result = run()
        runs.append((records(result), result.bad_lines))
        feeder.join(30)
        assert not feeder.is_alive()
    assert runs[1] == runs[0]
    assert len(runs[0][0]) > 40


class _Pair(tuple):  # type: ignore[type-arg]
    """A tuple subclass: marshal does not write it, pickle does."""


@pytest.mark.parametrize(
    ("items", "packer"),
    [
        (
            [((0, 1, 2), ("stream", "k", "openai-chat", [{"t": "\ud800é", "n": 2**70}], None))],
            b"m",
        ),
        ([((1, 0, 0), ("bad", "f", 3, float("inf")))], b"m"),
        ([], b"m"),
        ([((0, 0, 1), _Pair(("stream", "k")))], b"p"),
        ([((0, 0, 1), ("stream", {"d": Decimal("1.5")}))], b"p"),
    ],
)
def test_a_partition_is_packed_and_read_back_whole(items: list[Any], packer: bytes) -> None:
    (part,) = fdask._pack(iter(items))
    assert part[:1] == packer
    back = fdask._unpack(part)
    assert back == items
    assert [type(item) for _, item in back] == [type(item) for _, item in items]
    assert repr(back) == repr(items)


@pytest.mark.single_run
def test_local_files_get_one_bucket_per_host_run_there_on_its_threads(tmp_path: Path) -> None:
    """Every bucket of local files reads every file: by default one bucket per host (here two
    workers of one thread on 127.0.0.1 and 127.0.0.2), each task on its host's worker with
    that host's threads; the single machine's records all the same. Without a client: one
    bucket, this machine's cores."""
    data, _ = tricky_log()
    paths = split_log(tmp_path, data, 8)
    options: dict[str, Any] = dict(group_by="stream_id", event="event", errors="collect")
    expected = records(batch_module("rust").merge_logs(paths, **options))
    # a fresh process has no client
    code = "from fastmerge import dask; print(dask._hosts())"
    alone = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert alone.stdout == f"[([], {os.cpu_count()})]\n", alone.stderr
    workers = {
        f"w{i}": {"cls": distributed.Worker, "options": {"nthreads": 1, "host": f"127.0.0.{i}"}}
        for i in (2, 1)
    }
    scheduler = {"cls": distributed.Scheduler, "options": {"dashboard_address": ":0"}}
    with (
        distributed.SpecCluster(scheduler=scheduler, workers=workers) as cluster,
        distributed.Client(cluster) as client,
    ):
        client.wait_for_workers(2, timeout=60)
        hosts = fdask._hosts()
        assert [[a.split("//")[1].split(":")[0] for a in w] for w, _ in hosts] == [
            ["127.0.0.1"],
            ["127.0.0.2"],
        ]
        assert [threads for _, threads in hosts] == [1, 1]
        job = fdask.merge_logs(paths, backend="rust", **options)
        assert job._job.targets == hosts
        with distributed.get_task_stream(client) as stream:
            run = job.compute()
        assert records(run) == expected
        ran = {task["key"][1]: task["worker"] for task in stream.data}
        assert ran == {0: hosts[0][0][0], 1: hosts[1][0][0]}


def test_one_host_runs_one_bucket_on_all_its_threads(client: Any, tmp_path: Path) -> None:
    """The LocalCluster of two one-thread workers is one host: one bucket, two threads;
    ``buckets`` and ``jobs`` given are kept."""
    (address_a, address_b) = sorted(client.nthreads())
    assert fdask._hosts() == [([address_a, address_b], 2)]
    path = write(tmp_path / "log.jsonl", lines(wrap([("k", e) for e in chat("k", ["a"])])))
    options: dict[str, Any] = dict(group_by="stream_id", event="event")
    job = fdask.merge_logs([path], **options)
    assert job._job.targets == [([address_a, address_b], 2)]
    job = fdask.merge_logs([path], buckets=3, jobs=2, **options)
    assert job._job.targets == [([], 2)] * 3
    assert [r.messages[0].content for r in job.compute()] == ["a"]
    for bad, error in ((-1, errors.BatchError), (1.5, TypeError), (True, TypeError)):
        with pytest.raises(error, match="jobs"):
            fdask.merge_logs([path], jobs=bad, **options)  # type: ignore[arg-type]
