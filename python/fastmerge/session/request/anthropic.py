"""Anthropic Messages: ``{"system"?: str | [blocks], "messages": [...]}``.

Request form of a response (a ``Message``): ``{"role": "assistant", "content": <its content
blocks>}``, the blocks as the response has them (thinking with its signature, redacted
thinking, tool use, server-tool and compaction blocks verbatim) except:

- a text block's ``citations: null`` is left out (the request takes a list or no key);
- an empty or whitespace-only text block is left out: the API rejects such text blocks in
  a request, and it holds nothing;
- a message left with no block is left out (rules §9.1.5).

The response's ``id``, ``model``, ``stop_reason``, ``stop_sequence``, ``usage`` and the other
top-level fields describe the response and have no place in a request. A tool result is a
``tool_result`` block in a user message; consecutive user messages are joined.
"""

from __future__ import annotations

from typing import Any

from ._common import join_roles

__all__ = ["NAME", "assistant", "request", "system", "tool", "user"]
NAME = "anthropic"


def _block(block: dict[str, Any]) -> dict[str, Any] | None:
    if block.get("type") != "text":
        return block
    text = block.get("text")
    if not isinstance(text, str) or not text.strip():
        return None  # the API refuses empty and whitespace-only text blocks
    if block.get("citations") is None:
        block = {k: v for k, v in block.items() if k != "citations"}
    return block


def assistant(response: dict[str, Any]) -> list[dict[str, Any] | None]:
    """The request form of a ``Message`` (None when no block is left)."""
    blocks = [_block(b) for b in response.get("content") or ()]
    content = [b for b in blocks if b is not None]
    return [{"role": "assistant", "content": content} if content else None]


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content}


def system(content: Any) -> None:
    return None  # Anthropic's system prompt is the request's top-level ``system``


def tool(data: dict[str, Any], call: dict[str, Any], owner: dict[str, Any]) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": data["tool_call_id"], "content": data["content"]}
    return {"role": "user", "content": [block]}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def request(entries: list[dict[str, Any]], systems: list[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if systems:
        if all(isinstance(s, str) for s in systems):
            out["system"] = "\n\n".join(systems)
        else:
            out["system"] = [b for s in systems for b in ([_text(s)] if isinstance(s, str) else s)]
    out["messages"] = join_roles(entries, "content", _text)
    return out
