"""The PostgreSQL store (``pip install fastmerge[postgres]``: psycopg 3).

The same table as SQLite's, ``fastmerge_events (session_id, seq, turn, kind, version, data)``
with primary key ``(session_id, seq)`` and ``data`` as ``text`` (not ``jsonb``, which would
reorder keys and refuse ``\\u0000``: the stored text is read back byte for byte), plus
``fastmerge_meta`` with the schema version. Each ``append`` is one transaction that first takes
a transaction-scoped advisory lock on the session id, so concurrent appenders (threads,
processes, hosts) serialize per session and never reuse a ``seq``.

Session ids follow :func:`fastmerge.session.store.check_session_id` (``text`` holds no NUL and
the primary key's index rows are limited to about 2,700 bytes; SQLite refuses the same ids),
checked before any statement, so psycopg's ``DataError`` and ``ProgramLimitExceeded`` never
reach the caller.
"""

from __future__ import annotations

import threading
from typing import Any, Sequence

from .. import errors
from .store import SCHEMA_VERSION, Event, NewEvent, check_session_id, last_row, schema_version

__all__ = ["AsyncPostgresStore", "PostgresStore"]

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS fastmerge_meta (key text PRIMARY KEY, value text NOT NULL)",
    "CREATE TABLE IF NOT EXISTS fastmerge_events ("
    " session_id text NOT NULL, seq bigint NOT NULL, turn bigint NOT NULL,"
    " kind text NOT NULL, version integer NOT NULL, data text NOT NULL,"
    " PRIMARY KEY (session_id, seq))",
    "INSERT INTO fastmerge_meta VALUES ('schema_version', %s) ON CONFLICT (key) DO NOTHING",
)
# one creator of the tables at a time (CREATE TABLE IF NOT EXISTS races on the catalog)
_SETUP_LOCK = "SELECT pg_advisory_xact_lock(hashtext('fastmerge_schema'))"
_VERSION = "SELECT value FROM fastmerge_meta WHERE key = 'schema_version'"
_LOCK = "SELECT pg_advisory_xact_lock(hashtext(%s))"
_LAST = "SELECT seq, turn FROM fastmerge_events WHERE session_id = %s ORDER BY seq DESC LIMIT 1"
_INSERT = "INSERT INTO fastmerge_events VALUES (%s, %s, %s, %s, %s, %s)"
_LOAD = (
    "SELECT seq, turn, kind, version, data FROM fastmerge_events"
    " WHERE session_id = %s AND seq > %s ORDER BY seq"
)
# every row of a session (``load``'s default): a damaged (negative) seq included
_LOAD_ALL = (
    "SELECT seq, turn, kind, version, data FROM fastmerge_events WHERE session_id = %s ORDER BY seq"
)


def _check(version: Any) -> None:
    if version is not None:
        schema_version("PostgreSQL database", version[0])


def _load_query(session_id: str, after: int) -> tuple[str, tuple[Any, ...]]:
    check_session_id(session_id)
    return (_LOAD, (session_id, after)) if after else (_LOAD_ALL, (session_id,))


def _numbered(
    session_id: str, last: Any, events: Sequence[NewEvent], new_session: bool
) -> list[Event]:
    """The events as stored after ``last`` (the session's last ``(seq, turn)`` or None)."""
    if new_session and last is not None:
        raise errors.SessionExistsError(session_id)
    seq, turn = last_row(session_id, last)
    stored = []
    for event in events:
        seq += 1
        turn += 1 if event.new_turn else 0
        stored.append(Event(seq, turn, event.kind, SCHEMA_VERSION, event.data))
    return stored


def _event(row: Any) -> Event:
    # as stored (a NULL turn of a damaged table stays None: the session names the row)
    return Event(*row)


class PostgresStore:
    """A :class:`fastmerge.session.Store` in PostgreSQL: ``dsn`` is a libpq connection string
    (``"postgresql://user@host/db"``) or an open ``psycopg.Connection`` (not closed by
    :meth:`close`). One connection used under a lock: thread-safe."""

    def __init__(self, dsn: Any) -> None:
        import psycopg

        self._owned = isinstance(dsn, str)
        self._db = psycopg.connect(dsn, autocommit=True) if isinstance(dsn, str) else dsn
        self._lock = threading.Lock()
        try:
            with self._lock, self._db.transaction():
                self._db.execute(_SETUP_LOCK)
                for statement in _SCHEMA[:2]:
                    self._db.execute(statement)
                self._db.execute(_SCHEMA[2], (str(SCHEMA_VERSION),))
                version = self._db.execute(_VERSION).fetchone()
            _check(version)
        except BaseException:
            self.close()  # the connection it opened (a given one stays open)
            raise

    def append(
        self, session_id: str, events: Sequence[NewEvent], *, new_session: bool = False
    ) -> list[Event]:
        """See :meth:`fastmerge.session.Store.append`."""
        check_session_id(session_id)
        with self._lock, self._db.transaction():
            self._db.execute(_LOCK, (session_id,))
            last = self._db.execute(_LAST, (session_id,)).fetchone()
            stored = _numbered(session_id, last, events, new_session)
            with self._db.cursor() as cursor:
                cursor.executemany(_INSERT, [(session_id, *e) for e in stored])
        return stored

    def load(self, session_id: str, after: int = 0) -> list[Event]:
        """See :meth:`fastmerge.session.Store.load`."""
        query, values = _load_query(session_id, after)
        with self._lock, self._db.transaction():
            rows = self._db.execute(query, values).fetchall()
        return [_event(row) for row in rows]

    def close(self) -> None:
        """Close the connection if this store opened it."""
        if self._owned:
            self._db.close()


class AsyncPostgresStore:
    """:class:`PostgresStore` on psycopg's ``AsyncConnection`` (an
    :class:`fastmerge.session.AsyncStore`). Create it with ``await
    AsyncPostgresStore.connect(dsn)``."""

    def __init__(self, connection: Any, owned: bool = False) -> None:
        import asyncio

        self._db = connection
        self._owned = owned
        self._lock = asyncio.Lock()

    @classmethod
    async def connect(cls, dsn: Any) -> AsyncPostgresStore:
        """The store on ``dsn`` (a connection string or an open ``AsyncConnection``)."""
        import psycopg

        owned = isinstance(dsn, str)
        db = await psycopg.AsyncConnection.connect(dsn, autocommit=True) if owned else dsn
        store = cls(db, owned)
        try:
            async with db.transaction():
                await db.execute(_SETUP_LOCK)
                for statement in _SCHEMA[:2]:
                    await db.execute(statement)
                await db.execute(_SCHEMA[2], (str(SCHEMA_VERSION),))
                version = await (await db.execute(_VERSION)).fetchone()
            _check(version)
        except BaseException:
            await store.close()  # the connection it opened (a given one stays open)
            raise
        return store

    async def append(
        self, session_id: str, events: Sequence[NewEvent], *, new_session: bool = False
    ) -> list[Event]:
        """See :meth:`fastmerge.session.Store.append`."""
        check_session_id(session_id)
        async with self._lock, self._db.transaction():
            await self._db.execute(_LOCK, (session_id,))
            last = await (await self._db.execute(_LAST, (session_id,))).fetchone()
            stored = _numbered(session_id, last, events, new_session)
            async with self._db.cursor() as cursor:
                await cursor.executemany(_INSERT, [(session_id, *e) for e in stored])
        return stored

    async def load(self, session_id: str, after: int = 0) -> list[Event]:
        """See :meth:`fastmerge.session.Store.load`."""
        query, values = _load_query(session_id, after)
        async with self._lock, self._db.transaction():
            cursor = await self._db.execute(query, values)
            rows = await cursor.fetchall()
        return [_event(row) for row in rows]

    async def close(self) -> None:
        """Close the connection if this store opened it."""
        if self._owned:
            await self._db.close()
