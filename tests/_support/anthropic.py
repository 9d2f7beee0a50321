"""Anthropic Messages events built by hand (message_start, blocks, deltas, the end), the corpus
streams' events, and readers of a merged message (its parts, anomalies, sorted JSON), for the
adapter tests."""

from __future__ import annotations

import json
from typing import Any

import orjson

import fastmerge
from _support.corpus import (
    path_of,
)

KIND = "anthropic_messages"
P = "anthropic"


def events_of(name: str) -> list[dict[str, Any]]:
    text = path_of(KIND, name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def start(usage: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage or {"input_tokens": 10, "output_tokens": 1},
        **extra,
    }
    return {"type": "message_start", "message": message}


def block(index: int, **content_block: Any) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": content_block}


def delta(index: int, **d: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": d}


def text(index: int, t: str) -> dict[str, Any]:
    return delta(index, type="text_delta", text=t)


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def end(reason: str = "end_turn", usage: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": reason, "stop_sequence": None},
            "usage": usage or {"output_tokens": 5},
        },
        {"type": "message_stop"},
    ]


def js(index: int, piece: str) -> dict[str, Any]:
    return delta(index, type="input_json_delta", partial_json=piece)


PING = {"type": "ping"}
TEXT_STREAM = [
    start(),
    block(0, type="text", text=""),
    PING,
    text(0, "Hé"),
    text(0, "llo 👋"),
    stop(0),
    *end(),
]


def agg(events: list[dict[str, Any]], **options: Any) -> Any:
    return fastmerge.aggregate(events, P, **options)


def parts(message: Any) -> list[dict[str, Any]]:
    return [p.to_dict() for p in message.parts]


def anomalies(message: Any) -> list[tuple[str, str]]:
    return [(a["code"], a["detail"]) for a in message.to_dict()["anomalies"]]


def dump(message: Any) -> bytes:
    return orjson.dumps(message.to_dict(), option=orjson.OPT_SORT_KEYS)
