"""One leaf folded into a state (``src/engine/chunks/fold.rs``): each of the leaf's fields in
its order, handed to its rule (parts, calls, usage, rebuild)."""

from __future__ import annotations

from typing import Any

from .merge import _concat_ids, _deep_merge, _fold_logprobs
from .parts import _fold_part
from .rebuild import _rebuild_part
from .state import _first, _last, _own, _State, absent
from .usage import _fold_usage


def _fold(state: _State, leaf: dict[str, Any]) -> None:
    """Fold one leaf's fields into ``state`` (which is private and changes in place).

    A leaf marked ``"described": True`` (``from_dict``: the parts a ``to_dict()`` gives) that
    is folded first *is* the state: its parts are rebuilt as they are (:func:`_rebuild_part`),
    never merged with each other, so no part joins another and no anomaly is recorded again
    [E91]. Folded after other leaves, it is a chunk like any other: its parts continue theirs
    by the rules of spec §3."""
    family = state.family
    rebuild = state.leaves == 0 and leaf.get("described") is True
    state.leaves += 1
    for key, value in leaf.items():
        if key == "parts":
            if family == "assistant":
                fold_part = _rebuild_part if rebuild else _fold_part
                for part in value:
                    fold_part(state, part)
        elif key == "content":
            if family != "assistant":
                _fold_content(state, value)
            elif isinstance(value, list):
                state.content_list = True
        elif key == "content_list":
            state.content_list = state.content_list or bool(value)
        elif key == "role":
            if state.role is None and not absent(value):
                state.role = value
        elif key == "name":
            state.name = _first(state.name, value)
        elif key == "metadata":
            state.metadata = _deep_merge(state.metadata, value) if value else state.metadata
        elif key == "provider_metadata":
            if value:
                state.provider_metadata = _deep_merge(state.provider_metadata, value)
        elif key == "tool_call_id":
            state.tool_call_id = _last(state.tool_call_id, value)
        elif key == "usage":
            _fold_usage(state, value, False)
        elif key == "final_usage":
            _fold_usage(state, value, True)
        elif key == "finish_reason":
            state.finish_reason = _last(state.finish_reason, value)
        elif key == "finish_reason_normalized":
            # where the provider sends no raw reason (a Responses status, spec §10.7)
            if isinstance(value, str):
                state.finish_reason_normalized = value
        elif key == "parser_content":
            if value is not None:
                state.parser_content = value
        elif key == "provider_content":
            if value is not None:
                state.provider_content = value
        elif key == "prompt_token_ids":
            if not state.prompt_token_ids:  # first non-empty [E63]
                state.prompt_token_ids = _own(value)
        elif key == "completion_token_ids":
            state.completion_token_ids = _concat_ids(state.completion_token_ids, value)
        elif key == "logprobs":
            state.logprobs = _fold_logprobs(state.logprobs, value)
        elif key == "response_id":
            state.response_id = _first(state.response_id, value)
        elif key == "response_model":
            state.response_model = _last(state.response_model, value)  # [E73]
        elif key == "refusal":
            if isinstance(value, str) and value and leaf.get("settled") is True:
                state.refusal = [value]  # a done refusal replaces the streamed one (spec §6.1)
            elif isinstance(value, str) and value:
                if state.refusal is None:
                    state.refusal = []
                state.refusal.append(value)  # [E71]
        elif key == "status":
            state.status = _last(state.status, value)
        elif key == "anomalies":
            state.anomalies.extend(dict(a) for a in value)
        elif key == "choice_index":
            if state.choice_index is None:
                state.choice_index = value
        # any other key: per-chunk noise (e.g. obfuscation) is not accumulated [E74]


def _fold_content(state: _State, value: Any) -> None:
    """base/tool content (spec §3.1): str+str and list+list concatenate, otherwise the right
    value; the tool family counts an empty right side as absent."""
    kind = state.content_kind
    if value is None:
        return
    if kind == "str" and isinstance(value, str):
        state.content_pieces.append(value)
    elif kind == "list" and isinstance(value, list):
        state.content_pieces.extend(value)
    elif kind is not None and state.family == "tool" and not value:
        return
    elif isinstance(value, str):
        state.content_kind, state.content_pieces = "str", [value]
    elif isinstance(value, list):
        state.content_kind, state.content_pieces = "list", list(value)
    else:
        state.content_kind, state.content_pieces, state.content = "other", [], value
