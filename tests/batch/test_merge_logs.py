"""``fastmerge.batch.merge_logs`` on both backends: inputs (files, directories, globs, stdin,
compression), grouping, order, rotation, errors modes, limits, records, Arrow and Parquet."""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _support.batch import (
    COMPRESSORS,
    batch_module,
    chat,
    chunk,
    decodable,
    dumped,
    interleave,
    lines,
    summary,
    wrap,
    write,
)
from conftest import PACKAGE_ROOT

from fastmerge.errors import BatchError

CORPUS = Path(__file__).resolve().parents[1] / "corpus"


@pytest.fixture
def batch(backend_name: str) -> ModuleType:
    """``fastmerge.batch`` on this test's backend."""
    return batch_module(backend_name)


def two_streams() -> list[dict[str, Any]]:
    """Wrapper records of two interleaved streams: ``a`` (3 words) ends before ``b`` (4)."""
    return wrap(
        interleave(("a", chat("a", ["x", "y", "z"])), ("b", chat("b", ["1", "2", "3", "4"])))
    )


def run(batch: ModuleType, paths: Any, **options: Any) -> list[tuple[Any, ...]]:
    options.setdefault("group_by", "stream_id")
    options.setdefault("event", "event")
    return summary(batch.merge_logs(paths, **options))


TWO = [("a", "openai-chat", "complete", "xyz"), ("b", "openai-chat", "complete", "1234")]


# -- grouping


def test_interleaved_records_are_grouped_by_key_in_the_order_streams_end(
    batch: ModuleType, tmp_path: Path
) -> None:
    path = write(tmp_path / "log.jsonl", lines(two_streams()))
    assert run(batch, path) == TWO


def test_dotted_path_and_json_pointer_find_the_same_key(batch: ModuleType, tmp_path: Path) -> None:
    records = [
        {"meta": {"a/b": [{"id": r["stream_id"]}]}, "payload": {"ev": r["event"]}}
        for r in two_streams()
    ]
    path = write(tmp_path / "log.jsonl", lines(records))
    dotted = run(batch, path, group_by="meta.a/b.0.id", event="payload.ev")
    pointer = run(batch, path, group_by="/meta/a~1b/0/id", event="/payload/ev")
    assert dotted == pointer == TWO


def test_raw_openai_chunks_group_by_their_id(batch: ModuleType, tmp_path: Path) -> None:
    events = [e for _, e in interleave(("a", chat("a", ["x"])), ("b", chat("b", ["y", "z"])))]
    path = write(tmp_path / "raw.jsonl", lines(events))
    assert run(batch, path, group_by="id", event=None) == [
        ("chatcmpl-a", "openai-chat", "complete", "x"),
        ("chatcmpl-b", "openai-chat", "complete", "yz"),
    ]


def test_a_number_key_is_its_json_text(batch: ModuleType, tmp_path: Path) -> None:
    records = [{"k": 42, "event": e} for e in chat("a", ["x"])]
    path = write(tmp_path / "log.jsonl", lines(records))
    assert run(batch, path, group_by="k") == [("42", "openai-chat", "complete", "x")]


def test_a_key_reused_by_another_response_after_its_stream_ended_is_a_new_stream(
    batch: ModuleType, tmp_path: Path
) -> None:
    # a gateway reusing a request id for another response (another chunk id)
    records = wrap([("a", e) for e in chat("a1", ["one"]) + chat("a2", ["two"])])
    path = write(tmp_path / "log.jsonl", lines(records))
    assert run(batch, path) == [
        ("a", "openai-chat", "complete", "one"),
        ("a", "openai-chat", "complete", "two"),
    ]


def test_streams_without_an_end_event_end_at_the_end_of_input_in_first_record_order(
    batch: ModuleType, tmp_path: Path
) -> None:
    b = chat("b", ["b"], usage=False)
    a = chat("a", ["a"], usage=False)
    records = wrap(
        [("b", b[0]), ("a", a[0]), *(("a", e) for e in a[1:]), *(("b", e) for e in b[1:])]
    )
    path = write(tmp_path / "log.jsonl", lines(records))
    assert run(batch, path) == [
        ("b", "openai-chat", "complete", "b"),
        ("a", "openai-chat", "complete", "a"),
    ]


def test_string_events_are_event_text_and_done_ends_the_stream(
    batch: ModuleType, tmp_path: Path
) -> None:
    events: list[Any] = [json.dumps(e) for e in chat("a", ["x", "y"], usage=False)]
    records = wrap([("a", e) for e in [*events, "[DONE]"]] + [("a", "[DONE]")])
    records += wrap([("b", json.dumps(e)) for e in chat("b", ["z"], usage=False)])
    path = write(tmp_path / "log.jsonl", lines(records))
    # the second [DONE] of a finds no open stream: a sentinel carries nothing, no item
    assert run(batch, path) == [
        ("a", "openai-chat", "complete", "xy"),
        ("b", "openai-chat", "complete", "z"),
    ]


def test_each_provider_ends_its_stream_at_its_last_event(batch: ModuleType, tmp_path: Path) -> None:
    # two Anthropic responses under one key: message_stop ends the first (the second has
    # another id: the same one again would be the same response logged twice, rules §6.1)
    def anthropic(message_id: str) -> list[dict[str, Any]]:
        start = {"id": message_id, "role": "assistant", "content": []}
        text = {"type": "text_delta", "text": "hi"}
        return [
            {"type": "message_start", "message": start},
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
            {"type": "content_block_delta", "index": 0, "delta": text},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
            {"type": "message_stop"},
        ]

    ollama = [
        {"model": "m", "response": "o", "done": False},
        {"model": "m", "response": "k", "done": True, "done_reason": "stop"},
    ]
    records = wrap([("k", e) for e in anthropic("msg_1") + anthropic("msg_2") + ollama * 2])
    path = write(tmp_path / "log.jsonl", lines(records))
    assert run(batch, path) == [
        ("k", "anthropic", "complete", "hi"),
        ("k", "anthropic", "complete", "hi"),
        ("k", "ollama", "complete", "ok"),
        ("k", "ollama", "complete", "ok"),
    ]


# -- order


def test_order_by_sorts_each_stream_by_its_sequence_number(
    batch: ModuleType, tmp_path: Path
) -> None:
    records = two_streams()
    records.reverse()
    path = write(tmp_path / "log.jsonl", lines(records))
    # with order_by every stream ends at the end of the input: in first-record order (b)
    assert run(batch, path, order_by="seq") == TWO[::-1]


def test_order_by_a_timestamp_string(batch: ModuleType, tmp_path: Path) -> None:
    records = [{**r, "ts": f"2026-12-01T10:00:{i:02d}Z"} for i, r in enumerate(two_streams())]
    records.reverse()
    path = write(tmp_path / "log.jsonl", lines(records))
    assert run(batch, path, order_by="ts") == TWO[::-1]


def test_order_by_values_that_mix_numbers_and_strings_fail_that_stream(
    batch: ModuleType, tmp_path: Path
) -> None:
    records = two_streams()
    records[0]["seq"] = "0"  # a's first record
    path = write(tmp_path / "log.jsonl", lines(records))
    assert run(batch, path, order_by="seq") == [
        # no event of a was read: the aggregator never saw one, so no provider either
        ("a", None, "error", "order_by values of stream a mix numbers and strings"),
        ("b", "openai-chat", "complete", "1234"),
    ]


def test_a_stream_rotated_over_two_files_is_one_stream(batch: ModuleType, tmp_path: Path) -> None:
    data = lines(two_streams())
    whole = write(tmp_path / "whole.jsonl", data)
    cut = data.index(b"\n", len(data) // 2) + 1
    first = write(tmp_path / "log.1.jsonl", data[:cut])
    second = write(tmp_path / "log.2.jsonl", data[cut:], "gzip")
    one = list(batch.merge_logs(whole, group_by="stream_id", event="event"))
    two = list(batch.merge_logs([first, second], group_by="stream_id", event="event"))
    assert dumped(two) == dumped(one)
    assert summary(two) == TWO


# -- inputs


@pytest.mark.parametrize("fmt", sorted(COMPRESSORS))
def test_compression_is_read_by_magic_bytes_not_by_name(
    batch: ModuleType, tmp_path: Path, fmt: str
) -> None:
    data = lines(two_streams())
    cut = len(data) // 3
    # two members / frames one after another, under a name that says nothing
    packed = COMPRESSORS[fmt](data[:cut]) + COMPRESSORS[fmt](data[cut:])
    path = tmp_path / "log.txt"
    path.write_bytes(packed)
    assert run(batch, str(path)) == TWO


@pytest.mark.parametrize("fmt", sorted(COMPRESSORS))
def test_a_truncated_compressed_file_is_an_error_naming_it(
    batch: ModuleType, tmp_path: Path, fmt: str
) -> None:
    packed = COMPRESSORS[fmt](lines(two_streams()))
    path = tmp_path / "log.bin"
    path.write_bytes(packed[: len(packed) - 12])
    with pytest.raises(BatchError) as info:
        run(batch, str(path))
    offset = decodable(fmt, packed[: len(packed) - 12])
    assert str(info.value) == f"{path}: {fmt} stream is truncated after {offset} decompressed bytes"


def test_a_corrupt_gzip_file_is_an_error(batch: ModuleType, tmp_path: Path) -> None:
    packed = bytearray(COMPRESSORS["gzip"](lines(two_streams())))
    packed[20:40] = b"\xff" * 20
    path = tmp_path / "log.gz"
    path.write_bytes(bytes(packed))
    with pytest.raises(BatchError) as info:
        run(batch, str(path))
    # the header's damage is met before anything decodes
    assert str(info.value) == f"{path}: gzip stream is corrupt after 0 decompressed bytes"


def test_one_stream_per_file_is_the_default(batch: ModuleType, tmp_path: Path) -> None:
    a = write(tmp_path / "a.jsonl", lines(chat("a", ["x"])))
    sse = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in chat("b", ["y"]))
    b = write(tmp_path / "b.sse", sse + b"data: [DONE]\n\n", "zstd")
    assert summary(batch.merge_logs([b, a])) == [
        (b, "openai-chat", "complete", "y"),
        (a, "openai-chat", "complete", "x"),
    ]


def test_directories_are_read_recursively_sorted_without_hidden_files(
    batch: ModuleType, tmp_path: Path
) -> None:
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / ".git").mkdir()
    write(tmp_path / "d" / "sub" / "a.jsonl", lines(chat("s", ["s"])))
    write(tmp_path / "d" / "b.jsonl", lines(chat("b", ["b"])))
    write(tmp_path / "d" / "a.jsonl", lines(chat("a", ["a"])))
    write(tmp_path / "d" / ".hidden.jsonl", b"not read")
    write(tmp_path / "d" / ".git" / "x.jsonl", b"not read")
    d = str(tmp_path / "d")
    assert batch.expand_paths(d) == [
        os.path.join(d, "a.jsonl"),
        os.path.join(d, "b.jsonl"),
        os.path.join(d, "sub", "a.jsonl"),
    ]
    assert [r[3] for r in summary(batch.merge_logs(d))] == ["a", "b", "s"]


def test_globs_expand_sorted_and_paths_keep_their_order(batch: ModuleType, tmp_path: Path) -> None:
    for name in ("c", "a", "b"):
        write(tmp_path / f"{name}.jsonl", lines(chat(name, [name])))
    write(tmp_path / "z.log", lines(chat("z", ["z"])))
    got = summary(batch.merge_logs([str(tmp_path / "z.log"), str(tmp_path / "*.jsonl")]))
    assert [r[3] for r in got] == ["z", "a", "b", "c"]


def test_a_recursive_glob_reads_each_file_once_through_link_cycles(
    batch: ModuleType, tmp_path: Path
) -> None:
    """``**`` follows links into directories, as ``glob`` does, but round a cycle once: two
    cycles made ``glob`` walk billions of paths, one listed each file 41 times over. A file
    reached a second way is read once, the other way reported as skipped."""
    top = tmp_path / "logs"
    (top / "a" / "b").mkdir(parents=True)
    (top / "c").mkdir()
    write(top / "a" / "x.jsonl", lines(chat("x", ["x"])))
    write(top / "a" / "b" / "y.jsonl", lines(chat("y", ["y"])))
    write(top / "a" / ".hidden.jsonl", b"not read")
    (top / "a" / "b" / "up").symlink_to("..")  # a cycle
    (top / "a" / "b" / "self").symlink_to(".")  # another
    (top / "c" / "to-a").symlink_to("../a")  # a second way to a's files
    skipped: list[str] = []
    pattern = str(top / "**" / "*.jsonl")
    assert batch.expand_paths(pattern, skipped) == [
        str(top / "a" / "b" / "y.jsonl"),
        str(top / "a" / "x.jsonl"),
    ]
    assert skipped == [
        f"{top / 'c' / 'to-a' / 'x.jsonl'}: not read: the same file as {top / 'a' / 'x.jsonl'}",
        f"{top / 'c' / 'to-a' / 'b' / 'y.jsonl'}: not read: the same file as "
        f"{top / 'a' / 'b' / 'y.jsonl'}",
    ]
    run_ = batch.merge_logs(pattern)
    assert [r[3] for r in summary(run_)] == ["y", "x"]
    assert len(run_.skipped) == 2
    # a trailing `**` matches files too; patterns without `**` are glob's own
    assert batch.expand_paths(str(top / "a" / "**")) == [
        str(top / "a" / "b" / "y.jsonl"),
        str(top / "a" / "x.jsonl"),
    ]
    assert batch.expand_paths(str(top / "a" / "*" / "*.jsonl")) == [
        str(top / "a" / "b" / "y.jsonl")
    ]


def test_a_directory_without_files_and_a_glob_without_matches_are_errors(
    batch: ModuleType, tmp_path: Path
) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(BatchError, match=f"^{tmp_path}/empty: the directory holds no file$"):
        batch.merge_logs(str(tmp_path / "empty"))
    with pytest.raises(BatchError, match=r"^.*/\*\.nope: no file matches the pattern$"):
        batch.merge_logs(str(tmp_path / "*.nope"))


def test_a_missing_file_or_a_directory_is_an_error_before_anything_is_read(
    batch: ModuleType, tmp_path: Path
) -> None:
    good = write(tmp_path / "a.jsonl", lines(chat("a", ["x"])))
    missing = str(tmp_path / "missing.jsonl")
    with pytest.raises(BatchError) as info:
        batch.merge_logs([good, missing])
    assert str(info.value) == f"{missing}: No such file or directory"
    with pytest.raises(BatchError) as info:
        batch.run._Core([good, str(tmp_path)])  # the core reads each path as a file
    assert str(info.value) == f"{tmp_path}: Is a directory"


def test_a_null_event_is_a_bad_line_and_other_values_unreadable_events(
    batch: ModuleType, tmp_path: Path
) -> None:
    a = chat("a", ["x"])
    odd: list[Any] = [None, [1], 7, True]
    records = wrap([("a", a[0]), *(("a", v) for v in odd), *(("a", e) for e in a[1:])])
    path = write(tmp_path / "log.jsonl", lines(records))
    run_ = batch.merge_logs(path, group_by="stream_id", event="event", errors="collect")
    (result,) = run_
    assert run_.bad_lines == [f"{path}:2: no event at event"]
    assert (result.status, result.message.content) == ("complete", "x")
    detail = "event {}: an event must be a JSON object, not {}"
    assert result.anomalies == [
        {"code": "unreadable_event", "detail": detail.format(n, kind)}
        for n, kind in ((2, "array"), (3, "number"), (4, "boolean"))
    ]


def test_stdin_is_dash(backend_name: str, tmp_path: Path) -> None:
    code = (
        "from fastmerge import batch\n"
        "for r in batch.merge_logs('-', group_by='stream_id', event='event'):\n"
        "    print(r.key, r.status, r.message.content)\n"
    )
    env = {**os.environ, "FASTMERGE_BACKEND": backend_name, "PYTHONPATH": PACKAGE_ROOT}
    proc = subprocess.run(
        [sys.executable, "-c", code],
        input=COMPRESSORS["xz"](lines(two_streams())),
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert proc.stderr == b""
    assert proc.stdout == b"a complete xyz\nb complete 1234\n"


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


# -- the run


def test_progress_poll_and_close(batch: ModuleType, tmp_path: Path) -> None:
    path = write(tmp_path / "log.jsonl", lines(two_streams()), "gzip")
    size = os.path.getsize(path)
    run_ = batch.merge_logs(path, group_by="stream_id", event="event")
    assert run_.progress() == (0, size, 0, 0)
    got = []
    while True:
        try:
            result = run_.poll(0.0)
        except StopIteration:
            break
        if result is not None:
            got.append(result)
    assert summary(got) == TWO
    assert run_.progress() == (size, size, 2, 0)
    with batch.merge_logs(path, group_by="stream_id", event="event") as early:
        assert next(early).key == "a"
    assert list(early) == []  # closed by the with block


# -- records and columns


def test_records_hold_the_message_or_the_provider_response(
    batch: ModuleType, aggregate_module: ModuleType, tmp_path: Path
) -> None:
    path = write(tmp_path / "log.jsonl", lines(two_streams()))
    results = list(batch.merge_logs(path, group_by="stream_id", event="event"))
    expected = aggregate_module.aggregate([json.dumps(e) for e in chat("a", ["x", "y", "z"])])
    record = results[0].record()
    assert list(record) == ["key", "provider", "status", "anomalies", "message", "error"]
    assert record["message"] == expected.to_dict()
    response = results[0].record(to="openai-chat")["message"]
    assert response == expected.to_provider("openai-chat")
    assert response["object"] == "chat.completion"


def test_n_choices_are_all_in_the_record(batch: ModuleType, tmp_path: Path) -> None:
    events = [
        chunk("n", choices=[{"index": i, "delta": {"content": f"c{i}"}} for i in range(2)]),
        chunk("n", choices=[{"index": i, "delta": {}, "finish_reason": "stop"} for i in range(2)]),
    ]
    path = write(tmp_path / "log.jsonl", lines(wrap([("n", e) for e in events])))
    (result,) = batch.merge_logs(path, group_by="stream_id", event="event")
    record = result.record()
    assert [m["parts"][0]["text"] for m in record["choices"]] == ["c0", "c1"]
    assert record["message"] == record["choices"][0]


def _pyarrow() -> Any:
    if os.environ.get("CI"):
        import pyarrow  # the test extra: CI must not skip

        return pyarrow
    return pytest.importorskip("pyarrow")


def test_to_arrow_has_typed_columns(batch: ModuleType, tmp_path: Path) -> None:
    pa = _pyarrow()
    a = chat("a", ["x"])
    a.insert(
        1,
        chunk(
            "a",
            choices=[
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "f", "arguments": "{}"},
                            }
                        ]
                    },
                }
            ],
        ),
    )
    records = wrap([("a", e) for e in a]) + wrap([("c", {"hello": 1})])
    path = write(tmp_path / "log.jsonl", lines(records))
    table = batch.to_arrow(batch.merge_logs(path, group_by="stream_id", event="event"))
    assert table.schema.field("input_tokens").type == pa.int64()
    assert table.schema.field("text").type == pa.string()
    rows = table.to_pylist()
    message = json.loads(rows[0].pop("message"))
    assert [p["part"] for p in message["parts"]] == ["tool_call", "text"]
    assert rows[0] == {
        "key": "a",
        "provider": "openai-chat",
        "model": "gpt-4o",
        "status": "complete",
        "finish_reason": "stop",
        "finish_reason_normalized": "stop",
        "input_tokens": 5,
        "output_tokens": 2,
        "total_tokens": 7,
        "text": "x",
        "tool_calls": 1,
        "anomalies": 0,
        "error": None,
    }
    assert rows[1]["status"] == "error"
    assert rows[1]["message"] is None
    assert rows[1]["text"] is None
    assert rows[1]["finish_reason_normalized"] is None


def test_to_parquet_writes_the_same_rows(batch: ModuleType, tmp_path: Path) -> None:
    _pyarrow()
    import pyarrow.parquet as pq

    path = write(tmp_path / "log.jsonl", lines(two_streams()))
    out = tmp_path / "out.parquet"
    count = batch.to_parquet(
        batch.merge_logs(path, group_by="stream_id", event="event"), out, rows_per_group=1
    )
    assert count == 2
    table = pq.read_table(out)
    expected = batch.to_arrow(batch.merge_logs(path, group_by="stream_id", event="event"))
    assert table.to_pylist() == expected.to_pylist()
    assert [r["text"] for r in table.to_pylist()] == ["xyz", "1234"]


def test_to_parquet_closes_a_row_group_when_its_messages_are_large(
    batch: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Large messages make a row group before ``rows_per_group`` rows: memory holds about
    ``GROUP_BYTES`` of them, and the file holds every row all the same."""
    _pyarrow()
    import pyarrow.parquet as pq

    path = write(tmp_path / "log.jsonl", lines(two_streams()))
    out = tmp_path / "out.parquet"
    monkeypatch.setattr(batch.formats.parquet, "GROUP_BYTES", 1)  # every message passes it
    count = batch.to_parquet(batch.merge_logs(path, group_by="stream_id", event="event"), out)
    assert count == 2
    assert pq.ParquetFile(out).metadata.num_row_groups == 2
    assert [r["text"] for r in pq.read_table(out).to_pylist()] == ["xyz", "1234"]


def test_to_parquet_writes_full_row_groups_on_another_thread_and_raises_their_error(
    batch: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full row group is written beside the next one filling, on its own thread; an error
    there is the call's error, and the stream after it is not read on."""
    _pyarrow()
    import threading

    path = write(tmp_path / "log.jsonl", lines(two_streams()))
    monkeypatch.setattr(batch.formats.parquet, "GROUP_BYTES", 1)  # a group a row
    threads: list[str] = []
    write_group = batch.formats.parquet._write_group

    def recording(*args: Any) -> int:
        threads.append(threading.current_thread().name)
        return int(write_group(*args))

    monkeypatch.setattr(batch.formats.parquet, "_write_group", recording)
    out = tmp_path / "out.parquet"
    assert batch.to_parquet(batch.merge_logs(path, group_by="stream_id", event="event"), out) == 2
    assert [name.startswith("fastmerge-parquet") for name in threads] == [True, True]

    def failing(*args: Any) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(batch.formats.parquet, "_write_group", failing)
    with pytest.raises(OSError, match="No space left"):
        batch.to_parquet(batch.merge_logs(path, group_by="stream_id", event="event"), out)


def test_to_directory_writes_each_file_and_its_index_line_in_order(
    batch: ModuleType, tmp_path: Path
) -> None:
    path = write(tmp_path / "log.jsonl", lines(two_streams()))
    out = tmp_path / "out"
    count = batch.to_directory(batch.merge_logs(path, group_by="stream_id", event="event"), out)
    assert count == 2
    index = [json.loads(line) for line in (out / batch.INDEX).read_text().splitlines()]
    assert [(e["key"], e["file"], e["status"]) for e in index] == [
        ("a", "a.json", "complete"),
        ("b", "b.json", "complete"),
    ]
    records = batch.merge_logs(path, group_by="stream_id", event="event")
    for result, entry in zip(records, index, strict=True):
        assert (out / entry["file"]).read_bytes() == batch.json_line(result.record())


def test_to_directory_raises_the_first_write_error(batch: ModuleType, tmp_path: Path) -> None:
    """A file that cannot be made (here its name is a directory's) is an error of the call,
    raised however the files are written; the files before it are written, and indexed."""
    path = write(tmp_path / "log.jsonl", lines(two_streams()))
    out = tmp_path / "out"
    (out / "b.json").mkdir(parents=True)
    with pytest.raises(IsADirectoryError) as raised:
        batch.to_directory(batch.merge_logs(path, group_by="stream_id", event="event"), out)
    # Python's own error for that path, on both backends
    assert str(raised.value) == f"[Errno {errno.EISDIR}] Is a directory: '{out / 'b.json'}'"
    assert raised.value.filename == str(out / "b.json")
    assert (out / "a.json").is_file()
    assert [json.loads(line)["file"] for line in (out / batch.INDEX).read_text().splitlines()] == [
        "a.json"
    ]


def test_the_directory_writer_stops_at_its_first_failure(
    backend_module: ModuleType, tmp_path: Path
) -> None:
    """After a failed write nothing more is written; the failure is raised by a later
    ``put`` (at once on the twin) or returned by ``close``, every time; a closed writer
    refuses more."""
    (tmp_path / "b.json").mkdir()
    writer = backend_module.DirectoryWriter(str(tmp_path), "index.jsonl")
    raised: list[OSError] = []
    for name in ("a.json", "b.json", "c.json", "d.json"):
        try:
            writer.put(name, name.encode(), name.encode() + b"\n")
        except OSError as error:
            raised.append(error)
    failure = writer.close()
    assert isinstance(failure, IsADirectoryError)
    assert failure.filename == str(tmp_path / "b.json")
    assert all(error is failure or str(error) == str(failure) for error in raised)
    assert str(writer.close()) == str(failure)
    assert (tmp_path / "a.json").read_bytes() == b"a.json"
    assert not (tmp_path / "c.json").exists() and not (tmp_path / "d.json").exists()
    assert (tmp_path / "index.jsonl").read_bytes() == b"a.json\n"
    with pytest.raises((ValueError, OSError)):
        writer.put("e.json", b"e", b"e\n")


def test_the_directory_writers_of_both_backends_write_the_same_files(
    both: tuple[ModuleType, ModuleType], tmp_path: Path
) -> None:
    """Many files, long and empty ones, in order: the same files and index from each."""
    made = []
    for module in both:
        out = tmp_path / module.__name__
        out.mkdir()
        writer = module.DirectoryWriter(str(out), "index.jsonl")
        for n in range(600):  # more than the Rust writer queues
            writer.put(f"{n}.json", b"x" * (n * 97 % 5000), f"{n}\n".encode())
        assert writer.close() is None
        made.append(sorted((p.name, p.read_bytes()) for p in out.iterdir()))
    assert made[0] == made[1]
    assert len(made[0]) == 601


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="a device that is always full")
def test_a_failed_write_names_its_file_on_both_backends(
    both: tuple[ModuleType, ModuleType], tmp_path: Path
) -> None:
    """A write that fails (a full disk: the file is the device /dev/full is, made there; a
    link to it would be refused before any write, E108) is the same OSError from each, naming
    the file (the twin's named none); nothing after it is written."""
    full = os.stat("/dev/full").st_rdev
    failures = []
    for module in both:
        out = tmp_path / module.__name__
        out.mkdir()
        try:
            os.mknod(out / "b.json", 0o666 | stat.S_IFCHR, full)
        except PermissionError:
            pytest.skip("making a device node needs root")
        writer = module.DirectoryWriter(str(out), "index.jsonl")
        with contextlib.suppress(OSError):  # raised by put on the twin, by close on Rust
            for name in ("a.json", "b.json", "c.json"):
                writer.put(name, b"data", f"{name}\n".encode())
        failure = writer.close()
        assert isinstance(failure, OSError)
        failures.append((failure.errno, failure.strerror, failure.filename))
        assert sorted(p.name for p in out.iterdir()) == ["a.json", "b.json", "index.jsonl"]
        assert (out / "index.jsonl").read_bytes() == b"a.json\n"
    assert failures[0][:2] == failures[1][:2] == (errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert [Path(f[2]).name for f in failures] == ["b.json", "b.json"]


def test_a_directory_writer_in_a_missing_directory_raises_python_s_error(
    backend_module: ModuleType, tmp_path: Path
) -> None:
    missing = tmp_path / "missing"
    with pytest.raises(FileNotFoundError) as raised:
        backend_module.DirectoryWriter(str(missing), "index.jsonl")
    index = missing / "index.jsonl"
    assert str(raised.value) == f"[Errno {errno.ENOENT}] No such file or directory: '{index}'"


def test_to_parquet_makes_a_row_group_from_slices_made_as_rows_come(
    batch: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows are made Arrow a slice at a time while a group fills: still one row group of
    all of them, the same rows as :func:`to_arrow`."""
    _pyarrow()
    import pyarrow.parquet as pq

    path = write(tmp_path / "log.jsonl", lines(two_streams()))
    out = tmp_path / "out.parquet"
    monkeypatch.setattr(batch.formats.parquet, "_SLICE", 1)
    count = batch.to_parquet(batch.merge_logs(path, group_by="stream_id", event="event"), out)
    assert count == 2
    assert pq.ParquetFile(out).metadata.num_row_groups == 1
    expected = batch.to_arrow(batch.merge_logs(path, group_by="stream_id", event="event"))
    assert pq.read_table(out).to_pylist() == expected.to_pylist()
