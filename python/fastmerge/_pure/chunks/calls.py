"""The tool-call resolver (spec §4, ``src/engine/chunks/calls.rs``): which call a tool-call
fragment belongs to, a new call, and how a fragment merges into its call."""

from __future__ import annotations

from typing import Any

from .merge import _deep_merge, _merge_payload
from .state import _Call, _new_part, _State, absent


def _resolve_call(state: _State, fragment: dict[str, Any]) -> None:
    call_id = fragment.get("id")
    call_id = None if absent(call_id) else call_id
    name = fragment.get("name")
    name = None if absent(name) else name
    index = fragment.get("provider_index")
    arguments = fragment.get("arguments")
    has_args = arguments is not None and arguments != ""
    has_meta = bool(
        fragment.get("payload")
        or fragment.get("extra")
        or fragment.get("response_item_id")
        or not absent(fragment.get("type"))
    )
    at_index = state.calls_by_index.get(index) if index is not None else None
    call: _Call | None
    if call_id is None and name is None and not has_args:
        # 1. vacuous: ignored [E33]; metadata alone (a thought signature [E69]) attaches to
        # the call at its index, or the most recent call, and is never dropped
        if not has_meta:
            return
        call = at_index if index is not None else (state.calls[-1] if state.calls else None)
        if call is None:
            call = _new_call(state, index)
        _merge_into(state, call, fragment, None, None)
        return
    if call_id is not None and call_id in state.calls_by_id:
        # 2. a known id, unless a name comes with it and this index holds another call [E28]
        call = state.calls_by_id[call_id]
        if name is not None and index is not None and at_index is not call:
            call = None
    elif call_id is not None and name is not None:
        # 3. a new id with a name: a new call, unless it is the late id of this index's call
        call = None
        if at_index is not None and at_index.id is None and at_index.name in (None, name):
            call = at_index
    elif call_id is not None:
        # 4. a new id without a name cannot start a call [E35]
        call = at_index if index is not None else _open_call(state)
    elif name is not None and index is not None:
        # 5. late or repeated name at an index [E29]; another name is another call [E27]
        call = at_index if at_index is not None and at_index.name in (None, name) else None
    elif name is not None:
        # 6. a name without id or index: a new call unless the only call has no name yet
        call = None
        if len(state.calls) == 1 and state.calls[0].name is None:
            call = state.calls[0]
    elif index is not None:
        # 7. the call at this index, else a pending call that becomes real with its name
        call = at_index
    else:
        # 8. arguments alone: the most recent call [E26], ambiguous among several [E34]
        call = _open_call(state)
        if call is None:
            state.anomaly(
                "ambiguous_fragment",
                "arguments before any call: kept on a call without a name until one arrives",
            )
    if call is None:
        call = _new_call(state, index)
    _merge_into(state, call, fragment, call_id, name)


def _open_call(state: _State) -> _Call | None:
    """A fragment with no index and no name: the single open call, else the most recent one
    with an ``ambiguous_fragment`` anomaly [E34]; None when there is no call yet."""
    if len(state.calls) > 1:
        state.anomaly(
            "ambiguous_fragment",
            f"a fragment with no index and no name among {len(state.calls)} calls went to "
            "the most recent one",
        )
    return state.calls[-1] if state.calls else None


def _new_call(state: _State, index: Any) -> _Call:
    part = _new_part(state, "tool_call", None, {})
    call = _Call(part)
    part.call = call
    call.provider_index = index
    state.calls.append(call)
    if index is not None:
        state.calls_by_index[index] = call
    return call


def _merge_into(
    state: _State, call: _Call, fragment: dict[str, Any], call_id: Any, name: Any
) -> None:
    """id, type and name are set once; arguments append (a ``settled`` fragment's replace
    them); other fields deep-merge (spec §4)."""
    if call_id is not None and call.id is None:
        call.id = call_id
        state.calls_by_id.setdefault(call_id, call)
    if name is not None:
        if call.name is None:
            call.name = name
        elif call.name != name:
            state.anomaly(
                "name_conflict", f"call {call.id!r}: name {name!r} after {call.name!r} ignored"
            )
    kind = fragment.get("type")
    if call.type is None and not absent(kind):
        call.type = kind
    index = fragment.get("provider_index")
    if call.provider_index is None and index is not None:
        call.provider_index = index
        state.calls_by_index[index] = call
    arguments = fragment.get("arguments")
    settled = fragment.get("settled") and call.args_dict is None
    if isinstance(arguments, str) and arguments and settled:
        # a done event's arguments, authoritative over the deltas (spec §6.1)
        call.part.pieces[:] = [arguments]
    elif isinstance(arguments, str):
        if arguments:
            if call.args_dict is not None:
                state.anomaly(
                    "mismatched_delta", f"call {call.id!r}: text arguments after object ones"
                )
            else:
                call.part.pieces.append(arguments)
    elif isinstance(arguments, dict):
        if call.part.pieces:
            state.anomaly("mismatched_delta", f"call {call.id!r}: object arguments after text ones")
        else:
            call.args_dict = _deep_merge(
                call.args_dict if call.args_dict is not None else {}, arguments
            )
    fields = call.part.fields
    payload = fragment.get("payload")
    if payload is not None:
        fields["payload"] = _merge_payload(state, fields.get("payload"), payload)
    item_id = fragment.get("response_item_id")
    if fields.get("response_item_id") is None and not absent(item_id):
        fields["response_item_id"] = item_id
    # set once: a later fragment of the call keeps the index the first one gave
    call_index = fragment.get("call_index")
    if fields.get("call_index") is None and call_index is not None:
        fields["call_index"] = call_index
    extra = fragment.get("extra")
    if extra:
        fields["extra"] = _deep_merge(fields.get("extra") or {}, extra)
