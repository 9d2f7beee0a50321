"""The generated OpenAI Responses streams (``_generate``): a stream per output item kind with
the events of the SDK's stream union that belong to it, whole and cut, and one stream of the
response-level status events."""

from __future__ import annotations

import json
from typing import Any

import _unions
from _generate_common import Case, build, marker_of, minimal

# ---------------------------------------------------------------------------------------------
# OpenAI Responses

# which item kind a ``response.<name>.*`` event belongs to; None: the response's own events
_RESPONSE_LEVEL = {"created", "in_progress", "completed", "failed", "incomplete", "queued"}
_ITEM_OF = {
    "output_text": "message",
    "refusal": "message",
    "content_part": "message",
    "function_call_arguments": "function_call",
    "reasoning_text": "reasoning",
    "reasoning_summary_part": "reasoning",
    "reasoning_summary_text": "reasoning",
    "code_interpreter_call_code": "code_interpreter_call",
    "mcp_call_arguments": "mcp_call",
    "custom_tool_call_input": "custom_tool_call",
    "shell_call_command": "shell_call",
    "shell_call_output_content": "shell_call_output",
    "compaction": "compaction",
    "audio": "message",
}


def _item_kind(event_type: str) -> str | None:
    """The item kind of an event type, None for the response-level events."""
    if event_type == "error":
        return None
    name = event_type.split(".")[1]
    if name in _RESPONSE_LEVEL or name == "output_item":
        return None
    return _ITEM_OF.get(name, name)


def responses_cases() -> list[Case]:
    from openai.types.responses import ResponseOutputItem

    members = _unions.responses_members()
    items = {_unions.type_literal(m): m for m in _unions.union_members(ResponseOutputItem)}
    by_kind: dict[str, list[str]] = {}
    for event_type in members:
        kind = _item_kind(event_type)
        if kind is not None:
            by_kind.setdefault(kind, []).append(event_type)
    cases = []
    for kind, event_types in sorted(by_kind.items()):
        item_model = items.get(kind)
        if item_model is None:  # an event of an item kind the output union lacks
            continue
        for cut in (False, True):
            cases.append(_responses_case(kind, item_model, sorted(event_types), members, cut))
        if any(t in _RESPONSES_DELTAS for t in event_types):
            cases.append(
                _responses_case(kind, item_model, sorted(event_types), members, False, True)
            )
    cases.append(_responses_status_case(members))
    return cases


def _response(status: str, output: list[Any]) -> dict[str, Any]:
    from openai.types.responses import Response

    data: dict[str, Any] = minimal(Response)
    data.update(id="resp_1", model="gpt-x", status=status, output=output, created_at=1)
    return data


#: Where each text delta goes in its item, as the API builds the item it sends done: the list
#: the delta's part sits in (``None``: the item itself), the part's index field, the text field.
_RESPONSES_DELTAS: dict[str, tuple[str | None, str, str]] = {
    "response.output_text.delta": ("content", "content_index", "text"),
    "response.refusal.delta": ("content", "content_index", "refusal"),
    "response.reasoning_text.delta": ("content", "content_index", "text"),
    "response.reasoning_summary_text.delta": ("summary", "summary_index", "text"),
    "response.function_call_arguments.delta": (None, "", "arguments"),
    "response.custom_tool_call_input.delta": (None, "", "input"),
}
#: The part each of those deltas fills, when the item has none yet.
_RESPONSES_PARTS: dict[str, dict[str, Any]] = {
    "response.output_text.delta": {"type": "output_text", "text": "", "annotations": []},
    "response.refusal.delta": {"type": "refusal", "refusal": ""},
    "response.reasoning_text.delta": {"type": "reasoning_text", "text": ""},
    "response.reasoning_summary_text.delta": {"type": "summary_text", "text": ""},
}
#: The ``.done`` events that repeat a whole text, and the delta event whose text they repeat.
_RESPONSES_DONES: dict[str, tuple[str, str]] = {
    "response.output_text.done": ("response.output_text.delta", "text"),
    "response.refusal.done": ("response.refusal.delta", "refusal"),
    "response.reasoning_text.done": ("response.reasoning_text.delta", "text"),
    "response.reasoning_summary_text.done": ("response.reasoning_summary_text.delta", "text"),
    "response.function_call_arguments.done": (
        "response.function_call_arguments.delta",
        "arguments",
    ),
    "response.custom_tool_call_input.done": ("response.custom_tool_call_input.delta", "input"),
}


def _responses_case(
    kind: str,
    item_model: Any,
    event_types: list[str],
    members: dict[str, Any],
    cut: bool,
    disagree: bool = False,
) -> Case:
    """A stream of one item of ``kind``; ``disagree``: its done events carry other texts than
    its deltas (``D…`` for ``M…``), which win (spec §6.1), as the SDK's accumulator has it."""
    item: dict[str, Any] = minimal(item_model)
    item["id"] = "item_1"
    # the item as added holds no text yet; the deltas build it, and the done events repeat
    # what they built (the API's order and values, so that the done item agrees with them)
    streamed = [t for t in event_types if t in _RESPONSES_DELTAS]
    for event_type in streamed:
        holder, _, text_field = _RESPONSES_DELTAS[event_type]
        if holder is None:
            item[text_field] = ""
    done_item = json.loads(json.dumps(item))
    seq = iter(range(1000))
    events: list[Any] = [
        build(
            members["response.created"],
            response=_response("in_progress", []),
            sequence_number=next(seq),
        )
    ]
    events.append(
        build(
            members["response.output_item.added"],
            item=item,
            output_index=0,
            sequence_number=next(seq),
        )
    )
    kept: list[str] = []
    placed: list[str] = []  # the markers the done item repeats
    texts: dict[str, str] = {}
    # the order the API sends: what opens a part (``*.added``), its deltas, then the status
    # events and the dones
    ordered = sorted(
        event_types,
        key=lambda t: (not t.endswith(".added"), not t.endswith(".delta"), t.endswith(".done"), t),
    )
    for event_type in ordered:
        model = members[event_type]
        values: dict[str, Any] = {"sequence_number": next(seq)}
        fields = model.model_fields
        if "output_index" in fields:
            values["output_index"] = 0
        if "item_id" in fields:
            values["item_id"] = "item_1"
        if "delta" in fields and fields["delta"].annotation is str:
            marker = marker_of(len(kept))
            kept.append(marker)
            values["delta"] = marker
            texts[event_type] = marker
            if event_type in _RESPONSES_DELTAS:
                final = marker.replace("M", "D") if disagree else marker
                texts[event_type] = final
                values.update(_responses_place(done_item, event_type, final))
                placed.append(final)
        if event_type in _RESPONSES_DONES:
            delta_type, text_field = _RESPONSES_DONES[event_type]
            values[text_field] = texts.get(delta_type, "")
            values.update(_responses_done_place(done_item, delta_type))
        if "part" in fields and event_type.endswith("part.added"):
            part = dict(minimal(fields["part"].annotation))
            part.update({k: "" for k in ("text", "refusal") if k in part})
            values["part"] = part
        if cut and event_type.endswith(".done"):
            continue
        events.append(build(model, **values))
    if "status" in done_item:
        done_item["status"] = "completed"
    covers = set(event_types) | {"response.created", "response.output_item.added"}
    if not cut:
        done = build(
            members["response.output_item.done"],
            item=done_item,
            output_index=0,
            sequence_number=next(seq),
        )
        completed = build(
            members["response.completed"],
            response=_response("completed", [done_item]),
            sequence_number=next(seq),
        )
        events += [done, completed]
        covers |= {"response.output_item.done", "response.completed"}
        kept = placed  # the done events are authoritative: the item as done gives it
    return Case(
        id=f"responses-{kind}{'-cut' if cut else ''}{'-disagree' if disagree else ''}",
        provider="openai-responses",
        events=events,
        covers=covers,
        kept=kept,
        reference=None if cut else (lambda: _responses_reference(events)),
        rendered=lambda out: out.get("output"),
        expect=_replaced if disagree else None,
    )


def _replaced(message: Any) -> bool:
    """The done texts replaced the deltas, and the message says so."""
    anomalies = message.to_dict()["anomalies"]
    return any(
        a["code"] == "mismatched_delta" and "the done text replaces them" in a["detail"]
        for a in anomalies
    )


def _responses_place(item: dict[str, Any], event_type: str, text: str) -> dict[str, Any]:
    """Appends ``text`` where ``event_type``'s deltas go in ``item`` (its done form); the
    indexes the delta event carries."""
    holder, index_field, text_field = _RESPONSES_DELTAS[event_type]
    if holder is None:
        item[text_field] = item.get(text_field, "") + text
        return {}
    parts = item.setdefault(holder, [])
    if not isinstance(parts, list):
        parts = item[holder] = []
    parts.append(dict(_RESPONSES_PARTS[event_type]))
    parts[-1][text_field] += text
    return {index_field: len(parts) - 1}


def _responses_done_place(item: dict[str, Any], delta_type: str) -> dict[str, Any]:
    """The indexes a ``.done`` event carries: those of its delta's part in ``item``."""
    holder, index_field, _ = _RESPONSES_DELTAS[delta_type]
    if holder is None:
        return {}
    kind = _RESPONSES_PARTS[delta_type]["type"]
    parts = item.get(holder) or []
    at = next((i for i, p in enumerate(parts) if p.get("type") == kind), 0)
    return {index_field: at}


def _responses_reference(events: list[Any]) -> Any:
    """``output`` of the response openai's ``ResponseStreamState`` builds from the events."""
    from openai import omit
    from openai.lib.streaming.responses import ResponseStreamState

    state: Any = ResponseStreamState(input_tools=omit, text_format=omit)
    for event in events:
        state.handle_event(event)
    final = state._completed_response
    return None if final is None else final.model_dump(mode="json", exclude_none=True)["output"]


def _responses_status_case(members: dict[str, Any]) -> Case:
    """The response-level events: queued, in_progress, then incomplete / failed / error."""
    events = [
        build(members["response.queued"], response=_response("queued", []), sequence_number=0),
        build(
            members["response.in_progress"],
            response=_response("in_progress", []),
            sequence_number=1,
        ),
        build(
            members["response.incomplete"], response=_response("incomplete", []), sequence_number=2
        ),
    ]
    covers = {"response.queued", "response.in_progress", "response.incomplete"}
    failed = [
        build(members["response.failed"], response=_response("failed", []), sequence_number=2),
        build(members["error"], message="boom", code="server_error", sequence_number=3),
    ]
    return Case(
        id="responses-status",
        provider="openai-responses",
        events=events[:2] + failed,
        covers=covers | {"response.failed", "error"},
        expect=lambda m: m.status == "failed",
    )
