"""The merge core every policy runs on (``src/engine/generic/walk.rs``): the state of one merge
call (``_Walk``), what a left and a right value make (``_decide``), carried out at once on plain
values (``_apply``) or on builders (``_fold``), with the depth limit and cycle check every descent
passes through (``_enter``), and ``_finish``, which turns a builder into its Python value. The
``delta`` rules (``delta``) and the ``langchain`` rules (``langchain``) sit in their own modules.
"""

from __future__ import annotations

from typing import Any

from ...errors import MAX_DEPTH, CycleError, DepthLimitError
from ..nodes import _BUILDERS, _Dict, _List, _Text
from .config import _Config
from .delta import ATOMIC_KEYS, _atomic, _check_kinds, _merge_slot


class _Walk:
    """The state of one merge call: its options, the keys down to here, the containers open."""

    __slots__ = ("cfg", "path", "open_ids")

    def __init__(self, cfg: _Config) -> None:
        self.cfg = cfg
        self.path: list[Any] = []
        # ids of the right-hand dicts being merged along the current path: meeting one again
        # means the value contains itself, and the merge would never end.
        self.open_ids: set[int] = set()


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
        slot = _merge_slot(node, item)
        if slot is not None:
            walk.path.append(slot)
            node.items[slot] = _merge_dict(walk, node.items[slot], item, depth + 1)
            walk.path.pop()
            return
    node.items.append(item)
