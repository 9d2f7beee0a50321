"""Provider SDK objects are events too: the openai and anthropic SDKs' own stream event classes,
built from recorded streams, aggregate exactly as the dicts they were built from."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from _support.corpus import path_of

import fastmerge


def _events(kind: str, name: str) -> list[dict[str, Any]]:
    lines = path_of(kind, name).read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _dump(message: Any) -> bytes:
    return orjson.dumps(message.to_dict(), option=orjson.OPT_SORT_KEYS)


@pytest.mark.parametrize("name", ["gpt4o-parallel-tool-calls", "gpt4o-refusal-logprobs"])
def test_openai_chat_completion_chunks(name: str) -> None:
    from openai.types.chat import ChatCompletionChunk

    events = _events("openai_chat", name)
    chunks = [ChatCompletionChunk.model_validate(event) for event in events]
    assert _dump(fastmerge.aggregate(chunks)) == _dump(fastmerge.aggregate(events))


@pytest.mark.parametrize("name", ["sonnet4-thinking-signature-text", "haiku45-text-then-tool-use"])
def test_anthropic_stream_events(name: str) -> None:
    from anthropic.types import RawMessageStreamEvent
    from pydantic import TypeAdapter

    # the SDK has no class for ping (its stream iterators drop them)
    events = [e for e in _events("anthropic_messages", name) if e["type"] != "ping"]
    adapter: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)
    objects = [adapter.validate_python(event) for event in events]
    message = fastmerge.aggregate(objects)
    assert message.status == "complete"
    assert _dump(message) == _dump(fastmerge.aggregate(events))
