"""Read-only JSON trees and their copies: the low-level helpers both backends use.

The twin (``fastmerge._pure``) and the Rust bindings import these from here, never from the
public layer (``fastmerge.parts``, ``fastmerge.messages``), so that neither backend imports
upward. ``json_copy`` copies a field's containers (the constructors' rule against aliasing a
caller's data); ``freeze_tree`` makes a message's logprobs read-only without copying on read."""

from __future__ import annotations

from typing import Any

from .errors import MAX_DEPTH, DepthLimitError

__all__ = ["SCALARS", "FrozenDict", "FrozenList", "freeze_tree", "json_copy"]


def json_copy(value: Any, depth: int = 0) -> Any:
    """A copy of the dict/list containers of ``value`` (leaves shared). Containers nested
    deeper than :data:`fastmerge.MAX_DEPTH` levels (``value`` is level 1) raise
    :class:`fastmerge.DepthLimitError`: the chunk and message constructors copy their fields
    with it, and the twin's chunk state copies with it (the engine's ``own`` counts the same)."""
    if isinstance(value, dict):
        if depth >= MAX_DEPTH:
            raise DepthLimitError(MAX_DEPTH)
        # scalars are returned as they are: not calling for them is most of the speed
        return {k: v if type(v) in SCALARS else json_copy(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        if depth >= MAX_DEPTH:
            raise DepthLimitError(MAX_DEPTH)
        return [v if type(v) in SCALARS else json_copy(v, depth + 1) for v in value]
    return value


SCALARS = frozenset((str, int, float, bool, type(None)))


def _read_only(self: Any, *args: Any, **kwargs: Any) -> Any:
    raise TypeError(
        f"a message's {type(self).__name__} is read-only: change a copy "
        "(copy.deepcopy(...), or message.to_dict())"
    )


class FrozenList(list[Any]):
    """A read-only ``list``: what ``message.logprobs`` is made of (with :class:`FrozenDict`).
    It is a ``list`` (``isinstance``, ``==`` with lists, ``json`` / ``orjson``), every method
    that would change it raises ``TypeError``, and ``copy.copy`` / ``copy.deepcopy`` / pickle
    give plain lists. A message reads the same object every time: nothing is copied."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _read_only
    append = extend = insert = pop = remove = clear = sort = reverse = _read_only

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return json_copy(self)  # type: ignore[no-any-return]

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))


class FrozenDict(dict[str, Any]):
    """A read-only ``dict``; see :class:`FrozenList`."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _read_only
    pop = popitem = clear = update = setdefault = _read_only

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return json_copy(self)  # type: ignore[no-any-return]

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self),))


def freeze_tree(value: Any, depth: int = 0) -> Any:
    """``value`` with every dict and list, at every depth, copied as a :class:`FrozenDict` /
    :class:`FrozenList` (other values shared); the depth limit of :func:`json_copy`. A tree
    already frozen is returned as it is."""
    if type(value) is FrozenDict or type(value) is FrozenList:
        return value
    return _freeze(value, depth)


def _freeze(value: Any, depth: int) -> Any:
    if isinstance(value, dict):
        if depth >= MAX_DEPTH:
            raise DepthLimitError(MAX_DEPTH)
        out = FrozenDict()
        for k, v in value.items():
            dict.__setitem__(out, k, v if type(v) in SCALARS else _freeze(v, depth + 1))
        return out
    if isinstance(value, list):
        if depth >= MAX_DEPTH:
            raise DepthLimitError(MAX_DEPTH)
        out_list = FrozenList()
        for v in value:
            list.append(out_list, v if type(v) in SCALARS else _freeze(v, depth + 1))
        return out_list
    return value
