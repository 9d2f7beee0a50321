"""Value merges shared by several fields and parts (``src/engine/chunks/merge.rs``): the deep
merge (metadata, provider_metadata, a call's extra and object arguments), token ids, logprobs,
and opaque payloads (signatures)."""

from __future__ import annotations

from typing import Any

from ... import errors
from ...errors import MAX_DEPTH
from .state import _own, _State, absent


def _deep_merge(left: Any, right: Any, depth: int = 0) -> Any:
    """metadata, provider_metadata, a call's extra fields [E72]: dicts merge per key, the last
    non-None leaf wins, strings never concatenate. ``left`` is private (ours to change).
    Dicts nested deeper than ``MAX_DEPTH`` levels raise ``DepthLimitError``."""
    if isinstance(left, dict) and isinstance(right, dict):
        if depth >= MAX_DEPTH:
            raise errors.DepthLimitError(MAX_DEPTH)
        for key, value in right.items():
            if value is None:
                continue
            if key in left:
                left[key] = _deep_merge(left[key], value, depth + 1)
            else:
                left[key] = _own(value)
        return left
    return left if right is None else _own(right)


def _thaw(value: Any, depth: int = 0) -> Any:
    """A copy of what the state may still change, for reading: its dicts at every depth (deep
    merges fill them in place) and its lists (folds extend them), not the items of a list (a
    leaf's, never changed). Readers copy again before handing values to users."""
    if isinstance(value, dict):
        if depth >= MAX_DEPTH:
            raise errors.DepthLimitError(MAX_DEPTH)
        return {k: _thaw(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return list(value)
    return value


def _concat_ids(left: Any, right: Any) -> Any:
    """completion_token_ids: an empty side gives the other, lists concatenate, else right."""
    if not right:
        return left
    if not left:
        return _own(right)
    if isinstance(left, list) and isinstance(right, list):
        left.extend(right)
        return left
    return _own(right)


def _fold_logprobs(left: Any, right: Any) -> Any:
    """Every list-valued key concatenates; a None never resets [E60–E62]."""
    if right is None:
        return left
    if left is None:
        return _own(right)
    if isinstance(left, dict) and isinstance(right, dict):
        for key, value in right.items():
            if value is None:
                continue
            current = left.get(key)
            if isinstance(current, list) and isinstance(value, list):
                current.extend(value)
            else:
                left[key] = _own(value)
        return left
    if isinstance(left, list) and isinstance(right, list):
        left.extend(right)
        return left
    return _own(right)


def _merge_payload(state: _State, left: Any, right: dict[str, Any]) -> dict[str, Any]:
    """Opaque payloads: the last non-empty replaces; ``signature_merge="concat"`` joins the data
    of two string payloads of the same provider and kind."""
    if absent(right.get("data")):
        return left if left is not None else dict(right)
    if (
        state.options.signature_merge == "concat"
        and left is not None
        and isinstance(left.get("data"), str)
        and isinstance(right.get("data"), str)
        and left.get("provider") == right.get("provider")
        and left.get("kind") == right.get("kind")
    ):
        return {**left, "data": left["data"] + right["data"]}
    return dict(right)
