"""The embedded default store: SQLite (stdlib ``sqlite3``) in WAL mode.

One table, ``fastmerge_events (session_id, seq, turn, kind, version, data)`` with primary key
``(session_id, seq)``, and ``fastmerge_meta`` holding the schema version. Each ``append`` is one
``BEGIN IMMEDIATE`` transaction: it takes SQLite's write lock before reading the last ``seq``,
so two processes appending to one file serialize and neither loses an event or reuses a
number (a single event is one INSERT statement, which takes the lock the same way).
``synchronous=NORMAL`` (WAL's usual setting: a commit survives a crash of the process;
a power loss may lose the last commits, never corrupt the file).

Every statement binds nameless ``?`` placeholders to a tuple: Python 3.12 and 3.13 warn
(``DeprecationWarning``) and 3.14 raises when named placeholders (``:name``) meet a sequence.
Session ids follow :func:`fastmerge.session.store.check_session_id` (as PostgreSQL's do).
A damaged file is read as it is: a text value that is not UTF-8 comes back as ``bytes`` (the
session names the row), a ``seq``, ``turn`` or ``version`` of another type as that type.
"""

from __future__ import annotations

import sqlite3
import threading
from typing import Any, Sequence

from .. import errors
from .store import SCHEMA_VERSION, Event, NewEvent, check_session_id, last_row, schema_version

__all__ = ["SQLiteStore"]

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS fastmerge_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS fastmerge_events ("
    " session_id TEXT NOT NULL, seq INTEGER NOT NULL, turn INTEGER NOT NULL,"
    " kind TEXT NOT NULL, version INTEGER NOT NULL, data TEXT NOT NULL,"
    " PRIMARY KEY (session_id, seq))",
)
_INSERT = "INSERT INTO fastmerge_events VALUES (?, ?, ?, ?, ?, ?)"
# One event in one statement: numbered after the session's last row (one index seek: the
# row of the highest seq) and committed by itself (autocommit). A writing statement
# takes the write lock before it reads, as BEGIN IMMEDIATE does, so concurrent appenders
# still serialize; it saves the three round trips of BEGIN, SELECT and COMMIT.
# (Plain ``?`` placeholders, the session id bound twice: see the module's docstring.)
_INSERT_ONE = (
    "INSERT INTO fastmerge_events (session_id, seq, turn, kind, version, data)"
    " SELECT ?, coalesce(last.seq, 0) + 1, coalesce(last.turn, 0) + ?, ?, ?, ?"
    " FROM (SELECT 1) LEFT JOIN (SELECT seq, turn FROM fastmerge_events WHERE session_id = ?"
    " ORDER BY seq DESC LIMIT 1) AS last"
    # nothing is inserted after a damaged last row (append's general path then names it)
    " WHERE last.seq IS NULL OR (typeof(last.seq) = 'integer' AND last.seq > 0"
    " AND typeof(last.turn) = 'integer' AND last.turn >= 0)"
    " RETURNING seq, turn"
)
_LOAD = (
    "SELECT seq, turn, kind, version, data FROM fastmerge_events"
    " WHERE session_id = ? AND seq > ? ORDER BY seq"
)
# every row of a session (``load``'s default): a damaged seq (NULL, negative, text) included
_LOAD_ALL = (
    "SELECT seq, turn, kind, version, data FROM fastmerge_events WHERE session_id = ? ORDER BY seq"
)


def _text(value: bytes) -> str | bytes:
    """A text value of a damaged file: str when it is UTF-8, else its bytes."""
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return value


# RETURNING is SQLite 3.35's (2021); an older library takes the general path
_RETURNING = sqlite3.sqlite_version_info >= (3, 35, 0)


class SQLiteStore:
    """A :class:`fastmerge.session.Store` in the SQLite database ``path`` (a file path, or
    ``":memory:"`` for a database that lives as long as this object). One connection, used
    under a lock, so the store is thread-safe; other processes open their own store."""

    def __init__(self, path: str = ":memory:", *, timeout: float = 30.0) -> None:
        self.path = str(path)
        # autocommit mode (isolation_level=None): transactions are the explicit BEGINs below
        self._db = sqlite3.connect(
            self.path, timeout=timeout, isolation_level=None, check_same_thread=False
        )
        self._lock = threading.Lock()
        with self._lock:
            if self.path != ":memory:":
                self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for statement in _SCHEMA:
                    self._db.execute(statement)
                row = self._db.execute(
                    "SELECT value FROM fastmerge_meta WHERE key = 'schema_version'"
                ).fetchone()
                if row is None:
                    self._db.execute(
                        "INSERT INTO fastmerge_meta VALUES ('schema_version', ?)",
                        (str(SCHEMA_VERSION),),
                    )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        if row is not None:
            try:
                schema_version(f"database {self.path!r}", row[0])
            except errors.SchemaVersionError:
                self._db.close()
                raise

    def append(
        self, session_id: str, events: Sequence[NewEvent], *, new_session: bool = False
    ) -> list[Event]:
        """See :meth:`fastmerge.session.Store.append`."""
        check_session_id(session_id)
        if len(events) == 1 and not new_session and _RETURNING:
            event = events[0]
            values = (session_id, int(event.new_turn), event.kind, SCHEMA_VERSION, event.data)
            with self._lock:
                # fetched to the end: the statement completes and commits
                rows = self._db.execute(_INSERT_ONE, (*values, session_id)).fetchall()
            if rows:
                return [Event(rows[0][0], rows[0][1], event.kind, SCHEMA_VERSION, event.data)]
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                last: Any = db.execute(
                    "SELECT seq, turn FROM fastmerge_events WHERE session_id = ?"
                    " ORDER BY seq DESC LIMIT 1",
                    (session_id,),
                ).fetchone()
                if new_session and last is not None:
                    raise errors.SessionExistsError(session_id)
                seq, turn = last_row(session_id, last)
                stored = []
                for event in events:
                    seq += 1
                    turn += 1 if event.new_turn else 0
                    stored.append(Event(seq, turn, event.kind, SCHEMA_VERSION, event.data))
                rows = [(session_id, *row) for row in stored]
                if len(rows) == 1:  # the common case, without executemany's overhead
                    db.execute(_INSERT, rows[0])
                else:
                    db.executemany(_INSERT, rows)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return stored

    def load(self, session_id: str, after: int = 0) -> list[Event]:
        """See :meth:`fastmerge.session.Store.load`."""
        check_session_id(session_id)
        query, values = (_LOAD, (session_id, after)) if after else (_LOAD_ALL, (session_id,))
        with self._lock:
            try:
                rows = self._db.execute(query, values).fetchall()
            except sqlite3.OperationalError as exc:
                if "decode to UTF-8" not in str(exc):
                    raise
                # a damaged file's text that is not UTF-8: read again, keeping its bytes
                self._db.text_factory = _text
                try:
                    rows = self._db.execute(query, values).fetchall()
                finally:
                    self._db.text_factory = str
        return [Event(*row) for row in rows]

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()
