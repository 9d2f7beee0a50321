"""Every recorded stream of ``tests/corpus``, one benchmark per provider (corpus folder) and
input form: ``orjson.loads`` of every stream's lines beside ``aggregate`` of the same streams
from their bytes, their dicts and their SDK objects (``_corpus.py``), on the Rust backend.

Before timing, each stream's message from dicts and from SDK objects is checked against the
one from bytes (``_corpus.check_forms``); each timed run returns every stream's message, whose
text, reasoning, tool calls, finish reason and status must equal those from bytes. The ratios
per stream, median and worst per provider, are ``python benches/corpus.py``'s.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest
from _corpus import (
    KINDS,
    NO_SDK,
    CorpusStream,
    check_forms,
    corpus_streams,
    essentials,
    rust_aggregate,
)
from _corpus import orjson_lines as _orjson_lines

FORMS = ("orjson", "bytes", "dicts", "sdk")


@functools.cache
def _streams(folder: str) -> list[CorpusStream]:
    return corpus_streams(folder)


@functools.cache
def _expected(folder: str) -> list[tuple[Any, ...]]:
    """Every stream's essentials from bytes, after checking the other forms against it."""
    aggregate = rust_aggregate()
    return [essentials(check_forms(s, aggregate)) for s in _streams(folder)]


@pytest.fixture(scope="module", autouse=True)
def _free_streams() -> Any:
    yield
    _streams.cache_clear()
    _expected.cache_clear()


def test_every_corpus_folder_is_benchmarked() -> None:
    """A new corpus folder is benchmarked, or this fails (the map is the conformance tests')."""
    from _corpus import CORPUS

    on_disk = {p.name for p in CORPUS.iterdir() if p.is_dir()}
    assert on_disk == set(KINDS)
    assert all(_streams(folder) for folder in KINDS)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("folder", list(KINDS))
def test_corpus(benchmark: Any, folder: str, form: str) -> None:
    """Every stream of ``folder`` from ``form`` (orjson: its lines parsed)."""
    streams = _streams(folder)
    expected = _expected(folder)
    benchmark.group = f"corpus: {folder}"
    benchmark.extra_info.update(
        kind="corpus",
        provider=streams[0].provider,
        form=form,
        streams=len(streams),
        events=sum(s.events for s in streams),
    )
    if form == "orjson":
        lines = [s.lines for s in streams]
        counts = benchmark(lambda: [_orjson_lines(x) for x in lines])
        assert counts == [s.events for s in streams]
        return
    if form == "sdk" and folder in NO_SDK:
        pytest.skip(f"{folder}: {NO_SDK[folder]}")
    aggregate = rust_aggregate()
    inputs = [(getattr(s, "data" if form == "bytes" else form), s.provider) for s in streams]
    messages = benchmark(lambda: [aggregate(data, provider) for data, provider in inputs])
    assert [essentials(m) for m in messages] == expected
