"""``benches/merge_loop.py``: ``merge_all`` beside a Python loop touching every key of the same
deltas. Timed with ``python benches/merge_loop.py``; here (as in ``make bench-smoke``) its
parts are checked: the loop reads every key and item, and one untimed run gives a ratio.
"""

from __future__ import annotations

from typing import Any

import pytest
from merge_loop import items_of, measure, touch_all


class _Seen:
    """Records what the loop reads."""

    def __init__(self) -> None:
        self.read: list[Any] = []


def _recording(value: Any, seen: _Seen) -> Any:
    """`value` with every dict and list a subclass that records each item read."""

    class Dict(dict):  # type: ignore[type-arg]
        def items(self):  # type: ignore[no-untyped-def]
            for key, item in super().items():
                seen.read.append(key)
                yield key, item

    class List(list):  # type: ignore[type-arg]
        def __iter__(self):  # type: ignore[no-untyped-def]
            for index, item in enumerate(super().__iter__()):
                seen.read.append(index)
                yield item

    if isinstance(value, dict):
        return Dict({k: _recording(v, seen) for k, v in value.items()})
    if isinstance(value, list):
        return List(_recording(v, seen) for v in value)
    return value


def test_the_loop_reads_every_key_and_item() -> None:
    seen = _Seen()
    items = [_recording(item, seen) for item in items_of(1_000)[:3]]
    touch_all(items)
    # each chunk: its 6 top-level keys, its one choice, the choice's 4 keys, the delta's key
    assert len(seen.read) == 3 * 12
    assert seen.read[:6] == ["id", "object", "created", "model", "system_fingerprint", "choices"]


@pytest.mark.parametrize("stat", ["min", "median"])
def test_one_run_gives_both_times_and_their_ratio(stat: str) -> None:
    result = measure(1_000, 1, stat)
    assert result["merge_all"] > 0 and result["loop"] > 0
    assert result["ratio"] == pytest.approx(result["merge_all"] / result["loop"])
