"""Render messages as the openai_chat non-streaming response."""

from __future__ import annotations

from typing import Any, Sequence


def render(messages: Sequence[Any]) -> dict[str, Any]:
    """Not written yet."""
    raise NotImplementedError("the openai_chat renderer is not written yet")
