"""A replayed request judged as the provider would judge it (rules §9.1), offline.

Each provider's request is validated with that provider's own SDK request types, strictly and
with unknown keys refused, then checked against the API rules the types leave out:

- openai-chat: ``list[ChatCompletionMessageParam]`` (openai, a pydantic ``TypeAdapter``);
- openai-responses: ``ResponseInputParam`` (openai);
- anthropic: ``list[MessageParam]`` and the ``system`` field (anthropic);
- gemini: ``types.Content`` for each content and the ``systemInstruction`` (google-genai);
- bedrock-converse: botocore's ``ParamValidator`` on the ``bedrock-runtime`` ``Converse``
  input shape (no network);
- ollama: ``ollama.Message``;
- mistral (an openai-chat request sent to Mistral): mistralai's ``ChatCompletionRequestMessage``.

The SDKs' TypedDicts and some of their models ignore keys they do not know, so "unknown keys
refused" is checked by comparing what the type validated with what was given: a key the type
dropped, or a value it had to convert, is a problem at its path. Requests travel as JSON, so
each value is validated as the JSON the provider would receive (bytes fields, as
google-genai's thought signatures, are base64 text there).

:func:`problems` returns every problem found, as ``"<path>: <what>"`` lines (empty: accepted).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Callable, Iterator

from pydantic import BaseModel, TypeAdapter, ValidationError

#: where each provider's request holds the history
HISTORY_KEY = {
    "openai-chat": "messages",
    "mistral": "messages",
    "openai-responses": "input",
    "anthropic": "messages",
    "gemini": "contents",
    "bedrock-converse": "messages",
    "ollama": "messages",
}
PROVIDERS = tuple(HISTORY_KEY)


# -- "nothing dropped, nothing converted" ------------------------------------------------------


def _plain(value: Any) -> Any:
    """A validated value as plain JSON data: models dumped as given (aliases, set fields
    only), the SDK TypedDicts' lazily validated iterables consumed (which validates them)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "__iter__"):  # pydantic's ValidatorIterator for ``Iterable[X]`` fields
        return [_plain(v) for v in value]
    return value


def _differences(given: Any, validated: Any, path: str) -> Iterator[str]:
    if isinstance(given, dict) and isinstance(validated, dict):
        for key, value in given.items():
            if key not in validated:
                yield f"{path}.{key}: unknown key (the SDK type has no such field)"
            else:
                yield from _differences(value, validated[key], f"{path}.{key}")
    elif isinstance(given, list) and isinstance(validated, list):
        if len(given) != len(validated):
            yield f"{path}: {len(given)} items, the SDK type kept {len(validated)}"
        for i, (a, b) in enumerate(zip(given, validated)):
            yield from _differences(a, b, f"{path}[{i}]")
    elif given != validated or type(given) is not type(validated):
        if isinstance(given, (int, float)) and isinstance(validated, (int, float)):
            return
        if isinstance(given, str) and given.translate(_URLSAFE) == validated:
            return  # bytes (base64 text) dumped again in the URL-safe alphabet
        yield f"{path}: {given!r:.60} read as {validated!r:.60}"


_URLSAFE = str.maketrans("+/", "-_")


def _errors(exc: ValidationError, path: str) -> list[str]:
    """The errors of the union members whose ``type`` matched (the member meant), or all."""
    errors = exc.errors()
    wrong = [
        e["loc"][:-1] for e in errors if e["type"] == "literal_error" and e["loc"][-1:] == ("type",)
    ]
    meant = [e for e in errors if not any(e["loc"][: len(w)] == w for w in wrong)]
    out = []
    for error in (meant or errors)[:5]:
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
        out.append(f"{path}{where}: {error['msg']}")
    return out


def _pydantic(check: Callable[[Any], Any], value: Any, path: str) -> list[str]:
    """``value`` (as the provider receives it: through JSON) through a validator; its
    errors, or what it dropped or converted."""
    value = json.loads(json.dumps(value))
    try:
        validated = _plain(check(value))
    except ValidationError as exc:
        return _errors(exc, path)
    return list(_differences(value, validated, path))


@lru_cache(maxsize=None)  # noqa: UP033 (the tests' target is py39)
def _adapter(name: str) -> TypeAdapter[Any]:
    if name == "openai-chat":
        from openai.types.chat import ChatCompletionMessageParam

        return TypeAdapter(ChatCompletionMessageParam)
    if name == "openai-responses":
        from openai.types.responses import ResponseInputItemParam

        return TypeAdapter(ResponseInputItemParam)
    if name == "anthropic":
        from anthropic.types import MessageParam

        return TypeAdapter(MessageParam)
    if name == "anthropic-beta":  # blocks of beta features (MCP, compaction, ...)
        from anthropic.types.beta import BetaMessageParam

        return TypeAdapter(BetaMessageParam)
    if name == "anthropic-system":
        from anthropic.types import TextBlockParam

        return TypeAdapter(str | list[TextBlockParam])  # type: ignore[arg-type]
    if name == "mistral":
        from mistralai.client.models import ChatCompletionRequestMessage

        return TypeAdapter(ChatCompletionRequestMessage)
    raise KeyError(name)


def _typed(name: str, value: Any, path: str) -> list[str]:
    adapter = _adapter(name)
    # Python mode: in JSON mode pydantic reads a str as the lazy ``Iterable`` of a
    # ``str | Iterable[block]`` union
    return _pydantic(lambda v: adapter.validate_python(v, strict=True), value, path)


def _model(model: type[BaseModel], value: Any, path: str, *, json_mode: bool = False) -> list[str]:
    if json_mode:  # bytes fields are base64 text on the wire (google-genai)
        return _pydantic(lambda v: model.model_validate_json(json.dumps(v)), value, path)
    return _pydantic(lambda v: model.model_validate(v, strict=True), value, path)


@lru_cache(maxsize=None)  # noqa: UP033
def _converse_shape() -> Any:
    import botocore.session

    service = botocore.session.get_session().get_service_model("bedrock-runtime")
    return service.operation_model("Converse").input_shape


def _botocore(request: dict[str, Any]) -> list[str]:
    from botocore.validate import ParamValidator

    report = ParamValidator().validate({"modelId": "model", **request}, _converse_shape())
    if not report.has_errors():
        return []
    return [f"$ (botocore): {line}" for line in report.generate_report().splitlines()]


def sdk_problems(
    provider: str, request: dict[str, Any], extensions: frozenset[str] = frozenset()
) -> list[str]:
    """What the provider's SDK request types refuse in ``request``. ``extensions``: the
    fields of an OpenAI-compatible server's assistant messages that the history's own
    streams sent (``reasoning_content``, ``reasoning``, ``reasoning_details``): the server
    that sent them takes them back, and OpenAI's types do not know them."""
    key = HISTORY_KEY[provider]
    allowed = {key, "system"} if provider in ("anthropic", "bedrock-converse") else {key}
    if provider == "gemini":
        allowed = {key, "systemInstruction"}
    out = [f"$.{k}: not a field of the request" for k in request if k not in allowed]
    entries = request.get(key)
    if not isinstance(entries, list):
        return [*out, f"$.{key}: not a list"]
    if provider == "bedrock-converse":
        return out + _botocore(request)
    if provider == "gemini":
        from google.genai import types

        if "systemInstruction" in request:
            instruction = request["systemInstruction"]
            out += _model(types.Content, instruction, "$.systemInstruction", json_mode=True)
        for i, entry in enumerate(entries):
            out += _model(types.Content, entry, f"$.{key}[{i}]", json_mode=True)
        return out
    if provider == "ollama":
        import ollama

        for i, entry in enumerate(entries):
            out += _model(ollama.Message, entry, f"$.{key}[{i}]")
        return out
    if provider == "anthropic" and "system" in request:
        out += _typed("anthropic-system", request["system"], "$.system")
    for i, entry in enumerate(entries):
        if extensions and entry.get("role") == "assistant":
            entry = {k: v for k, v in entry.items() if k not in extensions}
        found = _typed(provider, entry, f"$.{key}[{i}]")
        if found and provider == "anthropic":
            found = _typed("anthropic-beta", entry, f"$.{key}[{i}]")
        out += found
    return out


# -- the API rules the types leave out ---------------------------------------------------------


def _blank(text: Any) -> bool:
    return isinstance(text, str) and not text.strip()


def _alternation(roles: list[str], first: str, other: str) -> list[str]:
    out = []
    if not roles:
        return ["$: no message (the API needs at least one)"]
    if roles[0] != first:
        out.append(f"$[0]: the first turn is {roles[0]!r}, not {first!r}")
    for i in range(1, len(roles)):
        if roles[i] == roles[i - 1]:
            out.append(f"$[{i}]: two {roles[i]!r} turns in a row")
        if roles[i] not in (first, other):
            out.append(f"$[{i}]: role {roles[i]!r}")
    return out


def _pairs(turns: list[tuple[str, list[str], list[str]]], call_role: str) -> list[str]:
    """Tool calls and results in alternating turns: ``(role, call ids, result ids)``; every
    call answered in the next turn, every result answering a call of the previous turn."""
    out = []
    for i, (_, calls, results) in enumerate(turns):
        previous = turns[i - 1][1] if i > 0 and turns[i - 1][0] == call_role else []
        for result in results:
            if result not in previous:
                out.append(f"$[{i}]: a tool result for {result!r} follows no call of that id")
        if calls:
            following = turns[i + 1][2] if i + 1 < len(turns) else None
            if following is None:
                continue  # the last turn: the caller runs the tools next
            for call in calls:
                if call not in following:
                    out.append(f"$[{i}]: the tool call {call!r} has no result in the next turn")
    return out


def _anthropic_rules(request: dict[str, Any]) -> list[str]:
    messages = request["messages"]
    out = _alternation([m.get("role") for m in messages], "user", "assistant")
    turns = []
    for i, message in enumerate(messages):
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not blocks:
            out.append(f"$[{i}]: an empty content list")
        calls, results = [], []
        for j, block in enumerate(blocks or ()):
            kind = block.get("type")
            if kind == "text" and _blank(block.get("text")):
                out.append(f"$[{i}].content[{j}]: text blocks must contain non-whitespace text")
            if kind == "tool_use":
                calls.append(block.get("id"))
                if not isinstance(block.get("input"), dict):
                    out.append(f"$[{i}].content[{j}]: tool_use input must be an object")
            if kind == "tool_result":
                results.append(block.get("tool_use_id"))
        turns.append((message.get("role"), calls, results))
    return out + _pairs(turns, "assistant")


def _bedrock_rules(request: dict[str, Any]) -> list[str]:
    messages = request["messages"]
    out = _alternation([m.get("role") for m in messages], "user", "assistant")
    turns = []
    for i, message in enumerate(messages):
        if not message.get("content"):
            out.append(f"$[{i}]: an empty content list")
        calls, results = [], []
        for j, block in enumerate(message.get("content") or ()):
            if "text" in block and _blank(block["text"]):
                out.append(f"$[{i}].content[{j}]: blank text (Bedrock refuses it)")
            # a built-in tool's use and result are both in the assistant's message
            server = message.get("role") == "assistant"
            if "toolUse" in block:
                if block["toolUse"].get("type") != "server_tool_use":
                    calls.append(block["toolUse"].get("toolUseId"))
                if not isinstance(block["toolUse"].get("input"), dict):
                    out.append(f"$[{i}].content[{j}]: toolUse input must be an object")
            if "toolResult" in block and not server:
                results.append(block["toolResult"].get("toolUseId"))
        turns.append((message.get("role"), calls, results))
    return out + _pairs(turns, "assistant")


def _gemini_rules(request: dict[str, Any]) -> list[str]:
    contents = request["contents"]
    out = _alternation([c.get("role") for c in contents], "user", "model")
    turns = []
    for i, content in enumerate(contents):
        parts = content.get("parts") or []
        if not parts:
            out.append(f"$[{i}]: a content with no part")
        calls = [p["functionCall"] for p in parts if "functionCall" in p]
        results = [p["functionResponse"] for p in parts if "functionResponse" in p]
        for call in calls:
            if not isinstance(call.get("args", {}), dict):
                out.append(f"$[{i}]: functionCall args must be an object")
        # Gemini pairs calls and responses by count and name (ids are optional)
        turns.append(
            (
                content.get("role"),
                [f"{n}#{c.get('name')}" for n, c in enumerate(calls)],
                [f"{n}#{r.get('name')}" for n, r in enumerate(results)],
            )
        )
    return out + _pairs(turns, "model")


def _openai_rules(request: dict[str, Any]) -> list[str]:
    messages = request["messages"]
    out = []
    open_calls: list[str] = []
    answered: set[str] = set()
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            if message.get("tool_call_id") not in open_calls:
                out.append(f"$[{i}]: a tool message for an id no preceding call has")
            answered.add(message.get("tool_call_id"))
            continue
        missing = [c for c in open_calls if c not in answered]
        if missing:
            out.append(f"$[{i}]: tool calls {missing} have no tool message")
        open_calls, answered = [], set()
        if role == "assistant":
            calls = message.get("tool_calls") or []
            content = message.get("content")
            if content is None and not calls:
                out.append(f"$[{i}]: null content without tool calls")
            open_calls = [c.get("id") for c in calls]
    return out


def _responses_rules(request: dict[str, Any]) -> list[str]:
    out = []
    calls: set[str] = set()
    for i, item in enumerate(request["input"]):
        kind = item.get("type")
        if kind in ("function_call", "custom_tool_call"):
            calls.add(item.get("call_id"))
        if kind in ("function_call_output", "custom_tool_call_output"):
            if item.get("call_id") not in calls:
                out.append(f"$[{i}]: an output for a call_id no earlier call has")
    return out


def _ollama_rules(request: dict[str, Any]) -> list[str]:
    out = []
    for i, message in enumerate(request["messages"]):
        for call in message.get("tool_calls") or ():
            if not isinstance((call.get("function") or {}).get("arguments"), dict):
                out.append(f"$[{i}]: tool call arguments must be an object")
    return out


_RULES: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    "openai-chat": _openai_rules,
    "mistral": _openai_rules,
    "openai-responses": _responses_rules,
    "anthropic": _anthropic_rules,
    "gemini": _gemini_rules,
    "bedrock-converse": _bedrock_rules,
    "ollama": _ollama_rules,
}


def rule_problems(provider: str, request: dict[str, Any]) -> list[str]:
    """What the provider's API refuses that its SDK types accept."""
    return _RULES[provider](request)


def problems(
    provider: str, request: dict[str, Any], extensions: frozenset[str] = frozenset()
) -> list[str]:
    """Everything the provider would refuse in ``request`` (empty: accepted); see
    :func:`sdk_problems` for ``extensions``."""
    found = sdk_problems(provider, request, extensions)
    if not found:
        found = rule_problems(provider, request)
    return found
