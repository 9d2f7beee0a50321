"""The twin of the engine's chunk merge (spec §3–§5, §8): ``left + right`` for message chunks.

A chunk is the fold of the *leaves* it was built from (the chunks a user constructed). The
schema layer (``fastmerge._message_leaf``) turns a constructor's arguments into a leaf: a dict
of the fields that were given (an assistant message's are declared in
``fastmerge._message_fields``), with parts as plain dicts keyed by ``"part"``. This module
folds leaves into a private :class:`_State` and turns the state back into plain data
(:func:`_materialize`).

Value semantics in linear time: ``a + b`` returns a *view* ``(acc, n)`` on a shared
accumulator that holds the leaves and the state after folding them. When ``a`` is the newest
view of its accumulator (``acc = acc + chunk``), ``b``'s leaves are folded into the state in
place: O(size of b). Otherwise the sum starts a new accumulator from ``a``'s leaves (a copy, as
a branch must). A view reads the live state when it is the newest; an older view replays its
leaves once and caches the result, so it reads exactly as it did. Because a sum always folds
leaves, ``(a + b) + c == a + (b + c)``.

The package mirrors the engine's ``src/engine/chunks/`` file for file: :mod:`.state`,
:mod:`.fold`, :mod:`.parts`, :mod:`.calls`, :mod:`.usage`, :mod:`.merge`, :mod:`.rebuild` and
:mod:`.read`; this module is ``mod.rs`` (the core every chunk class derives from, ``+`` and
``fold_chunks``). The engine's ``leaf.rs`` (a leaf read once into typed records), ``map.rs``
(an insertion-ordered map with Python dict semantics for host keys) and ``append.rs`` (the
fold's shortcuts for hot text and argument deltas) are how Rust makes the same rules fast; the
twin reads its leaves as dicts and has no counterpart for them.
"""

from __future__ import annotations

import threading
from typing import Any, Iterable

from ... import errors
from ..._frozen import freeze_tree as freeze_tree  # a message's read-only logprobs
from .fold import _fold
from .read import _materialize
from .state import DEFAULT, FAMILIES, Options, _State
from .state import absent as absent
from .state import copy_tree as copy_tree
from .usage import usage_total as usage_total

__all__ = [
    "ChunkCore",
    "Options",
    "absent",
    "copy_tree",
    "fold",
    "fold_chunks",
    "freeze_tree",
    "usage_total",
]


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
