"""Conformance on the recorded Gemini streams (``tests/corpus/gemini``): every stream
aggregates on both backends byte for byte (from raw bytes and from dict events, with
``provider="auto"`` and ``"gemini"``), with its status and exactly the anomalies it explains;
the rendered ``GenerateContentResponse`` holds every ``.expected.json`` field and has the shape
of every ``.nonstream.json``; signatures, text, thoughts, function-call arguments, usage and
grounding survive as the raw stream has them; the JSON-array and SSE transports give the same
messages as the JSON lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _support.corpus import (
    aggregate_both,
    assert_same_structure,
    assert_subset,
    path_of,
    sibling,
    stream_ids,
    streams,
)

import fastmerge
from fastmerge.render import to_provider

KIND = "gemini"
PROVIDER = "gemini"

# Gemini sends function calls without an id (only some Vertex / Gemini 3 calls carry one); the
# merge gives each call a generated id with a synthetic_id anomaly (spec §4, E37).
NO_ID = "the Gemini API sends functionCall parts without an id"

#: stream -> (status, the anomaly codes in order, why)
EXPECTED: dict[str, tuple[str, list[str], str]] = {
    "gemini20-flash-plain-text": ("complete", [], "plain text"),
    "gemini25-flash-thought-then-function-call-json-array": ("complete", ["synthetic_id"], NO_ID),
    "gemini25-flash-usage-live-midstream": ("complete", [], "text"),
    "gemini25-pro-google-search-grounding": ("complete", [], "text + grounding"),
    "gemini25-pro-thought-parts": ("complete", [], "thoughts then text"),
    "gemini3-flash-code-execution": ("complete", [], "code execution parts are unknown parts"),
    "gemini3-flash-function-call-signature-json-array": ("complete", ["synthetic_id"], NO_ID),
    "gemini3-pro-function-call-thought-signature": ("complete", ["synthetic_id"], NO_ID),
    "gemini3-pro-function-call-with-args": ("complete", ["synthetic_id"], NO_ID),
    "gemini3-pro-text-after-tool-result": ("complete", [], "text"),
    "gemini3-pro-text-signature-on-empty-part": ("complete", [], "text + trailing signature"),
    "gemini36-flash-thoughts-json-schema-text-json-array": ("complete", [], "thoughts + text"),
    "vertex-gemini-thought-then-no-args-function-calls": (
        "complete",
        ["synthetic_id"] * 4,
        NO_ID + " (4 calls)",
    ),
    "vertex-gemini31-pro-partial-args-nested": ("complete", ["synthetic_id"], NO_ID),
    "vertex-gemini31-pro-partial-args-streaming": ("complete", ["synthetic_id"] * 2, NO_ID),
}

#: nonstream keys the renderer cannot know from the stream, with the reason
NONSTREAM_IGNORE: dict[str, tuple[str, ...]] = {
    # the streamed final chunk has no finishMessage (the non-streamed generation has one)
    "gemini3-pro-function-call-with-args": ("finishMessage",),
    "gemini3-pro-text-signature-on-empty-part": (),
}

IDS = stream_ids(KIND)


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _lines(path: Path) -> list[bytes]:
    return [line for line in path.read_bytes().splitlines() if line.strip()]


def test_every_stream_is_listed() -> None:
    assert sorted(p.stem for p in streams(KIND)) == sorted(EXPECTED)
    assert len(EXPECTED) == 15


@pytest.mark.differential
@pytest.mark.parametrize("name", IDS)
@pytest.mark.parametrize("provider", ["auto", PROVIDER])
def test_stream(name: str, provider: str) -> None:
    status, codes, _why = EXPECTED[name]
    messages = aggregate_both(path_of(KIND, name), provider)
    assert len(messages) == 1
    message = messages[0]
    assert message.status == status
    assert [a["code"] for a in message.to_dict()["anomalies"]] == codes
    assert message.provider_metadata["provider"] == PROVIDER
    assert message.choice_index == 0
    assert message.role == "assistant"
    again = type(message).from_dict(message.to_dict())  # lossless through plain data
    assert again == message and again.to_dict() == message.to_dict()


@pytest.mark.differential
@pytest.mark.parametrize("name", [n for n in IDS if sibling(path_of(KIND, n), ".expected.json")])
def test_expected(name: str) -> None:
    path = path_of(KIND, name)
    expected = sibling(path, ".expected.json")
    messages = aggregate_both(path, PROVIDER)
    assert_subset(expected, to_provider(messages, PROVIDER))
    assert_subset(expected, messages[0].to_provider(PROVIDER))


def _part_keys(response: dict[str, Any]) -> list[list[str]]:
    return [sorted(p) for p in response["candidates"][0]["content"]["parts"]]


@pytest.mark.differential
@pytest.mark.parametrize("name", [n for n in IDS if sibling(path_of(KIND, n), ".nonstream.json")])
def test_nonstream_shape(name: str) -> None:
    path = path_of(KIND, name)
    nonstream = sibling(path, ".nonstream.json")
    rendered = to_provider(aggregate_both(path, PROVIDER), PROVIDER)
    assert_same_structure(nonstream, rendered, ignore=NONSTREAM_IGNORE[name])
    # parts carry no "type" key, so assert_same_structure does not compare them: part kinds,
    # order and the keys of each part (thoughtSignature where Gemini puts it) are checked here
    assert _part_keys(rendered) == _part_keys(nonstream)
    for got, want in zip(
        rendered["candidates"][0]["content"]["parts"],
        nonstream["candidates"][0]["content"]["parts"],
    ):
        assert_same_structure(want, got)


# ---------------------------------------------------------------------------------------------
# What the raw stream holds survives


def _raw_parts(path: Path) -> list[dict[str, Any]]:
    return [
        part
        for event in _events(path)
        for candidate in event.get("candidates") or []
        for part in (candidate.get("content") or {}).get("parts") or []
    ]


def _rendered(name: str) -> dict[str, Any]:
    return to_provider(aggregate_both(path_of(KIND, name), PROVIDER), PROVIDER)


@pytest.mark.differential
@pytest.mark.parametrize("name", IDS)
def test_signatures_survive_in_order(name: str) -> None:
    raw = [
        p["thoughtSignature"] for p in _raw_parts(path_of(KIND, name)) if "thoughtSignature" in p
    ]
    rendered = _rendered(name)
    got = [
        p["thoughtSignature"]
        for p in rendered["candidates"][0]["content"]["parts"]
        if "thoughtSignature" in p
    ]
    assert got == raw


@pytest.mark.differential
@pytest.mark.parametrize("name", IDS)
def test_text_and_thoughts_survive(name: str) -> None:
    raw = _raw_parts(path_of(KIND, name))
    rendered = _rendered(name)["candidates"][0]["content"]["parts"]
    for thought in (False, True):
        want = "".join(p["text"] for p in raw if "text" in p and bool(p.get("thought")) is thought)
        got = "".join(
            p["text"] for p in rendered if "text" in p and bool(p.get("thought")) is thought
        )
        assert got == want
    # consecutive text deltas are one part; a thought and the answer are two
    kinds = [
        ("thought" if p.get("thought") else "text") if "text" in p else next(iter(p))
        for p in rendered
    ]
    assert all(a != b or a not in ("text", "thought") for a, b in zip(kinds, kinds[1:]))


@pytest.mark.differential
@pytest.mark.parametrize("name", IDS)
def test_usage_survives(name: str) -> None:
    want: dict[str, Any] = {}
    for event in _events(path_of(KIND, name)):
        for key, value in (event.get("usageMetadata") or {}).items():
            want[key] = value  # cumulative: the last value of each key
    assert _rendered(name)["usageMetadata"] == want
    message = aggregate_both(path_of(KIND, name), PROVIDER)[0]
    usage = message.to_dict()["usage_metadata"]
    if "totalTokenCount" in want:
        assert usage["total_tokens"] == want["totalTokenCount"]
        assert usage["input_tokens"] + usage["output_tokens"] == want["totalTokenCount"]
    if "thoughtsTokenCount" in want:
        assert usage["reasoning_tokens"] == want["thoughtsTokenCount"]


@pytest.mark.differential
@pytest.mark.parametrize("name", IDS)
def test_metadata_survives(name: str) -> None:
    events = _events(path_of(KIND, name))
    rendered = _rendered(name)
    candidate = rendered["candidates"][0]
    last = events[-1]
    assert rendered["modelVersion"] == last["modelVersion"]
    assert rendered["responseId"] == events[0]["responseId"]
    assert candidate["finishReason"] == last["candidates"][0]["finishReason"]
    for key in ("groundingMetadata", "finishMessage"):
        values = [c[key] for e in events for c in e["candidates"] if key in c]
        if values:
            assert candidate[key] == values[-1]
    if "createTime" in last:
        assert rendered["createTime"] == last["createTime"]


def _set_path(args: dict[str, Any], path: str, value: Any, append: bool) -> None:
    """An independent reading of partialArgs: walk ``$.a.b[0]`` and set (or append to) it."""
    tokens: list[Any] = []
    for piece in path[2:].replace("[", ".[").split("."):
        if piece.startswith("["):
            tokens.append(int(piece[1:-1]))
        elif piece:
            tokens.append(piece)
    node: Any = args
    for token, following in zip(tokens, tokens[1:]):
        empty: Any = [] if isinstance(following, int) else {}
        if isinstance(token, int):
            while len(node) <= token:
                node.append(None)
            if node[token] is None:
                node[token] = empty
        else:
            node.setdefault(token, empty)
        node = node[token]
    last = tokens[-1]
    if isinstance(last, int):
        while len(node) <= last:
            node.append(None)
    current = node[last] if isinstance(last, int) else node.get(last)
    node[last] = current + value if append and isinstance(current, str) else value


def _expected_calls(path: Path) -> list[tuple[str, Any]]:
    calls: list[tuple[str, Any]] = []
    previous: str | None = None
    for part in _raw_parts(path):
        call = part.get("functionCall")
        if call is None:
            continue
        if call.get("name"):
            calls.append((call["name"], call.get("args")))
            previous = None
        for arg in call.get("partialArgs") or []:
            name, args = calls[-1]
            if args is None:
                args = {}
                calls[-1] = (name, args)
            value = next(arg[k] for k in ("stringValue", "numberValue", "boolValue") if k in arg)
            _set_path(args, arg["jsonPath"], value, previous == arg["jsonPath"])
            previous = arg["jsonPath"] if arg.get("willContinue") else None
    return calls


@pytest.mark.differential
@pytest.mark.parametrize("name", IDS)
def test_function_calls_survive(name: str) -> None:
    want = _expected_calls(path_of(KIND, name))
    rendered = _rendered(name)["candidates"][0]["content"]["parts"]
    got = [
        (p["functionCall"]["name"], p["functionCall"].get("args"))
        for p in rendered
        if "functionCall" in p
    ]
    assert got == want
    for part in rendered:
        if "functionCall" in part:
            assert "id" not in part["functionCall"]  # Gemini sent none; the generated one stays out


def test_partial_args_nested_values() -> None:
    rendered = _rendered("vertex-gemini31-pro-partial-args-nested")
    args = rendered["candidates"][0]["content"]["parts"][0]["functionCall"]["args"]
    recipe = args["recipe"]
    assert list(recipe) == ["ingredients", "name", "steps"]
    assert len(recipe["ingredients"]) == 10 and len(recipe["steps"]) == 10
    assert recipe["ingredients"][0] == {"amount": "16 oz", "name": "Lasagna noodles"}
    assert recipe["steps"][0] == "Preheat oven to 375°F (190°C)."
    assert recipe["steps"][1].endswith("drain and set aside.")  # two fragments of one string
    assert recipe["steps"][4] == "In a 9x13 baking dish, spread a thin layer of meat sauce."


def test_code_execution_parts_in_order() -> None:
    rendered = _rendered("gemini3-flash-code-execution")
    parts = rendered["candidates"][0]["content"]["parts"]
    raw = _raw_parts(path_of(KIND, "gemini3-flash-code-execution"))
    assert [next(iter(p)) for p in parts] == ["executableCode", "codeExecutionResult", "text"]
    assert parts[0] == raw[0]  # verbatim, with its thoughtSignature
    assert parts[1] == raw[2]
    # the trailing empty part's signature sits on the text part before it (edge case E69)
    assert parts[2]["thoughtSignature"] == raw[-1]["thoughtSignature"]


def test_signature_on_empty_part_joins_the_text() -> None:
    rendered = _rendered("gemini3-pro-text-signature-on-empty-part")
    parts = rendered["candidates"][0]["content"]["parts"]
    assert len(parts) == 1 and sorted(parts[0]) == ["text", "thoughtSignature"]
    message = aggregate_both(path_of(KIND, "gemini3-pro-text-signature-on-empty-part"))[0]
    (part,) = message.parts
    assert part.attributes["payload"]["provider"] == "gemini"
    assert part.attributes["payload"]["kind"] == "thought_signature"


# ---------------------------------------------------------------------------------------------
# Transports: JSON lines, one JSON array, SSE: the same messages


def _dump(messages: list[Any]) -> list[dict[str, Any]]:
    return [m.to_dict() for m in messages]


@pytest.mark.parametrize("name", IDS)
def test_json_array_and_sse_transports(name: str) -> None:
    path = path_of(KIND, name)
    lines = _lines(path)
    reference = _dump(fastmerge.aggregate_choices(path.read_bytes(), PROVIDER))
    array = b"[" + b",".join(lines) + b"]"
    agg = fastmerge.Aggregator("auto")
    agg.feed(array)
    assert _dump(agg.finish_choices()) == reference
    sse = b"".join(b"data: " + line + b"\r\n\r\n" for line in lines)
    assert _dump(fastmerge.aggregate_choices(sse, "auto")) == reference
    # the array split in small pieces, as a socket delivers it
    agg = fastmerge.Aggregator(PROVIDER)
    for start in range(0, len(array), 97):
        agg.feed(array[start : start + 97])
    assert _dump(agg.finish_choices()) == reference
