"""Render messages as the bedrock_converse non-streaming response."""

from __future__ import annotations

from typing import Any, Sequence


def render(messages: Sequence[Any]) -> dict[str, Any]:
    """Not written yet."""
    raise NotImplementedError("the bedrock_converse renderer is not written yet")
