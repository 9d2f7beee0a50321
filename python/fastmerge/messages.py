"""Message chunks and messages with openJiuwen's names and fields (rules §2, §3).

``acc = acc + chunk`` folds in amortized O(size of chunk) and every older ``acc`` keeps reading
as it did: the chunk classes derive from the selected backend's ``ChunkCore`` (the Rust
extension's, whose ``+`` runs in Rust, or the twin's), which holds the fold. A constructor
hands its arguments to :mod:`fastmerge._message_leaf`, which makes the *leaf* (the plain fields
the engines fold); this module turns folded data back into objects: :mod:`fastmerge.parts`,
flat views (``content``, ``reasoning_content``, ``tool_calls``), ``to_dict()`` /
``from_dict()``. The assistant message's fields are those of
:data:`fastmerge._message_fields.FIELDS`. No merge rule lives here.

The module is loaded once per backend (:func:`fastmerge._backend.messages`): the package's
names come from the selected backend; tests load a second copy on the other one.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence, TypeVar

from . import _backend
from ._message_fields import DICT_FIELDS
from ._message_leaf import assistant_leaf, base_leaf, described_leaf, tool_leaf
from ._types import Provider, SignatureMerge, UsageMerge
from .parts import (
    OpaquePayload,
    Part,
    ToolCall,
    UsageMetadata,
    arguments_text,
    part_from_dict,
)

if TYPE_CHECKING:
    from ._pure.chunks import ChunkCore as _Core
else:
    _Core = _backend.chunk_core(__name__)
#: the backend this module's classes are built on (its rules: the usage total)
_IMPL = _backend.backend_of(__name__)[1]

__all__ = [
    "AssistantMessage",
    "AssistantMessageChunk",
    "BaseMessageChunk",
    "ToolMessage",
    "ToolMessageChunk",
    "fold_chunks",
]

_C = TypeVar("_C", bound="BaseMessageChunk")


# ---------------------------------------------------------------------------------------------
# Folded data -> views (shared by chunks and messages)


class _Fields:
    """Read-only fields over ``self._view()`` (the folded data); containers are copies."""

    __slots__ = ()

    if TYPE_CHECKING:

        def _view(self) -> dict[str, Any]: ...

    @property
    def role(self) -> str | None:
        role: str | None = self._view()["role"]
        return role

    @property
    def name(self) -> str | None:
        name: str | None = self._view()["name"]
        return name

    @property
    def metadata(self) -> dict[str, Any]:
        metadata: dict[str, Any] = _copy(self._view()["metadata"])
        return metadata

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, _Fields)
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    if TYPE_CHECKING:

        def to_dict(self) -> dict[str, Any]: ...

    def __repr__(self) -> str:
        d = self.to_dict()
        shown = ", ".join(f"{k}={v!r}" for k, v in d.items() if v not in (None, {}, [], False))
        return f"{type(self).__name__}({shown})"


class _BaseFields(_Fields):
    __slots__ = ()

    @property
    def content(self) -> str | list[Any]:
        """The content as given: a str, or a list of items (openJiuwen's ``str | list``)."""
        content: str | list[Any] = _copy(self._view()["content"])
        return content

    def to_dict(self) -> dict[str, Any]:
        d = self._view()
        return {
            "role": d["role"],
            "content": _copy(d["content"]),
            "name": d["name"],
            "metadata": _copy(d["metadata"]),
        }


class _ToolFields(_BaseFields):
    __slots__ = ()

    @property
    def tool_call_id(self) -> str | None:
        value: str | None = self._view()["tool_call_id"]
        return value

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["tool_call_id"] = self._view()["tool_call_id"]
        return out


# to_dict()'s (key, folded data key) pairs
_DICT_KEYS = tuple((f.name, f.key) for f in DICT_FIELDS if f.key is not None)


class _AssistantFields(_Fields):
    __slots__ = ()

    @property
    def parts(self) -> tuple[Part, ...]:
        """The ordered parts (rules §2)."""
        return tuple(part_from_dict(_copy(p)) for p in self._view()["parts"])

    @property
    def content(self) -> str | list[Any]:
        """The text parts joined; a list of items if some chunk gave its content as a list."""
        d = self._view()
        if d["content_list"]:
            items: list[Any] = []
            for p in d["parts"]:
                if p["part"] == "text":
                    attributes = p["attributes"]
                    items.append({**attributes, "text": p["text"]} if attributes else p["text"])
                elif p["part"] == "unknown" and p["provider"] is None:
                    items.append(_copy(p["raw"]))
            return items
        return "".join(p["text"] for p in d["parts"] if p["part"] == "text")

    @property
    def reasoning_content(self) -> str | None:
        """The reasoning text joined; None if there was no reasoning [E64]."""
        texts = [p["text"] for p in self._view()["parts"] if p["part"] == "reasoning"]
        return "".join(texts) if texts else None

    @property
    def tool_calls(self) -> list[ToolCall] | None:
        """The calls in order. In a chunk built by its constructor (no ``+``), ``index`` is the
        index each call was given (``tool_calls=``), as openJiuwen reads it, when every call
        has one and no two share it; otherwise, and in every merged chunk or stream, the
        position 0..n-1 (rules §4 [E43], one index for several calls [E27]). A fragment that
        never met a name or an id is kept in :attr:`parts` only. None when there are none, as
        openJiuwen gives (its code tests ``tool_calls is None``)."""
        calls = [
            p
            for p in self._view()["parts"]
            if p["part"] == "tool_call" and (p["name"] is not None or p["id"] is not None)
        ]
        if not calls:
            return None
        given = [p["call_index"] for p in calls]
        if None in given or len(set(given)) != len(given):
            given = list(range(len(calls)))
        return [
            ToolCall(
                id=p["id"],
                type=p["type"],
                name=p["name"] or "",
                arguments=arguments_text(p["arguments"]),
                index=index,
                response_item_id=p["response_item_id"],
            )
            for index, p in zip(given, calls)
        ]

    @property
    def usage_metadata(self) -> UsageMetadata | None:
        usage = self._view()["usage"]
        return None if usage is None else UsageMetadata(**_copy(usage))

    def usage_total(self) -> Any:
        """The total this message's usage stands for (rules §5), as the backend's rule gives
        it: the reported total, unless it is missing or 0 where counts were given (then input
        + output); None without usage. Renderers and the session log read it here."""
        usage = self._view()["usage"]
        return None if usage is None else _IMPL.usage_total(usage)

    @property
    def finish_reason(self) -> str:
        """The last non-absent finish reason, as the provider sent it; ``"null"`` if none
        (openJiuwen's default)."""
        reason = self._view()["finish_reason"]
        return "null" if reason is None else str(reason)

    @property
    def finish_reason_normalized(self) -> str | None:
        """``stop``, ``length``, ``tool_calls``, ``content_filter``, ``error`` or None."""
        value: str | None = self._view()["finish_reason_normalized"]
        return value

    @property
    def parser_content(self) -> Any:
        return self._view()["parser_content"]

    @property
    def prompt_token_ids(self) -> list[int] | None:
        return _copy(self._view()["prompt_token_ids"])  # type: ignore[no-any-return]

    @property
    def completion_token_ids(self) -> list[int] | None:
        return _copy(self._view()["completion_token_ids"])  # type: ignore[no-any-return]

    @property
    def logprobs(self) -> Any:
        """The merged logprobs in the shape the chunks gave them (OpenAI's ``{"content": [...]}``
        usually), or None: a fresh copy on each read, so changing it never changes the message
        (a cheap one on the Rust backend: its ``copy_tree`` clones each exact dict and list
        whole)."""
        return _copy(self._view()["logprobs"])

    @property
    def response_id(self) -> str | None:
        value: str | None = self._view()["response_id"]
        return value

    @property
    def response_model(self) -> str | None:
        value: str | None = self._view()["response_model"]
        return value

    @property
    def provider_metadata(self) -> dict[str, Any]:
        return _copy(self._view()["provider_metadata"])  # type: ignore[no-any-return]

    @property
    def provider_content(self) -> Any:
        return self._view()["provider_content"]

    @property
    def refusal(self) -> str | None:
        value: str | None = self._view()["refusal"]
        return value

    @property
    def status(self) -> str | None:
        value: str | None = self._view()["status"]
        return value

    @property
    def anomalies(self) -> list[dict[str, Any]]:
        """Provider quirks met while merging: ``{"code", "detail"}`` (rules §8). A
        ``truncated`` anomaly of a tool call the stream cut also names that call as data,
        ``"tool_call"``: its ``id`` and / or ``name`` as far as the stream gave them, and the
        ``provider_index`` of its :class:`~fastmerge.parts.ToolCallPart` where the adapter
        keeps one (all but OpenAI Chat's); the renderers mark that call cut by this key, never
        by the ``detail`` text, and it is kept by ``to_dict()`` / ``from_dict()``."""
        return _copy(self._view()["anomalies"])  # type: ignore[no-any-return]

    @property
    def choice_index(self) -> int | None:
        value: int | None = self._view()["choice_index"]
        return value

    def to_provider(self, provider: Provider) -> dict[str, Any]:
        """This message as ``provider``'s non-streaming response (``chat.completion``,
        Anthropic ``Message``, Responses ``response``, Gemini ``GenerateContentResponse``,
        Bedrock ``Converse`` output, Ollama's final object); opaque payloads are replayed only
        to the provider that produced them. See :func:`fastmerge.to_provider` for n > 1."""
        from .render import to_provider

        return to_provider(self, provider)

    def to_dict(self) -> dict[str, Any]:
        """Every field, losslessly: ``type(x).from_dict(x.to_dict()) == x``."""
        d = self._view()
        return {name: _copy(d[key]) for name, key in _DICT_KEYS}


# ---------------------------------------------------------------------------------------------
# Chunks


class BaseMessageChunk(_BaseFields, _Core):
    """openJiuwen's ``BaseMessageChunk``: ``+`` concatenates str or list content, keeps the
    left role and the first name (rules §3.1), and deep-merges metadata."""

    __slots__ = ()

    def __init__(
        self,
        *,
        role: str,
        content: str | list[Any] = "",
        name: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        self._init("base", base_leaf(role, content, name, metadata))

    def _view(self) -> dict[str, Any]:
        return self._data()

    if TYPE_CHECKING:
        # ChunkCore's ``+`` (the backend's, never shadowed here: it is the hot path) gives a
        # chunk of the left operand's class; ``0 + chunk`` is the chunk (``sum``).
        def __add__(self: _C, other: _C) -> _C: ...
        def __radd__(self: _C, other: int) -> _C: ...

    @classmethod
    def from_dict(cls: type[_C], d: Mapping[str, Any]) -> _C:
        """The chunk a ``to_dict()`` describes."""
        return cls(**dict(d))

    def __reduce__(self) -> tuple[Any, ...]:
        return (_from_dict, (type(self), self.to_dict()))


class AssistantMessageChunk(_AssistantFields, BaseMessageChunk):
    """A streamed piece of an assistant message; ``acc + chunk`` is the stream-aware merge of
    rules §3 (parts, the tool-call resolver, usage, finish reason, logprobs, token ids, ids).

    Construct it with openJiuwen's flat fields (``content=``, ``reasoning_content=``,
    ``tool_calls=`` as :class:`ToolCall` s or OpenAI-format dicts) and/or ``parts=``.
    """

    __slots__ = ()

    def __init__(
        self,
        *,
        role: str = "assistant",
        content: str | list[Any] | None = "",
        name: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        tool_calls: Sequence[Any] | None = None,
        usage_metadata: UsageMetadata | Mapping[str, Any] | None = None,
        finish_reason: str | None = None,
        parser_content: Any = None,
        reasoning_content: str | None = None,
        prompt_token_ids: list[int] | None = None,
        completion_token_ids: list[int] | None = None,
        logprobs: Any = None,
        response_id: str | None = None,
        response_model: str | None = None,
        provider_metadata: Mapping[str, Any] | None = None,
        provider_content: Any = None,
        parts: Sequence[Any] | None = None,
        refusal: str | None = None,
        status: str | None = None,
        anomalies: Sequence[Mapping[str, Any]] | None = None,
        choice_index: int | None = None,
    ) -> None:
        # the arguments by name (the table's, fastmerge._message_fields.ARGUMENTS)
        self._init("assistant", assistant_leaf(locals()))

    @classmethod
    def from_dict(cls: type[_C], d: Mapping[str, Any]) -> _C:
        """The chunk a ``to_dict()`` describes (parts, not flat fields)."""
        chunk = cls.__new__(cls)
        chunk._init("assistant", described_leaf(d))
        return chunk

    def to_message(self) -> AssistantMessage:
        """The complete message: end-of-stream rules applied (a generated id for a call that
        never got one [E37], the usage total computed or checked [E57])."""
        message: AssistantMessage = AssistantMessage._from_data(self._data(True))
        return message


class ToolMessageChunk(_ToolFields, BaseMessageChunk):
    """openJiuwen's ``ToolMessageChunk``: content concatenates, ``tool_call_id`` is the last
    non-absent one (rules §3.1)."""

    __slots__ = ()

    def __init__(
        self,
        *,
        tool_call_id: str | None = None,
        content: str | list[Any] = "",
        role: str = "tool",
        name: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        self._init("tool", tool_leaf(tool_call_id, content, role, name, metadata))

    def to_message(self) -> ToolMessage:
        """The complete message."""
        message: ToolMessage = ToolMessage._from_data(self._data(True))
        return message


def _from_dict(cls: type[Any], d: dict[str, Any]) -> Any:
    return cls.from_dict(d)


def fold_chunks(
    chunks: Iterable[_C],
    *,
    strict: bool = False,
    signature_merge: SignatureMerge = "replace",
    usage: UsageMerge = "merge",
) -> _C | None:
    """Fold chunks left to right, like ``sum`` but with options: ``strict=True`` raises
    :class:`fastmerge.errors.AnomalyError` where ``+`` records an anomaly;
    ``signature_merge="concat"`` joins reasoning signatures instead of replacing them [E65];
    ``usage="sum"`` adds counts, ``usage="last"`` keeps the last non-None (rules §5).
    None if ``chunks`` is empty. The result keeps its options for later ``+``."""
    result: _C | None = _FOLD(chunks, strict=strict, signature_merge=signature_merge, usage=usage)
    return result


# the backend that owns _Core (fastmerge._fastmerge or fastmerge._pure.chunks): its fold, and
# its copy of folded data for readers (dicts and lists copied at every depth: a chunk's
# cached data is never handed out, so chunks stay values)
_FOLD = sys.modules[_Core.__module__].fold_chunks
_copy = sys.modules[_Core.__module__].copy_tree
_freeze = sys.modules[_Core.__module__].freeze_tree


# ---------------------------------------------------------------------------------------------
# Complete messages


class _Message:
    __slots__ = ("_d", "_frozen_logprobs", "_build")
    _FAMILY = ""

    def _view(self) -> Mapping[str, Any]:
        # a dict, or the Rust backend's MessageData (its fields made at their first read)
        try:
            d: Mapping[str, Any] = object.__getattribute__(self, "_d")
        except AttributeError:  # a deferred message, built at its first read
            d = object.__getattribute__(self, "_build")()._view()
            object.__setattr__(self, "_d", d)
        return d

    @classmethod
    def _deferred(cls, build: Callable[[], Any]) -> Any:
        """A message whose data ``build()`` (a message of this class) gives at its first read:
        a session's history is read without building the messages no one reads. Until
        ``build`` succeeds, every read calls it again (and raises what it raises)."""
        message = cls.__new__(cls)
        object.__setattr__(message, "_build", build)
        return message

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    @classmethod
    def _from_data(cls, data: Mapping[str, Any]) -> Any:
        message = cls.__new__(cls)
        object.__setattr__(message, "_d", data)
        return message

    def __reduce__(self) -> tuple[Any, ...]:
        return (_from_dict, (type(self), self.to_dict()))  # type: ignore[attr-defined]


class AssistantMessage(_AssistantFields, _Message):
    """A complete assistant message (openJiuwen's ``AssistantMessage``): what a stream folds to,
    with :attr:`parts` and the flat views. Build one from the same fields as
    :class:`AssistantMessageChunk`, from a chunk (``chunk.to_message()``) or ``from_dict``."""

    __slots__ = ()

    def __init__(self, **fields: Any) -> None:
        chunk = AssistantMessageChunk(**fields)
        object.__setattr__(self, "_d", chunk._data(True))

    @property
    def logprobs(self) -> Any:
        """The merged logprobs in the shape the chunks gave them (OpenAI's ``{"content": [...]}``
        usually), or None, read-only: every dict is a :class:`~fastmerge.parts.FrozenDict`,
        every list a :class:`~fastmerge.parts.FrozenList` (a ``dict`` / ``list`` that raises
        ``TypeError`` when changed; ``copy.deepcopy`` or :meth:`to_dict` give plain ones), so a
        reader can never change the message and every read is the same object, never a copy
        (20,000 entries were a 40 ms copy per read). Built once: by the Rust backend's
        ``aggregate`` as it makes the message, otherwise at the first read."""
        value = self._view()["logprobs"]
        if type(value) is dict or type(value) is list:  # not built frozen: frozen once, kept
            try:
                return object.__getattribute__(self, "_frozen_logprobs")
            except AttributeError:
                value = _freeze(value)
                object.__setattr__(self, "_frozen_logprobs", value)
        return value

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> AssistantMessage:
        """The message a ``to_dict()`` describes. The end-of-stream rules already ran for it
        (its ids, usage total and their anomalies are in ``d``), so they do not run again."""
        chunk = AssistantMessageChunk.from_dict(d)
        message: AssistantMessage = cls._from_data(chunk._data(False))
        return message


class ToolMessage(_ToolFields, _Message):
    """A complete tool message (openJiuwen's ``ToolMessage``)."""

    __slots__ = ()

    def __init__(self, **fields: Any) -> None:
        chunk = ToolMessageChunk(**fields)
        object.__setattr__(self, "_d", chunk._data(True))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ToolMessage:
        message: ToolMessage = cls._from_data(ToolMessageChunk(**dict(d))._data(True))
        return message


_ = OpaquePayload  # re-exported by the package
