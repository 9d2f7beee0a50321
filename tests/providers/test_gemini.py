"""The ``"gemini"`` adapter on small event lists (both backends): text and thought parts,
thought signatures on every kind of part (a signature on an empty trailing part in each
position), other parts kept verbatim, ids and metadata, cumulative usage with a lower later
value, logprobs, and n > 1 with choice 1 first."""

from __future__ import annotations

from _support.gemini import (
    P,
    agg,
    call,
    chunk,
    codes,
    parts,
    rendered_parts,
    sig,
    text,
    thought,
)

import fastmerge
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
