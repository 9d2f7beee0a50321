"""Conformance on the recorded OpenAI Responses streams (``tests/corpus/openai_responses``):
every stream aggregates on both backends byte for byte (from raw bytes and from dict events,
with ``provider="auto"`` and ``"openai-responses"``), with its status and exactly the anomalies
it explains; the rendered ``response`` holds every field of the ``.expected.json`` (the
``response`` object of the stream's own terminal event) and has the shape of every
``.nonstream.json``; encrypted reasoning, reasoning text and summaries, text, logprobs,
function-call arguments, item ids, unknown items and usage survive as the raw stream has them."""

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
    streams,
)

import fastmerge
from fastmerge.render import to_provider

KIND = "openai_responses"
PROVIDER = "openai-responses"

#: stream -> (status, the anomaly codes in order, why)
EXPECTED: dict[str, tuple[str, list[str], str]] = {
    "deepseek-responses-reasoning-text-function-call": (
        "complete",
        [],
        "reasoning_text deltas and argument deltas agree with their done events",
    ),
    "gpt4o-function-call": ("complete", [], "one function call, deltas agree with done"),
    "gpt4o-mini-output-text-logprobs": ("complete", [], "text with logprobs"),
    "gpt4o-text": ("complete", [], "plain text"),
    "gpt5-reasoning-function-call-usage": ("complete", [], "encrypted reasoning + call"),
    "gpt5-reasoning-summary-code-interpreter": (
        "complete",
        [],
        "summary deltas; code_interpreter_call items are unknown parts (no anomaly)",
    ),
    "gpt5-web-search-encrypted-reasoning": (
        "complete",
        [],
        "web_search_call is an unknown part (no anomaly)",
    ),
    "gpt55-phase-text-then-function-call": ("complete", [], "reasoning, message, call"),
    "lmstudio-glm47-flash-reasoning-text-function-call": (
        "complete",
        [],
        "arguments only in function_call_arguments.done: emitted from done, no anomaly",
    ),
    "o3-mini-reasoning-summaries-4-parts": ("complete", [], "4 summary parts"),
    "openai-response-failed-insufficient-quota": (
        "failed",
        [],
        "an error event then response.failed: failed, the error kept",
    ),
    "openrouter-gpt-oss-reasoning-text-id-change": (
        "complete",
        [],
        "reasoning_text.done after its item's done; the completed item id wins (envelope)",
    ),
    "xai-grok-reasoning-summary-text": ("complete", [], "summary then 600 text deltas"),
}

#: nonstream keys the renderer cannot know from the stream, with the reason
NONSTREAM_IGNORE: dict[str, tuple[str, ...]] = {
    # a separate generation (another model) that answered with a function call only: the
    # output items are compared kind by kind below instead of as one list
    "lmstudio-glm47-flash-reasoning-text-function-call": ("output",),
    # the non-streamed file is the HTTP error body {"error": {...}}: only its error is compared
    "openai-response-failed-insufficient-quota": (),
}

#: streams whose rendering equals the expected response exactly (the failed one also keeps the
#: error event's ``type`` and ``param`` beside the failed response's ``code`` and ``message``)
EXACT = set(EXPECTED) - {"openai-response-failed-insufficient-quota"}

IDS = stream_ids(KIND)


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _terminal(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    found = None
    for event in events:
        if event["type"] in ("response.completed", "response.incomplete", "response.failed"):
            found = event["response"]
    return found


def test_every_stream_is_listed() -> None:
    assert sorted(p.stem for p in streams(KIND)) == sorted(EXPECTED)
    assert len(EXPECTED) == 13
    assert all(sibling(path_of(KIND, name), ".expected.json") is not None for name in EXPECTED)


@pytest.mark.differential
@pytest.mark.parametrize("provider", ["auto", PROVIDER])
@pytest.mark.parametrize("name", IDS)
def test_stream(name: str, provider: str) -> None:
    path = path_of(KIND, name)
    messages = aggregate_both(path, provider)
    assert len(messages) == 1
    message = messages[0]
    status, codes, _why = EXPECTED[name]
    assert message.status == status
    assert [a["code"] for a in message.anomalies] == codes
    assert message.provider_metadata["provider"] == PROVIDER
    rendered = to_provider(messages, PROVIDER)
    expected = sibling(path, ".expected.json")
    assert expected is not None
    assert_subset(expected, rendered)
    if name in EXACT:
        assert rendered == expected  # not only a subset: the provider's own response
    assert message.to_provider(PROVIDER) == rendered
    again = type(message).from_dict(message.to_dict())  # lossless (int part indexes)
    assert again == message
    assert again.to_provider(PROVIDER) == rendered
    nonstream = sibling(path, ".nonstream.json")
    if nonstream is not None:
        ignore = NONSTREAM_IGNORE[name]
        assert_same_structure(nonstream, rendered, ignore=ignore)
        if "output" in ignore:
            # each kind of item the other generation has is shaped like ours
            for item in nonstream["output"]:
                ours = [i for i in rendered["output"] if i.get("type") == item["type"]]
                assert ours, f"no {item['type']} item rendered"
                assert_same_structure(item, ours[0])


@pytest.mark.parametrize("name", IDS)
def test_what_the_stream_holds_survives(name: str) -> None:
    """Read the raw stream directly and check the message keeps it."""
    path = path_of(KIND, name)
    events = _events(path)
    message = fastmerge.aggregate(path.read_bytes(), PROVIDER)
    data = message.to_dict()
    parts = data["parts"]
    terminal = _terminal(events)
    assert terminal is not None

    # text: the output_text deltas of each content part, in order
    texts: dict[int, str] = {}
    logprobs: list[Any] = []
    for event in events:
        if event["type"] == "response.output_text.delta":
            key = event["output_index"] * 1000 + event["content_index"]
            texts[key] = texts.get(key, "") + event["delta"]
            logprobs.extend(event.get("logprobs") or [])
    text_parts = {p["index"]: p["text"] for p in parts if p["part"] == "text"}
    assert text_parts == texts
    assert message.content == "".join(texts.values())
    if logprobs:
        assert data["logprobs"] == {"content": logprobs}
    else:
        assert data["logprobs"] is None

    # reasoning: text deltas, summaries, and the final encrypted content of each item
    reasoning = [p for p in parts if p["part"] == "reasoning"]
    raw_text = "".join(e["delta"] for e in events if e["type"] == "response.reasoning_text.delta")
    raw_summary = "".join(
        e["delta"] for e in events if e["type"] == "response.reasoning_summary_text.delta"
    )
    assert "".join(p["text"] for p in reasoning) == raw_text
    assert "".join(p["summary"] or "" for p in reasoning) == raw_summary
    encrypted = [
        item["encrypted_content"]
        for item in terminal["output"]
        if item["type"] == "reasoning" and item.get("encrypted_content")
    ]
    payloads = [p["payload"] for p in reasoning if p["payload"] is not None]
    assert [p["data"] for p in payloads] == encrypted
    assert all(p["provider"] == PROVIDER and p["kind"] == "encrypted_content" for p in payloads)

    # function calls: id, name, arguments as the done items have them, in order
    calls = [
        (i["call_id"], i["name"], i["arguments"], i["id"])
        for i in terminal["output"]
        if i["type"] == "function_call"
    ]
    got = [
        (c["id"], c["name"], c["arguments"], c["response_item_id"])
        for c in parts
        if c["part"] == "tool_call"
    ]
    assert got == calls
    assert [c.parsed_arguments() for c in message.tool_calls or ()] == [
        json.loads(c[2]) for c in calls
    ]

    # unknown items verbatim, as their output_item.done has them
    done_items = [
        e["item"]
        for e in events
        if e["type"] == "response.output_item.done"
        and e["item"]["type"] not in ("message", "reasoning", "function_call")
    ]
    assert [p["raw"] for p in parts if p["part"] == "unknown"] == done_items

    # usage: every provider key verbatim, plus the normalized names
    usage = terminal.get("usage")
    if usage is None:
        assert data["usage_metadata"] is None
    else:
        assert_subset(usage, data["usage_metadata"])
        assert message.usage_metadata.input_tokens == usage["input_tokens"]
        assert message.usage_metadata.output_tokens == usage["output_tokens"]
        cached = usage.get("input_tokens_details", {}).get("cached_tokens")
        assert message.usage_metadata.cache_read_tokens == cached
        reasoning_tokens = usage.get("output_tokens_details", {}).get("reasoning_tokens")
        if reasoning_tokens is not None:
            assert message.usage_metadata.reasoning_tokens == reasoning_tokens

    # ids and model
    assert message.response_id == terminal["id"]
    assert message.response_model == terminal["model"]


def test_failed_stream_keeps_the_error() -> None:
    path = path_of(KIND, "openai-response-failed-insufficient-quota")
    events = _events(path)
    message = fastmerge.aggregate(path.read_bytes(), PROVIDER)
    error_event = next(e for e in events if e["type"] == "error")
    assert message.status == "failed"
    assert_subset(error_event["error"], message.provider_metadata["error"])
    rendered = message.to_provider(PROVIDER)
    assert rendered["status"] == "failed"
    assert rendered["error"]["code"] == "insufficient_quota"
    assert rendered["output"] == []


def test_reasoning_summaries_stay_apart() -> None:
    """o3-mini's 4 summary parts render as 4 summary_text entries of one reasoning item."""
    path = path_of(KIND, "o3-mini-reasoning-summaries-4-parts")
    message = fastmerge.aggregate(path.read_bytes(), PROVIDER)
    rendered = message.to_provider(PROVIDER)
    reasoning = [i for i in rendered["output"] if i["type"] == "reasoning"]
    assert len(reasoning) == 1
    assert len(reasoning[0]["summary"]) == 4
    assert [p.summary for p in message.parts if p.PART == "reasoning"] == [
        s["text"] for s in reasoning[0]["summary"]
    ]


def test_sse_transport_gives_the_same_message() -> None:
    """The corpus lines wrapped as SSE frames (with ``event:`` lines) merge the same."""
    path = path_of(KIND, "gpt5-reasoning-summary-code-interpreter")
    events = _events(path)
    sse = "".join(
        f"event: {e['type']}\ndata: {json.dumps(e, ensure_ascii=False)}\n\n" for e in events
    )
    sse += "data: [DONE]\n\n"
    from_sse = fastmerge.aggregate(sse.encode(), PROVIDER)
    from_lines = fastmerge.aggregate(path.read_bytes(), PROVIDER)
    assert from_sse.to_dict() == from_lines.to_dict()
