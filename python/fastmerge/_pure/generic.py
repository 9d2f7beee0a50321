"""Generic merge (spec §1): the ``openjiuwen``, ``delta`` and ``langchain`` policies, in linear
time.

``merge(a, b)`` must return what openJiuwen's ``merge_parser_content`` returns: it performs the
very operations openJiuwen performs (``+``, ``dict.copy()``, ``key in d``), so the result is the
same object graph, type for type. ``merge_all(items)`` must return what
``functools.reduce(merge, items)`` returns, without the quadratic copying of that reduce: its
fold keeps *builders* for the exact ``str``, ``list`` and ``dict`` values it is still growing
(pieces of text, items of a list, entries of a dict) and turns them into Python objects once, at
the end; everything else (subclasses, numbers, models, objects with ``__add__``) it merges at
once, like ``merge``.

A *node* is a builder (``_Text``, ``_List``, ``_Dict``) or a plain value (a leaf, never changed).
Builders are private to one call: no input is ever mutated, and a result never aliases an input
container that the merge changed.
"""

from __future__ import annotations

import operator
from typing import Any, Iterable

from ..errors import (
    MAX_DEPTH,
    CycleError,
    DepthLimitError,
    MergeTypeError,
    invalid_option,
    langchain_conflict,
    requires_delta,
    wrong_type,
)

__all__ = [
    "ATOMIC_KEYS",
    "LIST_MERGES",
    "MAX_DEPTH",
    "POLICIES",
    "add_ai_message_chunks",
    "concat_token_ids",
    "merge",
    "merge_all",
    "merge_dicts",
    "merge_logprobs",
]

POLICIES = ("openjiuwen", "delta", "langchain")
LIST_MERGES = ("concat", "by_index")

#: delta policy: values under these keys are identities or states, never concatenated [E15].
ATOMIC_KEYS = frozenset(
    {
        "id",
        "object",
        "model",
        "system_fingerprint",
        "role",
        "type",
        "index",
        "created",
        "service_tier",
        "finish_reason",
        "stop_reason",
        "name",
    }
)

# by_index matches element indexes as 64-bit integers (the engine's width); a larger int is
# not an index and the element is appended.
_I64_MIN = -(2**63)
_I64_MAX = 2**63 - 1


class _Config:
    __slots__ = ("delta", "langchain", "by_index", "strict")

    def __init__(self, policy: object, list_merge: object, strict: object) -> None:
        # Types first, then values: the Rust binding checks in the same order.
        if not isinstance(policy, str):
            raise wrong_type("policy", "str", policy)
        if not isinstance(list_merge, str):
            raise wrong_type("list_merge", "str", list_merge)
        if not isinstance(strict, bool):
            raise wrong_type("strict", "bool", strict)
        if policy not in POLICIES:
            raise invalid_option("policy", policy, POLICIES)
        if list_merge not in LIST_MERGES:
            raise invalid_option("list_merge", list_merge, LIST_MERGES)
        self.delta = policy == "delta"
        self.langchain = policy == "langchain"
        # by_index and strict only make sense for JSON deltas; openjiuwen is a drop-in.
        if not self.delta and list_merge != "concat":
            raise requires_delta("list_merge", list_merge)
        if not self.delta and strict:
            raise requires_delta("strict", strict)
        self.by_index = list_merge == "by_index"
        self.strict = strict


class _Walk:
    """The state of one merge call: its options, the keys down to here, the containers open."""

    __slots__ = ("cfg", "path", "open_ids")

    def __init__(self, cfg: _Config) -> None:
        self.cfg = cfg
        self.path: list[Any] = []
        # ids of the right-hand dicts being merged along the current path: meeting one again
        # means the value contains itself, and the merge would never end.
        self.open_ids: set[int] = set()


# ---------------------------------------------------------------------------------------------
# Builders


class _Text:
    """An exact ``str`` still growing: its pieces, joined once by ``_finish``."""

    __slots__ = ("pieces",)

    def __init__(self, pieces: list[str]) -> None:
        self.pieces = pieces


class _List:
    """An exact ``list`` still growing; ``slots`` maps an element ``index`` to its position
    (``langchain``: to the positions of every element with that ``index``, in order)."""

    __slots__ = ("items", "slots")

    def __init__(self) -> None:
        self.items: list[Any] = []
        self.slots: dict[Any, Any] = {}


class _Dict:
    """An exact ``dict`` still growing: key -> node, in first-insertion order."""

    __slots__ = ("entries",)

    def __init__(self, entries: dict[Any, Any]) -> None:
        self.entries = entries


_BUILDERS = (_Text, _List, _Dict)
_NOTHING = object()  # merge_all's "no first item" (None is a valid item)


def _finish(node: Any) -> Any:
    """Turn a node into the Python value it stands for."""
    kind = type(node)
    if kind is _Text:
        return "".join(node.pieces)
    if kind is _List:
        items = node.items
        for i, item in enumerate(items):
            if type(item) in _BUILDERS:
                items[i] = _finish(item)
        return items
    if kind is _Dict:
        entries = node.entries
        for key, value in entries.items():
            if type(value) in _BUILDERS:
                entries[key] = _finish(value)
        return entries
    return node


def _is_text(node: Any) -> bool:
    return type(node) is _Text or isinstance(node, str)


def _is_list(node: Any) -> bool:
    return type(node) is _List or isinstance(node, list)


def _is_dict(node: Any) -> bool:
    return type(node) is _Dict or isinstance(node, dict)


# ---------------------------------------------------------------------------------------------
# The rules: one decision, two ways to carry it out
#
# ``_decide`` says what a left and a right value make (spec §1.1, §1.2). ``_apply`` carries the
# decision out at once, on plain values, with openJiuwen's own operations: ``merge`` and
# ``merge_dicts`` use it. ``_fold`` carries it out on builders, so that a long ``merge_all``
# stays linear. Both give the same value for the same input.

KEEP, RIGHT, TEXT, LIST, DICT, ATOMIC, OBJECTS = range(7)


def _decide(walk: _Walk, key: Any, left: Any, right: Any, top: bool) -> int:
    """The action for ``left`` + ``right``; ``top`` for ``merge_parser_content``, else a value
    of ``merge_dicts`` under ``key``."""
    cfg = walk.cfg
    if right is None:
        # openJiuwen's merge_dicts stores a right None; merge_parser_content and delta keep left.
        return KEEP if top or cfg.delta else RIGHT
    if cfg.delta and not top and isinstance(key, str) and key in ATOMIC_KEYS:
        return ATOMIC
    if left is None:
        return RIGHT
    if _is_text(left) and isinstance(right, str):
        return TEXT
    if _is_list(left) and isinstance(right, list):
        return LIST
    if _is_dict(left) and isinstance(right, dict):
        return DICT
    if cfg.strict:
        _check_kinds(tuple(walk.path) if top else (*walk.path, key), left, right)
    return OBJECTS if top else RIGHT


def _atomic(left: Any, right: Any) -> Any:
    """[E15] never concatenated: equal values are kept, a real new value replaces."""
    if _absent(right) or left is right or bool(left == right):
        return left
    return right


def _apply(walk: _Walk, key: Any, left: Any, right: Any, depth: int, top: bool) -> Any:
    """Merge two plain values now, as openJiuwen does."""
    action = _decide(walk, key, left, right, top)
    if action == KEEP:
        return left
    if action == RIGHT:
        return right
    if action == TEXT:
        return left + right
    if action == ATOMIC:
        return _atomic(left, right)
    if action == OBJECTS:
        return _merge_objects(walk, left, right, depth)
    if not top:
        walk.path.append(key)
    if action == LIST:
        if walk.cfg.by_index:
            merged = _finish(_concat_list(walk, left, right, depth))
        else:
            merged = left + right
    else:
        merged = _apply_dict(walk, left, right, depth + 1)
    if not top:
        walk.path.pop()
    return merged


def _fold(walk: _Walk, key: Any, node: Any, right: Any, depth: int, top: bool) -> Any:
    """Merge a right value into a node, growing builders instead of copying."""
    action = _decide(walk, key, node, right, top)
    if action == KEEP:
        return node
    if action == RIGHT:
        return right
    if action == TEXT:
        return _concat_text(node, right)
    if action == ATOMIC:
        return _atomic(node, right)
    if action == OBJECTS:
        if type(node) in _BUILDERS:
            # An exact str/list/dict met a value of another type: neither the same-type
            # ``__add__`` nor the model rule can apply, so openJiuwen returns the right value.
            return right
        return _merge_objects(walk, node, right, depth)
    if not top:
        walk.path.append(key)
    if action == LIST:
        merged = _concat_list(walk, node, right, depth)
    else:
        merged = _merge_dict(walk, node, right, depth + 1)
    if not top:
        walk.path.pop()
    return merged


def _merge_objects(walk: _Walk, left: Any, right: Any, depth: int) -> Any:
    """Rules 4-6 of spec §1.1: same-type ``__add__``, pydantic models, else the right value."""
    if (
        hasattr(left, "__add__")
        and type(left) is type(right)
        and not isinstance(left, (int, float, bool))
    ):
        try:
            return left + right
        except (TypeError, NotImplementedError):
            pass
    if hasattr(left, "model_fields") and hasattr(right, "model_fields"):
        mark = len(walk.path)
        try:
            return _merge_models(walk, left, right, depth)
        except (DepthLimitError, CycleError):
            # the merge's own limits are errors, not "cannot rebuild": openJiuwen would have
            # merged these fields, so answering with the right value would be a silent lie.
            raise
        except Exception:
            # openJiuwen: a model that cannot be merged or rebuilt gives the right value.
            del walk.path[mark:]
    return right


def _merge_models(walk: _Walk, left: Any, right: Any, depth: int) -> Any:
    if type(left) is not type(right):
        return right
    left_dict = left.model_dump() if hasattr(left, "model_dump") else left.dict()
    right_dict = right.model_dump() if hasattr(right, "model_dump") else right.dict()
    merged = {}
    # A set union, as openJiuwen iterates it: the order only matters for side effects.
    for name in left_dict.keys() | right_dict.keys():
        merged[name] = _apply(
            walk, None, left_dict.get(name), right_dict.get(name), depth + 1, True
        )
    return type(left)(**merged)


def _enter(walk: _Walk, right: dict[Any, Any], depth: int) -> int:
    """Checks the depth limit and cycles before descending into ``right``; returns its id."""
    if depth > MAX_DEPTH:
        raise DepthLimitError(MAX_DEPTH)
    right_id = id(right)
    if right_id in walk.open_ids:
        raise CycleError(depth)
    walk.open_ids.add(right_id)
    return right_id


def _apply_dict(walk: _Walk, left: Any, right: dict[Any, Any], depth: int) -> Any:
    """openJiuwen's ``merge_dicts``: work on ``left.copy()`` (whatever type that returns)."""
    right_id = _enter(walk, right, depth)
    try:
        result = left.copy()
        for key, right_value in right.items():
            if key in result:
                result[key] = _apply(walk, key, result[key], right_value, depth, False)
            else:
                result[key] = right_value
        return result
    finally:
        walk.open_ids.discard(right_id)


def _merge_dict(walk: _Walk, node: Any, right: dict[Any, Any], depth: int) -> Any:
    """``merge_dicts`` on a builder: left's keys, then right's new keys, in order."""
    if type(node) is not _Dict and type(node) is not dict:
        return _apply_dict(walk, node, right, depth)  # a dict subclass: its own copy()
    right_id = _enter(walk, right, depth)
    try:
        if type(node) is dict:
            node = _Dict(dict(node))
        entries = node.entries
        for key, right_value in right.items():
            if key in entries:
                entries[key] = _fold(walk, key, entries[key], right_value, depth, False)
            else:
                entries[key] = right_value
        return node
    finally:
        walk.open_ids.discard(right_id)


def _concat_text(node: Any, right: str) -> Any:
    if type(right) is str:
        if type(node) is _Text:
            node.pieces.append(right)
            return node
        if type(node) is str:
            return _Text([node, right])
    # A str subclass on either side: its own ``+`` decides, as in openJiuwen.
    return _finish(node) + right


def _concat_list(walk: _Walk, node: Any, right: list[Any], depth: int) -> Any:
    if type(right) is list and type(node) in (_List, list):
        if type(node) is list:
            opened = _List()
            for item in node:
                _append(walk, opened, item, depth)
            node = opened
        for item in right:
            _append(walk, node, item, depth)
        return node
    # A list subclass on either side: its own ``+`` decides.
    return _finish(node) + right


def _append(walk: _Walk, node: _List, item: Any, depth: int) -> None:
    """Add one element; with ``list_merge="by_index"`` it may merge into an earlier one."""
    if walk.cfg.by_index:
        index = _element_index(item)
        if index is not None:
            slot = node.slots.get(index)
            if slot is not None and _ids_consistent(node.items[slot], item):
                walk.path.append(slot)
                node.items[slot] = _merge_dict(walk, node.items[slot], item, depth + 1)
                walk.path.pop()
                return
            node.slots[index] = len(node.items)
    node.items.append(item)


def _element_index(item: Any) -> int | None:
    if not isinstance(item, dict):
        return None
    index = dict.get(item, "index")
    if type(index) is int and _I64_MIN <= index <= _I64_MAX:
        return index
    return None


def _ids_consistent(node: Any, item: dict[Any, Any]) -> bool:
    """Two elements with one index are the same element unless both carry different ids."""
    left_id = node.entries.get("id") if type(node) is _Dict else dict.get(node, "id")
    right_id = dict.get(item, "id")
    if _absent(left_id) or _absent(right_id):
        return True
    return left_id is right_id or bool(left_id == right_id)


def _absent(value: Any) -> bool:
    """Missing, None, blank, or the placeholder ``"null"`` (spec: "absent")."""
    if value is None:
        return True
    if isinstance(value, str):
        # str's own methods, so that a subclass cannot redefine what "blank" means.
        return str.__len__(value) == 0 or str.isspace(value) or str.__eq__(value, "null") is True
    return False


def _kind(value: Any) -> str:
    if type(value) is _Text or isinstance(value, str):
        return "str"
    if type(value) is _List or isinstance(value, list):
        return "list"
    if type(value) is _Dict or isinstance(value, dict):
        return "dict"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__


def _check_kinds(keys: tuple[Any, ...], left: Any, right: Any) -> None:
    """strict=True: values of different kinds cannot merge [E8, E9]."""
    left_kind, right_kind = _kind(left), _kind(right)
    if left_kind != right_kind:
        raise MergeTypeError(keys, left_kind, right_kind)


# ---------------------------------------------------------------------------------------------
# policy="langchain": LangChain's merge_content / merge_dicts / merge_lists (rules §1.4)
#
# The same builders, the same fold: a value LangChain would copy at every ``+`` is grown once
# and turned into a plain ``str`` / ``list`` / ``dict`` at the end.

#: merge_dicts: a string under these keys that equals the left one is kept, not doubled.
_LC_KEEP_EQUAL = frozenset({"id", "output_version", "model_provider"})
#: merge_dicts: an int under these keys is an identity or a time: the right one replaces.
_LC_LAST_WINS = frozenset({"index", "created", "timestamp"})
#: add_usage gives up this deep, as LangChain's ``_dict_int_op`` does.
_LC_USAGE_MAX_DEPTH = 100


def _lc_type(node: Any) -> type:
    """``type(value)`` as LangChain sees it (a builder stands for an exact str/list/dict)."""
    kind = type(node)
    if kind is _Text:
        return str
    if kind is _List:
        return list
    if kind is _Dict:
        return dict
    return kind


def _lc_is_key(key: Any, names: Any) -> bool:
    return isinstance(key, str) and _utf8(key) and key in names


def _utf8(text: str) -> bool:
    """Whether ``text`` is valid Unicode (no lone surrogate): the engine reads only such text
    as a name or a prefix, so the twin does too."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _lc_joined(node: Any) -> Any:
    """A text node as one str (a builder is joined; a long one is rarely asked)."""
    return "".join(node.pieces) if type(node) is _Text else node


def _lc_top(walk: _Walk, node: Any, right: Any, depth: int) -> Any:
    """``merge_content`` for str and list values, ``merge_obj`` for the rest."""
    if right is None:
        return node
    if node is None:
        return right
    if isinstance(right, str):
        if _is_text(node):
            return _concat_text(node, right)
        if _is_list(node):
            return _lc_list_plus_text(walk, node, right)
    elif isinstance(right, list):
        if _is_list(node):
            return _lc_merge_lists(walk, node, right, depth)
        if _is_text(node):
            # merge_content: ``[merged, *content]``, the text first even when empty
            opened = _List()
            opened.items.append(node)
            for item in right:
                _lc_register(opened, item)
            return opened
    elif isinstance(right, dict) and _is_dict(node):
        return _lc_merge_dict(walk, node, right, depth + 1)
    if _lc_type(node) is not type(right):
        raise langchain_conflict("types", _finish(node), right)
    if node is right or bool(node == right):
        return node
    raise langchain_conflict("unequal", node, right)


def _lc_list_plus_text(walk: _Walk, node: Any, right: str) -> Any:
    """merge_content of a list and a str: onto a last str item, else a new item; an empty
    str adds nothing, and neither does any str added to an empty list (LangChain drops it)."""
    if type(node) is not _List:
        node = _lc_open_list(node)
    items = node.items
    if items and _is_text(items[-1]):
        items[-1] = _concat_text(items[-1], right)
    elif right == "":
        pass
    elif items:
        _lc_register(node, right)
    return node


def _lc_open_list(left: Any) -> _List:
    opened = _List()
    for item in left:
        _lc_register(opened, item)
    return opened


def _lc_register(node: _List, item: Any) -> None:
    """Append ``item``; a dict with an ``index`` is remembered under it for merge_lists."""
    position = len(node.items)
    node.items.append(item)
    if isinstance(item, dict):
        index = dict.get(item, "index")
        if isinstance(index, (int, float, str)):
            node.slots.setdefault(index, []).append(position)


def _lc_right_index(item: Any) -> Any:
    """The index merge_lists merges an element by: an int, or a str starting with ``lc_``."""
    if not isinstance(item, dict):
        return None
    index = dict.get(item, "index")
    if isinstance(index, int):
        return index
    if isinstance(index, str) and _utf8(index) and index.startswith("lc_"):
        return index
    return None


def _lc_merge_lists(walk: _Walk, node: Any, right: list[Any], depth: int) -> Any:
    """merge_lists: an element with an index merges into the first earlier element with an
    equal index whose id does not differ (its ``type`` key left out), else it is appended."""
    if type(node) is not _List:
        node = _lc_open_list(node)
    for item in right:
        index = _lc_right_index(item)
        if index is not None:
            for slot in node.slots.get(index, ()):
                target = node.items[slot]
                if _lc_ids_consistent(target, item):
                    element, skip_type = _lc_element(target, item)
                    node.items[slot] = _lc_merge_dict(walk, target, element, depth + 1, skip_type)
                    break
            else:
                _lc_register(node, item)
            continue
        _lc_register(node, item)
    return node


def _lc_get(node: Any, key: str) -> Any:
    """``node.get(key)`` of a dict or a dict builder (a text builder joined first)."""
    if type(node) is _Dict:
        value = node.entries.get(key)
        if type(value) is _Text:
            value = node.entries[key] = _lc_joined(value)
        return value
    return dict.get(node, key)


def _lc_no_id(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value == "")


def _lc_ids_consistent(node: Any, item: dict[Any, Any]) -> bool:
    left_id, right_id = _lc_get(node, "id"), dict.get(item, "id")
    if _lc_no_id(left_id) or _lc_no_id(right_id):
        return True
    return left_id is right_id or bool(left_id == right_id)


def _lc_element(target: Any, item: dict[Any, Any]) -> tuple[dict[Any, Any], bool]:
    """What merge_lists merges into ``target``, and whether its ``type`` is left out: ``item``
    without its ``type``, or, for a ``non_standard`` item with a ``value`` dict, that value
    (without ``type``) as ``extras`` of a typed block or as the ``value`` of a non_standard
    one."""
    left_type = _lc_get(target, "type")
    value = dict.get(item, "value", _NOTHING)
    if left_type and _lc_equals(dict.get(item, "type"), "non_standard") and isinstance(value, dict):
        inner = {k: v for k, v in value.items() if not _lc_is_key(k, ("type",))}
        if not _lc_equals(left_type, "non_standard"):
            return {"extras": inner}, False
        return {"value": inner, "index": dict.get(item, "index")}, False
    return item, "type" in item


def _lc_equals(value: Any, text: str) -> bool:
    return value is not None and (value is text or bool(value == text))


def _lc_merge_dict(
    walk: _Walk, node: Any, right: dict[Any, Any], depth: int, skip_type: bool = False
) -> Any:
    """merge_dicts: a missing or None left takes the right value, a right None changes
    nothing, values of different types raise, the rest merge by ``_lc_value``; with
    ``skip_type``, ``right``'s ``type`` is left out (merge_lists)."""
    right_id = _enter(walk, right, depth)
    try:
        if type(node) is not _Dict:
            node = _Dict(dict(node))
        entries = node.entries
        for key, right_value in right.items():
            if skip_type and _lc_is_key(key, ("type",)):
                continue
            if key not in entries:
                entries[key] = right_value
                continue
            left_value = entries[key]
            if left_value is None:
                if right_value is not None:
                    entries[key] = right_value
            elif right_value is not None:
                entries[key] = _lc_value(walk, key, left_value, right_value, depth)
        return node
    finally:
        walk.open_ids.discard(right_id)


def _lc_value(walk: _Walk, key: Any, left: Any, right: Any, depth: int) -> Any:
    if _lc_type(left) is not type(right):
        raise langchain_conflict("kwargs_type", key)
    if isinstance(right, str):
        if _lc_is_key(key, ("index",)):
            joined = _lc_joined(left)
            if _utf8(joined) and joined.startswith("lc_"):
                return joined
        elif _lc_is_key(key, _LC_KEEP_EQUAL):
            joined = _lc_joined(left)
            if joined is right or bool(joined == right):
                return joined
        return _concat_text(left, right)
    if isinstance(right, dict):
        return _lc_merge_dict(walk, left, right, depth + 1)
    if isinstance(right, list):
        return _lc_merge_lists(walk, left, right, depth)
    if left is right or bool(left == right):
        return left
    if isinstance(left, int) and not isinstance(left, bool):
        return right if _lc_is_key(key, _LC_LAST_WINS) else operator.add(left, right)
    raise langchain_conflict("kwargs_unsupported", key, left)


def _lc_merge_all(walk: _Walk, items: Iterable[Any]) -> Any:
    iterator = iter(items)
    node = next(iterator, _NOTHING)
    if node is _NOTHING:
        return None
    for right in iterator:
        node = _lc_top(walk, node, right, 0)
    return _finish(node)


def _lc_usage_add(into: dict[Any, Any], right: dict[Any, Any], depth: int) -> None:
    """LangChain's ``_dict_int_op(left, right, operator.add)``, into ``into`` (a private copy):
    ints add (a missing one counts 0), dicts recurse, anything else raises."""
    if depth >= _LC_USAGE_MAX_DEPTH:
        raise langchain_conflict("usage_depth")
    for key in [*into, *(k for k in right if k not in into)]:
        left_value = into.get(key, 0)
        right_value = right.get(key, 0)
        if isinstance(left_value, int) and isinstance(right_value, int):
            into[key] = left_value + right_value
            continue
        left_value = into.get(key, {})
        right_value = right.get(key, {})
        if isinstance(left_value, dict) and isinstance(right_value, dict):
            # the left side is already a private copy at every level
            merged: dict[Any, Any] = left_value if key in into else {}
            _lc_usage_add(merged, right_value, depth + 1)
            into[key] = merged
            continue
        present = [side[key] for side in (into, right) if key in side]
        raise langchain_conflict("usage_types", *present)


def _lc_usage_copy(usage: dict[Any, Any], depth: int) -> dict[Any, Any]:
    if depth > MAX_DEPTH:
        raise DepthLimitError(MAX_DEPTH)
    return {k: _lc_usage_copy(v, depth + 1) if isinstance(v, dict) else v for k, v in usage.items()}


#: add_ai_message_chunks: the id kinds LangChain prefers, best last.
_LC_RUN_PREFIX = "lc_run-"
_LC_PREFIX = "lc_"


def _lc_id_rank(chunk_id: Any) -> int:
    """2 for a provider's id, 1 for ``lc_run-*``, 0 for another ``lc_*``; -1 for none."""
    if not chunk_id:
        return -1
    if not isinstance(chunk_id, str) or not _utf8(chunk_id):
        return 2
    if chunk_id.startswith(_LC_RUN_PREFIX):
        return 1
    return 0 if chunk_id.startswith(_LC_PREFIX) else 2


#: The fields of an ``AIMessageChunk`` that ``add_ai_message_chunks`` merges, in the order
#: LangChain merges them (so the first error is LangChain's first error).
LANGCHAIN_CHUNK_FIELDS = (
    "content",
    "additional_kwargs",
    "response_metadata",
    "tool_call_chunks",
    "usage_metadata",
    "id",
    "chunk_position",
)


def add_ai_message_chunks(items: Iterable[Any]) -> dict[str, Any] | None:
    """LangChain's ``reduce(operator.add, chunks)`` over ``AIMessageChunk`` fields, in linear
    time: each item is a dict of ``LANGCHAIN_CHUNK_FIELDS`` (a missing one counts as None).
    ``content`` merges as ``merge_content``, the dicts as ``merge_dicts``,
    ``tool_call_chunks`` as ``merge_lists`` (``policy="langchain"``), ``usage_metadata`` adds
    up as ``add_usage``, ``id`` is the best ranked (a provider's, then ``lc_run-*``, then
    another; the first of a rank), ``chunk_position`` is ``"last"`` if any chunk's is. None if
    there are no items."""
    walk = _Walk(_Config("langchain", "concat", False))
    nodes: list[Any] = [_NOTHING] * 4
    usage: Any = None
    best_id: Any = None
    best_rank = -1
    last = False
    seen = False
    for item in items:
        if not isinstance(item, dict):
            raise wrong_type("items", "an iterable of dict", item)
        for field in range(4):
            value = dict.get(item, LANGCHAIN_CHUNK_FIELDS[field])
            node = nodes[field]
            nodes[field] = value if node is _NOTHING else _lc_top(walk, node, value, 0)
        right_usage = dict.get(item, "usage_metadata")
        if right_usage:
            if usage is None:
                if not isinstance(right_usage, dict):
                    raise langchain_conflict("usage_types", right_usage)
                usage = _lc_usage_copy(right_usage, 0)
            else:
                if not isinstance(right_usage, dict):
                    raise langchain_conflict("usage_types", right_usage)
                _lc_usage_add(usage, right_usage, 0)
        chunk_id = dict.get(item, "id")
        rank = _lc_id_rank(chunk_id)
        if rank > best_rank and best_rank < 2:
            best_id, best_rank = chunk_id, rank
        if _lc_equals(dict.get(item, "chunk_position"), "last"):
            last = True
        seen = True
    if not seen:
        return None
    return {
        "content": _finish(nodes[0]),
        "additional_kwargs": _finish(nodes[1]),
        "response_metadata": _finish(nodes[2]),
        "tool_call_chunks": _finish(nodes[3]),
        "usage_metadata": usage,
        "id": best_id,
        "chunk_position": "last" if last else None,
    }


# ---------------------------------------------------------------------------------------------
# Public functions


def merge(
    left: Any,
    right: Any,
    *,
    policy: str = "openjiuwen",
    list_merge: str = "concat",
    strict: bool = False,
) -> Any:
    """Merge two values (rules §1).

    ``policy="openjiuwen"`` returns what openJiuwen's ``merge_parser_content`` returns;
    ``policy="delta"`` keeps a left value against a right ``None``, never concatenates the
    atomic keys (``ATOMIC_KEYS``), can merge list elements by their ``index``
    (``list_merge="by_index"``) and can refuse mismatched kinds (``strict=True``).
    """
    walk = _Walk(_Config(policy, list_merge, strict))
    if walk.cfg.langchain:
        return _finish(_lc_top(walk, left, right, 0))
    return _apply(walk, None, left, right, 0, True)


def merge_all(
    items: Iterable[Any],
    *,
    policy: str = "openjiuwen",
    list_merge: str = "concat",
    strict: bool = False,
) -> Any:
    """``functools.reduce(merge, items)`` in time linear in the total size; ``None`` if empty."""
    walk = _Walk(_Config(policy, list_merge, strict))
    if walk.cfg.langchain:
        return _lc_merge_all(walk, items)
    iterator = iter(items)
    node = next(iterator, _NOTHING)
    if node is _NOTHING:
        return None
    for right in iterator:
        node = _fold(walk, None, node, right, 0, True)
    return _finish(node)


def merge_dicts(left: dict[Any, Any], right: dict[Any, Any]) -> dict[Any, Any]:
    """openJiuwen's ``merge_dicts``: str and list values concatenate, dicts recurse."""
    if not isinstance(left, dict):
        raise wrong_type("left", "dict", left)
    if not isinstance(right, dict):
        raise wrong_type("right", "dict", right)
    walk = _Walk(_Config("openjiuwen", "concat", False))
    result: dict[Any, Any] = _apply_dict(walk, left, right, 1)
    return result


def concat_token_ids(left: Any, right: Any) -> Any:
    """Streamed token ids: an empty side gives the other, two lists concatenate, else right."""
    if not left:
        return right
    if not right:
        return left
    if isinstance(left, list) and isinstance(right, list):
        return left + right
    return right


def merge_logprobs(left: Any, right: Any) -> Any:
    """Per-chunk logprobs: dicts merge per key (lists concatenate), lists concatenate."""
    if left is None:
        return right
    if right is None:
        return left
    if isinstance(left, dict) and isinstance(right, dict):
        merged = dict(left)
        for key, right_value in right.items():
            left_value = merged.get(key)
            if isinstance(left_value, list) and isinstance(right_value, list):
                merged[key] = left_value + right_value
            else:
                merged[key] = right_value
        return merged
    if isinstance(left, list) and isinstance(right, list):
        return left + right
    return right
