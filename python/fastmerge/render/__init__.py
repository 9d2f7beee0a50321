"""Messages -> a provider's **non-streaming** response shape (``message.to_provider(name)``).

Rendering reads a folded message; it merges nothing. One module per wire format, each with
``render(messages) -> dict`` taking the choices of one response (one message, or n for
OpenAI Chat's ``n > 1``). Opaque payloads (signatures, encrypted content) are replayed only to
the provider that produced them (``payload.provider``); another provider's are left out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

from . import anthropic, bedrock_converse, gemini, ollama, openai_chat, openai_responses

if TYPE_CHECKING:
    from .._types import Provider
    from ._common import Message

__all__ = ["RENDERERS", "to_provider"]

RENDERERS: dict[str, Callable[[Sequence[Any]], dict[str, Any]]] = {
    "openai-chat": openai_chat.render,
    "openai-responses": openai_responses.render,
    "anthropic": anthropic.render,
    "gemini": gemini.render,
    "bedrock-converse": bedrock_converse.render,
    "ollama": ollama.render,
}


def to_provider(messages: Message | Sequence[Message], provider: Provider) -> dict[str, Any]:
    """The non-streaming response of ``provider`` holding ``messages`` (a message, or the
    choices of one response in order)."""
    render = RENDERERS.get(provider) if isinstance(provider, str) else None
    if render is None:
        choices = ", ".join(repr(p) for p in RENDERERS)
        raise ValueError(f"unknown provider {provider!r}; expected one of {choices}")
    if isinstance(messages, (list, tuple)):
        items = list(messages)
    else:
        items = [messages]
    if not items:
        raise ValueError("to_provider needs at least one message")
    return render(items)
