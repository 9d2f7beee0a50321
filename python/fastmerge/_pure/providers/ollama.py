"""The twin's ``"ollama"`` adapter (``src/engine/providers/ollama.rs``)."""

from __future__ import annotations

from typing import Any

from ._common import AdapterError


class Adapter:
    """Not written yet."""

    name = "ollama"

    def event(self, event: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
        raise AdapterError("the ollama adapter is not written yet")

    def end(self) -> list[tuple[int, dict[str, Any]]]:
        return []
