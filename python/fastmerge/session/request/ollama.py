"""Ollama ``/api/chat``: ``{"messages": [...]}`` with system messages in place (a history
is sent to the chat endpoint, whichever endpoint the message was streamed from).

Request form of a response: the chat response's ``message`` (``role``, ``content``,
``thinking``, ``tool_calls`` with object arguments, and other keys Ollama sent in it); for a
``/api/generate`` response, ``{"role": "assistant", "content": <response>, "thinking"?}``.
``done``, ``done_reason``, the counts, durations and ``context`` describe the response
(``context`` belongs to ``/api/generate`` requests, not to a chat history). A tool result is
``{"role": "tool", "content": <text>, "tool_name"?: <the call's name>}`` (content that is
not a string is sent as its JSON text: Ollama's content is text).
"""

from __future__ import annotations

from typing import Any

from ._common import system, tool_content_text, user

__all__ = ["NAME", "assistant", "request", "system", "tool", "user"]
NAME = "ollama"


def assistant(response: dict[str, Any]) -> list[dict[str, Any] | None]:
    """The request form of Ollama's final object (None when it holds nothing)."""
    if "message" in response:
        out = dict(response["message"])
        calls = out.get("tool_calls")
        if calls:  # a call is its function alone in a request (results go by tool_name)
            out["tool_calls"] = [
                {"function": c["function"]} if isinstance(c, dict) and "function" in c else c
                for c in calls
            ]
    else:
        out = {"role": "assistant", "content": response.get("response", "")}
        if "thinking" in response:
            out["thinking"] = response["thinking"]
    if not out.get("content") and not out.get("tool_calls") and not out.get("thinking"):
        return [None]
    return [out]


def tool(data: dict[str, Any], call: dict[str, Any], owner: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "tool", "content": tool_content_text(data["content"])}
    if call.get("name"):
        out["tool_name"] = call["name"]
    return out


def request(entries: list[dict[str, Any]], systems: list[Any]) -> dict[str, Any]:
    return {"messages": entries}
