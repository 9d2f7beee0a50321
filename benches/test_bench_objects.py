"""The objects users hold: one stream aggregated from its bytes, from the dicts of its events
and from the provider SDKs' own event objects, against ``orjson.loads`` of its lines.

Implementations (``OBJECT_IMPLS``), each on the same stream (``_streams.py``: the OpenAI Chat
text stream and the Anthropic thinking / text / tool-use stream, 1,000 and 20,000 events):

- ``orjson``: ``orjson.loads`` of every line, each result dropped (the least a Python consumer
  of the stream pays; the unit of the ratios);
- ``bytes``: ``fastmerge.aggregate(jsonl_bytes, provider)`` on the Rust backend;
- ``dicts``: ``fastmerge.aggregate(list_of_dicts, provider)``, the dicts parsed before timing
  (the merge alone, after the dicts exist: what a framework that already holds them pays);
- ``openai_sdk``: ``aggregate`` of ``openai.types.chat.ChatCompletionChunk`` objects (built
  before timing, ``model_validate`` of each event);
- ``anthropic_sdk``: ``aggregate`` of ``anthropic.types.RawMessageStreamEvent`` objects (built
  before timing with ``TypeAdapter(RawMessageStreamEvent)``; its ``Stream`` drops ``ping`` s,
  and so do these).

Every timed call ends with the message's checked fields read and compared with the stream's
expected message (``_streams.Merged``), and every implementation's whole message equals the
one from bytes (checked once before timing), so a wrong merge cannot look fast.

``python benches/test_bench_objects.py`` times each side by side in one process (best of
several rounds, ``FASTMERGE_BENCH_ROUNDS``) and prints the ratios to ``orjson``.
"""

from __future__ import annotations

import functools
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

import orjson
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _streams import (  # noqa: E402
    SIZES,
    STREAMS,
    Merged,
    Stream,
    _aggregate_module,
    _read_fastmerge,
    drop_streams,
    normalize,
)

#: The implementations, in report order.
OBJECT_IMPLS = ("orjson", "bytes", "dicts", "openai_sdk", "anthropic_sdk")
#: The SDK objects of each provider.
SDK_OF = {"openai-chat": "openai_sdk", "anthropic": "anthropic_sdk"}
#: The streams compared.
SHAPES = ("openai_text", "anthropic")


def _rust() -> Any:
    from _streams import _load_rust

    module = _load_rust()
    if isinstance(module, str):
        if os.environ.get("FASTMERGE_BACKEND") == "rust":
            pytest.fail(module)
        pytest.skip(module)
    return _aggregate_module("rust")


@functools.cache
def _objects(stream_id: str, kind: str) -> list[Any]:
    """The stream's events as ``kind``: dicts, or SDK objects (built once per stream)."""
    stream = next(s for s in STREAMS if s.id == stream_id)
    events = [orjson.loads(line) for line in stream.lines]
    if kind == "dicts":
        return events
    if kind == "openai_sdk":
        from openai.types.chat import ChatCompletionChunk

        return [ChatCompletionChunk.model_validate(event) for event in events]
    from anthropic.types import RawMessageStreamEvent
    from pydantic import TypeAdapter

    adapter: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)
    return [adapter.validate_python(e) for e in events if e.get("type") != "ping"]


def runner(name: str, stream: Stream) -> Callable[[], Merged]:
    """The timed call of ``name`` on ``stream``: it merges and reads the checked fields."""
    like = stream.expected("rust")
    if name == "orjson":
        lines = stream.lines
        loads = orjson.loads

        def parse() -> Merged:
            count = 0
            for line in lines:
                loads(line)
                count += 1
            return Merged(events=count)

        return parse
    aggregate = _rust().aggregate
    provider = stream.provider
    data: Any = stream.jsonl if name == "bytes" else _objects(stream.id, name)
    return lambda: _read_fastmerge(aggregate(data, provider), like)


def expected(name: str, stream: Stream) -> Merged:
    return stream.expected("orjson" if name == "orjson" else "rust")


def same_message(name: str, stream: Stream) -> None:
    """The whole message from ``name`` 's input equals the one from bytes."""
    if name in ("orjson", "bytes"):
        return
    aggregate = _rust().aggregate
    from_bytes = aggregate(stream.jsonl, stream.provider).to_dict()
    got = aggregate(_objects(stream.id, name), stream.provider).to_dict()
    assert orjson.dumps(got, option=orjson.OPT_SORT_KEYS) == orjson.dumps(
        from_bytes, option=orjson.OPT_SORT_KEYS
    ), f"{name} on {stream.id}: another message than from bytes"


PARAMS = [
    pytest.param(name, stream, id=f"{name}-{stream.id}")
    for stream in STREAMS
    if stream.shape in SHAPES
    for name in OBJECT_IMPLS
    if not name.endswith("_sdk") or SDK_OF[stream.provider] == name
]


@pytest.fixture(scope="module", autouse=True)
def _free_streams() -> Any:
    yield
    _objects.cache_clear()
    drop_streams()


@pytest.mark.parametrize(("name", "stream"), PARAMS)
def test_objects(benchmark: Any, name: str, stream: Stream) -> None:
    """Aggregate the stream from ``name`` 's input, then read the checked fields."""
    if benchmark.disabled and stream.size > SIZES[0]:
        pytest.skip(f"smoke run: the {stream.size:,}-event streams are timed by a full run")
    run = runner(name, stream)
    same_message(name, stream)
    benchmark.group = f"objects: {stream.title}"
    benchmark.extra_info.update(kind="objects", impl=name, shape=stream.shape, size=stream.size)
    result = benchmark(run)
    assert normalize(result) == expected(name, stream)


def main() -> None:
    """Time every implementation side by side, best of ``FASTMERGE_BENCH_ROUNDS`` rounds, and
    print each one's time and its ratio to ``orjson``."""
    rounds = int(os.environ.get("FASTMERGE_BENCH_ROUNDS", "15"))
    print("| stream | events | " + " | ".join(OBJECT_IMPLS) + " |")
    print("|---|---:|" + "---:|" * len(OBJECT_IMPLS))
    for stream in STREAMS:
        if stream.shape not in SHAPES:
            continue
        best: dict[str, float] = {}
        names = [n for n in OBJECT_IMPLS if not n.endswith("_sdk") or SDK_OF[stream.provider] == n]
        runs = {name: runner(name, stream) for name in names}
        for name in names:
            same_message(name, stream)
            assert normalize(runs[name]()) == expected(name, stream), name
        for _ in range(rounds):  # interleaved: the machine's noise falls on every one alike
            for name in names:
                start = time.perf_counter()
                runs[name]()
                took = time.perf_counter() - start
                best[name] = min(best.get(name, took), took)
        base = best["orjson"]
        cells = [
            f"{best[n] * 1e3:.2f} ms ({best[n] / base:.2f}x)" if n in best else "-"
            for n in OBJECT_IMPLS
        ]
        title = stream.title.split(", ")[0].removeprefix("streams: ")
        print(f"| {title} | {stream.size:,} | " + " | ".join(cells) + " |")
        _objects.cache_clear()
        drop_streams()


if __name__ == "__main__":
    main()
