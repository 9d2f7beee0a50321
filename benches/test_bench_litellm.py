"""LiteLLM's ``stream_chunk_builder`` and fastmerge's (``fastmerge.litellm``), side by side on the
same chunks: recorded OpenAI Chat streams of ``tests/corpus/openai_chat`` lengthened to 1,000 and
20,000 chunks.

Streams (``STREAMS``): each keeps its recorded first chunks and last chunks (the finish chunk,
the usage chunk) and repeats its recorded middle chunks, in order, until the stream has ``size``
chunks:

- ``text``: ``gpt41-nano-long-text-obfuscation`` (gpt-4.1-nano, token-sized ``content``, an
  ``obfuscation`` key and a usage chunk): the content chunks repeat;
- ``reasoning``: ``deepseek-reasoner-reasoning-content`` (``reasoning_content`` chunks, then
  ``content`` chunks, DeepSeek's usage): both runs repeat, in their recorded proportion;
- ``tool_calls``: ``gpt4o-parallel-tool-calls`` (two parallel calls, argument fragments): the
  fragment ``urgh`` of the first call's city repeats (inside a JSON string, so the arguments
  stay JSON);
- ``logprobs``: ``gpt4o-content-logprobs`` (a ``logprobs.content`` entry per content chunk):
  its content chunk repeats. fastmerge keeps the logprobs, LiteLLM's builder drops them: the
  price of keeping 1,000 or 20,000 entries (as LiteLLM's ``ChoiceLogprobs``) is in its time.

Chunk kinds: ``obj``, the ``ModelResponseStream`` objects ``litellm.completion(...,
stream=True)`` yields (built from the recorded dicts before timing), and ``dict``, the chunk
dicts. Implementations: ``litellm`` (``litellm.stream_chunk_builder``), ``rust`` and ``twin``
(``fastmerge.litellm.stream_chunk_builder`` on the Rust backend and on the pure-Python twin).

Every benchmark checks its result against LiteLLM's own result on the same chunks (computed
once, before timing): equal field for field (``model_dump()`` and ``_hidden_params``) except the
stream's documented differences (``DIFFERENCES``, docs/litellm.md's table), and the merged text or
arguments equal the joined fragments. A smoke run (``pytest benches --benchmark-disable``)
checks the 1,000-chunk streams only.
"""

from __future__ import annotations

import copy
import json
import os
import sys
import warnings
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from _bench import REQUESTED, _load_rust
from _support.tree_diff import differing_paths

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus" / "openai_chat"

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

#: The sizes of every stream, in chunks.
SIZES = (1_000, 20_000)
KINDS = ("obj", "dict")
IMPLS = ("litellm", "rust", "twin")

# stream -> the paths of model_dump() where fastmerge's result differs from LiteLLM's, by design
DIFFERENCES: dict[str, set[str]] = {
    "text": set(),
    # DeepSeek's own usage keys, kept
    "reasoning": {"usage.prompt_cache_hit_tokens", "usage.prompt_cache_miss_tokens"},
    "tool_calls": set(),
    # chat logprobs, kept
    "logprobs": {"choices[0].logprobs"},
}


def _load(name: str) -> list[dict[str, Any]]:
    path = CORPUS / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _cycle(middle: list[Any], count: int) -> list[Any]:
    return [middle[i % len(middle)] for i in range(count)]


def _text(size: int) -> list[dict[str, Any]]:
    events = _load("gpt41-nano-long-text-obfuscation")
    head, middle, tail = events[:1], events[1:-2], events[-2:]
    return head + _cycle(middle, size - 3) + tail


def _reasoning(size: int) -> list[dict[str, Any]]:
    events = _load("deepseek-reasoner-reasoning-content")
    head, tail = events[:1], events[-2:]
    reasoning = [e for e in events[1:-2] if e["choices"][0]["delta"].get("reasoning_content")]
    content = [e for e in events[1:-2] if e not in reasoning]
    body = size - 3
    n_reasoning = body * len(reasoning) // (len(reasoning) + len(content))
    return head + _cycle(reasoning, n_reasoning) + _cycle(content, body - n_reasoning) + tail


def _tool_calls(size: int) -> list[dict[str, Any]]:
    events = _load("gpt4o-parallel-tool-calls")
    at = next(
        i
        for i, e in enumerate(events)
        if e["choices"]
        and (e["choices"][0]["delta"].get("tool_calls") or [{}])[0]
        .get("function", {})
        .get("arguments")
        == "urgh"
    )
    return events[:at] + [events[at]] * (size - len(events) + 1) + events[at + 1 :]


def _logprobs(size: int) -> list[dict[str, Any]]:
    events = _load("gpt4o-content-logprobs")
    head, middle, tail = events[:1], events[1:2], events[2:]
    return head + middle * (size - len(head) - len(tail)) + tail


BUILDERS: dict[str, Callable[[int], list[dict[str, Any]]]] = {
    "text": _text,
    "reasoning": _reasoning,
    "tool_calls": _tool_calls,
    "logprobs": _logprobs,
}


def _quiet(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    # LiteLLM's types warn when their schemas are built; the benchmarks run warnings as errors
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


@cache
def _litellm() -> Any:
    try:
        litellm = _quiet(__import__, "litellm")
    except ImportError:
        pytest.skip("litellm is not installed (the test extra: pip install -e .[test])")
    litellm.suppress_debug_info = True  # no provider list printed for an unpriced model
    return litellm


@dataclass
class Stream:
    """One stream of ``size`` chunks of ``kind``, built on first use (one at a time)."""

    shape: str
    size: int
    kind: str
    _chunks: list[Any] | None = field(default=None, repr=False)
    _reference: Any = field(default=None, repr=False)

    @property
    def id(self) -> str:
        return f"{self.shape}-{self.kind}x{self.size}"

    @property
    def title(self) -> str:
        return f"litellm: {self.shape}, {self.size:,} chunks ({self.kind})"

    @property
    def chunks(self) -> list[Any]:
        if self._chunks is None:
            for other in STREAMS:  # one stream's chunks alive at a time
                other._chunks = other._reference = None
            events = BUILDERS[self.shape](self.size)
            assert len(events) == self.size, (self.id, len(events))
            if self.kind == "obj":
                from litellm.types.utils import ModelResponseStream

                self._chunks = [_quiet(ModelResponseStream, **e) for e in events]
            else:
                self._chunks = events
        return self._chunks

    @property
    def reference(self) -> Any:
        """LiteLLM's own result on these chunks (on a copy: it writes into dict chunks)."""
        if self._reference is None:
            chunks = self.chunks
            self._reference = _quiet(
                _litellm().stream_chunk_builder,
                copy.deepcopy(chunks) if self.kind == "dict" else chunks,
            )
        return self._reference


STREAMS = [Stream(shape, size, kind) for shape in BUILDERS for size in SIZES for kind in KINDS]


@pytest.fixture(scope="module", autouse=True)
def _free_streams() -> Iterator[None]:
    yield
    for stream in STREAMS:
        stream._chunks = stream._reference = None


def _check(stream: Stream, result: Any, impl: str) -> None:
    reference = stream.reference
    found = set(differing_paths(reference.model_dump(), result.model_dump()))
    found |= set(differing_paths(reference._hidden_params, result._hidden_params, "_hidden_params"))
    expected = set() if impl == "litellm" else DIFFERENCES[stream.shape]
    assert found == expected, f"{impl} on {stream.id}: {sorted(found ^ expected)[:10]}"
    # and the merge itself, against the stream's fragments
    events = BUILDERS[stream.shape](stream.size)
    message = result.choices[0].message
    if stream.shape == "tool_calls":
        arguments = [c.function.arguments for c in message.tool_calls]
        assert json.loads(arguments[0])["city"] == "Edinb" + "urgh" * (stream.size - 24)
        assert [json.loads(a) for a in arguments[1:]] == [{"ticker": "AAPL", "exchange": "NASDAQ"}]
    else:
        deltas = [e["choices"][0]["delta"] for e in events if e["choices"]]
        assert message.content == "".join(d.get("content") or "" for d in deltas)
        if stream.shape == "reasoning":
            joined = "".join(d.get("reasoning_content") or "" for d in deltas)
            assert message.reasoning_content == joined
    if stream.shape == "logprobs" and impl != "litellm":
        entries = [
            entry
            for e in events
            if e["choices"] and e["choices"][0].get("logprobs")
            for entry in e["choices"][0]["logprobs"]["content"] or ()
        ]
        kept = result.choices[0].logprobs.content
        assert [x.model_dump(exclude_none=True) for x in kept] == entries
        assert len(kept) == stream.size - 3


@cache
def _builder(impl: str) -> Callable[[list[Any]], Any]:
    litellm = _litellm()
    if impl == "litellm":

        def run(chunks: list[Any]) -> Any:
            return litellm.stream_chunk_builder(chunks)

        return run
    if impl == "rust":
        module = _load_rust()
        if isinstance(module, str):
            if REQUESTED == "rust":
                pytest.fail(f"FASTMERGE_BACKEND=rust but {module}")
            pytest.skip(module)
    import fastmerge
    from fastmerge import _backend

    fl = _quiet(__import__, "fastmerge.litellm", fromlist=["stream_chunk_builder"])
    aggregate_choices = _backend.aggregate_module("rust" if impl == "rust" else "python")
    bound = aggregate_choices.aggregate_choices

    def run_fastmerge(chunks: list[Any]) -> Any:
        # fastmerge.litellm reads fastmerge.aggregate_choices: this implementation's backend
        saved = fastmerge.aggregate_choices
        fastmerge.aggregate_choices = bound
        try:
            return fl.stream_chunk_builder(chunks)
        finally:
            fastmerge.aggregate_choices = saved

    return run_fastmerge


PARAMS = [
    pytest.param(impl, stream, id=f"{impl}-{stream.id}") for stream in STREAMS for impl in IMPLS
]


@pytest.mark.parametrize(("impl", "stream"), PARAMS)
def test_litellm_builder(benchmark: Any, impl: str, stream: Stream) -> None:
    """Build the ``ModelResponse`` of the stream's chunks (made before timing)."""
    if benchmark.disabled and stream.size > SIZES[0]:
        pytest.skip(f"smoke run: the {stream.size:,}-chunk streams are timed on demand")
    build = _builder(impl)
    chunks = stream.chunks
    stream.reference  # noqa: B018 (LiteLLM's result, made before timing)
    benchmark.group = stream.title
    benchmark.extra_info.update(
        kind="litellm", shape=stream.shape, size=stream.size, chunks=stream.kind, impl=impl
    )
    result = _quiet(benchmark, build, chunks)
    _check(stream, result, impl)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q", *sys.argv[1:]]))
