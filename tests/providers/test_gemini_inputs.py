"""The ``"gemini"`` adapter's status (complete / incomplete / failed, blocked prompts, no
event at all) and its inputs (both backends): bad event shapes, inputs left alone, strict
mode, SSE bytes and JSON arrays split at every position, and the round trip through
``to_dict``."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from _support.gemini import (
    P,
    agg,
    call,
    chunk,
    codes,
    partial,
    parts,
    streamed,
    text,
    thought,
)

import fastmerge
from fastmerge.errors import AnomalyError, EventError
from fastmerge.render import to_provider

# ---------------------------------------------------------------------------------------------
# Status


def test_stream_cut_before_finish_reason_is_incomplete() -> None:
    m = agg([chunk(text("a")), chunk(text("b"))])
    assert m.status == "incomplete"
    assert codes(m) == []
    assert m.content == "ab"


def test_error_event_fails() -> None:
    error = {"code": 500, "message": "Internal error", "status": "INTERNAL"}
    m = agg([chunk(text("a")), {"error": error}])
    assert m.status == "failed"
    assert m.provider_metadata["error"] == error
    assert to_provider(m, P)["error"] == error


def test_blocked_prompt_fails() -> None:
    feedback = {"blockReason": "SAFETY", "safetyRatings": []}
    m = fastmerge.aggregate(
        [{"promptFeedback": feedback, "usageMetadata": {"promptTokenCount": 4}}], "auto"
    )
    assert m.status == "failed"
    assert m.provider_metadata["promptFeedback"] == feedback
    assert to_provider(m, P)["promptFeedback"] == feedback


def test_prompt_feedback_without_block_is_kept() -> None:
    m = agg([chunk(text("a"), finish="STOP", promptFeedback={"safetyRatings": []})])
    assert m.status == "complete"
    assert m.provider_metadata["promptFeedback"] == {"safetyRatings": []}


def test_no_event_at_all() -> None:
    # an error, not an empty message (spec §6); a snapshot before any event is empty
    with pytest.raises(EventError, match="^no event could be read: the input is empty$"):
        agg([])
    m = fastmerge.Aggregator(P).snapshot()
    assert m.status == "incomplete" and list(m.parts) == []


# ---------------------------------------------------------------------------------------------
# Errors, strict mode, inputs, transports


ARG0 = "candidates[0].content.parts[0].functionCall.partialArgs[0]"


@pytest.mark.parametrize(
    ("event", "detail"),
    [
        ({"candidates": "x"}, "candidates must be an array, got string"),
        ({"candidates": [3]}, "candidates[0] must be an object, got number"),
        ({"candidates": [{"index": "0"}]}, "candidates[0].index must be an integer, got string"),
        ({"candidates": [{"index": True}]}, "candidates[0].index must be an integer, got boolean"),
        ({"candidates": [{"content": []}]}, "candidates[0].content must be an object, got array"),
        (
            {"candidates": [{"content": {"parts": {"text": "a"}}}]},
            "candidates[0].content.parts must be an array, got object",
        ),
        (
            {"candidates": [{"content": {"parts": [None]}}]},
            "candidates[0].content.parts[0] must be an object, got null",
        ),
        (
            {"candidates": [{"content": {"parts": [{"text": 1}]}}]},
            "candidates[0].content.parts[0].text must be a string, got number",
        ),
        (
            {"candidates": [{"content": {"parts": [{"functionCall": "f"}]}}]},
            "candidates[0].content.parts[0].functionCall must be an object, got string",
        ),
        (
            {
                "candidates": [
                    {"content": {"parts": [{"functionCall": {"name": "f", "args": "{}"}}]}}
                ]
            },
            "candidates[0].content.parts[0].functionCall.args must be an object, got string",
        ),
        (
            {"candidates": [{"content": {"parts": [{"functionCall": {"name": 1}}]}}]},
            "candidates[0].content.parts[0].functionCall.name must be a string, got number",
        ),
        (
            {
                "candidates": [
                    {"content": {"parts": [{"functionCall": {"name": "f", "partialArgs": {}}}]}}
                ]
            },
            "candidates[0].content.parts[0].functionCall.partialArgs must be an array, got object",
        ),
        (
            {
                "candidates": [
                    {
                        "content": {
                            "parts": [
                                {
                                    "functionCall": {
                                        "name": "f",
                                        "partialArgs": [{"stringValue": "x"}],
                                    }
                                }
                            ]
                        }
                    }
                ]
            },
            ARG0 + ".jsonPath must be a string, got null",
        ),
        (
            {
                "candidates": [
                    {
                        "content": {
                            "parts": [
                                {
                                    "functionCall": {
                                        "name": "f",
                                        "partialArgs": [{"jsonPath": "a.b"}],
                                    }
                                }
                            ]
                        }
                    }
                ]
            },
            ARG0 + ".jsonPath 'a.b' is not a JSON path",
        ),
        (
            {
                "candidates": [
                    {
                        "content": {
                            "parts": [
                                {
                                    "functionCall": {
                                        "name": "f",
                                        "partialArgs": [{"jsonPath": "$.a", "numberValue": "1"}],
                                    }
                                }
                            ]
                        }
                    }
                ]
            },
            ARG0 + ".numberValue must be a number, got string",
        ),
        ({"usageMetadata": [1]}, "usageMetadata must be an object, got array"),
        ({"responseId": 1}, "responseId must be a string, got number"),
        ({"modelVersion": {}}, "modelVersion must be a string, got object"),
        (
            {"candidates": [{"content": {"role": ["model"]}}]},
            "candidates[0].content.role must be a string, got array",
        ),
        (
            {"candidates": [{"content": {"parts": [{"functionCall": {"name": "f", "id": []}}]}}]},
            "candidates[0].content.parts[0].functionCall.id must be a string, got array",
        ),
        (
            {"candidates": [{"finishReason": ["STOP"]}]},
            "candidates[0].finishReason must be a string, got array",
        ),
    ],
)
def test_bad_event_shapes(event: dict[str, Any], detail: str) -> None:
    with pytest.raises(EventError) as info:
        agg([chunk(text("ok")), event], strict=True)
    assert info.value.event == 2
    assert info.value.detail == f"{P}: {detail}"
    assert str(info.value) == f"event 2: {P}: {detail}"
    # not strict: skipped, and said (spec §8)
    anomaly = {"code": "unreadable_event", "detail": f"event 2: {P}: {detail}"}
    assert anomaly in agg([chunk(text("ok")), event]).anomalies


def test_inputs_are_not_mutated() -> None:
    events = streamed(partial("$.a", stringValue="x"), partial("$.a", more=False, stringValue="y"))
    events += [chunk(text("t", thoughtSignature="S"), usage={"promptTokenCount": 1}, finish="STOP")]
    before = copy.deepcopy(events)
    m = agg(events)
    assert events == before
    m.to_dict()["parts"][0]["payload"]["data"] = "changed"
    assert parts(m)[0]["payload"]["data"] == "S"


def test_strict_raises_the_anomaly() -> None:
    with pytest.raises(AnomalyError) as info:
        agg(streamed(partial("$.l[1]", more=False, numberValue=1)), strict=True)
    assert info.value.code == "mismatched_delta"
    with pytest.raises(AnomalyError) as info:
        agg(streamed(partial("$.a", stringValue="x"), finish=False), strict=True)
    assert info.value.code == "truncated"
    with pytest.raises(AnomalyError) as info:
        agg([chunk(call("f", args={}), finish="STOP")], strict=True)
    assert info.value.code == "synthetic_id"
    m = agg(
        [chunk({"functionCall": {"id": "c", "name": "f", "args": {}}}, finish="STOP")], strict=True
    )
    assert m.status == "complete"


SMALL = [
    chunk(thought("hm"), responseId="r", modelVersion="g"),
    chunk(text("héllo"), usage={"promptTokenCount": 2, "totalTokenCount": 2}),
    chunk({"functionCall": {"name": "f", "args": {"x": "ü"}}, "thoughtSignature": "S"}),
    chunk(
        text("", thoughtSignature="T"),
        finish="STOP",
        usage={"promptTokenCount": 2, "candidatesTokenCount": 3, "totalTokenCount": 5},
    ),
]


def test_sse_bytes_split_at_every_position() -> None:
    sse = b"".join(b"data: " + json.dumps(e, ensure_ascii=False).encode() + b"\n\n" for e in SMALL)
    reference = agg(SMALL).to_dict()
    for cut in range(1, len(sse)):
        a = fastmerge.Aggregator("auto")
        a.feed(sse[:cut])
        a.feed(sse[cut:])
        assert a.finish().to_dict() == reference, cut


def test_json_array_split_at_every_position() -> None:
    array = json.dumps(SMALL, ensure_ascii=False).encode()
    reference = agg(SMALL).to_dict()
    for cut in range(1, len(array), 7):
        a = fastmerge.Aggregator(P)
        a.feed(array[:cut])
        a.feed(array[cut:])
        assert a.finish().to_dict() == reference, cut


def test_round_trip_through_to_dict() -> None:
    m = agg(SMALL)
    again = type(m).from_dict(m.to_dict())
    assert again == m
    assert to_provider(again, P) == to_provider(m, P)
