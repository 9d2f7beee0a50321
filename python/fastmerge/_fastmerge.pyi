"""Stub of the compiled extension ``fastmerge._fastmerge``; checked against it by stubtest.

The names and signatures are those of the pure-Python twin (``fastmerge._pure``): see its
docstrings and ``docs/merge-rules.md`` §1 for the rules.
"""

from array import array
from typing import Any, Callable, Iterable, Iterator, Mapping, final

from typing_extensions import disjoint_base

__all__ = [
    "ATOMIC_KEYS",
    "AggregatorCore",
    "BUILD_PROFILE",
    "BatchCore",
    "DirectoryWriter",
    "ChunkCore",
    "LIST_MERGES",
    "MAX_DEPTH",
    "MessageData",
    "POLICIES",
    "PROVIDERS",
    "__version__",
    "add_ai_message_chunks",
    "concat_token_ids",
    "copy_tree",
    "fold_chunks",
    "freeze_tree",
    "merge",
    "merge_all",
    "merge_dicts",
    "merge_logprobs",
    "usage_total",
    "json_line",
    "read_input",
    "split_file",
]

__version__: str
#: "release" or "debug": how the extension was compiled
BUILD_PROFILE: str
MAX_DEPTH: int
POLICIES: tuple[str, ...]
PROVIDERS: tuple[str, ...]
LIST_MERGES: tuple[str, ...]
ATOMIC_KEYS: frozenset[str]

def merge(
    left: Any,
    right: Any,
    *,
    policy: str = "openjiuwen",
    list_merge: str = "concat",
    strict: bool = False,
) -> Any: ...
def merge_all(
    items: Iterable[Any],
    *,
    policy: str = "openjiuwen",
    list_merge: str = "concat",
    strict: bool = False,
) -> Any: ...
def merge_dicts(left: dict[Any, Any], right: dict[Any, Any]) -> dict[Any, Any]: ...
def add_ai_message_chunks(items: Iterable[dict[str, Any]]) -> dict[str, Any] | None: ...
def concat_token_ids(left: Any, right: Any) -> Any: ...
def merge_logprobs(left: Any, right: Any) -> Any: ...
def usage_total(usage: Any) -> Any: ...

@disjoint_base
class ChunkCore:
    """Base of the chunk classes (the twin: ``fastmerge._pure.chunks.ChunkCore``)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> ChunkCore: ...
    def _init(self, family: str, leaf: dict[str, Any]) -> None: ...
    def _leaves(self) -> list[dict[str, Any]]: ...
    def __add__(self, other: Any, /) -> Any: ...
    def __radd__(self, other: Any, /) -> Any: ...
    def _data(self, finish: bool = False) -> dict[str, Any]: ...

def fold_chunks(
    chunks: Iterable[Any],
    *,
    strict: bool = False,
    signature_merge: str = "replace",
    usage: str = "merge",
) -> Any: ...
def copy_tree(value: Any) -> Any: ...
def freeze_tree(value: Any) -> Any: ...

@final
class AggregatorCore:
    """Provider events -> folded message data (the twin: ``fastmerge._pure.aggregate``)."""

    def __new__(
        cls,
        provider: str = "auto",
        strict: bool = False,
        signature_merge: str = "replace",
        usage: str = "merge",
    ) -> AggregatorCore: ...
    @property
    def provider(self) -> str | None: ...
    def add(self, event: Any) -> None: ...
    def add_events(self, events: Iterable[Any], plain: Callable[[Any], Any]) -> None: ...
    def add_text(self, data: str | bytes) -> None: ...
    def feed(self, data: str | bytes) -> None: ...
    @staticmethod
    def aggregate(
        data: str | bytes,
        provider: str = "auto",
        strict: bool = False,
        signature_merge: str = "replace",
        usage: str = "merge",
    ) -> list[MessageData]: ...
    def snapshot(self) -> list[MessageData]: ...
    def finish(self) -> list[MessageData]: ...

@final
class MessageData(Mapping[str, Any]):
    """A message's folded data, read-only; each field made a Python object at its first
    read, and the same object at every later read."""

    def __getitem__(self, key: str, /) -> Any: ...
    def get(self, key: str, default: Any = None) -> Any: ...
    def __contains__(self, key: object, /) -> bool: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[str]: ...
    def keys(self) -> list[str]: ...  # type: ignore[override]
    def values(self) -> list[Any]: ...  # type: ignore[override]
    def items(self) -> list[tuple[str, Any]]: ...  # type: ignore[override]
    def __eq__(self, other: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[dict[str, Any]], tuple[dict[str, Any]]]: ...

@final
class BatchCore:
    """Logged streams -> one item per stream, on all cores (the twin: ``fastmerge._pure.batch``)."""

    WRITES_RECORDS: bool
    RECORD_FIELDS: tuple[str, ...]
    COLUMNS: tuple[tuple[str, str], ...]
    STATUSES: tuple[str, ...]

    def __new__(
        cls,
        paths: list[str],
        group_by: str = "auto",
        event: str | None = None,
        order_by: str | None = None,
        provider: str = "auto",
        strict: bool = False,
        signature_merge: str = "replace",
        usage: str = "merge",
        jobs: int = 0,
        max_open_streams: int = 0,
        positions: bool = False,
        bucket: tuple[int, int] | None = None,
    ) -> BatchCore: ...
    def next(
        self, timeout: float | None = None, record: str | None = None
    ) -> tuple[Any, ...] | None: ...
    def next_rows(
        self, timeout: float | None = None, rows: int = 1000, held: int = ...
    ) -> tuple[Any, ...] | None: ...
    def take_rows(self) -> tuple[int, tuple[tuple[Any, ...], ...]]: ...
    def progress(self) -> tuple[int, int, int, int]: ...
    def close(self) -> None: ...

@final
class DirectoryWriter:
    """Files of ``--output-dir`` and their index lines, written on a thread of their own (the
    twin: ``fastmerge._pure.batch.DirectoryWriter``)."""

    def __new__(cls, directory: str, index: str) -> DirectoryWriter: ...
    def put(self, name: str, data: bytes, index_line: bytes) -> None: ...
    def close(self) -> OSError | None: ...

def json_line(value: Any) -> bytes | None: ...
def read_input(path: str) -> bytes: ...
def split_file(
    path: str,
    group_by: str,
    event: str | None = None,
    order_by: str | None = None,
    buckets: int = 1,
) -> tuple[int, list[tuple[int, bytes, array[int]]]]: ...
