"""The ``"openai-responses"`` adapter on the whole wire (both backends): every member of the
openai SDK's ``ResponseStreamEvent`` union has a rule; the deltas and statuses of the newer
item kinds survive a cut stream; audio; explicit nulls in every input form; the normalized
finish reason (in the message and in Parquet); sequence numbers; the SDK's own accumulator."""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import pytest

import fastmerge
import fastmerge.batch
from fastmerge._pure.providers.openai_responses import WIRE_RULES

P = "openai-responses"


def _union_types() -> list[str]:
    from openai.types.responses import ResponseStreamEvent

    members = typing.get_args(ResponseStreamEvent)
    if members and typing.get_args(members[0]):
        members = typing.get_args(members[0])  # Annotated[Union[...], ...]
    return [m.model_fields["type"].annotation.__args__[0] for m in members]


def created() -> dict[str, Any]:
    return {
        "type": "response.created",
        "sequence_number": 0,
        "response": {"id": "resp_1", "object": "response", "status": "in_progress", "output": []},
    }


def completed(
    output: list[Any] | None = None, status: str = "completed", **extra: Any
) -> dict[str, Any]:
    response: dict[str, Any] = {"id": "resp_1", "object": "response", "status": status}
    if output is not None:
        response["output"] = output
    response.update(extra)
    return {"type": f"response.{status}", "response": response}


def added(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def done(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": index, "item": item}


def ev(kind: str, index: int = 0, **fields: Any) -> dict[str, Any]:
    return {"type": f"response.{kind}", "output_index": index, "item_id": "it_1", **fields}


def codes(message: Any) -> list[str]:
    return [a["code"] for a in message.anomalies]


def test_every_member_of_the_sdk_union_has_a_rule() -> None:
    """Every event type of the installed SDK's union is a key of ``WIRE_RULES``, each with a
    sentence; no key names a type the SDK does not define."""
    types = _union_types()
    assert len(types) >= 59
    assert sorted(set(types) - set(WIRE_RULES)) == []
    assert sorted(set(WIRE_RULES) - set(types)) == []
    assert all(isinstance(v, str) and v for v in WIRE_RULES.values())


def test_cut_mcp_call_keeps_its_arguments() -> None:
    """E99: a cut MCP call keeps arguments ``{"q":"is:open label:bug``, flagged truncated."""
    events = [
        created(),
        added(0, {"type": "mcp_call", "id": "mcp_1", "name": "search", "arguments": ""}),
        ev("mcp_call.in_progress", item_id="mcp_1"),
        ev("mcp_call_arguments.delta", item_id="mcp_1", delta='{"q":"is:open'),
        ev("mcp_call_arguments.delta", item_id="mcp_1", delta=" label:bug"),
    ]
    msg = fastmerge.aggregate(events, P)
    assert codes(msg) == ["truncated"]
    assert msg.parts[-1].raw == {
        "type": "mcp_call",
        "id": "mcp_1",
        "name": "search",
        "arguments": '{"q":"is:open label:bug',
        "status": "in_progress",
    }
    rendered = msg.to_provider(P)
    assert rendered["output"][0]["arguments"] == '{"q":"is:open label:bug'


def test_cut_code_shell_and_image_items_keep_their_deltas() -> None:
    """E99: the same for code-interpreter code, shell commands and partial images."""
    events = [
        created(),
        added(0, {"type": "code_interpreter_call", "id": "ci_1", "code": None}),
        ev("code_interpreter_call.interpreting", item_id="ci_1"),
        ev("code_interpreter_call_code.delta", item_id="ci_1", delta="print("),
        ev("code_interpreter_call_code.delta", item_id="ci_1", delta="1)"),
        added(1, {"type": "shell_call", "id": "sh_1", "action": {"commands": []}}),
        {
            "type": "response.shell_call_command.added",
            "output_index": 1,
            "command_index": 0,
            "command": "ls",
        },
        {
            "type": "response.shell_call_command.delta",
            "output_index": 1,
            "command_index": 0,
            "delta": " -la",
        },
        {
            "type": "response.shell_call_command.delta",
            "output_index": 1,
            "command_index": 1,
            "delta": "pwd",
        },
        added(2, {"type": "image_generation_call", "id": "ig_1", "status": "in_progress"}),
        ev("image_generation_call.generating", 2, item_id="ig_1"),
        ev(
            "image_generation_call.partial_image",
            2,
            item_id="ig_1",
            partial_image_b64="AAA",
            partial_image_index=1,
        ),
        ev(
            "image_generation_call.partial_image",
            2,
            item_id="ig_1",
            partial_image_b64="ZZZ",
            partial_image_index=0,
        ),
    ]
    msg = fastmerge.aggregate(events, P)
    assert codes(msg) == ["truncated"] * 3
    raws = [p.raw for p in msg.parts]
    assert raws[0] == {
        "type": "code_interpreter_call",
        "id": "ci_1",
        "code": "print(1)",
        "status": "interpreting",
    }
    assert raws[1] == {
        "type": "shell_call",
        "id": "sh_1",
        "action": {"commands": ["ls -la", "pwd"]},
    }
    assert raws[2] == {
        "type": "image_generation_call",
        "id": "ig_1",
        "status": "generating",
        "partial_image_index": 1,
        "partial_image_b64": "AAA",
    }


def test_done_items_are_authoritative_over_deltas() -> None:
    """The item of ``output_item.done`` replaces what the deltas built (no truncation)."""
    final = {
        "type": "mcp_call",
        "id": "mcp_1",
        "arguments": '{"q":1}',
        "status": "completed",
        "output": "ok",
    }
    events = [
        created(),
        added(0, {"type": "mcp_call", "id": "mcp_1", "arguments": ""}),
        ev("mcp_call_arguments.delta", item_id="mcp_1", delta='{"q":'),
        ev("mcp_call_arguments.done", item_id="mcp_1", arguments='{"q":1}'),
        ev("mcp_call.completed", item_id="mcp_1"),
        done(0, final),
        completed(),
    ]
    msg = fastmerge.aggregate(events, P)
    assert codes(msg) == []
    assert [p.raw for p in msg.parts] == [final]
    assert msg.finish_reason_normalized == "tool_calls"
    assert msg.to_dict()["finish_reason"] is None


def test_shell_output_content_and_status_only_events() -> None:
    """Shell output deltas append stdout and stderr; every status-only event sets the status."""
    events = [
        created(),
        added(0, {"type": "shell_call_output", "id": "so_1", "output": []}),
        ev(
            "shell_call_output_content.delta",
            item_id="so_1",
            command_index=0,
            delta={"stdout": "a", "stderr": None},
        ),
        ev(
            "shell_call_output_content.delta",
            item_id="so_1",
            command_index=0,
            delta={"stdout": "b", "stderr": "e"},
        ),
        added(1, {"type": "web_search_call", "id": "ws_1", "status": "in_progress"}),
        ev("web_search_call.searching", 1, item_id="ws_1"),
        added(2, {"type": "compaction", "id": "cp_1"}),
        ev("compaction.compacting", 2, item_id="cp_1"),
    ]
    msg = fastmerge.aggregate(events, P)
    raws = [p.raw for p in msg.parts]
    assert raws[0]["output"] == [{"stdout": "ab", "stderr": "e"}]
    assert raws[1]["status"] == "searching"
    assert raws[2] == {"type": "compaction", "id": "cp_1", "status": "compacting"}


def test_audio_and_its_transcript() -> None:
    """E100: the message holds the transcript ``Hi there`` and the base64 pieces joined."""
    events = [
        created(),
        {"type": "response.audio.transcript.delta", "delta": "Hi "},
        {"type": "response.audio.transcript.delta", "delta": "there"},
        {"type": "response.audio.delta", "delta": "UklG"},
        {"type": "response.audio.delta", "delta": "RiQA"},
        {"type": "response.audio.done"},
        {"type": "response.audio.transcript.done"},
        completed(),
    ]
    msg = fastmerge.aggregate(events, P)
    audio = [p for p in msg.to_dict()["parts"] if p["kind"] == "audio"]
    assert [p["raw"] for p in audio] == [{"data": "UklGRiQA", "transcript": "Hi there"}]
    assert codes(msg) == []
    assert msg.to_provider(P)["output"] == []
    cut = fastmerge.aggregate(events[:4], P)
    assert [p.raw for p in cut.parts] == [{"data": "UklG", "transcript": "Hi there"}]
    assert codes(cut) == ["truncated", "truncated"]


REASONING = {"type": "reasoning", "id": "rs_1", "summary": [], "content": None, "status": None}


def _sdk_events() -> list[Any]:
    from openai.types.responses import (
        ResponseCompletedEvent,
        ResponseCreatedEvent,
        ResponseOutputItemAddedEvent,
        ResponseOutputItemDoneEvent,
        ResponseReasoningItem,
        ResponseReasoningSummaryTextDeltaEvent,
    )
    from openai.types.responses.response import Response

    def response(status: str) -> Response:
        return Response.model_construct(
            id="resp_1",
            object="response",
            created_at=1.0,
            model="gpt-x",
            output=[],
            parallel_tool_calls=True,
            tool_choice="auto",
            tools=[],
            status=status,
        )

    item = ResponseReasoningItem(type="reasoning", id="rs_1", summary=[], content=None, status=None)
    summary = {"type": "summary_text", "text": "Think."}
    final = ResponseReasoningItem(
        type="reasoning", id="rs_1", summary=[summary], content=None, status=None
    )
    return [
        ResponseCreatedEvent(
            type="response.created", sequence_number=0, response=response("in_progress")
        ),
        ResponseOutputItemAddedEvent(
            type="response.output_item.added", sequence_number=1, output_index=0, item=item
        ),
        ResponseReasoningSummaryTextDeltaEvent(
            type="response.reasoning_summary_text.delta",
            sequence_number=2,
            item_id="rs_1",
            output_index=0,
            summary_index=0,
            delta="Think.",
        ),
        ResponseOutputItemDoneEvent(
            type="response.output_item.done", sequence_number=3, output_index=0, item=final
        ),
        ResponseCompletedEvent(
            type="response.completed", sequence_number=4, response=response("completed")
        ),
    ]


def _sse(events: list[dict[str, Any]]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def test_explicit_nulls_render_as_null_in_every_form() -> None:
    """E98: a reasoning item sent with ``content: null`` and ``status: null`` renders with
    both null (SDK objects, dicts with the nulls, SSE bytes, bytes fed 13 at a time); sent
    without them, neither is invented (no ``"completed"``, no ``[]``)."""
    sdk = _sdk_events()
    dumps = [e.model_dump(mode="json") for e in sdk]
    data = _sse(dumps)
    feeder = fastmerge.Aggregator(P)
    for at in range(0, len(data), 13):
        feeder.feed(data[at : at + 13])
    forms = [
        fastmerge.aggregate(sdk, P),
        fastmerge.aggregate(dumps, P),
        fastmerge.aggregate(data, P),
        feeder.finish(),
    ]
    items = [m.to_provider(P)["output"] for m in forms]
    expected = [
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "Think."}],
            "content": None,
            "status": None,
        }
    ]
    for got in items:
        assert [{k: v for k, v in i.items() if k != "encrypted_content"} for i in got] == expected
        assert got[0].get("encrypted_content") is None
    assert all(m.parts == forms[0].parts for m in forms)
    bare = [e.model_dump(mode="json", exclude_none=True) for e in sdk]
    output = fastmerge.aggregate(bare, P).to_provider(P)["output"]
    assert output == [
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Think."}]}
    ]


@pytest.mark.parametrize(
    ("terminal", "normalized", "raw"),
    [
        (completed(), "stop", None),
        (
            completed(status="incomplete", incomplete_details={"reason": "max_output_tokens"}),
            "length",
            "max_output_tokens",
        ),
        (
            completed(status="incomplete", incomplete_details={"reason": "content_filter"}),
            "content_filter",
            "content_filter",
        ),
        (completed(status="failed", error={"code": "server_error", "message": "x"}), "error", None),
    ],
)
def test_normalized_finish_reason(terminal: dict[str, Any], normalized: str, raw: Any) -> None:
    """The normalized finish reason comes from the status; no raw reason is invented."""
    msg = fastmerge.aggregate([created(), terminal], P)
    assert msg.finish_reason_normalized == normalized
    assert msg.to_dict()["finish_reason"] == raw


def test_normalized_finish_reason_for_calls_and_in_parquet(tmp_path: Path) -> None:
    """A completed response with a function call finishes for ``tool_calls``, in the message
    and in the Parquet column."""
    pq = pytest.importorskip("pyarrow.parquet")
    call = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "c1",
        "name": "f",
        "arguments": "{}",
        "status": "completed",
    }
    events = [created(), added(0, call), done(0, call), completed()]
    assert fastmerge.aggregate(events, P).finish_reason_normalized == "tool_calls"
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    out = tmp_path / "out.parquet"
    fastmerge.batch.to_parquet(fastmerge.batch.merge_logs(str(log), provider=P), out)
    rows = pq.read_table(out).to_pylist()
    assert [r["finish_reason_normalized"] for r in rows] == ["tool_calls"]


def _text_stream(swap: bool) -> list[dict[str, Any]]:
    message = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "in_progress",
        "content": [],
    }
    final = dict(
        message,
        status="completed",
        content=[{"type": "output_text", "text": "Hello", "annotations": []}],
    )
    first = {
        "type": "response.output_text.delta",
        "sequence_number": 5,
        "output_index": 0,
        "content_index": 0,
        "item_id": "msg_1",
        "delta": "Hel",
    }
    second = dict(first, sequence_number=6, delta="lo")
    deltas = [second, first] if swap else [first, second]
    return [
        created(),
        dict(added(0, message), sequence_number=1),
        {
            "type": "response.content_part.added",
            "sequence_number": 4,
            "output_index": 0,
            "content_index": 0,
            "item_id": "msg_1",
            "part": {"type": "output_text", "text": "", "annotations": []},
        },
        *deltas,
        dict(done(0, final), sequence_number=7),
        dict(completed(), sequence_number=8),
    ]


def test_swapped_deltas_give_the_done_text() -> None:
    """E97: two text deltas swapped (sequence numbers 6 then 5) give the text of
    ``output_item.done``, with anomaly ``out_of_order``."""
    msg = fastmerge.aggregate(_text_stream(True), P)
    assert msg.content == "Hello"
    assert codes(msg) == ["out_of_order"]
    assert msg.anomalies[0]["detail"] == "response.output_text.delta: sequence_number 5 after 6"
    assert fastmerge.aggregate(_text_stream(False), P).to_dict() == {
        **msg.to_dict(),
        "anomalies": [],
    }
    with pytest.raises(fastmerge.AnomalyError):
        fastmerge.aggregate(_text_stream(True), P, strict=True)


def test_agrees_with_the_sdk_accumulator() -> None:
    """The merged message renders the output items of ``ResponseStreamState``'s final
    response for the kinds the SDK accumulates (message text, function-call arguments)."""
    from openai import omit
    from openai.lib.streaming.responses._responses import ResponseStreamState
    from openai.types.responses import ResponseStreamEvent
    from pydantic import TypeAdapter

    message = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "in_progress",
        "content": [],
    }
    text = {"type": "output_text", "text": "Hi!", "annotations": [], "logprobs": []}
    call = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "c1",
        "name": "f",
        "arguments": "",
        "status": "in_progress",
    }
    final_message = dict(message, status="completed", content=[text])
    final_call = dict(call, arguments='{"a":1}', status="completed")
    raw = [
        created(),
        added(0, message),
        {
            "type": "response.content_part.added",
            "output_index": 0,
            "content_index": 0,
            "item_id": "msg_1",
            "part": dict(text, text=""),
        },
        {
            "type": "response.output_text.delta",
            "output_index": 0,
            "content_index": 0,
            "item_id": "msg_1",
            "delta": "Hi",
            "logprobs": [],
        },
        {
            "type": "response.output_text.delta",
            "output_index": 0,
            "content_index": 0,
            "item_id": "msg_1",
            "delta": "!",
            "logprobs": [],
        },
        done(0, final_message),
        added(1, call),
        ev("function_call_arguments.delta", 1, item_id="fc_1", delta='{"a":'),
        ev("function_call_arguments.delta", 1, item_id="fc_1", delta="1}"),
        done(1, final_call),
        completed([final_message, final_call]),
    ]
    for seq, event in enumerate(raw):
        event["sequence_number"] = seq
        if "response" in event:
            event["response"] = {
                "created_at": 1.0,
                "model": "gpt-x",
                "output": [],
                "parallel_tool_calls": True,
                "tool_choice": "auto",
                "tools": [],
                **event["response"],
            }
    adapter: Any = TypeAdapter(ResponseStreamEvent)
    sdk = [adapter.validate_python(e) for e in raw]
    state = ResponseStreamState(input_tools=[], text_format=omit)
    for event in sdk:
        state.handle_event(event)
    snapshot = state._completed_response
    assert snapshot is not None
    expected = [item.model_dump(mode="json", exclude_none=True) for item in snapshot.output]
    msg = fastmerge.aggregate(sdk, P)
    got = msg.to_provider(P)["output"]
    assert [{k: v for k, v in item.items() if v is not None} for item in got] == expected


def test_numbers_with_gaps_lose_nothing() -> None:
    """Deltas numbered with gaps (a hole never filled) wait only until the next event that is
    no delta: the text is whole, in order, with no anomaly; the snapshot shows it after."""
    message = {"type": "message", "id": "msg_1", "role": "assistant", "content": []}
    deltas = [
        {
            "type": "response.output_text.delta",
            "sequence_number": n,
            "output_index": 0,
            "content_index": 0,
            "delta": piece,
        }
        for n, piece in ((3, "a"), (5, "b"), (9, "c"))
    ]
    aggregator = fastmerge.Aggregator(P)
    for event in [dict(created(), sequence_number=1), dict(added(0, message), sequence_number=2)]:
        aggregator.add(event)
    for event in deltas:
        aggregator.add(event)
    assert aggregator.snapshot().content == "a"
    aggregator.add(
        {
            "type": "response.output_text.done",
            "sequence_number": 10,
            "output_index": 0,
            "content_index": 0,
            "text": "abc",
        }
    )
    assert aggregator.snapshot().content == "abc"
    msg = aggregator.finish()
    assert msg.content == "abc"
    assert codes(msg) == ["truncated"]  # the message item never finished


def test_a_held_delta_that_cannot_be_read() -> None:
    """A delta held after a gap that turns out unreadable is an ``unrecognized_event``
    anomaly at the end (the end of a stream raises nothing)."""
    events = [
        dict(created(), sequence_number=1),
        dict(added(0, {"type": "message", "id": "m", "content": []}), sequence_number=2),
        {"type": "response.output_text.delta", "sequence_number": 4, "output_index": 0, "delta": 7},
    ]
    msg = fastmerge.aggregate(events, P)
    assert msg.anomalies[0] == {
        "code": "unrecognized_event",
        "detail": "response.output_text.delta: 'delta' must be a str, not int",
    }


def test_tool_stream_fed_13_bytes_at_a_time() -> None:
    """E99: the cut stream's items are the same from SSE bytes fed 13 at a time."""
    events = [
        created(),
        added(0, {"type": "mcp_call", "id": "mcp_1", "arguments": ""}),
        ev("mcp_call_arguments.delta", item_id="mcp_1", delta='{"q":"é'),
        ev("mcp_call_arguments.delta", item_id="mcp_1", delta='😀"'),
        {"type": "response.audio.delta", "delta": "UklG"},
    ]
    whole = fastmerge.aggregate(events, P).to_dict()
    data = _sse(events)
    feeder = fastmerge.Aggregator(P)
    for at in range(0, len(data), 13):
        feeder.feed(data[at : at + 13])
    assert feeder.finish().to_dict() == whole
    assert whole["parts"][0]["raw"]["arguments"] == '{"q":"é😀"'
    assert whole["parts"][1]["raw"] == {"data": "UklG"}
    with pytest.raises(fastmerge.AnomalyError):
        fastmerge.aggregate(events, P, strict=True)


def test_unknown_status_and_mismatched_family() -> None:
    """A status event of a family on an item of another kind is ``mismatched_delta``; a
    delta for an item already done changes nothing (the done item is authoritative)."""
    ws = {"type": "web_search_call", "id": "ws_1", "status": "completed"}
    events = [
        created(),
        added(0, {"type": "message", "id": "m", "content": []}),
        ev("mcp_call.in_progress", 0, item_id="m"),
        added(1, dict(ws, status="in_progress")),
        done(1, ws),
        ev("web_search_call.searching", 1, item_id="ws_1"),
        completed(),
    ]
    msg = fastmerge.aggregate(events, P)
    assert msg.anomalies == [
        {
            "code": "mismatched_delta",
            "detail": "response.mcp_call.in_progress on a message item at output_index 0 ignored",
        }
    ]
    assert [p["raw"] for p in msg.to_dict()["parts"]] == [ws]


def test_a_delta_after_its_done_item_is_not_merged() -> None:
    """E97: a delta that comes after its item's ``output_item.done`` (a lower sequence number)
    leaves the done text as it is, with ``out_of_order``."""
    stream = _text_stream(False)
    late = stream.pop(3)  # "Hel", number 5, now after the done item (7)
    stream.insert(5, late)
    msg = fastmerge.aggregate(stream, P)
    assert msg.content == "Hello"
    assert [a["detail"] for a in msg.anomalies if a["code"] == "out_of_order"] == [
        "response.output_text.delta: sequence_number 5 after 7; its item is done, the delta "
        "is not merged"
    ]
