"""Benchmark fixtures (see ``_bench.py`` for the implementations and data sets).

``pytest benches --benchmark-disable`` runs every benchmark once as a smoke test (CI);
``make bench`` times them on a release build and prints the ratio table (``report.py``).
"""

from __future__ import annotations

import pytest
from _bench import IMPLS, Impl, load_impl


@pytest.fixture(params=IMPLS)
def impl(request: pytest.FixtureRequest) -> Impl:
    """One implementation under comparison: ``rust``, ``twin`` or ``openjiuwen``."""
    return load_impl(request.param)
