"""The twin's ``"openai-responses"`` adapter (``src/engine/providers/openai_responses.rs``).

This module holds the adapter's entry points (event dispatch, sequence numbers, the response's
fields, the finish, the texts compared with their done events); its modules mirror the
engine's children of ``openai_responses/``, file for file: ``items`` (output items, from added
to done), ``deltas`` (content deltas checked against their done events) and ``tools`` (the
items kept whole, audio; it holds ``WIRE_RULES``, the rule of every event type of the SDK's
union).

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
  status received since (``tools``), flagged ``truncated``.
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

from .._common import AdapterError, cut_call_anomaly, text_field
from . import deltas, items, tools
from .deltas import ITEM, STRIDE, Leaves, _anomaly, _type_name
from .items import _CALLS, _MODELED, _Item, _unknown
from .tools import NAME, WIRE_RULES

__all__ = ["NAME", "WIRE_RULES", "Adapter"]

MAX_OUTPUT_INDEX = 999_999_999_999

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

    def _whole_refusal(self) -> str:
        """The whole refusal as now known: each refusal part's text, in the order first seen."""
        return "".join("".join(self.texts[k]) for k in self.refusals)

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
                items.item_done(self, index, item, kind, leaves)
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


_HANDLERS: dict[str, Any] = {
    "created": Adapter._response,
    "in_progress": Adapter._response,
    "queued": Adapter._response,
    "completed": Adapter._response,
    "incomplete": Adapter._response,
    "failed": Adapter._response,
    "output_item.added": items.added,
    "output_item.done": items.item_done_event,
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
