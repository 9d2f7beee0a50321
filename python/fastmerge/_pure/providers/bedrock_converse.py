"""The twin's ``"bedrock-converse"`` adapter (``src/engine/providers/bedrock_converse.rs``)."""

from __future__ import annotations

from typing import Any

from ._common import AdapterError


class Adapter:
    """Not written yet."""

    name = "bedrock-converse"

    def event(self, event: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
        raise AdapterError("the bedrock-converse adapter is not written yet")

    def end(self) -> list[tuple[int, dict[str, Any]]]:
        return []
