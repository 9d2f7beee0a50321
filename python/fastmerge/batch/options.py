"""The options of a batch run, one typed object (:class:`BatchOptions`): what
:func:`fastmerge.batch.merge_logs`, :func:`fastmerge.dask.merge_logs` and ``fastmerge batch``
hand to the backend's ``BatchCore``."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Literal, TypedDict

from .._types import Provider, SignatureMerge, UsageMerge

__all__ = ["ERROR_MODES", "BatchOptions", "OptionValues"]

#: ``errors=`` of :func:`fastmerge.batch.merge_logs`.
ERROR_MODES = ("raise", "skip", "collect")


@dataclass(frozen=True)
class BatchOptions:
    """How a log is read and its streams merged (see :mod:`fastmerge.batch`): the grouping
    (``group_by``, ``event``, ``order_by``), the aggregator's options (``provider``,
    ``strict``, ``signature_merge``, ``usage``), the core's threads (``jobs``, 0: all cores)
    and its bound on open streams (``max_open_streams``, 0: none). The backend's core checks
    the values, with its errors."""

    group_by: str = "auto"
    event: str | None = None
    order_by: str | None = None
    provider: Provider | Literal["auto"] = "auto"
    strict: bool = False
    signature_merge: SignatureMerge = "replace"
    usage: UsageMerge = "merge"
    jobs: int = 0
    max_open_streams: int = 0

    def core_arguments(self) -> dict[str, Any]:
        """The keyword arguments of the backend's ``BatchCore`` (after its paths)."""
        return {field.name: getattr(self, field.name) for field in fields(self)}

    def but(self, **changes: Any) -> BatchOptions:
        """These options with ``changes``."""
        return replace(self, **changes)


class OptionValues(TypedDict, total=False):
    """:class:`BatchOptions`' fields as keywords (``merge_logs(paths, group_by=...)``); a test
    holds the two to the same names and types."""

    group_by: str
    event: str | None
    order_by: str | None
    provider: Provider | Literal["auto"]
    strict: bool
    signature_merge: SignatureMerge
    usage: UsageMerge
    jobs: int
    max_open_streams: int
