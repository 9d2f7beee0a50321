"""Generated Gemini streams (parts of every kind, Vertex ``partialArgs``, a wrong-typed value now
and then): the engine and the twin give the same messages byte for byte, or fail with the same
text."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from _support.gemini import P
from conftest import AGGREGATES, BACKENDS
from hypothesis import given
from hypothesis import strategies as st

from fastmerge.errors import AnomalyError, EventError

# ---------------------------------------------------------------------------------------------
# Differential: generated Gemini streams, the engine and the twin byte for byte


_names = st.sampled_from(["f", "g", "", None, "null"])
_texts = st.one_of(st.sampled_from(["", "a", "é\n", ' "q" ', "\x01\\"]), st.text(max_size=4))
# a wrong-typed value now and then: the engine and the twin must fail with the same text
_hostile = st.sampled_from([5, 1.5, True, None, "x", [], {}, [1], {"a": 1}])
_sigs = st.sampled_from([None, "S1", "S2", ""])
_paths = st.one_of(
    st.sampled_from(["$.a", "$.a.b", "$.l[0]", "$.l[1]", "$.l[0].x", "$['k k']", "$.b", "$"]),
    st.sampled_from(["$.a[x]", "$[0]", "$.a.", "$.é[2]", '$["q"].r', "$.a[99999999999999999999]"]),
)
_numbers = st.one_of(
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
)
_values = st.one_of(
    st.fixed_dictionaries({"stringValue": _texts}),
    st.fixed_dictionaries({"numberValue": _numbers}),
    st.fixed_dictionaries({"boolValue": st.booleans()}),
    st.fixed_dictionaries({"nullValue": st.just("NULL_VALUE")}),
    st.just({}),
)


@st.composite
def _partial_arg(draw: Any) -> dict[str, Any]:
    arg = {"jsonPath": draw(_paths), **draw(_values)}
    if draw(st.booleans()):
        arg["willContinue"] = True
    return arg


@st.composite
def _part(draw: Any) -> dict[str, Any]:
    kind = draw(st.sampled_from(["text", "thought", "call", "partial", "unknown", "empty"]))
    part: dict[str, Any]
    if kind == "text":
        part = {"text": draw(_texts)}
    elif kind == "thought":
        part = {"text": draw(_texts), "thought": True}
    elif kind == "call":
        fc: dict[str, Any] = {}
        name = draw(_names)
        if name is not None:
            fc["name"] = name
        if draw(st.booleans()):
            fc["args"] = draw(st.sampled_from([{}, {"a": 1}, {"b": {"c": [1]}}]))
        if draw(st.booleans()):
            fc["id"] = draw(st.sampled_from(["c1", "c2"]))
        if draw(st.booleans()):
            fc["willContinue"] = True
        if draw(st.booleans()):
            fc["extraField"] = 1
        part = {"functionCall": fc}
    elif kind == "partial":
        fc = {"partialArgs": draw(st.lists(_partial_arg(), max_size=3))}
        if draw(st.booleans()):
            fc["willContinue"] = True
        part = {"functionCall": fc}
    elif kind == "unknown":
        part = {"executableCode": {"code": draw(_texts)}}
    else:
        part = {}
    signature = draw(_sigs)
    if signature is not None:
        part["thoughtSignature"] = signature
    if part and draw(st.integers(0, 15)) == 0:
        _spoil(draw, part)
    return part


def _spoil(draw: Any, value: dict[str, Any]) -> None:
    """Replace one value somewhere in ``value`` with a wrong-typed one."""
    key = draw(st.sampled_from(sorted(value)))
    inner = value[key]
    if isinstance(inner, dict) and inner and draw(st.booleans()):
        _spoil(draw, inner)
    elif isinstance(inner, list) and inner and isinstance(inner[0], dict) and draw(st.booleans()):
        _spoil(draw, inner[0])
    else:
        value[key] = draw(_hostile)


@st.composite
def _event(draw: Any) -> dict[str, Any]:
    event: dict[str, Any] = {}
    candidates = []
    for _ in range(draw(st.integers(0, 2))):
        candidate: dict[str, Any] = {"content": {"parts": draw(st.lists(_part(), max_size=3))}}
        if draw(st.booleans()):
            candidate["content"]["role"] = draw(st.sampled_from(["model", "user"]))
        if draw(st.booleans()):
            candidate["index"] = draw(st.integers(0, 2))
        if draw(st.integers(0, 4)) == 0:
            candidate["finishReason"] = draw(st.sampled_from(["STOP", "MAX_TOKENS", ""]))
        if draw(st.integers(0, 4)) == 0:
            candidate["groundingMetadata"] = {"q": draw(_texts)}
        if draw(st.integers(0, 5)) == 0:
            candidate["logprobsResult"] = {"chosenCandidates": [draw(_texts)]}
        if draw(st.integers(0, 4)) == 0:
            candidate["citationMetadata"] = draw(
                st.sampled_from([{"citationSources": [{"uri": "a"}]}, {}, [1], {"x": 1}])
            )
        candidates.append(candidate)
    if candidates or draw(st.booleans()):
        event["candidates"] = candidates
    if draw(st.booleans()):
        event["usageMetadata"] = draw(
            st.dictionaries(
                st.sampled_from(
                    [
                        "promptTokenCount",
                        "candidatesTokenCount",
                        "totalTokenCount",
                        "thoughtsTokenCount",
                        "toolUsePromptTokenCount",
                        "cachedContentTokenCount",
                        "trafficType",
                    ]
                ),
                st.one_of(st.integers(0, 100), st.none(), st.just("x")),
            )
        )
    if draw(st.integers(0, 6)) == 0:
        event["error"] = {"code": 500}
    if draw(st.integers(0, 6)) == 0:
        event["promptFeedback"] = {"blockReason": draw(st.sampled_from(["SAFETY", ""]))}
    if draw(st.booleans()):
        event["responseId"] = "r"
        event["modelVersion"] = draw(st.sampled_from(["m1", "m2"]))
    if event and draw(st.integers(0, 25)) == 0:
        _spoil(draw, event)
    return event


def _run(module: Any, events: list[dict[str, Any]], strict: bool) -> Any:
    try:
        messages = module.aggregate_choices(events, P, strict=strict)
    except (EventError, AnomalyError) as exc:
        return (type(exc).__name__, str(exc))
    return json.dumps([m.to_dict() for m in messages], sort_keys=True)


@pytest.mark.differential
@given(events=st.lists(_event(), max_size=6), strict=st.booleans())
def test_engine_equals_twin_on_generated_streams(
    events: list[dict[str, Any]], strict: bool
) -> None:
    if len(BACKENDS) < 2:
        pytest.skip("one backend under test")
    before = copy.deepcopy(events)
    results = [_run(AGGREGATES[name], events, strict) for name in BACKENDS]
    assert results[0] == results[1]
    assert events == before
    if isinstance(results[0], str):
        for message in AGGREGATES[BACKENDS[0]].aggregate_choices(events, P, strict=strict):
            assert type(message).from_dict(message.to_dict()) == message
