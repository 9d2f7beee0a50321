"""Message chunks: ``acc = acc + chunk`` over a stream, for fastmerge's chunk classes on the Rust
core and on the twin, openJiuwen's ``AssistantMessageChunk`` and LangChain's ``AIMessageChunk``.

Each stream (``_bench.CHUNK_STREAMS``) is built once per implementation as chunk objects, outside
the timed function. The timed function folds the list with ``+`` in a Python loop and reads the
checked fields of the result once (content, reasoning, logprobs or tool calls), so an
implementation that defers work to the first read pays for it. Every benchmark asserts the read
equals the stream's expected result (the joined deltas), so a wrong fold cannot look fast; the
one exception is openJiuwen on interleaved tool calls, checked against the fold it is known to
make (``_bench._openjiuwen_tool_calls``), which is not the right message.

openJiuwen's and LangChain's folds of more than 1,000 chunks are quadratic and take seconds: one
round each, and none in a smoke run (``pytest benches --benchmark-disable``, CI). LangChain's
fold of 20,000 tool-call fragments takes minutes: it runs at 5,000 instead
(``LANGCHAIN_TOOL_CALLS_SIZE``). ``make bench`` prints the ratios (``benches/report.py``).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

import pytest
from _bench import (
    CHUNK_IMPLS,
    CHUNK_STREAMS,
    LANGCHAIN_TOOL_CALLS_SIZE,
    SIZES,
    ChunkImpl,
    ChunkStream,
    Folded,
    drop_chunk_streams,
    load_chunk_impl,
)

#: The streams of the ``sum(chunks)`` and ``fold_chunks(chunks)`` benchmarks (Rust backend).
TEXT_STREAMS = [s for s in CHUNK_STREAMS if s.shape == "text"]
#: Implementations whose folds of more than SIZES[0] chunks run one round (and not in smoke).
SLOW = ("openjiuwen", "langchain")


@pytest.fixture(scope="module", autouse=True)
def _free_streams() -> Iterator[None]:
    """Drop the streams after this module, so the other benchmarks run on a small heap."""
    yield
    drop_chunk_streams()


@pytest.fixture(params=CHUNK_IMPLS)
def chunk_impl(request: pytest.FixtureRequest) -> ChunkImpl:
    """One chunk class under comparison: ``rust``, ``twin``, ``openjiuwen`` or ``langchain``."""
    return load_chunk_impl(request.param)


def fold(chunks: Iterable[Any], read: Callable[[Any, Folded], Folded], like: Folded) -> Folded:
    """``acc = acc + chunk`` from the first chunk on, then the checked fields of ``acc``."""
    it = iter(chunks)
    acc = next(it)
    for chunk in it:
        acc = acc + chunk
    return read(acc, like)


def _label(benchmark: Any, impl: str, stream: ChunkStream, how: str) -> None:
    benchmark.group = stream.title
    benchmark.extra_info.update(
        kind="chunks",
        shape=stream.shape,
        size=stream.size,
        impl=impl,
        fold=how,
        pluses=stream.size - 1,
    )


def _skip_if_too_slow(benchmark: Any, impl: str, stream: ChunkStream) -> bool:
    """Whether this fold runs one round; skips what a smoke run or the sizes leave out."""
    if (
        impl == "langchain"
        and stream.shape == "tool_calls"
        and stream.size > LANGCHAIN_TOOL_CALLS_SIZE
    ):
        pytest.skip(
            f"LangChain's fold of {stream.size} tool-call fragments takes minutes "
            f"(timed at {LANGCHAIN_TOOL_CALLS_SIZE})"
        )
    if impl in SLOW and stream.cycle is not None:
        pytest.skip(f"{impl}: the repeated-objects stream measures fastmerge's own linearity")
    if impl in SLOW and stream.size > SIZES[0]:
        if benchmark.disabled:
            pytest.skip(f"smoke run: {impl}'s fold of {stream.size} chunks is timed by make bench")
        return True
    return False


@pytest.mark.parametrize("stream", CHUNK_STREAMS, ids=lambda s: s.id)
def test_chunk_fold(benchmark: Any, chunk_impl: ChunkImpl, stream: ChunkStream) -> None:
    """``acc = acc + chunk`` over the stream, then read the result."""
    single_round = _skip_if_too_slow(benchmark, chunk_impl.name, stream)
    expected = stream.expected(chunk_impl.name)
    chunks = stream.chunks(chunk_impl)
    args = (chunks, chunk_impl.read, expected)
    _label(benchmark, chunk_impl.name, stream, "loop")
    if single_round:
        result = benchmark.pedantic(fold, args=args, rounds=1, iterations=1)
    else:
        if not benchmark.disabled:
            assert fold(*args) == expected  # before spending time on a wrong fold
        result = benchmark(fold, *args)
    assert result == expected


@pytest.mark.parametrize("stream", TEXT_STREAMS, ids=lambda s: s.id)
@pytest.mark.parametrize("how", ["sum", "fold_chunks"])
def test_chunk_sum_and_fold_chunks(benchmark: Any, how: str, stream: ChunkStream) -> None:
    """``sum(chunks)`` (``0 + chunk`` is the chunk) and ``fastmerge.fold_chunks(chunks)`` on the
    Rust backend: the same fold as the loop, with the loop in C / Rust."""
    impl = load_chunk_impl("rust")
    expected = stream.expected(impl.name)
    chunks = stream.chunks(impl)
    folder: Callable[[list[Any]], Any] = sum if how == "sum" else impl.module.fold_chunks

    def run() -> Folded:
        return impl.read(folder(chunks), expected)

    _label(benchmark, impl.name, stream, how)
    if not benchmark.disabled:
        assert run() == expected
    assert benchmark(run) == expected


@pytest.mark.parametrize("impl", ["rust", "twin", "openjiuwen"])
def test_fresh_fold_runs(impl: str) -> None:
    """benches/fresh_fold.py (run by ``make bench``) folds right; here in-process and small."""
    import fresh_fold

    if impl != "twin":
        load_chunk_impl(impl)  # skips when the implementation is not available
    assert fresh_fold.one(impl, "text40", 200) >= 0
