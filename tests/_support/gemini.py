"""What the Gemini adapter tests share: chunk and part builders in the wire shape, and readers
of a merged message's parts, rendered parts and anomaly codes."""

from __future__ import annotations

from typing import Any

import fastmerge
from fastmerge.render import to_provider

P = "gemini"


def chunk(
    *parts: dict[str, Any],
    finish: str | None = None,
    index: int | None = None,
    usage: dict[str, Any] | None = None,
    **top: Any,
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": list(parts), "role": "model"}}
    if finish is not None:
        candidate["finishReason"] = finish
    if index is not None:
        candidate["index"] = index
    event: dict[str, Any] = {"candidates": [candidate]}
    if usage is not None:
        event["usageMetadata"] = usage
    event.update(top)
    return event


def text(t: str, **extra: Any) -> dict[str, Any]:
    return {"text": t, **extra}


def thought(t: str, **extra: Any) -> dict[str, Any]:
    return {"text": t, "thought": True, **extra}


def call(name: str | None = None, **fields: Any) -> dict[str, Any]:
    fc = dict(fields)
    if name is not None:
        fc = {"name": name, **fc}
    return {"functionCall": fc}


def partial(path: str, more: bool = True, **value: Any) -> dict[str, Any]:
    arg = {"jsonPath": path, **value}
    if more:
        arg["willContinue"] = True
    return arg


def sig(data: str) -> dict[str, Any]:
    return {"provider": P, "kind": "thought_signature", "data": data}


def agg(events: list[dict[str, Any]], **options: Any) -> Any:
    return fastmerge.aggregate(events, P, **options)


def parts(message: Any) -> list[dict[str, Any]]:
    return message.to_dict()["parts"]


def rendered_parts(message: Any) -> list[dict[str, Any]]:
    return to_provider(message, P)["candidates"][0]["content"]["parts"]


def codes(message: Any) -> list[str]:
    return [a["code"] for a in message.to_dict()["anomalies"]]


def streamed(*steps: dict[str, Any], finish: bool = True) -> list[dict[str, Any]]:
    """A Vertex call streamed as ``partialArgs``: its start, a chunk per step, and (with
    ``finish``) the closing chunk."""
    events = [chunk({"functionCall": {"name": "f", "willContinue": True}, "thoughtSignature": "S"})]
    events += [chunk({"functionCall": {"partialArgs": [s], "willContinue": True}}) for s in steps]
    if finish:
        events.append(chunk(call(None), finish="STOP"))
    return events
