"""Fidelity that other projects' tests found: usage totals (rules §5, E78), Anthropic
final counts and empty text blocks (E79), the Anthropic ``fallback`` block (E84) and custom
tool calls without ``type`` (E83). Every test runs on both backends (conftest)."""

from __future__ import annotations

from typing import Any

import pytest
from _support.anthropic import block, end, events_of, start, stop, text
from _support.chunks import chunk, codes
from _support.corpus import stream_ids
from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import Usage

import fastmerge
from fastmerge.render import to_provider


def _usage(m: Any) -> dict[str, Any]:
    return m.usage_metadata.to_dict()


def _u(prompt: Any, completion: Any, total: Any) -> dict[str, Any]:
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total}


# ---------------------------------------------------------------------------------------------
# Usage totals (spec §5, E78)


def test_e78_per_chunk_totals_are_recomputed() -> None:
    chunks = [chunk(usage_metadata=_u(50, 0, 50)), chunk(usage_metadata=_u(0, 27, 27))]
    message = sum(chunks).to_message()
    assert _usage(message) == {"input_tokens": 50, "output_tokens": 27, "total_tokens": 77}
    assert message.anomalies == []
    # strict mode has nothing to raise, and acc + chunk gives the same
    assert fastmerge.fold_chunks(chunks, strict=True).to_message() == message
    assert (chunks[0] + chunks[1]).to_message() == message


def test_e78_a_total_that_disagrees_with_its_own_chunk_is_kept_and_flagged() -> None:
    chunks = [chunk(usage_metadata=_u(10, 5, 20))]
    message = sum(chunks).to_message()
    assert _usage(message) == {"input_tokens": 10, "output_tokens": 5, "total_tokens": 20}
    assert message.anomalies == [
        {"code": "total_mismatch", "detail": "reported total_tokens 20 != input 10 + output 5"}
    ]
    with pytest.raises(fastmerge.AnomalyError) as info:
        fastmerge.fold_chunks(chunks, strict=True).to_message()
    assert info.value.code == "total_mismatch"


def test_e78_the_kept_total_decides() -> None:
    # a disagreeing total replaced by a later per-chunk one: recomputed, no anomaly
    message = sum([chunk(usage_metadata=_u(10, 5, 99)), chunk(usage_metadata=_u(10, 7, 17))])
    assert _usage(message.to_message())["total_tokens"] == 17
    assert message.to_message().anomalies == []
    # a zero record never overwrites it, so the disagreeing 99 stays kept and flagged [E54]
    message = sum([chunk(usage_metadata=_u(10, 5, 99)), chunk(usage_metadata=_u(0, 0, 0))])
    assert _usage(message.to_message()) == {
        "input_tokens": 10,
        "output_tokens": 5,
        "total_tokens": 99,
    }
    assert codes(message.to_message()) == ["total_mismatch"]
    # a per-chunk total, then counts without a total: recomputed from the merged counts
    message = sum([chunk(usage_metadata=_u(10, 5, 15)), chunk(usage_metadata={"output_tokens": 7})])
    assert _usage(message.to_message())["total_tokens"] == 17
    assert message.to_message().anomalies == []


def test_e78_a_total_without_counts_is_checked_against_the_merged_counts() -> None:
    chunks = [
        chunk(usage_metadata={"input_tokens": 10}),
        chunk(usage_metadata={"output_tokens": 5}),
        chunk(usage_metadata={"total_tokens": 16}),
    ]
    message = sum(chunks).to_message()
    assert _usage(message)["total_tokens"] == 16
    assert message.anomalies == [
        {"code": "total_mismatch", "detail": "reported total_tokens 16 != input 10 + output 5"}
    ]


def test_e78_usage_options() -> None:
    chunks = [chunk(usage_metadata=_u(50, 0, 50)), chunk(usage_metadata=_u(0, 27, 27))]
    last = fastmerge.fold_chunks(chunks, usage="last").to_message()
    assert _usage(last) == {"input_tokens": 0, "output_tokens": 27, "total_tokens": 27}
    assert last.anomalies == []
    summed = fastmerge.fold_chunks(chunks, usage="sum").to_message()
    assert _usage(summed) == {"input_tokens": 50, "output_tokens": 27, "total_tokens": 77}
    assert summed.anomalies == []
    # a summed total holding a disagreeing one stays reported and flagged
    chunks = [chunk(usage_metadata=_u(10, 5, 20)), chunk(usage_metadata=_u(1, 1, 2))]
    summed = fastmerge.fold_chunks(chunks, usage="sum").to_message()
    assert _usage(summed) == {"input_tokens": 11, "output_tokens": 6, "total_tokens": 22}
    assert summed.anomalies == [
        {"code": "total_mismatch", "detail": "reported total_tokens 22 != input 11 + output 6"}
    ]


def test_e78_aggregate_openai_chat_per_chunk_totals() -> None:
    base = {"id": "c1", "object": "chat.completion.chunk", "model": "m"}
    events = [
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "hi"}}]},
        {**base, "choices": [], "usage": _u(50, 0, 50)},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {**base, "choices": [], "usage": _u(0, 27, 27)},
    ]
    message = fastmerge.aggregate(events, provider="openai-chat")
    assert _usage(message) == {"input_tokens": 50, "output_tokens": 27, "total_tokens": 77}
    assert message.anomalies == []


# ---------------------------------------------------------------------------------------------
# Anthropic: message_delta counts are final (spec §5, E79), empty text blocks are kept


def _anthropic(events: list[dict[str, Any]], **options: Any) -> Any:
    return fastmerge.aggregate(events, "anthropic", **options)


def test_e79_refusal_output_tokens_zero_is_final() -> None:
    events = [
        start({"input_tokens": 12, "output_tokens": 1}),
        *end("refusal", usage={"output_tokens": 0}),
    ]
    message = _anthropic(events)
    assert message.to_dict()["usage_metadata"] == {
        "input_tokens": 12,
        "output_tokens": 0,
        "total_tokens": 12,
    }
    assert message.anomalies == []
    assert to_provider(message, "anthropic")["usage"] == {"input_tokens": 12, "output_tokens": 0}


def test_e79_every_field_of_message_delta_is_final_zeros_included() -> None:
    # the compaction stream's shape: cache reads reported at the start, 0 in the last delta
    first = {"input_tokens": 3, "cache_read_input_tokens": 55096, "output_tokens": 1}
    last = {"input_tokens": 3, "cache_read_input_tokens": 0, "output_tokens": 40}
    message = _anthropic([start(first), *end(usage=last)])
    assert message.to_dict()["usage_metadata"] == {
        "input_tokens": 3,
        "cache_read_tokens": 0,
        "output_tokens": 40,
        "total_tokens": 43,
    }
    # a field message_delta does not carry keeps message_start's value [E55]
    message = _anthropic([start(first), *end(usage={"output_tokens": 40})])
    assert message.to_dict()["usage_metadata"]["cache_read_tokens"] == 55096
    # usage="sum" still adds, as asked
    summed = _anthropic([start(first), *end(usage={"output_tokens": 40})], usage="sum")
    assert summed.to_dict()["usage_metadata"]["output_tokens"] == 41


def test_e79_zero_rule_still_holds_for_chunks() -> None:
    """Only a provider's final counts replace with zeros: chunk usage keeps [E54]."""
    m = chunk(usage_metadata={"input_tokens": 12, "output_tokens": 1}) + chunk(
        usage_metadata={"output_tokens": 0}
    )
    assert _usage(m) == {"input_tokens": 12, "output_tokens": 1}


def test_e79_an_empty_text_block_is_kept() -> None:
    events = [
        start(),
        block(0, type="text", text=""),
        stop(0),
        block(1, type="tool_use", id="t1", name="f", input={}),
        stop(1),
        *end("tool_use"),
    ]
    message = _anthropic(events)
    assert [p.to_dict() for p in message.parts] == [
        {"part": "text", "text": "", "citations": None, "attributes": None, "index": 0},
        {
            "part": "tool_call",
            "id": "t1",
            "type": "function",
            "name": "f",
            "arguments": "",
            "provider_index": 1,
            "payload": None,
            "response_item_id": None,
            "extra": None,
            "call_index": None,
        },
    ]
    assert message.content == ""
    assert message.anomalies == []
    content = to_provider(message, "anthropic")["content"]
    assert content == [
        {"type": "text", "text": "", "citations": None},
        {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
    ]
    assert type(message).from_dict(message.to_dict()) == message


def test_e22_empty_text_chunks_still_make_no_part() -> None:
    m = chunk(content="") + chunk(content=None)
    assert m.to_message().parts == ()


# ---------------------------------------------------------------------------------------------
# Anthropic fallback block (E84)

FALLBACK = {
    "type": "fallback",
    "from": {"model": "claude-opus-4-7"},
    "to": {"model": "claude-sonnet-4-5"},
    "trigger": {"type": "refusal", "category": None},
}


def test_e84_fallback_names_the_model_and_is_kept_verbatim() -> None:
    events = [
        start(model="claude-opus-4-7"),
        {"type": "content_block_start", "index": 0, "content_block": FALLBACK},
        stop(0),
        block(1, type="text", text=""),
        text(1, "Hi"),
        stop(1),
        *end(),
    ]
    message = _anthropic(events)
    assert message.response_model == "claude-sonnet-4-5"
    assert [p.to_dict() for p in message.parts] == [
        {
            "part": "unknown",
            "provider": "anthropic",
            "kind": "fallback",
            "raw": FALLBACK,
            "index": 0,
        },
        {"part": "text", "text": "Hi", "citations": None, "attributes": None, "index": 1},
    ]
    assert message.anomalies == []
    rendered = to_provider(message, "anthropic")
    assert rendered["model"] == "claude-sonnet-4-5"
    assert rendered["content"] == [FALLBACK, {"type": "text", "text": "Hi", "citations": None}]


def test_e84_a_fallback_without_a_model_name_changes_nothing() -> None:
    odd = {"type": "fallback", "to": "claude-sonnet-4-5"}
    events = [
        start(model="claude-opus-4-7"),
        {"type": "content_block_start", "index": 0, "content_block": odd},
        stop(0),
        *end(),
    ]
    message = _anthropic(events)
    assert message.response_model == "claude-opus-4-7"
    assert [p.to_dict()["raw"] for p in message.parts] == [odd]


# ---------------------------------------------------------------------------------------------
# The Anthropic SDK's accumulator on every corpus stream


def _sdk_message(events: list[dict[str, Any]]) -> Any:
    snapshot = None
    buffers: dict[int, bytes] = {}
    for event in events:
        snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=buffers)
    return snapshot


def _present(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _present(v) for k, v in value.items() if v is not None}
    return value


@pytest.mark.parametrize("name", stream_ids("anthropic_messages"))
def test_usage_model_and_blocks_match_the_anthropic_sdk(name: str) -> None:
    events = events_of(name)
    sdk = _sdk_message(events)
    message = _anthropic(events)
    rendered = to_provider(message, "anthropic")
    # the SDK's fields (it drops the keys its model lacks, e.g. "iterations"; fastmerge keeps
    # every key the stream sent)
    sdk_usage = _present(sdk.usage.to_dict())
    assert {k: v for k, v in rendered["usage"].items() if k in Usage.model_fields} == sdk_usage
    assert rendered["model"] == sdk.model
    assert [b["type"] for b in rendered["content"]] == [b.type for b in sdk.content]


# ---------------------------------------------------------------------------------------------
# Custom tool calls without ``type`` (E83)

CUSTOM_FRAGMENTS = [
    [{"index": 0, "id": "c", "custom": {"name": "ApplyPatch", "input": "*** Begin"}}],
    [{"index": 0, "custom": {"input": " Patch"}}],
]


def _chat_events(fragments: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m"}
    events = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant"}}]}]
    for calls in fragments:
        events.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": calls}}]})
    events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    return events


def test_e83_openai_chat_custom_call_without_type() -> None:
    message = fastmerge.aggregate(_chat_events(CUSTOM_FRAGMENTS), "openai-chat")
    (call,) = message.tool_calls
    assert (call.id, call.type, call.name, call.arguments) == (
        "c",
        "custom",
        "ApplyPatch",
        "*** Begin Patch",
    )
    assert message.anomalies == []
    rendered = to_provider(message, "openai-chat")["choices"][0]["message"]["tool_calls"]
    assert rendered == [
        {"id": "c", "type": "custom", "custom": {"name": "ApplyPatch", "input": "*** Begin Patch"}}
    ]


def test_e83_chunks_from_openai_format_dicts() -> None:
    m = sum(chunk(tool_calls=fragments) for fragments in CUSTOM_FRAGMENTS).to_message()
    (call,) = m.tool_calls
    assert (call.id, call.type, call.name, call.arguments) == (
        "c",
        "custom",
        "ApplyPatch",
        "*** Begin Patch",
    )


def test_e83_a_function_body_or_a_type_still_decides() -> None:
    function = [[{"index": 0, "id": "f1", "function": {"name": "f", "arguments": "{}"}}]]
    message = fastmerge.aggregate(_chat_events(function), "openai-chat")
    assert [c.type for c in message.tool_calls] == ["function"]
    typed = [[{"index": 0, "id": "x", "type": "mcp", "custom": {"name": "g", "input": "i"}}]]
    message = fastmerge.aggregate(_chat_events(typed), "openai-chat")
    assert [(c.type, c.name, c.arguments) for c in message.tool_calls] == [("mcp", "g", "i")]


def test_e79_an_empty_text_block_renders_as_before_for_other_providers() -> None:
    """Only the Anthropic shape has the empty block: the others had no empty text before."""
    events = [
        start(),
        block(0, type="text", text=""),
        stop(0),
        block(1, type="tool_use", id="t1", name="f", input={}),
        stop(1),
        *end("tool_use"),
    ]
    message = _anthropic(events)
    chat = to_provider(message, "openai-chat")["choices"][0]["message"]
    assert chat["content"] is None
    output = to_provider(message, "openai-responses")["output"]
    assert [item["type"] for item in output] == ["function_call"]
    content = to_provider(message, "bedrock-converse")["output"]["message"]["content"]
    assert content == [{"toolUse": {"toolUseId": "t1", "name": "f", "input": {}}}]
