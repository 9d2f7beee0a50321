"""The state of a fold (``src/engine/chunks/state.rs``): what a chunk holds between leaves
(:class:`_State`, its parts and calls), the options of a fold, the constants every rule reads
(families, anomaly codes, finish reasons), and the small rules of absence and precedence."""

from __future__ import annotations

from typing import Any

from ... import errors
from ..._frozen import json_copy
from ..._message_fields import DATA_KEYS

# A private copy of a value's dicts and lists (leaves shared): what a fold stores, so that
# folding in place never changes a user's object; readers copy with it too (messages).
_own = copy_tree = json_copy

FAMILIES = ("base", "assistant", "tool")
SIGNATURE_MERGES = ("replace", "concat")
USAGE_MERGES = ("merge", "sum", "last")
ANOMALY_CODES = (
    "ambiguous_fragment",
    "name_conflict",
    "kind_change",
    "synthetic_id",
    "total_mismatch",
    "delta_before_start",
    "mismatched_delta",
    "truncated",
    "index_collision",
    "unrecognized_event",
    "new_response",
    "out_of_order",
    "delta_after_finish",
)
# finish_reason_normalized (spec §3)
FINISH_REASONS = {
    "stop": "stop",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "STOP": "stop",
    "length": "length",
    "max_tokens": "length",
    "MAX_TOKENS": "length",
    "tool_calls": "tool_calls",
    "tool_use": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
    "SAFETY": "content_filter",
    "refusal": "content_filter",
    "error": "error",
}
_ZERO_WINS_NEVER = (int, float)  # usage numbers a zero may not overwrite (bool excluded)


class Options:
    """How a fold treats signatures, usage and anomalies; ``+`` uses the defaults."""

    __slots__ = ("strict", "signature_merge", "usage")

    def __init__(
        self, strict: bool = False, signature_merge: str = "replace", usage: str = "merge"
    ) -> None:
        if type(strict) is not bool:
            raise errors.wrong_type("strict", "a bool", strict)
        for name, value, valid in (
            ("signature_merge", signature_merge, SIGNATURE_MERGES),
            ("usage", usage, USAGE_MERGES),
        ):
            if type(value) is not str:
                raise errors.wrong_type(name, "a str", value)
            if value not in valid:
                raise errors.invalid_option(name, value, valid)
        self.strict = strict
        self.signature_merge = signature_merge
        self.usage = usage

    def key(self) -> tuple[bool, str, str]:
        return (self.strict, self.signature_merge, self.usage)


DEFAULT = Options()


def absent(value: Any) -> bool:
    """Spec: missing, None, or for ids/names/reasons "", whitespace, or the string "null"."""
    if value is None:
        return True
    if isinstance(value, str):
        return value == "null" or not value or value.isspace()
    return False


def _first(left: Any, right: Any) -> Any:
    return right if absent(left) else left


def _last(left: Any, right: Any) -> Any:
    return left if absent(right) else right


class _Part:
    """One part of the message being folded; ``pieces`` hold appended text or arguments."""

    __slots__ = ("kind", "index", "pieces", "summary", "fields", "call")

    def __init__(self, kind: str, index: Any, fields: dict[str, Any]) -> None:
        self.kind = kind
        self.index = index
        self.pieces: list[str] = []
        self.summary: list[str] | None = None
        self.fields = fields  # the part's other fields, private
        self.call: _Call | None = None


class _Call:
    """A tool call's identity, for the resolver (spec §4)."""

    __slots__ = ("id", "name", "type", "provider_index", "args_dict", "part")

    def __init__(self, part: _Part) -> None:
        self.id: str | None = None
        self.name: str | None = None
        self.type: str | None = None
        self.provider_index: Any = None
        self.args_dict: dict[str, Any] | None = None  # dict arguments (Gemini, Ollama) [E39]
        self.part = part


# a state holds each field of the message's folded data (fastmerge._message_fields) under its
# key; ``finish_reason_normalized`` holds the one a leaf gave, which the read gives where the
# raw reason normalizes to nothing
_MESSAGE_SLOTS = DATA_KEYS
# their value before the first leaf: None, except these (the lists are made per state)
_FALSE = ("content_list",)
_LISTS = ("parts", "anomalies")
_NONE = tuple(key for key in DATA_KEYS if key not in _FALSE and key not in _LISTS)


class _State:
    __slots__ = (
        "family",
        "options",
        "content_kind",
        "content_pieces",
        "content",
        "tool_call_id",
        "by_index",
        "calls",
        "calls_by_index",
        "calls_by_id",
        "per_chunk_total",
        "leaves",
        *_MESSAGE_SLOTS,
    )

    # the message's fields (their slots come from the table)
    role: Any
    name: Any
    metadata: dict[Any, Any] | None
    parts: list[_Part]
    content_list: bool  # assistant: some chunk gave its content as a list
    usage: dict[Any, Any] | None
    finish_reason: Any
    finish_reason_normalized: str | None
    parser_content: Any
    prompt_token_ids: Any
    completion_token_ids: Any  # a private list, or another value
    logprobs: Any  # a private dict/list, or another value
    response_id: Any
    response_model: Any
    provider_metadata: dict[Any, Any] | None
    provider_content: Any
    refusal: list[str] | None
    status: Any
    anomalies: list[dict[str, Any]]
    choice_index: Any

    def __init__(self, family: str, options: Options) -> None:
        self.family = family
        self.options = options
        for key in _NONE:
            setattr(self, key, None)
        for key in _FALSE:
            setattr(self, key, False)
        for key in _LISTS:
            setattr(self, key, [])
        # base/tool content: "str" / "list" pieces, or "other" (then ``content``)
        self.content_kind: str | None = None
        self.content_pieces: list[Any] = []
        self.content: Any = None
        self.tool_call_id: Any = None
        self.by_index: dict[Any, _Part] = {}  # non-call parts by their part index
        self.calls: list[_Call] = []
        self.calls_by_index: dict[Any, _Call] = {}  # most recent call at a provider index
        self.calls_by_id: dict[str, _Call] = {}
        # the kept total agreed with its own chunk's counts: recomputed at the finish (spec §5)
        self.per_chunk_total = False
        # how many leaves were folded: a chunk's given call indexes show only in one no ``+``
        # merged (a merged stream numbers its calls by position, spec §4)
        self.leaves = 0

    def anomaly(self, code: str, detail: str) -> None:
        if self.options.strict:
            raise errors.anomaly(code, detail)
        self.anomalies.append({"code": code, "detail": detail})


def _new_part(state: _State, kind: str, index: Any, fields: dict[str, Any]) -> _Part:
    part = _Part(kind, index, fields)
    state.parts.append(part)
    if index is not None:
        state.by_index[index] = part
    return part
