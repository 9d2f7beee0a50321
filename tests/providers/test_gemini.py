"""The ``"gemini"`` adapter and renderer on small event lists: each part kind (text, thought,
thought signatures on every kind of part, function calls whole or streamed as Vertex
``partialArgs``, other parts kept verbatim), the cases the corpus lacks (a signature on an
empty trailing part in each position, two function calls in one chunk, cumulative usage with
a lower later value, streams cut before ``finishReason`` or mid-arguments, n > 1 with choice 1
first, JSON paths that do not fit), status complete / incomplete / failed, bad event shapes,
strict mode, inputs left alone, SSE bytes split at every position, and what the renderer
replays. Every test runs on both backends."""

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
    rendered_parts,
    sig,
    text,
    thought,
)

import fastmerge
from fastmerge.errors import AnomalyError, EventError
from fastmerge.render import to_provider

# ---------------------------------------------------------------------------------------------
# Text and thoughts


def test_text_chunks_are_one_part() -> None:
    m = agg([chunk(text("Hel")), chunk(text("lo, ")), chunk(text("world"), finish="STOP")])
    assert [(p["part"], p["text"]) for p in parts(m)] == [("text", "Hello, world")]
    assert m.status == "complete"
    assert m.to_dict()["finish_reason"] == "STOP"
    assert m.role == "assistant"
    assert codes(m) == []
    assert rendered_parts(m) == [{"text": "Hello, world"}]


def test_thought_then_text_are_two_parts_in_order() -> None:
    m = agg(
        [
            chunk(thought("think ")),
            chunk(thought("more")),
            chunk(text("answer", thoughtSignature="S1")),
            chunk(text(" goes on"), finish="STOP"),
        ]
    )
    got = parts(m)
    assert [(p["part"], p["text"]) for p in got] == [
        ("reasoning", "think more"),
        ("text", "answer goes on"),
    ]
    assert got[1]["attributes"] == {"payload": sig("S1")}
    assert rendered_parts(m) == [
        {"text": "think more", "thought": True},
        {"text": "answer goes on", "thoughtSignature": "S1"},
    ]


def test_signature_on_a_thought_part_is_its_payload() -> None:
    m = agg([chunk(thought("t", thoughtSignature="S")), chunk(text("x"), finish="STOP")])
    assert parts(m)[0]["payload"] == sig("S")
    assert rendered_parts(m)[0] == {"text": "t", "thought": True, "thoughtSignature": "S"}


def test_empty_text_parts_are_dropped() -> None:
    m = agg([chunk(text("a")), chunk(text("")), chunk(text(""), finish="STOP")])
    assert [p["text"] for p in parts(m)] == ["a"]


def test_text_after_a_function_call_is_a_new_part() -> None:
    m = agg([chunk(text("a")), chunk(call("f", args={})), chunk(text("b"), finish="STOP")])
    assert [p["part"] for p in parts(m)] == ["text", "tool_call", "text"]


# ---------------------------------------------------------------------------------------------
# Signatures on empty parts (edge case E69)


def test_signature_on_empty_trailing_part_joins_the_text_before_it() -> None:
    m = agg(
        [chunk(text("a")), chunk(text("b")), chunk(text("", thoughtSignature="S"), finish="STOP")]
    )
    (part,) = parts(m)
    assert part["text"] == "ab" and part["attributes"] == {"payload": sig("S")}
    assert rendered_parts(m) == [{"text": "ab", "thoughtSignature": "S"}]


def test_signature_on_empty_part_after_a_call_joins_the_call() -> None:
    m = agg([chunk(call("f", args={"a": 1})), chunk(text("", thoughtSignature="S"), finish="STOP")])
    (part,) = parts(m)
    assert part["part"] == "tool_call" and part["payload"] == sig("S")
    assert rendered_parts(m) == [
        {"functionCall": {"name": "f", "args": {"a": 1}}, "thoughtSignature": "S"}
    ]


def test_signature_on_empty_part_after_a_signed_part_stays_at_its_place() -> None:
    m = agg(
        [
            chunk(text("a", thoughtSignature="S1")),
            chunk(text("", thoughtSignature="S2"), finish="STOP"),
        ]
    )
    assert rendered_parts(m) == [
        {"text": "a", "thoughtSignature": "S1"},
        {"text": "", "thoughtSignature": "S2"},
    ]


def test_signature_on_empty_part_after_an_unknown_part_stays_at_its_place() -> None:
    code = {"executableCode": {"language": "PYTHON", "code": "print(1)"}}
    m = agg([chunk(code), chunk(text("", thoughtSignature="S"), finish="STOP")])
    assert rendered_parts(m) == [code, {"text": "", "thoughtSignature": "S"}]


def test_signature_alone_first_is_an_empty_text_part() -> None:
    m = agg([chunk(text("", thoughtSignature="S")), chunk(text("x"), finish="STOP")])
    assert rendered_parts(m) == [{"text": "x", "thoughtSignature": "S"}]
    m = agg([chunk({"thoughtSignature": "S"}, finish="STOP")])
    assert rendered_parts(m) == [{"text": "", "thoughtSignature": "S"}]


def test_a_signed_text_delta_after_a_signed_part_starts_a_new_part() -> None:
    m = agg(
        [
            chunk(text("a", thoughtSignature="S1")),
            chunk(text("b", thoughtSignature="S2"), finish="STOP"),
        ]
    )
    assert rendered_parts(m) == [
        {"text": "a", "thoughtSignature": "S1"},
        {"text": "b", "thoughtSignature": "S2"},
    ]


# ---------------------------------------------------------------------------------------------
# Function calls


def test_function_call_with_id_and_signature() -> None:
    signed = {
        "functionCall": {"id": "c1", "name": "get", "args": {"q": "x"}},
        "thoughtSignature": "S",
    }
    m = agg([chunk(signed, finish="STOP")])
    (part,) = parts(m)
    assert (part["id"], part["name"], part["arguments"]) == ("c1", "get", {"q": "x"})
    assert part["payload"] == sig("S")
    assert codes(m) == []
    assert rendered_parts(m) == [
        {"functionCall": {"id": "c1", "name": "get", "args": {"q": "x"}}, "thoughtSignature": "S"}
    ]


def test_two_function_calls_in_one_chunk() -> None:
    m = agg(
        [
            chunk(
                {"functionCall": {"name": "f", "args": {"a": 1}}, "thoughtSignature": "S"},
                call("f", args={"a": 2}),
                finish="STOP",
            )
        ]
    )
    calls = parts(m)
    assert [(c["name"], c["arguments"], c["provider_index"]) for c in calls] == [
        ("f", {"a": 1}, 0),
        ("f", {"a": 2}, 1),
    ]
    assert calls[0]["payload"] == sig("S") and calls[1]["payload"] is None
    assert codes(m) == ["synthetic_id", "synthetic_id"]
    assert rendered_parts(m) == [
        {"functionCall": {"name": "f", "args": {"a": 1}}, "thoughtSignature": "S"},
        {"functionCall": {"name": "f", "args": {"a": 2}}},
    ]


def test_function_call_without_args_renders_without_args() -> None:
    m = agg([chunk(call("ping")), chunk(text(""), finish="STOP")])
    assert parts(m)[0]["arguments"] == ""
    assert rendered_parts(m) == [{"functionCall": {"name": "ping"}}]


def test_other_function_call_fields_are_extra() -> None:
    m = agg([chunk(call("f", args={}, scheduling="WHEN_IDLE"), finish="STOP")])
    assert parts(m)[0]["extra"] == {"scheduling": "WHEN_IDLE"}
    assert rendered_parts(m) == [
        {"functionCall": {"name": "f", "args": {}, "scheduling": "WHEN_IDLE"}}
    ]


# ---------------------------------------------------------------------------------------------
# Vertex streamed arguments


def streamed(*steps: dict[str, Any], finish: bool = True) -> list[dict[str, Any]]:
    events = [chunk({"functionCall": {"name": "f", "willContinue": True}, "thoughtSignature": "S"})]
    events += [chunk({"functionCall": {"partialArgs": [s], "willContinue": True}}) for s in steps]
    if finish:
        events.append(chunk(call(None), finish="STOP"))
    return events


def test_partial_args_are_written_as_json_text() -> None:
    m = agg(
        streamed(
            partial("$.loc", stringValue="San "),
            partial("$.loc", stringValue='Fran"cisco\n'),
            partial("$.loc", more=False, stringValue=""),
            partial("$.n", more=False, numberValue=2.5),
            partial("$.small", more=False, numberValue=0.00001),
            partial("$.k", more=False, numberValue=3),
            partial("$.b", more=False, boolValue=True),
            partial("$.z", more=False, nullValue="NULL_VALUE"),
            partial("$.list[0].x", more=False, stringValue="é"),
            partial("$.list[1]", more=False, numberValue=1e20),
            partial("$['odd key']", more=False, boolValue=False),
        )
    )
    (part,) = parts(m)
    assert part["arguments"] == (
        '{"loc":"San Fran\\"cisco\\n","n":2.5,"small":1e-05,"k":3,"b":true,"z":null,'
        '"list":[{"x":"é"},1e+20],"odd key":false}'
    )
    assert part["payload"] == sig("S")
    assert m.status == "complete" and codes(m) == ["synthetic_id"]
    assert rendered_parts(m)[0]["functionCall"]["args"] == json.loads(part["arguments"])


def test_two_streamed_calls_in_a_row() -> None:
    events = streamed(partial("$.a", more=False, stringValue="1"), finish=False)
    events.append(chunk(call(None)))
    events.append(chunk(call("g", willContinue=True)))
    events.append(
        chunk({"functionCall": {"partialArgs": [partial("$.b", more=False, boolValue=False)]}})
    )
    events.append(chunk(text(""), finish="STOP"))
    m = agg(events)
    assert [(p["name"], p["arguments"]) for p in parts(m)] == [
        ("f", '{"a":"1"}'),
        ("g", '{"b":false}'),
    ]
    assert codes(m) == ["synthetic_id", "synthetic_id"]


def test_stream_cut_mid_arguments_is_truncated_and_incomplete() -> None:
    m = agg(streamed(partial("$.loc", stringValue="Bos"), finish=False))
    assert m.status == "incomplete"
    assert parts(m)[0]["arguments"] == '{"loc":"Bos'  # raw, as streamed
    assert m.to_dict()["anomalies"][0] == {
        "code": "truncated",
        "detail": "call 'f': the stream ended before its streamed arguments did",
        "tool_call": {"name": "f", "provider_index": 0},
    }


def test_finish_with_a_streamed_call_open_is_truncated() -> None:
    events = streamed(partial("$.loc", stringValue="Bos"), finish=False)
    events.append(chunk(finish="MAX_TOKENS"))
    m = agg(events)
    assert m.status == "complete"
    assert codes(m)[0] == "truncated"
    assert parts(m)[0]["arguments"] == '{"loc":"Bos'


def test_another_part_ends_an_open_streamed_call() -> None:
    events = streamed(partial("$.a", stringValue="x"), finish=False)
    events.append(chunk(text("done"), finish="STOP"))
    m = agg(events)
    assert [p["part"] for p in parts(m)] == ["tool_call", "text"]
    assert parts(m)[0]["arguments"] == '{"a":"x"}'


def test_partial_args_before_any_call() -> None:
    m = agg(
        [
            chunk({"functionCall": {"partialArgs": [partial("$.a", more=False, stringValue="x")]}}),
            chunk(text(""), finish="STOP"),
        ]
    )
    assert codes(m) == ["delta_before_start"]
    assert m.to_dict()["anomalies"][0]["detail"] == (
        "candidates[0].content.parts[0].functionCall: arguments without a call; kept on a call "
        "without a name"
    )
    assert parts(m)[0]["arguments"] == '{"a":"x"}'


def test_a_json_path_that_skips_an_array_item() -> None:
    m = agg(
        streamed(
            partial("$.l[0]", more=False, numberValue=1),
            partial("$.l[2]", more=False, numberValue=3),
        )
    )
    assert parts(m)[0]["arguments"] == '{"l":[1,3]}'
    assert m.to_dict()["anomalies"][0] == {
        "code": "mismatched_delta",
        "detail": "call 'f': jsonPath '$.l[2]' is not the next item (1) of its array",
    }


def test_snapshot_shows_the_arguments_so_far() -> None:
    a = fastmerge.Aggregator(P)
    for event in streamed(partial("$.loc", stringValue="Bos"), finish=False):
        a.add(event)
    assert a.snapshot().to_dict()["parts"][0]["arguments"] == '{"loc":"Bos'
    assert a.snapshot().status == "incomplete"


# ---------------------------------------------------------------------------------------------
# Other parts, metadata, usage


def test_other_parts_are_kept_verbatim() -> None:
    image = {"inlineData": {"mimeType": "image/png", "data": "iVBOR"}, "thoughtSignature": "S"}
    result = {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1\n"}}
    m = agg([chunk(image), chunk(result), chunk(text("ok"), finish="STOP")])
    got = parts(m)
    assert [(p["part"], p.get("kind")) for p in got] == [
        ("unknown", "inlineData"),
        ("unknown", "codeExecutionResult"),
        ("text", None),
    ]
    assert got[0]["raw"] == image and got[0]["provider"] == P
    assert rendered_parts(m) == [image, result, {"text": "ok"}]


def test_cumulative_usage_keeps_the_last_values() -> None:
    m = agg(
        [
            chunk(text("a"), usage={"promptTokenCount": 15, "totalTokenCount": 15}),
            chunk(
                text("b"),
                finish="STOP",
                usage={
                    "promptTokenCount": 13,
                    "candidatesTokenCount": 8,
                    "thoughtsTokenCount": 4,
                    "cachedContentTokenCount": 2,
                    "totalTokenCount": 25,
                    "candidatesTokensDetails": [{"modality": "TEXT", "tokenCount": 8}],
                },
            ),
        ]
    )
    usage = m.to_dict()["usage_metadata"]
    assert usage["input_tokens"] == 13  # lower than the first chunk's: the last value wins
    assert usage["output_tokens"] == 12  # candidates + thoughts
    assert usage["total_tokens"] == 25
    assert usage["reasoning_tokens"] == 4
    assert usage["cache_read_tokens"] == 2
    assert codes(m) == []
    assert to_provider(m, P)["usageMetadata"] == {
        "promptTokenCount": 13,
        "totalTokenCount": 25,
        "candidatesTokenCount": 8,
        "thoughtsTokenCount": 4,
        "cachedContentTokenCount": 2,
        "candidatesTokensDetails": [{"modality": "TEXT", "tokenCount": 8}],
    }


def test_a_zero_never_overwrites_a_count() -> None:
    m = agg(
        [
            chunk(text("a"), usage={"candidatesTokenCount": 5}),
            chunk(text("b"), finish="STOP", usage={"candidatesTokenCount": 0}),
        ]
    )
    assert m.to_dict()["usage_metadata"]["candidatesTokenCount"] == 5


def test_ids_model_and_metadata() -> None:
    m = agg(
        [
            chunk(text("a"), responseId="r1", modelVersion="m1", createTime="t", index=0),
            chunk(
                text("b"),
                finish="SAFETY",
                responseId="r1",
                modelVersion="m2",
                index=0,
            ),
        ]
        + [
            {
                "candidates": [
                    {
                        "index": 0,
                        "safetyRatings": [{"category": "X", "probability": "LOW"}],
                        "groundingMetadata": {"webSearchQueries": ["q"]},
                        "finishMessage": "done",
                    }
                ]
            }
        ]
    )
    assert (m.response_id, m.response_model) == ("r1", "m2")
    assert m.to_dict()["finish_reason"] == "SAFETY"
    rendered = to_provider(m, P)
    candidate = rendered["candidates"][0]
    assert candidate["finishReason"] == "SAFETY" and candidate["index"] == 0
    assert candidate["safetyRatings"] == [{"category": "X", "probability": "LOW"}]
    assert candidate["groundingMetadata"] == {"webSearchQueries": ["q"]}
    assert candidate["finishMessage"] == "done"
    assert rendered["createTime"] == "t"
    assert (rendered["responseId"], rendered["modelVersion"]) == ("r1", "m2")


def test_logprobs_concatenate() -> None:
    m = agg(
        [
            {
                "candidates": [
                    {"content": {"parts": [text("a")]}, "logprobsResult": {"chosenCandidates": [1]}}
                ]
            },
            {
                "candidates": [
                    {
                        "content": {"parts": [text("b")]},
                        "logprobsResult": {"chosenCandidates": [2]},
                        "finishReason": "STOP",
                    }
                ]
            },
        ]
    )
    assert m.logprobs == {"chosenCandidates": [1, 2]}
    assert to_provider(m, P)["candidates"][0]["logprobsResult"] == {"chosenCandidates": [1, 2]}


def test_two_candidates_choice_one_first() -> None:
    events = [
        {"candidates": [{"index": 1, "content": {"parts": [text("B1")]}}]},
        {
            "candidates": [
                {"index": 0, "content": {"parts": [text("A1")]}},
                {"index": 1, "content": {"parts": [text("B2")]}},
            ]
        },
        {
            "candidates": [
                {"index": 0, "content": {"parts": [text("A2")]}, "finishReason": "STOP"},
                {"index": 1, "content": {"parts": [text("")]}, "finishReason": "MAX_TOKENS"},
            ],
            "usageMetadata": {
                "promptTokenCount": 3,
                "candidatesTokenCount": 4,
                "totalTokenCount": 7,
            },
        },
    ]
    ms = fastmerge.aggregate_choices(events, P)
    assert [(m.choice_index, m.content, m.status) for m in ms] == [
        (0, "A1A2", "complete"),
        (1, "B1B2", "complete"),
    ]
    assert ms[1].to_dict()["finish_reason"] == "MAX_TOKENS"
    rendered = to_provider(ms, P)
    assert [c["index"] for c in rendered["candidates"]] == [0, 1]
    assert rendered["usageMetadata"]["totalTokenCount"] == 7


def test_usage_only_chunk_goes_to_every_choice() -> None:
    events = [
        {
            "candidates": [
                {"index": 0, "content": {"parts": [text("a")]}},
                {"index": 1, "content": {"parts": [text("b")]}},
            ]
        },
        {"usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 2, "totalTokenCount": 3}},
    ]
    ms = fastmerge.aggregate_choices(events, P)
    assert [m.to_dict()["usage_metadata"]["total_tokens"] for m in ms] == [3, 3]


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


def test_render_a_message_of_another_provider() -> None:
    m = fastmerge.AssistantMessage(
        content="hi",
        reasoning_content="think",
        tool_calls=[
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
        ],
        usage_metadata={"input_tokens": 1, "output_tokens": 5, "reasoning_tokens": 2},
        finish_reason="stop",
        response_model="gpt-x",
        provider_metadata={"provider": "openai-chat", "system_fingerprint": "fp"},
    )
    assert to_provider(m, P) == {
        "candidates": [
            {
                "content": {
                    "parts": [
                        {"text": "think", "thought": True},
                        {"text": "hi"},
                        {"functionCall": {"id": "c", "name": "f", "args": {"a": 1}}},
                    ],
                    "role": "model",
                },
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 1,
            "candidatesTokenCount": 3,
            "totalTokenCount": 6,
            "thoughtsTokenCount": 2,
        },
        "modelVersion": "gpt-x",
    }


def test_other_providers_payloads_are_not_replayed() -> None:
    m = fastmerge.AssistantMessage(
        parts=[
            {
                "part": "reasoning",
                "text": "t",
                "payload": {"provider": "anthropic", "kind": "signature", "data": "A"},
            },
            {
                "part": "text",
                "text": "x",
                "attributes": {"payload": {"provider": "anthropic", "kind": "k", "data": "B"}},
            },
        ],
    )
    assert to_provider(m, P)["candidates"][0]["content"]["parts"] == [
        {"text": "t", "thought": True},
        {"text": "x"},
    ]


def test_google_and_openai_compat_signatures_are_replayed() -> None:
    google = fastmerge.OpaquePayload("google", "thought_signature", "G")
    m = fastmerge.AssistantMessage(
        parts=[
            fastmerge.ToolCallPart(id="c1", name="f", arguments={}, payload=google),
            fastmerge.ToolCallPart(
                id="c2",
                name="g",
                arguments="{}",
                extra={"extra_content": {"google": {"thought_signature": "C"}}},
            ),
        ]
    )
    assert rendered_parts(m) == [
        {"functionCall": {"id": "c1", "name": "f", "args": {}}, "thoughtSignature": "G"},
        {"functionCall": {"id": "c2", "name": "g", "args": {}}, "thoughtSignature": "C"},
    ]


def test_candidate_blocked_without_content() -> None:
    ratings = [{"category": "HARM_CATEGORY_X", "probability": "HIGH", "blocked": True}]
    m = agg([{"candidates": [{"finishReason": "SAFETY", "index": 0, "safetyRatings": ratings}]}])
    assert (m.role, m.status, list(m.parts)) == ("assistant", "complete", [])
    assert m.finish_reason_normalized == "content_filter"
    candidate = to_provider(m, P)["candidates"][0]
    assert candidate == {
        "content": {"parts": [], "role": "model"},
        "finishReason": "SAFETY",
        "index": 0,
        "safetyRatings": ratings,
    }


def test_citations_of_every_chunk_survive() -> None:
    c1 = {"startIndex": 0, "endIndex": 3, "uri": "https://a"}
    c2 = {"startIndex": 4, "endIndex": 9, "uri": "https://b"}
    m = agg(
        [
            {
                "candidates": [
                    {
                        "content": {"parts": [text("abc ")]},
                        "citationMetadata": {"citationSources": [c1]},
                    }
                ]
            },
            {
                "candidates": [
                    {
                        "content": {"parts": [text("defgh")]},
                        "citationMetadata": {"citationSources": [c1, c2]},
                    }
                ]
            },
            {"candidates": [{"content": {"parts": [text("")]}, "finishReason": "STOP"}]},
        ]
    )
    (part,) = parts(m)
    assert part["text"] == "abc defgh"
    assert part["citations"] == [{"citationSources": [c1]}, {"citationSources": [c1, c2]}]
    assert "candidate" not in m.provider_metadata
    candidate = to_provider(m, P)["candidates"][0]
    assert candidate["citationMetadata"] == {"citationSources": [c1, c2]}
    assert candidate["content"]["parts"] == [{"text": "abc defgh"}]


def test_citations_after_a_call_sit_on_an_empty_text_part() -> None:
    c1 = {"uri": "https://a"}
    events = streamed(partial("$.a", stringValue="x"), finish=False)
    events.append(
        {"candidates": [{"content": {"parts": []}, "citationMetadata": {"citations": [c1]}}]}
    )
    events.append(
        chunk({"functionCall": {"partialArgs": [partial("$.a", more=False, stringValue="y")]}})
    )
    events.append(chunk(text("after"), finish="STOP"))
    m = agg(events)
    assert [(p["part"], p.get("arguments"), p.get("text")) for p in parts(m)] == [
        ("tool_call", '{"a":"xy"}', None),
        ("text", None, ""),
        ("text", None, "after"),
    ]
    candidate = to_provider(m, P)["candidates"][0]
    assert candidate["citationMetadata"] == {"citations": [c1]}
    assert [next(iter(p)) for p in candidate["content"]["parts"]] == ["functionCall", "text"]
