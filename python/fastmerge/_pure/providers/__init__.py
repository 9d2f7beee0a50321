"""The twin's provider adapters (``src/engine/providers/``): one per wire format, each a mapping
from a provider event to delta *leaves* that the chunk fold (``_pure.chunks``) merges.

An adapter is a class with:

- ``event(event) -> list[(choice_index, leaf)]``: the leaves one event (a JSON object, already
  checked by ``_pure.events``) contributes, in order. A leaf is the plain dict the chunk fold
  reads (``parts`` with a part ``index``, ``usage``, ``finish_reason``, ``status``,
  ``provider_metadata``, ``anomalies``, ...; see ``_pure/chunks.py``). An event of a shape the
  adapter cannot map raises :class:`AdapterError`.
- ``end() -> list[(choice_index, leaf)]``: leaves at the end of the stream (a tool call cut
  mid-arguments gets its ``truncated`` anomaly here).
- ``knows(event) -> bool``: whether the event has a key (or a ``type``) of this wire format;
  the aggregator hands the adapter no other event and records it as ``unrecognized_event``
  (spec §8), and a stream of which the adapter knew no event is an ``EventError`` naming the
  provider the events look like (:func:`detect`);
- ``new_response(event) -> str | None``: why the event starts another response (a second
  Anthropic ``message_start`` or Responses ``response.created``, a Bedrock ``messageStart``
  after ``messageStop``, an OpenAI chunk id or a Gemini ``responseId`` other than the one a
  choice finished with, an Ollama object after ``done: true``), else None; the aggregator
  records ``new_response`` and merges none of the events from there on (spec §6).

Adapters keep per-stream state (which block is open at an index, ...), never a merged value:
merging is the fold's. ``status`` is ``"complete"`` on the stream's terminal signal, ``"failed"``
on an error; the aggregator makes a stream that ended without either ``"incomplete"``.
"""

from __future__ import annotations

from typing import Any, Callable

from . import anthropic, bedrock_converse, gemini, ollama, openai_chat, openai_responses
from ._common import AdapterError

__all__ = ["ADAPTERS", "PROVIDERS", "AdapterError", "detect"]

#: name -> adapter class, in the order of spec/providers.md
ADAPTERS: dict[str, Callable[[], Any]] = {
    "openai-chat": openai_chat.Adapter,
    "openai-responses": openai_responses.Adapter,
    "anthropic": anthropic.Adapter,
    "gemini": gemini.Adapter,
    "bedrock-converse": bedrock_converse.Adapter,
    "ollama": ollama.Adapter,
}
PROVIDERS = tuple(ADAPTERS)


def detect(event: dict[str, Any]) -> str | None:
    """The wire format of a stream's first event, or None. Read in this order:
    a ``type`` of ``response.*`` (or an ``error`` with a ``sequence_number``) is Responses;
    another Anthropic event type is Anthropic; one key that is a ConverseStream event is
    Bedrock; ``candidates`` / ``usageMetadata`` / ``promptFeedback`` is Gemini; ``done`` with
    ``response`` or ``message`` is Ollama; ``choices`` or ``object: chat.completion.chunk`` is
    OpenAI Chat, and so is an event that is only ``{"error": {...}}``."""
    kind = event.get("type")
    if isinstance(kind, str):
        if kind.startswith("response."):
            return "openai-responses"
        if kind == "error":
            return "openai-responses" if "sequence_number" in event else "anthropic"
        if kind in anthropic.EVENT_TYPES:
            return "anthropic"
    if len(event) == 1 and next(iter(event)) in bedrock_converse.EVENT_TYPES:
        return "bedrock-converse"
    if "candidates" in event or "usageMetadata" in event or "promptFeedback" in event:
        return "gemini"
    if "done" in event and ("response" in event or "message" in event):
        return "ollama"
    if "choices" in event or event.get("object") == "chat.completion.chunk":
        return "openai-chat"
    if len(event) == 1 and isinstance(event.get("error"), dict):
        return "openai-chat"  # an OpenAI-compatible server's error before any chunk
    return None
