"""Streams built from the providers' own SDK types, one case per member of their stream unions.

Re-run with the next SDK release: the members come from the installed packages (``_unions``),
their values from the SDK models (``minimal``: each required field filled by its annotation,
then ``model_validate``), so a new member gets a case without an edit here; only its place in
a stream (which item kind an event belongs to) is stated below.

Each :class:`Case` is one stream of SDK objects (for Bedrock: the dicts boto3 yields, with raw
``bytes``), the ``WIRE_RULES`` keys it covers, the marker strings the stream carries (every one
must survive into the message: nothing lost), and, where the SDK has an accumulator, the
response that accumulator builds (to compare with the message rendered for the provider).
"""

from __future__ import annotations

import base64
import json
import typing
from dataclasses import dataclass, field
from typing import Any, Callable

import _unions

# ---------------------------------------------------------------------------------------------
# Minimal values from the SDK models


def minimal(annotation: Any, name: str = "") -> Any:
    """The JSON value of a minimal instance of ``annotation``: every required field of a
    model filled, the first member of a union, the first value of a Literal."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return minimal(args[0], name)
    if origin is typing.Union or type(annotation).__name__ == "UnionType":
        members = [a for a in args if a is not type(None)]
        return minimal(members[0], name)
    if origin is typing.Literal:
        return args[0]
    if origin in (list, tuple, set, typing.Sequence) or annotation in (list,):
        return []
    if origin is dict or annotation is dict:
        return {}
    if annotation is str:
        return f"{name or 'x'}_1"
    if annotation is bool:
        return False
    if annotation in (int, float):
        return 0
    if annotation is bytes:
        return base64.b64encode(b"\x00\x01").decode()
    fields = getattr(annotation, "model_fields", None)
    if fields is not None:
        out: dict[str, Any] = {}
        for key, info in fields.items():
            if info.is_required():
                out[info.alias or key] = minimal(info.annotation, key)
        return out
    return {}


def build(model: Any, **values: Any) -> Any:
    """An SDK object of ``model``: its minimal value with ``values`` over it, validated."""
    data = minimal(model)
    data.update(values)
    return model.model_validate(data)


# ---------------------------------------------------------------------------------------------
# Cases


@dataclass
class Case:
    """One generated stream (see the module docstring)."""

    id: str
    provider: str
    events: list[Any]
    covers: set[str]
    kept: list[str] = field(default_factory=list)
    #: the SDK accumulator's response (JSON), and what of the rendered message to compare
    reference: Callable[[], Any] | None = None
    rendered: Callable[[dict[str, Any]], Any] | None = None
    #: an expectation of the message, in words and as a check (compare with the rule)
    expect: Callable[[Any], Any] | None = None


def _marker(n: int) -> str:
    return f"M{n:03d}q"


# ---------------------------------------------------------------------------------------------
# OpenAI Responses

# which item kind a ``response.<name>.*`` event belongs to; None: the response's own events
_RESPONSE_LEVEL = {"created", "in_progress", "completed", "failed", "incomplete", "queued"}
_ITEM_OF = {
    "output_text": "message",
    "refusal": "message",
    "content_part": "message",
    "function_call_arguments": "function_call",
    "reasoning_text": "reasoning",
    "reasoning_summary_part": "reasoning",
    "reasoning_summary_text": "reasoning",
    "code_interpreter_call_code": "code_interpreter_call",
    "mcp_call_arguments": "mcp_call",
    "custom_tool_call_input": "custom_tool_call",
    "shell_call_command": "shell_call",
    "shell_call_output_content": "shell_call_output",
    "compaction": "compaction",
    "audio": "message",
}


def _item_kind(event_type: str) -> str | None:
    """The item kind of an event type, None for the response-level events."""
    if event_type == "error":
        return None
    name = event_type.split(".")[1]
    if name in _RESPONSE_LEVEL or name == "output_item":
        return None
    return _ITEM_OF.get(name, name)


def _responses_cases() -> list[Case]:
    from openai.types.responses import ResponseOutputItem

    members = _unions.responses_members()
    items = {_unions.type_literal(m): m for m in _unions.union_members(ResponseOutputItem)}
    by_kind: dict[str, list[str]] = {}
    for event_type in members:
        kind = _item_kind(event_type)
        if kind is not None:
            by_kind.setdefault(kind, []).append(event_type)
    cases = []
    for kind, event_types in sorted(by_kind.items()):
        item_model = items.get(kind)
        if item_model is None:  # an event of an item kind the output union lacks
            continue
        for cut in (False, True):
            cases.append(_responses_case(kind, item_model, sorted(event_types), members, cut))
        if any(t in _RESPONSES_DELTAS for t in event_types):
            cases.append(
                _responses_case(kind, item_model, sorted(event_types), members, False, True)
            )
    cases.append(_responses_status_case(members))
    return cases


def _response(status: str, output: list[Any]) -> dict[str, Any]:
    from openai.types.responses import Response

    data: dict[str, Any] = minimal(Response)
    data.update(id="resp_1", model="gpt-x", status=status, output=output, created_at=1)
    return data


#: Where each text delta goes in its item, as the API builds the item it sends done: the list
#: the delta's part sits in (``None``: the item itself), the part's index field, the text field.
_RESPONSES_DELTAS: dict[str, tuple[str | None, str, str]] = {
    "response.output_text.delta": ("content", "content_index", "text"),
    "response.refusal.delta": ("content", "content_index", "refusal"),
    "response.reasoning_text.delta": ("content", "content_index", "text"),
    "response.reasoning_summary_text.delta": ("summary", "summary_index", "text"),
    "response.function_call_arguments.delta": (None, "", "arguments"),
    "response.custom_tool_call_input.delta": (None, "", "input"),
}
#: The part each of those deltas fills, when the item has none yet.
_RESPONSES_PARTS: dict[str, dict[str, Any]] = {
    "response.output_text.delta": {"type": "output_text", "text": "", "annotations": []},
    "response.refusal.delta": {"type": "refusal", "refusal": ""},
    "response.reasoning_text.delta": {"type": "reasoning_text", "text": ""},
    "response.reasoning_summary_text.delta": {"type": "summary_text", "text": ""},
}
#: The ``.done`` events that repeat a whole text, and the delta event whose text they repeat.
_RESPONSES_DONES: dict[str, tuple[str, str]] = {
    "response.output_text.done": ("response.output_text.delta", "text"),
    "response.refusal.done": ("response.refusal.delta", "refusal"),
    "response.reasoning_text.done": ("response.reasoning_text.delta", "text"),
    "response.reasoning_summary_text.done": ("response.reasoning_summary_text.delta", "text"),
    "response.function_call_arguments.done": (
        "response.function_call_arguments.delta",
        "arguments",
    ),
    "response.custom_tool_call_input.done": ("response.custom_tool_call_input.delta", "input"),
}


def _responses_case(
    kind: str,
    item_model: Any,
    event_types: list[str],
    members: dict[str, Any],
    cut: bool,
    disagree: bool = False,
) -> Case:
    """A stream of one item of ``kind``; ``disagree``: its done events carry other texts than
    its deltas (``D…`` for ``M…``), which win (spec §6.1), as the SDK's accumulator has it."""
    item: dict[str, Any] = minimal(item_model)
    item["id"] = "item_1"
    # the item as added holds no text yet; the deltas build it, and the done events repeat
    # what they built (the API's order and values, so that the done item agrees with them)
    streamed = [t for t in event_types if t in _RESPONSES_DELTAS]
    for event_type in streamed:
        holder, _, text_field = _RESPONSES_DELTAS[event_type]
        if holder is None:
            item[text_field] = ""
    done_item = json.loads(json.dumps(item))
    seq = iter(range(1000))
    events: list[Any] = [
        build(
            members["response.created"],
            response=_response("in_progress", []),
            sequence_number=next(seq),
        )
    ]
    events.append(
        build(
            members["response.output_item.added"],
            item=item,
            output_index=0,
            sequence_number=next(seq),
        )
    )
    kept: list[str] = []
    placed: list[str] = []  # the markers the done item repeats
    texts: dict[str, str] = {}
    # the order the API sends: what opens a part (``*.added``), its deltas, then the status
    # events and the dones
    ordered = sorted(
        event_types,
        key=lambda t: (not t.endswith(".added"), not t.endswith(".delta"), t.endswith(".done"), t),
    )
    for event_type in ordered:
        model = members[event_type]
        values: dict[str, Any] = {"sequence_number": next(seq)}
        fields = model.model_fields
        if "output_index" in fields:
            values["output_index"] = 0
        if "item_id" in fields:
            values["item_id"] = "item_1"
        if "delta" in fields and fields["delta"].annotation is str:
            marker = _marker(len(kept))
            kept.append(marker)
            values["delta"] = marker
            texts[event_type] = marker
            if event_type in _RESPONSES_DELTAS:
                final = marker.replace("M", "D") if disagree else marker
                texts[event_type] = final
                values.update(_responses_place(done_item, event_type, final))
                placed.append(final)
        if event_type in _RESPONSES_DONES:
            delta_type, text_field = _RESPONSES_DONES[event_type]
            values[text_field] = texts.get(delta_type, "")
            values.update(_responses_done_place(done_item, delta_type))
        if "part" in fields and event_type.endswith("part.added"):
            part = dict(minimal(fields["part"].annotation))
            part.update({k: "" for k in ("text", "refusal") if k in part})
            values["part"] = part
        if cut and event_type.endswith(".done"):
            continue
        events.append(build(model, **values))
    if "status" in done_item:
        done_item["status"] = "completed"
    covers = set(event_types) | {"response.created", "response.output_item.added"}
    if not cut:
        done = build(
            members["response.output_item.done"],
            item=done_item,
            output_index=0,
            sequence_number=next(seq),
        )
        completed = build(
            members["response.completed"],
            response=_response("completed", [done_item]),
            sequence_number=next(seq),
        )
        events += [done, completed]
        covers |= {"response.output_item.done", "response.completed"}
        kept = placed  # the done events are authoritative: the item as done gives it
    return Case(
        id=f"responses-{kind}{'-cut' if cut else ''}{'-disagree' if disagree else ''}",
        provider="openai-responses",
        events=events,
        covers=covers,
        kept=kept,
        reference=None if cut else (lambda: _responses_reference(events)),
        rendered=lambda out: out.get("output"),
        expect=_replaced if disagree else None,
    )


def _replaced(message: Any) -> bool:
    """The done texts replaced the deltas, and the message says so."""
    anomalies = message.to_dict()["anomalies"]
    return any(
        a["code"] == "mismatched_delta" and "the done text replaces them" in a["detail"]
        for a in anomalies
    )


def _responses_place(item: dict[str, Any], event_type: str, text: str) -> dict[str, Any]:
    """Appends ``text`` where ``event_type``'s deltas go in ``item`` (its done form); the
    indexes the delta event carries."""
    holder, index_field, text_field = _RESPONSES_DELTAS[event_type]
    if holder is None:
        item[text_field] = item.get(text_field, "") + text
        return {}
    parts = item.setdefault(holder, [])
    if not isinstance(parts, list):
        parts = item[holder] = []
    parts.append(dict(_RESPONSES_PARTS[event_type]))
    parts[-1][text_field] += text
    return {index_field: len(parts) - 1}


def _responses_done_place(item: dict[str, Any], delta_type: str) -> dict[str, Any]:
    """The indexes a ``.done`` event carries: those of its delta's part in ``item``."""
    holder, index_field, _ = _RESPONSES_DELTAS[delta_type]
    if holder is None:
        return {}
    kind = _RESPONSES_PARTS[delta_type]["type"]
    parts = item.get(holder) or []
    at = next((i for i, p in enumerate(parts) if p.get("type") == kind), 0)
    return {index_field: at}


def _responses_reference(events: list[Any]) -> Any:
    """``output`` of the response openai's ``ResponseStreamState`` builds from the events."""
    from openai import omit
    from openai.lib.streaming.responses import ResponseStreamState

    state: Any = ResponseStreamState(input_tools=omit, text_format=omit)
    for event in events:
        state.handle_event(event)
    final = state._completed_response
    return None if final is None else final.model_dump(mode="json", exclude_none=True)["output"]


def _responses_status_case(members: dict[str, Any]) -> Case:
    """The response-level events: queued, in_progress, then incomplete / failed / error."""
    events = [
        build(members["response.queued"], response=_response("queued", []), sequence_number=0),
        build(
            members["response.in_progress"],
            response=_response("in_progress", []),
            sequence_number=1,
        ),
        build(
            members["response.incomplete"], response=_response("incomplete", []), sequence_number=2
        ),
    ]
    covers = {"response.queued", "response.in_progress", "response.incomplete"}
    failed = [
        build(members["response.failed"], response=_response("failed", []), sequence_number=2),
        build(members["error"], message="boom", code="server_error", sequence_number=3),
    ]
    return Case(
        id="responses-status",
        provider="openai-responses",
        events=events[:2] + failed,
        covers=covers | {"response.failed", "error"},
        expect=lambda m: m.status == "failed",
    )


# ---------------------------------------------------------------------------------------------
# Anthropic (beta models: a superset of the plain ones)

_BLOCK_DELTAS = {
    "text": ["text_delta", "citations_delta"],
    "thinking": ["thinking_delta", "signature_delta"],
    "tool_use": ["input_json_delta"],
    "server_tool_use": ["input_json_delta"],
    "mcp_tool_use": ["input_json_delta"],
    "compaction": ["compaction_delta"],
}


def _anthropic_cases() -> list[Case]:
    import anthropic.types.beta as beta

    blocks = {
        _unions.type_literal(m): m
        for m in _unions.union_members(
            beta.BetaRawContentBlockStartEvent.model_fields["content_block"].annotation
        )
    }
    deltas = {
        _unions.type_literal(m): m for m in _unions.union_members(beta.BetaRawContentBlockDelta)
    }
    cases = []
    for kind, model in sorted(blocks.items()):
        for cut in (False, True):
            cases.append(_anthropic_case(kind, model, deltas, cut))
    return cases


def _anthropic_delta(kind: str, model: Any, marker: str) -> Any:
    values: dict[str, Any] = {}
    if kind == "text_delta":
        values["text"] = marker
    elif kind == "thinking_delta":
        values["thinking"] = marker
    elif kind == "signature_delta":
        values["signature"] = marker
    elif kind == "input_json_delta":
        values["partial_json"] = f'{{"q": "{marker}"}}'
    elif kind == "compaction_delta":
        values["content"] = marker
    elif kind == "citations_delta":
        citation = {
            "type": "char_location",
            "cited_text": marker,
            "document_index": 0,
            "document_title": None,
            "start_char_index": 0,
            "end_char_index": 1,
        }
        values["citation"] = citation
    return build(model, **values)


def _anthropic_case(kind: str, model: Any, deltas: dict[str, Any], cut: bool) -> Case:
    import anthropic.types.beta as beta

    message = minimal(beta.BetaMessage)
    message.update(
        id="msg_1", model="claude-x", content=[], usage={"input_tokens": 3, "output_tokens": 1}
    )
    block = minimal(model)
    if kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
        block["input"] = {}
    if kind == "text":
        block["citations"] = []
    events: list[Any] = [
        build(beta.BetaRawMessageStartEvent, message=message),
        build(beta.BetaRawContentBlockStartEvent, index=0, content_block=block),
    ]
    covers = {"event:message_start", "event:content_block_start", f"block:{kind}"}
    kept: list[str] = []
    for delta_kind in _BLOCK_DELTAS.get(kind, []):
        marker = _marker(len(kept))
        kept.append(marker)
        delta = _anthropic_delta(delta_kind, deltas[delta_kind], marker)
        events.append(build(beta.BetaRawContentBlockDeltaEvent, index=0, delta=delta))
        covers |= {"event:content_block_delta", f"delta:{delta_kind}"}
    if not cut:
        events += [
            build(beta.BetaRawContentBlockStopEvent, index=0),
            build(
                beta.BetaRawMessageDeltaEvent,
                delta={"stop_reason": "end_turn"},
                usage={"output_tokens": 5},
            ),
            build(beta.BetaRawMessageStopEvent),
        ]
        covers |= {"event:content_block_stop", "event:message_delta", "event:message_stop"}
    if cut and kind == "tool_use":
        # a cut call is rendered raw and flagged, never parsed into an object (rules §6): the
        # SDK's accumulator parses it partially, so compare with that parse of what we kept
        return Case(
            id=f"anthropic-{kind}-cut",
            provider="anthropic",
            events=events,
            covers=covers,
            kept=kept,
            expect=lambda message: _cut_call_agrees(message, events),
        )
    return Case(
        id=f"anthropic-{kind}{'-cut' if cut else ''}",
        provider="anthropic",
        events=events,
        covers=covers,
        kept=kept,
        reference=lambda: _anthropic_reference(events),
        rendered=lambda out: out.get("content"),
    )


def _cut_call_agrees(message: Any, events: list[Any]) -> bool:
    """A cut tool call: flagged ``truncated``, rendered with its raw arguments, which parse
    (partially, as the SDK's accumulator does, with ``jiter``) to the SDK's ``input``."""
    import jiter

    from fastmerge.render import to_provider

    (block,) = _anthropic_reference(events)
    (call,) = message.tool_calls
    (rendered,) = to_provider(message, "anthropic")["content"]
    partial = jiter.from_json(call.arguments.encode(), partial_mode="trailing-strings")
    flagged = any(a["code"] == "truncated" for a in message.to_dict()["anomalies"])
    return bool(
        flagged
        and rendered["input"] == call.arguments
        and rendered.get("truncated") is True
        and partial == block["input"]
    )


def _anthropic_reference(events: list[Any]) -> Any:
    """``content`` of the message anthropic's own ``accumulate_event`` builds."""
    from anthropic.lib.streaming._beta_messages import accumulate_event
    from httpx import Headers

    snapshot: Any = None
    buffers: dict[int, bytes] = {}
    for event in events:
        snapshot = accumulate_event(
            event=event, current_snapshot=snapshot, json_bufs=buffers, request_headers=Headers()
        )
    return snapshot.model_dump(mode="json", by_alias=True, exclude_none=True)["content"]


# ---------------------------------------------------------------------------------------------
# OpenAI Chat


def _chunk(choices: list[dict[str, Any]], **top: Any) -> Any:
    from openai.types.chat import ChatCompletionChunk

    data = {"id": "chatcmpl-1", "created": 1, "model": "gpt-x", "object": "chat.completion.chunk"}
    data.update(top)
    data["choices"] = choices
    return ChatCompletionChunk.model_validate(data)


def _choice(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"index": 0, "delta": delta, "finish_reason": finish, **extra}


def _chat_cases() -> list[Case]:
    first = _choice({"role": "assistant", "content": ""})
    base = {"chunk:id", "chunk:choices", "chunk:created", "chunk:model", "chunk:object"}
    base |= {"choice:delta", "choice:index", "choice:finish_reason", "delta:role"}
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "f", "arguments": ""},
    }
    rows: list[tuple[str, list[dict[str, Any]], set[str], Callable[[Any], Any]]] = [
        (
            "content",
            [{"content": "M000q"}, {"content": "M001q"}],
            {"delta:content"},
            lambda m: m.content == "M000qM001q",
        ),
        (
            "refusal",
            [{"refusal": "M000q"}, {"refusal": "M001q"}],
            {"delta:refusal"},
            lambda m: m.refusal == "M000qM001q",
        ),
        (
            "tool_calls",
            [
                {"tool_calls": [call]},
                {"tool_calls": [{"index": 0, "function": {"arguments": '{"q": "M000q"}'}}]},
            ],
            {"delta:tool_calls", "tool_call:index", "tool_call:id", "tool_call:type"}
            | {"tool_call:function", "tool_call:function.name", "tool_call:function.arguments"},
            lambda m: (
                [(c.id, c.name, c.arguments) for c in m.tool_calls]
                == [("call_1", "f", '{"q": "M000q"}')]
            ),
        ),
        (
            "function_call",
            [
                {"function_call": {"name": "f", "arguments": ""}},
                {"function_call": {"arguments": '{"q": "M000q"}'}},
            ],
            {"delta:function_call"},
            lambda m: [(c.name, c.arguments) for c in m.tool_calls] == [("f", '{"q": "M000q"}')],
        ),
        (
            "audio",
            [
                {"audio": {"id": "audio_1", "data": "M000q", "transcript": "M001q"}},
                {"audio": {"data": "M002q", "transcript": "M003q"}},
                {"audio": {"expires_at": 1700000000}},
            ],
            {"delta:audio"},
            lambda m: (
                [p.raw for p in m.parts if type(p).__name__ == "UnknownPart"]
                == [
                    {"id": "audio_1", "data": "M000q", "transcript": "M001q"},
                    {"data": "M002q", "transcript": "M003q"},
                    {"expires_at": 1700000000},
                ]
            ),
        ),
    ]
    cases = []
    for name, deltas, covers, expect in rows:
        for cut in (False, True):
            chunks = [_chunk([first])]
            chunks += [_chunk([_choice(d)]) for d in deltas]
            kept = [w for d in deltas for w in _markers(d)]
            if not cut:
                logprobs = {
                    "content": [
                        {"token": "M009q", "logprob": -0.1, "bytes": [77], "top_logprobs": []}
                    ]
                }
                chunks.append(
                    _chunk(
                        [_choice({}, "stop", logprobs=logprobs)],
                        system_fingerprint="fp_1",
                        service_tier="default",
                    )
                )
                usage = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
                chunks.append(_chunk([], usage=usage, obfuscation="pad", moderation=_moderation()))
                kept += ["M009q", "M008q", "fp_1"]
                covers = covers | {
                    "choice:logprobs",
                    "chunk:system_fingerprint",
                    "chunk:service_tier",
                }
                covers |= {"chunk:usage", "chunk:obfuscation", "chunk:moderation"}
            cases.append(
                Case(
                    id=f"chat-{name}{'-cut' if cut else ''}",
                    provider="openai-chat",
                    events=chunks,
                    covers=covers | base,
                    kept=kept,
                    expect=expect,
                )
            )
    return cases


def _moderation() -> dict[str, Any]:
    from openai.types.chat.chat_completion_chunk import Moderation

    data: dict[str, Any] = minimal(Moderation)
    data["input"]["model"] = "M008q"
    return data


def _markers(value: Any) -> list[str]:
    """The marker strings inside a JSON value, in order."""
    text = json.dumps(value)
    out = []
    at = text.find("M0")
    while at >= 0:
        out.append(text[at : at + 5])
        at = text.find("M0", at + 5)
    return out


# ---------------------------------------------------------------------------------------------
# Gemini

#: a value of each Part field that rides beside content (google-genai's models check it)
_BESIDE_VALUES: dict[str, Any] = {
    "videoMetadata": {"startOffset": "1s", "endOffset": "2s"},
    "mediaResolution": {"level": "MEDIA_RESOLUTION_LOW"},
    "mediaProcessing": "STATIC",
    "partMetadata": {"tag": "M007q"},
    "audioTranscription": {"text": "M007q"},
    "speechMetadata": {"speaker": "M007q"},
    "documentMetadata": {"startPage": 1, "endPage": 2},
    "spreadsheetMetadata": {"visibleCells": "M007q", "sheetIndex": 0},
    "audioMetadata": {"startOffset": "1s", "endOffset": "2s"},
}
#: a part of each kind that is content of its own
_OWN_PARTS: dict[str, dict[str, Any]] = {
    "inlineData": {"inlineData": {"mimeType": "image/png", "data": "TTAwMHE="}},
    "fileData": {"fileData": {"mimeType": "image/png", "fileUri": "gs://b/M000q"}},
    "executableCode": {"executableCode": {"language": "PYTHON", "code": "print('M000q')"}},
    "codeExecutionResult": {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "M000q"}},
    "functionResponse": {"functionResponse": {"name": "f", "response": {"r": "M000q"}}},
    "toolCall": {"toolCall": {"id": "t1", "args": {"q": "M000q"}}},
    "toolResponse": {"toolResponse": {"id": "t1", "response": {"r": "M000q"}}},
}


def _gemini_chunk(parts: list[dict[str, Any]], finish: str | None = None, **top: Any) -> Any:
    from google.genai import types

    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    data = {"candidates": [candidate], "responseId": "r1", "modelVersion": "gemini-x", **top}
    return types.GenerateContentResponse.model_validate(data)


def _signature() -> str:
    return base64.b64encode(b"M005q-signature").decode()


def _gemini_cases() -> list[Case]:
    sig = _signature()
    rows: list[tuple[str, list[list[dict[str, Any]]], set[str], list[dict[str, Any]]]] = [
        (
            "text",
            [[{"text": "M000q"}], [{"text": "M001q", "thoughtSignature": sig}]],
            {"part:text", "part:thoughtSignature"},
            [{"text": "M000qM001q", "thoughtSignature": sig}],
        ),
        (
            "thought",
            [[{"text": "M000q", "thought": True}], [{"text": "M001q", "thought": True}]],
            {"part:text", "part:thought"},
            [{"text": "M000qM001q", "thought": True}],
        ),
        (
            "function_call",
            [
                [
                    {
                        "functionCall": {"id": "c1", "name": "f", "args": {"q": "M000q"}},
                        "thoughtSignature": sig,
                    }
                ]
            ],
            {"part:functionCall", "function_call:id", "function_call:name", "function_call:args"},
            [
                {
                    "functionCall": {"id": "c1", "name": "f", "args": {"q": "M000q"}},
                    "thoughtSignature": sig,
                }
            ],
        ),
        (
            "partial_args",
            [
                [{"functionCall": {"name": "f", "willContinue": True}}],
                [
                    {
                        "functionCall": {
                            "partialArgs": [
                                {"jsonPath": "$.q", "stringValue": "M000q", "willContinue": True}
                            ],
                            "willContinue": True,
                        }
                    }
                ],
                [
                    {
                        "functionCall": {
                            "partialArgs": [{"jsonPath": "$.q", "stringValue": "M001q"}],
                            "willContinue": True,
                        }
                    }
                ],
                [{"functionCall": {}}],
            ],
            {
                "part:functionCall",
                "function_call:name",
                "function_call:partialArgs",
                "function_call:willContinue",
            },
            [{"functionCall": {"name": "f", "args": {"q": "M000qM001q"}}}],
        ),
    ]
    for name, part in _OWN_PARTS.items():
        rows.append((name, [[part]], {f"part:{name}"}, [part]))
    for name, value in _BESIDE_VALUES.items():
        # beside a text part, a thought and a function call: kept with each
        text = {"text": "M001q", name: value}
        thought = {"text": "M002q", "thought": True, name: value}
        call = {"functionCall": {"name": "f", "args": {"q": "M003q"}}, name: value}
        rows.append(
            (f"beside-{name}", [[thought], [text], [call]], {f"part:{name}"}, [thought, text, call])
        )
    cases = []
    for name, chunks, covers, parts in rows:
        for cut in (False, True):
            events = [_gemini_chunk(p) for p in chunks]
            if not cut:
                usage = {"promptTokenCount": 3, "candidatesTokenCount": 2, "totalTokenCount": 5}
                events.append(_gemini_chunk([], "STOP", usageMetadata=usage))
            kept = _markers(chunks)
            cases.append(
                Case(
                    id=f"gemini-{name}{'-cut' if cut else ''}",
                    provider="gemini",
                    events=events,
                    covers=covers,
                    kept=kept,
                    # compare with the rule: the parts render back as sent, joined
                    reference=None if cut else (lambda parts=parts: parts),
                    rendered=lambda out: out["candidates"][0]["content"]["parts"],
                )
            )
    return cases


# ---------------------------------------------------------------------------------------------
# Bedrock ConverseStream (dicts as boto3 yields them: blobs as bytes)

_EXCEPTIONS = (
    "internalServerException",
    "modelStreamErrorException",
    "validationException",
    "throttlingException",
    "serviceUnavailableException",
)


def _bedrock_cases() -> list[Case]:
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
                    kept=_markers(_bedrock_json(events)),
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


def _bedrock_json(value: Any) -> Any:
    """A boto3 event as the HTTP API carries it: blobs as base64 text."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, dict):
        return {k: _bedrock_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_bedrock_json(v) for v in value]
    return value


# ---------------------------------------------------------------------------------------------
# The five input forms


def dump(case: Case, event: Any, nulls: bool) -> dict[str, Any]:
    """One event as a dict: with the SDK's explicit nulls, or without them."""
    if case.provider == "bedrock-converse":
        return typing.cast("dict[str, Any]", _bedrock_json(event))  # botocore sends no nulls
    # the API's own names (Anthropic's ``from``, Gemini's camelCase), as a log holds them
    data = event.model_dump(mode="json", by_alias=True, exclude_none=not nulls)
    return typing.cast("dict[str, Any]", data)


def sse(case: Case) -> bytes:
    """The stream as its transport carries it: SSE (``event:`` lines where the API sends
    them), JSON lines for Bedrock."""
    out = []
    for event in case.events:
        data = json.dumps(dump(case, event, nulls=False), ensure_ascii=False)
        if case.provider == "bedrock-converse":
            out.append(f"{data}\n")
        elif case.provider in ("openai-responses", "anthropic"):
            out.append(f"event: {event.type}\ndata: {data}\n\n")
        else:
            out.append(f"data: {data}\n\n")
    if case.provider == "openai-chat":
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


FORMS = ("sdk", "nulls", "bare", "sse", "fed13")


def run(case: Case, aggregate_module: Any, form: str) -> Any:
    """The message of ``case`` in input ``form`` on the backend of ``aggregate_module``."""
    provider = case.provider
    if form == "sdk":
        return aggregate_module.aggregate(case.events, provider)
    if form in ("nulls", "bare"):
        events = [dump(case, e, nulls=form == "nulls") for e in case.events]
        return aggregate_module.aggregate(events, provider)
    data = sse(case)
    if form == "sse":
        return aggregate_module.aggregate(data, provider)
    agg = aggregate_module.Aggregator(provider)
    for at in range(0, len(data), 13):
        agg.feed(data[at : at + 13])
    return agg.finish()


def all_cases() -> list[Case]:
    """Every generated case, in a stable order."""
    return (
        _responses_cases() + _anthropic_cases() + _chat_cases() + _gemini_cases() + _bedrock_cases()
    )
