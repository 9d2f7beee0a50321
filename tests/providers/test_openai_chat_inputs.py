"""The ``"openai-chat"`` adapter's choices and status (n > 1, error events, usage-only
chunks), and its inputs (both backends): auto-detection, bad shapes, strict mode, inputs left
alone, SSE bytes split at every position, and the SDK's own chunk objects."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from _support.openai_chat import (
    USAGE,
    P,
    anomalies,
    ch,
    chunk,
    tc,
)

import fastmerge
from fastmerge.errors import EventError
from fastmerge.render import to_provider

# ---------------------------------------------------------------------------------------------
# choices, status


def test_n2_choice_1_first() -> None:
    events = [
        chunk(ch(1, role="assistant", content="B")),
        chunk(ch(0, role="assistant", content="A")),
        chunk(ch(1, content="b", finish="stop")),
        chunk(ch(0, content="a", finish="length")),
        chunk(usage=USAGE),
    ]
    ms = fastmerge.aggregate_choices(events, P)
    assert [(m.choice_index, m.content, m.to_dict()["finish_reason"]) for m in ms] == [
        (0, "Aa", "length"),
        (1, "Bb", "stop"),
    ]
    assert all(m.to_dict()["usage_metadata"]["total_tokens"] == 5 for m in ms)
    out = to_provider(ms, P)
    assert [c["index"] for c in out["choices"]] == [0, 1]
    assert out["usage"] == USAGE


def test_n2_one_choice_cut() -> None:
    events = [
        chunk(ch(0, content="A"), ch(1, tool_calls=[tc(0, "c9", "f", "{")])),
        chunk(ch(0, finish="stop")),
    ]
    ms = fastmerge.aggregate_choices(events, P)
    assert [m.status for m in ms] == ["complete", "incomplete"]
    assert [a[0] for a in anomalies(ms[1])] == ["truncated"]
    assert anomalies(ms[0]) == []


def test_error_event_fails_the_stream() -> None:
    error = {"message": "overloaded", "type": "server_error", "code": None}
    events = [chunk(ch(role="assistant", content="a")), {"error": error}]
    m = fastmerge.aggregate(events, P)
    assert m.status == "failed"
    assert m.to_dict()["provider_metadata"]["error"] == error
    assert m.content == "a"


def test_usage_only_before_any_choice_goes_to_choice_0() -> None:
    m = fastmerge.aggregate([chunk(usage=USAGE)], P)
    assert m.choice_index == 0
    assert m.to_dict()["usage_metadata"]["input_tokens"] == 3
    assert m.status == "incomplete"


def test_auto_detects() -> None:
    m = fastmerge.aggregate([chunk(ch(content="a", finish="stop"))])
    assert m.provider_metadata["provider"] == P


# ---------------------------------------------------------------------------------------------
# errors, strict, inputs


@pytest.mark.parametrize(
    ("event", "detail"),
    [
        ({"choices": "x"}, "choices is not a list"),
        ({"choices": [], "usage": 3}, "usage is not an object"),
        ({"choices": [1]}, "choices[0] is not an object"),
        ({"choices": [{"index": "0", "delta": {}}]}, "choices[0].index is not an integer"),
        ({"choices": [{"index": 0, "delta": "x"}]}, "choices[0].delta is not an object"),
        (
            {"choices": [{"index": 0, "delta": {"content": 5}}]},
            "choices[0].delta.content is not a string or a list",
        ),
        (
            {"choices": [{"index": 0, "delta": {"content": [3]}}]},
            "choices[0].delta.content[0] is not an object or a string",
        ),
        (
            {
                "choices": [
                    {"index": 0, "delta": {"content": [{"type": "thinking", "thinking": 1}]}}
                ]
            },
            "choices[0].delta.content[0].thinking is not a list",
        ),
        (
            {"choices": [{"index": 0, "delta": {"tool_calls": "x"}}]},
            "choices[0].delta.tool_calls is not a list",
        ),
        (
            {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": "f"}]}}]},
            "choices[0].delta.tool_calls[0].function is not an object",
        ),
        (
            {"choices": [{"index": 0, "delta": {"tool_calls": [{"function": {"arguments": 1}}]}}]},
            "choices[0].delta.tool_calls[0].function.arguments is not a string or an object",
        ),
        (
            {"choices": [{"index": 0, "delta": {"reasoning_details": {}}}]},
            "choices[0].delta.reasoning_details is not a list",
        ),
        (
            {"choices": [{"index": 0, "delta": {"reasoning_content": 1}}]},
            "choices[0].delta.reasoning_content is not a string",
        ),
        (
            {"choices": [{"index": 0, "delta": {"refusal": []}}]},
            "choices[0].delta.refusal is not a string",
        ),
        ({"choices": [{"index": 0, "token_ids": 3}]}, "choices[0].token_ids is not a list"),
        ({"choices": [], "id": 5}, "id is not a string"),
        ({"choices": [], "model": []}, "model is not a string"),
        ({"choices": [], "prompt_token_ids": "1 2"}, "prompt_token_ids is not a list"),
        (
            {"choices": [{"index": 0, "delta": {"role": 1}}]},
            "choices[0].delta.role is not a string",
        ),
        (
            {"choices": [{"index": 0, "finish_reason": 0}]},
            "choices[0].finish_reason is not a string",
        ),
        (
            {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": "0"}]}}]},
            "choices[0].delta.tool_calls[0].index is not an integer",
        ),
        (
            {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": 7}]}}]},
            "choices[0].delta.tool_calls[0].id is not a string",
        ),
        (
            {"choices": [{"index": 0, "delta": {"tool_calls": [{"function": {"name": 1}}]}}]},
            "choices[0].delta.tool_calls[0].function.name is not a string",
        ),
        (
            {"choices": [{"index": 0, "delta": {"function_call": {"name": 1}}}]},
            "choices[0].delta.function_call.name is not a string",
        ),
    ],
)
def test_bad_shapes(event: dict[str, Any], detail: str) -> None:
    agg = fastmerge.Aggregator(P, strict=True)
    agg.add(chunk(ch(content="ok")))
    with pytest.raises(EventError) as info:
        agg.add(event)
    assert info.value.event == 2
    assert info.value.detail == f"{P}: {detail}"
    # not strict: skipped, and said (spec §8)
    agg = fastmerge.Aggregator(P)
    agg.add(chunk(ch(content="ok")))
    agg.add(event)
    anomaly = {"code": "unreadable_event", "detail": f"event 2: {P}: {detail}"}
    assert anomaly in agg.finish().anomalies


def test_inputs_not_mutated() -> None:
    events = [
        chunk(
            ch(
                role="assistant",
                content="a",
                reasoning_details=[{"type": "reasoning.text", "text": "t", "index": 0}],
            )
        ),
        chunk(ch(tool_calls=[tc(0, "c1", "f", "{", extra_content={"g": {"s": "S"}})])),
        chunk(ch(finish="tool_calls"), usage=USAGE),
    ]
    before = copy.deepcopy(events)
    m = fastmerge.aggregate(events, P)
    to_provider(m, P)
    assert events == before


def test_strict_raises_the_anomaly() -> None:
    events = [
        chunk(ch(tool_calls=[tc(0, "c1", "f", "{}")])),
        chunk(ch(tool_calls=[tc(0, "c2", "g", "{}")])),
    ]
    with pytest.raises(fastmerge.AnomalyError) as info:
        fastmerge.aggregate(events, P, strict=True)
    assert info.value.code == "index_collision"


def _sse(events: list[dict[str, Any]]) -> bytes:
    lines = [f"data: {json.dumps(e, ensure_ascii=False)}\n\n" for e in events]
    return (": keep-alive\n\n" + "".join(lines) + "data: [DONE]\n\n").encode()


def test_sse_split_at_every_position() -> None:
    events = [
        chunk(ch(role="assistant", content="hé")),
        chunk(ch(tool_calls=[tc(0, "c1", "f", '{"a":')])),
        chunk(ch(tool_calls=[tc(0, args="1}")], finish="tool_calls")),
        chunk(usage=USAGE),
    ]
    data = _sse(events)
    whole = fastmerge.aggregate(data, P).to_dict()
    assert whole == fastmerge.aggregate(events, P).to_dict()
    for cut in range(1, len(data)):
        agg = fastmerge.Aggregator(P)
        agg.feed(data[:cut])
        agg.feed(data[cut:])
        assert agg.finish().to_dict() == whole, cut


def test_openai_sdk_chunks() -> None:
    """The SDK's ChatCompletionChunk objects (model_dump() fills every field, mostly None)
    give the message the raw dicts give."""
    chunk_type = pytest.importorskip("openai.types.chat").ChatCompletionChunk
    events = [
        chunk(ch(role="assistant", content="Hi")),
        chunk(ch(tool_calls=[tc(0, "c1", "f", "{}")])),
        chunk(ch(finish="tool_calls")),
    ]
    objects = [chunk_type.model_validate(e) for e in events]
    assert fastmerge.aggregate(objects, P).to_dict() == fastmerge.aggregate(events, P).to_dict()
