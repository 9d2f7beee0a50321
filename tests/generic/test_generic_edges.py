"""The generic merge at its edges: ``merge_all`` consumes its items one at a time
and fails where the twin fails, and dict subclasses whose ``items()`` yields something other
than 2-tuples behave as ``for key, value in d.items()`` does. Every test runs on both
backends (``backend_module``)."""

from __future__ import annotations

from types import ModuleType
from typing import Any, Iterator

import pytest


class ListItems(dict):  # type: ignore[type-arg]
    """``items()`` yields ``[key, value]`` lists: ``key, value = item`` unpacks them."""

    def items(self) -> Any:
        return [list(pair) for pair in dict.items(self)]


class TripleItems(dict):  # type: ignore[type-arg]
    def items(self) -> Any:
        return [(*pair, "extra") for pair in dict.items(self)]


class SingleItems(dict):  # type: ignore[type-arg]
    def items(self) -> Any:
        return [(key,) for key in dict.keys(self)]


class ScalarItems(dict):  # type: ignore[type-arg]
    def items(self) -> Any:
        return [7 for _ in dict.keys(self)]


def counting(items: list[Any], seen: list[int], fail_at: int | None = None) -> Iterator[Any]:
    for position, item in enumerate(items):
        seen.append(position)
        if position == fail_at:
            raise RuntimeError(f"source failed at item {position}")
        yield item


def test_generator_raising_after_two_items(backend_module: ModuleType) -> None:
    seen: list[int] = []
    items = [{"a": "x"}, {"a": "y"}, {"a": "z"}, {"a": "w"}]
    with pytest.raises(RuntimeError, match=r"^source failed at item 2$"):
        backend_module.merge_all(counting(items, seen, fail_at=2))
    assert seen == [0, 1, 2]


def test_bad_item_at_position_3_stops_there(backend_module: ModuleType) -> None:
    seen: list[int] = []
    items = [{"a": "1"}, {"a": "2"}, TripleItems(a="3"), {"a": "4"}]
    with pytest.raises(ValueError, match=r"^too many values to unpack \(expected 2"):
        backend_module.merge_all(counting(items, seen))
    assert seen == [0, 1, 2]


def test_items_are_consumed_lazily(backend_module: ModuleType) -> None:
    seen: list[int] = []
    iterator = counting([{"a": "1"}, {"a": "2"}, {"a": "3"}], seen)
    assert backend_module.merge_all(iterator) == {"a": "123"}
    assert seen == [0, 1, 2]
    assert next(iterator, None) is None


@pytest.mark.parametrize("policy", ["openjiuwen", "delta"])
def test_subclass_items_as_lists(backend_module: ModuleType, policy: str) -> None:
    right = ListItems(a="x", b=[2])
    assert backend_module.merge({"a": "1", "b": [1]}, right, policy=policy) == {
        "a": "1x",
        "b": [1, 2],
    }
    assert backend_module.merge_all([{"a": "1"}, right, {"a": "2"}], policy=policy) == {
        "a": "1x2",
        "b": [2],
    }
    assert backend_module.merge_dicts({"a": "1"}, right) == {"a": "1x", "b": [2]}


@pytest.mark.parametrize(
    ("cls", "error", "message"),
    [
        (TripleItems, ValueError, r"^too many values to unpack \(expected 2"),
        (SingleItems, ValueError, r"^not enough values to unpack \(expected 2, got 1\)$"),
        (ScalarItems, TypeError, r"^cannot unpack non-iterable int object$"),
    ],
)
def test_subclass_items_that_do_not_unpack(
    backend_module: ModuleType, cls: type, error: type[Exception], message: str
) -> None:
    for call in (
        lambda: backend_module.merge({"a": "1"}, cls(a="x")),
        lambda: backend_module.merge_all([{"a": "1"}, cls(a="x")]),
        lambda: backend_module.merge({"a": "1"}, cls(a="x"), policy="delta"),
        lambda: backend_module.merge_dicts({"a": "1"}, cls(a="x")),
    ):
        with pytest.raises(error, match=message):
            call()


@pytest.mark.differential
def test_subclass_items_same_message_on_both(both: tuple[ModuleType, ModuleType]) -> None:
    outcomes = []
    for module in both:
        row = []
        for cls in (TripleItems, SingleItems, ScalarItems):
            try:
                module.merge({"a": "1"}, cls(a="x"))
            except Exception as exc:  # noqa: BLE001 - the outcome is what is compared
                row.append((type(exc), str(exc)))
        outcomes.append(row)
    assert outcomes[0] == outcomes[1]
    assert len(outcomes[0]) == 3


class CountedKey(str):
    """A str key that counts the calls of its ``__hash__`` (per key text)."""

    calls: dict[str, int] = {}

    def __hash__(self) -> int:
        CountedKey.calls[str(self)] = CountedKey.calls.get(str(self), 0) + 1
        return str.__hash__(self)


def test_merge_all_hashes_the_first_items_keys_at_most_once(backend_module: ModuleType) -> None:
    first = {CountedKey("a"): "x", CountedKey("b"): [1], CountedKey("c"): {"d": "e"}}
    CountedKey.calls = {}  # building ``first`` hashed each key once
    merged = backend_module.merge_all([first, {"a": "y", "c": {"d": "f"}}, {"b": [2]}])
    assert merged == {"a": "xy", "b": [1, 2], "c": {"d": "ef"}}
    # the dict stored their hashes: a merge may hash a key again once (for its result), not
    # once to read it and once more to build the result
    assert max(CountedKey.calls.values(), default=0) <= 1, CountedKey.calls
