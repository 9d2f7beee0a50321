"""``fastmerge.litellm.stream_chunk_builder`` against ``litellm.stream_chunk_builder``, on both
backends.

- The recorded OpenAI Chat streams of ``tests/corpus/openai_chat``, as the
  ``ModelResponseStream`` objects LiteLLM makes of them and as the chunk dicts: each result is
  LiteLLM's own result on the same chunks, field for field (``model_dump()`` and
  ``_hidden_params``), except the documented differences, listed per stream in ``DIFFERENCES``
  and checked by value below (docs/litellm.md).
- The expectations of LiteLLM's own tests of its builder (``tests/local_testing/
  test_stream_chunk_builder.py`` and ``tests/test_litellm/litellm_core_utils/
  test_streaming_chunk_builder_utils.py`` in BerriAI/litellm), ported: each runs the chunks those
  tests build through both builders, checks fastmerge's result against the test's expected
  values and compares it with LiteLLM's.
"""

from __future__ import annotations

import copy
import json
import os
import warnings
from types import SimpleNamespace
from typing import Any, Callable

import pytest
from _corpus import path_of, stream_ids
from conftest import AGGREGATES

import fastmerge

# LiteLLM fetches its model price map over the network at import unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# and its token counter asks the Hugging Face hub for some models' tokenizers (tiktoken offline)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    litellm = pytest.importorskip("litellm")
    from litellm.types.utils import (
        ChatCompletionDeltaToolCall,
        CompletionTokensDetailsWrapper,
        Delta,
        Function,
        ModelResponse,
        ModelResponseStream,
        PromptTokensDetails,
        PromptTokensDetailsWrapper,
        ServerToolUse,
        StreamingChoices,
        Usage,
    )

    from fastmerge import litellm as fl

# LiteLLM prints its provider list to stdout when it cannot name a model's provider.
litellm.suppress_debug_info = True
# Building LiteLLM's pydantic types warns, once per type, about its TypedDicts' ReadOnly items;
# the tests run with warnings as errors.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Item .* is using the `ReadOnly` qualifier:UserWarning"
)


def _quiet(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    # LiteLLM's first calls build pydantic schemas, which warn (TypedDict ReadOnly items); the
    # tests run with warnings as errors
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


def litellm_build(chunks: Any, **kwargs: Any) -> Any:
    """LiteLLM's own builder, on a copy of the chunks: it writes the response's cost into the
    first dict chunk's ``_hidden_params`` (the response shares that dict)."""
    return _quiet(litellm.stream_chunk_builder, copy.deepcopy(chunks), **kwargs)


def build(chunks: Any, **kwargs: Any) -> Any:
    """fastmerge's builder (on this test's backend: it reads ``fastmerge.aggregate_choices``)."""
    return fl.stream_chunk_builder(chunks, **kwargs)


def _diff(left: Any, right: Any, path: str = "") -> list[str]:
    """The paths where two ``model_dump()`` s differ: a key on one side only, or another value."""
    if isinstance(left, dict) and isinstance(right, dict):
        out: list[str] = []
        for key in sorted(set(left) | set(right), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in left or key not in right:
                out.append(where)
            else:
                out += _diff(left[key], right[key], where)
        return out
    if isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        return [p for i, (a, b) in enumerate(zip(left, right)) for p in _diff(a, b, f"{path}[{i}]")]
    return [] if left == right else [path]


def differences(reference: Any, result: Any) -> set[str]:
    """Where ``result`` differs from LiteLLM's ``reference``: its fields and hidden params."""
    found = _diff(reference.model_dump(), result.model_dump())
    found += _diff(reference._hidden_params, result._hidden_params, "_hidden_params")
    return set(found)


# ---------------------------------------------------------------------------------------------
# The corpus: LiteLLM's chunks of the recorded OpenAI Chat streams

STREAMS = stream_ids("openai_chat")

# The kinds of documented difference (docs/litellm.md's table), as the paths they show at:
#   kept      - provider data LiteLLM's builder drops, kept where the provider sent it
#   created   - `created` when chunks differ: LiteLLM the first chunk's, fastmerge the last sent
#   groq      - Groq's usage, sent in x_groq.usage: read (LiteLLM estimates it instead)
#   total     - a reported total_tokens is kept (LiteLLM: prompt + completion)
#   content   - a tool-call turn whose chunks sent content "": None (LiteLLM "")
#   logprobs  - chat logprobs kept (LiteLLM drops them)
#   reasoning - reasoning streamed in `reasoning` / `reasoning_details`: reasoning_content
#   absent    - "" and null sent for a field are absent (system_fingerprint "", vLLM's nulls)
_GROQ_USAGE = {
    "usage.completion_time",
    "usage.prompt_time",
    "usage.queue_time",
    "usage.total_time",
    "x_groq",
}
_GROQ_COUNTS = {
    "usage.prompt_tokens",
    "usage.completion_tokens",
    "usage.total_tokens",
    "usage.completion_tokens_details.text_tokens",
}
_OPENROUTER = {
    "choices[0].message.reasoning_details",
    "choices[0].native_finish_reason",
    "provider",
    "usage.cost_details",
    "usage.is_byok",
}
# stream -> {kind of chunks ("obj" or "dict") -> the paths where the results differ}; a stream
# not listed gives LiteLLM's result exactly
DIFFERENCES: dict[str, dict[str, set[str]]] = {
    "azure-model-router-content-filter": dict.fromkeys(
        ("obj", "dict"),
        {"choices[0].content_filter_results", "prompt_filter_results", "created"},
    ),
    "deepseek-reasoner-reasoning-content": dict.fromkeys(
        ("obj", "dict"), {"usage.prompt_cache_hit_tokens", "usage.prompt_cache_miss_tokens"}
    ),
    "deepseek-reasoner-reasoning-then-tool-call": dict.fromkeys(
        ("obj", "dict"),
        {
            "choices[0].message.content",
            "usage.prompt_cache_hit_tokens",
            "usage.prompt_cache_miss_tokens",
        },
    ),
    "gpt4o-content-logprobs": dict.fromkeys(("obj", "dict"), {"choices[0].logprobs"}),
    "gpt4o-refusal-logprobs": dict.fromkeys(("obj", "dict"), {"choices[0].logprobs"}),
    "gpt5-trailing-moderation-chunk": dict.fromkeys(("obj", "dict"), {"moderation"}),
    "groq-compound-web-search": {
        "obj": {
            "choices[0].message.executed_tools",
            "created",
            "usage.completion_tokens_details.reasoning_tokens",
        }
        | _GROQ_USAGE
        | _GROQ_COUNTS,
        # LiteLLM reads no reasoning from the dicts' `reasoning` field
        "dict": {
            "choices[0].message.executed_tools",
            "choices[0].message.reasoning_content",
            "created",
            "usage.completion_tokens_details.reasoning_tokens",
        }
        | _GROQ_USAGE
        | _GROQ_COUNTS,
    },
    "groq-deepseek-r1-reasoning-field": {
        "obj": {"created"} | _GROQ_USAGE | _GROQ_COUNTS,
        "dict": {
            "created",
            "choices[0].message.reasoning_content",
            "usage.completion_tokens_details.reasoning_tokens",
        }
        | _GROQ_USAGE
        | _GROQ_COUNTS,
    },
    "groq-deepseek-r1-think-tags-in-content": dict.fromkeys(
        ("obj", "dict"), {"created"} | _GROQ_USAGE | _GROQ_COUNTS
    ),
    "groq-llama33-tool-call-single-chunk": dict.fromkeys(("obj", "dict"), _GROQ_USAGE),
    "openrouter-claude-reasoning-details-text": {
        "obj": _OPENROUTER,
        "dict": _OPENROUTER | {"choices[0].message.reasoning_content"},
    },
    "openrouter-o3-reasoning-details-encrypted": dict.fromkeys(
        ("obj", "dict"), _OPENROUTER | {"choices[0].message.reasoning_content"}
    ),
    "snowflake-cortex-claude-reasoning-details": dict.fromkeys(
        ("obj", "dict"),
        {
            "choices[0].logprobs",
            "choices[0].message.reasoning_content",
            "choices[0].message.reasoning_details",
            "system_fingerprint",
        },
    ),
    "together-deepseek-r1-via-hf-router": dict.fromkeys(
        ("obj", "dict"), {"choices[0].seed", "choices[0].token_ids", "usage.cached_tokens"}
    ),
    "vllm-crusoe-llama33-text-usage": dict.fromkeys(
        ("obj", "dict"),
        {"choices[0].stop_reason", "choices[0].token_ids", "system_fingerprint"},
    ),
    "vllm-llama31-8b-tool-call-continuous-usage": dict.fromkeys(
        ("obj", "dict"), {"choices[0].message.content"}
    ),
    "xai-grok3-mini-reasoning-tool-call": dict.fromkeys(
        ("obj", "dict"),
        {
            "created",
            "usage.cost_in_usd_ticks",
            "usage.num_sources_used",
            "usage.total_tokens",
            # the total that does not add up, recorded
            "_hidden_params.fastmerge_anomalies",
        },
    ),
}


def corpus_events(name: str) -> list[dict[str, Any]]:
    path = path_of("openai_chat", name)
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def corpus_chunks(name: str, kind: str) -> list[Any]:
    """A corpus stream's chunks as LiteLLM has them: ``ModelResponseStream`` objects built from
    the recorded chunk dicts (``obj``), or the dicts (``dict``)."""
    events = corpus_events(name)
    if kind == "dict":
        return events
    return [_quiet(ModelResponseStream, **event) for event in events]


def test_every_listed_stream_is_in_the_corpus() -> None:
    assert set(DIFFERENCES) <= set(STREAMS)


@pytest.mark.parametrize("kind", ["obj", "dict"])
@pytest.mark.parametrize("name", STREAMS)
def test_corpus_field_for_field(name: str, kind: str) -> None:
    chunks = corpus_chunks(name, kind)
    before = copy.deepcopy(chunks) if kind == "dict" else [c.model_dump() for c in chunks]
    reference = litellm_build(chunks)
    result = build(chunks)
    assert type(result) is type(reference) is ModelResponse
    assert differences(reference, result) == DIFFERENCES.get(name, {}).get(kind, set())
    # the chunks are not changed (LiteLLM's builder reads the same list afterwards above)
    after = chunks if kind == "dict" else [c.model_dump() for c in chunks]
    assert after == before


@pytest.mark.differential
@pytest.mark.parametrize("name", STREAMS)
def test_corpus_backends_agree(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    chunks = corpus_chunks(name, "obj")
    dumps = []
    for module in AGGREGATES.values():
        monkeypatch.setattr(fastmerge, "aggregate_choices", module.aggregate_choices)
        response = build(chunks)
        dumps.append((response.model_dump(), response._hidden_params))
    assert len(dumps) == len(AGGREGATES)
    assert all(d == dumps[0] for d in dumps)


# The documented differences, by value


def test_difference_logprobs_kept() -> None:
    chunks = corpus_chunks("gpt4o-content-logprobs", "obj")
    result = build(chunks)
    message = fastmerge.aggregate(corpus_events("gpt4o-content-logprobs"), "openai-chat")
    assert result.choices[0].logprobs.model_dump(exclude_none=True) == {
        "content": [
            {k: v for k, v in entry.items() if v is not None}
            for entry in message.logprobs["content"]
        ]
    }
    assert len(result.choices[0].logprobs.content) == len(message.logprobs["content"]) > 0
    assert getattr(litellm_build(chunks).choices[0], "logprobs", None) is None


def test_difference_reported_total_tokens_kept() -> None:
    chunks = corpus_chunks("xai-grok3-mini-reasoning-tool-call", "obj")
    reported = next(e["usage"] for e in corpus_events("xai-grok3-mini-reasoning-tool-call")[::-1])
    usage = build(chunks).usage
    assert (
        (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens)
        == (
            reported["prompt_tokens"],
            reported["completion_tokens"],
            reported["total_tokens"],
        )
        == (307, 26, 560)
    )
    assert litellm_build(chunks).usage.total_tokens == 307 + 26
    # the mismatch is recorded, as by fastmerge.aggregate
    (anomaly,) = build(chunks)._hidden_params["fastmerge_anomalies"]
    assert (anomaly["choice"], anomaly["code"]) == (0, "total_mismatch")
    with pytest.raises(fastmerge.AnomalyError):
        build(chunks, strict=True)


def test_difference_call_turn_content_is_none() -> None:
    chunks = corpus_chunks("deepseek-reasoner-reasoning-then-tool-call", "obj")
    assert build(chunks).choices[0].message.content is None
    assert litellm_build(chunks).choices[0].message.content == ""
    # a text-only turn without text reads "" on both sides, as LiteLLM's messages do
    empty = [_chunk({"role": "assistant"}), _chunk({}, finish="stop")]
    assert build(empty).choices[0].message.content == ""
    assert litellm_build(empty).choices[0].message.content == ""


def test_difference_created_is_the_last_sent() -> None:
    events = corpus_events("xai-grok3-mini-reasoning-tool-call")
    created = [e["created"] for e in events]
    assert created[0] != created[-1]
    assert build(corpus_chunks("xai-grok3-mini-reasoning-tool-call", "obj")).created == created[-1]
    assert litellm_build(events).created == created[0]


def test_difference_groq_usage_is_read() -> None:
    events = corpus_events("groq-deepseek-r1-reasoning-field")
    reported = next(e["x_groq"]["usage"] for e in events if "usage" in e.get("x_groq", {}))
    usage = build(corpus_chunks("groq-deepseek-r1-reasoning-field", "obj")).usage
    assert usage.prompt_tokens == reported["prompt_tokens"] == 573
    assert usage.completion_tokens == reported["completion_tokens"]
    assert usage.total_tokens == reported["total_tokens"]
    assert litellm_build(events).usage.prompt_tokens == 0  # estimated: no messages were given


def test_difference_reasoning_fields_read_from_dicts() -> None:
    events = corpus_events("openrouter-claude-reasoning-details-text")
    result = build(events).choices[0].message
    assert result.reasoning_content == "This is a simple arithmetic question. 2+2 equals 4."
    assert result.reasoning_details[0]["text"] == result.reasoning_content
    assert getattr(litellm_build(events).choices[0].message, "reasoning_content", None) is None


def test_corpus_usage_chunk_kept_whole() -> None:
    # LiteLLM's test_stream_chunk_builder_openai_prompt_caching: every usage field of the
    # usage chunk is on the built response
    for name in ("gpt4o-json-schema-content-usage", "gpt4o-mini-text-usage", "gpt4o-refusal"):
        chunks = corpus_chunks(name, "obj")
        usage = next(c.usage for c in reversed(chunks) if getattr(c, "usage", None))
        expected = usage.model_dump(exclude_none=True)
        got = build(chunks).usage.model_dump(exclude_none=True)
        assert expected and {k: got[k] for k in expected} == expected


# ---------------------------------------------------------------------------------------------
# LiteLLM's own expectations of its builder, ported


def _chunk(
    delta: dict[str, Any],
    *,
    finish: str | None = None,
    index: int = 0,
    usage: Any = None,
    model: str = "gpt-4o-2024-08-06",
    created: int = 1725932618,
) -> Any:
    """One ``ModelResponseStream`` with one choice."""
    fields: dict[str, Any] = {}
    if usage is not None:
        fields["usage"] = usage
    return _quiet(
        ModelResponseStream,
        id="chatcmpl-A5kCnzaxRsknd6008552ZhDi71yPt",
        created=created,
        model=model,
        object="chat.completion.chunk",
        system_fingerprint="fp_b2ffeb16ee",
        choices=[StreamingChoices(index=index, delta=Delta(**delta), finish_reason=finish)],
        **fields,
    )


def _dict_chunk(choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    chunk = {
        "id": "chatcmpl-lit6552",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-5.4-mini",
        "choices": choices,
    }
    chunk.update(extra)
    return chunk


def _call(index: int, arguments: str, call_id: str | None = None, name: str | None = None) -> Any:
    return ChatCompletionDeltaToolCall(
        id=call_id, function=Function(arguments=arguments, name=name), type="function", index=index
    )


def assert_same_as_litellm(chunks: Any, **kwargs: Any) -> Any:
    """fastmerge's result on ``chunks``, checked equal to LiteLLM's (fields and hidden params)."""
    reference = litellm_build(chunks, **kwargs)
    result = build(chunks, **kwargs)
    assert differences(reference, result) == set()
    return result


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
    chunks = [_chunk({"content": text[0], "role": "assistant"}, model=model)]
    chunks += [_chunk({"content": t}, model=model) for t in text[1:]]
    chunks.append(
        _chunk(
            {
                "content": "",
                "tool_calls": [_call(1, "", "toolu_01H3AjkLpRtGQrof13CBnWfK", "sql_query")],
            },
            model=model,
        )
    )
    chunks += [_chunk({"content": "", "tool_calls": [_call(1, a)]}, model=model) for a in arguments]
    chunks.append(_chunk({}, finish="tool_calls", model=model))
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
    chunks = [_quiet(ModelResponse, **head, choices=[c], stream=True) for c in raw]
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
        _chunk(
            {
                "content": None,
                "role": "assistant",
                "tool_calls": [_call(i, json.dumps({"location": p}), cid, "get_current_weather")],
            },
            model="llama-3.3-70b-versatile",
        )
        for i, (cid, p) in enumerate(places)
    ]
    finish = _chunk({}, finish="tool_calls", model="llama-3.3-70b-versatile")
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


def test_thinking_blocks_are_not_rebuilt() -> None:
    # test_get_combined_thinking_content_preserves_interleaved_blocks: LiteLLM rebuilds three
    # blocks from the fragments. The engine lacks that rule (delta.thinking_blocks is not read
    # by the openai-chat adapter): fastmerge gives no thinking_blocks rather than a wrong list
    def block(**fields: Any) -> Any:
        return _chunk({"thinking_blocks": [fields]}, model="claude-sonnet-4-20250514")

    chunks = [
        _chunk({"role": "assistant", "content": None}, model="claude-sonnet-4-20250514"),
        block(type="thinking", thinking="Step 1 analysis...", signature=None),
        block(type="thinking", thinking=None, signature="sig_block1"),
        block(type="redacted_thinking", data="EuoBCoYBGAIi...encrypted..."),
        block(type="thinking", thinking="Step 2 analysis...", signature=None),
        block(type="thinking", thinking=None, signature="sig_block2"),
    ]
    reference = litellm_build(chunks).choices[0].message.thinking_blocks
    assert [b["type"] for b in reference] == ["thinking", "redacted_thinking", "thinking"]
    assert [b.get("signature") for b in reference] == ["sig_block1", None, "sig_block2"]
    assert getattr(build(chunks).choices[0].message, "thinking_blocks", None) is None


def _claude_usage_chunk(usage: Any, finish: str | None, content: str | None) -> Any:
    return _chunk(
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
        _chunk(
            {"content": "Hi"},
            usage=Usage(completion_tokens=1, prompt_tokens=10, total_tokens=11),
            model="openrouter/claude",
        ),
        _chunk(
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
    usage_chunk = _quiet(
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
        _dict_chunk(
            [{"index": 0, "delta": {"role": "assistant", "content": "ok"}, "finish_reason": None}]
        ),
        _dict_chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}]),
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
    usage_chunk = _quiet(
        ModelResponseStream, id="chatcmpl-lit6552", created=1, model="gpt-5.4-mini", choices=[]
    )
    usage_chunk.usage = usage
    chunks = [
        _dict_chunk(
            [{"index": 0, "delta": {"role": "assistant", "content": "ok"}, "finish_reason": None}]
        ),
        _dict_chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}]),
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
    first = _chunk({"content": "Hello ", "role": "assistant"}, model="gpt-4.1-mini", created=1)
    second = _chunk({"content": "world"}, finish="stop", model="gpt-4.1-mini", created=2)
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
    chunk = _chunk({"content": "hi", "role": "assistant"}, finish="stop", model="gpt-4.1-mini")
    dumped = chunk.model_dump()
    dumped["_hidden_params"] = {"provider_specific_fields": {"traffic_type": "default"}}
    result = assert_same_as_litellm([dumped])
    assert result._hidden_params["provider_specific_fields"]["traffic_type"] == "default"


def test_trailing_chunk_without_choices() -> None:
    # test_stream_chunk_builder_tolerates_trailing_chunk_without_choices
    from litellm.types.llms.base import BaseLiteLLMOpenAIResponseObject

    chunks = [
        _quiet(
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
    chunks = [_chunk({"content": "Hi"}, finish="stop", usage=usage, model="claude-opus-4-8")]
    result = assert_same_as_litellm(chunks).usage
    assert (result.speed, result.inference_geo) == ("fast", "global")


def test_prompt_tokens_details_survive_a_later_chunk_without_them() -> None:
    # test_prompt_tokens_details_survive_later_usage_chunk_without_details
    details = PromptTokensDetailsWrapper(cached_tokens=6004, cache_write_tokens=10)
    chunks = [
        _chunk(
            {"content": "Hi"},
            model="openai/gpt-5.6-sol",
            usage=Usage(
                prompt_tokens=6017,
                completion_tokens=4,
                total_tokens=6021,
                prompt_tokens_details=details,
            ),
        ),
        _chunk(
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
        _dict_chunk([{"index": 0, "delta": {"tool_calls": [first]}}]),
        _dict_chunk(
            [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [{"index": 0, "custom": {"input": "*** Begin Patch\n"}}]
                    },
                }
            ]
        ),
        _dict_chunk(
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
    return _dict_chunk([{"index": 0, "delta": {"tool_calls": [tool_call]}}])


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
    chunks.append(_dict_chunk([{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]))
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
        _tool_call_chunk(_call(0, "", "call_x", "tool_x")),
        _tool_call_chunk(_call(1, "", "call_y", "tool_y")),
    ]
    chunks += [_tool_call_chunk(_call(i, f)) for x, y in zip(xs, ys) for i, f in ((0, x), (1, y))]
    finish = _dict_chunk([{"index": 0, "delta": {}, "finish_reason": "tool_calls"}])
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
        _chunk({"reasoning_content": reasoning, "role": "assistant"}, model="claude-opus-4-8"),
        _chunk({"content": "10"}, finish="stop", usage=usage, model="claude-opus-4-8"),
    ]
    details = assert_same_as_litellm(chunks).usage.completion_tokens_details
    estimate = litellm.token_counter(text=reasoning, count_response_tokens=True)
    assert details.reasoning_tokens == min(estimate, 100)
    assert details.text_tokens == 100 - min(estimate, 100)


@pytest.mark.parametrize("kind", ["dict", "obj"])
def test_all_empty_choices(kind: str) -> None:
    # test_stream_chunk_builder_survives_all_empty_choices
    if kind == "dict":
        chunks: list[Any] = [_dict_chunk([]), _dict_chunk([])]
    else:
        chunks = [_quiet(ModelResponseStream, model="gpt-5.4-mini", choices=[]) for _ in range(2)]
    result = build(chunks)
    assert result.choices[0].message.role == "assistant"
    assert result.choices[0].finish_reason == "stop"
    reference = litellm_build(chunks)
    assert result.choices == reference.choices


def test_usage_only_frame() -> None:
    # test_stream_chunk_builder_keeps_usage_from_usage_only_frames
    frame = _dict_chunk([], usage={"prompt_tokens": 10, "completion_tokens": 0, "total_tokens": 10})
    result = assert_same_as_litellm([frame])
    assert result.choices[0].message.role == "assistant"
    assert (result.usage.prompt_tokens, result.usage.total_tokens) == (10, 10)


@pytest.mark.parametrize("delta", [{"content": "Hi"}, {}], ids=["without-role", "empty"])
def test_role_defaults_to_assistant(delta: dict[str, Any]) -> None:
    # test_stream_chunk_builder_defaults_role_when_delta_omits_it
    chunks = [
        _dict_chunk([{"index": 0, "delta": dict(delta), "finish_reason": None}]),
        _dict_chunk([{"index": 0, "delta": {"content": "!"}, "finish_reason": "stop"}]),
    ]
    message = assert_same_as_litellm(chunks).choices[0]
    assert message.message.role == "assistant"
    assert message.message.content == delta.get("content", "") + "!"
    assert message.finish_reason == "stop"


def test_role_from_the_first_frame_with_choices() -> None:
    # test_stream_chunk_builder_reads_role_from_first_frame_with_choices
    chunks = [
        _dict_chunk([]),
        _dict_chunk(
            [{"index": 0, "delta": {"role": "user", "content": "Hi"}, "finish_reason": None}]
        ),
        _dict_chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}]),
    ]
    message = assert_same_as_litellm(chunks).choices[0].message
    assert (message.role, message.content) == ("user", "Hi")


def test_mock_stream_usage() -> None:
    # test_calculate_usage_reads_prompt_tokens_from_mock_stream_usage_chunk_without_tokenizer_
    # fallback / ..._falls_back_to_prompt_counter_when_mock_stream_has_no_admission_count
    from litellm.utils import mock_completion_streaming_obj

    def fail() -> int:
        raise AssertionError("prompt tokens must come from the usage chunk, not the tokenizer")

    chunks = _quiet(
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
    unreported = _quiet(
        lambda: list(
            mock_completion_streaming_obj(
                ModelResponseStream(model="gpt-5.4-mini"), mock_response="ok", model="gpt-5.4-mini"
            )
        )
    )
    assert all(chunk.choices for chunk in unreported)
    usage = assert_same_as_litellm(unreported, count_prompt_tokens=lambda: 77).usage
    assert usage.prompt_tokens == 77


# ---------------------------------------------------------------------------------------------
# fastmerge's own checks


def test_n_choices_kept_apart() -> None:
    chunks = corpus_chunks("gpt4o-n3-interleaved-choices", "obj")
    result = assert_same_as_litellm(chunks)
    messages = fastmerge.aggregate_choices(
        corpus_events("gpt4o-n3-interleaved-choices"), "openai-chat"
    )
    assert [c.message.content for c in result.choices] == [m.content for m in messages]
    assert len(result.choices) == 3


def test_another_response_after_the_finish_is_not_merged() -> None:
    # a chunk with another id after the finish starts another response (rules §6): LiteLLM
    # glues it on; fastmerge leaves it out and says so
    chunks = [
        _dict_chunk([{"index": 0, "delta": {"role": "assistant", "content": "a"}}]),
        _dict_chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}]),
        _dict_chunk([{"index": 0, "delta": {"content": "zzz"}}], id="chatcmpl-other"),
    ]
    result = build(chunks)
    assert result.choices[0].message.content == "a"
    assert litellm_build(chunks).choices[0].message.content == "azzz"
    (anomaly,) = result._hidden_params["fastmerge_anomalies"]
    assert (anomaly["choice"], anomaly["code"]) == (0, "new_response")
    with pytest.raises(fastmerge.AnomalyError, match="another response"):
        build(chunks, strict=True)


def test_call_without_an_id_is_kept() -> None:
    # LiteLLM drops a call that never got an id; the engine names it (rules §4) and keeps it
    chunks = [
        _dict_chunk(
            [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [{"index": 0, "function": {"name": "f", "arguments": "{}"}}]
                    },
                }
            ]
        ),
        _dict_chunk([{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]),
    ]
    (call,) = build(chunks).choices[0].message.tool_calls
    assert (call.function.name, call.function.arguments) == ("f", "{}")
    assert call.id
    assert litellm_build(chunks).choices[0].message.tool_calls == []


def test_streamed_citations_are_not_collected() -> None:
    # LiteLLM collects delta.provider_specific_fields["citation"] of every chunk into
    # "citations"; the engine's metadata merge keeps the last value of a key (documented gap)
    chunks = [
        _dict_chunk(
            [
                {
                    "index": 0,
                    "delta": {"content": "a", "provider_specific_fields": {"citation": "c1"}},
                }
            ]
        ),
        _dict_chunk(
            [
                {
                    "index": 0,
                    "delta": {
                        "content": "b",
                        "provider_specific_fields": {"citation": "c2", "x": 1},
                    },
                    "finish_reason": "stop",
                }
            ]
        ),
    ]
    reference = litellm_build(chunks).choices[0].message.provider_specific_fields
    assert reference == {"citations": [["c1", "c2"]], "x": 1}
    assert build(chunks).choices[0].message.provider_specific_fields == {"citation": "c2", "x": 1}


def test_logging_obj_is_refused() -> None:
    with pytest.raises(TypeError, match="logging_obj"):
        build([_chunk({"content": "hi"})], logging_obj=object())


def test_text_completion_chunks_are_refused() -> None:
    chunk = {
        "id": "cmpl-1",
        "object": "text_completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "text": "hi", "finish_reason": None}],
    }
    with pytest.raises(TypeError, match="text-completion"):
        build([chunk])


def test_unreadable_chunks_raise_event_error() -> None:
    with pytest.raises(fastmerge.EventError):
        build([1, 2])


def test_inputs_not_mutated_objects() -> None:
    chunks = corpus_chunks("gpt4o-parallel-tool-calls", "obj")
    chunks[0]._hidden_params = {"created_at": 1, "custom_llm_provider": "openai"}
    before = [(c.model_dump(), dict(c._hidden_params)) for c in chunks]
    result = build(chunks)
    assert [(c.model_dump(), dict(c._hidden_params)) for c in chunks] == before
    assert result._hidden_params["custom_llm_provider"] == "openai"
