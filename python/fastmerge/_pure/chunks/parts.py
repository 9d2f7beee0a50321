"""Parts (spec §3, ``src/engine/chunks/parts.rs``): which part a fragment continues (text,
reasoning, tool_result, media, unknown; tool calls go to :mod:`.calls`), and the fields beside a
part's text."""

from __future__ import annotations

from typing import Any

from .calls import _resolve_call
from .merge import _merge_payload
from .state import _new_part, _own, _Part, _State


def _fold_part(state: _State, part: dict[str, Any]) -> None:
    kind = part["part"]
    if kind == "tool_call":
        _resolve_call(state, part)
        return
    if (
        len(part) == 2
        and "text" in part  # another field (attributes, citations) takes the full path
        and (kind == "text" or kind == "reasoning")
        and state.parts
    ):
        # the common case, a bare delta ({"part", "text"}): continue the last part
        tail = state.parts[-1]
        if tail.kind == kind and tail.index is None:
            text = part.get("text")
            if text:
                tail.pieces.append(text)
            return
    index = part.get("index")
    if kind == "text" or kind == "reasoning":
        text = part.get("text") or ""
        if not text and _empty_extras(part):
            return  # empty text creates no part [E22]
        last: _Part | None = None
        if index is not None:
            last = state.by_index.get(index)
            if last is not None and last.kind != kind:
                state.anomaly("kind_change", f"part index {index!r}: {kind} after {last.kind}")
                last = None
        elif state.parts and not part.get("attributes"):
            last = state.parts[-1]
            if last.kind != kind or last.index is not None:
                last = None
        if last is None:
            last = _new_part(state, kind, index, {})
        if part.get("settled"):
            # a done event's text, authoritative over the deltas (spec §6.1)
            last.pieces[:] = [text] if text else []
            if part.get("summary"):
                last.summary = None
        elif text:
            last.pieces.append(text)
        _fill_text_fields(state, last, part)
        return
    # tool_result, media, unknown: a part of its own; at a known index, fields fill if absent
    if index is not None:
        known = state.by_index.get(index)
        if known is not None:
            if known.kind == kind:
                fields = known.fields
                for key, value in part.items():
                    if key not in ("part", "index") and fields.get(key) is None:
                        if value is not None:
                            fields[key] = _own(value)
                return
            state.anomaly("kind_change", f"part index {index!r}: {kind} after {known.kind}")
    _new_part(
        state, kind, index, {k: _own(v) for k, v in part.items() if k not in ("part", "index")}
    )


def _empty_extras(part: dict[str, Any]) -> bool:
    return not (
        part.get("opened")  # a block the provider opened: kept even when empty [E79]
        or part.get("settled")  # a done text replaces, even with nothing [§6.1]
        or part.get("payload")
        or part.get("citations")
        or part.get("summary")
        or part.get("redacted")
        or part.get("attributes")
    )


def _fill_text_fields(state: _State, last: _Part, part: dict[str, Any]) -> None:
    """Text and reasoning fields beside the text: citations append [E68] (an empty list sent is
    kept as ``[]`` [E102]), summary appends, payload replaces (or concatenates) [E65],
    attributes fill if absent, redacted sticks."""
    fields = last.fields
    citations = part.get("citations")
    if citations or isinstance(citations, list):
        fields.setdefault("citations", []).extend(_own(citations))
    summary = part.get("summary")
    if summary:
        if last.summary is None:
            last.summary = []
        last.summary.append(summary)
    payload = part.get("payload")
    if payload is not None:
        fields["payload"] = _merge_payload(state, fields.get("payload"), payload)
    if part.get("redacted"):
        fields["redacted"] = True
    attributes = part.get("attributes")
    if attributes:
        current = fields.setdefault("attributes", {})
        for key, value in attributes.items():
            if key not in current:
                current[key] = _own(value)
