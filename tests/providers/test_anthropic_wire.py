"""The Anthropic wire as the SDK defines it (rules §10.5): compaction deltas replace, citations
kept as sent, every member of the SDK's stream unions with a rule in ``WIRE_RULES``. The
Anthropic cases are compared with the SDK's own accumulator (``accumulate_event``, fed the
SDK's event objects). Every test runs on both backends.
"""

from __future__ import annotations

import json
import typing
from typing import Any

import httpx
import pytest
from _support.anthropic import block, delta, end, start, stop, text
from anthropic.lib.streaming import _beta_messages, _messages
from anthropic.types import RawContentBlockDelta, RawMessageStreamEvent
from anthropic.types.beta import BetaRawContentBlockDelta, BetaRawMessageStreamEvent
from anthropic.types.beta.beta_raw_content_block_start_event import (
    ContentBlock as BetaContentBlock,
)
from anthropic.types.raw_content_block_start_event import ContentBlock
from pydantic import TypeAdapter

import fastmerge
from fastmerge._pure.providers import anthropic as twin
from fastmerge.render import to_provider

P = "anthropic"
BETA = TypeAdapter(BetaRawMessageStreamEvent)
STABLE = TypeAdapter(RawMessageStreamEvent)


def sdk_events(events: list[dict[str, Any]], beta: bool = True) -> list[Any]:
    """The SDK's own event objects for ``events``."""
    adapter = BETA if beta else STABLE
    return [adapter.validate_python(e) for e in events if e.get("type") != "ping"]


def sdk_content(objects: list[Any], beta: bool = True) -> list[dict[str, Any]]:
    """The content blocks of the SDK's accumulated message, as the SDK dumps them."""
    snapshot = None
    buffers: dict[int, bytes] = {}
    for event in objects:
        if beta:
            snapshot = _beta_messages.accumulate_event(
                event=event,
                current_snapshot=snapshot,
                json_bufs=buffers,
                request_headers=httpx.Headers(),
            )
        else:
            snapshot = _messages.accumulate_event(
                event=event, current_snapshot=snapshot, json_bufs=buffers
            )
    assert snapshot is not None
    return [
        b.model_dump(mode="json", exclude_unset=True, exclude={"parsed_output"})
        for b in snapshot.content
    ]


def rendered(events: list[Any]) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = to_provider(fastmerge.aggregate(events, P), P)["content"]
    return content


COMPACTION = [
    start(),
    block(0, type="compaction", content=None, encrypted_content=None),
    delta(0, type="compaction_delta", content="Part one.", encrypted_content=None),
    delta(0, type="compaction_delta", content="Part one. Part two.", encrypted_content="e1"),
    stop(0),
    *end(),
]


def test_compaction_delta_replaces() -> None:
    """E101: each compaction_delta holds the block's whole content so far: the last replaces,
    as the SDK's accumulator does (never "Part one.Part one. Part two.")."""
    blocks = rendered(COMPACTION)
    assert blocks == [
        {"type": "compaction", "content": "Part one. Part two.", "encrypted_content": "e1"}
    ]
    assert blocks == sdk_content(sdk_events(COMPACTION))


def test_compaction_from_sdk_objects() -> None:
    """E101: the SDK's own event objects give the same block as the dicts."""
    objects = sdk_events(COMPACTION)
    assert rendered(objects) == rendered(COMPACTION) == sdk_content(objects)


def test_compaction_delta_without_a_field_leaves_it() -> None:
    """E101: a field the delta does not carry is not added (nothing invented)."""
    events = [
        start(),
        block(0, type="compaction", content=None),
        delta(0, type="compaction_delta", content="A"),
        delta(0, type="compaction_delta", content="A B"),
        stop(0),
        *end(),
    ]
    assert rendered(events) == [{"type": "compaction", "content": "A B"}]


def test_compaction_cut_keeps_the_last_content() -> None:
    """E101: a stream cut inside the compaction block keeps its last content, flagged."""
    events = COMPACTION[:4]
    message = fastmerge.aggregate(events, P)
    assert message.status == "incomplete"
    assert [a["code"] for a in message.anomalies] == ["truncated"]
    assert rendered(events)[0]["content"] == "Part one. Part two."


def test_compaction_delta_before_its_start() -> None:
    """E101: compaction deltas with no block start open a compaction block; the last wins."""
    events = [start(), *COMPACTION[2:4], stop(0), *end()]
    message = fastmerge.aggregate(events, P)
    assert [a["code"] for a in message.anomalies] == ["delta_before_start"]
    assert rendered(events)[0]["content"] == "Part one. Part two."


EMPTY_CITATIONS = [
    start(),
    block(0, type="text", text="", citations=[]),
    text(0, "hi"),
    stop(0),
    *end(),
]


@pytest.mark.parametrize("beta", [True, False])
def test_empty_citations_are_kept(beta: bool) -> None:
    """E102: a text block started with ``citations: []`` renders with ``citations: []``, as the
    SDK gives, never null."""
    blocks = rendered(EMPTY_CITATIONS)
    assert blocks == [{"type": "text", "text": "hi", "citations": []}]
    objects = sdk_events(EMPTY_CITATIONS, beta)
    assert sdk_content(objects, beta) == blocks
    assert rendered(objects) == blocks


def test_null_citations_stay_null() -> None:
    """E102: ``citations: null`` as sent stays null."""
    events = [start(), block(0, type="text", text="", citations=None), text(0, "hi"), stop(0)]
    assert rendered([*events, *end()]) == [{"type": "text", "text": "hi", "citations": None}]


def test_citations_delta_appends_to_empty_citations() -> None:
    """E102: ``citations_delta`` appends to the ``[]`` of the start, as the SDK does."""
    citation = {
        "type": "char_location",
        "cited_text": "x",
        "document_index": 0,
        "document_title": None,
        "start_char_index": 0,
        "end_char_index": 1,
        "file_id": None,
    }
    events = [
        start(),
        block(0, type="text", text="", citations=[]),
        text(0, "a"),
        delta(0, type="citations_delta", citation=citation),
        delta(0, type="citations_delta", citation={**citation, "cited_text": "y"}),
        text(0, "b"),
        stop(0),
        *end(),
    ]
    blocks = rendered(events)
    assert blocks == [
        {"type": "text", "text": "ab", "citations": [citation, {**citation, "cited_text": "y"}]}
    ]
    assert sdk_content(sdk_events(events)) == blocks


def test_empty_citations_in_the_message() -> None:
    """E102: the merged part holds ``[]`` and survives a round trip."""
    message = fastmerge.aggregate(EMPTY_CITATIONS, P)
    part = message.parts[0].to_dict()
    assert part["citations"] == []
    again = type(message).from_dict(message.to_dict())
    assert again.parts[0].to_dict()["citations"] == []


# ---------------------------------------------------------------------------------------------
# The rule table


def _members(union: Any) -> list[Any]:
    args = typing.get_args(union)
    if args and typing.get_origin(union) is typing.Annotated:
        return _members(args[0])
    return list(args) if args else [union]


def _types(union: Any) -> set[str]:
    out = set()
    for member in _members(union):
        literal = member.model_fields["type"].annotation
        out.update(typing.get_args(literal))
    return out


def test_every_sdk_member_has_a_rule() -> None:
    """Every event, delta and start block type of the SDK's unions (beta included) has a rule
    a user can read in the twin's ``WIRE_RULES``."""
    events = _types(RawMessageStreamEvent) | _types(BetaRawMessageStreamEvent)
    deltas = _types(RawContentBlockDelta) | _types(BetaRawContentBlockDelta)
    blocks = _types(ContentBlock) | _types(BetaContentBlock)
    wanted = {f"event:{t}" for t in events} | {f"delta:{t}" for t in deltas}
    wanted |= {f"block:{t}" for t in blocks}
    missing = wanted - set(twin.WIRE_RULES)
    assert not missing
    assert all(isinstance(v, str) and v for v in twin.WIRE_RULES.values())
    assert twin.WIRE_RULES["delta:compaction_delta"].startswith("replaces")


def test_every_beta_block_is_kept() -> None:
    """Every start block of the beta union comes back (none dropped): the known kinds as parts,
    the others verbatim."""
    fields: dict[str, dict[str, Any]] = {
        "thinking": {"thinking": "t", "signature": "s"},
        "redacted_thinking": {"data": "d"},
        "tool_use": {"id": "t1", "name": "f", "input": {}},
    }
    for kind in sorted(_types(BetaContentBlock)):
        events = [start(), block(0, type=kind, **fields.get(kind, {})), stop(0), *end()]
        message = fastmerge.aggregate(events, P)
        assert len(message.parts) == 1, kind
        assert rendered(events)[0]["type"] == kind


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _sse(events: list[dict[str, Any]]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def _in_form(events: list[dict[str, Any]], form: str) -> Any:
    if form == "sdk":
        return fastmerge.aggregate(sdk_events(events), P)
    if form == "nulls":
        return fastmerge.aggregate(events, P)
    if form == "no-nulls":
        return fastmerge.aggregate(_without_nulls(events), P)
    aggregator = fastmerge.Aggregator(P)
    data = _sse(events)
    step = len(data) if form == "sse" else 13
    for at in range(0, len(data), step):
        aggregator.feed(data[at : at + step])
    return aggregator.finish()


@pytest.mark.parametrize("form", ["sdk", "nulls", "no-nulls", "sse", "sse-13"])
@pytest.mark.parametrize(
    ("events", "want"),
    [
        (COMPACTION, {"type": "compaction", "content": "Part one. Part two."}),
        (EMPTY_CITATIONS, {"type": "text", "text": "hi", "citations": []}),
    ],
    ids=["E101", "E102"],
)
def test_every_input_form_gives_the_same_block(
    events: list[dict[str, Any]], want: dict[str, Any], form: str
) -> None:
    """E101, E102: SDK objects, dicts with and without their nulls, SSE bytes whole and fed
    13 at a time give the same block."""
    (block_,) = to_provider(_in_form(events, form), P)["content"]
    assert {k: v for k, v in block_.items() if k != "encrypted_content"} == want
