"""Smoke run of ``memory.py`` (the memory target) on a small stream: the Rust backend
merges it from one bytes object without copying the input (≤ 1.5× above the baseline; it was
3.1×: the binding's copy, the transport's buffer and the list of payloads), and from 64 KiB
blocks within 0.3×. The full-size numbers: ``python benches/memory.py``."""

from __future__ import annotations

from pathlib import Path

import memory
import pytest


@pytest.fixture(scope="module")
def stream(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    path = tmp_path_factory.mktemp("memory") / "stream.jsonl"
    return path, memory.write_stream(path, 16_000_000)


@pytest.mark.parametrize(("mode", "bound"), [("aggregate", 1.5), ("feed", 0.3)])
def test_peak_memory_stays_within_the_target(
    stream: tuple[Path, int], mode: str, bound: float
) -> None:
    path, text = stream
    result = memory.measure(path, mode, "rust", text)  # checks the merged text's length
    assert result["input"] >= 16_000_000
    assert result["ratio"] <= bound, result


@pytest.fixture(scope="module")
def small_stream(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    path = tmp_path_factory.mktemp("memory") / "small.jsonl"
    return path, memory.write_stream(path, 8_000_000)


def test_the_twin_merges_one_bytes_object_within_the_same_target(
    small_stream: tuple[Path, int],
) -> None:
    """The twin's ``aggregate(bytes)`` within the Rust engine's 1.5× (it was 3.1× at 20 MB,
    4.1× at 100 MB: the transport's copy of the whole input and every event's bytes waiting
    at once); a smaller stream, the twin being slower."""
    path, text = small_stream
    result = memory.measure(path, "aggregate", "python", text)
    assert result["input"] >= 8_000_000
    assert result["ratio"] <= 1.5, result
