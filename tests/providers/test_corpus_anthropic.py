"""Conformance of the ``"anthropic"`` adapter and renderer on the recorded Anthropic Messages
streams (``tests/corpus/anthropic_messages``): every stream aggregates on every backend
(byte-identical, from bytes and from dicts), with ``provider="auto"`` and ``"anthropic"``;
anomalies only where the stream explains them; the rendered ``Message`` holds every field of
the ``.expected.json`` files and has the shape of the ``.nonstream.json`` files; signatures,
redacted data, citations, verbatim server-tool blocks and usage survive.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _support.anthropic import KIND, events_of
from _support.corpus import (
    aggregate_both,
    assert_same_structure,
    assert_subset,
    path_of,
    sibling,
    stream_ids,
)

import fastmerge
from fastmerge.render import to_provider

PROVIDER = "anthropic"
NAMES = stream_ids(KIND)

# stream -> the anomalies it explains (code, detail), each with the reason
ANOMALIES: dict[str, list[tuple[str, str]]] = {
    # max_tokens cut the tool_use JSON: the tool block never got its content_block_stop
    # before message_stop; its raw arguments are kept as streamed and flagged (spec §6)
    "sonnet37-max-tokens-truncated-tool-json": [
        (
            "truncated",
            "the tool_use block 'make_file' at index 1 had no content_block_stop "
            "(message_stop came first)",
        )
    ],
}

# keys of an .expected.json that are not Anthropic wire data, with the reason
EXPECTED_NOT_WIRE = {
    # SOURCES.md: the SDK's ParsedTextBlock field (model_dump of get_final_message()), which
    # the API never sends
    "parsed_output",
}

# .nonstream.json files whose block sequence is another generation's, with the reason: the
# top level is compared without ``content``, and each block with the first rendered block of
# its type holding the same fields (a text block with citations with one with citations),
# lists cut to their first item
NONSTREAM_BY_BLOCK_TYPE = {
    # the non-streamed run searched twice (server_tool_use, result, text, server_tool_use,
    # result, 7 texts); the streamed run searched once and wrote 19 text blocks
    "sonnet4-web-search-many-citation-blocks",
}


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in EXPECTED_NOT_WIRE}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _sdk_reading(rendered: dict[str, Any]) -> dict[str, Any]:
    """``rendered`` with each cut call's raw ``input`` read as far as it is complete, as the
    Anthropic SDK's accumulator (whose final messages the ``.expected.json`` files are) does:
    fastmerge renders a cut call unparsed and marked (spec §6)."""
    import jiter

    content = []
    for block in rendered["content"]:
        if block.get("truncated") is True:
            raw = block["input"].encode("utf-8")
            block = {**block, "input": jiter.from_json(raw, partial_mode=True)}
            del block["truncated"]
        content.append(block)
    return {**rendered, "content": content}


def test_corpus_present() -> None:
    assert len(NAMES) == 18, NAMES


@pytest.mark.differential
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("provider", ["auto", PROVIDER])
def test_stream(name: str, provider: str) -> None:
    path = path_of(KIND, name)
    messages = aggregate_both(path, provider)
    assert len(messages) == 1
    message = messages[0]
    data = message.to_dict()
    assert data["provider_metadata"]["provider"] == PROVIDER
    got = [(a["code"], a["detail"]) for a in data["anomalies"]]
    assert got == ANOMALIES.get(name, [])
    # every stream of the corpus ends with message_stop
    assert message.status == "complete"
    events = events_of(name)
    start = events[0]["message"]
    assert message.response_id == start["id"]
    assert message.response_model == start["model"]
    stops = [e["delta"]["stop_reason"] for e in events if e["type"] == "message_delta"]
    assert data["finish_reason"] == stops[-1]
    rendered = to_provider(messages, PROVIDER)
    expected = sibling(path, ".expected.json")
    if expected is not None:
        assert_subset(_strip(expected), _sdk_reading(rendered))
    nonstream = sibling(path, ".nonstream.json")
    if nonstream is not None:
        if name in NONSTREAM_BY_BLOCK_TYPE:
            assert_same_structure(nonstream, rendered, ignore=("content",))
            for block in nonstream["content"]:
                same = [
                    b
                    for b in rendered["content"]
                    if b["type"] == block["type"]
                    and all(b.get(k) is not None for k, v in block.items() if v is not None)
                ]
                assert same, block["type"]
                assert_same_structure(_first_items(block), _first_items(same[0]))
        else:
            assert_same_structure(nonstream, rendered)
    _check_blocks(events, rendered)
    _check_usage(events, data, rendered)


def _first_items(value: Any) -> Any:
    """Lists cut to their first item (another generation cites and finds other counts)."""
    if isinstance(value, dict):
        return {k: _first_items(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_first_items(v) for v in value[:1]]
    return value


def _blocks(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The content blocks of a stream merged by hand (the test's own reading of the events)."""
    blocks: dict[int, dict[str, Any]] = {}
    json_parts: dict[int, list[str]] = {}
    for event in events:
        if event["type"] == "content_block_start":
            blocks[event["index"]] = dict(event["content_block"])
        elif event["type"] == "content_block_delta":
            block, delta = blocks[event["index"]], event["delta"]
            kind = delta["type"]
            if kind == "text_delta":
                block["text"] += delta["text"]
            elif kind == "thinking_delta":
                block["thinking"] += delta["thinking"]
            elif kind == "signature_delta":
                block["signature"] = delta["signature"]
            elif kind == "citations_delta":
                block.setdefault("citations", []).append(delta["citation"])
            elif kind == "input_json_delta":
                json_parts.setdefault(event["index"], []).append(delta["partial_json"])
            elif kind == "compaction_delta":
                block["content"] = (block.get("content") or "") + delta["content"]
    for index, pieces in json_parts.items():
        text = "".join(pieces)
        if text:
            try:
                blocks[index]["input"] = json.loads(text)
            except ValueError:
                blocks[index]["input"] = text
    return [blocks[i] for i in sorted(blocks)]


def _check_blocks(events: list[dict[str, Any]], rendered: dict[str, Any]) -> None:
    """Blocks in order; text, thinking, signatures, redacted data, citations, tool ids and
    every other block verbatim, compared with the stream read by hand."""
    blocks = [b for b in _blocks(events) if not (b["type"] == "text" and not b["text"])]
    content = rendered["content"]
    assert [b["type"] for b in content] == [b["type"] for b in blocks]
    for want, got in zip(blocks, content):
        kind = want["type"]
        if kind == "text":
            assert got["text"] == want["text"]
            assert got["citations"] == (want.get("citations") or None)
        elif kind == "thinking":
            assert got == {k: want[k] for k in ("type", "thinking", "signature")}
            assert got["signature"]  # every thinking block of the corpus is signed
        elif kind == "redacted_thinking":
            assert got == want
        elif kind == "tool_use":
            assert (got["id"], got["name"]) == (want["id"], want["name"])
            if isinstance(want["input"], dict):
                assert got["input"] == want["input"]
            else:  # JSON cut short: kept raw and marked, never parsed (spec §6)
                assert (got["input"], got["truncated"]) == (want["input"], True)
            assert {k: v for k, v in got.items() if k not in ("input", "truncated")} == {
                k: v for k, v in want.items() if k != "input"
            }
        else:
            assert got == want  # server tools, results, MCP, compaction: verbatim


def _check_usage(
    events: list[dict[str, Any]], data: dict[str, Any], rendered: dict[str, Any]
) -> None:
    """Usage: message_start's counts, overwritten key by key by message_delta's cumulative
    ones, which are final, zeros included (spec §5, the SDK's result); the rendered usage has
    Anthropic's own keys; the message keeps every key, cache reads under the normalized name."""
    want: dict[str, Any] = {}
    for event in events:
        usage = (
            event["message"]["usage"] if event["type"] == "message_start" else event.get("usage")
        )
        if event["type"] not in ("message_start", "message_delta") or not usage:
            continue
        for key, value in usage.items():
            if value is None:
                continue
            want[key] = value
    for key, value in want.items():
        assert rendered["usage"][key] == value, key
        stored = "cache_read_tokens" if key == "cache_read_input_tokens" else key
        assert data["usage_metadata"][stored] == value, key
    usage = data["usage_metadata"]
    assert "cache_read_input_tokens" not in usage  # stored under its normalized name
    assert usage["cache_read_tokens"] == want["cache_read_input_tokens"]
    assert usage["cache_write_tokens"] == want["cache_creation_input_tokens"]
    assert usage["total_tokens"] == want["input_tokens"] + want["output_tokens"]
    assert "total_tokens" not in rendered["usage"]
    assert "cache_read_tokens" not in rendered["usage"]


def test_truncated_tool_json_keeps_raw_arguments() -> None:
    """sonnet37: max_tokens inside the tool JSON. The raw arguments are kept exactly as
    streamed; the rendered input keeps the complete elements only (the SDK's expected)."""
    path: Path = path_of(KIND, "sonnet37-max-tokens-truncated-tool-json")
    (message,) = aggregate_both(path, PROVIDER)
    raw = "".join(
        e["delta"]["partial_json"]
        for e in events_of(path.stem)
        if e["type"] == "content_block_delta" and e["delta"]["type"] == "input_json_delta"
    )
    call = message.parts[1]
    assert call.arguments == raw
    assert call.provider_index == 1
    assert message.finish_reason == "max_tokens"
    assert message.finish_reason_normalized == "length"


def test_text_before_thinking_keeps_its_order() -> None:
    path = path_of(KIND, "opus46-adaptive-thinking-text-before-thinking")
    (message,) = aggregate_both(path, PROVIDER)
    kinds = [(p.to_dict()["part"], p.index) for p in message.parts]
    assert kinds == [("text", 0), ("reasoning", 1), ("text", 2)]
    assert message.parts[0].text == "\n\n"


def test_redacted_thinking_payload_verbatim() -> None:
    name = "sonnet45-redacted-thinking"
    (message,) = aggregate_both(path_of(KIND, name), PROVIDER)
    datas = [
        e["content_block"]["data"]
        for e in events_of(name)
        if e["type"] == "content_block_start" and e["content_block"]["type"] == "redacted_thinking"
    ]
    reasoning = [p for p in message.parts if p.to_dict()["part"] == "reasoning"]
    assert [p.payload.data for p in reasoning] == datas
    assert all(p.redacted and p.payload.kind == "redacted_thinking" for p in reasoning)
    assert all(p.payload.provider == PROVIDER for p in reasoning)


@pytest.mark.parametrize("name", NAMES)
def test_round_trip_is_lossless(name: str) -> None:
    """``from_dict(to_dict())`` gives the same message and the same rendered Message."""
    message = fastmerge.aggregate(path_of(KIND, name).read_bytes(), PROVIDER)
    again = type(message).from_dict(message.to_dict())
    assert again == message
    assert again.to_dict() == message.to_dict()
    assert to_provider(again, PROVIDER) == to_provider(message, PROVIDER)
