"""The ``langchain`` merge policy against LangChain itself (langchain-core 1.x):
langchain-core's own unit tests of ``merge_dicts``, ``merge_lists``, ``merge_obj`` and
``merge_content`` (``tests/unit_tests/utils/test_utils.py``), their expectations ported to
``merge(policy="langchain")`` and each case also run through the installed LangChain; the
options, the limits, and hostile values alike on the engine and the twin. Every test runs on
both backends (conftest)."""

from __future__ import annotations

import copy
import functools
from typing import Any

import pytest
from conftest import canonical
from hypothesis import given, settings
from hypothesis import strategies as st

import fastmerge

pytest.importorskip("langchain_core")
from _support.langchain import HYPOTHESIS, lc_merge
from langchain_core.messages import (  # noqa: E402
    merge_content,
)
from langchain_core.messages.tool import tool_call_chunk as create_tool_call_chunk  # noqa: E402
from langchain_core.utils._merge import merge_dicts, merge_lists, merge_obj  # noqa: E402

from fastmerge.errors import MergeConflictError, MergeConflictTypeError  # noqa: E402

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
        with pytest.raises(MergeConflictTypeError) as ours:
            call()
        # LangChain's class only: a ValueError would not be what LangChain raises here
        assert isinstance(ours.value, MergeConflictError)
        assert not isinstance(ours.value, ValueError)
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
    # of LangChain's class only: LangChain's stream aggregator swallows a TypeError
    other = ValueError if kind is TypeError else TypeError
    assert not isinstance(ours.value, other)
    assert isinstance(ours.value, fastmerge.MergeError) == (kind is ValueError)
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
# Hostile values (tests/_support/values.py): the engine and the twin alike under policy="langchain"


@pytest.mark.differential
@settings(max_examples=400, **HYPOTHESIS)
@given(data=st.data())
def test_hostile_values_alike(both: Any, data: st.DataObject) -> None:
    from _support.values import pairs, sequences
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
