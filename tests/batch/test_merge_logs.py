"""``fastmerge.batch.merge_logs`` on both backends: how records are grouped into streams
(dotted paths, JSON pointers, keys reused), the order streams end in, ``order_by``, rotation
over files, and the run itself (progress, poll, close). Inputs, errors and outputs have their
own files: ``test_merge_logs_inputs``, ``_errors``, ``_outputs``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any

from _support.batch import (
    TWO,
    batch_fixture,  # noqa: F401 (the ``batch`` fixture)
    chat,
    dumped,
    interleave,
    lines,
    run,
    summary,
    two_streams,
    wrap,
    write,
)

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
