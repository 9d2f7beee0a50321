"""Anthropic Messages events built by hand (message_start, blocks, deltas, the end) and the corpus
streams' events, for the adapter tests."""

from __future__ import annotations

import json
from typing import Any

from _support.corpus import (
    path_of,
)

KIND = "anthropic_messages"


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
