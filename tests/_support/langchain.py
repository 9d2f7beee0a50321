"""What the LangChain tests share: outcomes compared with LangChain's (value, or error type and
message), chunk comparison, and the corpus streams turned into ``AIMessageChunk``s by
langchain-openai's and langchain-anthropic's own conversion."""

from __future__ import annotations

import functools
import json
import operator
import warnings
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck

import fastmerge

pytest.importorskip("langchain_core")
from langchain_core.messages import (  # noqa: E402
    AIMessageChunk,
)

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
HYPOTHESIS = {
    "deadline": None,
    "database": None,
    "suppress_health_check": list(HealthCheck),
}


def lc_merge(left: Any, right: Any) -> Any:
    return fastmerge.merge(left, right, policy="langchain")


def outcome(call: Any, *args: Any) -> Any:
    """A call's value, or its error as (the classes among TypeError and ValueError it is an
    instance of, message)."""
    try:
        return ("ok", call(*args))
    except (TypeError, ValueError) as exc:
        kinds = tuple(kind.__name__ for kind in (TypeError, ValueError) if isinstance(exc, kind))
        return ("error", kinds, str(exc))


def same_outcome(ours: Any, theirs: Any) -> None:
    """fastmerge raises where LangChain raises, an error of LangChain's class only (a
    MergeConflictTypeError where LangChain raises TypeError, a MergeConflictValueError where
    it raises ValueError), with LangChain's message."""
    if theirs[0] == "error":
        assert ours[0] == "error", (ours, theirs)
        assert ours[1:] == theirs[1:]
    else:
        assert ours == theirs


def reduce_add(chunks: list[AIMessageChunk]) -> Any:
    return functools.reduce(operator.add, chunks)


def assert_same_chunk(ours: AIMessageChunk, theirs: AIMessageChunk) -> None:
    assert type(ours) is type(theirs)
    assert ours == theirs
    assert ours.model_dump() == theirs.model_dump()


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            yield json.loads(line)


def openai_generation_chunks(path: Path, model: Any) -> Iterator[Any]:
    """langchain-openai's own conversion of each recorded chunk (``ChatOpenAI._stream``)."""
    for event in _lines(path):
        generation = model._convert_chunk_to_generation_chunk(event, AIMessageChunk, {})
        if generation is not None:
            yield generation


def anthropic_generation_chunks(path: Path, model: Any, coerce: bool) -> Iterator[Any]:
    """langchain-anthropic's own conversion of each recorded event (``ChatAnthropic._stream``);
    an event the installed SDK's types cannot read is left out, as its stream would be."""
    import pydantic
    from anthropic.types import RawMessageStreamEvent
    from langchain_core.outputs import ChatGenerationChunk

    adapter: Any = pydantic.TypeAdapter(RawMessageStreamEvent)
    start = None
    for raw in _lines(path):
        try:
            event = adapter.validate_python(raw)
            message, start = model._make_message_chunk_from_anthropic_event(
                event, stream_usage=True, coerce_content_to_string=coerce, block_start_event=start
            )
        except (pydantic.ValidationError, AttributeError):
            continue
        if message is not None:
            yield ChatGenerationChunk(message=message)


def _several_choices(kind: str, path: Path) -> bool:
    return kind == "openai_chat" and any(
        c.get("index", 0) != 0 for e in _lines(path) for c in e.get("choices") or []
    )


def _text_only(path: Path) -> bool:
    return all(
        e.get("content_block", {}).get("type") == "text"
        for e in _lines(path)
        if e.get("type") == "content_block_start"
    )


def _openai_model(output_version: str | None = None) -> Any:
    from langchain_openai import ChatOpenAI

    extra = {"output_version": output_version} if output_version else {}
    return ChatOpenAI(model="gpt-4o", api_key="sk-test", **extra)


def _anthropic_model() -> Any:
    from langchain_anthropic import ChatAnthropic

    return ChatAnthropic(model="claude-sonnet-4-5", api_key="sk-test")


def raw_chunks(kind: str, path: Path, variant: str) -> list[AIMessageChunk]:
    """The integration's chunks as ``_stream`` yields them."""
    if kind == "openai_chat":
        gens = openai_generation_chunks(path, _openai_model())
    else:
        gens = anthropic_generation_chunks(path, _anthropic_model(), coerce=variant == "coerced")
    return [g.message for g in gens]


def streamed_chunks(kind: str, path: Path, variant: str) -> list[AIMessageChunk]:
    """The chunks ``model.stream(...)`` yields: LangChain's ``BaseChatModel.stream`` around the
    integration's ``_stream`` (run ids, response metadata, v1 blocks, the closing chunk)."""
    if kind == "openai_chat":
        model = _openai_model("v1" if variant == "v1" else None)

        def stream(*args: Any, **kwargs: Any) -> Iterator[Any]:
            return openai_generation_chunks(path, model)
    else:
        model = _anthropic_model()

        def stream(*args: Any, **kwargs: Any) -> Iterator[Any]:
            return anthropic_generation_chunks(path, model, coerce=False)

    object.__setattr__(model, "_stream", stream)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return list(model.stream("hi"))


STREAMS = [
    (kind, path)
    for kind in ("openai_chat", "anthropic_messages")
    for path in sorted((CORPUS / kind).glob("*.jsonl"))
]
