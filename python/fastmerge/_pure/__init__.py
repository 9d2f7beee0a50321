"""The pure-Python twin of the Rust engine.

It exposes the same names, signatures, results and exceptions as ``fastmerge._fastmerge`` and is
the readable specification of every rule: when the two disagree, one of them has a bug, and the
differential tests say which input shows it.
"""

from __future__ import annotations

from .._version import __version__
from .aggregate import PROVIDERS, AggregatorCore
from .batch import BatchCore, DirectoryWriter, split_file
from .chunks import ChunkCore, copy_tree, fold_chunks, freeze_tree, usage_total
from .generic import (
    ATOMIC_KEYS,
    LIST_MERGES,
    MAX_DEPTH,
    POLICIES,
    add_ai_message_chunks,
    concat_token_ids,
    merge,
    merge_all,
    merge_dicts,
    merge_logprobs,
)

__all__ = [
    "ATOMIC_KEYS",
    "LIST_MERGES",
    "MAX_DEPTH",
    "POLICIES",
    "PROVIDERS",
    "AggregatorCore",
    "BatchCore",
    "ChunkCore",
    "DirectoryWriter",
    "__version__",
    "add_ai_message_chunks",
    "copy_tree",
    "fold_chunks",
    "freeze_tree",
    "concat_token_ids",
    "merge",
    "merge_all",
    "merge_dicts",
    "merge_logprobs",
    "split_file",
    "usage_total",
]
