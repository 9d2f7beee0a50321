"""The ``delta`` policy's own rules (``src/engine/generic/delta.rs``): identity and state keys
never concatenated (:data:`ATOMIC_KEYS`, [E15]), ``list_merge="by_index"`` (list elements merged
by their ``index`` unless their ids differ), and ``strict=True``'s kind checks with the key path
they report. Both options require the policy.

The merge core (``walk``) calls these rules; they call nothing of it back, so that the core can
import them without an import circle (the engine's ``append`` is split in two here: the rule of
which earlier element an element merges into, ``_merge_slot``, and the merge, ``walk._append``).
"""

from __future__ import annotations

from typing import Any

from ...errors import MergeTypeError
from ..nodes import _Dict, _List, _Text

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


def _atomic(left: Any, right: Any) -> Any:
    """[E15] never concatenated: equal values are kept, a real new value replaces."""
    if _absent(right) or left is right or bool(left == right):
        return left
    return right


def _merge_slot(node: _List, item: Any) -> int | None:
    """``list_merge="by_index"``: the position of the earlier element ``item`` merges into, or
    None (then ``item`` is appended, and its index, if it has one, now names it)."""
    index = _element_index(item)
    if index is not None:
        slot: int | None = node.slots.get(index)
        if slot is not None and _ids_consistent(node.items[slot], item):
            return slot
        node.slots[index] = len(node.items)
    return None


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
