"""What the LiteLLM tests share: LiteLLM imported offline and quiet (no price-map download, no
tokenizer download, no provider list on stdout), both builders called alike, their results
compared field for field, the corpus streams as LiteLLM's chunks, and chunk builders in the
shape LiteLLM's own tests use."""

from __future__ import annotations

import copy
import json
import os
import warnings
from typing import Any, Callable

import pytest

from _support.corpus import path_of
from _support.tree_diff import differing_paths

# LiteLLM fetches its model price map over the network at import unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# and its token counter asks the Hugging Face hub for some models' tokenizers (tiktoken offline)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    litellm = pytest.importorskip("litellm")
    from litellm.types.utils import (
        ChatCompletionDeltaToolCall,
        CompletionTokensDetailsWrapper,
        Delta,
        Function,
        ModelResponse,
        ModelResponseStream,
        PromptTokensDetails,
        PromptTokensDetailsWrapper,
        ServerToolUse,
        StreamingChoices,
        Usage,
    )

    from fastmerge import litellm as fl

__all__ = [
    "call_delta",
    "stream_chunk",
    "dict_chunk",
    "quiet",
    "assert_same_as_litellm",
    "build",
    "ChatCompletionDeltaToolCall",
    "CompletionTokensDetailsWrapper",
    "corpus_chunks",
    "corpus_events",
    "Delta",
    "differences",
    "fl",
    "Function",
    "litellm",
    "litellm_build",
    "ModelResponse",
    "ModelResponseStream",
    "PromptTokensDetails",
    "PromptTokensDetailsWrapper",
    "ServerToolUse",
    "StreamingChoices",
    "Usage",
]

# LiteLLM prints its provider list to stdout when it cannot name a model's provider.
litellm.suppress_debug_info = True


def quiet(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    # LiteLLM's first calls build pydantic schemas, which warn (TypedDict ReadOnly items); the
    # tests run with warnings as errors
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


def litellm_build(chunks: Any, **kwargs: Any) -> Any:
    """LiteLLM's own builder, on a copy of the chunks: it writes the response's cost into the
    first dict chunk's ``_hidden_params`` (the response shares that dict)."""
    return quiet(litellm.stream_chunk_builder, copy.deepcopy(chunks), **kwargs)


def build(chunks: Any, **kwargs: Any) -> Any:
    """fastmerge's builder (on this test's backend: it reads ``fastmerge.aggregate_choices``)."""
    return fl.stream_chunk_builder(chunks, **kwargs)


def differences(reference: Any, result: Any) -> set[str]:
    """Where ``result`` differs from LiteLLM's ``reference``: its fields and hidden params."""
    found = differing_paths(reference.model_dump(), result.model_dump())
    found += differing_paths(reference._hidden_params, result._hidden_params, "_hidden_params")
    return set(found)


def corpus_events(name: str) -> list[dict[str, Any]]:
    path = path_of("openai_chat", name)
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def corpus_chunks(name: str, kind: str) -> list[Any]:
    """A corpus stream's chunks as LiteLLM has them: ``ModelResponseStream`` objects built from
    the recorded chunk dicts (``obj``), or the dicts (``dict``)."""
    events = corpus_events(name)
    if kind == "dict":
        return events
    return [quiet(ModelResponseStream, **event) for event in events]


def stream_chunk(
    delta: dict[str, Any],
    *,
    finish: str | None = None,
    index: int = 0,
    usage: Any = None,
    model: str = "gpt-4o-2024-08-06",
    created: int = 1725932618,
) -> Any:
    """One ``ModelResponseStream`` with one choice."""
    fields: dict[str, Any] = {}
    if usage is not None:
        fields["usage"] = usage
    return quiet(
        ModelResponseStream,
        id="chatcmpl-A5kCnzaxRsknd6008552ZhDi71yPt",
        created=created,
        model=model,
        object="chat.completion.chunk",
        system_fingerprint="fp_b2ffeb16ee",
        choices=[StreamingChoices(index=index, delta=Delta(**delta), finish_reason=finish)],
        **fields,
    )


def dict_chunk(choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    chunk = {
        "id": "chatcmpl-lit6552",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-5.4-mini",
        "choices": choices,
    }
    chunk.update(extra)
    return chunk


def call_delta(
    index: int, arguments: str, call_id: str | None = None, name: str | None = None
) -> Any:
    return ChatCompletionDeltaToolCall(
        id=call_id, function=Function(arguments=arguments, name=name), type="function", index=index
    )


def assert_same_as_litellm(chunks: Any, **kwargs: Any) -> Any:
    """fastmerge's result on ``chunks``, checked equal to LiteLLM's (fields and hidden params)."""
    reference = litellm_build(chunks, **kwargs)
    result = build(chunks, **kwargs)
    assert differences(reference, result) == set()
    return result
