"""``policy="langchain"`` (``src/engine/generic/langchain.rs``): LangChain's ``merge_content``,
``merge_dicts`` and ``merge_lists`` (rules §1.4), on the merge core's builders: a value LangChain
would copy at every ``+`` is grown once and turned into a plain ``str`` / ``list`` / ``dict`` at
the end.
"""

from __future__ import annotations

import operator
from typing import Any, Iterable

from ...errors import langchain_conflict
from ..nodes import _Dict, _List, _Text
from .walk import _NOTHING, _concat_text, _enter, _finish, _is_dict, _is_list, _is_text, _Walk

#: merge_dicts: a string under these keys that equals the left one is kept, not doubled.
_LC_KEEP_EQUAL = frozenset({"id", "output_version", "model_provider"})
#: merge_dicts: an int under these keys is an identity or a time: the right one replaces.
_LC_LAST_WINS = frozenset({"index", "created", "timestamp"})


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
