"""Which tool call a stream cut is data in its ``truncated`` anomaly (``tool_call``: the call's
id and / or name as the stream gave them, and its part's ``provider_index`` where the adapter
keeps one), never read from the anomaly's text: the renderers mark that call, and only it, as
cut, on both backends, and a message read back from its ``to_dict()`` still does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _support.anthropic import block, delta, end, start, stop
from _support.corpus import path_of

import fastmerge
from fastmerge.render._common import cut_calls

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "anthropic_tool_use.sse"


def _chunk(calls: list[dict[str, Any]]) -> dict[str, Any]:
    delta = {"tool_calls": calls}
    return {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": delta}]}


def test_a_cut_anthropic_call_is_named_by_data_and_survives_a_round_trip() -> None:
    data = EXAMPLE.read_bytes()
    cut = fastmerge.aggregate(data[: data.rindex(b"input_json_delta")])
    named = [a["tool_call"] for a in cut.anomalies if "tool_call" in a]
    assert named == [{"name": "json", "provider_index": 1}]
    again = type(cut).from_dict(cut.to_dict())
    assert again.anomalies == cut.anomalies
    for message in (cut, again):
        block = message.to_provider("anthropic")["content"][1]
        assert block["truncated"] is True
        assert isinstance(block["input"], str)  # the raw arguments, never parsed


def test_the_cut_call_is_the_one_the_data_names_not_one_the_text_mentions() -> None:
    """An id-less call ``g`` cut beside a finished call whose id is ``g``: the anomaly's text
    quotes ``'g'``, which a text search took for the finished call's id."""
    events = [
        _chunk(
            [
                {
                    "index": 0,
                    "id": "g",
                    "type": "function",
                    "function": {"name": "x", "arguments": "{}"},
                }
            ]
        ),
        _chunk([{"index": 1, "type": "function", "function": {"name": "g", "arguments": '{"a":'}}]),
    ]
    message = fastmerge.aggregate(events, "openai-chat")
    (truncated,) = [a for a in message.anomalies if a["code"] == "truncated"]
    assert "'g'" in truncated["detail"]
    assert truncated["tool_call"] == {"name": "g"}
    calls = message.to_provider("openai-chat")["choices"][0]["message"]["tool_calls"]
    assert [(c["function"]["name"], c.get("truncated")) for c in calls] == [
        ("x", None),
        ("g", True),
    ]


def test_cut_calls_reads_only_the_data() -> None:
    parts = [
        {"part": "tool_call", "id": "a", "name": "f"},
        {"part": "tool_call", "id": "b", "name": "f"},
        {"part": "tool_call", "id": "c", "name": "h"},
    ]
    detail = "the stream ended inside tool call 'a' ('f')"
    by_id = {"code": "truncated", "detail": detail, "tool_call": {"id": "a", "name": "f"}}
    by_name = {"code": "truncated", "detail": "", "tool_call": {"name": "f"}}
    text_only = {"code": "truncated", "detail": detail}
    other_code = {"code": "synthetic_id", "detail": "", "tool_call": {"id": "c"}}
    assert cut_calls({"parts": parts, "anomalies": [by_id]}) == [parts[0]]
    assert cut_calls({"parts": parts, "anomalies": [by_name]}) == [parts[1]]  # the last 'f'
    assert cut_calls({"parts": parts, "anomalies": [text_only, other_code]}) == []
    assert cut_calls({"parts": parts, "anomalies": [by_id, by_id]}) == [parts[0]]


def test_cut_calls_pins_the_provider_index() -> None:
    parts = [
        {"part": "tool_call", "id": "call_fm_0", "name": "f", "provider_index": 0},
        {"part": "tool_call", "id": "call_fm_1", "name": "f", "provider_index": 1},
        {"part": "tool_call", "id": "k", "name": "f", "provider_index": 1},
    ]
    first = {"code": "truncated", "detail": "", "tool_call": {"name": "f", "provider_index": 0}}
    only_index = {"code": "truncated", "detail": "", "tool_call": {"provider_index": 1}}
    by_id = {
        "code": "truncated",
        "detail": "",
        "tool_call": {"id": "call_fm_1", "provider_index": 1},
    }
    elsewhere = {"code": "truncated", "detail": "", "tool_call": {"name": "f", "provider_index": 7}}
    assert cut_calls({"parts": parts, "anomalies": [first]}) == [parts[0]]
    assert cut_calls({"parts": parts, "anomalies": [only_index]}) == [parts[2]]  # the last at 1
    assert cut_calls({"parts": parts, "anomalies": [by_id]}) == [parts[1]]
    assert cut_calls({"parts": parts, "anomalies": [elsewhere]}) == []


# (corpus folder, stream, wire format): recorded streams with tool calls; every prefix of each
# is a stream cut at that event
CORPUS_CUTS = [
    ("anthropic_messages", "sonnet37-max-tokens-truncated-tool-json", "anthropic"),
    ("anthropic_messages", "haiku45-parallel-tool-use-no-args", "anthropic"),
    ("openai_chat", "gpt4o-parallel-tool-calls", "openai-chat"),
    ("openai_chat", "alibaba-qwen3-max-tool-call-empty-id-continuations", "openai-chat"),
    ("openai_responses", "gpt4o-function-call", "openai-responses"),
    ("openai_responses", "gpt5-reasoning-function-call-usage", "openai-responses"),
    ("gemini", "vertex-gemini31-pro-partial-args-streaming", "gemini"),
    ("gemini", "vertex-gemini31-pro-partial-args-nested", "gemini"),
    ("bedrock_converse", "nova-micro-tool-use", "bedrock-converse"),
]


def _marked(value: Any) -> int:
    """How many objects of a rendered response carry the cut marker."""
    if isinstance(value, dict):
        return (value.get("truncated") is True) + sum(_marked(v) for v in value.values())
    if isinstance(value, list):
        return sum(_marked(v) for v in value)
    return 0


def _named_call(data: dict[str, Any], named: dict[str, Any]) -> dict[str, Any]:
    """The one tool-call part whose fields equal every field the anomaly names."""
    calls = [p for p in data["parts"] if p["part"] == "tool_call"]
    matches = [c for c in calls if all(c.get(key) == value for key, value in named.items())]
    assert len(matches) == 1, (named, calls)
    return matches[0]


@pytest.mark.parametrize(
    ("folder", "name", "provider"), CORPUS_CUTS, ids=[c[1] for c in CORPUS_CUTS]
)
def test_every_cut_of_a_corpus_stream_names_its_cut_call_as_data(
    folder: str, name: str, provider: str
) -> None:
    lines = path_of(folder, name).read_bytes().splitlines(keepends=True)
    cuts_named = 0
    for count in range(1, len(lines) + 1):
        message = fastmerge.aggregate(b"".join(lines[:count]), provider)
        data = message.to_dict()
        expected: list[dict[str, Any]] = []
        for anomaly in data["anomalies"]:
            if anomaly["code"] != "truncated":
                continue
            named = anomaly.get("tool_call")
            if named is None:  # a cut text or reasoning block: its detail names no call
                assert not any(w in anomaly["detail"] for w in ("tool", "call")), anomaly
                continue
            assert set(named) <= {"id", "name", "provider_index"}
            if provider != "openai-chat":
                assert type(named["provider_index"]) is int
            call = _named_call(data, named)
            if not any(call is seen for seen in expected):
                expected.append(call)
        cuts_named += bool(expected)
        assert cut_calls(data) == expected
        rendered = message.to_provider(provider)
        assert _marked(rendered) == len(expected)
        again = type(message).from_dict(data)
        assert again.anomalies == message.anomalies
        assert again.to_provider(provider) == rendered
    assert cuts_named > 0  # some cut fell inside a call


def _anthropic(*events: Any) -> Any:
    return fastmerge.aggregate([start(), *events], "anthropic")


def _cut_names(message: Any) -> list[tuple[str, bool]]:
    content = message.to_provider("anthropic")["content"]
    return [(b["name"], b.get("truncated", False)) for b in content if b["type"] == "tool_use"]


def test_an_anthropic_cut_call_named_like_a_finished_calls_id() -> None:
    """The cut call is named ``f`` and a finished call's id is ``f``: the detail quotes ``'f'``,
    which a text search took for the finished call's id."""
    message = _anthropic(
        block(0, type="tool_use", id="f", name="x", input={}),
        delta(0, type="input_json_delta", partial_json="{}"),
        stop(0),
        block(1, type="tool_use", id="toolu_2", name="f", input={}),
        delta(1, type="input_json_delta", partial_json='{"a": '),
    )
    (truncated,) = [a for a in message.anomalies if a["code"] == "truncated"]
    assert "'f'" in truncated["detail"]
    assert truncated["tool_call"] == {"name": "f", "provider_index": 1}
    assert _cut_names(message) == [("x", False), ("f", True)]


def test_anthropic_calls_whose_names_are_prefixes_of_each_other() -> None:
    message = _anthropic(
        block(0, type="tool_use", id="toolu_1", name="get", input={}),
        delta(0, type="input_json_delta", partial_json="{}"),
        stop(0),
        block(1, type="tool_use", id="toolu_2", name="get_weather", input={}),
        delta(1, type="input_json_delta", partial_json='{"city": "Par'),
        block(2, type="tool_use", id="toolu_3", name="get_weather_now", input={}),
        delta(2, type="input_json_delta", partial_json="{}"),
        stop(2),
        *end("max_tokens"),
    )
    assert _cut_names(message) == [
        ("get", False),
        ("get_weather", True),
        ("get_weather_now", False),
    ]


def test_two_anthropic_calls_of_one_name_cut_together_are_both_cut() -> None:
    """By name alone the second anomaly would name the same (last) call again."""
    message = _anthropic(
        block(0, type="tool_use", id="toolu_1", name="get", input={}),
        delta(0, type="input_json_delta", partial_json='{"a": 1'),
        block(1, type="tool_use", id="toolu_2", name="get", input={}),
        delta(1, type="input_json_delta", partial_json='{"b": 2'),
        block(2, type="tool_use", id="toolu_3", name="get", input={}),
        delta(2, type="input_json_delta", partial_json="{}"),
        stop(2),
    )
    named = [a["tool_call"] for a in message.anomalies if "tool_call" in a]
    assert named == [{"name": "get", "provider_index": 0}, {"name": "get", "provider_index": 1}]
    assert _cut_names(message) == [("get", True), ("get", True), ("get", False)]
    again = type(message).from_dict(message.to_dict())
    assert _cut_names(again) == _cut_names(message)
