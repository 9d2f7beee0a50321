"""Builders for the values a fold is still growing (``src/engine/nodes.rs``): text pieces, list
items, dict entries. Each is turned into one Python value at the end (``generic.walk._finish``),
so a fold of n deltas costs O(total size) instead of openJiuwen's O(n²) copying.

A *node* is a builder (``_Text``, ``_List``, ``_Dict``) or a plain value (a leaf, never changed).
Builders are private to one call: no input is ever mutated, and a result never aliases an input
container that the merge changed.
"""

from __future__ import annotations

from typing import Any


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
