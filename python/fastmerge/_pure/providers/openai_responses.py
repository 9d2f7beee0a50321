"""The twin's ``"openai-responses"`` adapter (``src/engine/providers/openai_responses.rs``).

This file mirrors two of the engine's: ``openai_responses.rs`` (event dispatch, sequence
numbers, the response's fields, the finish) and ``openai_responses/items.rs`` (output items);
``openai_responses_deltas.py`` mirrors ``openai_responses/deltas.rs`` (content deltas checked
against their done events); ``openai_responses_tools.py`` mirrors ``openai_responses/tools.rs``
(the items kept whole, audio) and holds ``WIRE_RULES``, the rule of every event type of the
SDK's union.

OpenAI Responses API streaming events (and compatible servers: DeepSeek, OpenRouter, LM Studio,
xAI). Items sit at ``output_index``; content at ``content_index``, reasoning summaries at
``summary_index``. Part indexes are ints, as the message model wants them: ``oi * 1000 + ci``
for content entry ``ci`` of the item at output index ``oi``, ``oi * 1000 + 500 + si`` for its
summary entry ``si``, ``oi * 1000 + 999`` for the item itself (indexes out of these ranges are
refused). The mapping:

- ``message`` items: ``output_text`` content -> text parts (part index ``oi*1000+ci``), the
  delta ``logprobs`` -> the leaf's ``logprobs`` (``{"content": [...]}``), annotations ->
  ``citations``, ``refusal`` content -> the message's ``refusal``; when the item is done, the
  other keys of each ``output_text`` entry (``type``, ``annotations``, ``logprobs`` as the
  provider finally reports them) -> the text part's ``attributes``.
- ``reasoning`` items: ``reasoning_text`` content -> reasoning parts, each summary entry -> a
  reasoning part with ``summary``, ``encrypted_content`` (only from the item's ``done``, then
  the terminal response's) -> the ``payload`` of the item's first part (the item's own index
  when it has no other part).
- ``function_call`` / ``custom_tool_call`` items -> tool calls (``id`` = ``call_id``,
  ``response_item_id`` = the item id, ``provider_index`` = ``output_index``).
- any other item (``web_search_call``, ``code_interpreter_call``, ``mcp_call``, ...) -> an
  ``unknown`` part (the item's own index) with the item's raw JSON from its
  ``output_item.done``; on a stream cut before it, the item as added with every delta and
  status received since (``openai_responses_tools``), flagged ``truncated``.
- ``audio.delta`` / ``audio.transcript.delta`` -> one ``unknown`` part of kind ``audio``
  (``{"data", "transcript"}``, joined) when the response ends.
- every modeled item's envelope (its fields but its content, which placeholders stand for) ->
  ``provider_metadata["output_items"]["<oi>"]``; the response object's fields (with
  ``output: []`` and ``usage: None`` placeholders) -> ``provider_metadata["response"]``.
- usage from the response; ``response.completed`` -> ``complete``; ``response.incomplete`` ->
  no status (``incomplete``) and ``finish_reason`` = ``incomplete_details.reason``;
  ``response.failed`` / ``error`` -> ``failed`` with ``provider_metadata["error"]``; the
  normalized finish reason from the status (spec §10.7: ``tool_calls`` for a completed
  response with a function, custom or MCP call, else ``stop``; ``length``, ``content_filter``,
  ``error``), with no raw ``finish_reason`` invented.
- ``sequence_number``: one lower than a number seen is ``out_of_order``; a delta after a gap
  in the numbers waits for the events before it (until the next event that is no delta), so
  swapped deltas are read in their order (spec §6.1).
- a field an item sent as null stays null in its envelope (no placeholder for it) [E98].

An event is read when its ``type`` is ``response.*`` or ``error``; a second
``response.created`` starts another response (``new_response``, spec §6).

The ``*.done`` events (and the terminal response's ``output``) are authoritative (spec §6.1):
a done text is emitted when no delta was seen for its part, its missing tail when the deltas
were a prefix (``mismatched_delta``), and when they disagree otherwise it replaces the
streamed text (a ``settled`` part, call or refusal; ``mismatched_delta``).
"""

from __future__ import annotations

from typing import Any

from . import openai_responses_deltas as deltas
from . import openai_responses_tools as tools
from ._common import AdapterError, cut_call_anomaly, text_field
from .openai_responses_deltas import (
    CONTENT_LIMIT,
    ITEM,
    STRIDE,
    SUMMARY,
    SUMMARY_LIMIT,
    Leaves,
    _anomaly,
    _emit,
    _type_name,
)
from .openai_responses_tools import WIRE_RULES

__all__ = ["NAME", "WIRE_RULES", "Adapter"]

NAME = "openai-responses"

MAX_OUTPUT_INDEX = 999_999_999_999

_MODELED = ("message", "reasoning", "function_call", "custom_tool_call")
_CALLS = {"function_call": "arguments", "custom_tool_call": "input"}
# a completed response with one of these items finished for tool calls (spec §10.7)
_TOOL_CALLS = ("function_call", "custom_tool_call", "mcp_call")
_INCOMPLETE = {"max_output_tokens": "length", "content_filter": "content_filter"}
# events whose items are authoritative over held deltas (spec §6.1)
_AUTHORITATIVE = (
    "response.output_item.done",
    "response.completed",
    "response.incomplete",
    "response.failed",
)
# envelope placeholders of the content an item's parts hold
_PLACEHOLDERS: dict[str, dict[str, Any]] = {
    "message": {"content": []},
    "reasoning": {"summary": [], "content": [], "encrypted_content": None},
    "function_call": {"arguments": ""},
    "custom_tool_call": {"input": ""},
}


class _Item:
    """What the adapter knows of the item at one output index."""

    __slots__ = (
        "kind",
        "item_id",
        "call_id",
        "added",
        "done",
        "first_part",
        "raw",
        "reported",
        "tool",
    )

    def __init__(self, kind: str | None) -> None:
        self.kind = kind
        self.item_id: Any = None
        self.call_id: Any = None
        self.added = False
        self.done = False
        self.first_part: int | None = None  # a reasoning item's first part index (payload)
        self.raw: Any = None  # an unmodeled item as added (kept if the stream is cut)
        self.reported = False  # delta_before_start recorded
        self.tool: tools.Tool | None = None  # deltas and statuses of an unmodeled item


class Adapter:
    """``"openai-responses"``: Responses API events -> leaves (choice 0)."""

    name = NAME

    def __init__(self) -> None:
        self.items: dict[int, _Item] = {}
        self.ids: dict[str, int] = {}  # item id -> output index
        self.texts: dict[str, list[str]] = {}  # "<oi>:<ci>" ... -> streamed pieces
        self.refusals: list[str] = []  # the keys of refusal parts, in the order first seen
        self.cited: set[str] = set()  # text parts that got annotation events
        self.terminal = False
        self.started = False
        self.created = False  # response.created seen
        self.audio: dict[str, list[str]] = {}  # "data" / "transcript" -> pieces
        self.audio_done: set[str] = set()
        self.audio_emitted = False
        self.top: int | None = None  # the highest sequence_number seen
        self.held: list[tuple[int, dict[str, Any]]] = []  # deltas after a gap in the numbers
        # the first response.created's response id: a response.created with it again is the
        # same response (a stream logged twice, spec §6.1), not another one
        self.created_id: str | None = None

    # -- entry points

    def knows(self, event: dict[str, Any]) -> bool:
        """Whether the event's ``type`` is ``response.*`` or ``error`` (spec §8; a
        ``response.*`` type without a handler, such as ``response.content_part.added``, is
        read and adds nothing)."""
        kind = event.get("type")
        return isinstance(kind, str) and (kind.startswith("response.") or kind == "error")

    def new_response(self, event: dict[str, Any]) -> str | None:
        """Why the event starts another response, or None (spec §6)."""
        if self.created and event.get("type") == "response.created":
            response = event.get("response")
            created_id = response.get("id") if isinstance(response, dict) else None
            if created_id is None or created_id != self.created_id:
                return "a second response.created"
        return None

    def ends_stream(self, event: dict[str, Any]) -> bool:
        """Whether the event is the stream's last (the batch reader ends the stream there):
        ``response.completed``, ``response.failed`` or ``response.incomplete``."""
        return event.get("type") in ("response.completed", "response.failed", "response.incomplete")

    def event(self, event: dict[str, Any]) -> Leaves:
        kind = event.get("type")
        if type(kind) is not str:
            raise AdapterError(f"an event's 'type' must be a str, not {_type_name(kind)}")
        leaves: Leaves = []
        seq = event.get("sequence_number")
        if type(seq) is int:
            top = self.top
            if top is not None and seq < top:
                late = kind.endswith(".delta") and self._done_item(event)
                detail = f"{kind}: sequence_number {seq} after {top}"
                if late:
                    detail += "; its item is done, the delta is not merged"
                leaves.append((0, {"anomalies": [_anomaly("out_of_order", detail)]}))
                if not late:  # the done item is authoritative over a late delta (spec §6.1)
                    self._one(event, kind, leaves)
                self._drain(leaves)
            else:
                self.top = seq
                if kind.endswith(".delta") and (self.held or (top is not None and seq > top + 1)):
                    # a delta after a gap waits for the events before it (spec §6.1)
                    self.held.append((seq, event))
                else:
                    self._read(event, kind, leaves)
        else:
            self._read(event, kind, leaves)
        if not self.started and leaves:
            self.started = True
            leaves[0] = (0, {"role": "assistant", **leaves[0][1]})
        return leaves

    def _done_item(self, event: dict[str, Any]) -> bool:
        """Whether the event's item (by ``output_index``, else ``item_id``) is done."""
        index = event.get("output_index")
        if type(index) is not int:
            item_id = event.get("item_id")
            index = self.ids.get(item_id) if type(item_id) is str else None
        item = self.items.get(index) if type(index) is int else None
        return item is not None and item.done

    def _read(self, event: dict[str, Any], kind: str, leaves: Leaves) -> None:
        """The event with the held deltas: after them, but after a done item (or the terminal
        response's items), which is authoritative over the held deltas of its item."""
        if kind in _AUTHORITATIVE:
            self._one(event, kind, leaves)
            self._drain(leaves)
        else:
            self._drain(leaves)
            self._one(event, kind, leaves)

    def _drain(self, leaves: Leaves) -> None:
        """The held deltas, in the order of their numbers, but those of a done item."""
        if self.held:
            held = sorted(self.held, key=lambda pair: pair[0])
            self.held = []
            for _, event in held:
                if not self._done_item(event):
                    self._one(event, event["type"], leaves)

    def _one(self, event: dict[str, Any], kind: str, leaves: Leaves) -> None:
        if kind.startswith("response."):
            name = kind[9:]
            handler = _HANDLERS.get(name)
            if handler is not None:
                handler(self, event, kind, leaves)
        elif kind == "error":
            self._error(event, kind, leaves)

    def end(self) -> Leaves:
        leaves: Leaves = []
        try:
            self._drain(leaves)
        except AdapterError as error:  # a held delta the adapter cannot map
            leaves.append((0, {"anomalies": [_anomaly("unrecognized_event", error.detail)]}))
        if self.terminal:
            return leaves
        parts: list[dict[str, Any]] = []
        anomalies: list[dict[str, Any]] = []
        for index, item in self.items.items():
            if item.done:
                continue
            if item.kind not in _MODELED and (isinstance(item.raw, dict) or item.tool):
                raw = tools.build(item.raw, item.kind or "", item.item_id, item.tool)
                parts.append(_unknown(raw, item.kind, index * STRIDE + ITEM))
            ident = item.call_id if item.kind in _CALLS else item.item_id
            detail = (
                f"output_index {index}: {item.kind} {ident!r} ended before its output_item.done"
            )
            anomalies.append(
                cut_call_anomaly(detail, item.call_id, None, index)
                if item.kind in _CALLS
                else _anomaly("truncated", detail)
            )
        audio = tools.audio_part(self)
        if audio is not None:
            parts.append(audio)
            tools.audio_cut(self, anomalies)
        leaf: dict[str, Any] = {}
        if parts:
            leaf["parts"] = parts
        if anomalies:
            leaf["anomalies"] = anomalies
        if leaf:
            leaves.append((0, leaf))
        return leaves

    # -- reading events

    def _index(self, event: dict[str, Any], kind: str) -> int:
        """The event's output index (``output_index``, else the index of its ``item_id``)."""
        index = event.get("output_index")
        if type(index) is int:
            if not 0 <= index <= MAX_OUTPUT_INDEX:
                raise AdapterError(
                    f"{kind}: 'output_index' must be between 0 and {MAX_OUTPUT_INDEX}, not {index}"
                )
            return index
        if index is None:
            item_id = event.get("item_id")
            if type(item_id) is str and item_id in self.ids:
                return self.ids[item_id]
        raise AdapterError(f"{kind}: 'output_index' must be an int, not {_type_name(index)}")

    @staticmethod
    def _sub(event: dict[str, Any], key: str, kind: str, limit: int) -> int:
        value = event.get(key)
        if value is None:
            return 0
        if type(value) is not int:
            raise AdapterError(f"{kind}: {key!r} must be an int, not {_type_name(value)}")
        if not 0 <= value < limit:
            raise AdapterError(f"{kind}: {key!r} must be between 0 and {limit - 1}, not {value}")
        return value

    @staticmethod
    def _str(event: dict[str, Any], key: str, kind: str) -> str:
        value = event.get(key)
        if type(value) is not str:
            raise AdapterError(f"{kind}: {key!r} must be a str, not {_type_name(value)}")
        return value

    def _item_at(self, index: int, kind: str, implied: str, anomalies: list[Any]) -> _Item:
        """The item a delta belongs to; a delta before its ``output_item.added`` implies it
        (``delta_before_start``, once per item)."""
        item = self.items.get(index)
        if item is None:
            item = self.items[index] = _Item(implied)
        if not item.added and not item.done and not item.reported:
            item.reported = True
            anomalies.append(
                _anomaly(
                    "delta_before_start",
                    f"{kind} at output_index {index} before its output_item.added",
                )
            )
        return item

    # -- texts compared with their done events

    def _track(self, key: str, delta: str) -> None:
        pieces = self.texts.get(key)
        if pieces is None:
            self.texts[key] = [delta]
        else:
            pieces.append(delta)

    def _refusal_key(self, key: str) -> None:
        if key not in self.refusals:
            self.refusals.append(key)

    def _settle(self, key: str, text: str, what: str, anomalies: list[Any]) -> tuple[str, bool]:
        """What a done event does to the text streamed for ``key``: the text it still adds
        (``False``), or, when the two disagree, the text that replaces it (``True``)."""
        pieces = self.texts.get(key)
        streamed = "".join(pieces) if pieces is not None else ""
        self.texts[key] = [text]
        if not streamed or streamed == text:
            return (text if not streamed else ""), False
        if text.startswith(streamed):
            anomalies.append(
                _anomaly(
                    "mismatched_delta",
                    f"{what}: the done text extends the streamed deltas "
                    f"({len(streamed)} of {len(text)} characters); the rest was added",
                )
            )
            return text[len(streamed) :], False
        anomalies.append(
            _anomaly(
                "mismatched_delta",
                f"{what}: the done text differs from the {len(streamed)} streamed characters; "
                "the done text replaces them",
            )
        )
        return text, True

    # -- response events

    def _response(self, event: dict[str, Any], kind: str, leaves: Leaves) -> None:
        response = event.get("response")
        if not isinstance(response, dict):
            raise AdapterError(f"{kind}: 'response' must be a dict, not {_type_name(response)}")
        if kind == "response.created":
            if not self.created:
                created_id = response.get("id")
                self.created_id = created_id if isinstance(created_id, str) else None
            self.created = True
        terminal = kind in ("response.completed", "response.incomplete", "response.failed")
        if terminal:
            output = response.get("output")
            if output is not None and not isinstance(output, list):
                raise AdapterError(
                    f"{kind}: 'response.output' must be a list, not {_type_name(output)}"
                )
            for index, item in enumerate(output or ()):
                if not isinstance(item, dict):
                    raise AdapterError(
                        f"{kind}: 'response.output[{index}]' must be a dict, not {_type_name(item)}"
                    )
                self._item_done(index, item, kind, leaves)
            self.terminal = True
        leaf: dict[str, Any] = {}
        if terminal:
            audio = tools.audio_part(self)
            if audio is not None:
                leaf["parts"] = [audio]
        usage = response.get("usage")
        if isinstance(usage, dict):
            leaf["usage"] = _usage(usage)
        if kind == "response.incomplete":
            details = response.get("incomplete_details")
            if isinstance(details, dict):
                reason = text_field(
                    details.get("reason"), f"{kind}.response.incomplete_details.reason"
                )
                if reason is not None:
                    leaf["finish_reason"] = reason
                    normalized = _INCOMPLETE.get(reason)
                    if normalized is not None:
                        leaf["finish_reason_normalized"] = normalized
        elif kind == "response.completed":
            calls = any(item.kind in _TOOL_CALLS for item in self.items.values())
            leaf["finish_reason_normalized"] = "tool_calls" if calls else "stop"
        elif kind == "response.failed":
            leaf["finish_reason_normalized"] = "error"
        rid = text_field(response.get("id"), f"{kind}.response.id")
        if rid is not None:
            leaf["response_id"] = rid
        model = text_field(response.get("model"), f"{kind}.response.model")
        if model is not None:
            leaf["response_model"] = model
        meta: dict[str, Any] = {}
        for key, value in response.items():
            if key == "output":
                meta[key] = []
            elif key == "usage":
                meta[key] = None
            else:
                meta[key] = value
        metadata: dict[str, Any] = {"response": meta}
        if kind == "response.failed":
            error = response.get("error")
            if error is not None:
                metadata["error"] = error
        leaf["provider_metadata"] = metadata
        if kind == "response.completed":
            leaf["status"] = "complete"
        elif kind == "response.failed":
            leaf["status"] = "failed"
        leaves.append((0, leaf))

    def _error(self, event: dict[str, Any], kind: str, leaves: Leaves) -> None:
        error = event.get("error")
        if not isinstance(error, dict):
            error = {k: v for k, v in event.items() if k not in ("type", "sequence_number")}
        self.terminal = True
        leaf: dict[str, Any] = {}
        audio = tools.audio_part(self)
        if audio is not None:
            leaf["parts"] = [audio]
        leaf["finish_reason_normalized"] = "error"
        leaf["provider_metadata"] = {"error": error}
        leaf["status"] = "failed"
        leaves.append((0, leaf))

    # -- items

    def _added(self, event: dict[str, Any], kind: str, leaves: Leaves) -> None:
        index = self._index(event, kind)
        item = event.get("item")
        if not isinstance(item, dict):
            raise AdapterError(f"{kind}: 'item' must be a dict, not {_type_name(item)}")
        item_kind = item.get("type")
        if type(item_kind) is not str:
            raise AdapterError(f"{kind}: 'item.type' must be a str, not {_type_name(item_kind)}")
        item_id = item.get("id")
        anomalies: list[dict[str, Any]] = []
        state = self.items.get(index)
        if state is None:
            state = self.items[index] = _Item(item_kind)
        elif state.added and (state.kind != item_kind or state.item_id != item_id):
            anomalies.append(
                _anomaly(
                    "index_collision",
                    f"output_index {index}: {item_kind} {item_id!r} added over "
                    f"{state.kind} {state.item_id!r}",
                )
            )
        elif state.kind != item_kind:
            # deltas implied another kind before the item came
            anomalies.append(
                _anomaly(
                    "kind_change",
                    f"output_index {index}: {item_kind} item after {state.kind} deltas",
                )
            )
        state.kind = item_kind
        state.added = True
        if type(item_id) is str:
            state.item_id = item_id
            self.ids[item_id] = index
        leaf: dict[str, Any] = {}
        if item_kind in _CALLS:
            part = self._call_part(state, index, item, item_kind, kind, anomalies, False)
            leaf["parts"] = [part]
        elif item_kind not in _MODELED:
            state.raw = item
        envelope = _envelope(item)
        if envelope is not None:
            leaf["provider_metadata"] = {"output_items": _envelope_at(index, envelope)}
        _emit(leaves, leaf, anomalies)

    def _call_part(
        self,
        state: _Item,
        index: int,
        item: dict[str, Any],
        item_kind: str,
        kind: str,
        anomalies: list[Any],
        done: bool,
    ) -> dict[str, Any]:
        """A call item's tool-call part: identity once, arguments (settled when ``done``)."""
        part: dict[str, Any] = {"part": "tool_call"}
        call_id = text_field(item.get("call_id"), f"{kind}.item.call_id")
        name = text_field(item.get("name"), f"{kind}.item.name")
        if state.call_id is None and call_id is not None:
            state.call_id = call_id
            part["id"] = call_id
            if name is not None:
                part["name"] = name
            if item_kind == "custom_tool_call":
                part["type"] = "custom"
        key = _CALLS[item_kind]
        arguments = item.get(key)
        if arguments is not None and type(arguments) is not str:
            raise AdapterError(f"{kind}: 'item.{key}' must be a str, not {_type_name(arguments)}")
        if arguments:
            settled = False
            if done:
                arguments, settled = self._settle(
                    str(index), arguments, f"{item_kind} {state.call_id!r} {key}", anomalies
                )
            else:
                self._track(str(index), arguments)
            if arguments:
                part["arguments"] = arguments
            if settled:
                part["settled"] = True
        part["provider_index"] = index
        item_id = item.get("id")
        if type(item_id) is str:
            part["response_item_id"] = item_id
        return part

    def _item_done_event(self, event: dict[str, Any], kind: str, leaves: Leaves) -> None:
        index = self._index(event, kind)
        item = event.get("item")
        if not isinstance(item, dict):
            raise AdapterError(f"{kind}: 'item' must be a dict, not {_type_name(item)}")
        self._item_done(index, item, kind, leaves)

    def _item_done(self, index: int, item: dict[str, Any], kind: str, leaves: Leaves) -> None:
        """An item as finally reported (``output_item.done`` or the terminal response)."""
        item_kind = item.get("type")
        if type(item_kind) is not str:
            raise AdapterError(f"{kind}: 'item.type' must be a str, not {_type_name(item_kind)}")
        state = self.items.get(index)
        if state is None:
            state = self.items[index] = _Item(item_kind)
        anomalies: list[dict[str, Any]] = []
        if state.kind != item_kind:
            anomalies.append(
                _anomaly(
                    "kind_change",
                    f"output_index {index}: {item_kind} item done after {state.kind}",
                )
            )
            state.kind = item_kind
        state.done = True
        item_id = item.get("id")
        if type(item_id) is str:
            if state.item_id is None:
                state.item_id = item_id
            self.ids[item_id] = index
        parts: list[dict[str, Any]] = []
        refusal: list[str] = []
        settled_refusal = False
        if item_kind == "message":
            settled_refusal = self._message_done(index, item, kind, parts, refusal, anomalies)
        elif item_kind == "reasoning":
            self._reasoning_done(state, index, item, kind, parts, anomalies)
        elif item_kind in _CALLS:
            parts.append(self._call_part(state, index, item, item_kind, kind, anomalies, True))
        else:
            parts.append(_unknown(item, item_kind, index * STRIDE + ITEM))
        leaf: dict[str, Any] = {}
        if parts:
            leaf["parts"] = parts
        if settled_refusal:
            # the done refusal replaces the streamed one: the whole refusal, as now known
            leaf["refusal"] = "".join("".join(self.texts[k]) for k in self.refusals)
            leaf["settled"] = True
        elif refusal:
            leaf["refusal"] = "".join(refusal)
        envelope = _envelope(item)
        if envelope is not None:
            leaf["provider_metadata"] = {"output_items": _envelope_at(index, envelope)}
        _emit(leaves, leaf, anomalies)

    def _message_done(
        self,
        index: int,
        item: dict[str, Any],
        kind: str,
        parts: list[dict[str, Any]],
        refusal: list[str],
        anomalies: list[Any],
    ) -> bool:
        """A done message's parts and refusal; whether its refusal replaces the streamed one."""
        replaced = False
        for ci, entry in enumerate(_list(item, "content", kind, CONTENT_LIMIT)):
            key = f"{index}:{ci}"
            entry_kind = entry.get("type") if isinstance(entry, dict) else None
            if entry_kind == "output_text":
                text = entry.get("text")
                if type(text) is not str:
                    raise AdapterError(
                        f"{kind}: 'item.content[{ci}].text' must be a str, not {_type_name(text)}"
                    )
                rest, settled = self._settle(key, text, f"output_text {key}", anomalies)
                part: dict[str, Any] = {"part": "text", "text": rest}
                annotations = entry.get("annotations")
                if annotations and isinstance(annotations, list) and key not in self.cited:
                    self.cited.add(key)  # once: the terminal response repeats the item
                    part["citations"] = annotations
                part["attributes"] = {k: v for k, v in entry.items() if k != "text"}
                part["index"] = index * STRIDE + ci
                if settled:
                    part["settled"] = True
                parts.append(part)
            elif entry_kind == "refusal":
                text = entry.get("refusal")
                if type(text) is not str:
                    raise AdapterError(
                        f"{kind}: 'item.content[{ci}].refusal' must be a str, "
                        f"not {_type_name(text)}"
                    )
                self._refusal_key(key)
                rest, settled = self._settle(key, text, f"refusal {key}", anomalies)
                if settled:
                    replaced = True
                elif rest:
                    refusal.append(rest)
            elif isinstance(entry, dict):
                parts.append(_unknown(entry, entry_kind, index * STRIDE + ci))
            else:
                raise AdapterError(
                    f"{kind}: 'item.content[{ci}]' must be a dict, not {_type_name(entry)}"
                )
        return replaced

    def _reasoning_done(
        self,
        state: _Item,
        index: int,
        item: dict[str, Any],
        kind: str,
        parts: list[dict[str, Any]],
        anomalies: list[Any],
    ) -> None:
        for si, entry in enumerate(_list(item, "summary", kind, SUMMARY_LIMIT)):
            if not isinstance(entry, dict):
                raise AdapterError(
                    f"{kind}: 'item.summary[{si}]' must be a dict, not {_type_name(entry)}"
                )
            text = entry.get("text")
            if type(text) is not str:
                raise AdapterError(
                    f"{kind}: 'item.summary[{si}].text' must be a str, not {_type_name(text)}"
                )
            key = f"{index}:summary:{si}"
            rest, settled = self._settle(key, text, f"reasoning summary {key}", anomalies)
            if rest or settled:
                at = index * STRIDE + SUMMARY + si
                if state.first_part is None:
                    state.first_part = at
                part = {"part": "reasoning", "text": "", "summary": rest, "index": at}
                if settled:
                    part["settled"] = True
                parts.append(part)
        for ci, entry in enumerate(_list(item, "content", kind, CONTENT_LIMIT)):
            if not isinstance(entry, dict):
                raise AdapterError(
                    f"{kind}: 'item.content[{ci}]' must be a dict, not {_type_name(entry)}"
                )
            key = f"{index}:{ci}"
            if entry.get("type") != "reasoning_text":
                parts.append(_unknown(entry, entry.get("type"), index * STRIDE + ci))
                continue
            text = entry.get("text")
            if type(text) is not str:
                raise AdapterError(
                    f"{kind}: 'item.content[{ci}].text' must be a str, not {_type_name(text)}"
                )
            rest, settled = self._settle(key, text, f"reasoning_text {key}", anomalies)
            if rest or settled:
                at = index * STRIDE + ci
                if state.first_part is None:
                    state.first_part = at
                part = {"part": "reasoning", "text": rest, "index": at}
                if settled:
                    part["settled"] = True
                parts.append(part)
        encrypted = item.get("encrypted_content")
        if encrypted is not None and type(encrypted) is not str:
            raise AdapterError(
                f"{kind}: 'item.encrypted_content' must be a str, not {_type_name(encrypted)}"
            )
        if encrypted:
            if state.first_part is None:
                state.first_part = index * STRIDE + ITEM
            payload = {"provider": NAME, "kind": "encrypted_content", "data": encrypted}
            parts.append(
                {"part": "reasoning", "text": "", "payload": payload, "index": state.first_part}
            )


def _envelope_at(index: int, envelope: dict[str, Any]) -> dict[str, Any]:
    return {str(index): envelope}


def _envelope(item: dict[str, Any]) -> dict[str, Any] | None:
    """A modeled item's fields with placeholders for what its parts hold; None for others."""
    placeholders = _PLACEHOLDERS.get(item.get("type"))  # type: ignore[arg-type]
    if placeholders is None:
        return None
    return {k: (_fresh(placeholders[k], v) if k in placeholders else v) for k, v in item.items()}


def _fresh(placeholder: Any, value: Any) -> Any:
    """The placeholder of a field the provider sent; a null stays null [E98]."""
    if value is None:
        return None
    return [] if isinstance(placeholder, list) else placeholder


def _usage(usage: dict[str, Any]) -> dict[str, Any]:
    """The provider's usage verbatim, plus the normalized names it does not use."""
    out = dict(usage)
    if "input_tokens" not in out and usage.get("prompt_tokens") is not None:
        out["input_tokens"] = usage["prompt_tokens"]
    if "output_tokens" not in out and usage.get("completion_tokens") is not None:
        out["output_tokens"] = usage["completion_tokens"]
    details = usage.get("input_tokens_details")
    if isinstance(details, dict):
        cached = details.get("cached_tokens")
        if cached is not None:
            out["cache_read_tokens"] = cached
        written = details.get("cache_write_tokens")
        if written is not None:
            out["cache_write_tokens"] = written
    details = usage.get("output_tokens_details")
    if isinstance(details, dict):
        reasoning = details.get("reasoning_tokens")
        if reasoning is not None:
            out["reasoning_tokens"] = reasoning
    return out


def _unknown(raw: Any, kind: Any, index: int) -> dict[str, Any]:
    return {"part": "unknown", "provider": NAME, "kind": kind, "raw": raw, "index": index}


def _list(item: dict[str, Any], key: str, kind: str, limit: int) -> list[Any]:
    value = item.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise AdapterError(f"{kind}: 'item.{key}' must be a list, not {_type_name(value)}")
    if len(value) > limit:
        raise AdapterError(f"{kind}: 'item.{key}' must have at most {limit} entries")
    return value


_HANDLERS: dict[str, Any] = {
    "created": Adapter._response,
    "in_progress": Adapter._response,
    "queued": Adapter._response,
    "completed": Adapter._response,
    "incomplete": Adapter._response,
    "failed": Adapter._response,
    "output_item.added": Adapter._added,
    "output_item.done": Adapter._item_done_event,
    "output_text.delta": deltas.text_delta,
    "output_text.done": deltas.text_done,
    "content_part.done": deltas.text_done,
    "refusal.delta": deltas.refusal_delta,
    "refusal.done": deltas.text_done,
    "reasoning_text.delta": deltas.reasoning_delta,
    "reasoning_text.done": deltas.text_done,
    "reasoning_summary_text.delta": deltas.reasoning_delta,
    "reasoning_summary_text.done": deltas.summary_done,
    "reasoning_summary_part.done": deltas.summary_done,
    "function_call_arguments.delta": deltas.args_delta,
    "function_call_arguments.done": deltas.args_done,
    "custom_tool_call_input.delta": deltas.args_delta,
    "custom_tool_call_input.done": deltas.args_done,
    "output_text.annotation.added": deltas.annotation,
    **tools.handlers(),
}
