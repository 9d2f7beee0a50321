"""Two processes appending to one SQLite session lose nothing, and a
session reopened in a new process reads what the first wrote."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path
from typing import Any

import pytest
from _support.session_helpers import STORES, make_store, new_id

from fastmerge.session import Session

APPENDS = 300


def _append_many(
    backend: str, store_kind: str, path: str, sid: str, worker: int, start: Any
) -> None:
    """One process's appends: single messages and pairs, interleaved with the other's."""
    from fastmerge import _backend
    from fastmerge.session import PostgresStore, SQLiteStore

    messages = _backend.messages(backend)
    store = SQLiteStore(path) if store_kind == "sqlite" else PostgresStore(path)
    session = Session(sid, store, messages=messages)
    start.wait()  # both processes ready: their appends overlap
    i = 0
    while i < APPENDS:
        if i % 3 == 0:
            session.append(
                [
                    messages.ToolMessage(tool_call_id=f"w{worker}-{i}", content="x"),
                    messages.ToolMessage(tool_call_id=f"w{worker}-{i + 1}", content="y"),
                ]
            )
            i += 2
        else:
            session.append(messages.ToolMessage(tool_call_id=f"w{worker}-{i}", content="z"))
            i += 1
        if i % 10 == 0:
            # a pause outside the transaction now and then: SQLite's busy handler sleeps
            # between retries, so a process that never pauses could take every turn
            time.sleep(0.002)
    store.close()


@pytest.mark.parametrize("store_kind", STORES)
def test_two_processes_appending_lose_nothing(
    backend_name: str, store_kind: str, tmp_path: Path
) -> None:
    store = make_store(store_kind, tmp_path)
    path = str(tmp_path / "session.db") if store_kind == "sqlite" else _dsn()
    sid = new_id()
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(2)
    workers = [
        context.Process(target=_append_many, args=(backend_name, store_kind, path, sid, n, start))
        for n in range(2)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0
    session = Session(sid, store)
    events = session.events()
    assert [e.seq for e in events] == list(range(1, 2 * APPENDS + 1))  # unique, no gap
    ids = [m.tool_call_id for m in session.messages()]
    assert sorted(ids) == sorted(f"w{n}-{i}" for n in range(2) for i in range(APPENDS))
    owners = ["w0-" in e.data for e in events]
    switches = sum(a != b for a, b in zip(owners, owners[1:]))
    assert switches >= 2, "the two processes' appends did not interleave"
    for n in range(2):  # each process's messages in the order it appended them
        mine = [i for i in ids if i.startswith(f"w{n}-")]
        assert mine == [f"w{n}-{i}" for i in range(APPENDS)]
    store.close()


def _dsn() -> str:
    from _support.session_helpers import pg_dsn

    return pg_dsn()
