"""Gemini ``generateContent``: ``{"systemInstruction"?: {"parts"}, "contents": [...]}``.

Request form of a response (a ``GenerateContentResponse``): ``{"role": "model", "parts":
<the first candidate's content parts>}``, every part as the response has it (text, thought
parts, ``functionCall`` with its ``thoughtSignature``, code execution, ...). The candidate's
``finishReason``, ``index``, ``citationMetadata``, ``groundingMetadata``, the
``usageMetadata``, ``modelVersion`` and ``responseId`` describe the response.

A tool result is a user content with a ``functionResponse {id?, name, response}``: ``name``
is the call's, ``id`` only when Gemini sent the call one (not when fastmerge generated it),
``response`` the result's content when it is a JSON object (given as one or as its text),
else ``{"result": content}``. Consecutive user contents are joined.
"""

from __future__ import annotations

import json
from typing import Any

from ...render.gemini import _generated_ids
from ._common import join_roles

__all__ = ["NAME", "assistant", "request", "system", "tool", "user"]
NAME = "gemini"


def assistant(response: dict[str, Any]) -> list[dict[str, Any] | None]:
    """The request form of a ``GenerateContentResponse``'s first candidate (None when it has
    no part)."""
    content = response["candidates"][0].get("content") or {}
    parts = list(content.get("parts") or ())
    return [{"role": "model", "parts": parts} if parts else None]


def _text(text: str) -> dict[str, Any]:
    return {"text": text}


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "parts": [_text(content)] if isinstance(content, str) else content}


def system(content: Any) -> None:
    return None  # the request's top-level ``systemInstruction``


def _response(content: Any) -> Any:
    if isinstance(content, str):
        try:
            value = json.loads(content)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    return {"result": content}


def tool(data: dict[str, Any], call: dict[str, Any], owner: dict[str, Any]) -> dict[str, Any]:
    function: dict[str, Any] = {}
    call_id = data["tool_call_id"]
    if call_id is not None and call and call_id not in _generated_ids(owner):
        function["id"] = call_id
    function["name"] = call.get("name")
    function["response"] = _response(data["content"])
    return {"role": "user", "parts": [{"functionResponse": function}]}


def request(entries: list[dict[str, Any]], systems: list[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if systems:
        parts = [p for s in systems for p in ([_text(s)] if isinstance(s, str) else s)]
        out["systemInstruction"] = {"parts": parts}
    out["contents"] = join_roles(entries, "parts", _text)
    return out
