"""The generated Anthropic streams (``_generate``): a stream per content block kind and its
deltas, from the beta SDK models, whole and cut."""

from __future__ import annotations

from typing import Any

import _unions
from _generate_common import Case, build, marker_of, minimal

# ---------------------------------------------------------------------------------------------
# Anthropic (beta models: a superset of the plain ones)

_BLOCK_DELTAS = {
    "text": ["text_delta", "citations_delta"],
    "thinking": ["thinking_delta", "signature_delta"],
    "tool_use": ["input_json_delta"],
    "server_tool_use": ["input_json_delta"],
    "mcp_tool_use": ["input_json_delta"],
    "compaction": ["compaction_delta"],
}


def anthropic_cases() -> list[Case]:
    import anthropic.types.beta as beta

    blocks = {
        _unions.type_literal(m): m
        for m in _unions.union_members(
            beta.BetaRawContentBlockStartEvent.model_fields["content_block"].annotation
        )
    }
    deltas = {
        _unions.type_literal(m): m for m in _unions.union_members(beta.BetaRawContentBlockDelta)
    }
    cases = []
    for kind, model in sorted(blocks.items()):
        for cut in (False, True):
            cases.append(_anthropic_case(kind, model, deltas, cut))
    return cases


def _anthropic_delta(kind: str, model: Any, marker: str) -> Any:
    values: dict[str, Any] = {}
    if kind == "text_delta":
        values["text"] = marker
    elif kind == "thinking_delta":
        values["thinking"] = marker
    elif kind == "signature_delta":
        values["signature"] = marker
    elif kind == "input_json_delta":
        values["partial_json"] = f'{{"q": "{marker}"}}'
    elif kind == "compaction_delta":
        values["content"] = marker
    elif kind == "citations_delta":
        citation = {
            "type": "char_location",
            "cited_text": marker,
            "document_index": 0,
            "document_title": None,
            "start_char_index": 0,
            "end_char_index": 1,
        }
        values["citation"] = citation
    return build(model, **values)


def _anthropic_case(kind: str, model: Any, deltas: dict[str, Any], cut: bool) -> Case:
    import anthropic.types.beta as beta

    message = minimal(beta.BetaMessage)
    message.update(
        id="msg_1", model="claude-x", content=[], usage={"input_tokens": 3, "output_tokens": 1}
    )
    block = minimal(model)
    if kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
        block["input"] = {}
    if kind == "text":
        block["citations"] = []
    events: list[Any] = [
        build(beta.BetaRawMessageStartEvent, message=message),
        build(beta.BetaRawContentBlockStartEvent, index=0, content_block=block),
    ]
    covers = {"event:message_start", "event:content_block_start", f"block:{kind}"}
    kept: list[str] = []
    for delta_kind in _BLOCK_DELTAS.get(kind, []):
        marker = marker_of(len(kept))
        kept.append(marker)
        delta = _anthropic_delta(delta_kind, deltas[delta_kind], marker)
        events.append(build(beta.BetaRawContentBlockDeltaEvent, index=0, delta=delta))
        covers |= {"event:content_block_delta", f"delta:{delta_kind}"}
    if not cut:
        events += [
            build(beta.BetaRawContentBlockStopEvent, index=0),
            build(
                beta.BetaRawMessageDeltaEvent,
                delta={"stop_reason": "end_turn"},
                usage={"output_tokens": 5},
            ),
            build(beta.BetaRawMessageStopEvent),
        ]
        covers |= {"event:content_block_stop", "event:message_delta", "event:message_stop"}
    if cut and kind == "tool_use":
        # a cut call is rendered raw and flagged, never parsed into an object (rules §6): the
        # SDK's accumulator parses it partially, so compare with that parse of what we kept
        return Case(
            id=f"anthropic-{kind}-cut",
            provider="anthropic",
            events=events,
            covers=covers,
            kept=kept,
            expect=lambda message: _cut_call_agrees(message, events),
        )
    return Case(
        id=f"anthropic-{kind}{'-cut' if cut else ''}",
        provider="anthropic",
        events=events,
        covers=covers,
        kept=kept,
        reference=lambda: _anthropic_reference(events),
        rendered=lambda out: out.get("content"),
    )


def _cut_call_agrees(message: Any, events: list[Any]) -> bool:
    """A cut tool call: flagged ``truncated``, rendered with its raw arguments, which parse
    (partially, as the SDK's accumulator does, with ``jiter``) to the SDK's ``input``."""
    import jiter

    from fastmerge.render import to_provider

    (block,) = _anthropic_reference(events)
    (call,) = message.tool_calls
    (rendered,) = to_provider(message, "anthropic")["content"]
    partial = jiter.from_json(call.arguments.encode(), partial_mode="trailing-strings")
    flagged = any(a["code"] == "truncated" for a in message.to_dict()["anomalies"])
    return bool(
        flagged
        and rendered["input"] == call.arguments
        and rendered.get("truncated") is True
        and partial == block["input"]
    )


def _anthropic_reference(events: list[Any]) -> Any:
    """``content`` of the message anthropic's own ``accumulate_event`` builds."""
    from anthropic.lib.streaming._beta_messages import accumulate_event
    from httpx import Headers

    snapshot: Any = None
    buffers: dict[int, bytes] = {}
    for event in events:
        snapshot = accumulate_event(
            event=event, current_snapshot=snapshot, json_bufs=buffers, request_headers=Headers()
        )
    return snapshot.model_dump(mode="json", by_alias=True, exclude_none=True)["content"]
