"""The twin's ``"gemini"`` adapter (``src/engine/providers/gemini.rs``)."""

from __future__ import annotations

from typing import Any

from ._common import AdapterError


class Adapter:
    """Not written yet."""

    name = "gemini"

    def event(self, event: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
        raise AdapterError("the gemini adapter is not written yet")

    def end(self) -> list[tuple[int, dict[str, Any]]]:
        return []
