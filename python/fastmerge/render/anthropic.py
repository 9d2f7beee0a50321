"""Render a message as the Anthropic Messages API's non-streaming response (a ``Message``):
``{id, type: "message", role, model, content: [blocks in order], stop_reason, stop_sequence,
stop_details, container, usage, ...}``.

Blocks: ``text`` (with ``citations`` as sent, ``[]`` included; null when none were sent, as
the SDK's ``TextBlock``),
``thinking`` (with its ``signature``), ``redacted_thinking`` (``data``), ``tool_use`` (``input``
parsed from the raw arguments; ``{}`` when empty; a call that was cut (a ``truncated``
anomaly names it: the stream ended, or ``max_tokens`` stopped it, before its
``content_block_stop``) has its raw arguments string as ``input`` and ``"truncated": true``,
never an object that would look whole, where the Anthropic SDK reads it as far as it is
complete; other JSON that does not parse is read that far), and the blocks kept verbatim
(server tools, tool results, compaction). Signatures, redacted data and verbatim blocks are
replayed only from an Anthropic stream (``payload.provider`` / the message's provider).
"""

from __future__ import annotations

from typing import Any, Sequence

from ..parts import arguments_text
from ._common import (
    CUT_MARKER,
    arguments_object,
    cut_calls,
    is_cut,
    message_data,
    normalized_usage_but,
)

PROVIDER = "anthropic"

# usage keys fastmerge adds (normalized names, the computed total), not Anthropic's own
_NORMALIZED = normalized_usage_but("input_tokens", "output_tokens")
# message fields written from the message itself, not from provider_metadata
_OWN = ("provider", "type", "id", "role", "model", "content", "stop_reason", "usage")
# normalized finish reasons of other providers -> Anthropic's stop_reason
_STOP_REASONS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "content_filter": "refusal",
}


def render(messages: Sequence[Any]) -> dict[str, Any]:
    """The Anthropic ``Message`` for one message (the API has one choice per response)."""
    if len(messages) != 1:
        raise ValueError(f"an Anthropic Message holds one choice, not {len(messages)}")
    message = messages[0]
    data = message_data(message)
    metadata = data.get("provider_metadata") or {}
    ours = metadata.get("provider") == PROVIDER
    content: list[dict[str, Any]] = []
    cut = cut_calls(data)
    for part in data.get("parts") or ():
        block = _block(part, ours, is_cut(part, cut))
        if block is not None:
            content.append(block)
    finish = data.get("finish_reason")
    if not ours and finish is not None:
        finish = _STOP_REASONS.get(message.finish_reason_normalized or "", finish)
    out: dict[str, Any] = {
        "id": data.get("response_id"),
        "type": "message",
        "role": data.get("role") or "assistant",
        "model": data.get("response_model"),
        "content": content,
        "stop_reason": finish,
        "stop_sequence": metadata.get("stop_sequence") if ours else None,
        "stop_details": metadata.get("stop_details") if ours else None,
        "container": metadata.get("container") if ours else None,
        "usage": _usage(data.get("usage_metadata") or {}, ours),
    }
    if ours:
        for key, value in metadata.items():
            if key not in out and key not in _OWN:
                out[key] = value
    return out


def _block(part: dict[str, Any], ours: bool, cut: bool) -> dict[str, Any] | None:
    kind = part.get("part")
    if kind == "text":
        block: dict[str, Any] = {"type": "text", "text": part.get("text") or ""}
        # as sent: [] stays [] (E102); none sent is the SDK's null
        block["citations"] = part.get("citations")
        attributes = part.get("attributes")
        if ours and attributes:
            for key, value in attributes.items():
                block.setdefault(key, value)
        return block
    if kind == "reasoning":
        payload = part.get("payload") or {}
        replay = payload.get("provider") == PROVIDER
        if replay and payload.get("kind") == "redacted_thinking":
            return {"type": "redacted_thinking", "data": payload.get("data")}
        signature = payload.get("data") if replay and payload.get("kind") == "signature" else ""
        return {"type": "thinking", "thinking": part.get("text") or "", "signature": signature}
    if kind == "tool_call":
        block = {
            "type": "tool_use",
            "id": part.get("id"),
            "name": part.get("name"),
            "input": arguments_object(part.get("arguments"), partial=True),
        }
        if cut:
            block["input"] = arguments_text(part.get("arguments"))
            block[CUT_MARKER] = True
        extra = part.get("extra")
        if ours and extra:
            for key, value in extra.items():
                block.setdefault(key, value)
        return block
    if kind == "unknown":
        raw = part.get("raw")
        if part.get("provider") == PROVIDER and isinstance(raw, dict):
            return dict(raw)
        return None
    if kind == "tool_result":
        return {
            "type": "tool_result",
            "tool_use_id": part.get("tool_call_id"),
            "content": part.get("content"),
        }
    if kind == "media":
        url = part.get("url")
        if url is not None:
            return {"type": "image", "source": {"type": "url", "url": url}}
        source = {"type": "base64", "media_type": part.get("mime_type"), "data": part.get("data")}
        return {"type": "image", "source": source}
    return None


def _usage(usage: dict[str, Any], ours: bool) -> dict[str, Any]:
    """Anthropic's usage: the stream's own keys in their order (an Anthropic stream), with the
    input and output counts always present; cache counts only when they were received."""
    out: dict[str, Any] = {}
    if ours:
        for key, value in usage.items():
            if key == "cache_read_tokens":  # the adapter's name for cache_read_input_tokens
                out.setdefault("cache_read_input_tokens", value)
            elif key not in _NORMALIZED:
                out[key] = value
    out.setdefault("input_tokens", usage.get("input_tokens") or 0)
    out.setdefault("output_tokens", usage.get("output_tokens") or 0)
    write = usage.get("cache_creation_input_tokens", usage.get("cache_write_tokens"))
    if write is not None:
        out.setdefault("cache_creation_input_tokens", write)
    read = usage.get("cache_read_input_tokens", usage.get("cache_read_tokens"))
    if read is not None:
        out.setdefault("cache_read_input_tokens", read)
    return out
