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
    1), not by scanning the session's rows (an aggregate with conditions on it would): an
    append costs the same on the 1st and the 100,000th event."""
    store = SQLiteStore(str(tmp_path / "s.db"))
    values = ("a", 1, "user", 1, "{}", "a")
    plan = store._db.execute("EXPLAIN QUERY PLAN " + sqlite_store._INSERT_ONE, values).fetchall()
    details = [row[3] for row in plan]
    events = [d for d in details if "fastmerge_events" in d]
    assert events == [
        "SEARCH fastmerge_events USING INDEX sqlite_autoindex_fastmerge_events_1 (session_id=?)"
    ]
    assert not any(d.startswith("USE TEMP B-TREE") for d in details)
    store.close()
