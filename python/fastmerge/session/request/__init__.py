"""A session's history in a provider's **request** format (``session.to_request(provider)``).

Each assistant message is rendered as its provider's non-streamed response
(:mod:`fastmerge.render`, the same code as ``message.to_provider``) and that response is turned
into what the provider takes back in a request: its *request form* (:func:`response_to_request`,
written down in each provider's module). User, system and tool messages are written in the
provider's request shapes around it, in order.

Rules common to every provider:

- **Reasoning** goes only to the provider that produced the message (its
  ``provider_metadata["provider"]``), with its signature / encrypted content. Another provider
  gets none of it, neither the text nor the payload: a reasoning text is the model's private
  thought, not something the assistant said, and a thinking block without its provider's
  signature is rejected (Anthropic, Bedrock) or refers to an item the provider does not have
  (Responses). The log keeps it.
- **Unknown blocks** (server tools, compaction blocks, ...) are replayed to their own provider
  only (the renderers' rule); opaque payloads likewise.
- **Tool results** come where they were appended, after the call; providers that take results
  in a user message (Anthropic, Bedrock, Gemini) get consecutive results, and consecutive user
  messages, joined into one message, as they require alternating roles.
- A **tool call without a name** (edge case E107) is in no request, as in no rendering, nor
  is its result; the log keeps both.
- A ``null`` field of a rendered response is the absence of a value and is not written into a
  request; the fields a response has that a request does not accept are listed per provider.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Sequence

from ... import errors
from ...render import RENDERERS
from ...render._common import is_nameless
from . import anthropic, bedrock_converse, gemini, ollama, openai_chat, openai_responses
from ._common import for_provider

__all__ = ["REQUESTS", "response_to_request", "to_request"]

#: provider -> the module writing its request format
REQUESTS: dict[str, ModuleType] = {
    "openai-chat": openai_chat,
    "openai-responses": openai_responses,
    "anthropic": anthropic,
    "gemini": gemini,
    "bedrock-converse": bedrock_converse,
    "ollama": ollama,
}


def _module(provider: Any) -> ModuleType:
    module = REQUESTS.get(provider) if isinstance(provider, str) else None
    if module is None:
        raise errors.unknown_request_provider(provider, REQUESTS)
    return module


def response_to_request(provider: str, response: dict[str, Any]) -> list[dict[str, Any]]:
    """The request form of ``provider``'s non-streamed response: the history entries (one
    message, or Responses' input items) that send the response's assistant turn back."""
    entries: list[dict[str, Any]] = _module(provider).assistant(response)
    return entries


def to_request(messages: Sequence[Any], provider: str) -> dict[str, Any]:
    """``messages`` (a session's history: assistant and tool messages, user and system
    dicts) as the history fields of ``provider``'s request."""
    module = _module(provider)
    render = RENDERERS[provider]
    calls: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    system: list[Any] = []
    entries: list[dict[str, Any]] = []
    answered = frozenset(
        message.tool_call_id
        for message in messages
        if hasattr(message, "tool_call_id") and isinstance(message.tool_call_id, str)
    )
    unnamed = _nameless_ids(messages)
    for message in messages:
        if isinstance(message, dict):
            if message["role"] == "system":
                entry = module.system(message["content"])
                if entry is None:
                    system.append(message["content"])  # a top-level field of the request
                else:
                    entries.append(entry)
            else:
                entries.append(module.user(message["content"]))
        elif hasattr(message, "tool_call_id"):
            data = message.to_dict()
            if data["tool_call_id"] in unnamed:
                continue  # the result of a call no request can hold (E107): the log keeps it
            call, owner = calls.get(data["tool_call_id"] or "", ({}, {}))
            entries.append(module.tool(data, call, owner))
        else:
            replayed = for_provider(message, provider, answered)
            data = replayed.to_dict()
            for part in data["parts"]:
                if (
                    part.get("part") == "tool_call"
                    and isinstance(part.get("id"), str)
                    and not is_nameless(part)
                ):
                    calls[part["id"]] = (part, data)
            # an entry with nothing replayable (a failed or empty response) is left out
            entries.extend(e for e in module.assistant(render([replayed])) if e is not None)
    request: dict[str, Any] = module.request(entries, system)
    return request


def _nameless_ids(messages: Sequence[Any]) -> frozenset[str]:
    """The ids of the history's tool calls that never got a name (edge case E107), which no
    rendering holds, unless a named call has the same id: their results are left out too (a
    result must follow its call)."""
    nameless: set[str] = set()
    named: set[str] = set()
    for message in messages:
        if isinstance(message, dict) or hasattr(message, "tool_call_id"):
            continue
        for part in message.to_dict()["parts"]:
            call_id = part.get("id")
            if part.get("part") != "tool_call" or not isinstance(call_id, str):
                continue
            (nameless if is_nameless(part) else named).add(call_id)
    return frozenset(nameless - named)
