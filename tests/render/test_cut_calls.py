"""Which tool call a stream cut is data in its ``truncated`` anomaly (``tool_call``: the call's
id and / or name as the stream gave them), never read from the anomaly's text: the renderers
mark that call, and only it, as cut, on both backends, and a message read back from its
``to_dict()`` still does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
    assert named == [{"name": "json"}]
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
