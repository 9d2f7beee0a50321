"""The twin of the engine's chunk merge (spec §3–§5, §8): ``left + right`` for message chunks.

A chunk is the fold of the *leaves* it was built from (the chunks a user constructed). The
schema layer (``fastmerge.messages``) turns a constructor's arguments into a leaf: a dict of
the fields that were given (the :data:`FIELDS` of its family), with parts as plain dicts keyed
by ``"part"``. This module folds leaves into a private :class:`_State` and turns the state back
into plain data (:func:`_materialize`).

Value semantics in linear time: ``a + b`` returns a *view* ``(acc, n)`` on a shared
accumulator that holds the leaves and the state after folding them. When ``a`` is the newest
view of its accumulator (``acc = acc + chunk``), ``b``'s leaves are folded into the state in
place: O(size of b). Otherwise the sum starts a new accumulator from ``a``'s leaves (a copy, as
a branch must). A view reads the live state when it is the newest; an older view replays its
leaves once and caches the result, so it reads exactly as it did. Because a sum always folds
leaves, ``(a + b) + c == a + (b + c)``.
"""

from __future__ import annotations

import threading
from typing import Any, Iterable

from .. import errors
from .._frozen import freeze_tree as freeze_tree  # a message's read-only logprobs
from .._frozen import json_copy
from ..errors import MAX_DEPTH

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


# ---------------------------------------------------------------------------------------------
# Options


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


# ---------------------------------------------------------------------------------------------
# Small rules


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


def _deep_merge(left: Any, right: Any, depth: int = 0) -> Any:
    """metadata, provider_metadata, a call's extra fields [E72]: dicts merge per key, the last
    non-None leaf wins, strings never concatenate. ``left`` is private (ours to change).
    Dicts nested deeper than ``MAX_DEPTH`` levels raise ``DepthLimitError``."""
    if isinstance(left, dict) and isinstance(right, dict):
        if depth >= MAX_DEPTH:
            raise errors.DepthLimitError(MAX_DEPTH)
        for key, value in right.items():
            if value is None:
                continue
            if key in left:
                left[key] = _deep_merge(left[key], value, depth + 1)
            else:
                left[key] = _own(value)
        return left
    return left if right is None else _own(right)


def _thaw(value: Any, depth: int = 0) -> Any:
    """A copy of what the state may still change, for reading: its dicts at every depth (deep
    merges fill them in place) and its lists (folds extend them), not the items of a list (a
    leaf's, never changed). Readers copy again before handing values to users."""
    if isinstance(value, dict):
        if depth >= MAX_DEPTH:
            raise errors.DepthLimitError(MAX_DEPTH)
        return {k: _thaw(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return list(value)
    return value


# ---------------------------------------------------------------------------------------------
# State


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


class _State:
    __slots__ = (
        "family",
        "options",
        "role",
        "name",
        "content_kind",
        "content_pieces",
        "content",
        "content_list",
        "metadata",
        "tool_call_id",
        "parts",
        "by_index",
        "calls",
        "calls_by_index",
        "calls_by_id",
        "usage",
        "per_chunk_total",
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
        "leaves",
    )

    def __init__(self, family: str, options: Options) -> None:
        self.family = family
        self.options = options
        self.role: Any = None
        self.name: Any = None
        # base/tool content: "str" / "list" pieces, or "other" (then ``content``)
        self.content_kind: str | None = None
        self.content_pieces: list[Any] = []
        self.content: Any = None
        self.content_list = False  # assistant: some chunk gave its content as a list
        self.metadata: dict[Any, Any] | None = None
        self.tool_call_id: Any = None
        self.parts: list[_Part] = []
        self.by_index: dict[Any, _Part] = {}  # non-call parts by their part index
        self.calls: list[_Call] = []
        self.calls_by_index: dict[Any, _Call] = {}  # most recent call at a provider index
        self.calls_by_id: dict[str, _Call] = {}
        self.usage: dict[Any, Any] | None = None
        # the kept total agreed with its own chunk's counts: recomputed at the finish (spec §5)
        self.per_chunk_total = False
        self.finish_reason: Any = None
        self.parser_content: Any = None
        self.prompt_token_ids: Any = None
        self.completion_token_ids: Any = None  # a private list, or another value
        self.logprobs: Any = None  # a private dict/list, or another value
        self.response_id: Any = None
        self.response_model: Any = None
        self.provider_metadata: dict[Any, Any] | None = None
        self.provider_content: Any = None
        self.refusal: list[str] | None = None
        self.status: Any = None
        self.anomalies: list[dict[str, Any]] = []
        self.choice_index: Any = None
        # how many leaves were folded: a chunk's given call indexes show only in one no ``+``
        # merged (a merged stream numbers its calls by position, spec §4)
        self.leaves = 0

    def anomaly(self, code: str, detail: str) -> None:
        if self.options.strict:
            raise errors.anomaly(code, detail)
        self.anomalies.append({"code": code, "detail": detail})


# ---------------------------------------------------------------------------------------------
# Folding one leaf (spec §3)


def _fold(state: _State, leaf: dict[str, Any]) -> None:
    """Fold one leaf's fields into ``state`` (which is private and changes in place).

    A leaf marked ``"described": True`` (``from_dict``: the parts a ``to_dict()`` gives) that
    is folded first *is* the state: its parts are rebuilt as they are (:func:`_rebuild_part`),
    never merged with each other, so no part joins another and no anomaly is recorded again
    [E91]. Folded after other leaves, it is a chunk like any other: its parts continue theirs
    by the rules of spec §3."""
    family = state.family
    rebuild = state.leaves == 0 and leaf.get("described") is True
    state.leaves += 1
    for key, value in leaf.items():
        if key == "parts":
            if family == "assistant":
                fold_part = _rebuild_part if rebuild else _fold_part
                for part in value:
                    fold_part(state, part)
        elif key == "content":
            if family != "assistant":
                _fold_content(state, value)
            elif isinstance(value, list):
                state.content_list = True
        elif key == "content_list":
            state.content_list = state.content_list or bool(value)
        elif key == "role":
            if state.role is None and not absent(value):
                state.role = value
        elif key == "name":
            state.name = _first(state.name, value)
        elif key == "metadata":
            state.metadata = _deep_merge(state.metadata, value) if value else state.metadata
        elif key == "provider_metadata":
            if value:
                state.provider_metadata = _deep_merge(state.provider_metadata, value)
        elif key == "tool_call_id":
            state.tool_call_id = _last(state.tool_call_id, value)
        elif key == "usage":
            _fold_usage(state, value, False)
        elif key == "final_usage":
            _fold_usage(state, value, True)
        elif key == "finish_reason":
            state.finish_reason = _last(state.finish_reason, value)
        elif key == "parser_content":
            if value is not None:
                state.parser_content = value
        elif key == "provider_content":
            if value is not None:
                state.provider_content = value
        elif key == "prompt_token_ids":
            if not state.prompt_token_ids:  # first non-empty [E63]
                state.prompt_token_ids = _own(value)
        elif key == "completion_token_ids":
            state.completion_token_ids = _concat_ids(state.completion_token_ids, value)
        elif key == "logprobs":
            state.logprobs = _fold_logprobs(state.logprobs, value)
        elif key == "response_id":
            state.response_id = _first(state.response_id, value)
        elif key == "response_model":
            state.response_model = _last(state.response_model, value)  # [E73]
        elif key == "refusal":
            if isinstance(value, str) and value:
                if state.refusal is None:
                    state.refusal = []
                state.refusal.append(value)  # [E71]
        elif key == "status":
            state.status = _last(state.status, value)
        elif key == "anomalies":
            state.anomalies.extend(dict(a) for a in value)
        elif key == "choice_index":
            if state.choice_index is None:
                state.choice_index = value
        # any other key: per-chunk noise (e.g. obfuscation) is not accumulated [E74]


def _fold_content(state: _State, value: Any) -> None:
    """base/tool content (spec §3.1): str+str and list+list concatenate, otherwise the right
    value; the tool family counts an empty right side as absent."""
    kind = state.content_kind
    if value is None:
        return
    if kind == "str" and isinstance(value, str):
        state.content_pieces.append(value)
    elif kind == "list" and isinstance(value, list):
        state.content_pieces.extend(value)
    elif kind is not None and state.family == "tool" and not value:
        return
    elif isinstance(value, str):
        state.content_kind, state.content_pieces = "str", [value]
    elif isinstance(value, list):
        state.content_kind, state.content_pieces = "list", list(value)
    else:
        state.content_kind, state.content_pieces, state.content = "other", [], value


def _concat_ids(left: Any, right: Any) -> Any:
    """completion_token_ids: an empty side gives the other, lists concatenate, else right."""
    if not right:
        return left
    if not left:
        return _own(right)
    if isinstance(left, list) and isinstance(right, list):
        left.extend(right)
        return left
    return _own(right)


def _fold_logprobs(left: Any, right: Any) -> Any:
    """Every list-valued key concatenates; a None never resets [E60–E62]."""
    if right is None:
        return left
    if left is None:
        return _own(right)
    if isinstance(left, dict) and isinstance(right, dict):
        for key, value in right.items():
            if value is None:
                continue
            current = left.get(key)
            if isinstance(current, list) and isinstance(value, list):
                current.extend(value)
            else:
                left[key] = _own(value)
        return left
    if isinstance(left, list) and isinstance(right, list):
        left.extend(right)
        return left
    return _own(right)


# ---------------------------------------------------------------------------------------------
# Usage (spec §5)


def _fold_usage(state: _State, right: Any, final: bool) -> None:
    """``usage``, or ``final_usage``: counts the provider calls final (Anthropic's cumulative
    ``message_delta``), which replace zeros included (spec §5)."""
    if not isinstance(right, dict):
        return
    if state.usage is None:
        state.usage = {}
    mode = state.options.usage
    if final and mode == "merge":
        mode = "last"
    _note_total(state, right, mode)
    _merge_usage(state.usage, right, mode)


def _note_total(state: _State, right: dict[Any, Any], mode: str) -> None:
    """Whether the total ``right`` brings (when it is kept) is a per-chunk one: equal to its
    own chunk's counts. A summed total stays per-chunk only while every summand was."""
    total = right.get("total_tokens")
    if total is None:
        return
    assert state.usage is not None
    current = state.usage.get("total_tokens")
    if current is not None and _keeps(mode, current, total):
        return
    own = _counts_total(right)
    agrees = _is_number(total) and own is not None and total == own
    summed = mode == "sum" and _is_number(current) and _is_number(total)
    state.per_chunk_total = agrees and (state.per_chunk_total or not summed)


def _merge_usage(left: dict[Any, Any], right: dict[Any, Any], mode: str) -> None:
    for key, value in right.items():
        if value is None:  # [E58]
            continue
        current = left.get(key)
        if isinstance(current, dict) and isinstance(value, dict):
            _merge_usage(current, value, mode)  # *_details per key [E59]
        elif current is None:
            left[key] = _own(value)
        elif mode == "sum" and _is_number(current) and _is_number(value):
            left[key] = current + value
        elif _keeps(mode, current, value):
            continue
        else:
            left[key] = _own(value)


def _keeps(mode: str, current: Any, value: Any) -> bool:
    """A zero never overwrites an earlier count [E54], nor does an empty string (``merge``)."""
    if mode != "merge":
        return False
    if _is_number(value) and value == 0 and _is_number(current):
        return True
    return isinstance(value, str) and not value


def _counts_total(usage: dict[Any, Any]) -> Any:
    """input + output (absent or not a number counts 0); None when neither is given."""
    inputs: Any = usage.get("input_tokens")
    outputs: Any = usage.get("output_tokens")
    if inputs is None and outputs is None:
        return None
    return (inputs if _is_number(inputs) else 0) + (outputs if _is_number(outputs) else 0)


def usage_total(usage: dict[Any, Any]) -> Any:
    """The total a finished usage stands for (rules §5): a reported total, unless it is
    missing or zero where counts were given: then input + output (absent counts 0). What
    :func:`_finish_usage` leaves when no chunk's total was a per-chunk one."""
    total: Any = usage.get("total_tokens")
    computed = _counts_total(usage)
    if (total is None or (_is_number(total) and total == 0)) and computed is not None:
        return computed
    return total


def _is_number(value: Any) -> bool:
    return isinstance(value, _ZERO_WINS_NEVER) and not isinstance(value, bool)


# ---------------------------------------------------------------------------------------------
# Parts (spec §3)


def _fold_part(state: _State, part: dict[str, Any]) -> None:
    kind = part["part"]
    if kind == "tool_call":
        _resolve_call(state, part)
        return
    if (
        len(part) == 2
        and "text" in part  # another field (attributes, citations) takes the full path
        and (kind == "text" or kind == "reasoning")
        and state.parts
    ):
        # the common case, a bare delta ({"part", "text"}): continue the last part
        tail = state.parts[-1]
        if tail.kind == kind and tail.index is None:
            text = part.get("text")
            if text:
                tail.pieces.append(text)
            return
    index = part.get("index")
    if kind == "text" or kind == "reasoning":
        text = part.get("text") or ""
        if not text and _empty_extras(part):
            return  # empty text creates no part [E22]
        last: _Part | None = None
        if index is not None:
            last = state.by_index.get(index)
            if last is not None and last.kind != kind:
                state.anomaly("kind_change", f"part index {index!r}: {kind} after {last.kind}")
                last = None
        elif state.parts and not part.get("attributes"):
            last = state.parts[-1]
            if last.kind != kind or last.index is not None:
                last = None
        if last is None:
            last = _new_part(state, kind, index, {})
        if text:
            last.pieces.append(text)
        _fill_text_fields(state, last, part)
        return
    # tool_result, media, unknown: a part of its own; at a known index, fields fill if absent
    if index is not None:
        known = state.by_index.get(index)
        if known is not None:
            if known.kind == kind:
                fields = known.fields
                for key, value in part.items():
                    if key not in ("part", "index") and fields.get(key) is None:
                        if value is not None:
                            fields[key] = _own(value)
                return
            state.anomaly("kind_change", f"part index {index!r}: {kind} after {known.kind}")
    _new_part(
        state, kind, index, {k: _own(v) for k, v in part.items() if k not in ("part", "index")}
    )


def _rebuild_part(state: _State, part: dict[str, Any]) -> None:
    """One part of a described leaf folded first (see :func:`_fold`): a new part with the
    fields the dict gives, read as :func:`_fold_part` reads them, registered by its index
    (and a call by its provider index and id) so that later leaves continue it."""
    kind = part["part"]
    if kind == "tool_call":
        _rebuild_call(state, part)
        return
    index = part.get("index")
    if kind == "text" or kind == "reasoning":
        text = part.get("text") or ""
        if not text and _empty_extras(part):
            return  # empty text creates no part [E22] (from_dict marks its parts opened)
        last = _new_part(state, kind, index, {})
        if text:
            last.pieces.append(text)
        _fill_text_fields(state, last, part)
        return
    _new_part(
        state, kind, index, {k: _own(v) for k, v in part.items() if k not in ("part", "index")}
    )


def _rebuild_call(state: _State, fragment: dict[str, Any]) -> None:
    """A tool-call part of a described leaf folded first: a call of its own, its fields read
    in :func:`_merge_into`'s order; ``arguments`` and ``extra`` kept as they are (an empty or
    None-valued ``extra`` included, E91)."""
    call_id = fragment.get("id")
    call_id = None if absent(call_id) else call_id
    name = fragment.get("name")
    name = None if absent(name) else name
    call = _new_call(state, fragment.get("provider_index"))
    if call_id is not None:
        call.id = call_id
        state.calls_by_id.setdefault(call_id, call)
    call.name = name
    kind = fragment.get("type")
    if not absent(kind):
        call.type = kind
    arguments = fragment.get("arguments")
    if isinstance(arguments, str):
        if arguments:
            call.part.pieces.append(arguments)
    elif isinstance(arguments, dict):
        call.args_dict = _own(arguments)
    fields = call.part.fields
    payload = fragment.get("payload")
    if payload is not None:
        fields["payload"] = _merge_payload(state, None, payload)
    item_id = fragment.get("response_item_id")
    if not absent(item_id):
        fields["response_item_id"] = item_id
    call_index = fragment.get("call_index")
    if call_index is not None:
        fields["call_index"] = call_index
    extra = fragment.get("extra")
    if extra is not None:
        fields["extra"] = _own(extra)


def _empty_extras(part: dict[str, Any]) -> bool:
    return not (
        part.get("opened")  # a block the provider opened: kept even when empty [E79]
        or part.get("payload")
        or part.get("citations")
        or part.get("summary")
        or part.get("redacted")
        or part.get("attributes")
    )


def _new_part(state: _State, kind: str, index: Any, fields: dict[str, Any]) -> _Part:
    part = _Part(kind, index, fields)
    state.parts.append(part)
    if index is not None:
        state.by_index[index] = part
    return part


def _fill_text_fields(state: _State, last: _Part, part: dict[str, Any]) -> None:
    """Text and reasoning fields beside the text: citations append [E68], summary appends,
    payload replaces (or concatenates) [E65], attributes fill if absent, redacted sticks."""
    fields = last.fields
    citations = part.get("citations")
    if citations:
        fields.setdefault("citations", []).extend(_own(citations))
    summary = part.get("summary")
    if summary:
        if last.summary is None:
            last.summary = []
        last.summary.append(summary)
    payload = part.get("payload")
    if payload is not None:
        fields["payload"] = _merge_payload(state, fields.get("payload"), payload)
    if part.get("redacted"):
        fields["redacted"] = True
    attributes = part.get("attributes")
    if attributes:
        current = fields.setdefault("attributes", {})
        for key, value in attributes.items():
            if key not in current:
                current[key] = _own(value)


def _merge_payload(state: _State, left: Any, right: dict[str, Any]) -> dict[str, Any]:
    """Opaque payloads: the last non-empty replaces; ``signature_merge="concat"`` joins the data
    of two string payloads of the same provider and kind."""
    if absent(right.get("data")):
        return left if left is not None else dict(right)
    if (
        state.options.signature_merge == "concat"
        and left is not None
        and isinstance(left.get("data"), str)
        and isinstance(right.get("data"), str)
        and left.get("provider") == right.get("provider")
        and left.get("kind") == right.get("kind")
    ):
        return {**left, "data": left["data"] + right["data"]}
    return dict(right)


# ---------------------------------------------------------------------------------------------
# Tool-call resolver (spec §4)


def _resolve_call(state: _State, fragment: dict[str, Any]) -> None:
    call_id = fragment.get("id")
    call_id = None if absent(call_id) else call_id
    name = fragment.get("name")
    name = None if absent(name) else name
    index = fragment.get("provider_index")
    arguments = fragment.get("arguments")
    has_args = arguments is not None and arguments != ""
    has_meta = bool(
        fragment.get("payload")
        or fragment.get("extra")
        or fragment.get("response_item_id")
        or not absent(fragment.get("type"))
    )
    at_index = state.calls_by_index.get(index) if index is not None else None
    call: _Call | None
    if call_id is None and name is None and not has_args:
        # 1. vacuous: ignored [E33]; metadata alone (a thought signature [E69]) attaches to
        # the call at its index, or the most recent call, and is never dropped
        if not has_meta:
            return
        call = at_index if index is not None else (state.calls[-1] if state.calls else None)
        if call is None:
            call = _new_call(state, index)
        _merge_into(state, call, fragment, None, None)
        return
    if call_id is not None and call_id in state.calls_by_id:
        # 2. a known id, unless a name comes with it and this index holds another call [E28]
        call = state.calls_by_id[call_id]
        if name is not None and index is not None and at_index is not call:
            call = None
    elif call_id is not None and name is not None:
        # 3. a new id with a name: a new call, unless it is the late id of this index's call
        call = None
        if at_index is not None and at_index.id is None and at_index.name in (None, name):
            call = at_index
    elif call_id is not None:
        # 4. a new id without a name cannot start a call [E35]
        call = at_index if index is not None else _open_call(state)
    elif name is not None and index is not None:
        # 5. late or repeated name at an index [E29]; another name is another call [E27]
        call = at_index if at_index is not None and at_index.name in (None, name) else None
    elif name is not None:
        # 6. a name without id or index: a new call unless the only call has no name yet
        call = None
        if len(state.calls) == 1 and state.calls[0].name is None:
            call = state.calls[0]
    elif index is not None:
        # 7. the call at this index, else a pending call that becomes real with its name
        call = at_index
    else:
        # 8. arguments alone: the most recent call [E26], ambiguous among several [E34]
        call = _open_call(state)
        if call is None:
            state.anomaly(
                "ambiguous_fragment",
                "arguments before any call: kept on a call without a name until one arrives",
            )
    if call is None:
        call = _new_call(state, index)
    _merge_into(state, call, fragment, call_id, name)


def _open_call(state: _State) -> _Call | None:
    """A fragment with no index and no name: the single open call, else the most recent one
    with an ``ambiguous_fragment`` anomaly [E34]; None when there is no call yet."""
    if len(state.calls) > 1:
        state.anomaly(
            "ambiguous_fragment",
            f"a fragment with no index and no name among {len(state.calls)} calls went to "
            "the most recent one",
        )
    return state.calls[-1] if state.calls else None


def _new_call(state: _State, index: Any) -> _Call:
    part = _new_part(state, "tool_call", None, {})
    call = _Call(part)
    part.call = call
    call.provider_index = index
    state.calls.append(call)
    if index is not None:
        state.calls_by_index[index] = call
    return call


def _merge_into(
    state: _State, call: _Call, fragment: dict[str, Any], call_id: Any, name: Any
) -> None:
    """id, type and name are set once; arguments append; other fields deep-merge (spec §4)."""
    if call_id is not None and call.id is None:
        call.id = call_id
        state.calls_by_id.setdefault(call_id, call)
    if name is not None:
        if call.name is None:
            call.name = name
        elif call.name != name:
            state.anomaly(
                "name_conflict", f"call {call.id!r}: name {name!r} after {call.name!r} ignored"
            )
    kind = fragment.get("type")
    if call.type is None and not absent(kind):
        call.type = kind
    index = fragment.get("provider_index")
    if call.provider_index is None and index is not None:
        call.provider_index = index
        state.calls_by_index[index] = call
    arguments = fragment.get("arguments")
    if isinstance(arguments, str):
        if arguments:
            if call.args_dict is not None:
                state.anomaly(
                    "mismatched_delta", f"call {call.id!r}: text arguments after object ones"
                )
            else:
                call.part.pieces.append(arguments)
    elif isinstance(arguments, dict):
        if call.part.pieces:
            state.anomaly("mismatched_delta", f"call {call.id!r}: object arguments after text ones")
        else:
            call.args_dict = _deep_merge(
                call.args_dict if call.args_dict is not None else {}, arguments
            )
    fields = call.part.fields
    payload = fragment.get("payload")
    if payload is not None:
        fields["payload"] = _merge_payload(state, fields.get("payload"), payload)
    item_id = fragment.get("response_item_id")
    if fields.get("response_item_id") is None and not absent(item_id):
        fields["response_item_id"] = item_id
    # set once: a later fragment of the call keeps the index the first one gave
    call_index = fragment.get("call_index")
    if fields.get("call_index") is None and call_index is not None:
        fields["call_index"] = call_index
    extra = fragment.get("extra")
    if extra:
        fields["extra"] = _deep_merge(fields.get("extra") or {}, extra)


# ---------------------------------------------------------------------------------------------
# Reading a state back as plain data


def _materialize(state: _State, finish: bool) -> dict[str, Any]:
    """The folded fields as plain data; ``finish`` applies the end-of-stream rules (synthetic
    ids [E37], a computed or checked usage total [E57]). Containers are fresh copies."""
    family = state.family
    data: dict[str, Any] = {"family": family, "role": state.role, "name": state.name}
    data["metadata"] = _thaw(state.metadata) if state.metadata is not None else {}
    if family != "assistant":
        data["content"] = _content(state)
        if family == "tool":
            data["tool_call_id"] = state.tool_call_id
        return data
    anomalies = [dict(a) for a in state.anomalies]
    parts = []
    synthetic = 0
    for part in state.parts:
        out: dict[str, Any]
        if part.kind == "tool_call":
            call = part.call
            assert call is not None
            call_id = call.id
            # a fragment that never met a name stays an orphan, never a ghost call [E33]
            if call_id is None and finish and call.name is not None:
                call_id = f"call_fm_{synthetic}"
                synthetic += 1
                detail = f"tool call {call.name!r} had no id; generated {call_id!r}"
                if state.options.strict:
                    raise errors.anomaly("synthetic_id", detail)
                anomalies.append({"code": "synthetic_id", "detail": detail})
            arguments: Any = (
                _thaw(call.args_dict) if call.args_dict is not None else "".join(part.pieces)
            )
            out = {
                "part": "tool_call",
                "id": call_id,
                "type": call.type if call.type is not None else "function",
                "name": call.name,
                "arguments": arguments,
                "provider_index": call.provider_index,
            }
            for key in ("payload", "response_item_id", "extra"):
                out[key] = _thaw(part.fields.get(key))
            out["call_index"] = _thaw(part.fields.get("call_index")) if state.leaves == 1 else None
        elif part.kind in ("text", "reasoning"):
            out = {"part": part.kind, "text": "".join(part.pieces)}
            if part.kind == "text":
                out["citations"] = _thaw(part.fields.get("citations"))
                out["attributes"] = _thaw(part.fields.get("attributes"))
            else:
                out["summary"] = "".join(part.summary) if part.summary is not None else None
                out["payload"] = _thaw(part.fields.get("payload"))
                out["redacted"] = bool(part.fields.get("redacted"))
            out["index"] = part.index
        else:
            out = {"part": part.kind}
            out.update(_thaw(part.fields))
            out["index"] = part.index
        parts.append(out)
    data["parts"] = parts
    data["content_list"] = state.content_list
    usage = _thaw(state.usage)
    if finish and usage is not None:
        _finish_usage(state, usage, anomalies)
    data["usage"] = usage
    data["finish_reason"] = state.finish_reason
    data["finish_reason_normalized"] = FINISH_REASONS.get(state.finish_reason)
    data["parser_content"] = state.parser_content
    data["prompt_token_ids"] = _thaw(state.prompt_token_ids)
    data["completion_token_ids"] = _thaw(state.completion_token_ids)
    data["logprobs"] = _thaw(state.logprobs)
    data["response_id"] = state.response_id
    data["response_model"] = state.response_model
    data["provider_metadata"] = (
        _thaw(state.provider_metadata) if state.provider_metadata is not None else {}
    )
    data["provider_content"] = state.provider_content
    data["refusal"] = "".join(state.refusal) if state.refusal is not None else None
    data["status"] = state.status
    data["anomalies"] = anomalies
    data["choice_index"] = state.choice_index
    return data


def _finish_usage(state: _State, usage: dict[Any, Any], anomalies: list[dict[str, Any]]) -> None:
    """A missing total, or a per-chunk one, is input + output (absent counts 0); another
    reported one is kept and checked [E57, E78]."""
    total: Any = usage.get("total_tokens")
    computed = _counts_total(usage)
    if total is None or (_is_number(total) and (total == 0 or state.per_chunk_total)):
        if computed is not None:
            usage["total_tokens"] = computed
    elif _is_number(total) and computed is not None and total != computed:
        inputs, outputs = usage.get("input_tokens"), usage.get("output_tokens")
        detail = f"reported total_tokens {total!r} != input {inputs!r} + output {outputs!r}"
        if state.options.strict:
            raise errors.anomaly("total_mismatch", detail)
        anomalies.append({"code": "total_mismatch", "detail": detail})


def _content(state: _State) -> Any:
    kind = state.content_kind
    if kind == "str":
        return "".join(state.content_pieces)
    if kind == "list":
        return list(state.content_pieces)
    if kind == "other":
        return state.content
    return ""


# ---------------------------------------------------------------------------------------------
# The core every chunk class derives from


class _Acc:
    """Leaves folded so far and the state after them (``None`` after a failed fold); a new
    accumulator folds the leaves it starts from."""

    __slots__ = ("leaves", "state", "options", "family", "lock", "busy")

    def __init__(self, family: str, leaves: list[Any], options: Options) -> None:
        # two threads extending one tip: the second copies. Reentrant, and ``busy`` while a
        # fold or a read runs Python code (a key's ``__hash__``): a ``+`` or a read that code
        # makes on this accumulator works on a copy instead of waiting for itself.
        self.lock = threading.RLock()
        self.busy = False
        self.family = family
        self.options = options
        self.leaves = leaves
        self.state: _State | None = _replay(family, leaves, options)


def _replay(family: str, leaves: Iterable[dict[str, Any]], options: Options) -> _State:
    state = _State(family, options)
    for leaf in leaves:
        _fold(state, leaf)
    return state


class ChunkCore:
    """Base of the chunk classes: holds a leaf or a view on an accumulator; ``+`` folds.

    Subclasses (``fastmerge.messages``) call :meth:`_init` once from their constructor.
    """

    # A view sets only _family, _acc and _n; the others read as unset (getattr defaults).
    __slots__ = ("_family", "_leaf", "_acc", "_n", "_cache", "_finished", "_text")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def _init(self, family: str, leaf: dict[str, Any]) -> None:
        """Make this chunk the leaf ``leaf`` of ``family`` (once)."""
        if getattr(self, "_family", None) is not None:
            raise TypeError("a chunk is immutable: _init may be called only once")
        if family not in FAMILIES:
            raise errors.invalid_option("family", family, FAMILIES)
        if type(leaf) is not dict:
            raise errors.wrong_type("leaf", "a dict", leaf)
        self._family = family
        self._leaf = leaf
        self._acc: _Acc | None = None
        self._n = 1
        self._cache: dict[str, Any] | None = None
        self._finished: dict[str, Any] | None = None
        self._text = _bare_text(family, leaf)

    def _leaves(self) -> list[dict[str, Any]]:
        acc = self._acc
        if acc is None:
            return [self._leaf]
        return acc.leaves[: self._n]

    def __add__(self, other: Any) -> Any:
        # the hot path of ``acc = acc + chunk``: the newest view plus a leaf of its class
        # (a slot read raises AttributeError on an uninitialised chunk: _add says so)
        try:
            acc = self._acc
            fast = acc is not None and type(other) is type(self) and other._acc is None
        except AttributeError:
            fast = False
        if fast:
            assert acc is not None
            with acc.lock:
                state = acc.state
                if state is not None and not acc.busy and len(acc.leaves) == self._n:
                    bare = other._text
                    if bare is not None and state.role is not None and state.parts:
                        # a bare delta after a part of its kind: what _fold does, no walk
                        last = state.parts[-1]
                        if last.kind == bare[0] and last.index is None:
                            last.pieces.append(bare[1])
                            state.leaves += 1
                            acc.leaves.append(other._leaf)
                            return _view(type(self), acc.family, acc)
                    _fold_leaves(acc, [other._leaf])
                    return _view(type(self), acc.family, acc)
        return self._add(other, None)

    def __radd__(self, other: Any) -> Any:
        """``0 + chunk`` is the chunk, so ``sum(chunks)`` works without a start value."""
        if type(other) is int and other == 0:
            return self
        return NotImplemented

    def _add(self, other: Any, options: Options | None) -> Any:
        """``self + other`` with fold options (None: this chunk's own, else the defaults)."""
        family = getattr(self, "_family", None)
        if family is None:
            raise TypeError("chunk not initialised")
        if not isinstance(other, ChunkCore) or not _compatible(family, other):
            raise errors.cannot_add(type(self).__name__, other)
        new_leaves = other._leaves()
        acc = self._acc
        if options is None:
            options = acc.options if acc is not None else DEFAULT
        if acc is not None and acc.options.key() == options.key():
            with acc.lock:
                if acc.state is not None and not acc.busy and len(acc.leaves) == self._n:
                    _fold_leaves(acc, new_leaves)  # the newest view: extend in place
                    return _view(type(self), family, acc)
        # a leaf, an older view, other options, or a ``+`` re-entered from the fold of this
        # accumulator: a new accumulator from this chunk's leaves
        acc = _Acc(family, self._leaves(), options)
        _fold_leaves(acc, new_leaves)
        return _view(type(self), family, acc)

    def _data(self, finish: bool = False) -> dict[str, Any]:
        """The chunk's fields as plain data (cached); ``finish`` applies end-of-stream rules."""
        # getattr: an uninitialised chunk has no slots set and raises below
        cached: dict[str, Any] | None = getattr(self, "_finished" if finish else "_cache", None)
        if cached is not None:
            return cached
        family = getattr(self, "_family", None)
        if family is None:
            raise TypeError("chunk not initialised")
        acc = self._acc
        data = None
        if acc is not None:
            with acc.lock:
                if acc.state is not None and not acc.busy and len(acc.leaves) == self._n:
                    acc.busy = True
                    try:
                        data = _materialize(acc.state, finish)
                    finally:
                        acc.busy = False
        if data is None:
            options = acc.options if acc is not None else DEFAULT
            data = _materialize(_replay(family, self._leaves(), options), finish)
        if finish:
            self._finished = data
        else:
            self._cache = data
        return data


def _fold_leaves(acc: _Acc, leaves: list[dict[str, Any]]) -> None:
    state = acc.state
    assert state is not None
    acc.busy = True
    try:
        for leaf in leaves:
            _fold(state, leaf)
    except BaseException:
        acc.state = None  # a half-folded state is never read or extended again
        raise
    finally:
        acc.busy = False
    acc.leaves.extend(leaves)


def _view(cls: type[Any], family: str, acc: _Acc) -> Any:
    """A chunk of class ``cls`` reading ``acc`` as it is now."""
    result = object.__new__(cls)
    result._family = family
    result._acc = acc
    result._n = len(acc.leaves)
    return result


def _bare_text(family: str, leaf: dict[str, Any]) -> tuple[str, str] | None:
    """The kind and text of an assistant leaf that is nothing but one text or reasoning delta
    (a role, str content and one bare part), which ``+`` may append without walking the leaf;
    else None."""
    if family != "assistant" or not isinstance(leaf.get("content", ""), str):
        return None
    parts = leaf.get("parts")
    if (
        not isinstance(parts, list)
        or len(parts) != 1
        or any(key not in ("role", "content", "parts") for key in leaf)
    ):
        return None
    part = parts[0]
    if not isinstance(part, dict) or len(part) != 2:
        return None
    kind = part.get("part")
    text = part.get("text")
    if kind not in ("text", "reasoning") or not isinstance(text, str) or not text:
        return None
    return kind, text


def _compatible(family: str, other: ChunkCore) -> bool:
    other_family = getattr(other, "_family", None)
    if other_family is None:
        return False
    return family == "base" or family == other_family


def fold(chunks: Iterable[Any], options: Options) -> Any:
    """Fold chunks left to right with ``options`` (``fastmerge.fold_chunks``); None if empty."""
    result: Any = None
    for chunk in chunks:
        if result is None:
            if not isinstance(chunk, ChunkCore) or getattr(chunk, "_family", None) is None:
                raise errors.wrong_type("chunks", "an iterable of message chunks", chunk)
            result = chunk
            if options.key() != DEFAULT.key():
                result = _restart(chunk, options)
            continue
        result = result._add(chunk, options)
    return result


def _restart(chunk: ChunkCore, options: Options) -> Any:
    """A view of ``chunk``'s leaves folded with ``options`` (strict raises here)."""
    family = chunk._family
    acc = _Acc(family, chunk._leaves(), options)
    return _view(type(chunk), family, acc)


def fold_chunks(
    chunks: Iterable[Any],
    *,
    strict: bool = False,
    signature_merge: str = "replace",
    usage: str = "merge",
) -> Any:
    """Fold message chunks left to right (``fastmerge.fold_chunks``): ``strict`` raises the
    anomalies, ``signature_merge`` and ``usage`` choose those rules; None if ``chunks`` is
    empty. The result keeps the options for later ``+``."""
    return fold(chunks, Options(strict, signature_merge, usage))
