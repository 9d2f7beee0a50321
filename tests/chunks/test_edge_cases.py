"""The stream-aware chunk rules of edge-cases.md §B–§H (cases 18–77), one test per case.

Each test builds the chunks of its case and asserts the exact result the spec gives, with the
anomaly code where the spec names one (and ``strict=True`` raising ``AnomalyError`` for it).
Cases that belong to provider adapters (raw SSE bytes, Anthropic / Responses / Gemini event
shapes) are tested at chunk level: the chunks or parts the adapter would produce.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from _support.chunks import calls_chunks, chunk, codes, fold_plus, summary, tc

import fastmerge


def _strict_raises(chunks: list[Any], code: str, *, finish: bool = False) -> None:
    """``fold_chunks(strict=True)`` raises ``AnomalyError(code)`` (at ``to_message()`` for the
    end-of-stream anomalies)."""
    with pytest.raises(fastmerge.AnomalyError) as info:
        folded = fastmerge.fold_chunks(chunks, strict=True)
        if finish:
            folded.to_message()
    assert info.value.code == code
    assert isinstance(info.value, fastmerge.MergeError)
    assert str(info.value).startswith(f"{code}: ")


def _strict_clean(chunks: list[Any]) -> Any:
    """``strict=True`` folds a quirk-free stream without raising, to the same message."""
    folded = fastmerge.fold_chunks(chunks, strict=True)
    assert folded.to_message() == sum(chunks).to_message()
    return folded


# ---------------------------------------------------------------------------------------------
# B. Text and content


def test_e18_surrogate_halves_split_across_chunks_join() -> None:
    m = chunk(content="\ud83d") + chunk(content="\ude00")
    assert m.content == "\ud83d\ude00"
    assert json.dumps(m.content) == '"\\ud83d\\ude00"'
    assert json.loads(json.dumps(m.content)) == "\U0001f600"
    r = chunk(reasoning_content="\ud83d") + chunk(reasoning_content="\ude00")
    assert r.reasoning_content == "\ud83d\ude00"
    calls = calls_chunks([tc(0, "c1", "f", '{"a":"\ud83d')], [tc(0, None, None, '\ude00"}')])
    message = sum(calls).to_message()
    assert message.tool_calls[0].arguments == '{"a":"\ud83d\ude00"}'
    assert message.tool_calls[0].parsed_arguments() == {"a": "\ud83d\ude00"}
    assert type(m).from_dict(m.to_dict()) == m


# E19 (raw UTF-8 bytes split across SSE frames) is skipped: the chunk classes take str, never
# bytes; decoding frames belongs to the provider adapters.


def test_e20_str_then_list_content() -> None:
    m = chunk(content="hi") + chunk(content=[{"type": "text", "text": "x"}])
    assert m.content == ["hi", {"type": "text", "text": "x"}]
    assert [p.text for p in m.parts] == ["hi", "x"]


def test_e21_list_then_str_content_parts_mode() -> None:
    m = chunk(content=[{"type": "text", "text": "x"}]) + chunk(content="y")
    # parts mode: the str delta continues the text part
    assert [(type(p).__name__, p.text) for p in m.parts] == [("TextPart", "xy")]
    assert m.content == [{"type": "text", "text": "xy"}]


def test_e22_null_and_empty_content_create_no_part() -> None:
    m = chunk(content=None) + chunk(content="")
    assert m.parts == ()
    assert m.content == ""
    m = chunk(content="a") + chunk(content=None) + chunk(content="") + chunk(content="b")
    assert [p.text for p in m.parts] == ["ab"]
    m = chunk(content=None, tool_calls=[tc(0, "c1", "f", "{}")]) + chunk(content="")
    assert [type(p).__name__ for p in m.parts] == ["ToolCallPart"]
    assert m.content == ""
    parts = chunk(parts=[fastmerge.TextPart(text=""), fastmerge.ReasoningPart(text="")]).parts
    assert parts == ()


def test_e23_long_stream_is_linear() -> None:
    delta = "x" * 200
    chunks = [chunk(content=delta) for _ in range(20_000)]
    start = time.perf_counter()
    m = sum(chunks)
    content = m.content
    elapsed = time.perf_counter() - start
    assert len(content) == 4_000_000 and content == delta * 20_000
    start = time.perf_counter()
    folded = fastmerge.fold_chunks(chunks)
    assert len(folded.content) == 4_000_000
    elapsed = max(elapsed, time.perf_counter() - start)
    # target 50 ms; a quadratic fold copies ~40 GB and takes minutes, so a loose bound is enough
    assert elapsed < 2.0, f"20,000 deltas took {elapsed:.2f} s"


def test_e24_interleaving_order_kept_in_parts() -> None:
    m = (
        chunk(content="a")
        + chunk(content=None, tool_calls=[tc(0, "c1", "f", "{}")])
        + chunk(content="b")
    )
    parts = m.parts
    assert [type(p).__name__ for p in parts] == ["TextPart", "ToolCallPart", "TextPart"]
    assert (parts[0].text, parts[1].id, parts[1].name, parts[2].text) == ("a", "c1", "f", "b")
    assert m.content == "ab"  # the flat view joins them (order lost only there)
    assert summary(m.tool_calls) == [("c1", "f", "{}", 0)]


# ---------------------------------------------------------------------------------------------
# C. Tool calls


def test_e25_interleaved_parallel_calls() -> None:
    chunks = calls_chunks(
        [tc(0, "c1", "f", '{"a"')],
        [tc(1, "c2", "g", '{"b"')],
        [tc(0, None, None, ":1}")],
        [tc(1, None, None, ":2}")],
    )
    expected = [("c1", "f", '{"a":1}', 0), ("c2", "g", '{"b":2}', 1)]
    assert summary(sum(chunks).tool_calls) == expected
    assert summary(fold_plus(chunks).to_message().tool_calls) == expected
    assert summary(_strict_clean(chunks).tool_calls) == expected
    assert sum(chunks).anomalies == []


def test_e26_no_index_sequential_calls() -> None:
    chunks = calls_chunks(
        [{"id": "c1", "function": {"name": "f", "arguments": '{"a"'}}],
        [{"function": {"arguments": ":1}"}}],
        [{"id": "c2", "function": {"name": "g", "arguments": "{}"}}],
    )
    expected = [("c1", "f", '{"a":1}', 0), ("c2", "g", "{}", 1)]
    assert summary(sum(chunks).tool_calls) == expected
    assert sum(chunks).anomalies == []
    assert summary(_strict_clean(chunks).tool_calls) == expected


def test_e27_same_index_distinct_ids_are_two_calls() -> None:
    chunks = calls_chunks([tc(0, "c1", "f", "{}")], [tc(0, "c2", "g", "{}")])
    expected = [("c1", "f", "{}", 0), ("c2", "g", "{}", 1)]
    assert summary(sum(chunks).tool_calls) == expected
    assert summary(_strict_clean(chunks).tool_calls) == expected


def test_e28_id_repeated_in_every_fragment() -> None:
    chunks = calls_chunks([tc(0, "c1", "f", "{")], [tc(0, "c1", None, "}")])
    assert summary(sum(chunks).tool_calls) == [("c1", "f", "{}", 0)]
    _strict_clean(chunks)


def test_e29_name_repeated_in_every_fragment() -> None:
    chunks = calls_chunks([tc(0, "c1", "f", "{")], [tc(0, None, "f", "}")])
    assert summary(sum(chunks).tool_calls) == [("c1", "f", "{}", 0)]
    assert sum(chunks).anomalies == []
    _strict_clean(chunks)


def test_e29_a_different_name_on_the_same_call_is_a_name_conflict() -> None:
    # spec §4: a different later name is an anomaly, never concatenated
    chunks = calls_chunks([tc(0, "c1", "f", "{")], [tc(0, "c1", "g", "}")])
    m = sum(chunks)
    assert summary(m.tool_calls) == [("c1", "f", "{}", 0)]
    assert codes(m) == ["name_conflict"]
    _strict_raises(chunks, "name_conflict")


def test_e30_id_arrives_late() -> None:
    chunks = calls_chunks([tc(0, None, "f", "{")], [tc(0, "c1", None, "}")])
    m = sum(chunks)
    assert summary(m.tool_calls) == [("c1", "f", "{}", 0)]
    assert summary(m.to_message().tool_calls) == [("c1", "f", "{}", 0)]
    assert m.to_message().anomalies == []  # the real id, never a synthetic one


def test_e31_index_only_on_first_fragment_id_on_every_one() -> None:
    chunks = calls_chunks([tc(0, "c1", "f", "{")], [{"id": "c1", "function": {"arguments": "}"}}])
    assert summary(sum(chunks).tool_calls) == [("c1", "f", "{}", 0)]
    _strict_clean(chunks)


def test_e32_no_ids_distinct_indexes_are_two_calls() -> None:
    chunks = calls_chunks([tc(0, None, "a", "{")], [tc(1, None, "b", "}")])
    m = sum(chunks)
    assert [(c.name, c.arguments, c.index) for c in m.tool_calls] == [
        ("a", "{", 0),
        ("b", "}", 1),
    ]


def test_e33_vacuous_fragments_are_ignored() -> None:
    chunks = calls_chunks([tc(0, "c1", "f", "{}")], [{"function": {}}], [tc(1, "c2", "g", "{}")])
    expected = [("c1", "f", "{}", 0), ("c2", "g", "{}", 1)]
    m = sum(chunks)
    assert summary(m.tool_calls) == expected
    assert m.anomalies == []
    assert len(m.parts) == 2
    _strict_clean(chunks)
    # a vacuous fragment first, then arguments alone: no ghost call with an empty identity
    ghost = calls_chunks([{"function": {}}], [{"function": {"arguments": "{}"}}])
    assert sum(ghost).tool_calls is None


def test_e33_orphan_arguments_never_become_a_ghost_call_in_the_message() -> None:
    ghost = calls_chunks([{"function": {}}], [{"function": {"arguments": "{}"}}])
    calls = sum(ghost).to_message().tool_calls or []
    assert [c for c in calls if not c.name] == []


def test_e34_anonymous_continuation_with_several_open_calls() -> None:
    chunks = calls_chunks(
        [tc(0, "c1", "f", "{")], [tc(1, "c2", "g", "{")], [{"function": {"arguments": "}"}}]
    )
    m = sum(chunks)
    assert summary(m.tool_calls) == [("c1", "f", "{", 0), ("c2", "g", "{}", 1)]
    assert codes(m) == ["ambiguous_fragment"]
    assert codes(m.to_message()) == ["ambiguous_fragment"]
    _strict_raises(chunks, "ambiguous_fragment")


def test_e35_new_id_on_every_fragment_without_name_is_one_call() -> None:
    chunks = calls_chunks(
        [tc(0, "c1", "f", "")], [tc(0, "c2", None, "{")], [tc(0, "c3", None, "}")]
    )
    assert summary(sum(chunks).tool_calls) == [("c1", "f", "{}", 0)]
    _strict_clean(chunks)


@pytest.mark.parametrize("placeholder", ["", "null", " ", "\t\n"])
def test_e36_placeholder_ids_are_absent(placeholder: str) -> None:
    chunks = calls_chunks([tc(0, "call_1", "f", "{")], [tc(0, placeholder, None, "}")])
    assert summary(sum(chunks).tool_calls) == [("call_1", "f", "{}", 0)]
    # and a placeholder name never starts a call or renames one
    chunks = calls_chunks([tc(0, "call_1", "f", "{")], [tc(0, placeholder, placeholder, "}")])
    assert summary(sum(chunks).tool_calls) == [("call_1", "f", "{}", 0)]
    assert sum(chunks).anomalies == []


def test_e37_complete_call_without_id_gets_a_synthetic_id() -> None:
    chunks = calls_chunks([{"index": 0, "function": {"name": "f", "arguments": "{}"}}])
    m = sum(chunks)
    assert summary(m.tool_calls) == [(None, "f", "{}", 0)]
    message = m.to_message()
    (call,) = message.tool_calls
    assert isinstance(call.id, str) and call.id.strip() and call.id != "null"
    assert (call.name, call.arguments, call.index) == ("f", "{}", 0)
    assert codes(message) == ["synthetic_id"]
    _strict_raises(chunks, "synthetic_id", finish=True)


def test_e38_non_function_type_merges() -> None:
    chunks = calls_chunks(
        [{"index": 0, "id": "c1", "type": "custom", "custom": {"name": "f", "input": "a"}}],
        [{"index": 0, "custom": {"input": "b"}}],
    )
    m = sum(chunks)
    assert [(c.id, c.type, c.name, c.arguments, c.index) for c in m.tool_calls] == [
        ("c1", "custom", "f", "ab", 0)
    ]


def test_e39_dict_arguments_merge() -> None:
    part = fastmerge.ToolCallPart
    chunks = [
        chunk(parts=[part(id="c1", name="f", arguments={"a": 1}, provider_index=0)]),
        chunk(parts=[part(arguments={"b": 2}, provider_index=0)]),
    ]
    m = sum(chunks)
    assert m.parts[0].arguments == {"a": 1, "b": 2}  # an object until rendering
    (call,) = m.tool_calls
    assert call.arguments == '{"a":1,"b":2}'
    assert call.parsed_arguments() == {"a": 1, "b": 2}
    assert m.anomalies == []
    # dict followed by string: an error anomaly
    bad = [chunks[0], chunk(parts=[part(arguments='{"c":3}', provider_index=0)])]
    assert codes(sum(bad)) == ["mismatched_delta"]
    assert sum(bad).parts[0].arguments == {"a": 1}
    _strict_raises(bad, "mismatched_delta")


def test_e40_truncated_arguments_stay_raw() -> None:
    raw = '{"path": "/etc/pa'
    chunks = calls_chunks([tc(0, "c1", "f", raw[:9])], [tc(0, None, None, raw[9:])])
    (call,) = sum(chunks).to_message().tool_calls
    assert call.arguments == raw
    with pytest.raises(fastmerge.ArgumentsError) as info:
        call.parsed_arguments()
    assert 0 <= info.value.position <= len(raw)
    assert info.value.raw == raw
    assert isinstance(info.value, fastmerge.MergeError)
    call.parsed_arguments(partial=True)  # the tolerant view for UIs never raises
    assert call.arguments == raw  # and never repairs the raw string


def test_e41_concatenated_json_objects_are_invalid() -> None:
    chunks = calls_chunks([tc(0, "c1", "f", "{}")], [tc(0, None, None, "{}")])
    (call,) = sum(chunks).to_message().tool_calls
    assert call.arguments == "{}{}"
    with pytest.raises(fastmerge.ArgumentsError) as info:
        call.parsed_arguments()
    assert info.value.position == 2


def test_e42_empty_arguments_parse_to_empty_object() -> None:
    chunks = calls_chunks([{"index": 0, "id": "c1", "type": "function", "function": {"name": "f"}}])
    (call,) = sum(chunks).to_message().tool_calls
    assert call.arguments == ""
    assert call.parsed_arguments() == {}
    assert call.parsed_arguments(partial=True) == {}


def test_e43_anthropic_two_tool_use_blocks_chunk_level() -> None:
    part = fastmerge.ToolCallPart
    chunks = [
        chunk(parts=[part(id="toolu_1", name="f", arguments="{}", provider_index=1)]),
        chunk(parts=[part(id="toolu_2", name="g", arguments="{}", provider_index=2)]),
    ]
    m = sum(chunks)
    assert summary(m.tool_calls) == [("toolu_1", "f", "{}", 0), ("toolu_2", "g", "{}", 1)]
    assert [p.provider_index for p in m.parts] == [1, 2]
    assert [p.provider_index for p in m.to_message().parts] == [1, 2]


def test_e44_responses_function_call_chunk_level() -> None:
    # output_item.added, then two function_call_arguments.delta at output_index 1
    part = fastmerge.ToolCallPart
    chunks = [
        chunk(parts=[part(id="c1", name="f", provider_index=1, response_item_id="fc_1")]),
        chunk(parts=[part(type=None, arguments="{", provider_index=1)]),
        chunk(parts=[part(type=None, arguments="}", provider_index=1)]),
    ]
    m = sum(chunks)
    (call,) = m.tool_calls
    assert (call.id, call.name, call.arguments, call.index) == ("c1", "f", "{}", 0)
    assert call.response_item_id == "fc_1"
    assert m.parts[0].provider_index == 1


# ---------------------------------------------------------------------------------------------
# D. finish_reason


def _finish(*reasons: Any) -> Any:
    return sum(chunk(finish_reason=r) for r in reasons)


def test_e45_empty_finish_reason_after_a_value() -> None:
    assert _finish("stop", "").finish_reason == "stop"


def test_e46_null_sentinel_finish_reason() -> None:
    assert _finish("stop", "null").finish_reason == "stop"
    assert _finish("null").finish_reason == "null"  # openJiuwen's placeholder when none
    assert _finish("null").finish_reason_normalized is None


def test_e47_none_after_a_value() -> None:
    assert _finish("stop", None).finish_reason == "stop"


def test_e48_two_terminal_chunks() -> None:
    m = _finish("stop", "stop")
    assert m.finish_reason == "stop"
    assert m.finish_reason_normalized == "stop"


def test_e49_last_non_empty_wins() -> None:
    assert _finish("length", "stop").finish_reason == "stop"
    assert _finish("length", "stop", "", None, "null").finish_reason == "stop"


def test_e50_tool_calls_with_stop_keep_raw_stop() -> None:
    m = chunk(tool_calls=[tc(0, "c1", "f", "{}")]) + chunk(finish_reason="stop")
    assert m.finish_reason == "stop"
    assert m.finish_reason_normalized == "stop"  # tool_calls only with opt-in normalization
    assert m.to_message().finish_reason == "stop"


@pytest.mark.parametrize(
    "raw, normalized",
    [
        ("max_tokens", "length"),
        ("MAX_TOKENS", "length"),
        ("length", "length"),
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("STOP", "stop"),
        ("tool_use", "tool_calls"),
        ("function_call", "tool_calls"),
        ("tool_calls", "tool_calls"),
        ("SAFETY", "content_filter"),
        ("refusal", "content_filter"),
        ("content_filter", "content_filter"),
    ],
)
def test_e51_truncation_mapping(raw: str, normalized: str) -> None:
    m = chunk(content="x") + chunk(finish_reason=raw)
    assert m.finish_reason == raw
    assert m.finish_reason_normalized == normalized


# ---------------------------------------------------------------------------------------------
# E. Usage


def _usage(m: Any) -> dict[str, Any]:
    return m.usage_metadata.to_dict()


def test_e52_usage_only_on_final_chunk() -> None:
    usage = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    m = chunk(content="a") + chunk(content="b") + chunk(content=None, usage_metadata=usage)
    assert _usage(m) == {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5}
    assert (m.usage_metadata.input_tokens, m.usage_metadata.output_tokens) == (3, 2)
    assert chunk(content="a").usage_metadata is None


def test_e53_usage_followed_by_null() -> None:
    full = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
    m = chunk(usage_metadata=full) + chunk(usage_metadata=None)
    assert _usage(m) == full


def test_e54_zeros_after_real_values() -> None:
    full = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
    zero = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    m = chunk(usage_metadata=full) + chunk(usage_metadata=zero)
    assert _usage(m) == full
    assert _usage(m.to_message()) == full


def test_e55_anthropic_cumulative_counters() -> None:
    start = {"input_tokens": 10, "output_tokens": 1, "cache_read_input_tokens": 5}
    m = chunk(usage_metadata=start) + chunk(usage_metadata={"output_tokens": 42})
    assert _usage(m) == {"input_tokens": 10, "output_tokens": 42, "cache_read_tokens": 5}
    assert m.usage_metadata.cache_read_tokens == 5
    m = chunk(usage_metadata=start) + chunk(usage_metadata={"input_tokens": 12, "output_tokens": 7})
    assert _usage(m) == {"input_tokens": 12, "output_tokens": 7, "cache_read_tokens": 5}
    # summing is opt-in only
    summed = fastmerge.fold_chunks(
        [chunk(usage_metadata=start), chunk(usage_metadata={"output_tokens": 42})], usage="sum"
    )
    assert _usage(summed)["output_tokens"] == 43


def test_e56_cumulative_usage_on_every_chunk() -> None:
    chunks = [
        chunk(usage_metadata={"prompt_tokens": 10, "completion_tokens": c}) for c in (1, 2, 3)
    ]
    m = sum(chunks)
    assert _usage(m) == {"input_tokens": 10, "output_tokens": 3}
    assert _usage(m.to_message()) == {"input_tokens": 10, "output_tokens": 3, "total_tokens": 13}
    assert _usage(fastmerge.fold_chunks(chunks, usage="sum")) == {
        "input_tokens": 30,
        "output_tokens": 6,
    }
    assert _usage(fastmerge.fold_chunks(chunks, usage="last")) == {
        "input_tokens": 10,
        "output_tokens": 3,
    }


def test_e57_reported_total_inconsistent_is_kept_and_flagged() -> None:
    chunks = [
        chunk(usage_metadata={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 99})
    ]
    message = sum(chunks).to_message()
    assert message.usage_metadata.total_tokens == 99
    assert codes(message) == ["total_mismatch"]
    _strict_raises(chunks, "total_mismatch", finish=True)
    consistent = [chunk(usage_metadata={"prompt_tokens": 10, "completion_tokens": 5})]
    assert sum(consistent).to_message().usage_metadata.total_tokens == 15
    assert sum(consistent).to_message().anomalies == []


def test_e58_null_inside_usage_never_raises() -> None:
    m = chunk(usage_metadata={"input_tokens": 1, "output_tokens": None}) + chunk(
        usage_metadata={"input_tokens": 1, "output_tokens": 2}
    )
    assert _usage(m) == {"input_tokens": 1, "output_tokens": 2}
    m = chunk(usage_metadata={"input_tokens": 1, "output_tokens": 2}) + chunk(
        usage_metadata={"input_tokens": None, "output_tokens": None}
    )
    assert _usage(m) == {"input_tokens": 1, "output_tokens": 2}


def test_e59_nested_details_merge_and_unknown_keys_kept() -> None:
    m = chunk(usage_metadata={"prompt_tokens_details": {"cached_tokens": 5}}) + chunk(
        usage_metadata={
            "completion_tokens_details": {"reasoning_tokens": 3},
            "cache_creation": {"ephemeral_1h_input_tokens": 7},
        }
    )
    assert m.usage_metadata.extra == {
        "prompt_tokens_details": {"cached_tokens": 5},
        "completion_tokens_details": {"reasoning_tokens": 3},
        "cache_creation": {"ephemeral_1h_input_tokens": 7},
    }
    m = m + chunk(
        usage_metadata={
            "prompt_tokens_details": {"audio_tokens": 1},
            "cache_creation": {"ephemeral_5m_input_tokens": 2},
        }
    )
    assert m.usage_metadata.extra["prompt_tokens_details"] == {
        "cached_tokens": 5,
        "audio_tokens": 1,
    }
    assert m.usage_metadata.extra["cache_creation"] == {
        "ephemeral_1h_input_tokens": 7,
        "ephemeral_5m_input_tokens": 2,
    }


# ---------------------------------------------------------------------------------------------
# F. Logprobs and token ids

TOKEN_A = {"token": "a", "logprob": -0.1, "bytes": [97], "top_logprobs": []}
TOKEN_B = {"token": "b", "logprob": -0.2, "bytes": [98], "top_logprobs": []}


def test_e60_logprobs_content_lists_concatenate() -> None:
    m = chunk(logprobs={"content": [TOKEN_A]}) + chunk(logprobs={"content": [TOKEN_B]})
    assert m.logprobs == {"content": [TOKEN_A, TOKEN_B]}


def test_e61_refusal_logprobs_concatenate_separately() -> None:
    m = chunk(logprobs={"content": [TOKEN_A], "refusal": None}) + chunk(
        logprobs={"content": None, "refusal": [TOKEN_B]}
    )
    m = m + chunk(logprobs={"refusal": [TOKEN_A], "content": [TOKEN_B]})
    assert m.logprobs == {"content": [TOKEN_A, TOKEN_B], "refusal": [TOKEN_B, TOKEN_A]}


def test_e62_null_logprobs_in_the_middle_never_reset() -> None:
    m = chunk(logprobs={"content": [TOKEN_A]}) + chunk(logprobs=None)
    m = m + chunk(logprobs={"content": [TOKEN_B]})
    assert m.logprobs == {"content": [TOKEN_A, TOKEN_B]}
    m = chunk(logprobs={"content": [TOKEN_A]}) + chunk(logprobs={"content": None})
    m = m + chunk(logprobs={"content": [TOKEN_B]})
    assert m.logprobs == {"content": [TOKEN_A, TOKEN_B]}


def test_e63_token_ids() -> None:
    m = chunk(completion_token_ids=[1, 2], prompt_token_ids=[1, 2]) + chunk(
        completion_token_ids=[3], prompt_token_ids=[9]
    )
    assert m.completion_token_ids == [1, 2, 3]
    assert m.prompt_token_ids == [1, 2]
    m = chunk(prompt_token_ids=[]) + chunk(prompt_token_ids=[9]) + chunk(prompt_token_ids=[7])
    assert m.prompt_token_ids == [9]


# ---------------------------------------------------------------------------------------------
# G. Reasoning, opaque payloads and unknown blocks


def test_e64_reasoning_never_present_stays_absent() -> None:
    m = chunk(content="a") + chunk(content="b")
    assert m.reasoning_content is None
    assert m.to_message().reasoning_content is None
    assert not any(p["part"] == "reasoning" for p in m.to_dict()["parts"])
    assert (chunk(reasoning_content="") + chunk(content="b")).reasoning_content is None


def _signature(data: str) -> Any:
    return fastmerge.OpaquePayload("anthropic", "signature", data)


def test_e65_signature_replaces_by_default_concat_on_request() -> None:
    reasoning = fastmerge.ReasoningPart
    m = chunk(parts=[reasoning(text="hmm", index=0)]) + chunk(
        parts=[reasoning(payload=_signature("SIG"), index=0)]
    )
    (part,) = m.parts
    assert (part.text, part.payload) == ("hmm", _signature("SIG"))
    assert m.reasoning_content == "hmm"
    chunks = [
        chunk(parts=[reasoning(text="hmm", index=0)]),
        chunk(parts=[reasoning(payload=_signature("A"), index=0)]),
        chunk(parts=[reasoning(payload=_signature("B"), index=0)]),
    ]
    assert sum(chunks).parts[0].payload == _signature("B")
    assert fastmerge.fold_chunks(chunks).parts[0].payload == _signature("B")
    concat = fastmerge.fold_chunks(chunks, signature_merge="concat")
    assert concat.parts[0].payload == _signature("AB")
    assert concat.parts[0].text == "hmm"
    # the fold keeps its option for later +
    more = concat + chunk(parts=[reasoning(payload=_signature("C"), index=0)])
    assert more.parts[0].payload == _signature("ABC")


def test_e66_redacted_thinking_payload_verbatim() -> None:
    payload = fastmerge.OpaquePayload("anthropic", "redacted_thinking", "OPAQUE")
    m = chunk(parts=[fastmerge.ReasoningPart(redacted=True, payload=payload, index=0)])
    m = m + chunk(content="answer")
    (part, text) = m.parts
    assert isinstance(part, fastmerge.ReasoningPart)
    assert part.redacted is True
    assert part.payload == payload
    assert part.payload.to_dict() == {
        "provider": "anthropic",
        "kind": "redacted_thinking",
        "data": "OPAQUE",
    }
    assert text.text == "answer"
    assert m.to_message().parts[0].payload == payload


def test_e67_unknown_and_server_blocks_kept_verbatim_in_order() -> None:
    part = fastmerge.ToolCallPart
    unknown = fastmerge.UnknownPart
    result_raw = {"type": "web_search_tool_result", "tool_use_id": "srv1", "content": [{"u": 1}]}
    future_raw = {"type": "some_future_block", "foo": 1}
    chunks = [
        chunk(parts=[part(id="srv1", type="server_tool_use", name="web_search", provider_index=0)]),
        chunk(parts=[part(type=None, arguments='{"q"', provider_index=0)]),
        chunk(parts=[part(type=None, arguments=':"x"}', provider_index=0)]),
        chunk(parts=[unknown(provider="anthropic", kind="web_search_tool_result", raw=result_raw)]),
        chunk(parts=[unknown(provider="anthropic", kind="some_future_block", raw=future_raw)]),
    ]
    m = sum(chunks)
    assert [type(p).__name__ for p in m.parts] == ["ToolCallPart", "UnknownPart", "UnknownPart"]
    (call,) = m.tool_calls
    assert (call.id, call.type, call.name) == ("srv1", "server_tool_use", "web_search")
    assert call.parsed_arguments() == {"q": "x"}
    assert m.parts[1].raw == result_raw and list(m.parts[1].raw) == list(result_raw)
    assert m.parts[2].raw == future_raw
    assert (m.parts[2].provider, m.parts[2].kind) == ("anthropic", "some_future_block")


def test_e68_citations_collect_on_the_text_part() -> None:
    text = fastmerge.TextPart
    m = (
        chunk(parts=[text(text="a", index=0)])
        + chunk(parts=[text(citations=[{"c": 1}], index=0)])
        + chunk(parts=[text(text="b", citations=[{"c": 2}], index=0)])
    )
    (part,) = m.parts
    assert (part.text, part.citations) == ("ab", [{"c": 1}, {"c": 2}])


def test_e69_gemini_thought_signature_chunk_level() -> None:
    signature = fastmerge.OpaquePayload("google", "thought_signature", "S")
    m = chunk(
        parts=[
            fastmerge.ReasoningPart(text="a"),
            fastmerge.ToolCallPart(id="g1", name="f", arguments={}, payload=signature),
        ]
    )
    reasoning, call = m.parts
    assert (type(reasoning).__name__, reasoning.text) == ("ReasoningPart", "a")
    assert (call.name, call.payload) == ("f", signature)
    assert m.to_message().parts[1].payload == signature
    assert summary(m.tool_calls) == [("g1", "f", "{}", 0)]
    # a signature-only empty part attaches to the preceding part; no empty part is created
    s2 = fastmerge.OpaquePayload("google", "thought_signature", "S2")
    m = chunk(parts=[fastmerge.ReasoningPart(text="a")]) + chunk(
        parts=[fastmerge.ReasoningPart(text="", payload=s2)]
    )
    assert m.parts == (fastmerge.ReasoningPart(text="a", payload=s2),)
    m = chunk(parts=[fastmerge.ToolCallPart(id="g1", name="f", arguments={})]) + chunk(
        parts=[fastmerge.ToolCallPart(type=None, arguments=None, payload=s2)]
    )
    (call,) = m.parts
    assert (call.id, call.name, call.arguments, call.payload) == ("g1", "f", {}, s2)
    # OpenAI-compat: extra_content.google.thought_signature in a metadata-only delta
    compat = calls_chunks(
        [tc(0, "c1", "f", "{}")],
        [{"index": 0, "extra_content": {"google": {"thought_signature": "S"}}}],
    )
    m = sum(compat)
    (call,) = m.parts
    assert summary(m.tool_calls) == [("c1", "f", "{}", 0)]
    assert call.extra == {"extra_content": {"google": {"thought_signature": "S"}}}
    assert m.to_message().parts[0].extra == call.extra


def test_e70_openrouter_reasoning_details_by_index_chunk_level() -> None:
    reasoning = fastmerge.ReasoningPart
    encrypted = fastmerge.OpaquePayload("openrouter", "reasoning.encrypted", "D1")
    chunks = [
        chunk(parts=[reasoning(text="thi", index=0)]),
        chunk(parts=[reasoning(payload=encrypted, index=1)]),
        chunk(parts=[reasoning(text="nk", index=0)]),
        chunk(parts=[reasoning(payload=_signature("S1"), index=0)]),
        chunk(parts=[reasoning(payload=_signature(""), index=0)]),  # empty never overwrites
        chunk(
            parts=[
                reasoning(
                    payload=fastmerge.OpaquePayload("openrouter", "reasoning.encrypted", "D2"),
                    index=1,
                )
            ]
        ),
    ]
    m = sum(chunks)
    first, second = m.parts
    assert (first.text, first.payload, first.index) == ("think", _signature("S1"), 0)
    assert second.text == ""
    assert second.payload == fastmerge.OpaquePayload("openrouter", "reasoning.encrypted", "D2")
    assert m.reasoning_content == "think"


def test_e71_refusal_separate_from_content() -> None:
    m = chunk(refusal="I ") + chunk(refusal="can't")
    assert m.refusal == "I can't"
    assert m.content == ""
    m = chunk(content="a", refusal="I ") + chunk(content="b", refusal="can't")
    assert (m.content, m.refusal) == ("ab", "I can't")


# ---------------------------------------------------------------------------------------------
# H. Metadata and ids


def test_e72_nested_metadata_deep_merge_last_wins() -> None:
    m = chunk(metadata={"a": {"x": 1}, "b": "k"}) + chunk(metadata={"a": {"y": 2}})
    assert m.metadata == {"a": {"x": 1, "y": 2}, "b": "k"}
    m = m + chunk(metadata={"b": "j", "a": {"x": 3}})
    assert m.metadata == {"a": {"x": 3, "y": 2}, "b": "j"}  # no string concatenation
    p = chunk(provider_metadata={"a": {"x": 1}, "b": "k"}) + chunk(
        provider_metadata={"a": {"y": 2}, "b": "z"}
    )
    assert p.provider_metadata == {"a": {"x": 1, "y": 2}, "b": "z"}


def test_e73_response_id_first_and_model_last_non_empty() -> None:
    m = sum(chunk(response_id=i) for i in ["", "chatcmpl-1", "chatcmpl-1"])
    assert m.response_id == "chatcmpl-1"
    m = sum(chunk(response_model=x) for x in ["router", "gpt-4.1-nano", "gpt-4.1-nano", ""])
    assert m.response_model == "gpt-4.1-nano"


def test_e74_per_chunk_noise_never_accumulates() -> None:
    m = chunk(provider_metadata={"obfuscation": "x1"}) + chunk(
        provider_metadata={"obfuscation": "y2"}
    )
    assert m.provider_metadata == {"obfuscation": "y2"}
    m = chunk(metadata={"obfuscation": "x1"}) + chunk(metadata={"obfuscation": "y2"})
    assert m.metadata == {"obfuscation": "y2"}


# E75 (n > 1, choices keyed by index) is skipped: a chunk holds one choice; splitting a
# provider chunk by choice and never gluing choices is the aggregator's job.


def test_e76_delta_before_its_block_start_chunk_level() -> None:
    # a text delta at block 0 with no start: the chunk merge creates the implicit text part
    # (the delta_before_start flag needs the event stream, so the adapter records it)
    m = chunk(parts=[fastmerge.TextPart(text="a", index=0)]) + chunk(
        parts=[fastmerge.TextPart(text="b", index=0)]
    )
    assert m.parts == (fastmerge.TextPart(text="ab", index=0),)
    assert m.anomalies == []


def test_e77_mismatched_kind_at_a_block_chunk_level() -> None:
    # spec §3: a kind change at the same part index starts a new part and records kind_change
    chunks = [
        chunk(parts=[fastmerge.TextPart(text="a", index=0)]),
        chunk(parts=[fastmerge.ReasoningPart(text="b", index=0)]),
    ]
    m = sum(chunks)
    assert [(type(p).__name__, p.text) for p in m.parts] == [
        ("TextPart", "a"),
        ("ReasoningPart", "b"),
    ]
    assert codes(m) == ["kind_change"]
    _strict_raises(chunks, "kind_change")
