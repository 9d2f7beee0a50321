"""Turn-aware compaction: when the history grows past a trigger, the replayed history starts
at a later turn, after an optional summary; a ``compaction`` event records it and the log
keeps every message (``session.events()`` still has them).

A cut is always at the start of a turn (a user message), moved earlier while a kept tool
result's call would be left out: a tool call is never separated from its result, the
assistant message holding a kept call is kept whole (its reasoning block and signature, which
Anthropic requires in the turn of a tool call), and the history never starts with an orphan
tool result. System messages are always kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

__all__ = ["Compaction", "Summarize"]

#: ``summarize(messages) -> str``: the summary of the messages a compaction leaves out (the
#: previous compaction's summary first, as a user message dict, when there was one).
Summarize = Callable[[Sequence[Any]], str]


@dataclass(frozen=True)
class Compaction:
    """When and how a :class:`fastmerge.session.Session` compacts itself after an append.

    Triggers (any one): more than ``max_turns`` turns in the replayed history; the last
    assistant message's usage (``total_tokens``, else input + output) above ``max_tokens``.
    Strategy: keep the last ``keep_last_turns`` turns; with ``summarize``, the left-out
    messages are replaced by its summary (a user message at the start of the history)."""

    keep_last_turns: int = 10
    max_turns: int | None = None
    max_tokens: int | None = None
    summarize: Summarize | None = None

    def __post_init__(self) -> None:
        for name in ("keep_last_turns", "max_turns", "max_tokens"):
            value = getattr(self, name)
            if value is None and name != "keep_last_turns":
                continue
            if type(value) is not int or value < (0 if name == "max_tokens" else 1):
                raise ValueError(f"Compaction {name} must be a positive int, not {value!r}")
        if self.max_turns is not None and self.max_turns < self.keep_last_turns:
            raise ValueError("Compaction max_turns must be at least keep_last_turns")
