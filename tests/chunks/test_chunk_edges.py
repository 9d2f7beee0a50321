"""Chunk ``+`` at its edges: a ``+`` (or a read) re-entered from Python code that a
fold runs — a metadata key's ``__hash__`` — on the same accumulator works on a copy instead of
deadlocking, on both backends. Each scenario runs in a daemon thread joined with a timeout,
so a deadlock fails the test instead of hanging it."""

from __future__ import annotations

import threading
from types import ModuleType
from typing import Any, Callable

import pytest

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


# ---------------------------------------------------------------------------------------------
# Metadata nesting: one documented limit, fastmerge.MAX_DEPTH, on both backends


def nest(levels: int, leaf: Any = "x") -> Any:
    """``levels`` nested dicts (the outermost is level 1) around ``leaf``."""
    value = leaf
    for _ in range(levels):
        value = {"a": value}
    return value


def depth_error() -> str:
    import fastmerge

    return str(fastmerge.errors.DepthLimitError(fastmerge.MAX_DEPTH))


@pytest.mark.parametrize("field", ["metadata", "provider_metadata"])
def test_constructor_metadata_depth_limit(messages_module: ModuleType, field: str) -> None:
    import fastmerge

    chunk = messages_module.AssistantMessageChunk
    limit = fastmerge.MAX_DEPTH
    assert limit == 256
    at_limit = chunk(content="x", **{field: nest(limit)})
    assert getattr(at_limit, field) == nest(limit)
    with pytest.raises(fastmerge.DepthLimitError) as caught:
        chunk(content="x", **{field: nest(limit + 1)})
    assert str(caught.value) == depth_error()


def test_add_metadata_depth_limit(messages_module: ModuleType) -> None:
    import fastmerge

    chunk = messages_module.AssistantMessageChunk
    limit = fastmerge.MAX_DEPTH
    merged = chunk(content="x", metadata=nest(limit)) + chunk(
        content="y", metadata=nest(limit, "z")
    )
    assert merged.metadata == nest(limit, "z")

    def leaf_chunk(metadata: Any) -> Any:
        # a leaf given to _init directly (no constructor copy): + and readers hold the limit
        made = chunk.__new__(chunk)
        made._init("assistant", {"role": "assistant", "content": "x", "metadata": metadata})
        return made

    for read in (
        lambda: leaf_chunk(nest(limit + 1)).metadata,
        lambda: (leaf_chunk(nest(limit + 1)) + leaf_chunk(nest(limit + 1, "y"))).metadata,
        lambda: (chunk(content="q") + leaf_chunk(nest(limit + 1))).to_dict(),
        lambda: (chunk(content="q") + leaf_chunk(nest(limit + 1)) + leaf_chunk(nest(3))).content,
    ):
        with pytest.raises(fastmerge.DepthLimitError) as caught:
            read()
        assert str(caught.value) == depth_error()
    assert (leaf_chunk(nest(limit)) + leaf_chunk(nest(limit, "y"))).metadata == nest(limit, "y")
