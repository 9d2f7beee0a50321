"""The merge on other threads: small stacks, and many threads at once."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import fastmerge


def _nest(depth: int, leaf: str) -> Any:
    value: Any = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


def _leaf(value: Any, depth: int) -> Any:
    for _ in range(depth):
        value = value["a"]
    return value


def test_max_depth_on_a_thread_with_a_small_stack() -> None:
    # The engine recurses once per level; it must not overflow a 256 KiB thread stack (the
    # Rust side grows its stack on demand), and the twin stays within Python's own limit.
    depth = fastmerge.MAX_DEPTH
    results: dict[str, Any] = {}

    def run() -> None:
        try:
            results["merge"] = fastmerge.merge(_nest(depth, "x"), _nest(depth, "y"))
            results["merge_all"] = fastmerge.merge_all(
                [_nest(depth, "x"), _nest(depth, "y"), _nest(depth, "z")]
            )
        except BaseException as exc:  # reported below, in the test's thread
            results["error"] = exc

    old = threading.stack_size(256 * 1024)
    try:
        thread = threading.Thread(target=run)
        thread.start()
        thread.join()
    finally:
        threading.stack_size(old)
    assert "error" not in results, results.get("error")
    assert _leaf(results["merge"], depth) == "xy"
    assert _leaf(results["merge_all"], depth) == "xyz"


def test_many_threads_merge_shared_inputs_without_changing_them() -> None:
    left = {"id": "c1", "choices": [{"delta": {"content": "Hel"}}], "meta": {"a": "x"}}
    right = {"id": "c1", "choices": [{"delta": {"content": "lo"}}], "meta": {"a": "y"}}
    expected = {
        "id": "c1c1",
        "choices": [{"delta": {"content": "Hel"}}, {"delta": {"content": "lo"}}],
        "meta": {"a": "xy"},
    }
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda _: fastmerge.merge(left, right), range(2000)))
    assert all(result == expected for result in results)
    assert left["meta"] == {"a": "x"} and right["meta"] == {"a": "y"}
