"""What every twin adapter shares (``src/engine/providers/common.rs``)."""

from __future__ import annotations


class AdapterError(Exception):
    """An event its adapter cannot map; ``detail`` says what is wrong (the aggregator adds the
    event's number and raises ``fastmerge.errors.EventError``)."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail
