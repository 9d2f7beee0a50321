"""Generic merge (spec §1): the ``openjiuwen``, ``delta`` and ``langchain`` policies, in linear
time (``src/engine/generic/mod.rs``).

``merge(a, b)`` must return what openJiuwen's ``merge_parser_content`` returns: it performs the
very operations openJiuwen performs (``+``, ``dict.copy()``, ``key in d``), so the result is the
same object graph, type for type. ``merge_all(items)`` must return what
``functools.reduce(merge, items)`` returns, without the quadratic copying of that reduce: its
fold keeps *builders* (``fastmerge._pure.nodes``) for the exact ``str``, ``list`` and ``dict``
values it is still growing (pieces of text, items of a list, entries of a dict) and turns them
into Python objects once, at the end; everything else (subclasses, numbers, models, objects
with ``__add__``) it merges at once, like ``merge``.

This module holds the entry points; one concern per module below it, as in the engine:
``config`` (the options and their checks), ``walk`` (the merge core every policy runs on),
``delta`` (the ``delta`` policy's own rules: atomic keys, ``list_merge="by_index"``, strict kind
checks), ``langchain`` (policy ``langchain``: LangChain's merge_content / merge_dicts /
merge_lists) and ``langchain_chunks`` (LangChain's ``AIMessageChunk`` addition,
``add_ai_message_chunks``).
"""

from __future__ import annotations

from typing import Any, Iterable

from ...errors import MAX_DEPTH, wrong_type
from .config import LIST_MERGES, POLICIES, _Config
from .delta import ATOMIC_KEYS
from .langchain import _lc_merge_all, _lc_top
from .langchain_chunks import add_ai_message_chunks
from .walk import _NOTHING, _apply, _apply_dict, _finish, _fold, _Walk

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
