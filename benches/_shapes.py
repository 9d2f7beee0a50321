"""The shape variations of ``shapes.py``: real corpus streams, each varied in one thing at a
time the way providers, compatible servers and gateways vary them.

A :class:`Variation` changes the events (a copy; ``change``) or how they are written
(``write``: JSON lines as orjson writes them, Python ``json.dumps`` spacing, ``\\uXXXX``
escapes, SSE framing, one JSON array). The baseline is the recorded events written as compact
JSON lines (orjson keeps the key order), so that every row differs from it in the one thing
named. ``differs`` names the message fields (``to_dict()`` keys) that variation may change: the
message must equal the baseline's everywhere else, and in every case in its text, reasoning,
tool calls, finish reason and status (``_corpus.essentials``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

import orjson

Events = list[dict[str, Any]]

#: provider -> (corpus folder, the base streams: a longer one, short ones; one with non-ASCII
#: text where the provider's corpus has one, for the ``\\u`` escapes row)
BASES: dict[str, tuple[str, tuple[str, ...]]] = {
    "openai-chat": (
        "openai_chat",
        ("gpt4o-json-object-unicode", "gpt4o-json-schema-content-usage"),
    ),
    "anthropic": (
        "anthropic_messages",
        (
            "sonnet4-thinking-signature-text",
            "sonnet45-thinking-signature-text-short",
            "sonnet45-text",
        ),
    ),
    "openai-responses": (
        "openai_responses",
        ("o3-mini-reasoning-summaries-4-parts", "gpt4o-text"),
    ),
    "gemini": (
        "gemini",
        (
            "gemini25-pro-thought-parts",
            "gemini25-pro-google-search-grounding",
            "gemini20-flash-plain-text",
        ),
    ),
    "bedrock-converse": (
        "bedrock_converse",
        ("nova-micro-text", "claude-sonnet4-reasoning-signature-text"),
    ),
}


def _same(events: Events) -> Events:
    return events


@dataclass(frozen=True)
class Variation:
    """One row: ``change`` of the events (given a copy), ``write`` of them as bytes."""

    name: str
    change: Callable[[Events], Events] = _same
    write: str = "jsonl"
    #: the ``to_dict()`` keys of the message this variation may change
    differs: tuple[str, ...] = ()


# ---------------------------------------------------------------------------------------------
# Writing


def write(events: Events, how: str, provider: str) -> tuple[bytes, list[bytes]]:
    """The stream's bytes, and its event lines (the JSON texts orjson is timed on)."""
    if how == "spaced":  # Python's json.dumps defaults, non-ASCII kept
        lines = [json.dumps(e, ensure_ascii=False).encode() for e in events]
    elif how == "ascii":  # compact, non-ASCII as \uXXXX escapes
        lines = [json.dumps(e, separators=(",", ":")).encode() for e in events]
    else:
        lines = [orjson.dumps(e) for e in events]
    if how == "sse":
        named = provider in ("anthropic", "openai-responses")  # their `event:` lines
        frames = [
            (b"event: " + e["type"].encode() + b"\n" if named else b"") + b"data: " + line
            for e, line in zip(events, lines)
        ]
        if provider == "openai-chat":
            frames.append(b"data: [DONE]")
        return b"\n\n".join(frames) + b"\n\n", lines
    if how == "array":  # Gemini's streamGenerateContent without alt=sse
        return b"[" + b",\r\n".join(lines) + b"]", lines
    return b"\n".join(lines) + b"\n", lines


# ---------------------------------------------------------------------------------------------
# Changes every provider meets


def _sorted_keys(events: Events) -> Events:
    """A gateway that re-serializes through a sorted map (Go's encoding/json, sort_keys)."""
    return [orjson.loads(orjson.dumps(e, option=orjson.OPT_SORT_KEYS)) for e in events]


#: the nested object of each provider's hot event that gets an unknown key too
_INNER = {
    "openai-chat": lambda e: [c for c in e.get("choices") or ()],
    "anthropic": lambda e: [e["delta"]] if isinstance(e.get("delta"), dict) else [],
    "openai-responses": lambda e: [],
    "gemini": lambda e: [c for c in e.get("candidates") or ()],
    "bedrock-converse": lambda e: [v for v in e.values() if isinstance(v, dict)],
}


def _extra_keys(provider: str) -> Callable[[Events], Events]:
    def change(events: Events) -> Events:
        for event in events:
            for inner in _INNER[provider](event):
                inner["x_trace_flag"] = True
            if provider != "bedrock-converse":  # a Bedrock event is {type: payload}
                event["x_gateway_region"] = "eu-west-1"
        return events

    return change


def _reversed_keys(events: Events) -> Events:
    def flip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: flip(value[k]) for k in reversed(value)}
        if isinstance(value, list):
            return [flip(v) for v in value]
        return value

    return [flip(e) for e in events]


def _common(provider: str) -> list[Variation]:
    meta = ("provider_metadata", "provider_content", "parts", "metadata")
    if provider == "bedrock-converse":
        # AWS writes every payload's keys sorted already; its corpus has no non-ASCII text to
        # escape, and its transport is an AWS event stream, never SSE
        return [
            Variation("keys reversed", _reversed_keys),
            Variation("unknown extra keys", _extra_keys(provider), differs=meta),
            Variation("Python json.dumps spacing", write="spaced"),
        ]
    return [
        Variation("keys sorted (a re-serializing gateway)", _sorted_keys),
        Variation("unknown extra keys", _extra_keys(provider), differs=meta),
        Variation("Python json.dumps spacing", write="spaced"),
        Variation("non-ASCII as \\u escapes", write="ascii"),
        Variation("SSE framing", write="sse"),
    ]


# ---------------------------------------------------------------------------------------------
# OpenAI Chat


def _chat_no_role(events: Events) -> Events:
    for event in events:
        for choice in event.get("choices") or ():
            if choice["delta"].pop("role", None) is not None:
                return events
    return events


def _chat_finish_on_last_content(events: Events) -> Events:
    """The finish_reason on the last content chunk, no separate finish chunk."""
    finish = next(
        i for i, e in enumerate(events) if e["choices"] and e["choices"][0]["finish_reason"]
    )
    reason = events[finish]["choices"][0]["finish_reason"]
    del events[finish]
    last = max(i for i, e in enumerate(events[:finish]) if e["choices"])
    events[last]["choices"][0]["finish_reason"] = reason
    return events


def _chat_no_usage(events: Events) -> Events:
    return [e for e in events if e.get("choices") or not e.get("usage")]


def _chat_no_logprobs(events: Events) -> Events:
    for event in events:
        for choice in event.get("choices") or ():
            if choice.get("logprobs", 0) is None:
                del choice["logprobs"]
    return events


def _chat_no_fingerprint(events: Events) -> Events:
    for event in events:
        event.pop("system_fingerprint", None)
    return events


def _chat_gateway(events: Events) -> Events:
    """OpenRouter / LiteLLM: the upstream's name, a request id, ``usage: null`` on every chunk."""
    for event in events:
        event["provider"] = "OpenAI"
        event["x_request_id"] = "req_4f1c2a9e7b"
        event.setdefault("usage", None)
    return events


def _chat_usage_null(events: Events) -> Events:
    for event in events:
        event.setdefault("usage", None)
    return events


def _chat_current_openai(events: Events) -> Events:
    """What OpenAI sends today: ``service_tier``, ``usage: null`` and ``obfuscation`` on every
    chunk."""
    out = []
    for i, event in enumerate(events):
        head = {k: event[k] for k in ("id", "object", "created", "model") if k in event}
        rest = {k: v for k, v in event.items() if k not in head}
        chunk = {**head, "service_tier": "default", **rest}
        chunk.setdefault("usage", None)
        chunk["obfuscation"] = "abcdefghij"[: 2 + i % 8]
        out.append(chunk)
    return out


def _openai_chat() -> list[Variation]:
    return [
        Variation("no role in the first delta", _chat_no_role, differs=("role",)),
        Variation("finish_reason on the last content chunk", _chat_finish_on_last_content),
        Variation("no usage chunk", _chat_no_usage, differs=("usage_metadata",)),
        Variation("no logprobs: null", _chat_no_logprobs),
        Variation("no system_fingerprint", _chat_no_fingerprint, differs=("provider_metadata",)),
        Variation("usage: null on every chunk", _chat_usage_null),
        Variation(
            "gateway fields (provider, x_request_id, usage: null)",
            _chat_gateway,
            differs=("provider_metadata",),
        ),
        Variation(
            "service_tier, usage: null, obfuscation",
            _chat_current_openai,
            differs=("provider_metadata",),
        ),
    ]


# ---------------------------------------------------------------------------------------------
# Anthropic, Responses, Gemini, Bedrock


def _drop_type(kind: str) -> Callable[[Events], Events]:
    return lambda events: [e for e in events if e.get("type") != kind]


def _anthropic_no_delta_usage(events: Events) -> Events:
    for event in events:
        if event["type"] == "message_delta":
            event.pop("usage", None)
    return events


def _anthropic_no_stop_sequence(events: Events) -> Events:
    for event in events:
        if event["type"] == "message_delta":
            event["delta"].pop("stop_sequence", None)
    return events


def _anthropic() -> list[Variation]:
    return [
        Variation("no ping", _drop_type("ping")),
        Variation(
            "no usage in message_delta", _anthropic_no_delta_usage, differs=("usage_metadata",)
        ),
        Variation("no stop_sequence: null", _anthropic_no_stop_sequence),
    ]


def _pop_all(*keys: str) -> Callable[[Events], Events]:
    def change(events: Events) -> Events:
        for event in events:
            for key in keys:
                event.pop(key, None)
        return events

    return change


def _responses_no_usage(events: Events) -> Events:
    for event in events:
        if event["type"] in ("response.completed", "response.incomplete", "response.failed"):
            event["response"].pop("usage", None)
    return events


def _responses() -> list[Variation]:
    return [
        Variation("no sequence_number", _pop_all("sequence_number")),
        Variation("no obfuscation", _pop_all("obfuscation")),
        Variation("no logprobs: []", _pop_all("logprobs")),
        Variation(
            "no usage in response.completed",
            _responses_no_usage,
            differs=("usage_metadata", "provider_metadata"),
        ),
    ]


def _gemini_usage_last_only(events: Events) -> Events:
    for event in events[:-1]:
        event.pop("usageMetadata", None)
    return events


def _gemini_no_ids(events: Events) -> Events:
    return _pop_all("modelVersion", "responseId")(events)


def _gemini() -> list[Variation]:
    return [
        Variation("usageMetadata on the last chunk only", _gemini_usage_last_only),
        Variation(
            "no modelVersion / responseId",
            _gemini_no_ids,
            differs=("response_id", "response_model", "provider_metadata"),
        ),
        Variation("one JSON array (no alt=sse)", write="array"),
    ]


def _bedrock_no_padding(events: Events) -> Events:
    for event in events:
        for payload in event.values():
            if isinstance(payload, dict):
                payload.pop("p", None)
    return events


def _bedrock_no_metrics(events: Events) -> Events:
    for event in events:
        if isinstance(event.get("metadata"), dict):
            event["metadata"].pop("metrics", None)
    return events


def _bedrock() -> list[Variation]:
    return [
        Variation("no p padding", _bedrock_no_padding),
        Variation("no metrics in metadata", _bedrock_no_metrics, differs=("provider_metadata",)),
        Variation(
            "no metadata event",
            lambda events: [e for e in events if "metadata" not in e],
            differs=("usage_metadata", "provider_metadata"),
        ),
    ]


def variations(provider: str) -> list[Variation]:
    """The rows of one provider, the baseline first."""
    own = {
        "openai-chat": _openai_chat,
        "anthropic": _anthropic,
        "openai-responses": _responses,
        "gemini": _gemini,
        "bedrock-converse": _bedrock,
    }[provider]()
    return [Variation("baseline (as recorded, compact JSON lines)"), *own, *_common(provider)]


def build(events: Events, variation: Variation, provider: str) -> tuple[bytes, list[bytes]]:
    """The bytes and lines of ``variation`` of ``events`` (the events are not changed)."""
    changed = variation.change(orjson.loads(orjson.dumps(events)))
    return write(changed, variation.write, provider)


def check(base: Any, got: Any, variation: Variation) -> list[str]:
    """What differs between the baseline's message and the variation's, beyond what the
    variation may change (empty: none)."""
    from _corpus import essentials

    wrong = [] if essentials(got) == essentials(base) else ["essentials"]
    a, b = base.to_dict(), got.to_dict()
    wrong += [
        k
        for k in sorted(a.keys() | b.keys())
        if k not in variation.differs and a.get(k) != b.get(k)
    ]
    return wrong
