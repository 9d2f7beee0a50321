"""The aggregator's framework, whatever the provider: event reading (dicts, JSON text, SSE,
JSON lines, JSON arrays, bytes split anywhere), its errors, detection, the options, status and
the life cycle. Every test runs on both backends; the differential ones compare them directly.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from _support import values as _values
from conftest import AGGREGATES, BACKENDS, outcome
from hypothesis import given
from hypothesis import strategies as st

import fastmerge
from fastmerge.errors import AggregatorClosedError, EventError

# A small OpenAI Chat stream: role, two text deltas, finish, usage.
CHAT = [
    {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}],
    },
    {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"content": "Hé"}}]},
    {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"content": "llo 👋"}}]},
    {
        "id": "c1",
        "model": "m",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
    },
    {
        "id": "c1",
        "model": "m",
        "choices": [],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    },
]


def sse(events: list[dict[str, Any]], crlf: bool = False) -> bytes:
    nl = "\r\n" if crlf else "\n"
    out = [": a comment" + nl]
    for event in events:
        out.append(f"event: chunk{nl}data: {json.dumps(event, ensure_ascii=False)}{nl}{nl}")
    out.append(f"data: [DONE]{nl}{nl}")
    return "".join(out).encode("utf-8")


def jsonl(events: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(e, ensure_ascii=False).encode() + b"\n" for e in events)


def dump(message: Any) -> bytes:
    return orjson.dumps(message.to_dict(), option=orjson.OPT_SORT_KEYS)


def test_dicts_text_and_transports_agree() -> None:
    reference = dump(fastmerge.aggregate(CHAT, "openai-chat"))
    message = fastmerge.aggregate(CHAT)
    assert message.content == "Héllo 👋"
    assert message.status == "complete"
    assert message.provider_metadata["provider"] == "openai-chat"
    inputs: list[Any] = [
        [json.dumps(e) for e in CHAT],  # JSON text, one event per item
        [json.dumps(e).encode() for e in CHAT],  # JSON bytes
        sse(CHAT),  # a whole SSE stream
        sse(CHAT, crlf=True).decode("utf-8"),  # as text, with CRLF lines
        jsonl(CHAT),  # JSON lines
        b"[" + b",\n".join(json.dumps(e).encode() for e in CHAT) + b"]",  # a JSON array
        b"\xef\xbb\xbf" + jsonl(CHAT),  # a byte order mark
    ]
    for events in inputs:
        assert dump(fastmerge.aggregate(events)) == reference
    # SSE lines as an HTTP client's iter_lines() yields them (no terminators)
    lines = sse(CHAT).decode().split("\n")
    assert dump(fastmerge.aggregate(lines)) == reference


@pytest.mark.parametrize("kind", ["sse", "jsonl", "array"])
def test_feed_split_at_every_position(kind: str) -> None:
    data = {
        "sse": sse(CHAT),
        "jsonl": jsonl(CHAT),
        "array": b"[" + b",".join(json.dumps(e, ensure_ascii=False).encode() for e in CHAT) + b"]",
    }[kind]
    reference = dump(fastmerge.aggregate(data))
    for cut in range(1, len(data)):  # includes cuts inside the UTF-8 sequences of é and 👋
        agg = fastmerge.Aggregator()
        agg.feed(data[:cut])
        agg.feed(data[cut:])
        assert dump(agg.finish()) == reference, cut


def test_feed_byte_by_byte() -> None:
    data = sse(CHAT, crlf=True)
    agg = fastmerge.Aggregator()
    for i in range(len(data)):
        agg.feed(data[i : i + 1])
    assert dump(agg.finish()) == dump(fastmerge.aggregate(CHAT))


def test_sse_fields_and_end_of_stream() -> None:
    body = (
        b"retry: 100\nid: 7\n:keepalive\n\n"
        b"data: " + json.dumps(CHAT[0]).encode() + b"\n\n"
        b'data: {"id":"c1","choices":[{"index":0,\n'  # one event over two data lines
        b'data: "delta":{"content":"x"}}]}\n\n'
        b"data: " + json.dumps(CHAT[3]).encode()  # the last event: no newline, no blank line
    )
    message = fastmerge.aggregate(body)
    assert message.content == "x"
    assert message.status == "complete"


def test_empty_stream_is_an_error() -> None:
    # no event is an error, not an empty message (spec §6)
    for events, detail in (
        ([], "the input is empty"),
        (b"", "the input is empty"),
        ("", "the input is empty"),
        (b"\n\n", "the input is empty"),
        ([b": comment"], "no JSON object, JSON array or SSE data: line in the input"),
    ):
        with pytest.raises(EventError) as info:
            fastmerge.aggregate(events)
        assert (info.value.event, info.value.detail) == (0, detail)
    # before any event, a snapshot is the empty, incomplete message
    message = fastmerge.Aggregator().snapshot()
    assert message.status == "incomplete"
    assert message.parts == ()
    assert message.choice_index == 0
    assert message.provider_metadata == {}


def test_stream_without_terminal_signal_is_incomplete() -> None:
    message = fastmerge.aggregate(CHAT[:3])
    assert message.status == "incomplete"
    assert message.content == "Héllo 👋"


def test_snapshot_then_finish() -> None:
    agg = fastmerge.Aggregator("openai-chat")
    agg.add(CHAT[0])
    agg.add(CHAT[1])
    first = agg.snapshot()
    assert first.content == "Hé" and first.status == "incomplete"
    for event in CHAT[2:]:
        agg.add(event)
    assert agg.snapshot().content == "Héllo 👋"
    assert first.content == "Hé"  # an earlier snapshot is a value
    final = agg.finish()
    assert final.status == "complete"
    assert agg.finish() == final  # finish is idempotent
    assert agg.finish_choices() == [final]
    assert agg.snapshot() == final
    with pytest.raises(AggregatorClosedError, match="finish\\(\\) was called"):
        agg.add(CHAT[0])
    with pytest.raises(AggregatorClosedError):
        agg.feed(b"")


def test_provider_property_and_repr() -> None:
    agg = fastmerge.Aggregator()
    assert agg.provider is None
    agg.add(CHAT[0])
    assert agg.provider == "openai-chat"
    assert repr(agg) == "<Aggregator provider='openai-chat'>"


def test_sdk_objects_are_read_through_to_dict_or_model_dump() -> None:
    class ToDict:
        def __init__(self, d: dict[str, Any]) -> None:
            self.d = d

        def to_dict(self) -> dict[str, Any]:
            return self.d

    class Dump:
        def __init__(self, d: dict[str, Any]) -> None:
            self.d = d

        def model_dump(self, **kwargs: Any) -> dict[str, Any]:
            assert kwargs == {"mode": "json", "by_alias": True, "exclude_none": True}
            return self.d

    events = [ToDict(CHAT[0]), Dump(CHAT[1]), *CHAT[2:]]
    assert dump(fastmerge.aggregate(events)) == dump(fastmerge.aggregate(CHAT))


def test_inputs_are_not_mutated() -> None:
    events = json.loads(json.dumps(CHAT))
    fastmerge.aggregate(events)
    assert events == CHAT


# ---------------------------------------------------------------------------------------------
# Errors: the same class and message on both backends


def _error(events: Any, provider: str = "auto") -> tuple[type, str]:
    # strict: an unreadable event raises (not strict, it is an anomaly: test_edges_events.py)
    with pytest.raises(Exception) as info:
        fastmerge.aggregate(events, provider, strict=True)
    return type(info.value), str(info.value)


class Weird:
    pass


@pytest.mark.parametrize(
    ("events", "message"),
    [
        ([[1]], "event 1: an event must be a JSON object, not array"),
        ([CHAT[0], 5], "event 2: an event must be a JSON object, not number"),
        ([{"choices": {1}}], "event 1: set is not a JSON value"),
        ([{"choices": [], 1: 2}], "event 1: object keys must be strings, not int"),
        (
            [{"choices": [], "x": "\ud800"}],
            "event 1: a string with a lone surrogate is not JSON text",
        ),
        ([{"x": Weird()}], "event 1: Weird is not a JSON value"),
        ([{"x": 10**400}], "event 1: an integer too large for a float is not a JSON number"),
        (["{not json"], "event 1: not valid JSON"),
        (["[1, 2]"], "event 1: an event must be a JSON object, not number"),
        ([b'{"a": NaN}'], "event 1: not valid JSON"),
        ([b'{"a": 1e400}'], "event 1: not valid JSON"),
        ([b'{"a": "\\ud800"}'], "event 1: not valid JSON"),
        # a value a repeated key replaces is read all the same
        ([b'{"a": "\\ud800", "a": 1}'], "event 1: not valid JSON"),
        ([b'{"a": [{"b": "\\udc00", "b": 2}], "c": 1}'], "event 1: not valid JSON"),
        ([b'{"a": ' + b"[" * 100 + b"]" * 100 + b', "a": 1}'], "event 1: not valid JSON"),
        ([b'{"a": 1e400, "a": 1}'], "event 1: not valid JSON"),
        ([b'{"a": "\xff"}'], "event 1: not valid JSON"),
        ([b'{"a": 1} x'], "event 1: not valid JSON"),
        (b'data: {"a": 1\n\n', "event 1: not valid JSON"),
        (b"data: [1]\n\n", "event 1: an event must be a JSON object, not array"),
        (b'{"choices": []}\n7\n', "event 2: an event must be a JSON object, not number"),
        (
            [{"hello": 1, "world": 2}],
            "event 1: cannot tell the provider from this event (keys: 'hello', 'world'); "
            "pass provider= one of 'openai-chat', 'openai-responses', 'anthropic', 'gemini', "
            "'bedrock-converse', 'ollama'",
        ),
    ],
)
def test_event_errors(events: Any, message: str) -> None:
    kind, text = _error(events)
    assert kind is EventError
    assert text == message


def test_depth_limit() -> None:
    deep: Any = "x"
    for _ in range(100):
        deep = [deep]
    ok = {"choices": [], "deep": deep}  # 101 levels with the event itself: one too many
    assert _error([ok]) == (EventError, "event 1: nested deeper than 100 levels")
    assert _error([json.dumps(ok)]) == (EventError, "event 1: not valid JSON")
    fine: Any = "x"
    for _ in range(99):
        fine = [fine]
    fastmerge.aggregate([{"choices": [], "deep": fine}])  # exactly 100 levels


def test_big_ints_read_as_floats() -> None:
    agg = fastmerge.Aggregator("openai-chat")
    agg.add({"choices": [], "usage": {"prompt_tokens": 2**64, "completion_tokens": 1}})
    assert agg.finish().usage_metadata.input_tokens == float(2**64)
    text = fastmerge.aggregate(
        ['{"choices": [], "usage": {"prompt_tokens": 18446744073709551616}}'], "openai-chat"
    )
    assert text.usage_metadata.input_tokens == float(2**64)


def test_argument_errors() -> None:
    with pytest.raises(TypeError, match="provider must be a str, not int"):
        fastmerge.Aggregator(1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown provider 'openai'; expected one of 'auto', "):
        fastmerge.Aggregator("openai")
    with pytest.raises(TypeError, match="strict must be a bool"):
        fastmerge.Aggregator(strict=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown usage 'add'"):
        fastmerge.Aggregator(usage="add")
    with pytest.raises(TypeError):
        fastmerge.Aggregator().feed(5)  # type: ignore[arg-type]


def test_a_bad_transport_line_in_strict_mode_closes_the_aggregator() -> None:
    agg = fastmerge.Aggregator(strict=True)
    with pytest.raises(EventError, match="event 2: not valid JSON"):
        agg.feed(jsonl(CHAT[:1]) + b"oops\n")
    with pytest.raises(AggregatorClosedError, match="event 2 could not be read"):
        agg.feed(b"")


def test_a_bad_json_item_leaves_the_aggregator_usable() -> None:
    agg = fastmerge.Aggregator()
    agg.add(CHAT[0])
    agg.add("{")  # skipped, and said (spec §8)
    for event in CHAT[1:]:
        agg.add(event)
    message = agg.finish()
    assert message.content == "Héllo 👋"
    assert message.anomalies == [{"code": "unreadable_event", "detail": "event 2: not valid JSON"}]


# ---------------------------------------------------------------------------------------------
# Differential: the transports on random splits and random bytes


def _run(backend: str, pieces: list[bytes]) -> tuple[Any, ...]:
    def go() -> bytes:
        agg = AGGREGATES[backend].Aggregator()
        for piece in pieces:
            agg.feed(piece)
        return orjson.dumps([m.to_dict() for m in agg.finish_choices()])

    return outcome(go)


_TOKENS = st.sampled_from(
    [
        b"data: ",
        b"data:",
        b"event: x",
        b": c",
        b"\n",
        b"\r\n",
        b"\r",
        b"[DONE]",
        b"{",
        b"}",
        b"[",
        b"]",
        b",",
        b'"',
        b"\\",
        b'"choices"',
        b":",
        b"[]",
        b'"\xc3\xa9"',
        b"\xc3",
        b"\xef\xbb\xbf",
        b" ",
        json.dumps(CHAT[1]).encode(),
        json.dumps(CHAT[3]).encode(),
    ]
)


@pytest.mark.differential
@given(tokens=st.lists(_TOKENS, max_size=30), cuts=st.lists(st.integers(0, 400), max_size=4))
def test_transport_differential(both: Any, tokens: list[bytes], cuts: list[int]) -> None:
    data = b"".join(tokens)
    points = sorted({min(c, len(data)) for c in cuts})
    pieces = [data[a:b] for a, b in zip([0, *points], [*points, len(data)])]
    results = {name: _run(name, pieces) for name in BACKENDS}
    assert results["rust"] == results["python"]


@pytest.mark.differential
@given(
    value=st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False)
        | st.text()
        | _values.edge_text,
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(st.text() | _values.edge_text, inner, max_size=3)
        ),
        max_leaves=10,
    )
)
def test_event_reading_differential(both: Any, value: Any) -> None:
    event = {"choices": [], "x": value}

    def run(backend: str, item: Any) -> tuple[Any, ...]:
        def go() -> bytes:
            agg = AGGREGATES[backend].Aggregator("openai-chat")
            agg.add(item)
            return orjson.dumps([m.to_dict() for m in agg.finish_choices()])

        return outcome(go)

    for item in (event, json.dumps(event), json.dumps(event, ensure_ascii=False).encode()):
        assert run("rust", item) == run("python", item)


def test_e19_utf8_split_across_sse_frames() -> None:
    """E19: a multi-byte character split across two network reads reassembles."""
    first = b'data: {"choices":[{"index":0,"delta":{"content":"\xc3'
    second = b'\xa4"},"finish_reason":"stop"}]}\n\n'
    agg = fastmerge.Aggregator("openai-chat")
    agg.feed(first)
    agg.feed(second)
    message = agg.finish()
    assert message.content == "ä"
    assert message.status == "complete"


def test_an_error_only_first_event_is_openai_chat() -> None:
    message = fastmerge.aggregate([{"error": {"message": "overloaded", "code": 529}}])
    assert message.provider_metadata["provider"] == "openai-chat"
    assert message.status == "failed"


def test_from_dict_of_a_finished_message_is_lossless() -> None:
    """The end-of-stream rules do not run twice: a usage total that does not add up is
    flagged once, and stays flagged once through to_dict / from_dict."""
    events = [
        *CHAT[:4],
        {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 9}},
    ]
    message = fastmerge.aggregate(events)
    assert [a["code"] for a in message.anomalies] == ["total_mismatch"]
    again = type(message).from_dict(message.to_dict())
    assert again == message
    assert again.to_dict() == message.to_dict()


@pytest.mark.parametrize(
    "data",
    [
        b'{"choices": []}\n{"choices": [',  # JSON lines: the last value not closed
        b'data: {"choices": []}\n\ndata: {"choices": [',  # SSE: cut inside a data line
        b'[{"choices": []}, {"choices": [',  # a JSON array cut inside an element
    ],
)
def test_a_stream_cut_inside_its_last_event_is_flagged_not_an_error(data: bytes) -> None:
    message = fastmerge.aggregate(data)
    assert message.status == "incomplete"
    assert message.anomalies == [
        {
            "code": "truncated",
            "detail": "the stream ended inside event 2: its 13 bytes "
            "are not a whole event and were not read",
        }
    ]
    with pytest.raises(fastmerge.AnomalyError, match="truncated: the stream ended inside"):
        fastmerge.aggregate(data, strict=True)


def test_a_last_event_without_its_blank_line_is_read() -> None:
    data = sse(CHAT).replace(b"data: [DONE]\n\n", b"").rstrip(b"\n")
    assert dump(fastmerge.aggregate(data)) == dump(fastmerge.aggregate(CHAT))


def test_a_whole_text_item_must_not_be_cut() -> None:
    with pytest.raises(EventError, match="event 2: not valid JSON"):
        fastmerge.aggregate(['[{"choices": []}, {"choices": ['], strict=True)
