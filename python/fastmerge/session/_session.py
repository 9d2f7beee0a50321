"""The synchronous :class:`Session`: a lossless, append-only log of one conversation."""

from __future__ import annotations

import functools
import inspect
import json
import os
import threading
import weakref
from types import ModuleType
from typing import Any, Callable, NamedTuple, Sequence

from .. import errors
from . import _log
from .compaction import Compaction, Summarize
from .request import to_request
from .sqlite import SQLiteStore
from .store import SCHEMA_VERSION, Event, NewEvent, Store, check_session_id

_MESSAGE_KINDS = frozenset(_log.MESSAGE_KINDS)
_ROLES = _log.ROLES


class Turn(NamedTuple):
    """A turn of the history: its number (1 for the first user message; 0 for what came
    before it) and its messages in order."""

    number: int
    messages: list[Any]


def _items(item: Any) -> list[Any]:
    return list(item) if isinstance(item, (list, tuple)) else [item]


def _copy(entry: _log.Entry) -> Any:
    # messages are immutable; the plain dicts of user and system messages are copied out
    message = entry.message
    if not isinstance(message, dict):
        return message
    if isinstance(message["content"], str) and "metadata" not in message:
        return dict(message)  # str values are immutable: a shallow copy is a full one
    return json.loads(json.dumps(message))


class _Core:
    """What Session and AsyncSession share: the cached fold of the log and the reads of it.
    Subclasses bring the events in (``_apply``) and write them (their own ``append``)."""

    def __init__(
        self,
        session_id: str,
        *,
        compaction: Compaction | None = None,
        messages: ModuleType | None = None,
    ) -> None:
        check_session_id(session_id)
        if compaction is not None and not isinstance(compaction, Compaction):
            raise errors.wrong_type("compaction", "a Compaction or None", compaction)
        self.session_id = session_id
        self.compaction = compaction
        self._classes = messages
        self._history = _log.History()
        self._lock = threading.RLock()
        self._unread = False
        #: the seqs of message rows a read could not read (their data is read lazily, outside
        #: any refresh): no append until each reads again (:meth:`_recover`)
        self._broken: set[int] = set()

    def _module(self) -> Any:
        if self._classes is not None:
            return self._classes
        import fastmerge  # the selected backend's message classes, looked up when used

        return fastmerge

    def _apply(self, events: Sequence[Event], known: Sequence[Any] | None = None) -> None:
        """Fold ``events`` (the ones after the cache's last) into the cache, all or none:
        every row's ``seq``, ``turn``, version and kind are checked now, and a marker row's
        data read now; a message row's data is read when a read first needs the message
        (:class:`_log.Entry`). ``known`` are what this object just appended, in order: its
        message objects, reused as they are (None for a dict, read from its row)."""
        session_id = self.session_id
        seq, turn = self._history.last_seq, self._history.last_turn
        classes = self._module()
        deferred = {"assistant": classes.AssistantMessage, "tool": classes.ToolMessage}
        read = self._noting(functools.partial(_log.read_message, session_id, classes))
        read_item = self._noting(functools.partial(_log.read_item, session_id, classes))
        values: list[Any] = []
        for i, event in enumerate(events):
            new_seq, new_turn, kind = event.seq, event.turn, event.kind
            # the usual row in a few comparisons; any other goes through the full check
            if not (
                type(new_seq) is int
                and new_seq == seq + 1
                and type(new_turn) is int
                and (new_turn == turn or new_turn == turn + 1)
                and type(event.version) is int
                and event.version == SCHEMA_VERSION
                and kind in _MESSAGE_KINDS
            ):
                _log.check(session_id, event, seq, turn)
            seq, turn = new_seq, new_turn
            if kind not in _MESSAGE_KINDS:
                role = _ROLES.get(kind)
                if role is None:
                    values.append(_log.read_marker(session_id, event))
                elif role in deferred:  # a verbatim item: its message made at its first read
                    build = functools.partial(read_item, seq, role, event.data)
                    values.append(_log.Entry(seq, turn, role, deferred[role]._deferred(build)))
                else:
                    values.append(_log.Entry(seq, turn, role, None, event.data, read_item))
            elif known is not None and known[i] is not None:
                values.append(_log.Entry(seq, turn, kind, known[i]))
            elif kind in deferred:  # built at its first read (its row's data read then)
                build = functools.partial(read, seq, kind, event.data)
                values.append(_log.Entry(seq, turn, kind, deferred[kind]._deferred(build)))
            else:
                values.append(_log.Entry(seq, turn, kind, None, event.data, read))
        history = self._history
        for event, value in zip(events, values):
            history.apply(event, value)

    def _noting(
        self, reader: Callable[[int, str, object], Any]
    ) -> Callable[[int, str, object], Any]:
        """``reader``, noting the seq of a row it cannot read on this session (weakly: a
        message read later, after the session is gone, notes nothing)."""
        session = weakref.ref(self)

        def read(seq: int, role: str, data: object) -> Any:
            try:
                return reader(seq, role, data)
            except errors.SessionError:
                noted = session()
                if noted is not None:
                    noted._broken.add(seq)
                raise

        return read

    def _recover(self, events: Sequence[Event]) -> None:
        """After a message row could not be read: fold ``events`` (the whole log as the store
        holds it now) anew, and read each such row the history still replays; one that still
        cannot be read raises as before (and is noted again). A row mended since is read as
        it is now; one that a ``clear`` or a compaction took out of the history no longer
        stops an append."""
        history, self._history = self._history, _log.History()
        try:
            self._apply(events)
        except BaseException:
            self._history = history
            raise
        broken, self._broken = self._broken, set()
        for entry in self._history.active():
            if entry.seq in broken:
                _log.read_now(entry.message)

    def _ours(self, stored: list[Event], items: list[Any]) -> bool:
        """Fold what this object just wrote, when nothing came between (else: reload)."""
        if not stored or stored[0].seq != self._history.last_seq + 1:
            return False
        self._apply(stored, [None if isinstance(item, dict) else item for item in items])
        return True

    def _read_active(self) -> None:
        """Read every message of the replayed history now (a row that cannot be read raises
        here): what compaction reads, before an append writes."""
        for entry in self._history.active():
            _log.read_now(entry.message)

    # -- reads (after a refresh) -------------------------------------------------------------

    def _messages(self, last_turns: int | None) -> list[Any]:
        history = self._history
        entries = history.active()
        if last_turns is not None:
            if type(last_turns) is not int or last_turns < 1:
                raise ValueError(f"last_turns must be a positive int or None, not {last_turns!r}")
            turns = _log.turn_numbers(entries)
            if len(turns) > last_turns:
                start = _log.safe_start(entries, turns[-last_turns])
                return [_copy(e) for e in entries if e.role == "system" or e.turn >= start]
        out = [_copy(e) for e in entries]
        summary = history.compaction.get("summary") if history.compaction is not None else None
        if summary is not None:
            position = 0  # after the leading system messages
            while position < len(entries) and entries[position].role == "system":
                position += 1
            out.insert(position, {"role": "user", "content": summary})
        return out

    def _turns(self) -> list[Turn]:
        turns: list[Turn] = []
        for entry in self._history.active():
            if entry.role == "system":
                continue
            if not turns or turns[-1].number != entry.turn:
                turns.append(Turn(entry.turn, []))
            turns[-1].messages.append(_copy(entry))
        return turns

    def _compaction_event(
        self, keep_last_turns: int, summarize: Summarize | None, trigger: str
    ) -> NewEvent | None:
        """The compaction event keeping the last ``keep_last_turns`` turns, or None when the
        history has no more than that (or no safe cut would leave anything out)."""
        if type(keep_last_turns) is not int or keep_last_turns < 1:
            raise ValueError(f"keep_last_turns must be a positive int, not {keep_last_turns!r}")
        history = self._history
        entries = history.active()
        turns = _log.turn_numbers(entries)
        if len(turns) <= keep_last_turns:
            return None
        start = _log.safe_start(entries, turns[-keep_last_turns])
        if start <= history.start_turn:
            return None
        data: dict[str, Any] = {"start_turn": start, "trigger": trigger, "summary": None}
        if summarize is not None:
            previous = history.compaction.get("summary") if history.compaction else None
            left_out = [{"role": "user", "content": previous}] if previous is not None else []
            left_out += [_copy(e) for e in entries if e.role != "system" and e.turn < start]
            summary = summarize(left_out)
            if not isinstance(summary, str):
                raise errors.wrong_type("summarize()", "a str", summary)
            data["summary"] = summary
        return _log.marker("compaction", data)

    def _trigger(self) -> str | None:
        """Which of the policy's triggers fires now, if any."""
        policy = self.compaction
        if policy is None:
            return None
        entries = self._history.active()
        if policy.max_turns is not None and len(_log.turn_numbers(entries)) > policy.max_turns:
            return "max_turns"
        tokens = _log.context_tokens(entries, self._history.compaction_seq)
        if policy.max_tokens is not None and tokens > policy.max_tokens:
            return "max_tokens"
        return None

    def _pop_event(self) -> NewEvent:
        if not self._history.entries:
            raise errors.SessionEmptyError(self.session_id)
        _log.read_now(self._history.entries[-1].message)  # a row it cannot read: before writing
        return _log.marker("pop", {})

    def _popped(self, stored: list[Event]) -> Any:
        entry = self._history.popped.get(stored[0].seq)
        if entry is None:  # another appender popped the last message first
            raise errors.SessionEmptyError(self.session_id)
        return _copy(entry)

    def _request(self, provider: str) -> dict[str, Any]:
        return to_request(self._messages(None), provider)


class Session(_Core):
    """A conversation's lossless, append-only log (rules §9), in a :class:`Store`.

    ``store`` is a store object, a SQLite file path, or None for an in-memory SQLite database.
    Messages are :class:`fastmerge.AssistantMessage`, :class:`fastmerge.ToolMessage` and plain
    ``{"role": "user" | "system", "content": str | list}`` dicts (fastmerge has no user or
    system message class; a list content is the target provider's own content, replayed as
    is). Each is stored as its ``to_dict()`` and loads back equal, as an instance of the
    ``AssistantMessage`` / ``ToolMessage`` of ``messages`` (a module; by default
    ``fastmerge``'s, of the selected backend). Reads see what other threads and processes
    appended. ``compaction`` compacts after each append whose result crosses one of its
    triggers.

    Session ids: 1 to :data:`fastmerge.session.MAX_SESSION_ID_BYTES` (1,024) bytes of UTF-8
    text without NUL, on every store (PostgreSQL's ``text`` holds no NUL and its index rows
    are limited to about 2,700 bytes; SQLite refuses the same ids so that a log can move
    between stores). Another id (a NUL, a lone surrogate, longer) raises
    :class:`fastmerge.errors.SessionIdError` here (and in :meth:`fork`) before anything is
    read or written; a non-str or empty one, ``TypeError``.

    Rows that cannot be read (a damaged file, another program's writes) raise typed errors,
    never change what is stored, and are read at these points: every read of the log (this
    constructor, :meth:`messages`, :meth:`turns`, :meth:`to_request`, :meth:`pop`,
    :meth:`compact`, ``len``) checks each new row's ``seq`` (the next int), ``turn`` (an int,
    the same or one more), version and kind, and reads the data of ``pop`` / ``clear`` /
    ``compaction`` rows: :class:`fastmerge.errors.CorruptRowError` or
    :class:`fastmerge.errors.SchemaVersionError`, after which :meth:`append` writes nothing
    until a read succeeds. A message row's data (its JSON, ``from_dict``) is read when the
    message is first needed: a user or system message with the history (:meth:`messages`,
    :meth:`turns`, ``len``); an assistant or tool message when it is itself first read (any
    field, ``to_dict``, ``==``: :meth:`messages` of a long history builds no message no one
    reads), by :meth:`to_request` (every message), :meth:`pop` (the one it takes out, before
    writing) and :meth:`append` with a ``compaction`` policy (the whole replayed history,
    before writing); each raises CorruptRowError for a message row it cannot read, every
    time it is read. Data nested deeper than ``fastmerge.MAX_DEPTH + 8`` levels is
    refused on append (:class:`fastmerge.errors.SessionTypeError`) and read as corrupt.
    """

    def __init__(
        self,
        session_id: str,
        store: Store | str | os.PathLike[str] | None = None,
        *,
        compaction: Compaction | None = None,
        messages: ModuleType | None = None,
    ) -> None:
        super().__init__(session_id, compaction=compaction, messages=messages)
        self._owned = not isinstance(store, Store)
        if store is None:
            store = SQLiteStore(":memory:")
        elif isinstance(store, (str, os.PathLike)):
            store = SQLiteStore(os.fspath(store))
        elif not isinstance(store, Store) or inspect.iscoroutinefunction(store.append):
            raise errors.wrong_type("store", "a Store (AsyncSession takes an AsyncStore)", store)
        self.store: Store = store
        with self._lock:
            self._refresh()

    def _refresh(self) -> None:
        try:
            self._apply(self.store.load(self.session_id, self._history.last_seq))
        except errors.SessionError:
            self._unread = True  # a row it cannot read: no append until it reads again
            raise
        self._unread = False

    def _write(self, events: list[NewEvent], items: list[Any] | None = None) -> list[Event]:
        stored = self.store.append(self.session_id, events)
        if items is None or not self._ours(stored, items):
            self._refresh()
        return stored

    def append(self, message: Any) -> list[int]:
        """Append a message or a list of messages (in one transaction: all or none); returns
        their sequence numbers. Another class raises
        :class:`fastmerge.errors.SessionTypeError` and appends nothing."""
        items = _items(message)
        events = _log.encode(items)
        with self._lock:
            # no read first (the store numbers the events, and _write reloads when another
            # appender came between), unless a read met a row it could not read
            if self._broken:
                self._recover(self.store.load(self.session_id, 0))
            if self._unread:
                self._refresh()
            if self.compaction is not None:
                self._read_active()
            stored = self._write(events, items)
            trigger = self._trigger()
            if trigger is not None and self.compaction is not None:
                policy = self.compaction
                event = self._compaction_event(policy.keep_last_turns, policy.summarize, trigger)
                if event is not None:
                    self._write([event])
        return [e.seq for e in stored]

    def messages(self, last_turns: int | None = None) -> list[Any]:
        """The history, as replayed: system messages, the last compaction's summary (a user
        message) and the messages from its turn on, without popped or cleared ones. With
        ``last_turns``, only the last that many turns (and the system messages), started
        earlier where a kept tool result needs its call."""
        with self._lock:
            self._refresh()
            return self._messages(last_turns)

    def turns(self) -> list[Turn]:
        """The turns of the history (system messages and the summary left out)."""
        with self._lock:
            self._refresh()
            return self._turns()

    def pop(self) -> Any:
        """Take the last message out of the history (a ``pop`` event: the log keeps it) and
        return it; :class:`fastmerge.errors.SessionEmptyError` if there is none."""
        with self._lock:
            self._refresh()
            stored = self._write([self._pop_event()])
            return self._popped(stored)

    def clear(self) -> None:
        """Start the history anew (a ``clear`` event: the log keeps what came before)."""
        with self._lock:
            self._write([_log.marker("clear", {})])

    def fork(self, new_id: str) -> Session:
        """A new session ``new_id`` in the same store whose log is a copy of this one's;
        :class:`fastmerge.errors.SessionExistsError` if ``new_id`` already has events."""
        fork = Session.__new__(Session)
        _Core.__init__(fork, new_id, compaction=self.compaction, messages=self._classes)
        with self._lock:
            self._refresh()
            events = self.store.load(self.session_id)
        copies = [NewEvent(e.kind, _ROLES.get(e.kind) == "user", e.data) for e in events]
        if copies:
            self.store.append(new_id, copies, new_session=True)
        elif self.store.load(new_id):
            raise errors.SessionExistsError(new_id)
        fork._owned = False
        fork.store = self.store
        with fork._lock:
            fork._refresh()
        return fork

    def compact(self, keep_last_turns: int, *, summarize: Summarize | None = None) -> bool:
        """Compact now: the replayed history keeps the last ``keep_last_turns`` turns (after
        ``summarize``'s summary of the others). False if there was nothing to leave out."""
        with self._lock:
            self._refresh()
            event = self._compaction_event(keep_last_turns, summarize, "manual")
            if event is None:
                return False
            self._write([event])
            return True

    def events(self) -> list[Event]:
        """Every stored event of the session, verbatim (the log as a store holds it)."""
        return self.store.load(self.session_id)

    def to_request(self, provider: str) -> dict[str, Any]:
        """The history in ``provider``'s request format (see
        :mod:`fastmerge.session.request`): ``{"messages": [...]}`` for ``"openai-chat"``,
        ``"anthropic"`` (and ``"system"``), ``"bedrock-converse"`` (and ``"system"``) and
        ``"ollama"``; ``{"input": [...]}`` for ``"openai-responses"``; ``{"contents": [...]}``
        (and ``"systemInstruction"``) for ``"gemini"``."""
        with self._lock:
            self._refresh()
            return self._request(provider)

    def close(self) -> None:
        """Close the store if this session opened it (a path or None was given)."""
        if self._owned:
            self.store.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        with self._lock:
            self._refresh()
            return len(self._messages(None))
