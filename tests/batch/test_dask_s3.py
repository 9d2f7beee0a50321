"""fastmerge.dask on S3 URLs (moto's server on 127.0.0.1, a LocalCluster of 2 worker
processes): each bucket's task reads the objects from the store itself, so no record, line or
fragment moves between processes; the results, bad lines, counts and errors are the single
machine's on the same objects with the same ``storage_options``, byte for byte and in order."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any, Iterator

import distributed
import pytest
from _support.batch import (
    COMPRESSORS,
    chat,
    dumped,
    generated_log,
    interleave,
    lines,
    wrap,
)
from _support.s3 import moto_s3, put

from fastmerge import dask as fdask
from fastmerge import errors

OPTIONS: dict[str, Any] = dict(group_by="stream_id", event="event", errors="collect")


@pytest.fixture(scope="module")
def storage() -> Iterator[dict[str, Any]]:
    """moto's S3; the ``storage_options`` that reach it from the workers (other processes)."""
    with moto_s3() as endpoint:
        yield {"endpoint_url": endpoint, "key": "testing", "secret": "testing"}


def stored(prefix: str, data: bytes, packers: list[str | None]) -> list[str]:
    """``data`` cut at line ends inside streams into one object per packer (None: plain),
    stored under ``prefix``; their URLs."""
    n = len(packers)
    cuts = [0, *(data.index(b"\n", len(data) * i // n) + 1 for i in range(1, n)), len(data)]
    urls = []
    for i, (packer, a, b) in enumerate(zip(packers, cuts, cuts[1:])):
        part = data[a:b] if packer is None else COMPRESSORS[packer](data[a:b])
        urls.append(put(f"{prefix}/{i:02d}.{packer or 'jsonl'}", part))
    return urls


def with_bad_lines(data: bytes) -> bytes:
    """``data`` with a bad line after every 41st line, and one not UTF-8."""
    out = []
    for i, line in enumerate(data.splitlines(keepends=True)):
        out.append(line)
        if i % 41 == 4:
            out.append(b"not json\n" if i % 2 else b'{"stream_id": "\xff", "event": {}}\n')
    return b"".join(out)


def one_machine(batch: ModuleType, urls: list[str], storage: dict[str, Any]) -> Any:
    return batch.merge_logs(urls, storage_options=storage, **OPTIONS)


@pytest.mark.parametrize("buckets", [0, 1, 3])
@pytest.mark.parametrize(
    "packers", [[None, None, None, None], [None, "gzip", None, "zstd"]], ids=["plain", "packed"]
)
def test_s3_objects_give_the_single_machine_results(
    client: Any,
    storage: dict[str, Any],
    batch: ModuleType,
    backend_name: str,
    buckets: int,
    packers: list[str | None],
) -> None:
    """Streams split across four objects (plain, or some compressed: read whole by each
    task), read by the one host's bucket (``buckets=0``) or by each of one or three buckets:
    the single machine's records, bad lines (named by URL) and counts."""
    data = with_bad_lines(generated_log(30, 150_000))
    urls = stored(f"split/{'-'.join(map(str, packers))}", data, packers)
    one = one_machine(batch, urls, storage)
    expected = dumped(one)
    job = fdask.merge_logs(
        urls, buckets=buckets, backend=backend_name, storage_options=storage, **OPTIONS
    )
    assert job._job.buckets == (buckets or 1)
    run = job.compute()
    assert dumped(run) == expected
    assert run.bad_lines == one.bad_lines
    assert run.counts == one.counts
    assert len(expected) == 30
    assert len(one.bad_lines) > 10
    assert all(line.startswith(f"{urls[0].rsplit('/', 1)[0]}/") for line in one.bad_lines)


def test_objects_that_are_one_stream_each(
    client: Any, storage: dict[str, Any], batch: ModuleType, backend_name: str
) -> None:
    """``group_by`` auto: each object whole is one stream, read by its own task."""
    urls = [
        put(f"whole/{i}.jsonl", lines(chat(f"w{i}", ["a", "b", "c"][: i + 1]))) for i in range(3)
    ]
    urls.append(put("whole/3.gz", COMPRESSORS["gzip"](lines(chat("w3", ["z"])))))
    expected = dumped(batch.merge_logs(urls, storage_options=storage))
    job = fdask.merge_logs(urls, buckets=2, backend=backend_name, storage_options=storage)
    assert dumped(job.compute()) == expected
    assert [r.key for r in batch.merge_logs(urls, storage_options=storage)] == urls


def test_nothing_but_the_bucket_tasks_runs_and_nothing_moves_between_workers(
    client: Any, storage: dict[str, Any], batch: ModuleType, backend_name: str
) -> None:
    """With three buckets the job is three tasks, each a bucket reading every object from
    the store (no split, pick or shuffle task), none waiting for another's output: no
    transfer between workers; the only data that leaves a worker is its bucket's results.
    ``groupby`` on the same objects splits them and moves their records (what it did
    before)."""
    data = generated_log(20, 80_000)
    urls = stored("moves", data, [None, "gzip", None])
    expected = dumped(one_machine(batch, urls, storage))
    moved = {}
    for shuffle in ("direct", "groupby"):
        job = fdask.merge_logs(
            urls,
            buckets=3,
            shuffle=shuffle,  # type: ignore[arg-type]
            backend=backend_name,
            storage_options=storage,
            **OPTIONS,
        )
        with distributed.get_task_stream(client) as stream:
            assert dumped(job.compute()) == expected
        names = {str(t["key"][0] if isinstance(t["key"], tuple) else t["key"]) for t in stream.data}
        steps = {name.rsplit("-", 1)[0] for name in names}
        transfers = [p for t in stream.data for p in t["startstops"] if p["action"] == "transfer"]
        moved[shuffle] = (steps, len(stream.data), bool(transfers))
    assert moved["direct"] == ({"fastmerge-aggregate"}, 3, False)
    steps, tasks, _ = moved["groupby"]
    assert any("shuffle" in step or "group" in step for step in steps) and tasks > 3


def test_a_damaged_object_is_the_single_machine_error(
    client: Any, storage: dict[str, Any], batch: ModuleType, backend_name: str
) -> None:
    """A gzip object cut short stops the job with the error one machine raises after the
    streams it read (E106: every bucket reads the same damage, at the same place)."""
    data = lines(wrap(interleave(*[(f"s{i}", chat(f"s{i}", ["a"] * 40)) for i in range(30)])))
    packed = COMPRESSORS["gzip"](data)
    urls = [put("damaged/0.jsonl", lines(chat("first", ["x"]))), put("damaged/1.gz", packed)]
    urls[1] = put("damaged/1.gz", packed[: len(packed) // 2])
    with pytest.raises(errors.BatchError) as one:
        dumped(one_machine(batch, urls, storage))
    assert f"{urls[1]}: gzip stream is truncated after" in str(one.value)
    for buckets in (0, 2):
        job = fdask.merge_logs(
            urls, buckets=buckets, backend=backend_name, storage_options=storage, **OPTIONS
        )
        with pytest.raises(errors.BatchError) as many:
            job.compute()
        assert str(many.value) == str(one.value)


def test_an_object_stored_again_after_the_plan_is_an_error(
    client: Any, storage: dict[str, Any], backend_name: str
) -> None:
    """Every bucket must read the same bytes: an object stored again between the plan and a
    bucket's task (another size, or the same size and another ETag) is an error, not results
    made of two versions of it."""
    data = lines(wrap([("k", e) for e in chat("k", ["a", "b"])]))
    for i, again in enumerate([data + data, data.replace(b'"a"', b'"z"')]):
        url = put(f"again/{i}.jsonl", data)
        job = fdask.merge_logs(
            [url], buckets=2, backend=backend_name, storage_options=storage, **OPTIONS
        )
        assert job._job.sizes == [len(data)]
        assert job._job.tags[0] is not None and job._job.tags[0].startswith("ETag=")
        put(f"again/{i}.jsonl", again)
        with pytest.raises(errors.BatchError) as exc:
            job.compute()
        assert str(exc.value) == f"{url}: changed while the job read it"


def test_missing_objects_are_the_single_machine_error(
    storage: dict[str, Any], batch: ModuleType, backend_name: str, tmp_path: Path
) -> None:
    present = put("missing/a.jsonl", lines(chat("p", ["x"])))
    absent = present.replace("a.jsonl", "absent.jsonl")
    with pytest.raises(errors.BatchError) as one:
        batch.merge_logs([present, absent], storage_options=storage, **OPTIONS)
    with pytest.raises(errors.BatchError) as many:
        fdask.merge_logs(
            [present, absent], buckets=2, backend=backend_name, storage_options=storage, **OPTIONS
        )
    assert str(many.value) == str(one.value) == f"{absent}: No such file or directory"
