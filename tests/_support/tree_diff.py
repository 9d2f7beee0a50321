"""Where two JSON-shaped trees differ, as paths: what the LiteLLM drop-in's tests and its
benchmark compare ``model_dump()`` s with (no import of the tests' conftest, so benchmarks can
use it too)."""

from __future__ import annotations

from typing import Any


def differing_paths(left: Any, right: Any, path: str = "") -> list[str]:
    """The paths where two trees differ: a key on one side only, or another value."""
    if isinstance(left, dict) and isinstance(right, dict):
        out: list[str] = []
        for key in sorted(set(left) | set(right), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in left or key not in right:
                out.append(where)
            else:
                out += differing_paths(left[key], right[key], where)
        return out
    if isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        pairs = enumerate(zip(left, right))
        return [p for i, (a, b) in pairs for p in differing_paths(a, b, f"{path}[{i}]")]
    return [] if left == right else [path]
