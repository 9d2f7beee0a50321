"""The transports read each fed block where it lies: an SSE event of several
``data:`` lines, one cut by a block boundary, comments, empty events and ``[DONE]`` read the
same as the whole stream at every cut, on both backends; str and bytes read the same."""

from __future__ import annotations

import json

import orjson
import pytest

import fastmerge

P = "openai-chat"


def _chunk(delta: dict[str, str], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return json.dumps({"id": "c1", "model": "m", "choices": [choice]}).encode()


#: Event 1 is one JSON object over two ``data:`` lines (joined with a newline: still JSON).
SSE = (
    b": keep-alive\r\n"
    b'data: {"id": "c1", "model": "m",\n'
    b'data:  "choices": [{"index": 0, "delta": {"content": "He"}}]}\n'
    b"\n"
    b"data: " + _chunk({"content": "llo"}) + b"\r\n"
    b"\r\n"
    b"event: ping\ndata:\n\n"
    b"data:" + _chunk({"content": " wor"}) + b"\rdata: \r\r"
    b"data: " + _chunk({"content": "ld"}) + b"\n\n"
    b"data: " + _chunk({}, "stop") + b"\n\n"
    b"data: [DONE]\n\n"
)


def _dump(message: fastmerge.AssistantMessage) -> bytes:
    return orjson.dumps(message.to_dict())


def _blocks(pieces: list[bytes]) -> bytes:
    agg = fastmerge.Aggregator(P)
    for piece in pieces:
        agg.feed(piece)
    return _dump(agg.finish())


@pytest.mark.parametrize(
    "data",
    [SSE, SSE.removesuffix(b"data: [DONE]\n\n").removesuffix(b"\n")],
    ids=["whole", "no-blank-line-at-the-end"],
)
def test_sse_events_read_the_same_cut_anywhere(data: bytes) -> None:
    whole = fastmerge.aggregate(data, P)
    assert whole.content == "Hello world"
    assert whole.status == "complete"
    assert whole.anomalies == []
    expected = _dump(whole)
    assert _dump(fastmerge.aggregate(data.decode(), P)) == expected
    for cut in range(len(data) + 1):
        assert _blocks([data[:cut], data[cut:]]) == expected, cut
        assert _blocks([data[:cut], data[cut : cut + 5], data[cut + 5 :]]) == expected, cut
    assert _blocks([data[i : i + 1] for i in range(len(data))]) == expected


def test_an_sse_event_with_joined_lines_that_are_not_json_is_one_unreadable_event() -> None:
    data = b'data: {"id": \ndata: oops}\n\n' + SSE
    message = fastmerge.aggregate(data, P)
    assert message.content == "Hello world"
    assert [a["code"] for a in message.anomalies] == ["unreadable_event"]
    assert message.anomalies[0]["detail"] == "event 1: not valid JSON"
    for cut in range(len(data) + 1):
        assert _blocks([data[:cut], data[cut:]]) == _dump(message), cut
