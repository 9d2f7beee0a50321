"""Stub of the compiled extension ``fastmerge._fastmerge``; checked against it by stubtest.

The names and signatures are those of the pure-Python twin (``fastmerge._pure``): see its
docstrings and ``spec/merge-rules.md`` §1 for the rules.
"""

from typing import Any, Iterable

__all__ = [
    "ATOMIC_KEYS",
    "LIST_MERGES",
    "MAX_DEPTH",
    "POLICIES",
    "__version__",
    "concat_token_ids",
    "merge",
    "merge_all",
    "merge_dicts",
    "merge_logprobs",
]

__version__: str
MAX_DEPTH: int
POLICIES: tuple[str, ...]
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
def concat_token_ids(left: Any, right: Any) -> Any: ...
def merge_logprobs(left: Any, right: Any) -> Any: ...
