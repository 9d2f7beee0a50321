"""Fixtures the batch tests share: the batch module of the test's backend, and a Dask cluster
of worker processes (module-scoped: one per test module that asks for it)."""

from __future__ import annotations

from types import ModuleType
from typing import Any, Iterator

import pytest
from _support.batch import batch_module


@pytest.fixture
def batch(backend_name: str) -> ModuleType:
    """``fastmerge.batch`` as the test's backend builds it."""
    return batch_module(backend_name)


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """A real ``LocalCluster``: two worker processes of one thread each."""
    import distributed  # (only the Dask tests pay for the import)

    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    with distributed.Client(cluster) as client:
        yield client
    cluster.close()
