"""The parts of a message (rules §2), the flat tool-call view, and usage.

Every class here is an immutable value: equality by fields, a readable repr, and
``to_dict()`` / ``from_dict()`` that round-trip losslessly. A part's ``to_dict()`` is the plain
form both engines read and write: a dict keyed by ``"part"`` (``text``, ``reasoning``,
``tool_call``, ``tool_result``, ``media``, ``unknown``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Mapping, Union

from ._frozen import FrozenDict as FrozenDict
from ._frozen import FrozenList as FrozenList
from ._frozen import freeze_tree as freeze_tree
from ._frozen import json_copy as json_copy
from .errors import MergeError

__all__ = [
    "ArgumentsError",
    "MediaPart",
    "OpaquePayload",
    "Part",
    "ReasoningPart",
    "TextPart",
    "ToolCall",
    "ToolCallPart",
    "ToolResultPart",
    "UnknownPart",
    "UsageMetadata",
    "part_from_dict",
]


class ArgumentsError(MergeError):
    """Tool-call arguments that are not one complete JSON value (truncated, concatenated)."""

    def __init__(self, raw: str, position: int, reason: str) -> None:
        self.raw = raw
        self.position = position
        self.reason = reason
        super().__init__(f"invalid tool-call arguments at position {position}: {reason}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.raw, self.position, self.reason))


@dataclass(frozen=True, slots=True)
class OpaquePayload:
    """A provider-tagged value (signature, thought signature, encrypted content, redacted data)
    that is never parsed, trimmed or re-encoded, and is replayed only to its provider."""

    provider: str | None
    kind: str | None
    data: Any

    def to_dict(self) -> dict[str, Any]:
        return {"provider": self.provider, "kind": self.kind, "data": self.data}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> OpaquePayload:
        return cls(d.get("provider"), d.get("kind"), d.get("data"))


def _payload(value: Any) -> OpaquePayload | None:
    if value is None or isinstance(value, OpaquePayload):
        return value
    if isinstance(value, Mapping):
        return OpaquePayload.from_dict(value)
    raise TypeError(f"payload must be an OpaquePayload or a dict, not {type(value).__name__}")


def _payload_dict(value: OpaquePayload | None) -> dict[str, Any] | None:
    return None if value is None else value.to_dict()


class _Part:
    """Shared to_dict/from_dict for the part dataclasses: fields in order, payload as a dict."""

    __slots__ = ()
    PART: ClassVar[str]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"part": self.PART}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            out[f.name] = _payload_dict(value) if f.name == "payload" else value
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Any:
        names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        return cls(**{k: v for k, v in d.items() if k in names})


@dataclass(frozen=True, slots=True)
class TextPart(_Part):
    """Text; ``citations`` as the provider sent them; ``attributes`` keep the other keys of a
    structured content item (``{"type": "text", ...}``); ``index`` is the provider's block."""

    PART: ClassVar[str] = "text"
    text: str = ""
    citations: list[Any] | None = None
    attributes: dict[str, Any] | None = None
    index: int | None = None


@dataclass(frozen=True, slots=True)
class ReasoningPart(_Part):
    """Reasoning text (thinking), an optional summary, an opaque payload (a signature, redacted
    or encrypted data) and whether the provider redacted it."""

    PART: ClassVar[str] = "reasoning"
    text: str = ""
    summary: str | None = None
    payload: OpaquePayload | None = None
    redacted: bool = False
    index: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "payload", _payload(self.payload))


@dataclass(frozen=True, slots=True)
class ToolCallPart(_Part):
    """A tool call as streamed: ``arguments`` raw (a str exactly as streamed, or the object a
    provider sent), ``provider_index`` the provider's index, ``extra`` any other fields,
    ``call_index`` the index a chunk's ``tool_calls=`` gave it (openJiuwen's ``ToolCall.index``,
    which the flat view of that chunk shows; None once chunks merge: a merged stream numbers
    its calls by position). A call the stream cut is named by the ``tool_call`` of a
    ``truncated`` anomaly of its message (``id``, ``name``, ``provider_index`` as far as known:
    see ``AssistantMessage.anomalies``)."""

    PART: ClassVar[str] = "tool_call"
    id: str | None = None
    type: str | None = "function"
    name: str | None = None
    arguments: Union[str, dict[str, Any], None] = ""
    provider_index: int | None = None
    payload: OpaquePayload | None = None
    response_item_id: str | None = None
    extra: dict[str, Any] | None = None
    call_index: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "payload", _payload(self.payload))


@dataclass(frozen=True, slots=True)
class ToolResultPart(_Part):
    """A tool's result, answering ``tool_call_id``."""

    PART: ClassVar[str] = "tool_result"
    tool_call_id: str | None = None
    content: Any = None
    index: int | None = None


@dataclass(frozen=True, slots=True)
class MediaPart(_Part):
    """An image, audio or file: inline ``data`` or a ``url``."""

    PART: ClassVar[str] = "media"
    mime_type: str | None = None
    data: Any = None
    url: str | None = None
    index: int | None = None


@dataclass(frozen=True, slots=True)
class UnknownPart(_Part):
    """A block fastmerge does not model: the provider's JSON, verbatim."""

    PART: ClassVar[str] = "unknown"
    provider: str | None = None
    kind: str | None = None
    raw: Any = None
    index: int | None = None


Part = Union[TextPart, ReasoningPart, ToolCallPart, ToolResultPart, MediaPart, UnknownPart]

PART_CLASSES: dict[str, type[Any]] = {
    cls.PART: cls
    for cls in (TextPart, ReasoningPart, ToolCallPart, ToolResultPart, MediaPart, UnknownPart)
}


def part_from_dict(d: Mapping[str, Any]) -> Part:
    """The part a ``to_dict()`` describes (``d["part"]`` names its class)."""
    if not isinstance(d, Mapping):
        raise TypeError(f"a part must be a dict, not {type(d).__name__}")
    kind = d.get("part")
    cls = PART_CLASSES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"unknown part kind {kind!r}; expected one of {', '.join(PART_CLASSES)}")
    part: Part = cls.from_dict(d)
    return part


def arguments_text(arguments: Any) -> str:
    """A call's arguments as text: the raw string as streamed, an object (which no adapter
    streams in pieces) as compact JSON, absent as ``""``. The flat view shows this, and the
    renderers give it for a call the stream cut."""
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class ToolCall:
    """openJiuwen's flat tool call: the view ``tool_calls`` gives; ``index`` is the index the
    call was given in an unmerged chunk, else its position (0..n-1, rules §4)."""

    id: str | None
    type: str = "function"
    name: str = ""
    arguments: str = ""
    index: int | None = None
    response_item_id: str | None = None

    def parsed_arguments(self, partial: bool = False) -> Any:
        """The arguments as JSON. Strict by default: truncated or concatenated JSON raises
        :class:`ArgumentsError` with the position (never repaired) [E40, E41]; empty arguments
        are ``{}`` [E42]. ``partial=True`` gives a tolerant view of incomplete JSON, for UIs."""
        return parse_arguments(self.arguments, partial)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "name": self.name,
            "arguments": self.arguments,
            "index": self.index,
            "response_item_id": self.response_item_id,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ToolCall:
        function = d.get("function")
        if isinstance(function, Mapping):  # the OpenAI shape
            return cls(
                id=d.get("id"),
                type=d.get("type") or "function",
                name=function.get("name") or "",
                arguments=arguments_text(function.get("arguments")),
                index=d.get("index"),
                response_item_id=d.get("response_item_id"),
            )
        return cls(**{f.name: d[f.name] for f in fields(cls) if f.name in d})


def parse_arguments(raw: Any, partial: bool = False) -> Any:
    """Parse tool-call arguments (see :meth:`ToolCall.parsed_arguments`): the one partial
    parser, which gives ``None`` where no prefix of the text is JSON."""
    if not isinstance(raw, str):
        return raw
    if not raw.strip():
        return {}
    if partial:
        import jiter

        try:
            return jiter.from_json(raw.encode("utf-8", "surrogatepass"), partial_mode=True)
        except ValueError:
            return None
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ArgumentsError(raw, exc.pos, exc.msg) from None


# ---------------------------------------------------------------------------------------------
# Usage

# openJiuwen's UsageMetadata fields and defaults, plus the first-class cache fields.
USAGE_FIELDS: dict[str, Any] = {
    "code": 0,
    "err_msg": "",
    "prompt": "",
    "task_id": "",
    "model_name": "",
    "total_latency": 0.0,
    "first_token_time": "",
    "request_start_time": "",
    "input_tokens": 0,
    "output_tokens": 0,
    "total_tokens": 0,
    "cache_tokens": 0,
    "cache_read_tokens": None,
    "cache_miss_tokens": None,
    "cache_write_tokens": None,
    "cache_status": None,
    "cache_source": None,
    "cache_authoritative": False,
    "cache_creation_input_tokens": None,
    "reasoning_tokens": 0,
    "input_cost": 0.0,
    "output_cost": 0.0,
    "total_cost": 0.0,
}
# provider spellings of the same counts
USAGE_ALIASES = {
    "prompt_tokens": "input_tokens",
    "completion_tokens": "output_tokens",
    "cache_read_input_tokens": "cache_read_tokens",
    "cache_write_input_tokens": "cache_write_tokens",
}


class UsageMetadata:
    """Token usage: openJiuwen's fields (read with their defaults when not given), the cache read
    / write input tokens as first-class fields, and any other key kept in :attr:`extra`.

    Only the fields that were given are stored (and merged): a default never overwrites a count.
    """

    __slots__ = ("_values",)

    code: int
    err_msg: str
    prompt: str
    task_id: str
    model_name: str
    total_latency: float
    first_token_time: str
    request_start_time: str
    input_tokens: int
    output_tokens: int
    total_tokens: int
    cache_tokens: int
    cache_read_tokens: int | None
    cache_miss_tokens: int | None
    cache_write_tokens: int | None
    cache_status: str | None
    cache_source: str | None
    cache_authoritative: bool
    cache_creation_input_tokens: int | None
    reasoning_tokens: int
    input_cost: float
    output_cost: float
    total_cost: float

    def __init__(self, **values: Any) -> None:
        given: dict[str, Any] = {}
        for key, value in values.items():
            given[USAGE_ALIASES.get(key, key)] = value
        object.__setattr__(self, "_values", given)

    def __getattr__(self, name: str) -> Any:
        if name in USAGE_FIELDS:
            value = self._values.get(name)
            return USAGE_FIELDS[name] if value is None else value
        raise AttributeError(f"'UsageMetadata' object has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("UsageMetadata is immutable")

    @property
    def extra(self) -> dict[str, Any]:
        """The keys that are not openJiuwen fields (``prompt_tokens_details``, ...)."""
        return {k: v for k, v in self._values.items() if k not in USAGE_FIELDS}

    def to_dict(self) -> dict[str, Any]:
        """The fields that were given, in order, with any other keys."""
        values: dict[str, Any] = json_copy(self._values)
        return values

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> UsageMetadata:
        return cls(**d)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, UsageMetadata):
            return NotImplemented
        return bool(self._values == other._values)

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return (_usage_from_dict, (self.to_dict(),))

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self._values.items())
        return f"UsageMetadata({inner})"


def _usage_from_dict(d: dict[str, Any]) -> UsageMetadata:
    return UsageMetadata(**d)
