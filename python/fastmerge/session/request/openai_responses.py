"""OpenAI Responses: ``{"input": [items]}`` (stateless: the whole history as items, system
messages in place as ``{"role": "system"}`` messages).

Request form of a response: its ``output`` items, in order, as input items (the API takes its
output items back: messages with ``output_text`` content, reasoning items with their
``encrypted_content``, function and custom tool calls, server-tool items), each without its
``null`` fields (an item rendered from another provider's message has no ``id`` or
``status``). The response's ``id``, ``status``, ``usage``, ``model`` and other fields describe
the response. A tool result is ``{"type": "function_call_output" (or
"custom_tool_call_output"), "call_id", "output"}``.
"""

from __future__ import annotations

from typing import Any

from ._common import system, user, without_nulls

__all__ = ["NAME", "assistant", "request", "system", "tool", "user"]
NAME = "openai-responses"


def assistant(response: dict[str, Any]) -> list[dict[str, Any]]:
    """The request form of a ``response``: its output items."""
    return [without_nulls(item) if isinstance(item, dict) else item for item in response["output"]]


def tool(data: dict[str, Any], call: dict[str, Any], owner: dict[str, Any]) -> dict[str, Any]:
    kind = "custom_tool_call_output" if call.get("type") == "custom" else "function_call_output"
    return {"type": kind, "call_id": data["tool_call_id"], "output": data["content"]}


def request(entries: list[dict[str, Any]], systems: list[Any]) -> dict[str, Any]:
    return {"input": entries}
