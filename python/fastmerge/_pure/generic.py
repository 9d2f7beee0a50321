"""Generic merge (spec §1): the ``openjiuwen`` and ``delta`` policies, in linear time.

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

from typing import Any, Iterable

from ..errors import (
    MAX_DEPTH,
    CycleError,
    DepthLimitError,
    MergeTypeError,
    invalid_option,
    requires_delta,
    wrong_type,
)

__all__ = [
    "ATOMIC_KEYS",
    "LIST_MERGES",
    "MAX_DEPTH",
    "POLICIES",
    "concat_token_ids",
    "merge",
    "merge_all",
    "merge_dicts",
    "merge_logprobs",
]

POLICIES = ("openjiuwen", "delta")
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
    __slots__ = ("delta", "by_index", "strict")

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
    """An exact ``list`` still growing; ``slots`` maps an element ``index`` to its position."""

    __slots__ = ("items", "slots")

    def __init__(self) -> None:
        self.items: list[Any] = []
        self.slots: dict[int, int] = {}


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
