"""OpenAI Responses: ``{"input": [items]}`` (stateless: the whole history as items, system
messages in place as ``{"role": "system"}`` messages).

Request form of a response: its ``output`` items, in order, as input items (the API takes its
output items back: messages with ``output_text`` content, reasoning items with their
``encrypted_content``, function and custom tool calls, server-tool items). The items fastmerge
rebuilds from parts go without their ``null`` fields (an item rendered from another
provider's message has no ``id`` or ``status``); the provider's other items go verbatim,
``null`` fields included. Another provider's message goes as an input message (``{"type":
"message", "role": "assistant", "content": <text>}``): an output message needs an item id.
The response's ``id``, ``status``, ``usage``, ``model`` and other fields describe the
response. A tool result is ``{"type": "function_call_output" (or
"custom_tool_call_output"), "call_id", "output"}``.
"""

from __future__ import annotations

from typing import Any

from ._common import system, user, without_nulls

__all__ = ["NAME", "assistant", "request", "system", "tool", "user"]
NAME = "openai-responses"


# the items fastmerge rebuilds from parts; any other item is a provider's own, kept verbatim
# with its null fields (``code_interpreter_call``'s ``outputs: null`` is required)
_REBUILT = ("message", "reasoning", "function_call", "custom_tool_call")


def _input_item(item: Any) -> Any:
    if isinstance(item, dict) and item.get("type") == "web_search_call":
        return _web_search_call(item)
    if not isinstance(item, dict) or item.get("type") not in _REBUILT:
        return item
    item = without_nulls(item)
    if item["type"] == "message" and "id" not in item:
        # another provider's message: an input message (an output message needs the item id
        # the API gave it, which this one never had)
        content = [c for c in item.get("content") or () if isinstance(c, dict)]
        text = "".join(c.get("text") or "" for c in content)
        text = text or "".join(c.get("refusal") or "" for c in content)
        if not text:
            return None
        return {"type": "message", "role": item.get("role") or "assistant", "content": text}
    return item


def _web_search_call(item: dict[str, Any]) -> dict[str, Any]:
    """A web search call as the request takes it: its action's ``sources`` hold only URL
    sources there (the API also returns ``{"type": "api", "name": ...}`` sources, e.g. for
    weather, which the request type refuses; they are the search's provenance, kept in the
    log)."""
    action = item.get("action")
    sources = action.get("sources") if isinstance(action, dict) else None
    if not isinstance(sources, list):
        return item
    kept = [s for s in sources if isinstance(s, dict) and s.get("type") == "url"]
    if len(kept) == len(sources):
        return item
    action = {k: v for k, v in action.items() if k != "sources"}  # type: ignore[union-attr]
    if kept:
        action["sources"] = kept
    return {**item, "action": action}


def assistant(response: dict[str, Any]) -> list[dict[str, Any] | None]:
    """The request form of a ``response``: its output items (none for a failed or empty
    response)."""
    return [_input_item(item) for item in response["output"]]


def tool(data: dict[str, Any], call: dict[str, Any], owner: dict[str, Any]) -> dict[str, Any]:
    kind = "custom_tool_call_output" if call.get("type") == "custom" else "function_call_output"
    return {"type": kind, "call_id": data["tool_call_id"], "output": data["content"]}


def request(entries: list[dict[str, Any]], systems: list[Any]) -> dict[str, Any]:
    return {"input": entries}
