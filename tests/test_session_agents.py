"""fastmerge.session.agents.AgentsSession: the OpenAI Agents SDK's session tests' expectations
(tests/memory/test_session.py, test_session_limit.py and tests/extensions/memory/ of
openai-agents-python) run against it on SQLite (a file) and PostgreSQL (a sync store in a worker
thread and an async one), plus what fastmerge promises: every Responses input item reads back
exactly, ``pop_item`` and ``clear_session`` are events of the log, and the history replays to
other providers (accepted by tests/_replay_validators.py). ``Runner.run`` runs with the SDK's
own test model (``agents.testing.ScriptedModel``) and AgentsSession as its session."""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import json
import sqlite3
from pathlib import Path
from types import ModuleType
from typing import Any, Awaitable, Callable

import pytest
from _replay_validators import problems
from _session_helpers import anthropic_events, new_id, pg_dsn

agents = pytest.importorskip("agents", reason="openai-agents (fastmerge[agents]) is not installed")

from agents import Agent, RunConfig, Runner, SessionSettings, function_tool  # noqa: E402
from agents.memory import Session as AgentsProtocol  # noqa: E402
from agents.testing import ScriptedModel  # noqa: E402
from openai.types.responses import (  # noqa: E402
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseReasoningItem,
)
from openai.types.responses.response_reasoning_item import Summary  # noqa: E402

from fastmerge import errors  # noqa: E402
from fastmerge.session import (  # noqa: E402
    AsyncPostgresStore,
    PostgresStore,
    Session,
    SQLiteStore,
    _log,
)
from fastmerge.session._log import MAX_ROW_DEPTH  # noqa: E402
from fastmerge.session.agents import ITEM_KEY, AgentsSession  # noqa: E402
from fastmerge.session.store import NewEvent  # noqa: E402

KINDS = ["sqlite", "postgres", "postgres-async"]

#: Every kind of Responses input item (checked against the openai SDK's types below), as the
#: Agents SDK stores them: easy and typed messages, reasoning, function and custom tool calls
#: and outputs, hosted tools' calls and outputs, references, refusals, compaction.
ITEMS: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"role": "developer", "content": "Use metric units."},
    {"content": "What's the weather in Paris?", "role": "user"},
    {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "And in Lyon?"}],
    },
    {
        "id": "rs_01",
        "summary": [{"text": "The user wants weather.", "type": "summary_text"}],
        "type": "reasoning",
        "encrypted_content": "gAAAAABo-encrypted",
    },
    {
        "arguments": '{"city":"Paris"}',
        "call_id": "call_01",
        "name": "get_weather",
        "type": "function_call",
        "id": "fc_01",
        "status": "completed",
    },
    {"call_id": "call_01", "output": '{"temp": 18}', "type": "function_call_output"},
    {"type": "function_call", "call_id": "call_02", "name": "get_weather", "arguments": "{}"},
    {
        "call_id": "call_02",
        "output": [{"type": "input_text", "text": "22 C"}],
        "type": "function_call_output",
    },
    {
        "id": "ctc_01",
        "call_id": "call_03",
        "input": "print(1)",
        "name": "python",
        "type": "custom_tool_call",
    },
    {"call_id": "call_03", "output": "1", "type": "custom_tool_call_output"},
    {
        "id": "ws_01",
        "action": {"query": "weather Paris", "type": "search"},
        "status": "completed",
        "type": "web_search_call",
    },
    {
        "id": "fs_01",
        "queries": ["forecast"],
        "status": "completed",
        "type": "file_search_call",
        "results": None,
    },
    {
        "id": "cu_01",
        "action": {"type": "click", "button": "left", "x": 10, "y": 20},
        "call_id": "call_04",
        "pending_safety_checks": [],
        "status": "completed",
        "type": "computer_call",
    },
    {
        "call_id": "call_04",
        "output": {"type": "computer_screenshot", "image_url": "data:image/png;base64,AAAA"},
        "type": "computer_call_output",
    },
    {
        "id": "ci_01",
        "code": "print(2)",
        "container_id": "cntr_01",
        "outputs": None,
        "status": "completed",
        "type": "code_interpreter_call",
    },
    {
        "id": "ig_01",
        "result": "iVBORw0KGgo=",
        "status": "completed",
        "type": "image_generation_call",
    },
    {
        "id": "ls_01",
        "action": {"command": ["ls"], "env": {}, "type": "exec"},
        "call_id": "call_05",
        "status": "completed",
        "type": "local_shell_call",
    },
    {"id": "ls_01", "output": "a.txt", "type": "local_shell_call_output"},
    {
        "id": "mcpl_01",
        "server_label": "docs",
        "tools": [{"input_schema": {"type": "object"}, "name": "search"}],
        "type": "mcp_list_tools",
    },
    {
        "id": "mcpr_01",
        "arguments": "{}",
        "name": "search",
        "server_label": "docs",
        "type": "mcp_approval_request",
    },
    {"approval_request_id": "mcpr_01", "approve": True, "type": "mcp_approval_response"},
    {
        "id": "mcp_01",
        "arguments": "{}",
        "name": "search",
        "server_label": "docs",
        "type": "mcp_call",
        "output": "found",
    },
    {"id": "msg_00", "type": "item_reference"},
    {
        "id": "msg_01",
        "content": [
            {
                "annotations": [],
                "text": "It is 18 C in Paris.",
                "type": "output_text",
                "logprobs": [],
            }
        ],
        "role": "assistant",
        "status": "completed",
        "type": "message",
    },
    {
        "id": "msg_02",
        "content": [{"refusal": "I cannot help with that.", "type": "refusal"}],
        "role": "assistant",
        "status": "completed",
        "type": "message",
    },
    {"role": "assistant", "content": "Anything else?"},
    {"id": "cmp_01", "encrypted_content": "gAAAAcompacted", "type": "compaction"},
]


def _text(text: str, item_id: str = "1") -> ResponseOutputMessage:
    """The Agents SDK tests' ``get_text_message``: an assistant output message."""
    content = [ResponseOutputText(text=text, type="output_text", annotations=[], logprobs=[])]
    return ResponseOutputMessage(
        id=item_id, type="message", role="assistant", content=content, status="completed"
    )


def _dumped(items: list[Any]) -> list[str]:
    """Items as JSON text: equal when their values and their keys' order are."""
    return [json.dumps(item) for item in items]


async def _open(kind: str, tmp_path: Path) -> Any:
    if kind == "sqlite":
        return SQLiteStore(str(tmp_path / "agents.db"))
    if kind == "postgres":
        return PostgresStore(pg_dsn())
    return await AsyncPostgresStore.connect(pg_dsn())


async def _close(store: Any) -> None:
    done = store.close()
    if asyncio.iscoroutine(done):
        await done


def _run(kind: str, tmp_path: Path, body: Callable[[Any], Awaitable[Any]]) -> Any:
    """``body(store)`` on a new event loop with a store of ``kind``, closed after."""
    if kind != "sqlite":
        pg_dsn()  # skips (outside CI) when there is no server

    async def main() -> Any:
        store = await _open(kind, tmp_path)
        try:
            return await body(store)
        finally:
            await _close(store)

    return asyncio.run(main())


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# -- the protocol -------------------------------------------------------------------------------


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
        assert _dumped(warm) == _dumped(cold) == _dumped(ITEMS)  # key order included
        # new objects on each read: changing what was returned changes nothing stored
        warm[2]["content"] = "changed"
        warm[4]["summary"].clear()
        assert _dumped(await session.get_items()) == _dumped(ITEMS)
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

    _run(kind, tmp_path, body)


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

    messages = _run(kind, tmp_path, body)
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

CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"content": "What's the weather in Paris?", "role": "user"},
    ITEMS[4],  # reasoning (OpenAI's: replayed to OpenAI only)
    {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Let me check.", "annotations": []}],
    },
    ITEMS[5],  # function_call
    ITEMS[6],  # its output
    ITEMS[11],  # web search call (OpenAI's hosted tool: replayed to OpenAI only)
    ITEMS[24],  # the answer
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Thanks!"}]},
    {"role": "assistant", "content": "You're welcome."},
]


@pytest.mark.parametrize(
    "provider", ["anthropic", "gemini", "bedrock-converse", "openai-chat", "openai-responses"]
)
def test_history_replays_to_other_providers(kind: str, tmp_path: Path, provider: str) -> None:
    sid = new_id()

    async def body(store: Any) -> Any:
        session = AgentsSession(sid, store)
        await session.add_items(CONVERSATION)
        return await session.to_request(provider)

    request = _run(kind, tmp_path, body)
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

    _run(kind, tmp_path, body)


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

    _run(kind, tmp_path, body)


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

    _run(kind, tmp_path, body)


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

    _run(kind, tmp_path, body)


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

    _run(kind, tmp_path, body)


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

    _run(kind, tmp_path, body)


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

    _run(kind, tmp_path, body)


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

    _run(kind, tmp_path, body)


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

RUNNERS = ["run", "run_sync", "run_streamed"]


async def _run_agent(method: str, agent: Any, given: Any, **kwargs: Any) -> Any:
    """The SDK tests' ``run_agent_async``: one of Runner's three ways to run."""
    if method == "run":
        return await Runner.run(agent, given, **kwargs)
    if method == "run_sync":

        def in_thread() -> Any:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            try:
                return Runner.run_sync(agent, given, **kwargs)
            finally:
                loop.close()

        return await asyncio.to_thread(in_thread)
    result = Runner.run_streamed(agent, given, **kwargs)
    async for _ in result.stream_events():
        pass
    return result


def _runner_kind(kind: str, method: str) -> None:
    if kind == "postgres-async" and method == "run_sync":
        pytest.skip("run_sync runs its own event loop; an async connection belongs to one")


@pytest.mark.parametrize("method", RUNNERS)
def test_runner_remembers_the_conversation(kind: str, tmp_path: Path, method: str) -> None:
    _runner_kind(kind, method)
    sid = new_id()

    async def body(store: Any) -> None:
        session = AgentsSession(sid, store)
        model = ScriptedModel()
        agent = Agent(name="test", model=model)
        model.enqueue([_text("San Francisco")])
        first = await _run_agent(
            method, agent, "What city is the Golden Gate Bridge in?", session=session
        )
        assert first.final_output == "San Francisco"
        model.enqueue([_text("California")])
        second = await _run_agent(method, agent, "What state is it in?", session=session)
        assert second.final_output == "California"
        assert model.calls[-1].input == [
            {"content": "What city is the Golden Gate Bridge in?", "role": "user"},
            _text("San Francisco").model_dump(exclude_unset=True),
            {"content": "What state is it in?", "role": "user"},
        ]
        # another session id holds its own history
        other = AgentsSession(new_id(), store)
        model.enqueue([_text("I like dogs")])
        await _run_agent(method, agent, "I like dogs", session=other)
        assert len(model.calls[-1].input) == 1
        assert len(await AgentsSession(sid, store).get_items()) == 4

    _run(kind, tmp_path, body)


@pytest.mark.parametrize("method", RUNNERS)
def test_runner_list_input_and_input_callback(kind: str, tmp_path: Path, method: str) -> None:
    _runner_kind(kind, method)

    async def body(store: Any) -> None:
        session = AgentsSession(new_id(), store)
        model = ScriptedModel()
        agent = Agent(name="test", model=model)
        history = [
            {"role": "user", "content": "Earlier message"},
            {"role": "assistant", "content": "Saved reply"},
        ]
        await session.add_items(history)
        given = [{"role": "user", "content": "Test message"}]
        model.enqueue([_text("This should run")])
        await _run_agent(method, agent, given, session=session)
        assert model.calls[-1].input == history + given

        def users_only(old: list[Any], new: list[Any]) -> list[Any]:
            return [item for item in old if item.get("role") == "user"] + new

        model.enqueue([_text("I'm gpt-4o")])
        question = [{"role": "user", "content": "What your name?"}]
        config = RunConfig(session_input_callback=users_only)
        await _run_agent(method, agent, question, session=session, run_config=config)
        assert model.calls[-1].input == [history[0], given[0], question[0]]

    _run(kind, tmp_path, body)


@pytest.mark.parametrize("method", RUNNERS)
def test_runner_session_limit(kind: str, tmp_path: Path, method: str) -> None:
    _runner_kind(kind, method)

    async def body(store: Any) -> None:
        session = AgentsSession(new_id(), store)
        model = ScriptedModel()
        agent = Agent(name="test", model=model)
        for n in (1, 2, 3):
            model.enqueue([_text(f"Reply {n}")])
            await _run_agent(method, agent, f"Message {n}", session=session)
        assert len(await session.get_items()) == 6
        for limit, expected in ((2, 3), (0, 1), (None, 11), (100, 13)):
            model.enqueue([_text("Reply")])
            config = RunConfig(session_settings=SessionSettings(limit=limit))
            await _run_agent(method, agent, "Message", session=session, run_config=config)
            given = model.calls[-1].input
            assert len(given) == expected
            assert given[-1] == {"content": "Message", "role": "user"}
            if limit == 2:
                assert given[0] == {"content": "Message 3", "role": "user"}
                assert given[1]["content"][0]["text"] == "Reply 3"

    _run(kind, tmp_path, body)


@pytest.mark.parametrize("method", RUNNERS)
def test_runner_limit_drops_an_unmatched_function_call_output(
    kind: str, tmp_path: Path, method: str
) -> None:
    _runner_kind(kind, method)
    history: list[Any] = [
        {"role": "user", "content": "What is the weather?"},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "It is sunny.", "annotations": []}],
        },
    ]

    async def body(store: Any) -> None:
        session = AgentsSession(new_id(), store)
        await session.add_items(history)
        assert await session.get_items(limit=2) == history[-2:]
        model = ScriptedModel()
        model.enqueue([_text("Tomorrow is sunny too.")])
        config = RunConfig(session_settings=SessionSettings(limit=2))
        agent = Agent(name="test", model=model)
        await _run_agent(method, agent, "What about tomorrow?", session=session, run_config=config)
        assert model.calls[-1].input == [
            history[-1],
            {"role": "user", "content": "What about tomorrow?"},
        ]

    _run(kind, tmp_path, body)


def test_runner_with_tools_then_replay_to_claude(kind: str, tmp_path: Path) -> None:
    """A run where the model reasons, calls a function tool and answers; the session holds
    exactly the items the SDK wrote, and the same history replays to other providers."""
    sid = new_id()

    @function_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"18 C and clear in {city}"

    async def body(store: Any) -> tuple[list[Any], dict[str, Any], Any]:
        session = AgentsSession(sid, store)
        model = ScriptedModel()
        reasoning = ResponseReasoningItem(
            id="rs_1",
            type="reasoning",
            summary=[Summary(text="Weather needs the tool.", type="summary_text")],
            encrypted_content="gAAAAB-secret",
        )
        call = ResponseFunctionToolCall(
            id="fc_1",
            call_id="call_1",
            type="function_call",
            name="get_weather",
            arguments='{"city": "Paris"}',
        )
        model.enqueue([reasoning, call])
        model.enqueue([_text("It is 18 C and clear in Paris.", "msg_2")])
        agent = Agent(name="weather", model=model, tools=[get_weather])
        result = await Runner.run(agent, "Weather in Paris?", session=session)
        assert result.final_output == "It is 18 C and clear in Paris."
        # the second model call saw the history the session returned
        seen = model.calls[-1].input
        items = await AgentsSession(sid, store).get_items()
        requests = {
            p: await session.to_request(p) for p in ("anthropic", "gemini", "bedrock-converse")
        }
        return items, requests, seen

    items, requests, seen = _run(kind, tmp_path, body)
    assert [item.get("type") for item in items] == [
        None,
        "reasoning",
        "function_call",
        "function_call_output",
        "message",
    ]
    assert seen == items[:4]
    assert items[3] == {
        "call_id": "call_1",
        "output": "18 C and clear in Paris",
        "type": "function_call_output",
    }
    for provider, request in requests.items():
        assert problems(provider, request) == [], provider
    assert requests["anthropic"]["messages"][1] == {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}}
        ],
    }


# -- what fastmerge adds: the log's other writers, damaged rows, clear errors ---------------------


def test_a_session_s_messages_read_as_their_items(
    tmp_path: Path, aggregate_module: ModuleType, messages_module: ModuleType
) -> None:
    """A message a fastmerge Session appended (no item kept) reads as its Responses input
    items; a compaction of the log leads the items with its summary."""
    store = SQLiteStore(str(tmp_path / "agents.db"))
    sid = new_id()
    writer = Session(sid, store, messages=messages_module)
    claude = aggregate_module.aggregate(anthropic_events(text="Checking."), "anthropic")
    writer.append([{"role": "user", "content": "old question"}, claude])
    writer.append(messages_module.ToolMessage(tool_call_id="toolu_01", content="18 C"))

    async def body() -> list[Any]:
        session = AgentsSession(sid, store)
        await session.add_items([{"role": "user", "content": "new question"}])
        return await session.get_items()

    items = asyncio.run(body())
    assert items == [
        {"role": "user", "content": "old question"},
        {"type": "message", "role": "assistant", "content": "Checking."},
        {
            "type": "function_call",
            "call_id": "toolu_01",
            "name": "get_weather",
            "status": "completed",
            "arguments": '{"city": "Paris"}',
        },
        {"type": "function_call_output", "call_id": "toolu_01", "output": "18 C"},
        {"role": "user", "content": "new question"},
    ]
    writer.compact(1, summarize=lambda left_out: f"{len(left_out)} earlier messages")
    items = asyncio.run(AgentsSession(sid, store).get_items())
    assert items == [
        {"role": "user", "content": "3 earlier messages"},
        {"role": "user", "content": "new question"},
    ]
    assert asyncio.run(AgentsSession(sid, store).get_items(limit=1)) == items[-1:]
    store.close()


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
        ("hello", "str is not a Responses input item (a dict)"),
        ({"role": "user", "content": 5}, "a user message's content is int, not str or list"),
        (
            {"type": "function_call_output", "call_id": 7, "output": "x"},
            "a function_call_output needs a str call_id and a str or list output",
        ),
        (
            {"content": "no role"},
            "a dict without a str type or a user, system, developer or assistant role is not "
            "a Responses input item",
        ),
        (
            {"type": "function_call", "call_id": "c", "name": "f", "arguments": 5},
            "a function_call item the Responses adapter refuses: ",
        ),
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
        with pytest.raises(ValueError, match="limit must be an int >= 0 or None, not -1"):
            await session.get_items(limit=-1)

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
    assert _dumped(items) == _dumped([item])
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
        assert _dumped(cold) == _dumped([call, *ITEMS] * 2)
        assert _dumped(await session.get_items()) == _dumped([call, *ITEMS] * 2)
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

    mine, halves = _run(kind, tmp_path, body)
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


def test_a_stored_item_the_adapter_refuses_is_read_and_its_message_names_the_row(
    tmp_path: Path, messages_module: ModuleType
) -> None:
    """add_items refuses an item the Responses adapter refuses (the adapter runs on append,
    its message not kept); such a row written by another writer is read back verbatim by
    get_items and popped, and its message raises CorruptRowError naming the row and the
    adapter's reason, in AgentsSession.to_request and a Session's reads, every time."""
    bad = {"type": "function_call", "call_id": "c", "name": "f", "arguments": 5}
    store = SQLiteStore(str(tmp_path / "agents.db"))
    sid = new_id()

    async def body() -> None:
        session = AgentsSession(sid, store)
        await session.add_items([{"role": "user", "content": "hi"}])
        with pytest.raises(errors.SessionTypeError, match="the Responses adapter refuses"):
            await session.add_items([bad])
        store.append(sid, [NewEvent("assistant_item", False, _log._dumps(bad))])
        assert await session.get_items() == [{"role": "user", "content": "hi"}, bad]
        for _ in range(2):
            with pytest.raises(errors.CorruptRowError) as caught:
                await session.to_request("openai-chat")
            assert caught.value.seq == 2
            assert caught.value.detail.startswith(
                "not a Responses input item: a function_call item the Responses adapter refuses: "
            )
        assert await session.pop_item() == bad  # its row read as an item, not a message
        assert await session.to_request("openai-chat") == {
            "messages": [{"role": "user", "content": "hi"}]
        }

    asyncio.run(body())
    session = Session(sid, store, messages=messages_module)
    store.append(sid, [NewEvent("assistant_item", False, _log._dumps(bad))])
    messages = session.messages()  # built at its first read
    with pytest.raises(errors.CorruptRowError, match="the Responses adapter refuses"):
        messages[-1].to_dict()
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
        ("tool_item", '{"type": "function_call_output"}', "not a Responses input item: a "),
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
