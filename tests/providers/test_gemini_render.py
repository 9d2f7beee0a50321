"""What the ``"gemini"`` renderer replays (both backends): another provider's message, which
signatures go back to Gemini, a candidate blocked without content, and the citations of every
chunk."""

from __future__ import annotations

from _support.gemini import (
    P,
    agg,
    chunk,
    partial,
    parts,
    rendered_parts,
    streamed,
    text,
)

import fastmerge
from fastmerge.render import to_provider


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
