"""The storage interface of a session: a few methods over an append-only table of events.

A store keeps, per session id, events numbered by ``seq`` (1, 2, ... with no gap) and grouped
by ``turn``; each event is a ``kind`` and its ``data``, a JSON text the session layer writes
and reads (the store never parses it). The store assigns ``seq`` and ``turn`` inside the
transaction that writes the events, so appenders in several threads or processes never get the
same number: ``turn`` is the previous event's turn, plus one for an event with ``new_turn``.

To add a store (Redis, a file, ...), implement :class:`Store` (and :class:`AsyncStore` for
:class:`fastmerge.session.AsyncSession` without threads); :class:`SQLiteStore` and
:class:`PostgresStore` are the two shipped ones.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol, Sequence, runtime_checkable

__all__ = ["SCHEMA_VERSION", "AsyncStore", "Event", "NewEvent", "Store"]

#: The version of the event format this fastmerge writes; a row or a database of a higher
#: version is refused (:class:`fastmerge.errors.SchemaVersionError`), never misread.
SCHEMA_VERSION = 1


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
        """The session's events with ``seq > after``, in ``seq`` order (all of them by default;
        empty for an unknown session)."""
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
