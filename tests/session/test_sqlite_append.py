"""SQLiteStore's append of one event: a single INSERT statement (numbered and committed by
itself), numbering exactly as the general path (BEGIN IMMEDIATE, SELECT, INSERT, COMMIT)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fastmerge.session import Event, NewEvent, SQLiteStore
from fastmerge.session import sqlite as sqlite_store


def _script(path: Path) -> list[list[Event]]:
    # two connections to one file, appending to two sessions in turn
    one, two = SQLiteStore(str(path)), SQLiteStore(str(path))
    out = [
        one.append("a", [NewEvent("system", False, "{}")]),
        two.append("a", [NewEvent("user", True, '{"n":1}')]),
        one.append("b", [NewEvent("user", True, "{}")]),
        one.append("a", [NewEvent("assistant", False, "{}")]),
        two.append("a", [NewEvent("user", True, "{}"), NewEvent("tool", False, "{}")]),
        one.append("a", [NewEvent("user", True, "{}")]),
        two.append("b", [NewEvent("pop", False, "{}")]),
    ]
    out.append(one.load("a") + two.load("b"))
    one.close()
    two.close()
    return out


def test_single_appends_number_as_the_general_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = _script(tmp_path / "fast.db")
    monkeypatch.setattr(sqlite_store, "_RETURNING", False)
    assert _script(tmp_path / "general.db") == fast
    assert [(e.seq, e.turn, e.kind) for e in fast[-1]] == [
        (1, 0, "system"),
        (2, 1, "user"),
        (3, 1, "assistant"),
        (4, 2, "user"),
        (5, 2, "tool"),
        (6, 3, "user"),
        (1, 1, "user"),
        (2, 1, "pop"),
    ]
    assert fast[1] == [Event(2, 1, "user", 1, '{"n":1}')]


def test_a_single_append_is_one_statement(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "s.db"))
    statements: list[str] = []
    store._db.set_trace_callback(statements.append)
    assert store.append("a", [NewEvent("user", True, "{}")]) == [Event(1, 1, "user", 1, "{}")]
    assert len(statements) == 1 and statements[0].startswith("INSERT INTO fastmerge_events")
    store._db.set_trace_callback(None)
    # committed: another connection sees it
    other = SQLiteStore(str(tmp_path / "s.db"))
    assert other.load("a") == [Event(1, 1, "user", 1, "{}")]
    other.close()
    store.close()


def test_a_single_append_seeks_the_last_row(tmp_path: Path) -> None:
    """The statement finds the session's last row by one index seek (ORDER BY seq DESC LIMIT
    1), not by visiting the session's rows (an aggregate with conditions on it would): an
    append runs as many SQLite VM steps on the 11th event as on the 2,011th."""
    store = SQLiteStore(str(tmp_path / "s.db"))
    event = [NewEvent("tool", False, "{}")]

    def steps() -> int:
        count = [0]

        def tick() -> int:
            count[0] += 1
            return 0

        store._db.set_progress_handler(tick, 1)
        store.append("a", event)
        store._db.set_progress_handler(None, 1)
        return count[0]

    store.append("a", [NewEvent("tool", False, "{}")] * 10)
    few = steps()
    store.append("a", [NewEvent("tool", False, "{}")] * 2_000)
    many = steps()
    assert 0 < few and many <= few + 5, (few, many)
    assert [e.seq for e in store.load("a", 2_010)] == [2_011, 2_012]
    store.close()
