"""The twin's ``"openai-responses"`` adapter (``src/engine/providers/openai_responses.rs``)."""

from __future__ import annotations

from typing import Any

from ._common import AdapterError


class Adapter:
    """Not written yet."""

    name = "openai-responses"

    def event(self, event: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
        raise AdapterError("the openai-responses adapter is not written yet")

    def end(self) -> list[tuple[int, dict[str, Any]]]:
        return []
