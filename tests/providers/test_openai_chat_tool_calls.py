"""The ``"openai-chat"`` adapter's tool calls (both backends): interleaved parallel calls,
index collisions, the fragment quirks of compatible servers and gateways, custom tools, legacy
function calls, and streams cut mid call."""

from __future__ import annotations

import pytest
from _support.openai_chat import (
    P,
    anomalies,
    calls,
    ch,
    chunk,
    tc,
)

import fastmerge
from fastmerge.render import to_provider

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
