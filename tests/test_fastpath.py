"""The Rust engine's typed fast path for openai-chat chunks read from bytes, against its
generic path (the hidden ``FASTMERGE_GENERIC_EVENTS`` switch) and against the twin, on
hypothesis streams of chunks near the hot shape: the same messages, anomalies and errors.
tests/engine_fastpath.rs does the same on the corpus, event by event.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from conftest import AGGREGATES, outcome
from hypothesis import given
from hypothesis import strategies as st

_text = st.none() | st.sampled_from(["", " ", "null", "Hi", "é\n", '"q"']) | st.text(max_size=4)
# mostly the hot shape's values, sometimes a value only the generic path reads
_odd = st.sampled_from([1, 1.5, -0.0, [], {}, "\ud800", 2**64])


def _opt(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A value, or a marker for the key being left out."""
    return st.just(...) | value


def _dict(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({k: _opt(v) for k, v in fields.items()}).map(
        lambda d: {k: v for k, v in d.items() if v is not ...}
    )


_calls = st.lists(
    st.fixed_dictionaries(
        {"index": st.sampled_from([0, 1])},
        optional={
            "id": st.none() | st.sampled_from(["call_1", "call_2", ""]),
            "type": st.none() | st.just("function"),
            "function": _dict(name=st.none() | st.just("f"), arguments=_text),
        },
    ),
    max_size=2,
)
_delta = _dict(
    role=_text | _odd,
    content=_text | _odd,
    reasoning_content=_text,
    reasoning=_text,
    refusal=_text,
    tool_calls=_calls,
)
_choice = _dict(
    index=st.sampled_from([0, 0, 1]) | _odd,
    delta=st.none() | _delta,
    finish_reason=st.none() | st.sampled_from(["stop", "", "tool_calls"]),
    logprobs=st.none() | st.just({"content": []}),
    token_ids=st.none() | st.just([1]),
)
_chunk = _dict(
    id=st.none() | st.sampled_from(["c", "c", "d", ""]),
    object=st.none() | st.sampled_from(["chat.completion.chunk", ""]),
    created=st.none() | st.sampled_from([1, 1, 2]) | _odd,
    model=st.none() | st.sampled_from(["m", "n"]),
    system_fingerprint=st.none() | st.just("fp"),
    service_tier=st.none() | st.just("default"),
    choices=st.lists(_choice, min_size=1, max_size=2),
    usage=st.none() | st.just({"prompt_tokens": 1}),
    obfuscation=st.just("zz"),
    x_other=st.just(1),
)


def _stream(chunks: list[dict[str, Any]], ascii_only: bool) -> bytes:
    lines = [
        json.dumps(c, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass") for c in chunks
    ]
    return b"\n".join(lines) + b"\n"


def _run(backend: str, data: bytes, strict: bool) -> tuple[Any, ...]:
    def go() -> bytes:
        agg = AGGREGATES[backend].Aggregator("openai-chat", strict=strict)
        agg.feed(data)
        return orjson.dumps([m.to_dict() for m in agg.finish_choices()])

    return outcome(go)


@pytest.mark.differential
@given(st.lists(_chunk, min_size=1, max_size=8), st.booleans(), st.booleans())
def test_fast_path_equals_generic_path_and_twin(
    both: Any,
    monkeypatch: pytest.MonkeyPatch,
    chunks: list[dict[str, Any]],
    ascii_only: bool,
    strict: bool,
) -> None:
    data = _stream(chunks, ascii_only)
    fast = _run("rust", data, strict)
    with monkeypatch.context() as patch:
        patch.setenv("FASTMERGE_GENERIC_EVENTS", "1")
        generic = _run("rust", data, strict)
    assert fast == generic
    assert fast == _run("python", data, strict)
