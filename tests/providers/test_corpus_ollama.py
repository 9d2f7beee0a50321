"""Conformance on the recorded Ollama ``/api/generate`` NDJSON streams (``tests/corpus/
ollama``): every stream aggregates on both backends byte-identically, with the provider named
and detected, no anomaly, status complete, and the rendered final object equal to the stream's
own final object with ``response`` / ``thinking`` replaced by the concatenation of every
object's pieces (what ``stream: false`` returns). No expected or nonstream files exist for
Ollama: the values are read from the raw stream here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _support.corpus import aggregate_both, path_of, stream_ids, streams

from fastmerge.render import to_provider

KIND = "ollama"
PROVIDER = "ollama"

# anomalies each stream may show, with the reason (asserted exactly): none expected, these
# streams end with their done object and carry no tool calls.
ALLOWED_ANOMALIES: dict[str, list[str]] = {}


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _final_object(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The non-streaming /api/generate object the stream stands for: its done object with the
    text and thinking of every object joined."""
    final = dict(events[-1])
    assert final["done"] is True
    final["response"] = "".join(e.get("response", "") for e in events)
    thinking = "".join(e.get("thinking", "") for e in events)
    if thinking:
        final["thinking"] = thinking
    return final


def test_corpus_is_complete() -> None:
    assert len(streams(KIND)) == 3


@pytest.mark.differential
@pytest.mark.parametrize("name", stream_ids(KIND))
@pytest.mark.parametrize("provider", ["auto", PROVIDER])
def test_stream(name: str, provider: str) -> None:
    path = path_of(KIND, name)
    events = _events(path)
    messages = aggregate_both(path, provider)
    assert len(messages) == 1
    message = messages[0]
    data = message.to_dict()
    assert data["provider_metadata"]["provider"] == PROVIDER
    assert data["provider_metadata"]["api"] == "generate"
    assert [a["code"] for a in data["anomalies"]] == ALLOWED_ANOMALIES.get(name, [])
    assert message.status == "complete"
    assert data["role"] == "assistant"

    final = events[-1]
    text = "".join(e.get("response", "") for e in events)
    thinking = "".join(e.get("thinking", "") for e in events)
    kinds = [p["part"] for p in data["parts"]]
    assert kinds == (["reasoning"] if thinking else []) + ["text"]
    assert data["parts"][-1]["text"] == text
    if thinking:
        assert data["parts"][0]["text"] == thinking
    assert data["finish_reason"] == final["done_reason"]
    assert data["response_model"] == final["model"]
    usage = data["usage_metadata"]
    assert usage["input_tokens"] == final["prompt_eval_count"]
    assert usage["output_tokens"] == final["eval_count"]
    assert usage["total_tokens"] == final["prompt_eval_count"] + final["eval_count"]
    if "context" in final:
        assert data["provider_metadata"]["context"] == final["context"]

    rendered = to_provider(messages, PROVIDER)
    assert rendered == _final_object(events)


@pytest.mark.differential
def test_inline_think_is_kept_as_text() -> None:
    """qwen3 on a local server writes <think>...</think> into ``response``: kept verbatim, in
    one text part (fastmerge never splits text on tags)."""
    path = path_of(KIND, "generate-qwen3-8b-local-inline-think")
    (message,) = aggregate_both(path, PROVIDER)
    parts = message.to_dict()["parts"]
    assert len(parts) == 1 and parts[0]["part"] == "text"
    assert parts[0]["text"].startswith("<think>\n")
    assert "</think>" in parts[0]["text"]
    assert (
        message.to_dict()["provider_metadata"]["load_duration"]
        == (_events(path)[-1]["load_duration"])
    )
