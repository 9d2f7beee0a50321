"""The ``"openai-chat"`` adapter on random streams of plausible and hostile chunks: the twin
and the engine give the same message (or the same error) and leave the input alone."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from _support.openai_chat import (
    P,
    assert_round_trip,
)
from conftest import AGGREGATES, BACKENDS
from hypothesis import given
from hypothesis import strategies as st

from fastmerge.render import to_provider

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
