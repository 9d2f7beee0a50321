"""The ``"ollama"`` adapter on small event lists (both backends): /api/generate and /api/chat
objects, thinking, inline <think> text, chat tool calls, the final stats object, a stream
without its done object, errors, bad shapes, strict mode, inputs left unchanged, and JSON
lines split at every byte."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from _support.corpus import assert_backends_agree
from hypothesis import given, settings
from hypothesis import strategies as st

import fastmerge
from fastmerge.errors import EventError
from fastmerge.render import to_provider

P = "ollama"
T0 = "2025-01-01T00:00:00Z"
T1 = "2025-01-01T00:00:01Z"


def gen(response: str = "", **more: Any) -> dict[str, Any]:
    return {"model": "m", "created_at": T0, "response": response, "done": False, **more}


def chat(content: str = "", **more: Any) -> dict[str, Any]:
    message = {"role": "assistant", "content": content}
    extra = {k: more.pop(k) for k in list(more) if k in ("thinking", "tool_calls", "images")}
    message.update(extra)
    return {"model": "m", "created_at": T0, "message": message, "done": False, **more}


FINAL_STATS = {
    "done": True,
    "done_reason": "stop",
    "total_duration": 100,
    "load_duration": 10,
    "prompt_eval_count": 7,
    "prompt_eval_duration": 20,
    "eval_count": 3,
    "eval_duration": 30,
}

GENERATE = [
    gen(""),
    gen("", thinking="Hmm"),
    gen("", thinking=", ok"),
    gen("Hel"),
    gen("lo"),
    {**gen("", created_at=T1), **FINAL_STATS, "context": [1, 2, 3]},
]
CALL_1 = {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
CALL_2 = {"id": "call_2", "function": {"index": 1, "name": "get_time", "arguments": {"tz": "CET"}}}
CHAT = [
    chat("", thinking="Let me"),
    chat("", thinking=" check."),
    chat("Sure", tool_calls=[CALL_1, CALL_2]),
    {**chat("", created_at=T1), **FINAL_STATS},
]


def parts(message: Any) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = message.to_dict()["parts"]
    return result


def test_generate_stream() -> None:
    message = fastmerge.aggregate(GENERATE, P)
    data = message.to_dict()
    assert data["role"] == "assistant"
    assert data["status"] == "complete"
    assert data["finish_reason"] == "stop"
    assert data["response_model"] == "m"
    assert [(p["part"], p["text"]) for p in data["parts"]] == [
        ("reasoning", "Hmm, ok"),
        ("text", "Hello"),
    ]
    assert data["usage_metadata"] == {"input_tokens": 7, "output_tokens": 3, "total_tokens": 10}
    assert data["provider_metadata"] == {
        "provider": P,
        "api": "generate",
        "created_at": T1,
        "total_duration": 100,
        "load_duration": 10,
        "prompt_eval_duration": 20,
        "eval_duration": 30,
        "context": [1, 2, 3],
    }
    assert data["anomalies"] == []


def test_generate_render() -> None:
    rendered = to_provider(fastmerge.aggregate(GENERATE, P), P)
    assert rendered == {
        "model": "m",
        "created_at": T1,
        "response": "Hello",
        "thinking": "Hmm, ok",
        "done": True,
        "done_reason": "stop",
        "context": [1, 2, 3],
        "total_duration": 100,
        "load_duration": 10,
        "prompt_eval_count": 7,
        "prompt_eval_duration": 20,
        "eval_count": 3,
        "eval_duration": 30,
    }
    assert list(rendered)[:4] == ["model", "created_at", "response", "thinking"]


def test_chat_stream_with_tool_calls() -> None:
    message = fastmerge.aggregate(CHAT, P)
    data = message.to_dict()
    assert data["status"] == "complete"
    kinds = [p["part"] for p in data["parts"]]
    assert kinds == ["reasoning", "text", "tool_call", "tool_call"]
    first, second = data["parts"][2:]
    assert (first["name"], first["arguments"], first["provider_index"]) == (
        "get_weather",
        {"city": "Paris"},
        0,
    )
    assert (second["id"], second["name"], second["arguments"], second["provider_index"]) == (
        "call_2",
        "get_time",
        {"tz": "CET"},
        1,
    )
    assert second["extra"] == {"function": {"index": 1}}
    # the call without an id gets a generated one, flagged (spec E37)
    assert first["id"] == "call_fm_0"
    assert [a["code"] for a in data["anomalies"]] == ["synthetic_id"]
    assert data["provider_metadata"]["api"] == "chat"


def test_chat_render() -> None:
    rendered = to_provider(fastmerge.aggregate(CHAT, P), P)
    assert rendered["message"] == {
        "role": "assistant",
        "content": "Sure",
        "thinking": "Let me check.",
        "tool_calls": [
            {
                "id": "call_fm_0",
                "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
            },
            {
                "id": "call_2",
                "function": {"index": 1, "name": "get_time", "arguments": {"tz": "CET"}},
            },
        ],
    }
    assert rendered["done"] is True and rendered["done_reason"] == "stop"
    assert rendered["prompt_eval_count"] == 7 and rendered["eval_count"] == 3
    assert "response" not in rendered


def test_tool_calls_in_two_objects_stay_two_calls() -> None:
    """Ollama numbers calls per object: the same function called in two objects is two calls
    (provider_index counts the stream's calls)."""
    events = [
        chat("", tool_calls=[{"function": {"name": "f", "arguments": {"a": 1}}}]),
        chat("", tool_calls=[{"function": {"name": "f", "arguments": {"a": 2}}}]),
        {**chat(""), **FINAL_STATS},
    ]
    data = fastmerge.aggregate(events, P).to_dict()
    calls = [(p["name"], p["arguments"], p["provider_index"]) for p in data["parts"]]
    assert calls == [("f", {"a": 1}, 0), ("f", {"a": 2}, 1)]


def test_inline_think_is_text() -> None:
    events = [
        gen("<think>"),
        gen("why"),
        gen("</think>"),
        gen("Answer"),
        {**gen(""), **FINAL_STATS},
    ]
    (part,) = parts(fastmerge.aggregate(events, P))
    assert part == {
        "part": "text",
        "text": "<think>why</think>Answer",
        "citations": None,
        "attributes": None,
        "index": None,
    }


def test_generate_without_done_is_incomplete() -> None:
    message = fastmerge.aggregate(GENERATE[:-1], P)
    data = message.to_dict()
    assert data["status"] == "incomplete"
    assert data["anomalies"] == []
    assert data["finish_reason"] is None
    assert data["usage_metadata"] is None
    assert data["provider_metadata"]["created_at"] == T0  # the first object's
    rendered = to_provider(message, P)
    assert rendered["done"] is False and "done_reason" not in rendered
    assert rendered["response"] == "Hello"


def test_zero_counts_before_final_never_overwrite() -> None:
    events = [
        {**gen("a"), "done": True, "prompt_eval_count": 5, "eval_count": 2},
        {**gen(""), "done": True, "prompt_eval_count": 0, "eval_count": 0},
    ]
    usage = fastmerge.aggregate(events, P).to_dict()["usage_metadata"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (5, 2)


def test_error_object_fails() -> None:
    message = fastmerge.aggregate([gen("par"), {"error": "model crashed"}], P)
    data = message.to_dict()
    assert data["status"] == "failed"
    assert data["provider_metadata"]["error"] == "model crashed"
    assert to_provider(message, P)["error"] == "model crashed"


def test_other_keys_kept() -> None:
    events = [{**gen("x"), "remote_model": "gpt-oss:120b"}, {**gen(""), **FINAL_STATS}]
    message = fastmerge.aggregate(events, P)
    assert message.to_dict()["provider_metadata"]["remote_model"] == "gpt-oss:120b"
    assert to_provider(message, P)["remote_model"] == "gpt-oss:120b"


def test_logprobs_concatenate() -> None:
    events = [
        gen("a", logprobs=[{"token": "a", "logprob": -0.1}]),
        gen("b", logprobs=[{"token": "b", "logprob": -0.2}]),
        {**gen(""), **FINAL_STATS},
    ]
    message = fastmerge.aggregate(events, P)
    assert message.logprobs == [{"token": "a", "logprob": -0.1}, {"token": "b", "logprob": -0.2}]


def test_model_change_is_last() -> None:
    events = [gen("a"), gen("b", model="m2")]
    assert fastmerge.aggregate(events, P).response_model == "m2"


def test_auto_detects_generate_and_chat() -> None:
    for events in (GENERATE, CHAT):
        agg = fastmerge.Aggregator()
        agg.add(events[0])
        assert agg.provider == P


@pytest.mark.parametrize(
    ("event", "detail"),
    [
        ({"response": "x", "done": "no"}, "done must be a boolean, got string"),
        ({"response": 1, "done": False}, "response must be a string, got number"),
        ({"response": "", "thinking": [], "done": False}, "thinking must be a string, got array"),
        ({"message": "hi", "done": False}, "message must be an object, got string"),
        (
            {"message": {"role": "assistant", "content": 3}, "done": False},
            "message.content must be a string, got number",
        ),
        (
            {"message": {"content": "", "thinking": {}}, "done": False},
            "message.thinking must be a string, got object",
        ),
        (
            {"message": {"content": "", "tool_calls": {}}, "done": False},
            "message.tool_calls must be an array, got object",
        ),
        (
            {"message": {"content": "", "tool_calls": ["f"]}, "done": False},
            "message.tool_calls[] must be an object, got string",
        ),
        (
            {"message": {"content": "", "tool_calls": [{"name": "f"}]}, "done": False},
            "message.tool_calls[].function must be an object, got null",
        ),
        (
            {
                "message": {"content": "", "tool_calls": [{"function": {"arguments": [1]}}]},
                "done": False,
            },
            "message.tool_calls[].function.arguments must be an object, got array",
        ),
    ],
)
def test_bad_shapes(event: dict[str, Any], detail: str) -> None:
    with pytest.raises(EventError) as info:
        fastmerge.aggregate([gen("a"), event], P, strict=True)
    assert info.value.event == 2
    assert info.value.detail == f"{P}: {detail}"
    # not strict: skipped, and said (spec §8)
    anomaly = {"code": "unreadable_event", "detail": f"event 2: {P}: {detail}"}
    assert anomaly in fastmerge.aggregate([gen("a"), event], P).anomalies


def test_inputs_not_mutated() -> None:
    events = copy.deepcopy(CHAT)
    fastmerge.aggregate(events, P)
    assert events == CHAT


def test_strict_raises_on_anomaly() -> None:
    with pytest.raises(fastmerge.AnomalyError) as info:
        fastmerge.aggregate(CHAT, P, strict=True)
    assert info.value.code == "synthetic_id"


def test_split_bytes_at_every_position() -> None:
    lines = b"".join(json.dumps(e, ensure_ascii=False).encode() + b"\n" for e in GENERATE)
    lines = lines.replace(b'"Hel"', '"Hé"'.encode())  # a split inside a UTF-8 sequence too
    whole = fastmerge.aggregate(lines, P).to_dict()
    assert whole["parts"][1]["text"] == "Hélo"
    for cut in range(1, len(lines)):
        agg = fastmerge.Aggregator(P)
        agg.feed(lines[:cut])
        agg.feed(lines[cut:])
        assert agg.finish().to_dict() == whole, cut


# ---------------------------------------------------------------------------------------------
# Differential: any sequence of (possibly hostile) objects gives the same result on every
# backend, including the same error and the same anomalies.

POOL = [
    *GENERATE,
    *CHAT,
    gen("", thinking=None),
    {"response": "x"},
    {"thinking": "t", "done": None},
    {"model": "m2", "message": {"role": "user", "content": "u", "images": ["AA"]}},
    {"message": {"tool_calls": [{"function": {"name": "f", "arguments": '{"a":1}'}}]}},
    {"message": {"tool_calls": [{"id": "c", "type": "function", "function": {"name": "f"}}]}},
    {"message": {"tool_calls": [{"function": {"name": "f", "arguments": {"b": {"c": 1}}}}]}},
    {"done": True, "prompt_eval_count": 0, "eval_count": 0, "created_at": T1},
    {"error": "boom"},
    {"error": {"code": 1}, "done": True},
    {"extra_key": [1, 2], "api": "x"},
    {"logprobs": [{"token": "a"}]},
    {"response": 1},
    {"message": [], "done": False},
    {"done": 1},
]


@pytest.mark.differential
@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(POOL), max_size=12), st.booleans())
def test_backends_agree(events: list[Any], strict: bool) -> None:
    assert_backends_agree(events, P, strict=strict)


def test_render_message_of_another_provider() -> None:
    message = fastmerge.aggregate(CHAT, P)
    data = message.to_dict()
    data["provider_metadata"] = {"provider": "anthropic", "stop_sequence": None}
    data["finish_reason"] = "tool_use"
    rendered = to_provider(type(message).from_dict(data), P)
    assert rendered["done_reason"] == "stop"
    assert "message" in rendered and "stop_sequence" not in rendered
