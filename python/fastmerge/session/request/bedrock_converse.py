"""Amazon Bedrock Converse: ``{"system"?: [blocks], "messages": [...]}``.

Request form of a response (a ``Converse`` output): ``output.message`` as it is, ``{"role":
"assistant", "content": <its blocks>}`` (text, ``reasoningContent`` with its signature or
redacted content, ``toolUse``, ``citationsContent``, server-tool blocks), without blank text
blocks (Bedrock refuses them); a message left with no block is left out. ``stopReason``,
``usage``, ``metrics`` and the other top-level fields describe the response. A tool result is
a ``toolResult {toolUseId, content: [{"text"}] | blocks}`` block in a user message;
consecutive user messages are joined (Converse requires alternating roles).

Blobs travel as base64 text (the HTTP API's form); :func:`to_boto3` turns a request into the
form boto3's ``converse()`` takes, with ``bytes`` wherever botocore's model says blob.
"""

from __future__ import annotations

from typing import Any

from ...render.bedrock_converse import to_boto3
from ._common import join_roles

__all__ = ["NAME", "assistant", "request", "system", "to_boto3", "tool", "user"]
NAME = "bedrock-converse"


def _replayable(block: Any) -> bool:
    text = block.get("text") if isinstance(block, dict) else None
    return not isinstance(text, str) or bool(text.strip())  # Bedrock refuses blank text


def assistant(response: dict[str, Any]) -> list[dict[str, Any] | None]:
    """The request form of a Converse response (None when no block is left)."""
    message = response["output"]["message"]
    content = [b for b in message["content"] if _replayable(b)]
    if not content:
        return [None]
    return [{"role": message.get("role") or "assistant", "content": content}]


def _text(text: str) -> dict[str, Any]:
    return {"text": text}


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": [_text(content)] if isinstance(content, str) else content}


def system(content: Any) -> None:
    return None  # the request's top-level ``system``


def tool(data: dict[str, Any], call: dict[str, Any], owner: dict[str, Any]) -> dict[str, Any]:
    content = data["content"]
    result = {
        "toolUseId": data["tool_call_id"],
        "content": [_text(content)] if isinstance(content, str) else content,
    }
    return {"role": "user", "content": [{"toolResult": result}]}


def request(entries: list[dict[str, Any]], systems: list[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if systems:
        out["system"] = [b for s in systems for b in ([_text(s)] if isinstance(s, str) else s)]
    out["messages"] = join_roles(entries, "content", _text)
    return out
