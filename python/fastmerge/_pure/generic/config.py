"""The generic merge's options and their checks (``src/engine/generic/config.rs``): the policy,
the list merge and ``strict``, checked in the order the Rust binding checks them."""

from __future__ import annotations

from ...errors import invalid_option, requires_delta, wrong_type

POLICIES = ("openjiuwen", "delta", "langchain")
LIST_MERGES = ("concat", "by_index")


class _Config:
    __slots__ = ("delta", "langchain", "by_index", "strict")

    def __init__(self, policy: object, list_merge: object, strict: object) -> None:
        # Types first, then values: the Rust binding checks in the same order.
        if not isinstance(policy, str):
            raise wrong_type("policy", "str", policy)
        if not isinstance(list_merge, str):
            raise wrong_type("list_merge", "str", list_merge)
        if not isinstance(strict, bool):
            raise wrong_type("strict", "bool", strict)
        if policy not in POLICIES:
            raise invalid_option("policy", policy, POLICIES)
        if list_merge not in LIST_MERGES:
            raise invalid_option("list_merge", list_merge, LIST_MERGES)
        self.delta = policy == "delta"
        self.langchain = policy == "langchain"
        # by_index and strict only make sense for JSON deltas; openjiuwen is a drop-in.
        if not self.delta and list_merge != "concat":
            raise requires_delta("list_merge", list_merge)
        if not self.delta and strict:
            raise requires_delta("strict", strict)
        self.by_index = list_merge == "by_index"
        self.strict = strict
