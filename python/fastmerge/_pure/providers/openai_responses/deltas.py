"""The twin's Responses adapter on text deltas and the done events that settle them
(``src/engine/providers/openai_responses/deltas.rs``): output text, refusals, reasoning text
and summaries, call arguments and annotations, each checked against the item it lands on. A
done text that disagrees with what was streamed replaces it (a ``settled`` part, spec §6.1).

It also holds what the handler modules share (the engine keeps these in its parent,
``openai_responses.rs``): the part-index layout, the leaf helpers, and ``Adapter``, the
protocol through which ``deltas`` and ``items`` see the adapter without importing it.
"""

from __future__ import annotations

from typing import Any, Protocol

from .._common import AdapterError

Leaves = list[tuple[int, dict[str, Any]]]


class Adapter(Protocol):
    """What these handlers use of the adapter (``openai_responses.Adapter``): its items, the
    texts streamed so far, and its readers of event fields."""

    items: dict[int, Any]
    ids: dict[str, int]
    texts: dict[str, list[str]]
    refusals: list[str]
    cited: set[str]

    def _index(self, event: dict[str, Any], kind: str) -> int: ...
    def _sub(self, event: dict[str, Any], key: str, kind: str, limit: int) -> int: ...
    def _str(self, event: dict[str, Any], key: str, kind: str) -> str: ...
    def _item_at(self, index: int, kind: str, implied: str, anomalies: list[Any]) -> Any: ...
    def _track(self, key: str, delta: str) -> None: ...
    def _refusal_key(self, key: str) -> None: ...
    def _whole_refusal(self) -> str: ...
    def _settle(self, key: str, text: str, what: str, anomalies: list[Any]) -> tuple[str, bool]: ...


# Part indexes are ints (the message model's): output_index * 1000 + content_index for a content
# entry, + 500 + summary_index for a reasoning summary, + 999 for the item itself.
STRIDE = 1000
SUMMARY = 500
ITEM = 999
CONTENT_LIMIT = SUMMARY  # content indexes 0..499
SUMMARY_LIMIT = ITEM - SUMMARY  # summary indexes 0..498


def _type_name(value: Any) -> str:
    return type(value).__name__


def _emit(leaves: list[Any], leaf: dict[str, Any], anomalies: list[Any]) -> None:
    """The end of most handlers: the leaf with its anomalies, added unless it holds nothing."""
    if anomalies:
        leaf["anomalies"] = anomalies
    if leaf:
        leaves.append((0, leaf))


def _anomaly(code: str, detail: str) -> dict[str, Any]:
    return {"code": code, "detail": detail}


def _mismatched(kind: str, index: int, item_kind: str | None) -> dict[str, Any]:
    return _anomaly(
        "mismatched_delta", f"{kind} on a {item_kind} item at output_index {index} ignored"
    )


def text_delta(adapter: Adapter, event: dict[str, Any], kind: str, leaves: Leaves) -> None:
    index = adapter._index(event, kind)
    ci = adapter._sub(event, "content_index", kind, CONTENT_LIMIT)
    delta = adapter._str(event, "delta", kind)
    logprobs = event.get("logprobs")
    if logprobs is not None and not isinstance(logprobs, list):
        raise AdapterError(f"{kind}: 'logprobs' must be a list, not {_type_name(logprobs)}")
    anomalies: list[dict[str, Any]] = []
    item = adapter._item_at(index, kind, "message", anomalies)
    leaf: dict[str, Any] = {}
    if item.kind == "message":
        key = f"{index}:{ci}"
        adapter._track(key, delta)
        if delta:
            leaf["parts"] = [{"part": "text", "text": delta, "index": index * STRIDE + ci}]
        if logprobs:
            leaf["logprobs"] = {"content": logprobs}
    else:
        anomalies.append(_mismatched(kind, index, item.kind))
    _emit(leaves, leaf, anomalies)


def text_done(adapter: Adapter, event: dict[str, Any], kind: str, leaves: Leaves) -> None:
    """``output_text.done``, ``content_part.done`` (of output_text, reasoning_text or
    refusal), ``refusal.done``, ``reasoning_text.done``."""
    index = adapter._index(event, kind)
    ci = adapter._sub(event, "content_index", kind, CONTENT_LIMIT)
    if kind == "response.content_part.done":
        part = event.get("part")
        if not isinstance(part, dict):
            raise AdapterError(f"{kind}: 'part' must be a dict, not {_type_name(part)}")
        part_kind = part.get("type")
        field = "refusal" if part_kind == "refusal" else "text"
        text = part.get(field)
        if part_kind not in ("output_text", "reasoning_text", "refusal"):
            return
        if type(text) is not str:
            raise AdapterError(f"{kind}: 'part.{field}' must be a str, not {_type_name(text)}")
    else:
        part_kind = {
            "response.output_text.done": "output_text",
            "response.refusal.done": "refusal",
            "response.reasoning_text.done": "reasoning_text",
        }[kind]
        field = "refusal" if part_kind == "refusal" else "text"
        text = adapter._str(event, field, kind)
    item = adapter.items.get(index)
    wanted = "reasoning" if part_kind == "reasoning_text" else "message"
    if item is None or item.done or item.kind != wanted:
        return  # the item's done (or another kind) settles it
    key = f"{index}:{ci}"
    anomalies: list[dict[str, Any]] = []
    if part_kind == "refusal":
        adapter._refusal_key(key)
    rest, settled = adapter._settle(key, text, f"{part_kind} {key}", anomalies)
    leaf: dict[str, Any] = {}
    if part_kind == "refusal" and settled:
        leaf["refusal"] = adapter._whole_refusal()
        leaf["settled"] = True
    elif part_kind == "refusal" and rest:
        leaf["refusal"] = rest
    elif rest or settled:
        if wanted == "reasoning" and item.first_part is None:
            item.first_part = index * STRIDE + ci
        part = {
            "part": "text" if wanted == "message" else "reasoning",
            "text": rest,
            "index": index * STRIDE + ci,
        }
        if settled:
            part["settled"] = True
        leaf["parts"] = [part]
    _emit(leaves, leaf, anomalies)


def refusal_delta(adapter: Adapter, event: dict[str, Any], kind: str, leaves: Leaves) -> None:
    index = adapter._index(event, kind)
    ci = adapter._sub(event, "content_index", kind, CONTENT_LIMIT)
    delta = adapter._str(event, "delta", kind)
    anomalies: list[dict[str, Any]] = []
    item = adapter._item_at(index, kind, "message", anomalies)
    leaf: dict[str, Any] = {}
    if item.kind == "message":
        adapter._refusal_key(f"{index}:{ci}")
        adapter._track(f"{index}:{ci}", delta)
        if delta:
            leaf["refusal"] = delta
    else:
        anomalies.append(_mismatched(kind, index, item.kind))
    _emit(leaves, leaf, anomalies)


def reasoning_delta(adapter: Adapter, event: dict[str, Any], kind: str, leaves: Leaves) -> None:
    """``reasoning_text.delta`` (content) and ``reasoning_summary_text.delta``."""
    index = adapter._index(event, kind)
    summary = kind == "response.reasoning_summary_text.delta"
    if summary:
        sub = adapter._sub(event, "summary_index", kind, SUMMARY_LIMIT)
    else:
        sub = adapter._sub(event, "content_index", kind, CONTENT_LIMIT)
    delta = adapter._str(event, "delta", kind)
    anomalies: list[dict[str, Any]] = []
    item = adapter._item_at(index, kind, "reasoning", anomalies)
    leaf: dict[str, Any] = {}
    if item.kind == "reasoning":
        key = f"{index}:summary:{sub}" if summary else f"{index}:{sub}"
        adapter._track(key, delta)
        if delta:
            at = index * STRIDE + (SUMMARY + sub if summary else sub)
            if item.first_part is None:
                item.first_part = at
            if summary:
                part = {"part": "reasoning", "text": "", "summary": delta, "index": at}
            else:
                part = {"part": "reasoning", "text": delta, "index": at}
            leaf["parts"] = [part]
    else:
        anomalies.append(_mismatched(kind, index, item.kind))
    _emit(leaves, leaf, anomalies)


def summary_done(adapter: Adapter, event: dict[str, Any], kind: str, leaves: Leaves) -> None:
    """``reasoning_summary_text.done`` and ``reasoning_summary_part.done``."""
    index = adapter._index(event, kind)
    si = adapter._sub(event, "summary_index", kind, SUMMARY_LIMIT)
    if kind == "response.reasoning_summary_part.done":
        part = event.get("part")
        if not isinstance(part, dict):
            raise AdapterError(f"{kind}: 'part' must be a dict, not {_type_name(part)}")
        text = part.get("text")
        if type(text) is not str:
            raise AdapterError(f"{kind}: 'part.text' must be a str, not {_type_name(text)}")
    else:
        text = adapter._str(event, "text", kind)
    item = adapter.items.get(index)
    if item is None or item.done or item.kind != "reasoning":
        return
    key = f"{index}:summary:{si}"
    anomalies: list[dict[str, Any]] = []
    rest, settled = adapter._settle(key, text, f"reasoning summary {key}", anomalies)
    leaf: dict[str, Any] = {}
    if rest or settled:
        at = index * STRIDE + SUMMARY + si
        if item.first_part is None:
            item.first_part = at
        part = {"part": "reasoning", "text": "", "summary": rest, "index": at}
        if settled:
            part["settled"] = True
        leaf["parts"] = [part]
    _emit(leaves, leaf, anomalies)


def args_delta(adapter: Adapter, event: dict[str, Any], kind: str, leaves: Leaves) -> None:
    """``function_call_arguments.delta`` and ``custom_tool_call_input.delta``."""
    index = adapter._index(event, kind)
    delta = adapter._str(event, "delta", kind)
    custom = kind == "response.custom_tool_call_input.delta"
    wanted = "custom_tool_call" if custom else "function_call"
    anomalies: list[dict[str, Any]] = []
    item = adapter._item_at(index, kind, wanted, anomalies)
    leaf: dict[str, Any] = {}
    if item.kind == wanted:
        adapter._track(str(index), delta)
        if delta:
            leaf["parts"] = [{"part": "tool_call", "provider_index": index, "arguments": delta}]
    else:
        anomalies.append(_mismatched(kind, index, item.kind))
    _emit(leaves, leaf, anomalies)


def args_done(adapter: Adapter, event: dict[str, Any], kind: str, leaves: Leaves) -> None:
    """``function_call_arguments.done`` and ``custom_tool_call_input.done``."""
    index = adapter._index(event, kind)
    custom = kind == "response.custom_tool_call_input.done"
    key = "input" if custom else "arguments"
    arguments = adapter._str(event, key, kind)
    item = adapter.items.get(index)
    wanted = "custom_tool_call" if custom else "function_call"
    if item is None or item.done or item.kind != wanted:
        return
    anomalies: list[dict[str, Any]] = []
    rest, settled = adapter._settle(
        str(index), arguments, f"{wanted} {item.call_id!r} {key}", anomalies
    )
    leaf: dict[str, Any] = {}
    if rest:
        part = {"part": "tool_call", "provider_index": index, "arguments": rest}
        if settled:
            part["settled"] = True
        leaf["parts"] = [part]
    _emit(leaves, leaf, anomalies)


def annotation(adapter: Adapter, event: dict[str, Any], kind: str, leaves: Leaves) -> None:
    index = adapter._index(event, kind)
    ci = adapter._sub(event, "content_index", kind, CONTENT_LIMIT)
    annotation = event.get("annotation")
    if annotation is None:
        return
    anomalies: list[dict[str, Any]] = []
    item = adapter._item_at(index, kind, "message", anomalies)
    leaf: dict[str, Any] = {}
    if item.kind == "message":
        key = f"{index}:{ci}"
        adapter.cited.add(key)
        at = index * STRIDE + ci
        leaf["parts"] = [{"part": "text", "text": "", "citations": [annotation], "index": at}]
    else:
        anomalies.append(_mismatched(kind, index, item.kind))
    if anomalies:
        leaf["anomalies"] = anomalies
    leaves.append((0, leaf))
