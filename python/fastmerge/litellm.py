"""LiteLLM's ``stream_chunk_builder`` on fastmerge's engine (``pip install fastmerge[litellm]``).

:func:`stream_chunk_builder` takes what LiteLLM's own function takes (the chunks of
``litellm.completion(..., stream=True)``: ``ModelResponseStream`` objects, ``ModelResponse(stream=
True)`` objects or their ``model_dump()`` dicts, and the request's ``messages``) and returns the
``litellm.ModelResponse`` LiteLLM's function returns: the same fields, the same types.

This module only converts. The chunks go to the ``"openai-chat"`` adapter as one JSON array
(written by pydantic-core in one call, parsed by the backend), the engine merges them
(:func:`fastmerge.aggregate_choices`, one message per choice), :func:`fastmerge.to_provider`
renders the ``chat.completion`` and the result is built from it with LiteLLM's own types. What
LiteLLM computes that is not in the stream (a usage estimate when no chunk reported usage, the
reasoning-token estimate, ``_hidden_params["response_cost"]``) is computed by LiteLLM's own
functions (``token_counter``, ``completion_cost``), as its builder does.

Where the result deliberately differs from LiteLLM's, docs/litellm.md has a row.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Callable

import litellm
import pydantic_core
from litellm.exceptions import APIError
from litellm.types.utils import (
    ChatCompletionCustomToolCallPayload,
    ChatCompletionMessageCustomToolCall,
    Choices,
    CompletionTokensDetailsWrapper,
    Message,
    ModelResponse,
    TextChoices,
    Usage,
)

import fastmerge

from .parts import ReasoningPart, TextPart

if TYPE_CHECKING:
    from .messages import AssistantMessage

__all__ = ["stream_chunk_builder"]

_HIDDEN = "_hidden_params"
# Message fields LiteLLM's ``Message`` takes by name; the renderer's other keys become extras.
_MESSAGE_FIELDS = frozenset(
    {"role", "content", "tool_calls", "function_call", "refusal", "annotations", "audio"}
)
# Renderer keys LiteLLM's message never has: the reasoning text goes in ``reasoning_content``
# (LiteLLM's name) whichever field the server streamed it in.
_REASONING_FIELDS = frozenset({"reasoning_content", "reasoning"})
# LiteLLM delta fields the rendered message does not carry as LiteLLM's: ``thinking_blocks`` are
# rebuilt from the reasoning parts (see _thinking_blocks). (``images`` and ``reasoning_items``
# are the adapter's: every chunk's entries, in order, as LiteLLM's builder joins them.)
_NOT_REBUILT = frozenset({"thinking_blocks"})
# Response keys of the rendered ``chat.completion`` set by name below, and the chunk's LiteLLM
# bookkeeping (the request's stream options) that is no part of a response.
_RESPONSE_FIELDS = frozenset(
    {"id", "object", "created", "model", "choices", "usage", "system_fingerprint", "service_tier"}
)
_NOT_RESPONSE = frozenset({"stream_options"})
# The type of the annotation a LiteLLM citation (``provider_specific_fields["citation"]`` of a
# delta) travels in through the adapter: the engine appends a text part's citations in order,
# one object each; the builder takes them back out by this type.
_CITATION = "fastmerge.litellm.citation"
_CITATION_KEY = "citation"


def stream_chunk_builder(
    chunks: Iterable[Any] | None,
    messages: list[Any] | None = None,
    start_time: object = None,
    end_time: object = None,
    logging_obj: object = None,
    count_prompt_tokens: Callable[[], int] | None = None,
    *,
    strict: bool = False,
) -> ModelResponse | None:
    """The ``litellm.ModelResponse`` of a streamed chat completion, from its chunks.

    ``litellm.stream_chunk_builder``'s signature: ``messages`` (the request's) are counted for
    ``usage.prompt_tokens`` only when no chunk reported usage, with ``litellm.token_counter``
    (``count_prompt_tokens()`` instead when given); ``start_time`` and ``end_time`` are
    accepted and unused, as in LiteLLM. ``None`` for no chunks; ``chunks=None`` raises
    ``litellm.APIError``, as LiteLLM does.

    What the merge records as anomalies (a tool call cut by the end of the stream, a chunk of
    another response after the finish, a usage total that does not add up) is listed in
    ``response._hidden_params["fastmerge_anomalies"]`` (``{"choice", "code", "detail"}``
    each; absent when there is none); ``strict=True`` raises ``fastmerge.AnomalyError``
    instead, as :func:`fastmerge.aggregate` does.

    Raises:
        TypeError: ``logging_obj`` was given (LiteLLM's logging and cost-stamping path is not
            supported), or the chunks are text-completion chunks (``choices[].text``).
        fastmerge.EventError: no chunk could be read as a chat completion chunk (with
            ``strict=True``: a chunk could not be read).
        fastmerge.AnomalyError: ``strict=True`` and the merge met an anomaly.
    """
    del start_time, end_time  # LiteLLM's signature; its builder does not read them either
    if chunks is None:
        raise APIError(
            status_code=500,
            message="Error building chunks for logging/streaming usage calculation",
            llm_provider="",
            model="",
        )
    if logging_obj is not None:
        raise TypeError(
            "fastmerge.litellm.stream_chunk_builder does not take logging_obj (LiteLLM's "
            "logging path); call litellm.stream_chunk_builder for it"
        )
    items = list(chunks)
    if not items:
        return None
    # LiteLLM's response takes the hidden params of the first chunk given, before sorting
    hidden = _hidden_params(items[0])
    items = _in_stream_order(items)
    if _is_text_completion(items):
        raise TypeError(
            "text-completion chunks (choices[].text) are not chat chunks: "
            "fastmerge.litellm.stream_chunk_builder builds chat completions only"
        )
    events, thinking = _with_blocks_as_fields(_without_default_finishes(items))
    merged = _aggregate(events, strict)
    rendered = fastmerge.to_provider(merged, "openai-chat")
    response = _response(rendered, merged, hidden, thinking)
    usage = _usage(rendered.get("usage"), response, merged, messages, count_prompt_tokens)
    setattr(response, "usage", usage)  # noqa: B010 (a field LiteLLM's stubs do not declare)
    _set_response_cost(response, hidden)
    _set_provider_metadata(response, items)
    return response


# ---------------------------------------------------------------------------------------------
# Chunks -> events


def _hidden_params(chunk: Any) -> dict[str, Any]:
    """A chunk's LiteLLM ``_hidden_params`` (attribute, or key of a dumped chunk), copied."""
    if isinstance(chunk, Mapping):
        hidden = chunk.get(_HIDDEN)
    else:
        hidden = getattr(chunk, _HIDDEN, None)
    return dict(hidden) if isinstance(hidden, Mapping) else {}


def _in_stream_order(items: list[Any]) -> list[Any]:
    """The chunks in the order LiteLLM reads them: by ``_hidden_params["created_at"]`` (the
    time its stream wrapper made each one) when the first chunk has it, else as given."""
    if not _hidden_params(items[0]).get("created_at"):
        return items

    def created_at(chunk: Any) -> float:
        value = _hidden_params(chunk).get("created_at", float("inf"))
        return float(value) if isinstance(value, (int, float)) else float("inf")

    return sorted(items, key=created_at)


def _first_choice(chunk: Any) -> Any:
    choices = (
        chunk.get("choices") if isinstance(chunk, Mapping) else getattr(chunk, "choices", None)
    )
    return choices[0] if isinstance(choices, list) and choices else None


def _is_text_completion(items: list[Any]) -> bool:
    """Whether the first chunk with choices is a text completion's (``text``, no ``delta``)."""
    for chunk in items:
        choice = _first_choice(chunk)
        if choice is None:
            continue
        if isinstance(choice, TextChoices):
            return True
        return isinstance(choice, Mapping) and "text" in choice and "delta" not in choice
    return False


def _field(value: Any, name: str) -> Any:
    """A key of a dict, or an attribute of a LiteLLM object."""
    return value.get(name) if isinstance(value, Mapping) else getattr(value, name, None)


def _carries_blocks(chunk: Any) -> bool:
    """Whether a delta of the chunk has LiteLLM's ``thinking_blocks`` or a citation."""
    choices = _field(chunk, "choices")
    if not isinstance(choices, list):
        return False
    for choice in choices:
        delta = _field(choice, "delta")
        if delta is None:
            continue
        if _field(delta, "thinking_blocks"):
            return True
        fields = _field(delta, "provider_specific_fields")
        if isinstance(fields, Mapping) and fields.get(_CITATION_KEY) is not None:
            return True
    return False


def _without_default_finishes(items: list[Any]) -> list[Any]:
    """The chunks with the finish reason left out of a streamed choice that is LiteLLM's
    non-streaming ``Choices`` (``ModelResponse(stream=True, choices=[dict])`` makes one, whose
    ``finish_reason`` defaults to ``"stop"``) on every chunk but that choice's last: a
    constructor's default, not a finish the stream sent (the merge refuses content after a
    finish, rules §6.1). LiteLLM's builder reads the last chunk's; so does the merge."""
    from litellm.types.utils import Choices

    last: dict[Any, int] = {}
    for at, chunk in enumerate(items):
        for choice in _field(chunk, "choices") or ():
            last[_field(choice, "index")] = at
    out: list[Any] = []
    for at, chunk in enumerate(items):
        choices = _field(chunk, "choices") or ()
        if not any(
            isinstance(choice, Choices)
            and choice.finish_reason is not None
            and last.get(choice.index) != at
            for choice in choices
        ):
            out.append(chunk)
            continue
        data = dict(_plain(chunk))
        data["choices"] = [
            {k: v for k, v in _plain(choice).items() if k != "finish_reason"}
            if isinstance(choice, Choices) and last.get(choice.index) != at
            else _plain(choice)
            for choice in choices
        ]
        out.append(data)
    return out


def _plain(value: Any) -> Any:
    """A LiteLLM object as the dict its JSON is (a dict as it is)."""
    if isinstance(value, dict):
        return value
    return pydantic_core.to_jsonable_python(value, exclude_none=True, fallback=_unknown)


def _with_blocks_as_fields(items: list[Any]) -> tuple[list[Any], bool]:
    """The chunks with LiteLLM's own delta fields written as the ``openai-chat`` adapter's:
    each ``thinking_blocks`` entry as the ``reasoning_details`` entry it is (text and
    signature, or redacted data, at the block's index), each citation as an annotation of the
    text. Copies of the chunks that have them; the others as given. True when a thinking
    block was written so (the response then has ``thinking_blocks``)."""
    out: list[Any] = []
    thinking = False
    unnumbered: dict[Any, _Unnumbered] = {}
    for chunk in items:
        if not _carries_blocks(chunk):
            out.append(chunk)
            continue
        data = {k: v for k, v in _plain(chunk).items() if k != _HIDDEN}
        choices: list[Any] = []
        for choice in data.get("choices") or ():
            choice = _plain(choice)
            delta = choice.get("delta") if isinstance(choice, dict) else None
            if delta is not None:
                numbers = unnumbered.setdefault(choice.get("index"), _Unnumbered())
                delta, blocks = _delta_with_blocks_as_fields(_plain(delta), numbers)
                thinking = thinking or blocks
                choice = {**choice, "delta": delta}
            choices.append(choice)
        data["choices"] = choices
        out.append(data)
    return out, thinking


class _Unnumbered:
    """Where a choice's thinking blocks without an ``index`` (LiteLLM's transformers for
    Anthropic and Bedrock number them; hand-made chunks may not) begin and end, as LiteLLM
    reads them: a signature ends a block, redacted data is a block of its own. They are given
    numbers below zero, apart from the numbers providers give."""

    __slots__ = ("current", "used")

    def __init__(self) -> None:
        self.current = -1
        self.used = False

    def number(self, block: Mapping[str, Any]) -> int:
        if block.get("type") == "redacted_thinking":
            if self.used:
                self.current -= 1
            number = self.current
            self.current -= 1
            self.used = False
            return number
        number = self.current
        self.used = True
        if block.get("signature"):
            self.current -= 1
            self.used = False
        return number


def _delta_with_blocks_as_fields(
    delta: dict[str, Any], numbers: _Unnumbered
) -> tuple[dict[str, Any], bool]:
    out = dict(delta)
    blocks = out.get("thinking_blocks")
    # a delta that has the adapter's field itself keeps LiteLLM's as it is (never both mixed)
    written = isinstance(blocks, list) and bool(blocks) and out.get("reasoning_details") is None
    if written and isinstance(blocks, list):
        del out["thinking_blocks"]
        out["reasoning_details"] = [_detail(b, numbers) for b in blocks if isinstance(b, Mapping)]
    fields = out.get("provider_specific_fields")
    if isinstance(fields, Mapping) and fields.get(_CITATION_KEY) is not None:
        rest = {k: v for k, v in fields.items() if k != _CITATION_KEY}
        if rest:
            out["provider_specific_fields"] = rest
        else:
            del out["provider_specific_fields"]
        annotations = out.get("annotations")
        cited = {"type": _CITATION, "citation": fields[_CITATION_KEY]}
        out["annotations"] = [*annotations, cited] if isinstance(annotations, list) else [cited]
    return out, written


def _detail(block: Mapping[str, Any], numbers: _Unnumbered) -> dict[str, Any]:
    """A LiteLLM thinking block as a ``reasoning_details`` entry: ``redacted_thinking`` data as
    ``reasoning.encrypted``, a thinking block's text and signature as ``reasoning.text``."""
    if block.get("type") == "redacted_thinking":
        entry = {"type": "reasoning.encrypted", "data": block.get("data")}
    else:
        entry = {
            "type": "reasoning.text",
            "text": block.get("thinking"),
            "signature": block.get("signature"),
        }
    index = block.get("index")
    numbered = isinstance(index, int) and not isinstance(index, bool) and index >= 0
    entry["index"] = index if numbered else numbers.number(block)
    return {k: v for k, v in entry.items() if v is not None}


def _without_hidden(chunk: Any) -> Any:
    """A dict chunk without LiteLLM's ``_hidden_params`` (a copy; the input stays as it is)."""
    return {k: v for k, v in chunk.items() if k != _HIDDEN}


def _unknown(value: Any) -> Any:
    """What pydantic-core writes for a value it cannot serialize: an object's attributes
    (``SimpleNamespace`` tool calls), else null, as LiteLLM drops what it cannot read."""
    attributes = getattr(value, "__dict__", None)
    return dict(attributes) if isinstance(attributes, dict) else None


def _aggregate(items: list[Any], strict: bool) -> list[AssistantMessage]:
    """The messages of the chunks (one per choice), through the ``"openai-chat"`` adapter.

    Chunk dicts go to the backend as they are (read in Rust on the Rust backend). Objects, and
    dicts holding objects, go as one JSON array written by pydantic-core in one call: LiteLLM's
    objects without their ``None`` fields (the fields a chunk did not send), pydantic objects
    inside dicts as their JSON; the backend parses it, and on the Rust backend no Python
    object is made for a chunk."""
    # (isinstance of dict, not of the Mapping ABC: a C-level check per chunk)
    events = [_without_hidden(c) if isinstance(c, dict) and _HIDDEN in c else c for c in items]
    if all(isinstance(c, dict) for c in events):
        try:
            merged: list[AssistantMessage] = fastmerge.aggregate_choices(
                events, "openai-chat", strict=strict
            )
        except fastmerge.EventError:
            pass  # a dict holding an object the backend cannot read: as JSON, below
        else:
            unreadable = any(a["code"] == "unreadable_event" for m in merged for a in m.anomalies)
            if not unreadable:
                return merged
    data = pydantic_core.to_json(events, exclude_none=True, fallback=_unknown)
    merged = fastmerge.aggregate_choices(data, "openai-chat", strict=strict)
    return merged


# ---------------------------------------------------------------------------------------------
# chat.completion -> ModelResponse


def _response(
    rendered: dict[str, Any],
    merged: list[AssistantMessage],
    hidden: dict[str, Any],
    thinking: bool,
) -> ModelResponse:
    extras = {
        k: v
        for k, v in rendered.items()
        if k not in _RESPONSE_FIELDS and k not in _NOT_RESPONSE and v is not None
    }
    tier = rendered.get("service_tier")
    if tier is not None:
        extras["service_tier"] = tier
    response = ModelResponse(
        id=rendered.get("id") or "",
        created=rendered.get("created"),
        model=rendered.get("model"),
        system_fingerprint=rendered.get("system_fingerprint"),
        choices=[
            _choice(choice, message, thinking)
            for choice, message in zip(rendered["choices"], merged)
        ],
        **extras,
    )
    anomalies = [
        {"choice": choice["index"], **anomaly}
        for choice, message in zip(rendered["choices"], merged)
        for anomaly in message.anomalies
    ]
    if anomalies:  # LiteLLM's response has no place for them: beside its hidden params
        hidden = {**hidden, "fastmerge_anomalies": anomalies}
    if hidden:
        response._hidden_params = {**response._hidden_params, **hidden}
    return response


def _choice(choice: dict[str, Any], message: AssistantMessage, thinking: bool) -> Choices:
    extras = {
        k: v
        for k, v in choice.items()
        if k not in ("index", "message", "logprobs", "finish_reason") and v is not None
    }
    if message.completion_token_ids is not None:  # vLLM's token_ids, a field of LiteLLM's choice
        extras["token_ids"] = list(message.completion_token_ids)
    logprobs = choice.get("logprobs")
    return Choices(
        finish_reason=choice.get("finish_reason"),  # None reads "stop" (LiteLLM's Choices)
        index=choice["index"],
        message=_message(choice["message"], message, thinking),
        # the message's read-only logprobs are dict and list subclasses: LiteLLM's
        # ChoiceLogprobs validates them as the plain data they equal
        **({"logprobs": logprobs} if logprobs is not None else {}),
        **extras,
    )


def _message(rendered: dict[str, Any], message: AssistantMessage, thinking: bool) -> Message:
    calls = rendered.get("tool_calls")
    function_call = rendered.get("function_call")
    # LiteLLM's message content: the text; "" when there is none, None for a call-only turn
    content: str | None = "".join(p.text for p in message.parts if isinstance(p, TextPart))
    if not content:
        content = None if calls or function_call else ""
    fields: dict[str, Any] = {
        "role": rendered.get("role") or "assistant",
        "content": content,
        "tool_calls": [_tool_call(call) for call in calls] if calls else None,
        "function_call": function_call,
    }
    blocks = _thinking_blocks(message) if thinking else None
    if message.reasoning_content is not None and (
        # redacted blocks alone carry no reasoning text: LiteLLM's message has none
        message.reasoning_content or not blocks or _has_thinking(blocks)
    ):
        fields["reasoning_content"] = message.reasoning_content
    if thinking:  # the reasoning_details written from thinking_blocks are thinking_blocks again
        fields["thinking_blocks"] = blocks
    if rendered.get("refusal"):
        fields["refusal"] = rendered["refusal"]
    annotations = [a for a in rendered.get("annotations") or () if not _is_citation(a)]
    if annotations:
        fields["annotations"] = annotations
    if rendered.get("audio"):
        fields["audio"] = rendered["audio"]
    for key, value in rendered.items():
        if key in _MESSAGE_FIELDS or key in _REASONING_FIELDS or key in _NOT_REBUILT:
            continue
        if thinking and key == "reasoning_details":
            continue
        if value is not None:
            fields[key] = value
    citations = _citations(message)
    if citations:
        fields["provider_specific_fields"] = {
            "citations": citations,
            **(rendered.get("provider_specific_fields") or {}),
        }
    return Message(**fields)


def _has_thinking(blocks: list[dict[str, Any]]) -> bool:
    return any(block["type"] == "thinking" for block in blocks)


def _is_citation(annotation: Any) -> bool:
    return isinstance(annotation, Mapping) and annotation.get("type") == _CITATION


def _citations(message: AssistantMessage) -> list[Any]:
    """The citations the deltas sent, in order, packed as LiteLLM's builder packs them: a list
    of the lists when every citation is a list, else one list of them all."""
    cited = [
        c["citation"]
        for part in message.parts
        if isinstance(part, TextPart)
        for c in part.citations or ()
        if _is_citation(c)
    ]
    if not cited:
        return []
    return cited if all(isinstance(c, list) for c in cited) else [cited]


def _thinking_blocks(message: AssistantMessage) -> list[dict[str, Any]] | None:
    """LiteLLM's ``thinking_blocks``: one per reasoning part a thinking block made (every such
    part has the block's number as its index), in order: ``redacted_thinking`` with its data, else
    ``thinking`` with its text and whole signature (a block cut before its signature keeps its
    text). None when there is none, as LiteLLM's builder gives."""
    blocks: list[dict[str, Any]] = []
    for part in message.parts:
        if not isinstance(part, ReasoningPart):
            continue
        payload = part.payload
        if part.index is None:
            continue  # reasoning text sent only as reasoning_content: no block
        if payload is not None and payload.kind == "reasoning.encrypted":
            blocks.append({"type": "redacted_thinking", "data": payload.data})
            continue
        block: dict[str, Any] = {"type": "thinking", "thinking": part.text}
        if payload is not None:
            block["signature"] = payload.data
        blocks.append(block)
    return blocks or None


def _tool_call(call: dict[str, Any]) -> Any:
    """A rendered call for LiteLLM's ``Message``: a function call as its dict; a custom tool's
    call as the ``ChatCompletionMessageCustomToolCall`` LiteLLM's builder makes (its dict
    would read as another object: ``type`` set where LiteLLM's leaves the default)."""
    if call.get("type") != "custom":
        return call
    extra = {k: v for k, v in call.items() if k not in ("id", "type", "custom")}
    custom = call["custom"]
    return ChatCompletionMessageCustomToolCall(
        id=call["id"],
        custom=ChatCompletionCustomToolCallPayload(name=custom["name"], input=custom["input"]),
        **extra,
    )


# ---------------------------------------------------------------------------------------------
# Usage, as LiteLLM's builder completes it


def _usage(
    reported: dict[str, Any] | None,
    response: ModelResponse,
    merged: list[AssistantMessage],
    messages: list[Any] | None,
    count_prompt_tokens: Callable[[], int] | None,
) -> Usage:
    """The response's ``Usage``: the stream's merged usage; where a count was never reported,
    LiteLLM's estimate (``token_counter`` of the request's messages and of the response's
    content); the reasoning-token split filled in from ``reasoning_content`` as LiteLLM does."""
    model = response.model or ""
    fields: dict[str, Any] = dict(reported) if reported else {}
    estimated = not reported
    if estimated:
        try:
            if count_prompt_tokens is not None:
                fields["prompt_tokens"] = count_prompt_tokens()
            else:
                fields["prompt_tokens"] = litellm.token_counter(model=model, messages=messages)
        except Exception:  # LiteLLM's builder counts 0 when its tokenizer fails, and goes on
            fields["prompt_tokens"] = 0
    reasoning_tokens: int | None = None
    if estimated:
        reasoning_tokens = _reasoning_tokens(merged)
        from litellm.litellm_core_utils.prompt_templates.common_utils import (
            get_content_from_model_response,
        )

        output = get_content_from_model_response(response)
        fields["completion_tokens"] = litellm.token_counter(
            model=model, text=output, count_response_tokens=True
        ) + (reasoning_tokens or 0)
        fields["total_tokens"] = fields["prompt_tokens"] + fields["completion_tokens"]
    usage = Usage(**fields)
    details = usage.completion_tokens_details
    if not estimated and (details is None or details.reasoning_tokens is None):
        # counted only where it is used: a reported split is kept as reported
        reasoning_tokens = _reasoning_tokens(merged)
    if reasoning_tokens is not None:
        completion = usage.completion_tokens or 0
        capped = min(max(0, reasoning_tokens), completion)
        if details is None:
            usage.completion_tokens_details = CompletionTokensDetailsWrapper(
                reasoning_tokens=capped, text_tokens=completion - capped
            )
        elif details.reasoning_tokens is None:
            details.reasoning_tokens = capped
            if details.text_tokens is None:
                details.text_tokens = completion - capped
    # validated again, as LiteLLM's builder returns it (every details field present)
    return Usage(**usage.model_dump())


def _reasoning_tokens(merged: list[AssistantMessage]) -> int | None:
    """LiteLLM's reasoning-token estimate of a response: ``token_counter`` of each choice's
    reasoning text; 0 for a text-only response; None when it has other parts but no reasoning
    (LiteLLM's builder then leaves the completion-token split alone)."""
    texts = [m.reasoning_content for m in merged if m.reasoning_content]
    if texts:
        return sum(litellm.token_counter(text=t, count_response_tokens=True) for t in texts)
    text_only = all(all(part.PART == "text" for part in m.parts) and not m.refusal for m in merged)
    return 0 if text_only else None


def _set_provider_metadata(response: ModelResponse, items: list[Any]) -> None:
    """What LiteLLM's builder gathers from the chunks beside the merge, by its own function
    (the provider's config, named by the response's model): for Vertex AI and Gemini, each
    chunk's ``vertex_ai_grounding_metadata`` (and the URL-context, safety and citation
    metadata), a field of an object or of ``_hidden_params`` of a dict, joined into a list on
    the response and in its ``_hidden_params``."""
    from litellm.litellm_core_utils.streaming_chunk_builder_utils import ChunkProcessor

    ChunkProcessor.apply_provider_assembled_streaming_metadata(response, items)


def _set_response_cost(response: ModelResponse, hidden: dict[str, Any]) -> None:
    """``_hidden_params["response_cost"]``, as LiteLLM's builder prices a response it builds
    without a logging object: ``litellm.completion_cost``, else the model map's per-token
    prices; left unset when neither knows the model."""
    cost: float | None
    try:
        cost = litellm.completion_cost(
            completion_response=response, custom_llm_provider=hidden.get("custom_llm_provider")
        )
    except Exception:  # an unpriced model: LiteLLM falls back to the per-token prices
        try:
            prompt, completion = litellm.cost_per_token(
                model=response.model or "", usage_object=getattr(response, "usage", None)
            )
            cost = prompt + completion
        except Exception:  # no price at all: LiteLLM leaves the cost unset
            cost = None
    if cost is not None:
        response._hidden_params = {**response._hidden_params, "response_cost": cost}
