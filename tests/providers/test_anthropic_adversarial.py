"""The ``"anthropic"`` adapter on the cases the corpus lacks: interleaved blocks, deltas before
their start, index collisions, mismatched deltas, streams cut mid-block, error events mid
stream, and a status without ``message_stop``. Every test runs on both backends."""

from __future__ import annotations

from _support.anthropic import (
    TEXT_STREAM,
    P,
    agg,
    anomalies,
    block,
    delta,
    end,
    js,
    start,
    stop,
    text,
)

from fastmerge.render import to_provider

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
