"""``fastmerge.session.agents.AgentsSession``: the OpenAI Agents SDK's session tests' expectations
(tests/memory/test_session.py, test_session_limit.py and tests/extensions/memory/ of
openai-agents-python) run against it on SQLite (a file) and PostgreSQL (a sync store in a
worker thread and an async one), and what fastmerge promises: every Responses input item reads
back exactly, ``pop_item`` and ``clear_session`` are events of the log, and the history replays
to other providers (accepted by tests/_support/replay_validators.py)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _support.replay_validators import problems
from _support.session_helpers import new_id, pg_dsn

agents = pytest.importorskip("agents", reason="openai-agents (fastmerge[agents]) is not installed")

from _support import agents as _agents  # noqa: E402
from _support.agents import CONVERSATION, ITEMS, json_texts, run_on  # noqa: E402
from agents import SessionSettings  # noqa: E402
from agents.memory import Session as AgentsProtocol  # noqa: E402

from fastmerge import errors  # noqa: E402
from fastmerge.session import (  # noqa: E402
    PostgresStore,
    Session,
    SQLiteStore,
    _log,
)
from fastmerge.session.agents import ITEM_KEY, AgentsSession  # noqa: E402

# -- the protocol -------------------------------------------------------------------------------

#: the store each test runs on: SQLite, PostgreSQL (sync), PostgreSQL (async)
kind = _agents.kind


def test_it_is_an_agents_session() -> None:
    session = AgentsSession(new_id())
    assert isinstance(session, AgentsProtocol)
    assert isinstance(session.session_settings, SessionSettings)
    assert session.session_settings.limit is None
    session.close()


# -- exactness ------------------------------------------------------------------------------------


def test_items_of_every_kind_are_real_responses_input_items() -> None:
    assert problems("openai-responses", {"input": ITEMS}) == []


def test_every_item_reads_back_exactly(kind: str, tmp_path: Path) -> None:
    given = copy.deepcopy(ITEMS)
    sid = new_id()

    async def body(store: Any) -> None:
        session = AgentsSession(sid, store)
        await session.add_items(given[:5])
        for item in given[5:]:
            await session.add_items([item])
        assert given == ITEMS  # inputs never changed
        warm = await session.get_items()
        cold = await AgentsSession(sid, store).get_items()
        assert json_texts(warm) == json_texts(cold) == json_texts(ITEMS)  # key order included
        # new objects on each read: changing what was returned changes nothing stored
        warm[2]["content"] = "changed"
        warm[4]["summary"].clear()
        assert json_texts(await session.get_items()) == json_texts(ITEMS)
        assert await session.get_items(limit=3) == ITEMS[-3:]
        # the log holds one row per item: a plain message as itself, any other item
        # verbatim (no conversion on append), in a row of its role's item kind
        stored = await session._call(store.load, sid)
        assert len(stored) == len(ITEMS)
        assert [e.kind for e in stored[:7]] == [
            "system", "system_item", "user", "user_item", "assistant_item", "assistant_item",
            "tool_item",
        ]  # fmt: skip
        assert [json.loads(e.data) for e in stored] == ITEMS
        assert [e.data for e in stored] == [_log._dumps(item) for item in ITEMS]

    run_on(kind, tmp_path, body)


def test_rows_are_the_messages_a_session_reads(
    kind: str, tmp_path: Path, aggregate_module: ModuleType, messages_module: ModuleType
) -> None:
    """What a fastmerge Session reads from an AgentsSession's log: the adapter's message of
    each item (the same ``to_dict()``, the item in its metadata), the tool message of each
    output, and the user and system messages with their text."""
    if kind == "postgres-async":
        pytest.skip("Session takes a synchronous store")
    sid = new_id()

    async def body(store: Any) -> list[Any]:
        await AgentsSession(sid, store).add_items(ITEMS)
        return Session(sid, store, messages=messages_module).messages()

    messages = run_on(kind, tmp_path, body)
    assert len(messages) == len(ITEMS)
    for message, item in zip(messages, ITEMS):
        kind_ = item.get("type")
        if isinstance(message, dict):
            assert item.get("role") in ("user", "system", "developer")
            continue
        data = message.to_dict()
        assert data["metadata"] == {ITEM_KEY: item}
        if kind_ in ("function_call_output", "custom_tool_call_output"):
            assert message.tool_call_id == item["call_id"]
            assert message.content == item["output"]
        elif isinstance(item.get("content"), str):
            assert message.content == item["content"]
        else:
            if kind_ is None:
                kind_ = "message"
            event = {
                "type": "response.completed",
                "response": {"output": [{**item, "type": kind_}]},
            }
            made = aggregate_module.aggregate([event], "openai-responses").to_dict()
            data["metadata"] = made["metadata"]
            assert data == made
    assert messages[0] == {"role": "system", "content": "Be brief."}
    assert messages[1] == {
        "metadata": {ITEM_KEY: ITEMS[1]},
        "role": "system",
        "content": "Use metric units.",
    }
    assert messages[3]["content"] == "And in Lyon?"


# -- replay to other providers --------------------------------------------------------------------


@pytest.mark.parametrize(
    "provider", ["anthropic", "gemini", "bedrock-converse", "openai-chat", "openai-responses"]
)
def test_history_replays_to_other_providers(kind: str, tmp_path: Path, provider: str) -> None:
    sid = new_id()

    async def body(store: Any) -> Any:
        session = AgentsSession(sid, store)
        await session.add_items(CONVERSATION)
        return await session.to_request(provider)

    request = run_on(kind, tmp_path, body)
    assert problems(provider, request) == []
    if provider == "anthropic":
        assert request == {
            "system": "Be brief.",
            "messages": [
                {"role": "user", "content": "What's the weather in Paris?"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "Let me check."},
                        {
                            "type": "tool_use",
                            "id": "call_01",
                            "name": "get_weather",
                            "input": {"city": "Paris"},
                        },
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "call_01", "content": '{"temp": 18}'}
                    ],
                },
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "It is 18 C in Paris."},
                    ],
                },
                {"role": "user", "content": "Thanks!"},
                {"role": "assistant", "content": [{"type": "text", "text": "You're welcome."}]},
            ],
        }


# -- pop and clear are events ---------------------------------------------------------------------


def test_pop_and_clear_are_events_of_the_log(kind: str, tmp_path: Path) -> None:
    sid = new_id()

    async def body(store: Any) -> None:
        session = AgentsSession(sid, store)
        await session.add_items(CONVERSATION[:4])
        rows = await session._call(store.load, sid)
        assert await session.pop_item() == CONVERSATION[3]
        await session.clear_session()
        assert await session.get_items() == []
        assert await session.pop_item() is None
        after = await session._call(store.load, sid)
        assert after[: len(rows)] == rows  # nothing stored was changed or deleted
        assert [e.kind for e in after[len(rows) :]] == ["pop", "clear"]
        await session.add_items([CONVERSATION[1]])
        assert await AgentsSession(sid, store).get_items() == [CONVERSATION[1]]

    run_on(kind, tmp_path, body)


# -- the Agents SDK's session tests, against AgentsSession ----------------------------------------


def test_direct_add_get_and_clear(kind: str, tmp_path: Path) -> None:
    async def body(store: Any) -> None:
        session = AgentsSession(new_id(), store)
        items = [
            {"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "Hi there!"},
        ]
        await session.add_items(items)
        retrieved = await session.get_items()
        assert retrieved == items
        await session.clear_session()
        assert await session.get_items() == []

    run_on(kind, tmp_path, body)


def test_pop_item(kind: str, tmp_path: Path) -> None:
    async def body(store: Any) -> None:
        session = AgentsSession(new_id(), store)
        assert await session.pop_item() is None
        items = [
            {"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "Hi there!"},
            {"role": "user", "content": "How are you?"},
        ]
        await session.add_items(items)
        assert len(await session.get_items()) == 3
        assert await session.pop_item() == items[2]
        after = await session.get_items()
        assert len(after) == 2 and after[-1]["content"] == "Hi there!"
        assert await session.pop_item() == items[1]
        assert await session.pop_item() == items[0]
        assert await session.pop_item() is None
        assert await session.get_items() == []

    run_on(kind, tmp_path, body)


def test_pop_affects_only_its_session(kind: str, tmp_path: Path) -> None:
    async def body(store: Any) -> None:
        one, two = AgentsSession(new_id(), store), AgentsSession(new_id(), store)
        await one.add_items([{"role": "user", "content": "Session 1 message"}])
        await two.add_items(
            [
                {"role": "user", "content": "Session 2 message 1"},
                {"role": "user", "content": "Session 2 message 2"},
            ]
        )
        assert (await two.pop_item())["content"] == "Session 2 message 2"
        assert await one.get_items() == [{"role": "user", "content": "Session 1 message"}]
        assert await two.get_items() == [{"role": "user", "content": "Session 2 message 1"}]

    run_on(kind, tmp_path, body)


def test_two_objects_popping_take_each_item_once(kind: str, tmp_path: Path) -> None:
    sid = new_id()

    async def body(store: Any) -> None:
        writer, other = AgentsSession(sid, store), AgentsSession(sid, store)
        await writer.add_items(
            [{"role": "user", "content": "first"}, {"role": "assistant", "content": "second"}]
        )
        await other.get_items()  # both have read the two items
        popped = await asyncio.gather(writer.pop_item(), other.pop_item())
        assert sorted(item["content"] for item in popped) == ["first", "second"]
        assert await writer.get_items() == await other.get_items() == []

    run_on(kind, tmp_path, body)


def test_get_items_with_limit(kind: str, tmp_path: Path) -> None:
    async def body(store: Any) -> None:
        session = AgentsSession(new_id(), store)
        items = [
            {"role": "user" if n % 2 == 0 else "assistant", "content": f"Message {n}"}
            for n in range(6)
        ]
        await session.add_items(items)
        assert await session.get_items() == items
        assert await session.get_items(limit=2) == items[-2:]
        assert await session.get_items(limit=4) == items[-4:]
        assert await session.get_items(limit=10) == items
        assert await session.get_items(limit=0) == []

    run_on(kind, tmp_path, body)


def test_a_negative_limit_reads_every_item_as_sqlite_session_does(
    kind: str, tmp_path: Path
) -> None:
    """The SDK's SQLiteSession reads a limit below zero as none (SQLite's ``LIMIT -1``), given
    to get_items or in the session settings; an explicit limit still wins over the settings,
    and pop_item, which takes no limit, is unchanged by them."""
    from agents import SQLiteSession

    items = [{"role": "user" if n % 2 == 0 else "assistant", "content": f"m{n}"} for n in range(5)]

    async def reference(limit: int | None, settings: int | None) -> list[Any]:
        sdk = SQLiteSession(new_id(), session_settings=SessionSettings(limit=settings))
        await sdk.add_items(copy.deepcopy(items))
        try:
            return await sdk.get_items(limit=limit)
        finally:
            sdk.close()

    async def body(store: Any) -> None:
        session = AgentsSession(new_id(), store)
        await session.add_items(items)
        for limit in (-1, -2, -100):
            assert await session.get_items(limit=limit) == items
            assert await reference(limit, None) == items
        limited = AgentsSession(new_id(), store, session_settings=SessionSettings(limit=2))
        await limited.add_items(items)
        assert await limited.get_items() == items[-2:] == await reference(None, 2)
        assert await limited.get_items(limit=-1) == items == await reference(-1, 2)
        unlimited = AgentsSession(new_id(), store, session_settings={"limit": -1})
        await unlimited.add_items(items)
        assert await unlimited.get_items() == items == await reference(None, -1)
        assert await unlimited.get_items(limit=0) == [] == await reference(0, -1)
        assert await unlimited.pop_item() == items[-1]
        assert await unlimited.get_items(limit=-1) == items[:-1]

    run_on(kind, tmp_path, body)


def test_unicode_special_characters_and_sql(kind: str, tmp_path: Path) -> None:
    texts = [
        "こんにちは",
        "😊👍",
        "Привет",
        "O'Reilly",
        "DROP TABLE sessions;",
        '"SELECT * FROM users WHERE name = "admin";"',
        "Robert'); DROP TABLE students;--",
        "\u2028 \x00 \ud83d",  # a line separator, a NUL, a lone surrogate
    ]
    items = [{"role": "user", "content": text} for text in texts]
    sid = new_id()

    async def body(store: Any) -> None:
        await AgentsSession(sid, store).add_items(items)
        assert await AgentsSession(sid, store).get_items() == items

    run_on(kind, tmp_path, body)


def test_concurrent_appends_from_threads(kind: str, tmp_path: Path) -> None:
    """Each thread runs its own event loop, as the SDK's concurrency test does."""
    if kind == "postgres-async":
        pytest.skip("an async connection belongs to one event loop")
    store = (
        SQLiteStore(str(tmp_path / "agents.db")) if kind == "sqlite" else PostgresStore(pg_dsn())
    )
    session = AgentsSession(new_id(), store)
    items = [{"role": "user", "content": f"Message {n}"} for n in range(10)]

    def add(item: dict[str, Any]) -> None:
        asyncio.run(session.add_items([item]))

    with concurrent.futures.ThreadPoolExecutor(max_workers=5) as pool:
        list(pool.map(add, items))
    got = asyncio.run(session.get_items())
    assert sorted(item["content"] for item in got) == sorted(i["content"] for i in items)
    assert len(got) == 10
    store.close()


def test_add_empty_list_and_closed_session(tmp_path: Path) -> None:
    async def body() -> None:
        session = AgentsSession(new_id(), tmp_path / "agents.db")
        await session.add_items([])
        assert await session.get_items() == []
        session.close()
        with pytest.raises(RuntimeError, match="is closed"):
            await session.add_items([])
        with pytest.raises(RuntimeError, match="is closed"):
            await session.get_items()

    asyncio.run(body())


def test_failed_add_items_appends_nothing_and_the_session_goes_on(
    kind: str, tmp_path: Path
) -> None:
    """The SDK's test gives ``object()`` as content and expects a ``TypeError`` with no write
    left behind; here a :class:`fastmerge.errors.SessionTypeError` (a ``TypeError``) names the
    item, before anything is written."""
    sid = new_id()

    async def body(store: Any) -> None:
        session = AgentsSession(sid, store)
        bad: list[Any] = [
            {"role": "user", "content": "fine"},
            {"role": "user", "content": object()},
        ]
        with pytest.raises(TypeError) as caught:
            await session.add_items(bad)
        assert isinstance(caught.value, errors.SessionTypeError)
        assert str(caught.value) == (
            "append item 1: cannot be stored as JSON: it holds a object, which JSON does not "
            "hold; nothing was appended"
        )
        assert await session._call(store.load, sid) == []
        await session.add_items([{"role": "user", "content": "after failure"}])
        assert await session.get_items() == [{"role": "user", "content": "after failure"}]

    run_on(kind, tmp_path, body)


def test_session_settings(tmp_path: Path) -> None:
    async def body() -> None:
        path = tmp_path / "agents.db"
        assert AgentsSession(new_id(), path).session_settings == SessionSettings()
        assert (
            AgentsSession(
                new_id(), path, session_settings=SessionSettings(limit=5)
            ).session_settings.limit
            == 5
        )
        normalized = AgentsSession(new_id(), path, session_settings={"limit": 0})
        assert isinstance(normalized.session_settings, SessionSettings)
        assert normalized.session_settings.limit == 0
        with pytest.raises(TypeError, match="Unknown session settings: limitt"):
            AgentsSession(new_id(), path, session_settings={"limitt": 1})
        limited = AgentsSession(new_id(), path, session_settings=SessionSettings(limit=3))
        items = [{"role": "user", "content": f"Message {n}"} for n in range(10)]
        await limited.add_items(items)
        assert await limited.get_items() == items[-3:]
        assert await limited.get_items(limit=2) == items[-2:]  # an explicit limit wins

    asyncio.run(body())


# -- Runner.run with AgentsSession as its session -----------------------------------------------
