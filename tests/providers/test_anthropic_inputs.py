"""The ``"anthropic"`` adapter's inputs and renderer: bad event shapes, strict mode, inputs
left alone, SSE bytes split at every position, snapshots mid stream, and rendering other
providers' messages. Every test runs on both backends."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from _support.anthropic import (
    TEXT_STREAM,
    P,
    agg,
    block,
    delta,
    dump,
    end,
    js,
    start,
    stop,
    text,
)

import fastmerge
from fastmerge.errors import AnomalyError, EventError
from fastmerge.render import to_provider

# ---------------------------------------------------------------------------------------------
# Errors, strict mode, inputs, transports


@pytest.mark.parametrize(
    ("event", "detail"),
    [
        (
            {"type": "message_start", "message": []},
            "message_start: 'message' must be an object, not array",
        ),
        (
            {"type": "message_start", "message": {"usage": [1]}},
            "message_start: 'usage' must be an object, not array",
        ),
        (
            {"type": "message_start", "message": {"content": "x"}},
            "message_start: 'content' must be an array, not string",
        ),
        (
            {"type": "content_block_start", "index": "0", "content_block": {"type": "text"}},
            "content_block_start: 'index' must be an integer, not string",
        ),
        (
            {"type": "content_block_start", "index": 0, "content_block": "text"},
            "content_block_start: 'content_block' must be an object with a string 'type'",
        ),
        (
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": 1},
            },
            "content_block_start: 'text' must be a string, not number",
        ),
        (
            {"type": "content_block_delta", "index": True, "delta": {}},
            "content_block_delta: 'index' must be an integer, not boolean",
        ),
        (
            {"type": "content_block_delta", "index": 0, "delta": {"text": "x"}},
            "content_block_delta: 'delta' must be an object with a string 'type'",
        ),
        (
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": None},
            },
            "text_delta: 'text' must be a string, not null",
        ),
        (
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": {}},
            },
            "input_json_delta: 'partial_json' must be a string, not object",
        ),
        (
            {"type": "content_block_stop"},
            "content_block_stop: 'index' must be an integer, not null",
        ),
        (
            {"type": "message_delta", "delta": "end_turn"},
            "message_delta: 'delta' must be an object, not string",
        ),
        (
            {"type": "message_delta", "usage": 3},
            "message_delta: 'usage' must be an object, not number",
        ),
    ],
)
def test_bad_event_shapes(event: dict[str, Any], detail: str) -> None:
    # a message_start after another starts a new response (spec §6): it comes first here
    events = [event] if event["type"] == "message_start" else [start(), event]
    with pytest.raises(EventError) as info:
        agg(events, strict=True)
    assert str(info.value) == f"event {len(events)}: anthropic: {detail}"
    # not strict: skipped, and said (spec §8); alone, no event is read, an error (spec §6)
    anomaly = {"code": "unreadable_event", "detail": f"event {len(events)}: anthropic: {detail}"}
    if len(events) == 1:
        with pytest.raises(EventError) as info:
            agg(events)
        assert str(info.value) == f"no event could be read: {anomaly['detail']}"
    else:
        assert anomaly in agg(events).anomalies


def test_strict_raises_the_anomaly() -> None:
    with pytest.raises(AnomalyError) as info:
        agg([start(), text(0, "x")], strict=True)
    assert info.value.code == "delta_before_start"
    with pytest.raises(AnomalyError) as info:
        agg(TEXT_STREAM[:-2] + [block(1, type="tool_use", id="t", name="f", input={})], strict=True)
    assert info.value.code == "truncated"


def test_inputs_are_not_mutated() -> None:
    events = [
        start({"input_tokens": 1, "cache_read_input_tokens": 2}),
        block(0, type="server_tool_use", id="s", name="n", input={}),
        js(0, '{"q": 1}'),
        stop(0),
        block(1, type="compaction", content=None),
        delta(1, type="compaction_delta", content="c"),
        stop(1),
        block(2, type="tool_use", id="t", name="f", input={"a": {"b": 1}}),
        stop(2),
        *end(),
    ]
    before = copy.deepcopy(events)
    agg(events)
    assert events == before


def sse(events: list[dict[str, Any]]) -> bytes:
    out = []
    for event in events:
        payload = json.dumps(event, ensure_ascii=False)
        out.append(f"event: {event['type']}\ndata: {payload}\n\n")
    return "".join(out).encode("utf-8")


def test_sse_bytes_split_at_every_position() -> None:
    events = [
        start(),
        block(0, type="thinking", thinking="", signature=""),
        delta(0, type="thinking_delta", thinking="é"),
        delta(0, type="signature_delta", signature="S"),
        stop(0),
        block(1, type="text", text=""),
        text(1, "👋"),
        stop(1),
        *end(),
    ]
    data = sse(events)
    reference = dump(agg(events))
    assert dump(fastmerge.aggregate(data, P)) == reference
    for cut in range(1, len(data)):
        aggregator = fastmerge.Aggregator(P)
        aggregator.feed(data[:cut])
        aggregator.feed(data[cut:])
        assert dump(aggregator.finish()) == reference, cut


def test_snapshot_mid_stream() -> None:
    aggregator = fastmerge.Aggregator(P)
    for event in TEXT_STREAM[:4]:
        aggregator.add(event)
    snap = aggregator.snapshot()
    assert snap.content == "Hé"
    assert snap.status == "incomplete"
    for event in TEXT_STREAM[4:]:
        aggregator.add(event)
    assert aggregator.finish().content == "Héllo 👋"


# ---------------------------------------------------------------------------------------------
# Rendering other providers' messages


def test_render_replays_payloads_only_to_anthropic() -> None:
    chat = [
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": "hi"}}],
        },
        {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    message = fastmerge.aggregate(chat, "openai-chat")
    rendered = to_provider(message, P)
    assert rendered["content"] == [{"type": "text", "text": "hi", "citations": None}]
    assert rendered["stop_reason"] == "end_turn"
    assert rendered["type"] == "message"


def test_render_needs_one_message() -> None:
    message = agg(TEXT_STREAM)
    with pytest.raises(ValueError):
        to_provider([message, message], P)
