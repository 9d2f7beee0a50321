"""The ``"anthropic"`` adapter on random event sequences, hostile shapes included: both
backends give the same messages (or the same error) and leave the events alone."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from _support.anthropic import (
    P,
    start,
)
from conftest import AGGREGATES, outcome
from hypothesis import given
from hypothesis import strategies as st

# ---------------------------------------------------------------------------------------------
# Differential: random event sequences, hostile shapes included, on both backends

_INDEX = st.sampled_from([0, 0, 0, 1, 1, 1, 2, 2, -1, 0, 1, 2, "0", None, True, 1.5])
_STR = st.sampled_from(["", "a", "é👋", '{"q": ', "1}", "a", "b", "", "x", None, 3, {}])
_BLOCK = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _STR),
    st.builds(
        lambda t, c: {"type": "text", "text": t, "citations": c, "x": 1},
        _STR,
        st.sampled_from([[], [{"u": 1}], None]),
    ),
    st.builds(lambda t, s: {"type": "thinking", "thinking": t, "signature": s}, _STR, _STR),
    st.builds(lambda d: {"type": "redacted_thinking", "data": d}, _STR),
    st.builds(
        lambda i, n, a: {"type": "tool_use", "id": i, "name": n, "input": a},
        st.sampled_from(["t1", "t2", None, ""]),
        st.sampled_from(["f", "g", None]),
        st.sampled_from([{}, {"a": 1}, "", '{"b"', None]),
    ),
    st.builds(
        lambda c: {"type": "server_tool_use", "id": "s", "input": c}, st.sampled_from([{}, None])
    ),
    st.builds(lambda c: {"type": "compaction", "content": c}, _STR),
    st.just("text"),
)
_DELTA = st.one_of(
    st.builds(lambda t: {"type": "text_delta", "text": t}, _STR),
    st.builds(lambda t: {"type": "thinking_delta", "thinking": t}, _STR),
    st.builds(lambda t: {"type": "signature_delta", "signature": t}, _STR),
    st.builds(lambda t: {"type": "input_json_delta", "partial_json": t}, _STR),
    st.builds(lambda t: {"type": "citations_delta", "citation": t}, _STR),
    st.builds(lambda t: {"type": "compaction_delta", "content": t}, _STR),
    st.builds(lambda t: {"type": "odd_delta", "v": t}, _STR),
    st.just({"text": "x"}),
)
_EVENT = st.one_of(
    st.builds(
        lambda i, b: {"type": "content_block_start", "index": i, "content_block": b}, _INDEX, _BLOCK
    ),
    st.builds(lambda i, d: {"type": "content_block_delta", "index": i, "delta": d}, _INDEX, _DELTA),
    st.builds(lambda i: {"type": "content_block_stop", "index": i}, _INDEX),
    st.builds(
        lambda r, u: {
            "type": "message_delta",
            "delta": {"stop_reason": r, "stop_sequence": "s"},
            "usage": u,
        },
        st.sampled_from(["end_turn", "max_tokens", None]),
        st.sampled_from(
            [{"output_tokens": 3}, {"input_tokens": 0, "cache_read_input_tokens": 2}, None, []]
        ),
    ),
    st.just({"type": "message_stop"}),
    st.just({"type": "ping"}),
    st.just({"type": "error", "error": {"type": "overloaded_error"}}),
    st.just(start({"input_tokens": 4, "output_tokens": 1, "cache_creation_input_tokens": 1})),
    st.just({"type": 7}),
)


@pytest.mark.differential
@given(events=st.lists(_EVENT, max_size=14), strict=st.booleans())
def test_random_streams_differential(both: Any, events: list[dict[str, Any]], strict: bool) -> None:
    def run(backend: str) -> tuple[Any, ...]:
        def go() -> bytes:
            aggregator = AGGREGATES[backend].Aggregator(P, strict=strict)
            for event in events:
                aggregator.add(event)
            return orjson.dumps([m.to_dict() for m in aggregator.finish_choices()])

        return outcome(go)

    before = copy.deepcopy(events)
    assert run("rust") == run("python")
    assert events == before
