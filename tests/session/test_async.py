"""AsyncSession: the same log through ``asyncio``, on SQLite (a worker
thread) and PostgreSQL (psycopg's async connection), identical to the sync Session's."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _support.session_helpers import STORES, anthropic_events, make_store, new_id, pg_dsn

from fastmerge import errors
from fastmerge.session import AsyncPostgresStore, AsyncSession, Session


async def _store(kind: str, tmp_path: Path) -> Any:
    if kind == "sqlite":
        return make_store("sqlite", tmp_path)
    return await AsyncPostgresStore.connect(pg_dsn())


@pytest.mark.parametrize("kind", STORES)
def test_async_session_writes_what_session_reads(
    aggregate_module: ModuleType, messages_module: ModuleType, kind: str, tmp_path: Path
) -> None:
    message = aggregate_module.aggregate(anthropic_events(), "anthropic")
    result = messages_module.ToolMessage(tool_call_id="toolu_01", content="18 C")
    sid = new_id()

    async def run() -> tuple[Any, ...]:
        store = await _store(kind, tmp_path)
        session = await AsyncSession.open(sid, store)
        seqs = await session.append([{"role": "user", "content": "q"}, message])
        await asyncio.gather(*(session.append(result) for _ in range(3)))
        popped = await session.pop()
        fork = await session.fork(new_id())
        out = (
            seqs,
            popped,
            await session.messages(),
            await session.turns(),
            await session.to_request("anthropic"),
            await fork.messages(),
            await session.compact(1),
            [e.kind for e in await session.events()],
            fork.session_id,
        )
        with pytest.raises(errors.SessionExistsError):
            await session.fork(fork.session_id)
        await session.clear()
        assert await session.messages() == []
        await store.close() if kind == "postgres" else store.close()
        return out

    seqs, popped, messages, turns, request, forked, compacted, kinds, fork_id = asyncio.run(run())
    assert seqs == [1, 2]
    assert popped == result
    assert messages == [{"role": "user", "content": "q"}, message, result, result]
    assert [t.number for t in turns] == [1]
    assert forked == messages
    assert compacted is False  # one turn: nothing to leave out
    assert kinds == ["user", "assistant", "tool", "tool", "tool", "pop"]
    store = make_store(kind, tmp_path)
    assert Session(fork_id, store).to_request("anthropic") == request
    assert [e.kind for e in Session(sid, store).events()][-1] == "clear"
    store.close()


def test_async_session_in_memory(messages_module: ModuleType) -> None:
    async def run() -> Any:
        async with AsyncSession("m") as session:
            await session.append({"role": "user", "content": "x"})
            return await session.to_request("openai-chat")

    assert asyncio.run(run()) == {"messages": [{"role": "user", "content": "x"}]}


def test_async_session_appends_nothing_after_a_row_it_cannot_read(tmp_path: Path) -> None:
    store = make_store("sqlite", tmp_path)

    async def run() -> None:
        session = await AsyncSession.open("x", store)
        await session.append({"role": "user", "content": "q"})
        store._db.execute("INSERT INTO fastmerge_events VALUES ('x', 2, 1, 'user', 9, '{}')")
        with pytest.raises(errors.SchemaVersionError, match="row seq=2: schema version 9"):
            await session.messages()
        with pytest.raises(errors.SchemaVersionError):
            await session.append({"role": "user", "content": "lost?"})

    asyncio.run(run())
    assert [e.seq for e in store.load("x")] == [1, 2]
    store.close()
