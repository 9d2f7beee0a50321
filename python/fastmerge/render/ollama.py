"""Render a message as Ollama's final non-streaming object, of the endpoint the stream came
from (``provider_metadata["api"]``; ``"chat"`` when unknown, e.g. a message from another
provider):

- ``/api/generate``: ``{model, created_at, response, thinking?, done, done_reason, context?,
  total_duration?, load_duration?, prompt_eval_count, prompt_eval_duration?, eval_count,
  eval_duration?}``;
- ``/api/chat``: ``{model, created_at, message: {role, content, thinking?, tool_calls?}, done,
  done_reason, ...the same counts and durations}``.

Ollama's response has no ordered content: text parts are joined into ``response`` /
``message.content`` and reasoning parts into ``thinking`` (text is kept as it streamed, inline
``<think>`` tags included). Tool calls are ``{id?, function: {index?, name, arguments}}`` with
object arguments (raw text is parsed; text that is not a JSON object stays a string; a call the
stream cut keeps its raw arguments string and has ``"truncated": true``). ``done``
is true only for a complete message. Other keys an Ollama stream's objects carried
(``provider_metadata``: ``error``, ``remote_model``, ...) are given back at the top level. A
message from another provider gets its normalized finish reason as ``done_reason`` (``stop``,
``length``; ``tool_calls`` -> ``stop``, what Ollama says after tool calls).
"""

from __future__ import annotations

from typing import Any, Sequence

from ..parts import arguments_text
from ._common import CUT_MARKER, arguments_object, cut_calls, is_cut, message_data

_DURATIONS = ("total_duration", "load_duration", "prompt_eval_duration", "eval_duration")
# another provider's finish reason, normalized (rules §3), as a done_reason (Ollama says
# "stop" after tool calls too)
_DONE_REASONS = {"stop": "stop", "length": "length", "tool_calls": "stop"}
_NOT_RETURNED = frozenset({"provider", "api", "created_at", "context", "message"})


def _call(part: dict[str, Any], cut: bool) -> dict[str, Any]:
    found = part.get("extra")
    extra: dict[str, Any] = found if isinstance(found, dict) else {}
    function: dict[str, Any] = {}
    rest = extra.get("function")
    if isinstance(rest, dict):
        function.update(rest)
    function["name"] = part.get("name")
    function["arguments"] = arguments_object(part.get("arguments"))
    if cut:
        function["arguments"] = arguments_text(part.get("arguments"))
    call: dict[str, Any] = {}
    if part.get("id") is not None:
        call["id"] = part["id"]
    call["function"] = function
    if cut:
        call[CUT_MARKER] = True
    for key, value in extra.items():
        if key != "function":
            call.setdefault(key, value)
    return call


def render(messages: Sequence[Any]) -> dict[str, Any]:
    """The final object of an Ollama response holding the first message."""
    message0 = messages[0]
    data = message_data(message0)
    metadata = data.get("provider_metadata") or {}
    mine = metadata.get("provider") == "ollama"
    reason = data.get("finish_reason")
    if not mine and reason is not None:
        reason = _DONE_REASONS.get(message0.finish_reason_normalized, reason)
    usage = data.get("usage_metadata") or {}
    text = "".join(p["text"] for p in data["parts"] if p["part"] == "text")
    thinking = "".join(p["text"] for p in data["parts"] if p["part"] == "reasoning")
    cut = cut_calls(data)
    calls = [_call(p, is_cut(p, cut)) for p in data["parts"] if p["part"] == "tool_call"]
    out: dict[str, Any] = {
        "model": data.get("response_model"),
        "created_at": metadata.get("created_at"),
    }
    if metadata.get("api") == "generate":
        out["response"] = text
        if thinking:
            out["thinking"] = thinking
    else:
        message: dict[str, Any] = {"role": data.get("role") or "assistant", "content": text}
        if thinking:
            message["thinking"] = thinking
        if calls:
            message["tool_calls"] = calls
        extra = metadata.get("message")
        if isinstance(extra, dict):
            for key, value in extra.items():
                message.setdefault(key, value)
        out["message"] = message
    out["done"] = data.get("status") == "complete"
    if reason is not None:
        out["done_reason"] = reason
    if "context" in metadata:
        out["context"] = metadata["context"]
    for key in _DURATIONS[:2]:
        if key in metadata:
            out[key] = metadata[key]
    if usage.get("input_tokens") is not None:
        out["prompt_eval_count"] = usage["input_tokens"]
    if "prompt_eval_duration" in metadata:
        out["prompt_eval_duration"] = metadata["prompt_eval_duration"]
    if usage.get("output_tokens") is not None:
        out["eval_count"] = usage["output_tokens"]
    if "eval_duration" in metadata:
        out["eval_duration"] = metadata["eval_duration"]
    if mine:
        for key, value in metadata.items():
            if key not in _NOT_RETURNED and key not in out:
                out[key] = value
    if data.get("logprobs") is not None:
        out["logprobs"] = data["logprobs"]
    return out
