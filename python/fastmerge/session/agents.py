"""The OpenAI Agents SDK's session memory on fastmerge's log (``pip install fastmerge[agents]``).

:class:`AgentsSession` implements the Agents SDK's ``Session`` protocol (``get_items``,
``add_items``, ``pop_item``, ``clear_session``, ``session_settings``), so an agent keeps its
history in a fastmerge session log:

>>> from agents import Runner
>>> from fastmerge.session.agents import AgentsSession
>>> session = AgentsSession("chat-1", "chat.db")       # SQLite file; None for in-memory
>>> result = await Runner.run(agent, "Hi", session=session)
>>> await session.to_request("anthropic")               # the same history, for Claude

Each Responses input item the SDK writes is one message of the log, made when it is first
read as one: a user, system or
developer message is a user or system message (its text; images and files as given, which
only OpenAI Responses takes back); a ``function_call_output`` / ``custom_tool_call_output``
a :class:`fastmerge.ToolMessage`; any other item (assistant messages, reasoning, function and
custom tool calls, hosted tools' calls and outputs, references, ...) the
:class:`fastmerge.AssistantMessage` that the ``"openai-responses"`` adapter makes of it. Each
message also keeps its item verbatim in its ``metadata`` (``{"openai_agents_item": item}``),
which is what ``get_items`` returns: every item reads back equal to what was added, key order
included. The messages are what :meth:`AgentsSession.to_request` (and a
:class:`fastmerge.session.Session` on the same store and id) replays: text, tool calls and
their results to every provider; reasoning and the hosted tools' items only to OpenAI
Responses (rules §9.1). This module only converts and stores: the adapter makes the messages.

A row holds the item verbatim (its JSON; no message is stored), in a row of kind
``user_item``, ``system_item``, ``assistant_item`` or ``tool_item`` (a plain
``{"role": "user" | "system", "content": str}`` message: a ``user`` / ``system`` row, the
message itself): ``get_items`` reads each item straight from its row, and the message is made
(by :mod:`fastmerge.session._items`) only when something reads messages (:meth:`messages`,
:meth:`to_request`, a :class:`fastmerge.session.Session`'s reads and compaction); an assistant
or tool message once per row and session object. Rows of the earlier format (the message's
``to_dict()`` with the item in its metadata, in a ``user`` / ``system`` / ``assistant`` /
``tool`` row) read as before. Any dict is stored and read back equal, as the SDK's
``SQLiteSession`` stores it, so the SDK's session wrappers (``EncryptedSession``'s envelopes,
the compaction session's items) work over this session: an item fastmerge does not read as a
message (no str ``type`` nor known role, a message's content neither str nor list, a tool
output without a str ``call_id`` and str or list ``output``, what the Responses adapter
refuses) is kept verbatim, its message an assistant message holding it in an unknown part
that no rendering replays. An append refuses only what is not a dict or not JSON-storable
(:class:`fastmerge.errors.SessionTypeError`). ``pop_item`` and ``clear_session`` write
``pop`` and ``clear`` events: the log keeps what they take out. A row the session cannot read raises
:class:`fastmerge.errors.CorruptRowError` (the Agents SDK's ``SQLiteSession`` skips rows that
are not JSON and ``pop_item`` deletes them; this session drops nothing it cannot read).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import threading
from typing import Any, Callable, Sequence, cast

try:
    from agents.memory import SessionSettings
    from agents.memory import session_settings as _settings_module
except ImportError as exc:  # pragma: no cover - SDKs before 0.8
    raise ImportError(
        "fastmerge.session.agents needs openai-agents >= 0.8 (its SessionSettings): "
        "pip install -U 'fastmerge[agents]'"
    ) from exc

from jiter import from_json as _jiter

from .. import errors
from . import _log
from ._items import ITEM_KEY, ITEM_KINDS, row_kind
from .request import to_request as _to_request
from .sqlite import SQLiteStore
from .store import SCHEMA_VERSION, AsyncStore, Event, NewEvent, Store, check_session_id

# the SDK's own coercion of a dict (its unknown keys refused), from openai-agents 0.19
_coerce: Callable[[Any], SessionSettings] | None = getattr(
    _settings_module, "coerce_session_settings", None
)


def _settings(value: Any) -> SessionSettings:
    if isinstance(value, SessionSettings):
        return value
    if not isinstance(value, dict):
        raise errors.wrong_type("session_settings", "a SessionSettings, a dict or None", value)
    return _coerce(value) if _coerce is not None else SessionSettings(**value)


__all__ = ["ITEM_KEY", "AgentsSession"]

_MESSAGE_KINDS = frozenset(_log.ROLES)
_ROLES = _log.ROLES
# how the rows of the earlier format start (each held the item and its message; a row of
# another writer is parsed whole)
_ITEM_AT = '{"metadata":{"' + ITEM_KEY + '":'
# json's C scanner: the value at an index of a text and where it ends (StopIteration when
# there is none), without raw_decode's Python wrapper
_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


class _Row:
    """A message row of the history (what :class:`_log.History` folds): its ``seq``,
    ``turn``, role, JSON text, whether it holds an item verbatim (``raw``), where the item
    starts in a row of the earlier format (0 before it is looked for, -1 for a row read
    whole, -2 for a plain user or system message), and its message once made (``message``,
    for an assistant or tool message: they are immutable)."""

    __slots__ = ("at", "message", "raw", "role", "seq", "text", "turn")

    def __init__(self, seq: int, turn: int, role: str, text: Any, raw: bool) -> None:
        self.seq = seq
        self.turn = turn
        self.role = role
        self.text = text
        self.raw = raw
        self.at = 0
        self.message: Any = None


def _events(items: Sequence[Any]) -> list[NewEvent]:
    """The log events of ``items``, all checked before anything is written: each item's
    row, the item verbatim (its message made only when one is read)."""
    events = []
    unstorable, dumps = _log._unstorable, _log._dumps
    for position, item in enumerate(items):
        # the item is all a row holds: checked where a message read from it nests it
        # deepest (three levels down: a part's raw item, an item envelope)
        reason = unstorable({"": [{"": item}]}) if type(item) is dict else None
        if reason is not None:
            raise errors.SessionTypeError(position, f"cannot be stored as JSON: it holds {reason}")
        kind = row_kind(position, item)
        events.append(NewEvent(kind, kind == "user" or kind == "user_item", dumps(item)))
    return events


class AgentsSession:
    """An OpenAI Agents SDK ``Session`` (``agents.memory.Session``) on fastmerge's
    append-only log: pass it to ``Runner.run(..., session=...)``.

    ``store`` is a :class:`fastmerge.session.Store` (:class:`fastmerge.session.SQLiteStore`,
    :class:`fastmerge.session.PostgresStore`), an :class:`fastmerge.session.AsyncStore`
    (:class:`fastmerge.session.AsyncPostgresStore`, awaited), a SQLite file path, or None for
    an in-memory SQLite database. ``session_settings`` is the SDK's ``SessionSettings`` (or
    its dict): its ``limit`` is ``get_items``' default. ``in_thread`` runs a synchronous
    store's calls in a worker thread (``asyncio.to_thread``); by default a
    :class:`~fastmerge.session.SQLiteStore` runs in the event loop (an append or a read is a
    few tens of microseconds, less than a thread's hop; a wait happens only while another
    process holds the file's write lock) and any other synchronous store in a thread.

    Reads see what other session objects and processes wrote (each reads only the rows
    appended since its last read). A :class:`fastmerge.session.Session` on the same store and
    id reads the log as messages. ``get_items`` reads each returned item from its row (a row
    whose item cannot be read raises :class:`fastmerge.errors.CorruptRowError`); the rest of
    a row (the message) is read by :meth:`to_request` and :meth:`messages`.
    """

    session_settings: SessionSettings | None = None

    def __init__(
        self,
        session_id: str,
        store: Store | AsyncStore | str | os.PathLike[str] | None = None,
        *,
        session_settings: SessionSettings | dict[str, Any] | None = None,
        in_thread: bool | None = None,
    ) -> None:
        check_session_id(session_id)
        self.session_id = session_id
        self.session_settings = (
            SessionSettings() if session_settings is None else _settings(session_settings)
        )
        self._owned = store is None or isinstance(store, (str, os.PathLike))
        if store is None:
            store = SQLiteStore(":memory:")
        elif isinstance(store, (str, os.PathLike)):
            store = SQLiteStore(os.fspath(store))
        elif not isinstance(store, (Store, AsyncStore)):
            raise errors.wrong_type("store", "a Store, an AsyncStore, a path or None", store)
        if in_thread is not None and type(in_thread) is not bool:
            raise errors.wrong_type("in_thread", "a bool or None", in_thread)
        self.store = store
        self._native = inspect.iscoroutinefunction(store.append)
        self._in_thread = not isinstance(store, SQLiteStore) if in_thread is None else in_thread
        self._history = _log.History()
        self._lock = threading.Lock()  # the fold; never held across an await
        self._unread = False
        self._closed = False

    # -- the store and the fold ----------------------------------------------------------------

    async def _call(self, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if self._closed:
            raise RuntimeError(f"AgentsSession {self.session_id!r} is closed")
        if self._native:
            return await method(*args, **kwargs)
        if self._in_thread:
            return await asyncio.to_thread(method, *args, **kwargs)
        return method(*args, **kwargs)

    def _fold(self, events: Sequence[Event], *, written: bool = False) -> bool:
        """Fold the events after the cache's last (those at or before it are in already:
        another call of this object folded them), all or none; every row checked as
        :class:`fastmerge.session.Session` checks it. False for ``written`` events that do
        not follow the cache's last (another writer came between: read the gap)."""
        session_id = self.session_id
        history = self._history
        seq, turn = history.last_seq, history.last_turn
        if events and type(events[0].seq) is int and 0 < events[0].seq <= seq:
            events = [e for e in events if not (type(e.seq) is int and 0 < e.seq <= seq)]
        if written and events and events[0].seq != seq + 1:
            return False
        values: list[Any] = []
        markers = False
        for event in events:
            new_seq, new_turn, kind, version, data = event
            # the usual row in a few comparisons; any other goes through the full check
            if not (
                type(new_seq) is int
                and new_seq == seq + 1
                and type(new_turn) is int
                and (new_turn == turn or new_turn == turn + 1)
                and version == SCHEMA_VERSION
                and type(version) is int
                and kind in _MESSAGE_KINDS
            ):
                _log.check(session_id, event, seq, turn)
            seq, turn = new_seq, new_turn
            if kind in _MESSAGE_KINDS:
                values.append(_Row(seq, turn, _ROLES[kind], data, kind in ITEM_KINDS))
            else:
                values.append(_log.read_marker(session_id, event))
                markers = True
        if markers:
            for event, value in zip(events, values):
                history.apply(event, value)
        elif values:  # messages only: what History.apply does for each, at once
            history.entries += values
            history.last_seq, history.last_turn = seq, turn
        return True

    async def _refresh(self) -> None:
        events = await self._call(self.store.load, self.session_id, self._history.last_seq)
        with self._lock:
            try:
                self._fold(events)
            except errors.SessionError:
                self._unread = True  # a row it cannot read: no write until a read succeeds
                raise
            self._unread = False

    async def _write(self, events: list[NewEvent]) -> list[Event]:
        if self._unread:
            await self._refresh()
        stored: list[Event]
        if self._native or self._in_thread or self._closed:
            stored = await self._call(self.store.append, self.session_id, events)
        else:  # what _call does, without its coroutine: a single append is a few tens of us
            stored = cast(Store, self.store).append(self.session_id, events)
        with self._lock:
            folded = self._fold(stored, written=True)
        if not folded:
            await self._refresh()
        return stored

    # -- reading items from rows ---------------------------------------------------------------

    def _items(self, row: _Row) -> list[Any]:
        """The Agents items of a message row: its item (a fresh copy each time); for a
        message another writer appended without one, its Responses input items."""
        at, text = row.at, row.text
        if row.raw:
            return [self._raw_item(row)]
        if at > 0:
            return [_scan(text, at)[0]]
        if at == -2:  # a plain user or system message, read before
            return [_log._parse(text)]
        if at == 0 and type(text) is str and text.startswith(_ITEM_AT):
            try:
                item, end = _scan(text, len(_ITEM_AT))
            except (StopIteration, ValueError):
                pass  # read whole below, which names the row
            else:
                if type(item) is dict and text.startswith("},", end):
                    row.at = len(_ITEM_AT)
                    return [item]
        row.at = -1
        if row.role in ("user", "system"):
            value = _log.read_message(self.session_id, None, row.seq, row.role, text)
        else:
            value = _log._object(self.session_id, row.seq, text)
        metadata = value.get("metadata")
        if type(metadata) is dict and ITEM_KEY in metadata:
            item = metadata[ITEM_KEY]
            if type(item) is not dict:
                detail = f"its {ITEM_KEY} is {type(item).__name__}, not an item (a dict)"
                raise errors.corrupt_row(self.session_id, row.seq, detail)
            return [item]
        if row.role in ("user", "system"):
            row.at = -2 if "metadata" not in value else -1
            return [value]
        message = self._message(row)
        return list(_to_request([message], "openai-responses")["input"])

    def _raw_item(self, row: _Row) -> Any:
        """The item of a row that holds one verbatim (a new object each time)."""
        text = row.text
        try:
            item = _log._parse(text) if type(text) is str else None
        except (ValueError, RecursionError):
            item = None
        if type(item) is not dict:  # named as the log's reads name it
            _log._object(self.session_id, row.seq, text)
            detail = f"a {row.role}_item row holds {type(item).__name__}, not an item (a dict)"
            raise errors.corrupt_row(self.session_id, row.seq, detail)
        return item

    def _message(self, row: _Row) -> Any:
        """The log message of a row (an assistant or tool message made once, kept; a user or
        system dict, a new one each time)."""
        if row.message is not None:
            return row.message
        import fastmerge  # the selected backend's message classes, looked up when used

        read = _log.read_item if row.raw else _log.read_message
        message = read(self.session_id, fastmerge, row.seq, row.role, row.text)
        if row.role in ("assistant", "tool"):
            row.message = message
        return message

    def _listing(self) -> list[Any]:
        """The replayed history's message rows (:class:`_Row`), with the last compaction's
        summary (a user message dict; a :class:`fastmerge.session.Session` may compact the
        log) after the leading system messages."""
        entries: list[Any] = self._history.active()
        compaction = self._history.compaction
        summary = compaction.get("summary") if compaction is not None else None
        if summary is None:
            return entries
        position = 0
        while position < len(entries) and entries[position].role == "system":
            position += 1
        return [*entries[:position], {"role": "user", "content": summary}, *entries[position:]]

    def _source_items(self, source: Any) -> list[Any]:
        return [dict(source)] if type(source) is dict else self._items(source)

    # -- the Agents SDK's Session protocol ------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The history's items, oldest first: the last ``limit`` ones (``limit`` or, when it
        is None, ``session_settings.limit``). ``limit`` is an int or None (``TypeError``
        otherwise), read as the SDK's ``SQLiteSession`` reads it: None or below zero, all
        items (SQLite's ``LIMIT -1``); 0, none. Each call returns new objects."""
        if limit is None and self.session_settings is not None:
            limit = self.session_settings.limit
        if limit is not None and type(limit) is not int:
            raise errors.wrong_type("limit", "an int or None", limit)
        if limit is not None and limit < 0:
            limit = None  # SQLiteSession's LIMIT of a negative value: no limit
        await self._refresh()
        with self._lock:
            sources = self._listing()
            if limit is None:
                out: list[Any] = []
                source_items = self._source_items
                start = len(_ITEM_AT)
                parse = _jiter
                for source in sources:
                    # the usual row inline (what _items does first): its item where it was
                    # found before, or at the start of a row this module wrote
                    if type(source) is _Row:
                        at, text = source.at, source.text
                        if source.raw:
                            # the usual row: the item verbatim, read as it was written
                            if type(text) is str:
                                try:
                                    item = parse(text.encode(), cache_mode="keys")
                                except ValueError:
                                    pass  # jiter refuses it: _raw_item reads it or names the row
                                else:
                                    if type(item) is dict:
                                        out.append(item)
                                        continue
                        elif at > 0:  # a row of the earlier format, read before
                            out.append(_scan(text, at)[0])
                            continue
                        elif at == 0 and type(text) is str and text.startswith(_ITEM_AT):
                            try:
                                item, end = _scan(text, start)
                            except (StopIteration, ValueError):
                                pass
                            else:
                                if type(item) is dict and text.startswith("},", end):
                                    source.at = start
                                    out.append(item)
                                    continue
                    out += source_items(source)
                return out
            chunks: list[list[Any]] = []
            count = 0
            for source in reversed(sources):
                if count >= limit:
                    break
                chunk = self._source_items(source)
                chunks.append(chunk)
                count += len(chunk)
        items = [item for chunk in reversed(chunks) for item in chunk]
        return items[max(0, len(items) - limit) :]

    async def add_items(self, items: list[Any]) -> None:
        """Append ``items`` (Responses input items, or any dict the SDK's session wrappers
        store) in one transaction: all or none. What is not a dict or not JSON-storable
        raises :class:`fastmerge.errors.SessionTypeError` and appends nothing; the items are
        never changed (each is stored as JSON)."""
        if self._closed:
            raise RuntimeError(f"AgentsSession {self.session_id!r} is closed")
        if not isinstance(items, (list, tuple)):
            raise errors.wrong_type("items", "a list of Responses input items", items)
        if not items:
            return

        await self._write(_events(items))

    async def pop_item(self) -> Any | None:
        """Take the last item out of the history (a ``pop`` event: the log keeps it) and
        return it; None when the history is empty. (A message another writer appended
        without an item is taken out whole: its last Responses item is returned.)"""
        await self._refresh()
        with self._lock:
            entries = self._history.entries
            if not entries:
                return None
            last = cast(_Row, entries[-1])
            item = self._items(last)[-1]  # a row it cannot read raises before anything is written
        stored = await self._write([_log.marker("pop", {})])
        with self._lock:
            popped = cast("_Row | None", self._history.popped.get(stored[0].seq))
            if popped is None:
                return None  # another writer emptied the history first
            if popped is not last:  # another writer popped or appended first
                item = self._items(popped)[-1]
        return item

    async def clear_session(self) -> None:
        """Start the history anew (a ``clear`` event: the log keeps what came before)."""
        await self._write([_log.marker("clear", {})])

    # -- fastmerge's side ------------------------------------------------------------------------

    async def messages(self) -> list[Any]:
        """The history as the log's messages (what :meth:`to_request` replays): user and
        system dicts, :class:`fastmerge.AssistantMessage` and :class:`fastmerge.ToolMessage`."""
        await self._refresh()
        with self._lock:
            return [
                dict(source) if type(source) is dict else self._message(source)
                for source in self._listing()
            ]

    async def to_request(self, provider: str) -> dict[str, Any]:
        """The history in ``provider``'s request format
        (:func:`fastmerge.session.to_request`: ``"openai-responses"``, ``"openai-chat"``,
        ``"anthropic"``, ``"gemini"``, ``"bedrock-converse"``, ``"ollama"``)."""
        return _to_request(await self.messages(), provider)

    def close(self) -> None:
        """Close the store if this session opened it (a path or None was given); every later
        call raises ``RuntimeError``."""
        self._closed = True
        if self._owned:
            self.store.close()
