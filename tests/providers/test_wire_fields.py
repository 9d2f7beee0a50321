"""Fields the SDKs define that the recorded streams never carried: Gemini ``Part`` fields beside
a thought or a call, nulls an SDK's ``model_dump()`` spells for unset fields (Gemini parts,
OpenAI Chat logprobs and audio pieces). Kept where the provider sent them, never invented."""

from __future__ import annotations

from typing import Any

from _support.gemini import agg, call, chunk, parts, rendered_parts, text, thought

import fastmerge
from fastmerge.render import to_provider


def test_gemini_nulls_in_a_part_read_as_absent() -> None:
    """An SDK dump's nulls (unset fields) give the parts a dump without them gives."""
    bare = [
        chunk(text("a", speechMetadata={"speaker": "s"})),
        chunk({"inlineData": {"mimeType": "image/png", "data": "AA=="}}, finish="STOP"),
    ]
    nulls = [
        chunk(text("a", thought=None, speechMetadata={"speaker": "s", "style": None})),
        chunk(
            {
                "videoMetadata": None,
                "inlineData": {"mimeType": "image/png", "data": "AA==", "displayName": None},
            },
            finish="STOP",
        ),
    ]
    assert parts(agg(nulls)) == parts(agg(bare))
    assert rendered_parts(agg(nulls)) == [
        {"text": "a", "speechMetadata": {"speaker": "s"}},
        {"inlineData": {"mimeType": "image/png", "data": "AA=="}},
    ]


def test_gemini_fields_beside_a_call_are_kept_with_it() -> None:
    """partMetadata beside a functionCall stays a tool call, and renders back beside it."""
    part = {**call("f", args={"q": 1}, id="c1"), "partMetadata": {"tag": "t"}}
    message = agg([chunk(part, finish="STOP")])
    assert [(c.name, c.arguments) for c in message.tool_calls] == [("f", '{"q":1}')]
    assert rendered_parts(message) == [part]


def test_gemini_thought_with_fields_beside_is_kept_whole() -> None:
    """A thought with partMetadata is kept whole (a reasoning part has no field for it)."""
    part = thought("why", partMetadata={"tag": "t"})
    message = agg([chunk(part), chunk(text("so"), finish="STOP")])
    assert [(p["part"], p.get("kind")) for p in parts(message)] == [
        ("unknown", "thought"),
        ("text", None),
    ]
    assert rendered_parts(message) == [part, {"text": "so"}]


def _chat(choice: dict[str, Any]) -> dict[str, Any]:
    return {"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}


def test_chat_null_members_of_logprobs_and_audio_read_as_absent() -> None:
    """logprobs ``refusal: null`` and audio ``expires_at: null`` (an SDK dump's unset fields)
    give the message the chunks without them give; the rendering spells both logprobs lists."""
    lp = [{"token": "a", "logprob": -0.1, "bytes": [97], "top_logprobs": []}]

    def stream(nulls: bool) -> list[dict[str, Any]]:
        audio: dict[str, Any] = {"id": "au1", "data": "AA==", "transcript": "a"}
        logprobs: dict[str, Any] = {"content": lp}
        if nulls:
            audio["expires_at"] = None
            logprobs["refusal"] = None
        return [
            _chat({"index": 0, "delta": {"role": "assistant", "audio": audio}}),
            _chat({"index": 0, "delta": {"content": "a"}, "logprobs": logprobs}),
            _chat({"index": 0, "delta": {}, "finish_reason": "stop"}),
        ]

    with_nulls = fastmerge.aggregate(stream(True), "openai-chat")
    assert with_nulls.to_dict() == fastmerge.aggregate(stream(False), "openai-chat").to_dict()
    assert with_nulls.logprobs == {"content": lp}
    assert [p.raw for p in with_nulls.parts if type(p).__name__ == "UnknownPart"] == [
        {"id": "au1", "data": "AA==", "transcript": "a"}
    ]
    choice = to_provider(with_nulls, "openai-chat")["choices"][0]
    assert choice["logprobs"] == {"content": lp, "refusal": None}
