"""fastmerge.langchain and ``policy="langchain"`` against LangChain itself (langchain-core 1.x).

- langchain-core's own unit tests of ``merge_dicts``, ``merge_lists``, ``merge_obj``,
  ``merge_content`` (``tests/unit_tests/utils/test_utils.py``, ``test_messages.py``) and of
  ``AIMessageChunk`` addition, their expectations ported to ``merge(policy="langchain")`` and
  ``merge_chunks``; each case is also run through the installed LangChain, which is what
  fastmerge follows where a later LangChain release changed a rule;
- the corpus streams (``tests/corpus/openai_chat``, ``anthropic_messages``) turned into
  ``AIMessageChunk`` objects by langchain-openai's and langchain-anthropic's own conversion
  functions, and by LangChain's ``BaseChatModel.stream`` around them (run ids, the closing
  ``chunk_position="last"`` chunk, ``output_version="v1"`` content blocks):
  ``merge_chunks(chunks)`` equals ``reduce(operator.add, chunks)`` field for field;
- hypothesis: random chunk sequences and random dicts, lists and contents, fastmerge against
  LangChain (the same value, or the same error type and message);
- ``to_langchain`` / ``from_langchain`` and ``SessionChatMessageHistory``.

Every test runs on both backends (conftest), so the engine and the twin are both held to
LangChain.
"""

from __future__ import annotations

import copy
import functools
import json
import operator
import warnings
from pathlib import Path
from typing import Any, Iterator

import pytest
from conftest import canonical
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastmerge

pytest.importorskip("langchain_core")
from langchain_core.messages import (  # noqa: E402
    AIMessage,
    AIMessageChunk,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    merge_content,
)
from langchain_core.messages.tool import tool_call as create_tool_call  # noqa: E402
from langchain_core.messages.tool import tool_call_chunk as create_tool_call_chunk  # noqa: E402
from langchain_core.utils._merge import merge_dicts, merge_lists, merge_obj  # noqa: E402

from fastmerge.errors import MergeConflictError  # noqa: E402
from fastmerge.langchain import (  # noqa: E402
    SessionChatMessageHistory,
    from_langchain,
    merge_chunks,
    to_langchain,
)
from fastmerge.session import Session  # noqa: E402

CORPUS = Path(__file__).resolve().parent / "corpus"
_HYPOTHESIS = {
    "deadline": None,
    "database": None,
    "suppress_health_check": list(HealthCheck),
}


def lc_merge(left: Any, right: Any) -> Any:
    return fastmerge.merge(left, right, policy="langchain")


def outcome(call: Any, *args: Any) -> Any:
    """A call's value, or its error as (TypeError/ValueError, message)."""
    try:
        return ("ok", call(*args))
    except (TypeError, ValueError) as exc:
        kind = "TypeError" if isinstance(exc, TypeError) else "ValueError"
        return ("error", kind, str(exc))


def same_outcome(ours: Any, theirs: Any) -> None:
    """fastmerge raises MergeConflictError (a TypeError and a ValueError) where LangChain
    raises either, with LangChain's message."""
    if theirs[0] == "error":
        assert ours[0] == "error", (ours, theirs)
        assert ours[2] == theirs[2]
    else:
        assert ours == theirs


# ---------------------------------------------------------------------------------------------
# langchain-core utils/test_utils.py: merge_dicts

MERGE_DICTS_CASES = [
    ({"a": None}, {"a": 1}, {"a": 1}),
    ({"a": 1}, {"a": None}, {"a": 1}),
    ({"a": None}, {"a": 0}, {"a": 0}),
    ({"a": None}, {"a": "txt"}, {"a": "txt"}),
    ({"a": 1}, {"a": 1}, {"a": 1}),
    ({"a": 1.5}, {"a": 1.5}, {"a": 1.5}),
    ({"a": True}, {"a": True}, {"a": True}),
    ({"a": False}, {"a": False}, {"a": False}),
    ({"a": "txt"}, {"a": "txt"}, {"a": "txttxt"}),
    ({"a": [1, 2]}, {"a": [1, 2]}, {"a": [1, 2, 1, 2]}),
    ({"a": {"b": "txt"}}, {"a": {"b": "txt"}}, {"a": {"b": "txttxt"}}),
    ({"a": "one"}, {"a": "two"}, {"a": "onetwo"}),
    ({"a": {"b": 1}}, {"a": {"c": 2}}, {"a": {"b": 1, "c": 2}}),
    (
        {"function_call": {"arguments": None}},
        {"function_call": {"arguments": "{\n"}},
        {"function_call": {"arguments": "{\n"}},
    ),
    ({"a": [1, 2]}, {"a": [3]}, {"a": [1, 2, 3]}),
    ({"a": 1, "b": 2}, {"a": 1}, {"a": 1, "b": 2}),
    ({"a": 1, "b": 2}, {"c": None}, {"a": 1, "b": 2, "c": None}),
    (
        {"a": [{"index": 0, "b": "{"}]},
        {"a": [{"index": 0, "b": "f"}]},
        {"a": [{"index": 0, "b": "{f"}]},
    ),
    (
        {"a": [{"idx": 0, "b": "{"}]},
        {"a": [{"idx": 0, "b": "f"}]},
        {"a": [{"idx": 0, "b": "{"}, {"idx": 0, "b": "f"}]},
    ),
    (
        {"name": "search", "args": '{"q": '},
        {"name": "search", "args": '"test"}'},
        # langchain-core 1.8 (installed) concatenates an equal "name"; a later release keeps
        # it once: fastmerge follows the installed LangChain, checked below
        {"name": "searchsearch", "args": '{"q": "test"}'},
    ),
    # more of merge_dicts' own rules (langchain-core 1.8)
    ({"index": "lc_1"}, {"index": "lc_1x"}, {"index": "lc_1"}),
    ({"index": "a"}, {"index": "b"}, {"index": "ab"}),
    ({"id": "x"}, {"id": "x"}, {"id": "x"}),
    ({"id": "x"}, {"id": "y"}, {"id": "xy"}),
    ({"output_version": "v1"}, {"output_version": "v1"}, {"output_version": "v1"}),
    ({"model_provider": "openai"}, {"model_provider": "openai"}, {"model_provider": "openai"}),
    ({"index": 1}, {"index": 2}, {"index": 2}),
    ({"created": 1}, {"created": 2}, {"created": 2}),
    ({"timestamp": 1}, {"timestamp": 2}, {"timestamp": 2}),
    ({"n": 1}, {"n": 2}, {"n": 3}),
    (
        {"a": {"n": 1, "s": "x"}},
        {"a": {"n": 2, "s": "y", "t": None}},
        {"a": {"n": 3, "s": "xy", "t": None}},
    ),
]

_UNSUPPORTED = "Additional kwargs key a already exists in left dict and value has unsupported type"

MERGE_DICTS_ERRORS = [
    (
        {"a": 1},
        {"a": "1"},
        'additional_kwargs["a"] already exists in this message, but with a different type.',
    ),
    (
        {"a": (1, 2)},
        {"a": (3,)},
        f"{_UNSUPPORTED} <class 'tuple'>.",
    ),
    (
        {"a": 1.5},
        {"a": 2.5},
        f"{_UNSUPPORTED} <class 'float'>.",
    ),
    (
        {"a": True},
        {"a": False},
        f"{_UNSUPPORTED} <class 'bool'>.",
    ),
    (
        {"a": True},
        {"a": 1},
        'additional_kwargs["a"] already exists in this message, but with a different type.',
    ),
    (
        {"a": {"b": [1]}},
        {"a": {"b": {"c": 1}}},
        'additional_kwargs["b"] already exists in this message, but with a different type.',
    ),
]


@pytest.mark.parametrize(("left", "right", "expected"), MERGE_DICTS_CASES)
def test_merge_dicts_cases(left: dict[str, Any], right: dict[str, Any], expected: Any) -> None:
    left_copy, right_copy = copy.deepcopy(left), copy.deepcopy(right)
    assert canonical(lc_merge(left, right)) == canonical(expected)
    assert canonical(merge_dicts(left, right)) == canonical(expected)  # LangChain agrees
    assert fastmerge.merge_all([left, right], policy="langchain") == expected
    assert (left, right) == (left_copy, right_copy)


@pytest.mark.parametrize(("left", "right", "message"), MERGE_DICTS_ERRORS)
def test_merge_dicts_errors(left: dict[str, Any], right: dict[str, Any], message: str) -> None:
    with pytest.raises(TypeError) as theirs:
        merge_dicts(left, right)
    assert str(theirs.value) == message
    for call in (
        lambda: lc_merge(left, right),
        lambda: fastmerge.merge_all([left, right], policy="langchain"),
    ):
        with pytest.raises(MergeConflictError) as ours:
            call()
        assert isinstance(ours.value, TypeError) and isinstance(ours.value, fastmerge.MergeError)
        assert str(ours.value) == message


def test_merge_dicts_tool_call_streaming_chunks() -> None:
    first = {"name": "read_file", "id": "call_123", "type": "function", "args": '{"path":'}
    second = {"name": "read_file", "id": "call_123", "type": "function", "args": ' "config.yaml"}'}
    ours = lc_merge(first, second)
    assert ours == merge_dicts(first, second)
    assert ours["id"] == "call_123"
    assert ours["args"] == '{"path": "config.yaml"}'


# ---------------------------------------------------------------------------------------------
# merge_lists, merge_obj, merge_content

MERGE_LISTS_CASES = [
    (None, None, None),
    (None, [1, 2], [1, 2]),
    ([1, 2], None, [1, 2]),
    ([1, 2], [3, 4], [1, 2, 3, 4]),
    ([], [], []),
    ([], [1], [1]),
    ([1], [], [1]),
    (
        [{"index": 0, "text": "hello"}],
        [{"index": 0, "text": " world"}],
        [{"index": 0, "text": "hello world"}],
    ),
    (
        [{"index": 0, "a": "x"}],
        [{"index": 1, "b": "y"}],
        [{"index": 0, "a": "x"}, {"index": 1, "b": "y"}],
    ),
    ([{"no_index": "a"}], [{"no_index": "b"}], [{"no_index": "a"}, {"no_index": "b"}]),
    # the right element's "type" is left out of the merge; ids that differ do not merge
    (
        [{"index": 0, "type": "a", "t": "x"}],
        [{"index": 0, "type": "b", "t": "y"}],
        [{"index": 0, "type": "a", "t": "xy"}],
    ),
    (
        [{"index": 0, "id": "1"}],
        [{"index": 0, "id": "2"}],
        [{"index": 0, "id": "1"}, {"index": 0, "id": "2"}],
    ),
    ([{"index": 0, "id": ""}], [{"index": 0, "id": "2"}], [{"index": 0, "id": "2"}]),
    ([{"index": "lc_x", "t": "a"}], [{"index": "lc_x", "t": "b"}], [{"index": "lc_x", "t": "ab"}]),
    (
        [{"index": "x", "t": "a"}],
        [{"index": "x", "t": "b"}],
        [{"index": "x", "t": "a"}, {"index": "x", "t": "b"}],
    ),
    # non_standard blocks: into a typed block as extras, into a non_standard one as value
    (
        [{"index": 0, "type": "text", "text": "a"}],
        [{"index": 0, "type": "non_standard", "value": {"type": "x", "k": 1}}],
        [{"index": 0, "type": "text", "text": "a", "extras": {"k": 1}}],
    ),
    (
        [{"index": 0, "type": "non_standard", "value": {"k": "a"}}],
        [{"index": 0, "type": "non_standard", "value": {"type": "x", "k": "b"}}],
        [{"index": 0, "type": "non_standard", "value": {"k": "ab"}}],
    ),
]


@pytest.mark.parametrize(("left", "right", "expected"), MERGE_LISTS_CASES)
def test_merge_lists_cases(left: Any, right: Any, expected: Any) -> None:
    left_copy, right_copy = copy.deepcopy(left), copy.deepcopy(right)
    assert merge_lists(left, right) == expected
    assert lc_merge(left, right) == expected
    assert (left, right) == (left_copy, right_copy)


def test_merge_lists_multiple_others() -> None:
    assert fastmerge.merge_all([[1], [2], [3]], policy="langchain") == [1, 2, 3]
    assert fastmerge.merge_all([None, None, None], policy="langchain") is None


def test_merge_tool_calls() -> None:
    first = create_tool_call_chunk(name="tool1", args="", id="1", index=0)
    second = create_tool_call_chunk(name=None, args='{"arg1": "val', id=None, index=0)
    third = create_tool_call_chunk(name=None, args='ue}"', id=None, index=0)
    merged = lc_merge([first], [second])
    assert merged == [
        {"name": "tool1", "args": '{"arg1": "val', "id": "1", "index": 0, "type": "tool_call_chunk"}
    ]
    merged = lc_merge(merged, [third])
    assert merged == [
        {
            "name": "tool1",
            "args": '{"arg1": "value}"',
            "id": "1",
            "index": 0,
            "type": "tool_call_chunk",
        }
    ]
    for left, right in [
        (("tool1", '{"arg1": "value1"}', "1", None), ("tool2", '{"arg2": "value2"}', "1", None)),
        (("tool1", '{"arg1": "value1"}', None, None), ("tool1", '{"arg2": "value2"}', None, None)),
        (("tool1", '{"arg1": "value1"}', "1", 0), ("tool2", '{"arg2": "value2"}', None, 1)),
    ]:
        a = create_tool_call_chunk(name=left[0], args=left[1], id=left[2], index=left[3])
        b = create_tool_call_chunk(name=right[0], args=right[1], id=right[2], index=right[3])
        assert len(lc_merge([a], [b])) == 2


MERGE_OBJ_CASES = [
    (None, None, None),
    (None, "hello", "hello"),
    ("hello", None, "hello"),
    ("hello", " world", "hello world"),
    ({"a": 1}, {"b": 2}, {"a": 1, "b": 2}),
    ([1, 2], [3], [1, 2, 3]),
    (42, 42, 42),
    (3.14, 3.14, 3.14),
    (True, True, True),
]


@pytest.mark.parametrize(("left", "right", "expected"), MERGE_OBJ_CASES)
def test_merge_obj_cases(left: Any, right: Any, expected: Any) -> None:
    assert merge_obj(left, right) == expected
    assert lc_merge(left, right) == expected


@pytest.mark.parametrize(
    ("left", "right", "kind"),
    [
        ("string", 123, TypeError),
        (1, 2, ValueError),
        ((1, 2), (3, 4), ValueError),
        (1, 1.0, TypeError),
    ],
)
def test_merge_obj_errors(left: Any, right: Any, kind: type) -> None:
    with pytest.raises(kind) as theirs:
        merge_obj(left, right)
    with pytest.raises(MergeConflictError) as ours:
        lc_merge(left, right)
    assert isinstance(ours.value, kind)
    assert str(ours.value) == str(theirs.value)


MERGE_CONTENT_CASES = [
    ("", [""], ""),
    ("", [[]], [""]),
    ([], [""], []),
    ([], [[]], []),
    ("foo", [""], "foo"),
    ("foo", [[]], ["foo"]),
    (["foo"], [""], ["foo"]),
    (["foo"], [[]], ["foo"]),
    ("foo", ["bar"], "foobar"),
    ("foo", [["bar"]], ["foo", "bar"]),
    (["foo"], ["bar"], ["foobar"]),
    (["foo"], [["bar"]], ["foo", "bar"]),
    (
        [{"text": "foo"}],
        [[{"index": 0, "text": "bar"}]],
        [{"text": "foo"}, {"index": 0, "text": "bar"}],
    ),
    # LangChain drops a str added to an empty list (its merge_content has no branch for it)
    ([], ["lost"], []),
    ([{"index": 0, "text": "I am"}], [" indeed."], [{"index": 0, "text": "I am"}, " indeed."]),
    (
        "a",
        [[{"index": 0, "t": "x"}], [{"index": 0, "t": "y"}], "b"],
        ["a", {"index": 0, "t": "xy"}, "b"],
    ),
]


@pytest.mark.parametrize(("first", "others", "expected"), MERGE_CONTENT_CASES)
def test_merge_content_cases(first: Any, others: list[Any], expected: Any) -> None:
    assert merge_content(first, *others) == expected
    assert fastmerge.merge_all([first, *others], policy="langchain") == expected
    assert functools.reduce(lc_merge, others, first) == expected


def test_policy_options() -> None:
    assert "langchain" in fastmerge.POLICIES
    with pytest.raises(ValueError, match="requires policy='delta'"):
        fastmerge.merge({}, {}, policy="langchain", list_merge="by_index")
    with pytest.raises(ValueError, match="requires policy='delta'"):
        fastmerge.merge({}, {}, policy="langchain", strict=True)
    assert fastmerge.merge_all([], policy="langchain") is None


def test_no_alias_no_mutation() -> None:
    inner = {"t": "x"}
    left = {"a": [inner], "d": {"s": "p"}}
    right = {"a": [{"index": 0, "t": "y"}], "d": {"s": "q"}}
    snapshot = copy.deepcopy((left, right))
    out = fastmerge.merge_all([left, right, right], policy="langchain")
    assert out == {"a": [{"t": "x"}, {"index": 0, "t": "yy"}], "d": {"s": "pqq"}}
    assert (left, right) == snapshot
    assert out["d"] is not left["d"]


def test_depth_and_cycle_limits() -> None:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(fastmerge.MAX_DEPTH + 5):
        node["a"] = {}
        node = node["a"]
    with pytest.raises(fastmerge.DepthLimitError):
        lc_merge(deep, deep)
    loop: dict[str, Any] = {}
    loop["a"] = loop
    with pytest.raises(fastmerge.CycleError):
        lc_merge({"a": {"a": {}}}, loop)


# ---------------------------------------------------------------------------------------------
# langchain-core test_messages.py: AIMessageChunk addition


def reduce_add(chunks: list[AIMessageChunk]) -> Any:
    return functools.reduce(operator.add, chunks)


def assert_same_chunk(ours: AIMessageChunk, theirs: AIMessageChunk) -> None:
    assert type(ours) is type(theirs)
    assert ours == theirs
    assert ours.model_dump() == theirs.model_dump()


def test_message_chunks() -> None:
    cases = [
        (
            [AIMessageChunk(content="I am", id="ai3"), AIMessageChunk(content=" indeed.")],
            AIMessageChunk(content="I am indeed.", id="ai3"),
        ),
        (
            [
                AIMessageChunk(content="", additional_kwargs={"foo": "bar"}),
                AIMessageChunk(content="", additional_kwargs={"baz": "foo"}),
            ],
            AIMessageChunk(content="", additional_kwargs={"foo": "bar", "baz": "foo"}),
        ),
        (
            [
                AIMessageChunk(
                    content="", additional_kwargs={"function_call": {"name": "web_search"}}
                ),
                AIMessageChunk(
                    content="", additional_kwargs={"function_call": {"arguments": None}}
                ),
                AIMessageChunk(
                    content="", additional_kwargs={"function_call": {"arguments": "{\n"}}
                ),
                AIMessageChunk(
                    content="",
                    additional_kwargs={"function_call": {"arguments": '  "query": "turtles"\n}'}},
                ),
            ],
            AIMessageChunk(
                content="",
                additional_kwargs={
                    "function_call": {
                        "name": "web_search",
                        "arguments": '{\n  "query": "turtles"\n}',
                    }
                },
            ),
        ),
        (
            [
                AIMessageChunk(
                    content="",
                    tool_call_chunks=[
                        create_tool_call_chunk(name="tool1", args="", id="1", index=0)
                    ],
                ),
                AIMessageChunk(
                    content="",
                    tool_call_chunks=[
                        create_tool_call_chunk(name=None, args='{"arg1": "val', id=None, index=0)
                    ],
                ),
                AIMessageChunk(
                    content="",
                    tool_call_chunks=[
                        create_tool_call_chunk(name=None, args='ue}"', id=None, index=0)
                    ],
                ),
            ],
            AIMessageChunk(
                content="",
                tool_call_chunks=[
                    create_tool_call_chunk(name="tool1", args='{"arg1": "value}"', id="1", index=0)
                ],
            ),
        ),
        (
            [
                AIMessageChunk(
                    content="",
                    tool_call_chunks=[
                        create_tool_call_chunk(name="tool1", args="", id="1", index=0)
                    ],
                ),
                AIMessageChunk(
                    content="",
                    tool_call_chunks=[
                        create_tool_call_chunk(name="tool1", args="a", id=None, index=1)
                    ],
                ),
            ],
            AIMessageChunk(
                content="",
                tool_call_chunks=[
                    create_tool_call_chunk(name="tool1", args="", id="1", index=0),
                    create_tool_call_chunk(name="tool1", args="a", id=None, index=1),
                ],
            ),
        ),
        (
            [
                AIMessageChunk(
                    content="",
                    usage_metadata={"input_tokens": 1, "output_tokens": 2, "total_tokens": 3},
                ),
                AIMessageChunk(
                    content="",
                    usage_metadata={"input_tokens": 4, "output_tokens": 5, "total_tokens": 9},
                ),
            ],
            AIMessageChunk(
                content="",
                usage_metadata={"input_tokens": 5, "output_tokens": 7, "total_tokens": 12},
            ),
        ),
    ]
    for chunks, expected in cases:
        assert reduce_add(chunks) == expected
        assert_same_chunk(merge_chunks(chunks), reduce_add(chunks))
        assert merge_chunks(chunks) == expected
    tool_chunk = AIMessageChunk(
        content="",
        tool_call_chunks=[create_tool_call_chunk(name="tool1", args="a", id=None, index=1)],
    )
    assert merge_chunks([AIMessageChunk(content=""), tool_chunk]) == tool_chunk
    assert merge_chunks([tool_chunk, AIMessageChunk(content="")]) == tool_chunk
    merged = merge_chunks(
        [
            AIMessageChunk(
                content="",
                tool_call_chunks=[create_tool_call_chunk(name="tool1", args="", id="1", index=0)],
            ),
            AIMessageChunk(content=""),
        ]
    )
    assert merged.tool_calls == [create_tool_call(name="tool1", args={}, id="1")]


def test_chunk_id_precedence() -> None:
    default_id, meaningful_id = "lc_run--abc123", "msg_def456"
    null_id = AIMessageChunk(content="", id=None)
    run_id = AIMessageChunk(content="", id=default_id)
    provider_id = AIMessageChunk(content="", id=meaningful_id)
    auto_id = AIMessageChunk(content="", id="lc_abc")
    assert merge_chunks([null_id, run_id]).id == default_id
    assert merge_chunks([null_id, provider_id]).id == meaningful_id
    assert merge_chunks([run_id, provider_id]).id == meaningful_id
    assert merge_chunks([auto_id, run_id, auto_id]).id == default_id
    assert (
        merge_chunks([provider_id, run_id, AIMessageChunk(content="", id="other")]).id
        == meaningful_id
    )
    assert merge_chunks([auto_id, AIMessageChunk(content="", id="lc_second")]).id == "lc_abc"


def test_complex_ai_message_chunks() -> None:
    cases = [
        (
            [AIMessageChunk(content=["I am"], id="ai4"), AIMessageChunk(content=[" indeed."])],
            AIMessageChunk(id="ai4", content=["I am", " indeed."]),
        ),
        (
            [
                AIMessageChunk(content=[{"index": 0, "text": "I am"}]),
                AIMessageChunk(content=" indeed."),
            ],
            AIMessageChunk(content=[{"index": 0, "text": "I am"}, " indeed."]),
        ),
        (
            [
                AIMessageChunk(content=[{"index": 0, "text": "I am"}]),
                AIMessageChunk(content=[{"index": 0, "text": " indeed."}]),
            ],
            AIMessageChunk(content=[{"index": 0, "text": "I am indeed."}]),
        ),
        (
            [
                AIMessageChunk(content=[{"index": 0, "text": "I am"}]),
                AIMessageChunk(content=[{"text": " indeed."}]),
            ],
            AIMessageChunk(content=[{"index": 0, "text": "I am"}, {"text": " indeed."}]),
        ),
        (
            [
                AIMessageChunk(content=[{"index": 0, "text": "I am"}]),
                AIMessageChunk(content=[{"index": 2, "text": " indeed."}]),
            ],
            AIMessageChunk(
                content=[{"index": 0, "text": "I am"}, {"index": 2, "text": " indeed."}]
            ),
        ),
        (
            [
                AIMessageChunk(content=[{"index": 0, "text": "I am", "type": "text_block"}]),
                AIMessageChunk(
                    content=[{"index": 0, "text": " indeed.", "type": "text_block_delta"}]
                ),
            ],
            AIMessageChunk(content=[{"index": 0, "text": "I am indeed.", "type": "text_block"}]),
        ),
        (
            [
                AIMessageChunk(content=[{"index": 0, "text": "I am", "type": "text_block"}]),
                AIMessageChunk(content="", response_metadata={"extra": "value"}),
            ],
            AIMessageChunk(
                content=[{"index": 0, "text": "I am", "type": "text_block"}],
                response_metadata={"extra": "value"},
            ),
        ),
        (
            [AIMessageChunk(content="I am"), AIMessageChunk(content=" indeed.")],
            AIMessageChunk(content="I am indeed."),
        ),
    ]
    for chunks, expected in cases:
        assert reduce_add(chunks) == expected
        assert_same_chunk(merge_chunks(chunks), reduce_add(chunks))


def test_tool_calls_merge() -> None:
    def call(index: int, call_id: str | None, arguments: str, name: str | None) -> dict[str, Any]:
        return {
            "content": "",
            "additional_kwargs": {
                "tool_calls": [
                    {
                        "index": index,
                        "id": call_id,
                        "function": {"arguments": arguments, "name": name},
                        "type": "function" if call_id else None,
                    }
                ]
            },
        }

    rows = [
        {"content": ""},
        call(0, "call_CwGAsESnXehQEjiAIWzinlva", "", "person"),
        *(
            call(0, None, piece, None)
            for piece in ['{"na', 'me": ', '"jane"', ', "a', 'ge": ', "2}"]
        ),
        call(1, "call_zXSIylHvc5x3JUAPcHZR5GZI", "", "person"),
        *(
            call(1, None, piece, None)
            for piece in ['{"na', 'me": ', '"bob",', ' "ag', 'e": 3', "}"]
        ),
        {"content": ""},
    ]
    chunks = [AIMessageChunk(**row) for row in rows]
    merged = merge_chunks(chunks)
    assert_same_chunk(merged, reduce_add(chunks))
    assert merged.additional_kwargs["tool_calls"] == [
        {
            "index": 0,
            "id": "call_CwGAsESnXehQEjiAIWzinlva",
            "function": {"arguments": '{"name": "jane", "age": 2}', "name": "person"},
            "type": "function",
        },
        {
            "index": 1,
            "id": "call_zXSIylHvc5x3JUAPcHZR5GZI",
            "function": {"arguments": '{"name": "bob", "age": 3}', "name": "person"},
            "type": "function",
        },
    ]


def test_merge_chunks_edges() -> None:
    with pytest.raises(TypeError, match="empty"):
        merge_chunks([])
    single = AIMessageChunk(content="x")
    assert merge_chunks([single]) is single
    with pytest.raises(TypeError, match="AIMessageChunk"):
        merge_chunks([single, HumanMessage(content="y")])  # type: ignore[list-item]

    class MyChunk(AIMessageChunk):
        pass

    merged = merge_chunks([MyChunk(content="a"), AIMessageChunk(content="b")])
    assert type(merged) is MyChunk and merged.content == "ab"
    # the same error as LangChain's reduce, at the same chunk
    bad = [
        AIMessageChunk(content="", additional_kwargs={"a": 1}),
        AIMessageChunk(content="", additional_kwargs={"a": "x"}),
    ]
    with pytest.raises(TypeError) as theirs:
        reduce_add(bad)
    with pytest.raises(MergeConflictError) as ours:
        merge_chunks(bad)
    assert str(ours.value) == str(theirs.value)
    usage_bad = [
        AIMessageChunk(
            content="",
            usage_metadata={
                "input_tokens": 1,
                "output_tokens": 0,
                "total_tokens": 1,
                "input_token_details": {"cache_read": 1},
            },
        ),  # type: ignore[typeddict-item]
        AIMessageChunk(
            content="",
            usage_metadata={"input_tokens": 1, "output_tokens": 0, "total_tokens": 1, "extra": "x"},
        ),  # type: ignore[typeddict-unknown-key]
    ]
    assert outcome(merge_chunks, usage_bad)[2] == outcome(reduce_add, usage_bad)[2]


def test_inputs_unchanged() -> None:
    chunks = [
        AIMessageChunk(
            content=[{"index": 0, "type": "text", "text": "a"}],
            additional_kwargs={"k": {"s": "x"}},
            usage_metadata={"input_tokens": 1, "output_tokens": 1, "total_tokens": 2},
        ),
        AIMessageChunk(
            content=[{"index": 0, "type": "text", "text": "b"}],
            additional_kwargs={"k": {"s": "y"}},
            usage_metadata={"input_tokens": 1, "output_tokens": 1, "total_tokens": 2},
        ),
    ]
    before = [c.model_dump() for c in chunks]
    merged = merge_chunks(chunks)
    assert merged.content == [{"index": 0, "type": "text", "text": "ab"}]
    assert [c.model_dump() for c in chunks] == before


# ---------------------------------------------------------------------------------------------
# The corpus streams through LangChain's integrations


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            yield json.loads(line)


def openai_generation_chunks(path: Path, model: Any) -> Iterator[Any]:
    """langchain-openai's own conversion of each recorded chunk (``ChatOpenAI._stream``)."""
    for event in _lines(path):
        generation = model._convert_chunk_to_generation_chunk(event, AIMessageChunk, {})
        if generation is not None:
            yield generation


def anthropic_generation_chunks(path: Path, model: Any, coerce: bool) -> Iterator[Any]:
    """langchain-anthropic's own conversion of each recorded event (``ChatAnthropic._stream``);
    an event the installed SDK's types cannot read is left out, as its stream would be."""
    import pydantic
    from anthropic.types import RawMessageStreamEvent
    from langchain_core.outputs import ChatGenerationChunk

    adapter: Any = pydantic.TypeAdapter(RawMessageStreamEvent)
    start = None
    for raw in _lines(path):
        try:
            event = adapter.validate_python(raw)
            message, start = model._make_message_chunk_from_anthropic_event(
                event, stream_usage=True, coerce_content_to_string=coerce, block_start_event=start
            )
        except (pydantic.ValidationError, AttributeError):
            continue
        if message is not None:
            yield ChatGenerationChunk(message=message)


def _several_choices(kind: str, path: Path) -> bool:
    return kind == "openai_chat" and any(
        c.get("index", 0) != 0 for e in _lines(path) for c in e.get("choices") or []
    )


def _text_only(path: Path) -> bool:
    return all(
        e.get("content_block", {}).get("type") == "text"
        for e in _lines(path)
        if e.get("type") == "content_block_start"
    )


def _openai_model(output_version: str | None = None) -> Any:
    from langchain_openai import ChatOpenAI

    extra = {"output_version": output_version} if output_version else {}
    return ChatOpenAI(model="gpt-4o", api_key="sk-test", **extra)


def _anthropic_model() -> Any:
    from langchain_anthropic import ChatAnthropic

    return ChatAnthropic(model="claude-sonnet-4-5", api_key="sk-test")


def raw_chunks(kind: str, path: Path, variant: str) -> list[AIMessageChunk]:
    """The integration's chunks as ``_stream`` yields them."""
    if kind == "openai_chat":
        gens = openai_generation_chunks(path, _openai_model())
    else:
        gens = anthropic_generation_chunks(path, _anthropic_model(), coerce=variant == "coerced")
    return [g.message for g in gens]


def streamed_chunks(kind: str, path: Path, variant: str) -> list[AIMessageChunk]:
    """The chunks ``model.stream(...)`` yields: LangChain's ``BaseChatModel.stream`` around the
    integration's ``_stream`` (run ids, response metadata, v1 blocks, the closing chunk)."""
    if kind == "openai_chat":
        model = _openai_model("v1" if variant == "v1" else None)

        def stream(*args: Any, **kwargs: Any) -> Iterator[Any]:
            return openai_generation_chunks(path, model)
    else:
        model = _anthropic_model()

        def stream(*args: Any, **kwargs: Any) -> Iterator[Any]:
            return anthropic_generation_chunks(path, model, coerce=False)

    object.__setattr__(model, "_stream", stream)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return list(model.stream("hi"))


STREAMS = [
    (kind, path)
    for kind in ("openai_chat", "anthropic_messages")
    for path in sorted((CORPUS / kind).glob("*.jsonl"))
]


@pytest.mark.parametrize(("kind", "path"), STREAMS, ids=[f"{k}/{p.stem}" for k, p in STREAMS])
def test_corpus_streams_through_langchain(kind: str, path: Path) -> None:
    pytest.importorskip("langchain_openai" if kind == "openai_chat" else "langchain_anthropic")
    variants = ["plain"]
    if kind == "anthropic_messages" and _text_only(path):
        variants.append("coerced")  # ChatAnthropic's str content, when no tool or thinking
    runs = [raw_chunks(kind, path, v) for v in variants]
    runs += [streamed_chunks(kind, path, "plain")]
    if kind == "openai_chat":
        runs.append(streamed_chunks(kind, path, "v1"))
    compared = 0
    for chunks in runs:
        if len(chunks) < 2:
            continue
        before = [c.model_dump() for c in chunks]
        theirs = outcome(reduce_add, [c.model_copy(deep=True) for c in chunks])
        ours = outcome(merge_chunks, chunks)
        same_outcome(ours, theirs)
        if theirs[0] == "ok":
            assert_same_chunk(ours[1], theirs[1])
            assert ours[1].tool_calls == theirs[1].tool_calls
            assert ours[1].content_blocks == theirs[1].content_blocks
        assert [c.model_dump() for c in chunks] == before
        compared += 1
    assert compared >= 1


# ---------------------------------------------------------------------------------------------
# Hypothesis: random chunks against LangChain

_text = st.text(alphabet='ab{}":lc_ ', max_size=4)
_key = st.sampled_from(["a", "b", "id", "index", "type", "created", "output_version", "n"])
_scalar = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 3), st.sampled_from([0.5, 1.5]), _text
)
_value = st.recursive(
    _scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(_key, inner, max_size=3),
        st.lists(
            st.fixed_dictionaries(
                {"index": st.one_of(st.integers(0, 2), st.sampled_from(["lc_a", "lc_b", "x"]))},
                optional={
                    "id": st.sampled_from([None, "", "i1", "i2"]),
                    "type": st.sampled_from(["text", "non_standard", "t"]),
                    "t": _text,
                    "value": st.dictionaries(_key, _text, max_size=2),
                },
            ),
            max_size=3,
        ),
    ),
    max_leaves=8,
)
_dicts = st.dictionaries(_key, _value, max_size=4)
_block = st.one_of(
    _text,
    st.fixed_dictionaries(
        {"index": st.integers(0, 2)},
        optional={
            "type": st.sampled_from(["text", "thinking", "tool_use"]),
            "text": _text,
            "id": st.sampled_from([None, "", "a"]),
        },
    ),
    st.fixed_dictionaries({"text": _text}),
)
_content = st.one_of(_text, st.lists(_block, max_size=3))
_usage = st.one_of(
    st.none(),
    st.builds(
        lambda i, o, d: {"input_tokens": i, "output_tokens": o, "total_tokens": i + o, **d},
        st.integers(0, 5),
        st.integers(0, 5),
        st.one_of(
            st.just({}),
            st.fixed_dictionaries(
                {
                    "input_token_details": st.fixed_dictionaries(
                        {}, optional={"cache_read": st.integers(0, 3), "audio": st.integers(0, 3)}
                    )
                }
            ),
        ),
    ),
)
_tool_call_chunks = st.lists(
    st.builds(
        create_tool_call_chunk,
        name=st.sampled_from([None, "f", "g"]),
        args=st.sampled_from([None, "", '{"a"', ": 1}", "{}"]),
        id=st.sampled_from([None, "", "c1", "c2"]),
        index=st.sampled_from([None, 0, 1]),
    ),
    max_size=2,
)
_chunk = st.builds(
    AIMessageChunk,
    content=_content,
    additional_kwargs=_dicts,
    response_metadata=_dicts,
    tool_call_chunks=_tool_call_chunks,
    usage_metadata=_usage,
    id=st.sampled_from([None, "", "lc_run--r1", "lc_x", "msg_1", "msg_2"]),
    chunk_position=st.sampled_from([None, None, None, "last"]),
)


@settings(max_examples=150, **_HYPOTHESIS)
@given(st.lists(_chunk, min_size=2, max_size=6))
def test_random_chunks_against_langchain(chunks: list[AIMessageChunk]) -> None:
    theirs = outcome(reduce_add, [c.model_copy(deep=True) for c in chunks])
    ours = outcome(merge_chunks, chunks)
    same_outcome(ours, theirs)
    if theirs[0] == "ok":
        assert_same_chunk(ours[1], theirs[1])


@settings(max_examples=300, **_HYPOTHESIS)
@given(st.lists(_dicts, min_size=2, max_size=5))
def test_random_dicts_against_merge_dicts(items: list[dict[str, Any]]) -> None:
    snapshot = copy.deepcopy(items)
    theirs = outcome(lambda: functools.reduce(merge_dicts, copy.deepcopy(items)))
    ours = outcome(lambda: fastmerge.merge_all(items, policy="langchain"))
    same_outcome(ours, theirs)
    if theirs[0] == "ok":
        assert canonical(ours[1]) == canonical(theirs[1])
        assert canonical(functools.reduce(lc_merge, items)) == canonical(theirs[1])
    assert items == snapshot


@settings(max_examples=200, **_HYPOTHESIS)
@given(st.lists(_content, min_size=1, max_size=5))
def test_random_contents_against_merge_content(contents: list[Any]) -> None:
    theirs = outcome(lambda: merge_content(*copy.deepcopy(contents)))
    ours = outcome(lambda: fastmerge.merge_all(contents, policy="langchain"))
    same_outcome(ours, theirs)
    if theirs[0] == "ok":
        assert canonical(ours[1]) == canonical(theirs[1])


@pytest.mark.differential
@settings(max_examples=150, **_HYPOTHESIS)
@given(st.lists(_chunk, min_size=1, max_size=5))
def test_backends_byte_identical(both: Any, chunks: list[AIMessageChunk]) -> None:
    rust, python = both
    items = [
        {
            field: getattr(c, field)
            for field in (
                "content",
                "additional_kwargs",
                "response_metadata",
                "tool_call_chunks",
                "usage_metadata",
                "id",
                "chunk_position",
            )
        }
        for c in chunks
    ]
    results = []
    for module in (rust, python):
        try:
            results.append(("ok", canonical(module.add_ai_message_chunks(items))))
        except Exception as exc:  # noqa: BLE001 - the class and message are compared
            results.append(("error", type(exc).__name__, str(exc)))
    assert results[0] == results[1]


# ---------------------------------------------------------------------------------------------
# to_langchain / from_langchain


def _aggregate(kind: str, path: Path) -> Any:
    provider = "openai-chat" if kind == "openai_chat" else "anthropic"
    result = fastmerge.aggregate(path.read_bytes(), provider)
    return result[0] if isinstance(result, list) else result


@pytest.mark.parametrize(("kind", "path"), STREAMS, ids=[f"{k}/{p.stem}" for k, p in STREAMS])
def test_to_langchain_matches_langchain_stream(kind: str, path: Path) -> None:
    """The AIMessage for a stream's fastmerge message says what LangChain's own merge of the
    same stream says: text, tool calls (names, ids, parsed arguments), token counts."""
    pytest.importorskip("langchain_openai" if kind == "openai_chat" else "langchain_anthropic")
    message = _aggregate(kind, path)
    ai = to_langchain(message)
    assert isinstance(ai, AIMessage)
    chunks = raw_chunks(kind, path, "plain")
    if len(chunks) < 2 or _several_choices(kind, path):
        return  # LangChain reads choices[0] of every chunk, whichever choice it is
    try:
        theirs = reduce_add(chunks)
    except (TypeError, ValueError):
        return
    if kind == "openai_chat" and len({c.get("index") for c in theirs.tool_call_chunks}) == len(
        theirs.tool_call_chunks
    ):
        assert [(c["name"], c["args"]) for c in ai.tool_calls] == [
            (c["name"], c["args"]) for c in theirs.tool_calls
        ]
    if kind == "openai_chat":
        assert ai.text == theirs.text
    # a server that reports usage on every chunk (vLLM's continuous usage) is added up by
    # LangChain, which counts it many times over; fastmerge's usage rule does not
    reports = sum(1 for c in chunks if c.usage_metadata)
    if reports == 1 and ai.usage_metadata and kind == "openai_chat":
        assert ai.usage_metadata["input_tokens"] == theirs.usage_metadata["input_tokens"]
        assert ai.usage_metadata["output_tokens"] == theirs.usage_metadata["output_tokens"]
    if message.reasoning_content and kind == "openai_chat":
        assert ai.additional_kwargs["reasoning_content"] == message.reasoning_content
    # back to fastmerge: the very message
    back = from_langchain(ai)
    assert back == message
    assert back.to_dict() == message.to_dict()


def test_to_langchain_anthropic_thinking_and_tools() -> None:
    path = CORPUS / "anthropic_messages" / "sonnet45-thinking-signature-text-short.jsonl"
    message = _aggregate("anthropic_messages", path)
    ai = to_langchain(message)
    thinking = [b for b in ai.content if isinstance(b, dict) and b.get("type") == "thinking"]
    assert thinking and thinking[0]["signature"] == message.parts[0].payload.data
    assert ai.response_metadata["model_provider"] == "anthropic"
    assert ai.response_metadata["finish_reason"] == "end_turn"
    assert ai.usage_metadata == {
        "input_tokens": 69,
        "output_tokens": 53,
        "total_tokens": 122,
        "input_token_details": {"cache_read": 0, "cache_creation": 0},
    }
    assert ai.id == message.response_id
    # a LangChain message of that shape, without fastmerge's copy, maps back part for part
    bare = AIMessage(
        content=ai.content,
        usage_metadata=ai.usage_metadata,
        response_metadata=ai.response_metadata,
        id=ai.id,
    )
    back = from_langchain(bare)
    assert [p.PART for p in back.parts] == ["reasoning", "text"]
    assert back.parts[0].payload.data == message.parts[0].payload.data
    assert back.content == message.content
    assert to_langchain(back) == bare


def test_from_langchain_edited_message_is_read_anew() -> None:
    message = _aggregate("openai_chat", CORPUS / "openai_chat" / "gpt4o-parallel-tool-calls.jsonl")
    ai = to_langchain(message)
    assert [c["name"] for c in ai.tool_calls] == ["GetWeatherArgs", "get_stock_price"]
    assert ai.tool_calls[0]["args"] == {"city": "Edinburgh", "country": "GB", "units": "c"}
    edited = ai.model_copy(update={"content": "changed"})
    back = from_langchain(edited)
    assert back.content == "changed"
    assert [c.name for c in back.tool_calls] == ["GetWeatherArgs", "get_stock_price"]


def test_round_trip_of_langchain_messages() -> None:
    messages = [
        SystemMessage(content="Answer briefly.", name="sys"),
        HumanMessage(content="Weather in Paris?", id="h1", additional_kwargs={"k": "v"}),
        AIMessage(
            content=[
                {"type": "thinking", "thinking": "call the tool", "signature": "sig"},
                {"type": "text", "text": "Checking."},
            ],
            tool_calls=[create_tool_call(name="get_weather", args={"city": "Paris"}, id="toolu_1")],
            usage_metadata={"input_tokens": 3, "output_tokens": 4, "total_tokens": 7},
            response_metadata={"finish_reason": "tool_use", "model_name": "m"},
            id="msg_1",
        ),
        ToolMessage(content='{"temp_c": 18}', tool_call_id="toolu_1", artifact={"raw": 18}),
        AIMessage(content="It is 18 °C.", additional_kwargs={"reasoning_content": "easy"}),
    ]
    for message in messages:
        assert to_langchain(from_langchain(message)) == message
    converted = from_langchain(messages[2])
    assert converted.tool_calls[0].name == "get_weather"
    assert json.loads(converted.tool_calls[0].arguments) == {"city": "Paris"}
    assert converted.usage_metadata.input_tokens == 3
    assert converted.parts[0].payload.data == "sig"
    assert from_langchain(messages[4]).reasoning_content == "easy"
    with pytest.raises(TypeError):
        from_langchain({"role": "user"})  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        to_langchain(42)


# ---------------------------------------------------------------------------------------------
# SessionChatMessageHistory


def test_session_chat_message_history(tmp_path: Path) -> None:
    path = tmp_path / "chat.db"
    message = _aggregate(
        "anthropic_messages", CORPUS / "anthropic_messages" / "sonnet4-text-then-tool-use.jsonl"
    )
    call = message.tool_calls[0]
    added = [
        SystemMessage(content="Answer briefly."),
        HumanMessage(content="Weather in Paris?"),
        to_langchain(message),
        ToolMessage(content='{"temp_c": 18}', tool_call_id=call.id),
        AIMessage(content="It is 18 °C.", id="msg_2"),
    ]
    with Session("chat-1", path) as session:
        history = SessionChatMessageHistory(session)
        history.add_messages(added[:2])
        history.add_message(added[2])
        history.add_messages(added[3:])
        assert history.messages == added
    with Session("chat-1", path) as session:  # reopened
        history = SessionChatMessageHistory(session)
        assert history.messages == added
        assert session.messages()[2] == message  # the fastmerge message, signatures and all
        request = session.to_request("anthropic")
        assert [m["role"] for m in request["messages"]] == [
            "user",
            "assistant",
            "user",
            "assistant",
        ]
        history.clear()
        assert history.messages == []
        assert len(session.events()) == len(added) + 1  # the log keeps what came before
    with pytest.raises(TypeError):
        SessionChatMessageHistory("chat-1")  # type: ignore[arg-type]


def test_session_history_is_atomic() -> None:
    with Session("chat-2") as session:
        history = SessionChatMessageHistory(session)
        with pytest.raises(TypeError):
            history.add_messages([HumanMessage(content="kept?"), object()])  # type: ignore[list-item]
        assert history.messages == []


# ---------------------------------------------------------------------------------------------
# Hostile values (tests/_values.py): the engine and the twin alike under policy="langchain"


@pytest.mark.differential
@settings(max_examples=400, **_HYPOTHESIS)
@given(data=st.data())
def test_hostile_values_alike(both: Any, data: st.DataObject) -> None:
    from _values import pairs, sequences
    from conftest import outcome as exact_outcome

    rust, python = both
    pair = data.draw(pairs())
    before = canonical(pair)
    got = exact_outcome(rust.merge, *pair, policy="langchain")
    assert canonical(pair) == before, "the engine changed its input"
    assert got == exact_outcome(python.merge, *pair, policy="langchain"), repr(pair)
    items = data.draw(sequences())
    got = exact_outcome(rust.merge_all, items, policy="langchain")
    assert got == exact_outcome(python.merge_all, items, policy="langchain"), repr(items)
