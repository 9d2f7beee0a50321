"""What every twin adapter shares (``src/engine/providers/common.rs``)."""

from __future__ import annotations

from typing import Any


class AdapterError(Exception):
    """An event its adapter cannot map; ``detail`` says what is wrong (the aggregator adds the
    event's number and raises ``fastmerge.errors.EventError``)."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def text_field(value: Any, where: str) -> Any:
    """``value`` when it is None or a str, else ``AdapterError("<where> is not a string")``:
    the check of ids, models, roles, stop reasons and tool names in every adapter (a value of
    another kind there would fail later, in the fold or in ``to_dict``)."""
    if value is not None and not isinstance(value, str):
        raise AdapterError(f"{where} is not a string")
    return value
