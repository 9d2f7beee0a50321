"""Conformance on the recorded Bedrock ConverseStream streams (``tests/corpus/
bedrock_converse``): every stream aggregates on both backends byte-identically, with the
provider named and detected, no anomaly, status complete, and the rendered Converse response
equal to what the raw events say block by block (text, reasoning text with its signature,
redacted blobs, tool uses with their input, server-tool results), with the stream's usage,
metrics and stop reason. The two ``.nonstream.json`` siblings give the response's shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _support.corpus import (
    aggregate_both,
    assert_same_structure,
    path_of,
    sibling,
    stream_ids,
    streams,
)

from fastmerge.render import to_provider

KIND = "bedrock_converse"
PROVIDER = "bedrock-converse"

# anomalies each stream may show, with the reason (asserted exactly): none of these recorded
# streams has a quirk the adapter flags (the empty text delta of gpt-oss adds no part).
ALLOWED_ANOMALIES: dict[str, list[str]] = {}

# keys of the non-streaming responses the renderer cannot know from a stream
NONSTREAM_IGNORE = (
    # the stream's metadata.usage does not report cache counts (the non-streamed response
    # gives zeros); the renderer gives back only the counts the stream sent
    "cacheReadInputTokenCount",
    "cacheReadInputTokens",
    "cacheWriteInputTokenCount",
    "cacheWriteInputTokens",
)


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _reference(events: list[dict[str, Any]]) -> dict[str, Any]:
    """What the raw events say, read independently of the adapter: the content blocks in
    block order (Converse's non-streaming ``content``), the stop reason, usage and metrics."""
    blocks: dict[int, dict[str, Any]] = {}
    out: dict[str, Any] = {}
    for event in events:
        ((kind, payload),) = event.items()
        if kind == "contentBlockStart":
            start = payload["start"]
            block = blocks.setdefault(payload["contentBlockIndex"], {})
            if "toolUse" in start:
                block["toolUse"] = {**start["toolUse"], "input": ""}
            else:
                block.update(json.loads(json.dumps(start)))
        elif kind == "contentBlockDelta":
            block = blocks.setdefault(payload["contentBlockIndex"], {})
            delta = payload["delta"]
            if "text" in delta:
                block["text"] = block.get("text", "") + delta["text"]
            elif "toolUse" in delta:
                block["toolUse"]["input"] += delta["toolUse"]["input"]
            elif "reasoningContent" in delta:
                rc = delta["reasoningContent"]
                if "redactedContent" in rc:
                    block["reasoningContent"] = {"redactedContent": rc["redactedContent"]}
                    continue
                text = block.setdefault("reasoningContent", {}).setdefault(
                    "reasoningText", {"text": ""}
                )
                text["text"] += rc.get("text", "")
                if "signature" in rc:
                    text["signature"] = rc["signature"]
            elif "toolResult" in delta:
                block["toolResult"].setdefault("content", []).extend(delta["toolResult"])
        elif kind == "messageStop":
            out["stopReason"] = payload["stopReason"]
        elif kind == "metadata":
            out["usage"] = payload["usage"]
            out["metrics"] = payload["metrics"]
    content = []
    for block in blocks.values():
        if block.get("text") == "":
            continue  # an empty text block (gpt-oss) is no content
        if "toolUse" in block:
            block["toolUse"]["input"] = json.loads(block["toolUse"]["input"])
        content.append(block)
    out["content"] = content
    return out


def test_corpus_is_complete() -> None:
    names = [p.stem for p in streams(KIND)]
    assert len(names) == 8, names


@pytest.mark.differential
@pytest.mark.parametrize("name", stream_ids(KIND))
@pytest.mark.parametrize("provider", ["auto", PROVIDER])
def test_stream(name: str, provider: str) -> None:
    path = path_of(KIND, name)
    messages = aggregate_both(path, provider)
    assert len(messages) == 1
    message = messages[0]
    data = message.to_dict()
    assert data["provider_metadata"]["provider"] == PROVIDER
    assert [a["code"] for a in data["anomalies"]] == ALLOWED_ANOMALIES.get(name, [])
    assert message.status == "complete"
    assert data["role"] == "assistant"

    ref = _reference(_events(path))
    rendered = to_provider(messages, PROVIDER)
    assert rendered["output"]["message"]["role"] == "assistant"
    # every block: text, reasoning with its signature (verbatim), redacted blobs, tool input
    assert rendered["output"]["message"]["content"] == ref["content"]
    assert rendered["stopReason"] == ref["stopReason"] == data["finish_reason"]
    assert rendered["usage"] == ref["usage"]
    assert rendered["metrics"] == ref["metrics"]
    usage = data["usage_metadata"]
    assert usage["input_tokens"] == ref["usage"]["inputTokens"]
    assert usage["output_tokens"] == ref["usage"]["outputTokens"]
    assert usage["total_tokens"] == ref["usage"]["totalTokens"]

    nonstream = sibling(path, ".nonstream.json")
    if nonstream is not None:
        assert_same_structure(nonstream, rendered, ignore=NONSTREAM_IGNORE)


@pytest.mark.differential
def test_signature_is_its_own_part_payload() -> None:
    """The signature delta (a delta of its own) lands on the reasoning part of its block."""
    path = path_of(KIND, "claude-sonnet4-reasoning-signature-text")
    signature = next(
        e["contentBlockDelta"]["delta"]["reasoningContent"]["signature"]
        for e in _events(path)
        if "signature"
        in e.get("contentBlockDelta", {}).get("delta", {}).get("reasoningContent", {})
    )
    (message,) = aggregate_both(path, PROVIDER)
    first = message.to_dict()["parts"][0]
    assert first["part"] == "reasoning" and first["index"] == 0
    assert first["payload"] == {"provider": PROVIDER, "kind": "signature", "data": signature}
    assert [p["part"] for p in message.to_dict()["parts"]] == ["reasoning", "text"]


@pytest.mark.differential
def test_redacted_blocks_keep_their_blobs() -> None:
    path = path_of(KIND, "claude37-redacted-reasoning")
    blobs = [
        e["contentBlockDelta"]["delta"]["reasoningContent"]["redactedContent"]
        for e in _events(path)
        if "redactedContent"
        in e.get("contentBlockDelta", {}).get("delta", {}).get("reasoningContent", {})
    ]
    (message,) = aggregate_both(path, PROVIDER)
    parts = message.to_dict()["parts"]
    assert [(p["part"], p.get("redacted"), p["index"]) for p in parts] == [
        ("reasoning", True, 0),
        ("reasoning", True, 1),
        ("text", None, 2),
    ]
    assert [p["payload"]["data"] for p in parts[:2]] == blobs
    assert all(p["payload"]["kind"] == "redacted_content" for p in parts[:2])


@pytest.mark.differential
def test_padding_is_never_kept() -> None:
    path = path_of(KIND, "nova-micro-text")
    (message,) = aggregate_both(path, PROVIDER)
    assert '"p"' not in json.dumps(message.to_dict())


@pytest.mark.differential
def test_server_tool_blocks() -> None:
    """nova code interpreter: a server tool use (type kept), its toolResult start and delta
    kept verbatim, then the client tool use."""
    path = path_of(KIND, "nova2-lite-code-interpreter")
    (message,) = aggregate_both(path, PROVIDER)
    parts = message.to_dict()["parts"]
    assert [p["part"] for p in parts] == ["tool_call", "unknown", "unknown", "tool_call"]
    assert parts[0]["extra"] == {"type": "server_tool_use"}
    assert parts[0]["arguments"] == '{"snippet":"1234 * 5678"}'
    assert parts[1]["kind"] == "toolResult" and parts[1]["index"] == 1
    assert parts[1]["raw"]["toolResult"]["status"] == "success"
    assert parts[2]["raw"]["toolResult"][0]["json"]["stdOut"] == "7006652"
    assert parts[3]["name"] == "final_result" and parts[3]["extra"] == {"type": "tool_use"}
    assert message.finish_reason == "tool_use"
