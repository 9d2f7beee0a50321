"""Events <-> JSON rows, and the fold of a session's log into its history.

The log holds seven kinds of event. Four are messages, stored as their ``to_dict()`` (the
assistant's parts, payloads and attributes verbatim): ``user`` and ``system`` (plain
``{"role", "content"}`` dicts: fastmerge has no user or system message class), ``assistant``
(:class:`fastmerge.AssistantMessage`) and ``tool`` (:class:`fastmerge.ToolMessage`). Three are
markers, so that nothing stored is ever rewritten: ``pop`` (the last message of the history at
that point is out), ``clear`` (the history starts after it) and ``compaction`` (the replayed
history starts at a turn, after an optional summary). A ``user`` message starts a turn.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Sequence

from .. import errors
from .store import SCHEMA_VERSION, Event, NewEvent

MESSAGE_KINDS = ("user", "system", "assistant", "tool")
MARKER_KINDS = ("pop", "clear", "compaction")
_CLASSES = {"AssistantMessage": "assistant", "ToolMessage": "tool"}
_A = {"user": "a user", "system": "a system", "assistant": "an assistant", "tool": "a tool"}


class Entry(NamedTuple):
    """A message of the history: its row's ``seq`` and ``turn``, its role, the message."""

    seq: int
    turn: int
    role: str
    message: Any


# ASCII escapes keep lone surrogates and every code point exact through any store; one
# encoder for every event (json.dumps with options builds one per call)
_dumps = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode


_SCALARS = frozenset((str, int, float, bool, type(None)))


def _unstorable(value: Any) -> str | None:
    """Why ``value`` would not read back from JSON as it is (a key that is not a str, a
    tuple or another container that JSON turns into something else), or None. ``json`` would
    change these silently; the log refuses them instead."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            for key, child in item.items():
                if type(key) is not str:
                    return f"a key {key!r} that is not a str"
                if type(child) not in _SCALARS:
                    stack.append(child)
        elif kind is list:
            for child in item:
                if type(child) not in _SCALARS:
                    stack.append(child)
        elif kind not in _SCALARS:
            return f"a {kind.__name__}, which JSON does not hold"
    return None


def role_of(item: Any) -> str | None:
    """``"assistant"`` / ``"tool"`` for fastmerge's complete messages (of either backend),
    ``"user"`` / ``"system"`` for a plain message dict, else None."""
    kind = type(item)
    if kind.__module__.startswith("fastmerge.") and kind.__name__ in _CLASSES:
        return _CLASSES[kind.__name__]
    if isinstance(item, dict) and item.get("role") in ("user", "system"):
        content = item.get("content")
        if isinstance(content, (str, list)) and set(item) <= {"role", "content", "name"}:
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


def decode(session_id: str, event: Event, classes: Any) -> Any:
    """The message (or marker data) a row holds; a row that cannot be read raises
    :class:`fastmerge.errors.CorruptRowError` naming it."""
    if not isinstance(event.version, int) or event.version > SCHEMA_VERSION:
        where = f"session {session_id!r}, row seq={event.seq}"
        raise errors.SchemaVersionError(where, event.version, SCHEMA_VERSION)
    if event.kind not in MESSAGE_KINDS and event.kind not in MARKER_KINDS:
        raise errors.corrupt_row(session_id, event.seq, f"unknown event kind {event.kind!r}")
    try:
        data = json.loads(event.data)
    except (TypeError, ValueError) as exc:
        raise errors.corrupt_row(session_id, event.seq, f"data is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise errors.corrupt_row(session_id, event.seq, "data is not a JSON object")
    try:
        if event.kind == "assistant":
            return classes.AssistantMessage.from_dict(data)
        if event.kind == "tool":
            return classes.ToolMessage.from_dict(data)
    except (TypeError, ValueError, KeyError) as exc:
        detail = f"not {_A[event.kind]} message: {type(exc).__name__}: {exc}"
        raise errors.corrupt_row(session_id, event.seq, detail) from None
    if event.kind in ("user", "system") and role_of(data) != event.kind:
        detail = f'not {_A[event.kind]} message: expected {{"role", "content"}}, got {data!r:.80}'
        raise errors.corrupt_row(session_id, event.seq, detail)
    if event.kind == "pop" and data:
        raise errors.corrupt_row(session_id, event.seq, "a pop event holds no data")
    if event.kind == "compaction" and type(data.get("start_turn")) is not int:
        raise errors.corrupt_row(session_id, event.seq, "a compaction needs an int start_turn")
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
        self.last_seq = event.seq
        self.last_turn = event.turn
        if event.kind in MESSAGE_KINDS:
            self.entries.append(Entry(event.seq, event.turn, event.kind, value))
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
    """The size of the context the last assistant message saw and wrote: its usage's total
    (input + output when the provider sent no total); 0 without usage, or when it came before
    ``seq`` ``after`` (the last compaction: its usage counts a history that is gone)."""
    for entry in reversed(entries):
        if entry.seq <= after:
            return 0
        if entry.role == "assistant":
            usage = entry.message.to_dict().get("usage_metadata") or {}
            total = usage.get("total_tokens")
            if isinstance(total, int):
                return total
            return int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0)
    return 0
