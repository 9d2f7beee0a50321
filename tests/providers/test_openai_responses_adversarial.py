"""The ``"openai-responses"`` adapter's status (complete, incomplete, failed, error events,
streams cut mid call or mid text, snapshots) and the adversarial cases the corpus lacks
(deltas before their item, interleaved output indexes, done texts that differ from the deltas,
index collisions, mismatched deltas), and strict mode. Every test runs on both backends."""

from __future__ import annotations

import pytest
from _support.openai_responses import (
    P,
    added,
    agg,
    args_delta,
    call,
    codes,
    created,
    done,
    message,
    terminal,
    text_delta,
)

import fastmerge

# ---------------------------------------------------------------------------------------------
# Status


def test_status_complete_incomplete_failed() -> None:
    assert agg([created(), terminal()]).status == "complete"
    assert agg([created()]).status == "incomplete"
    incomplete = agg(
        [created(), terminal("incomplete", incomplete_details={"reason": "max_output_tokens"})]
    )
    assert incomplete.status == "incomplete"
    assert incomplete.finish_reason == "max_output_tokens"
    assert incomplete.anomalies == []  # the terminal signal came: nothing is truncated
    rendered = incomplete.to_provider(P)
    assert rendered["status"] == "incomplete"
    assert rendered["incomplete_details"] == {"reason": "max_output_tokens"}
    error = {"code": "server_error", "message": "boom"}
    failed = agg([created(), terminal("failed", error=error)])
    assert failed.status == "failed"
    assert failed.provider_metadata["error"] == error
    assert failed.to_provider(P)["error"] == error


def test_error_event() -> None:
    """The documented shape (code, message, param at the top) and the nested one."""
    flat = {"type": "error", "code": "E", "message": "bad", "param": None, "sequence_number": 3}
    msg = agg([created(), flat])
    assert msg.status == "failed"
    assert msg.provider_metadata["error"] == {"code": "E", "message": "bad", "param": None}
    nested = {"type": "error", "sequence_number": 2, "error": {"type": "x", "code": "q"}}
    msg = fastmerge.aggregate([nested], "auto")
    assert msg.status == "failed"
    assert msg.provider_metadata["error"] == {"type": "x", "code": "q"}


def test_stream_cut_mid_function_call() -> None:
    events = [
        created(),
        added(0, call(0, "call_1", "get", "", status="in_progress")),
        args_delta(0, '{"path": "/etc/pa'),
    ]
    msg = agg(events)
    assert msg.status == "incomplete"
    assert msg.tool_calls[0].arguments == '{"path": "/etc/pa'
    assert msg.anomalies == [
        {
            "code": "truncated",
            "detail": "output_index 0: function_call 'call_1' ended before its output_item.done",
            "tool_call": {"id": "call_1", "provider_index": 0},
        }
    ]
    rendered = msg.to_provider(P)
    assert rendered["status"] == "incomplete"
    assert rendered["output"][0]["status"] == "incomplete"
    assert rendered["output"][0]["arguments"] == '{"path": "/etc/pa'


def test_stream_cut_mid_text_and_mid_unknown_item() -> None:
    events = [
        added(0, {"id": "ws_1", "type": "web_search_call", "status": "in_progress"}),
        added(1, message(1) | {"status": "in_progress"}),
        text_delta(1, "par"),
    ]
    msg = agg(events)
    assert codes(msg) == ["truncated", "truncated"]
    assert msg.parts[-1].raw == {"id": "ws_1", "type": "web_search_call", "status": "in_progress"}
    assert msg.content == "par"


def test_snapshot_mid_stream() -> None:
    aggregator = fastmerge.Aggregator(P)
    aggregator.add(created())
    aggregator.add(added(0, message(0) | {"status": "in_progress"}))
    aggregator.add(text_delta(0, "Hel"))
    snap = aggregator.snapshot()
    assert snap.content == "Hel"
    assert snap.status == "incomplete"
    aggregator.add(text_delta(0, "lo"))
    aggregator.add(done(0, message(0, "Hello")))
    aggregator.add(terminal(output=[message(0, "Hello")]))
    final = aggregator.finish()
    assert final.content == "Hello" and final.status == "complete"


# ---------------------------------------------------------------------------------------------
# Adversarial streams


def test_delta_before_its_output_item_added() -> None:
    events = [
        args_delta(0, "{"),
        added(0, call(0, "call_1", "f", "", status="in_progress")),
        args_delta(0, "}"),
        done(0, call(0, "call_1", "f", "{}")),
        terminal(output=[call(0, "call_1", "f", "{}")]),
    ]
    msg = agg(events)
    assert msg.anomalies == [
        {
            "code": "delta_before_start",
            "detail": "response.function_call_arguments.delta at output_index 0 before its "
            "output_item.added",
        }
    ]
    [part] = msg.parts
    assert (part.id, part.name, part.arguments) == ("call_1", "f", "{}")


def test_text_delta_before_its_item() -> None:
    events = [
        text_delta(0, "a"),
        added(0, message(0) | {"status": "in_progress"}),
        text_delta(0, "b"),
    ]
    msg = agg(events)
    assert msg.content == "ab"
    assert codes(msg) == ["delta_before_start", "truncated"]


def test_interleaved_output_indexes() -> None:
    """Two calls and a message streamed interleaved stay apart and render in output order."""
    events = [
        added(0, call(0, "c0", "f", "", status="in_progress")),
        added(1, call(1, "c1", "g", "", status="in_progress")),
        args_delta(1, '{"b"'),
        args_delta(0, '{"a"'),
        added(2, message(2) | {"status": "in_progress"}),
        text_delta(2, "x"),
        args_delta(1, ":2}"),
        text_delta(2, "y"),
        args_delta(0, ":1}"),
        done(1, call(1, "c1", "g", '{"b":2}')),
        done(2, message(2, "xy")),
        done(0, call(0, "c0", "f", '{"a":1}')),
        terminal(
            output=[call(0, "c0", "f", '{"a":1}'), call(1, "c1", "g", '{"b":2}'), message(2, "xy")]
        ),
    ]
    msg = agg(events)
    assert msg.anomalies == []
    calls = [(c.id, c.name, c.arguments) for c in msg.tool_calls]
    assert calls == [("c0", "f", '{"a":1}'), ("c1", "g", '{"b":2}')]
    assert msg.content == "xy"
    assert msg.to_provider(P)["output"] == [
        call(0, "c0", "f", '{"a":1}'),
        call(1, "c1", "g", '{"b":2}'),
        message(2, "xy"),
    ]


def test_done_text_differs_from_deltas() -> None:
    events = [
        added(0, message(0) | {"status": "in_progress"}),
        text_delta(0, "Hel"),
        {
            "type": "response.output_text.done",
            "output_index": 0,
            "content_index": 0,
            "text": "Hello",
        },
        text_delta(1, "zz") | {"output_index": 1},
    ]
    msg = agg(events[:3])
    assert msg.content == "Hello"  # the done text's missing tail is added
    assert msg.anomalies[0] == {
        "code": "mismatched_delta",
        "detail": "output_text 0:0: the done text extends the streamed deltas (3 of 5 "
        "characters); the rest was added",
    }
    msg = agg(
        [
            added(0, message(0) | {"status": "in_progress"}),
            text_delta(0, "Hxx"),
            done(0, message(0, "Hello")),
        ]
    )
    assert msg.content == "Hello"  # the done item is authoritative (spec §6.1)
    assert msg.anomalies == [
        {
            "code": "mismatched_delta",
            "detail": "output_text 0:0: the done text differs from the 3 streamed characters; "
            "the done text replaces them",
        }
    ]


def test_deltas_swapped_without_sequence_numbers_give_the_done_texts() -> None:
    """E97 (second half) where the events carry no ``sequence_number``: the deltas cannot be
    put back in order, and the done events win over them, for every text they settle."""
    reasoning_added = {"type": "reasoning", "id": "rs_1", "summary": []}
    summary_delta = {
        "type": "response.reasoning_summary_text.delta",
        "output_index": 0,
        "summary_index": 0,
        "delta": "ba",
    }
    refusal_delta = {
        "type": "response.refusal.delta",
        "output_index": 1,
        "content_index": 0,
        "delta": "no, I ca",
    }
    args_delta = {
        "type": "response.function_call_arguments.delta",
        "output_index": 2,
        "delta": '1}{"a":',
    }
    reasoning_done = reasoning_added | {"summary": [{"type": "summary_text", "text": "ab"}]}
    refused = message(1) | {"content": [{"type": "refusal", "refusal": "I can't"}]}
    events = [
        created(),
        added(0, reasoning_added),
        summary_delta,
        added(1, message(1, status="in_progress") | {"content": []}),
        refusal_delta,
        added(2, call(2, "c1", "f", "", status="in_progress")),
        args_delta,
        done(0, reasoning_done),
        done(1, refused),
        done(2, call(2, "c1", "f", '{"a":1}')),
    ]
    for strict in (False, True):
        if strict:
            with pytest.raises(fastmerge.AnomalyError, match="the done text replaces them"):
                agg(events, strict=True)
            continue
        msg = agg(events)
        assert [p["summary"] for p in msg.to_dict()["parts"] if p["part"] == "reasoning"] == ["ab"]
        assert msg.refusal == "I can't"
        assert [(c.id, c.arguments) for c in msg.tool_calls] == [("c1", '{"a":1}')]
        assert [a["detail"] for a in msg.anomalies] == [
            "reasoning summary 0:summary:0: the done text differs from the 2 streamed "
            "characters; the done text replaces them",
            "refusal 1:0: the done text differs from the 8 streamed characters; the done text "
            "replaces them",
            "function_call 'c1' arguments: the done text differs from the 7 streamed "
            "characters; the done text replaces them",
        ]
        # the done items as they came, rendered back
        assert msg.to_provider(P)["output"][2]["arguments"] == '{"a":1}'


def test_a_done_event_before_the_item_done_settles_its_text() -> None:
    """``output_text.done`` disagreeing with its deltas replaces them, and the item's done
    that repeats it changes nothing more."""
    events = [
        added(0, message(0, status="in_progress") | {"content": []}),
        text_delta(0, "wrold"),
        {
            "type": "response.output_text.done",
            "output_index": 0,
            "content_index": 0,
            "text": "world",
        },
        done(0, message(0, "world")),
    ]
    msg = agg(events)
    assert msg.content == "world"
    assert len(msg.anomalies) == 1


def test_index_collision_and_mismatched_delta() -> None:
    events = [
        added(0, message(0) | {"status": "in_progress"}),
        added(0, call(0, "c1", "f", "")),
        text_delta(0, "x"),
    ]
    msg = agg(events)
    assert msg.anomalies[0] == {
        "code": "index_collision",
        "detail": "output_index 0: function_call 'fc_0' added over message 'msg_0'",
    }
    assert msg.anomalies[1] == {
        "code": "mismatched_delta",
        "detail": "response.output_text.delta on a function_call item at output_index 0 ignored",
    }
    assert msg.content == ""


def test_strict_raises_on_an_anomaly() -> None:
    with pytest.raises(fastmerge.AnomalyError) as info:
        agg([args_delta(0, "{")], strict=True)
    assert info.value.code == "delta_before_start"
