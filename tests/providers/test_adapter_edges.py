"""Adapters at the edges on both backends:

- a stream read with the wrong provider is an ``EventError`` naming the provider its events
  look like; an event with no key its adapter knows is an ``unrecognized_event`` anomaly
  (spec §8);
- two responses glued into one stream: the event that starts the second is a
  ``new_response`` anomaly, and only the first response is merged (spec §6);
- ids, models, roles, stop reasons and tool names that are not strings are an ``EventError``
  naming the field; whatever an adapter accepts round-trips through ``to_dict`` /
  ``from_dict``.
"""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any, Callable

import orjson
import pytest
from _support.cli import assert_fails, fastmerge_cli
from _support.corpus import KINDS, assert_backends_agree, path_of
from hypothesis import given, settings
from hypothesis import strategies as st

from fastmerge.errors import AnomalyError, EventError

FOLDER = {provider: folder for folder, provider in reversed(list(KINDS.items()))}


def raw(provider: str, name: str) -> bytes:
    """A recorded stream's bytes, ending with a newline (so two can be glued)."""
    data = path_of(FOLDER[provider], name).read_bytes()
    return data if data.endswith(b"\n") else data + b"\n"


def events_of(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.splitlines() if line.strip()]


def dump(messages: Any) -> bytes:
    return orjson.dumps([m.to_dict() for m in messages])


# ---------------------------------------------------------------------------------------------
# 8. Wrong provider, unrecognized events

WRONG = [
    ("anthropic", "sonnet45-text", "openai-chat"),
    ("openai-chat", "gpt4o-plain-text-usage", "anthropic"),
    ("openai-chat", "gpt4o-plain-text-usage", "ollama"),
    ("ollama", "generate-deepseek-v31-turbo-text", "gemini"),
    ("ollama", "generate-deepseek-v31-turbo-text", "openai-chat"),
    ("gemini", "gemini20-flash-plain-text", "openai-chat"),
    ("bedrock-converse", "nova-micro-text", "openai-responses"),
    ("openai-responses", "gpt4o-text", "bedrock-converse"),
    ("openai-responses", "gpt4o-text", "anthropic"),
]


@pytest.mark.parametrize(("right", "name", "wrong"), WRONG)
def test_wrong_provider_is_an_event_error(
    aggregate_module: ModuleType, right: str, name: str, wrong: str
) -> None:
    data = raw(right, name)
    count = len(events_of(data))
    want = (
        f"event {count}: none of the stream's {count} events is an event of {wrong!r}; they "
        f"look like events of {right!r}: pass provider={right!r}"
    )
    for given_ in (data, events_of(data)):
        with pytest.raises(EventError) as info:
            aggregate_module.aggregate(given_, wrong)
        assert str(info.value) == want
    agg = aggregate_module.Aggregator(wrong)
    agg.feed(data)
    with pytest.raises(EventError) as info:
        agg.finish()
    assert (info.value.event, str(info.value)) == (count, want)


def test_cli_names_the_provider_the_stream_looks_like(backend_name: str) -> None:
    """The CLI said nothing and exited 0 with an empty message; the library's ``provider=``
    is its ``--provider``."""
    path = path_of("anthropic_messages", "sonnet45-text")
    proc = fastmerge_cli(backend_name, "merge", "--provider", "openai-chat", path)
    assert assert_fails(proc) == (
        f"fastmerge: error: {path}: event 12: none of the stream's 12 events is an event of "
        "'openai-chat'; they look like events of 'anthropic': pass --provider anthropic\n"
    )


def test_wrong_provider_of_no_known_provider(aggregate_module: ModuleType) -> None:
    with pytest.raises(EventError) as info:
        aggregate_module.aggregate([{"x": 1, "y": 2}, {"z": 3}], "openai-chat")
    assert str(info.value) == (
        "event 2: none of the stream's 2 events is an event of 'openai-chat' "
        "(keys of the first: 'x', 'y')"
    )


def test_unrecognized_event_is_an_anomaly(aggregate_module: ModuleType) -> None:
    events = events_of(raw("openai-chat", "gpt4o-plain-text-usage"))
    foreign = {"type": "ping", "note": "not a chunk"}
    noisy = aggregate_module.aggregate([*events[:2], foreign, *events[2:]], "openai-chat")
    clean = aggregate_module.aggregate(events, "openai-chat")
    data = noisy.to_dict()
    assert data.pop("anomalies") == [
        {
            "code": "unrecognized_event",
            "detail": "event 3 has no key the openai-chat adapter reads (keys: 'type', "
            "'note'); it was not read",
        }
    ]
    expected = clean.to_dict()
    assert expected.pop("anomalies") == []
    assert data == expected
    with pytest.raises(AnomalyError) as info:
        aggregate_module.aggregate([*events[:2], foreign], "openai-chat", strict=True)
    assert (info.value.code, info.value.detail) == (
        "unrecognized_event",
        "event 3 has no key the openai-chat adapter reads (keys: 'type', 'note'); it was not read",
    )


ANTHROPIC_START = {
    "type": "message_start",
    "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude"},
}
RESPONSES_CREATED = {
    "type": "response.created",
    "sequence_number": 0,
    "response": {"id": "resp_1", "model": "gpt", "output": []},
}


@pytest.mark.parametrize(
    ("provider", "first", "event", "keys"),
    [
        ("anthropic", ANTHROPIC_START, {"message": {}}, "'message'"),
        ("anthropic", ANTHROPIC_START, {"type": 5}, "'type'"),
        ("anthropic", ANTHROPIC_START, {"type": "response.created"}, "'type'"),
        ("openai-responses", RESPONSES_CREATED, {"type": 5}, "'type'"),
        ("openai-responses", RESPONSES_CREATED, {"type": "message_start"}, "'type'"),
        (
            "bedrock-converse",
            {"messageStart": {"role": "assistant"}},
            {"a": {}, "b": {}},
            "'a', 'b'",
        ),
        ("bedrock-converse", {"messageStart": {"role": "assistant"}}, {"text": "x"}, "'text'"),
        ("gemini", {"responseId": "r"}, {"choices": []}, "'choices'"),
        ("ollama", {"response": "a", "done": False}, {"model": "m"}, "'model'"),
    ],
)
def test_events_of_no_known_key(
    aggregate_module: ModuleType, provider: str, first: Any, event: Any, keys: str
) -> None:
    message = aggregate_module.aggregate([first, event], provider)
    assert message.to_dict()["anomalies"] == [
        {
            "code": "unrecognized_event",
            "detail": f"event 2 has no key the {provider} adapter reads (keys: {keys}); "
            "it was not read",
        }
    ]


# ---------------------------------------------------------------------------------------------
# 9. Two responses glued into one stream

GLUED = [
    (
        "openai-chat",
        "gpt4o-plain-text-usage",
        "gpt4o-refusal",
        34,
        "id 'chatcmpl-ABfw4IfQfCCrcuybFm41wJyxjbkz7' after a choice finished with id "
        "'chatcmpl-ABfw031mOJeYCSHe4yI2ZjOA6kMJL'",
    ),
    (
        "openai-chat",
        "groq-compound-web-search",  # a new id on every chunk before the finish
        "deepseek-reasoner-reasoning-content",
        227,
        "id '33be18fc-3842-486c-8c29-dd8e578f7f20' after a choice finished with id 'stub'",
    ),
    (
        "openai-chat",
        "gpt4o-n3-interleaved-choices",
        "gpt4o-single-tool-call",
        50,
        "id 'chatcmpl-ABfw8AOXnoa2kzy11vVTSjuQhHCQr' after a choice finished with id "
        "'chatcmpl-ABfw2KKFuVXmEJgVwYfBvejMAdWtq'",
    ),
    ("anthropic", "sonnet45-text", "haiku45-text-then-tool-use", 13, "a second message_start"),
    ("openai-responses", "gpt4o-text", "gpt4o-function-call", 16, "a second response.created"),
    (
        "gemini",
        "gemini20-flash-plain-text",
        "gemini3-pro-text-after-tool-result",
        4,
        "responseId 'REVVabaiCdq4qtsPnZu96Qo' after a candidate finished with "
        "'w1peaMz6INOvnvgPgYfPiQY'",
    ),
    (
        "bedrock-converse",
        "nova-micro-text",
        "nova-micro-tool-use",
        34,
        "messageStart after messageStop",
    ),
    (
        "ollama",
        "generate-deepseek-v31-turbo-text",
        "generate-qwen3-8b-local-inline-think",
        13,
        "an object after done: true",
    ),
]


@pytest.mark.parametrize(("provider", "first", "second", "at", "reason"), GLUED)
def test_two_responses_glued_give_the_first(
    aggregate_module: ModuleType, provider: str, first: str, second: str, at: int, reason: str
) -> None:
    one = raw(provider, first)
    glued = one + raw(provider, second)
    alone = [m.to_dict() for m in aggregate_module.aggregate_choices(one, provider)]
    anomaly = {
        "code": "new_response",
        "detail": f"event {at} starts another response ({reason}): it and the events after "
        "it are not merged into this message",
    }
    want = [m | {"anomalies": [*m["anomalies"], anomaly]} for m in alone]
    for given_ in (glued, events_of(glued)):
        got = aggregate_module.aggregate_choices(given_, provider)
        assert [m.to_dict() for m in got] == want
        assert {m.status for m in got} == {"complete"}
    with pytest.raises(AnomalyError) as info:
        aggregate_module.aggregate_choices(glued, provider, strict=True)
    assert (info.value.code, info.value.detail) == ("new_response", anomaly["detail"])


@pytest.mark.parametrize(
    ("provider", "name"),
    [
        ("openai-chat", "groq-compound-web-search"),
        ("openai-chat", "gpt5-trailing-moderation-chunk"),
    ],
)
def test_one_response_is_no_new_response(
    aggregate_module: ModuleType, provider: str, name: str
) -> None:
    """Groq compound's per-chunk ids and the chunks after the finish (usage, moderation) that
    repeat its id are the same response."""
    message = aggregate_module.aggregate(raw(provider, name), provider)
    assert [a["code"] for a in message.to_dict()["anomalies"]] == []


def test_new_response_event_is_kept_for_a_splitter() -> None:
    """The twin's aggregator keeps the number of the event that started another response
    (the engine's ``AggregatorCore::new_response_at``, tested by cargo)."""
    from fastmerge._pure.aggregate import AggregatorCore

    core = AggregatorCore("ollama")
    for event in [{"response": "a", "done": True}, {"response": "b", "done": True}]:
        core.add(event)
    assert core.new_response_at == 2
    assert [[p["text"] for p in m["parts"]] for m in core.finish()] == [["a"]]


# events of every wire format, for streams read with any provider
MIXED = [
    {"id": "a", "choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": None}]},
    {"id": "a", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    {"id": "b", "choices": [{"index": 0, "delta": {"content": "y"}}]},
    {"id": "a", "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 2}},
    ANTHROPIC_START,
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "z"}},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}},
    {"type": "message_stop"},
    {"type": "ping"},
    RESPONSES_CREATED,
    {"type": "response.completed", "response": {"id": "resp_1", "output": []}},
    {"type": "response.content_part.added"},
    {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": "g"}]}, "finishReason": "STOP"}
        ],
        "responseId": "r1",
    },
    {"candidates": [{"content": {"parts": [{"text": "h"}]}}], "responseId": "r2"},
    {"messageStart": {"role": "assistant"}},
    {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "w"}}},
    {"messageStop": {"stopReason": "end_turn"}},
    {"model": "q", "response": "o", "done": False},
    {"model": "q", "response": "", "done": True, "done_reason": "stop"},
    {"x": 1},
]


@pytest.mark.differential
@settings(max_examples=300, deadline=None)
@given(
    events=st.lists(st.sampled_from(MIXED), max_size=10),
    provider=st.sampled_from(["auto", *sorted(FOLDER)]),
    strict=st.booleans(),
)
def test_backends_agree_on_mixed_streams(events: list[Any], provider: str, strict: bool) -> None:
    assert_backends_agree(events, provider, strict=strict)


# ---------------------------------------------------------------------------------------------
# 17. Ids, models, roles, reasons and tool names are strings


def _chat(value: Any, where: str) -> list[dict[str, Any]]:
    top: dict[str, Any] = {"id": "c1", "model": "m"}
    delta: dict[str, Any] = {"role": "assistant", "content": "hi"}
    call = {"index": 0, "id": "t1", "type": "function", "function": {"name": "f"}}
    finish: Any = "stop"
    if where in ("id", "model"):
        top[where] = value
    elif where == "role":
        delta["role"] = value
    elif where == "finish_reason":
        finish = value
    elif where == "call_id":
        call["id"] = value
    elif where == "call_name":
        call["function"] = {"name": value, "arguments": "{}"}
    elif where == "legacy_name":
        delta["function_call"] = {"name": value, "arguments": "{}"}
    if where.startswith("call_"):
        delta["tool_calls"] = [call]
    return [
        {**top, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**top, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
    ]


def _anthropic(value: Any, where: str) -> list[dict[str, Any]]:
    message: dict[str, Any] = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude",
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 3, "cache_read_input_tokens": 2, "output_tokens": 1},
    }
    block: dict[str, Any] = {"type": "tool_use", "id": "t1", "name": "f", "input": {}}
    stop: Any = "tool_use"
    if where in message:
        message[where] = value
    elif where == "delta_stop_reason":
        stop = value
    else:
        block[where[len("block_") :]] = value
    return [
        {"type": "message_start", "message": message},
        {"type": "content_block_start", "index": 0, "content_block": block},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 5}},
        {"type": "message_stop"},
    ]


def _responses(value: Any, where: str) -> list[dict[str, Any]]:
    response: dict[str, Any] = {"id": "resp_1", "model": "gpt", "output": []}
    item: dict[str, Any] = {"type": "function_call", "id": "fc_1", "call_id": "t1", "name": "f"}
    details: dict[str, Any] = {"reason": "max_output_tokens"}
    if where in ("id", "model"):
        response[where] = value
    elif where == "reason":
        details["reason"] = value
    else:
        item[where] = value
    return [
        {"type": "response.created", "response": response},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {
            "type": "response.incomplete",
            "response": {"id": "resp_1", "incomplete_details": details, "output": []},
        },
    ]


def _gemini(value: Any, where: str) -> list[dict[str, Any]]:
    top: dict[str, Any] = {"responseId": "r1", "modelVersion": "g"}
    content: dict[str, Any] = {"role": "model", "parts": [{"text": "hi"}]}
    call: dict[str, Any] = {"name": "f", "args": {}, "id": "t1"}
    finish: Any = "STOP"
    if where in top:
        top[where] = value
    elif where == "role":
        content["role"] = value
    elif where == "finishReason":
        finish = value
    else:
        call[where] = value
    last = {"role": "model", "parts": [{"functionCall": call}]}
    return [
        {"candidates": [{"content": content, "index": 0}], **top},
        {"candidates": [{"content": last, "finishReason": finish, "index": 0}], **top},
    ]


def _bedrock(value: Any, where: str) -> list[dict[str, Any]]:
    role: Any = "assistant"
    tool: dict[str, Any] = {"toolUseId": "t1", "name": "f"}
    stop: Any = "tool_use"
    if where == "role":
        role = value
    elif where == "stopReason":
        stop = value
    else:
        tool[where] = value
    return [
        {"messageStart": {"role": role}},
        {"contentBlockStart": {"contentBlockIndex": 0, "start": {"toolUse": tool}}},
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"messageStop": {"stopReason": stop}},
    ]


def _ollama(value: Any, where: str) -> list[dict[str, Any]]:
    first: dict[str, Any] = {"model": "q", "message": {"role": "assistant", "content": "hi"}}
    call: dict[str, Any] = {"id": "t1", "function": {"name": "f", "arguments": {}}}
    last: dict[str, Any] = {"model": "q", "done": True, "done_reason": "stop"}
    if where == "model":
        first["model"] = value
    elif where == "role":
        first["message"]["role"] = value
    elif where == "done_reason":
        last["done_reason"] = value
    elif where == "id":
        call["id"] = value
    else:
        call["function"]["name"] = value
    first["done"] = False
    return [first, {"message": {"content": "", "tool_calls": [call]}, "done": False}, last]


# provider -> its stream builder, and per field: (the field's name for the builder, the event
# that carries it, the field as the error names it)
FIELDS: dict[str, tuple[Callable[[Any, str], list[dict[str, Any]]], list[tuple[str, int, str]]]]
FIELDS = {
    "openai-chat": (
        _chat,
        [
            ("id", 1, "id"),
            ("model", 1, "model"),
            ("role", 1, "choices[0].delta.role"),
            ("finish_reason", 2, "choices[0].finish_reason"),
            ("call_id", 1, "choices[0].delta.tool_calls[0].id"),
            ("call_name", 1, "choices[0].delta.tool_calls[0].function.name"),
            ("legacy_name", 1, "choices[0].delta.function_call.name"),
        ],
    ),
    "anthropic": (
        _anthropic,
        [
            ("role", 1, "message_start.message.role"),
            ("id", 1, "message_start.message.id"),
            ("model", 1, "message_start.message.model"),
            ("stop_reason", 1, "message_start.message.stop_reason"),
            ("delta_stop_reason", 4, "message_delta.delta.stop_reason"),
            ("block_id", 2, "content_block_start.content_block.id"),
            ("block_name", 2, "content_block_start.content_block.name"),
        ],
    ),
    "openai-responses": (
        _responses,
        [
            ("id", 1, "response.created.response.id"),
            ("model", 1, "response.created.response.model"),
            ("reason", 3, "response.incomplete.response.incomplete_details.reason"),
            ("call_id", 2, "response.output_item.added.item.call_id"),
            ("name", 2, "response.output_item.added.item.name"),
        ],
    ),
    "gemini": (
        _gemini,
        [
            ("responseId", 1, "responseId"),
            ("modelVersion", 1, "modelVersion"),
            ("role", 1, "candidates[0].content.role"),
            ("finishReason", 2, "candidates[0].finishReason"),
            ("name", 2, "candidates[0].content.parts[0].functionCall.name"),
            ("id", 2, "candidates[0].content.parts[0].functionCall.id"),
        ],
    ),
    "bedrock-converse": (
        _bedrock,
        [
            ("role", 1, "messageStart.role"),
            ("stopReason", 4, "messageStop.stopReason"),
            ("toolUseId", 2, "contentBlockStart.start.toolUse.toolUseId"),
            ("name", 2, "contentBlockStart.start.toolUse.name"),
        ],
    ),
    "ollama": (
        _ollama,
        [
            ("model", 1, "model"),
            ("role", 1, "message.role"),
            ("done_reason", 3, "done_reason"),
            ("id", 2, "message.tool_calls[].id"),
            ("name", 2, "message.tool_calls[].function.name"),
        ],
    ),
}
CASES = [
    (provider, field, event, named)
    for provider, (_, fields) in FIELDS.items()
    for field, event, named in fields
]
NOT_STRINGS = [7, ["a"], {"a": 1}, True]
# Gemini names the kind it got (its own check of these fields, kept as it was)
GEMINI_KIND = {int: "number", list: "array", dict: "object", bool: "boolean"}


def _not_a_string(provider: str, named: str, value: Any) -> str:
    if provider == "gemini":
        return f"{provider}: {named} must be a string, got {GEMINI_KIND[type(value)]}"
    return f"{provider}: {named} is not a string"


@pytest.mark.parametrize(("provider", "field", "event", "named"), CASES)
def test_strings_are_accepted(
    aggregate_module: ModuleType, provider: str, field: str, event: int, named: str
) -> None:
    """The builders' streams are good as they are: each field holds a string."""
    build = FIELDS[provider][0]
    message = aggregate_module.aggregate(build("x", field), provider)
    assert message.status in ("complete", "incomplete")


@pytest.mark.parametrize("value", NOT_STRINGS, ids=["int", "list", "dict", "bool"])
@pytest.mark.parametrize(("provider", "field", "event", "named"), CASES)
def test_a_non_string_is_an_event_error(
    aggregate_module: ModuleType, provider: str, field: str, event: int, named: str, value: Any
) -> None:
    events = FIELDS[provider][0](value, field)
    lines = b"".join(json.dumps(e).encode() + b"\n" for e in events)
    detail = _not_a_string(provider, named, value)
    for given_ in (events, lines):
        with pytest.raises(EventError) as info:
            aggregate_module.aggregate(given_, provider, strict=True)
        assert (info.value.event, info.value.detail) == (event, detail)
        # not strict: the event is skipped with an anomaly (spec §8)
        anomaly = {"code": "unreadable_event", "detail": f"event {event}: {detail}"}
        try:
            anomalies = aggregate_module.aggregate(given_, provider).anomalies
        except EventError as exc:  # it was the one event: none read is an error (spec §6)
            assert str(exc) == f"no event could be read: {anomaly['detail']}"
        else:
            assert anomaly in anomalies


def test_anthropic_cache_read_usage_round_trips(
    aggregate_module: ModuleType, messages_module: ModuleType
) -> None:
    message = aggregate_module.aggregate(_anthropic("msg_1", "id"), "anthropic")
    assert message.usage_metadata.cache_read_tokens == 2
    again = messages_module.AssistantMessage.from_dict(message.to_dict())
    assert again == message
    assert orjson.dumps(again.to_dict()) == orjson.dumps(message.to_dict())


JSONISH = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


@settings(max_examples=300, deadline=None)
@given(case=st.sampled_from(CASES), value=JSONISH)
def test_any_value_is_an_error_or_round_trips(
    aggregate_module: ModuleType, messages_module: ModuleType, case: Any, value: Any
) -> None:
    provider, field, _, _ = case
    events = FIELDS[provider][0](value, field)
    try:
        messages = aggregate_module.aggregate_choices(events, provider)
    except EventError:
        assert value is not None and not isinstance(value, str)
        return
    for message in messages:
        data = message.to_dict()
        again = messages_module.AssistantMessage.from_dict(data)
        assert again == message
        assert orjson.dumps(again.to_dict()) == orjson.dumps(data)
