"""Round trips are stable (E91, rules §2): ``from_dict(m.to_dict()) == m`` for every message
the engine can produce, on both backends, with the same bytes; no anomaly added per trip;
``None`` and ``{}`` extras kept apart; pickling (``__reduce__`` goes through ``from_dict``)
alike.

``from_dict`` rebuilds the message a ``to_dict()`` describes, it does not merge its parts
again: two parts of different kinds at one index (a Bedrock reasoning block and text at the
same ``contentBlockIndex``) stay two parts with the one ``kind_change`` anomaly the stream
gave; usage keys come back under the names they were stored with.

Cases: every recorded corpus stream (``tests/corpus/*``, each with its provider), the
hand-made cases of the issue, tool messages, and hypothesis folds of chunks built from the
chunk tests' generators (checked on each backend, and across backends).
"""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest
from _support.chunk_leaves import (
    OPTIONS,
    _both,
    _chunk,
    _families,
    _fold_plus,
    keys,
    names,
    payloads,
    small_text,
)
from _support.chunk_leaves import streams as leaf_streams
from _support.chunks import fold_plus, tc
from _support.corpus import CORPUS, KINDS, streams
from conftest import AGGREGATES, BACKENDS, MESSAGES, RUST, canonical
from hypothesis import given, settings
from hypothesis import strategies as st

import fastmerge

# ---------------------------------------------------------------------------------------------
# The checks


def _bytes(d: dict[str, Any]) -> bytes:
    """The canonical serialization of the contract (a lone surrogate, which orjson refuses,
    goes through json with its escapes)."""
    try:
        return orjson.dumps(d)
    except orjson.JSONEncodeError:
        return json.dumps(d).encode()


def assert_round_trips(message: Any) -> None:
    """``from_dict(to_dict())`` gives ``message`` back with the same bytes and anomalies, a
    second trip gives the same again, and pickle and deepcopy give it back too."""
    cls = type(message)
    data = message.to_dict()
    again = cls.from_dict(data)
    assert type(again) is cls
    assert again == message
    assert canonical(again.to_dict()) == canonical(data)
    assert _bytes(again.to_dict()) == _bytes(data)
    if hasattr(message, "anomalies"):
        assert again.anomalies == message.anomalies  # no anomaly added per trip
    twice = cls.from_dict(again.to_dict())
    assert canonical(twice.to_dict()) == canonical(data)
    for copied in (pickle.loads(pickle.dumps(message)), copy.deepcopy(message)):
        assert type(copied) is cls
        assert canonical(copied.to_dict()) == canonical(data)
    assert data == message.to_dict(), "to_dict / from_dict changed the message"


# ---------------------------------------------------------------------------------------------
# Every corpus stream

CORPUS_STREAMS = [(kind, path) for kind in KINDS for path in streams(kind)]


def test_every_corpus_folder_is_read() -> None:
    folders = {p.name for p in CORPUS.iterdir() if p.is_dir()}
    assert folders == set(KINDS)
    assert len(CORPUS_STREAMS) >= 60


@pytest.mark.parametrize(
    ("kind", "path"), CORPUS_STREAMS, ids=[f"{k}/{p.stem}" for k, p in CORPUS_STREAMS]
)
def test_corpus_stream_round_trips(kind: str, path: Path) -> None:
    messages = fastmerge.aggregate_choices(path.read_bytes(), KINDS[kind])
    assert messages
    for message in messages:
        assert_round_trips(message)


@pytest.mark.single_run
@pytest.mark.parametrize(
    ("kind", "path"), CORPUS_STREAMS, ids=[f"{k}/{p.stem}" for k, p in CORPUS_STREAMS]
)
def test_corpus_round_trips_agree_across_backends(kind: str, path: Path) -> None:
    """The round-tripped message's bytes are the same on every backend, and a backend reads
    back what another wrote."""
    dumped = {}
    for name in BACKENDS:
        messages = AGGREGATES[name].aggregate_choices(path.read_bytes(), KINDS[kind])
        dumped[name] = [m.to_dict() for m in messages]
    reference = [_bytes(d) for d in dumped[BACKENDS[0]]]
    for writer in BACKENDS:
        for reader in BACKENDS:
            cls = MESSAGES[reader].AssistantMessage
            assert [_bytes(cls.from_dict(d).to_dict()) for d in dumped[writer]] == reference


# ---------------------------------------------------------------------------------------------
# (a) two parts of different kinds at one index


def _bedrock_reasoning_then_text_at_one_index() -> list[dict[str, Any]]:
    """A recorded Bedrock stream (reasoning block 0 with its signature, text block 1) with
    its text moved to block index 0, as a server that reuses the index would send it."""
    path = CORPUS / "bedrock_converse" / "claude-sonnet4-reasoning-signature-text.jsonl"
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    moved = 0
    for event in events:
        for key in ("contentBlockDelta", "contentBlockStart", "contentBlockStop"):
            block = event.get(key)
            if block is not None and block.get("contentBlockIndex") == 1:
                block["contentBlockIndex"] = 0
                moved += 1
    assert moved > 1
    return events


def test_a_reasoning_and_text_at_one_index_gain_no_anomaly_per_trip() -> None:
    events = _bedrock_reasoning_then_text_at_one_index()
    message = fastmerge.aggregate(events, provider="bedrock-converse")
    assert [(p.PART, p.index) for p in message.parts] == [("reasoning", 0), ("text", 0)]
    assert message.parts[0].payload is not None
    assert message.content == "Hello! It's nice to meet you. How can I help you today?"
    assert message.anomalies == [
        {"code": "kind_change", "detail": "part index 0: text after reasoning"}
    ]
    current = message
    for _ in range(3):
        current = fastmerge.AssistantMessage.from_dict(current.to_dict())
        assert current == message
        assert current.anomalies == message.anomalies
        assert orjson.dumps(current.to_dict()) == orjson.dumps(message.to_dict())
    assert_round_trips(message)


def test_a_kind_changes_back_and_forth_at_one_index() -> None:
    """reasoning, text, reasoning at index 0: three parts, two anomalies, as the fold gave."""
    parts = [
        {"part": "reasoning", "text": "r1", "index": 0},
        {"part": "text", "text": "t", "index": 0},
        {"part": "reasoning", "text": "r2", "index": 0},
        {"part": "unknown", "kind": "x", "raw": {}, "index": 0},
    ]
    message = fastmerge.AssistantMessage(parts=parts)
    assert [p.PART for p in message.parts] == ["reasoning", "text", "reasoning", "unknown"]
    assert [a["code"] for a in message.anomalies] == ["kind_change"] * 3
    assert_round_trips(message)


def test_a_described_chunk_is_continued_by_later_chunks() -> None:
    """A chunk read back from its dict is continued by later chunks as the chunk itself is:
    by part index (the last part at an index), provider index and call id."""
    first = fastmerge.AssistantMessageChunk(
        parts=[
            {"part": "reasoning", "text": "r", "index": 0},
            {"part": "text", "text": "Hel", "index": 0},
        ],
        tool_calls=[tc(3, "c1", "f", '{"a"')],
    )
    later = fastmerge.AssistantMessageChunk(
        parts=[{"part": "text", "text": "lo", "index": 0}],
        tool_calls=[tc(3, None, None, ": 1}")],
    )
    again = fastmerge.AssistantMessageChunk.from_dict(first.to_dict())
    assert again == first
    merged = again + later
    assert canonical(merged.to_dict()) == canonical((first + later).to_dict())
    # the constructor's order: calls, then parts
    assert [p.PART for p in merged.parts] == ["tool_call", "reasoning", "text"]
    assert [p.index for p in merged.parts[1:]] == [0, 0]
    assert merged.parts[2].text == "Hello"
    assert merged.tool_calls is not None
    assert [(c.id, c.arguments) for c in merged.tool_calls] == [("c1", '{"a": 1}')]
    assert [a["code"] for a in merged.anomalies] == ["kind_change"]


def test_a_described_chunk_after_another_continues_it() -> None:
    """Added after another chunk, a chunk read back from its dict (pickle, deepcopy) is a
    chunk like any other: its text continues the text before it."""
    pairs = [
        (
            fastmerge.AssistantMessageChunk(content="Hel"),
            fastmerge.AssistantMessageChunk(content="lo"),
        ),
        (
            fastmerge.AssistantMessageChunk(tool_calls=[tc(0, "c", "f", "{")]),
            fastmerge.AssistantMessageChunk(tool_calls=[tc(0, None, None, "}")]),
        ),
    ]
    for head, tail in pairs:
        for copied in (pickle.loads(pickle.dumps(tail)), copy.deepcopy(tail)):
            merged = head + copied
            assert canonical(merged.to_dict()) == canonical((head + tail).to_dict())
            assert len(merged.parts) == 1
    assert (pairs[0][0] + copy.deepcopy(pairs[0][1])).content == "Hello"
    calls = (pairs[1][0] + copy.deepcopy(pairs[1][1])).tool_calls
    assert calls is not None
    assert [(c.id, c.arguments) for c in calls] == [("c", "{}")]


# ---------------------------------------------------------------------------------------------
# (b) usage keys under the names they came with

USAGE_LINE = (
    b'{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12,'
    b'"cache_read_input_tokens":5}}'
)


def test_b_usage_is_not_renamed_by_from_dict() -> None:
    message = fastmerge.aggregate([USAGE_LINE], provider="openai-chat")
    usage = message.to_dict()["usage_metadata"]
    assert usage == {
        "input_tokens": 10,
        "output_tokens": 2,
        "total_tokens": 12,
        "cache_read_input_tokens": 5,
    }
    assert message.usage_metadata is not None
    assert message.usage_metadata.cache_read_tokens == 5  # the alias is a view
    again = fastmerge.AssistantMessage.from_dict(message.to_dict())
    assert again.to_dict()["usage_metadata"] == usage
    assert list(again.to_dict()["usage_metadata"]) == list(usage)
    assert again == message
    assert_round_trips(message)


def test_b_two_spellings_of_a_count_both_come_back() -> None:
    """The Responses adapter keeps a chat-style ``prompt_tokens`` and adds ``input_tokens``
    beside it: from_dict keeps both (an alias would fold one into the other)."""
    events = [
        {"type": "response.created", "response": {"id": "r", "model": "m", "output": []}},
        {
            "type": "response.completed",
            "response": {
                "id": "r",
                "model": "m",
                "status": "completed",
                "output": [],
                "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
            },
        },
    ]
    message = fastmerge.aggregate(events, provider="openai-responses")
    usage = message.to_dict()["usage_metadata"]
    assert {"prompt_tokens", "input_tokens"} <= set(usage)
    assert (
        fastmerge.AssistantMessage.from_dict(message.to_dict()).to_dict()["usage_metadata"] == usage
    )
    assert_round_trips(message)


def test_b_constructor_still_reads_provider_spellings() -> None:
    """Building a message from a provider's usage normalizes it (E55); from_dict then keeps
    what the message holds."""
    message = fastmerge.AssistantMessage(
        usage_metadata={"prompt_tokens": 4, "completion_tokens": 1, "cache_read_input_tokens": 2}
    )
    assert message.to_dict()["usage_metadata"] == {
        "input_tokens": 4,
        "output_tokens": 1,
        "cache_read_tokens": 2,
        "total_tokens": 5,
    }
    assert_round_trips(message)


# ---------------------------------------------------------------------------------------------
# (c) None and {} kept apart


def _get(d: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        d = d[step]
    return d


EXTRAS: list[tuple[str, dict[str, Any], tuple[Any, ...], Any]] = [
    (
        "tool-call extra {} (a fragment's unknown key was null)",
        {"tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{}"}, "x": None}]},
        ("parts", 0, "extra"),
        {},
    ),
    (
        "tool-call extra None",
        {"tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{}"}}]},
        ("parts", 0, "extra"),
        None,
    ),
    (
        "tool-call extra with an empty dict inside",
        {"parts": [fastmerge.ToolCallPart(id="c", name="f", extra={"k": {}, "n": None})]},
        ("parts", 0, "extra"),
        {"k": {}},
    ),
    (
        "tool-call arguments {}",
        {"parts": [fastmerge.ToolCallPart(id="c", name="f", arguments={})]},
        ("parts", 0, "arguments"),
        {},
    ),
    (
        "text attributes of a structured item",
        {"content": [{"type": "text", "text": "a"}]},
        ("parts", 0, "attributes"),
        {"type": "text"},
    ),
    ("text attributes None", {"content": "a"}, ("parts", 0, "attributes"), None),
    (
        "unknown part raw {}",
        {"parts": [fastmerge.UnknownPart(provider="p", kind="k", raw={})]},
        ("parts", 0, "raw"),
        {},
    ),
    (
        "unknown part raw None",
        {"parts": [fastmerge.UnknownPart(provider="p", kind="k")]},
        ("parts", 0, "raw"),
        None,
    ),
    (
        "tool result content {}",
        {"parts": [fastmerge.ToolResultPart(tool_call_id="c", content={})]},
        ("parts", 0, "content"),
        {},
    ),
    (
        "reasoning payload data {}",
        {
            "parts": [
                fastmerge.ReasoningPart(text="r", payload=fastmerge.OpaquePayload("p", "k", {}))
            ]
        },
        ("parts", 0, "payload", "data"),
        {},
    ),
    (
        "usage details {}",
        {"usage_metadata": {"input_tokens": 1, "prompt_tokens_details": {}}},
        ("usage_metadata", "prompt_tokens_details"),
        {},
    ),
    (
        "usage details with a null count",
        {"usage_metadata": {"input_tokens": 1, "x_details": {"cached_tokens": None}}},
        ("usage_metadata", "x_details"),
        {"cached_tokens": None},
    ),
    ("usage {}", {"usage_metadata": {}}, ("usage_metadata",), {}),
    ("usage None", {}, ("usage_metadata",), None),
    ("metadata {}", {}, ("metadata",), {}),
    (
        "metadata with {} inside",
        {"metadata": {"a": {}, "b": None}},
        ("metadata",),
        {"a": {}, "b": None},
    ),
    ("provider_metadata {}", {}, ("provider_metadata",), {}),
    (
        "provider_metadata with {} inside",
        {"provider_metadata": {"p": {"k": {}}}},
        ("provider_metadata",),
        {"p": {"k": {}}},
    ),
    ("logprobs {}", {"logprobs": {}}, ("logprobs",), {}),
    ("logprobs None", {}, ("logprobs",), None),
    ("prompt_token_ids []", {"prompt_token_ids": []}, ("prompt_token_ids",), []),
]


@pytest.mark.parametrize(
    ("fields", "path", "value"), [e[1:] for e in EXTRAS], ids=[e[0] for e in EXTRAS]
)
def test_c_none_and_empty_extras_kept_apart(
    fields: dict[str, Any], path: tuple[Any, ...], value: Any
) -> None:
    message = fastmerge.AssistantMessage(**fields)
    assert canonical(_get(message.to_dict(), path)) == canonical(value)
    again = fastmerge.AssistantMessage.from_dict(message.to_dict())
    assert canonical(_get(again.to_dict(), path)) == canonical(value)
    chunk = fastmerge.AssistantMessageChunk(**fields)
    assert canonical(_get(chunk.to_dict(), path)) == canonical(value)
    assert_round_trips(message)
    assert_round_trips(chunk)


def test_c_aggregated_extras_kept_apart() -> None:
    """An OpenAI stream whose call fragment has a null unknown key (no extra: None), and a
    Gemini call with empty args (``{}``): the values the message holds come back as they
    are."""
    call = {"index": 0, "id": "c1", "type": "function", "foo": None}
    call["function"] = {"name": "f", "arguments": "{}"}
    delta = {"role": "assistant", "tool_calls": [call]}
    chat = [
        {"id": "x", "choices": [{"index": 0, "delta": delta}]},
        {"id": "x", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    content = {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]}
    gemini = [{"candidates": [{"content": content, "finishReason": "STOP"}]}]
    for events, provider in ((chat, "openai-chat"), (gemini, "gemini")):
        message = fastmerge.aggregate(events, provider=provider)
        assert_round_trips(message)
    assert fastmerge.aggregate(chat, provider="openai-chat").to_dict()["parts"][0]["extra"] is None
    message = fastmerge.aggregate(gemini, provider="gemini")
    assert message.to_dict()["parts"][0]["arguments"] == {}


# ---------------------------------------------------------------------------------------------
# Tool messages and the other families

TOOL_MESSAGES: list[dict[str, Any]] = [
    {"tool_call_id": "c1", "content": "42"},
    {"tool_call_id": "c1", "content": ""},
    {"tool_call_id": None, "content": [{"type": "text", "text": "a"}, "b"]},
    {"tool_call_id": "c2", "content": [], "name": "", "metadata": {"k": {}}},
    {"tool_call_id": "c3", "content": "x", "role": "tool", "name": "f", "metadata": {"a": None}},
]


@pytest.mark.parametrize("fields", TOOL_MESSAGES)
def test_tool_message_round_trips(fields: dict[str, Any]) -> None:
    message = fastmerge.ToolMessage(**fields)
    assert_round_trips(message)
    chunk = fastmerge.ToolMessageChunk(**fields)
    assert_round_trips(chunk)
    assert_round_trips(chunk.to_message())


def test_merged_tool_and_base_chunks_round_trip() -> None:
    tool = fastmerge.ToolMessageChunk(tool_call_id="c", content="a") + fastmerge.ToolMessageChunk(
        content="b", metadata={"m": {}}
    )
    assert tool.to_message().content == "ab"
    assert_round_trips(tool)
    assert_round_trips(tool.to_message())
    base = fastmerge.BaseMessageChunk(role="user", content=["a"]) + fastmerge.BaseMessageChunk(
        role="user", content=[{"b": {}}], name="n"
    )
    assert_round_trips(base)


# ---------------------------------------------------------------------------------------------
# Hypothesis: folds of chunks built from the chunk tests' generators

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from([1.5, -0.0])  # no NaN: its equality would rest on object identity
    | small_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=6,
)
json_dicts = st.one_of(st.none(), st.dictionaries(keys, json_values, max_size=3))
part_indexes = st.sampled_from([None, 0, 1, 2])  # few: kinds meet at one index
call_ids = st.sampled_from([None, "", "null", "c1", "c2", "c3"])
usage_values = st.one_of(
    st.none(),
    st.integers(0, 5),
    st.dictionaries(keys, st.one_of(st.none(), st.integers(0, 3)), max_size=2),
)
usage_dicts = st.one_of(
    st.none(),
    st.dictionaries(
        st.sampled_from(
            [
                "input_tokens",
                "output_tokens",
                "total_tokens",
                "prompt_tokens",
                "cache_read_input_tokens",
                "cache_read_tokens",
                "prompt_tokens_details",
            ]
        ),
        usage_values,
        max_size=4,
    ),
)


def _part(kind: str, fields: dict[str, Any]) -> Any:
    return st.fixed_dictionaries({"part": st.just(kind)}, optional=fields)


part_dicts = st.one_of(
    st.fixed_dictionaries({"part": st.sampled_from(["text", "reasoning"]), "text": small_text}),
    _part(
        "text",
        {
            "text": small_text,
            "index": part_indexes,
            "citations": st.one_of(st.none(), st.lists(json_values, max_size=2)),
            "attributes": json_dicts,
        },
    ),
    _part(
        "reasoning",
        {
            "text": small_text,
            "index": part_indexes,
            "summary": st.one_of(st.none(), small_text),
            "payload": payloads,
            "redacted": st.booleans(),
        },
    ),
    _part(
        "tool_call",
        {
            "id": call_ids,
            "name": names,
            "provider_index": part_indexes,
            "arguments": st.one_of(
                st.none(),
                st.sampled_from(["", "{", '"a"', ":1}", "{}"]),
                st.dictionaries(keys, json_values, max_size=2),
            ),
            "type": st.sampled_from([None, "", "function", "custom"]),
            "payload": payloads,
            "response_item_id": st.sampled_from([None, "", "r1", "r2"]),
            "extra": json_dicts,
            "call_index": part_indexes,
        },
    ),
    _part("tool_result", {"tool_call_id": call_ids, "content": json_values, "index": part_indexes}),
    _part("media", {"mime_type": small_text, "data": json_values, "index": part_indexes}),
    _part(
        "unknown",
        {"provider": small_text, "kind": small_text, "raw": json_values, "index": part_indexes},
    ),
)
openai_calls = st.builds(
    tc,
    part_indexes,
    call_ids,
    names,
    st.sampled_from([None, "", "{", "}", '{"a": 1}']),
)
chunk_fields = st.fixed_dictionaries(
    {},
    optional={
        "content": st.one_of(
            small_text,
            st.lists(
                st.one_of(
                    small_text,
                    st.fixed_dictionaries({"type": st.just("text"), "text": small_text}),
                    st.dictionaries(keys, json_values, min_size=1, max_size=2),
                ),
                max_size=2,
            ),
        ),
        "reasoning_content": st.one_of(st.none(), small_text),
        "tool_calls": st.lists(openai_calls, max_size=2),
        "parts": st.lists(part_dicts, max_size=4),
        "usage_metadata": usage_dicts,
        "finish_reason": st.sampled_from([None, "", "stop", "tool_calls", "MAX_TOKENS"]),
        "metadata": json_dicts,
        "provider_metadata": json_dicts,
        "logprobs": st.one_of(st.none(), json_values),
        "prompt_token_ids": st.one_of(st.none(), st.lists(st.integers(0, 9), max_size=3)),
        "completion_token_ids": st.one_of(st.none(), st.lists(st.integers(0, 9), max_size=3)),
        "response_id": st.sampled_from([None, "", "r1", "r2"]),
        "response_model": st.sampled_from([None, "m1", "m2"]),
        "refusal": st.one_of(st.none(), small_text),
        "status": st.sampled_from([None, "complete", "incomplete"]),
        "anomalies": st.lists(
            st.fixed_dictionaries({"code": st.just("truncated"), "detail": small_text}),
            max_size=1,
        ),
        "choice_index": st.sampled_from([None, 0, 1]),
    },
)
chunk_lists = st.lists(chunk_fields, min_size=1, max_size=5)


def _folded(messages_module: ModuleType, fields_list: list[dict[str, Any]]) -> Any:
    chunks = [messages_module.AssistantMessageChunk(**fields) for fields in fields_list]
    return fold_plus(chunks)


@settings(max_examples=max(300, settings.default.max_examples))
@given(fields_list=chunk_lists)
def test_folded_chunks_round_trip(
    messages_module: ModuleType, fields_list: list[dict[str, Any]]
) -> None:
    folded = _folded(messages_module, fields_list)
    assert_round_trips(folded)
    assert_round_trips(folded.to_message())


@pytest.mark.single_run
@settings(max_examples=max(300, settings.default.max_examples))
@given(fields_list=chunk_lists)
def test_folded_chunks_round_trip_alike_on_every_backend(
    fields_list: list[dict[str, Any]],
) -> None:
    """The same chunks give the same message bytes on every backend, and each backend reads
    back the other's ``to_dict()`` to those bytes."""
    dumped = {}
    for name in BACKENDS:
        dumped[name] = _folded(MESSAGES[name], fields_list).to_message().to_dict()
    reference = _bytes(dumped[BACKENDS[0]])
    for writer in BACKENDS:
        assert _bytes(dumped[writer]) == reference
        for reader in BACKENDS:
            again = MESSAGES[reader].AssistantMessage.from_dict(dumped[writer])
            assert _bytes(again.to_dict()) == reference


# ---------------------------------------------------------------------------------------------
# The engine and the twin rebuild a described leaf alike (raw leaves, any values)


@pytest.mark.single_run
@pytest.mark.skipif(RUST is None, reason="the Rust backend is not under test")
@settings(max_examples=max(500, settings.default.max_examples))
@given(leaf_streams(), st.lists(st.booleans(), min_size=10, max_size=10), st.sampled_from(OPTIONS))
def test_described_leaves_fold_alike(
    stream: tuple[str, list[dict[str, Any]]], marks: list[bool], options: dict[str, Any]
) -> None:
    """Leaves marked ``described`` (the first one always, later ones at random) folded by
    ``+`` and by ``fold_chunks`` with every option: the same data or the same error on the
    engine and the twin."""
    family, leaves = stream
    leaves = [
        {**leaf, "described": True} if i == 0 or marks[i] else leaf for i, leaf in enumerate(leaves)
    ]
    _both(lambda m: _fold_plus(m, family, leaves))

    def build(module: ModuleType) -> Any:
        families = _families(family, leaves)
        chunks = [_chunk(module, f, leaf) for f, leaf in zip(families, leaves)]
        return module.fold_chunks(chunks, **options)

    _both(build)
