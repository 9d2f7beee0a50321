"""The expectations of LiteLLM's own tests of its builder (``tests/local_testing/
test_stream_chunk_builder.py`` and ``tests/test_litellm/litellm_core_utils/
test_streaming_chunk_builder_utils.py`` in BerriAI/litellm), ported: each runs the chunks those
tests build through both builders, checks fastmerge's result against the test's expected values
and compares it with LiteLLM's. Both backends."""

from __future__ import annotations

import copy
import json
from types import SimpleNamespace
from typing import Any

import pytest
from _support.litellm import (
    CompletionTokensDetailsWrapper,
    Delta,
    ModelResponse,
    ModelResponseStream,
    PromptTokensDetails,
    PromptTokensDetailsWrapper,
    ServerToolUse,
    StreamingChoices,
    Usage,
    assert_same_as_litellm,
    build,
    call_delta,
    corpus_events,
    dict_chunk,
    differences,
    litellm,
    litellm_build,
    quiet,
    stream_chunk,
)

# Building LiteLLM's pydantic types warns, once per type, about its TypedDicts' ReadOnly items;
# the tests run with warnings as errors.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Item .* is using the `ReadOnly` qualifier:UserWarning"
)


# ---------------------------------------------------------------------------------------------
# LiteLLM's own expectations of its builder, ported


def test_mixed_text_and_tool_call() -> None:
    # test_stream_chunk_builder_litellm_mixed_calls: Claude text, then one tool call (index 1)
    text = [
        "To answer",
        " your",
        " question about",
        " how",
        " many rows are in the ",
        "'users' table, I",
        "'ll",
        " need to",
        " run",
        " a SQL query.",
        " Let",
        " me",
        " ",
        "do that for",
        " you.",
    ]
    arguments = ['{"', 'query": ', '"SELECT C', "OUNT(*", ") ", "FROM use", 'rs;"}']
    model = "claude-3-5-sonnet-20240620"
    chunks = [stream_chunk({"content": text[0], "role": "assistant"}, model=model)]
    chunks += [stream_chunk({"content": t}, model=model) for t in text[1:]]
    chunks.append(
        stream_chunk(
            {
                "content": "",
                "tool_calls": [call_delta(1, "", "toolu_01H3AjkLpRtGQrof13CBnWfK", "sql_query")],
            },
            model=model,
        )
    )
    chunks += [
        stream_chunk({"content": "", "tool_calls": [call_delta(1, a)]}, model=model)
        for a in arguments
    ]
    chunks.append(stream_chunk({}, finish="tool_calls", model=model))
    result = assert_same_as_litellm(chunks)
    message = result.choices[0].message
    assert message.content == (
        "To answer your question about how many rows are in the 'users' table, I'll need to run "
        "a SQL query. Let me do that for you."
    )
    assert len(message.tool_calls) == 1
    assert message.tool_calls[0].to_dict() == {
        "function": {"arguments": '{"query": "SELECT COUNT(*) FROM users;"}', "name": "sql_query"},
        "id": "toolu_01H3AjkLpRtGQrof13CBnWfK",
        "type": "function",
    }


def test_empty_chunks() -> None:
    # test_stream_chunk_builder_litellm_empty_chunks
    with pytest.raises(litellm.APIError):
        build(None)
    with pytest.raises(litellm.APIError):
        litellm_build(None)
    assert build([]) is None
    assert litellm_build([]) is None


def test_multiple_tool_calls() -> None:
    # test_stream_chunk_builder_multiple_tool_calls: two calls, fragments in order, as
    # ModelResponse(stream=True) objects, every delta repeating role "assistant"
    fragments = {
        0: (
            "call_X9P9B6STj7ze8OsJCGkfoN94",
            "exponentiate",
            ['{"ba', 'se": ', '3, "ex', "pone", 'nt": ', "5}"],
        ),
        1: (
            "call_Qq8yDeRx7v276abRcLrYORdW",
            "add",
            ['{"fi', "rst_i", 'nt": 1', '2, "', "secon", 'd_int"', ": 3}"],
        ),
    }
    raw: list[dict[str, Any]] = []
    for index, (call_id, name, pieces) in fragments.items():
        first = {"id": call_id, "function": {"arguments": "", "name": name}, "type": "function"}
        for call in [first] + [{"function": {"arguments": p}, "type": "function"} for p in pieces]:
            delta = {"role": "assistant", "tool_calls": [{**call, "index": index}]}
            raw.append({"index": 0, "delta": delta})
    raw.append({"finish_reason": "tool_calls", "index": 0, "delta": {}})
    head = {
        "id": "chatcmpl-A5kCnzaxRsknd6008552ZhDi71yPt",
        "created": 1725932618,
        "model": "gpt-4o-2024-08-06",
        "object": "chat.completion.chunk",
        "system_fingerprint": "fp_b2ffeb16ee",
    }
    chunks = [quiet(ModelResponse, **head, choices=[c], stream=True) for c in raw]
    result = assert_same_as_litellm(chunks)
    expected = ModelResponse(
        choices=[
            {
                "finish_reason": "tool_calls",
                "index": 0,
                "message": {
                    "content": None,
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "function": {
                                "arguments": '{"base": 3, "exponent": 5}',
                                "name": "exponentiate",
                            },
                            "id": "call_X9P9B6STj7ze8OsJCGkfoN94",
                            "type": "function",
                        },
                        {
                            "function": {
                                "arguments": '{"first_int": 12, "second_int": 3}',
                                "name": "add",
                            },
                            "id": "call_Qq8yDeRx7v276abRcLrYORdW",
                            "type": "function",
                        },
                    ],
                    "function_call": None,
                },
            }
        ]
    )
    assert expected.choices == result.choices


def test_tool_calls_each_whole_in_one_chunk() -> None:
    # test_stream_chunk_builder_tool_calls_list / test_get_combined_tool_content (Groq)
    places = [("call_m87w", "San Francisco"), ("call_rrns", "Tokyo"), ("call_0k29", "Paris")]
    chunks = [
        stream_chunk(
            {
                "content": None,
                "role": "assistant",
                "tool_calls": [
                    call_delta(i, json.dumps({"location": p}), cid, "get_current_weather")
                ],
            },
            model="llama-3.3-70b-versatile",
        )
        for i, (cid, p) in enumerate(places)
    ]
    finish = stream_chunk({}, finish="tool_calls", model="llama-3.3-70b-versatile")
    calls = assert_same_as_litellm(chunks + [finish]).choices[0]
    assert [
        (c.id, c.function.name, json.loads(c.function.arguments)) for c in calls.message.tool_calls
    ] == [(cid, "get_current_weather", {"location": p}) for cid, p in places]
    # Without a finish_reason (LiteLLM's test has none) the stream ended inside the last call:
    # fastmerge marks it (documented difference), which LiteLLM's token estimate then counts
    reference, result = litellm_build(chunks), build(chunks)
    assert differences(reference, result) == {
        "choices[0].message.tool_calls[2].truncated",
        "usage.completion_tokens",
        "usage.total_tokens",
        "_hidden_params.fastmerge_anomalies",
    }
    assert result.choices[0].message.tool_calls[2].truncated is True
    assert [(a["choice"], a["code"]) for a in result._hidden_params["fastmerge_anomalies"]] == [
        (0, "truncated")
    ]
    assert result.choices[0].message.tool_calls[:2] == reference.choices[0].message.tool_calls[:2]


def test_usage_estimated_from_messages_without_a_usage_chunk() -> None:
    # test_stream_chunk_builder_litellm_tool_call: no usage chunk, the request's messages given
    messages = [{"content": "What is the current weather in Boston?", "role": "user"}]
    events = [e for e in corpus_events("gpt4o-single-tool-call") if e.get("choices")]
    for e in events:
        e.pop("usage", None)
    result = assert_same_as_litellm(events, messages=messages)
    usage = result.usage
    assert usage.prompt_tokens == litellm.token_counter(model=result.model, messages=messages) > 0
    assert usage.completion_tokens > 0
    assert usage.total_tokens == usage.completion_tokens + usage.prompt_tokens
    # count_prompt_tokens replaces the tokenizer for the prompt
    assert build(events, count_prompt_tokens=lambda: 77).usage.prompt_tokens == 77


def test_thinking_blocks_are_rebuilt() -> None:
    # test_get_combined_thinking_content_preserves_interleaved_blocks: LiteLLM rebuilds three
    # blocks from the fragments (blocks without an index: a signature ends one, redacted data
    # is one of its own); fastmerge rebuilds the same three
    def block(**fields: Any) -> Any:
        return stream_chunk({"thinking_blocks": [fields]}, model="claude-sonnet-4-20250514")

    chunks = [
        stream_chunk({"role": "assistant", "content": None}, model="claude-sonnet-4-20250514"),
        block(type="thinking", thinking="Step 1 analysis...", signature=None),
        block(type="thinking", thinking=None, signature="sig_block1"),
        block(type="redacted_thinking", data="EuoBCoYBGAIi...encrypted..."),
        block(type="thinking", thinking="Step 2 analysis...", signature=None),
        block(type="thinking", thinking=None, signature="sig_block2"),
    ]
    reference = litellm_build(chunks).choices[0].message.thinking_blocks
    assert reference == [
        {"type": "thinking", "thinking": "Step 1 analysis...", "signature": "sig_block1"},
        {"type": "redacted_thinking", "data": "EuoBCoYBGAIi...encrypted..."},
        {"type": "thinking", "thinking": "Step 2 analysis...", "signature": "sig_block2"},
    ]
    message = build(chunks).choices[0].message
    assert message.thinking_blocks == reference
    # the blocks' text is the reasoning text (these chunks sent no reasoning_content; LiteLLM's
    # transformers send both)
    assert message.reasoning_content == "Step 1 analysis...Step 2 analysis..."


def _claude_usage_chunk(usage: Any, finish: str | None, content: str | None) -> Any:
    return stream_chunk(
        {"content": content}, finish=finish, usage=usage, model="claude-3-7-sonnet-20250219"
    )


def test_cache_read_input_tokens_retained() -> None:
    # test_cache_read_input_tokens_retained: a later usage chunk's zeros do not overwrite
    first = Usage(
        completion_tokens=5,
        prompt_tokens=11779,
        total_tokens=11784,
        prompt_tokens_details=PromptTokensDetails(cached_tokens=11775),
        cache_creation_input_tokens=4,
        cache_read_input_tokens=11775,
    )
    second = Usage(
        completion_tokens=214,
        prompt_tokens=0,
        total_tokens=214,
        prompt_tokens_details=PromptTokensDetails(cached_tokens=0),
        cache_creation_input_tokens=0,
        cache_read_input_tokens=0,
    )
    chunks = [_claude_usage_chunk(first, None, ""), _claude_usage_chunk(second, "stop", None)]
    usage = assert_same_as_litellm(chunks).usage
    assert usage.cache_creation_input_tokens == 4
    assert usage.cache_read_input_tokens == 11775
    assert usage.prompt_tokens_details.cached_tokens == 11775
    assert (usage.prompt_tokens, usage.completion_tokens) == (11779, 214)


def test_usage_split_across_chunks() -> None:
    # test_stream_chunk_builder_litellm_usage_chunks and test_stream_chunk_builder_anthropic_
    # web_search: the prompt count in one chunk, the completion count in the next
    first = Usage(
        completion_tokens=0,
        prompt_tokens=50,
        total_tokens=50,
        server_tool_use=ServerToolUse(web_search_requests=2),
    )
    second = Usage(completion_tokens=27, prompt_tokens=0, total_tokens=27)
    chunks = [_claude_usage_chunk(first, None, ""), _claude_usage_chunk(second, "stop", None)]
    usage = assert_same_as_litellm(chunks).usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (50, 27, 77)
    assert isinstance(usage.server_tool_use, ServerToolUse)
    assert usage.server_tool_use.web_search_requests == 2


def test_cost_field_in_usage_chunks() -> None:
    # test_cost_field_in_usage_chunks (OpenRouter's usage.cost)
    chunks = [
        stream_chunk(
            {"content": "Hi"},
            usage=Usage(completion_tokens=1, prompt_tokens=10, total_tokens=11),
            model="openrouter/claude",
        ),
        stream_chunk(
            {"content": ""},
            finish="stop",
            usage=Usage(completion_tokens=5, prompt_tokens=10, total_tokens=15, cost=0.00025),
            model="openrouter/claude",
        ),
    ]
    usage = assert_same_as_litellm(chunks).usage
    assert usage.cost == 0.00025
    assert (usage.prompt_tokens, usage.completion_tokens) == (10, 5)


def test_sdk_usage_objects() -> None:
    # test_calculate_usage_honors_openai_sdk_completion_usage_chunks and
    # test_calculate_usage_keeps_an_openai_sdk_usage_chunk: the usage chunk's usage is an
    # openai SDK CompletionUsage
    from openai.types.completion_usage import (
        CompletionTokensDetails as SDKCompletionTokensDetails,
    )
    from openai.types.completion_usage import CompletionUsage
    from openai.types.completion_usage import PromptTokensDetails as SDKPromptTokensDetails

    # (LiteLLM's test leaves the usage chunk's id and created to its constructor: a chunk after
    # the finish with another id is another response for fastmerge, and a later `created` is
    # the documented difference, so the port gives it the stream's)
    usage_chunk = quiet(
        ModelResponseStream, id="chatcmpl-lit6552", created=1, model="gpt-5.4-mini", choices=[]
    )
    usage_chunk.usage = CompletionUsage(
        prompt_tokens=5234,
        completion_tokens=125,
        total_tokens=5359,
        prompt_tokens_details=SDKPromptTokensDetails(cached_tokens=4992),
        completion_tokens_details=SDKCompletionTokensDetails(reasoning_tokens=103),
    )
    chunks = [
        dict_chunk(
            [{"index": 0, "delta": {"role": "assistant", "content": "ok"}, "finish_reason": None}]
        ),
        dict_chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}]),
        usage_chunk,
    ]
    usage = assert_same_as_litellm(chunks).usage
    assert (usage.prompt_tokens, usage.completion_tokens) == (5234, 125)
    assert usage.prompt_tokens_details.cached_tokens == 4992
    assert usage.completion_tokens_details.reasoning_tokens == 103


@pytest.mark.parametrize("details", [{"cached_tokens": 64}, object()], ids=["dict", "unreadable"])
def test_token_details_plain_dict_or_unreadable(details: Any) -> None:
    # test_calculate_usage_keeps_token_details_given_as_a_plain_dict /
    # test_calculate_usage_drops_token_details_it_cannot_read
    usage = Usage(prompt_tokens=100, completion_tokens=20, total_tokens=120)
    usage.prompt_tokens_details = details
    usage_chunk = quiet(
        ModelResponseStream, id="chatcmpl-lit6552", created=1, model="gpt-5.4-mini", choices=[]
    )
    usage_chunk.usage = usage
    chunks = [
        dict_chunk(
            [{"index": 0, "delta": {"role": "assistant", "content": "ok"}, "finish_reason": None}]
        ),
        dict_chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}]),
        usage_chunk,
    ]
    result = assert_same_as_litellm(chunks).usage.prompt_tokens_details
    if isinstance(details, dict):
        assert result.cached_tokens == 64
    else:
        assert result is None


def test_model_router_model() -> None:
    # test_get_model_from_chunks_azure_model_router: the model that differs from the first
    chunks = [
        {
            "model": "azure-model-router",
            "id": "chatcmpl-123",
            "choices": [],
            "created": 1,
            "object": "chat.completion.chunk",
        },
        {
            "model": "gpt-4.1-nano-2025-04-14",
            "id": "chatcmpl-123",
            "choices": [{"index": 0, "delta": {"content": "x"}}],
            "created": 1,
            "object": "chat.completion.chunk",
        },
    ]
    assert assert_same_as_litellm(chunks).model == "gpt-4.1-nano-2025-04-14"


def test_chunks_sorted_by_created_at() -> None:
    # test_sort_chunks_handles_dict_hidden_params_created_at and
    # test_stream_chunk_builder_accepts_dict_snapshot_chunks: dicts given out of order
    first = stream_chunk(
        {"content": "Hello ", "role": "assistant"}, model="gpt-4.1-mini", created=1
    )
    second = stream_chunk({"content": "world"}, finish="stop", model="gpt-4.1-mini", created=2)
    chunks = []
    for at, chunk in ((2, second), (1, first)):
        dumped = chunk.model_dump()
        dumped["_hidden_params"] = {"created_at": at}
        chunks.append(dumped)
    before = copy.deepcopy(chunks)
    assert build(chunks).choices[0].message.content == "Hello world"
    assert chunks == before
    assert assert_same_as_litellm(chunks).choices[0].message.content == "Hello world"


def test_hidden_provider_fields_of_a_dict_chunk() -> None:
    # test_stream_chunk_builder_dict_snapshot_preserves_hidden_provider_fields
    chunk = stream_chunk(
        {"content": "hi", "role": "assistant"}, finish="stop", model="gpt-4.1-mini"
    )
    dumped = chunk.model_dump()
    dumped["_hidden_params"] = {"provider_specific_fields": {"traffic_type": "default"}}
    result = assert_same_as_litellm([dumped])
    assert result._hidden_params["provider_specific_fields"]["traffic_type"] == "default"


def test_trailing_chunk_without_choices() -> None:
    # test_stream_chunk_builder_tolerates_trailing_chunk_without_choices
    from litellm.types.llms.base import BaseLiteLLMOpenAIResponseObject

    chunks = [
        quiet(
            ModelResponseStream,
            model="gpt-4o",
            choices=[StreamingChoices(index=0, delta=Delta(content=part))],
        )
        for part in ("Hello", " world")
    ]
    chunks.append(BaseLiteLLMOpenAIResponseObject())
    reference = litellm_build(chunks)
    result = build(chunks)
    assert result.choices[0].message.content == reference.choices[0].message.content
    assert result.choices[0].message.content == "Hello world"


def test_speed_and_inference_geo_survive() -> None:
    # test_anthropic_speed_and_geo_survive_stream_assembly
    usage = Usage(completion_tokens=100, prompt_tokens=1000, total_tokens=1100)
    usage.speed = "fast"
    usage.inference_geo = "global"
    chunks = [stream_chunk({"content": "Hi"}, finish="stop", usage=usage, model="claude-opus-4-8")]
    result = assert_same_as_litellm(chunks).usage
    assert (result.speed, result.inference_geo) == ("fast", "global")


def test_prompt_tokens_details_survive_a_later_chunk_without_them() -> None:
    # test_prompt_tokens_details_survive_later_usage_chunk_without_details
    details = PromptTokensDetailsWrapper(cached_tokens=6004, cache_write_tokens=10)
    chunks = [
        stream_chunk(
            {"content": "Hi"},
            model="openai/gpt-5.6-sol",
            usage=Usage(
                prompt_tokens=6017,
                completion_tokens=4,
                total_tokens=6021,
                prompt_tokens_details=details,
            ),
        ),
        stream_chunk(
            {"content": ""},
            finish="stop",
            model="openai/gpt-5.6-sol",
            usage=Usage(prompt_tokens=6017, completion_tokens=4, total_tokens=6021),
        ),
    ]
    usage = assert_same_as_litellm(chunks).usage
    assert usage.prompt_tokens == 6017
    assert usage.prompt_tokens_details.cached_tokens == 6004
    assert usage.prompt_tokens_details.cache_write_tokens == 10


@pytest.mark.parametrize("typed", [True, False], ids=["type-custom", "no-type"])
def test_custom_tool_call(typed: bool) -> None:
    # test_get_combined_tool_content_custom_tool_call(_without_type_field)
    first: dict[str, Any] = {
        "index": 0,
        "id": "call_TBs",
        "custom": {"name": "ApplyPatch", "input": ""},
    }
    if typed:
        first["type"] = "custom"
    chunks = [
        dict_chunk([{"index": 0, "delta": {"tool_calls": [first]}}]),
        dict_chunk(
            [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [{"index": 0, "custom": {"input": "*** Begin Patch\n"}}]
                    },
                }
            ]
        ),
        dict_chunk(
            [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "custom": {"input": "*** End Patch\n"}}]},
                    "finish_reason": "tool_calls",
                }
            ]
        ),
    ]
    (call,) = assert_same_as_litellm(chunks).choices[0].message.tool_calls
    assert call.model_dump() == {
        "id": "call_TBs",
        "type": "custom",
        "custom": {"name": "ApplyPatch", "input": "*** Begin Patch\n*** End Patch\n"},
    }


def _tool_call_chunk(tool_call: Any) -> dict[str, Any]:
    return dict_chunk([{"index": 0, "delta": {"tool_calls": [tool_call]}}])


def test_many_interleaved_argument_fragments_in_order() -> None:
    # test_get_combined_tool_content_joins_many_dict_shaped_argument_fragments_in_order: two
    # calls of 300 fragments each, interleaved, and a third call that never gets arguments
    first = [f"a{i};" for i in range(300)]
    second = [f"b{i};" for i in range(300)]
    chunks = [
        _tool_call_chunk(
            {"index": i, "id": f"call_{n}", "type": "function", "function": {"name": f"tool_{n}"}}
        )
        for i, n in enumerate("abc")
    ]
    chunks += [
        _tool_call_chunk({"index": index, "function": {"arguments": fragment}})
        for a, b in zip(first, second)
        for index, fragment in ((0, a), (1, b))
    ]
    reference = litellm_build(chunks).choices[0].message.tool_calls
    calls = build(chunks).choices[0].message.tool_calls
    assert [c.id for c in calls] == [c.id for c in reference] == ["call_a", "call_b", "call_c"]
    assert calls[0].function.arguments == reference[0].function.arguments == "".join(first)
    assert calls[1].function.arguments == reference[1].function.arguments == "".join(second)
    # documented difference: a call that streamed no arguments keeps "" (LiteLLM writes "{}")
    assert (calls[2].function.arguments, reference[2].function.arguments) == ("", "{}")


def test_forty_parallel_calls() -> None:
    # test_get_combined_tool_content_joins_fragments_across_many_parallel_tool_calls
    indexes = range(40)
    chunks = [
        _tool_call_chunk(
            {"index": i, "id": f"call_{i}", "type": "function", "function": {"name": f"tool_{i}"}}
        )
        for i in indexes
    ]
    chunks += [
        _tool_call_chunk({"index": i, "function": {"arguments": f"{i}.{position};"}})
        for position in range(5)
        for i in indexes
    ]
    chunks.append(dict_chunk([{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]))
    calls = assert_same_as_litellm(chunks).choices[0].message.tool_calls
    assert [c.id for c in calls] == [f"call_{i}" for i in indexes]
    for i, call in zip(indexes, calls):
        assert call.function.arguments == "".join(f"{i}.{p};" for p in range(5))


def test_object_fragments_inside_dict_chunks() -> None:
    # test_get_combined_tool_content_joins_many_object_shaped_argument_fragments_in_order and
    # ..._custom_tool_input_fragments_in_order: LiteLLM's objects and plain objects in dicts
    xs = [f"x{i}|" for i in range(300)]
    ys = [f"y{i}|" for i in range(300)]
    chunks = [
        _tool_call_chunk(call_delta(0, "", "call_x", "tool_x")),
        _tool_call_chunk(call_delta(1, "", "call_y", "tool_y")),
    ]
    chunks += [
        _tool_call_chunk(call_delta(i, f)) for x, y in zip(xs, ys) for i, f in ((0, x), (1, y))
    ]
    finish = dict_chunk([{"index": 0, "delta": {}, "finish_reason": "tool_calls"}])
    chunks.append(finish)
    calls = assert_same_as_litellm(chunks).choices[0].message.tool_calls
    assert [(c.id, c.function.name, c.function.arguments) for c in calls] == [
        ("call_x", "tool_x", "".join(xs)),
        ("call_y", "tool_y", "".join(ys)),
    ]
    custom = [
        _tool_call_chunk(
            {"index": 0, "id": "call_d", "type": "custom", "custom": {"name": "apply_patch"}}
        ),
        _tool_call_chunk(
            SimpleNamespace(
                index=1,
                id="call_o",
                type="custom",
                custom=SimpleNamespace(name="run_script", input=""),
            )
        ),
    ]
    custom += [
        _tool_call_chunk(call)
        for i in range(200)
        for call in (
            {"index": 0, "custom": {"input": f"d{i},"}},
            SimpleNamespace(index=1, custom=SimpleNamespace(input=f"o{i},")),
        )
    ]
    custom.append(finish)
    calls = assert_same_as_litellm(custom).choices[0].message.tool_calls
    assert [(c.id, c.custom.name, c.custom.input) for c in calls] == [
        ("call_d", "apply_patch", "".join(f"d{i}," for i in range(200))),
        ("call_o", "run_script", "".join(f"o{i}," for i in range(200))),
    ]


@pytest.mark.parametrize("reasoning", ["let me count the primes under thirty " * 3, "x " * 400])
def test_unknown_completion_split_filled_from_reasoning(reasoning: str) -> None:
    # test_calculate_usage_fills_unknown_split_from_reasoning_estimate: the usage's details
    # leave the split unknown; the reasoning text's token count fills it, capped at the
    # completion count
    usage = Usage(
        prompt_tokens=50,
        completion_tokens=100,
        total_tokens=150,
        completion_tokens_details=CompletionTokensDetailsWrapper(
            reasoning_tokens=None, text_tokens=None
        ),
    )
    chunks = [
        stream_chunk(
            {"reasoning_content": reasoning, "role": "assistant"}, model="claude-opus-4-8"
        ),
        stream_chunk({"content": "10"}, finish="stop", usage=usage, model="claude-opus-4-8"),
    ]
    details = assert_same_as_litellm(chunks).usage.completion_tokens_details
    estimate = litellm.token_counter(text=reasoning, count_response_tokens=True)
    assert details.reasoning_tokens == min(estimate, 100)
    assert details.text_tokens == 100 - min(estimate, 100)


@pytest.mark.parametrize("kind", ["dict", "obj"])
def test_all_empty_choices(kind: str) -> None:
    # test_stream_chunk_builder_survives_all_empty_choices
    if kind == "dict":
        chunks: list[Any] = [dict_chunk([]), dict_chunk([])]
    else:
        chunks = [quiet(ModelResponseStream, model="gpt-5.4-mini", choices=[]) for _ in range(2)]
    result = build(chunks)
    assert result.choices[0].message.role == "assistant"
    assert result.choices[0].finish_reason == "stop"
    reference = litellm_build(chunks)
    assert result.choices == reference.choices


def test_usage_only_frame() -> None:
    # test_stream_chunk_builder_keeps_usage_from_usage_only_frames
    frame = dict_chunk([], usage={"prompt_tokens": 10, "completion_tokens": 0, "total_tokens": 10})
    result = assert_same_as_litellm([frame])
    assert result.choices[0].message.role == "assistant"
    assert (result.usage.prompt_tokens, result.usage.total_tokens) == (10, 10)


@pytest.mark.parametrize("delta", [{"content": "Hi"}, {}], ids=["without-role", "empty"])
def test_role_defaults_to_assistant(delta: dict[str, Any]) -> None:
    # test_stream_chunk_builder_defaults_role_when_delta_omits_it
    chunks = [
        dict_chunk([{"index": 0, "delta": dict(delta), "finish_reason": None}]),
        dict_chunk([{"index": 0, "delta": {"content": "!"}, "finish_reason": "stop"}]),
    ]
    message = assert_same_as_litellm(chunks).choices[0]
    assert message.message.role == "assistant"
    assert message.message.content == delta.get("content", "") + "!"
    assert message.finish_reason == "stop"


def test_role_from_the_first_frame_with_choices() -> None:
    # test_stream_chunk_builder_reads_role_from_first_frame_with_choices
    chunks = [
        dict_chunk([]),
        dict_chunk(
            [{"index": 0, "delta": {"role": "user", "content": "Hi"}, "finish_reason": None}]
        ),
        dict_chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}]),
    ]
    message = assert_same_as_litellm(chunks).choices[0].message
    assert (message.role, message.content) == ("user", "Hi")


def test_mock_stream_usage() -> None:
    # test_calculate_usage_reads_prompt_tokens_from_mock_stream_usage_chunk_without_tokenizer_
    # fallback / ..._falls_back_to_prompt_counter_when_mock_stream_has_no_admission_count
    from litellm.utils import mock_completion_streaming_obj

    def fail() -> int:
        raise AssertionError("prompt tokens must come from the usage chunk, not the tokenizer")

    chunks = quiet(
        lambda: list(
            mock_completion_streaming_obj(
                ModelResponseStream(model="gpt-5.4-mini"),
                mock_response="ok",
                model="gpt-5.4-mini",
                prompt_tokens=51234,
            )
        )
    )
    assert chunks[-1].choices == []
    usage = assert_same_as_litellm(chunks, count_prompt_tokens=fail).usage
    assert usage.prompt_tokens == 51234
    assert usage.completion_tokens == chunks[-1].usage.completion_tokens
    assert usage.total_tokens == 51234 + usage.completion_tokens
    unreported = quiet(
        lambda: list(
            mock_completion_streaming_obj(
                ModelResponseStream(model="gpt-5.4-mini"), mock_response="ok", model="gpt-5.4-mini"
            )
        )
    )
    assert all(chunk.choices for chunk in unreported)
    usage = assert_same_as_litellm(unreported, count_prompt_tokens=lambda: 77).usage
    assert usage.prompt_tokens == 77
