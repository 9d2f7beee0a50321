"""fastmerge.session.Session: the append-only log, on SQLite and
PostgreSQL, every test on both backends (their messages store and load identically)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from types import ModuleType
from typing import Any, Sequence

import pytest
from _support.corpus import path_of
from _support.session_helpers import STORES, anthropic_events, make_store, new_id

from fastmerge import errors
from fastmerge.session import SCHEMA_VERSION, Event, NewEvent, Session, Store, _log


def assistant(aggregate_module: ModuleType, **options: Any) -> Any:
    return aggregate_module.aggregate(anthropic_events(**options), "anthropic")


def dumped(items: list[Any]) -> bytes:
    # json, not orjson: lone surrogates are valid message text
    return json.dumps([m if isinstance(m, dict) else m.to_dict() for m in items]).encode()


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    store = make_store(request.param, tmp_path)
    yield store
    store.close()


def test_a_message_loads_back_byte_for_byte_from_a_new_connection(
    aggregate_module: ModuleType, messages_module: ModuleType, store: Any, tmp_path: Path
) -> None:
    corpus = path_of("anthropic_messages", "sonnet45-thinking-signature-text-short")
    streamed = aggregate_module.aggregate(corpus.read_bytes(), "anthropic")
    sid = new_id()
    items = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi \udcff \u0000 é"},
        streamed,
        assistant(aggregate_module),
        messages_module.ToolMessage(tool_call_id="toolu_01", content="18 C"),
    ]
    assert Session(sid, store).append(items) == [1, 2, 3, 4, 5]
    kind = "sqlite" if type(store).__name__ == "SQLiteStore" else "postgres"
    again = Session(sid, make_store(kind, tmp_path))
    loaded = again.messages()
    assert dumped(loaded) == dumped(items)
    assert [type(m).__name__ for m in loaded[2:]] == [
        "AssistantMessage",
        "AssistantMessage",
        "ToolMessage",
    ]
    assert loaded[2] == streamed
    again.store.close()


def test_sequence_and_turn_numbers(aggregate_module: ModuleType, store: Any) -> None:
    session = Session(new_id(), store)
    session.append({"role": "system", "content": "s"})
    session.append({"role": "user", "content": "one"})
    session.append(assistant(aggregate_module))
    session.append([{"role": "user", "content": "two"}, {"role": "user", "content": "three"}])
    got = [(e.seq, e.turn, e.kind) for e in session.events()]
    assert got == [
        (1, 0, "system"),
        (2, 1, "user"),
        (3, 1, "assistant"),
        (4, 2, "user"),
        (5, 3, "user"),
    ]
    assert [t.number for t in session.turns()] == [1, 2, 3]
    assert [len(t.messages) for t in session.turns()] == [2, 1, 1]


def test_last_turns_keeps_system_messages(aggregate_module: ModuleType, store: Any) -> None:
    session = Session(new_id(), store)
    session.append({"role": "system", "content": "s"})
    for n in range(3):
        session.append({"role": "user", "content": f"q{n}"})
        session.append(assistant(aggregate_module, text=f"a{n}", call_id=f"toolu_{n}"))
    last = session.messages(last_turns=1)
    assert [m["content"] if isinstance(m, dict) else m.content for m in last] == [
        "s",
        "q2",
        "a2",
    ]
    assert len(session.messages(last_turns=5)) == 7


def test_pop_and_clear_are_events_the_log_keeps(
    aggregate_module: ModuleType, messages_module: ModuleType, store: Any
) -> None:
    session = Session(new_id(), store)
    message = assistant(aggregate_module)
    session.append([{"role": "user", "content": "q"}, message])
    assert session.pop() == message
    assert session.messages() == [{"role": "user", "content": "q"}]
    session.clear()
    assert session.messages() == []
    with pytest.raises(errors.SessionEmptyError, match="has no message to pop"):
        session.pop()
    assert [e.kind for e in session.events()] == ["user", "assistant", "pop", "clear"]
    session.append({"role": "user", "content": "again"})
    assert session.messages() == [{"role": "user", "content": "again"}]
    assert session.turns()[0].number == 2  # turns go on counting after a clear


def test_fork_copies_the_log_and_then_goes_its_own_way(
    aggregate_module: ModuleType, store: Any
) -> None:
    session = Session(new_id(), store)
    session.append([{"role": "user", "content": "q"}, assistant(aggregate_module)])
    session.pop()
    fork = session.fork(new_id())
    assert dumped(fork.messages()) == dumped(session.messages())
    assert [(e.seq, e.turn, e.kind, e.data) for e in fork.events()] == [
        (e.seq, e.turn, e.kind, e.data) for e in session.events()
    ]
    fork.append({"role": "user", "content": "only in the fork"})
    assert len(fork.messages()) == 2
    assert len(session.messages()) == 1
    with pytest.raises(errors.SessionExistsError, match="already has events"):
        session.fork(fork.session_id)


def test_another_session_object_sees_appends(aggregate_module: ModuleType, store: Any) -> None:
    sid = new_id()
    first, second = Session(sid, store), Session(sid, store)
    first.append({"role": "user", "content": "a"})
    second.append({"role": "user", "content": "b"})
    assert (
        first.messages()
        == second.messages()
        == [
            {"role": "user", "content": "a"},
            {"role": "user", "content": "b"},
        ]
    )


def test_threads_appending_lose_nothing(messages_module: ModuleType, store: Any) -> None:
    sid = new_id()
    shared = Session(sid, store)

    def work(n: int) -> None:
        own = Session(sid, store)
        for i in range(25):
            target = shared if i % 2 else own
            target.append(messages_module.ToolMessage(tool_call_id=f"{n}-{i}", content="x"))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    events = shared.events()
    assert [e.seq for e in events] == list(range(1, 101))
    ids = sorted(m.tool_call_id for m in shared.messages())
    assert ids == sorted(f"{n}-{i}" for n in range(4) for i in range(25))


def test_user_dicts_are_copied_in_and_out(store: Any) -> None:
    session = Session(new_id(), store)
    message = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    session.append(message)
    message["content"][0]["text"] = "changed"  # the caller's dict, not the stored one
    out = session.messages()
    assert out == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    out[0]["content"].append("x")
    assert session.messages() == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


def test_in_memory_and_path_stores(tmp_path: Path) -> None:
    with Session("a") as memory:
        memory.append({"role": "user", "content": "x"})
        assert len(memory) == 1
    path = tmp_path / "chat.db"
    with Session("a", path) as on_disk:
        on_disk.append({"role": "user", "content": "x"})
    with Session("a", str(path)) as reopened:
        assert reopened.messages() == [{"role": "user", "content": "x"}]
    assert json.loads(Session("a", path).events()[0].data) == {"role": "user", "content": "x"}


class DictStore:
    """A user's own store: the whole Store protocol in a dict."""

    def __init__(self) -> None:
        self.rows: dict[str, list[Event]] = {}
        self.lock = threading.Lock()

    def append(
        self, session_id: str, events: Sequence[NewEvent], *, new_session: bool = False
    ) -> list[Event]:
        with self.lock:
            rows = self.rows.setdefault(session_id, [])
            if new_session and rows:
                raise errors.SessionExistsError(session_id)
            seq, turn = (rows[-1].seq, rows[-1].turn) if rows else (0, 0)
            stored = []
            for event in events:
                seq, turn = seq + 1, turn + event.new_turn
                stored.append(Event(seq, turn, event.kind, SCHEMA_VERSION, event.data))
            rows.extend(stored)
            return stored

    def load(self, session_id: str, after: int = 0) -> list[Event]:
        return [e for e in self.rows.get(session_id, []) if e.seq > after]

    def close(self) -> None:
        pass


def test_a_store_of_ones_own(aggregate_module: ModuleType) -> None:
    store = DictStore()
    assert isinstance(store, Store)
    message = assistant(aggregate_module)
    session = Session("mine", store)
    session.append([{"role": "user", "content": "q"}, message])
    fork = session.fork("copy")
    assert Session("copy", store).messages() == [{"role": "user", "content": "q"}, message]
    assert fork.to_request("anthropic") == session.to_request("anthropic")
    assert [(e.seq, e.turn, e.kind) for e in store.rows["copy"]] == [
        (1, 1, "user"),
        (2, 1, "assistant"),
    ]


@pytest.mark.parametrize(
    ("usage", "tokens"),
    [
        # a reported total that is not input + output (reasoning counted in it) is the total
        ({"input_tokens": 12, "output_tokens": 30, "total_tokens": 50}, 50),
        # a missing total is input + output, an absent count 0
        ({"input_tokens": 12, "output_tokens": 30}, 42),
        ({"output_tokens": 30}, 30),
        # a zero total where counts were given is computed, as the merge does
        ({"input_tokens": 12, "output_tokens": 30, "total_tokens": 0}, 42),
        ({}, 0),
    ],
)
def test_context_tokens_follow_the_usage_rule(
    messages_module: ModuleType, usage: dict[str, Any], tokens: int
) -> None:
    # from_dict keeps the usage as the row holds it: the total is context_tokens' to compute
    data = messages_module.AssistantMessage(content="a").to_dict()
    data["usage_metadata"] = usage
    message = messages_module.AssistantMessage.from_dict(data)
    assert message.to_dict()["usage_metadata"] == usage
    entries = [_log.Entry(1, 1, "user", None), _log.Entry(2, 1, "assistant", message)]
    assert _log.context_tokens(entries, 0) == tokens
    assert _log.context_tokens(entries, 2) == 0  # a usage before the last compaction counts 0
