"""The twin's ``"openai-chat"`` adapter (``src/engine/providers/openai_chat.rs``)."""

from __future__ import annotations

from typing import Any

from ._common import AdapterError


class Adapter:
    """Not written yet."""

    name = "openai-chat"

    def event(self, event: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
        raise AdapterError("the openai-chat adapter is not written yet")

    def end(self) -> list[tuple[int, dict[str, Any]]]:
        return []
