"""``fastmerge.litellm.stream_chunk_builder`` on Claude through LiteLLM: the chunks LiteLLM's own
Anthropic stream transformer (``ModelResponseIterator.chunk_parser``) makes of real Anthropic
events (the recorded streams of ``tests/corpus/anthropic_messages``, and a document-citation
stream built from the anthropic SDK's types), compared with ``litellm.stream_chunk_builder`` on
the same chunks; and Vertex AI grounding metadata gathered as LiteLLM's builder gathers it.
Both backends."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from _support.anthropic import events_of
from _support.corpus import stream_ids
from _support.litellm import build, dict_chunk, differences, litellm_build, quiet

from fastmerge.litellm import stream_chunk_builder

pytestmark = pytest.mark.filterwarnings(
    "ignore:Item .* is using the `ReadOnly` qualifier:UserWarning"
)

anthropic_types = pytest.importorskip("anthropic.types")
handler = pytest.importorskip("litellm.llms.anthropic.chat.handler")


def litellm_chunks(events: list[dict[str, Any]]) -> list[Any]:
    """The ``ModelResponseStream`` chunks LiteLLM's Anthropic transformer makes of the events,
    with one ``created`` (LiteLLM stamps each chunk with the clock when it makes it)."""
    iterator = handler.ModelResponseIterator(streaming_response=iter(()), sync_stream=True)
    chunks = [quiet(iterator.chunk_parser, event) for event in events]
    for chunk in chunks:
        chunk.created = 1796621522
    return chunks


def as_kind(chunks: list[Any], kind: str) -> list[Any]:
    return chunks if kind == "obj" else [quiet(c.model_dump) for c in chunks]


# ---------------------------------------------------------------------------------------------
# The corpus, through LiteLLM's transformer: LiteLLM's result but for the documented rows

STREAMS = stream_ids("anthropic_messages")

# stream -> the paths where the results differ (docs/litellm.md: provider fields LiteLLM drops
# are kept; a tool-call turn's content None); any other stream
# differs only in the usage's `service_tier`, which LiteLLM drops
_KEPT = {"usage.service_tier"}
DIFFERENCES: dict[str, set[str]] = {
    "haiku45-parallel-tool-use-no-args": _KEPT
    | {
        "choices[0].message.content",
        "choices[0].message.tool_calls[0].caller",
        "choices[0].message.tool_calls[1].caller",
    },
    "sonnet46-compaction-block": _KEPT | {"usage.iterations"},
    "sonnet46-tool-search-then-client-tool-use": _KEPT
    | {"choices[0].message.tool_calls[0].caller"},
}


@pytest.mark.parametrize("kind", ["obj", "dict"])
@pytest.mark.parametrize("name", STREAMS)
def test_corpus_through_litellm_transformer(name: str, kind: str) -> None:
    chunks = as_kind(litellm_chunks(events_of(name)), kind)
    reference = litellm_build(chunks)
    result = build(chunks)
    assert differences(reference, result) == DIFFERENCES.get(name, _KEPT)
    # thinking blocks and citations are never among the differences
    got, want = (r.choices[0].message.model_dump() for r in (result, reference))
    assert got.get("thinking_blocks") == want.get("thinking_blocks")
    assert got.get("provider_specific_fields") == want.get("provider_specific_fields")


def _thinking_of(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The thinking blocks the events sent, from the events: text joined, signature whole."""
    blocks: dict[int, dict[str, Any]] = {}
    for event in events:
        if event["type"] == "content_block_start":
            block = event["content_block"]
            if block["type"] == "thinking":
                blocks[event["index"]] = {"type": "thinking", "thinking": "", "signature": ""}
            elif block["type"] == "redacted_thinking":
                blocks[event["index"]] = {"type": "redacted_thinking", "data": block["data"]}
        elif event["type"] == "content_block_delta" and event["index"] in blocks:
            delta = event["delta"]
            if delta["type"] == "thinking_delta":
                blocks[event["index"]]["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta":
                blocks[event["index"]]["signature"] += delta["signature"]
    return [blocks[i] for i in sorted(blocks)]


@pytest.mark.parametrize("kind", ["obj", "dict"])
@pytest.mark.parametrize(
    "name",
    [
        "sonnet45-thinking-signature-text-short",
        "sonnet4-thinking-signature-text",
        "sonnet45-thinking-mcp-tool-use-result",
        "sonnet46-thinking-bash-code-execution",
        "sonnet45-redacted-thinking",
    ],
)
def test_thinking_blocks_keep_text_and_whole_signature(name: str, kind: str) -> None:
    """E105: message.thinking_blocks holds each block's thinking text and its whole signature
    (redacted blocks their data), as LiteLLM's builder gives; the next turn is accepted."""
    events = events_of(name)
    expected = _thinking_of(events)
    assert expected  # the stream has thinking
    assert all(b.get("signature") or b.get("data") for b in expected)
    message = build(as_kind(litellm_chunks(events), kind)).choices[0].message
    assert message.thinking_blocks == expected


def test_thinking_blocks_absent_without_thinking() -> None:
    message = build(litellm_chunks(events_of("sonnet45-text"))).choices[0].message
    assert message.get("thinking_blocks") is None


def test_chunks_are_not_changed() -> None:
    chunks = as_kind(litellm_chunks(events_of("sonnet4-thinking-web-search-citations")), "dict")
    before = copy.deepcopy(chunks)
    build(chunks)
    assert chunks == before


# ---------------------------------------------------------------------------------------------
# Citations of two location types, from the anthropic SDK's types


def _citations_events() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    t = anthropic_types
    char = t.CitationCharLocation(
        type="char_location",
        cited_text="The grass is green.",
        document_index=0,
        document_title="Facts",
        start_char_index=0,
        end_char_index=20,
        file_id=None,
    )
    page = t.CitationPageLocation(
        type="page_location",
        cited_text="The sky is blue.",
        document_index=1,
        document_title="Atlas",
        start_page_number=3,
        end_page_number=4,
        file_id=None,
    )
    usage = t.Usage(input_tokens=40, output_tokens=1)
    message = t.Message(
        id="msg_cite",
        type="message",
        role="assistant",
        model="claude-sonnet-4-5",
        content=[],
        stop_reason=None,
        stop_sequence=None,
        usage=usage,
    )
    models: list[Any] = [
        t.RawMessageStartEvent(type="message_start", message=message),
        t.RawContentBlockStartEvent(
            type="content_block_start",
            index=0,
            content_block=t.TextBlock(type="text", text="", citations=None),
        ),
        t.RawContentBlockDeltaEvent(
            type="content_block_delta",
            index=0,
            delta=t.CitationsDelta(type="citations_delta", citation=char),
        ),
        t.RawContentBlockDeltaEvent(
            type="content_block_delta",
            index=0,
            delta=t.TextDelta(type="text_delta", text="The grass is green"),
        ),
        t.RawContentBlockDeltaEvent(
            type="content_block_delta",
            index=0,
            delta=t.CitationsDelta(type="citations_delta", citation=page),
        ),
        t.RawContentBlockDeltaEvent(
            type="content_block_delta",
            index=0,
            delta=t.TextDelta(type="text_delta", text=" and the sky is blue."),
        ),
        t.RawContentBlockStopEvent(type="content_block_stop", index=0),
        t.RawMessageDeltaEvent(
            type="message_delta",
            delta={"stop_reason": "end_turn", "stop_sequence": None},  # type: ignore[arg-type]
            usage=t.MessageDeltaUsage(  # the counts as the API sends them at the end
                input_tokens=40,
                output_tokens=12,
                cache_creation_input_tokens=0,
                cache_read_input_tokens=0,
            ),
        ),
        t.RawMessageStopEvent(type="message_stop"),
    ]
    events = [m.model_dump(mode="json") for m in models]
    return events, [char.model_dump(mode="json"), page.model_dump(mode="json")]


@pytest.mark.parametrize("kind", ["obj", "dict"])
def test_two_location_types_give_two_citations(kind: str) -> None:
    """E105: two chunks citing in two location types give two citations, each the object sent,
    collected as LiteLLM's builder collects them."""
    events, cited = _citations_events()
    chunks = as_kind(litellm_chunks(events), kind)
    reference = litellm_build(chunks)
    result = build(chunks)
    fields = result.choices[0].message.provider_specific_fields
    assert fields == {"citations": [cited]}
    assert fields == reference.choices[0].message.provider_specific_fields
    assert result.choices[0].message.content == "The grass is green and the sky is blue."
    assert result.choices[0].message.get("annotations") is None
    assert differences(reference, result) == set()


# ---------------------------------------------------------------------------------------------
# Vertex AI grounding metadata, gathered from the chunks as LiteLLM's builder does

_G1 = {"webSearchQueries": ["weather sf"], "groundingChunks": [{"web": {"uri": "https://a"}}]}
_G2 = {"groundingSupports": [{"segment": {"endIndex": 5}, "groundingChunkIndices": [0]}]}


def test_grounding_metadata_of_dict_chunks() -> None:
    chunks = [
        dict_chunk(
            [{"index": 0, "delta": {"role": "assistant", "content": "Hello"}}],
            model="gemini-2.5-flash",
            _hidden_params={"vertex_ai_grounding_metadata": [_G1]},
        ),
        dict_chunk(
            [{"index": 0, "delta": {"content": " world"}, "finish_reason": "stop"}],
            model="gemini-2.5-flash",
            _hidden_params={"vertex_ai_grounding_metadata": [_G2]},
        ),
    ]
    before = copy.deepcopy(chunks)
    reference = litellm_build(chunks)
    result = stream_chunk_builder(chunks)
    assert result is not None
    assert result.vertex_ai_grounding_metadata == [_G1, _G2]
    assert result._hidden_params["vertex_ai_grounding_metadata"] == [_G1, _G2]
    assert differences(reference, result) == set()
    assert chunks == before


def test_no_grounding_metadata_for_other_models() -> None:
    chunks = [
        dict_chunk(
            [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": "stop"}],
            _hidden_params={"vertex_ai_grounding_metadata": [_G1]},
        )
    ]
    result = stream_chunk_builder(chunks)
    assert result is not None
    assert not hasattr(result, "vertex_ai_grounding_metadata")
    assert differences(litellm_build(chunks), result) == set()
