"""The ``"gemini"`` adapter's function calls (both backends): whole calls with ids and
signatures, two calls in one chunk, and calls streamed as Vertex ``partialArgs`` (JSON paths
that do not fit, streams cut mid-arguments, snapshots)."""

from __future__ import annotations

import json

from _support.gemini import (
    P,
    agg,
    call,
    chunk,
    codes,
    partial,
    parts,
    rendered_parts,
    sig,
    streamed,
    text,
)

import fastmerge

# ---------------------------------------------------------------------------------------------
# Function calls


def test_function_call_with_id_and_signature() -> None:
    signed = {
        "functionCall": {"id": "c1", "name": "get", "args": {"q": "x"}},
        "thoughtSignature": "S",
    }
    m = agg([chunk(signed, finish="STOP")])
    (part,) = parts(m)
    assert (part["id"], part["name"], part["arguments"]) == ("c1", "get", {"q": "x"})
    assert part["payload"] == sig("S")
    assert codes(m) == []
    assert rendered_parts(m) == [
        {"functionCall": {"id": "c1", "name": "get", "args": {"q": "x"}}, "thoughtSignature": "S"}
    ]


def test_two_function_calls_in_one_chunk() -> None:
    m = agg(
        [
            chunk(
                {"functionCall": {"name": "f", "args": {"a": 1}}, "thoughtSignature": "S"},
                call("f", args={"a": 2}),
                finish="STOP",
            )
        ]
    )
    calls = parts(m)
    assert [(c["name"], c["arguments"], c["provider_index"]) for c in calls] == [
        ("f", {"a": 1}, 0),
        ("f", {"a": 2}, 1),
    ]
    assert calls[0]["payload"] == sig("S") and calls[1]["payload"] is None
    assert codes(m) == ["synthetic_id", "synthetic_id"]
    assert rendered_parts(m) == [
        {"functionCall": {"name": "f", "args": {"a": 1}}, "thoughtSignature": "S"},
        {"functionCall": {"name": "f", "args": {"a": 2}}},
    ]


def test_function_call_without_args_renders_without_args() -> None:
    m = agg([chunk(call("ping")), chunk(text(""), finish="STOP")])
    assert parts(m)[0]["arguments"] == ""
    assert rendered_parts(m) == [{"functionCall": {"name": "ping"}}]


def test_other_function_call_fields_are_extra() -> None:
    m = agg([chunk(call("f", args={}, scheduling="WHEN_IDLE"), finish="STOP")])
    assert parts(m)[0]["extra"] == {"scheduling": "WHEN_IDLE"}
    assert rendered_parts(m) == [
        {"functionCall": {"name": "f", "args": {}, "scheduling": "WHEN_IDLE"}}
    ]


# ---------------------------------------------------------------------------------------------
# Vertex streamed arguments


def test_partial_args_are_written_as_json_text() -> None:
    m = agg(
        streamed(
            partial("$.loc", stringValue="San "),
            partial("$.loc", stringValue='Fran"cisco\n'),
            partial("$.loc", more=False, stringValue=""),
            partial("$.n", more=False, numberValue=2.5),
            partial("$.small", more=False, numberValue=0.00001),
            partial("$.k", more=False, numberValue=3),
            partial("$.b", more=False, boolValue=True),
            partial("$.z", more=False, nullValue="NULL_VALUE"),
            partial("$.list[0].x", more=False, stringValue="é"),
            partial("$.list[1]", more=False, numberValue=1e20),
            partial("$['odd key']", more=False, boolValue=False),
        )
    )
    (part,) = parts(m)
    assert part["arguments"] == (
        '{"loc":"San Fran\\"cisco\\n","n":2.5,"small":1e-05,"k":3,"b":true,"z":null,'
        '"list":[{"x":"é"},1e+20],"odd key":false}'
    )
    assert part["payload"] == sig("S")
    assert m.status == "complete" and codes(m) == ["synthetic_id"]
    assert rendered_parts(m)[0]["functionCall"]["args"] == json.loads(part["arguments"])


def test_two_streamed_calls_in_a_row() -> None:
    events = streamed(partial("$.a", more=False, stringValue="1"), finish=False)
    events.append(chunk(call(None)))
    events.append(chunk(call("g", willContinue=True)))
    events.append(
        chunk({"functionCall": {"partialArgs": [partial("$.b", more=False, boolValue=False)]}})
    )
    events.append(chunk(text(""), finish="STOP"))
    m = agg(events)
    assert [(p["name"], p["arguments"]) for p in parts(m)] == [
        ("f", '{"a":"1"}'),
        ("g", '{"b":false}'),
    ]
    assert codes(m) == ["synthetic_id", "synthetic_id"]


def test_stream_cut_mid_arguments_is_truncated_and_incomplete() -> None:
    m = agg(streamed(partial("$.loc", stringValue="Bos"), finish=False))
    assert m.status == "incomplete"
    assert parts(m)[0]["arguments"] == '{"loc":"Bos'  # raw, as streamed
    assert m.to_dict()["anomalies"][0] == {
        "code": "truncated",
        "detail": "call 'f': the stream ended before its streamed arguments did",
        "tool_call": {"name": "f", "provider_index": 0},
    }


def test_finish_with_a_streamed_call_open_is_truncated() -> None:
    events = streamed(partial("$.loc", stringValue="Bos"), finish=False)
    events.append(chunk(finish="MAX_TOKENS"))
    m = agg(events)
    assert m.status == "complete"
    assert codes(m)[0] == "truncated"
    assert parts(m)[0]["arguments"] == '{"loc":"Bos'


def test_another_part_ends_an_open_streamed_call() -> None:
    events = streamed(partial("$.a", stringValue="x"), finish=False)
    events.append(chunk(text("done"), finish="STOP"))
    m = agg(events)
    assert [p["part"] for p in parts(m)] == ["tool_call", "text"]
    assert parts(m)[0]["arguments"] == '{"a":"x"}'


def test_partial_args_before_any_call() -> None:
    m = agg(
        [
            chunk({"functionCall": {"partialArgs": [partial("$.a", more=False, stringValue="x")]}}),
            chunk(text(""), finish="STOP"),
        ]
    )
    assert codes(m) == ["delta_before_start"]
    assert m.to_dict()["anomalies"][0]["detail"] == (
        "candidates[0].content.parts[0].functionCall: arguments without a call; kept on a call "
        "without a name"
    )
    assert parts(m)[0]["arguments"] == '{"a":"x"}'


def test_a_json_path_that_skips_an_array_item() -> None:
    m = agg(
        streamed(
            partial("$.l[0]", more=False, numberValue=1),
            partial("$.l[2]", more=False, numberValue=3),
        )
    )
    assert parts(m)[0]["arguments"] == '{"l":[1,3]}'
    assert m.to_dict()["anomalies"][0] == {
        "code": "mismatched_delta",
        "detail": "call 'f': jsonPath '$.l[2]' is not the next item (1) of its array",
    }


def test_snapshot_shows_the_arguments_so_far() -> None:
    a = fastmerge.Aggregator(P)
    for event in streamed(partial("$.loc", stringValue="Bos"), finish=False):
        a.add(event)
    assert a.snapshot().to_dict()["parts"][0]["arguments"] == '{"loc":"Bos'
    assert a.snapshot().status == "incomplete"
