"""Helpers for the chunk tests (test_chunks*.py).

Every builder looks the classes up on ``fastmerge`` at call time, so that the autouse backend
fixture of conftest decides which backend's classes they build.
"""

from __future__ import annotations

from typing import Any

import fastmerge

_ABSENT: Any = object()


def tc(index: Any, call_id: Any, name: Any, args: Any, **extra: Any) -> dict[str, Any]:
    """edge-cases.md's ``tc(i,id,name,args)``: an OpenAI Chat delta tool-call entry; ``None``
    (or ``-`` in the spec) leaves the key out."""
    entry: dict[str, Any] = {}
    if index is not None:
        entry["index"] = index
    if call_id is not None:
        entry["id"] = call_id
    entry["type"] = "function"
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    if args is not None:
        function["arguments"] = args
    entry["function"] = function
    entry.update(extra)
    return entry


def chunk(**fields: Any) -> Any:
    """An ``AssistantMessageChunk`` of the backend under test."""
    return fastmerge.AssistantMessageChunk(**fields)


def calls_chunks(*fragment_lists: list[dict[str, Any]]) -> list[Any]:
    """One assistant chunk per list of tool-call fragments."""
    return [chunk(tool_calls=fragments) for fragments in fragment_lists]


def summary(calls: Any) -> list[tuple[Any, ...]] | None:
    """``(id, name, arguments, index)`` per call of a ``tool_calls`` view."""
    if calls is None:
        return None
    return [(c.id, c.name, c.arguments, c.index) for c in calls]


def codes(message: Any) -> list[str]:
    """The anomaly codes recorded on a chunk or message, in order."""
    return [a["code"] for a in message.anomalies]


def fold_plus(chunks: list[Any]) -> Any:
    """``chunks[0] + chunks[1] + ...``."""
    acc = chunks[0]
    for item in chunks[1:]:
        acc = acc + item
    return acc
