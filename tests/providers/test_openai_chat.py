"""The ``"openai-chat"`` adapter on small hand-written streams (both backends): each field of
a chunk, the tool-call quirks of compatible servers, n > 1, status, anomalies, bad shapes,
and SSE bytes split anywhere."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from _support.openai_chat import assert_round_trip
from conftest import AGGREGATES, BACKENDS
from hypothesis import given
from hypothesis import strategies as st

import fastmerge
from fastmerge.errors import EventError
from fastmerge.render import to_provider

P = "openai-chat"


def chunk(*choices: dict[str, Any], **top: Any) -> dict[str, Any]:
    event: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 7,
        "model": "gpt-x",
    }
    event.update(top)
    event["choices"] = list(choices)
    return event


def ch(index: int = 0, finish: str | None = None, **delta: Any) -> dict[str, Any]:
    return {"index": index, "delta": delta, "finish_reason": finish}


def tc(index: Any, id: Any = None, name: Any = None, args: Any = None, **extra: Any) -> dict:
    call: dict[str, Any] = {"index": index}
    if id is not None:
        call["id"] = id
        call["type"] = "function"
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    if args is not None:
        function["arguments"] = args
    call["function"] = function
    call.update(extra)
    return call


def calls(message: Any) -> list[tuple[Any, Any, Any]]:
    return [
        (p["id"], p["name"], p["arguments"])
        for p in message.to_dict()["parts"]
        if p["part"] == "tool_call"
    ]


def kinds(message: Any) -> list[str]:
    return [p["part"] for p in message.to_dict()["parts"]]


def anomalies(message: Any) -> list[tuple[str, str]]:
    return [(a["code"], a["detail"]) for a in message.to_dict()["anomalies"]]


USAGE = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}


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


# ---------------------------------------------------------------------------------------------
# tool calls


def test_interleaved_parallel_calls() -> None:
    events = [
        chunk(ch(role="assistant", tool_calls=[tc(0, "c1", "f", '{"a"')])),
        chunk(ch(tool_calls=[tc(1, "c2", "g", '{"b"')])),
        chunk(ch(tool_calls=[tc(0, args=":1}")])),
        chunk(ch(tool_calls=[tc(1, args=":2}")])),
        chunk(ch(finish="tool_calls")),
    ]
    m = fastmerge.aggregate(events, P)
    assert calls(m) == [("c1", "f", '{"a":1}'), ("c2", "g", '{"b":2}')]
    assert anomalies(m) == []
    out = to_provider(m, P)["choices"][0]["message"]
    assert out["tool_calls"] == [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}},
        {"id": "c2", "type": "function", "function": {"name": "g", "arguments": '{"b":2}'}},
    ]
    assert out["content"] is None


def test_index_collision() -> None:
    events = [
        chunk(ch(tool_calls=[tc(0, "c1", "f", "{}")])),
        chunk(ch(tool_calls=[tc(0, "c2", "g", "{}")])),
        chunk(ch(finish="tool_calls")),
    ]
    m = fastmerge.aggregate(events, P)
    assert calls(m) == [("c1", "f", "{}"), ("c2", "g", "{}")]
    assert anomalies(m) == [
        ("index_collision", "choice 0: tool call index 0 reused: call 'c2' after 'c1'")
    ]


def test_empty_and_null_ids_continue_the_call() -> None:
    events = [
        chunk(ch(tool_calls=[tc(0, "call_1", "f", "{")])),
        chunk(ch(tool_calls=[tc(0, "", None, '"a"')])),
        chunk(ch(tool_calls=[tc(0, "null", None, ":1}")])),
        chunk(ch(tool_calls=[tc(0, "", None, "")])),
        chunk(ch(finish="tool_calls")),
    ]
    m = fastmerge.aggregate(events, P)
    assert calls(m) == [("call_1", "f", '{"a":1}')]
    assert anomalies(m) == []


@pytest.mark.parametrize(
    ("fragments", "expected"),
    [
        # E28: id repeated on every fragment
        ([tc(0, "c1", "f", "{"), tc(0, "c1", None, "}")], [("c1", "f", "{}")]),
        # E29: name repeated on every fragment
        ([tc(0, "c1", "f", "{"), tc(0, None, "f", "}")], [("c1", "f", "{}")]),
        # E35: a new id on every fragment without a name cannot start a call
        (
            [tc(0, "c1", "f", ""), tc(0, "c2", None, "{"), tc(0, "c3", None, "}")],
            [("c1", "f", "{}")],
        ),
        # E32: no ids, distinct indexes
        ([tc(0, None, "a", "{"), tc(1, None, "b", "}")], [(None, "a", "{"), (None, "b", "}")]),
    ],
)
def test_gateway_fragment_shapes(fragments: list[dict], expected: list[tuple]) -> None:
    events = [chunk(ch(tool_calls=[f])) for f in fragments] + [chunk(ch(finish="tool_calls"))]
    m = fastmerge.aggregate(events, P)
    got = calls(m)
    assert [
        (i if i is None or not i.startswith("call_fm_") else None, n, a) for i, n, a in got
    ] == expected
    codes = [a[0] for a in anomalies(m)]
    assert set(codes) <= {"synthetic_id"}


def test_arguments_before_id_and_name() -> None:
    events = [
        chunk(ch(tool_calls=[tc(0, args='{"x":')])),
        chunk(ch(tool_calls=[tc(0, "c1", "f", "1}")])),
        chunk(ch(finish="tool_calls")),
    ]
    m = fastmerge.aggregate(events, P)
    assert calls(m) == [("c1", "f", '{"x":1}')]
    assert anomalies(m) == [
        (
            "delta_before_start",
            "choice 0: tool call index 0: arguments before the call's id and name",
        )
    ]


def test_calls_without_index_mistral() -> None:
    call = {"id": "gSIM", "function": {"name": "weather", "arguments": '{"l":1}'}}
    m = fastmerge.aggregate([chunk(ch(content=None, tool_calls=[call], finish="tool_calls"))], P)
    assert calls(m) == [("gSIM", "weather", '{"l":1}')]
    assert m.status == "complete"


def test_custom_tool_and_extra_content() -> None:
    sig = {"google": {"thought_signature": "TS"}}
    events = [
        chunk(
            ch(
                tool_calls=[
                    {
                        "index": 0,
                        "id": "c1",
                        "type": "custom",
                        "custom": {"name": "f", "input": "a"},
                    }
                ]
            )
        ),
        chunk(ch(tool_calls=[{"index": 0, "custom": {"input": "b"}}])),
        chunk(ch(tool_calls=[tc(1, "c2", "g", "{}", extra_content=sig)])),
        chunk(ch(finish="tool_calls")),
    ]
    m = fastmerge.aggregate(events, P)
    parts = [p for p in m.to_dict()["parts"] if p["part"] == "tool_call"]
    assert (parts[0]["type"], parts[0]["name"], parts[0]["arguments"]) == ("custom", "f", "ab")
    assert parts[1]["extra"] == {"extra_content": sig}
    out = to_provider(m, P)["choices"][0]["message"]["tool_calls"]
    assert out[0] == {"id": "c1", "type": "custom", "custom": {"name": "f", "input": "ab"}}
    assert out[1]["extra_content"] == sig


def test_stream_cut_mid_tool_call() -> None:
    events = [
        chunk(ch(role="assistant", tool_calls=[tc(0, "c1", "get", '{"path": "/et')])),
        chunk(ch(tool_calls=[tc(0, args="c/pa")])),
    ]
    m = fastmerge.aggregate(events, P)
    assert m.status == "incomplete"
    assert calls(m) == [("c1", "get", '{"path": "/etc/pa')]
    assert anomalies(m) == [
        (
            "truncated",
            "choice 0: the stream ended inside tool call 'c1' ('get') without a "
            "finish_reason; its arguments are kept as streamed",
        )
    ]


def test_stream_cut_mid_text_is_incomplete_without_anomaly() -> None:
    m = fastmerge.aggregate([chunk(ch(role="assistant", content="Hel"))], P)
    assert m.status == "incomplete"
    assert anomalies(m) == []


def test_text_after_call_closes_it() -> None:
    events = [chunk(ch(tool_calls=[tc(0, "c1", "f", "{}")])), chunk(ch(content="done"))]
    m = fastmerge.aggregate(events, P)
    assert m.status == "incomplete"
    assert anomalies(m) == []


def test_legacy_function_call_and_audio() -> None:
    events = [
        chunk(ch(role="assistant", function_call={"name": "f", "arguments": ""})),
        chunk(ch(function_call={"arguments": '{"a":'})),
        chunk(ch(function_call={"arguments": "1}"}, audio={"id": "au_1", "transcript": "He"})),
        chunk(ch(audio={"data": "AAA", "transcript": "y"})),
        chunk(ch(audio={"data": "BB", "expires_at": 9}, finish="function_call")),
    ]
    m = fastmerge.aggregate(events, P)
    assert [(n, a) for _, n, a in calls(m)] == [("f", '{"a":1}')]
    assert anomalies(m) == [("synthetic_id", "tool call 'f' had no id; generated 'call_fm_0'")]
    message = to_provider(m, P)["choices"][0]["message"]
    assert message["function_call"] == {"name": "f", "arguments": '{"a":1}'}
    assert message["tool_calls"] is None
    assert message["audio"] == {"id": "au_1", "transcript": "Hey", "data": "AAABB", "expires_at": 9}


# ---------------------------------------------------------------------------------------------
# choices, status


def test_n2_choice_1_first() -> None:
    events = [
        chunk(ch(1, role="assistant", content="B")),
        chunk(ch(0, role="assistant", content="A")),
        chunk(ch(1, content="b", finish="stop")),
        chunk(ch(0, content="a", finish="length")),
        chunk(usage=USAGE),
    ]
    ms = fastmerge.aggregate_choices(events, P)
    assert [(m.choice_index, m.content, m.to_dict()["finish_reason"]) for m in ms] == [
        (0, "Aa", "length"),
        (1, "Bb", "stop"),
    ]
    assert all(m.to_dict()["usage_metadata"]["total_tokens"] == 5 for m in ms)
    out = to_provider(ms, P)
    assert [c["index"] for c in out["choices"]] == [0, 1]
    assert out["usage"] == USAGE


def test_n2_one_choice_cut() -> None:
    events = [
        chunk(ch(0, content="A"), ch(1, tool_calls=[tc(0, "c9", "f", "{")])),
        chunk(ch(0, finish="stop")),
    ]
    ms = fastmerge.aggregate_choices(events, P)
    assert [m.status for m in ms] == ["complete", "incomplete"]
    assert [a[0] for a in anomalies(ms[1])] == ["truncated"]
    assert anomalies(ms[0]) == []


def test_error_event_fails_the_stream() -> None:
    error = {"message": "overloaded", "type": "server_error", "code": None}
    events = [chunk(ch(role="assistant", content="a")), {"error": error}]
    m = fastmerge.aggregate(events, P)
    assert m.status == "failed"
    assert m.to_dict()["provider_metadata"]["error"] == error
    assert m.content == "a"


def test_usage_only_before_any_choice_goes_to_choice_0() -> None:
    m = fastmerge.aggregate([chunk(usage=USAGE)], P)
    assert m.choice_index == 0
    assert m.to_dict()["usage_metadata"]["input_tokens"] == 3
    assert m.status == "incomplete"


def test_auto_detects() -> None:
    m = fastmerge.aggregate([chunk(ch(content="a", finish="stop"))])
    assert m.provider_metadata["provider"] == P


# ---------------------------------------------------------------------------------------------
# errors, strict, inputs


@pytest.mark.parametrize(
    ("event", "detail"),
    [
        ({"choices": "x"}, "choices is not a list"),
        ({"choices": [], "usage": 3}, "usage is not an object"),
        ({"choices": [1]}, "choices[0] is not an object"),
        ({"choices": [{"index": "0", "delta": {}}]}, "choices[0].index is not an integer"),
        ({"choices": [{"index": 0, "delta": "x"}]}, "choices[0].delta is not an object"),
        (
            {"choices": [{"index": 0, "delta": {"content": 5}}]},
            "choices[0].delta.content is not a string or a list",
        ),
        (
            {"choices": [{"index": 0, "delta": {"content": [3]}}]},
            "choices[0].delta.content[0] is not an object or a string",
        ),
        (
            {
                "choices": [
                    {"index": 0, "delta": {"content": [{"type": "thinking", "thinking": 1}]}}
                ]
            },
            "choices[0].delta.content[0].thinking is not a list",
        ),
        (
            {"choices": [{"index": 0, "delta": {"tool_calls": "x"}}]},
            "choices[0].delta.tool_calls is not a list",
        ),
        (
            {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": "f"}]}}]},
            "choices[0].delta.tool_calls[0].function is not an object",
        ),
        (
            {"choices": [{"index": 0, "delta": {"tool_calls": [{"function": {"arguments": 1}}]}}]},
            "choices[0].delta.tool_calls[0].function.arguments is not a string or an object",
        ),
        (
            {"choices": [{"index": 0, "delta": {"reasoning_details": {}}}]},
            "choices[0].delta.reasoning_details is not a list",
        ),
        (
            {"choices": [{"index": 0, "delta": {"reasoning_content": 1}}]},
            "choices[0].delta.reasoning_content is not a string",
        ),
        (
            {"choices": [{"index": 0, "delta": {"refusal": []}}]},
            "choices[0].delta.refusal is not a string",
        ),
        ({"choices": [{"index": 0, "token_ids": 3}]}, "choices[0].token_ids is not a list"),
        ({"choices": [], "id": 5}, "id is not a string"),
        ({"choices": [], "model": []}, "model is not a string"),
        ({"choices": [], "prompt_token_ids": "1 2"}, "prompt_token_ids is not a list"),
        (
            {"choices": [{"index": 0, "delta": {"role": 1}}]},
            "choices[0].delta.role is not a string",
        ),
        (
            {"choices": [{"index": 0, "finish_reason": 0}]},
            "choices[0].finish_reason is not a string",
        ),
        (
            {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": "0"}]}}]},
            "choices[0].delta.tool_calls[0].index is not an integer",
        ),
        (
            {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": 7}]}}]},
            "choices[0].delta.tool_calls[0].id is not a string",
        ),
        (
            {"choices": [{"index": 0, "delta": {"tool_calls": [{"function": {"name": 1}}]}}]},
            "choices[0].delta.tool_calls[0].function.name is not a string",
        ),
        (
            {"choices": [{"index": 0, "delta": {"function_call": {"name": 1}}}]},
            "choices[0].delta.function_call.name is not a string",
        ),
    ],
)
def test_bad_shapes(event: dict[str, Any], detail: str) -> None:
    agg = fastmerge.Aggregator(P, strict=True)
    agg.add(chunk(ch(content="ok")))
    with pytest.raises(EventError) as info:
        agg.add(event)
    assert info.value.event == 2
    assert info.value.detail == f"{P}: {detail}"
    # not strict: skipped, and said (spec §8)
    agg = fastmerge.Aggregator(P)
    agg.add(chunk(ch(content="ok")))
    agg.add(event)
    anomaly = {"code": "unreadable_event", "detail": f"event 2: {P}: {detail}"}
    assert anomaly in agg.finish().anomalies


def test_inputs_not_mutated() -> None:
    events = [
        chunk(
            ch(
                role="assistant",
                content="a",
                reasoning_details=[{"type": "reasoning.text", "text": "t", "index": 0}],
            )
        ),
        chunk(ch(tool_calls=[tc(0, "c1", "f", "{", extra_content={"g": {"s": "S"}})])),
        chunk(ch(finish="tool_calls"), usage=USAGE),
    ]
    before = copy.deepcopy(events)
    m = fastmerge.aggregate(events, P)
    to_provider(m, P)
    assert events == before


def test_strict_raises_the_anomaly() -> None:
    events = [
        chunk(ch(tool_calls=[tc(0, "c1", "f", "{}")])),
        chunk(ch(tool_calls=[tc(0, "c2", "g", "{}")])),
    ]
    with pytest.raises(fastmerge.AnomalyError) as info:
        fastmerge.aggregate(events, P, strict=True)
    assert info.value.code == "index_collision"


def _sse(events: list[dict[str, Any]]) -> bytes:
    lines = [f"data: {json.dumps(e, ensure_ascii=False)}\n\n" for e in events]
    return (": keep-alive\n\n" + "".join(lines) + "data: [DONE]\n\n").encode()


def test_sse_split_at_every_position() -> None:
    events = [
        chunk(ch(role="assistant", content="hé")),
        chunk(ch(tool_calls=[tc(0, "c1", "f", '{"a":')])),
        chunk(ch(tool_calls=[tc(0, args="1}")], finish="tool_calls")),
        chunk(usage=USAGE),
    ]
    data = _sse(events)
    whole = fastmerge.aggregate(data, P).to_dict()
    assert whole == fastmerge.aggregate(events, P).to_dict()
    for cut in range(1, len(data)):
        agg = fastmerge.Aggregator(P)
        agg.feed(data[:cut])
        agg.feed(data[cut:])
        assert agg.finish().to_dict() == whole, cut


# ---------------------------------------------------------------------------------------------
# differential: random streams of plausible and hostile chunks, twin vs engine

_junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.5, -1.25, 1e300, 0.0]),
    st.sampled_from(["", " ", "null", "x", "c1", "c2", "f", "g", "{", "}", "<think>", "é"]),
    st.lists(st.integers(0, 9), max_size=3),
    st.just({}),
)
_text = st.sampled_from(["", "a", "b ", "null", "ü", '{"k":', "1}"])
_id = st.sampled_from([None, "", "null", "c1", "c2", "c3", " "])
_name = st.sampled_from([None, "", "f", "g"])
_index = st.one_of(st.sampled_from([None, 0, 1, 2]), _junk)


@st.composite
def _call(draw: Any) -> Any:
    if draw(st.integers(0, 20)) == 0:
        return draw(_junk)
    call: dict[str, Any] = {}
    for key, strategy in (
        ("index", _index),
        ("id", _id),
        ("type", st.sampled_from([None, "function", "custom", ""])),
    ):
        if draw(st.booleans()):
            call[key] = draw(strategy)
    body: dict[str, Any] = {}
    if draw(st.booleans()):
        body["name"] = draw(_name)
    if draw(st.booleans()):
        body["arguments"] = draw(st.one_of(_text, st.just({"a": 1}), _junk))
    call[draw(st.sampled_from(["function", "function", "custom"]))] = (
        body if draw(st.integers(0, 10)) else draw(_junk)
    )
    if draw(st.integers(0, 5)) == 0:
        call["extra_content"] = {"google": {"thought_signature": draw(_text)}}
    return call


_detail = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(
            ["reasoning.text", "reasoning.summary", "reasoning.encrypted", "other", 3]
        ),
        "text": st.one_of(_text, _junk),
        "summary": _text,
        "signature": st.one_of(_text, st.just("SIG")),
        "data": st.sampled_from(["", "ENC"]),
        "index": st.one_of(st.sampled_from([0, 1]), _junk),
        "format": st.sampled_from(["", "anthropic-claude-v1"]),
        "id": st.sampled_from([None, "rs_1"]),
    },
)
_content_item = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.one_of(_text, _junk)}),
    st.fixed_dictionaries(
        {
            "type": st.just("thinking"),
            "thinking": st.one_of(
                st.lists(
                    st.one_of(
                        st.fixed_dictionaries({"type": st.just("text"), "text": _text}),
                        _junk,
                    ),
                    max_size=2,
                ),
                _junk,
            ),
        }
    ),
    st.fixed_dictionaries({"type": st.sampled_from(["image_url", 5]), "x": _junk}),
    _text,
    _junk,
)
_delta = st.fixed_dictionaries(
    {},
    optional={
        "role": st.sampled_from([None, "assistant", ""]),
        "content": st.one_of(_text, st.lists(_content_item, max_size=3), _junk),
        "reasoning_content": st.one_of(_text, _junk),
        "reasoning": _text,
        "reasoning_details": st.one_of(st.lists(st.one_of(_detail, _junk), max_size=2), _junk),
        "refusal": st.one_of(_text, _junk),
        "tool_calls": st.one_of(st.lists(_call(), max_size=2), _junk),
        "token_id": _junk,
        "executed_tools": st.one_of(st.lists(_junk, max_size=2), _junk),
        "annotations": st.one_of(st.lists(st.just({"type": "url_citation"}), max_size=1), _junk),
        "audio": _junk,
        "function_call": st.one_of(
            st.fixed_dictionaries(
                {}, optional={"name": _name, "arguments": st.one_of(_text, _junk)}
            ),
            _junk,
        ),
    },
)
_choice = st.fixed_dictionaries(
    {"delta": st.one_of(_delta, _delta, _junk)},
    optional={
        "index": st.one_of(st.sampled_from([0, 1]), _junk),
        "finish_reason": st.sampled_from([None, "stop", "tool_calls", "", "null", 3]),
        "logprobs": st.one_of(
            st.none(), st.fixed_dictionaries({"content": st.lists(st.just({"t": 1}), max_size=2)})
        ),
        "token_ids": st.one_of(st.lists(st.integers(0, 9), max_size=2), _junk),
        "stop_reason": _junk,
        "seed": _junk,
    },
)
_usage_value = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            "prompt_tokens": _junk,
            "completion_tokens": st.integers(0, 9),
            "total_tokens": st.integers(0, 20),
            "prompt_tokens_details": st.one_of(
                st.fixed_dictionaries({"cached_tokens": st.integers(0, 3)}), _junk
            ),
            "completion_tokens_details": st.fixed_dictionaries({"reasoning_tokens": _junk}),
            "prompt_cache_hit_tokens": _junk,
            "cost": _junk,
        },
    ),
    _junk,
)
_event = st.fixed_dictionaries(
    {},
    optional={
        "id": _id,
        "model": st.sampled_from([None, "", "m1", "m2"]),
        "created": _junk,
        "object": st.sampled_from(["chat.completion.chunk", ""]),
        "system_fingerprint": _junk,
        "service_tier": _junk,
        "choices": st.one_of(st.lists(st.one_of(_choice, _choice, _junk), max_size=2), _junk),
        "usage": _usage_value,
        "x_groq": st.one_of(st.fixed_dictionaries({"usage": _usage_value}), _junk),
        "prompt_token_ids": _junk,
        "obfuscation": _text,
        "error": st.one_of(st.none(), st.none(), st.just({"message": "boom"})),
        "provider": st.sampled_from(["OpenAI", "Google"]),
    },
)


def _run(module: Any, events: list[Any], strict: bool) -> Any:
    agg = module.Aggregator(P, strict=strict)
    out: list[Any] = []
    for event in events:
        try:
            agg.add(event)
        except Exception as exc:  # the same error class and text on both backends
            out.append((type(exc).__name__, str(exc)))
            break
    else:
        try:
            messages = agg.finish_choices()
        except Exception as exc:
            out.append((type(exc).__name__, str(exc)))
        else:
            out.append([m.to_dict() for m in messages])
            for m in messages:  # the message model's types hold: lossless round trip
                assert_round_trip(m)
            to_provider(messages, P)
    return out


@pytest.mark.differential
@given(st.lists(_event, min_size=1, max_size=6), st.booleans())
def test_random_streams_agree(events: list[dict[str, Any]], strict: bool) -> None:
    if len(BACKENDS) < 2:
        pytest.skip("one backend under test")
    before = copy.deepcopy(events)
    results = [_run(AGGREGATES[name], events, strict) for name in BACKENDS]
    assert results[0] == results[1]
    assert events == before


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


def test_openai_sdk_chunks() -> None:
    """The SDK's ChatCompletionChunk objects (model_dump() fills every field, mostly None)
    give the message the raw dicts give."""
    chunk_type = pytest.importorskip("openai.types.chat").ChatCompletionChunk
    events = [
        chunk(ch(role="assistant", content="Hi")),
        chunk(ch(tool_calls=[tc(0, "c1", "f", "{}")])),
        chunk(ch(finish="tool_calls")),
    ]
    objects = [chunk_type.model_validate(e) for e in events]
    assert fastmerge.aggregate(objects, P).to_dict() == fastmerge.aggregate(events, P).to_dict()
