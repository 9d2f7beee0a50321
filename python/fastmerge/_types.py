"""The option names of the public API as ``Literal`` types, so that mypy rejects a misspelt
option before it runs: ``fastmerge.Policy``, ``ListMerge``, ``Provider``, ``UsageMerge`` and
``SignatureMerge``. At run time the tuples ``fastmerge.POLICIES``, ``LIST_MERGES`` and
``PROVIDERS`` list the same names (tests/docs/test_typing.py checks that they agree).
"""

from __future__ import annotations

from typing import Literal, TypedDict

__all__ = ["ListMerge", "MergeOptions", "Policy", "Provider", "SignatureMerge", "UsageMerge"]

#: ``merge`` / ``merge_all`` ``policy=`` (rules §1): ``"langchain"`` is LangChain's
#: ``merge_content`` / ``merge_dicts`` / ``merge_lists`` (docs/langchain-policy.md).
Policy = Literal["openjiuwen", "delta", "langchain"]
#: ``merge`` / ``merge_all`` ``list_merge=`` (rules §1.2).
ListMerge = Literal["concat", "by_index"]


class MergeOptions(TypedDict, total=False):
    """The keyword options of ``merge`` / ``merge_all``, for code that passes them on
    (``merge(a, b, **options)``); the defaults are ``"openjiuwen"``, ``"concat"``, False
    (``list_merge`` and ``strict`` other than these need ``policy="delta"``)."""

    policy: Policy
    list_merge: ListMerge
    strict: bool


#: A wire format: ``aggregate(provider=)`` (which also takes ``"auto"``) and ``to_provider``.
Provider = Literal[
    "openai-chat", "openai-responses", "anthropic", "gemini", "bedrock-converse", "ollama"
]
#: ``usage=`` of ``fold_chunks`` and the aggregators (rules §5).
UsageMerge = Literal["merge", "sum", "last"]
#: ``signature_merge=`` of ``fold_chunks`` and the aggregators (rules §3).
SignatureMerge = Literal["replace", "concat"]
