"""Render a message as the OpenAI Responses API's non-streaming ``response`` object.

Output items are rebuilt from the parts, grouped by their output index (``index // 1000`` of
text, reasoning and unknown parts as the adapter numbers them, a tool call's
``provider_index``), in output-index order. Item envelopes the ``"openai-responses"`` adapter kept
(``provider_metadata["output_items"]``: ids, status, role, phase, ...) give each item its
provider fields; the response fields it kept (``provider_metadata["response"]``) give the
rest of the object. Encrypted reasoning content is replayed only when it came from
``"openai-responses"``. A call the stream cut keeps its raw ``arguments`` (as always here), has
``status: "incomplete"`` and ``"truncated": true``. An item field the stream sent as null
(a reasoning item's ``content`` or ``status``) stays null: no ``"completed"`` or ``[]`` is
invented for it. The response's audio (an ``unknown`` part of kind ``audio``) is no output item
and is not rendered here (the Responses object has no place for it).
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from ._common import CUT_MARKER, cut_calls, is_cut, message_data, normalized_usage_but

NAME = "openai-responses"
STRIDE = 1000  # the adapter's part index: output_index * 1000 + ...
ITEM = 999  # ... + 999: the whole item (an unknown item's part)
_STATUS = {"complete": "completed", "incomplete": "incomplete", "failed": "failed"}
# the fields of a response rendered from a message of another provider
_SKELETON = (
    "id",
    "object",
    "created_at",
    "status",
    "error",
    "incomplete_details",
    "model",
    "output",
    "usage",
)
_NORMALIZED_USAGE = normalized_usage_but("input_tokens", "output_tokens", "total_tokens")


def render(messages: Sequence[Any]) -> dict[str, Any]:
    """The ``response`` object of the first message (the Responses API has no choices)."""
    data = message_data(messages[0])
    meta = data.get("provider_metadata") or {}
    ours = meta.get("provider") == NAME
    response = meta.get("response") if ours else None
    envelopes = meta.get("output_items") if ours else None
    status = _STATUS.get(data.get("status") or "", "incomplete")
    output = _output(
        data.get("parts") or [],
        envelopes if isinstance(envelopes, dict) else {},
        data.get("refusal"),
        status,
        cut_calls(data),
    )
    usage = _usage(data.get("usage_metadata"))
    out: dict[str, Any]
    if isinstance(response, dict):
        out = dict(response)  # the provider's fields in its order (output, usage placeholders)
    else:
        out = dict.fromkeys(_SKELETON)
    if data.get("response_id") is not None:
        out["id"] = data["response_id"]
    out["object"] = "response"
    out["status"] = status
    if data.get("response_model") is not None:
        out["model"] = data["response_model"]
    out["output"] = output
    out["usage"] = usage
    error = meta.get("error") if ours else None
    if status == "failed" and isinstance(error, dict):
        out["error"] = error  # the error event's fields with the failed response's
    if status == "incomplete" and out.get("incomplete_details") is None:
        reason = data.get("finish_reason")
        if reason is not None:
            out["incomplete_details"] = {"reason": reason}
    return out


def _output_index(part: dict[str, Any]) -> int | None:
    if part.get("part") == "tool_call":
        index = part.get("provider_index")
        return index if type(index) is int else None
    index = part.get("index")
    if type(index) is int and index >= 0:
        return index // STRIDE
    return None


class _Slot:
    __slots__ = ("index", "kind", "parts", "order")

    def __init__(self, index: int | None, kind: str, order: tuple[int, int]) -> None:
        self.index = index
        self.kind = kind
        self.parts: list[dict[str, Any]] = []
        self.order = order


_ITEM_KINDS = {"text": "message", "reasoning": "reasoning", "tool_call": "call"}


def _output(
    parts: list[dict[str, Any]],
    envelopes: dict[str, Any],
    refusal: Any,
    status: str,
    cut: list[dict[str, Any]],
) -> list[Any]:
    slots: list[_Slot] = []
    by_index: dict[int, _Slot] = {}
    last = -1
    for part in parts:
        kind = part.get("part")
        index = _output_index(part)
        if kind == "unknown":
            if part.get("provider") != NAME:
                continue  # another provider's block is no Responses item
            # the whole item (index ``oi*1000+999``), or a content entry of a message
            whole = index is None or part["index"] % STRIDE == ITEM
            if whole:
                slot = _Slot(index, "unknown", (index if index is not None else last, len(slots)))
                slot.parts.append(part)
                slots.append(slot)
                last = index if index is not None else last
                continue
            item_kind = by_index[index].kind if index in by_index else "message"
        else:
            found_kind = _ITEM_KINDS.get(kind) if isinstance(kind, str) else None
            if found_kind is None:
                continue  # tool results and media are not output items
            empty = not (part.get("text") or part.get("citations") or part.get("attributes"))
            if kind == "text" and empty:
                continue  # an empty text block (another provider's) is no output text
            item_kind = found_kind
        found = by_index.get(index) if index is not None else None
        if found is not None and found.kind == item_kind and item_kind != "call":
            slot = found
        else:
            slot = _Slot(index, item_kind, (index if index is not None else last, len(slots)))
            slots.append(slot)
            if index is not None and index not in by_index:
                by_index[index] = slot
        slot.parts.append(part)
        if index is not None:
            last = index
    for key, envelope in envelopes.items():
        if key.isdigit() and int(key) not in by_index and isinstance(envelope, dict):
            kind = envelope.get("type")
            if kind in ("message", "reasoning"):
                slot = _Slot(int(key), kind, (int(key), len(slots)))
                slots.append(slot)
                by_index[int(key)] = slot
    if refusal and not any(slot.kind == "message" for slot in slots):
        slots.append(_Slot(None, "message", (last, len(slots))))
    slots.sort(key=lambda slot: slot.order)
    items: list[Any] = []
    refusal_slot = None
    if refusal:
        refusal_slot = [slot for slot in slots if slot.kind == "message"][-1]
    for slot in slots:
        envelope = envelopes.get(str(slot.index)) if slot.index is not None else None
        if not isinstance(envelope, dict):
            envelope = None
        if slot.kind == "unknown":
            if slot.parts[0].get("kind") != "audio":  # audio is no output item
                items.append(slot.parts[0].get("raw"))
        elif slot.kind == "message":
            items.append(
                _message(slot, envelope, refusal if slot is refusal_slot else None, status)
            )
        elif slot.kind == "reasoning":
            items.append(_reasoning(slot, envelope, status))
        else:
            items.append(_call(slot.parts[0], envelope, status, cut))
    return items


def _item_status(envelope: dict[str, Any] | None, status: str) -> Any:
    current = envelope.get("status") if envelope is not None else None
    if current is None and envelope is not None and "status" in envelope:
        return None  # sent as null: nothing is invented [E98]
    if current is None or current == "in_progress":
        return "completed" if status == "completed" else "incomplete"
    return str(current)


def _message(
    slot: _Slot, envelope: dict[str, Any] | None, refusal: Any, status: str
) -> dict[str, Any]:
    content: list[Any] = []
    for part in slot.parts:
        if part.get("part") == "unknown":
            content.append(part.get("raw"))
            continue
        attributes = part.get("attributes") or {}
        entry: dict[str, Any] = {"type": attributes.get("type", "output_text")}
        entry["text"] = part.get("text", "")
        for key, value in attributes.items():
            if key not in ("type", "text"):
                entry[key] = value
        if "annotations" not in entry:
            entry["annotations"] = part.get("citations") or []
        content.append(entry)
    if refusal:
        content.append({"type": "refusal", "refusal": refusal})
    if envelope is None:
        item: dict[str, Any] = {"type": "message", "id": None, "status": None, "role": "assistant"}
    else:
        item = dict(envelope)
    item["content"] = content
    if "status" in item:
        item["status"] = _item_status(envelope, status)
    return item


def _reasoning(slot: _Slot, envelope: dict[str, Any] | None, status: str) -> dict[str, Any]:
    summary: list[Any] = []
    content: list[Any] = []
    encrypted = None
    for part in slot.parts:
        if part.get("part") == "unknown":
            content.append(part.get("raw"))
            continue
        if part.get("summary"):
            summary.append({"type": "summary_text", "text": part["summary"]})
        if part.get("text"):
            content.append({"type": "reasoning_text", "text": part["text"]})
        payload = part.get("payload")
        if (
            isinstance(payload, dict)
            and payload.get("provider") == NAME
            and payload.get("kind") == "encrypted_content"
        ):
            encrypted = payload.get("data")
    item: dict[str, Any] = (
        dict(envelope) if envelope is not None else {"type": "reasoning", "id": None}
    )
    item["summary"] = summary
    if content or ("content" in item and item["content"] is not None):
        item["content"] = content  # a content sent as null stays null [E98]
    if encrypted is not None:
        item["encrypted_content"] = encrypted
    elif item.get("encrypted_content") is not None:
        item.pop("encrypted_content")
    if "status" in item:
        item["status"] = _item_status(envelope, status)
    return item


def _call(
    part: dict[str, Any], envelope: dict[str, Any] | None, status: str, cut: list[dict[str, Any]]
) -> dict[str, Any]:
    custom = part.get("type") == "custom"
    arguments = part.get("arguments")
    if not isinstance(arguments, str):
        arguments = "" if arguments is None else json.dumps(arguments, separators=(",", ":"))
    if envelope is None:
        item: dict[str, Any] = {
            "type": "custom_tool_call" if custom else "function_call",
            "id": part.get("response_item_id"),
            "call_id": None,
            "name": None,
            "status": None,
        }
    else:
        item = dict(envelope)
        if item.get("id") is None and part.get("response_item_id") is not None:
            item["id"] = part["response_item_id"]
    item["call_id"] = part.get("id")
    item["name"] = part.get("name")
    item["input" if custom else "arguments"] = arguments
    if "status" in item:
        item["status"] = _item_status(envelope, status)
    if is_cut(part, cut):
        item["status"] = "incomplete"
        item[CUT_MARKER] = True
    return item


def _usage(usage: Any) -> Any:
    if not isinstance(usage, dict) or not usage:
        return None
    out: dict[str, Any] = {}
    for key, value in usage.items():
        if key not in _NORMALIZED_USAGE:
            out[key] = value
    if "input_tokens_details" not in out and (
        usage.get("cache_read_tokens") is not None or usage.get("cache_write_tokens") is not None
    ):
        details: dict[str, Any] = {"cached_tokens": usage.get("cache_read_tokens") or 0}
        if usage.get("cache_write_tokens") is not None:
            details["cache_write_tokens"] = usage["cache_write_tokens"]
        out["input_tokens_details"] = details
    if "output_tokens_details" not in out and usage.get("reasoning_tokens") is not None:
        out["output_tokens_details"] = {"reasoning_tokens": usage["reasoning_tokens"]}
    return out
