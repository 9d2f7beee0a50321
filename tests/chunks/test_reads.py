"""Reading a message's large fields: value semantics. A message's logprobs are read-only
(``FrozenDict`` / ``FrozenList``, built once: every read is the same object); the other fields
and a chunk's logprobs are a fresh copy at every depth, made by the backend's ``copy_tree``,
which the Rust backend specialises for exact dicts and lists. Both backends give the same
values and the same errors."""

from __future__ import annotations

import copy
import gc
import json
import pickle
from types import ModuleType
from typing import Any, Iterator

import orjson
import pytest

from fastmerge import MAX_DEPTH, DepthLimitError
from fastmerge.parts import FrozenDict, FrozenList


def _entry(token: str) -> dict[str, Any]:
    top = [{"token": token, "logprob": -0.5, "bytes": list(token.encode())}]
    return {"token": token, "logprob": -0.5, "bytes": list(token.encode()), "top_logprobs": top}


def _containers(value: Any) -> Iterator[Any]:
    if isinstance(value, (dict, list)):
        yield value
        for item in value.values() if isinstance(value, dict) else value:
            yield from _containers(item)


def _assert_read_only(logprobs: Any) -> None:
    """Every container of a message's logprobs is a FrozenDict / FrozenList: a dict / list
    (equal to the plain data, serialized as it) that raises TypeError on every change."""
    entry = logprobs["content"][0]
    top = entry["top_logprobs"]
    changes = [
        lambda: logprobs.__setitem__("content", []),
        lambda: logprobs.pop("content"),
        lambda: logprobs.update(x=1),
        lambda: logprobs.setdefault("x", 1),
        lambda: logprobs.clear(),
        lambda: logprobs.popitem(),
        lambda: logprobs.__delitem__("content"),
        lambda: logprobs["content"].append(1),
        lambda: logprobs["content"].extend([1]),
        lambda: logprobs["content"].insert(0, 1),
        lambda: logprobs["content"].pop(),
        lambda: logprobs["content"].remove(entry),
        lambda: logprobs["content"].clear(),
        lambda: logprobs["content"].sort(key=id),
        lambda: logprobs["content"].reverse(),
        lambda: logprobs["content"].__setitem__(0, 1),
        lambda: logprobs["content"].__delitem__(0),
        lambda: logprobs["content"].__iadd__([1]),
        lambda: logprobs["content"].__imul__(2),
        lambda: logprobs.__ior__({"x": 1}),
        lambda: entry.__setitem__("token", "z"),
        lambda: top[0]["bytes"].append(0),
    ]
    for change in changes:
        with pytest.raises(TypeError, match="read-only"):
            change()
    for container in _containers(logprobs):
        assert type(container) in (FrozenDict, FrozenList)


def test_logprobs_read_is_read_only_and_the_same_object(messages_module: ModuleType) -> None:
    # A message's logprobs are read-only (FrozenDict / FrozenList): every read is the same
    # object, never a copy, and no reader can change the message.
    logprobs = {"content": [_entry("a"), _entry("b")], "refusal": None}
    message = messages_module.AssistantMessage(logprobs=logprobs)
    first, second = message.logprobs, message.logprobs
    assert first is second
    assert first == logprobs and isinstance(first, dict) and isinstance(first["content"], list)
    assert orjson.dumps(first) == orjson.dumps(logprobs)
    assert json.dumps(first) == json.dumps(logprobs)
    _assert_read_only(first)
    # the caller's data was copied when the message was made: changing it changes nothing
    logprobs["content"][0]["top_logprobs"][0]["bytes"].append(0)
    logprobs["content"].pop()
    assert orjson.dumps(message.logprobs) == orjson.dumps(
        {"content": [_entry("a"), _entry("b")], "refusal": None}
    )
    # copies are plain and free to change; to_dict() is plain too
    plain = {"content": [_entry("a"), _entry("b")], "refusal": None}
    copies = (
        copy.deepcopy(first),
        message.to_dict()["logprobs"],
        pickle.loads(pickle.dumps(first)),
    )
    for copy_ in copies:
        assert [type(c) for c in _containers(copy_)] == [type(c) for c in _containers(plain)]
        assert copy_ == first
        copy_["content"].append(1)
    assert type(copy.copy(first)) is dict and type(copy.copy(first["content"])) is list
    assert message.logprobs == {"content": [_entry("a"), _entry("b")], "refusal": None}
    # a plain list of logprobs (Ollama's shape) and None
    listed = messages_module.AssistantMessage(logprobs=[{"token": "a"}]).logprobs
    assert type(listed) is FrozenList and type(listed[0]) is FrozenDict
    assert messages_module.AssistantMessage().logprobs is None
    # chunks are values in flight: their reads are fresh plain copies
    chunk = messages_module.AssistantMessageChunk(logprobs=logprobs)
    read = chunk.logprobs
    assert type(read) is dict and read is not chunk.logprobs
    read["content"].clear()
    assert chunk.logprobs == logprobs


def test_freeze_tree(backend_module: ModuleType) -> None:
    tree = {"d": _Dict(a=[1, {"b": 2.5}]), "l": [[1], (1, [2]), "s", None, True], "n": 3}
    frozen = backend_module.freeze_tree(tree)
    assert frozen == {"d": {"a": [1, {"b": 2.5}]}, "l": [[1], (1, [2]), "s", None, True], "n": 3}
    assert type(frozen) is FrozenDict and type(frozen["d"]) is FrozenDict
    assert type(frozen["d"]["a"]) is FrozenList and type(frozen["l"][0]) is FrozenList
    assert frozen["l"][1] is tree["l"][1]  # leaves are shared
    assert backend_module.freeze_tree(frozen) is frozen
    assert backend_module.freeze_tree("x") == "x"
    assert list(frozen) == ["d", "l", "n"]


@pytest.mark.parametrize("inner", [dict, list])
def test_freeze_tree_depth_limit(backend_module: ModuleType, inner: type) -> None:
    def nest(levels: int) -> Any:
        value: Any = "x"
        for level in range(levels):
            value = {"a": value} if (level % 2 == 0) == (inner is dict) else [value]
        return value

    assert backend_module.freeze_tree(nest(MAX_DEPTH)) == nest(MAX_DEPTH)
    with pytest.raises(DepthLimitError) as info:
        backend_module.freeze_tree(nest(MAX_DEPTH + 1))
    assert str(info.value) == str(DepthLimitError(MAX_DEPTH))


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
    # the message's logprobs are read-only (built so by the Rust aggregate itself, by the
    # twin at the first read): every read is the same object, and no reader can change it (nor
    # make a cycle in it)
    read = message.logprobs
    assert read is message.logprobs
    assert (read is data["logprobs"]) == (backend_name == "rust")
    _assert_read_only(read)
    assert orjson.dumps(message.logprobs) == orjson.dumps(expected)
    assert message.content == "t0t1t2"
