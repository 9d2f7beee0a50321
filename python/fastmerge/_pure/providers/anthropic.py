"""The twin's ``"anthropic"`` adapter (``src/engine/providers/anthropic.rs``): Anthropic
Messages streaming events to delta leaves.

Events: ``message_start`` (id, model, role, usage with a placeholder ``output_tokens``),
``content_block_start`` / ``content_block_delta`` / ``content_block_stop`` by block ``index``,
``message_delta`` (``stop_reason``, ``stop_sequence``, ``stop_details``, *cumulative* usage:
the leaf key ``final_usage``, whose counts replace, zeros included), ``message_stop`` (the
terminal signal), ``ping`` and ``error``.

Blocks become parts whose part ``index`` is the block index, so the fold continues the right
part:

- ``text`` -> a text part, made at the block start (``opened``: kept even when empty, E79;
  ``citations`` of the start kept as sent, ``[]`` included, E102; ``text_delta`` appends,
  ``citations_delta`` appends a citation; other keys of the block are
  kept as ``attributes``);
- ``thinking`` -> a reasoning part (``thinking_delta`` appends; ``signature_delta`` is the
  payload ``{"provider": "anthropic", "kind": "signature", "data": ...}``, which replaces);
- ``redacted_thinking`` -> a redacted reasoning part whose payload (kind
  ``"redacted_thinking"``) holds the block's ``data`` verbatim;
- ``tool_use`` -> a tool call (``id``, ``name``, ``provider_index`` = the block index); its
  input is a non-empty ``input`` object of the start, or the ``input_json_delta`` strings as
  raw arguments; other keys of the block (``caller``) go to the call's ``extra``;
- any other block (``server_tool_use``, ``*_tool_result``, ``mcp_tool_use``, ``compaction``,
  ...) -> an ``unknown`` part holding the block verbatim with its deltas applied
  (``input_json_delta`` strings parsed into ``input``; a ``compaction_delta``'s fields
  replace the block's, as each holds the whole content so far (E101); the string fields of
  another delta appended to the block's field of that name). It is emitted whole at its
  ``content_block_stop`` (or when the stream ends without one). A ``fallback`` block's
  ``to.model`` (the model that served the reply from there on) is the message's model.

An event whose ``type`` is not one of :data:`EVENT_TYPES` is not read (``unrecognized_event``);
a second ``message_start`` starts another response (``new_response``, spec §6).

Quirks are anomalies, never exceptions: a delta for an index with no block start
(``delta_before_start``: the block is opened from the delta's kind), a block start at an index
already used (``index_collision``: the new block gets a part index of its own, -1, -2, ...), a
delta of another block kind (``mismatched_delta``: kept in a part of its own), and a block
still open at ``message_stop`` or at the end of a stream without its terminal signal
(``truncated``).
"""

from __future__ import annotations

from typing import Any

from .. import events
from ._common import AdapterError, cut_call_anomaly, text_field

NAME = "anthropic"

#: the event types of the Messages stream (an event of another ``type`` is not read: spec §8)
EVENT_TYPES = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "ping",
        "error",
    }
)

#: the rule of every member of the SDK's stream unions (``RawMessageStreamEvent`` and its beta
#: twin, their delta unions, the blocks ``content_block_start`` carries), and of the wire's
#: ``ping`` and ``error`` events, in words a user can read (rules §10.1)
WIRE_RULES: dict[str, str] = {
    "event:message_start": "sets the message's id, model and role, and its usage (the output "
    "count a placeholder); other message keys go to provider_metadata",
    "event:message_delta": "sets stop_reason (stop_sequence, stop_details and other keys to "
    "provider_metadata); its usage is cumulative: its counts replace",
    "event:message_stop": "status only: the message is complete; blocks still open are "
    "flagged truncated",
    "event:content_block_start": "starts the block at its index (a used index is an "
    "index_collision, kept apart)",
    "event:content_block_delta": "applies its delta to the block at its index (no block there: "
    "delta_before_start, the block opened from the delta's kind)",
    "event:content_block_stop": "closes the block at its index; a verbatim block is emitted whole",
    "event:ping": "ignored (keep-alive)",
    "event:error": "status only: the message failed; the error goes to provider_metadata",
    "delta:text_delta": "appends to the text block's text",
    "delta:citations_delta": "appends its citation to the text block's citations",
    "delta:thinking_delta": "appends to the thinking block's text",
    "delta:signature_delta": "replaces the thinking block's signature (the last is the whole)",
    "delta:input_json_delta": "appends to the tool call's raw arguments (a server or MCP tool "
    "use: to its input, parsed at the end)",
    "delta:compaction_delta": "replaces the compaction block's content and encrypted_content "
    "(the last is the whole)",
    "block:text": "a text part; citations kept as sent ([] included), other keys kept",
    "block:thinking": "a reasoning part with its signature",
    "block:redacted_thinking": "a redacted reasoning part holding data verbatim",
    "block:tool_use": "a tool call (id, name; input or the input_json_delta pieces); other "
    "keys (caller) kept",
    "block:fallback": "kept verbatim; its to.model sets the message's model",
}
for _kind in (
    "server_tool_use",
    "mcp_tool_use",
    "web_search_tool_result",
    "web_fetch_tool_result",
    "advisor_tool_result",
    "code_execution_tool_result",
    "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result",
    "tool_search_tool_result",
    "mcp_tool_result",
    "mcp_tool_listing",
    "container_upload",
    "compaction",
):
    WIRE_RULES[f"block:{_kind}"] = "kept verbatim, its deltas applied, emitted at its stop"
del _kind

# message keys read into message fields; the others go to provider_metadata
_MESSAGE_FIELDS = ("id", "type", "role", "model", "content", "stop_reason", "usage")
# content_block_delta type -> the block kind it belongs to
_DELTA_KINDS = {
    "text_delta": "text",
    "citations_delta": "text",
    "thinking_delta": "thinking",
    "signature_delta": "thinking",
    "input_json_delta": "tool_use",
}
# deltas of a verbatim block whose fields replace the block's (the SDK's rule), where the
# string fields of another delta append
_REPLACING = frozenset({"compaction_delta"})
_KNOWN_BLOCKS = ("text", "thinking", "redacted_thinking", "tool_use")


class _Block:
    """One content block: its type, the part index its parts use, and (unknown blocks) the
    block being completed by its deltas."""

    __slots__ = ("type", "kind", "index", "part_index", "open", "implicit", "name", "raw", "json")

    def __init__(self, type_: str, index: int, part_index: int, implicit: bool) -> None:
        self.type = type_
        self.kind = type_ if type_ in _KNOWN_BLOCKS else "unknown"
        self.index = index
        self.part_index = part_index
        self.open = True
        self.implicit = implicit  # opened by a delta before its start
        self.name: Any = None  # tool_use: the tool's name (for messages)
        self.raw: dict[str, Any] | None = None  # unknown: the block, deltas applied
        self.json: list[str] = []  # unknown: input_json_delta strings


def _anomaly(code: str, detail: str) -> dict[str, Any]:
    return {"code": code, "detail": detail}


def _payload(kind: str, data: Any) -> dict[str, Any]:
    return {"provider": NAME, "kind": kind, "data": data}


def _index(event: dict[str, Any], where: str) -> int:
    index = event.get("index")
    if type(index) is not int:
        raise AdapterError(f"{where}: 'index' must be an integer, not {events.kind_name(index)}")
    return index


def _typed(value: Any, where: str, field: str) -> dict[str, Any]:
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        raise AdapterError(f"{where}: '{field}' must be an object with a string 'type'")
    return value


def _string(value: Any, where: str, field: str) -> str:
    if not isinstance(value, str):
        raise AdapterError(f"{where}: '{field}' must be a string, not {events.kind_name(value)}")
    return value


def _usage(usage: Any, where: str) -> dict[str, Any]:
    """The provider's usage keys in their order, ``cache_read_input_tokens`` under its
    normalized name ``cache_read_tokens`` (the name ``UsageMetadata`` reads it as), then
    ``cache_write_tokens`` beside ``cache_creation_input_tokens`` (a field of its own)."""
    if not isinstance(usage, dict):
        raise AdapterError(f"{where}: 'usage' must be an object, not {events.kind_name(usage)}")
    out: dict[str, Any] = {}
    for key, value in usage.items():
        out["cache_read_tokens" if key == "cache_read_input_tokens" else key] = value
    write = usage.get("cache_creation_input_tokens")
    if write is not None:
        out["cache_write_tokens"] = write
    return out


class Adapter:
    """Anthropic Messages events -> leaves (choice 0; the API has no ``n``)."""

    name = NAME

    def __init__(self) -> None:
        self.blocks: dict[int, _Block] = {}  # block index -> its most recent block
        self.order: list[_Block] = []  # every block, in start order
        self.spare = 0  # part indexes handed out for collisions and mismatches: -1, -2, ...
        self.side: dict[tuple[int, str], int] = {}  # (part index, delta kind) -> its own part
        self.terminal = False  # message_stop or error seen
        self.started = False  # message_start seen
        # the first message_start's message id: a message_start with it again is the same
        # response (a stream logged twice, spec §6.1), not another one
        self.start_id: str | None = None

    # -- events

    def knows(self, event: dict[str, Any]) -> bool:
        """Whether the event's ``type`` is one of :data:`EVENT_TYPES` (spec §8)."""
        kind = event.get("type")
        return isinstance(kind, str) and kind in EVENT_TYPES

    def new_response(self, event: dict[str, Any]) -> str | None:
        """Why the event starts another response, or None (spec §6)."""
        if self.started and event.get("type") == "message_start":
            message = event.get("message")
            start_id = message.get("id") if isinstance(message, dict) else None
            if start_id is None or start_id != self.start_id:
                return "a second message_start"
        return None

    def ends_stream(self, event: dict[str, Any]) -> bool:
        """Whether the event is the stream's last (the batch reader ends the stream there):
        ``message_stop``."""
        return event.get("type") == "message_stop"

    def event(self, event: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
        kind = event.get("type")
        if not isinstance(kind, str):
            raise AdapterError(f"an event needs a string 'type', not {events.kind_name(kind)}")
        if kind == "content_block_delta":
            leaf = self._delta(event)
        elif kind == "content_block_start":
            leaf = self._start(event)
        elif kind == "content_block_stop":
            leaf = self._stop(event)
        elif kind == "message_start":
            leaf = self._message_start(event)
        elif kind == "message_delta":
            leaf = self._message_delta(event)
        elif kind == "message_stop":
            leaf = self._message_stop(event)
        elif kind == "error":
            leaf = self._error(event)
        else:
            return []  # ping (the aggregator reads no event of another type)
        return [(0, leaf)] if leaf else []

    def end(self) -> list[tuple[int, dict[str, Any]]]:
        """A stream without its terminal signal: each open block is ``truncated``; an unknown
        block cut short is kept as far as it came."""
        leaf = self._close_open(None if self.terminal else "the stream ended")
        return [(0, leaf)] if leaf else []

    # -- message events

    def _message_start(self, event: dict[str, Any]) -> dict[str, Any]:
        message = event.get("message")
        if not isinstance(message, dict):
            raise AdapterError(
                f"message_start: 'message' must be an object, not {events.kind_name(message)}"
            )
        if not self.started:
            start_id = message.get("id")
            self.start_id = start_id if isinstance(start_id, str) else None
        self.started = True
        leaf: dict[str, Any] = {}
        role = text_field(message.get("role"), "message_start.message.role")
        if role is not None:
            leaf["role"] = role
        value = text_field(message.get("id"), "message_start.message.id")
        if value is not None:
            leaf["response_id"] = value
        value = text_field(message.get("model"), "message_start.message.model")
        if value is not None:
            leaf["response_model"] = value
        content = message.get("content")
        if content is not None:
            if not isinstance(content, list):
                raise AdapterError(
                    f"message_start: 'content' must be an array, not {events.kind_name(content)}"
                )
            if content:  # never seen: blocks given whole in the message kept verbatim
                leaf["parts"] = [
                    {"part": "unknown", "provider": NAME, "kind": _block_type(b), "raw": b}
                    for b in content
                ]
        usage = message.get("usage")
        if usage is not None:
            leaf["usage"] = _usage(usage, "message_start")
        value = text_field(message.get("stop_reason"), "message_start.message.stop_reason")
        if value is not None:
            leaf["finish_reason"] = value
        metadata = {k: v for k, v in message.items() if k not in _MESSAGE_FIELDS and v is not None}
        if metadata:
            leaf["provider_metadata"] = metadata
        return leaf

    def _message_delta(self, event: dict[str, Any]) -> dict[str, Any]:
        delta = event.get("delta")
        if delta is not None and not isinstance(delta, dict):
            raise AdapterError(
                f"message_delta: 'delta' must be an object, not {events.kind_name(delta)}"
            )
        leaf: dict[str, Any] = {}
        metadata: dict[str, Any] = {}
        if delta is not None:
            value = text_field(delta.get("stop_reason"), "message_delta.delta.stop_reason")
            if value is not None:
                leaf["finish_reason"] = value
            for key, value in delta.items():
                if key != "stop_reason" and value is not None:
                    metadata[key] = value
        usage = event.get("usage")
        if usage is not None:
            # cumulative counts: final for every field they carry, zeros included (spec §5)
            leaf["final_usage"] = _usage(usage, "message_delta")
        for key, value in event.items():
            if key not in ("type", "delta", "usage") and value is not None:
                metadata[key] = value
        if metadata:
            leaf["provider_metadata"] = metadata
        return leaf

    def _message_stop(self, event: dict[str, Any]) -> dict[str, Any]:
        self.terminal = True
        leaf = self._close_open("message_stop came first")
        metadata = {k: v for k, v in event.items() if k != "type" and v is not None}
        if metadata:
            leaf["provider_metadata"] = metadata
        leaf["status"] = "complete"
        return leaf

    def _error(self, event: dict[str, Any]) -> dict[str, Any]:
        self.terminal = True
        leaf: dict[str, Any] = {"status": "failed"}
        error = event.get("error")
        if error is not None:
            leaf["provider_metadata"] = {"error": error}
        return leaf

    # -- content blocks

    def _start(self, event: dict[str, Any]) -> dict[str, Any]:
        index = _index(event, "content_block_start")
        block = _typed(event.get("content_block"), "content_block_start", "content_block")
        type_ = block["type"]
        leaf: dict[str, Any] = {}
        known = self.blocks.get(index)
        current: _Block
        if known is not None and known.implicit and known.kind == type_ and known.raw is None:
            # the start of a block whose deltas came first: the same part
            current = known
            current.implicit = False
        else:
            part_index = index
            if known is not None:
                part_index = self._spare()
                leaf["anomalies"] = [
                    _anomaly(
                        "index_collision",
                        f"content_block_start of a {type_} block at index {index}, already "
                        f"used by a {known.type} block: kept apart as part index {part_index}",
                    )
                ]
            current = _Block(type_, index, part_index, False)
            self.blocks[index] = current
            self.order.append(current)
        part = self._start_part(current, block)
        if part is not None:
            leaf["parts"] = [part]
        if type_ == "fallback":
            # another model served the reply from here on: the message's model (the SDK's)
            served = block.get("to")
            model = served.get("model") if isinstance(served, dict) else None
            if isinstance(model, str) and model:
                leaf["response_model"] = model
        return leaf

    def _start_part(self, block: _Block, raw: dict[str, Any]) -> dict[str, Any] | None:
        kind = block.kind
        index = block.part_index
        if kind == "text":
            text = raw.get("text")
            part: dict[str, Any] = {
                "part": "text",
                "text": "" if text is None else _string(text, "content_block_start", "text"),
            }
            citations = raw.get("citations")
            if isinstance(citations, list):  # [] too: kept as sent (E102)
                part["citations"] = citations
            attributes = {k: v for k, v in raw.items() if k not in ("type", "text", "citations")}
            if attributes:
                part["attributes"] = attributes
            part["index"] = index
            part["opened"] = True  # a block the stream sent is kept even when empty (E79)
            return part
        if kind == "thinking":
            text = raw.get("thinking")
            part = {
                "part": "reasoning",
                "text": "" if text is None else _string(text, "content_block_start", "thinking"),
            }
            signature = raw.get("signature")
            if signature is not None and signature != "":
                part["payload"] = _payload("signature", signature)
            part["index"] = index
            return part
        if kind == "redacted_thinking":
            return {
                "part": "reasoning",
                "text": "",
                "payload": _payload("redacted_thinking", raw.get("data")),
                "redacted": True,
                "index": index,
            }
        if kind == "tool_use":
            block.name = text_field(raw.get("name"), "content_block_start.content_block.name")
            part = {
                "part": "tool_call",
                "id": text_field(raw.get("id"), "content_block_start.content_block.id"),
                "name": block.name,
                "provider_index": index,
            }
            given = raw.get("input")
            if isinstance(given, (dict, str)) and given:
                part["arguments"] = given
            extra = {k: v for k, v in raw.items() if k not in ("type", "id", "name", "input")}
            if extra:
                part["extra"] = extra
            return part
        block.raw = dict(raw)  # unknown: emitted whole at its stop
        return None

    def _delta(self, event: dict[str, Any]) -> dict[str, Any]:
        index = _index(event, "content_block_delta")
        delta = _typed(event.get("delta"), "content_block_delta", "delta")
        type_ = delta["type"]
        kind = _DELTA_KINDS.get(type_)
        leaf: dict[str, Any] = {}
        anomalies: list[dict[str, Any]] = []
        block = self.blocks.get(index)
        if block is None:
            opened = kind if kind is not None else _strip_delta(type_)
            block = _Block(opened, index, index, True)
            if block.kind == "unknown":
                block.raw = {"type": opened}
            self.blocks[index] = block
            self.order.append(block)
            anomalies.append(
                _anomaly(
                    "delta_before_start",
                    f"{type_} at index {index} before any content_block_start: "
                    f"kept as a {opened} block",
                )
            )
        if block.kind == "unknown":
            self._apply(block, delta, type_)
        elif kind == block.kind:
            leaf["parts"] = [_delta_part(delta, type_, block.part_index)]
        else:
            # a delta of another kind of block: kept in a part of its own
            detail = (
                f"{type_} for the {block.type} block at index {index}: kept as a part of its own"
            )
            if kind is None:
                anomalies.append(_anomaly("mismatched_delta", detail))
                leaf["parts"] = [{"part": "unknown", "provider": NAME, "kind": type_, "raw": delta}]
            else:
                key = (block.part_index, kind)
                side = self.side.get(key)
                if side is None:
                    side = self.side[key] = self._spare()
                    anomalies.append(_anomaly("mismatched_delta", detail))
                leaf["parts"] = [_delta_part(delta, type_, side)]
        if anomalies:
            return {"anomalies": anomalies, **leaf}
        return leaf

    def _apply(self, block: _Block, delta: dict[str, Any], type_: str) -> None:
        """A delta of an unknown block: JSON input pieces kept, string fields appended, other
        fields set."""
        raw = block.raw
        assert raw is not None
        for key, value in delta.items():
            if key == "type":
                continue
            if type_ == "input_json_delta" and key == "partial_json":
                block.json.append(_string(value, type_, key))
                continue
            current = raw.get(key)
            if type_ in _REPLACING:
                raw[key] = value  # the delta holds the block's whole field so far (E101)
            elif isinstance(value, str) and (current is None or isinstance(current, str)):
                raw[key] = value if current is None else current + value
            else:
                raw[key] = value

    def _stop(self, event: dict[str, Any]) -> dict[str, Any]:
        index = _index(event, "content_block_stop")
        block = self.blocks.get(index)
        if block is None or not block.open:
            return {}
        block.open = False
        if block.raw is not None:
            return {"parts": [self._unknown_part(block)]}
        return {}

    def _unknown_part(self, block: _Block) -> dict[str, Any]:
        assert block.raw is not None
        raw = dict(block.raw)
        text = "".join(block.json)
        if text:
            try:
                raw["input"] = events.parse(text.encode("utf-8"))
            except events.EventDataError:
                raw["input"] = text  # not one JSON object (cut short): the raw text
        return {
            "part": "unknown",
            "provider": NAME,
            "kind": block.type,
            "raw": raw,
            "index": block.part_index,
        }

    def _close_open(self, reason: str | None) -> dict[str, Any]:
        """Close the blocks still open: a ``truncated`` anomaly each (when ``reason``), and
        the unknown blocks emitted as far as they came."""
        anomalies: list[dict[str, Any]] = []
        parts: list[dict[str, Any]] = []
        for block in self.order:
            if not block.open:
                continue
            block.open = False
            if reason is not None:
                what = f"the {block.type} block"
                if block.kind == "tool_use":
                    what += f" {block.name!r}"
                detail = f"{what} at index {block.index} had no content_block_stop ({reason})"
                anomalies.append(
                    cut_call_anomaly(detail, None, block.name, block.index)
                    if block.kind == "tool_use"
                    else _anomaly("truncated", detail)
                )
            if block.raw is not None:
                parts.append(self._unknown_part(block))
        leaf: dict[str, Any] = {}
        if anomalies:
            leaf["anomalies"] = anomalies
        if parts:
            leaf["parts"] = parts
        return leaf

    def _spare(self) -> int:
        self.spare -= 1
        return self.spare


def _block_type(block: Any) -> Any:
    return block.get("type") if isinstance(block, dict) else None


def _strip_delta(type_: str) -> str:
    return type_[: -len("_delta")] if type_.endswith("_delta") and type_ != "_delta" else type_


def _delta_part(delta: dict[str, Any], type_: str, index: int) -> dict[str, Any]:
    """The part one text, citation, thinking, signature or input JSON delta gives."""
    if type_ == "text_delta":
        return {"part": "text", "text": _string(delta.get("text"), type_, "text"), "index": index}
    if type_ == "citations_delta":
        return {"part": "text", "text": "", "citations": [delta.get("citation")], "index": index}
    if type_ == "thinking_delta":
        text = _string(delta.get("thinking"), type_, "thinking")
        return {"part": "reasoning", "text": text, "index": index}
    if type_ == "signature_delta":
        signature = _string(delta.get("signature"), type_, "signature")
        return {
            "part": "reasoning",
            "text": "",
            "payload": _payload("signature", signature),
            "index": index,
        }
    # input_json_delta
    arguments = _string(delta.get("partial_json"), type_, "partial_json")
    return {"part": "tool_call", "provider_index": index, "arguments": arguments}
