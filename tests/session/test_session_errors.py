"""Bad input to a session: another class, an unknown provider, a corrupt
row, a schema of a newer version. Each is a typed error naming the row; nothing stored is
lost or changed."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _support.session_helpers import STORES, make_store, new_id, pg_dsn

from fastmerge import errors
from fastmerge.session import Session, SQLiteStore

USER = {"role": "user", "content": "q"}


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    store = make_store(request.param, tmp_path)
    yield store
    store.close()


def _insert(store: Any, sid: str, seq: int, kind: str, version: int, data: str) -> None:
    """A row written behind the session's back (another program, a damaged file)."""
    mark = "?" if isinstance(store, SQLiteStore) else "%s"
    store._db.execute(
        f"INSERT INTO fastmerge_events VALUES ({', '.join([mark] * 6)})",
        (sid, seq, 1, kind, version, data),
    )


def _rows(store: Any, sid: str) -> list[tuple[Any, ...]]:
    return [tuple(e) for e in store.load(sid)]


@pytest.mark.parametrize(
    ("item", "name"),
    [
        ("text", "str"),
        ({"role": "assistant", "content": "x"}, "dict"),
        ({"role": "user", "content": 5}, "dict"),
        ({"role": "user", "content": "x", "extra": 1}, "dict"),
        (None, "NoneType"),
    ],
)
def test_another_class_appends_nothing(store: Any, item: Any, name: str) -> None:
    session = Session(new_id(), store)
    session.append(USER)
    with pytest.raises(errors.SessionTypeError) as caught:
        session.append([USER, item])
    assert str(caught.value) == (
        f"append item 1: {name} is not a message a session stores (AssistantMessage, "
        'ToolMessage, or a {"role": "user" | "system", "content": str | list} dict); '
        "nothing was appended"
    )
    assert isinstance(caught.value, TypeError)
    assert [e.seq for e in session.events()] == [1]


def test_a_chunk_is_not_a_message(messages_module: ModuleType) -> None:
    chunk = messages_module.AssistantMessageChunk(content="x")
    with pytest.raises(errors.SessionTypeError, match="^append item 0: AssistantMessageChunk is"):
        Session("x").append(chunk)


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ([object], "a type, which JSON does not hold"),
        ([{"a": (1, 2)}], "a tuple, which JSON does not hold"),
        ([{1: "x"}], "a key 1 that is not a str"),
    ],
)
def test_what_json_would_change_is_refused(content: Any, reason: str) -> None:
    session = Session("x")
    with pytest.raises(errors.SessionTypeError) as caught:
        session.append([USER, {"role": "user", "content": content}])
    assert str(caught.value) == (
        f"append item 1: cannot be stored as JSON: it holds {reason}; nothing was appended"
    )
    assert session.events() == []


def test_an_assistant_message_json_would_change_is_refused(messages_module: ModuleType) -> None:
    message = messages_module.AssistantMessage(content="x", metadata={"n": {7: "seven"}})
    with pytest.raises(errors.SessionTypeError, match="it holds a key 7 that is not a str"):
        Session("x").append(message)


@pytest.mark.parametrize(
    ("kind", "data", "detail"),
    [
        (
            "user",
            "{not json",
            "data is not JSON: Expecting property name enclosed in double quotes: "
            "line 1 column 2 (char 1)",
        ),
        ("user", "[1]", "data is not a JSON object"),
        (
            "user",
            '{"role": "system", "content": "x"}',
            "not a user message: expected "
            "{\"role\", \"content\"}, got {'role': 'system', 'content': 'x'}",
        ),
        (
            "assistant",
            '{"bogus": 1}',
            "not an assistant message: ValueError: unknown field 'bogus' for an assistant message",
        ),
        ("shout", "{}", "unknown event kind 'shout'"),
        ("pop", '{"x": 1}', "a pop event holds no data"),
        ("compaction", '{"start_turn": "2"}', "a compaction needs an int start_turn"),
    ],
)
def test_a_corrupt_row_is_named_and_left_as_it_is(
    store: Any, kind: str, data: str, detail: str
) -> None:
    sid = new_id()
    Session(sid, store).append(USER)
    _insert(store, sid, 2, kind, 1, data)
    before = _rows(store, sid)
    with pytest.raises(errors.CorruptRowError) as caught:
        # a message's row is read with the history, or (assistant, tool) at its first read
        [m if isinstance(m, dict) else m.to_dict() for m in Session(sid, store).messages()]
    assert str(caught.value) == f"session {sid!r}, row seq=2: {detail}"
    assert (caught.value.session_id, caught.value.seq) == (sid, 2)
    assert _rows(store, sid) == before


def test_a_row_of_a_newer_schema(store: Any) -> None:
    sid = new_id()
    session = Session(sid, store)
    session.append(USER)
    _insert(store, sid, 2, "user", 2, '{"role": "user", "content": "from the future"}')
    with pytest.raises(errors.SchemaVersionError) as caught:
        session.messages()
    assert str(caught.value) == (
        f"session {sid!r}, row seq=2: schema version 2 is newer than this fastmerge reads "
        "(up to 1); upgrade fastmerge"
    )
    with pytest.raises(errors.SchemaVersionError):
        session.append(USER)  # nothing is written after a row it cannot read
    assert [e.seq for e in store.load(sid)] == [1, 2]


def test_a_database_of_a_newer_schema(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    # closed before the bytes are read: a connection the GC closes later may checkpoint its
    # journal into the file and change it under the comparison
    with Session("x", path) as writer:
        writer.append(USER)
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE fastmerge_meta SET value = '7' WHERE key = 'schema_version'")
    before = path.read_bytes()
    with pytest.raises(errors.SchemaVersionError) as caught:
        Session("x", path)
    assert str(caught.value) == (
        f"database {str(path)!r}: schema version 7 is newer than this fastmerge reads "
        "(up to 1); upgrade fastmerge"
    )
    assert path.read_bytes() == before


def test_wrong_arguments() -> None:
    with pytest.raises(TypeError, match="^session_id must be a non-empty str, not int$"):
        Session(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="^store must be a Store"):
        Session("x", 5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="^last_turns must be a positive int or None, not 0$"):
        Session("x").messages(last_turns=0)


def test_a_postgres_database_of_a_newer_schema() -> None:
    import psycopg

    from fastmerge.session import PostgresStore

    schema = new_id().replace("-", "_")  # a schema of its own: the shared tables stay as they are
    with psycopg.connect(pg_dsn(), autocommit=True) as db:
        db.execute(f"CREATE SCHEMA {schema}")
        try:
            db.execute(f"SET search_path TO {schema}")
            store = PostgresStore(db)
            Session("x", store).append(USER)
            db.execute("UPDATE fastmerge_meta SET value = '7' WHERE key = 'schema_version'")
            with pytest.raises(errors.SchemaVersionError) as caught:
                PostgresStore(db)
            assert str(caught.value) == (
                "PostgreSQL database: schema version 7 is newer than this fastmerge reads "
                "(up to 1); upgrade fastmerge"
            )
            assert [e.kind for e in store.load("x")] == ["user"]
        finally:
            db.execute(f"DROP SCHEMA {schema} CASCADE")
