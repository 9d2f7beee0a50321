"""``fastmerge.batch.merge_logs`` on both backends: bad lines under each ``errors`` mode,
bad ``order_by`` values, a stream that cannot be merged, ``strict``, ``max_open_streams``, and
options refused as batch errors."""

from __future__ import annotations

import io
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _support.batch import (
    TWO,
    batch_fixture,  # noqa: F401 (the ``batch`` fixture)
    chat,
    lines,
    run,
    summary,
    two_streams,
    wrap,
    write,
)

from fastmerge.errors import BatchError

# -- errors


def bad_log(tmp_path: Path) -> str:
    records: list[Any] = two_streams()
    records.insert(2, b"{not json")
    records.insert(4, b"[1, 2]")
    records.insert(6, {"event": {}})
    records.insert(7, {"stream_id": True, "event": {}})
    records.insert(9, {"stream_id": "a"})
    records.insert(10, b"   ")  # blank: not a record
    return write(tmp_path / "bad.jsonl", lines(records))


BAD = [
    "bad.jsonl:3: not valid JSON",
    "bad.jsonl:5: a record must be a JSON object, not array",
    "bad.jsonl:7: no stream key at stream_id",
    "bad.jsonl:8: the stream key at stream_id is a boolean, not a string or a number",
    "bad.jsonl:10: no event at event",
]


def test_errors_raise_stops_at_the_first_bad_line(batch: ModuleType, tmp_path: Path) -> None:
    path = bad_log(tmp_path)
    with pytest.raises(BatchError) as info:
        run(batch, path)
    assert str(info.value) == f"{tmp_path}/{BAD[0]}"


def test_errors_skip_counts_bad_lines_and_keeps_every_good_one(
    batch: ModuleType, tmp_path: Path
) -> None:
    run_ = batch.merge_logs(bad_log(tmp_path), group_by="stream_id", event="event", errors="skip")
    assert summary(run_) == TWO
    assert run_.counts == {"complete": 2, "incomplete": 0, "failed": 0, "error": 0, "bad_lines": 5}
    assert run_.bad_lines == []


def test_errors_collect_keeps_every_bad_line_and_every_good_one(
    batch: ModuleType, tmp_path: Path
) -> None:
    path = bad_log(tmp_path)
    run_ = batch.merge_logs(path, group_by="stream_id", event="event", errors="collect")
    assert summary(run_) == TWO
    assert run_.bad_lines == [f"{tmp_path}/{line}" for line in BAD]
    out = io.StringIO()
    run_ = batch.merge_logs(
        path, group_by="stream_id", event="event", errors="collect", errors_file=out
    )
    assert summary(run_) == TWO
    assert out.getvalue() == "".join(f"{tmp_path}/{line}\n" for line in BAD)
    assert run_.bad_lines == []


def test_bad_order_by_values_are_bad_lines(batch: ModuleType, tmp_path: Path) -> None:
    records: list[Any] = two_streams()
    records[1] = {**records[1], "seq": None}
    records[3] = {**records[3], "seq": [3]}
    path = write(tmp_path / "bad.jsonl", lines(records))
    run_ = batch.merge_logs(
        path, group_by="stream_id", event="event", order_by="seq", errors="collect"
    )
    got = summary(run_)
    assert run_.bad_lines == [
        f"{path}:2: no order_by value at seq",
        f"{path}:4: the order_by value at seq is an array, not a number or a string",
    ]
    assert [r[:3] for r in got] == [
        ("a", "openai-chat", "complete"),
        ("b", "openai-chat", "complete"),
    ]
    assert [r[3] for r in got] == ["xyz", "234"]  # b's role chunk and "1" were bad lines


def test_a_stream_that_cannot_be_merged_is_an_error_record(
    batch: ModuleType, aggregate_module: ModuleType, tmp_path: Path
) -> None:
    records = two_streams() + wrap([("c", {"hello": 1}), ("c", {"world": 2})])
    path = write(tmp_path / "log.jsonl", lines(records))
    results = list(batch.merge_logs(path, group_by="stream_id", event="event"))
    with pytest.raises(ValueError) as info:
        aggregate_module.aggregate([{"hello": 1}, {"world": 2}])
    assert summary(results)[2] == ("c", None, "error", str(info.value))
    assert results[2].record() == {
        "key": "c",
        "provider": None,
        "status": "error",
        "anomalies": [],
        "message": None,
        "error": "no event could be read: event 1: cannot tell the provider from this event "
        "(keys: 'hello'); pass provider= one of 'openai-chat', 'openai-responses', "
        "'anthropic', 'gemini', 'bedrock-converse', 'ollama'",
    }


def test_strict_fails_only_the_stream_with_the_anomaly(batch: ModuleType, tmp_path: Path) -> None:
    a = chat("a", ["x"])
    a.insert(1, "{broken")  # an event the adapter cannot read: an anomaly, or strict's error
    records = wrap([("a", e) for e in a]) + wrap([("b", e) for e in chat("b", ["y"])])
    path = write(tmp_path / "log.jsonl", lines(records))
    # a is not fed after its error, but still ends at its usage chunk
    assert run(batch, path, strict=True) == [
        ("a", "openai-chat", "error", "event 2: not valid JSON"),
        ("b", "openai-chat", "complete", "y"),
    ]
    lenient = list(batch.merge_logs(path, group_by="stream_id", event="event"))
    assert lenient[0].status == "complete"
    assert lenient[0].anomalies == [
        {"code": "unreadable_event", "detail": "event 2: not valid JSON"}
    ]


def test_max_open_streams_is_an_error_naming_the_line(batch: ModuleType, tmp_path: Path) -> None:
    path = write(tmp_path / "log.jsonl", lines(two_streams()))
    assert run(batch, path, max_open_streams=2) == TWO
    with pytest.raises(BatchError) as info:
        run(batch, path, max_open_streams=1)
    assert str(info.value) == (
        f"more than 1 streams open at {path}:2; raise --max-open-streams "
        "(max_open_streams=), or pass 0 for no limit"
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"event": "event"},
            "wrapper records need a stream key: pass group_by (e.g. group_by='stream_id')",
        ),
        (
            {"group_by": "file", "event": "event"},
            "wrapper records need a stream key: pass group_by (e.g. group_by='stream_id')",
        ),
        ({"group_by": ""}, "group_by is empty: pass a dotted path or a JSON pointer"),
        ({"group_by": "a..b"}, "group_by 'a..b' has an empty segment"),
        (
            {"group_by": "k", "event": "/a~2"},
            "event '/a~2' is not a valid JSON pointer: '~' must be followed by 0 or 1",
        ),
        (
            {"order_by": "seq"},
            "order_by sorts the records of a stream: pass group_by (e.g. "
            "group_by='stream_id'); a file read as one stream is read in its order",
        ),
        (
            {"provider": "openai"},
            "unknown provider 'openai'; expected one of 'auto', 'openai-chat', "
            "'openai-responses', 'anthropic', 'gemini', 'bedrock-converse', 'ollama'",
        ),
        ({"jobs": -1}, "jobs must be 0 or more, not -1"),
        ({"max_open_streams": -2}, "max_open_streams must be 0 or more, not -2"),
    ],
)
def test_bad_options_are_batch_errors(
    batch: ModuleType, tmp_path: Path, options: dict[str, Any], message: str
) -> None:
    path = write(tmp_path / "log.jsonl", lines(two_streams()))
    with pytest.raises(BatchError) as info:
        batch.merge_logs(path, **options)
    assert str(info.value) == message


def test_an_unknown_errors_mode_is_a_value_error(batch: ModuleType, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="^unknown errors 'ignore'; expected one of 'raise', "):
        batch.merge_logs(str(tmp_path), errors="ignore")  # type: ignore[arg-type]
