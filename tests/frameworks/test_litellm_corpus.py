"""``fastmerge.litellm.stream_chunk_builder`` against ``litellm.stream_chunk_builder`` on the
recorded OpenAI Chat streams of ``tests/corpus/openai_chat``, as the ``ModelResponseStream``
objects LiteLLM makes of them and as the chunk dicts: each result is LiteLLM's own result on
the same chunks, field for field (``model_dump()`` and ``_hidden_params``), except the
documented differences (docs/litellm.md), listed per stream in ``DIFFERENCES`` and checked by
value; and fastmerge's own checks where LiteLLM has none. Both backends."""

from __future__ import annotations

import copy

import pytest
from _support.corpus import stream_ids
from _support.litellm import (
    ModelResponse,
    assert_same_as_litellm,
    build,
    corpus_chunks,
    corpus_events,
    dict_chunk,
    differences,
    litellm_build,
    stream_chunk,
)
from conftest import AGGREGATES

import fastmerge

# Building LiteLLM's pydantic types warns, once per type, about its TypedDicts' ReadOnly items;
# the tests run with warnings as errors.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Item .* is using the `ReadOnly` qualifier:UserWarning"
)


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
    empty = [stream_chunk({"role": "assistant"}), stream_chunk({}, finish="stop")]
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
        dict_chunk([{"index": 0, "delta": {"role": "assistant", "content": "a"}}]),
        dict_chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}]),
        dict_chunk([{"index": 0, "delta": {"content": "zzz"}}], id="chatcmpl-other"),
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
        dict_chunk(
            [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [{"index": 0, "function": {"name": "f", "arguments": "{}"}}]
                    },
                }
            ]
        ),
        dict_chunk([{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]),
    ]
    (call,) = build(chunks).choices[0].message.tool_calls
    assert (call.function.name, call.function.arguments) == ("f", "{}")
    assert call.id
    assert litellm_build(chunks).choices[0].message.tool_calls == []


def test_streamed_citations_are_collected() -> None:
    # LiteLLM collects delta.provider_specific_fields["citation"] of every chunk into
    # "citations" (one list of them, as none is a list); the other keys, the last value
    chunks = [
        dict_chunk(
            [
                {
                    "index": 0,
                    "delta": {"content": "a", "provider_specific_fields": {"citation": "c1"}},
                }
            ]
        ),
        dict_chunk(
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
    assert build(chunks).choices[0].message.provider_specific_fields == reference
    # citations that are lists stay one list each
    for chunk, cited in zip(chunks, (["c1"], ["c2", "c3"])):
        chunk["choices"][0]["delta"]["provider_specific_fields"]["citation"] = cited
    reference = litellm_build(chunks).choices[0].message.provider_specific_fields
    assert reference == {"citations": [["c1"], ["c2", "c3"]], "x": 1}
    assert build(chunks).choices[0].message.provider_specific_fields == reference


def test_logging_obj_is_refused() -> None:
    with pytest.raises(TypeError, match="logging_obj"):
        build([stream_chunk({"content": "hi"})], logging_obj=object())


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
