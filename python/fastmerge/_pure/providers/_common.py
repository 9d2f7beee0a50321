"""What every twin adapter shares (``src/engine/providers/common.rs``)."""

from __future__ import annotations

from typing import Any, Callable

from ..chunks import absent


def cut_call_anomaly(
    detail: str, id: Any, name: Any, provider_index: int | None = None
) -> dict[str, Any]:
    """The ``truncated`` anomaly of a tool call the stream cut: besides ``code`` and ``detail``,
    the call as data (``tool_call``: its ``id`` and / or ``name``, each when the stream gave it
    as a str, and the ``provider_index`` its tool-call part carries, where the adapter knows
    it), so that a renderer finds the cut call without reading the detail's text."""
    call: dict[str, Any] = {
        key: value for key, value in (("id", id), ("name", name)) if isinstance(value, str)
    }
    if provider_index is not None:
        call["provider_index"] = provider_index
    anomaly: dict[str, Any] = {"code": "truncated", "detail": detail}
    if call:
        anomaly["tool_call"] = call
    return anomaly


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


class FinishedId:
    """The id a response finished with (OpenAI chunk ids, Gemini ``responseId``s): a later
    chunk with another id starts another response (spec §6). Ids before the finish say nothing
    (Groq compound sends a new id on every chunk), except that a chunk with one of them is
    this response's (a stream logged twice, spec §6.1)."""

    __slots__ = ("last", "finished", "seen")

    def __init__(self) -> None:
        self.last: str | None = None  # the last id before the finish
        self.finished: str | None = None
        self.seen: set[str] = set()  # every id before the finish

    def track(self, value: Any, finished: Callable[[], bool]) -> None:
        """After a chunk: its id, and whether a choice has finished by now."""
        if self.finished is None:
            if isinstance(value, str) and not absent(value):
                self.last = value
                self.seen.add(value)
            if finished():
                self.finished = self.last

    def other(self, value: Any) -> str | None:
        """``value`` if it is an id other than the finished one and every one before it,
        else None."""
        if self.finished is None or not isinstance(value, str) or absent(value):
            return None
        return None if value == self.finished or value in self.seen else value
