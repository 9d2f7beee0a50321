"""The ``"openai-responses"`` adapter on small event lists (both backends): each event and
delta type, the done events' authority, status, truncation, the adversarial cases the corpus
lacks (deltas before their item, a stream cut mid call, interleaved output indexes, index
collisions, mismatched deltas), bad event shapes, strict mode, inputs left alone, and SSE
bytes split at every position."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

import fastmerge
from fastmerge.errors import EventError

P = "openai-responses"


def created(**extra: Any) -> dict[str, Any]:
    response = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1700000000,
        "status": "in_progress",
        "error": None,
        "incomplete_details": None,
        "model": "gpt-x",
        "output": [],
        "usage": None,
        "metadata": {},
    }
    response.update(extra)
    return {"type": "response.created", "sequence_number": 0, "response": response}


def terminal(kind: str = "completed", output: Any = None, **extra: Any) -> dict[str, Any]:
    response = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1700000000,
        "status": kind,
        "error": None,
        "incomplete_details": None,
        "model": "gpt-x",
        "output": output or [],
        "usage": {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 4},
            "output_tokens": 7,
            "output_tokens_details": {"reasoning_tokens": 3},
            "total_tokens": 17,
        },
        "metadata": {},
    }
    response.update(extra)
    return {"type": f"response.{kind}", "response": response}


def added(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def done(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": index, "item": item}


def text_delta(index: int, delta: str, ci: int = 0, **extra: Any) -> dict[str, Any]:
    return {
        "type": "response.output_text.delta",
        "item_id": f"msg_{index}",
        "output_index": index,
        "content_index": ci,
        "delta": delta,
        **extra,
    }


def args_delta(index: int, delta: str) -> dict[str, Any]:
    return {
        "type": "response.function_call_arguments.delta",
        "item_id": f"fc_{index}",
        "output_index": index,
        "delta": delta,
    }


def message(index: int, *texts: str, status: str = "completed") -> dict[str, Any]:
    return {
        "type": "message",
        "id": f"msg_{index}",
        "status": status,
        "role": "assistant",
        "content": [
            {"type": "output_text", "text": t, "annotations": [], "logprobs": []} for t in texts
        ],
    }


def call(index: int, call_id: str, name: str, arguments: str, status: str = "completed"):
    return {
        "type": "function_call",
        "id": f"fc_{index}",
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": status,
    }


def codes(msg: Any) -> list[str]:
    return [a["code"] for a in msg.anomalies]


def agg(events: list[Any], **options: Any) -> Any:
    return fastmerge.aggregate(events, P, **options)


# ---------------------------------------------------------------------------------------------
# Events and deltas


def test_text_stream() -> None:
    events = [
        created(),
        added(0, message(0, status="in_progress") | {"content": []}),
        {"type": "response.content_part.added", "output_index": 0, "content_index": 0},
        text_delta(0, "Hel"),
        text_delta(0, "lo"),
        {
            "type": "response.output_text.done",
            "output_index": 0,
            "content_index": 0,
            "text": "Hello",
        },
        done(0, message(0, "Hello")),
        terminal(output=[message(0, "Hello")]),
    ]
    msg = agg(events)
    assert msg.status == "complete"
    assert msg.content == "Hello"
    assert msg.anomalies == []
    assert msg.response_id == "resp_1"
    assert msg.response_model == "gpt-x"
    assert msg.role == "assistant"
    [part] = msg.parts
    assert part.PART == "text" and part.index == 0
    assert part.attributes == {"type": "output_text", "annotations": [], "logprobs": []}
    usage = msg.usage_metadata.to_dict()
    assert usage["input_tokens"] == 10 and usage["total_tokens"] == 17
    assert usage["cache_read_tokens"] == 4 and usage["reasoning_tokens"] == 3
    assert usage["input_tokens_details"] == {"cached_tokens": 4}
    rendered = msg.to_provider(P)
    assert rendered["id"] == "resp_1" and rendered["object"] == "response"
    assert rendered["status"] == "completed"
    assert rendered["output"] == [message(0, "Hello")]
    assert rendered["usage"] == terminal()["response"]["usage"]


def test_logprobs_concatenate_and_done_logprobs_render() -> None:
    lp = [{"token": "a", "logprob": -0.1, "bytes": [97], "top_logprobs": []}]
    lp2 = [{"token": "b", "logprob": -0.2, "bytes": [98], "top_logprobs": []}]
    final = message(0, "ab")
    final["content"][0]["logprobs"] = [{"token": "a", "logprob": -0.0}, {"token": "b"}]
    events = [
        created(),
        added(0, message(0) | {"status": "in_progress"}),
        text_delta(0, "a", logprobs=lp),
        text_delta(0, "b", logprobs=lp2, obfuscation="xx"),
        done(0, final),
        terminal(output=[final]),
    ]
    msg = agg(events)
    assert msg.logprobs == {"content": lp + lp2}
    assert (
        msg.to_provider(P)["output"][0]["content"][0]["logprobs"] == final["content"][0]["logprobs"]
    )


def test_reasoning_summary_text_and_encrypted_content() -> None:
    item = {"id": "rs_1", "type": "reasoning", "summary": []}
    final = {
        "id": "rs_1",
        "type": "reasoning",
        "summary": [
            {"type": "summary_text", "text": "First."},
            {"type": "summary_text", "text": "Second."},
        ],
        "encrypted_content": "ENC==",
    }
    events = [
        created(),
        added(0, item | {"encrypted_content": "EARLY"}),
        {"type": "response.reasoning_summary_part.added", "output_index": 0, "summary_index": 0},
        {
            "type": "response.reasoning_summary_text.delta",
            "output_index": 0,
            "summary_index": 0,
            "delta": "First.",
        },
        {
            "type": "response.reasoning_summary_text.done",
            "output_index": 0,
            "summary_index": 0,
            "text": "First.",
        },
        {
            "type": "response.reasoning_summary_text.delta",
            "output_index": 0,
            "summary_index": 1,
            "delta": "Second.",
        },
        done(0, final),
        added(1, message(1) | {"status": "in_progress", "content": []}),
        text_delta(1, "Hi"),
        done(1, message(1, "Hi")),
        terminal(output=[final | {"encrypted_content": "FINAL=="}, message(1, "Hi")]),
    ]
    msg = agg(events)
    assert msg.anomalies == []
    reasoning = [p for p in msg.parts if p.PART == "reasoning"]
    assert [p.summary for p in reasoning] == ["First.", "Second."]
    assert [p.index for p in reasoning] == [500, 501]
    # the encrypted content of the added event is preliminary; the terminal response's wins
    assert reasoning[0].payload.to_dict() == {
        "provider": P,
        "kind": "encrypted_content",
        "data": "FINAL==",
    }
    rendered = msg.to_provider(P)
    assert rendered["output"][0] == {
        "id": "rs_1",
        "type": "reasoning",
        "summary": final["summary"],
        "encrypted_content": "FINAL==",
    }
    assert msg.provider_metadata["output_items"]["0"]["id"] == "rs_1"


def test_reasoning_text_content() -> None:
    events = [
        added(0, {"type": "reasoning", "id": "rs_1", "summary": [], "content": []}),
        {
            "type": "response.reasoning_text.delta",
            "output_index": 0,
            "content_index": 0,
            "delta": "a",
        },
        {
            "type": "response.reasoning_text.delta",
            "output_index": 0,
            "content_index": 0,
            "delta": "b",
        },
        {
            "type": "response.reasoning_text.done",
            "output_index": 0,
            "content_index": 0,
            "text": "ab",
        },
        terminal(
            output=[
                {
                    "type": "reasoning",
                    "id": "rs_1",
                    "summary": [],
                    "content": [{"type": "reasoning_text", "text": "ab"}],
                }
            ]
        ),
    ]
    msg = agg(events)
    assert msg.reasoning_content == "ab"
    assert msg.anomalies == []
    assert msg.status == "complete"
    item = msg.to_provider(P)["output"][0]
    assert item["content"] == [{"type": "reasoning_text", "text": "ab"}]
    assert item["summary"] == []


def test_function_call() -> None:
    events = [
        created(),
        added(0, call(0, "call_1", "get", "", status="in_progress")),
        args_delta(0, '{"a"'),
        args_delta(0, ":1}"),
        {
            "type": "response.function_call_arguments.done",
            "output_index": 0,
            "arguments": '{"a":1}',
        },
        done(0, call(0, "call_1", "get", '{"a":1}')),
        terminal(output=[call(0, "call_1", "get", '{"a":1}')]),
    ]
    msg = agg(events)
    assert msg.anomalies == []
    [part] = msg.parts
    assert (part.id, part.name, part.arguments) == ("call_1", "get", '{"a":1}')
    assert part.provider_index == 0 and part.response_item_id == "fc_0"
    assert msg.tool_calls[0].parsed_arguments() == {"a": 1}
    assert msg.to_provider(P)["output"] == [call(0, "call_1", "get", '{"a":1}')]


def test_arguments_only_in_done() -> None:
    """LM Studio sends no argument deltas: the done event's arguments are the call's."""
    events = [
        added(0, call(0, "call_1", "f", "", status="in_progress")),
        {"type": "response.function_call_arguments.done", "output_index": 0, "arguments": "{}"},
        done(0, call(0, "call_1", "f", "{}")),
    ]
    msg = agg(events)
    assert msg.tool_calls[0].arguments == "{}"
    assert msg.anomalies == []
    assert msg.status == "incomplete"  # no response.completed


def test_custom_tool_call() -> None:
    item = {"type": "custom_tool_call", "id": "ctc_1", "call_id": "c1", "name": "run", "input": ""}
    events = [
        added(0, item),
        {"type": "response.custom_tool_call_input.delta", "output_index": 0, "delta": "ls "},
        {"type": "response.custom_tool_call_input.delta", "output_index": 0, "delta": "-la"},
        done(0, item | {"input": "ls -la"}),
        terminal(output=[item | {"input": "ls -la"}]),
    ]
    msg = agg(events)
    [part] = msg.parts
    assert (part.type, part.id, part.arguments) == ("custom", "c1", "ls -la")
    assert msg.to_provider(P)["output"] == [item | {"input": "ls -la"}]


def test_refusal() -> None:
    final = {
        "type": "message",
        "id": "msg_0",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "refusal", "refusal": "I can't"}],
    }
    events = [
        added(0, final | {"content": [], "status": "in_progress"}),
        {"type": "response.refusal.delta", "output_index": 0, "content_index": 0, "delta": "I "},
        {"type": "response.refusal.delta", "output_index": 0, "content_index": 0, "delta": "can't"},
        {
            "type": "response.refusal.done",
            "output_index": 0,
            "content_index": 0,
            "refusal": "I can't",
        },
        done(0, final),
        terminal(output=[final]),
    ]
    msg = agg(events)
    assert msg.refusal == "I can't"
    assert msg.content == ""
    assert msg.anomalies == []
    assert msg.to_provider(P)["output"] == [final]


def test_annotations_become_citations() -> None:
    citation = {"type": "url_citation", "url": "https://x", "start_index": 0, "end_index": 1}
    final = message(0, "x")
    final["content"][0]["annotations"] = [citation]
    events = [
        added(0, message(0) | {"status": "in_progress"}),
        text_delta(0, "x"),
        {
            "type": "response.output_text.annotation.added",
            "output_index": 0,
            "content_index": 0,
            "annotation_index": 0,
            "annotation": citation,
        },
        done(0, final),
        terminal(output=[final]),
    ]
    msg = agg(events)
    assert msg.parts[0].citations == [citation]  # once, not again from the done item
    assert msg.to_provider(P)["output"] == [final]


def test_annotations_only_in_done_items_are_cited_once() -> None:
    citation = {"type": "url_citation", "url": "https://x", "start_index": 0, "end_index": 1}
    final = message(0, "x")
    final["content"][0]["annotations"] = [citation]
    events = [
        added(0, message(0) | {"status": "in_progress"}),
        text_delta(0, "x"),
        done(0, final),
        terminal(output=[final]),
    ]
    msg = agg(events)
    assert msg.parts[0].citations == [citation]
    assert msg.to_provider(P)["output"] == [final]


def test_unknown_items_verbatim() -> None:
    ws = {"id": "ws_1", "type": "web_search_call", "status": "completed", "action": {"q": "x"}}
    events = [
        added(0, ws | {"status": "in_progress"}),
        {"type": "response.web_search_call.searching", "output_index": 0, "item_id": "ws_1"},
        done(0, ws),
        added(1, message(1) | {"status": "in_progress"}),
        text_delta(1, "done"),
        done(1, message(1, "done")),
        terminal(output=[ws, message(1, "done")]),
    ]
    msg = agg(events)
    assert [p.PART for p in msg.parts] == ["unknown", "text"]
    assert msg.parts[0].raw == ws and msg.parts[0].kind == "web_search_call"
    assert msg.parts[0].provider == P
    assert msg.to_provider(P)["output"] == [ws, message(1, "done")]


def test_output_from_the_terminal_response_only() -> None:
    """A server that sends no item events: the terminal response's output is the message."""
    output = [
        {"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "s"}]},
        message(1, "hi"),
        call(2, "c1", "f", "{}"),
    ]
    msg = agg([created(), terminal(output=output)])
    assert [p.PART for p in msg.parts] == ["reasoning", "text", "tool_call"]
    assert msg.to_provider(P)["output"] == output
    assert msg.anomalies == []


def test_item_id_from_item_when_output_index_missing() -> None:
    """A delta without output_index finds its item by item_id."""
    events = [
        added(0, message(0) | {"status": "in_progress"}),
        {
            "type": "response.output_text.delta",
            "item_id": "msg_0",
            "content_index": 0,
            "delta": "x",
        },
    ]
    assert agg(events).content == "x"


def test_unknown_event_types_are_ignored() -> None:
    events = [
        created(),
        {"type": "response.some_future_event", "output_index": 0},
        {"type": "response.code_interpreter_call_code.delta", "output_index": 0, "delta": "x"},
        terminal(),
    ]
    msg = agg(events)
    assert msg.parts == ()
    assert msg.status == "complete"


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


# ---------------------------------------------------------------------------------------------
# Bad shapes, inputs, transports


@pytest.mark.parametrize(
    ("event", "detail"),
    [
        (
            {"type": "response.in_progress", "response": "x"},
            "openai-responses: response.in_progress: 'response' must be a dict, not str",
        ),
        (
            {"type": "response.output_text.delta", "output_index": "0", "delta": "x"},
            "openai-responses: response.output_text.delta: 'output_index' must be an int, not str",
        ),
        (
            {"type": "response.output_text.delta", "output_index": 0, "delta": ["x"]},
            "openai-responses: response.output_text.delta: 'delta' must be a str, not list",
        ),
        (
            text_delta(0, "x", logprobs="bad"),
            "openai-responses: response.output_text.delta: 'logprobs' must be a list, not str",
        ),
        (
            {"type": "response.output_text.delta", "output_index": 0, "content_index": 1.5},
            "openai-responses: response.output_text.delta: 'content_index' must be an int, "
            "not float",
        ),
        (
            {"type": "response.output_item.added", "output_index": 0, "item": []},
            "openai-responses: response.output_item.added: 'item' must be a dict, not list",
        ),
        (
            done(0, {"type": "message", "content": "text"}),
            "openai-responses: response.output_item.done: 'item.content' must be a list, not str",
        ),
        (
            done(0, {"type": "reasoning", "summary": [], "encrypted_content": 5}),
            "openai-responses: response.output_item.done: 'item.encrypted_content' must be "
            "a str, not int",
        ),
        (
            {"type": "response.output_text.delta", "output_index": -1, "delta": "x"},
            "openai-responses: response.output_text.delta: 'output_index' must be between 0 "
            "and 999999999999, not -1",
        ),
        (
            {"type": "response.output_text.delta", "output_index": 0, "content_index": 500},
            "openai-responses: response.output_text.delta: 'content_index' must be between 0 "
            "and 499, not 500",
        ),
        (
            {
                "type": "response.reasoning_summary_text.done",
                "output_index": 0,
                "summary_index": 499,
            },
            "openai-responses: response.reasoning_summary_text.done: 'summary_index' must be "
            "between 0 and 498, not 499",
        ),
        (
            done(0, {"type": "message", "content": [{}] * 501}),
            "openai-responses: response.output_item.done: 'item.content' must have at most "
            "500 entries",
        ),
        (
            {"type": "response.completed", "response": {"output": {}}},
            "openai-responses: response.completed: 'response.output' must be a list, not dict",
        ),
    ],
)
def test_bad_event_shapes(event: dict[str, Any], detail: str) -> None:
    with pytest.raises(EventError) as info:
        agg([created(), event], strict=True)
    assert info.value.event == 2
    assert info.value.detail == detail
    # not strict: skipped, and said (spec §8)
    anomaly = {"code": "unreadable_event", "detail": f"event 2: {detail}"}
    assert anomaly in agg([created(), event]).anomalies


def test_inputs_are_not_mutated() -> None:
    events = [
        created(),
        added(0, message(0) | {"status": "in_progress"}),
        text_delta(0, "a", logprobs=[{"token": "a"}]),
        done(0, message(0, "a")),
        added(1, {"id": "ws", "type": "web_search_call"}),
        done(1, {"id": "ws", "type": "web_search_call", "status": "completed"}),
        terminal(output=[message(0, "a"), {"id": "ws", "type": "web_search_call"}]),
    ]
    before = copy.deepcopy(events)
    msg = agg(events)
    msg.to_provider(P)
    assert events == before


def test_auto_detects_the_provider() -> None:
    msg = fastmerge.aggregate([created(), terminal()], "auto")
    assert msg.provider_metadata["provider"] == P
    assert msg.status == "complete"


def _sse(events: list[dict[str, Any]]) -> bytes:
    out = "".join(
        f"event: {e['type']}\ndata: {json.dumps(e, ensure_ascii=False)}\n\n" for e in events
    )
    return out.encode()


def test_sse_bytes_split_at_every_position() -> None:
    events = [
        created(),
        added(0, message(0) | {"status": "in_progress"}),
        text_delta(0, "Hé"),
        text_delta(0, "😀"),
        done(0, message(0, "Hé😀")),
        terminal(output=[message(0, "Hé😀")]),
    ]
    data = _sse(events)
    whole = fastmerge.aggregate(data, P).to_dict()
    assert whole["parts"][0]["text"] == "Hé😀"
    for cut in range(1, len(data)):
        aggregator = fastmerge.Aggregator(P)
        aggregator.feed(data[:cut])
        aggregator.feed(data[cut:])
        assert aggregator.finish().to_dict() == whole, cut


def test_render_a_message_of_another_provider() -> None:
    """A message built by hand (no Responses metadata) renders with ids left empty."""
    msg = agg([created(), terminal()])
    assert msg.to_provider(P)["output"] == []
    parts = [
        {
            "part": "reasoning",
            "text": "think",
            "payload": {"provider": "anthropic", "kind": "signature", "data": "S"},
        },
        {"part": "text", "text": "hi"},
        {"part": "tool_call", "id": "c1", "name": "f", "arguments": "{}"},
    ]
    other = fastmerge.AssistantMessage.from_dict({"role": "assistant", "parts": parts})
    output = other.to_provider(P)["output"]
    assert [i["type"] for i in output] == ["reasoning", "message", "function_call"]
    assert "encrypted_content" not in output[0]  # another provider's payload is not replayed
    assert output[1]["content"][0]["text"] == "hi"
    assert (output[2]["call_id"], output[2]["arguments"]) == ("c1", "{}")


# ---------------------------------------------------------------------------------------------
# Both backends on damaged streams


def _mutate(rng: Any, events: list[Any]) -> list[Any]:
    """Drop, repeat, swap or cut events, or put a value of another type somewhere inside."""
    out = list(events)
    for _ in range(rng.randint(1, 5)):
        if not out:
            break
        i = rng.randrange(len(out))
        op = rng.random()
        if op < 0.25:
            del out[i]
        elif op < 0.45:
            out.insert(rng.randrange(len(out) + 1), out[i])
        elif op < 0.6:
            j = rng.randrange(len(out))
            out[i], out[j] = out[j], out[i]
        elif op < 0.7:
            out = out[:i]
        else:
            event = copy.deepcopy(out[i])
            node = event
            for _depth in range(3):
                if isinstance(node, dict) and node:
                    key = rng.choice(sorted(node))
                    if isinstance(node[key], (dict, list)) and node[key] and rng.random() < 0.5:
                        node = node[key]
                        continue
                    node[key] = rng.choice([None, 1, 1.5, True, "s", "", [], {}, [1], {"a": 1}])
                elif isinstance(node, list) and node:
                    k = rng.randrange(len(node))
                    if isinstance(node[k], (dict, list)) and rng.random() < 0.5:
                        node = node[k]
                        continue
                    node[k] = rng.choice([None, 1, "s", {}])
                break
            out[i] = event
    return out


@pytest.mark.differential
def test_damaged_corpus_streams_agree_on_both_backends() -> None:
    import random

    from _support.corpus import dumps, streams
    from conftest import AGGREGATES, BACKENDS

    if len(BACKENDS) < 2:
        pytest.skip("one backend under test")
    recorded = [
        [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
        for path in streams("openai_responses")
    ]
    rng = random.Random(4)

    def run(backend: str, events: list[Any], strict: bool) -> Any:
        try:
            module = AGGREGATES[backend]
            return dumps(module.aggregate_choices(events, P, strict=strict))
        except Exception as exc:  # the same error, with the same text, on both
            return (type(exc).__name__, str(exc))

    for trial in range(250):
        events = _mutate(rng, rng.choice(recorded))
        strict = rng.random() < 0.2
        results = {backend: run(backend, events, strict) for backend in BACKENDS}
        assert len(set(map(repr, results.values()))) == 1, (trial, results)


def test_content_and_summary_part_done_without_deltas() -> None:
    """A server that streams no deltas: the part done events give the texts."""
    events = [
        {"type": "response.queued", "response": {"id": "resp_1", "status": "queued"}},
        {"type": "response.in_progress", "response": {"id": "resp_1", "status": "in_progress"}},
        added(0, {"type": "reasoning", "id": "rs_1", "summary": []}),
        {
            "type": "response.reasoning_summary_part.done",
            "output_index": 0,
            "summary_index": 0,
            "part": {"type": "summary_text", "text": "plan"},
        },
        added(1, message(1) | {"status": "in_progress"}),
        {
            "type": "response.content_part.done",
            "output_index": 1,
            "content_index": 0,
            "part": {"type": "output_text", "text": "hi", "annotations": []},
        },
        {
            "type": "response.content_part.done",
            "output_index": 1,
            "content_index": 1,
            "part": {"type": "refusal", "refusal": "no"},
        },
        {
            "type": "response.content_part.done",
            "output_index": 1,
            "content_index": 2,
            "part": {"type": "output_audio", "data": "x"},
        },
    ]
    msg = agg(events)
    assert [(p.PART, p.index) for p in msg.parts] == [("reasoning", 500), ("text", 1000)]
    assert msg.parts[0].summary == "plan"
    assert msg.content == "hi"
    assert msg.refusal == "no"
    assert msg.provider_metadata["response"] == {"id": "resp_1", "status": "in_progress"}
    assert codes(msg) == ["truncated", "truncated"]
