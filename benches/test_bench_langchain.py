"""LangChain's ``functools.reduce(operator.add, chunks)`` and ``fastmerge.langchain.merge_chunks``,
side by side on the same ``AIMessageChunk`` objects: recorded corpus streams lengthened to 1,000
and 20,000 chunks and turned into chunks by LangChain's own integrations.

Streams (``STREAMS``): each keeps its recorded first and last events and repeats its recorded
middle events, in order, until the stream has ``size`` events:

- ``openai-text``: ``tests/corpus/openai_chat/gpt41-nano-long-text-obfuscation`` through
  langchain-openai (``ChatOpenAI``'s chunk conversion inside ``BaseChatModel.stream``: run ids,
  response metadata, the closing ``chunk_position="last"`` chunk), str content;
- ``openai-tool-calls``: ``gpt4o-parallel-tool-calls``, the first call's argument fragment
  ``urgh`` repeated (the arguments stay JSON): ``tool_call_chunks`` merged by index, the
  tool calls parsed at the end;
- ``anthropic-blocks``: ``tests/corpus/anthropic_messages/sonnet45-thinking-signature-text-short``
  through langchain-anthropic (``ChatAnthropic``'s event conversion): list content, thinking
  and text blocks merged by their ``index``.

Implementations: ``langchain`` (``reduce(operator.add, chunks)``), ``rust`` and ``twin``
(``merge_chunks`` on the Rust backend and on the pure-Python twin). The chunks are built once per
stream, before timing. Every benchmark checks its result against LangChain's own result on the
same chunks (computed once): equal field for field (``==`` and ``model_dump()``). LangChain's
reduce of 20,000 chunks is quadratic: one round, and none in a smoke run (``pytest benches
--benchmark-disable``), which checks the 1,000-chunk streams.
"""

from __future__ import annotations

import functools
import json
import operator
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from _bench import REQUESTED, _load_rust

pytest.importorskip("langchain_core")
pytest.importorskip("langchain_openai")
pytest.importorskip("langchain_anthropic")

from langchain_core.messages import AIMessageChunk  # noqa: E402

import fastmerge  # noqa: E402
from fastmerge import _backend  # noqa: E402
from fastmerge.langchain import merge_chunks  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"

SIZES = (1_000, 20_000)
IMPLS = ("langchain", "rust", "twin")


def _load(folder: str, name: str) -> list[dict[str, Any]]:
    path = CORPUS / folder / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _lengthen(events: list[dict[str, Any]], head: int, tail: int, size: int) -> list[Any]:
    middle = events[head : len(events) - tail]
    count = size - head - tail
    return events[:head] + [middle[i % len(middle)] for i in range(count)] + events[-tail:]


def _openai_stream(events: list[dict[str, Any]]) -> list[AIMessageChunk]:
    """``ChatOpenAI.stream`` over recorded chunks: the integration's own conversion inside
    LangChain's ``BaseChatModel.stream``."""
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(model="gpt-4o", api_key="sk-bench")

    def stream(*args: Any, **kwargs: Any) -> Iterator[Any]:
        for event in events:
            chunk = model._convert_chunk_to_generation_chunk(event, AIMessageChunk, {})
            if chunk is not None:
                yield chunk

    object.__setattr__(model, "_stream", stream)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return list(model.stream("hi"))


def _anthropic_chunks(events: list[dict[str, Any]]) -> list[AIMessageChunk]:
    """``ChatAnthropic``'s conversion of each recorded event (what its ``_stream`` yields)."""
    import pydantic
    from anthropic.types import RawMessageStreamEvent
    from langchain_anthropic import ChatAnthropic

    model = ChatAnthropic(model="claude-sonnet-4-5", api_key="sk-bench")
    adapter: Any = pydantic.TypeAdapter(RawMessageStreamEvent)
    out, start = [], None
    for raw in events:
        try:
            event = adapter.validate_python(raw)
            message, start = model._make_message_chunk_from_anthropic_event(
                event, stream_usage=True, coerce_content_to_string=False, block_start_event=start
            )
        except (pydantic.ValidationError, AttributeError):
            continue  # an event the installed SDK cannot read: its stream leaves it out too
        if message is not None:
            out.append(message)
    return out


def _text(size: int) -> list[AIMessageChunk]:
    events = _load("openai_chat", "gpt41-nano-long-text-obfuscation")
    return _openai_stream(_lengthen(events, 1, 2, size))


def _tool_calls(size: int) -> list[AIMessageChunk]:
    events = _load("openai_chat", "gpt4o-parallel-tool-calls")
    fragment = next(
        i
        for i, e in enumerate(events)
        if e["choices"]
        and (e["choices"][0]["delta"].get("tool_calls") or [{}])[0]
        .get("function", {})
        .get("arguments")
        == "urgh"
    )
    head, middle, tail = events[:fragment], events[fragment], events[fragment + 1 :]
    return _openai_stream(head + [middle] * (size - len(head) - len(tail)) + tail)


def _blocks(size: int) -> list[AIMessageChunk]:
    events = _load("anthropic_messages", "sonnet45-thinking-signature-text-short")
    deltas = [i for i, e in enumerate(events) if e.get("type") == "content_block_delta"]
    first, last = deltas[0], deltas[-1] + 1
    return _anthropic_chunks(_lengthen(events, first, len(events) - last, size))


@dataclass(frozen=True)
class Stream:
    name: str
    size: int
    build: Callable[[int], list[AIMessageChunk]]

    @property
    def id(self) -> str:
        return f"{self.name}-{self.size}"


STREAMS = [
    Stream(name, size, build)
    for name, build in (
        ("openai-text", _text),
        ("openai-tool-calls", _tool_calls),
        ("anthropic-blocks", _blocks),
    )
    for size in SIZES
]


@functools.cache
def chunks_of(stream: Stream) -> list[AIMessageChunk]:
    return stream.build(stream.size)


@functools.cache
def expected_of(stream: Stream) -> AIMessageChunk:
    """LangChain's own result, on copies (its validators may rewrite content blocks)."""
    copies = [c.model_copy(deep=True) for c in chunks_of(stream)]
    result: AIMessageChunk = functools.reduce(operator.add, copies)
    return result


def _same(result: AIMessageChunk, expected: AIMessageChunk) -> bool:
    return result == expected and result.model_dump() == expected.model_dump()


def _module(impl: str) -> Any:
    if impl == "twin":
        return _backend.load("python")
    module = _load_rust()
    if isinstance(module, str):
        if REQUESTED == "rust":
            pytest.fail(module)
        pytest.skip(module)
    return module


@pytest.mark.parametrize("stream", STREAMS, ids=lambda s: s.id)
@pytest.mark.parametrize("impl", IMPLS)
def test_langchain_merge(
    benchmark: Any, monkeypatch: pytest.MonkeyPatch, impl: str, stream: Stream
) -> None:
    """One merge of the stream's chunks into one ``AIMessageChunk``."""
    big = stream.size > SIZES[0]
    if big and benchmark.disabled:
        pytest.skip("smoke run: the 20,000-chunk streams are timed by a benchmark run")
    chunks = chunks_of(stream)
    expected = expected_of(stream)
    if impl == "langchain":

        def run() -> AIMessageChunk:
            return functools.reduce(operator.add, chunks)

    else:
        monkeypatch.setattr(fastmerge, "add_ai_message_chunks", _module(impl).add_ai_message_chunks)

        def run() -> AIMessageChunk:
            return merge_chunks(chunks)

    benchmark.group = stream.id
    benchmark.extra_info.update(kind="langchain", stream=stream.name, size=stream.size, impl=impl)
    if impl == "langchain" and big:
        result = benchmark.pedantic(run, rounds=1, iterations=1)
    else:
        result = benchmark(run)
    assert _same(result, expected)
    if stream.name == "openai-tool-calls":
        assert [c["name"] for c in result.tool_calls] == ["GetWeatherArgs", "get_stock_price"]
