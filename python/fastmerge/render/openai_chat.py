"""Messages -> OpenAI's non-streaming ``chat.completion`` response (one message per choice).

``choices[i] = {index, message: {role, content, refusal, tool_calls, annotations,
reasoning_content?}, logprobs, finish_reason}``, ``usage`` with OpenAI's key names, and the
response's ``id``, ``created``, ``model``, ``system_fingerprint``, ``service_tier``.

What the ``"openai-chat"`` adapter kept comes back where the provider had it (only for
messages that adapter produced): the choice's and the message's other keys, the top-level
keys of the chunks (``x_groq``, OpenRouter's ``provider``, Azure's
``prompt_filter_results``), the usage keys verbatim, the reasoning text under the field name
the server streamed it in, and OpenRouter ``reasoning_details`` rebuilt from the reasoning
parts with their signatures / encrypted data, ``images`` and ``reasoning_items`` with every
chunk's entries in order. A message whose
content came as Mistral's typed chunks gets its content back as that list (thinking and text
items in part order). Opaque payloads of other providers are not replayed. A tool call the
stream cut keeps its raw ``arguments`` (as always here) and gets ``"truncated": true``.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from ._common import CUT_MARKER, choice_data, cut_calls, is_cut, normalized_usage_but

NAME = "openai-chat"
# the message lists whose entries the adapter keeps as unknown parts of that kind, one per entry
# of every chunk (``images``, ``reasoning_items``): gathered back in order
_LISTED = ("images", "reasoning_items")
# unknown parts of this provider that are no item of a typed content list
_NOT_CONTENT = frozenset({"executed_tools", "reasoning_details", "thinking", *_LISTED})
# the normalized usage keys the adapter adds beside the provider's own
_NORMALIZED = normalized_usage_but()


def render(messages: Sequence[Any]) -> dict[str, Any]:
    """The ``chat.completion`` holding ``messages`` as its choices, in order."""
    datas = choice_data(messages)
    first = datas[0]
    pm = _own_metadata(first)
    out: dict[str, Any] = {
        "id": first["response_id"],
        "object": "chat.completion",
        "created": pm.get("created"),
        "model": first["response_model"],
        "choices": [_choice(d, position) for position, d in enumerate(datas)],
        "usage": _usage(first["usage_metadata"], bool(pm), messages[0].usage_total()),
        "system_fingerprint": pm.get("system_fingerprint"),
        "service_tier": pm.get("service_tier"),
    }
    for key, value in (pm.get("response") or {}).items():
        if key not in out:
            out[key] = value
    return out


def _own_metadata(d: dict[str, Any]) -> dict[str, Any]:
    """The message's provider_metadata when this adapter produced it, else {}."""
    pm = d.get("provider_metadata") or {}
    return pm if pm.get("provider") == NAME else {}


def _logprobs(logprobs: Any) -> Any:
    """The choice's ``logprobs`` as the API spells them: ``content`` and ``refusal`` are always
    there, null when none came (the adapter reads a null list as absent)."""
    if not isinstance(logprobs, dict):
        return logprobs
    return {"content": logprobs.get("content"), "refusal": logprobs.get("refusal"), **logprobs}


def _choice(d: dict[str, Any], position: int) -> dict[str, Any]:
    pm = _own_metadata(d)
    index = d["choice_index"]
    choice: dict[str, Any] = {
        "index": index if index is not None else position,
        "message": _message(d, pm),
        "logprobs": _logprobs(d["logprobs"]),
        # another provider's reason in OpenAI's words (stop, length, tool_calls, ...)
        "finish_reason": d["finish_reason"] if pm else d["finish_reason_normalized"],
    }
    for key, value in (pm.get("choice") or {}).items():
        if key not in choice:
            choice[key] = value
    return choice


def _message(d: dict[str, Any], pm: dict[str, Any]) -> dict[str, Any]:
    parts = d["parts"]
    texts: list[str] = []
    reasoning: list[str] = []
    annotations: list[Any] = []
    calls: list[dict[str, Any]] = []
    cut = cut_calls(d)
    legacy: dict[str, Any] | None = None
    audio: dict[str, Any] = {}
    items: list[Any] = []  # Mistral's typed content
    for part in parts:
        kind = part["part"]
        if kind == "text":
            texts.append(part["text"])
            if pm:  # another provider's citations are not OpenAI annotations
                annotations.extend(part.get("citations") or ())
            if part["text"]:
                items.append({"type": "text", "text": part["text"]})
        elif kind == "reasoning":
            reasoning.append(part["text"])
            if part["text"]:
                items.append(
                    {"type": "thinking", "thinking": [{"type": "text", "text": part["text"]}]}
                )
        elif kind == "tool_call":
            if pm and part.get("provider_index") == -1:
                legacy = _call(part, True, False)["function"]  # the deprecated single call
                if is_cut(part, cut):
                    legacy[CUT_MARKER] = True
                continue
            calls.append(_call(part, bool(pm), is_cut(part, cut)))
        elif kind == "unknown" and part.get("provider") == NAME:
            if part.get("kind") == "audio" and pm and isinstance(part.get("raw"), dict):
                _audio(audio, part["raw"])
            elif part.get("kind") not in _NOT_CONTENT:
                items.append(part.get("raw"))
    message: dict[str, Any] = {"role": d["role"] or "assistant"}
    if d["content_list"]:
        message["content"] = items
    else:
        # null without text (an empty text block of another provider's stream included)
        message["content"] = "".join(texts) or None
    message["refusal"] = d["refusal"]
    message["tool_calls"] = calls or None
    if legacy is not None:
        message["function_call"] = legacy
    if audio:
        message["audio"] = audio
    message["annotations"] = annotations
    details = _details(parts, pm)
    field = _reasoning_field(pm, bool(details))
    if reasoning and not d["content_list"] and field is not None:
        message[field] = "".join(reasoning)
    if details:
        message["reasoning_details"] = details
    tools = _executed_tools(parts)
    if tools and pm:
        message["executed_tools"] = tools
    for key in _LISTED:
        entries = [p.get("raw") for p in parts if p["part"] == "unknown" and p.get("kind") == key]
        if entries and pm:
            message[key] = entries
    for key, value in (pm.get("message") or {}).items():
        if key not in message:
            message[key] = value
    return message


def _reasoning_field(pm: dict[str, Any], details: bool) -> str | None:
    """The message field the reasoning text goes in: the one the server streamed it in
    (``reasoning_content``: DeepSeek, Qwen, xAI; ``reasoning``: Groq, OpenRouter), none when
    it sent only ``reasoning_details``. A message without the name (recorded before the
    adapter kept it, built by hand, or another provider's) gets ``reasoning_content``, or
    only its details."""
    field = pm.get("reasoning_field")
    if field in ("reasoning_content", "reasoning"):
        return str(field)
    return None if details else "reasoning_content"


def _executed_tools(parts: list[dict[str, Any]]) -> list[Any]:
    """Groq's ``executed_tools`` entries; a later entry at an entry's ``index`` (the tool's
    result after its call) updates that entry, as the non-streamed message holds it once."""
    tools: list[Any] = []
    by_index: dict[int, dict[str, Any]] = {}
    for part in parts:
        if part["part"] != "unknown" or part.get("kind") != "executed_tools":
            continue
        raw = part.get("raw")
        if not isinstance(raw, dict):
            tools.append(raw)
            continue
        index = raw.get("index")
        if isinstance(index, int) and index in by_index:
            by_index[index].update(raw)
            continue
        entry = dict(raw)
        if isinstance(index, int):
            by_index[index] = entry
        tools.append(entry)
    return tools


def _audio(audio: dict[str, Any], piece: dict[str, Any]) -> None:
    """One streamed ``delta.audio`` piece into the message's ``audio``: ``data`` and
    ``transcript`` concatenate, the other fields (``id``, ``expires_at``) keep the last."""
    for key, value in piece.items():
        if key in ("data", "transcript") and isinstance(value, str):
            audio[key] = audio.get(key, "") + value
        elif value is not None:
            audio[key] = value


def _call(part: dict[str, Any], own: bool, cut: bool) -> dict[str, Any]:
    arguments = part["arguments"]
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
    kind = part["type"] or "function"
    call: dict[str, Any] = {"id": part["id"], "type": kind}
    if kind == "custom":
        call["custom"] = {"name": part["name"], "input": arguments}
    else:
        call["function"] = {"name": part["name"], "arguments": arguments}
    if cut:
        call[CUT_MARKER] = True
    if own:
        for key, value in (part.get("extra") or {}).items():
            if key not in call:
                call[key] = value
    return call


def _details(parts: list[dict[str, Any]], pm: dict[str, Any]) -> list[dict[str, Any]]:
    """OpenRouter ``reasoning_details`` from the reasoning parts at their entry index."""
    if not pm:
        return []
    metas = pm.get("reasoning_details") or {}
    out: list[dict[str, Any]] = []
    for part in parts:
        index = part.get("index")
        if part["part"] != "reasoning" or not isinstance(index, int):
            continue  # only reasoning_details entries give a reasoning part an index
        meta = metas.get(str(index)) or {}
        payload = part.get("payload") or {}
        if payload.get("provider") != NAME:
            payload = {}
        kind = meta.get("type", payload.get("kind"))
        entry: dict[str, Any] = {"type": kind}
        if part["text"] or kind == "reasoning.text":
            entry["text"] = part["text"]
        if part.get("summary"):
            entry["summary"] = part["summary"]
        if payload.get("data") is not None:
            entry["data" if kind == "reasoning.encrypted" else "signature"] = payload["data"]
        for key, value in meta.items():
            if key not in entry:
                entry[key] = value
        entry["index"] = index
        out.append(entry)
    return out


def _usage(usage: Any, own: bool, total: Any) -> dict[str, Any] | None:
    """OpenAI's usage keys; the provider's other keys verbatim (for its own messages), else
    the cache and reasoning counts in OpenAI's ``*_details``."""
    if not isinstance(usage, dict):
        return None
    out: dict[str, Any] = {
        "prompt_tokens": usage.get("input_tokens") or 0,
        "completion_tokens": usage.get("output_tokens") or 0,
        "total_tokens": total if total is not None else 0,
    }
    if own:
        for key, value in usage.items():
            if key not in _NORMALIZED and key not in out:
                out[key] = value
    if "prompt_tokens_details" not in out and usage.get("cache_read_tokens") is not None:
        out["prompt_tokens_details"] = {"cached_tokens": usage["cache_read_tokens"]}
    if "completion_tokens_details" not in out and usage.get("reasoning_tokens"):
        out["completion_tokens_details"] = {"reasoning_tokens": usage["reasoning_tokens"]}
    return out
