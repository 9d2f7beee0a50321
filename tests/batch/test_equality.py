"""A stream merged by the batch reader is exactly the stream aggregated alone, on both
backends: every corpus stream (one file per stream, and all of them interleaved in one log of
wrapper records), and the streams of a generated gateway log (in one file, and rotated over
files of three compressions)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest
from _support.batch import (
    aggregated,
    batch_module,
    corpus_events,
    corpus_files,
    generated_log,
    lines,
    write,
)
from conftest import BACKENDS

ROOT = Path(__file__).resolve().parents[2]
#: The corpus stream with a chunk after its include_usage chunk (a moderation chunk, same
#: id): it belongs to the response the usage chunk ended, so it joins that stream.
TRAILING = "openai_chat/gpt5-trailing-moderation-chunk"


def messages(result: Any) -> list[bytes] | str:
    """A batch result as :func:`_batch.aggregated` gives the stream aggregated alone."""
    if result.messages is None:
        return str(result.error)
    return [orjson.dumps(m.to_dict()) for m in result.messages]


def test_every_corpus_file_merges_as_aggregate_reads_it(
    batch: ModuleType, aggregate_module: ModuleType
) -> None:
    files = corpus_files()
    assert len(files) >= 90
    results = list(batch.merge_logs([str(f) for f in files]))
    assert [r.key for r in results] == [str(f) for f in files]
    for path, result in zip(files, results):
        try:
            expected: Any = [
                orjson.dumps(m.to_dict())
                for m in aggregate_module.aggregate_choices(path.read_bytes())
            ]
        except ValueError as exc:
            expected = str(exc)
        assert messages(result) == expected, path


@pytest.mark.parametrize("as_text", [False, True], ids=["object", "text"])
def test_the_corpus_interleaved_in_one_log_gives_each_stream_alone(
    batch: ModuleType, aggregate_module: ModuleType, tmp_path: Path, as_text: bool
) -> None:
    streams = corpus_events()
    records = []
    # round robin over the streams: every stream is open while the others are read
    longest = max(len(events) for events in streams.values())
    for i in range(longest):
        for key, events in streams.items():
            if i < len(events):
                event = json.dumps(events[i]) if as_text else events[i]
                records.append({"stream_id": key, "seq": i, "event": event})
    path = write(tmp_path / "corpus.jsonl", lines(records))
    got: dict[str, list[Any]] = defaultdict(list)
    for result in batch.merge_logs(path, group_by="stream_id", event="event"):
        got[result.key].append(messages(result))
    assert sorted(got) == sorted(streams)
    assert TRAILING in streams
    for key, events in streams.items():
        # the chunk after the usage chunk of TRAILING joins its stream (an end event is a hint)
        assert got[key] == [aggregated(aggregate_module, events)], key


def test_a_generated_log_gives_each_stream_alone_also_rotated(
    batch: ModuleType, aggregate_module: ModuleType, tmp_path: Path
) -> None:
    data = generated_log(120, 400_000)
    events: dict[str, list[Any]] = defaultdict(list)
    for line in data.splitlines():
        record = json.loads(line)
        events[record["stream_id"]].append(record["event"])
    whole = write(tmp_path / "gateway.jsonl", data)
    results = list(batch.merge_logs(whole, group_by="stream_id", event="event", jobs=2))
    assert len(results) == 120
    for result in results:
        assert messages(result) == aggregated(aggregate_module, events[result.key]), result.key
    assert {r.status for r in results} == {"complete"}
    # rotated: three files, cut inside streams, each compressed its own way
    cuts = [0, len(data) // 3, 2 * len(data) // 3, len(data)]
    cuts[1:3] = [data.index(b"\n", c) + 1 for c in cuts[1:3]]
    parts = [
        write(tmp_path / f"gateway.{i}", data[a:b], fmt)
        for i, (a, b, fmt) in enumerate(zip(cuts, cuts[1:], [None, "gzip", "zstd"]))
    ]
    rotated = batch.merge_logs(parts, group_by="stream_id", event="event", jobs=1)
    assert [orjson.dumps(r.record()) for r in rotated] == [
        orjson.dumps(r.record()) for r in results
    ]


@pytest.mark.single_run
def test_both_backends_give_the_same_records_in_the_same_order(tmp_path: Path) -> None:
    if len(BACKENDS) < 2:
        pytest.skip("one backend under test")
    data = generated_log(60, 150_000) + b"not json\n" + lines([{"stream_id": 1}])
    path = write(tmp_path / "gateway.jsonl.zst", data, "zstd")
    outputs = []
    for name in BACKENDS:
        run = batch_module(name).merge_logs(
            path, group_by="stream_id", event="event", errors="collect"
        )
        outputs.append(([orjson.dumps(r.record()) for r in run], run.bad_lines, run.progress()))
    assert outputs[0] == outputs[1]
