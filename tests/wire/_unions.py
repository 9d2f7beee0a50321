"""The members of the installed SDKs' stream unions, as the keys of the adapters' ``WIRE_RULES``.

Read from the packages themselves (openai, anthropic, google-genai, botocore), so an SDK release
that adds a member shows up as a member without a rule. Each function returns the sorted keys of
one adapter (see each adapter module's ``WIRE_RULES``)."""

from __future__ import annotations

import typing
from typing import Any


def union_members(annotation: Any) -> list[Any]:
    """The classes of a (possibly ``Annotated``, possibly nested) ``Union``."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return union_members(typing.get_args(annotation)[0])
    if origin is typing.Union:
        out: list[Any] = []
        for arg in typing.get_args(annotation):
            if arg is not type(None):
                out.extend(union_members(arg))
        return out
    return [annotation]


def type_literal(model: Any) -> str:
    """The ``type`` a pydantic event or block class is tagged with."""
    (value,) = typing.get_args(model.model_fields["type"].annotation)
    return str(value)


def responses_members() -> dict[str, Any]:
    """openai ``ResponseStreamEvent``: event ``type`` -> its class."""
    from openai.types.responses import ResponseStreamEvent

    return {type_literal(m): m for m in union_members(ResponseStreamEvent)}


def responses_keys() -> list[str]:
    return sorted(responses_members())


def anthropic_keys() -> list[str]:
    """``event:`` / ``delta:`` / ``block:`` members of the anthropic unions, beta included."""
    import anthropic.types as plain
    import anthropic.types.beta as beta

    keys: set[str] = set()
    for union in (plain.RawMessageStreamEvent, beta.BetaRawMessageStreamEvent):
        keys.update(f"event:{type_literal(m)}" for m in union_members(union))
    for union in (plain.RawContentBlockDelta, beta.BetaRawContentBlockDelta):
        keys.update(f"delta:{type_literal(m)}" for m in union_members(union))
    for start in (plain.RawContentBlockStartEvent, beta.BetaRawContentBlockStartEvent):
        blocks = union_members(start.model_fields["content_block"].annotation)
        keys.update(f"block:{type_literal(m)}" for m in blocks)
    return sorted(keys)


def bedrock_shapes() -> dict[str, list[str]]:
    """botocore's bedrock-runtime shapes: ``ConverseStreamOutput`` and the block unions."""
    import botocore.session

    model = botocore.session.get_session().get_service_model("bedrock-runtime")
    return {
        name: list(model.shape_for(name).members)
        for name in ("ConverseStreamOutput", "ContentBlockStart", "ContentBlockDelta")
    }


def bedrock_keys() -> list[str]:
    shapes = bedrock_shapes()
    keys = [f"event:{m}" for m in shapes["ConverseStreamOutput"]]
    keys += [f"start:{m}" for m in shapes["ContentBlockStart"]]
    keys += [f"delta:{m}" for m in shapes["ContentBlockDelta"]]
    return sorted(keys)


def chat_keys() -> list[str]:
    """The fields of openai's chunk types (``ChatCompletionChunk`` down to the tool call)."""
    from openai.types.chat import chat_completion_chunk as chunk

    keys = [f"chunk:{f}" for f in chunk.ChatCompletionChunk.model_fields]
    keys += [f"choice:{f}" for f in chunk.Choice.model_fields]
    keys += [f"delta:{f}" for f in chunk.ChoiceDelta.model_fields]
    keys += [f"tool_call:{f}" for f in chunk.ChoiceDeltaToolCall.model_fields]
    keys += [f"tool_call:function.{f}" for f in chunk.ChoiceDeltaToolCallFunction.model_fields]
    return sorted(keys)


def _wire_names(model: Any) -> list[str]:
    return [field.alias or name for name, field in model.model_fields.items()]


def gemini_keys() -> list[str]:
    """google-genai ``Part`` and ``FunctionCall`` fields, by the camelCase names sent."""
    from google.genai import types

    keys = [f"part:{n}" for n in _wire_names(types.Part)]
    keys += [f"function_call:{n}" for n in _wire_names(types.FunctionCall)]
    return sorted(keys)


#: adapter (its module in ``fastmerge._pure.providers``) -> the keys its WIRE_RULES must have
ENUMERATORS: dict[str, Any] = {
    "openai_responses": responses_keys,
    "anthropic": anthropic_keys,
    "bedrock_converse": bedrock_keys,
    "openai_chat": chat_keys,
    "gemini": gemini_keys,
}
