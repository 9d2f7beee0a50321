"""Turn-aware compaction: triggers, strategies, recorded as an event; never a
tool call without its result, never a kept call without its reasoning, never an orphan tool
result first."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _support.session_helpers import STORES, anthropic_events, make_store, new_id

from fastmerge.session import Compaction, Session


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    store = make_store(request.param, tmp_path)
    yield store
    store.close()


def _texts(messages: list[Any]) -> list[str]:
    out = []
    for m in messages:
        if isinstance(m, dict):
            out.append(m["content"])
        elif hasattr(m, "tool_call_id"):
            out.append(f"result:{m.tool_call_id}")
        else:
            out.append(m.content)
    return out


def _turn(session: Session, aggregate_module: ModuleType, n: int) -> None:
    session.append({"role": "user", "content": f"q{n}"})
    session.append(
        aggregate_module.aggregate(anthropic_events(text=f"a{n}", call_id=f"c{n}"), "anthropic")
    )


def test_keep_last_turns_is_an_event_and_the_log_keeps_everything(
    aggregate_module: ModuleType, store: Any
) -> None:
    session = Session(new_id(), store)
    session.append({"role": "system", "content": "s"})
    for n in range(5):
        _turn(session, aggregate_module, n)
    assert session.compact(2) is True
    assert _texts(session.messages()) == ["s", "q3", "a3", "q4", "a4"]
    assert [t.number for t in session.turns()] == [4, 5]
    events = session.events()
    assert len(events) == 12 and events[-1].kind == "compaction"
    assert json.loads(events[-1].data) == {"start_turn": 4, "trigger": "manual", "summary": None}
    assert session.compact(2) is False  # nothing more to leave out
    # the next turns come after the compacted history
    _turn(session, aggregate_module, 5)
    assert _texts(session.messages()) == ["s", "q3", "a3", "q4", "a4", "q5", "a5"]


def test_a_tool_result_in_a_later_turn_keeps_its_call(
    aggregate_module: ModuleType, messages_module: ModuleType, store: Any
) -> None:
    session = Session(new_id(), store)
    _turn(session, aggregate_module, 0)
    _turn(session, aggregate_module, 1)  # calls c1 ...
    session.append({"role": "user", "content": "q2"})
    session.append(
        messages_module.ToolMessage(tool_call_id="c1", content="r1")
    )  # ... answered here
    _turn(session, aggregate_module, 3)
    session.compact(2)
    # keeping turns 3 and 4 would start with c1's orphan result: the cut moves to turn 2
    assert _texts(session.messages()) == ["q1", "a1", "q2", "result:c1", "q3", "a3"]
    assert json.loads(session.events()[-1].data)["start_turn"] == 2
    assert _texts(session.messages(last_turns=2)) == _texts(session.messages())


def test_the_reasoning_of_a_kept_tool_call_is_replayed(
    aggregate_module: ModuleType, messages_module: ModuleType, store: Any
) -> None:
    session = Session(new_id(), store)
    for n in range(3):
        _turn(session, aggregate_module, n)
        session.append(messages_module.ToolMessage(tool_call_id=f"c{n}", content=f"r{n}"))
    session.compact(1)
    request = session.to_request("anthropic")["messages"]
    assert request[0] == {"role": "user", "content": "q2"}
    assert request[1]["content"][0] == {
        "type": "thinking",
        "thinking": "The user wants weather.",
        "signature": "EqQBCkYIBx==",
    }
    assert request[2]["content"][0]["tool_use_id"] == "c2"
    assert len(request) == 3


def test_summarize_gets_the_left_out_messages(aggregate_module: ModuleType, store: Any) -> None:
    seen: list[list[str]] = []

    def summarize(messages: Any) -> str:
        seen.append(_texts(list(messages)))
        return f"summary of {len(messages)}"

    session = Session(new_id(), store)
    session.append({"role": "system", "content": "s"})
    for n in range(4):
        _turn(session, aggregate_module, n)
    session.compact(2, summarize=summarize)
    assert seen == [["q0", "a0", "q1", "a1"]]
    assert _texts(session.messages()) == ["s", "summary of 4", "q2", "a2", "q3", "a3"]
    _turn(session, aggregate_module, 4)
    session.compact(1, summarize=summarize)
    # the previous summary comes first in what the next summary replaces
    assert seen[1] == ["summary of 4", "q2", "a2", "q3", "a3"]
    request = session.to_request("anthropic")
    assert request["system"] == "s"
    assert request["messages"][0] == {
        "role": "user",
        "content": [{"type": "text", "text": "summary of 5"}, {"type": "text", "text": "q4"}],
    }


def test_turn_count_trigger(aggregate_module: ModuleType, store: Any) -> None:
    session = Session(new_id(), store, compaction=Compaction(keep_last_turns=2, max_turns=3))
    for n in range(4):
        _turn(session, aggregate_module, n)
    assert _texts(session.messages()) == ["q2", "a2", "q3", "a3"]
    compactions = [json.loads(e.data) for e in session.events() if e.kind == "compaction"]
    assert compactions == [{"start_turn": 3, "trigger": "max_turns", "summary": None}]


def test_token_count_trigger(aggregate_module: ModuleType, store: Any) -> None:
    # each assistant message's usage totals 12 + 30 = 42 tokens
    policy = Compaction(keep_last_turns=1, max_tokens=41)
    session = Session(new_id(), store, compaction=policy)
    session.append({"role": "user", "content": "q0"})
    assert [e.kind for e in session.events()] == ["user"]
    _turn(session, aggregate_module, 1)
    compactions = [json.loads(e.data) for e in session.events() if e.kind == "compaction"]
    assert compactions == [{"start_turn": 2, "trigger": "max_tokens", "summary": None}]
    assert _texts(session.messages()) == ["q1", "a1"]
    # the usage that fired it counts a history that is gone: the next turn does not compact
    session.append({"role": "user", "content": "q2"})
    assert [e.kind for e in session.events()][-2:] == ["compaction", "user"]
    assert _texts(session.messages()) == ["q1", "a1", "q2"]


def test_compaction_options_are_checked() -> None:
    with pytest.raises(ValueError, match="keep_last_turns must be a positive int, not 0"):
        Compaction(keep_last_turns=0)
    with pytest.raises(ValueError, match="max_turns must be at least keep_last_turns"):
        Compaction(keep_last_turns=3, max_turns=2)
    with pytest.raises(ValueError, match="keep_last_turns must be a positive int, not -1"):
        Session("x").compact(-1)
