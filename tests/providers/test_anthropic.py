"""The ``"anthropic"`` adapter on small event lists: each event and delta type, the cases the
corpus lacks (interleaved blocks, deltas before their start, index collisions, mismatched
deltas, streams cut mid-block, error events, two signature deltas), status, errors, strict
mode, inputs left alone, and SSE bytes split anywhere. Every test runs on both backends.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import orjson
import pytest
from _support.anthropic import block, delta, end, start, stop, text
from conftest import AGGREGATES, outcome
from hypothesis import given
from hypothesis import strategies as st

import fastmerge
from fastmerge.errors import AnomalyError, EventError
from fastmerge.render import to_provider

P = "anthropic"


def js(index: int, piece: str) -> dict[str, Any]:
    return delta(index, type="input_json_delta", partial_json=piece)


PING = {"type": "ping"}
TEXT_STREAM = [
    start(),
    block(0, type="text", text=""),
    PING,
    text(0, "Hé"),
    text(0, "llo 👋"),
    stop(0),
    *end(),
]


def agg(events: list[dict[str, Any]], **options: Any) -> Any:
    return fastmerge.aggregate(events, P, **options)


def parts(message: Any) -> list[dict[str, Any]]:
    return [p.to_dict() for p in message.parts]


def anomalies(message: Any) -> list[tuple[str, str]]:
    return [(a["code"], a["detail"]) for a in message.to_dict()["anomalies"]]


def dump(message: Any) -> bytes:
    return orjson.dumps(message.to_dict(), option=orjson.OPT_SORT_KEYS)


# ---------------------------------------------------------------------------------------------
# Events and deltas


def test_text_stream() -> None:
    message = agg(TEXT_STREAM)
    assert message.status == "complete"
    assert message.content == "Héllo 👋"
    assert parts(message) == [
        {"part": "text", "text": "Héllo 👋", "citations": None, "attributes": None, "index": 0}
    ]
    assert message.response_id == "msg_1"
    assert message.response_model == "claude-x"
    assert message.to_dict()["finish_reason"] == "end_turn"
    assert message.finish_reason_normalized == "stop"
    assert message.provider_metadata == {"provider": P}
    assert anomalies(message) == []
    assert fastmerge.aggregate(TEXT_STREAM).to_dict() == message.to_dict()  # auto detects


def test_usage_is_cumulative_last_wins_and_normalized() -> None:
    usage = {"input_tokens": 10, "output_tokens": 1, "cache_read_input_tokens": 5}
    events = [start(usage), *end(usage={"output_tokens": 42})]
    assert agg(events).to_dict()["usage_metadata"] == {
        "input_tokens": 10,
        "output_tokens": 42,
        "cache_read_tokens": 5,
        "total_tokens": 52,
    }
    events = [start(usage), *end(usage={"input_tokens": 12, "output_tokens": 7})]
    message = agg(events)
    assert message.to_dict()["usage_metadata"]["input_tokens"] == 12
    rendered = to_provider(message, P)["usage"]
    # only what the stream sent: no cache_creation_input_tokens it never reported
    assert rendered == {"input_tokens": 12, "output_tokens": 7, "cache_read_input_tokens": 5}


def test_usage_keeps_every_key_and_cache_writes() -> None:
    usage = {
        "input_tokens": 3,
        "cache_creation_input_tokens": 7,
        "cache_read_input_tokens": 0,
        "cache_creation": {"ephemeral_5m_input_tokens": 7},
        "output_tokens": 1,
        "service_tier": "standard",
        "server_tool_use": {"web_search_requests": 1},
    }
    message = agg([start(usage), *end()])
    data = message.to_dict()["usage_metadata"]
    assert data["cache_write_tokens"] == 7
    assert data["cache_read_tokens"] == 0
    assert to_provider(message, P)["usage"] == {**usage, "output_tokens": 5}


def test_stop_sequence_and_message_fields_in_provider_metadata() -> None:
    events = [
        start(stop_details=None, container={"id": "c"}),
        {
            "type": "message_delta",
            "delta": {"stop_reason": "stop_sequence", "stop_sequence": "```", "stop_details": None},
            "usage": {"output_tokens": 3},
            "context_management": {"applied_edits": []},
        },
        {"type": "message_stop"},
    ]
    message = agg(events)
    assert message.provider_metadata == {
        "provider": P,
        "container": {"id": "c"},
        "stop_sequence": "```",
        "context_management": {"applied_edits": []},
    }
    rendered = to_provider(message, P)
    assert rendered["stop_reason"] == "stop_sequence"
    assert rendered["stop_sequence"] == "```"
    assert rendered["stop_details"] is None
    assert rendered["container"] == {"id": "c"}
    assert rendered["context_management"] == {"applied_edits": []}


def test_thinking_signature_replaces_and_concat_option() -> None:
    events = [
        start(),
        block(0, type="thinking", thinking="", signature=""),
        delta(0, type="thinking_delta", thinking="hmm"),
        delta(0, type="thinking_delta", thinking=""),
        delta(0, type="signature_delta", signature="A"),
        delta(0, type="signature_delta", signature="B"),
        stop(0),
        block(1, type="text", text=""),
        text(1, "ok"),
        stop(1),
        *end(),
    ]
    message = agg(events)
    (reasoning, answer) = parts(message)
    assert reasoning == {
        "part": "reasoning",
        "text": "hmm",
        "summary": None,
        "payload": {"provider": P, "kind": "signature", "data": "B"},
        "redacted": False,
        "index": 0,
    }
    assert answer["text"] == "ok"
    assert to_provider(message, P)["content"] == [
        {"type": "thinking", "thinking": "hmm", "signature": "B"},
        {"type": "text", "text": "ok", "citations": None},
    ]
    concat = agg(events, signature_merge="concat")
    assert concat.parts[0].payload.data == "AB"


def test_redacted_thinking() -> None:
    events = [start(), block(0, type="redacted_thinking", data="OPAQUE=="), stop(0), *end()]
    message = agg(events)
    assert parts(message) == [
        {
            "part": "reasoning",
            "text": "",
            "summary": None,
            "payload": {"provider": P, "kind": "redacted_thinking", "data": "OPAQUE=="},
            "redacted": True,
            "index": 0,
        }
    ]
    assert to_provider(message, P)["content"] == [{"type": "redacted_thinking", "data": "OPAQUE=="}]


def test_tool_use_from_json_deltas() -> None:
    events = [
        start(),
        block(0, type="tool_use", id="toolu_1", name="get", input={}, caller={"type": "direct"}),
        js(0, ""),
        js(0, '{"locati'),
        js(0, 'on": "Paris"}'),
        stop(0),
        *end("tool_use"),
    ]
    message = agg(events)
    assert parts(message) == [
        {
            "part": "tool_call",
            "id": "toolu_1",
            "type": "function",
            "name": "get",
            "arguments": '{"location": "Paris"}',
            "provider_index": 0,
            "payload": None,
            "response_item_id": None,
            "extra": {"caller": {"type": "direct"}},
            "call_index": None,
        }
    ]
    assert message.finish_reason_normalized == "tool_calls"
    assert to_provider(message, P)["content"] == [
        {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "get",
            "input": {"location": "Paris"},
            "caller": {"type": "direct"},
        }
    ]


def test_tool_use_with_input_in_its_start() -> None:
    events = [start(), block(0, type="tool_use", id="t", name="f", input={"a": [1]}), stop(0)]
    message = agg([*events, *end("tool_use")])
    assert message.parts[0].arguments == {"a": [1]}
    assert to_provider(message, P)["content"][0]["input"] == {"a": [1]}
    # JSON deltas after an input object: the fold keeps the object and flags the text
    mixed = agg([*events[:2], js(0, '{"b": 2}'), stop(0), *end("tool_use")])
    assert mixed.parts[0].arguments == {"a": [1]}
    assert anomalies(mixed) == [("mismatched_delta", "call 't': text arguments after object ones")]


def test_parallel_tool_calls_without_arguments() -> None:
    events = [start()]
    for i in (0, 1):
        events += [block(i, type="tool_use", id=f"t{i}", name="f", input={}), js(i, ""), stop(i)]
    message = agg([*events, *end("tool_use")])
    calls = [(p.id, p.arguments, p.provider_index) for p in message.parts]
    assert calls == [("t0", "", 0), ("t1", "", 1)]
    assert [b["input"] for b in to_provider(message, P)["content"]] == [{}, {}]


def test_citations_delta() -> None:
    cite = {"type": "web_search_result_location", "url": "u", "cited_text": "c"}
    events = [
        start(),
        block(0, type="text", text="", citations=[]),
        delta(0, type="citations_delta", citation=cite),
        text(0, "fact"),
        stop(0),
        *end(),
    ]
    message = agg(events)
    assert message.parts[0].citations == [cite]
    assert to_provider(message, P)["content"] == [
        {"type": "text", "text": "fact", "citations": [cite]}
    ]


def test_server_tool_blocks_kept_verbatim_with_their_deltas() -> None:
    result = {
        "type": "web_search_tool_result",
        "tool_use_id": "srv_1",
        "content": [{"type": "web_search_result", "encrypted_content": "E=="}],
    }
    events = [
        start(),
        block(0, type="server_tool_use", id="srv_1", name="web_search", input={}),
        js(0, ""),
        js(0, '{"query": '),
        js(0, '"x"}'),
        stop(0),
        block(1, **result),
        stop(1),
        block(2, type="compaction", content=None),
        delta(2, type="compaction_delta", content="sum"),
        delta(2, type="compaction_delta", content="summary"),  # the whole so far (E101)
        stop(2),
        *end(),
    ]
    message = agg(events)
    want = [
        {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {"query": "x"}},
        result,
        {"type": "compaction", "content": "summary"},
    ]
    assert [p.raw for p in message.parts] == want
    assert [(p.provider, p.kind, p.index) for p in message.parts] == [
        (P, "server_tool_use", 0),
        (P, "web_search_tool_result", 1),
        (P, "compaction", 2),
    ]
    assert to_provider(message, P)["content"] == want
    assert not message.tool_calls  # server tools are not calls for the client to run


def test_ping_and_unknown_event_types_are_ignored() -> None:
    with_noise = [PING, *TEXT_STREAM[:3], {"type": "something_new", "x": 1}, *TEXT_STREAM[3:]]
    noisy = agg(with_noise).to_dict()
    # an unknown type is not read, and says so (spec §8)
    assert noisy.pop("anomalies") == [
        {
            "code": "unrecognized_event",
            "detail": "event 5 has no key the anthropic adapter reads (keys: 'type', 'x'); "
            "it was not read",
        }
    ]
    clean = agg(TEXT_STREAM).to_dict()
    assert clean.pop("anomalies") == []
    assert noisy == clean
    only_pings = agg([PING, PING])
    assert only_pings.status == "incomplete"
    assert only_pings.parts == ()


# ---------------------------------------------------------------------------------------------
# Adversarial streams


def test_interleaved_blocks_stay_apart_in_order() -> None:
    """Blocks open at once stay apart by index. Parts are in block order: a text block's
    start makes its part even while it is empty (E79), as the non-streamed content has it."""
    events = [
        start(),
        block(0, type="text", text=""),
        block(1, type="tool_use", id="t1", name="f", input={}),
        block(2, type="tool_use", id="t2", name="g", input={}),
        text(0, "a"),
        js(2, '{"y"'),
        js(1, '{"x"'),
        text(0, "b"),
        js(1, ": 1}"),
        js(2, ": 2}"),
        stop(2),
        stop(0),
        stop(1),
        *end("tool_use"),
    ]
    message = agg(events)
    assert anomalies(message) == []
    got = [
        (p.to_dict()["part"], getattr(p, "id", None), p.to_dict().get("arguments"))
        for p in message.parts
    ]
    assert got == [
        ("text", None, None),
        ("tool_call", "t1", '{"x": 1}'),
        ("tool_call", "t2", '{"y": 2}'),
    ]
    assert message.content == "ab"


def test_delta_before_start() -> None:
    events = [start(), text(0, "early "), block(0, type="text", text=""), text(0, "late"), stop(0)]
    message = agg([*events, *end()])
    assert message.content == "early late"
    assert [p.index for p in message.parts] == [0]
    assert anomalies(message) == [
        (
            "delta_before_start",
            "text_delta at index 0 before any content_block_start: kept as a text block",
        )
    ]
    # a tool call's JSON before its start: the call gets its id and name when the start comes
    calls = agg([start(), js(3, '{"a": 1}'), block(3, type="tool_use", id="t", name="f", input={})])
    assert [(p.id, p.name, p.arguments) for p in calls.parts] == [("t", "f", '{"a": 1}')]
    assert calls.anomalies[0]["code"] == "delta_before_start"
    # an unknown delta type before any start: an unknown block
    odd = agg([start(), delta(4, type="compaction_delta", content="x"), stop(4), *end()])
    assert [p.raw for p in odd.parts] == [{"type": "compaction", "content": "x"}]


def test_index_collision() -> None:
    events = [
        start(),
        block(0, type="text", text=""),
        text(0, "one"),
        stop(0),
        block(0, type="text", text=""),
        text(0, "two"),
        stop(0),
        block(0, type="tool_use", id="t", name="f", input={}),
        js(0, "{}"),
        stop(0),
        *end(),
    ]
    message = agg(events)
    got = [
        (p.to_dict()["part"], p.to_dict().get("text"), p.to_dict().get("index"))
        for p in message.parts
    ]
    assert got == [("text", "one", 0), ("text", "two", -1), ("tool_call", None, None)]
    assert message.parts[2].provider_index == -2
    assert message.parts[2].arguments == "{}"
    assert anomalies(message) == [
        (
            "index_collision",
            "content_block_start of a text block at index 0, already used by a text block: "
            "kept apart as part index -1",
        ),
        (
            "index_collision",
            "content_block_start of a tool_use block at index 0, already used by a text "
            "block: kept apart as part index -2",
        ),
    ]


def test_mismatched_deltas_are_kept_apart() -> None:
    events = [
        start(),
        block(0, type="text", text=""),
        text(0, "answer"),
        delta(0, type="thinking_delta", thinking="wait"),
        delta(0, type="thinking_delta", thinking="!"),
        delta(0, type="future_delta", x=1),
        stop(0),
        *end(),
    ]
    message = agg(events)
    assert [p.to_dict() for p in message.parts][1:] == [
        {
            "part": "reasoning",
            "text": "wait!",
            "summary": None,
            "payload": None,
            "redacted": False,
            "index": -1,
        },
        {
            "part": "unknown",
            "provider": P,
            "kind": "future_delta",
            "raw": {"type": "future_delta", "x": 1},
            "index": None,
        },
    ]
    assert anomalies(message) == [
        (
            "mismatched_delta",
            "thinking_delta for the text block at index 0: kept as a part of its own",
        ),
        (
            "mismatched_delta",
            "future_delta for the text block at index 0: kept as a part of its own",
        ),
    ]


def test_stream_cut_mid_tool_use() -> None:
    events = [
        start(),
        block(0, type="text", text=""),
        text(0, "Let me"),
        stop(0),
        block(1, type="tool_use", id="t", name="make_file", input={}),
        js(1, '{"path": "/etc/pa'),
    ]
    message = agg(events)
    assert message.status == "incomplete"
    assert message.parts[1].arguments == '{"path": "/etc/pa'
    assert anomalies(message) == [
        (
            "truncated",
            "the tool_use block 'make_file' at index 1 had no content_block_stop "
            "(the stream ended)",
        )
    ]
    # a cut call is not parsed into an object (spec §6): raw arguments, marked as cut
    rendered = to_provider(message, P)["content"][1]
    assert (rendered["input"], rendered["truncated"]) == ('{"path": "/etc/pa', True)


def test_max_tokens_inside_tool_json_is_complete_and_flagged() -> None:
    events = [
        start(),
        block(0, type="tool_use", id="t", name="f", input={}),
        js(0, '{"a": "x", "b": ["1", "2'),
        *end("max_tokens"),
    ]
    message = agg(events)
    assert message.status == "complete"
    assert message.finish_reason_normalized == "length"
    assert message.parts[0].arguments == '{"a": "x", "b": ["1", "2'
    assert anomalies(message) == [
        (
            "truncated",
            "the tool_use block 'f' at index 0 had no content_block_stop (message_stop came first)",
        )
    ]
    # complete, yet the call was cut by max_tokens: not parsed into an executable object
    # (spec §6), though the Anthropic SDK reads it as far as it is whole
    rendered = to_provider(message, P)["content"][0]
    assert (rendered["input"], rendered["truncated"]) == ('{"a": "x", "b": ["1", "2', True)


def test_stream_cut_mid_server_tool_keeps_the_raw_json() -> None:
    events = [
        start(),
        block(0, type="server_tool_use", id="s", name="n", input={}),
        js(0, '{"q": '),
    ]
    message = agg(events)
    assert [p.raw for p in message.parts] == [
        {"type": "server_tool_use", "id": "s", "name": "n", "input": '{"q": '}
    ]
    assert anomalies(message) == [
        (
            "truncated",
            "the server_tool_use block at index 0 had no content_block_stop (the stream ended)",
        )
    ]


def test_error_event_mid_stream() -> None:
    error = {"type": "overloaded_error", "message": "Overloaded"}
    events = [
        start(),
        block(0, type="text", text=""),
        text(0, "partial"),
        {"type": "error", "error": error},
    ]
    message = agg(events)
    assert message.status == "failed"
    assert message.content == "partial"
    assert message.provider_metadata["error"] == error
    assert anomalies(message) == []
    assert to_provider(message, P)["error"] == error


def test_status_without_message_stop_is_incomplete() -> None:
    message = agg(TEXT_STREAM[:-1])
    assert message.status == "incomplete"
    assert message.content == "Héllo 👋"
    assert anomalies(message) == []


# ---------------------------------------------------------------------------------------------
# Errors, strict mode, inputs, transports


@pytest.mark.parametrize(
    ("event", "detail"),
    [
        (
            {"type": "message_start", "message": []},
            "message_start: 'message' must be an object, not array",
        ),
        (
            {"type": "message_start", "message": {"usage": [1]}},
            "message_start: 'usage' must be an object, not array",
        ),
        (
            {"type": "message_start", "message": {"content": "x"}},
            "message_start: 'content' must be an array, not string",
        ),
        (
            {"type": "content_block_start", "index": "0", "content_block": {"type": "text"}},
            "content_block_start: 'index' must be an integer, not string",
        ),
        (
            {"type": "content_block_start", "index": 0, "content_block": "text"},
            "content_block_start: 'content_block' must be an object with a string 'type'",
        ),
        (
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": 1},
            },
            "content_block_start: 'text' must be a string, not number",
        ),
        (
            {"type": "content_block_delta", "index": True, "delta": {}},
            "content_block_delta: 'index' must be an integer, not boolean",
        ),
        (
            {"type": "content_block_delta", "index": 0, "delta": {"text": "x"}},
            "content_block_delta: 'delta' must be an object with a string 'type'",
        ),
        (
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": None},
            },
            "text_delta: 'text' must be a string, not null",
        ),
        (
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": {}},
            },
            "input_json_delta: 'partial_json' must be a string, not object",
        ),
        (
            {"type": "content_block_stop"},
            "content_block_stop: 'index' must be an integer, not null",
        ),
        (
            {"type": "message_delta", "delta": "end_turn"},
            "message_delta: 'delta' must be an object, not string",
        ),
        (
            {"type": "message_delta", "usage": 3},
            "message_delta: 'usage' must be an object, not number",
        ),
    ],
)
def test_bad_event_shapes(event: dict[str, Any], detail: str) -> None:
    # a message_start after another starts a new response (spec §6): it comes first here
    events = [event] if event["type"] == "message_start" else [start(), event]
    with pytest.raises(EventError) as info:
        agg(events, strict=True)
    assert str(info.value) == f"event {len(events)}: anthropic: {detail}"
    # not strict: skipped, and said (spec §8); alone, no event is read, an error (spec §6)
    anomaly = {"code": "unreadable_event", "detail": f"event {len(events)}: anthropic: {detail}"}
    if len(events) == 1:
        with pytest.raises(EventError) as info:
            agg(events)
        assert str(info.value) == f"no event could be read: {anomaly['detail']}"
    else:
        assert anomaly in agg(events).anomalies


def test_strict_raises_the_anomaly() -> None:
    with pytest.raises(AnomalyError) as info:
        agg([start(), text(0, "x")], strict=True)
    assert info.value.code == "delta_before_start"
    with pytest.raises(AnomalyError) as info:
        agg(TEXT_STREAM[:-2] + [block(1, type="tool_use", id="t", name="f", input={})], strict=True)
    assert info.value.code == "truncated"


def test_inputs_are_not_mutated() -> None:
    events = [
        start({"input_tokens": 1, "cache_read_input_tokens": 2}),
        block(0, type="server_tool_use", id="s", name="n", input={}),
        js(0, '{"q": 1}'),
        stop(0),
        block(1, type="compaction", content=None),
        delta(1, type="compaction_delta", content="c"),
        stop(1),
        block(2, type="tool_use", id="t", name="f", input={"a": {"b": 1}}),
        stop(2),
        *end(),
    ]
    before = copy.deepcopy(events)
    agg(events)
    assert events == before


def sse(events: list[dict[str, Any]]) -> bytes:
    out = []
    for event in events:
        payload = json.dumps(event, ensure_ascii=False)
        out.append(f"event: {event['type']}\ndata: {payload}\n\n")
    return "".join(out).encode("utf-8")


def test_sse_bytes_split_at_every_position() -> None:
    events = [
        start(),
        block(0, type="thinking", thinking="", signature=""),
        delta(0, type="thinking_delta", thinking="é"),
        delta(0, type="signature_delta", signature="S"),
        stop(0),
        block(1, type="text", text=""),
        text(1, "👋"),
        stop(1),
        *end(),
    ]
    data = sse(events)
    reference = dump(agg(events))
    assert dump(fastmerge.aggregate(data, P)) == reference
    for cut in range(1, len(data)):
        aggregator = fastmerge.Aggregator(P)
        aggregator.feed(data[:cut])
        aggregator.feed(data[cut:])
        assert dump(aggregator.finish()) == reference, cut


def test_snapshot_mid_stream() -> None:
    aggregator = fastmerge.Aggregator(P)
    for event in TEXT_STREAM[:4]:
        aggregator.add(event)
    snap = aggregator.snapshot()
    assert snap.content == "Hé"
    assert snap.status == "incomplete"
    for event in TEXT_STREAM[4:]:
        aggregator.add(event)
    assert aggregator.finish().content == "Héllo 👋"


# ---------------------------------------------------------------------------------------------
# Rendering other providers' messages


def test_render_replays_payloads_only_to_anthropic() -> None:
    chat = [
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": "hi"}}],
        },
        {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    message = fastmerge.aggregate(chat, "openai-chat")
    rendered = to_provider(message, P)
    assert rendered["content"] == [{"type": "text", "text": "hi", "citations": None}]
    assert rendered["stop_reason"] == "end_turn"
    assert rendered["type"] == "message"


def test_render_needs_one_message() -> None:
    message = agg(TEXT_STREAM)
    with pytest.raises(ValueError):
        to_provider([message, message], P)


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
