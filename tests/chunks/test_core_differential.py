"""The extension's ``ChunkCore`` against the twin's (``fastmerge._pure.chunks``): random leaves
of every family and part kind, folded with ``+`` (and ``sum``, ``fold_chunks`` with every
option), read with ``_data()`` / ``_data(True)``: equal data of identical types
(``canonical``), identical ``orjson`` bytes, or the same exception class and message.

The pools are small on purpose, so that ids, names and indexes repeat and every rule of the
tool-call resolver (spec §4) fires, and so do the anomalies of spec §8.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from _support.chunk_leaves import OPTIONS, _both, _chunk, _families, _fold_plus, _outcome, streams
from conftest import RUST, canonical
from hypothesis import given, settings
from hypothesis import strategies as st

from fastmerge._pure import chunks as twin

pytestmark = pytest.mark.skipif(RUST is None, reason="the Rust backend is not under test")

EXAMPLES = max(500, settings.default.max_examples)

# ---------------------------------------------------------------------------------------------
# Leaves


# ---------------------------------------------------------------------------------------------
# Comparison


@pytest.mark.single_run
@settings(max_examples=EXAMPLES)
@given(streams())
def test_plus(stream: tuple[str, list[dict[str, Any]]]) -> None:
    family, leaves = stream
    before = canonical(leaves)
    _both(lambda m: _fold_plus(m, family, leaves))
    assert canonical(leaves) == before, "a fold changed its leaves"


@pytest.mark.single_run
@settings(max_examples=EXAMPLES)
@given(streams(), st.sampled_from(OPTIONS))
def test_fold_chunks(stream: tuple[str, list[dict[str, Any]]], options: dict[str, Any]) -> None:
    family, leaves = stream

    def build(module: ModuleType) -> Any:
        chunks = [_chunk(module, f, leaf) for f, leaf in zip(_families(family, leaves), leaves)]
        return module.fold_chunks(chunks, **options)

    _both(build)


@pytest.mark.single_run
@settings(max_examples=EXAMPLES)
@given(streams(), st.integers(0, 5), st.integers(0, 5))
def test_views_and_branches(
    stream: tuple[str, list[dict[str, Any]]], cut: int, branch: int
) -> None:
    """Older views read as they did; extending an older view branches off a copy."""
    family, leaves = stream
    fams = _families(family, leaves)

    def build(module: ModuleType) -> Any:
        chunks = [_chunk(module, f, leaf) for f, leaf in zip(fams, leaves)]
        views = [chunks[0]]
        for chunk in chunks[1:]:
            try:
                views.append(views[-1] + chunk)
            except Exception:  # noqa: BLE001 - the failed fold is compared below
                break
        old = views[min(cut, len(views) - 1)]
        extra = chunks[min(branch, len(chunks) - 1)]

        class Result:
            """Reads every view, a branch from an older one, and the views again."""

            cache: dict[bool, Any] = {}

            def _data(self, finish: bool = False) -> Any:
                if finish not in self.cache:
                    out = [v._data(finish) for v in views]
                    out.append((old + extra)._data(finish))
                    out.append(old._data(finish))
                    out.append(views[-1]._data(finish))
                    self.cache[finish] = out
                return self.cache[finish]

        return Result()

    rust = _outcome(lambda: build(RUST))
    python = _outcome(lambda: build(twin))
    assert rust == python


@pytest.mark.single_run
@settings(max_examples=EXAMPLES)
@given(streams())
def test_sum(stream: tuple[str, list[dict[str, Any]]]) -> None:
    family, leaves = stream
    fams = _families(family, leaves)
    _both(lambda m: sum(_chunk(m, f, leaf) for f, leaf in zip(fams, leaves)))


# ---------------------------------------------------------------------------------------------
# Explicit cases


@pytest.mark.single_run
@pytest.mark.parametrize("module", [RUST, twin], ids=["rust", "python"])
def test_subclass_keeps_its_type_without_init(module: ModuleType) -> None:
    calls = []

    class C(module.ChunkCore):  # type: ignore[misc,name-defined]
        __slots__ = ()

        def __init__(self, text: str) -> None:
            calls.append(text)
            self._init("assistant", {"parts": [{"part": "text", "text": text}]})

    a, b = C("x"), C("y")
    assert calls == ["x", "y"]
    c = a + b
    assert type(c) is C
    assert type(c + C("z")) is C
    assert calls == ["x", "y", "z"]
    assert c._data()["parts"][0]["text"] == "xy"
    assert type(sum([a, b])) is C


@pytest.mark.single_run
def test_errors_match() -> None:
    for build in (
        lambda m: _chunk(m, "nope", {}),
        lambda m: _chunk(m, 3, {}),
        lambda m: _chunk(m, "base", []),
        lambda m: _chunk(m, "base", {}) + 1,
        lambda m: _chunk(m, "tool", {}) + _chunk(m, "base", {}),
        lambda m: _chunk(m, "assistant", {}) + _chunk(m, "tool", {}),
        lambda m: m.ChunkCore() + _chunk(m, "base", {}),
        lambda m: m.ChunkCore()._data(),
        lambda m: m.fold_chunks([]),
        lambda m: m.fold_chunks([1]),
        lambda m: m.fold_chunks([], strict=1),
        lambda m: m.fold_chunks([], signature_merge=b"x"),
        lambda m: m.fold_chunks([], signature_merge="x", usage=3),
        lambda m: m.fold_chunks([], usage="avg"),
        lambda m: _chunk(m, "assistant", {"parts": [{"text": "x"}]}),
        lambda m: _chunk(m, "assistant", {"parts": 5}),
        lambda m: _chunk(m, "assistant", {"parts": ["x"]}),
        lambda m: _chunk(m, "assistant", {"parts": [{"part": "text", "index": []}]}),
        lambda m: _chunk(m, "assistant", {"parts": [{"part": "text", "text": 5}]}),
        lambda m: _chunk(m, "assistant", {"parts": [{"part": "tool_call", "id": ["x"]}]}),
        lambda m: _chunk(m, "assistant", {"finish_reason": ["x"]}),
        lambda m: _chunk(m, "assistant", {"anomalies": [1]}),
    ):
        _both(build)
    for module in (RUST, twin):
        chunk = _chunk(module, "base", {})
        with pytest.raises(TypeError, match="only once"):
            chunk._init("base", {})
        assert (0 + chunk) is chunk


@pytest.mark.single_run
def test_leaves_are_the_dicts_given() -> None:
    leaves = [{"parts": [{"part": "text", "text": str(i)}]} for i in range(4)]
    for module in (RUST, twin):
        acc = _chunk(module, "assistant", leaves[0])
        for leaf in leaves[1:]:
            acc = acc + _chunk(module, "assistant", leaf)
        got = acc._leaves()
        assert got == leaves and all(a is b for a, b in zip(got, leaves))
