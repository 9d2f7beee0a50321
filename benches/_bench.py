"""The implementations compared, the data sets, and their reference results.

Implementations (the ``impl`` parameter):

- ``rust``: the compiled extension ``fastmerge._fastmerge``;
- ``twin``: the pure-Python twin ``fastmerge._pure``;
- ``openjiuwen``: openJiuwen's ``merge_parser_content`` (per call for ``merge``,
  ``functools.reduce`` of it for ``merge_all``), the function fastmerge is a drop-in for.

Each implementation is loaded directly, whatever ``FASTMERGE_BACKEND`` says, so one run compares
all three. A missing extension skips the ``rust`` benchmarks, except with
``FASTMERGE_BACKEND=rust`` (CI, ``make bench``), where it is an error. openJiuwen is loaded from
its schema modules by ``tests/_support/openjiuwen.py`` (``pip install --no-deps openjiuwen``).

Every benchmark checks its result against the data set's reference result (the openJiuwen
result, computed once per session) before it is timed.
"""

from __future__ import annotations

import functools
import gc
import json
import os
import random
import string
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import orjson
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from _support.openjiuwen import load as load_openjiuwen  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # auto without the extension warns; we load both ourselves
    from fastmerge import _backend

REQUESTED = os.environ.get("FASTMERGE_BACKEND", "auto").strip().lower() or "auto"
IMPLS = ("rust", "twin", "openjiuwen")
#: The two sizes of the merge_all benchmarks.
SIZES = (1_000, 20_000)
SEED = 20240926


# ---------------------------------------------------------------------------------------------
# Implementations


@dataclass(frozen=True)
class Impl:
    """One implementation under comparison: a pairwise ``merge`` and a fold ``merge_all``."""

    name: str
    merge: Callable[[Any, Any], Any]
    merge_all: Callable[[list[Any]], Any]


@functools.cache
def _load_rust() -> ModuleType | str:
    """The extension, or why it cannot be benchmarked."""
    try:
        module = _backend.load("rust")
    except ImportError as exc:
        return f"the Rust extension does not load: {exc}"
    missing = [name for name in _backend.API if not hasattr(module, name)]
    if missing:
        return f"the Rust extension lacks {', '.join(missing)} (stale build?)"
    return module


def load_impl(name: str) -> Impl:
    """The implementation ``name``; skips (or fails, for a required backend) if unavailable."""
    if name == "rust":
        module = _load_rust()
        if isinstance(module, str):
            if REQUESTED == "rust":
                pytest.fail(f"FASTMERGE_BACKEND=rust but {module}")
            pytest.skip(module)
        return Impl("rust", module.merge, module.merge_all)
    if name == "twin":
        twin = _backend.load("python")
        return Impl("twin", twin.merge, twin.merge_all)
    if name == "openjiuwen":
        oj = load_openjiuwen()
        if oj is None:
            pytest.skip("openjiuwen is not installed (pip install --no-deps openjiuwen)")
        merge = oj.merge_parser_content
        return Impl("openjiuwen", merge, functools.partial(functools.reduce, merge))
    raise ValueError(name)


# ---------------------------------------------------------------------------------------------
# Data sets


@dataclass
class Dataset:
    """Inputs of one benchmark group, built on first use, with their reference result."""

    id: str
    title: str
    kind: str  # "merge" (args = left, right) or "merge_all" (args = items,)
    shape: str
    size: int
    build: Callable[[], tuple[Any, ...]]
    _args: tuple[Any, ...] | None = field(default=None, repr=False)
    _expected: bytes | None = field(default=None, repr=False)

    @property
    def args(self) -> tuple[Any, ...]:
        if self._args is None:
            self._args = self.build()
        return self._args

    def expected(self) -> bytes:
        """Canonical bytes of openJiuwen's result on these inputs (computed once)."""
        if self._expected is None:
            self._expected = canonical(self._reference())
        return self._expected

    def _reference(self) -> Any:
        if self.shape == "str200" and self.kind == "merge_all":
            # openJiuwen's rule for str + str is concatenation, so its reduce is a join; the
            # reduce itself takes ~30 s at 20,000 strings (quadratic copying).
            # test_str_reference_is_openjiuwen_reduce checks the two agree at 1,000.
            return "".join(self.args[0])
        oj = load_impl("openjiuwen")
        return oj.merge(*self.args) if self.kind == "merge" else oj.merge_all(*self.args)


def canonical(value: Any) -> bytes:
    """Type-exact bytes of a JSON-shaped result: key order and ``1`` vs ``1.0`` count."""
    return orjson.dumps(value)


def _corpus_lines(name: str) -> list[dict[str, Any]]:
    with (ROOT / "examples" / name).open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _text(rng: random.Random, size: int) -> str:
    return "".join(rng.choices(string.ascii_letters + "      .,", k=size))


def _openai_pair() -> tuple[Any, ...]:
    """Two consecutive real chunks of a tool-call stream (nested deltas)."""
    lines = _corpus_lines("openai_tool_call_deltas.jsonl")
    return (lines[0], lines[1])


def _nested_dict(rng: random.Random, depth: int, width: int) -> dict[str, Any]:
    node: dict[str, Any] = {}
    for i in range(width):
        if depth > 1:
            node[f"k{i}"] = _nested_dict(rng, depth - 1, width)
        else:
            node[f"s{i}"] = _text(rng, 16)
    node["list"] = [rng.randrange(1000) for _ in range(4)]
    node["n"] = rng.randrange(1000)
    node["none"] = None
    return node


def _nested_pair() -> tuple[Any, ...]:
    """Two dicts of the same shape, 4 levels of 4 sub-dicts, str/list/int/None leaves."""
    rng = random.Random(SEED)
    return (_nested_dict(rng, 4, 4), _nested_dict(rng, 4, 4))


def _str_deltas(n: int) -> tuple[Any, ...]:
    rng = random.Random(SEED)
    return ([_text(rng, 200) for _ in range(n)],)


def _chunk_deltas(n: int) -> tuple[Any, ...]:
    """n OpenAI chat.completion.chunk dicts shaped like a real stream's content chunks."""
    template = _corpus_lines("openai_chat_deltas.jsonl")[2]
    rng = random.Random(SEED)
    chunks = []
    for _ in range(n):
        chunk = json.loads(json.dumps(template))
        chunk["choices"][0]["delta"]["content"] = _text(rng, rng.randrange(2, 9))
        chunks.append(chunk)
    return (chunks,)


MERGE_DATASETS = [
    Dataset(
        "openai_chunk_pair",
        "merge: two OpenAI tool-call chunks",
        "merge",
        "openai_chunk",
        2,
        _openai_pair,
    ),
    Dataset(
        "nested_dicts",
        "merge: nested dicts (4 levels x 4)",
        "merge",
        "nested",
        2,
        _nested_pair,
    ),
]
MERGE_ALL_DATASETS = [
    Dataset(
        f"{shape}x{n}",
        f"merge_all: {n} {label}",
        "merge_all",
        shape,
        n,
        functools.partial(builder, n),
    )
    for shape, label, builder in (
        ("str200", "str deltas of 200 chars", _str_deltas),
        ("openai_chunk", "OpenAI chat chunks", _chunk_deltas),
    )
    for n in SIZES
]


# ---------------------------------------------------------------------------------------------
# Message chunks (test_bench_chunks.py): ``acc = acc + chunk`` over streams of chunk objects

#: The chunk classes compared: fastmerge's on the Rust core and on the twin, openJiuwen's
#: ``AssistantMessageChunk`` and LangChain's ``AIMessageChunk`` (langchain-core).
CHUNK_IMPLS = ("rust", "twin", "openjiuwen", "langchain")


@dataclass(frozen=True)
class Delta:
    """One chunk of a stream, independent of the classes: a content delta, a reasoning delta,
    one logprobs entry (OpenAI Chat ``logprobs.content[i]``) or one tool-call fragment (OpenAI
    Chat ``delta.tool_calls[i]``)."""

    content: str = ""
    reasoning: str | None = None
    logprob: dict[str, Any] | None = None
    tool_call: dict[str, Any] | None = None


@dataclass(frozen=True)
class Folded:
    """What a fold is checked on: the joined text, reasoning, logprobs entries and tool calls
    (id, name, arguments), each ``None`` where the stream has none."""

    content: str | None = None
    reasoning: str | None = None
    logprobs: list[dict[str, Any]] | None = None
    tool_calls: list[tuple[Any, Any, str]] | None = None


@dataclass(frozen=True)
class ChunkImpl:
    """A chunk class under comparison: ``make`` builds one chunk from a :class:`Delta`,
    ``read`` takes a fold's result apart into a :class:`Folded` (the fields ``like`` has)."""

    name: str
    make: Callable[[Delta], Any]
    read: Callable[[Any, Folded], Folded]
    module: Any = None  # fastmerge's messages module (sum / fold_chunks), else None


def _fastmerge_chunk(cls: Any, delta: Delta) -> Any:
    return cls(
        content=delta.content,
        reasoning_content=delta.reasoning,
        logprobs=None if delta.logprob is None else {"content": [delta.logprob]},
        tool_calls=None if delta.tool_call is None else [delta.tool_call],
    )


def _read_fastmerge(acc: Any, like: Folded) -> Folded:
    # openJiuwen's chunk has the same field names; its reasoning is "" when none was streamed
    return Folded(
        content=None if like.content is None else acc.content,
        reasoning=None if like.reasoning is None else acc.reasoning_content,
        logprobs=None if like.logprobs is None else acc.logprobs["content"],
        tool_calls=None
        if like.tool_calls is None
        else [(c.id, c.name, c.arguments) for c in acc.tool_calls],
    )


def _langchain_chunk(cls: Any, delta: Delta) -> Any:
    kwargs: dict[str, Any] = {"content": delta.content}
    if delta.reasoning is not None:  # where DeepSeek-style reasoning goes in LangChain
        kwargs["additional_kwargs"] = {"reasoning_content": delta.reasoning}
    if delta.logprob is not None:  # where langchain-openai puts a chunk's logprobs
        kwargs["response_metadata"] = {"logprobs": {"content": [delta.logprob]}}
    if delta.tool_call is not None:
        call = delta.tool_call
        function = call.get("function", {})
        kwargs["tool_call_chunks"] = [
            {
                "name": function.get("name"),
                "args": function.get("arguments"),
                "id": call.get("id"),
                "index": call["index"],
            }
        ]
    return cls(**kwargs)


def _read_langchain(acc: Any, like: Folded) -> Folded:
    return Folded(
        content=None if like.content is None else acc.content,
        reasoning=None if like.reasoning is None else acc.additional_kwargs["reasoning_content"],
        logprobs=None if like.logprobs is None else acc.response_metadata["logprobs"]["content"],
        tool_calls=None
        if like.tool_calls is None
        else [(c["id"], c["name"], c["args"]) for c in acc.tool_call_chunks],
    )


@functools.cache
def _load_messages(name: str) -> ModuleType | str:
    """fastmerge's messages module on backend ``name``, or why it cannot be benchmarked."""
    if name == "rust":
        module = _load_rust()
        if isinstance(module, str):
            return module
        if not hasattr(module, "ChunkCore"):
            return "the Rust extension lacks ChunkCore, the chunk classes' core (stale build?)"
    try:
        return _backend.messages(name)
    except Exception as exc:  # a broken build: the reason, not a traceback per test
        return f"fastmerge.messages does not load on the {name} backend: {exc!r}"


def load_chunk_impl(name: str) -> ChunkImpl:
    """The chunk class ``name``; skips (or fails, for a required backend) if unavailable."""
    if name in ("rust", "twin"):
        backend = "rust" if name == "rust" else "python"
        module = _load_messages(backend)
        if isinstance(module, str):
            if backend == "rust" and REQUESTED == "rust":
                pytest.fail(f"FASTMERGE_BACKEND=rust but {module}")
            pytest.skip(module)
        cls = module.AssistantMessageChunk
        return ChunkImpl(name, functools.partial(_fastmerge_chunk, cls), _read_fastmerge, module)
    if name == "openjiuwen":
        oj = load_openjiuwen()
        if oj is None:
            pytest.skip("openjiuwen is not installed (pip install --no-deps openjiuwen)")
        cls = oj.AssistantMessageChunk
        return ChunkImpl(name, functools.partial(_fastmerge_chunk, cls), _read_fastmerge)
    if name == "langchain":
        try:
            from langchain_core.messages import AIMessageChunk
        except ImportError:
            pytest.skip("langchain-core is not installed (the test extra: pip install -e .[test])")
        return ChunkImpl(name, functools.partial(_langchain_chunk, AIMessageChunk), _read_langchain)
    raise ValueError(name)


@dataclass
class ChunkStream:
    """A stream of ``size`` chunks, built once as :class:`Delta` s and, per implementation,
    once as chunk objects (outside the timed fold), with the fold's expected result."""

    id: str
    shape: str  # the stream, whatever its size: "text", "text40", "logprobs", ...
    title: str
    size: int
    build: Callable[[int], tuple[list[Delta], Folded]]
    #: build only this many chunk objects and repeat them (the deltas repeat too)
    cycle: int | None = None
    _built: tuple[list[Delta], Folded] | None = field(default=None, repr=False)

    @property
    def deltas(self) -> list[Delta]:
        if self._built is None:
            self._built = self.build(self.size)
        return self._built[0]

    def expected(self, impl: str) -> Folded:
        """The right fold; for openJiuwen's interleaved tool calls, the fold it is known to
        make (see :func:`_openjiuwen_tool_calls`)."""
        self.deltas  # noqa: B018 (builds)
        assert self._built is not None
        folded = self._built[1]
        if impl == "openjiuwen" and folded.tool_calls is not None:
            return Folded(tool_calls=_openjiuwen_tool_calls(self.deltas))
        return folded

    def chunks(self, impl: ChunkImpl) -> list[Any]:
        """The stream as ``impl``'s chunk objects, built once and reused until another
        stream or implementation asks: one list is alive at a time, so the objects of other
        benchmarks do not slow this one's garbage collections."""
        key = (self.id, impl.name)
        if _CHUNKS.get("key") != key:
            _CHUNKS.clear()
            gc.collect()
            deltas = self.deltas
            if self.cycle is None:
                _CHUNKS["chunks"] = [impl.make(delta) for delta in deltas]
            else:
                objects = [impl.make(delta) for delta in deltas[: self.cycle]]
                _CHUNKS["chunks"] = [objects[i % self.cycle] for i in range(len(deltas))]
            _CHUNKS["key"] = key
        chunks: list[Any] = _CHUNKS["chunks"]
        return chunks


_CHUNKS: dict[str, Any] = {}


def drop_chunk_streams() -> None:
    """Forget the chunk objects and deltas built so far (they are rebuilt on demand)."""
    _CHUNKS.clear()
    for stream in CHUNK_STREAMS:
        stream._built = None
    gc.collect()


def _token(rng: random.Random) -> str:
    return _text(rng, 4)


def _text_stream(width: int, n: int) -> tuple[list[Delta], Folded]:
    rng = random.Random(SEED)
    deltas = [Delta(content=_text(rng, width)) for _ in range(n)]
    return deltas, Folded(content="".join(d.content for d in deltas))


def _logprobs_stream(n: int) -> tuple[list[Delta], Folded]:
    rng = random.Random(SEED)
    deltas = []
    for _ in range(n):
        token = _token(rng)
        entry = {
            "token": token,
            "logprob": round(-5 * rng.random(), 6),
            "bytes": list(token.encode()),
            "top_logprobs": [],
        }
        deltas.append(Delta(content=token, logprob=entry))
    return deltas, Folded(
        content="".join(d.content for d in deltas),
        logprobs=[d.logprob for d in deltas if d.logprob is not None],
    )


def _reasoning_then_text_stream(n: int) -> tuple[list[Delta], Folded]:
    rng = random.Random(SEED)
    half = n // 2
    deltas = [Delta(reasoning=_token(rng)) for _ in range(half)]
    deltas += [Delta(content=_token(rng)) for _ in range(n - half)]
    return deltas, Folded(
        content="".join(d.content for d in deltas[half:]),
        reasoning="".join(d.reasoning or "" for d in deltas[:half]),
    )


#: The parallel calls of the tool_calls stream: (id, name).
TOOL_CALLS = (("call_0", "get_weather"), ("call_1", "search_docs"), ("call_2", "run_sql"))


def _tool_calls_stream(n: int) -> tuple[list[Delta], Folded]:
    """OpenAI Chat's parallel tool calls: each call's first fragment (index, id, type, name,
    empty arguments), then argument fragments (index and arguments only) round-robin over
    the calls, each call's arguments a JSON object streamed in token-sized pieces."""
    rng = random.Random(SEED)
    calls = len(TOOL_CALLS)
    deltas = [
        Delta(
            tool_call={
                "index": i,
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": ""},
            }
        )
        for i, (call_id, name) in enumerate(TOOL_CALLS)
    ]
    counts = [len(range(i, n - calls, calls)) for i in range(calls)]
    fragments: list[list[str]] = []
    for count in counts:
        middle = [_token(rng) for _ in range(max(count - 2, 0))]
        fragments.append(['{"q": "', *middle, '"}'] if count >= 2 else ["{}"] * count)
    for j in range(n - calls):
        i = j % calls
        deltas.append(
            Delta(tool_call={"index": i, "function": {"arguments": fragments[i][j // calls]}})
        )
    expected = [
        (call_id, name, "".join(fragments[i])) for i, (call_id, name) in enumerate(TOOL_CALLS)
    ]
    return deltas, Folded(tool_calls=expected)


def _openjiuwen_tool_calls(deltas: list[Delta]) -> list[tuple[Any, Any, str]]:
    """openJiuwen's fold of the tool_calls stream: it merges a fragment into the *last* call
    whenever either has no id (it ignores ``index``), so every argument fragment lands on
    the last call, in stream order, and the other calls keep empty arguments."""
    arguments = "".join(
        d.tool_call["function"]["arguments"] for d in deltas[len(TOOL_CALLS) :] if d.tool_call
    )
    calls = [(call_id, name, "") for call_id, name in TOOL_CALLS]
    calls[-1] = (*calls[-1][:2], arguments)
    return calls


CHUNK_STREAMS = [
    ChunkStream(f"{shape}x{n}", shape, f"chunks: {n} {label}", n, builder)
    for shape, label, builder in (
        ("text", "token deltas (4 chars)", functools.partial(_text_stream, 4)),
        ("text40", "text deltas of 40 chars", functools.partial(_text_stream, 40)),
        ("logprobs", "token deltas with logprobs", _logprobs_stream),
        ("reasoning_then_text", "reasoning then text deltas", _reasoning_then_text_stream),
        ("tool_calls", "fragments of 3 parallel tool calls", _tool_calls_stream),
    )
    for n in SIZES
]
#: LangChain's fold of 20,000 tool-call fragments takes minutes (its tool-call chunks are
#: parsed as partial JSON after every ``+``): it runs at this size instead, next to the others.
LANGCHAIN_TOOL_CALLS_SIZE = 5_000


def _cycled_text_stream(cycle: int, n: int) -> tuple[list[Delta], Folded]:
    """``n`` token deltas that repeat the first ``cycle`` ones (see ``ChunkStream.cycle``)."""
    base, _ = _text_stream(4, cycle)
    deltas = [base[i % cycle] for i in range(n)]
    return deltas, Folded(content="".join(d.content for d in deltas))


#: How many distinct chunk objects the ``text_cycled`` stream repeats.
CYCLE = SIZES[0]
# The linearity of the fold itself: SIZES[-1] pluses over SIZES[0] chunk objects added again
# and again, which stay in the CPU caches. The distinct objects of the text stream at
# SIZES[-1] do not, and reading each one from memory costs more than a Rust `+`.
CHUNK_STREAMS.append(
    ChunkStream(
        f"text_cycledx{SIZES[-1]}",
        "text_cycled",
        f"chunks: {SIZES[-1]} token deltas, {CYCLE} chunk objects repeated",
        SIZES[-1],
        functools.partial(_cycled_text_stream, CYCLE),
        cycle=CYCLE,
    )
)
CHUNK_STREAMS.append(
    ChunkStream(
        f"tool_callsx{LANGCHAIN_TOOL_CALLS_SIZE}",
        "tool_calls",
        f"chunks: {LANGCHAIN_TOOL_CALLS_SIZE} fragments of 3 parallel tool calls",
        LANGCHAIN_TOOL_CALLS_SIZE,
        _tool_calls_stream,
    )
)
