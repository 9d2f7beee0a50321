"""The ``"bedrock-converse"`` adapter on small event lists (both backends): each event and
delta type, the quirks the corpus lacks (a stream cut mid tool use, deltas before their block
start, an exception event, a block started twice), status, bad shapes, strict mode, inputs
left unchanged, and SSE-free JSON lines split at every byte."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from _support.corpus import assert_backends_agree
from hypothesis import given, settings
from hypothesis import strategies as st

import fastmerge
from fastmerge.errors import EventError
from fastmerge.render import to_provider

P = "bedrock-converse"


def start(i: int, **start: Any) -> dict[str, Any]:
    return {"contentBlockStart": {"contentBlockIndex": i, "start": start}}


def delta(i: int, **delta: Any) -> dict[str, Any]:
    return {"contentBlockDelta": {"contentBlockIndex": i, "delta": delta}}


def stop(i: int) -> dict[str, Any]:
    return {"contentBlockStop": {"contentBlockIndex": i}}


MSG_START = {"messageStart": {"role": "assistant"}}
METADATA = {
    "metadata": {
        "usage": {
            "inputTokens": 10,
            "outputTokens": 5,
            "totalTokens": 15,
            "cacheReadInputTokens": 3,
            "cacheWriteInputTokens": 2,
            "serverToolUsage": {},
        },
        "metrics": {"latencyMs": 42},
        "trace": {"guardrail": {}},
    }
}

TOOL_STREAM = [
    MSG_START,
    delta(0, reasoningContent={"text": "think"}),
    delta(0, reasoningContent={"signature": "SIG=="}),
    stop(0),
    delta(1, text="Hel"),
    delta(1, text="lo"),
    stop(1),
    start(2, toolUse={"toolUseId": "t1", "name": "get"}),
    delta(2, toolUse={"input": '{"a"'}),
    delta(2, toolUse={"input": ":1}"}),
    stop(2),
    {"messageStop": {"stopReason": "tool_use", "p": "abc"}},
    METADATA,
]


def parts(message: Any) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = message.to_dict()["parts"]
    return result


def test_full_stream() -> None:
    message = fastmerge.aggregate(TOOL_STREAM, P)
    data = message.to_dict()
    assert data["role"] == "assistant"
    assert data["status"] == "complete"
    assert data["finish_reason"] == "tool_use"
    assert message.finish_reason_normalized == "tool_calls"
    assert data["anomalies"] == []
    reasoning, text, call = parts(message)
    assert reasoning["text"] == "think" and reasoning["index"] == 0
    assert reasoning["payload"] == {"provider": P, "kind": "signature", "data": "SIG=="}
    assert text["text"] == "Hello" and text["index"] == 1
    assert (call["id"], call["name"], call["arguments"], call["provider_index"]) == (
        "t1",
        "get",
        '{"a":1}',
        2,
    )
    assert data["usage_metadata"] == {
        "input_tokens": 10,
        "output_tokens": 5,
        "total_tokens": 15,
        "cache_read_tokens": 3,
        "cache_write_tokens": 2,
        "serverToolUsage": {},
    }
    assert data["provider_metadata"] == {
        "provider": P,
        "metrics": {"latencyMs": 42},
        "trace": {"guardrail": {}},
    }


def test_render() -> None:
    rendered = to_provider(fastmerge.aggregate(TOOL_STREAM, P), P)
    assert rendered == {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "reasoningContent": {
                            "reasoningText": {"text": "think", "signature": "SIG=="}
                        }
                    },
                    {"text": "Hello"},
                    {"toolUse": {"toolUseId": "t1", "name": "get", "input": {"a": 1}}},
                ],
            }
        },
        "stopReason": "tool_use",
        "usage": {
            "inputTokens": 10,
            "outputTokens": 5,
            "totalTokens": 15,
            "cacheReadInputTokens": 3,
            "cacheWriteInputTokens": 2,
            "serverToolUsage": {},
        },
        "metrics": {"latencyMs": 42},
        "trace": {"guardrail": {}},
    }


def test_render_leaves_out_other_providers_payloads() -> None:
    """A signature another provider made is not replayed to Bedrock."""
    events = [
        MSG_START,
        delta(0, reasoningContent={"text": "t"}),
        delta(0, reasoningContent={"signature": "S"}),
        {"messageStop": {"stopReason": "end_turn"}},
    ]
    message = fastmerge.aggregate(events, P)
    data = message.to_dict()
    data["parts"][0]["payload"]["provider"] = "anthropic"
    foreign = type(message).from_dict(data)
    content = to_provider(foreign, P)["output"]["message"]["content"]
    assert content == [{"reasoningContent": {"reasoningText": {"text": "t"}}}]


def test_redacted_content() -> None:
    message = fastmerge.aggregate(
        [MSG_START, delta(0, reasoningContent={"redactedContent": "QkxPQg=="}), stop(0)], P
    )
    (part,) = parts(message)
    assert part["part"] == "reasoning" and part["redacted"] is True and part["text"] == ""
    assert part["payload"] == {"provider": P, "kind": "redacted_content", "data": "QkxPQg=="}
    content = to_provider(message, P)["output"]["message"]["content"]
    assert content == [{"reasoningContent": {"redactedContent": "QkxPQg=="}}]


def test_empty_text_delta_adds_no_part() -> None:
    message = fastmerge.aggregate(
        [MSG_START, delta(0, text=""), stop(0), delta(1, text="hi"), stop(1)], P
    )
    assert [(p["part"], p["text"], p["index"]) for p in parts(message)] == [("text", "hi", 1)]


def test_citation_delta() -> None:
    citation = {"title": "doc", "location": {"documentChar": {"start": 0, "end": 4}}}
    message = fastmerge.aggregate(
        [MSG_START, delta(0, text="Paris"), delta(0, citation=citation), stop(0)], P
    )
    (part,) = parts(message)
    assert part["text"] == "Paris" and part["citations"] == [citation]
    content = to_provider(message, P)["output"]["message"]["content"]
    assert content == [
        {"citationsContent": {"content": [{"text": "Paris"}], "citations": [citation]}}
    ]


def test_unknown_start_and_delta_kept_verbatim() -> None:
    video = {"video": {"format": "mp4", "source": {"bytes": "AAAA"}}}
    message = fastmerge.aggregate(
        [MSG_START, start(0, video={"format": "mp4"}), delta(0, **video), stop(0)], P
    )
    first, second = parts(message)
    assert first == {
        "part": "unknown",
        "provider": P,
        "kind": "video",
        "raw": {"video": {"format": "mp4"}},
        "index": 0,
    }
    assert second["kind"] == "video" and second["raw"] == video and second["index"] is None
    assert message.anomalies == []


def test_an_image_start_and_delta_are_one_part() -> None:
    """E104: the image block's start and delta are one part at the block's index."""
    image = {"image": {"format": "png", "source": {"bytes": "AAAA"}}}
    message = fastmerge.aggregate(
        [MSG_START, start(0, image={"format": "png"}), delta(0, image=image["image"]), stop(0)],
        P,
    )
    assert parts(message) == [
        {"part": "unknown", "provider": P, "kind": "image", "raw": image, "index": 0}
    ]
    assert message.anomalies == []


def test_exception_event_fails() -> None:
    events = [
        MSG_START,
        delta(0, text="par"),
        {"modelStreamErrorException": {"message": "boom", "originalStatusCode": 500, "p": "x"}},
    ]
    message = fastmerge.aggregate(events, P)
    data = message.to_dict()
    assert data["status"] == "failed"
    assert data["provider_metadata"]["error"] == {
        "type": "modelStreamErrorException",
        "message": "boom",
        "originalStatusCode": 500,
    }
    assert data["anomalies"] == []  # failed, not truncated
    assert parts(message)[0]["text"] == "par"


def test_exception_event_is_detected() -> None:
    message = fastmerge.aggregate([{"throttlingException": {"message": "slow down"}}])
    assert message.status == "failed"
    assert message.to_dict()["provider_metadata"]["provider"] == P


def test_cut_mid_tool_use() -> None:
    """No messageStop: incomplete, the raw arguments kept, a truncated anomaly naming it."""
    events = [
        MSG_START,
        start(0, toolUse={"toolUseId": "t9", "name": "f"}),
        delta(0, toolUse={"input": '{"x": [1, 2'}),
    ]
    message = fastmerge.aggregate(events, P)
    data = message.to_dict()
    assert data["status"] == "incomplete"
    (call,) = data["parts"]
    assert call["arguments"] == '{"x": [1, 2'
    assert data["anomalies"] == [
        {
            "code": "truncated",
            "detail": "the stream ended inside tool call 't9' (content block 0); its arguments "
            "are kept as streamed",
            "tool_call": {"id": "t9", "provider_index": 0},
        }
    ]
    # rendering keeps the raw text (it is not JSON)
    tool = to_provider(message, P)["output"]["message"]["content"][0]["toolUse"]
    assert tool["input"] == '{"x": [1, 2'


def test_cut_mid_text_block() -> None:
    message = fastmerge.aggregate([MSG_START, delta(0, text="abc")], P)
    assert message.status == "incomplete"
    assert message.to_dict()["anomalies"] == [
        {"code": "truncated", "detail": "the stream ended inside content block 0 (text)"}
    ]


def test_cut_between_blocks_is_incomplete_without_anomaly() -> None:
    message = fastmerge.aggregate([MSG_START, delta(0, text="abc"), stop(0)], P)
    assert message.status == "incomplete"
    assert message.anomalies == []


def test_empty_stream_is_an_error() -> None:
    # no event is an error, not an empty message (spec §6)
    with pytest.raises(EventError, match="^no event could be read: the input is empty$"):
        fastmerge.aggregate([], P)


def test_tool_delta_before_start() -> None:
    events = [
        MSG_START,
        delta(0, toolUse={"input": '{"a":1}'}),
        stop(0),
        {"messageStop": {"stopReason": "tool_use"}},
    ]
    message = fastmerge.aggregate(events, P)
    data = message.to_dict()
    assert data["status"] == "complete"
    assert data["anomalies"] == [
        {
            "code": "delta_before_start",
            "detail": "content block 0: toolUse delta before its contentBlockStart",
        }
    ]
    (call,) = data["parts"]
    assert call["arguments"] == '{"a":1}' and call["name"] is None


def test_mismatched_delta() -> None:
    events = [
        MSG_START,
        start(0, toolUse={"toolUseId": "t1", "name": "f"}),
        delta(0, text="oops"),
        stop(0),
        {"messageStop": {"stopReason": "tool_use"}},
    ]
    data = fastmerge.aggregate(events, P).to_dict()
    assert data["anomalies"] == [
        {"code": "mismatched_delta", "detail": "content block 0: text delta in a toolUse block"}
    ]
    assert [p["part"] for p in data["parts"]] == ["tool_call", "text"]


def test_index_collision() -> None:
    events = [
        MSG_START,
        start(0, toolUse={"toolUseId": "a", "name": "f"}),
        delta(0, toolUse={"input": "{}"}),
        stop(0),
        start(0, toolUse={"toolUseId": "b", "name": "g"}),
        delta(0, toolUse={"input": '{"k":2}'}),
        stop(0),
        {"messageStop": {"stopReason": "tool_use"}},
    ]
    data = fastmerge.aggregate(events, P).to_dict()
    assert data["anomalies"] == [
        {"code": "index_collision", "detail": "content block 0 started a second time"}
    ]
    calls = [(p["id"], p["name"], p["arguments"]) for p in data["parts"]]
    assert calls == [("a", "f", "{}"), ("b", "g", '{"k":2}')]


def test_interleaved_blocks() -> None:
    """Deltas of two blocks interleaved: each continues its own part (by block index)."""
    events = [
        MSG_START,
        delta(0, reasoningContent={"text": "a"}),
        delta(1, text="x"),
        delta(0, reasoningContent={"text": "b"}),
        delta(1, text="y"),
        {"messageStop": {"stopReason": "end_turn"}},
    ]
    data = fastmerge.aggregate(events, P).to_dict()
    assert [(p["part"], p["text"]) for p in data["parts"]] == [("reasoning", "ab"), ("text", "xy")]


def test_server_tool_type_and_result() -> None:
    events = [
        MSG_START,
        start(
            0,
            toolUse={"toolUseId": "s1", "name": "nova_code_interpreter", "type": "server_tool_use"},
        ),
        delta(0, toolUse={"input": '{"snippet":"1+1"}'}),
        stop(0),
        start(1, toolResult={"toolUseId": "s1", "status": "success", "type": "r"}),
        delta(1, toolResult=[{"json": {"stdOut": "2"}}]),
        delta(1, toolResult=[{"text": "done"}]),
        stop(1),
        {"messageStop": {"stopReason": "end_turn"}},
    ]
    message = fastmerge.aggregate(events, P)
    assert message.anomalies == []
    content = to_provider(message, P)["output"]["message"]["content"]
    assert content == [
        {
            "toolUse": {
                "toolUseId": "s1",
                "name": "nova_code_interpreter",
                "input": {"snippet": "1+1"},
                "type": "server_tool_use",
            }
        },
        {
            "toolResult": {
                "toolUseId": "s1",
                "status": "success",
                "type": "r",
                "content": [{"json": {"stdOut": "2"}}, {"text": "done"}],
            }
        },
    ]


def test_unknown_event_type_goes_to_provider_metadata() -> None:
    data = fastmerge.aggregate([MSG_START, {"somethingNew": {"a": 1, "p": "pad"}}], P).to_dict()
    assert data["provider_metadata"]["somethingNew"] == {"a": 1}


def test_stop_fields_kept() -> None:
    events = [
        MSG_START,
        {
            "messageStop": {
                "stopReason": "end_turn",
                "additionalModelResponseFields": {"stop_sequence": "END"},
            }
        },
    ]
    message = fastmerge.aggregate(events, P)
    rendered = to_provider(message, P)
    assert rendered["additionalModelResponseFields"] == {"stop_sequence": "END"}
    assert rendered["stopReason"] == "end_turn"


@pytest.mark.parametrize(
    ("event", "detail"),
    [
        ({"contentBlockDelta": []}, "contentBlockDelta: the payload must be an object, got array"),
        (
            {"contentBlockDelta": {"contentBlockIndex": "0", "delta": {"text": "x"}}},
            "contentBlockDelta: contentBlockIndex must be an integer, got string",
        ),
        (
            {"contentBlockDelta": {"contentBlockIndex": 0}},
            "contentBlockDelta: delta must be an object, got null",
        ),
        (delta(0, text=5), "contentBlockDelta: delta.text must be a string, got number"),
        (
            delta(0, toolUse={"input": 3}),
            "contentBlockDelta: delta.toolUse.input must be a string, got number",
        ),
        (
            delta(0, reasoningContent="x"),
            "contentBlockDelta: delta.reasoningContent must be an object, got string",
        ),
        (
            delta(0, reasoningContent={"text": None}),
            "contentBlockDelta: delta.reasoningContent.text must be a string, got null",
        ),
        (
            {"contentBlockStart": {"contentBlockIndex": 0, "start": "toolUse"}},
            "contentBlockStart: start must be an object, got string",
        ),
        (start(0, toolUse=[]), "contentBlockStart: start.toolUse must be an object, got array"),
        (
            {"contentBlockStop": {"contentBlockIndex": True}},
            "contentBlockStop: contentBlockIndex must be an integer, got boolean",
        ),
        ({"metadata": {"usage": 3}}, "metadata: usage must be an object, got number"),
    ],
)
def test_bad_shapes(event: dict[str, Any], detail: str) -> None:
    with pytest.raises(EventError) as info:
        fastmerge.aggregate([MSG_START, event], P, strict=True)
    assert info.value.event == 2
    assert info.value.detail == f"{P}: {detail}"
    # not strict: skipped, and said (spec §8)
    anomaly = {"code": "unreadable_event", "detail": f"event 2: {P}: {detail}"}
    assert anomaly in fastmerge.aggregate([MSG_START, event], P).anomalies


def test_inputs_not_mutated() -> None:
    events = copy.deepcopy(TOOL_STREAM)
    fastmerge.aggregate(events, P)
    assert events == TOOL_STREAM


def test_strict_raises_on_anomaly() -> None:
    with pytest.raises(fastmerge.AnomalyError) as info:
        fastmerge.aggregate([MSG_START, delta(0, toolUse={"input": "{}"})], P, strict=True)
    assert info.value.code == "delta_before_start"


def test_strict_raises_on_truncation() -> None:
    with pytest.raises(fastmerge.AnomalyError) as info:
        fastmerge.aggregate([MSG_START, delta(0, text="x")], P, strict=True)
    assert info.value.code == "truncated"


def test_signature_merge_concat() -> None:
    events = [
        MSG_START,
        delta(0, reasoningContent={"text": "t"}),
        delta(0, reasoningContent={"signature": "A"}),
        delta(0, reasoningContent={"signature": "B"}),
    ]
    assert parts(fastmerge.aggregate(events, P))[0]["payload"]["data"] == "B"
    concat = fastmerge.aggregate(events, P, signature_merge="concat")
    assert parts(concat)[0]["payload"]["data"] == "AB"


def test_split_bytes_at_every_position() -> None:
    lines = b"".join(json.dumps(e).encode() + b"\n" for e in TOOL_STREAM[:8])
    whole = fastmerge.aggregate(lines, P).to_dict()
    for cut in range(1, len(lines)):
        agg = fastmerge.Aggregator(P)
        agg.feed(lines[:cut])
        agg.feed(lines[cut:])
        assert agg.finish().to_dict() == whole, cut


def test_auto_detects() -> None:
    agg = fastmerge.Aggregator()
    agg.add(MSG_START)
    assert agg.provider == P


# ---------------------------------------------------------------------------------------------
# Differential: any sequence of (possibly hostile) events gives the same result on every
# backend, including the same error, the same anomalies and the same end-of-stream leaves.

POOL = [
    MSG_START,
    {"messageStart": {"p": "pad"}},
    delta(0, text="a"),
    delta(0, text=""),
    delta(1, text="é\n"),
    delta(0, reasoningContent={"text": "r"}),
    delta(0, reasoningContent={"signature": "S"}),
    delta(1, reasoningContent={"redactedContent": "B"}),
    delta(2, reasoningContent={"other": 1, "text": "x"}),
    delta(2, toolUse={"input": '{"k":'}),
    delta(2, toolUse={"input": {"k": 1}}),
    delta(2, citation={"title": "t"}),
    delta(3, toolResult=[{"text": "out"}]),
    delta(3, image={"format": "png"}),
    start(2, toolUse={"toolUseId": "t1", "name": "f"}),
    start(2, toolUse={"toolUseId": "t2", "name": "g", "type": "server_tool_use"}),
    start(3, toolResult={"toolUseId": "t1", "status": "success"}),
    start(4),
    start(5, toolUse={"toolUseId": None, "name": "h"}, image={"format": "gif"}),
    delta(5, text="a", citation={"title": "c"}, toolUse={"input": "1"}),
    delta(5, reasoningContent={"redactedContent": "R", "signature": "S2", "text": ""}),
    stop(0),
    stop(2),
    stop(3),
    {"messageStop": {"stopReason": "end_turn", "p": "x"}},
    {"messageStop": {"additionalModelResponseFields": {"a": None}}},
    METADATA,
    {"metadata": {"usage": {"inputTokens": 0, "outputTokens": 0}}},
    {"internalServerException": {"message": "oops", "type": "t"}},
    {"unknownEvent": {"x": [1]}},
    {"a": 1, "b": 2},
    delta(0, text=3),
    {"contentBlockStop": {"contentBlockIndex": 1.5}},
]


@pytest.mark.differential
@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(POOL), max_size=14), st.booleans())
def test_backends_agree(events: list[Any], strict: bool) -> None:
    assert_backends_agree(events, P, strict=strict)


def test_render_message_of_another_provider() -> None:
    """Another provider's finish reason is given as a Converse stopReason, and only the usage
    counts Bedrock has are rendered; its metadata is not Bedrock's."""
    message = fastmerge.aggregate(TOOL_STREAM, P)
    data = message.to_dict()
    data["provider_metadata"] = {"provider": "openai-chat", "system_fingerprint": "fp"}
    data["finish_reason"] = "tool_calls"
    data["usage_metadata"] = {
        "input_tokens": 1,
        "output_tokens": 2,
        "total_tokens": 3,
        "prompt_tokens_details": {"cached_tokens": 0},
    }
    rendered = to_provider(type(message).from_dict(data), P)
    assert rendered["stopReason"] == "tool_use"
    assert rendered["usage"] == {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3}
    assert set(rendered) == {"output", "stopReason", "usage"}
