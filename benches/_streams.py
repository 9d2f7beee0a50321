"""Provider streams for the fast-path benchmarks (test_bench_streams.py): generated real-shaped
streams as raw JSON lines, the implementations that merge them, and what each must produce.

Streams (``STREAMS``), each at 1,000 and 20,000 events (and the text stream at 200,000 with
``FASTMERGE_BENCH_LARGE=1``), each line the compact JSON of one event as the provider sends it
(``data:`` payloads of the SSE stream):

- ``openai_text``: OpenAI Chat ``chat.completion.chunk`` s with token-sized ``content`` deltas;
- ``openai_logprobs``: the same, each chunk with its ``logprobs.content`` entry (3
  ``top_logprobs``);
- ``openai_tool_calls``: 3 parallel tool calls, interleaved round-robin, in the real shape (a
  call's first fragment has ``index``, ``id``, ``type`` and ``function.name``; the others only
  ``index`` and ``function.arguments``);
- ``anthropic``: an Anthropic Messages stream with a thinking block (``thinking_delta`` s, then a
  ``signature_delta``), a short text block and a ``tool_use`` block (``input_json_delta`` s).

The OpenAI streams have the shape of a current ``stream_options.include_usage`` stream (the
role chunk first, ``usage: null`` and ``obfuscation`` on every chunk, ``service_tier``, a
``finish_reason`` chunk, then the usage-only chunk with ``choices: []``). Everything is
generated from a fixed seed, so every run merges the same bytes.

Implementations (``STREAM_IMPLS``), each timed from the same lines, parse included:

- ``rust``: ``fastmerge.aggregate(jsonl_bytes, provider)`` on the Rust backend (the fast path:
  the whole stream as one bytes object, parsed in Rust); ``rust_lines``: the same with the list
  of line bytes (one ``add`` per line);
- ``twin``: ``aggregate(jsonl_bytes, provider)`` on the pure-Python backend;
- ``baseline``: the least a pure-Python merge does, ``json.loads`` of every line, list appends
  of the delta strings and ``"".join`` (about ten lines per provider), checked like the others;
- ``orjson``: ``orjson.loads`` of every line, no merging, each result dropped as the next line
  is parsed (the least a Python consumer of the stream pays: keeping all the parsed events
  alive, as LiteLLM's builder needs, costs several times more at 20,000 events, mostly in
  Python's cyclic garbage collector);
- ``orjson_kept`` (logprobs streams only): ``orjson.loads`` of the message's logprobs entries
  alone, as one JSON array, with the cyclic GC paused (no collection meets them): no envelope,
  no merge, only the objects the merged message keeps and the benchmark reads (a dict per entry
  and per top logprob, their floats, the top list). What making those objects costs orjson, a
  floor for any merge that returns them (``orjson`` above keeps nothing);
- ``openai``: the openai SDK's ``ChatCompletionStreamState.handle_chunk`` of each chunk, then
  ``get_final_completion()``. The chunk objects are built the cheapest correct way:
  ``ChatCompletionChunk.model_validate(orjson.loads(line))``. The SDK's own ``Stream`` uses
  ``json.loads`` and ``construct_type(type_=ChatCompletionChunk, value=data)`` (no validation,
  but a Python walk of the model: about 2.5x the time of the whole merge on the text stream) —
  so this favours the SDK;
- ``anthropic``: the anthropic SDK's ``accumulate_event`` (what ``MessageStream`` folds each
  event with), on event objects built the cheapest correct way,
  ``TypeAdapter(RawMessageStreamEvent).validate_python(orjson.loads(line))`` (its ``Stream``
  uses ``construct_type``; ``accumulate_event`` of the bare dicts costs ~35% more), skipping
  ``ping`` events as its ``Stream`` does;
- ``litellm``: ``litellm.stream_chunk_builder(chunks)`` on the parsed chunk dicts (it takes
  dicts as well as its ``ModelResponseStream`` objects; dicts skip building those objects).

Every implementation's result is read into a :class:`Merged` (text, reasoning, signature,
tool calls, logprobs) and compared with the stream's expected one after normalising
(:func:`normalize`): arguments as parsed JSON, logprobs entries as dicts.
"""

from __future__ import annotations

import functools
import gc
import inspect
import json
import os
import random
import warnings
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import orjson
import pytest
from _bench import REQUESTED, SEED, _load_rust

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastmerge import _backend

#: The sizes of every stream, in events (lines).
SIZES = (1_000, 20_000)
#: The on-demand size of the OpenAI text stream (``FASTMERGE_BENCH_LARGE=1``): timed for
#: ``LARGE_IMPLS`` only, and never in a smoke run.
LARGE = 200_000
LARGE_IMPLS = ("rust", "orjson", "baseline")
#: The implementations, in report order.
STREAM_IMPLS = (
    "rust", "rust_lines", "twin", "orjson", "orjson_kept", "baseline", "openai", "anthropic",
    "litellm",
)  # fmt: skip
#: The implementations that merge each provider's streams (besides ``orjson``, which parses).
FOR_PROVIDER = {
    "openai-chat": (
        "rust",
        "rust_lines",
        "twin",
        "orjson",
        "orjson_kept",
        "baseline",
        "openai",
        "litellm",
    ),
    "anthropic": ("rust", "rust_lines", "twin", "orjson", "baseline", "anthropic"),
}
#: The implementations timed only on the streams of these shapes.
ONLY_FOR = {"orjson_kept": ("openai_logprobs",)}
#: The SDK accumulators: slow, so one round above SIZES[0] events and none in a smoke run.
SLOW = ("openai", "anthropic", "litellm")


# ---------------------------------------------------------------------------------------------
# What a merge must give


@dataclass(frozen=True)
class Merged:
    """The checked fields of a merged message; ``None`` where the stream has none (and where
    an implementation is not asked for it)."""

    content: str | None = None
    reasoning: str | None = None
    signature: str | None = None
    #: (id, name, arguments): the arguments as streamed (a str) or as parsed by the SDK
    tool_calls: tuple[tuple[Any, Any, Any], ...] | None = None
    logprobs: list[Any] | None = None
    #: events parsed, for ``orjson`` (which does not merge)
    events: int | None = None


def _plain(value: Any) -> Any:
    """SDK objects as plain data (``model_dump``), without the keys left ``None``."""
    if hasattr(value, "model_dump"):
        value = value.model_dump()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def normalize(merged: Merged) -> Merged:
    """``merged`` comparable across implementations: tool-call arguments parsed from JSON (the
    anthropic SDK gives the parsed input), logprobs entries as dicts without ``None`` s."""
    calls = merged.tool_calls
    if calls is not None:
        calls = tuple(
            (i, n, json.loads(a) if isinstance(a, (str, bytes)) else _plain(a)) for i, n, a in calls
        )
    logprobs = merged.logprobs
    if logprobs is not None:
        logprobs = [_plain(entry) for entry in logprobs]
    return replace(merged, tool_calls=calls, logprobs=logprobs)


# ---------------------------------------------------------------------------------------------
# Streams


@dataclass
class Stream:
    """One stream of ``size`` events as JSON lines, built on first use (one at a time)."""

    shape: str
    provider: str
    title: str
    size: int
    build: Callable[[int], tuple[list[dict[str, Any]], Merged]]
    _built: tuple[list[bytes], bytes, Merged] | None = field(default=None, repr=False)
    _kept: bytes | None = field(default=None, repr=False)

    @property
    def id(self) -> str:
        return f"{self.shape}x{self.size}"

    def _get(self) -> tuple[list[bytes], bytes, Merged]:
        if self._built is None:
            for other in STREAMS:  # one stream's lines alive at a time
                other._built = None
            gc.collect()
            events, expected = self.build(self.size)
            assert len(events) == self.size, (self.id, len(events))
            lines = [orjson.dumps(event) for event in events]
            self._built = (lines, b"\n".join(lines) + b"\n", expected)
            self._kept = None
        return self._built

    @property
    def kept(self) -> bytes:
        """The merged message's logprobs entries as one JSON array (``orjson_kept``)."""
        expected = self._get()[2]
        if expected.logprobs is None:
            raise ValueError(f"{self.id} has no logprobs")
        if self._kept is None:
            self._kept = orjson.dumps(expected.logprobs)
        return self._kept

    @property
    def lines(self) -> list[bytes]:
        """The events, one compact JSON text per item."""
        return self._get()[0]

    @property
    def jsonl(self) -> bytes:
        """The whole stream as JSON lines (what a recorded stream file holds)."""
        return self._get()[1]

    def expected(self, impl: str) -> Merged:
        """What ``impl`` must read from its result (normalised)."""
        if impl == "orjson":
            return Merged(events=self.size)
        expected = normalize(self._get()[2])
        if impl == "orjson_kept":
            return Merged(logprobs=expected.logprobs)
        if impl == "litellm":  # its chat builder drops logprobs (it merges only text ones)
            expected = replace(expected, logprobs=None)
        return expected


def drop_streams() -> None:
    """Forget every built stream (rebuilt on demand)."""
    for stream in STREAMS:
        stream._built = stream._kept = None
    gc.collect()


# Text: word-like tokens, with spaces, punctuation, newlines, quotes and non-ASCII text, so
# the JSON has escapes and multi-byte UTF-8 as real output does.
_WORDS = (
    "the", "stream", "merge", "token", "model", "data", "value", "result", "of", "and", "to",
    "in", "is", "for", "with", "that", "über", "naïve", "café", "数据", "流", "🙂",
)  # fmt: skip
_PUNCT = (".", ",", ":", ";", "!", "?", "\n", "\n\n", ' "', '"', " (", ")", " -")


def _tokens(rng: random.Random, n: int) -> list[str]:
    """``n`` token-sized pieces of text (1 to ~8 characters)."""
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.15:
            out.append(rng.choice(_PUNCT))
        elif r < 0.3:
            word = rng.choice(_WORDS)
            cut = rng.randrange(1, len(word) + 1)
            out.append(word[:cut])
        else:
            out.append(" " + rng.choice(_WORDS))
    return out


def _arg_tokens(rng: random.Random, n: int) -> list[str]:
    """``n`` fragments of a JSON object's text (valid once joined; no escapes inside, so a
    fragment boundary never splits one)."""
    if n < 2:
        return ["{}"] * n
    words = ("alpha", "beta", "gamma", "delta", "42", "Paris", "SELECT", "über", "数据")
    middle = [" " + rng.choice(words) for _ in range(n - 2)]
    return ['{"query": "', *middle, '", "limit": 10}']


_OPENAI_ID = "chatcmpl-Bm7fQ2xVb1nHq8sK3pLr0TdWzYxEa"


def _openai_chunk(
    choices: list[dict[str, Any]], rng: random.Random, **extra: Any
) -> dict[str, Any]:
    chunk: dict[str, Any] = {
        "id": _OPENAI_ID,
        "object": "chat.completion.chunk",
        "created": 1770933892,
        "model": "gpt-4.1-2025-04-14",
        "service_tier": "default",
        "system_fingerprint": "fp_de604bd877",
        "choices": choices,
        "usage": None,
    }
    chunk.update(extra)
    chunk["obfuscation"] = "".join(
        rng.choices("abcdefghijkLMNOPQ0123456789", k=rng.randrange(2, 10))
    )
    return chunk


def _choice(
    delta: dict[str, Any], logprobs: Any = None, finish: str | None = None
) -> dict[str, Any]:
    return {"index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": finish}


def _usage(completion: int) -> dict[str, Any]:
    return {
        "prompt_tokens": 57,
        "completion_tokens": completion,
        "total_tokens": 57 + completion,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _openai_close(rng: random.Random, finish: str, count: int) -> list[dict[str, Any]]:
    """The finish_reason chunk and the usage-only chunk."""
    return [
        _openai_chunk([_choice({}, None, finish)], rng),
        _openai_chunk([], rng, usage=_usage(count)),
    ]


def _logprob_entry(rng: random.Random, token: str) -> dict[str, Any]:
    top = [token] + [rng.choice(_WORDS) for _ in range(2)]
    return {
        "token": token,
        "logprob": round(-3 * rng.random(), 8),
        "bytes": list(token.encode()),
        "top_logprobs": [
            {"token": t, "logprob": round(-6 * rng.random(), 8), "bytes": list(t.encode())}
            for t in top
        ],
    }


def _openai_text(logprobs: bool, n: int) -> tuple[list[dict[str, Any]], Merged]:
    """The role chunk, ``n - 3`` content chunks, the finish chunk, the usage chunk."""
    rng = random.Random(SEED)
    tokens = _tokens(rng, n - 3)
    first_lp: dict[str, Any] | None = {"content": [], "refusal": None} if logprobs else None
    events = [
        _openai_chunk(
            [_choice({"role": "assistant", "content": "", "refusal": None}, first_lp)], rng
        )
    ]
    entries = []
    for token in tokens:
        lp = None
        if logprobs:
            entry = _logprob_entry(rng, token)
            entries.append(entry)
            lp = {"content": [entry], "refusal": None}
        events.append(_openai_chunk([_choice({"content": token}, lp)], rng))
    events += _openai_close(rng, "stop", len(tokens))
    return events, Merged(content="".join(tokens), logprobs=entries if logprobs else None)


#: The parallel calls: (id, name).
TOOL_CALLS = (
    ("call_Qx1cV7mUoR2bT9yLkP0aZs4E", "get_weather"),
    ("call_Hn5dW3eJtG8fA6sKqX2vBm1C", "search_docs"),
    ("call_Lp9rY4uNcE7hD2wZjT6gVk3F", "run_sql"),
)


def _openai_tool_calls(n: int) -> tuple[list[dict[str, Any]], Merged]:
    """The role chunk, each call's first fragment, its argument fragments round-robin, the
    finish chunk and the usage chunk."""
    rng = random.Random(SEED)
    k = len(TOOL_CALLS)
    events = [
        _openai_chunk([_choice({"role": "assistant", "content": None, "refusal": None})], rng)
    ]
    for i, (call_id, name) in enumerate(TOOL_CALLS):
        call = {
            "index": i,
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }
        events.append(_openai_chunk([_choice({"tool_calls": [call]})], rng))
    m = n - len(events) - 2  # argument fragments
    counts = [len(range(i, m, k)) for i in range(k)]
    fragments = [_arg_tokens(rng, c) for c in counts]
    for j in range(m):
        i = j % k
        call = {"index": i, "function": {"arguments": fragments[i][j // k]}}
        events.append(_openai_chunk([_choice({"tool_calls": [call]})], rng))
    events += _openai_close(rng, "tool_calls", m)
    calls = tuple((cid, name, "".join(fragments[i])) for i, (cid, name) in enumerate(TOOL_CALLS))
    return events, Merged(tool_calls=calls)


_SIGNATURE = "EqQBCkgIBxABGAIqQL" + "kU3bT0xM9pQ2rN7vW4sY8aD1fG6hJ5lZ0cV" * 6 + "GAE="


def _anthropic(n: int) -> tuple[list[dict[str, Any]], Merged]:
    """message_start, ping, a thinking block (thinking_delta s and its signature_delta), a
    text block, a tool_use block (input_json_delta s, the first one empty as Anthropic sends
    it), message_delta, message_stop: ``n`` events."""
    rng = random.Random(SEED)
    fixed = 10  # the events that are not deltas
    deltas = n - fixed
    n_thinking = deltas // 2
    n_text = deltas // 10
    n_json = deltas - n_thinking - n_text - 1  # the signature_delta
    thinking = _tokens(rng, n_thinking)
    text = _tokens(rng, n_text)
    arguments = [""] + _arg_tokens(rng, n_json - 1)
    tool_id, tool_name = "toolu_01NRLabsLyVHZPKxbKvkfSMn", "search_docs"

    def delta(index: int, body: dict[str, Any]) -> dict[str, Any]:
        return {"type": "content_block_delta", "index": index, "delta": body}

    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "model": "claude-sonnet-4-5-20250929",
                "id": "msg_01ALwQ87pTS7hH1PjSdC9wJD",
                "type": "message",
                "role": "assistant",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": 431,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "cache_creation": {
                        "ephemeral_5m_input_tokens": 0,
                        "ephemeral_1h_input_tokens": 0,
                    },
                    "output_tokens": 1,
                    "service_tier": "standard",
                },
            },
        },
        {"type": "ping"},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
    ]
    events += [delta(0, {"type": "thinking_delta", "thinking": t}) for t in thinking]
    events.append(delta(0, {"type": "signature_delta", "signature": _SIGNATURE}))
    events.append({"type": "content_block_stop", "index": 0})
    events.append(
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}
    )
    events += [delta(1, {"type": "text_delta", "text": t}) for t in text]
    events.append({"type": "content_block_stop", "index": 1})
    events.append(
        {
            "type": "content_block_start",
            "index": 2,
            "content_block": {"type": "tool_use", "id": tool_id, "name": tool_name, "input": {}},
        }
    )
    events += [delta(2, {"type": "input_json_delta", "partial_json": a}) for a in arguments]
    events.append({"type": "content_block_stop", "index": 2})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": deltas},
        }
    )
    events.append({"type": "message_stop"})
    expected = Merged(
        content="".join(text),
        reasoning="".join(thinking),
        signature=_SIGNATURE,
        tool_calls=((tool_id, tool_name, "".join(arguments)),),
    )
    return events, expected


STREAMS = [
    Stream(shape, provider, f"streams: {title}, {n:,} events", n, build)
    for shape, provider, title, build in (
        ("openai_text", "openai-chat", "OpenAI Chat text", functools.partial(_openai_text, False)),
        (
            "openai_logprobs",
            "openai-chat",
            "OpenAI Chat text with logprobs",
            functools.partial(_openai_text, True),
        ),
        (
            "openai_tool_calls",
            "openai-chat",
            "OpenAI Chat 3 parallel tool calls",
            _openai_tool_calls,
        ),
        ("anthropic", "anthropic", "Anthropic thinking, text and tool use", _anthropic),
    )
    for n in SIZES
]
if os.environ.get("FASTMERGE_BENCH_LARGE") == "1":
    STREAMS.append(
        Stream(
            "openai_text",
            "openai-chat",
            f"streams: OpenAI Chat text, {LARGE:,} events",
            LARGE,
            functools.partial(_openai_text, False),
        )
    )


# ---------------------------------------------------------------------------------------------
# Implementations


@dataclass(frozen=True)
class StreamImpl:
    """``run(stream, like)`` merges the stream from its lines (parse included) and reads the
    fields of ``like`` from the result into a :class:`Merged`."""

    name: str
    run: Callable[[Stream, Merged], Merged]


def _read_fastmerge(message: Any, like: Merged) -> Merged:
    signature = None
    if like.signature is not None:  # the reasoning part's opaque payload
        signature = next(
            (
                p.payload.data
                for p in message.parts
                if p.PART == "reasoning" and p.payload and p.payload.kind == "signature"
            ),
            None,
        )
    return Merged(
        content=None if like.content is None else message.content,
        reasoning=None if like.reasoning is None else message.reasoning_content,
        signature=signature,
        tool_calls=None
        if like.tool_calls is None
        else tuple((c.id, c.name, c.arguments) for c in message.tool_calls),
        logprobs=None if like.logprobs is None else message.logprobs["content"],
    )


@functools.cache
def _aggregate_module(backend: str) -> Any:
    return _backend.aggregate_module(backend)


def _fastmerge_impl(name: str) -> StreamImpl:
    backend = "python" if name == "twin" else "rust"
    if backend == "rust":
        module = _load_rust()
        if isinstance(module, str) or not hasattr(module, "AggregatorCore"):
            why = module if isinstance(module, str) else "the extension lacks AggregatorCore"
            if REQUESTED == "rust":
                pytest.fail(f"FASTMERGE_BACKEND=rust but {why}")
            pytest.skip(why)
    aggregate = _aggregate_module(backend).aggregate

    if name == "rust_lines":

        def run(stream: Stream, like: Merged) -> Merged:
            return _read_fastmerge(aggregate(stream.lines, stream.provider), like)

    else:

        def run(stream: Stream, like: Merged) -> Merged:
            return _read_fastmerge(aggregate(stream.jsonl, stream.provider), like)

    return StreamImpl(name, run)


def _orjson_run(stream: Stream, like: Merged) -> Merged:
    loads = orjson.loads
    count = 0
    for line in stream.lines:
        loads(line)
        count += 1
    return Merged(events=count)


def _orjson_kept_run(stream: Stream, like: Merged) -> Merged:
    # The collector is paused while the objects are made, and comes back only after the result
    # is built: the caller drops it before anything else is allocated, so no collection walks
    # orjson's (tracked) objects, as none walks fastmerge's (untracked) ones. A floor.
    data = stream.kept
    gc.disable()
    try:
        return Merged(logprobs=orjson.loads(data))
    finally:
        gc.enable()


def _baseline_openai(stream: Stream, like: Merged) -> Merged:
    """The least a Python merge of chat chunks does: ``json.loads``, list appends, joins."""
    text, calls, logprobs = [], {}, []
    for line in stream.lines:
        for choice in json.loads(line)["choices"]:
            delta = choice["delta"]
            if delta.get("content"):
                text.append(delta["content"])
            for call in delta.get("tool_calls") or ():
                fn = call["function"]
                calls.setdefault(call["index"], [call.get("id"), fn.get("name"), []])[2].append(
                    fn["arguments"]
                )
            if choice.get("logprobs"):
                logprobs += choice["logprobs"]["content"]
    return Merged(
        content=None if like.content is None else "".join(text),
        tool_calls=None
        if like.tool_calls is None
        else tuple((i, n, "".join(a)) for i, n, a in calls.values()),
        logprobs=None if like.logprobs is None else logprobs,
    )


def _baseline_anthropic(stream: Stream, like: Merged) -> Merged:
    """The least a Python merge of Anthropic events does: ``json.loads``, list appends, joins
    (each block's strings by delta type)."""
    blocks: dict[int, tuple[dict[str, Any], dict[str, list[str]]]] = {}
    for line in stream.lines:
        event = json.loads(line)
        if event["type"] == "content_block_start":
            blocks[event["index"]] = (event["content_block"], {})
        elif event["type"] == "content_block_delta":
            delta = event["delta"]
            field = _DELTA_FIELDS[delta["type"]]
            blocks[event["index"]][1].setdefault(field, []).append(delta[field])
    joined = [(b, {k: "".join(v) for k, v in pieces.items()}) for b, pieces in blocks.values()]
    thinking = [j for b, j in joined if b["type"] == "thinking"]
    return Merged(
        content="".join(j.get("text", "") for b, j in joined if b["type"] == "text"),
        reasoning="".join(j.get("thinking", "") for j in thinking),
        signature=thinking[0].get("signature") if thinking else None,
        tool_calls=tuple(
            (b["id"], b["name"], j.get("partial_json", ""))
            for b, j in joined
            if b["type"] == "tool_use"
        ),
    )


_DELTA_FIELDS = {
    "text_delta": "text",
    "thinking_delta": "thinking",
    "signature_delta": "signature",
    "input_json_delta": "partial_json",
}


def _baseline_run(stream: Stream, like: Merged) -> Merged:
    if stream.provider == "anthropic":
        return _baseline_anthropic(stream, like)
    return _baseline_openai(stream, like)


def _openai_impl() -> StreamImpl:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from openai.lib.streaming.chat import ChatCompletionStreamState
            from openai.types.chat import ChatCompletionChunk
    except ImportError:
        pytest.skip("openai is not installed (the test extra: pip install -e .[test])")
    chunk = ChatCompletionChunk.model_validate

    def run(stream: Stream, like: Merged) -> Merged:
        loads = orjson.loads
        state: Any = ChatCompletionStreamState()
        for line in stream.lines:
            state.handle_chunk(chunk(loads(line)))
        choice = state.get_final_completion().choices[0]
        message = choice.message
        return Merged(
            content=None if like.content is None else message.content,
            tool_calls=None
            if like.tool_calls is None
            else tuple((c.id, c.function.name, c.function.arguments) for c in message.tool_calls),
            logprobs=None if like.logprobs is None else choice.logprobs.content,
        )

    return StreamImpl("openai", run)


def _anthropic_impl() -> StreamImpl:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from anthropic.lib.streaming._messages import accumulate_event
            from anthropic.types import RawMessageStreamEvent
            from pydantic import TypeAdapter
    except ImportError:
        pytest.skip("anthropic is not installed (the test extra: pip install -e .[test])")
    event_of = TypeAdapter(RawMessageStreamEvent).validate_python

    # Recent SDKs keep each tool_use block's raw JSON in ``json_bufs`` (older ones on the block)
    takes_bufs = "json_bufs" in inspect.signature(accumulate_event).parameters

    def run(stream: Stream, like: Merged) -> Merged:
        loads = orjson.loads
        snapshot: Any = None
        bufs: dict[str, Any] = {"json_bufs": {}} if takes_bufs else {}
        for line in stream.lines:
            data = loads(line)
            if data["type"] != "ping":  # its Stream drops pings (not a RawMessageStreamEvent)
                snapshot = accumulate_event(event=event_of(data), current_snapshot=snapshot, **bufs)
        text = [b.text for b in snapshot.content if b.type == "text"]
        thinking = [b for b in snapshot.content if b.type == "thinking"]
        return Merged(
            content="".join(text),
            reasoning="".join(b.thinking for b in thinking),
            signature=thinking[0].signature if thinking else None,
            tool_calls=tuple(
                (b.id, b.name, b.input) for b in snapshot.content if b.type == "tool_use"
            ),
        )

    return StreamImpl("anthropic", run)


def _litellm_impl() -> StreamImpl:
    # LiteLLM fetches its model price map over the network at import unless told not to.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import litellm
    except ImportError:
        pytest.skip("litellm is not installed (the test extra: pip install -e .[test])")
    build = litellm.stream_chunk_builder

    def run(stream: Stream, like: Merged) -> Merged:
        loads = orjson.loads
        response: Any = build([loads(line) for line in stream.lines])
        message = response.choices[0].message
        return Merged(
            content=None if like.content is None else message.content,
            tool_calls=None
            if like.tool_calls is None
            else tuple((c.id, c.function.name, c.function.arguments) for c in message.tool_calls),
        )

    # The first call builds pydantic schemas, which warn (UserWarning on TypedDict ReadOnly
    # items); the benchmarks run with warnings as errors.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        build(_openai_text(False, 8)[0])

    return StreamImpl("litellm", run)


def load_stream_impl(name: str) -> StreamImpl:
    """The implementation ``name``; skips (or fails, for a required backend) if unavailable."""
    if name in ("rust", "rust_lines", "twin"):
        return _fastmerge_impl(name)
    if name == "orjson":
        return StreamImpl("orjson", _orjson_run)
    if name == "orjson_kept":
        return StreamImpl("orjson_kept", _orjson_kept_run)
    if name == "baseline":
        return StreamImpl("baseline", _baseline_run)
    if name == "openai":
        return _openai_impl()
    if name == "anthropic":
        return _anthropic_impl()
    if name == "litellm":
        return _litellm_impl()
    raise ValueError(name)
