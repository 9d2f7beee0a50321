"""``AgentsSession`` on rows it did not write or cannot read: damaged rows, what is no item, the
earlier row format, a log a plain ``Session`` wrote, and stored items the Responses adapter
refuses. Every error names the row; nothing is written after one."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _support.replay_validators import problems
from _support.session_helpers import new_id

agents = pytest.importorskip("agents", reason="openai-agents (fastmerge[agents]) is not installed")

from _support import agents as _agents  # noqa: E402
from _support.agents import CONVERSATION, ITEMS, json_texts, run_on  # noqa: E402

from fastmerge import errors  # noqa: E402
from fastmerge.session import (  # noqa: E402
    Session,
    SQLiteStore,
    _log,
)
from fastmerge.session._log import MAX_ROW_DEPTH  # noqa: E402
from fastmerge.session.agents import ITEM_KEY, AgentsSession  # noqa: E402
from fastmerge.session.store import NewEvent  # noqa: E402

#: the store each test runs on: SQLite, PostgreSQL (sync), PostgreSQL (async)
kind = _agents.kind


def _nested(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = {"a": value}
    return value


def _damage(path: Path, seq: int, data: str) -> None:
    db = sqlite3.connect(path)
    db.execute("UPDATE fastmerge_events SET data = ? WHERE seq = ?", (data, seq))
    db.commit()
    db.close()


def test_a_row_it_cannot_read_raises_and_nothing_is_written(tmp_path: Path) -> None:
    """The SDK's SQLiteSession skips rows that are not JSON (and pop_item deletes them); this
    session names the row at each read and pops nothing; after a row the log's order refuses
    (as a Session's), it appends nothing until a read succeeds."""
    path = tmp_path / "agents.db"
    sid = new_id()

    async def body() -> None:
        session = AgentsSession(sid, path)
        await session.add_items([{"role": "user", "content": "valid"}, ITEMS[5]])
        _damage(path, 2, "not valid json {{{")
        for read in (AgentsSession(sid, path).get_items, AgentsSession(sid, path).pop_item):
            with pytest.raises(errors.CorruptRowError) as caught:
                await read()
            assert caught.value.seq == 2
        assert len(SQLiteStore(str(path)).load(sid)) == 2  # the pop wrote nothing
        # a row the log's fold refuses (an unknown kind): no append until a read succeeds
        db = sqlite3.connect(path)
        db.execute("UPDATE fastmerge_events SET kind = 'bogus' WHERE seq = 2")
        db.commit()
        db.close()
        damaged = AgentsSession(sid, path)
        with pytest.raises(errors.CorruptRowError, match="unknown event kind"):
            await damaged.get_items()
        with pytest.raises(errors.CorruptRowError, match="unknown event kind"):
            await damaged.add_items([{"role": "user", "content": "more"}])
        assert len(SQLiteStore(str(path)).load(sid)) == 2  # nothing appended, nothing deleted
        db = sqlite3.connect(path)
        db.execute("UPDATE fastmerge_events SET kind = 'assistant' WHERE seq = 2")
        db.commit()
        db.close()
        # an item that is no dict
        _damage(path, 2, '{"metadata":{"' + ITEM_KEY + '":[1]},"role":"assistant"}')
        with pytest.raises(errors.CorruptRowError, match="not an item"):
            await AgentsSession(sid, path).get_items()

    asyncio.run(body())


@pytest.mark.parametrize(
    ("item", "detail"),
    [
        # (any dict is stored, as the SDK's SQLiteSession stores it: test_agents_wrappers.py)
        ("hello", "str is not a Responses input item (a dict)"),
        (
            {"role": "user", "content": [{"type": "input_text", "text": "x", "n": (1, 2)}]},
            "cannot be stored as JSON: it holds a tuple, which JSON does not hold",
        ),
        ("deep", f"cannot be stored as JSON: it holds values nested deeper than {MAX_ROW_DEPTH}"),
    ],
)
def test_what_is_no_item_is_refused(tmp_path: Path, item: Any, detail: str) -> None:
    if item == "deep":
        item = {"role": "user", "content": "x", "extra": _nested(errors.MAX_DEPTH + 8)}

    async def body() -> None:
        session = AgentsSession(new_id(), tmp_path / "agents.db")
        with pytest.raises(errors.SessionTypeError) as caught:
            await session.add_items([{"role": "user", "content": "fine"}, item])
        assert caught.value.position == 1
        assert caught.value.detail.startswith(detail)
        assert await session.get_items() == []

    asyncio.run(body())


def test_clear_errors(tmp_path: Path) -> None:
    async def body() -> None:
        session = AgentsSession(new_id(), tmp_path / "agents.db")
        with pytest.raises(TypeError, match="items"):
            await session.add_items({"role": "user", "content": "x"})  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="limit"):
            await session.get_items(limit="2")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="limit"):
            await session.get_items(limit=True)
        with pytest.raises(TypeError, match="limit"):
            await session.get_items(limit=2.0)  # type: ignore[arg-type]

    asyncio.run(body())
    with pytest.raises(TypeError, match="store"):
        AgentsSession(new_id(), 42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="session_id"):
        AgentsSession("")
    with pytest.raises(errors.SessionIdError):
        AgentsSession("a\x00b")
    with pytest.raises(TypeError, match="in_thread"):
        AgentsSession(new_id(), in_thread=1)  # type: ignore[arg-type]


def test_images_and_files_read_back_and_replay_to_responses_as_given(tmp_path: Path) -> None:
    item = {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": "What is this?"},
            {"type": "input_image", "image_url": "https://example.com/a.png", "detail": "auto"},
            {"type": "input_file", "file_id": "file_01"},
        ],
    }

    async def body() -> tuple[list[Any], dict[str, Any]]:
        session = AgentsSession(new_id(), tmp_path / "agents.db", in_thread=True)
        await session.add_items([item])
        return await session.get_items(), await session.to_request("openai-responses")

    items, request = asyncio.run(body())
    assert json_texts(items) == json_texts([item])
    assert request == {"input": [{"role": "user", "content": item["content"]}]}
    assert problems("openai-responses", request) == []


def test_a_session_on_the_same_log_replays_the_same_and_copies_out(
    tmp_path: Path, messages_module: ModuleType
) -> None:
    """A Session reading an AgentsSession's log gives the same requests, and user messages
    with metadata are copied out whole (changing one changes nothing it holds)."""
    store = SQLiteStore(str(tmp_path / "agents.db"))
    sid = new_id()
    agents_session = AgentsSession(sid, store)
    asyncio.run(agents_session.add_items(CONVERSATION))
    session = Session(sid, store, messages=messages_module)
    for provider in ("anthropic", "gemini", "bedrock-converse", "openai-responses"):
        assert session.to_request(provider) == asyncio.run(agents_session.to_request(provider))
    thanks = session.messages()[-2]
    assert thanks == {
        "metadata": {ITEM_KEY: CONVERSATION[-2]},
        "role": "user",
        "content": "Thanks!",
    }
    thanks["metadata"][ITEM_KEY]["content"].clear()
    assert session.messages()[-2]["metadata"] == {ITEM_KEY: CONVERSATION[-2]}
    store.close()


# -- the row format: items verbatim, and rows of the earlier format ----------------------------

# a function_call's row as the earlier format wrote it (the message's to_dict() with the item
# in its metadata, in an "assistant" row), byte for byte
EARLIER_ROW = (
    '{"metadata":{"openai_agents_item":{"arguments":"{\\"city\\":\\"Paris\\"}",'
    '"call_id":"call_01","name":"get_weather","type":"function_call","id":"fc_01",'
    '"status":"completed"}},"role":"assistant","parts":[{"part":"tool_call","id":"call_01",'
    '"type":"function","name":"get_weather","arguments":"{\\"city\\":\\"Paris\\"}",'
    '"provider_index":0,"response_item_id":"fc_01"}],"provider_metadata":{"provider":'
    '"openai-responses","output_items":{"0":{"arguments":"","call_id":"call_01","name":'
    '"get_weather","type":"function_call","id":"fc_01","status":"completed"}},"response":'
    '{"output":[]}},"status":"complete","choice_index":0}'
)


def _earlier(item: Any, classes: Any) -> NewEvent:
    """``item``'s row in the earlier format (what the first AgentsSession wrote)."""
    from fastmerge.session._items import message_data, row_kind

    role = _log.ROLES[row_kind(0, item)]
    return NewEvent(role, role == "user", _log._dumps(message_data(item, classes)))


def test_the_earlier_format_is_what_message_data_makes() -> None:
    import fastmerge

    call = next(i for i in ITEMS if i.get("type") == "function_call")
    assert call["call_id"] == "call_01"
    assert _earlier(call, fastmerge) == NewEvent("assistant", False, EARLIER_ROW)


def test_rows_of_the_earlier_format_still_read(
    kind: str, tmp_path: Path, messages_module: ModuleType
) -> None:
    """A log whose first rows are of the earlier format (one literal row, then every item
    as that format wrote it) and whose last rows an AgentsSession appends now: get_items
    gives every item (key order included), a Session reads the same messages from both
    halves, and pop_item takes out a row of either format."""
    import fastmerge

    sid = new_id()
    call = next(i for i in ITEMS if i.get("type") == "function_call")
    earlier = [NewEvent("assistant", False, EARLIER_ROW)]
    earlier += [_earlier(item, fastmerge) for item in ITEMS]

    async def body(store: Any) -> tuple[list[Any], list[Any] | None]:
        await _append(store, sid, earlier)
        session = AgentsSession(sid, store)
        await session.add_items([call, *ITEMS])
        stored = await session._call(store.load, sid)
        assert [e.kind for e in stored[: len(earlier)]] == [e.kind for e in earlier]
        assert {e.kind for e in stored[len(earlier) :]} <= set(_log.ROLES)
        assert stored[len(earlier)].kind == "assistant_item"
        assert stored[len(earlier)].data == _log._dumps(call)
        cold = await AgentsSession(sid, store).get_items()
        assert json_texts(cold) == json_texts([call, *ITEMS] * 2)
        assert json_texts(await session.get_items()) == json_texts([call, *ITEMS] * 2)
        halves = None
        if kind != "postgres-async":
            halves = Session(sid, store, messages=messages_module).messages()
        mine = await session.messages()
        assert len(mine) == 2 * (len(ITEMS) + 1)
        # pops of the new rows, then of an earlier one
        assert await session.pop_item() == ITEMS[-1]  # the last item (new format)
        for _ in range(len(ITEMS)):
            await session.pop_item()
        assert await session.pop_item() == ITEMS[-1]  # an earlier-format row
        assert await AgentsSession(sid, store).get_items() == [call, *ITEMS[:-1]]
        return mine, halves

    mine, halves = run_on(kind, tmp_path, body)
    n = len(ITEMS) + 1
    for messages in (mine, halves) if halves is not None else (mine,):
        dumped = [m if isinstance(m, dict) else m.to_dict() for m in messages]
        assert dumped[:n] == dumped[n:]
        assert dumped[0]["metadata"] == {ITEM_KEY: call}
        assert dumped[0]["parts"][0]["arguments"] == '{"city":"Paris"}'


async def _append(store: Any, sid: str, events: list[NewEvent]) -> None:
    result = store.append(sid, events)
    if asyncio.iscoroutine(result):
        await result


def test_a_session_reads_an_agents_log_without_the_agents_session(
    tmp_path: Path, messages_module: ModuleType
) -> None:
    """The messages a Session reads from the verbatim items' rows are made when read: the
    same as a Session reads from the earlier format's rows of the same items, field for
    field; a Session forked from the log keeps its turns."""
    import fastmerge

    store = SQLiteStore(str(tmp_path / "agents.db"))
    new, old = new_id(), new_id()
    asyncio.run(AgentsSession(new, store).add_items(ITEMS))
    store.append(old, [_earlier(item, fastmerge) for item in ITEMS])
    session = Session(new, store, messages=messages_module)
    expected = Session(old, store, messages=messages_module)
    assert session.messages() == expected.messages()
    assert [t.number for t in session.turns()] == [t.number for t in expected.turns()]
    assert session.to_request("anthropic") == expected.to_request("anthropic")
    fork = session.fork(new_id())
    assert [e[:3] for e in fork.events()] == [e[:3] for e in session.events()]
    assert fork.messages() == expected.messages()
    store.close()


def test_a_stored_item_the_adapter_refuses_is_kept_verbatim(
    tmp_path: Path, messages_module: ModuleType
) -> None:
    """An item the Responses adapter refuses is stored as SQLiteSession stores it, whether
    add_items or another writer appended it: get_items reads it back equal and pops it; its
    message holds it in a part that no request replays, in AgentsSession.to_request and a
    Session's reads alike."""
    bad = {"type": "function_call", "call_id": "c", "name": "f", "arguments": 5}
    store = SQLiteStore(str(tmp_path / "agents.db"))
    sid = new_id()

    async def body() -> None:
        session = AgentsSession(sid, store)
        await session.add_items([{"role": "user", "content": "hi"}, bad])
        store.append(sid, [NewEvent("assistant_item", False, _log._dumps(bad))])
        assert await session.get_items() == [{"role": "user", "content": "hi"}, bad, bad]
        for _ in range(2):
            assert await session.to_request("openai-chat") == {
                "messages": [{"role": "user", "content": "hi"}]
            }
        assert await session.pop_item() == bad

    asyncio.run(body())
    session = Session(sid, store, messages=messages_module)
    message = session.messages()[-1]
    assert [p.raw for p in message.parts] == [bad]
    assert message.metadata == {"openai_agents_item": bad}
    store.close()


@pytest.mark.parametrize(
    ("row_kind", "data", "detail"),
    [
        ("assistant_item", "[1]", "data is not a JSON object"),
        ("assistant_item", "{{{", "data is not JSON: "),
        ("tool_item", '{"role": "user", "content": "x"}', "a tool_item row holds a user item"),
        (
            "user_item",
            '{"type": "function_call_output", "call_id": "c", "output": "x"}',
            "a user_item row holds a tool item",
        ),
        ("tool_item", '{"type": "function_call_output"}', "a tool_item row holds an assistant"),
    ],
)
def test_an_item_row_that_cannot_be_read(
    tmp_path: Path, messages_module: ModuleType, row_kind: str, data: str, detail: str
) -> None:
    store = SQLiteStore(str(tmp_path / "agents.db"))
    sid = new_id()
    store.append(sid, [NewEvent("user", True, '{"role":"user","content":"hi"}')])
    store.append(sid, [NewEvent(row_kind, row_kind == "user_item", data)])
    message = Session(sid, store, messages=messages_module).messages  # reads every row's role
    with pytest.raises(errors.CorruptRowError) as caught:
        read = message()
        for m in read:
            _log.read_now(m)
    assert caught.value.seq == 2
    assert caught.value.detail.startswith(detail)
    with pytest.raises(errors.CorruptRowError) as caught:
        asyncio.run(AgentsSession(sid, store).to_request("openai-chat"))
    assert caught.value.seq == 2
    assert caught.value.detail.startswith(detail)
    items = AgentsSession(sid, store).get_items()
    if data.startswith("{") and data != "{{{":
        assert asyncio.run(items)[-1] == json.loads(data)  # the item itself is readable
    else:
        with pytest.raises(errors.CorruptRowError) as caught:
            asyncio.run(items)
        assert caught.value.seq == 2
    store.close()
