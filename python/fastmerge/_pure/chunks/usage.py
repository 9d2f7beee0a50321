"""Usage (spec §5, ``src/engine/chunks/usage.rs``): how a leaf's ``usage`` / ``final_usage``
folds into the state per key under each ``usage`` mode, and a usage's total (a reported total
kept; a missing or zero one the sum of the counts)."""

from __future__ import annotations

from typing import Any

from ... import errors
from .state import _ZERO_WINS_NEVER, _own, _State


def _fold_usage(state: _State, right: Any, final: bool) -> None:
    """``usage``, or ``final_usage``: counts the provider calls final (Anthropic's cumulative
    ``message_delta``), which replace zeros included (spec §5)."""
    if not isinstance(right, dict):
        return
    if state.usage is None:
        state.usage = {}
    mode = state.options.usage
    if final and mode == "merge":
        mode = "last"
    _note_total(state, right, mode)
    _merge_usage(state.usage, right, mode)


def _note_total(state: _State, right: dict[Any, Any], mode: str) -> None:
    """Whether the total ``right`` brings (when it is kept) is a per-chunk one: equal to its
    own chunk's counts. A summed total stays per-chunk only while every summand was."""
    total = right.get("total_tokens")
    if total is None:
        return
    assert state.usage is not None
    current = state.usage.get("total_tokens")
    if current is not None and _keeps(mode, current, total):
        return
    own = _counts_total(right)
    agrees = _is_number(total) and own is not None and total == own
    summed = mode == "sum" and _is_number(current) and _is_number(total)
    state.per_chunk_total = agrees and (state.per_chunk_total or not summed)


def _merge_usage(left: dict[Any, Any], right: dict[Any, Any], mode: str) -> None:
    for key, value in right.items():
        if value is None:  # [E58]
            continue
        current = left.get(key)
        if isinstance(current, dict) and isinstance(value, dict):
            _merge_usage(current, value, mode)  # *_details per key [E59]
        elif current is None:
            left[key] = _own(value)
        elif mode == "sum" and _is_number(current) and _is_number(value):
            left[key] = current + value
        elif _keeps(mode, current, value):
            continue
        else:
            left[key] = _own(value)


def _keeps(mode: str, current: Any, value: Any) -> bool:
    """A zero never overwrites an earlier count [E54], nor does an empty string (``merge``)."""
    if mode != "merge":
        return False
    if _is_number(value) and value == 0 and _is_number(current):
        return True
    return isinstance(value, str) and not value


def _counts_total(usage: dict[Any, Any]) -> Any:
    """input + output (absent or not a number counts 0); None when neither is given."""
    inputs: Any = usage.get("input_tokens")
    outputs: Any = usage.get("output_tokens")
    if inputs is None and outputs is None:
        return None
    return (inputs if _is_number(inputs) else 0) + (outputs if _is_number(outputs) else 0)


def usage_total(usage: dict[Any, Any]) -> Any:
    """The total a finished usage stands for (rules §5): a reported total, unless it is
    missing or zero where counts were given: then input + output (absent counts 0). What
    :func:`_finish_usage` leaves when no chunk's total was a per-chunk one; read by the
    renderers and the session log, which state no rule of their own."""
    if not isinstance(usage, dict):
        raise errors.wrong_type("usage", "a dict", usage)
    total: Any = usage.get("total_tokens")
    computed = _counts_total(usage)
    if (total is None or (_is_number(total) and total == 0)) and computed is not None:
        return computed
    return total


def _is_number(value: Any) -> bool:
    return isinstance(value, _ZERO_WINS_NEVER) and not isinstance(value, bool)
