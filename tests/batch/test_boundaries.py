"""A batch result equals ``aggregate`` of its stream's events at every boundary (rules §6):
an end event is a hint, not a wall (E86); an event that starts another response starts a new
stream under its key (E87); a damaged compressed file gives the streams read before the
damage, the one it cut too (E88, E106); odd stream keys read alike on both backends (E89);
and every corpus stream interleaved in one log, in every compression, on both backends and
with one or two jobs, gives exactly what ``aggregate`` gives for it alone."""

from __future__ import annotations

import json
import random
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest
from _support.batch import (
    COMPRESSORS,
    aggregated,
    batch_module,
    chat,
    chunk,
    decodable,
    lines,
    summary,
    write,
)
from _support.corpus import CORPUS

from fastmerge._pure.batch import PARK_LINES
from fastmerge.errors import BatchError

TRAILING = CORPUS / "openai_chat" / "gpt5-trailing-moderation-chunk.jsonl"
WRAPPED = {"group_by": "k", "event": "event"}
PYTHON = batch_module("python")


def events_of(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def messages(result: Any) -> list[bytes] | str:
    """A batch result as :func:`_batch.aggregated` gives a stream aggregated alone."""
    if result.messages is None:
        return str(result.error)
    return [orjson.dumps(m.to_dict()) for m in result.messages]


def keyed(key: str, events: list[Any]) -> list[dict[str, Any]]:
    return [{"k": key, "event": e} for e in events]


def merged(batch: ModuleType, path: str, **options: Any) -> list[tuple[str, Any]]:
    """(key, messages) of each result, in order."""
    return [(r.key, messages(r)) for r in batch.merge_logs(path, **{**WRAPPED, **options})]


def hello_world(finish: bool = True) -> tuple[list[Any], list[Any]]:
    """OpenAI chunks of response A ("hello"; no usage chunk, no [DONE]) and response B
    ("world"); A's choice finishes only with ``finish``."""
    a = [chunk("A", choices=[{"index": 0, "delta": {"role": "assistant", "content": "hello"}}])]
    if finish:
        a.append(chunk("A", choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]))
    b = chat("B", ["world"], usage=False)
    return a, b


# -- E86: an end event is a hint, not a wall


def test_a_chunk_after_the_usage_chunk_joins_its_stream(
    batch: ModuleType, aggregate_module: ModuleType, tmp_path: Path
) -> None:
    events = events_of(TRAILING)
    assert events[-2]["choices"] == [] and events[-2]["usage"] is not None  # the end event
    assert events[-1]["choices"] == [] and "moderation" in events[-1]
    path = write(tmp_path / "log.jsonl", lines(keyed("s1", events)))
    results = list(batch.merge_logs(path, **WRAPPED))
    assert [(r.key, r.status) for r in results] == [("s1", "complete")]
    assert messages(results[0]) == aggregated(aggregate_module, events)


def test_a_trailing_chunk_among_other_streams_joins_its_stream_in_order(
    batch: ModuleType, aggregate_module: ModuleType, tmp_path: Path
) -> None:
    trailing = events_of(TRAILING)
    other = chat("o", ["x", "y"])
    records = keyed("s1", trailing[:-1]) + keyed("o", other) + keyed("s1", trailing[-1:])
    path = write(tmp_path / "log.jsonl", lines(records))
    # s1 waits at its last record (the moderation chunk, the log's last line): o comes first
    assert merged(batch, path) == [
        ("o", aggregated(aggregate_module, other)),
        ("s1", aggregated(aggregate_module, trailing)),
    ]


def test_done_after_the_end_event_carries_nothing(
    batch: ModuleType, aggregate_module: ModuleType, tmp_path: Path
) -> None:
    events = chat("a", ["x"])
    path = write(tmp_path / "log.jsonl", lines(keyed("a", [*events, "[DONE]", "[DONE]"])))
    assert merged(batch, path) == [("a", aggregated(aggregate_module, events))]


def test_a_record_of_another_wire_format_after_the_end_starts_a_new_stream(
    batch: ModuleType, aggregate_module: ModuleType, tmp_path: Path
) -> None:
    openai = chat("a", ["x"])
    ollama = [
        {"model": "m", "response": "o", "done": False},
        {"model": "m", "response": "k", "done": True, "done_reason": "stop"},
    ]
    path = write(tmp_path / "log.jsonl", lines(keyed("k", openai + ollama)))
    assert merged(batch, path) == [
        ("k", aggregated(aggregate_module, openai)),
        ("k", aggregated(aggregate_module, ollama)),
    ]


def test_an_ended_stream_waits_park_lines_lines_for_its_key(
    batch: ModuleType, aggregate_module: ModuleType, tmp_path: Path
) -> None:
    events = events_of(TRAILING)
    head = lines(keyed("s1", events[:-1]))
    last = lines(keyed("s1", events[-1:]))
    # blank lines count: the trailing chunk PARK_LINES - 1 lines after the end event joins
    near = head + b"\n" * (PARK_LINES - 2) + last
    assert near.count(b"\n") - head.count(b"\n") == PARK_LINES - 1
    assert merged(batch, write(tmp_path / "near.jsonl", near)) == [
        ("s1", aggregated(aggregate_module, events))
    ]
    # PARK_LINES lines after: the ended stream was returned, the chunk is a stream of its own
    far = head + b"\n" * (PARK_LINES - 1) + last
    assert merged(batch, write(tmp_path / "far.jsonl", far)) == [
        ("s1", aggregated(aggregate_module, events[:-1])),
        ("s1", aggregated(aggregate_module, events[-1:])),
    ]


def test_the_lines_an_ended_stream_waits_run_across_files(
    batch: ModuleType, aggregate_module: ModuleType, tmp_path: Path
) -> None:
    events = events_of(TRAILING)
    # a file counts its newlines plus one: the chunk in the next file is 2 lines after
    first = write(tmp_path / "1.jsonl", lines(keyed("s1", events[:-1])))
    second = write(tmp_path / "2.jsonl", lines(keyed("s1", events[-1:])))
    results = list(batch.merge_logs([first, second], **WRAPPED))
    assert [messages(r) for r in results] == [aggregated(aggregate_module, events)]


def test_an_ended_stream_is_not_open_for_max_open_streams(
    batch: ModuleType, aggregate_module: ModuleType, tmp_path: Path
) -> None:
    trailing = events_of(TRAILING)
    other = chat("o", ["x"])
    records = keyed("s1", trailing[:-1]) + keyed("o", other) + keyed("s1", trailing[-1:])
    path = write(tmp_path / "log.jsonl", lines(records))
    for jobs in (1, 2):
        results = batch.merge_logs(path, max_open_streams=1, jobs=jobs, **WRAPPED)
        assert [r.key for r in results] == ["o", "s1"]
    # two streams open at once are one too many, named at the second one's first record
    both = keyed("a", chat("a", ["x"])[:2]) + keyed("b", chat("b", ["y"]))
    path = write(tmp_path / "open.jsonl", lines(both))
    with pytest.raises(BatchError, match=r"more than 1 streams open at .*open\.jsonl:3;"):
        list(batch.merge_logs(path, max_open_streams=1, **WRAPPED))


def test_too_many_streams_comes_after_the_items_placed_before_it_on_both_backends(
    batch: ModuleType, tmp_path: Path
) -> None:
    trailing = events_of(TRAILING)
    records = (
        keyed("early", chat("e", ["x"]))  # ends and waits at line 4
        + keyed("s1", trailing[:-1])  # ends and waits at line 9
        + keyed("a", chat("a", ["y"])[:1])  # 10: open
        + keyed("b", chat("b", ["z"])[:1])  # 11: one too many
        + keyed("s1", trailing[-1:])  # 12: joins s1, which moves after the error
        + keyed("early", [chunk("e2", choices=[{"index": 0, "delta": {"content": "n"}}])])
    )
    path = write(tmp_path / "log.jsonl", lines(records))

    def until_error(module: ModuleType, jobs: int) -> tuple[list[str], str]:
        got: list[str] = []
        with pytest.raises(BatchError) as info:
            for result in module.merge_logs(path, max_open_streams=1, jobs=jobs, **WRAPPED):
                got.append(result.key)
        return got, str(info.value)

    # early, ended at line 4, is returned by line 13 (another response under its key)
    expected = (
        ["early"],
        f"more than 1 streams open at {path}:11; raise --max-open-streams "
        "(max_open_streams=), or pass 0 for no limit",
    )
    for jobs in (1, 2):
        assert until_error(batch, jobs) == expected
    assert until_error(PYTHON, 1) == expected


# -- E87: an event that starts another response starts a new stream


@pytest.mark.parametrize("order_by", [None, "seq"])
def test_two_responses_under_one_key_are_two_results(
    batch: ModuleType, aggregate_module: ModuleType, tmp_path: Path, order_by: str | None
) -> None:
    a, b = hello_world()
    records = [{**r, "seq": i} for i, r in enumerate(keyed("k", a + b))]
    path = write(tmp_path / "log.jsonl", lines(records))
    results = list(batch.merge_logs(path, order_by=order_by, **WRAPPED))
    assert [(r.key, r.message.content) for r in results] == [("k", "hello"), ("k", "world")]
    assert [messages(r) for r in results] == [
        aggregated(aggregate_module, a),
        aggregated(aggregate_module, b),
    ]
    # aggregate of all the events keeps the first response only, with the anomaly
    whole = aggregate_module.aggregate(lines(a + b))
    assert whole.content == "hello"
    assert [x["code"] for x in whole.anomalies] == ["new_response"]


def test_the_response_before_another_is_placed_where_the_other_starts(
    batch: ModuleType, tmp_path: Path
) -> None:
    a, b = hello_world()
    other = chat("o", ["x"], usage=False)
    records = keyed("k", a) + keyed("o", other) + keyed("k", b)
    path = write(tmp_path / "log.jsonl", lines(records))
    # k's first response is decided at line 6 (B's first chunk); o is open to the end
    assert summary(batch.merge_logs(path, **WRAPPED)) == [
        ("k", "openai-chat", "complete", "hello"),
        ("o", "openai-chat", "complete", "x"),
        ("k", "openai-chat", "complete", "world"),
    ]


def test_another_id_before_the_choice_finished_is_the_same_response(
    batch: ModuleType, aggregate_module: ModuleType, tmp_path: Path
) -> None:
    # the adapters' rule: ids before the finish say nothing (Groq compound changes the id on
    # every chunk), so aggregate merges B into A and the batch gives the same one result
    a, b = hello_world(finish=False)
    path = write(tmp_path / "log.jsonl", lines(keyed("k", a + b)))
    results = list(batch.merge_logs(path, **WRAPPED))
    assert [(r.key, r.message.content) for r in results] == [("k", "helloworld")]
    assert [messages(r) for r in results] == [aggregated(aggregate_module, a + b)]


def test_second_starts_of_each_wire_format_split_their_streams(
    batch: ModuleType, aggregate_module: ModuleType, tmp_path: Path
) -> None:
    def anthropic(text: str) -> list[Any]:
        return [
            {"type": "message_start", "message": {"id": text, "role": "assistant", "content": []}},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}},
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": text},
            },
        ]

    def responses(text: str) -> list[Any]:
        return [
            {"type": "response.created", "response": {"id": text, "status": "in_progress"}},
            {
                "type": "response.output_text.delta",
                "output_index": 0,
                "content_index": 0,
                "item_id": "m",
                "delta": text,
            },
        ]

    for make in (anthropic, responses):
        one, two = make("one"), make("two")  # neither ended: the second start splits them
        path = write(tmp_path / f"{make.__name__}.jsonl", lines(keyed("k", one + two)))
        assert [m for _, m in merged(batch, path)] == [
            aggregated(aggregate_module, one),
            aggregated(aggregate_module, two),
        ], make.__name__


# -- E88: a damaged compressed file


def hundred_streams(name: str = "s") -> bytes:
    return lines(r for i in range(100) for r in keyed(f"{name}{i}", chat(f"{name}{i}", ["a", "b"])))


@pytest.mark.parametrize("fmt", sorted(COMPRESSORS))
@pytest.mark.parametrize("cut", [4, "half"])
def test_a_damaged_compressed_file_gives_the_streams_read_before_the_damage(
    batch: ModuleType, tmp_path: Path, fmt: str, cut: Any
) -> None:
    data = hundred_streams()
    packed = COMPRESSORS[fmt](data)
    damaged = packed[: len(packed) - 4] if cut == 4 else packed[: len(packed) // 2]
    path = write(tmp_path / "log.bin", damaged)
    offset = decodable(fmt, damaged)
    if cut == 4 and fmt != "zstd":  # zstd: the cut is inside its one block, nothing decodes
        assert offset == len(data)
    # what was read: the whole lines of the text decoded before the damage, as a plain log
    read = data[: data.rfind(b"\n", 0, offset) + 1]
    expected = summary(batch.merge_logs(write(tmp_path / "read.jsonl", read), **WRAPPED))
    for jobs in (1, 2):
        got: list[Any] = []
        with pytest.raises(BatchError) as info:
            for result in batch.merge_logs(path, jobs=jobs, **WRAPPED):
                got.append(result)
        # every stream read (E106): the ones that ended before the damage and the one it cut
        assert summary(got) == expected, jobs
        state = "truncated"
        assert (
            str(info.value) == f"{path}: {fmt} stream is {state} after {offset} decompressed bytes"
        )
    if cut == 4 and fmt != "zstd":
        assert len(got) == 100


def test_a_damaged_file_after_a_whole_one_keeps_the_whole_ones_streams(
    batch: ModuleType, tmp_path: Path
) -> None:
    whole = write(tmp_path / "1.jsonl.gz", hundred_streams(), "gzip")
    packed = COMPRESSORS["gzip"](hundred_streams("t"))
    cut = write(tmp_path / "2.jsonl.gz", packed[:-4])
    got: list[str] = []
    with pytest.raises(BatchError, match=r"2\.jsonl\.gz: gzip stream is truncated after"):
        for result in batch.merge_logs([whole, cut], jobs=2, **WRAPPED):
            got.append(result.key)
    assert got == [f"s{i}" for i in range(100)] + [f"t{i}" for i in range(100)]


# -- E89: numbers and other odd values as keys

EVENT = {"id": "x", "choices": [{"index": 0, "delta": {"content": "a"}}]}


def test_number_keys_read_alike_on_both_backends(batch: ModuleType, tmp_path: Path) -> None:
    keys = {
        "1.5": "1.5",
        "-0": "0",
        "-0.0": "-0.0",
        "0.0": "0.0",
        "1E2": "100.0",
        "1e16": "1e+16",
        "9223372036854775807": "9223372036854775807",
        "9223372036854775808": "9.223372036854776e+18",
        "123456789012345678901234567890": "1.2345678901234568e+29",
        "1.7976931348623157e308": "1.7976931348623157e+308",
        "5e-324": "5e-324",
        '"\\u00e9"': "\u00e9",
    }
    text = b"".join(
        b'{"k":%s,"event":%s}\n' % (k.encode(), json.dumps(EVENT).encode()) for k in keys
    )
    path = write(tmp_path / "keys.jsonl", text)
    results = batch.merge_logs(path, errors="collect", **WRAPPED)
    assert [r.key for r in results] == list(keys.values())
    assert results.bad_lines == []


def test_odd_keys_are_bad_lines_naming_their_type(batch: ModuleType, tmp_path: Path) -> None:
    event = json.dumps(EVENT)
    keys = ["1e400", "-1e400", "1" * 400, "true", "null", "{}", "[1]"]
    text = "".join(f'{{"k":{k},"event":{event}}}\n' for k in keys)
    path = write(tmp_path / "keys.jsonl", text.encode())
    results = batch.merge_logs(path, errors="collect", **WRAPPED)
    assert list(results) == []
    too_large = "the stream key at k is a number too large for a float"
    assert results.bad_lines == [
        f"{path}:1: {too_large}",
        f"{path}:2: {too_large}",
        f"{path}:3: {too_large}",
        f"{path}:4: the stream key at k is a boolean, not a string or a number",
        f"{path}:5: no stream key at k",
        f"{path}:6: the stream key at k is an object, not a string or a number",
        f"{path}:7: the stream key at k is an array, not a string or a number",
    ]


def test_a_number_too_large_for_a_float_elsewhere_in_a_record(
    batch: ModuleType, aggregate_module: ModuleType, tmp_path: Path
) -> None:
    event = json.dumps(EVENT)
    text = (
        # beside the event: not read, the record is read
        f'{{"k":"a","ts":1e400,"event":{event}}}\n'
        # inside the event: the event is unreadable, as aggregate reads its text
        f'{{"k":"b","event":{{"id":"x","n":1e400,"choices":[]}}}}\n'
        # as the order_by value: a bad line
        f'{{"k":"c","seq":1e400,"event":{event}}}\n'
    )
    path = write(tmp_path / "log.jsonl", text.encode())
    results = batch.merge_logs(path, errors="collect", **WRAPPED)
    got = [(r.key, r.status, r.error) for r in results]
    assert got == [
        ("a", "incomplete", None),
        ("b", "error", "no event could be read: event 1: not valid JSON"),
        ("c", "incomplete", None),
    ]
    ordered = batch.merge_logs(path, errors="collect", order_by="seq", **WRAPPED)
    assert [r.key for r in ordered] == []
    assert ordered.bad_lines == [
        f"{path}:1: no order_by value at seq",
        f"{path}:2: no order_by value at seq",
        f"{path}:3: the order_by value at seq is a number too large for a float",
    ]


# -- every corpus stream, interleaved, in every compression


def corpus_log() -> tuple[dict[str, list[Any]], bytes]:
    """Every corpus stream's events under its own key, interleaved in a fixed shuffled order
    (each stream's events in order), and the log's bytes."""
    streams = {f"{p.parent.name}/{p.stem}": events_of(p) for p in sorted(CORPUS.glob("*/*.jsonl"))}
    order = [key for key, events in streams.items() for _ in events]
    random.Random(86).shuffle(order)
    at = dict.fromkeys(streams, 0)
    records = []
    for key in order:
        records.append({"k": key, "event": streams[key][at[key]]})
        at[key] += 1
    return streams, lines(records)


@pytest.mark.parametrize("fmt", ["plain", *sorted(COMPRESSORS)])
def test_every_corpus_stream_interleaved_gives_what_aggregate_gives(
    batch: ModuleType, aggregate_module: ModuleType, tmp_path: Path, fmt: str, backend_name: str
) -> None:
    streams, data = corpus_log()
    assert len(streams) >= 90
    path = write(tmp_path / "corpus.log", data, None if fmt == "plain" else fmt)
    expected = {key: [aggregated(aggregate_module, events)] for key, events in streams.items()}
    runs = []
    for jobs in (1, 2):
        got: dict[str, list[Any]] = {}
        results = list(batch.merge_logs(path, jobs=jobs, **WRAPPED))
        for result in results:
            got.setdefault(result.key, []).append(messages(result))
        assert got == expected, jobs
        runs.append([orjson.dumps(r.record()) for r in results])
    assert runs[0] == runs[1]  # the same records in the same order for any jobs
    if backend_name != "python":
        twin = [orjson.dumps(r.record()) for r in PYTHON.merge_logs(path, **WRAPPED)]
        assert runs[0] == twin
