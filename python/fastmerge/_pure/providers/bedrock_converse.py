"""The twin's ``"bedrock-converse"`` adapter (``src/engine/providers/bedrock_converse.rs``).

Amazon Bedrock ConverseStream, one event per line, each wrapped as ``{"<eventType>": payload}``
(the shape the AWS SDKs expose after decoding ``application/vnd.amazon.eventstream``):

- ``messageStart{role}`` -> ``role``;
- ``contentBlockStart{contentBlockIndex, start}``: ``start.toolUse{toolUseId, name, ...}``
  opens a tool call (``provider_index`` = the block index; keys besides ``toolUseId`` and
  ``name``, e.g. ``type: "server_tool_use"``, go to the call's ``extra`` verbatim);
  ``start.image{format}`` opens an image block that its ``image`` deltas complete
  (``source``, or ``error``, set; a second ``bytes`` piece appended to the base64 text when
  that join is exact, else kept as a part of its own), emitted as one ``unknown`` part
  ``{"image": {...}}`` at the block's index at its ``contentBlockStop`` (or ``messageStop``,
  or the end of the stream), E104; any other start kind (``toolResult`` of a server tool,
  ...) is an ``unknown`` part holding the ``start`` object verbatim at the block's index;
- ``contentBlockDelta{contentBlockIndex, delta}``, the part index is the block index:
  ``text`` -> a text delta (an empty one adds nothing); ``toolUse.input`` -> the call's
  arguments (a string piece); ``reasoningContent.text`` -> a reasoning delta;
  ``reasoningContent.signature`` -> the reasoning part's payload (kind ``"signature"``);
  ``reasoningContent.redactedContent`` -> a redacted reasoning part with the blob as payload
  (kind ``"redacted_content"``; in a block that also carries text or a signature, the kind
  that came second is a part of its own at a spare index -1, -2, ...: one part holds one
  payload, and Bedrock's response holds the two as two blocks); ``citation`` -> a citation
  of the text part; any other delta kind (``toolResult`` pieces of a server tool, ``image``
  source, ...) -> an ``unknown`` part of its own (no index: an unknown part cannot grow)
  holding the ``delta`` object verbatim;
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

Blobs: boto3's ``converse_stream()`` yields blob fields (``redactedContent``, image and
document ``bytes``) as Python ``bytes``; they are read as the base64 text the HTTP API carries
(``events.json_value``), so both forms give one message (E103).

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

#: the rule of every member of botocore's ``ConverseStreamOutput`` shape (``event:``) and of
#: the ``ContentBlockStart`` (``start:``) and ``ContentBlockDelta`` (``delta:``) unions in the
#: ``bedrock-runtime`` service model, in words a user can read (rules §10.1)
WIRE_RULES: dict[str, str] = {
    "event:messageStart": "sets the message's role",
    "event:contentBlockStart": "starts the block at contentBlockIndex (a block started twice "
    "is an index_collision)",
    "event:contentBlockDelta": "applies its delta to the block at contentBlockIndex",
    "event:contentBlockStop": "closes the block at contentBlockIndex",
    "event:messageStop": "sets stopReason and status complete; additionalModelResponseFields "
    "and other keys go to provider_metadata",
    "event:metadata": "sets usage (Bedrock's names normalized); metrics, trace and other keys "
    "go to provider_metadata",
    "event:internalServerException": "status only: the message failed; the error goes to "
    "provider_metadata",
    "event:modelStreamErrorException": "status only: the message failed; the error goes to "
    "provider_metadata",
    "event:validationException": "status only: the message failed; the error goes to "
    "provider_metadata",
    "event:throttlingException": "status only: the message failed; the error goes to "
    "provider_metadata",
    "event:serviceUnavailableException": "status only: the message failed; the error goes to "
    "provider_metadata",
    "start:toolUse": "opens a tool call (toolUseId, name; type and other keys kept)",
    "start:toolResult": "opens a server tool's result block (toolUseId, type, status), kept "
    "verbatim; its toolResult deltas fill its content",
    "start:image": "opens an image block (its format), kept verbatim; its image delta gives "
    "the source: one block",
    "delta:text": "appends to the text block's text",
    "delta:toolUse": "appends its input to the tool call's raw arguments",
    "delta:toolResult": "appends its items (text, json) to the result block's content",
    "delta:reasoningContent": "text appends to the reasoning text; signature replaces the "
    "signature; redactedContent (a blob: base64 text, bytes from boto3) sets a redacted "
    "reasoning part, a part of its own beside the signed text when a block carries both",
    "delta:citation": "appends the citation to the text block's citations",
    "delta:image": "sets the image block's source (bytes as base64 text) or error",
}

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
        # block index -> its image block (start and deltas joined), emitted at its stop (E104)
        self.images: dict[int, dict[str, Any]] = {}
        # block index -> which reasoning its own part holds: "signed" (text, signature) or
        # "redacted"; the other, when the block carries both, goes to a part of its own
        self.reasoning: dict[int, str] = {}
        self.companions: dict[int, int] = {}  # block index -> that other part's index
        self.spare = 0  # the last part index given to such a part (-1, -2, ...: never a block's)
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
            image = self._image_part(index)
            return [(0, {"parts": [image]})] if image is not None else []
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
        image = self._image_part(index)  # an image block started again: the first as it came
        if image is not None:
            parts.append(image)
        kind = "start"
        for key, value in start.items():
            kind = key
            if key == "image" and isinstance(value, dict) and len(start) == 1 and not self.stopped:
                # its deltas complete it (E104); after messageStop each event is a part of its
                # own, refused by its own number (rules §6.1), never held for a later event
                self.images[index] = dict(value)
            elif key == "toolUse":
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
            elif key == "image" and len(delta) == 1 and self._join_image(index, value):
                pass  # joined into the image block its start opened (E104)
            else:
                parts.append({"part": "unknown", "provider": NAME, "kind": key, "raw": delta})
                break  # the delta object is kept whole
        leaf: dict[str, Any] = {}
        if parts:
            leaf["parts"] = parts
        if anomalies:
            leaf["anomalies"] = anomalies
        return [(0, leaf)] if leaf else []

    def _join_image(self, index: int, piece: Any) -> bool:
        """An image delta's fields into the image block at ``index``: ``source`` (or ``error``)
        set; a second ``bytes`` piece appended to the base64 text when the text so far is whole
        groups of three bytes (no padding), where the join is exact. False (the delta is kept
        as a part of its own) when there is no such block or the join would not be exact."""
        image = self.images.get(index)
        if image is None or not isinstance(piece, dict):
            return False
        source = piece.get("source")
        known = image.get("source")
        if isinstance(source, dict) and isinstance(known, dict):
            joined = dict(known)
            for key, value in source.items():
                current = joined.get(key)
                if key == "bytes" and isinstance(current, str):
                    if not isinstance(value, str) or len(current) % 4 or current.endswith("="):
                        return False
                    joined[key] = current + value
                else:
                    joined[key] = value
            piece = {**piece, "source": joined}
        image.update(piece)
        return True

    def _image_part(self, index: int) -> dict[str, Any] | None:
        """The image block at ``index`` as one part, once (None when there is none)."""
        image = self.images.pop(index, None)
        if image is None:
            return None
        raw = {"image": image}
        return {"part": "unknown", "provider": NAME, "kind": "image", "raw": raw, "index": index}

    def _open_images(self) -> list[dict[str, Any]]:
        """The image blocks still open, each as one part, in the order they started."""
        return [part for i in list(self.images) if (part := self._image_part(i)) is not None]

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
                    at = self._reasoning_index(index, "signed")
                    parts.append({"part": "reasoning", "text": text, "index": at})
            elif key == "signature":
                parts.append(
                    {
                        "part": "reasoning",
                        "text": "",
                        "payload": _payload("signature", item),
                        "index": self._reasoning_index(index, "signed"),
                    }
                )
            elif key == "redactedContent":
                parts.append(
                    {
                        "part": "reasoning",
                        "text": "",
                        "redacted": True,
                        "payload": _payload("redacted_content", item),
                        "index": self._reasoning_index(index, "redacted"),
                    }
                )
            else:
                raw = {"reasoningContent": {key: item}}
                parts.append({"part": "unknown", "provider": NAME, "kind": key, "raw": raw})

    def _reasoning_index(self, index: int, kind: str) -> int:
        """The part index of a ``kind`` reasoning piece ("signed": text or signature;
        "redacted") of block ``index``: the block's own index for the kind that came first; a
        spare index for the other, when a block carries both (its signed text and a redacted
        blob are two parts, as Bedrock's own response gives them two blocks: one part cannot
        hold two payloads)."""
        first = self.reasoning.setdefault(index, kind)
        if first == kind:
            return index
        other = self.companions.get(index)
        if other is None:
            self.spare -= 1
            other = self.companions[index] = self.spare
        return other

    def _stop(self, payload: dict[str, Any]) -> Leaves:
        self.done = True
        self.stopped = True
        leaf: dict[str, Any] = {}
        reason = text_field(payload.get("stopReason"), "messageStop.stopReason")
        if reason is not None:
            leaf["finish_reason"] = reason
        leaf["status"] = "complete"
        images = self._open_images()
        if images:
            leaf["parts"] = images
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
        images = self._open_images()
        if self.done or not self.open:
            return [(0, {"parts": images})] if images else []
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
        leaf: dict[str, Any] = {"parts": images} if images else {}
        leaf["anomalies"] = anomalies
        return [(0, leaf)]
