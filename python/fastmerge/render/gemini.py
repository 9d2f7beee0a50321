"""Render messages as Gemini's non-streaming ``GenerateContentResponse``.

``{"candidates": [{"content": {"parts": [...], "role": "model"}, "finishReason", "index",
<other candidate fields>}], "usageMetadata", "modelVersion", <other response fields>,
"responseId"}``, one candidate per message. Parts keep their order:

- text -> ``{"text"}`` (with ``thoughtSignature`` when the part holds a Gemini signature; an
  empty text part is written only when it holds one; the ``citationMetadata`` of the chunks,
  kept on text parts, becomes the candidate's ``citationMetadata``), reasoning -> ``{"text",
  "thought": true}``, a tool call -> ``{"functionCall": {"id"?, "name", "args"}}`` (text
  arguments parsed; an id fastmerge generated is left out, Gemini sent none; a call the stream
  cut has its raw arguments string as ``args`` and ``"truncated": true``), a Gemini
  ``unknown`` part -> the part as Gemini sent it, media -> ``inlineData`` / ``fileData``.
- ``thoughtSignature`` is replayed from payloads of kind ``thought_signature`` whose provider
  is ``"gemini"`` (or ``"google"``, as hand-built chunks name it), and from a tool call's
  ``extra_content.google.thought_signature`` (Gemini's OpenAI-compatible API); the verbatim
  fields (``usageMetadata``, candidate and response metadata, other part keys) only from
  messages of the ``"gemini"`` adapter.

A message from another provider gets Gemini's usage names from the normalized counts and a
``finishReason`` from the normalized finish reason.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from ..parts import arguments_text
from ._common import CUT_MARKER, choice_data, cut_calls, is_cut, normalized_usage_but

NAME = "gemini"

_NORMALIZED_USAGE = normalized_usage_but()
_FINISH = {
    "stop": "STOP",
    "length": "MAX_TOKENS",
    "tool_calls": "STOP",
    "content_filter": "SAFETY",
    "error": "OTHER",
}


def render(messages: Sequence[Any]) -> dict[str, Any]:
    """The ``GenerateContentResponse`` holding ``messages`` (the candidates, in order)."""
    datas = choice_data(messages)
    first = datas[0]
    ours = _ours(first)
    response: dict[str, Any] = {"candidates": [_candidate(d) for d in datas]}
    metadata = first.get("provider_metadata") or {}
    extras = {k: v for k, v in metadata.items() if k not in ("provider", "candidate")}
    if ours and "promptFeedback" in extras:
        response["promptFeedback"] = extras.pop("promptFeedback")
    usage = _usage(first.get("usage_metadata"), ours)
    if usage is not None:
        response["usageMetadata"] = usage
    if first.get("response_model") is not None:
        response["modelVersion"] = first["response_model"]
    if ours:
        response.update(extras)
    if first.get("response_id") is not None:
        response["responseId"] = first["response_id"]
    return response


def _ours(data: dict[str, Any]) -> bool:
    metadata = data.get("provider_metadata") or {}
    return bool(metadata.get("provider") == NAME)


# the payload providers whose thought signatures Gemini takes back: this adapter's, and
# "google" (the name chunks built by hand and edge case E69 use)
_SIGNERS = (NAME, "google")


def _signature(payload: Any) -> Any:
    """The Gemini thought signature a payload holds, else None."""
    if (
        isinstance(payload, dict)
        and payload.get("provider") in _SIGNERS
        and payload.get("kind") == "thought_signature"
    ):
        return payload.get("data")
    return None


def _compat_signature(extra: Any) -> Any:
    """A signature that came through Gemini's OpenAI-compatible API:
    ``extra_content.google.thought_signature`` of a tool call."""
    if isinstance(extra, dict):
        content = extra.get("extra_content")
        if isinstance(content, dict) and isinstance(content.get("google"), dict):
            return content["google"].get("thought_signature")
    return None


def _candidate(data: dict[str, Any]) -> dict[str, Any]:
    ours = _ours(data)
    generated = _generated_ids(data)
    parts = []
    cut = cut_calls(data)
    for part in data.get("parts") or []:
        rendered = _part(part, ours, generated, is_cut(part, cut))
        if rendered is not None:
            parts.append(rendered)
    role = data.get("role")
    candidate: dict[str, Any] = {
        "content": {"parts": parts, "role": "model" if role in (None, "assistant") else role}
    }
    reason = data.get("finish_reason")
    if reason is None or not ours:
        reason = _FINISH.get(data.get("finish_reason_normalized") or "", reason)
    if reason is not None:
        candidate["finishReason"] = reason
    candidate["index"] = data.get("choice_index") or 0
    if ours:
        extra = (data.get("provider_metadata") or {}).get("candidate")
        if isinstance(extra, dict):
            candidate.update(extra)
        citations = _citation_metadata(data.get("parts") or [])
        if citations:
            candidate["citationMetadata"] = citations
        if data.get("logprobs") is not None:
            candidate["logprobsResult"] = data["logprobs"]
    return candidate


def _citation_metadata(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """The chunks' ``citationMetadata`` objects (kept on text parts) as one: their lists
    concatenated in order, an entry already there (a chunk repeating an earlier citation)
    not repeated."""
    merged: dict[str, Any] = {}
    for part in parts:
        if part.get("part") != "text":
            continue
        for entry in part.get("citations") or []:
            if not isinstance(entry, dict):
                continue
            for key, value in entry.items():
                current = merged.get(key)
                if isinstance(value, list) and isinstance(current, list):
                    current.extend(item for item in value if item not in current)
                elif isinstance(value, list):
                    merged[key] = list(value)
                else:
                    merged[key] = value
    return merged


def _generated_ids(data: dict[str, Any]) -> set[str]:
    """The tool-call ids fastmerge generated (``synthetic_id`` anomalies)."""
    ids = set()
    for anomaly in data.get("anomalies") or []:
        if anomaly.get("code") != "synthetic_id":
            continue
        detail = anomaly.get("detail") or ""
        marker = "; generated "
        at = detail.rfind(marker)
        if at >= 0:
            quoted = detail[at + len(marker) :]
            if len(quoted) >= 2 and quoted[0] == quoted[-1] and quoted[0] in "'\"":
                ids.add(quoted[1:-1])
    return ids


def _part(
    part: dict[str, Any], ours: bool, generated: set[str], cut: bool
) -> dict[str, Any] | None:
    kind = part.get("part")
    if kind == "text":
        attributes = part.get("attributes") or {}
        signature = _signature(attributes.get("payload"))
        text = part.get("text") or ""
        if not text and signature is None:
            return None
        out: dict[str, Any] = {"text": text}
        if ours:
            for key, value in attributes.items():
                if key != "payload":
                    out[key] = value
        if signature is not None:
            out["thoughtSignature"] = signature
        return out
    if kind == "reasoning":
        signature = _signature(part.get("payload"))
        text = part.get("text") or ""
        if not text and signature is None:
            return None
        out = {"text": text, "thought": True}
        if signature is not None:
            out["thoughtSignature"] = signature
        return out
    if kind == "tool_call":
        call: dict[str, Any] = {}
        call_id = part.get("id")
        if call_id is not None and call_id not in generated:
            call["id"] = call_id
        call["name"] = part.get("name")
        arguments = part.get("arguments")
        if isinstance(arguments, dict):
            call["args"] = arguments
        elif isinstance(arguments, str) and arguments:
            try:
                call["args"] = json.loads(arguments)
            except ValueError:
                call["args"] = arguments  # cut arguments stay raw (the message says so)
        if cut:
            call["args"] = arguments_text(arguments)
            call[CUT_MARKER] = True
        beside: Any = None
        if ours and isinstance(part.get("extra"), dict):
            extra = dict(part["extra"])
            beside = extra.pop("@part", None)  # the part's own fields beside the call
            call.update(extra)
        out = {"functionCall": call}
        if isinstance(beside, dict):
            out.update(beside)
        signature = _signature(part.get("payload"))
        if signature is None:
            signature = _compat_signature(part.get("extra"))
        if signature is not None:
            out["thoughtSignature"] = signature
        return out
    if kind == "unknown":
        if part.get("provider") == NAME and isinstance(part.get("raw"), dict):
            return dict(part["raw"])
        return None
    if kind == "media":
        if part.get("data") is not None:
            return {"inlineData": {"mimeType": part.get("mime_type"), "data": part["data"]}}
        if part.get("url") is not None:
            return {"fileData": {"mimeType": part.get("mime_type"), "fileUri": part["url"]}}
        return None
    return None


def _usage(usage: Any, ours: bool) -> dict[str, Any] | None:
    if not isinstance(usage, dict):
        return None
    if ours:
        verbatim = {k: v for k, v in usage.items() if k not in _NORMALIZED_USAGE}
        if verbatim:
            return verbatim
    out: dict[str, Any] = {}
    names = (
        ("input_tokens", "promptTokenCount"),
        ("output_tokens", "candidatesTokenCount"),
        ("total_tokens", "totalTokenCount"),
        ("cache_read_tokens", "cachedContentTokenCount"),
        ("reasoning_tokens", "thoughtsTokenCount"),
    )
    for key, name in names:
        if usage.get(key) is not None:
            out[name] = usage[key]
    output, reasoning = _count(usage.get("output_tokens")), _count(usage.get("reasoning_tokens"))
    if output is not None and reasoning is not None and output >= reasoning:
        # other providers count thoughts in the output; Gemini's candidates exclude them
        out["candidatesTokenCount"] = output - reasoning
    return out


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
