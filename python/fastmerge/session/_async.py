""":class:`AsyncSession`: :class:`fastmerge.session.Session` for ``asyncio``."""

from __future__ import annotations

import asyncio
import inspect
import os
from types import ModuleType
from typing import Any, Callable, Sequence

from .. import errors
from . import _log
from ._session import Turn, _Core, _items
from .compaction import Compaction, Summarize
from .sqlite import SQLiteStore
from .store import AsyncStore, Event, NewEvent, Store, check_session_id


class AsyncSession(_Core):
    """The ``asyncio`` variant of :class:`fastmerge.session.Session`, with the same methods as
    coroutines (``turns``/``messages``/``to_request`` read after awaiting the store). A
    :class:`AsyncStore` (such as :class:`fastmerge.session.AsyncPostgresStore`) is awaited; a
    :class:`Store` (SQLite by default) runs in a worker thread. Open it with ``await
    AsyncSession.open(...)`` or ``async with AsyncSession(...)``."""

    def __init__(
        self,
        session_id: str,
        store: Store | AsyncStore | str | os.PathLike[str] | None = None,
        *,
        compaction: Compaction | None = None,
        messages: ModuleType | None = None,
    ) -> None:
        super().__init__(session_id, compaction=compaction, messages=messages)
        self._owned = store is None or isinstance(store, (str, os.PathLike))
        if store is None:
            store = SQLiteStore(":memory:")
        elif isinstance(store, (str, os.PathLike)):
            store = SQLiteStore(os.fspath(store))
        elif not isinstance(store, (Store, AsyncStore)):
            raise errors.wrong_type("store", "a Store, an AsyncStore, a path or None", store)
        self.store = store
        self._native = inspect.iscoroutinefunction(store.append)
        self._alock = asyncio.Lock()

    @classmethod
    async def open(cls, session_id: str, store: Any = None, **options: Any) -> AsyncSession:
        """An AsyncSession with its log read."""
        session = cls(session_id, store, **options)
        await session._refresh()
        return session

    async def _call(self, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if self._native:
            return await method(*args, **kwargs)
        return await asyncio.to_thread(method, *args, **kwargs)

    async def _refresh(self) -> None:
        events = await self._call(self.store.load, self.session_id, self._history.last_seq)
        with self._lock:
            try:
                self._apply(events)
            except errors.SessionError:
                self._unread = True  # as Session._refresh
                raise
            self._unread = False

    async def _write(self, events: list[NewEvent], items: list[Any] | None = None) -> list[Event]:
        stored: list[Event] = await self._call(self.store.append, self.session_id, events)
        with self._lock:
            folded = items is not None and self._ours(stored, items)
        if not folded:
            await self._refresh()
        return stored

    async def append(self, message: Any) -> list[int]:
        """See :meth:`fastmerge.session.Session.append`."""
        items = _items(message)
        events = _log.encode(items)
        async with self._alock:
            # as Session.append: no read first unless a read met a row it could not read
            if self._broken:
                events = await self._call(self.store.load, self.session_id, 0)
                with self._lock:
                    self._recover(events)
            if self._unread:
                await self._refresh()
            if self.compaction is not None:
                self._read_active()
            stored = await self._write(events, items)
            trigger = self._trigger()
            if trigger is not None and self.compaction is not None:
                policy = self.compaction
                event = self._compaction_event(policy.keep_last_turns, policy.summarize, trigger)
                if event is not None:
                    await self._write([event])
        return [e.seq for e in stored]

    async def messages(self, last_turns: int | None = None) -> list[Any]:
        """See :meth:`fastmerge.session.Session.messages`."""
        async with self._alock:
            await self._refresh()
            return self._messages(last_turns)

    async def turns(self) -> list[Turn]:
        """See :meth:`fastmerge.session.Session.turns`."""
        async with self._alock:
            await self._refresh()
            return self._turns()

    async def pop(self) -> Any:
        """See :meth:`fastmerge.session.Session.pop`."""
        async with self._alock:
            await self._refresh()
            stored = await self._write([self._pop_event()])
            return self._popped(stored)

    async def clear(self) -> None:
        """See :meth:`fastmerge.session.Session.clear`."""
        async with self._alock:
            await self._write([_log.marker("clear", {})])

    async def fork(self, new_id: str) -> AsyncSession:
        """See :meth:`fastmerge.session.Session.fork`."""
        check_session_id(new_id)
        async with self._alock:
            events: Sequence[Event] = await self._call(self.store.load, self.session_id)
        copies = [NewEvent(e.kind, _log.ROLES.get(e.kind) == "user", e.data) for e in events]
        if copies:
            await self._call(self.store.append, new_id, copies, new_session=True)
        elif await self._call(self.store.load, new_id):
            raise errors.SessionExistsError(new_id)
        fork = AsyncSession(new_id, self.store, compaction=self.compaction, messages=self._classes)
        await fork._refresh()
        return fork

    async def compact(self, keep_last_turns: int, *, summarize: Summarize | None = None) -> bool:
        """See :meth:`fastmerge.session.Session.compact`."""
        async with self._alock:
            await self._refresh()
            event = self._compaction_event(keep_last_turns, summarize, "manual")
            if event is None:
                return False
            await self._write([event])
            return True

    async def events(self) -> list[Event]:
        """See :meth:`fastmerge.session.Session.events`."""
        events: list[Event] = await self._call(self.store.load, self.session_id)
        return events

    async def to_request(self, provider: str) -> dict[str, Any]:
        """See :meth:`fastmerge.session.Session.to_request`."""
        async with self._alock:
            await self._refresh()
            return self._request(provider)

    async def close(self) -> None:
        """Close the store if this session opened it."""
        if self._owned:
            await self._call(self.store.close)

    async def __aenter__(self) -> AsyncSession:
        await self._refresh()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
