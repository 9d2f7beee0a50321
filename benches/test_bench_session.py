"""Session memory throughput (issue 13): appends per second and the load of a 1,000-turn
session, on SQLite (a WAL file in a temporary folder) and on PostgreSQL when
``FASTMERGE_PG_DSN`` names a server (``bash .ci/run`` starts one).

Targets (reported, not asserted): >= 20,000 message appends/s and a 1,000-turn session loaded in
< 50 ms on SQLite. Two append rates are measured: ``append(message)`` one at a time (one
transaction each) and ``append(list)`` of 1,000 messages (one transaction). A turn is a user
message, an Anthropic assistant message (thinking with its signature, text, a tool call: 13
stream events aggregated) and the tool result; loading is ``Session(id, store).messages()`` in
a new session object (every row read, parsed and rebuilt with ``from_dict``). Time them with
``pytest benches/test_bench_session.py --benchmark-only``; ``--benchmark-disable`` (CI) runs each
once, checking the result. The throughput is in each benchmark's ``extra_info``.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from _bench import REQUESTED, _load_messages

from fastmerge import _backend
from fastmerge.session import Session, SQLiteStore

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from _session_helpers import anthropic_events  # noqa: E402  (the tests' Anthropic stream)

TURNS = 1_000
BATCH = 1_000
SINGLE = 500  # appends of one message per round


@pytest.fixture(params=("rust", "twin"))
def modules(request: pytest.FixtureRequest) -> tuple[Any, Any]:
    """(messages, aggregate) modules on one backend."""
    backend = "rust" if request.param == "rust" else "python"
    messages = _load_messages(backend)
    if isinstance(messages, str):
        if backend == "rust" and REQUESTED == "rust":
            pytest.fail(f"FASTMERGE_BACKEND=rust but {messages}")
        pytest.skip(messages)
    request.node.user_properties.append(("impl", request.param))
    return messages, _backend.aggregate_module(backend)


@pytest.fixture(params=("sqlite", "postgres"))
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """A function giving a new store of one kind (PostgreSQL: skipped without a server)."""
    if request.param == "sqlite":
        return lambda: SQLiteStore(str(tmp_path / f"{uuid.uuid4().hex}.db"))
    dsn = os.environ.get("FASTMERGE_PG_DSN")
    if not dsn:
        pytest.skip("no PostgreSQL server (FASTMERGE_PG_DSN unset)")
    from fastmerge.session import PostgresStore

    return lambda: PostgresStore(dsn)


def _turn(messages: Any, aggregate: Any, n: int) -> list[Any]:
    call = f"toolu_{n}"
    return [
        {"role": "user", "content": f"question {n}"},
        aggregate.aggregate(anthropic_events(text=f"answer {n}", call_id=call), "anthropic"),
        messages.ToolMessage(tool_call_id=call, content='{"temp": 18}'),
    ]


def _label(benchmark: Any, request: pytest.FixtureRequest, what: str, count: int) -> None:
    impl = dict(request.node.user_properties)["impl"]
    store = request.node.callspec.params["store_factory"]
    benchmark.group = f"session {what} ({store})"
    benchmark.extra_info.update(session_op=what, count=count, impl=impl, store=store)


def _rate(benchmark: Any, count: int, unit: str) -> None:
    stats = getattr(benchmark, "stats", None)
    if stats is not None and stats.stats.median:
        benchmark.extra_info[unit] = round(count / stats.stats.median)


def test_append_one_at_a_time(
    benchmark: Any, request: pytest.FixtureRequest, modules: Any, store_factory: Any
) -> None:
    """``SINGLE`` appends of one assistant message each (one transaction each)."""
    messages, aggregate = modules
    message = _turn(messages, aggregate, 0)[1]
    store = store_factory()
    _label(benchmark, request, "append(message)", SINGLE)

    def run() -> Session:
        session = Session(uuid.uuid4().hex, store)
        for _ in range(SINGLE):
            session.append(message)
        return session

    session = benchmark.pedantic(run, rounds=3, iterations=1)
    assert [e.seq for e in session.events()][-1] == SINGLE
    _rate(benchmark, SINGLE, "appends_per_s")
    store.close()


def test_append_a_list(
    benchmark: Any, request: pytest.FixtureRequest, modules: Any, store_factory: Any
) -> None:
    """One ``append(list)`` of ``BATCH`` assistant messages (one transaction)."""
    messages, aggregate = modules
    batch = [_turn(messages, aggregate, 0)[1]] * BATCH
    store = store_factory()
    _label(benchmark, request, "append(list)", BATCH)

    def run() -> Session:
        session = Session(uuid.uuid4().hex, store)
        session.append(batch)
        return session

    session = benchmark.pedantic(run, rounds=5, iterations=1)
    assert len(session.messages()) == BATCH
    _rate(benchmark, BATCH, "appends_per_s")
    store.close()


def test_load_a_1000_turn_session(
    benchmark: Any, request: pytest.FixtureRequest, modules: Any, store_factory: Any
) -> None:
    """``Session(id, store).messages()`` of a session of ``TURNS`` turns (3 messages each)."""
    messages, aggregate = modules
    store = store_factory()
    sid = uuid.uuid4().hex
    writer = Session(sid, store, messages=messages)
    for n in range(0, TURNS, 100):
        writer.append([m for k in range(n, n + 100) for m in _turn(messages, aggregate, k)])
    _label(benchmark, request, f"load of {TURNS:,} turns", TURNS)
    loaded = benchmark(lambda: Session(sid, store, messages=messages).messages())
    assert len(loaded) == 3 * TURNS
    assert loaded[-2] == _turn(messages, aggregate, TURNS - 1)[1]
    _rate(benchmark, TURNS, "turns_per_s")
    store.close()
