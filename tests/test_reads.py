"""Reading a message's large fields: every read is a fresh copy at every depth (value
semantics), made by the backend's ``copy_tree``, which the Rust backend specialises for exact
dicts and lists (benches/test_bench_reads.py times it). Both backends give the same copy and the
same errors."""

from __future__ import annotations

import gc
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


def _logprobs_stream(n: int) -> bytes:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    lines = []
    for i in range(n):
        token = f"t{i}"
        choice = {"index": 0, "delta": {"content": token}, "logprobs": {"content": [_entry(token)]}}
        lines.append(orjson.dumps({**chunk, "choices": [choice]}))
    finish = {"index": 0, "delta": {}, "finish_reason": "stop"}
    lines.append(orjson.dumps({**chunk, "choices": [finish]}))
    return b"\n".join(lines) + b"\n"


def test_aggregated_logprobs_are_untracked_by_the_gc_and_reads_are_values(
    aggregate_module: ModuleType, backend_name: str
) -> None:
    # The Rust binding builds a message's data untracked where it cannot hold a cycle, so the
    # cyclic GC never walks a long stream's logprobs; the twin's data is plain Python data.
    message = aggregate_module.aggregate(_logprobs_stream(3), "openai-chat")
    data = object.__getattribute__(message, "_d")
    stored = list(_containers(data["logprobs"]))
    assert len(stored) == 2 + 3 * 5  # the dict, "content", per entry 5 containers
    assert sum(map(gc.is_tracked, stored)) == (0 if backend_name == "rust" else 17)
    expected = {"content": [_entry("t0"), _entry("t1"), _entry("t2")]}
    # a read is a fresh copy the GC tracks wherever it holds a container (a cycle a reader
    # makes in it is collected), and changing it never changes the message
    read = message.logprobs
    assert [gc.is_tracked(c) for c in _containers(read["content"][0])] == [True] * 5
    read["content"][0]["top_logprobs"][0]["bytes"].append(read)
    assert orjson.dumps(message.logprobs) == orjson.dumps(expected)
    assert message.content == "t0t1t2"
