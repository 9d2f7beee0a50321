"""Reading a message's large fields: every read is a fresh copy at every depth (value
semantics), made by the backend's ``copy_tree``, which the Rust backend specialises for exact
dicts and lists (benches/test_bench_reads.py times it). Both backends give the same copy and the
same errors."""

from __future__ import annotations

from types import ModuleType
from typing import Any, Iterator

import orjson
import pytest

from fastmerge import MAX_DEPTH, DepthLimitError


def _entry(token: str) -> dict[str, Any]:
    top = [{"token": token, "logprob": -0.5, "bytes": list(token.encode())}]
    return {"token": token, "logprob": -0.5, "bytes": list(token.encode()), "top_logprobs": top}


def _containers(value: Any) -> Iterator[Any]:
    if isinstance(value, (dict, list)):
        yield value
        for item in value.values() if isinstance(value, dict) else value:
            yield from _containers(item)


def test_logprobs_read_is_a_fresh_copy_at_every_depth(messages_module: ModuleType) -> None:
    logprobs = {"content": [_entry("a"), _entry("b")], "refusal": None}
    message = messages_module.AssistantMessage(logprobs=logprobs)
    first, second = message.logprobs, message.logprobs
    assert orjson.dumps(first) == orjson.dumps(logprobs)
    shared = {id(c) for c in _containers(first)} & {id(c) for c in _containers(second)}
    assert shared == set()
    first["content"][1]["top_logprobs"][0]["bytes"].append(0)
    first["content"][0]["top_logprobs"][0]["token"] = "z"
    first["content"].pop()
    assert orjson.dumps(message.logprobs) == orjson.dumps(logprobs)
    assert orjson.dumps(message.to_dict()["logprobs"]) == orjson.dumps(logprobs)


def test_token_ids_read_is_a_fresh_copy(messages_module: ModuleType) -> None:
    message = messages_module.AssistantMessage(completion_token_ids=[1, 2, 3])
    ids = message.completion_token_ids
    ids.append(4)
    assert message.completion_token_ids == [1, 2, 3]
    assert message.completion_token_ids is not message.completion_token_ids


class _Dict(dict[str, Any]):
    pass


class _List(list[Any]):
    def __iter__(self) -> Iterator[Any]:  # what a copy of a list subclass iterates
        return iter(["from __iter__"])


def test_copy_tree_of_exact_containers_holding_subclasses(backend_module: ModuleType) -> None:
    leaf = (1, 2)
    tree = {"d": _Dict(a=[1, {"b": 2.5}]), "l": [_List([1]), leaf, "s", None, True], "n": 3}
    copy = backend_module.copy_tree(tree)
    assert orjson.dumps(copy) == (
        b'{"d":{"a":[1,{"b":2.5}]},"l":[["from __iter__"],[1,2],"s",null,true],"n":3}'
    )
    assert type(copy["d"]) is dict and type(copy["l"][0]) is list
    assert copy["l"][1] is leaf  # leaves are shared
    assert list(copy) == ["d", "l", "n"]


@pytest.mark.parametrize("inner", [dict, list])
def test_copy_tree_depth_limit(backend_module: ModuleType, inner: type) -> None:
    def nest(levels: int) -> Any:
        value: Any = "x"
        for level in range(levels):
            value = {"a": value} if (level % 2 == 0) == (inner is dict) else [value]
        return value

    # orjson stops at 254 levels: compare with ==
    assert backend_module.copy_tree(nest(MAX_DEPTH)) == nest(MAX_DEPTH)
    with pytest.raises(DepthLimitError) as info:
        backend_module.copy_tree(nest(MAX_DEPTH + 1))
    assert str(info.value) == str(DepthLimitError(MAX_DEPTH))
