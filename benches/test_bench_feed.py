"""One event of many MB, fed in 64 KiB blocks or in one ``feed``: the transports keep their
place across feeds, so the blocks cost about what the whole does (linear in the bytes), on
SSE and on JSON lines, on the Rust backend and on the twin.

Timed (``make bench`` or ``pytest benches/test_bench_feed.py``): 64 MB on Rust, 4 MB on the
twin; compare the ``blocks`` and ``whole`` rows of a group (the issue asks for within 2x). A
smoke run (``--benchmark-disable``) feeds 1 MB on each and checks the message.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from _bench import REQUESTED, _load_rust
from _streams import _aggregate_module

BLOCK = 64 * 1024
#: Timed sizes per backend (the twin scans in Python: a smaller event shows the same slope).
SIZES = {"rust": 64 << 20, "python": 4 << 20}
SMOKE_SIZE = 1 << 20


def _event(size: int, transport: str) -> bytes:
    chunk = {"id": "c", "choices": [{"index": 0, "delta": {"content": "x" * size}}]}
    text = json.dumps(chunk).encode()
    return b"data: " + text + b"\n\n" if transport == "sse" else text + b"\n"


def _feed(module: Any, data: bytes, block: int) -> int:
    agg = module.Aggregator("openai-chat")
    for start in range(0, len(data), block):
        agg.feed(data[start : start + block])
    return len(agg.finish().content)


@pytest.mark.parametrize("transport", ["sse", "jsonl"])
@pytest.mark.parametrize("mode", ["whole", "blocks"])
@pytest.mark.parametrize("backend", ["rust", "python"])
def test_one_big_event(benchmark: Any, backend: str, mode: str, transport: str) -> None:
    why = _load_rust() if backend == "rust" else None
    if isinstance(why, str):
        if REQUESTED == "rust":
            pytest.fail(f"FASTMERGE_BACKEND=rust but {why}")
        pytest.skip(why)
    size = SMOKE_SIZE if benchmark.disabled else SIZES[backend]
    data = _event(size, transport)
    module = _aggregate_module(backend)
    block = len(data) if mode == "whole" else BLOCK
    benchmark.group = f"one {size >> 20} MB event, {transport}, {backend}"
    benchmark.extra_info.update(backend=backend, mode=mode, transport=transport, size=size)
    result = benchmark.pedantic(_feed, args=(module, data, block), rounds=3, iterations=1)
    assert result == size
