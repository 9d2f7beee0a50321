"""Provider streams back into messages (rules §6, §7): :class:`Aggregator`, :func:`aggregate`,
:func:`aggregate_choices`.

One aggregator takes every wire format fastmerge knows (``provider="auto"`` reads it from the
first event): OpenAI Chat (and compatible servers: Mistral, vLLM, DeepSeek, Groq, OpenRouter,
...), OpenAI Responses, Anthropic Messages, Gemini, Bedrock ConverseStream and Ollama. Events
can be dicts, provider SDK objects (anything with ``to_dict()`` or ``model_dump()``), the JSON
of one event, SSE lines, or raw transport bytes split anywhere (:meth:`Aggregator.feed`).

Bytes and text are parsed by the backend: on the Rust backend no Python object is made for an
event, only for the messages that come out. The merge rules are the chunk rules of rules §3–§5,
applied by the backend's ``AggregatorCore``; this module only shapes inputs and outputs.

The module is loaded once per backend (:func:`fastmerge._backend.aggregate_module`).
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any, Iterable, Literal

from . import _backend
from ._types import Provider, SignatureMerge, UsageMerge

if TYPE_CHECKING:
    from ._pure.aggregate import AggregatorCore as _Core
    from .messages import AssistantMessage
else:
    _name, _impl = _backend.backend_of(__name__)
    _Core = _impl.AggregatorCore
    AssistantMessage = _backend.messages(_name).AssistantMessage
_from_data = AssistantMessage._from_data

__all__ = ["PROVIDERS", "Aggregator", "aggregate", "aggregate_choices"]

#: The wire formats an aggregator reads (``provider=``), besides ``"auto"``.
PROVIDERS: tuple[str, ...] = _backend.impl.PROVIDERS


def _json_data(value: Any) -> bool:
    """Whether ``value`` is JSON data as an event holds it (what the events parser makes)."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return True
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_data(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return all(_json_data(v) for v in value)
    return False


def _plain(event: Any) -> Any:
    """An SDK object as the dict its provider sent (``to_dict()``, else ``model_dump()``). A
    dict holding a value the SDK parsed (a datetime, an enum) is taken in JSON mode, where the
    SDK has one: its JSON text is read instead of an event no reader can take (and whose data
    would be lost); any other is the plain ``to_dict()``, as the Rust backend reads models."""
    to_dict = getattr(event, "to_dict", None)
    if callable(to_dict):
        data = to_dict()
        if _json_data(data):
            return data
        try:
            return to_dict(mode="json")
        except TypeError:  # a to_dict() of its own, without modes
            return data
    model_dump = getattr(event, "model_dump", None)
    if callable(model_dump):
        return model_dump(mode="json", by_alias=True, exclude_none=True)
    return event


class Aggregator:
    """Folds one provider stream, event by event, into one message per choice.

    >>> agg = Aggregator("openai-chat")
    >>> for event in events:          # dicts, SDK objects, JSON text, SSE lines
    ...     agg.add(event)
    >>> message = agg.finish()        # choice 0; finish_choices() for n > 1

    ``strict=True`` raises :class:`fastmerge.AnomalyError` where the merge would record an
    anomaly; ``signature_merge`` and ``usage`` choose those rules (see
    :func:`fastmerge.fold_chunks`). An event that cannot be read (bad JSON, not an object, a
    shape its adapter cannot map) is skipped with an ``unreadable_event`` anomaly naming its
    number; with ``strict=True`` it raises :class:`fastmerge.errors.EventError` and the
    aggregator closes. A stream with no readable event at all is an ``EventError`` at
    :meth:`finish` (``snapshot()`` before any event is an empty, incomplete message).

    An event with no key the provider's format has is an ``unrecognized_event`` anomaly, and
    a stream with no event of that provider raises ``EventError`` at :meth:`finish`, naming
    the provider the events look like. One stream is one response: an event that starts
    another (a ``message_start`` of another id, a new chunk id after the finish, ...) is a
    ``new_response`` anomaly, and neither it nor the events after it are merged.

    A choice that has finished takes no more content (rules §6.1): an event of the same
    response that carries text, reasoning, a refusal, tool-call fragments or logprobs for it
    (a stream logged twice, events out of order) is a ``delta_after_finish`` anomaly naming
    the event, and its content is not merged (``strict=True`` raises); metadata after the
    finish (usage, moderation, ids) is merged.

    One aggregator reads one stream. Calls from several threads are serialized (one lock per
    aggregator), so events fed concurrently are each read once, whole, in the order the calls
    got the lock; messages it returns are immutable values that any thread may read.
    """

    __slots__ = ("_core", "_finished", "_lock")

    def __init__(
        self,
        provider: Provider | Literal["auto"] = "auto",
        *,
        strict: bool = False,
        signature_merge: SignatureMerge = "replace",
        usage: UsageMerge = "merge",
    ) -> None:
        self._core = _Core(provider, strict, signature_merge, usage)
        self._finished: list[AssistantMessage] | None = None
        # the cores are not thread-safe (the twin would lose or repeat events, the Rust one
        # refuses a second borrow): every call into one holds this
        self._lock = threading.Lock()

    @property
    def provider(self) -> str | None:
        """The wire format being read (None until ``"auto"`` has seen an event)."""
        return self._core.provider

    def add(self, event: Any) -> None:
        """Fold one event: a dict, an SDK object, the JSON text (str or bytes) of one event or
        of an array of events, or whole SSE lines (``response.iter_lines()``)."""
        if isinstance(event, (str, bytes)):
            with self._lock:
                self._core.add_text(event)
        else:
            with self._lock:
                self._core.add_events((event,), _plain)

    def add_many(self, events: Iterable[Any] | str | bytes | os.PathLike[str]) -> None:
        """Fold several events; a str or bytes is a whole recorded stream (see :meth:`feed`),
        an ``os.PathLike`` (``pathlib.Path``) a file holding one, read as bytes (a str is
        data, never a file name)."""
        if isinstance(events, os.PathLike):
            with open(events, "rb") as file:
                self.feed(file.read())
            return
        if isinstance(events, (str, bytes, bytearray, memoryview)):
            self.feed(events)
            return
        if isinstance(events, (list, tuple)):
            # the backend reads them in one call (no Python code per event for dicts and the
            # SDKs' models); an iterator's own code runs outside the lock
            with self._lock:
                self._core.add_events(events, _plain)
            return
        add = self.add
        for event in events:
            add(event)

    def feed(self, data: str | bytes | bytearray | memoryview) -> None:
        """Raw transport bytes as they arrive, split anywhere (inside a line or a UTF-8
        sequence): SSE (``data:`` lines), JSON lines, or a JSON array of events (Gemini
        without ``alt=sse``), told apart by the first byte."""
        if isinstance(data, (bytearray, memoryview)):
            data = bytes(data)
        with self._lock:
            self._core.feed(data)

    def snapshot(self) -> AssistantMessage:
        """The message so far (choice 0, or the lowest choice seen); the stream may go on."""
        return self.snapshot_choices()[0]

    def snapshot_choices(self) -> list[AssistantMessage]:
        """The messages so far, one per choice, in choice order."""
        with self._lock:
            if self._finished is not None:
                return list(self._finished)
            data = self._core.snapshot()
        return [_from_data(d) for d in data]

    def finish(self) -> AssistantMessage:
        """End the stream: the complete message of choice 0 (or the lowest choice seen), its
        ``status`` ``complete``, ``incomplete`` (no terminal signal) or ``failed``."""
        return self.finish_choices()[0]

    def finish_choices(self) -> list[AssistantMessage]:
        """End the stream: one complete message per choice, in choice order (n > 1 gives n
        messages, never glued together). Calling it again returns the same messages."""
        with self._lock:
            if self._finished is None:
                self._finished = [_from_data(d) for d in self._core.finish()]
            return list(self._finished)

    def __repr__(self) -> str:
        return f"<Aggregator provider={self.provider!r}>"


def aggregate_choices(
    events: Iterable[Any] | str | bytes | os.PathLike[str],
    provider: Provider | Literal["auto"] = "auto",
    *,
    strict: bool = False,
    signature_merge: SignatureMerge = "replace",
    usage: UsageMerge = "merge",
) -> list[AssistantMessage]:
    """One message per choice of a whole stream, in choice order. ``events`` is an iterable
    of events (see :meth:`Aggregator.add`), a recorded stream as str / bytes (SSE, JSON
    lines or a JSON array; parsed by the backend, in Rust on the Rust backend), or the
    ``os.PathLike`` of a file holding one. A stream with no readable event raises
    :class:`fastmerge.errors.EventError` saying what the input was (compressed, binary,
    empty, JSON that is not an object, a str that looks like a file name)."""
    if type(events) is bytes or type(events) is str:
        # a recorded stream: one call into the backend (an Aggregator's feed and finish)
        data = _Core.aggregate(events, provider, strict, signature_merge, usage)
        return [_from_data(d) for d in data]
    agg = Aggregator(provider, strict=strict, signature_merge=signature_merge, usage=usage)
    agg.add_many(events)
    return agg.finish_choices()


def aggregate(
    events: Iterable[Any] | str | bytes | os.PathLike[str],
    provider: Provider | Literal["auto"] = "auto",
    *,
    strict: bool = False,
    signature_merge: SignatureMerge = "replace",
    usage: UsageMerge = "merge",
) -> AssistantMessage:
    """The message of a whole stream (choice 0); see :func:`aggregate_choices`."""
    if type(events) is bytes or type(events) is str:
        # aggregate_choices' first branch, without its list (a short stream's fixed cost)
        data = _Core.aggregate(events, provider, strict, signature_merge, usage)
        message: AssistantMessage = _from_data(data[0])
        return message
    return aggregate_choices(
        events, provider, strict=strict, signature_merge=signature_merge, usage=usage
    )[0]
