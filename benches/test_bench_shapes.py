"""``shapes.py`` as a smoke test: every shape variation of every base stream, one benchmark
each (``aggregate(bytes)`` on the Rust backend), and ``orjson.loads`` of the baseline's lines
beside each stream.

Each variation's message must equal the baseline's but for the fields it deliberately changes
(``_shapes.check``: text, reasoning, tool calls, finish reason and status always equal), and
every variation of a provider must change the bytes of at least one of its base streams (a
variation that changes nothing would time the baseline again).
"""

from __future__ import annotations

import functools
from typing import Any

import pytest
from _corpus import essentials, orjson_lines, rust_aggregate
from _shapes import BASES, check, variations
from shapes import Row, rows_of


@functools.cache
def _rows(provider: str, name: str) -> list[Row]:
    return rows_of(provider, name)


#: Every row of every base stream (a variation that leaves a stream's bytes as they are is
#: not a row of it).
PARAMS = [
    pytest.param(provider, name, v.name, id=f"{provider}-{name}-{v.name}")
    for provider, (_, names) in BASES.items()
    for name in names
    for v, _, _ in _rows(provider, name)[1:]
]


@pytest.mark.parametrize("provider", list(BASES))
def test_every_variation_changes_a_stream(provider: str) -> None:
    """Each variation (the baseline included) is a row of one of the provider's streams."""
    seen = {v.name for name in BASES[provider][1] for v, _, _ in _rows(provider, name)}
    assert seen == {v.name for v in variations(provider)}


@pytest.mark.parametrize(("provider", "name", "shape"), PARAMS)
def test_shape(benchmark: Any, provider: str, name: str, shape: str) -> None:
    """``aggregate(bytes)`` of one variation; its message is the baseline's but for what the
    variation changes."""
    rows = _rows(provider, name)
    ((variation, data, _),) = [row for row in rows if row[0].name == shape]
    aggregate = rust_aggregate()
    base = aggregate(rows[0][1], provider)
    benchmark.group = f"shapes: {provider} {name}"
    benchmark.extra_info.update(kind="shapes", provider=provider, stream=name, shape=shape)
    message = benchmark(aggregate, data, provider)
    assert check(base, message, variation) == []
    assert essentials(message) == essentials(base)


@pytest.mark.parametrize(
    ("provider", "name"), [(p, n) for p, (_, names) in BASES.items() for n in names]
)
def test_shape_orjson(benchmark: Any, provider: str, name: str) -> None:
    """``orjson.loads`` of the baseline's lines: the unit of the ratios."""
    lines = _rows(provider, name)[0][2]
    benchmark.group = f"shapes: {provider} {name}"
    benchmark.extra_info.update(kind="shapes", provider=provider, stream=name, shape="orjson")
    assert benchmark(orjson_lines, lines) == len(lines)
