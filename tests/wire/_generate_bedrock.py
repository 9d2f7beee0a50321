"""The generated Bedrock ConverseStream streams (``_generate``): the dicts boto3 yields (blobs
as bytes), a stream per content block start and delta kind, whole and cut, and one per
exception event of botocore's service model; and those dicts as the HTTP API carries them."""

from __future__ import annotations

import base64
from typing import Any

import _unions
from _generate_common import Case, markers_in

# ---------------------------------------------------------------------------------------------
# Bedrock ConverseStream (dicts as boto3 yields them: blobs as bytes)

_EXCEPTIONS = (
    "internalServerException",
    "modelStreamErrorException",
    "validationException",
    "throttlingException",
    "serviceUnavailableException",
)


def bedrock_cases() -> list[Case]:
    shapes = _unions.bedrock_shapes()
    png = b"\x89PNG M006q"
    redacted = b"M004q-redacted"
    starts: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {
        "toolUse": (
            {"toolUse": {"toolUseId": "t1", "name": "f"}},
            [{"toolUse": {"input": '{"q": "M000q"}'}}],
        ),
        "toolResult": (
            {"toolResult": {"toolUseId": "t1", "status": "success"}},
            [{"toolResult": [{"text": "M000q"}]}, {"toolResult": [{"json": {"r": "M001q"}}]}],
        ),
        "image": ({"image": {"format": "png"}}, [{"image": {"source": {"bytes": png}}}]),
    }
    deltas: dict[str, list[dict[str, Any]]] = {
        "text": [{"text": "M000q"}, {"text": "M001q"}],
        "reasoningContent": [
            {"reasoningContent": {"text": "M000q"}},
            {"reasoningContent": {"signature": "M002q"}},
            {"reasoningContent": {"redactedContent": redacted}},
        ],
        "citation": [
            {"text": "M000q"},
            {"citation": {"title": "M003q", "location": {"web": {"url": "https://e/M003q"}}}},
        ],
    }
    streams: list[tuple[str, dict[str, Any] | None, list[dict[str, Any]]]] = []
    for name, (start, pieces) in starts.items():
        streams.append((f"start-{name}", start, pieces))
    for name, pieces in deltas.items():
        streams.append((f"delta-{name}", None, pieces))
    cases = []
    for name, start, pieces in streams:
        for cut in (False, True):
            events: list[dict[str, Any]] = [{"messageStart": {"role": "assistant"}}]
            covers = {"event:messageStart", "event:contentBlockDelta"}
            if start is not None:
                events.append({"contentBlockStart": {"contentBlockIndex": 0, "start": start}})
                covers |= {"event:contentBlockStart"} | {f"start:{k}" for k in start}
            for piece in pieces:
                events.append({"contentBlockDelta": {"contentBlockIndex": 0, "delta": piece}})
                covers |= {f"delta:{k}" for k in piece}
            if not cut:
                usage = {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5}
                events += [
                    {"contentBlockStop": {"contentBlockIndex": 0}},
                    {"messageStop": {"stopReason": "end_turn"}},
                    {"metadata": {"usage": usage, "metrics": {"latencyMs": 7}}},
                ]
                covers |= {"event:contentBlockStop", "event:messageStop", "event:metadata"}
            cases.append(
                Case(
                    id=f"bedrock-{name}{'-cut' if cut else ''}",
                    provider="bedrock-converse",
                    events=events,
                    covers=covers,
                    kept=markers_in(bedrock_json(events)),
                )
            )
    for name in _EXCEPTIONS:
        assert name in shapes["ConverseStreamOutput"], name
        events = [
            {"messageStart": {"role": "assistant"}},
            {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "M000q"}}},
            {name: {"message": "M001q"}},
        ]
        cases.append(
            Case(
                id=f"bedrock-{name}",
                provider="bedrock-converse",
                events=events,
                covers={
                    f"event:{name}",
                    "event:messageStart",
                    "event:contentBlockDelta",
                    "delta:text",
                },
                kept=["M000q", "M001q"],
                expect=lambda m: m.status == "failed",
            )
        )
    return cases


def bedrock_json(value: Any) -> Any:
    """A boto3 event as the HTTP API carries it: blobs as base64 text."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, dict):
        return {k: bedrock_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [bedrock_json(v) for v in value]
    return value
