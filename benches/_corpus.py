"""The recorded streams of ``tests/corpus`` as benchmark inputs (``corpus.py``,
``test_bench_corpus.py``, ``shapes.py``), each in the forms a user holds: its bytes, the dicts
of its events and the provider SDK's own event objects; and the side-by-side timer those
scripts share.

A stream's provider is its corpus folder (the folder -> wire format map is the conformance
tests' ``KINDS``, from ``tests/_support/kinds.py``). Its events are the lines of the
``.jsonl`` file (for SSE sources, the JSON payloads of the ``data:`` lines), so ``orjson.loads``
of those lines is the least a Python consumer of the same stream pays.

SDK objects (built before timing, the way each SDK builds them for its users):

- openai-chat: ``openai.types.chat.ChatCompletionChunk``; openai-responses:
  ``openai.types.responses.ResponseStreamEvent``; anthropic: ``RawMessageStreamEvent`` (its
  beta union for the beta blocks: MCP, compaction), ``ping`` s dropped as its ``Stream``
  drops them. All three with the SDK's own ``construct_type``, what its ``Stream`` yields: the
  recorded streams do not all validate against the current types (older recordings lack
  ``sequence_number``, compatible servers leave out required fields);
- mistral: ``mistralai``'s ``CompletionChunk`` (``model_validate``);
- gemini: google-genai's ``GenerateContentResponse``, built by its ``_from_response`` (what
  ``generate_content_stream`` does: fields the SDK does not know are dropped);
- ollama: ``ollama.GenerateResponse`` (the corpus holds ``/api/generate`` streams;
  ``ChatResponse`` is ``/api/chat``'s), ``model_validate``;
- bedrock-converse: none. botocore's ``converse_stream`` yields plain dicts (the shapes are
  botocore JSON models, not classes), which is the ``dicts`` form already.

The SDKs that change values in their objects (:data:`SDK_CHANGES`) give a message that differs
from the one from bytes in those values only; the checks say which.
"""

from __future__ import annotations

import functools
import gc
import json
import statistics
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from _support.kinds import KINDS  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"


#: What each SDK's objects say differently from the bytes (the message from them differs there).
SDK_CHANGES = {
    "gemini": "google-genai drops fields it does not know (serviceTier) and writes bytes "
    "(thoughtSignature) back in the URL-safe base64 alphabet",
    "mistral": "mistralai gives a tool call without index the index 0",
}
#: Why a provider has no SDK objects.
NO_SDK = {
    "bedrock_converse": "botocore yields plain dicts (no event classes): the dicts row",
}


@dataclass
class CorpusStream:
    """One recorded stream: its folder (the provider's), name, wire format and bytes."""

    folder: str
    name: str
    provider: str
    data: bytes
    _sdk: list[Any] | None = field(default=None, repr=False)

    @property
    def id(self) -> str:
        return f"{self.folder}/{self.name}"

    @functools.cached_property
    def lines(self) -> list[bytes]:
        """The event lines (JSON texts)."""
        return [line for line in self.data.splitlines() if line.strip()]

    @property
    def events(self) -> int:
        return len(self.lines)

    @functools.cached_property
    def dicts(self) -> list[Any]:
        """The events as ``orjson.loads`` makes them."""
        return [orjson.loads(line) for line in self.lines]

    @property
    def sdk(self) -> list[Any] | None:
        """The events as the provider SDK's objects, or None (see :data:`NO_SDK`)."""
        if self._sdk is None:
            build = sdk_builder(self.folder)
            if build is None:
                return None
            self._sdk = build(self.dicts)
        return self._sdk

    def drop(self) -> None:
        """Forget the parsed forms (rebuilt on demand)."""
        self.__dict__.pop("dicts", None)
        self._sdk = None


def corpus_streams(only: str | None = None) -> list[CorpusStream]:
    """Every recorded stream, folder by folder; ``only``: a folder or a wire format."""
    out = []
    for folder, provider in KINDS.items():
        if only not in (None, folder, provider):
            continue
        for path in sorted((CORPUS / folder).glob("*.jsonl")):
            out.append(CorpusStream(folder, path.stem, provider, path.read_bytes()))
    return out


def _quiet_import(name: str) -> Any:
    import importlib

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return importlib.import_module(name)


def _openai(type_path: str) -> Callable[[list[Any]], list[Any]]:
    module, name = type_path.rsplit(".", 1)
    cls = getattr(_quiet_import(module), name)
    construct = _quiet_import("openai._models").construct_type
    return lambda events: [construct(type_=cls, value=e) for e in events]


def _anthropic(events: list[Any]) -> list[Any]:
    types = _quiet_import("anthropic.types")
    beta = _quiet_import("anthropic.types.beta")
    construct = _quiet_import("anthropic._models").construct_type
    kept = [e for e in events if e.get("type") != "ping"]
    blocks = {e["content_block"]["type"] for e in kept if e.get("type") == "content_block_start"}
    # the stable union where it has every block of the stream, as client.messages.stream
    stable = all(hasattr(types, _anthropic_block(kind)) for kind in blocks)
    union = types.RawMessageStreamEvent if stable else beta.BetaRawMessageStreamEvent
    return [construct(type_=union, value=e) for e in kept]


def _anthropic_block(kind: str) -> str:
    """The stable types module's class name of a content block type (``text`` -> TextBlock)."""
    return "".join(part.capitalize() for part in kind.split("_")) + "Block"


def _gemini(events: list[Any]) -> list[Any]:
    response = _quiet_import("google.genai.types").GenerateContentResponse
    # _from_response drops the unknown keys in place: it gets a copy
    return [response._from_response(response=json.loads(json.dumps(e)), kwargs={}) for e in events]


def _validated(module: str, name: str) -> Callable[[list[Any]], list[Any]]:
    cls = getattr(_quiet_import(module), name)
    return lambda events: [cls.model_validate(e) for e in events]


def sdk_builder(folder: str) -> Callable[[list[Any]], list[Any]] | None:
    """The function making a folder's event dicts into its SDK's objects (None: no SDK)."""
    if folder == "openai_chat":
        return _openai("openai.types.chat.ChatCompletionChunk")
    if folder == "openai_responses":
        return _openai("openai.types.responses.ResponseStreamEvent")
    if folder == "anthropic_messages":
        return _anthropic
    if folder == "gemini":
        return _gemini
    if folder == "mistral":
        return _validated("mistralai.client.models", "CompletionChunk")
    if folder == "ollama":
        return _validated("ollama", "GenerateResponse")
    return None


def rust_aggregate() -> Callable[..., Any]:
    """``aggregate`` on the Rust backend, for the smoke tests: a missing extension skips them,
    or fails them with ``FASTMERGE_BACKEND=rust`` (CI)."""
    import pytest
    from _bench import REQUESTED, _load_rust

    module = _load_rust()
    if isinstance(module, str):
        if REQUESTED == "rust":
            pytest.fail(f"FASTMERGE_BACKEND=rust but {module}")
        pytest.skip(module)
    from fastmerge import _backend

    aggregate: Callable[..., Any] = _backend.aggregate_module("rust").aggregate
    return aggregate


# ---------------------------------------------------------------------------------------------
# What must come out


def essentials(message: Any) -> tuple[Any, ...]:
    """The fields every input form of a stream must agree on: text, reasoning, refusal, tool
    calls (id, name, arguments), finish reason, status."""
    calls = tuple((c.id, c.name, c.arguments) for c in message.tool_calls or ())
    return (
        message.content,
        message.reasoning_content,
        message.refusal,
        calls,
        message.finish_reason,
        message.status,
    )


def canonical(message: Any) -> bytes:
    return orjson.dumps(message.to_dict(), option=orjson.OPT_SORT_KEYS)


def check_forms(stream: CorpusStream, aggregate: Callable[..., Any]) -> Any:
    """The message from the stream's dicts equals the one from its bytes (byte for byte); from
    its SDK objects, equal as values (the SDKs make some ints floats), or where the SDK changes
    values (:data:`SDK_CHANGES`) in its essentials. Returns the message from bytes."""
    provider = stream.provider
    expected = aggregate(stream.data, provider)
    got = aggregate(stream.dicts, provider)
    assert canonical(got) == canonical(expected), f"{stream.id}: dicts give another message"
    objects = stream.sdk
    if objects is not None:
        got = aggregate(objects, provider)
        if stream.folder in SDK_CHANGES:
            assert essentials(got) == essentials(expected), f"{stream.id}: SDK objects differ"
        else:
            assert got.to_dict() == expected.to_dict(), f"{stream.id}: SDK objects differ"
    return expected


# ---------------------------------------------------------------------------------------------
# Timing


def orjson_lines(lines: list[bytes]) -> int:
    """``orjson.loads`` of every line, each result dropped: the unit of every ratio."""
    loads = orjson.loads
    for line in lines:
        loads(line)
    return len(lines)


#: Seconds one timed sample lasts at least (short streams are called several times per sample).
SAMPLE = 1e-3


def side_by_side(
    calls: dict[str, Callable[[], Any]], repeat: int, stat: str = "min"
) -> dict[str, float]:
    """Seconds per call of each function, timed in turn ``repeat`` times (interleaved, so the
    machine's noise falls on each alike), each sample of enough calls to last
    :data:`SAMPLE`; the ``min`` (or ``median``) of the samples."""
    loops = {}
    for name, call in calls.items():
        start = time.perf_counter()
        call()  # a first call also warms the caches and any lazy import
        once = time.perf_counter() - start
        loops[name] = max(1, int(SAMPLE / max(once, 1e-7)))
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeat):
        for name, call in calls.items():
            n = loops[name]
            start = time.perf_counter()
            for _ in range(n):
                call()
            samples[name].append((time.perf_counter() - start) / n)
    pick = min if stat == "min" else statistics.median
    return {name: pick(values) for name, values in samples.items()}


def settle() -> None:
    """A full collection, so that one stream's garbage is not collected in another's time."""
    gc.collect()
