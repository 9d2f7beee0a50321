"""Provider streams from raw JSON lines: fastmerge's ``aggregate`` on the Rust backend (the whole
stream as bytes, and as a list of line bytes) and on the twin, against ``orjson.loads`` of the
lines alone (and, for logprobs, of only the entries the message keeps), the openai SDK's
``ChatCompletionStreamState``, the anthropic SDK's ``accumulate_event`` and LiteLLM's
``stream_chunk_builder`` (``_streams.py`` says how each is fed).

Every timed call starts from the same lines (bytes) and includes parsing, merging and reading
the checked fields of the result once; each benchmark asserts that read equals the stream's
expected message (text, reasoning and its signature, tool-call arguments, logprobs), so a wrong
merge cannot look fast. ``rust_feed`` times only ``Aggregator.feed(jsonl)`` (parse and merge in
Rust, no Python object made) to split the fast path's time; its aggregator is finished and
checked after timing.

The SDK accumulators above 1,000 events run one round. A smoke run
(``pytest benches --benchmark-disable``, CI, on a debug build) checks every implementation on
the 1,000-event streams only. openai's ``ChatCompletionStreamState`` is quadratic on logprobs
(each chunk rebuilds the event objects of the whole logprobs snapshot: ~6 s at 1,000 chunks,
~35 s at 2,000, so most of an hour at 20,000): one round at 1,000, not run at 20,000, nor in a
smoke run. ``make bench`` prints the ratios (``benches/report.py``, "Provider streams").
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest
from _streams import (
    FOR_PROVIDER,
    LARGE_IMPLS,
    ONLY_FOR,
    SIZES,
    SLOW,
    STREAMS,
    Merged,
    Stream,
    StreamImpl,
    _aggregate_module,
    _read_fastmerge,
    drop_streams,
    load_stream_impl,
    normalize,
)

#: Rounds of the ``rust_feed`` split (pedantic: each round feeds a new aggregator).
FEED_ROUNDS = {SIZES[0]: 50, SIZES[-1]: 10}

PARAMS = [
    pytest.param(name, stream, id=f"{name}-{stream.id}")
    for stream in STREAMS
    for name in (*FOR_PROVIDER[stream.provider], "rust_feed")
    if (stream.size in SIZES or name in LARGE_IMPLS)
    and stream.shape in ONLY_FOR.get(name, (stream.shape,))
]


@pytest.fixture(scope="module", autouse=True)
def _free_streams() -> Iterator[None]:
    """Drop the streams after this module, so the other benchmarks run on a small heap."""
    yield
    drop_streams()


def _label(benchmark: Any, name: str, stream: Stream) -> None:
    benchmark.group = stream.title
    benchmark.extra_info.update(
        kind="streams",
        shape=stream.shape,
        provider=stream.provider,
        size=stream.size,
        impl=name,
        bytes=len(stream.jsonl),
    )


def _single_round(benchmark: Any, name: str, stream: Stream) -> bool:
    """Whether this benchmark runs one round; skips what a smoke run or the SDKs leave out."""
    quadratic = name == "openai" and stream.shape == "openai_logprobs"
    if quadratic and stream.size > SIZES[0]:
        pytest.skip(
            "openai's ChatCompletionStreamState is quadratic on logprobs "
            f"(~6 s at {SIZES[0]:,} chunks, most of an hour at {stream.size:,})"
        )
    if name in SLOW and (stream.size > SIZES[0] or quadratic):
        if benchmark.disabled:
            pytest.skip(f"smoke run: {name} on {stream.id} is timed by make bench")
        return True
    return False


def _check(got: Merged, expected: Merged) -> None:
    got = normalize(got)
    if got != expected:  # name the field that differs, not a 20,000-entry repr
        fields = ("content", "reasoning", "signature", "tool_calls", "logprobs", "events")
        wrong = [f for f in fields if getattr(got, f) != getattr(expected, f)]
        pytest.fail(f"wrong merge: {', '.join(wrong)} differ from the stream's expected message")


@pytest.mark.parametrize(("name", "stream"), PARAMS)
def test_stream_merge(benchmark: Any, name: str, stream: Stream) -> None:
    """Parse and merge the stream from its lines, then read the checked fields."""
    if benchmark.disabled and stream.size > SIZES[0]:
        # A debug build (CI) merges 20,000 events in seconds; 1,000 checks every merge.
        pytest.skip(f"smoke run: the {stream.size:,}-event streams are timed by make bench")
    if name == "rust_feed":
        _feed_only(benchmark, stream)
        return
    single_round = _single_round(benchmark, name, stream)
    impl: StreamImpl = load_stream_impl(name)
    expected = stream.expected(name)
    stream.jsonl  # noqa: B018 (built before timing)
    if name == "orjson_kept":
        stream.kept  # noqa: B018 (built before timing)
    _label(benchmark, name, stream)
    if single_round:
        result = benchmark.pedantic(impl.run, args=(stream, expected), rounds=1, iterations=1)
    else:
        if not benchmark.disabled:
            _check(impl.run(stream, expected), expected)  # before timing a wrong merge
        result = benchmark(impl.run, stream, expected)
    _check(result, expected)


def _feed_only(benchmark: Any, stream: Stream) -> None:
    """``Aggregator(provider).feed(jsonl)`` on the Rust backend: the parse and the merge, without
    building the message (``finish``). Each round feeds a fresh aggregator; the last one is
    finished and checked after timing."""
    load_stream_impl("rust")  # skips (or fails) when the extension cannot run
    aggregator = _aggregate_module("rust").Aggregator
    expected = stream.expected("rust")
    data, provider = stream.jsonl, stream.provider
    fed: list[Any] = []

    def setup() -> tuple[tuple[Any, ...], dict[str, Any]]:
        fed[:] = [aggregator(provider)]
        return (fed[0], data), {}

    def feed(agg: Any, data: bytes) -> None:
        agg.feed(data)

    _label(benchmark, "rust_feed", stream)
    rounds = 1 if benchmark.disabled else FEED_ROUNDS.get(stream.size, 10)
    benchmark.pedantic(feed, setup=setup, rounds=rounds, iterations=1)
    _check(_read_fastmerge(fed[0].finish(), expected), expected)
