"""What the request writers share."""

from __future__ import annotations

from typing import Any, Sequence


def own(data: dict[str, Any], provider: str) -> bool:
    """Whether the message (its ``to_dict()``) came from ``provider``'s adapter."""
    metadata = data.get("provider_metadata") or {}
    return bool(metadata.get("provider") == provider)


def for_provider(message: Any, provider: str) -> Any:
    """``message`` as it is replayed to ``provider``: whole for its own provider; for
    another, without its reasoning parts (see the package's rules)."""
    data = message.to_dict()
    if own(data, provider) or not any(p.get("part") == "reasoning" for p in data["parts"]):
        return message
    data["parts"] = [p for p in data["parts"] if p.get("part") != "reasoning"]
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
