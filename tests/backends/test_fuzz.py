"""Differential fuzz, kept: the Rust engine against its pure-Python twin on inputs made from
the corpus and damaged (``_fuzz.py``), and the engine against itself where two of its paths
must agree.

- provider streams: each corpus stream's first lines as JSON lines, SSE events (LF or CRLF)
  or a JSON array, with byte flips, truncation, lines dropped, duplicated or swapped, a part
  replaced by an array, null, number or string: the
  engine's fast path, its generic path and the twin give the same choices or the same error;
  fed in pieces, the same as fed whole;
- batch logs: those streams interleaved under keys in random wrappers, across files, plain or
  compressed in members, maybe cut, followed by bytes or with bytes flipped inside a member
  (E106): the engine with one and two jobs and the twin give the same items in the same
  places and the same error; and a log as written gives for each key what a fresh
  aggregator gives for the key's events;
- generic merges (``merge``, ``merge_all``) of hostile values (``_values.py``).

The test command runs a smoke budget of each; ``FASTMERGE_FUZZ_EXAMPLES=N`` (``make fuzz``)
draws N inputs per test. A difference fails with the input that shrank as a Python literal.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _support.fuzz import (
    aggregated,
    examples,
    folded,
    items,
    log_files,
    log_records,
    logs,
    options_of,
    stream_bytes,
    streams,
)
from _support.values import options, pairs, sequences
from conftest import canonical, outcome
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

Both = tuple[ModuleType, ModuleType]

_SETTINGS = {
    "deadline": None,
    "database": None,
    "print_blob": True,
    "suppress_health_check": list(HealthCheck),
}


def _generic(module: ModuleType, data: bytes, pieces: list[int] | None = None) -> Any:
    """``folded`` on the engine's generic path (its typed fast paths switched off)."""
    os.environ["FASTMERGE_GENERIC_EVENTS"] = "1"
    try:
        return folded(module, data, pieces)
    finally:
        del os.environ["FASTMERGE_GENERIC_EVENTS"]


@pytest.mark.differential
@settings(max_examples=examples(500), **_SETTINGS)
@given(streams(), st.lists(st.integers(0, 1 << 20), max_size=3))
def test_streams_alike(both: Both, spec: Any, cuts: list[int]) -> None:
    rust, python = both
    data = stream_bytes(spec)
    note(f"stream bytes: {data!r}")
    pieces = sorted({cut % (len(data) + 1) for cut in cuts})
    fast = folded(rust, data)
    assert fast == folded(python, data), f"rust != twin for {spec!r}"
    assert fast == _generic(rust, data), f"fast path != generic path for {spec!r}"
    if pieces:
        assert folded(rust, data, pieces) == fast, f"rust fed at {pieces} for {spec!r}"
        assert folded(python, data, pieces) == fast, f"twin fed at {pieces} for {spec!r}"


def _key_events(spec: dict[str, Any]) -> dict[str, list[Any]] | None:
    """Each key's events in the order its stream's result reads them (with ``order_by``,
    stably sorted by their order values), under the key's text; None when not known."""
    _, events = log_records(spec)
    if events is None:
        return None
    if options_of(spec)["order_by"] is not None:
        return {
            str(k): [e for _, e in sorted(pairs, key=lambda p: p[0])] for k, pairs in events.items()
        }
    return {str(k): [e for _, e in pairs] for k, pairs in events.items()}


@pytest.mark.differential
@settings(max_examples=examples(250), **_SETTINGS)
@given(logs())
def test_batch_logs_alike(both: Both, spec: dict[str, Any]) -> None:
    rust, python = both
    with tempfile.TemporaryDirectory() as folder:
        paths, whole = log_files(spec, Path(folder))
        note(f"files: {[Path(p).read_bytes() for p in paths]!r}")
        options = options_of(spec)
        one = items(rust, paths, jobs=1, **options)
        assert one == items(python, paths, **options), f"rust != twin for {spec!r}"
        assert one == items(rust, paths, jobs=2, **options), f"jobs 1 != jobs 2 for {spec!r}"
        os.environ["FASTMERGE_GENERIC_EVENTS"] = "1"
        try:
            generic = items(rust, paths, jobs=1, **options)
        finally:
            del os.environ["FASTMERGE_GENERIC_EVENTS"]
        assert one == generic, f"fast path != generic path for {spec!r}"
    expected = _key_events(spec) if whole else None
    results = [item for item in one if item[0] == "stream"]
    event(f"ended by an error: {bool(one) and one[-1][0] == 'raise'}")
    if expected is None or len(results) != len(one) or len(results) != len(expected):
        return
    event("each key's result checked against an aggregator")
    # one result per key: what an aggregator gives for the key's events
    for _, key, provider, choices, error in (item[:5] for item in results):
        assert aggregated(rust, expected[key]) == (provider, choices if error is None else error)


@pytest.mark.differential
@settings(max_examples=examples(1000), **_SETTINGS)
@given(pairs(), options())
def test_merge_alike(both: Both, pair: tuple[Any, Any], opts: dict[str, Any]) -> None:
    rust, python = both
    before = canonical(pair)
    got = outcome(rust.merge, *pair, **opts)
    assert canonical(pair) == before, "rust merge changed its input"
    assert got == outcome(python.merge, *pair, **opts), f"merge({pair!r}, **{opts!r})"


@pytest.mark.differential
@settings(max_examples=examples(500), **_SETTINGS)
@given(sequences(), options())
def test_merge_all_alike(both: Both, items_: list[Any], opts: dict[str, Any]) -> None:
    rust, python = both
    got = outcome(rust.merge_all, items_, **opts)
    assert got == outcome(python.merge_all, items_, **opts), f"merge_all({items_!r}, **{opts!r})"
