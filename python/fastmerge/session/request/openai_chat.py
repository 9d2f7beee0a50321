"""OpenAI Chat Completions (and the OpenAI-compatible providers whose streams the
``"openai-chat"`` adapter reads: DeepSeek, Qwen, xAI, Groq, Mistral, OpenRouter, vLLM, ...):
``{"messages": [...]}`` with system messages in place.

Request form of a response (a ``chat.completion``): its first choice's ``message`` with every
field the provider sent (``content`` as a string or Mistral's typed list, ``tool_calls``,
``refusal``, and for the providers that take them back ``reasoning_content`` (DeepSeek, Qwen:
DeepSeek requires it in a tool-call turn), ``reasoning`` / ``reasoning_details`` (OpenRouter)),
except:

- ``annotations``: response-only (URL citations of web search); the request has no field for
  them; likewise Groq's ``executed_tools``;
- a refusal with no content: ``content`` is the refusal text (null content needs tool calls);
- a message with no content, tool call, refusal or audio is left out (rules §9.1.5);
- ``audio``: the request takes only ``{"id"}`` of the audio the model produced;
- ``null`` fields (``refusal``, ``tool_calls``), absent values.

The choice's ``index``, ``finish_reason`` and ``logprobs``, the ``usage`` and the response's
ids describe the response. A tool result is ``{"role": "tool", "tool_call_id", "content"}``.
"""

from __future__ import annotations

from typing import Any

from ._common import system, user

__all__ = ["NAME", "assistant", "request", "system", "tool", "user"]
NAME = "openai-chat"
# response-only fields of a choice's message (Groq's ``executed_tools``: the server tools it
# ran, which Groq refuses in a request)
RESPONSE_ONLY = ("annotations", "executed_tools")


def assistant(response: dict[str, Any]) -> list[dict[str, Any] | None]:
    """The request form of a ``chat.completion``'s first choice (None when it holds
    nothing to replay)."""
    message = response["choices"][0]["message"]
    out: dict[str, Any] = {}
    for key, value in message.items():
        if key in RESPONSE_ONLY or (value is None and key != "content"):
            continue
        if key == "audio" and isinstance(value, dict):
            value = {"id": value.get("id")}
        out[key] = value
    if out.get("content") is None and not out.get("tool_calls"):
        refusal = out.get("refusal")
        if not refusal and "audio" not in out and "function_call" not in out:
            return [None]  # a failed or empty response
        if refusal:
            out["content"] = refusal  # null content needs tool calls (E92)
    return [out]


def tool(data: dict[str, Any], call: dict[str, Any], owner: dict[str, Any]) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": data["tool_call_id"], "content": data["content"]}


def request(entries: list[dict[str, Any]], systems: list[Any]) -> dict[str, Any]:
    return {"messages": entries}
