"""The one interface both backends implement, checked by mypy (``make lint``).

mypy checks the twin (``fastmerge._pure``) and the extension's stub (``_fastmerge.pyi``, itself
checked against the built module by stubtest) against :class:`Backend`, so a name or signature
that drifts on either side fails lint, not a user's call.
"""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Protocol, Sequence


class Backend(Protocol):
    # Constants are read-only members: a module's tuple of two names is a tuple[str, ...].
    @property
    def __version__(self) -> str: ...
    @property
    def MAX_DEPTH(self) -> int: ...
    @property
    def POLICIES(self) -> tuple[str, ...]: ...
    @property
    def PROVIDERS(self) -> tuple[str, ...]: ...
    @property
    def LIST_MERGES(self) -> tuple[str, ...]: ...
    @property
    def ATOMIC_KEYS(self) -> frozenset[str]: ...

    def merge(
        self,
        left: Any,
        right: Any,
        *,
        policy: str = ...,
        list_merge: str = ...,
        strict: bool = ...,
    ) -> Any: ...

    def merge_all(
        self,
        items: Iterable[Any],
        *,
        policy: str = ...,
        list_merge: str = ...,
        strict: bool = ...,
    ) -> Any: ...

    def merge_dicts(self, left: dict[Any, Any], right: dict[Any, Any]) -> dict[Any, Any]: ...

    def concat_token_ids(self, left: Any, right: Any) -> Any: ...

    def merge_logprobs(self, left: Any, right: Any) -> Any: ...
    def usage_total(self, usage: Any) -> Any: ...

    def fold_chunks(
        self,
        chunks: Iterable[Any],
        *,
        strict: bool = ...,
        signature_merge: str = ...,
        usage: str = ...,
    ) -> Any: ...

    def copy_tree(self, value: Any) -> Any: ...
    def freeze_tree(self, value: Any) -> Any: ...

    @property
    def AggregatorCore(self) -> type[AggregatorCoreLike]: ...
    @property
    def BatchCore(self) -> type[BatchCoreLike]: ...

    def split_file(
        self,
        path: str,
        group_by: str,
        event: str | None = ...,
        order_by: str | None = ...,
        buckets: int = ...,
    ) -> tuple[int, list[tuple[int, bytes, array[int]]]]: ...


class AggregatorCoreLike(Protocol):
    """What ``fastmerge.aggregate`` uses of a backend's ``AggregatorCore``."""

    def __init__(
        self, provider: str = ..., strict: bool = ..., signature_merge: str = ..., usage: str = ...
    ) -> None: ...
    @property
    def provider(self) -> str | None: ...
    def add(self, event: Any) -> None: ...
    def add_text(self, data: str | bytes) -> None: ...
    def feed(self, data: str | bytes) -> None: ...
    def snapshot(self) -> Sequence[Mapping[str, Any]]: ...
    def finish(self) -> Sequence[Mapping[str, Any]]: ...


class BatchCoreLike(Protocol):
    """What ``fastmerge.batch`` uses of a backend's ``BatchCore`` (the twin,
    ``fastmerge._pure.batch``, is its specification)."""

    #: Whether it writes records itself (``next(timeout, "jsonl" | "row")``, ``next_rows``).
    WRITES_RECORDS: bool

    def __init__(
        self,
        paths: list[str],
        group_by: str = ...,
        event: str | None = ...,
        order_by: str | None = ...,
        provider: str = ...,
        strict: bool = ...,
        signature_merge: str = ...,
        usage: str = ...,
        jobs: int = ...,
        max_open_streams: int = ...,
        positions: bool = ...,
    ) -> None: ...
    def next(self, timeout: float | None = ...) -> tuple[Any, ...] | None: ...
    def progress(self) -> tuple[int, int, int, int]: ...
    def close(self) -> None: ...


if TYPE_CHECKING:
    from . import _fastmerge, _pure

    _rust: Backend = _fastmerge
    _twin: Backend = _pure
