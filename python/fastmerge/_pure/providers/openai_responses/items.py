"""The twin's Responses adapter on output items (``src/engine/providers/openai_responses/
items.rs``): an item added, a call item's tool-call part, an item as finally reported
(``output_item.done`` or the terminal response), its message and reasoning content settled
against what was streamed, and each modeled item's envelope (its fields, with placeholders for
what its parts hold).

The handlers are functions of the adapter (``openai_responses.Adapter``, seen through the
``deltas.Adapter`` protocol), as the engine's are methods of its ``Adapter`` in this file.
"""

from __future__ import annotations

from typing import Any

from .._common import AdapterError, text_field
from . import tools
from .deltas import (
    CONTENT_LIMIT,
    ITEM,
    STRIDE,
    SUMMARY,
    SUMMARY_LIMIT,
    Adapter,
    Leaves,
    _anomaly,
    _emit,
    _type_name,
)
from .tools import NAME

_MODELED = ("message", "reasoning", "function_call", "custom_tool_call")
_CALLS = {"function_call": "arguments", "custom_tool_call": "input"}
# envelope placeholders of the content an item's parts hold
_PLACEHOLDERS: dict[str, dict[str, Any]] = {
    "message": {"content": []},
    "reasoning": {"summary": [], "content": [], "encrypted_content": None},
    "function_call": {"arguments": ""},
    "custom_tool_call": {"input": ""},
}


class _Item:
    """What the adapter knows of the item at one output index."""

    __slots__ = (
        "kind",
        "item_id",
        "call_id",
        "added",
        "done",
        "first_part",
        "raw",
        "reported",
        "tool",
    )

    def __init__(self, kind: str | None) -> None:
        self.kind = kind
        self.item_id: Any = None
        self.call_id: Any = None
        self.added = False
        self.done = False
        self.first_part: int | None = None  # a reasoning item's first part index (payload)
        self.raw: Any = None  # an unmodeled item as added (kept if the stream is cut)
        self.reported = False  # delta_before_start recorded
        self.tool: tools.Tool | None = None  # deltas and statuses of an unmodeled item


def added(adapter: Adapter, event: dict[str, Any], kind: str, leaves: Leaves) -> None:
    index = adapter._index(event, kind)
    item = event.get("item")
    if not isinstance(item, dict):
        raise AdapterError(f"{kind}: 'item' must be a dict, not {_type_name(item)}")
    item_kind = item.get("type")
    if type(item_kind) is not str:
        raise AdapterError(f"{kind}: 'item.type' must be a str, not {_type_name(item_kind)}")
    item_id = item.get("id")
    anomalies: list[dict[str, Any]] = []
    state = adapter.items.get(index)
    if state is None:
        state = adapter.items[index] = _Item(item_kind)
    elif state.added and (state.kind != item_kind or state.item_id != item_id):
        anomalies.append(
            _anomaly(
                "index_collision",
                f"output_index {index}: {item_kind} {item_id!r} added over "
                f"{state.kind} {state.item_id!r}",
            )
        )
    elif state.kind != item_kind:
        # deltas implied another kind before the item came
        anomalies.append(
            _anomaly(
                "kind_change",
                f"output_index {index}: {item_kind} item after {state.kind} deltas",
            )
        )
    state.kind = item_kind
    state.added = True
    if type(item_id) is str:
        state.item_id = item_id
        adapter.ids[item_id] = index
    leaf: dict[str, Any] = {}
    if item_kind in _CALLS:
        part = call_part(adapter, state, index, item, item_kind, kind, anomalies, False)
        leaf["parts"] = [part]
    elif item_kind not in _MODELED:
        state.raw = item
    envelope = _envelope(item)
    if envelope is not None:
        leaf["provider_metadata"] = {"output_items": _envelope_at(index, envelope)}
    _emit(leaves, leaf, anomalies)


def call_part(
    adapter: Adapter,
    state: _Item,
    index: int,
    item: dict[str, Any],
    item_kind: str,
    kind: str,
    anomalies: list[Any],
    done: bool,
) -> dict[str, Any]:
    """A call item's tool-call part: identity once, arguments (settled when ``done``)."""
    part: dict[str, Any] = {"part": "tool_call"}
    call_id = text_field(item.get("call_id"), f"{kind}.item.call_id")
    name = text_field(item.get("name"), f"{kind}.item.name")
    if state.call_id is None and call_id is not None:
        state.call_id = call_id
        part["id"] = call_id
        if name is not None:
            part["name"] = name
        if item_kind == "custom_tool_call":
            part["type"] = "custom"
    key = _CALLS[item_kind]
    arguments = item.get(key)
    if arguments is not None and type(arguments) is not str:
        raise AdapterError(f"{kind}: 'item.{key}' must be a str, not {_type_name(arguments)}")
    if arguments:
        settled = False
        if done:
            arguments, settled = adapter._settle(
                str(index), arguments, f"{item_kind} {state.call_id!r} {key}", anomalies
            )
        else:
            adapter._track(str(index), arguments)
        if arguments:
            part["arguments"] = arguments
        if settled:
            part["settled"] = True
    part["provider_index"] = index
    item_id = item.get("id")
    if type(item_id) is str:
        part["response_item_id"] = item_id
    return part


def item_done_event(adapter: Adapter, event: dict[str, Any], kind: str, leaves: Leaves) -> None:
    index = adapter._index(event, kind)
    item = event.get("item")
    if not isinstance(item, dict):
        raise AdapterError(f"{kind}: 'item' must be a dict, not {_type_name(item)}")
    item_done(adapter, index, item, kind, leaves)


def item_done(
    adapter: Adapter, index: int, item: dict[str, Any], kind: str, leaves: Leaves
) -> None:
    """An item as finally reported (``output_item.done`` or the terminal response)."""
    item_kind = item.get("type")
    if type(item_kind) is not str:
        raise AdapterError(f"{kind}: 'item.type' must be a str, not {_type_name(item_kind)}")
    state = adapter.items.get(index)
    if state is None:
        state = adapter.items[index] = _Item(item_kind)
    anomalies: list[dict[str, Any]] = []
    if state.kind != item_kind:
        anomalies.append(
            _anomaly(
                "kind_change",
                f"output_index {index}: {item_kind} item done after {state.kind}",
            )
        )
        state.kind = item_kind
    state.done = True
    item_id = item.get("id")
    if type(item_id) is str:
        if state.item_id is None:
            state.item_id = item_id
        adapter.ids[item_id] = index
    parts: list[dict[str, Any]] = []
    refusal: list[str] = []
    settled_refusal = False
    if item_kind == "message":
        settled_refusal = message_done(adapter, index, item, kind, parts, refusal, anomalies)
    elif item_kind == "reasoning":
        reasoning_done(adapter, state, index, item, kind, parts, anomalies)
    elif item_kind in _CALLS:
        parts.append(call_part(adapter, state, index, item, item_kind, kind, anomalies, True))
    else:
        parts.append(_unknown(item, item_kind, index * STRIDE + ITEM))
    leaf: dict[str, Any] = {}
    if parts:
        leaf["parts"] = parts
    if settled_refusal:
        # the done refusal replaces the streamed one: the whole refusal, as now known
        leaf["refusal"] = adapter._whole_refusal()
        leaf["settled"] = True
    elif refusal:
        leaf["refusal"] = "".join(refusal)
    envelope = _envelope(item)
    if envelope is not None:
        leaf["provider_metadata"] = {"output_items": _envelope_at(index, envelope)}
    _emit(leaves, leaf, anomalies)


def message_done(
    adapter: Adapter,
    index: int,
    item: dict[str, Any],
    kind: str,
    parts: list[dict[str, Any]],
    refusal: list[str],
    anomalies: list[Any],
) -> bool:
    """A done message's parts and refusal; whether its refusal replaces the streamed one."""
    replaced = False
    for ci, entry in enumerate(_list(item, "content", kind, CONTENT_LIMIT)):
        key = f"{index}:{ci}"
        entry_kind = entry.get("type") if isinstance(entry, dict) else None
        if entry_kind == "output_text":
            text = entry.get("text")
            if type(text) is not str:
                raise AdapterError(
                    f"{kind}: 'item.content[{ci}].text' must be a str, not {_type_name(text)}"
                )
            rest, settled = adapter._settle(key, text, f"output_text {key}", anomalies)
            part: dict[str, Any] = {"part": "text", "text": rest}
            annotations = entry.get("annotations")
            if annotations and isinstance(annotations, list) and key not in adapter.cited:
                adapter.cited.add(key)  # once: the terminal response repeats the item
                part["citations"] = annotations
            part["attributes"] = {k: v for k, v in entry.items() if k != "text"}
            part["index"] = index * STRIDE + ci
            if settled:
                part["settled"] = True
            parts.append(part)
        elif entry_kind == "refusal":
            text = entry.get("refusal")
            if type(text) is not str:
                raise AdapterError(
                    f"{kind}: 'item.content[{ci}].refusal' must be a str, not {_type_name(text)}"
                )
            adapter._refusal_key(key)
            rest, settled = adapter._settle(key, text, f"refusal {key}", anomalies)
            if settled:
                replaced = True
            elif rest:
                refusal.append(rest)
        elif isinstance(entry, dict):
            parts.append(_unknown(entry, entry_kind, index * STRIDE + ci))
        else:
            raise AdapterError(
                f"{kind}: 'item.content[{ci}]' must be a dict, not {_type_name(entry)}"
            )
    return replaced


def reasoning_done(
    adapter: Adapter,
    state: _Item,
    index: int,
    item: dict[str, Any],
    kind: str,
    parts: list[dict[str, Any]],
    anomalies: list[Any],
) -> None:
    for si, entry in enumerate(_list(item, "summary", kind, SUMMARY_LIMIT)):
        if not isinstance(entry, dict):
            raise AdapterError(
                f"{kind}: 'item.summary[{si}]' must be a dict, not {_type_name(entry)}"
            )
        text = entry.get("text")
        if type(text) is not str:
            raise AdapterError(
                f"{kind}: 'item.summary[{si}].text' must be a str, not {_type_name(text)}"
            )
        key = f"{index}:summary:{si}"
        rest, settled = adapter._settle(key, text, f"reasoning summary {key}", anomalies)
        if rest or settled:
            at = index * STRIDE + SUMMARY + si
            if state.first_part is None:
                state.first_part = at
            part = {"part": "reasoning", "text": "", "summary": rest, "index": at}
            if settled:
                part["settled"] = True
            parts.append(part)
    for ci, entry in enumerate(_list(item, "content", kind, CONTENT_LIMIT)):
        if not isinstance(entry, dict):
            raise AdapterError(
                f"{kind}: 'item.content[{ci}]' must be a dict, not {_type_name(entry)}"
            )
        key = f"{index}:{ci}"
        if entry.get("type") != "reasoning_text":
            parts.append(_unknown(entry, entry.get("type"), index * STRIDE + ci))
            continue
        text = entry.get("text")
        if type(text) is not str:
            raise AdapterError(
                f"{kind}: 'item.content[{ci}].text' must be a str, not {_type_name(text)}"
            )
        rest, settled = adapter._settle(key, text, f"reasoning_text {key}", anomalies)
        if rest or settled:
            at = index * STRIDE + ci
            if state.first_part is None:
                state.first_part = at
            part = {"part": "reasoning", "text": rest, "index": at}
            if settled:
                part["settled"] = True
            parts.append(part)
    encrypted = item.get("encrypted_content")
    if encrypted is not None and type(encrypted) is not str:
        raise AdapterError(
            f"{kind}: 'item.encrypted_content' must be a str, not {_type_name(encrypted)}"
        )
    if encrypted:
        if state.first_part is None:
            state.first_part = index * STRIDE + ITEM
        payload = {"provider": NAME, "kind": "encrypted_content", "data": encrypted}
        parts.append(
            {"part": "reasoning", "text": "", "payload": payload, "index": state.first_part}
        )


def _envelope_at(index: int, envelope: dict[str, Any]) -> dict[str, Any]:
    return {str(index): envelope}


def _envelope(item: dict[str, Any]) -> dict[str, Any] | None:
    """A modeled item's fields with placeholders for what its parts hold; None for others."""
    placeholders = _PLACEHOLDERS.get(item.get("type"))  # type: ignore[arg-type]
    if placeholders is None:
        return None
    return {k: (_fresh(placeholders[k], v) if k in placeholders else v) for k, v in item.items()}


def _fresh(placeholder: Any, value: Any) -> Any:
    """The placeholder of a field the provider sent; a null stays null [E98]."""
    if value is None:
        return None
    return [] if isinstance(placeholder, list) else placeholder


def _unknown(raw: Any, kind: Any, index: int) -> dict[str, Any]:
    return {"part": "unknown", "provider": NAME, "kind": kind, "raw": raw, "index": index}


def _list(item: dict[str, Any], key: str, kind: str, limit: int) -> list[Any]:
    value = item.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise AdapterError(f"{kind}: 'item.{key}' must be a list, not {_type_name(value)}")
    if len(value) > limit:
        raise AdapterError(f"{kind}: 'item.{key}' must have at most {limit} entries")
    return value
