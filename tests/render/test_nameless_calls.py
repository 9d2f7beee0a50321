"""A tool call whose fragments never carried a name (E107): no provider accepts a call without
a name, so every rendering (``to_provider``) and every request (``Session.to_request``) leaves
it out, as ``tool_calls`` does a call with neither name nor id; the message keeps it in its
parts with its anomaly, so nothing is lost. (``fastmerge.litellm``: in
tests/frameworks/test_litellm_fields.py.)"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from _support.anthropic import block, delta, end, start, stop, text
from _support.replay_validators import problems

import fastmerge
from fastmerge.render import RENDERERS
from fastmerge.session import Session

PROVIDERS = list(RENDERERS)
ARGS = '{"a":1}'


def _chunk(
    calls: list[dict[str, Any]] | None = None,
    content: str | None = None,
    finish: str | None = None,
) -> dict[str, Any]:
    d: dict[str, Any] = {}
    if content is not None:
        d["content"] = content
    if calls is not None:
        d["tool_calls"] = calls
    choice = {"index": 0, "delta": d, "finish_reason": finish}
    return {"id": "chatcmpl-e107", "object": "chat.completion.chunk", "created": 1,
            "model": "gpt-4o", "choices": [choice]}  # fmt: skip


NAMED = {"index": 1, "id": "call_2", "type": "function",
         "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}  # fmt: skip

#: streams holding a nameless call (index 0) and, but for the cut one, a named call beside it
STREAMS: dict[str, tuple[str, list[dict[str, Any]]]] = {
    "arguments only": (
        "openai-chat",
        [
            _chunk(content="Let me check."),
            _chunk([{"index": 0, "function": {"arguments": '{"a":'}}]),
            _chunk([{"index": 0, "function": {"arguments": "1}"}}]),
            _chunk([NAMED]),
            _chunk(finish="tool_calls"),
        ],
    ),
    "an id, never a name": (
        "openai-chat",
        [
            _chunk(content="Let me check."),
            _chunk(
                [{"index": 0, "id": "call_1", "type": "function", "function": {"arguments": ARGS}}]
            ),  # fmt: skip
            _chunk([NAMED]),
            _chunk(finish="tool_calls"),
        ],
    ),
    "cut before the name": (
        "openai-chat",
        [_chunk(content="Let me check."), _chunk([{"index": 0, "function": {"arguments": ARGS}}])],
    ),
    "anthropic, no block start": (
        "anthropic",
        [
            start(),
            block(0, type="text", text=""),
            text(0, "Let me check."),
            stop(0),
            delta(1, type="input_json_delta", partial_json=ARGS),
            stop(1),
            block(2, type="tool_use", id="call_2", name="get_weather", input={}),
            delta(2, type="input_json_delta", partial_json='{"city":"Paris"}'),
            stop(2),
            *end("tool_use"),
        ],
    ),
}


def _rendered_calls(provider: str, out: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool calls of a provider's rendered response, each as ``{"name", ...}``."""
    if provider == "openai-chat":
        calls = out["choices"][0]["message"].get("tool_calls") or []
        return [{"name": c["function"]["name"], **c} for c in calls]
    if provider == "openai-responses":
        return [o for o in out["output"] if o["type"] in ("function_call", "custom_tool_call")]
    if provider == "anthropic":
        return [b for b in out["content"] if b["type"] == "tool_use"]
    if provider == "gemini":
        parts = out["candidates"][0]["content"]["parts"]
        return [p["functionCall"] for p in parts if "functionCall" in p]
    if provider == "bedrock-converse":
        content = out["output"]["message"]["content"]
        return [b["toolUse"] for b in content if "toolUse" in b]
    assert provider == "ollama"
    calls = out["message"].get("tool_calls") or []
    return [c["function"] for c in calls]


def _message(name: str) -> Any:
    provider, events = STREAMS[name]
    return fastmerge.aggregate(copy.deepcopy(events), provider)


@pytest.mark.parametrize("name", list(STREAMS))
def test_the_message_keeps_the_nameless_call_with_its_anomaly(name: str) -> None:
    """E107: the merge keeps the call, its arguments as sent, and says why it has no name."""
    message = _message(name)
    calls = [p for p in message.parts if isinstance(p, fastmerge.ToolCallPart)]
    nameless = [c for c in calls if c.name is None]
    assert [c.arguments for c in nameless] == [ARGS]
    codes = [a["code"] for a in message.anomalies]
    if name == "an id, never a name":
        assert nameless[0].id == "call_1"
        assert codes == []
    else:
        assert nameless[0].id is None
        assert "delta_before_start" in codes
        assert message.tool_calls is None or [c.name for c in message.tool_calls] == ["get_weather"]


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("name", list(STREAMS))
def test_no_rendering_holds_a_nameless_call(name: str, provider: str) -> None:
    """E107: every renderer leaves the nameless call out (never ``{"id": null, "name":
    null}``) and keeps the rest: the text, and the named call beside it."""
    message = _message(name)
    out = message.to_provider(provider)
    calls = _rendered_calls(provider, out)
    expected = [] if name == "cut before the name" else ["get_weather"]
    assert [c["name"] for c in calls] == expected
    assert "Let me check." in repr(out)
    again = type(message).from_dict(message.to_dict())  # the same from a stored message
    assert again.to_provider(provider) == out


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_named_call_beside_a_cut_nameless_one_is_not_marked_cut(provider: str) -> None:
    """E107: the ``truncated`` anomaly of a cut nameless call names no other call."""
    events = [
        _chunk([NAMED]),
        _chunk([{"index": 1, "function": {"arguments": ""}}]),
        _chunk([{"index": 3, "function": {"arguments": ARGS}}]),
    ]
    message = fastmerge.aggregate(events, "openai-chat")
    assert "truncated" in [a["code"] for a in message.anomalies]
    calls = _rendered_calls(provider, message.to_provider(provider))
    assert [c["name"] for c in calls] == ["get_weather"]
    assert "truncated" not in calls[0]


def _history(session: Session, name: str) -> None:
    session.append({"role": "user", "content": "Weather in Paris?"})
    session.append(_message(name))
    if name != "cut before the name":
        session.append(fastmerge.ToolMessage(tool_call_id="call_2", content='{"temp": 18}'))
    if name == "an id, never a name":  # a result for the nameless call: left out with it
        session.append(fastmerge.ToolMessage(tool_call_id="call_1", content="?"))
    session.append({"role": "user", "content": "Thanks."})


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("name", list(STREAMS))
def test_a_session_request_leaves_the_nameless_call_out(
    name: str, provider: str, tmp_path: Path
) -> None:
    """E107: ``Session.to_request`` on a SQLite file: a request the provider accepts, without
    the nameless call (nor a result answering it); the log still holds the call."""
    db = tmp_path / "e107.db"
    with Session("e107", db) as session:
        _history(session, name)
        request = session.to_request(provider)
    assert problems(provider, request) == []
    text_ = repr(request)
    assert "'name': None" not in text_ and "'id': None" not in text_
    assert "call_1" not in text_
    assert ("get_weather" in text_) is (name != "cut before the name")
    with Session("e107", db) as again:  # read back from the file: the call is still there
        (assistant,) = [m for m in again.messages() if isinstance(m, fastmerge.AssistantMessage)]
        parts = [p for p in assistant.parts if isinstance(p, fastmerge.ToolCallPart)]
        assert [p.arguments for p in parts if p.name is None] == [ARGS]
