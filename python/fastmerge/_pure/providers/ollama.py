"""The twin's ``"ollama"`` adapter (``src/engine/providers/ollama.rs``).

Ollama's native streams, one JSON object per line, from ``/api/generate`` or ``/api/chat``:

- ``response`` (generate) / ``message.content`` (chat) -> text deltas, kept exactly as sent:
  a model that writes its reasoning inline (qwen3 on a local server: ``<think>...</think>`` in
  the text) keeps the tags in the text part; fastmerge never splits text on tags;
- ``thinking`` (generate) / ``message.thinking`` (chat) -> reasoning deltas (before the text
  of the same object);
- ``message.tool_calls`` (chat) arrive whole: each ``{id?, function{name, arguments}}`` is a
  tool call with object arguments; ``provider_index`` is the call's position among the
  stream's calls (Ollama numbers them per message, so two objects' calls never meet at one
  index); other keys go to the call's ``extra`` verbatim (``function.index`` under
  ``extra["function"]``);
- ``message.role`` -> ``role`` (generate has none: ``"assistant"``); ``model`` ->
  ``response_model``; ``logprobs`` -> ``logprobs`` (lists concatenate);
- the final object (``done: true``) -> ``status: "complete"``, ``done_reason`` ->
  ``finish_reason``, ``prompt_eval_count`` -> ``input_tokens``, ``eval_count`` ->
  ``output_tokens``; its durations, ``context`` (the conversation's token ids) and every other
  key to ``provider_metadata`` verbatim; ``created_at`` is kept from the first object and the
  final one (the time of the response, as the non-streaming object gives it);
- ``error`` -> ``status: "failed"`` and ``provider_metadata["error"]``.

A response ends with its ``done: true`` object: any object after it starts another response
(``new_response``, spec §6), unless its ``created_at`` is one the response's objects had: that
is the same object again (a stream logged twice), whose content is not merged (spec §6.1).

``provider_metadata["api"]`` records which endpoint the stream came from (``"generate"`` or
``"chat"``) so the renderer gives that endpoint's final object. Ollama streams have no blocks,
so nothing is open when a stream is cut: a stream without its ``done`` object is simply
``incomplete``.
"""

from __future__ import annotations

from typing import Any

from ..events import kind_name
from ._common import AdapterError, text_field

NAME = "ollama"

# keys of an object the adapter reads itself (everything else goes to provider_metadata)
_READ = frozenset(
    {
        "model",
        "created_at",
        "response",
        "thinking",
        "message",
        "done",
        "done_reason",
        "prompt_eval_count",
        "eval_count",
        "logprobs",
        "error",
    }
)
# keys of _READ that other providers' events have too: they do not make an event Ollama's
_SHARED = frozenset({"model", "created_at", "logprobs"})
_MESSAGE_READ = frozenset({"role", "content", "thinking", "tool_calls"})

Leaves = list[tuple[int, dict[str, Any]]]


def _string(field: str, value: Any) -> str:
    if not isinstance(value, str):
        raise AdapterError(f"{field} must be a string, got {kind_name(value)}")
    return value


class Adapter:
    """Ollama NDJSON objects -> leaves (choice 0)."""

    name = NAME

    def __init__(self) -> None:
        self.api: str | None = None  # "generate" / "chat", once known
        self.model: Any = None  # the last model sent to the fold
        self.first = True  # no object read yet
        self.calls = 0  # tool calls so far (their provider_index)
        self.done = False  # the final object (done: true) was read
        # every created_at read: an object after done with one of them is the same
        # response's (a stream logged twice, spec §6.1), not the start of another
        self.seen_at: set[str] = set()

    def knows(self, event: dict[str, Any]) -> bool:
        """Whether the event has a key of an Ollama object (spec §8)."""
        return any(key in _READ and key not in _SHARED for key in event)

    def new_response(self, event: dict[str, Any]) -> str | None:
        """Why the object starts another response, or None (spec §6): a response ends with
        its ``done: true`` object, so any object after it is another response's, unless its
        ``created_at`` is one this response's objects had (the same object again)."""
        at = event.get("created_at")
        again = isinstance(at, str) and at in self.seen_at
        return "an object after done: true" if self.done and not again else None

    def ends_stream(self, event: dict[str, Any]) -> bool:
        """Whether the object is the stream's last (the batch reader ends the stream there):
        ``done: true``."""
        return event.get("done") is True

    def event(self, event: dict[str, Any]) -> Leaves:
        at = event.get("created_at")
        if isinstance(at, str):
            self.seen_at.add(at)
        done = event.get("done")
        if done is not None and not isinstance(done, bool):
            raise AdapterError(f"done must be a boolean, got {kind_name(done)}")
        leaf: dict[str, Any] = {}
        metadata: dict[str, Any] = {}
        parts: list[dict[str, Any]] = []
        role: Any = None
        api: str | None = None
        message = event.get("message")
        if message is not None:
            if not isinstance(message, dict):
                raise AdapterError(f"message must be an object, got {kind_name(message)}")
            api = "chat"
            role = text_field(message.get("role"), "message.role")
            self._message(message, parts, metadata)
        if "response" in event or "thinking" in event:
            if api is None:
                api = "generate"
            thinking = event.get("thinking")
            if thinking is not None and _string("thinking", thinking):
                parts.append({"part": "reasoning", "text": thinking})
            text = event.get("response")
            if text is not None and _string("response", text):
                parts.append({"part": "text", "text": text})
        if self.first:
            leaf["role"] = role if role is not None else "assistant"
        if parts:
            leaf["parts"] = parts
        logprobs = event.get("logprobs")
        if logprobs is not None:
            leaf["logprobs"] = logprobs
        model = text_field(event.get("model"), "model")
        if model is not None and model != self.model:
            self.model = model
            leaf["response_model"] = model
        if done:
            self.done = True
            reason = text_field(event.get("done_reason"), "done_reason")
            if reason is not None:
                leaf["finish_reason"] = reason
            usage: dict[str, Any] = {}
            count = event.get("prompt_eval_count")
            if count is not None:
                usage["input_tokens"] = count
            count = event.get("eval_count")
            if count is not None:
                usage["output_tokens"] = count
            if usage:
                leaf["usage"] = usage
            leaf["status"] = "complete"
        error = event.get("error")
        if error is not None:
            leaf["status"] = "failed"
            metadata["error"] = error
        if api is not None and api != self.api:
            self.api = api
            metadata["api"] = api
        created = event.get("created_at")
        if created is not None and (self.first or done):
            metadata["created_at"] = created
        for key, value in event.items():
            if key not in _READ:
                metadata[key] = value
        if metadata:
            leaf["provider_metadata"] = metadata
        self.first = False
        return [(0, leaf)] if leaf else []

    def _message(
        self, message: dict[str, Any], parts: list[dict[str, Any]], metadata: dict[str, Any]
    ) -> None:
        thinking = message.get("thinking")
        if thinking is not None and _string("message.thinking", thinking):
            parts.append({"part": "reasoning", "text": thinking})
        content = message.get("content")
        if content is not None and _string("message.content", content):
            parts.append({"part": "text", "text": content})
        calls = message.get("tool_calls")
        if calls is not None:
            if not isinstance(calls, list):
                raise AdapterError(f"message.tool_calls must be an array, got {kind_name(calls)}")
            for call in calls:
                parts.append(self._call(call))
        other = {k: v for k, v in message.items() if k not in _MESSAGE_READ}
        if other:
            metadata["message"] = other

    def _call(self, call: Any) -> dict[str, Any]:
        if not isinstance(call, dict):
            raise AdapterError(f"message.tool_calls[] must be an object, got {kind_name(call)}")
        function = call.get("function")
        if not isinstance(function, dict):
            raise AdapterError(
                f"message.tool_calls[].function must be an object, got {kind_name(function)}"
            )
        part: dict[str, Any] = {"part": "tool_call"}
        call_id = text_field(call.get("id"), "message.tool_calls[].id")
        if call_id is not None:
            part["id"] = call_id
        name = text_field(function.get("name"), "message.tool_calls[].function.name")
        if name is not None:
            part["name"] = name
        arguments = function.get("arguments")
        if arguments is not None:
            if not isinstance(arguments, (dict, str)):
                raise AdapterError(
                    "message.tool_calls[].function.arguments must be an object, got "
                    f"{kind_name(arguments)}"
                )
            part["arguments"] = arguments
        part["provider_index"] = self.calls
        self.calls += 1
        extra: dict[str, Any] = {k: v for k, v in call.items() if k not in ("id", "function")}
        rest = {k: v for k, v in function.items() if k not in ("name", "arguments")}
        if rest:
            extra["function"] = rest
        if extra:
            part["extra"] = extra
        return part

    def end(self) -> Leaves:
        return []
