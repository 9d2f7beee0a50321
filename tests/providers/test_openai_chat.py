"""The ``"openai-chat"`` adapter on small hand-written streams (both backends): each field of
a chunk (text, reasoning, refusal, logprobs, usage, the extras of compatible servers), and
rendering another provider's message as a chat completion."""

from __future__ import annotations

import json

from _support.openai_chat import (
    USAGE,
    P,
    anomalies,
    assert_round_trip,
    ch,
    chunk,
    kinds,
)

import fastmerge
from fastmerge.render import to_provider

# ---------------------------------------------------------------------------------------------
# fields


def test_text_role_ids_and_metadata() -> None:
    events = [
        chunk(ch(role="assistant", content=""), system_fingerprint="fp", service_tier="default"),
        chunk(ch(content="Hel"), obfuscation="xx"),
        chunk(ch(content="lo"), obfuscation="yyy"),
        chunk(ch(finish="stop")),
        chunk(usage=USAGE),
    ]
    m = fastmerge.aggregate(events, P)
    d = m.to_dict()
    assert m.content == "Hello"
    assert d["role"] == "assistant"
    assert m.status == "complete"
    assert d["finish_reason"] == "stop"
    assert m.response_id == "chatcmpl-1"
    assert m.response_model == "gpt-x"
    assert d["provider_metadata"] == {
        "provider": P,
        "created": 7,
        "object": "chat.completion.chunk",
        "system_fingerprint": "fp",
        "service_tier": "default",
    }
    assert d["usage_metadata"] == {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5}
    assert anomalies(m) == []
    out = to_provider(m, P)
    assert out["object"] == "chat.completion"
    assert out["choices"][0]["message"]["content"] == "Hello"
    assert out["usage"] == USAGE
    assert out["system_fingerprint"] == "fp"


def test_reasoning_fields_and_order() -> None:
    events = [
        chunk(ch(role="assistant", reasoning_content="think ")),
        chunk(ch(reasoning_content="more")),
        chunk(ch(content="answer")),
        chunk(ch(reasoning="late")),  # Groq / OpenRouter spelling
        chunk(ch(finish="stop")),
    ]
    m = fastmerge.aggregate(events, P)
    parts = m.to_dict()["parts"]
    assert [(p["part"], p["text"]) for p in parts] == [
        ("reasoning", "think more"),
        ("text", "answer"),
        ("reasoning", "late"),
    ]
    message = to_provider(m, P)["choices"][0]["message"]
    assert message["reasoning_content"] == "think morelate"
    assert message["content"] == "answer"


def test_no_reasoning_no_reasoning_content() -> None:
    m = fastmerge.aggregate([chunk(ch(content="a", finish="stop"))], P)
    assert "reasoning_content" not in to_provider(m, P)["choices"][0]["message"]


def test_reasoning_details_text_signature_and_encrypted() -> None:
    text = {"type": "reasoning.text", "format": "anthropic-claude-v1", "index": 0}
    events = [
        chunk(ch(role="assistant", reasoning="ab", reasoning_details=[{**text, "text": "ab"}])),
        chunk(ch(reasoning="c", reasoning_details=[{**text, "text": "c"}])),
        chunk(ch(reasoning_details=[{**text, "signature": "SIG=="}])),
        chunk(
            ch(
                reasoning_details=[
                    {"type": "reasoning.encrypted", "data": "ENC", "id": "rs_1", "index": 1}
                ]
            )
        ),
        chunk(ch(content="x", finish="stop")),
    ]
    m = fastmerge.aggregate(events, P)
    parts = m.to_dict()["parts"]
    assert parts[0]["text"] == "abc"  # reasoning repeats the details' text: not added twice
    assert parts[0]["payload"] == {"provider": P, "kind": "reasoning.text", "data": "SIG=="}
    assert parts[1]["payload"] == {"provider": P, "kind": "reasoning.encrypted", "data": "ENC"}
    assert parts[1]["text"] == ""
    details = to_provider(m, P)["choices"][0]["message"]["reasoning_details"]
    assert details == [
        {
            "type": "reasoning.text",
            "text": "abc",
            "signature": "SIG==",
            "format": "anthropic-claude-v1",
            "index": 0,
        },
        {"type": "reasoning.encrypted", "data": "ENC", "id": "rs_1", "index": 1},
    ]


def test_mistral_typed_content() -> None:
    think = {"type": "thinking", "thinking": [{"type": "text", "text": "hmm"}]}
    events = [
        chunk(ch(role="assistant", content=[think])),
        chunk(ch(content=[{"type": "thinking", "thinking": [{"type": "text", "text": "!"}]}])),
        chunk(ch(content=[{"type": "text", "text": "4"}, {"type": "reference", "ids": [1]}])),
        chunk(ch(content="", finish="stop")),
    ]
    m = fastmerge.aggregate(events, P)
    d = m.to_dict()
    assert d["content_list"] is True
    assert kinds(m) == ["reasoning", "text", "unknown"]
    assert d["parts"][0]["text"] == "hmm!"
    assert d["parts"][2]["raw"] == {"type": "reference", "ids": [1]}
    content = to_provider(m, P)["choices"][0]["message"]["content"]
    assert content == [
        {"type": "thinking", "thinking": [{"type": "text", "text": "hmm!"}]},
        {"type": "text", "text": "4"},
        {"type": "reference", "ids": [1]},
    ]


def test_refusal_logprobs_and_token_ids() -> None:
    lp = [{"token": "No", "logprob": -0.1, "bytes": [78, 111], "top_logprobs": []}]
    events = [
        chunk(ch(role="assistant", refusal="No")),
        chunk({**ch(refusal="pe"), "logprobs": {"content": None, "refusal": lp}}),
        chunk({**ch(), "logprobs": None}),
        chunk({**ch(refusal="!"), "logprobs": {"content": None, "refusal": lp}}),
        chunk({**ch(finish="stop"), "token_ids": [5, 6], "stop_reason": 128008}),
    ]
    events[0]["prompt_token_ids"] = [1, 2]
    m = fastmerge.aggregate(events, P)
    d = m.to_dict()
    assert d["refusal"] == "Nope!"
    assert kinds(m) == []
    # a null list reads as absent: the same message as chunks without it (rules §10.4)
    assert d["logprobs"] == {"refusal": lp + lp}
    assert d["completion_token_ids"] == [5, 6]
    assert d["prompt_token_ids"] == [1, 2]
    assert d["provider_metadata"]["choice"] == {"stop_reason": 128008}
    choice = to_provider(m, P)["choices"][0]
    assert choice["message"]["content"] is None
    assert choice["message"]["refusal"] == "Nope!"
    assert choice["stop_reason"] == 128008


def test_together_token_id() -> None:
    events = [
        chunk({**ch(content="a", token_id=10), "text": "a", "seed": None}),
        chunk({**ch(content="b", token_id=11, finish="stop"), "text": "b", "seed": 42}),
    ]
    d = fastmerge.aggregate(events, P).to_dict()
    assert d["completion_token_ids"] == [10, 11]
    assert d["provider_metadata"]["choice"] == {"seed": 42}


def test_usage_normalized_and_cumulative() -> None:
    u1 = {"prompt_tokens": 10, "completion_tokens": 0, "total_tokens": 10}
    u2 = {
        "prompt_tokens": 10,
        "completion_tokens": 4,
        "total_tokens": 14,
        "prompt_tokens_details": {"cached_tokens": 8},
        "completion_tokens_details": {"reasoning_tokens": 3},
        "cost": 0.5,
    }
    events = [
        chunk(ch(role="assistant", content="a"), usage=u1),
        chunk(ch(content="b", finish="stop"), usage=u2),
    ]
    m = fastmerge.aggregate(events, P)
    assert m.to_dict()["usage_metadata"] == {
        "input_tokens": 10,
        "output_tokens": 4,
        "total_tokens": 14,
        "prompt_tokens_details": {"cached_tokens": 8},
        "completion_tokens_details": {"reasoning_tokens": 3},
        "cost": 0.5,
        "cache_read_tokens": 8,
        "reasoning_tokens": 3,
    }
    assert to_provider(m, P)["usage"] == u2


def test_groq_usage_in_x_groq() -> None:
    groq = {"id": "req_1", "usage": USAGE}
    m = fastmerge.aggregate([chunk(ch(content="a", finish="stop"), x_groq=groq)], P)
    d = m.to_dict()
    assert d["usage_metadata"]["input_tokens"] == 3
    assert d["provider_metadata"]["response"] == {"x_groq": groq}
    assert to_provider(m, P)["x_groq"] == groq


def test_azure_prelude_and_content_filter() -> None:
    prelude = {"choices": [], "created": 0, "id": "", "model": "", "object": ""}
    prelude["prompt_filter_results"] = [{"prompt_index": 0}]
    events = [
        prelude,
        chunk({**ch(content="a", finish="stop"), "content_filter_results": {"hate": {"f": 0}}}),
    ]
    m = fastmerge.aggregate(events, P)
    d = m.to_dict()
    assert d["response_id"] == "chatcmpl-1"
    assert d["provider_metadata"]["created"] == 7
    assert d["provider_metadata"]["response"] == {"prompt_filter_results": [{"prompt_index": 0}]}
    assert d["provider_metadata"]["choice"] == {"content_filter_results": {"hate": {"f": 0}}}


def test_executed_tools_and_annotations() -> None:
    tool = {"index": 0, "type": "search", "arguments": "{}", "output": "r"}
    cite = {"type": "url_citation", "url_citation": {"url": "https://x"}}
    events = [
        chunk(ch(role="assistant", executed_tools=[tool])),
        chunk(ch(content="see")),
        chunk(ch(annotations=[cite], finish="stop")),
    ]
    m = fastmerge.aggregate(events, P)
    d = m.to_dict()
    assert kinds(m) == ["unknown", "text"]
    assert d["parts"][0]["raw"] == tool
    assert d["parts"][1]["citations"] == [cite]
    message = to_provider(m, P)["choices"][0]["message"]
    assert message["annotations"] == [cite]
    assert message["executed_tools"] == [tool]


def test_executed_tools_result_updates_its_call() -> None:
    call = {"index": 0, "type": "search", "arguments": "{}", "search_results": {"results": []}}
    result = {**call, "output": "r", "search_results": {"results": [1]}}
    events = [
        chunk(ch(role="assistant", executed_tools=[call])),
        chunk(ch(executed_tools=[result])),
        chunk(ch(content="ok", finish="stop")),
    ]
    m = fastmerge.aggregate(events, P)
    assert kinds(m) == ["unknown", "unknown", "text"]  # both kept verbatim
    assert to_provider(m, P)["choices"][0]["message"]["executed_tools"] == [result]


def test_images_and_reasoning_items_of_every_chunk_are_kept_in_order() -> None:
    """OpenRouter's and LiteLLM's ``delta.images``, LiteLLM's ``delta.reasoning_items``: each
    chunk's entries are added (the metadata merge kept only the last chunk's list); a value
    that is no list, or an empty one, stays a field of the message."""
    first = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}, "index": 0}
    second = {"type": "image_url", "image_url": {"url": "data:image/png;base64,BB"}, "index": 1}
    item = {"type": "reasoning", "id": "rs_1", "summary": []}
    events = [
        chunk(ch(role="assistant", content="two", images=[first], reasoning_items=[item])),
        chunk(ch(images=[second], reasoning_items=[])),
        chunk(ch(content=" images", finish="stop")),
    ]
    m = fastmerge.aggregate(events, P)
    assert kinds(m) == ["text", "unknown", "unknown", "unknown", "text"]
    assert [p.kind for p in m.parts if isinstance(p, fastmerge.UnknownPart)] == [
        "images",
        "reasoning_items",
        "images",
    ]
    message = to_provider(m, P)["choices"][0]["message"]
    assert message["content"] == "two images"
    assert message["images"] == [first, second]
    assert message["reasoning_items"] == [item]
    assert_round_trip(m)
    odd = fastmerge.aggregate([chunk(ch(content="x", images="none", finish="stop"))], P)
    assert kinds(odd) == ["text"]
    assert to_provider(odd, P)["choices"][0]["message"]["images"] == "none"


def test_render_another_providers_message() -> None:
    """An Anthropic message rendered as chat.completion: reasoning text kept, its signature
    not replayed, arguments as JSON text, usage in OpenAI's keys."""
    events = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-x",
                "content": [],
                "stop_reason": None,
                "usage": {"input_tokens": 10, "output_tokens": 1, "cache_read_input_tokens": 4},
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "hm"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "SIG"},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": '{"a": 1}'},
        },
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 7},
        },
        {"type": "message_stop"},
    ]
    m = fastmerge.aggregate(events, "anthropic")
    out = to_provider(m, P)
    assert "SIG" not in json.dumps(out)
    message = out["choices"][0]["message"]
    assert message["reasoning_content"] == "hm"
    assert message["tool_calls"] == [
        {"id": "toolu_1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
    ]
    assert "reasoning_details" not in message
    assert out["usage"]["prompt_tokens"] == 10
    assert out["usage"]["completion_tokens"] == 7
    assert out["usage"]["prompt_tokens_details"] == {"cached_tokens": 4}
    assert out["choices"][0]["finish_reason"] == "tool_calls"
