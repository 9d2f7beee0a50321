"""The storage interface of a session: a few methods over an append-only table of events.

A store keeps, per session id, events numbered by ``seq`` (1, 2, ... with no gap) and grouped
by ``turn``; each event is a ``kind`` and its ``data``, a JSON text the session layer writes
and reads (the store never parses it). The store assigns ``seq`` and ``turn`` inside the
transaction that writes the events, so appenders in several threads or processes never get the
same number: ``turn`` is the previous event's turn, plus one for an event with ``new_turn``.

Session ids: every store takes the same ones, 1 to :data:`MAX_SESSION_ID_BYTES` bytes of UTF-8
text without NUL (:func:`check_session_id`; others raise
:class:`fastmerge.errors.SessionIdError` before anything is read or written). PostgreSQL's
``text`` cannot hold a NUL, and its btree index rows are limited to about 2,700 bytes; SQLite
could store such ids, but a log must move between stores, so it refuses them too.

To add a store (Redis, a file, ...), implement :class:`Store` (and :class:`AsyncStore` for
:class:`fastmerge.session.AsyncSession` without threads); :class:`SQLiteStore` and
:class:`PostgresStore` are the two shipped ones.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol, Sequence, runtime_checkable

from .. import errors

__all__ = [
    "MAX_SESSION_ID_BYTES",
    "SCHEMA_VERSION",
    "AsyncStore",
    "Event",
    "NewEvent",
    "Store",
    "check_session_id",
]

#: The version of the event format this fastmerge writes; a row or a database of a higher
#: version is refused (:class:`fastmerge.errors.SchemaVersionError`), never misread.
SCHEMA_VERSION = 1

#: The longest session id, in bytes of UTF-8 (far below PostgreSQL's index row limit).
MAX_SESSION_ID_BYTES = 1024


def check_session_id(session_id: object) -> str:
    """``session_id`` if every store holds it: a non-empty ``str`` (else ``TypeError``) of at
    most :data:`MAX_SESSION_ID_BYTES` bytes of UTF-8, without NUL or lone surrogate (else
    :class:`fastmerge.errors.SessionIdError`)."""
    if not isinstance(session_id, str) or not session_id:
        raise errors.wrong_type("session_id", "a non-empty str", session_id)
    if session_id.isascii() and len(session_id) <= MAX_SESSION_ID_BYTES:
        if "\x00" not in session_id:
            return session_id  # the common case, without encoding
    if "\x00" in session_id:
        reason = f"holds a NUL at index {session_id.index(chr(0))}"
        raise errors.SessionIdError(session_id, reason, MAX_SESSION_ID_BYTES)
    try:
        size = len(session_id.encode("utf-8"))
    except UnicodeEncodeError as exc:
        reason = f"holds a lone surrogate {session_id[exc.start]!r} at index {exc.start}"
        raise errors.SessionIdError(session_id, reason, MAX_SESSION_ID_BYTES) from None
    if size > MAX_SESSION_ID_BYTES:
        reason = f"is {size} bytes of UTF-8"
        raise errors.SessionIdError(session_id, reason, MAX_SESSION_ID_BYTES)
    return session_id


def last_row(session_id: str, row: Sequence[object] | None) -> tuple[int, int]:
    """The ``(seq, turn)`` an append numbers after: the session's last row's (``(0, 0)`` for
    none), which must be a positive int and an int >= 0; a damaged row raises
    :class:`fastmerge.errors.CorruptRowError` (and nothing is appended)."""
    if row is None:
        return 0, 0
    seq, turn = row[0], row[1]
    if type(seq) is not int or seq < 1:
        raise errors.corrupt_row(session_id, seq, "the last row's seq is not a positive int")
    if type(turn) is not int or turn < 0:
        detail = f"the last row's turn {errors._shown(turn)} is not an int >= 0"
        raise errors.corrupt_row(session_id, seq, detail)
    return seq, turn


def schema_version(where: str, value: object) -> int:
    """The schema version a database's meta table holds (its text), checked: a positive int
    up to :data:`SCHEMA_VERSION`, else :class:`fastmerge.errors.SchemaVersionError`."""
    version: object = value
    if type(value) is str and value.isascii() and value.isdigit() and len(value) <= 18:
        version = int(value)
    if type(version) is not int or not 1 <= version <= SCHEMA_VERSION:
        raise errors.SchemaVersionError(where, version, SCHEMA_VERSION)
    return version


class NewEvent(NamedTuple):
    """An event to append: its kind, whether it starts a turn, and its JSON text."""

    kind: str
    new_turn: bool
    data: str


class Event(NamedTuple):
    """A stored event, as :meth:`Store.load` returns it."""

    seq: int
    turn: int
    kind: str
    version: int
    data: str


@runtime_checkable
class Store(Protocol):
    """What a session needs from its storage. Every method is safe to call from several
    threads; ``append`` is one transaction (all events or none)."""

    def append(
        self, session_id: str, events: Sequence[NewEvent], *, new_session: bool = False
    ) -> list[Event]:
        """Append ``events`` in order after the session's last one, in one transaction, and
        return them as stored. ``new_session=True`` raises
        :class:`fastmerge.errors.SessionExistsError` if the session already has events."""
        ...

    def load(self, session_id: str, after: int = 0) -> list[Event]:
        """The session's events with ``seq > after``, in ``seq`` order; with ``after=0`` (the
        default) every row of the session, a damaged one too (a ``seq`` that is not a
        positive int: the session refuses it instead of skipping it). Empty for an unknown
        session. Values are returned as stored (a damaged row's may not be the types
        :class:`Event` names)."""
        ...

    def close(self) -> None:
        """Release the connection(s)."""
        ...


@runtime_checkable
class AsyncStore(Protocol):
    """:class:`Store` with coroutine methods (for :class:`fastmerge.session.AsyncSession`)."""

    async def append(
        self, session_id: str, events: Sequence[NewEvent], *, new_session: bool = False
    ) -> list[Event]:
        """As :meth:`Store.append`."""
        ...

    async def load(self, session_id: str, after: int = 0) -> list[Event]:
        """As :meth:`Store.load`."""
        ...

    async def close(self) -> None:
        """As :meth:`Store.close`."""
        ...
