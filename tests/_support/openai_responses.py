"""OpenAI Responses events built by hand (the response's own events, items added and done,
text and argument deltas) and readers of a merged message, for the adapter tests."""

from __future__ import annotations

from typing import Any

import fastmerge

P = "openai-responses"


def created(**extra: Any) -> dict[str, Any]:
    response = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1700000000,
        "status": "in_progress",
        "error": None,
        "incomplete_details": None,
        "model": "gpt-x",
        "output": [],
        "usage": None,
        "metadata": {},
    }
    response.update(extra)
    return {"type": "response.created", "sequence_number": 0, "response": response}


def terminal(kind: str = "completed", output: Any = None, **extra: Any) -> dict[str, Any]:
    response = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1700000000,
        "status": kind,
        "error": None,
        "incomplete_details": None,
        "model": "gpt-x",
        "output": output or [],
        "usage": {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 4},
            "output_tokens": 7,
            "output_tokens_details": {"reasoning_tokens": 3},
            "total_tokens": 17,
        },
        "metadata": {},
    }
    response.update(extra)
    return {"type": f"response.{kind}", "response": response}


def added(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def done(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": index, "item": item}


def text_delta(index: int, delta: str, ci: int = 0, **extra: Any) -> dict[str, Any]:
    return {
        "type": "response.output_text.delta",
        "item_id": f"msg_{index}",
        "output_index": index,
        "content_index": ci,
        "delta": delta,
        **extra,
    }


def args_delta(index: int, delta: str) -> dict[str, Any]:
    return {
        "type": "response.function_call_arguments.delta",
        "item_id": f"fc_{index}",
        "output_index": index,
        "delta": delta,
    }


def message(index: int, *texts: str, status: str = "completed") -> dict[str, Any]:
    return {
        "type": "message",
        "id": f"msg_{index}",
        "status": status,
        "role": "assistant",
        "content": [
            {"type": "output_text", "text": t, "annotations": [], "logprobs": []} for t in texts
        ],
    }


def call(index: int, call_id: str, name: str, arguments: str, status: str = "completed"):
    return {
        "type": "function_call",
        "id": f"fc_{index}",
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": status,
    }


def codes(msg: Any) -> list[str]:
    return [a["code"] for a in msg.anomalies]


def agg(events: list[Any], **options: Any) -> Any:
    return fastmerge.aggregate(events, P, **options)
