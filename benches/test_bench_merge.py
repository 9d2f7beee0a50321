"""The generic merge: the Rust backend, the twin and openJiuwen on the same inputs.

One benchmark group per data set, so the report compares peers. Every benchmark first checks
that its result equals the reference (openJiuwen's result, byte for byte through orjson), then
times. ``pytest benches --benchmark-disable`` runs each once (CI smoke); ``make bench`` times
them and prints the ratios (``benches/report.py``).
"""

from __future__ import annotations

from typing import Any

import pytest
from _bench import MERGE_ALL_DATASETS, MERGE_DATASETS, SIZES, Dataset, Impl, canonical, load_impl


def _label(benchmark: Any, impl: Impl, dataset: Dataset) -> None:
    benchmark.group = dataset.title
    benchmark.extra_info.update(
        kind=dataset.kind, shape=dataset.shape, size=dataset.size, impl=impl.name
    )


@pytest.mark.parametrize("dataset", MERGE_DATASETS, ids=lambda d: d.id)
def test_merge(benchmark: Any, impl: Impl, dataset: Dataset) -> None:
    """One ``merge(left, right)`` call (openJiuwen: ``merge_parser_content``)."""
    left, right = dataset.args
    expected = dataset.expected()
    assert canonical(impl.merge(left, right)) == expected
    _label(benchmark, impl, dataset)
    result = benchmark(impl.merge, left, right)
    assert canonical(result) == expected


@pytest.mark.parametrize("dataset", MERGE_ALL_DATASETS, ids=lambda d: d.id)
def test_merge_all(benchmark: Any, impl: Impl, dataset: Dataset) -> None:
    """``merge_all(items)`` (openJiuwen: ``functools.reduce(merge_parser_content, items)``)."""
    (items,) = dataset.args
    expected = dataset.expected()
    _label(benchmark, impl, dataset)
    if impl.name == "openjiuwen" and dataset.size > SIZES[0]:
        # Quadratic: ~2 s for the chunks and ~30 s for the strings at 20,000. One round.
        if benchmark.disabled:
            pytest.skip("smoke run: openJiuwen's reduce of 20,000 deltas is timed by make bench")
        result = benchmark.pedantic(impl.merge_all, args=(items,), rounds=1, iterations=1)
    else:
        assert canonical(impl.merge_all(items)) == expected
        result = benchmark(impl.merge_all, items)
    assert canonical(result) == expected


def test_str_reference_is_openjiuwen_reduce() -> None:
    """The reference of the str data sets (a join) is what openJiuwen's reduce returns."""
    openjiuwen = load_impl("openjiuwen")
    dataset = next(d for d in MERGE_ALL_DATASETS if d.shape == "str200" and d.size == SIZES[0])
    assert canonical(openjiuwen.merge_all(*dataset.args)) == dataset.expected()
