"""The rebuild of a described leaf (``from_dict``) folded first [E91]
(``src/engine/chunks/rebuild.rs``): its parts and calls are made as they are, registered so that
later leaves continue them."""

from __future__ import annotations

from typing import Any

from .calls import _new_call
from .merge import _merge_payload
from .parts import _empty_extras, _fill_text_fields
from .state import _new_part, _own, _State, absent


def _rebuild_part(state: _State, part: dict[str, Any]) -> None:
    """One part of a described leaf folded first (see :func:`_fold`): a new part with the
    fields the dict gives, read as :func:`_fold_part` reads them, registered by its index
    (and a call by its provider index and id) so that later leaves continue it."""
    kind = part["part"]
    if kind == "tool_call":
        _rebuild_call(state, part)
        return
    index = part.get("index")
    if kind == "text" or kind == "reasoning":
        text = part.get("text") or ""
        if not text and _empty_extras(part):
            return  # empty text creates no part [E22] (from_dict marks its parts opened)
        last = _new_part(state, kind, index, {})
        if text:
            last.pieces.append(text)
        _fill_text_fields(state, last, part)
        return
    _new_part(
        state, kind, index, {k: _own(v) for k, v in part.items() if k not in ("part", "index")}
    )


def _rebuild_call(state: _State, fragment: dict[str, Any]) -> None:
    """A tool-call part of a described leaf folded first: a call of its own, its fields read
    in :func:`_merge_into`'s order; ``arguments`` and ``extra`` kept as they are (an empty or
    None-valued ``extra`` included, E91)."""
    call_id = fragment.get("id")
    call_id = None if absent(call_id) else call_id
    name = fragment.get("name")
    name = None if absent(name) else name
    call = _new_call(state, fragment.get("provider_index"))
    if call_id is not None:
        call.id = call_id
        state.calls_by_id.setdefault(call_id, call)
    call.name = name
    kind = fragment.get("type")
    if not absent(kind):
        call.type = kind
    arguments = fragment.get("arguments")
    if isinstance(arguments, str):
        if arguments:
            call.part.pieces.append(arguments)
    elif isinstance(arguments, dict):
        call.args_dict = _own(arguments)
    fields = call.part.fields
    payload = fragment.get("payload")
    if payload is not None:
        fields["payload"] = _merge_payload(state, None, payload)
    item_id = fragment.get("response_item_id")
    if not absent(item_id):
        fields["response_item_id"] = item_id
    call_index = fragment.get("call_index")
    if call_index is not None:
        fields["call_index"] = call_index
    extra = fragment.get("extra")
    if extra is not None:
        fields["extra"] = _own(extra)
