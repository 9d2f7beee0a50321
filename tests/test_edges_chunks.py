"""Chunk ``+`` at its edges (issue 9): a ``+`` (or a read) re-entered from Python code that a
fold runs — a metadata key's ``__hash__`` — on the same accumulator works on a copy instead of
deadlocking, on both backends. Each scenario runs in a daemon thread joined with a timeout,
so a deadlock fails the test instead of hanging it."""

from __future__ import annotations

import threading
from types import ModuleType
from typing import Any, Callable

TIMEOUT = 30.0


def run_with_timeout(body: Callable[[], Any]) -> Any:
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = body()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            outcome["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(TIMEOUT)
    assert not thread.is_alive(), "deadlock: the re-entered + never returned"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


class ReentrantKey(str):
    """A metadata key whose ``__hash__``, once armed, runs ``action`` (once)."""

    action: Callable[[], Any] | None = None
    results: list[Any] = []

    def __hash__(self) -> int:
        action, ReentrantKey.action = ReentrantKey.action, None
        if action is not None:
            ReentrantKey.results.append(action())
        return str.__hash__(self)


def test_reentrant_add_from_hash(messages_module: ModuleType) -> None:
    chunk = messages_module.AssistantMessageChunk
    acc = chunk(content="a", metadata={ReentrantKey("k"): "1"})
    acc = acc + chunk(content="b", metadata={ReentrantKey("k"): "2"})
    right = chunk(content="c", metadata={ReentrantKey("k"): "3"})
    ReentrantKey.results = []
    # the fold of `acc + right` hashes the key: that hash adds to the same accumulator, and
    # reads it
    ReentrantKey.action = lambda: ((acc + chunk(content="!")).content, acc.content)

    merged = run_with_timeout(lambda: acc + right)

    assert ReentrantKey.action is None  # the key was hashed inside the fold
    assert ReentrantKey.results == [("ab!", "ab")]
    assert (merged.content, merged.metadata) == ("abc", {"k": "3"})
    assert acc.content == "ab"
    # the outer accumulator goes on as if nothing had happened
    assert (merged + chunk(content="d")).content == "abcd"


def test_reentrant_read_from_hash(messages_module: ModuleType) -> None:
    chunk = messages_module.AssistantMessageChunk
    acc = chunk(content="x", metadata={ReentrantKey("k"): {"n": "1"}})
    acc = acc + chunk(content="y")
    right = chunk(content="z", metadata={ReentrantKey("k"): {"m": "2"}})
    ReentrantKey.results = []
    ReentrantKey.action = lambda: (acc.content, acc.metadata)

    merged = run_with_timeout(lambda: acc + right)

    assert ReentrantKey.action is None
    assert ReentrantKey.results == [("xy", {"k": {"n": "1"}})]
    assert merged.content == "xyz"
