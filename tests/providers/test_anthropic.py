"""The ``"anthropic"`` adapter on small event lists: each event and delta type (text, usage,
thinking and its signatures, redacted thinking, tool use from JSON deltas, citations, server
tool blocks), and the event types it ignores. Every test runs on both backends."""

from __future__ import annotations

from _support.anthropic import (
    PING,
    TEXT_STREAM,
    P,
    agg,
    anomalies,
    block,
    delta,
    end,
    js,
    parts,
    start,
    stop,
    text,
)

import fastmerge
from fastmerge.render import to_provider

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
