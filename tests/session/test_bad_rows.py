"""Rows a session cannot read, and ids no store holds: each gives one of the
session's typed errors (never RecursionError, TypeError, UnicodeEncodeError, psycopg's
DataError or ProgramLimitExceeded), on SQLite (a file) and PostgreSQL alike, for Session and
AsyncSession; nothing stored changes and a refused append appends nothing.

The damage is written the way a damaged file or another program would write it: through a
connection of its own (sqlite3 / psycopg), behind the session's back. Damage the schema forbids
(NULL, another type) is written into a table created without those constraints (SQLite: before
fastmerge opens the file; PostgreSQL: in a schema of the test's own, with NOT NULL dropped).
"""

from __future__ import annotations

import asyncio
import functools
import operator
import re
import sqlite3
import warnings
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _support.session_helpers import STORES, anthropic_events, make_store, new_id, pg_dsn

from fastmerge import MAX_DEPTH, errors
from fastmerge.session import (
    MAX_SESSION_ID_BYTES,
    AsyncPostgresStore,
    AsyncSession,
    Compaction,
    NewEvent,
    Session,
    SQLiteStore,
)

USER = {"role": "user", "content": "q"}
DEEP = 100_000


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    store = make_store(request.param, tmp_path)
    yield store
    store.close()


class Writer:
    """A connection of its own to the store's database, as another program has."""

    def __init__(self, store: Any) -> None:
        if isinstance(store, SQLiteStore):
            self.db: Any = sqlite3.connect(store.path, isolation_level=None)
            self.mark = "?"
        else:
            import psycopg

            self.db = psycopg.connect(pg_dsn(), autocommit=True)
            search_path = store._db.execute("SHOW search_path").fetchone()[0]
            self.db.execute(f"SET search_path TO {search_path}")
            self.mark = "%s"

    def sql(self, statement: str, values: tuple[Any, ...] = ()) -> None:
        self.db.execute(statement.replace("?", self.mark), values)

    def insert(self, sid: str, seq: Any, turn: Any, kind: Any, version: Any, data: Any) -> None:
        self.sql(
            "INSERT INTO fastmerge_events VALUES (?, ?, ?, ?, ?, ?)",
            (sid, seq, turn, kind, version, data),
        )

    def close(self) -> None:
        self.db.close()


@contextmanager
def writer(store: Any) -> Iterator[Writer]:
    w = Writer(store)
    try:
        yield w
    finally:
        w.close()


@contextmanager
def loose_store(kind: str, tmp_path: Path) -> Iterator[Any]:
    """A store whose events table holds NULLs (and, in SQLite, any type): what a damaged or
    hand-made database may hold."""
    if kind == "sqlite":
        path = tmp_path / "loose.db"
        with closing(sqlite3.connect(path)) as db, db:
            db.execute(
                "CREATE TABLE fastmerge_events (session_id TEXT, seq INTEGER, turn INTEGER,"
                " kind TEXT, version INTEGER, data TEXT)"
            )
        store = SQLiteStore(str(path))
        try:
            yield store
        finally:
            store.close()
        return
    import psycopg

    from fastmerge.session import PostgresStore

    schema = new_id().replace("-", "_")
    with psycopg.connect(pg_dsn(), autocommit=True) as db:
        db.execute(f"CREATE SCHEMA {schema}")
        try:
            db.execute(f"SET search_path TO {schema}")
            store = PostgresStore(db)
            db.execute("ALTER TABLE fastmerge_events ALTER COLUMN turn DROP NOT NULL")
            db.execute("ALTER TABLE fastmerge_events ALTER COLUMN version DROP NOT NULL")
            yield store
        finally:
            db.execute(f"DROP SCHEMA {schema} CASCADE")


def _rows(store: Any, sid: str) -> list[tuple[Any, ...]]:
    return [tuple(e) for e in store.load(sid)]


def _refused(store: Any, sid: str, error: type[Exception], message: str) -> None:
    """Every way in meets ``error`` with ``message``, and nothing is appended: a new Session,
    each read of a session opened before the damage (:func:`_open`), its append after that,
    and AsyncSession's open."""
    before = _rows(store, sid)
    with pytest.raises(error) as caught:
        Session(sid, store)
    assert str(caught.value) == message
    session = _opened(store, sid)
    reads = [session.messages, session.turns, session.pop, session.__len__]
    for read in [*reads, lambda: session.to_request("anthropic"), lambda: session.compact(1)]:
        with pytest.raises(error) as caught:
            read()
        assert str(caught.value) == message
    with pytest.raises(error, match=re.escape(message)):
        session.append(USER)  # nothing is written after a row it cannot read

    async def run() -> None:
        with pytest.raises(error, match=re.escape(message)):
            await AsyncSession.open(sid, store)

    asyncio.run(run())
    assert _rows(store, sid) == before


_OPENED: dict[tuple[int, str], Session] = {}


def _opened(store: Any, sid: str) -> Session:
    """A session on ``sid`` opened (and read) before its row was damaged."""
    return _OPENED[(id(store), sid)]


def _open(store: Any, sid: str) -> Session:
    session = Session(sid, store)
    session.messages()
    _OPENED[(id(store), sid)] = session
    return session


# -- seq and turn ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seq", "turn", "detail"),
    [
        (3, 1, "seq out of order: the row after seq 1 must be seq 2"),
        (7, 2, "seq out of order: the row after seq 1 must be seq 2"),
        (2, 0, "turn 0 out of order: after turn 1, 1 or 2"),
        (2, 3, "turn 3 out of order: after turn 1, 1 or 2"),
        (2, -4, "turn -4 out of order: after turn 1, 1 or 2"),
    ],
)
def test_a_seq_or_turn_out_of_order(store: Any, seq: int, turn: int, detail: str) -> None:
    sid = new_id()
    _open(store, sid).append(USER)
    with writer(store) as w:
        w.insert(sid, seq, turn, "user", 1, '{"role":"user","content":"x"}')
    _refused(store, sid, errors.CorruptRowError, f"session {sid!r}, row seq={seq}: {detail}")


@pytest.mark.parametrize("seq", [-1, 0])
def test_a_negative_or_zero_seq_is_not_skipped(store: Any, seq: int) -> None:
    sid = new_id()
    _open(store, sid)
    with writer(store) as w:
        w.insert(sid, seq, 1, "user", 1, '{"role":"user","content":"x"}')
    message = f"session {sid!r}, row seq={seq}: seq out of order: the first row must be seq 1"
    _refused(store, sid, errors.CorruptRowError, message)
    # the store itself numbers nothing after it (an event at seq 0 or 1 would be hidden)
    with pytest.raises(errors.CorruptRowError, match="the last row's seq is not a positive int"):
        store.append(sid, [NewEvent("user", True, '{"role":"user","content":"y"}')])
    assert [e.seq for e in store.load(sid)] == [seq]


@pytest.mark.parametrize("kind", STORES)
@pytest.mark.parametrize(
    ("seq", "turn", "shown", "detail"),
    [
        (2, None, "2", "its turn is NULL, not an int"),
        ("two", 1, "'two'", "its seq is a str, not an int"),
        (2, "1", "2", None),  # SQLite's INTEGER affinity stores '1' as 1: a good row
        (2, "one", "2", "its turn is a str, not an int"),
        (2, 1.5, "2", "its turn is a float, not an int"),
        (2, b"\x01", "2", "its turn is a bytes, not an int"),
        (None, 1, "None", "its seq is NULL, not an int"),
    ],
)
def test_a_seq_or_turn_of_another_type(
    kind: str, tmp_path: Path, seq: Any, turn: Any, shown: str, detail: str | None
) -> None:
    if kind == "postgres" and (type(seq) is not int or type(turn) not in (int, type(None))):
        pytest.skip("PostgreSQL's bigint columns hold only ints (and NULL where allowed)")
    with loose_store(kind, tmp_path) as store:
        sid = new_id()
        _open(store, sid).append(USER)
        with writer(store) as w:
            w.insert(sid, seq, turn, "user", 1, '{"role":"user","content":"x"}')
        if detail is None:
            assert len(Session(sid, store).messages()) == 2
            return
        message = f"session {sid!r}, row seq={shown}: {detail}"
        if seq is None:
            # a NULL seq sorts first, so a session reading the whole log meets it first; one
            # that has read seq 1 reads on from seq > 1, which NULL never is
            with pytest.raises(errors.CorruptRowError) as caught:
                Session(sid, store)
            assert str(caught.value) == message
            assert len(store.load(sid)) == 2
            return
        _refused(store, sid, errors.CorruptRowError, message)
        if type(seq) is int:  # the last row is the damaged one: the store appends nothing
            with pytest.raises(errors.CorruptRowError, match="the last row's turn"):
                store.append(sid, [NewEvent("tool", False, "{}")])
            assert len(store.load(sid)) == 2


# -- schema versions ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", STORES)
@pytest.mark.parametrize(
    ("version", "shown"),
    [(2, None), (0, "0"), (-3, "-3"), (None, "None"), ("abc", "'abc'"), (1.5, "1.5")],
)
def test_a_row_version_that_is_not_one_this_fastmerge_reads(
    kind: str, tmp_path: Path, version: Any, shown: str | None
) -> None:
    if kind == "postgres" and type(version) not in (int, type(None)):
        pytest.skip("PostgreSQL's integer column holds only ints")
    with loose_store(kind, tmp_path) as store:
        sid = new_id()
        _open(store, sid).append(USER)
        with writer(store) as w:
            w.insert(sid, 2, 1, "user", version, '{"role":"user","content":"x"}')
        where = f"session {sid!r}, row seq=2"
        if shown is None:
            detail = f"schema version {version} is newer than this fastmerge reads (up to 1)"
            message = f"{where}: {detail}; upgrade fastmerge"
        else:
            message = (
                f"{where}: schema version {shown} is not a schema version (this fastmerge "
                "reads 1 to 1); the database is damaged"
            )
        _refused(store, sid, errors.SchemaVersionError, message)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("abc", "'abc'"),
        ("", "''"),
        ("0", "0"),
        ("1.0", "'1.0'"),
        (" 1", "' 1'"),
        ("x" * 3000, "'" + "x" * 39 + "... (3000 characters)"),
        ("9" * 40, "'" + "9" * 40 + "'"),
        ("7", None),
    ],
)
def test_a_meta_version_that_is_not_one_this_fastmerge_reads(
    tmp_path: Path, value: str, shown: str | None
) -> None:
    path = tmp_path / "meta.db"
    with Session("x", path) as session:
        session.append(USER)
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE fastmerge_meta SET value = ? WHERE key = 'schema_version'", (value,))
    before = path.read_bytes()
    with pytest.raises(errors.SchemaVersionError) as caught:
        Session("x", path)
    if shown is None:
        detail = f"schema version {value} is newer than this fastmerge reads (up to 1); upgrade"
        assert str(caught.value) == f"database {str(path)!r}: {detail} fastmerge"
    else:
        assert str(caught.value) == (
            f"database {str(path)!r}: schema version {shown} is not a schema version (this "
            "fastmerge reads 1 to 1); the database is damaged"
        )
    assert caught.value.version == (int(value) if shown is None or value == "0" else value)
    assert path.read_bytes() == before


def test_a_postgres_meta_version_that_is_not_an_int() -> None:
    import psycopg

    from fastmerge.session import PostgresStore

    schema = new_id().replace("-", "_")
    with psycopg.connect(pg_dsn(), autocommit=True) as db:
        db.execute(f"CREATE SCHEMA {schema}")
        try:
            db.execute(f"SET search_path TO {schema}")
            Session("x", PostgresStore(db)).append(USER)
            db.execute("UPDATE fastmerge_meta SET value = 'v2' WHERE key = 'schema_version'")
            with pytest.raises(errors.SchemaVersionError) as caught:
                PostgresStore(db)
            assert str(caught.value) == (
                "PostgreSQL database: schema version 'v2' is not a schema version (this "
                "fastmerge reads 1 to 1); the database is damaged"
            )

            async def run() -> None:
                with pytest.raises(errors.SchemaVersionError, match="'v2' is not a schema"):
                    await AsyncPostgresStore.connect(
                        pg_dsn() + f"&options=-csearch_path%3D{schema}"
                    )

            asyncio.run(run())
        finally:
            db.execute(f"DROP SCHEMA {schema} CASCADE")


# -- data nested 100,000 deep ------------------------------------------------------------------


def _nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for n in range(depth):
        value = [value] if n % 2 else {"k": value}
    return value


@pytest.mark.parametrize(
    ("kind", "data", "detail"),
    [
        (
            "user",
            "[" * DEEP + "]" * DEEP,
            "data is not JSON this fastmerge reads: nested deeper than 264 levels",
        ),
        (
            "assistant",
            '{"metadata":' + '{"a":' * DEEP + "1" + "}" * DEEP + "}",
            "data is not JSON this fastmerge reads: nested deeper than 264 levels",
        ),
        (
            "user",
            '{"role":"user","content":' + "[" * 400 + "]" * 400 + "}",
            "not a user message: its content nests deeper than 264 levels",
        ),
        (
            "assistant",
            '{"role":"assistant","metadata":' + '{"a":' * 300 + "1" + "}" * 300 + "}",
            "not an assistant message: DepthLimitError: nesting deeper than the limit of 256 "
            "levels (fastmerge.MAX_DEPTH = 256); flatten the input or merge it in parts",
        ),
        ("compaction", '{"start_turn":1,"summary":' + "[" * DEEP + "]" * DEEP + "}", None),
        ("compaction", '{"start_turn":1,"summary":' + "[" * 50 + "]" * 50 + "}", None),
    ],
)
def test_data_nested_deep(store: Any, kind: str, data: str, detail: str | None) -> None:
    sid = new_id()
    _open(store, sid).append(USER)
    with writer(store) as w:
        w.insert(sid, 2, 1, kind, 1, data)
    before = _rows(store, sid)
    if detail is None:  # a marker is read with the log
        detail = (
            "data is not JSON this fastmerge reads: nested deeper than 264 levels"
            if len(data) > 1000
            else "a compaction's summary is a str or null"
        )
        _refused(store, sid, errors.CorruptRowError, f"session {sid!r}, row seq=2: {detail}")
        return
    # a message row is read when its message is first read, and every time: a user or system
    # message with the history, an assistant or tool message at a read of the message itself
    message = f"session {sid!r}, row seq=2: {detail}"
    session = Session(sid, store)
    deferred = kind in ("assistant", "tool")
    for _ in range(2):
        if deferred:
            history = session.messages()
            assert len(history) == len(session) == 2
            unread = history[1]
            reads = (
                unread.to_dict,
                lambda: session.turns()[0].messages[1].content,
                functools.partial(operator.eq, unread, unread),
            )
        else:
            reads = (session.messages, session.turns, session.__len__)
        for read in reads:
            with pytest.raises(errors.CorruptRowError) as caught:
                read()
            assert str(caught.value) == message
        with pytest.raises(errors.CorruptRowError, match=re.escape(message)):
            session.to_request("openai-chat")
        with pytest.raises(errors.CorruptRowError, match=re.escape(message)):
            session.pop()  # the message it would take out: nothing is written
        with pytest.raises(errors.CorruptRowError, match=re.escape(message)):
            Session(sid, store, compaction=Compaction(max_turns=1, keep_last_turns=1)).append(
                USER
            )  # compaction reads the history before writing
    assert _rows(store, sid) == before

    async def run() -> None:
        session = await AsyncSession.open(sid, store)
        with pytest.raises(errors.CorruptRowError, match=re.escape(message)):
            history = await session.messages()
            history[1].to_dict()
        with pytest.raises(errors.CorruptRowError, match=re.escape(message)):
            await session.pop()

    asyncio.run(run())
    assert _rows(store, sid) == before


def test_a_message_row_is_read_when_needed_and_the_log_goes_on(store: Any) -> None:
    """A corrupt message row no read has met does not stop appends (the log is append-only;
    nothing after it depends on it), and once met, it stops them only while the history holds
    it: after a ``clear`` the log goes on."""
    sid = new_id()
    session = Session(sid, store)
    session.append(USER)
    with writer(store) as w:
        w.insert(sid, 2, 1, "tool", 1, "[" * DEEP)
    session.append({"role": "user", "content": "next"})  # the row is not read: no check
    with pytest.raises(errors.CorruptRowError, match="row seq=2: data is not JSON"):
        session.messages()[1].content  # noqa: B018  (read when the message is read)
    with pytest.raises(errors.CorruptRowError, match="row seq=2: data is not JSON"):
        session.to_request("anthropic")
    session.clear()
    session.append({"role": "user", "content": "again"})
    assert session.messages() == [{"role": "user", "content": "again"}]
    assert Session(sid, store).messages() == [{"role": "user", "content": "again"}]
    assert [e.kind for e in store.load(sid)] == ["user", "tool", "user", "clear", "user"]


def test_a_session_that_met_a_row_it_cannot_read_appends_nothing_until_it_reads(
    store: Any,
) -> None:
    """An assistant row whose data a read of the message met as corrupt (messages are read
    lazily, after the refresh): append refuses, naming the row, for Session and AsyncSession,
    and writes nothing; once the row is mended, append goes on and the history holds the
    message as the row now reads."""
    import fastmerge

    sid = new_id()
    message = fastmerge.aggregate(anthropic_events())
    session = Session(sid, store)
    session.append([USER, message])
    good = store.load(sid)[1].data
    with writer(store) as w:
        w.sql("UPDATE fastmerge_events SET data = ? WHERE session_id = ? AND seq = 2", ("{", sid))
    fresh = Session(sid, store)
    with pytest.raises(errors.CorruptRowError, match="row seq=2: data is not JSON"):
        fresh.messages()[1].content  # noqa: B018  (read when the message is read)
    before = _rows(store, sid)
    for _ in range(2):  # refused every time, not only once
        with pytest.raises(errors.CorruptRowError, match="row seq=2: data is not JSON"):
            fresh.append({"role": "user", "content": "next"})

    async def refused() -> None:
        opened = await AsyncSession.open(sid, store)
        with pytest.raises(errors.CorruptRowError, match="row seq=2: data is not JSON"):
            await opened.to_request("anthropic")
        with pytest.raises(errors.CorruptRowError, match="row seq=2: data is not JSON"):
            await opened.append({"role": "user", "content": "next"})

    asyncio.run(refused())
    assert _rows(store, sid) == before
    with writer(store) as w:
        w.sql("UPDATE fastmerge_events SET data = ? WHERE session_id = ? AND seq = 2", (good, sid))
    assert fresh.append({"role": "user", "content": "next"}) == [3]
    assert fresh.messages()[1] == message
    assert [e.kind for e in store.load(sid)] == ["user", "assistant", "user"]


@pytest.mark.parametrize(
    "content",
    [_nested(DEEP), _nested(MAX_DEPTH + 8)],
    ids=["100000", "264"],
)
def test_appending_data_nested_too_deep_appends_nothing(store: Any, content: Any) -> None:
    sid = new_id()
    session = Session(sid, store)
    session.append(USER)
    before = _rows(store, sid)
    item = {"role": "user", "content": [content]}
    with pytest.raises(errors.SessionTypeError) as caught:
        session.append([USER, item])
    assert str(caught.value) == (
        "append item 1: cannot be stored as JSON: it holds values nested deeper than 264 "
        "levels; nothing was appended"
    )

    async def run() -> None:
        async_session = await AsyncSession.open(sid, store)
        with pytest.raises(errors.SessionTypeError, match="nested deeper than 264 levels"):
            await async_session.append(item)

    asyncio.run(run())
    assert _rows(store, sid) == before


def test_the_deepest_data_a_row_holds_loads_back(store: Any) -> None:
    # the row's object is level 1, its content list level 2: content may nest 263 levels
    item = {"role": "user", "content": [_nested(MAX_DEPTH + 6)]}
    sid = new_id()
    Session(sid, store).append(item)
    assert Session(sid, store).messages() == [item]


# -- text the stores cannot hold ---------------------------------------------------------------


def test_text_that_is_not_utf8_in_a_sqlite_file(tmp_path: Path) -> None:
    store = make_store("sqlite", tmp_path)
    sid = new_id()
    Session(sid, store).append(USER)
    with writer(store) as w:
        w.sql(
            "INSERT INTO fastmerge_events VALUES (?, 2, 1, 'user', 1, CAST(x'7bff7d' AS TEXT))",
            (sid,),
        )
        w.sql(
            "INSERT INTO fastmerge_events VALUES (?, 1, 0, CAST(x'ff' AS TEXT), 1, '{}')",
            (sid + "b",),
        )
    with pytest.raises(errors.CorruptRowError) as caught:
        Session(sid, store).messages()
    assert str(caught.value) == f"session {sid!r}, row seq=2: data is a bytes, not JSON text"
    with pytest.raises(errors.CorruptRowError) as caught:
        Session(sid + "b", store)
    assert str(caught.value) == f"session {sid + 'b'!r}, row seq=1: unknown event kind b'\\xff'"
    events = store.load(sid)
    assert events[1].data == b"{\xff}"
    assert [e.seq for e in Session(sid, store).events()] == [1, 2]
    store.close()


ODD_IDS = [
    ("a\x00b", "holds a NUL at index 1"),
    ("a\ud800b", "holds a lone surrogate '\\ud800' at index 1"),
    ("\udfff", "holds a lone surrogate '\\udfff' at index 0"),
    ("x" * 3000, "is 3000 bytes of UTF-8"),
    ("é" * 600, "is 1200 bytes of UTF-8"),
    ("x" * (MAX_SESSION_ID_BYTES + 1), "is 1025 bytes of UTF-8"),
]


def _shown(sid: str) -> str:
    text = repr(sid)
    return text if len(text) <= 60 else f"{text[:40]}... ({len(sid)} characters)"


@pytest.mark.parametrize(("sid", "reason"), ODD_IDS, ids=lambda v: repr(v)[:12])
def test_an_id_no_store_holds_is_refused_before_anything(store: Any, sid: str, reason: str) -> None:
    message = (
        f"session id {_shown(sid)} {reason}; a session id is 1 to 1024 bytes of UTF-8 text "
        "without NUL"
    )
    good = new_id()
    Session(good, store).append(USER)
    before = _rows(store, good)
    with pytest.raises(errors.SessionIdError) as caught:
        Session(sid, store)
    assert str(caught.value) == message
    assert isinstance(caught.value, errors.SessionError)
    assert caught.value.session_id == sid
    with pytest.raises(errors.SessionIdError, match=re.escape(message)):
        Session(good, store).fork(sid)
    with pytest.raises(errors.SessionIdError, match=re.escape(message)):
        store.append(sid, [NewEvent("user", True, "{}")])
    with pytest.raises(errors.SessionIdError, match=re.escape(message)):
        store.load(sid)

    async def run() -> None:
        with pytest.raises(errors.SessionIdError, match=re.escape(message)):
            AsyncSession(sid, store)
        session = await AsyncSession.open(good, store)
        with pytest.raises(errors.SessionIdError, match=re.escape(message)):
            await session.fork(sid)

    asyncio.run(run())
    assert _rows(store, good) == before


@pytest.mark.parametrize(
    "prefix",
    ["x" * (MAX_SESSION_ID_BYTES - 32), "é" * (MAX_SESSION_ID_BYTES // 2 - 16), "会话-🙂", " "],
    ids=["1024-ascii", "1024-bytes", "non-ascii", "blank"],
)
def test_an_id_every_store_holds(store: Any, prefix: str) -> None:
    sid = prefix + new_id()[2:]  # 32 more bytes, an id of its own (PostgreSQL's tables are shared)
    session = Session(sid, store)
    session.append(USER)
    assert Session(sid, store).messages() == [USER]
    assert session.fork(new_id()).messages() == [USER]


def test_an_async_postgres_store_refuses_the_same_ids() -> None:
    async def run() -> None:
        store = await AsyncPostgresStore.connect(pg_dsn())
        try:
            for sid, _ in ODD_IDS:
                with pytest.raises(errors.SessionIdError):
                    await store.append(sid, [NewEvent("user", True, "{}")])
                with pytest.raises(errors.SessionIdError):
                    await store.load(sid)
            sid = new_id()
            session = await AsyncSession.open(sid, store)
            await session.append(USER)
            with writer_pg() as w:
                w.insert(sid, 3, 1, "user", 1, '{"role":"user","content":"x"}')
            with pytest.raises(errors.CorruptRowError, match="row seq=3: seq out of order"):
                await session.messages()
            with pytest.raises(errors.CorruptRowError):
                await session.append(USER)
            assert [e.seq for e in await store.load(sid)] == [1, 3]
        finally:
            await store.close()

    asyncio.run(run())


@contextmanager
def writer_pg() -> Iterator[Writer]:
    from fastmerge.session import PostgresStore

    store = PostgresStore(pg_dsn())
    try:
        with writer(store) as w:
            yield w
    finally:
        store.close()


# -- no DeprecationWarning from the SQLite store ----------------------------------------------


class _Recording:
    """A sqlite3 connection that records the SQL text it is given (placeholders as written)."""

    def __init__(self, db: sqlite3.Connection, statements: list[str]) -> None:
        object.__setattr__(self, "_db", db)
        object.__setattr__(self, "statements", statements)

    def execute(self, sql: str, *args: Any) -> Any:
        self.statements.append(sql)
        return self._db.execute(sql, *args)

    def executemany(self, sql: str, *args: Any) -> Any:
        self.statements.append(sql)
        return self._db.executemany(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._db, name, value)


def test_the_sqlite_store_binds_only_nameless_placeholders(
    tmp_path: Path, aggregate_module: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python 3.12 and 3.13 warn (DeprecationWarning) and 3.14 raises when a statement with
    named placeholders (``:name``, ``@name``, ``$name``) is given a sequence; ``?NNN`` is
    allowed, but nameless ``?`` is the one form every version takes without a second look.
    Every statement of every path of the store is recorded and checked, and run with
    warnings as errors (as pytest runs every test here)."""
    from fastmerge.session import sqlite as sqlite_store

    statements: list[str] = []
    connect = sqlite3.connect
    monkeypatch.setattr(
        sqlite3, "connect", lambda *a, **k: _Recording(connect(*a, **k), statements)
    )
    message = aggregate_module.aggregate(anthropic_events(), "anthropic")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        store = SQLiteStore(str(tmp_path / "w.db"))
        session = Session("w", store, compaction=Compaction(max_turns=2, keep_last_turns=1))
        for n in range(3):
            session.append({"role": "user", "content": f"q{n}"})  # one event: one INSERT
            session.append([message, message])  # the general path
        assert session.compact(1) is False  # compacted after the third turn already
        session.pop()
        session.fork("w2")
        session.clear()
        assert Session("w", store).messages() == []
        monkeypatch.setattr(sqlite_store, "_RETURNING", False)
        session.append(USER)
        with writer(store) as w:  # text that is not UTF-8: read again with bytes kept
            w.sql("INSERT INTO fastmerge_events VALUES ('w', 99, 9, CAST(x'ff' AS TEXT), 1, '')")
        assert store.load("w", 98)[0].kind == b"\xff"
        store.close()
    named = re.compile(r"[:@$][A-Za-z_]|\?\d")
    kinds = {sql.split()[0] for sql in statements}
    assert {"PRAGMA", "BEGIN", "CREATE", "SELECT", "INSERT", "COMMIT"} <= kinds
    assert sum("RETURNING" in sql for sql in statements) >= 3
    for sql in statements:
        assert not named.search(re.sub(r"'[^']*'", "''", sql)), sql
