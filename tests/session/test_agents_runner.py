"""``Runner.run`` / ``run_sync`` / ``run_streamed`` with ``AgentsSession`` as the session and the
SDK's own test model (``agents.testing.ScriptedModel``): the conversation remembered, limits,
tools, then the history replayed to Claude; and a ``Session``'s messages read as items."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _support.replay_validators import problems
from _support.session_helpers import anthropic_events, new_id

agents = pytest.importorskip("agents", reason="openai-agents (fastmerge[agents]) is not installed")

from _support import agents as _agents  # noqa: E402
from _support.agents import run_on, text_item  # noqa: E402
from agents import Agent, RunConfig, Runner, SessionSettings, function_tool  # noqa: E402
from agents.testing import ScriptedModel  # noqa: E402
from openai.types.responses import (  # noqa: E402
    ResponseFunctionToolCall,
    ResponseReasoningItem,
)
from openai.types.responses.response_reasoning_item import Summary  # noqa: E402

from fastmerge.session import (  # noqa: E402
    Session,
    SQLiteStore,
)
from fastmerge.session.agents import AgentsSession  # noqa: E402

RUNNERS = ["run", "run_sync", "run_streamed"]

#: the store each test runs on: SQLite, PostgreSQL (sync), PostgreSQL (async)
kind = _agents.kind


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
        model.enqueue([text_item("San Francisco")])
        first = await _run_agent(
            method, agent, "What city is the Golden Gate Bridge in?", session=session
        )
        assert first.final_output == "San Francisco"
        model.enqueue([text_item("California")])
        second = await _run_agent(method, agent, "What state is it in?", session=session)
        assert second.final_output == "California"
        assert model.calls[-1].input == [
            {"content": "What city is the Golden Gate Bridge in?", "role": "user"},
            text_item("San Francisco").model_dump(exclude_unset=True),
            {"content": "What state is it in?", "role": "user"},
        ]
        # another session id holds its own history
        other = AgentsSession(new_id(), store)
        model.enqueue([text_item("I like dogs")])
        await _run_agent(method, agent, "I like dogs", session=other)
        assert len(model.calls[-1].input) == 1
        assert len(await AgentsSession(sid, store).get_items()) == 4

    run_on(kind, tmp_path, body)


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
        model.enqueue([text_item("This should run")])
        await _run_agent(method, agent, given, session=session)
        assert model.calls[-1].input == history + given

        def users_only(old: list[Any], new: list[Any]) -> list[Any]:
            return [item for item in old if item.get("role") == "user"] + new

        model.enqueue([text_item("I'm gpt-4o")])
        question = [{"role": "user", "content": "What your name?"}]
        config = RunConfig(session_input_callback=users_only)
        await _run_agent(method, agent, question, session=session, run_config=config)
        assert model.calls[-1].input == [history[0], given[0], question[0]]

    run_on(kind, tmp_path, body)


@pytest.mark.parametrize("method", RUNNERS)
def test_runner_session_limit(kind: str, tmp_path: Path, method: str) -> None:
    _runner_kind(kind, method)

    async def body(store: Any) -> None:
        session = AgentsSession(new_id(), store)
        model = ScriptedModel()
        agent = Agent(name="test", model=model)
        for n in (1, 2, 3):
            model.enqueue([text_item(f"Reply {n}")])
            await _run_agent(method, agent, f"Message {n}", session=session)
        assert len(await session.get_items()) == 6
        for limit, expected in ((2, 3), (0, 1), (None, 11), (100, 13)):
            model.enqueue([text_item("Reply")])
            config = RunConfig(session_settings=SessionSettings(limit=limit))
            await _run_agent(method, agent, "Message", session=session, run_config=config)
            given = model.calls[-1].input
            assert len(given) == expected
            assert given[-1] == {"content": "Message", "role": "user"}
            if limit == 2:
                assert given[0] == {"content": "Message 3", "role": "user"}
                assert given[1]["content"][0]["text"] == "Reply 3"

    run_on(kind, tmp_path, body)


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
        model.enqueue([text_item("Tomorrow is sunny too.")])
        config = RunConfig(session_settings=SessionSettings(limit=2))
        agent = Agent(name="test", model=model)
        await _run_agent(method, agent, "What about tomorrow?", session=session, run_config=config)
        assert model.calls[-1].input == [
            history[-1],
            {"role": "user", "content": "What about tomorrow?"},
        ]

    run_on(kind, tmp_path, body)


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
        model.enqueue([text_item("It is 18 C and clear in Paris.", "msg_2")])
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

    items, requests, seen = run_on(kind, tmp_path, body)
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
