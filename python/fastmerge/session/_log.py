"""Events <-> JSON rows, and the fold of a session's log into its history.

The log holds eleven kinds of event. Four are messages, stored as their ``to_dict()`` (the
assistant's parts, payloads and attributes verbatim): ``user`` and ``system`` (plain
``{"role", "content"}`` dicts: fastmerge has no user or system message class), ``assistant``
(:class:`fastmerge.AssistantMessage`) and ``tool`` (:class:`fastmerge.ToolMessage`). Four are
OpenAI Responses input items stored verbatim (what the Agents SDK's sessions hold):
``user_item``, ``system_item``, ``assistant_item`` and ``tool_item``, each read as the message
of that role that :mod:`fastmerge.session._items` makes of the item when it is first read
(the item kept in the message's metadata). Three are markers, so that nothing stored is ever
rewritten: ``pop`` (the last message of the history at that point is out), ``clear`` (the
history starts after it) and ``compaction`` (the replayed history starts at a turn, after an
optional summary). A ``user`` or ``user_item`` message starts a turn.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Sequence

from jiter import from_json as _jiter

from .. import errors
from ._items import ITEM_KINDS, message_data, row_kind
from ._items import message as item_message
from .store import SCHEMA_VERSION, Event, NewEvent

MESSAGE_KINDS = ("user", "system", "assistant", "tool")
MARKER_KINDS = ("pop", "clear", "compaction")
#: The role of each message kind: the four messages' own, the four items' (:data:`ITEM_KINDS`).
ROLES = {**{kind: kind for kind in MESSAGE_KINDS}, **ITEM_KINDS}
_KINDS = frozenset(MARKER_KINDS).union(ROLES)
_CLASSES = {"AssistantMessage": "assistant", "ToolMessage": "tool"}
_A = {"user": "a user", "system": "a system", "assistant": "an assistant", "tool": "a tool"}

#: How deep a row's JSON may nest (the row's object is level 1): a message's fields may nest
#: :data:`fastmerge.MAX_DEPTH` levels, a few more are the message's own. Deeper data is refused
#: on append (:class:`fastmerge.errors.SessionTypeError`) and read as a corrupt row.
MAX_ROW_DEPTH = errors.MAX_DEPTH + 8


class Entry:
    """A message of the history: its row's ``seq`` and ``turn``, its role, and the message,
    read from the row's JSON when first asked for (``message`` raises
    :class:`fastmerge.errors.CorruptRowError` for a row that cannot be read, each time)."""

    __slots__ = ("_data", "_message", "_read", "role", "seq", "turn")

    def __init__(
        self, seq: int, turn: int, role: str, message: Any, data: Any = None, read: Any = None
    ) -> None:
        self.seq = seq
        self.turn = turn
        self.role = role
        self._message = message
        self._data = data  # the row's JSON text until the message is read (by ``read``)
        self._read = read

    @property
    def message(self) -> Any:
        if self._read is not None:
            self._message = self._read(self.seq, self.role, self._data)
            self._data = self._read = None
        return self._message


# ASCII escapes keep lone surrogates and every code point exact through any store; one
# encoder for every event (json.dumps with options builds one per call)
_dumps = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode
_loads = json.JSONDecoder().decode


def _parse(text: str) -> Any:
    """``json.loads(text)``, by jiter where it can (twice as fast, the same values); what jiter
    refuses (lone surrogates' escapes, nesting past its limit, bad JSON) goes to ``json``,
    which reads it or raises its own error."""
    try:
        return _jiter(text.encode(), cache_mode="keys")
    except ValueError:
        return _loads(text)


_SCALARS = frozenset((str, int, float, bool, type(None)))


def _unstorable(value: Any) -> str | None:
    """Why ``value`` would not read back from JSON as it is (a key that is not a str, a
    tuple or another container that JSON turns into something else, nesting deeper than
    :data:`MAX_ROW_DEPTH`), or None. ``json`` would change these silently (or fail on the
    depth); the log refuses them instead. Level by level, without recursion."""
    level = [value]
    depth = 0
    while level:
        depth += 1
        below = []
        for item in level:
            kind = type(item)
            if kind is dict:
                for key, child in item.items():
                    if type(key) is not str:
                        return f"a key {key!r} that is not a str"
                    if type(child) not in _SCALARS:
                        below.append(child)
            elif kind is list:
                for child in item:
                    if type(child) not in _SCALARS:
                        below.append(child)
            elif kind not in _SCALARS:
                return f"a {kind.__name__}, which JSON does not hold"
        if below and depth >= MAX_ROW_DEPTH:
            return f"values nested deeper than {MAX_ROW_DEPTH} levels"
        level = below
    return None


def _depth_over(value: Any, limit: int) -> bool:
    """Whether ``value`` nests deeper than ``limit`` levels (without recursion)."""
    level = [value]
    for _ in range(limit):
        level = [
            child
            for item in level
            for child in (item.values() if type(item) is dict else item)
            if type(child) is dict or type(child) is list
        ]
        if not level:
            return False
    return True


_DICT_KEYS = frozenset(("role", "content", "name", "metadata"))


def role_of(item: Any) -> str | None:
    """``"assistant"`` / ``"tool"`` for fastmerge's complete messages (of either backend),
    ``"user"`` / ``"system"`` for a plain message dict (``role``, ``content``, and optionally
    ``name`` and a ``metadata`` dict, which no request replays), else None."""
    kind = type(item)
    if kind.__module__.startswith("fastmerge.") and kind.__name__ in _CLASSES:
        return _CLASSES[kind.__name__]
    if isinstance(item, dict) and item.get("role") in ("user", "system"):
        content = item.get("content")
        if isinstance(content, (str, list)) and _DICT_KEYS.issuperset(item):
            if isinstance(item.get("metadata", {}), dict):
                return str(item["role"])
    return None


def encode(items: Sequence[Any]) -> list[NewEvent]:
    """The events for ``items``; checks them all before anything is written."""
    events = []
    for position, item in enumerate(items):
        role = role_of(item)
        if role is None:
            raise errors.not_a_message(position, item)
        data = dict(item) if isinstance(item, dict) else item.to_dict()
        reason = _unstorable(data)
        if reason is not None:
            raise errors.SessionTypeError(position, f"cannot be stored as JSON: it holds {reason}")
        text = _dumps(data)
        events.append(NewEvent(role, role == "user", text))
    return events


def marker(kind: str, data: dict[str, Any]) -> NewEvent:
    return NewEvent(kind, False, _dumps(data))


def _what(value: object) -> str:
    return "NULL" if value is None else f"a {type(value).__name__}"


def check(session_id: str, event: Event, last_seq: int, last_turn: int) -> None:
    """Whether ``event`` can follow a row ``(last_seq, last_turn)`` of the log: its ``seq``
    the next int, its ``turn`` an int that is the same or one more, its version one this
    fastmerge reads, its kind known. Else :class:`fastmerge.errors.CorruptRowError` (or
    :class:`fastmerge.errors.SchemaVersionError`) naming the row."""
    seq, turn, version = event.seq, event.turn, event.version
    if type(seq) is not int:
        raise errors.corrupt_row(session_id, seq, f"its seq is {_what(seq)}, not an int")
    if seq != last_seq + 1:
        after = f"the row after seq {last_seq}" if last_seq else "the first row"
        detail = f"seq out of order: {after} must be seq {last_seq + 1}"
        raise errors.corrupt_row(session_id, seq, detail)
    if type(turn) is not int:
        raise errors.corrupt_row(session_id, seq, f"its turn is {_what(turn)}, not an int")
    if turn != last_turn and turn != last_turn + 1:
        detail = f"turn {turn} out of order: after turn {last_turn}, {last_turn} or {last_turn + 1}"
        raise errors.corrupt_row(session_id, seq, detail)
    if type(version) is not int or not 1 <= version <= SCHEMA_VERSION:
        where = f"session {session_id!r}, row seq={seq}"
        raise errors.SchemaVersionError(where, version, SCHEMA_VERSION)
    if event.kind not in _KINDS:
        kind = errors._shown(event.kind)
        raise errors.corrupt_row(session_id, seq, f"unknown event kind {kind}")


def _object(session_id: str, seq: int, data: object) -> dict[str, Any]:
    """The JSON object a row's data holds."""
    if type(data) is not str:
        raise errors.corrupt_row(session_id, seq, f"data is {_what(data)}, not JSON text")
    try:
        value = _parse(data)
    except RecursionError:
        detail = f"data is not JSON this fastmerge reads: nested deeper than {MAX_ROW_DEPTH} levels"
        raise errors.corrupt_row(session_id, seq, detail) from None
    except ValueError as exc:
        raise errors.corrupt_row(session_id, seq, f"data is not JSON: {exc}") from None
    if type(value) is not dict:
        raise errors.corrupt_row(session_id, seq, "data is not a JSON object")
    return value


def read_message(session_id: str, classes: Any, seq: int, kind: str, data: object) -> Any:
    """The message a row of ``kind`` (one of :data:`MESSAGE_KINDS`) holds; a row that cannot
    be read raises :class:`fastmerge.errors.CorruptRowError` naming it."""
    return _message(session_id, classes, seq, kind, _object(session_id, seq, data))


def read_item(session_id: str, classes: Any, seq: int, role: str, data: object) -> Any:
    """The message of a row of a verbatim item (one of :data:`ITEM_KINDS`, read as ``role``):
    the item's JSON read, and its message made (:func:`fastmerge.session._items.message_data`)
    and read as a row of that role is; a row that cannot be read raises
    :class:`fastmerge.errors.CorruptRowError` naming it."""
    item = _object(session_id, seq, data)
    try:
        kind = row_kind(0, item)
    except errors.SessionTypeError as exc:
        detail = f"not a Responses input item: {exc.detail}"
        raise errors.corrupt_row(session_id, seq, detail) from None
    if ROLES[kind] != role:
        detail = f"a {role}_item row holds {_A[ROLES[kind]]} item"
        raise errors.corrupt_row(session_id, seq, detail)
    try:
        if role == "assistant" or role == "tool":
            return item_message(item, classes, kind)
        value = message_data(item, classes, kind)
    except errors.SessionTypeError as exc:
        detail = f"not a Responses input item: {exc.detail}"
        raise errors.corrupt_row(session_id, seq, detail) from None
    except (TypeError, ValueError, KeyError, RecursionError) as exc:
        detail = f"not {_A[role]} message: {type(exc).__name__}: {exc}"
        raise errors.corrupt_row(session_id, seq, detail) from None
    return _message(session_id, classes, seq, role, value)


def _message(session_id: str, classes: Any, seq: int, kind: str, value: dict[str, Any]) -> Any:
    try:
        if kind == "assistant":
            return classes.AssistantMessage.from_dict(value)
        if kind == "tool":
            return classes.ToolMessage.from_dict(value)
    except (TypeError, ValueError, KeyError, RecursionError) as exc:
        detail = f"not {_A[kind]} message: {type(exc).__name__}: {exc}"
        raise errors.corrupt_row(session_id, seq, detail) from None
    if role_of(value) != kind:
        detail = f'not {_A[kind]} message: expected {{"role", "content"}}, got {value!r:.80}'
        raise errors.corrupt_row(session_id, seq, detail)
    content = value["content"]
    if type(content) is list and _depth_over(content, MAX_ROW_DEPTH - 1):
        detail = f"not {_A[kind]} message: its content nests deeper than {MAX_ROW_DEPTH} levels"
        raise errors.corrupt_row(session_id, seq, detail)
    return value


def read_now(message: Any) -> None:
    """Build a deferred message now (a row that cannot be read raises here): the session
    builds an assistant or tool message read from its log at its first read
    (``AssistantMessage._deferred``), so that ``messages()`` of a long history builds none
    that no one reads."""
    if not isinstance(message, dict):
        message.role  # noqa: B018  (any field builds it)


def read_marker(session_id: str, event: Event) -> dict[str, Any]:
    """The data of a marker row (``pop``, ``clear``, ``compaction``), checked."""
    data = _object(session_id, event.seq, event.data)
    if event.kind == "pop" and data:
        raise errors.corrupt_row(session_id, event.seq, "a pop event holds no data")
    if event.kind == "compaction":
        start = data.get("start_turn")
        if type(start) is not int or start < 0:
            raise errors.corrupt_row(session_id, event.seq, "a compaction needs an int start_turn")
        if not isinstance(data.get("summary"), (str, type(None))):
            detail = "a compaction's summary is a str or null"
            raise errors.corrupt_row(session_id, event.seq, detail)
    return data


@dataclass
class History:
    """The fold of the log, kept up to date one event at a time."""

    entries: list[Entry] = field(default_factory=list)
    compaction: dict[str, Any] | None = None
    compaction_seq: int = 0
    popped: dict[int, Entry | None] = field(default_factory=dict)
    last_seq: int = 0
    last_turn: int = 0

    def apply(self, event: Event, value: Any) -> None:
        """Fold a row: ``value`` is its :class:`Entry` for a message, its data for a marker."""
        self.last_seq = event.seq
        self.last_turn = event.turn
        if event.kind in ROLES:
            self.entries.append(value)
        elif event.kind == "pop":
            self.popped[event.seq] = self.entries.pop() if self.entries else None
        elif event.kind == "clear":
            self.entries = []
            self.compaction = None
            self.compaction_seq = event.seq
        else:
            self.compaction = value
            self.compaction_seq = event.seq

    @property
    def start_turn(self) -> int:
        return self.compaction["start_turn"] if self.compaction is not None else 0

    def active(self) -> list[Entry]:
        """The entries the history replays: system messages, and the rest from the last
        compaction's turn on."""
        start = self.start_turn
        return [e for e in self.entries if e.role == "system" or e.turn >= start]


def turn_numbers(entries: Sequence[Entry]) -> list[int]:
    """The turns (in order) that hold a message other than a system message."""
    seen: list[int] = []
    for entry in entries:
        # turns never decrease along the log
        if entry.role != "system" and (not seen or seen[-1] != entry.turn):
            seen.append(entry.turn)
    return seen


def _call_ids(message: Any) -> list[str]:
    return [
        p["id"]
        for p in message.to_dict()["parts"]
        if p.get("part") == "tool_call" and isinstance(p.get("id"), str)
    ]


def safe_start(entries: Sequence[Entry], start: int) -> int:
    """The turn a history cut at ``start`` must start at so that no kept tool result loses
    its call, and so no kept call loses the reasoning of its message: the turn of the earliest
    call whose result is kept (the whole assistant message, reasoning and signature included,
    comes with it)."""
    calls: dict[str, int] = {}
    for entry in entries:
        if entry.role == "assistant":
            for call_id in _call_ids(entry.message):
                calls.setdefault(call_id, entry.turn)
    while True:
        earliest = start
        for entry in entries:
            if entry.role == "tool" and entry.turn >= start:
                turn = calls.get(entry.message.tool_call_id)
                if turn is not None and turn < earliest:
                    earliest = turn
        if earliest == start:
            return start
        start = earliest


def context_tokens(entries: Sequence[Entry], after: int) -> int:
    """The size of the context the last assistant message saw and wrote: its usage's total as
    the backend's usage rule gives it (input + output when the provider sent no total); 0
    without usage, or when it came before
    ``seq`` ``after`` (the last compaction: its usage counts a history that is gone)."""
    for entry in reversed(entries):
        if entry.seq <= after:
            return 0
        if entry.role == "assistant":
            total = entry.message.usage_total()
            return int(total) if isinstance(total, (int, float)) else 0
    return 0
