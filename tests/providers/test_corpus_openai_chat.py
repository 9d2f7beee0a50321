"""Conformance of the ``"openai-chat"`` adapter and renderer on the recorded streams of
``tests/corpus/openai_chat`` and ``tests/corpus/mistral``: every stream aggregates on
both backends byte-identically (from bytes and from dict events), with ``provider="auto"``
and the explicit provider; anomalies and status are what the stream explains; rendered
messages equal the ``.expected.json`` subsets and have the ``.nonstream.json`` shapes; and what
must survive (signatures, encrypted data, logprobs, token ids, usage) does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _support.corpus import (
    aggregate_both,
    assert_same_structure,
    assert_subset,
    path_of,
    sibling,
    stream_ids,
)
from _support.openai_chat import assert_round_trip

from fastmerge.render import to_provider

PROVIDER = "openai-chat"
KINDS = ("openai_chat", "mistral")
CASES = [(kind, name) for kind in KINDS for name in stream_ids(kind)]

# stream -> the anomalies it explains (code, detail), per choice 0
ANOMALIES: dict[str, list[tuple[str, str]]] = {
    # xAI reports completion_tokens without the reasoning tokens, and a total that includes
    # them (307 + 26 + 227 = 560): the reported total is kept and the mismatch recorded
    "xai-grok3-mini-reasoning-tool-call": [
        ("total_mismatch", "reported total_tokens 560 != input 307 + output 26")
    ],
}
# stream -> status of each choice (default: every choice complete)
STATUS: dict[str, list[str]] = {
    # Snowflake Cortex never sends a finish_reason (its last chunk is the usage chunk): the
    # terminal signal of OpenAI Chat never came
    "snowflake-cortex-claude-reasoning-details": ["incomplete"],
    "gpt4o-n3-interleaved-choices": ["complete", "complete", "complete"],
}
# keys of a .nonstream.json the renderer cannot know from the stream, with the reason
NONSTREAM_IGNORE: dict[str, tuple[str, ...]] = {
    # Qwen and DeepSeek number their non-streamed tool calls ("index"); OpenAI's
    # chat.completion has no index on a tool call, and the renderer writes OpenAI's shape
    "alibaba-qwen3-max-tool-call-empty-id-continuations": ("index",),
    "deepseek-reasoner-reasoning-then-tool-call": ("index",),
    # Groq's non-streamed response has a top-level "usage_breakdown": null that its chunks
    # never carry
    "groq-llama33-tool-call-single-chunk": ("usage_breakdown",),
}


def _events(kind: str, name: str) -> list[dict[str, Any]]:
    text = path_of(kind, name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _choices(event: dict[str, Any]) -> list[dict[str, Any]]:
    return event.get("choices") or []


@pytest.mark.differential
@pytest.mark.parametrize(("kind", "name"), CASES, ids=[f"{k}/{n}" for k, n in CASES])
def test_stream(kind: str, name: str) -> None:
    path: Path = path_of(kind, name)
    messages = aggregate_both(path, "auto")
    explicit = aggregate_both(path, PROVIDER)
    assert [m.to_dict() for m in messages] == [m.to_dict() for m in explicit]

    statuses = [m.status for m in messages]
    assert statuses == STATUS.get(name, ["complete"]), statuses
    for i, message in enumerate(messages):
        assert message.choice_index == i
        assert message.provider_metadata["provider"] == PROVIDER
        assert_round_trip(message)  # lossless
        seen = [(a["code"], a["detail"]) for a in message.to_dict()["anomalies"]]
        assert seen == (ANOMALIES.get(name, []) if i == 0 else []), seen

    rendered = to_provider(messages, PROVIDER)
    expected = sibling(path, ".expected.json")
    if expected is not None:
        assert_subset(expected, rendered)
    nonstream = sibling(path, ".nonstream.json")
    if nonstream is not None:
        assert_same_structure(nonstream, rendered, ignore=NONSTREAM_IGNORE.get(name, ()))
    _survives(kind, name, messages, rendered)


def _survives(kind: str, name: str, messages: list[Any], rendered: dict[str, Any]) -> None:
    """What the raw stream holds is in the messages and the rendered response."""
    events = _events(kind, name)
    by_choice: dict[int, list[dict[str, Any]]] = {}
    for event in events:
        for choice in _choices(event):
            by_choice.setdefault(choice.get("index", 0), []).append(choice)
    for index, message in enumerate(messages):
        data = message.to_dict()
        parts = data["parts"]
        choices = by_choice.get(index, [])
        deltas = [c.get("delta") or {} for c in choices]
        # text, refusal
        text = "".join(d["content"] for d in deltas if isinstance(d.get("content"), str))
        for d in deltas:
            for item in d.get("content") if isinstance(d.get("content"), list) else ():
                if item.get("type") == "text":
                    text += item["text"]
        assert "".join(p["text"] for p in parts if p["part"] == "text") == text
        refusal = "".join(d.get("refusal") or "" for d in deltas)
        assert (data["refusal"] or "") == refusal
        # logprobs: every content / refusal token, in order
        for key in ("content", "refusal"):
            tokens = [t for c in choices for t in ((c.get("logprobs") or {}).get(key) or ())]
            if tokens:
                assert data["logprobs"][key] == tokens
                assert rendered["choices"][index]["logprobs"][key] == tokens
        # vLLM token ids, Together token_id
        ids = [t for c in choices for t in (c.get("token_ids") or ())]
        ids += [d["token_id"] for d in deltas if isinstance(d.get("token_id"), int)]
        if ids:
            assert data["completion_token_ids"] == ids
        # signatures and encrypted data of reasoning_details, verbatim
        opaque = [
            e.get("signature") or e.get("data")
            for d in deltas
            for e in d.get("reasoning_details") or ()
            if e.get("signature") or e.get("data")
        ]
        payloads = [
            p["payload"]["data"] for p in parts if p["part"] == "reasoning" and p["payload"]
        ]
        assert payloads == opaque
        if opaque:
            details = rendered["choices"][index]["message"]["reasoning_details"]
            assert [
                e.get("signature") or e.get("data")
                for e in details
                if "signature" in e or "data" in e
            ] == opaque
        # tool calls: one per (index, id) the stream started, arguments joined
        names = [
            (t.get("function") or {}).get("name")
            for d in deltas
            for t in d.get("tool_calls") or ()
            if (t.get("function") or {}).get("name")
        ]
        assert [p["name"] for p in parts if p["part"] == "tool_call"] == names
    # usage: the last usage the stream sent, in OpenAI's keys
    usages = [e["usage"] for e in events if isinstance(e.get("usage"), dict)]
    if not usages:
        usages = [
            e["x_groq"]["usage"]
            for e in events
            if isinstance(e.get("x_groq"), dict) and "usage" in e["x_groq"]
        ]
    if usages:
        last = {k: v for k, v in usages[-1].items() if v is not None}
        assert rendered["usage"] == last
    else:
        assert rendered["usage"] is None


# the OpenAI streams (the SDK cannot read Azure's prelude chunk, whose object is "")
OPENAI_STREAMS = [n for n in stream_ids("openai_chat") if n.startswith("gpt")]


@pytest.mark.differential
@pytest.mark.parametrize("name", OPENAI_STREAMS)
def test_same_as_openai_sdk(name: str) -> None:
    """The rendered completion equals what openai-python's ChatCompletionStreamState builds
    from the same chunks (content, refusal, tool calls, finish reason, logprobs, usage, ids)
    on every recorded OpenAI stream it accepts."""
    streaming = pytest.importorskip("openai.lib.streaming.chat")
    types = pytest.importorskip("openai.types.chat")
    state = streaming.ChatCompletionStreamState()
    for event in _events("openai_chat", name):
        state.handle_chunk(types.ChatCompletionChunk.model_validate(event))
    try:
        sdk = state.get_final_completion().model_dump(exclude_none=True)
    except Exception as exc:  # the SDK refuses a completion cut by max_tokens
        pytest.skip(f"openai-python refuses this stream: {type(exc).__name__}")
    ours = to_provider(aggregate_both(path_of("openai_chat", name), PROVIDER), PROVIDER)
    for key in ("id", "model", "created", "system_fingerprint", "service_tier"):
        assert ours.get(key) == sdk.get(key), key
    if "usage" in sdk:
        assert _drop_none(ours["usage"]) == sdk["usage"]
    assert len(ours["choices"]) == len(sdk["choices"])
    for mine, theirs in zip(ours["choices"], sdk["choices"]):
        assert mine["index"] == theirs["index"]
        assert mine["finish_reason"] == theirs["finish_reason"]
        assert _drop_none(mine["logprobs"]) == theirs.get("logprobs")
        message = theirs["message"]
        assert mine["message"]["content"] == message.get("content")
        assert mine["message"]["refusal"] == message.get("refusal")
        calls = [
            (c["id"], c["function"]["name"], c["function"]["arguments"])
            for c in message.get("tool_calls") or ()
        ]
        assert [
            (c["id"], c["function"]["name"], c["function"]["arguments"])
            for c in mine["message"]["tool_calls"] or ()
        ] == calls


def _drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None} or None
    if isinstance(value, list):
        return [_drop_none(v) for v in value]
    return value
