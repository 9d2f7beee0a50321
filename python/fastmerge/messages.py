"""Message chunks and messages with openJiuwen's names and fields (rules §2, §3).

``acc = acc + chunk`` folds in amortized O(size of chunk) and every older ``acc`` keeps reading
as it did: the chunk classes derive from the selected backend's ``ChunkCore`` (the Rust
extension's, whose ``+`` runs in Rust, or the twin's), which holds the fold. This module turns
constructor arguments into a *leaf* (the plain fields the engines fold) and folded data back
into objects: :mod:`fastmerge.parts`, flat views (``content``, ``reasoning_content``,
``tool_calls``), ``to_dict()`` / ``from_dict()``. No merge rule lives here.

The module is loaded once per backend (:func:`fastmerge._backend.messages`): the package's
names come from the selected backend; tests load a second copy on the other one.
"""

from __future__ import annotations

import sys
from dataclasses import fields
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence, TypeVar

from . import _backend
from ._frozen import SCALARS, json_copy
from ._types import Provider, SignatureMerge, UsageMerge
from .parts import (
    PART_CLASSES,
    OpaquePayload,
    Part,
    ToolCall,
    ToolCallPart,
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
# Constructor arguments -> leaf


def _content_parts(content: Any) -> list[dict[str, Any]]:
    """Parts for ``content``: a str is one text part; a list's items are text parts (a str, or a
    ``{"type": "text"}`` item whose other keys become ``attributes``) or unknown parts."""
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [{"part": "text", "text": content}]
    if not isinstance(content, list):
        raise TypeError(f"content must be a str or a list, not {type(content).__name__}")
    parts: list[dict[str, Any]] = []
    for item in content:
        if isinstance(item, str):
            parts.append({"part": "text", "text": item})
        elif isinstance(item, Mapping) and item.get("type") == "text":
            text = item.get("text")
            attributes = {k: v for k, v in item.items() if k != "text"}
            parts.append(
                {
                    "part": "text",
                    "text": text if isinstance(text, str) else "",
                    "attributes": attributes,
                }
            )
        else:
            kind = item.get("type") if isinstance(item, Mapping) else None
            parts.append({"part": "unknown", "provider": None, "kind": kind, "raw": item})
    return parts


def _tool_call_part(call: Any) -> dict[str, Any]:
    """One tool-call fragment as a part: a ToolCall, a ToolCallPart, an OpenAI-format dict
    (nested ``function``, or ``custom`` [E38]), openJiuwen's flat dict or its pydantic
    ``ToolCall``. The index given is both the resolver's ``provider_index`` and the
    ``call_index`` the flat view shows (openJiuwen reads back the index a call was given)."""
    if isinstance(call, ToolCallPart):
        return call.to_dict()
    if isinstance(call, ToolCall):
        return {
            "part": "tool_call",
            "id": call.id,
            "type": call.type,
            "name": call.name,
            "arguments": call.arguments,
            "provider_index": call.index,
            "response_item_id": call.response_item_id,
            "call_index": call.index,
        }
    dump = getattr(call, "model_dump", None)
    if not isinstance(call, Mapping) and callable(dump):
        # openJiuwen's pydantic ToolCall (or any model of its flat or OpenAI shape)
        call = dump()
    if not isinstance(call, Mapping):
        raise TypeError(
            "a tool call must be a ToolCall, a ToolCallPart, a dict or a pydantic model, "
            f"not {type(call).__name__}"
        )
    kind = call.get("type")
    # the call's body: OpenAI's nested "function", or the object named by its type ("custom"
    # [E38]); a continuation fragment has no type, so "custom" is looked up by name too
    body_key = "function"
    body = call.get(body_key)
    if not isinstance(body, Mapping):
        body_key = kind if isinstance(kind, str) and kind != "function" else "custom"
        body = call.get(body_key)
    known = {"id", "type", "index", "response_item_id", "function", "name", "arguments"}
    part: dict[str, Any] = {"part": "tool_call", "id": call.get("id"), "type": kind}
    if isinstance(body, Mapping):
        known.add(body_key)
        if kind is None and body_key == "custom":
            part["type"] = "custom"  # a custom body without a type is a custom call (E83)
        part["name"] = body.get("name")
        part["arguments"] = body.get("arguments", body.get("input"))
        inner = {k: v for k, v in body.items() if k not in ("name", "arguments", "input")}
        if inner:
            part["extra"] = {body_key: inner}
    else:
        part["name"] = call.get("name")
        part["arguments"] = call.get("arguments")
    part["provider_index"] = call.get("index")
    part["response_item_id"] = call.get("response_item_id")
    part["call_index"] = call.get("index")
    extra = {k: v for k, v in call.items() if k not in known}
    if extra:
        part["extra"] = {**part.get("extra", {}), **extra}
    return part


# the keys of each kind of part's to_dict() and of a payload's, in order (dict key views:
# ordered, and compared as sets)
_PART_KEYS = {
    kind: dict.fromkeys(["part", *(f.name for f in fields(cls))]).keys()
    for kind, cls in PART_CLASSES.items()
}
_PAYLOAD_KEYS = dict.fromkeys(["provider", "kind", "data"]).keys()


def _part_dict(part: Any) -> dict[str, Any]:
    if type(part) is dict:
        # a dict with exactly a part's to_dict() keys (a stored message): the dict its part
        # object would give, without building that object (from_dict's hot path, sessions)
        kind = part.get("part")
        keys = _PART_KEYS.get(kind) if type(kind) is str else None
        payload = part.get("payload")
        if (
            keys is not None
            and part.keys() == keys
            and (payload is None or (type(payload) is dict and payload.keys() == _PAYLOAD_KEYS))
        ):
            # json_copy as it goes (out is level 1, its values level 2, a payload's 3)
            out = {k: v if type(v := part[k]) in SCALARS else json_copy(v, 1) for k in keys}
            if payload is not None:
                out["payload"] = {
                    k: v if type(v := payload[k]) in SCALARS else json_copy(v, 2)
                    for k in _PAYLOAD_KEYS
                }
            _check_part(out)
            return out
    if isinstance(part, Mapping):
        part = part_from_dict(part)
    to_dict = getattr(part, "to_dict", None)
    if to_dict is None or not hasattr(part, "PART"):
        raise TypeError(f"parts must be part objects or dicts, not {type(part).__name__}")
    d: dict[str, Any] = json_copy(to_dict())
    _check_part(d)
    return d


_STR = (str, type(None))
# the types a part's fields may hold (both engines rely on them)
_PART_TYPES: dict[str, dict[str, tuple[type, ...]]] = {
    "text": {"text": (str,), "citations": (list, type(None)), "attributes": (dict, type(None))},
    "reasoning": {"text": (str,), "summary": _STR, "redacted": (bool,)},
    "tool_call": {
        "id": _STR,
        "type": _STR,
        "name": _STR,
        "arguments": (str, dict, type(None)),
        "response_item_id": _STR,
        "extra": (dict, type(None)),
    },
}


def _check_part(d: dict[str, Any]) -> None:
    kind = d["part"]
    for key, types in _PART_TYPES.get(kind, {}).items():
        value = d.get(key)
        if not isinstance(value, types):
            names = " or ".join("None" if t is type(None) else t.__name__ for t in types)
            raise TypeError(
                f"{kind} part field {key!r} must be {names}, not {type(value).__name__}"
            )
    for key in ("index", "provider_index", "call_index"):
        value = d.get(key)
        if value is not None and (type(value) is not int):
            raise TypeError(
                f"{kind} part field {key!r} must be an int or None, not {type(value).__name__}"
            )
    payload = d.get("payload")
    if payload is not None and not isinstance(payload, dict):
        raise TypeError("payload must be an OpaquePayload")


def _usage_dict(usage: Any) -> dict[str, Any] | None:
    if usage is None:
        return None
    if isinstance(usage, UsageMetadata):
        return usage.to_dict()
    if isinstance(usage, Mapping):
        return UsageMetadata(**usage).to_dict()
    dump = getattr(usage, "model_dump", None)  # openJiuwen's pydantic UsageMetadata
    if callable(dump):
        fields_set = getattr(usage, "model_fields_set", None)
        values = dump()
        if fields_set is not None:
            values = {k: v for k, v in values.items() if k in fields_set}
        return UsageMetadata(**values).to_dict()
    raise TypeError(f"usage_metadata must be a UsageMetadata or a dict, not {type(usage).__name__}")


def _put(leaf: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        leaf[key] = value


def _assistant_leaf(
    role: Any,
    content: Any,
    name: Any,
    metadata: Any,
    tool_calls: Any,
    usage_metadata: Any,
    finish_reason: Any,
    parser_content: Any,
    reasoning_content: Any,
    prompt_token_ids: Any,
    completion_token_ids: Any,
    logprobs: Any,
    response_id: Any,
    response_model: Any,
    provider_metadata: Any,
    provider_content: Any,
    parts: Any,
    refusal: Any,
    status: Any,
    anomalies: Any,
    choice_index: Any,
) -> dict[str, Any]:
    """The leaf of an assistant chunk: the given fields, and parts built from the flat ones in
    the order reasoning, text, tool calls, then ``parts`` (rules §2)."""
    leaf: dict[str, Any] = {}
    _put(leaf, "role", role)
    _put(leaf, "name", name)
    if metadata:
        leaf["metadata"] = json_copy(dict(metadata))
    built: list[dict[str, Any]] = []
    if reasoning_content is not None:
        if not isinstance(reasoning_content, str):
            raise TypeError("reasoning_content must be a str")
        if reasoning_content:
            built.append({"part": "reasoning", "text": reasoning_content})
    built.extend(_content_parts(content))
    if isinstance(content, list):
        leaf["content_list"] = True
    if content is not None and content != "":
        leaf["content"] = json_copy(content)
    if tool_calls:
        for call in tool_calls:
            fragment = _tool_call_part(call)
            _check_part(fragment)
            built.append(fragment)
    if parts:
        built.extend(_part_dict(part) for part in parts)
    if built:
        leaf["parts"] = built
    _put(leaf, "usage", _usage_dict(usage_metadata))
    _put(leaf, "finish_reason", finish_reason)
    _put(leaf, "parser_content", parser_content)
    _put(leaf, "prompt_token_ids", json_copy(prompt_token_ids))
    _put(leaf, "completion_token_ids", json_copy(completion_token_ids))
    _put(leaf, "logprobs", json_copy(logprobs))
    _put(leaf, "response_id", response_id)
    _put(leaf, "response_model", response_model)
    if provider_metadata:
        leaf["provider_metadata"] = json_copy(dict(provider_metadata))
    _put(leaf, "provider_content", provider_content)
    _put(leaf, "refusal", refusal)
    _put(leaf, "status", status)
    if anomalies:
        leaf["anomalies"] = [dict(a) for a in anomalies]
    _put(leaf, "choice_index", choice_index)
    _check_leaf(leaf)
    return leaf


_LEAF_TYPES: dict[str, tuple[type, ...]] = {
    "role": _STR,
    "name": _STR,
    "finish_reason": _STR,
    "response_id": _STR,
    "response_model": _STR,
    "refusal": _STR,
    "status": _STR,
    "prompt_token_ids": (list, type(None)),
    "completion_token_ids": (list, type(None)),
    "content_list": (bool,),
}


def _base_leaf(role: Any, content: Any, name: Any) -> dict[str, Any]:
    if not isinstance(content, (str, list)):
        raise TypeError(f"content must be a str or a list, not {type(content).__name__}")
    leaf: dict[str, Any] = {"role": role, "content": json_copy(content)}
    _put(leaf, "name", name)
    _check_leaf(leaf)
    return leaf


def _check_leaf(leaf: dict[str, Any]) -> None:
    """The field types both engines rely on (a TypeError here, never an engine error)."""
    for key, types in _LEAF_TYPES.items():
        value = leaf.get(key)
        if value is not None and not isinstance(value, types):
            raise TypeError(
                f"{key} must be {types[0].__name__} or None, not {type(value).__name__}"
            )
    index = leaf.get("choice_index")
    if index is not None and type(index) is not int:
        raise TypeError(f"choice_index must be an int or None, not {type(index).__name__}")


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


# to_dict() keys of an assistant chunk or message after role, name, metadata and parts
_ASSISTANT_KEYS = (
    "content_list",
    "usage",
    "finish_reason",
    "parser_content",
    "prompt_token_ids",
    "completion_token_ids",
    "logprobs",
    "response_id",
    "response_model",
    "provider_metadata",
    "provider_content",
    "refusal",
    "status",
    "anomalies",
    "choice_index",
)


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
        out: dict[str, Any] = {
            "role": d["role"],
            "name": d["name"],
            "metadata": _copy(d["metadata"]),
            "parts": _copy(d["parts"]),
        }
        for key in _ASSISTANT_KEYS:
            out["usage_metadata" if key == "usage" else key] = _copy(d[key])
        return out


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
        leaf = _base_leaf(role, content, name)
        if metadata:
            leaf["metadata"] = json_copy(dict(metadata))
        self._init("base", leaf)

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
        self._init(
            "assistant",
            _assistant_leaf(
                role,
                content,
                name,
                metadata,
                tool_calls,
                usage_metadata,
                finish_reason,
                parser_content,
                reasoning_content,
                prompt_token_ids,
                completion_token_ids,
                logprobs,
                response_id,
                response_model,
                provider_metadata,
                provider_content,
                parts,
                refusal,
                status,
                anomalies,
                choice_index,
            ),
        )

    @classmethod
    def from_dict(cls: type[_C], d: Mapping[str, Any]) -> _C:
        """The chunk a ``to_dict()`` describes (parts, not flat fields)."""
        chunk = cls.__new__(cls)
        chunk._init("assistant", _leaf_from_dict(d))
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
        leaf = _base_leaf(role, content, name)
        if not isinstance(tool_call_id, _STR):
            raise TypeError(
                f"tool_call_id must be a str or None, not {type(tool_call_id).__name__}"
            )
        _put(leaf, "tool_call_id", tool_call_id)
        if metadata:
            leaf["metadata"] = json_copy(dict(metadata))
        self._init("tool", leaf)

    def to_message(self) -> ToolMessage:
        """The complete message."""
        message: ToolMessage = ToolMessage._from_data(self._data(True))
        return message


def _leaf_from_dict(d: Mapping[str, Any]) -> dict[str, Any]:
    """The leaf of the chunk a ``to_dict()`` describes, marked ``described``: folded first,
    the engines rebuild its parts as they are instead of merging them again (E91)."""
    if not isinstance(d, Mapping):
        raise TypeError(f"from_dict needs a dict, not {type(d).__name__}")
    leaf: dict[str, Any] = {}
    for key, value in d.items():
        if key == "parts":
            leaf["parts"] = [_described(_part_dict(p)) for p in value or ()]
        elif key == "usage_metadata":
            _put(leaf, "usage", _stored_usage(value))
        elif key in ("metadata", "provider_metadata"):
            if value:
                leaf[key] = json_copy(dict(value))
        elif key == "anomalies":
            if value:
                leaf[key] = [dict(a) for a in value]
        elif key in _LEAF_KEYS:
            if value is not None:
                leaf[key] = value if type(value) in SCALARS else json_copy(value)
        else:
            raise ValueError(f"unknown field {key!r} for an assistant message")
    _check_leaf(leaf)
    leaf["described"] = True
    return leaf


def _stored_usage(usage: Any) -> dict[str, Any] | None:
    """``usage_metadata`` as a ``to_dict()`` gives it: every key under the name it came with
    (``cache_read_input_tokens`` stays so; :class:`UsageMetadata`'s aliases are a view, not
    a rename), so ``from_dict`` neither renames nor merges two spellings (E91). A
    :class:`UsageMetadata` or a pydantic model is read as the constructor reads it."""
    if isinstance(usage, Mapping):
        stored: dict[str, Any] = json_copy(dict(usage))
        return stored
    return _usage_dict(usage)


_LEAF_KEYS = frozenset(("role", "name", "content_list", *_ASSISTANT_KEYS))


def _described(part: dict[str, Any]) -> dict[str, Any]:
    """A part a ``to_dict()`` holds is kept even when its text is empty (an empty text block
    a stream sent, E79): ``from_dict(m.to_dict()) == m``."""
    if part["part"] in ("text", "reasoning"):
        part["opened"] = True
    return part


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

    def _view(self) -> dict[str, Any]:
        try:
            d: dict[str, Any] = object.__getattribute__(self, "_d")
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
    def _from_data(cls, data: dict[str, Any]) -> Any:
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
