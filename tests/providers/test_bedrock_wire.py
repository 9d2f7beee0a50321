"""The Bedrock ConverseStream wire as boto3 yields it (rules §10.6): blobs as ``bytes`` read as
the base64 text the HTTP API carries, an image block's start and delta as one block, server
tool results and citation deltas kept, a request for boto3 with ``bytes`` wherever botocore's
model says blob, and a rule for every member of botocore's stream shapes. boto3's events are
made by botocore's own event-stream parser from the corpus streams. Every test runs on both
backends.
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
from typing import Any, Iterator

import botocore.session
import pytest
from _support.corpus import path_of, stream_ids
from botocore.eventstream import EventStream
from botocore.parsers import EventStreamJSONParser
from botocore.validate import ParamValidator

import fastmerge
from fastmerge._pure.providers import bedrock_converse as twin
from fastmerge.render import to_provider
from fastmerge.render.bedrock_converse import to_boto3
from fastmerge.session.request import to_request

P = "bedrock-converse"
KIND = "bedrock_converse"
MODEL = botocore.session.get_session().get_service_model("bedrock-runtime")
NAMES = stream_ids(KIND)
USER = {"role": "user", "content": "hi"}


# -- boto3's events, made by botocore's parser from event-stream bytes ------------------------


def _header(name: str, value: str) -> bytes:
    key, text = name.encode(), value.encode()
    return bytes([len(key)]) + key + bytes([7]) + struct.pack(">H", len(text)) + text


def _frame(event: dict[str, Any]) -> bytes:
    """One ``application/vnd.amazon.eventstream`` message holding ``event``."""
    ((kind, payload),) = event.items()
    headers = (
        _header(":event-type", kind)
        + _header(":content-type", "application/json")
        + _header(":message-type", "event")
    )
    body = json.dumps(payload).encode()
    prelude = struct.pack(">II", 12 + len(headers) + len(body) + 4, len(headers))
    prelude += struct.pack(">I", binascii.crc32(prelude))
    message = prelude + headers + body
    return message + struct.pack(">I", binascii.crc32(message))


class _Body:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def stream(self) -> Iterator[bytes]:
        for at in range(0, len(self.data), 13):  # as the network splits it
            yield self.data[at : at + 13]

    def close(self) -> None:
        pass


def boto3_events(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``events`` (the HTTP API's JSON) as boto3's ``converse_stream()["stream"]`` yields
    them: encoded as an event stream, parsed by botocore (blobs become ``bytes``)."""
    shape = MODEL.operation_model("ConverseStream").output_shape.members["stream"]
    data = b"".join(_frame(e) for e in events)
    return list(EventStream(_Body(data), shape, EventStreamJSONParser(), "ConverseStream"))


def corpus_events(name: str) -> list[dict[str, Any]]:
    text = path_of(KIND, name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def codes(message: Any) -> list[str]:
    return [a["code"] for a in message.anomalies]


def blob_paths(value: Any, path: str = "$") -> Iterator[tuple[str, Any]]:
    """Every value under a key that is a blob in Converse (``bytes``, ``redactedContent``)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("bytes", "redactedContent"):
                yield f"{path}.{key}", item
            else:
                yield from blob_paths(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from blob_paths(item, f"{path}[{i}]")


def converse_problems(request: dict[str, Any]) -> str:
    shape = MODEL.operation_model("Converse").input_shape
    report = ParamValidator().validate({"modelId": "m", **request}, shape)
    return report.generate_report() if report.has_errors() else ""


# -- E103: bytes ---------------------------------------------------------------------------

REDACTED = [
    {"messageStart": {"role": "assistant"}},
    {
        "contentBlockDelta": {
            "contentBlockIndex": 0,
            "delta": {"reasoningContent": {"redactedContent": b"\x01opaque"}},
        }
    },
    {"contentBlockStop": {"contentBlockIndex": 0}},
    {"contentBlockDelta": {"contentBlockIndex": 1, "delta": {"text": "Hi"}}},
    {"contentBlockStop": {"contentBlockIndex": 1}},
    {"messageStop": {"stopReason": "end_turn"}},
    {"metadata": {"usage": {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5}}},
]
OPAQUE = base64.b64encode(b"\x01opaque").decode("ascii")


def test_redacted_bytes_are_read_as_base64() -> None:
    """E103: ``redactedContent`` as boto3 yields it (``bytes``) is a redacted reasoning part
    holding the base64 text; no ``unreadable_event``."""
    message = fastmerge.aggregate(REDACTED, P)
    assert codes(message) == []
    assert message.status == "complete"
    part = message.parts[0].to_dict()
    assert part["part"] == "reasoning" and part["redacted"] is True
    assert part["payload"] == {"provider": P, "kind": "redacted_content", "data": OPAQUE}
    assert message.content == "Hi"


def test_bytes_and_base64_give_one_message() -> None:
    """E103: the boto3 form and the HTTP form (base64 text) give the same message."""
    http = json.loads(json.dumps(REDACTED, default=lambda b: base64.b64encode(b).decode()))
    assert fastmerge.aggregate(REDACTED, P).to_dict() == fastmerge.aggregate(http, P).to_dict()
    assert fastmerge.aggregate(REDACTED, "auto").to_dict() == fastmerge.aggregate(http, P).to_dict()


def test_redacted_renders_base64_for_http_and_bytes_for_boto3() -> None:
    """E103: rendered for HTTP the blob is base64 text; for boto3 (``to_boto3``) the bytes."""
    message = fastmerge.aggregate(REDACTED, P)
    response = to_provider(message, P)
    block = response["output"]["message"]["content"][0]
    assert block == {"reasoningContent": {"redactedContent": OPAQUE}}
    boto = to_boto3(response, "response")
    assert boto["output"]["message"]["content"][0] == {
        "reasoningContent": {"redactedContent": b"\x01opaque"}
    }
    assert response["output"]["message"]["content"][0]["reasoningContent"] == {
        "redactedContent": OPAQUE
    }  # the input is left alone
    request = to_boto3(to_request([USER, message], P))
    assert request["messages"][1]["content"][0] == {
        "reasoningContent": {"redactedContent": b"\x01opaque"}
    }
    assert converse_problems(request) == ""


def test_other_bytes_in_an_event() -> None:
    """E103: bytes elsewhere in an event (an unknown delta kind) are kept as base64 text on both
    backends, never an unreadable event."""
    events = [
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"video": {"bytes": b"\xff\x00"}}}},
        {"messageStop": {"stopReason": "end_turn"}},
    ]
    message = fastmerge.aggregate(events, P)
    assert codes(message) == []
    assert message.parts[0].to_dict()["raw"] == {"video": {"bytes": "/wA="}}


def test_the_aggregator_takes_bytes() -> None:
    """E103: ``Aggregator.add`` reads a boto3 event as ``aggregate`` does."""
    aggregator = fastmerge.Aggregator(P)
    for event in REDACTED:
        aggregator.add(event)
    assert aggregator.finish().to_dict() == fastmerge.aggregate(REDACTED, P).to_dict()


# -- a block carrying signed reasoning and a redacted blob ----------------------------------


def _both(order: list[str]) -> list[dict[str, Any]]:
    """A boto3 stream whose reasoning block 0 carries ``order``'s members, one delta each."""
    members: dict[str, Any] = {
        "text": "why",
        "signature": "SIG",
        "redactedContent": b"\x01opaque",
    }
    deltas = [
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"reasoningContent": {k: v}}}}
        for k, v in ((k, members[k]) for k in order)
    ]
    return [REDACTED[0], *deltas, *REDACTED[2:]]


SIGNED = {"reasoningContent": {"reasoningText": {"text": "why", "signature": "SIG"}}}


@pytest.mark.parametrize(
    ("order", "first"),
    [
        (["text", "signature", "redactedContent"], "signed"),
        (["redactedContent", "text", "signature"], "redacted"),
        (["text", "redactedContent", "signature"], "signed"),
    ],
)
def test_signed_reasoning_and_redacted_content_in_one_block_are_both_kept(
    order: list[str], first: str
) -> None:
    """A reasoning block whose deltas carry text, a signature and ``redactedContent`` keeps all
    three (one part holds one payload: the kind that came second is a part of its own), and
    renders as the two blocks Bedrock's own response would hold, a ``reasoningText`` with its
    signature and a ``redactedContent``, in a request botocore's ``ParamValidator`` accepts."""
    message = fastmerge.aggregate(_both(order), P)
    assert codes(message) == []
    parts = [p.to_dict() for p in message.parts]
    signed = {"kind": "signature", "provider": P, "data": "SIG"}
    redacted = {"kind": "redacted_content", "provider": P, "data": OPAQUE}
    reasoning = [(p["text"], p["payload"], p["redacted"], p["index"]) for p in parts[:2]]
    pair = [("why", signed, False), ("", redacted, True)]
    if first == "redacted":
        pair.reverse()
    # the kind that came first keeps the block's index, the other a spare one
    assert reasoning == [(*pair[0], 0), (*pair[1], -1)]
    assert message.content == "Hi"
    blob = {"reasoningContent": {"redactedContent": OPAQUE}}
    blocks = [SIGNED, blob] if first == "signed" else [blob, SIGNED]
    assert to_provider(message, P)["output"]["message"]["content"] == [*blocks, {"text": "Hi"}]
    request = to_boto3(to_request([USER, message], P))
    assert converse_problems(request) == ""
    assert [v for _, v in blob_paths(request)] == [b"\x01opaque"]
    # the HTTP form of the same stream: the same message
    http = json.loads(json.dumps(_both(order), default=lambda b: base64.b64encode(b).decode()))
    assert fastmerge.aggregate(http, P).to_dict() == message.to_dict()


def test_one_kind_of_reasoning_a_block_keeps_its_index() -> None:
    """A block carrying signed reasoning only, or a redacted blob only (what Bedrock sends),
    is one part at the block's index, as before: pieces of one kind join."""
    for order in (["text", "signature"], ["redactedContent"], ["text", "text", "signature"]):
        parts = [p.to_dict() for p in fastmerge.aggregate(_both(order), P).parts]
        assert [p["index"] for p in parts] == [0, 1], order
    parts = [p.to_dict() for p in fastmerge.aggregate(_both(["text", "text"]), P).parts]
    assert parts[0]["text"] == "whywhy"


# -- E104: an image ------------------------------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\n\x00"
IMAGE = [
    {"messageStart": {"role": "assistant"}},
    {"contentBlockStart": {"contentBlockIndex": 0, "start": {"image": {"format": "png"}}}},
    {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"image": {"source": {"bytes": PNG}}}}},
    {"contentBlockStop": {"contentBlockIndex": 0}},
    {"contentBlockDelta": {"contentBlockIndex": 1, "delta": {"text": "A chart."}}},
    {"contentBlockStop": {"contentBlockIndex": 1}},
    {"messageStop": {"stopReason": "end_turn"}},
]


def test_an_image_start_and_delta_make_one_block() -> None:
    """E104: ``contentBlockStart {image:{format}}`` and ``contentBlockDelta {image:{source}}``
    give one block ``{image:{format, source}}``."""
    message = fastmerge.aggregate(IMAGE, P)
    assert codes(message) == []
    content = to_provider(message, P)["output"]["message"]["content"]
    data = base64.b64encode(PNG).decode()
    assert content == [
        {"image": {"format": "png", "source": {"bytes": data}}},
        {"text": "A chart."},
    ]
    boto = to_boto3(to_provider(message, P), "response")["output"]["message"]["content"]
    assert boto[0] == {"image": {"format": "png", "source": {"bytes": PNG}}}


def test_an_image_from_boto3_and_http_alike() -> None:
    """E104: the image stream from botocore's parser gives what the dict events give."""
    http = json.loads(json.dumps(IMAGE, default=lambda b: base64.b64encode(b).decode()))
    parsed = boto3_events(http)
    assert parsed[2]["contentBlockDelta"]["delta"]["image"]["source"]["bytes"] == PNG
    want = to_provider(fastmerge.aggregate(http, P), P)
    assert to_provider(fastmerge.aggregate(parsed, P), P) == want
    assert to_provider(fastmerge.aggregate(IMAGE, P), P) == want


def test_an_image_request_for_boto3_passes_botocore() -> None:
    """E104: the replayed image block goes to boto3 with ``bytes``, and botocore accepts it."""
    message = fastmerge.aggregate(IMAGE, P)
    request = to_boto3(to_request([USER, message], P))
    assert request["messages"][1]["content"][0] == {
        "image": {"format": "png", "source": {"bytes": PNG}}
    }
    assert converse_problems(request) == ""


def test_an_image_is_one_part() -> None:
    """E104: the message holds one image part at the block's index, not two."""
    message = fastmerge.aggregate(IMAGE, P)
    data = base64.b64encode(PNG).decode()
    assert [p.to_dict() for p in message.parts][0] == {
        "part": "unknown",
        "provider": P,
        "kind": "image",
        "raw": {"image": {"format": "png", "source": {"bytes": data}}},
        "index": 0,
    }
    assert len(message.parts) == 2


def _image_deltas(*pieces: bytes) -> list[dict[str, Any]]:
    return [
        IMAGE[1],
        *(
            {
                "contentBlockDelta": {
                    "contentBlockIndex": 0,
                    "delta": {"image": {"source": {"bytes": b}}},
                }
            }
            for b in pieces
        ),
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"messageStop": {"stopReason": "end_turn"}},
    ]


def test_image_bytes_in_two_deltas_join() -> None:
    """E104: the bytes of two image deltas join (the base64 of the first is whole groups of
    three bytes, so its text and the next's join exactly)."""
    message = fastmerge.aggregate(_image_deltas(b"abc", b"de"), P)
    raw = message.parts[0].to_dict()["raw"]
    assert raw == {"image": {"format": "png", "source": {"bytes": "YWJjZGU="}}}
    assert base64.b64decode(raw["image"]["source"]["bytes"]) == b"abcde"
    assert len(message.parts) == 1


def test_image_bytes_that_cannot_join_exactly_are_kept_apart() -> None:
    """E104: a first piece whose base64 ends in padding cannot be joined as text: the second
    delta is kept as a part of its own, nothing lost."""
    message = fastmerge.aggregate(_image_deltas(b"ab", b"cd"), P)
    raws = [p.to_dict()["raw"] for p in message.parts]
    assert raws == [
        {"image": {"source": {"bytes": "Y2Q="}}},
        {"image": {"format": "png", "source": {"bytes": "YWI="}}},
    ]


def test_an_image_without_its_stop_is_emitted_at_message_stop() -> None:
    """E104: an image block open at ``messageStop`` is emitted there, whole."""
    events = [*IMAGE[:3], IMAGE[-1]]
    message = fastmerge.aggregate(events, P)
    assert message.status == "complete"
    assert message.parts[0].to_dict()["raw"]["image"]["format"] == "png"
    assert "source" in message.parts[0].to_dict()["raw"]["image"]


def test_an_image_cut_after_its_start() -> None:
    """E104: an image block cut before its delta keeps its start, flagged ``truncated``."""
    message = fastmerge.aggregate(IMAGE[:2], P)
    assert codes(message) == ["truncated"]
    content = to_provider(message, P)["output"]["message"]["content"]
    assert content == [{"image": {"format": "png"}}]


# -- tool results and citations -------------------------------------------------------------

SERVER_TOOL = [
    {"messageStart": {"role": "assistant"}},
    {
        "contentBlockStart": {
            "contentBlockIndex": 0,
            "start": {
                "toolUse": {"toolUseId": "t1", "name": "nova_grounding", "type": "server_tool_use"}
            },
        }
    },
    {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"q":"x"}'}}}},
    {"contentBlockStop": {"contentBlockIndex": 0}},
    {
        "contentBlockStart": {
            "contentBlockIndex": 1,
            "start": {
                "toolResult": {
                    "toolUseId": "t1",
                    "type": "nova_grounding_result",
                    "status": "success",
                }
            },
        }
    },
    {"contentBlockDelta": {"contentBlockIndex": 1, "delta": {"toolResult": [{"text": "found"}]}}},
    {"contentBlockDelta": {"contentBlockIndex": 1, "delta": {"toolResult": [{"json": {"n": 1}}]}}},
    {"contentBlockStop": {"contentBlockIndex": 1}},
    {"contentBlockDelta": {"contentBlockIndex": 2, "delta": {"text": "It is x."}}},
    {
        "contentBlockDelta": {
            "contentBlockIndex": 2,
            "delta": {
                "citation": {
                    "title": "T",
                    "source": "https://e.x",
                    "sourceContent": [{"text": "x"}],
                    "location": {"web": {"url": "https://e.x", "domain": "e.x"}},
                }
            },
        }
    },
    {"contentBlockStop": {"contentBlockIndex": 2}},
    {"messageStop": {"stopReason": "end_turn"}},
]


def test_tool_results_and_citations_are_kept() -> None:
    """A server tool's ``toolResult`` start and deltas give one block with every item, and a
    ``citation`` delta stays with its text."""
    message = fastmerge.aggregate(boto3_events(SERVER_TOOL), P)
    assert codes(message) == []
    content = to_provider(message, P)["output"]["message"]["content"]
    assert content[1] == {
        "toolResult": {
            "toolUseId": "t1",
            "type": "nova_grounding_result",
            "status": "success",
            "content": [{"text": "found"}, {"json": {"n": 1}}],
        }
    }
    citation = SERVER_TOOL[9]["contentBlockDelta"]["delta"]["citation"]
    assert content[2] == {
        "citationsContent": {"content": [{"text": "It is x."}], "citations": [citation]}
    }
    assert (
        content
        == to_provider(fastmerge.aggregate(SERVER_TOOL, P), P)["output"]["message"]["content"]
    )


# -- the corpus through boto3 ----------------------------------------------------------------


def _without_padding(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for event in events:
        ((kind, payload),) = event.items()
        out.append({kind: {k: v for k, v in payload.items() if k != "p"}})
    return out


@pytest.mark.parametrize("name", NAMES)
def test_corpus_stream_from_boto3_loses_nothing(name: str) -> None:
    """E103: each recorded stream as boto3 yields it (botocore's parser, blobs as bytes) merges
    to the message of its JSON lines, and its request for boto3 passes botocore's
    ``ParamValidator`` with ``bytes`` at every blob."""
    events = corpus_events(name)
    parsed = boto3_events(events)
    assert len(parsed) == len(events)
    # what botocore's parser keeps of each event (it drops ``p`` and members its model lacks),
    # as the HTTP API's JSON: blobs as base64 text
    http_events = json.loads(json.dumps(parsed, default=lambda b: base64.b64encode(b).decode()))
    http = fastmerge.aggregate(http_events, P)
    boto = fastmerge.aggregate(parsed, P)
    assert "unreadable_event" not in codes(boto)
    assert boto.to_dict() == http.to_dict()
    # and the JSON lines as recorded give the same parts and the same replay
    recorded = fastmerge.aggregate(_without_padding(events), P)
    assert [p.to_dict() for p in boto.parts] == [p.to_dict() for p in recorded.parts]
    assert codes(boto) == codes(recorded)
    request = to_boto3(to_request([USER, boto], P))
    assert converse_problems(request) == ""
    for path, value in blob_paths(request):
        assert isinstance(value, bytes), path


def test_the_redacted_corpus_stream_keeps_its_bytes() -> None:
    """E103: the recorded redacted-reasoning stream from boto3 replays its exact bytes."""
    events = corpus_events("claude37-redacted-reasoning")
    parsed = boto3_events(events)
    sent = [
        e["contentBlockDelta"]["delta"]["reasoningContent"]["redactedContent"]
        for e in parsed
        if "reasoningContent" in e.get("contentBlockDelta", {}).get("delta", {})
    ]
    assert sent and all(isinstance(b, bytes) for b in sent)
    request = to_boto3(to_request([USER, fastmerge.aggregate(parsed, P)], P))
    replayed = [v for _, v in blob_paths(request)]
    assert replayed == sent


def test_to_boto3_leaves_non_base64_text_and_refuses_a_bad_kind() -> None:
    """A blob field holding text that is not base64 is left as sent; a bad ``kind`` raises."""
    request = {
        "messages": [
            {
                "role": "user",
                "content": [{"image": {"format": "png", "source": {"bytes": "not base64!"}}}],
            }
        ]
    }
    assert to_boto3(request) == request
    with pytest.raises(ValueError, match="kind must be"):
        to_boto3(request, "stream")  # type: ignore[arg-type]


# -- the rule table --------------------------------------------------------------------------


def test_every_botocore_member_has_a_rule() -> None:
    """Every member of ``ConverseStreamOutput``, ``ContentBlockStart`` and
    ``ContentBlockDelta`` in botocore's service model has a rule in ``WIRE_RULES``."""
    wanted = {f"event:{m}" for m in MODEL.shape_for("ConverseStreamOutput").members}
    wanted |= {f"start:{m}" for m in MODEL.shape_for("ContentBlockStart").members}
    wanted |= {f"delta:{m}" for m in MODEL.shape_for("ContentBlockDelta").members}
    assert wanted - set(twin.WIRE_RULES) == set()
    assert all(isinstance(v, str) and v for v in twin.WIRE_RULES.values())
    assert set(twin.WIRE_RULES) - wanted == set()


def test_every_start_and_delta_member_is_kept() -> None:
    """Each start and delta member of botocore's model, sent alone, leaves a part (none is
    dropped) on both backends."""
    starts = {
        "toolUse": {"toolUseId": "t", "name": "f"},
        "toolResult": {"toolUseId": "t"},
        "image": {"format": "png"},
    }
    deltas: dict[str, Any] = {
        "text": "x",
        "toolUse": {"input": "{}"},
        "toolResult": [{"text": "r"}],
        "reasoningContent": {"text": "why"},
        "citation": {"title": "T"},
        "image": {"source": {"bytes": b"\x00"}},
    }
    assert set(starts) == set(MODEL.shape_for("ContentBlockStart").members)
    assert set(deltas) == set(MODEL.shape_for("ContentBlockDelta").members)
    for member, value in starts.items():
        event = {"contentBlockStart": {"contentBlockIndex": 0, "start": {member: value}}}
        assert len(fastmerge.aggregate([event], P).parts) == 1, member
    for member, value in deltas.items():
        event = {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {member: value}}}
        assert len(fastmerge.aggregate([event], P).parts) == 1, member
