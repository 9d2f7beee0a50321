"""The twin's ``"bedrock-converse"`` adapter (``src/engine/providers/bedrock_converse.rs``).

Amazon Bedrock ConverseStream, one event per line, each wrapped as ``{"<eventType>": payload}``
(the shape the AWS SDKs expose after decoding ``application/vnd.amazon.eventstream``):

- ``messageStart{role}`` -> ``role``;
- ``contentBlockStart{contentBlockIndex, start}``: ``start.toolUse{toolUseId, name, ...}``
  opens a tool call (``provider_index`` = the block index; keys besides ``toolUseId`` and
  ``name``, e.g. ``type: "server_tool_use"``, go to the call's ``extra`` verbatim); any other
  start kind (``toolResult`` of a server tool, ...) is an ``unknown`` part holding the
  ``start`` object verbatim at the block's index;
- ``contentBlockDelta{contentBlockIndex, delta}``, the part index is the block index:
  ``text`` -> a text delta (an empty one adds nothing); ``toolUse.input`` -> the call's
  arguments (a string piece); ``reasoningContent.text`` -> a reasoning delta;
  ``reasoningContent.signature`` -> the reasoning part's payload (kind ``"signature"``);
  ``reasoningContent.redactedContent`` -> a redacted reasoning part with the blob as payload
  (kind ``"redacted_content"``); ``citation`` -> a citation of the text part; any other delta
  kind (``toolResult`` pieces of a server tool, ...) -> an ``unknown`` part of its own (no
  index: an unknown part cannot grow) holding the ``delta`` object verbatim;
- ``contentBlockStop`` closes the block;
- ``messageStop{stopReason, additionalModelResponseFields?}`` -> ``finish_reason`` and
  ``status: "complete"``; the other keys to ``provider_metadata``;
- ``metadata{usage, metrics, trace?, ...}`` -> ``usage`` (``inputTokens`` -> ``input_tokens``,
  ``outputTokens`` -> ``output_tokens``, ``totalTokens`` -> ``total_tokens``,
  ``cacheReadInputTokens`` -> ``cache_read_tokens``, ``cacheWriteInputTokens`` ->
  ``cache_write_tokens``, any other key verbatim) and the other keys to ``provider_metadata``;
- an ``*Exception`` event -> ``status: "failed"`` and ``provider_metadata["error"]``
  (``{"type": <event type>, ...payload}``);
- another event type -> ``provider_metadata[<event type>]``, verbatim.

A ``messageStart`` after ``messageStop`` starts another response (``new_response``, spec §6).

The ``p`` field of every payload is padding: it is never kept. Quirks are anomalies: a tool
delta before its ``contentBlockStart`` (``delta_before_start``), a delta of another kind than
the block its start opened (``mismatched_delta``), a block started twice
(``index_collision``), a stream that ended inside a block without ``messageStop``
(``truncated``, at :meth:`Adapter.end`).
"""

from __future__ import annotations

from typing import Any

from ..events import kind_name
from ._common import AdapterError, cut_call_anomaly, text_field

NAME = "bedrock-converse"

#: the ConverseStream event types (and the exceptions it names), by which a stream is told to be
#: Bedrock's
EVENT_TYPES = frozenset(
    {
        "messageStart",
        "contentBlockStart",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
        "internalServerException",
        "modelStreamErrorException",
        "validationException",
        "throttlingException",
        "serviceUnavailableException",
    }
)

# Bedrock's usage keys and the normalized names the fold reads (spec §5)
_USAGE_KEYS = {
    "inputTokens": "input_tokens",
    "outputTokens": "output_tokens",
    "totalTokens": "total_tokens",
    "cacheReadInputTokens": "cache_read_tokens",
    "cacheWriteInputTokens": "cache_write_tokens",
}

Leaves = list[tuple[int, dict[str, Any]]]


def _payload(kind: str, data: Any) -> dict[str, Any]:
    return {"provider": NAME, "kind": kind, "data": data}


def _anomaly(code: str, detail: str) -> dict[str, str]:
    return {"code": code, "detail": detail}


def _block_index(kind: str, payload: dict[str, Any]) -> int:
    index = payload.get("contentBlockIndex")
    if not isinstance(index, int) or isinstance(index, bool):
        raise AdapterError(f"{kind}: contentBlockIndex must be an integer, got {kind_name(index)}")
    return index


def _object(kind: str, field: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise AdapterError(f"{kind}: {field} must be an object, got {kind_name(value)}")
    return value


def _string(kind: str, field: str, value: Any) -> str:
    if not isinstance(value, str):
        raise AdapterError(f"{kind}: {field} must be a string, got {kind_name(value)}")
    return value


def _unpadded(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload without its ``p`` padding."""
    if "p" not in payload:
        return payload
    return {k: v for k, v in payload.items() if k != "p"}


class Adapter:
    """Bedrock ConverseStream events -> leaves (choice 0: Converse has one choice)."""

    name = NAME

    def __init__(self) -> None:
        # block index -> the kind its contentBlockStart gave ("toolUse", "toolResult", ...)
        self.started: dict[int, str] = {}
        # blocks with a start or a delta and no stop yet, in the order they opened: their kind
        self.open: dict[int, str] = {}
        self.call_ids: dict[int, Any] = {}  # block index -> toolUseId of its toolUse start
        self.done = False  # messageStop or an exception was seen
        self.stopped = False  # messageStop was seen

    # -- events

    def knows(self, event: dict[str, Any]) -> bool:
        """Whether the event is one key, its event type (spec §8): one of
        :data:`EVENT_TYPES` or an ``*Exception``, or another type whose payload is an object
        (kept in ``provider_metadata``)."""
        if len(event) != 1:
            return False
        kind, payload = next(iter(event.items()))
        return kind in EVENT_TYPES or kind.endswith("Exception") or isinstance(payload, dict)

    def new_response(self, event: dict[str, Any]) -> str | None:
        """Why the event starts another response, or None (spec §6)."""
        if self.stopped and "messageStart" in event:
            return "messageStart after messageStop"
        return None

    def ends_stream(self, event: dict[str, Any]) -> bool:
        """Whether the event is the stream's last (the batch reader ends the stream there):
        ``metadata``, which follows ``messageStop``."""
        return len(event) == 1 and "metadata" in event

    def event(self, event: dict[str, Any]) -> Leaves:
        if len(event) != 1:
            raise AdapterError(
                f"an event is an object with one key, its event type; got {len(event)} keys"
            )
        kind, payload = next(iter(event.items()))
        payload = _object(kind, "the payload", payload)
        if kind == "contentBlockDelta":
            return self._delta(payload)
        if kind == "contentBlockStart":
            return self._start(payload)
        if kind == "contentBlockStop":
            index = _block_index(kind, payload)
            self.open.pop(index, None)
            return []
        if kind == "messageStart":
            role = text_field(payload.get("role"), "messageStart.role")
            return [(0, {"role": role})] if role is not None else []
        if kind == "messageStop":
            return self._stop(payload)
        if kind == "metadata":
            return self._metadata(payload)
        if kind.endswith("Exception"):
            self.done = True
            error: dict[str, Any] = {"type": kind}
            error.update(_unpadded(payload))
            return [(0, {"status": "failed", "provider_metadata": {"error": error}})]
        return [(0, {"provider_metadata": {kind: _unpadded(payload)}})]

    def _start(self, payload: dict[str, Any]) -> Leaves:
        index = _block_index("contentBlockStart", payload)
        start = _object("contentBlockStart", "start", payload.get("start"))
        anomalies = []
        if index in self.started:
            anomalies.append(
                _anomaly("index_collision", f"content block {index} started a second time")
            )
        parts: list[dict[str, Any]] = []
        kind = "start"
        for key, value in start.items():
            kind = key
            if key == "toolUse":
                tool = _object("contentBlockStart", "start.toolUse", value)
                call: dict[str, Any] = {"part": "tool_call"}
                call_id = text_field(
                    tool.get("toolUseId"), "contentBlockStart.start.toolUse.toolUseId"
                )
                if call_id is not None:
                    call["id"] = call_id
                name = text_field(tool.get("name"), "contentBlockStart.start.toolUse.name")
                if name is not None:
                    call["name"] = name
                call["provider_index"] = index
                extra = {k: v for k, v in tool.items() if k not in ("toolUseId", "name")}
                if extra:
                    call["extra"] = extra
                self.call_ids[index] = call_id
                parts.append(call)
            else:
                parts.append(
                    {"part": "unknown", "provider": NAME, "kind": key, "raw": start, "index": index}
                )
                break  # the start object is kept whole
        self.started[index] = kind
        self.open.pop(index, None)
        self.open[index] = kind
        leaf: dict[str, Any] = {}
        if parts:
            leaf["parts"] = parts
        if anomalies:
            leaf["anomalies"] = anomalies
        return [(0, leaf)] if leaf else []

    def _delta(self, payload: dict[str, Any]) -> Leaves:
        index = _block_index("contentBlockDelta", payload)
        delta = _object("contentBlockDelta", "delta", payload.get("delta"))
        parts: list[dict[str, Any]] = []
        anomalies: list[dict[str, str]] = []
        for key, value in delta.items():
            self._check_kind(index, key, anomalies)
            if key == "text":
                text = _string("contentBlockDelta", "delta.text", value)
                if text:
                    parts.append({"part": "text", "text": text, "index": index})
            elif key == "toolUse":
                tool = _object("contentBlockDelta", "delta.toolUse", value)
                arguments = tool.get("input")
                if not isinstance(arguments, (str, dict)):
                    raise AdapterError(
                        "contentBlockDelta: delta.toolUse.input must be a string, got "
                        f"{kind_name(arguments)}"
                    )
                parts.append({"part": "tool_call", "provider_index": index, "arguments": arguments})
            elif key == "reasoningContent":
                self._reasoning(index, value, parts)
            elif key == "citation":
                parts.append({"part": "text", "text": "", "citations": [value], "index": index})
            else:
                parts.append({"part": "unknown", "provider": NAME, "kind": key, "raw": delta})
                break  # the delta object is kept whole
        leaf: dict[str, Any] = {}
        if parts:
            leaf["parts"] = parts
        if anomalies:
            leaf["anomalies"] = anomalies
        return [(0, leaf)] if leaf else []

    def _check_kind(self, index: int, kind: str, anomalies: list[dict[str, str]]) -> None:
        """A delta against what its block is: a tool delta needs its block's start, a block a
        start opened takes deltas of its kind (text and reasoning blocks have no start)."""
        started = self.started.get(index)
        if started is None:
            if kind == "toolUse" or kind == "toolResult":
                anomalies.append(
                    _anomaly(
                        "delta_before_start",
                        f"content block {index}: {kind} delta before its contentBlockStart",
                    )
                )
        elif started != kind and kind != "citation":
            anomalies.append(
                _anomaly(
                    "mismatched_delta", f"content block {index}: {kind} delta in a {started} block"
                )
            )
        if index not in self.open:
            self.open[index] = started if started is not None else kind

    def _reasoning(self, index: int, value: Any, parts: list[dict[str, Any]]) -> None:
        content = _object("contentBlockDelta", "delta.reasoningContent", value)
        for key, item in content.items():
            if key == "text":
                text = _string("contentBlockDelta", "delta.reasoningContent.text", item)
                if text:
                    parts.append({"part": "reasoning", "text": text, "index": index})
            elif key == "signature":
                parts.append(
                    {
                        "part": "reasoning",
                        "text": "",
                        "payload": _payload("signature", item),
                        "index": index,
                    }
                )
            elif key == "redactedContent":
                parts.append(
                    {
                        "part": "reasoning",
                        "text": "",
                        "redacted": True,
                        "payload": _payload("redacted_content", item),
                        "index": index,
                    }
                )
            else:
                raw = {"reasoningContent": {key: item}}
                parts.append({"part": "unknown", "provider": NAME, "kind": key, "raw": raw})

    def _stop(self, payload: dict[str, Any]) -> Leaves:
        self.done = True
        self.stopped = True
        leaf: dict[str, Any] = {}
        reason = text_field(payload.get("stopReason"), "messageStop.stopReason")
        if reason is not None:
            leaf["finish_reason"] = reason
        leaf["status"] = "complete"
        metadata = {k: v for k, v in payload.items() if k not in ("stopReason", "p")}
        if metadata:
            leaf["provider_metadata"] = metadata
        return [(0, leaf)]

    def _metadata(self, payload: dict[str, Any]) -> Leaves:
        leaf: dict[str, Any] = {}
        metadata: dict[str, Any] = {}
        for key, value in payload.items():
            if key == "usage":
                usage = _object("metadata", "usage", value)
                leaf["usage"] = {_USAGE_KEYS.get(k, k): v for k, v in usage.items()}
            elif key != "p":
                metadata[key] = value
        if metadata:
            leaf["provider_metadata"] = metadata
        return [(0, leaf)] if leaf else []

    # -- end of stream

    def end(self) -> Leaves:
        if self.done or not self.open:
            return []
        anomalies = []
        for index, kind in self.open.items():
            if kind == "toolUse":
                call_id = self.call_ids.get(index)
                detail = (
                    f"the stream ended inside tool call {call_id!r} (content "
                    f"block {index}); its arguments are kept as streamed"
                )
                anomalies.append(cut_call_anomaly(detail, call_id, None, index))
            else:
                detail = f"the stream ended inside content block {index} ({kind})"
                anomalies.append(_anomaly("truncated", detail))
        return [(0, {"anomalies": anomalies})]
