"""What the OpenAI Chat adapter tests share: chunk, choice and tool-call builders in the wire
shape, readers of a merged message's calls, part kinds and anomalies, and the round-trip check
(a merged message equals its ``from_dict(to_dict())`` on both backends)."""

from __future__ import annotations

from typing import Any

P = "openai-chat"


def chunk(*choices: dict[str, Any], **top: Any) -> dict[str, Any]:
    event: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 7,
        "model": "gpt-x",
    }
    event.update(top)
    event["choices"] = list(choices)
    return event


def ch(index: int = 0, finish: str | None = None, **delta: Any) -> dict[str, Any]:
    return {"index": index, "delta": delta, "finish_reason": finish}


def tc(index: Any, id: Any = None, name: Any = None, args: Any = None, **extra: Any) -> dict:
    call: dict[str, Any] = {"index": index}
    if id is not None:
        call["id"] = id
        call["type"] = "function"
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    if args is not None:
        function["arguments"] = args
    call["function"] = function
    call.update(extra)
    return call


def calls(message: Any) -> list[tuple[Any, Any, Any]]:
    return [
        (p["id"], p["name"], p["arguments"])
        for p in message.to_dict()["parts"]
        if p["part"] == "tool_call"
    ]


def kinds(message: Any) -> list[str]:
    return [p["part"] for p in message.to_dict()["parts"]]


def anomalies(message: Any) -> list[tuple[str, str]]:
    return [(a["code"], a["detail"]) for a in message.to_dict()["anomalies"]]


USAGE = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}


def assert_round_trip(message: Any) -> None:
    """``from_dict(to_dict())`` gives the message back. (Known, outside this adapter:
    ``from_dict`` of a finished message applies the end-of-stream usage check again, so a
    ``total_mismatch`` anomaly comes back twice; anomalies are compared as a set.)"""
    data = message.to_dict()
    again = type(message).from_dict(data).to_dict()
    strip = {k: v for k, v in data.items() if k != "anomalies"}
    assert {k: v for k, v in again.items() if k != "anomalies"} == strip
    seen = {(a["code"], a["detail"]) for a in again["anomalies"]}
    assert seen == {(a["code"], a["detail"]) for a in data["anomalies"]}
