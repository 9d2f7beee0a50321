"""LangChain's ``AIMessageChunk`` addition (``src/engine/generic/langchain_chunks.rs``):
``add_ai_message_chunks``, with ``add_usage`` for the usage and LangChain's preference among
the chunks' ids."""

from __future__ import annotations

from typing import Any, Iterable

from ...errors import MAX_DEPTH, DepthLimitError, langchain_conflict, wrong_type
from .config import _Config
from .langchain import _lc_equals, _lc_top, _utf8
from .walk import _NOTHING, _finish, _Walk

#: add_usage gives up this deep, as LangChain's ``_dict_int_op`` does.
_LC_USAGE_MAX_DEPTH = 100


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
