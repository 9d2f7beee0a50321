"""A stream's result and its record: :class:`StreamResult` (what a batch yields),
:class:`Written` (its record as written: a JSON line or a Parquet row) and :class:`Rows` (rows
the Rust core added to its own Arrow columns). The record's fields and columns are those of
:mod:`fastmerge.batch.schema`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from .. import _backend
from .._types import Provider
from .lines import json_line
from .schema import COLUMNS, STATUSES

if TYPE_CHECKING:
    from ..messages import AssistantMessage
else:
    AssistantMessage = _backend.messages(_backend.backend_of(__name__)[0]).AssistantMessage

__all__ = ["Rows", "StreamResult", "Written", "written"]


class StreamResult:
    """One stream of a batch: its ``key`` (the group key, or the file's path), the
    ``provider`` read (None if no event could be), its ``messages`` (one per choice; None when
    the stream could not be merged, and then ``error`` says why)."""

    __slots__ = ("key", "provider", "messages", "error")

    def __init__(
        self,
        key: str,
        provider: str | None,
        messages: list[AssistantMessage] | None,
        error: str | None,
    ) -> None:
        self.key = key
        self.provider = provider
        self.messages = messages
        self.error = error

    @property
    def message(self) -> AssistantMessage | None:
        """Choice 0 (the lowest choice seen), or None when the stream could not be merged."""
        return self.messages[0] if self.messages else None

    @property
    def status(self) -> str:
        """The worst of its choices' statuses (see :data:`STATUSES`); ``error`` without a
        message."""
        if not self.messages:
            return "error"
        worst = max(STATUSES.index(m.status or "incomplete") for m in self.messages)
        return STATUSES[worst]

    @property
    def anomalies(self) -> list[dict[str, Any]]:
        """The anomalies of its messages, choice by choice (one recorded on every choice is
        given once)."""
        out: list[dict[str, Any]] = []
        for message in self.messages or ():
            out.extend(a for a in message.anomalies if a not in out)
        return out

    def record(self, to: Provider | None = None) -> dict[str, Any]:
        """The stream as a plain dict: ``key``, ``provider``, ``status``, ``anomalies``,
        ``message`` (choice 0's ``to_dict()``, or with ``to`` the provider's non-streaming
        response holding every choice), ``choices`` (every choice's ``to_dict()``, only when
        there are several and ``to`` is None) and ``error``."""
        out: dict[str, Any] = {
            "key": self.key,
            "provider": self.provider,
            "status": self.status,
            "anomalies": self.anomalies,
            "message": None,
        }
        error = self.error
        if self.messages:
            if to is not None:
                from ..render import to_provider

                try:
                    out["message"] = to_provider(self.messages, to)
                except ValueError as exc:  # a shape the target cannot hold
                    out["status"] = "error"
                    error = f"to={to!r}: {exc}"
            else:
                out["message"] = self.messages[0].to_dict()
                if len(self.messages) > 1:
                    out["choices"] = [m.to_dict() for m in self.messages]
        out["error"] = error
        return out

    def __repr__(self) -> str:
        return f"<StreamResult key={self.key!r} provider={self.provider!r} status={self.status}>"


class Written(NamedTuple):
    """A stream's record as it is written (:meth:`Batch.poll_written`): its ``key``,
    ``status`` and ``error`` (the record's: with ``to``, a message the target cannot hold is
    an ``error`` record), ``line`` (the bytes :func:`json_line` gives for
    :meth:`StreamResult.record`; empty when its row was asked for instead), ``row`` (its
    Parquet columns, in :data:`COLUMNS` order, the last, ``message``, as UTF-8 JSON bytes;
    or None when not asked for) and ``merged``
    (whether the stream has a message: False is a :class:`StreamResult` whose status is
    ``error``)."""

    key: str
    status: str
    error: str | None
    line: bytes
    row: tuple[Any, ...] | None
    merged: bool


class Rows(NamedTuple):
    """Records whose Parquet rows the Rust core added to its Arrow columns
    (:meth:`Batch.poll_rows`): how many (``added``), their messages' JSON bytes (``held``),
    the first whose stream has no message (``failed``, a :class:`Written` without its line
    and row; or None), and ``take``, which makes every row added so far a table."""

    added: int
    held: int
    failed: Written | None
    take: Callable[[], Any]


def written(result: StreamResult, to: Provider | None, row: bool) -> Written:
    """``result`` as written, serialized here."""
    record = result.record(to)
    return Written(
        result.key,
        record["status"],
        record["error"],
        b"" if row else json_line(record),
        _row(result, record) if row else None,
        bool(result.messages),
    )


def _row(result: StreamResult, record: dict[str, Any]) -> tuple[Any, ...]:
    """The cells of ``result`` in :data:`~fastmerge.batch.schema.COLUMNS` order, ``record``
    its record."""
    message = result.message
    data = None if message is None else message.to_dict()
    usage = None if data is None else data["usage_metadata"]
    cells = {
        "key": result.key,
        "provider": result.provider,
        "model": None if message is None else message.response_model,
        "status": record["status"],
        "finish_reason": None if data is None else data["finish_reason"],
        "finish_reason_normalized": None if message is None else message.finish_reason_normalized,
        "input_tokens": _count(usage, "input_tokens"),
        "output_tokens": _count(usage, "output_tokens"),
        "total_tokens": _count(usage, "total_tokens"),
        "text": None
        if data is None
        else "".join(p["text"] for p in data["parts"] if p["part"] == "text"),
        "tool_calls": None if message is None else len(message.tool_calls or ()),
        "anomalies": len(record["anomalies"]),
        "error": record["error"],
        # the message's JSON as UTF-8 bytes, which pyarrow reads as a string column
        "message": None if record["message"] is None else json_line(record["message"])[:-1],
    }
    return tuple(cells[name] for name, _ in COLUMNS)


def _count(usage: Any, name: str) -> int | None:
    value = usage.get(name) if isinstance(usage, dict) else None
    return value if type(value) is int else None
