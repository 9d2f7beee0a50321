"""Render messages as the gemini non-streaming response."""

from __future__ import annotations

from typing import Any, Sequence


def render(messages: Sequence[Any]) -> dict[str, Any]:
    """Not written yet."""
    raise NotImplementedError("the gemini renderer is not written yet")
