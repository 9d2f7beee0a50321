"""Render a message as Amazon Bedrock's non-streaming ``Converse`` response:

``{"output": {"message": {"role", "content": [...]}}, "stopReason", "usage", "metrics", ...}``

Content blocks, in part order:

- text -> ``{"text"}``; text with citations -> ``{"citationsContent": {"content": [{"text"}],
  "citations"}}``;
- reasoning -> ``{"reasoningContent": {"reasoningText": {"text", "signature"?}}}`` (the signature
  only when its payload came from Bedrock); a redacted reasoning part with Bedrock's blob ->
  ``{"reasoningContent": {"redactedContent"}}`` (another provider's redacted data cannot be
  replayed: left out);
- tool call -> ``{"toolUse": {"toolUseId", "name", "input", ...extra}}``, ``input`` the parsed
  arguments (raw text that is not JSON stays a string; a call the stream cut has its raw
  arguments string and ``"truncated": true``);
- tool result -> ``{"toolResult": {"toolUseId", "content"}}``;
- an unknown part Bedrock sent -> its JSON verbatim; a server tool's ``toolResult`` start and the
  ``toolResult`` delta parts after it become one ``toolResult`` block whose ``content`` is the
  deltas' items in order (what the non-streaming response holds); an image block (its start
  and deltas, joined by the adapter: E104) is ``{"image": {"format", "source"}}``. Other
  providers' unknown parts are left out.

Blobs (``redactedContent``, image and document ``bytes``) are base64 text here, as the HTTP API
carries them (an event from boto3 holding ``bytes`` is read as that text, E103);
:func:`to_boto3` gives ``bytes`` back wherever botocore's service model says blob, for a
boto3 client's ``converse(**request)`` (or to compare with what ``converse()`` returned).

``usage`` gives Bedrock's names back (``input_tokens`` -> ``inputTokens``, ...) with every other
key as the stream sent it (counts the stream did not report are not made up); ``metrics``,
``additionalModelResponseFields``, ``trace``, ``performanceConfig`` and ``serviceTier`` come
from ``provider_metadata`` when the stream sent them. A message from another provider gets its
normalized finish reason as a ``stopReason`` (``stop`` -> ``end_turn``, ``length`` ->
``max_tokens``, ``tool_calls`` -> ``tool_use``, ``content_filter`` -> ``content_filtered``) and
only the usage counts Bedrock has.
"""

from __future__ import annotations

import base64
import binascii
from functools import lru_cache
from typing import Any, Literal, Sequence

from ..parts import arguments_text
from ._common import CUT_MARKER, arguments_object, cut_calls, is_cut, message_data

NAME = "bedrock-converse"

_USAGE_NAMES = {
    "input_tokens": "inputTokens",
    "output_tokens": "outputTokens",
    "total_tokens": "totalTokens",
    "cache_read_tokens": "cacheReadInputTokens",
    "cache_write_tokens": "cacheWriteInputTokens",
}
_USAGE_ORDER = ("inputTokens", "outputTokens", "totalTokens")
# another provider's finish reason, normalized (rules §3), as a Converse stopReason
_STOP_REASONS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "content_filter": "content_filtered",
}
_TOP_LEVEL = (
    "metrics",
    "additionalModelResponseFields",
    "trace",
    "performanceConfig",
    "serviceTier",
)


def _mine(payload: Any, kind: str) -> Any:
    """The data of a Bedrock payload of ``kind`` (None for another provider's)."""
    if (
        isinstance(payload, dict)
        and payload.get("provider") == NAME
        and payload.get("kind") == kind
    ):
        return payload.get("data")
    return None


def _content(parts: list[dict[str, Any]], cut: list[dict[str, Any]]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    result: dict[str, Any] | None = None  # the open server-tool toolResult block
    for part in parts:
        kind = part["part"]
        if kind != "unknown":
            result = None
        if kind == "text":
            if not (part["text"] or part.get("citations") or part.get("attributes")):
                continue  # an empty text block (another provider's): Bedrock has no empty text
            if part.get("citations"):
                blocks.append(
                    {
                        "citationsContent": {
                            "content": [{"text": part["text"]}],
                            "citations": part["citations"],
                        }
                    }
                )
            else:
                blocks.append({"text": part["text"]})
        elif kind == "reasoning":
            payload = part.get("payload")
            if part.get("redacted"):
                blob = _mine(payload, "redacted_content")
                if blob is not None:
                    blocks.append({"reasoningContent": {"redactedContent": blob}})
                continue
            text: dict[str, Any] = {"text": part["text"]}
            signature = _mine(payload, "signature")
            if signature is not None:
                text["signature"] = signature
            blocks.append({"reasoningContent": {"reasoningText": text}})
        elif kind == "tool_call":
            tool: dict[str, Any] = {
                "toolUseId": part.get("id"),
                "name": part.get("name"),
                "input": arguments_object(part.get("arguments")),
            }
            if is_cut(part, cut):
                tool["input"] = arguments_text(part.get("arguments"))
                tool[CUT_MARKER] = True
            extra = part.get("extra")
            if isinstance(extra, dict):
                for key, value in extra.items():
                    tool.setdefault(key, value)
            blocks.append({"toolUse": tool})
        elif kind == "tool_result":
            content = part.get("content")
            if isinstance(content, str):
                content = [{"text": content}]
            blocks.append(
                {"toolResult": {"toolUseId": part.get("tool_call_id"), "content": content or []}}
            )
        elif kind == "unknown" and part.get("provider") == NAME:
            raw = part.get("raw")
            piece = raw.get("toolResult") if isinstance(raw, dict) and len(raw) == 1 else None
            if isinstance(piece, dict):
                result = dict(piece)
                result.setdefault("content", [])
                blocks.append({"toolResult": result})
            elif isinstance(piece, list) and result is not None:
                result["content"] = [*result["content"], *piece]
            elif isinstance(raw, dict):
                result = None
                blocks.append(raw)
    return blocks


def _usage(usage: dict[str, Any] | None, mine: bool) -> dict[str, Any]:
    """Bedrock's usage; another provider's own keys (``prompt_tokens_details``, ...) are not
    Bedrock's and are left out."""
    named = {
        _USAGE_NAMES.get(k, k): v for k, v in (usage or {}).items() if mine or k in _USAGE_NAMES
    }
    out = {key: named.pop(key) for key in _USAGE_ORDER if key in named}
    out.update(named)
    return out


def render(messages: Sequence[Any]) -> dict[str, Any]:
    """The Converse response of a message (Converse has one choice: the first message)."""
    message = messages[0]
    data = message_data(message)
    metadata = data.get("provider_metadata") or {}
    mine = metadata.get("provider") == NAME
    reason = data.get("finish_reason")
    if not mine and reason is not None:
        reason = _STOP_REASONS.get(message.finish_reason_normalized, reason)
    out: dict[str, Any] = {
        "output": {
            "message": {
                "role": data.get("role") or "assistant",
                "content": _content(data["parts"], cut_calls(data)),
            }
        },
        "stopReason": reason,
        "usage": _usage(data.get("usage_metadata"), mine),
    }
    if mine:
        for key in _TOP_LEVEL:
            if key in metadata:
                out[key] = metadata[key]
    return out


@lru_cache(maxsize=None)  # noqa: UP033
def _shape(kind: str) -> Any:
    import botocore.session  # type: ignore[import-untyped]  # optional: boto3 brings it

    service = botocore.session.get_session().get_service_model("bedrock-runtime")
    operation = service.operation_model("Converse")
    return operation.input_shape if kind == "request" else operation.output_shape


def _blobs(value: Any, shape: Any) -> Any:
    """``value`` with the base64 text at each blob of ``shape`` as ``bytes`` (a copy)."""
    kind = shape.type_name
    if kind == "blob":
        if isinstance(value, str):
            try:
                return base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                return value  # not base64: left as sent (botocore takes a str blob too)
        return value
    if kind == "structure" and isinstance(value, dict):
        if shape.is_document_type:
            return value
        members = shape.members
        return {k: _blobs(v, members[k]) if k in members else v for k, v in value.items()}
    if kind == "list" and isinstance(value, list):
        return [_blobs(v, shape.member) for v in value]
    if kind == "map" and isinstance(value, dict):
        return {k: _blobs(v, shape.value) for k, v in value.items()}
    return value


def to_boto3(data: dict[str, Any], kind: Literal["request", "response"] = "request") -> Any:
    """``data`` (a Converse request, as ``to_request(history, "bedrock-converse")`` gives, or
    a Converse response, as this module renders it) for boto3: the base64 text of every field
    botocore's ``bedrock-runtime`` service model types as a blob becomes ``bytes``, as
    ``client.converse(modelId=..., **to_boto3(request))`` takes them (E103). The rest is
    ``data`` as it is. Needs botocore."""
    if kind not in ("request", "response"):
        raise ValueError(f"kind must be 'request' or 'response', not {kind!r}")
    return _blobs(data, _shape(kind))
