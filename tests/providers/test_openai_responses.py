"""The ``"openai-responses"`` adapter on small event lists (both backends): each event and
delta type, annotations, unknown items and events, and part done events without deltas."""

from __future__ import annotations

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
