"""What the request writers share."""

from __future__ import annotations

import json
from typing import Any, Sequence

from ...render._common import arguments_object, cut_calls, is_cut


def own(data: dict[str, Any], provider: str) -> bool:
    """Whether the message (its ``to_dict()``) came from ``provider``'s adapter."""
    metadata = data.get("provider_metadata") or {}
    return bool(metadata.get("provider") == provider)


def is_server_call(part: dict[str, Any]) -> bool:
    """A tool call the provider ran itself (Bedrock's built-in tools): no client result
    follows it, so it goes back only to its own provider, with its result blocks."""
    extra = part.get("extra")
    return isinstance(extra, dict) and extra.get("type") == "server_tool_use"


# the part fields that hold one provider's data (citations, attributes, signatures, payloads,
# a tool call's extra keys such as Anthropic's ``caller``): cleared for another provider
_FOREIGN_FIELDS = ("citations", "attributes", "payload", "extra")


def for_provider(message: Any, provider: str, answered: frozenset[str]) -> Any:
    """``message`` as it is replayed to ``provider`` (rules §9.1), given the ids of the tool
    calls whose results the history holds (``answered``).

    For its own provider the message is whole. Another provider gets only the portable
    content: no reasoning (a thinking block without its provider's signature is refused),
    no server-side tool use or other provider blocks, no citations, signatures, payloads or
    extra keys. For every provider: a tool call the stream cut (``truncated``) is left out
    when no result answers it, and otherwise goes with its arguments as far as they parse
    (the SDK accumulators' object), no longer marked cut; a refusal with no text is the
    assistant's text for providers with no refusal field."""
    data = message.to_dict()
    ours = own(data, provider)
    parts = data["parts"]
    cut = cut_calls(data)
    changed = False
    out: list[dict[str, Any]] = []
    for part in parts:
        kind = part.get("part")
        if not ours and (
            kind in ("reasoning", "unknown") or (kind == "tool_call" and is_server_call(part))
        ):
            changed = True
            continue
        if not ours and any(part.get(key) for key in _FOREIGN_FIELDS):
            part = {**part, **{k: None for k in _FOREIGN_FIELDS if k in part}}
            changed = True
        if kind == "tool_call" and is_cut(part, cut):
            changed = True
            if part.get("id") not in answered:
                continue
            parsed = arguments_object(part.get("arguments"), partial=True)
            if not isinstance(parsed, dict):
                parsed = {}
            part = {**part, "arguments": json.dumps(parsed, ensure_ascii=False)}
        out.append(part)
    if cut:
        data["anomalies"] = [a for a in data["anomalies"] if a.get("code") != "truncated"]
    refusal = data.get("refusal")
    # (OpenAI's two APIs have a refusal field; the Responses renderer writes it as content)
    if refusal and provider not in ("openai-chat", "openai-responses"):
        if not any(p.get("part") == "text" and p.get("text") for p in out):
            out.append({"part": "text", "text": refusal})
            changed = True
    if not changed:
        return message
    data["parts"] = out
    return type(message).from_dict(data)


def user(content: Any) -> dict[str, Any]:
    """A user message of the providers whose messages are ``{"role", "content"}``."""
    return {"role": "user", "content": content}


def system(content: Any) -> dict[str, Any]:
    """A system message in place, for the same providers."""
    return {"role": "system", "content": content}


def without_nulls(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` without its ``None`` fields (absent values: not written into a request)."""
    return {k: v for k, v in value.items() if v is not None}


def join_roles(entries: Sequence[dict[str, Any]], key: str, text: Any) -> list[dict[str, Any]]:
    """Consecutive entries of one role joined into one (their ``key`` lists concatenated; a
    str content made a list with ``text(str)``), for providers that require alternating
    roles."""
    out: list[dict[str, Any]] = []
    for entry in entries:
        items = entry[key]
        if isinstance(items, str):
            items = [text(items)]
        if out and out[-1]["role"] == entry["role"]:
            previous = out[-1][key]
            if isinstance(previous, str):
                previous = [text(previous)]
            out[-1] = {**out[-1], key: [*previous, *items]}
        else:
            out.append(entry)
    return out


def tool_content_text(content: Any) -> str:
    """A tool result's content as one string (for request fields that take only text)."""
    if isinstance(content, str):
        return content
    import json

    return json.dumps(content, ensure_ascii=False, separators=(",", ":"))
