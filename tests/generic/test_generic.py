"""The generic merge, case by case: edge-cases.md §A (E1-E17) under both policies, the options,
merge_all, merge_dicts and the helpers (spec §1).

Expected values: under ``policy="openjiuwen"`` whatever openJiuwen's ``merge_parser_content``
returns (computed, not copied; where the spec states openJiuwen's value, that is asserted too);
under ``policy="delta"`` the value written in edge-cases.md / merge-rules.md §1.2.
"""

from __future__ import annotations

import copy
import functools
from collections import OrderedDict
from types import ModuleType
from typing import Any

import pytest
from _support.values import SPEC_ATOMIC_KEYS
from conftest import assert_isolated_ok, canonical

import fastmerge
from fastmerge import CycleError, DepthLimitError, MergeError, MergeTypeError

DELTA = {"policy": "delta"}
BY_INDEX = {"policy": "delta", "list_merge": "by_index"}
STRICT = {"policy": "delta", "strict": True}


def same(actual: Any, expected: Any) -> None:
    """Equal with identical types at every node (``1`` is not ``True`` is not ``1.0``)."""
    assert canonical(actual) == canonical(expected), f"{actual!r} != {expected!r}"


def oj_merge(oj: ModuleType, left: Any, right: Any) -> Any:
    return oj.merge_parser_content(copy.deepcopy(left), copy.deepcopy(right))


def tc(index: int, id: str | None, name: str | None, args: str) -> dict[str, Any]:
    """edge-cases.md's ``tc(i,id,name,args)``; ``None`` stands for ``-`` (key absent)."""
    call: dict[str, Any] = {"index": index}
    if id is not None:
        call["id"] = id
    call["type"] = "function"
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    function["arguments"] = args
    call["function"] = function
    return call


# ---------------------------------------------------------------------------------------------
# E1-E10, E15: openjiuwen policy = openJiuwen's result; delta = the spec's value

A_CASES: dict[str, tuple[Any, Any, Any]] = {
    # id: (left, right, expected under delta)
    "E1-nested-strings": ({"a": {"b": "x"}}, {"a": {"b": "y", "c": 1}}, {"a": {"b": "xy", "c": 1}}),
    "E2-null-right": ({"a": "x"}, {"a": None}, {"a": "x"}),
    "E3-int-int": ({"n": 1}, {"n": 2}, {"n": 2}),
    "E4-identity-ints": (
        {"index": 1, "created": 5},
        {"index": 1, "created": 6},
        {"index": 1, "created": 6},
    ),
    "E5-bool": ({"b": True}, {"b": False}, {"b": False}),
    "E6-float": ({"p": 0.5}, {"p": 0.7}, {"p": 0.7}),
    "E7-int-float": ({"x": 1}, {"x": 1.5}, {"x": 1.5}),
    "E8-type-mismatch": ({"x": "a"}, {"x": 1}, {"x": 1}),
    "E9-dict-list": ({"a": {"k": 1}}, {"a": [1]}, {"a": [1]}),
    "E10-list-of-scalars": ({"ids": [1, 2]}, {"ids": [3]}, {"ids": [1, 2, 3]}),
    "E11-list-of-indexed-dicts-concat": (
        [{"index": 0, "t": "a"}],
        [{"index": 0, "t": "b"}],
        [{"index": 0, "t": "a"}, {"index": 0, "t": "b"}],
    ),
    "E13-conflicting-ids-concat": (
        [{"index": 0, "id": "a", "x": "1"}],
        [{"index": 0, "id": "b", "x": "2"}],
        [{"index": 0, "id": "a", "x": "1"}, {"index": 0, "id": "b", "x": "2"}],
    ),
}


@pytest.mark.parametrize("left, right, expected", list(A_CASES.values()), ids=list(A_CASES))
def test_section_a_delta(left: Any, right: Any, expected: Any) -> None:
    same(fastmerge.merge(left, right, **DELTA), expected)


@pytest.mark.parametrize("left, right, expected", list(A_CASES.values()), ids=list(A_CASES))
def test_section_a_openjiuwen(oj: ModuleType, left: Any, right: Any, expected: Any) -> None:
    same(fastmerge.merge(left, right), oj_merge(oj, left, right))
    same(fastmerge.merge(left, right, policy="openjiuwen"), oj_merge(oj, left, right))


def test_e2_openjiuwen_keeps_the_right_none(oj: ModuleType) -> None:
    """edge-cases.md §A intro: the default policy gives ``{"a": null}`` for E2."""
    same(fastmerge.merge({"a": "x"}, {"a": None}), {"a": None})
    same(oj_merge(oj, {"a": "x"}, {"a": None}), {"a": None})


def test_e2_delta_at_every_depth() -> None:
    left = {"a": {"b": {"c": "x", "l": [1]}}, "s": "y"}
    right = {"a": {"b": {"c": None, "l": None}}, "s": None}
    same(fastmerge.merge(left, right, **DELTA), left)
    same(fastmerge.merge(None, "x", **DELTA), "x")
    same(fastmerge.merge("x", None, **DELTA), "x")


def test_e3_to_e7_scalars_take_the_right_value() -> None:
    """Scalars take the right value under both policies: never summed, never coerced."""
    for policy in ("openjiuwen", "delta"):
        same(fastmerge.merge({"n": 1}, {"n": 2}, policy=policy), {"n": 2})
        same(fastmerge.merge({"b": True}, {"b": True}, policy=policy), {"b": True})
        same(fastmerge.merge(True, True, policy=policy), True)
        same(fastmerge.merge(1, 2, policy=policy), 2)
        same(fastmerge.merge(0.5, 0.7, policy=policy), 0.7)
        same(fastmerge.merge(1, 1.5, policy=policy), 1.5)
        same(fastmerge.merge(2**64, 1, policy=policy), 1)


# --- E8, E9: strict ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "left, right, path",
    [
        ({"x": "a"}, {"x": 1}, "$['x']"),  # E8
        ({"a": {"k": 1}}, {"a": [1]}, "$['a']"),  # E9
        ({"a": {"b": "x"}}, {"a": {"b": 1}}, "$['a']['b']"),
        ({"a": [1]}, {"a": {"k": 1}}, "$['a']"),
        ({"x": 1}, {"x": "a"}, "$['x']"),
        ({"x": True}, {"x": 1}, "$['x']"),
        ({1: "a"}, {1: ["b"]}, "$[1]"),
        ("a", 1, "$"),
    ],
)
def test_e8_e9_strict_raises_naming_the_path(left: Any, right: Any, path: str) -> None:
    with pytest.raises(MergeTypeError) as info:
        fastmerge.merge(left, right, **STRICT)
    assert path in str(info.value)
    assert info.value.path == path
    assert isinstance(info.value, MergeError) and isinstance(info.value, ValueError)


def test_strict_by_index_path_names_the_element() -> None:
    with pytest.raises(MergeTypeError, match=r"\$\['l'\]\[0\]\['v'\]"):
        fastmerge.merge(
            {"l": [{"index": 0, "v": "x"}]},
            {"l": [{"index": 0, "v": 1}]},
            policy="delta",
            list_merge="by_index",
            strict=True,
        )


@pytest.mark.parametrize(
    "case",
    [
        "E1-nested-strings",
        "E2-null-right",
        "E3-int-int",
        "E4-identity-ints",
        "E5-bool",
        "E6-float",
        "E10-list-of-scalars",
    ],
)
def test_strict_accepts_same_kinds(case: str) -> None:
    left, right, expected = A_CASES[case]
    same(fastmerge.merge(left, right, **STRICT), expected)


def test_strict_none_is_not_a_mismatch() -> None:
    same(fastmerge.merge({"x": None}, {"x": 1}, **STRICT), {"x": 1})
    same(fastmerge.merge({"x": "a"}, {"x": None}, **STRICT), {"x": "a"})


def test_strict_merge_all_raises() -> None:
    with pytest.raises(MergeTypeError, match=r"\$\['x'\]"):
        fastmerge.merge_all([{"x": "a"}, {"x": "b"}, {"x": 2}], **STRICT)


# --- E11-E14: list_merge="by_index" ------------------------------------------------------


def test_e11_by_index_merges_same_index() -> None:
    same(
        fastmerge.merge([{"index": 0, "t": "a"}], [{"index": 0, "t": "b"}], **BY_INDEX),
        [{"index": 0, "t": "ab"}],
    )


def test_e11_default_concatenates_like_openjiuwen(oj: ModuleType) -> None:
    left, right = [{"index": 0, "t": "a"}], [{"index": 0, "t": "b"}]
    expected = [{"index": 0, "t": "a"}, {"index": 0, "t": "b"}]
    same(fastmerge.merge(left, right), expected)
    same(oj_merge(oj, left, right), expected)
    same(fastmerge.merge(left, right, **DELTA), expected)


def test_e12_by_index_sparse_values() -> None:
    items = [[], [{"index": 1, "v": "a"}], [{"index": 1, "v": "b"}]]
    expected = [{"index": 1, "v": "ab"}]
    same(fastmerge.merge_all(items, **BY_INDEX), expected)
    same(functools.reduce(lambda a, b: fastmerge.merge(a, b, **BY_INDEX), items), expected)
    nested = [{"l": x} for x in items]
    same(fastmerge.merge_all(nested, **BY_INDEX), {"l": expected})


def test_e12_openjiuwen_concatenates(oj: ModuleType) -> None:
    items = [[], [{"index": 1, "v": "a"}], [{"index": 1, "v": "b"}]]
    same(fastmerge.merge_all(items), functools.reduce(oj.merge_parser_content, items))


def test_e13_conflicting_ids_stay_apart() -> None:
    left, right = [{"index": 0, "id": "a", "x": "1"}], [{"index": 0, "id": "b", "x": "2"}]
    same(fastmerge.merge(left, right, **BY_INDEX), left + right)


@pytest.mark.parametrize("absent", ["", "null", "  ", None])
def test_e13_absent_ids_are_consistent(absent: Any) -> None:
    """Ids match when both are equal or either is absent (spec §1.2)."""
    left = [{"index": 0, "id": "a", "x": "1"}]
    right = [{"index": 0, "id": absent, "x": "2"}]
    same(fastmerge.merge(left, right, **BY_INDEX), [{"index": 0, "id": "a", "x": "12"}])
    same(fastmerge.merge(right, left, **BY_INDEX), [{"index": 0, "id": "a", "x": "21"}])


def test_e14_duplicate_index_inside_one_list() -> None:
    chunk1 = {"tool_calls": [tc(0, "c1", "f", "{"), tc(0, None, None, '"a":1')]}
    chunk2 = {"tool_calls": [tc(0, None, None, "}")]}
    expected = {"tool_calls": [tc(0, "c1", "f", '{"a":1}')]}
    same(fastmerge.merge(chunk1, chunk2, **BY_INDEX), expected)
    same(fastmerge.merge_all([chunk1, chunk2], **BY_INDEX), expected)


def test_e14_openjiuwen_leaves_the_orphan(oj: ModuleType) -> None:
    chunk1 = {"tool_calls": [tc(0, "c1", "f", "{"), tc(0, None, None, '"a":1')]}
    chunk2 = {"tool_calls": [tc(0, None, None, "}")]}
    result = fastmerge.merge(chunk1, chunk2)
    same(result, oj_merge(oj, chunk1, chunk2))
    assert len(result["tool_calls"]) == 3


def test_by_index_needs_an_int_index() -> None:
    """Elements without an int ``index`` (bool, str, float, huge) are appended."""
    for index in (True, "0", 0.0, None, 2**64):
        left, right = [{"index": index, "t": "a"}], [{"index": index, "t": "b"}]
        same(fastmerge.merge(left, right, **BY_INDEX), left + right)
    same(fastmerge.merge([{"t": "a"}], [{"t": "b"}], **BY_INDEX), [{"t": "a"}, {"t": "b"}])
    same(fastmerge.merge([1, "a"], [1, "b"], **BY_INDEX), [1, "a", 1, "b"])


# --- E15: atomic keys --------------------------------------------------------------------


def test_atomic_keys_are_the_spec_set() -> None:
    assert fastmerge.ATOMIC_KEYS == SPEC_ATOMIC_KEYS
    assert isinstance(fastmerge.ATOMIC_KEYS, frozenset)


def test_e15_equal_atomic_strings_delta() -> None:
    x = {"id": "x", "model": "m", "system_fingerprint": "fp", "role": "assistant"}
    same(fastmerge.merge(x, x, **DELTA), x)
    same(fastmerge.merge_all([x, dict(x), dict(x)], **DELTA), x)
    chunk = {"choices": [{"delta": {"role": "assistant", "content": "a"}, "finish_reason": "stop"}]}
    same(
        fastmerge.merge({"x": chunk}, {"x": chunk}, **DELTA),
        {"x": {"choices": [chunk["choices"][0], chunk["choices"][0]]}},
    )
    same(
        fastmerge.merge(chunk["choices"][0], chunk["choices"][0], **DELTA),
        {"delta": {"role": "assistant", "content": "aa"}, "finish_reason": "stop"},
    )


def test_e15_openjiuwen_concatenates(oj: ModuleType) -> None:
    x = {"id": "x", "model": "m", "system_fingerprint": "fp", "role": "assistant"}
    same(fastmerge.merge(x, x), oj_merge(oj, x, x))
    same(fastmerge.merge(x, x)["role"], "assistantassistant")


@pytest.mark.parametrize("key", sorted(SPEC_ATOMIC_KEYS))
def test_atomic_key_rules(key: str) -> None:
    """§1.2: equal values kept, a different non-absent value replaces, absent keeps left."""
    same(fastmerge.merge({key: "a"}, {key: "a"}, **DELTA), {key: "a"})
    same(fastmerge.merge({key: "a"}, {key: "b"}, **DELTA), {key: "b"})
    for absent in ("", "null", " ", "\t", None):
        same(fastmerge.merge({key: "a"}, {key: absent}, **DELTA), {key: "a"})
    same(fastmerge.merge({key: ""}, {key: "b"}, **DELTA), {key: "b"})
    same(fastmerge.merge({key: None}, {key: "b"}, **DELTA), {key: "b"})
    same(fastmerge.merge({key: [1]}, {key: [2]}, **DELTA), {key: [2]})
    same(fastmerge.merge({key: {"k": "a"}}, {key: {"k": "b"}}, **DELTA), {key: {"k": "b"}})
    same(fastmerge.merge({key: 1}, {key: 2}, **DELTA), {key: 2})


def test_non_atomic_keys_concatenate_under_delta() -> None:
    same(
        fastmerge.merge({"content": "a", "ID": "x"}, {"content": "b", "ID": "y"}, **DELTA),
        {"content": "ab", "ID": "xy"},
    )


# --- E16: deep nesting (both policies; in a subprocess so a crash cannot take pytest down) ---


@pytest.mark.parametrize("policy", ["openjiuwen", "delta"])
def test_e16_deep_nesting_raises_depth_limit(backend_name: str, policy: str) -> None:
    assert_isolated_ok(
        backend_name,
        f"""
        import fastmerge
        def nest(n, leaf):
            v = leaf
            for _ in range(n):
                v = {{"a": v}}
            return v
        a, b = nest(2000, "x"), nest(2000, "y")
        for call in (lambda: fastmerge.merge(a, b, policy={policy!r}),
                     lambda: fastmerge.merge_all([a, b], policy={policy!r})):
            try:
                call()
            except fastmerge.DepthLimitError as exc:
                assert str(fastmerge.MAX_DEPTH) in str(exc), exc
            else:
                raise AssertionError("no DepthLimitError")
    """,
    )


# --- E17: immutability -------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["openjiuwen", "delta"])
def test_e17_result_does_not_share_changed_containers(policy: str) -> None:
    a = {"meta": {"x": "1"}, "l": [1], "deep": {"d": {"s": "p"}}}
    b = {"meta": {"x": "2"}, "l": [2], "deep": {"d": {"s": "q"}}}
    a0, b0 = copy.deepcopy(a), copy.deepcopy(b)
    m = fastmerge.merge(a, b, policy=policy)
    same(a, a0)
    same(b, b0)
    same(m, {"meta": {"x": "12"}, "l": [1, 2], "deep": {"d": {"s": "pq"}}})
    m["meta"]["x"] = "changed"
    m["meta"]["new"] = 1
    m["l"].append(3)
    m["deep"]["d"]["s"] = "changed"
    m["deep"]["new"] = 1
    m["new"] = 1
    same(a, a0)
    same(b, b0)


@pytest.mark.parametrize("policy", ["openjiuwen", "delta"])
def test_e17_merge_all(policy: str) -> None:
    items = [
        {"meta": {"x": "1"}, "l": [1]},
        {"meta": {"x": "2"}, "l": [2]},
        {"meta": {"x": "3"}, "l": [3]},
    ]
    before = copy.deepcopy(items)
    m = fastmerge.merge_all(items, policy=policy)
    same(m, {"meta": {"x": "123"}, "l": [1, 2, 3]})
    m["meta"]["x"] = "changed"
    m["l"].clear()
    same(items, before)


def test_top_level_containers_are_new() -> None:
    left, right = [1], []
    assert fastmerge.merge(left, right) is not left
    d = {"a": 1}
    for result in (fastmerge.merge(d, {}), fastmerge.merge({}, d), fastmerge.merge_dicts(d, {})):
        assert result is not d
        same(result, d)


# ---------------------------------------------------------------------------------------------
# Rule 1 of §1.1: None


@pytest.mark.parametrize("policy", ["openjiuwen", "delta"])
def test_none_gives_the_other_side(policy: str) -> None:
    value = {"a": [1]}
    assert fastmerge.merge(value, None, policy=policy) is value
    assert fastmerge.merge(None, value, policy=policy) is value
    assert fastmerge.merge(None, None, policy=policy) is None


# ---------------------------------------------------------------------------------------------
# Options


@pytest.mark.parametrize("func", ["merge", "merge_all"])
def test_unknown_policy(func: str) -> None:
    call = _caller(func)
    with pytest.raises(ValueError) as info:
        call(policy="bogus")
    message = str(info.value)
    assert "bogus" in message
    for valid in ("openjiuwen", "delta"):
        assert valid in message
    assert not isinstance(info.value, MergeError)


@pytest.mark.parametrize("func", ["merge", "merge_all"])
@pytest.mark.parametrize("policy", [1, None, b"delta", ["delta"]])
def test_non_str_policy(func: str, policy: Any) -> None:
    with pytest.raises(TypeError, match="policy"):
        _caller(func)(policy=policy)


@pytest.mark.parametrize("func", ["merge", "merge_all"])
def test_unknown_list_merge(func: str) -> None:
    with pytest.raises(ValueError) as info:
        _caller(func)(policy="delta", list_merge="by_key")
    for valid in ("concat", "by_index", "by_key"):
        assert valid in str(info.value)
    with pytest.raises(TypeError, match="list_merge"):
        _caller(func)(policy="delta", list_merge=0)


@pytest.mark.parametrize("func", ["merge", "merge_all"])
@pytest.mark.parametrize("strict", [1, 0, None, "yes"])
def test_non_bool_strict(func: str, strict: Any) -> None:
    with pytest.raises(TypeError, match="strict"):
        _caller(func)(policy="delta", strict=strict)


@pytest.mark.parametrize("func", ["merge", "merge_all"])
@pytest.mark.parametrize("option", [{"list_merge": "by_index"}, {"strict": True}])
def test_delta_only_options_with_openjiuwen(func: str, option: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="delta"):
        _caller(func)(**option)
    with pytest.raises(ValueError, match="delta"):
        _caller(func)(policy="openjiuwen", **option)


def test_default_options_are_accepted_explicitly() -> None:
    same(fastmerge.merge("a", "b", policy="openjiuwen", list_merge="concat", strict=False), "ab")
    same(fastmerge.merge("a", "b", policy="delta", list_merge="concat", strict=False), "ab")


def test_options_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        fastmerge.merge("a", "b", "delta")  # type: ignore[misc]
    with pytest.raises(TypeError):
        fastmerge.merge_all(["a"], "delta")  # type: ignore[misc]


def _caller(func: str) -> Any:
    if func == "merge":
        return lambda **kw: fastmerge.merge({"a": "x"}, {"a": "y"}, **kw)
    return lambda **kw: fastmerge.merge_all([{"a": "x"}, {"a": "y"}], **kw)


# ---------------------------------------------------------------------------------------------
# merge_all (§1.3)


@pytest.mark.parametrize("policy", ["openjiuwen", "delta"])
def test_merge_all_empty_is_none(policy: str) -> None:
    assert fastmerge.merge_all([], policy=policy) is None
    assert fastmerge.merge_all((), policy=policy) is None
    assert fastmerge.merge_all(iter([]), policy=policy) is None
    assert fastmerge.merge_all((x for x in []), policy=policy) is None


@pytest.mark.parametrize("policy", ["openjiuwen", "delta"])
@pytest.mark.parametrize("item", [{"a": [1]}, [1], "s", 1, None, OrderedDict(a=1)])
def test_merge_all_single_item_returned_as_is(policy: str, item: Any) -> None:
    """``functools.reduce`` returns the only item itself."""
    assert fastmerge.merge_all([item], policy=policy) is item


def test_merge_all_generator() -> None:
    chunks = [{"content": "a", "n": 1}, {"content": "b", "n": 2}, {"content": "c"}]
    consumed = []

    def gen() -> Any:
        for chunk in chunks:
            consumed.append(chunk)
            yield chunk

    same(fastmerge.merge_all(gen()), {"content": "abc", "n": 2})
    assert consumed == chunks
    same(fastmerge.merge_all(iter(chunks), policy="delta"), {"content": "abc", "n": 2})


def test_merge_all_generator_error_propagates() -> None:
    def gen() -> Any:
        yield "a"
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        fastmerge.merge_all(gen())


@pytest.mark.parametrize("items", [5, None, 1.5, object()])
def test_merge_all_non_iterable(items: Any) -> None:
    with pytest.raises(TypeError):
        fastmerge.merge_all(items)


def test_merge_all_matches_pairwise_merge(oj: ModuleType) -> None:
    items = [
        {"a": "x", "l": [1]},
        None,
        {"a": "y", "l": [2], "d": {"k": "1"}},
        {"d": {"k": "2"}, "a": None},
    ]
    same(fastmerge.merge_all(items), functools.reduce(oj.merge_parser_content, items))
    same(fastmerge.merge_all(items, policy="delta"), {"a": "xy", "l": [1, 2], "d": {"k": "12"}})


# ---------------------------------------------------------------------------------------------
# merge_dicts and the helpers (§1.4)


@pytest.mark.parametrize(
    "left, right", [([1], {}), ({}, [1]), (None, {}), ({}, None), ("a", "b"), ({}, (("a", 1),))]
)
def test_merge_dicts_non_dict_is_type_error(left: Any, right: Any) -> None:
    with pytest.raises(TypeError):
        fastmerge.merge_dicts(left, right)


def test_merge_dicts(oj: ModuleType) -> None:
    left = {"s": "a", "l": [1], "d": {"x": "1"}, "n": 1, "keep": 0}
    right = {"s": "b", "l": [2], "d": {"x": "2", "y": None}, "n": None, "new": "z"}
    expected = {
        "s": "ab",
        "l": [1, 2],
        "d": {"x": "12", "y": None},
        "n": None,
        "keep": 0,
        "new": "z",
    }
    same(fastmerge.merge_dicts(left, right), expected)
    same(oj.merge_dicts(left, right), expected)
    assert list(fastmerge.merge_dicts({"b": 1, "a": 2}, {"c": 3, "a": 4})) == ["b", "a", "c"]


@pytest.mark.parametrize(
    "left, right, expected",
    [
        (None, [1], [1]),
        ([1], None, [1]),
        ([], [1], [1]),
        ([1], [], [1]),
        ([1, 2], [3], [1, 2, 3]),
        ([1], "x", "x"),
        (None, None, None),
    ],
)
def test_concat_token_ids(left: Any, right: Any, expected: Any) -> None:
    same(fastmerge.concat_token_ids(left, right), expected)


@pytest.mark.parametrize(
    "left, right, expected",
    [
        (None, {"content": [1]}, {"content": [1]}),
        ({"content": [1]}, None, {"content": [1]}),
        ({"content": [1], "refusal": [9]}, {"content": [2]}, {"content": [1, 2], "refusal": [9]}),
        ({"content": [1]}, {"content": "x"}, {"content": "x"}),
        ({"content": "a"}, {"content": "b"}, {"content": "b"}),
        ([1], [2], [1, 2]),
        ([1], {"content": [2]}, {"content": [2]}),
    ],
)
def test_merge_logprobs(left: Any, right: Any, expected: Any) -> None:
    same(fastmerge.merge_logprobs(left, right), expected)


def test_helpers_do_not_alias_or_mutate() -> None:
    left, right = [1], [2]
    result = fastmerge.concat_token_ids(left, right)
    result.append(3)
    assert left == [1] and right == [2]
    lp_left, lp_right = {"content": [1]}, {"content": [2]}
    merged = fastmerge.merge_logprobs(lp_left, lp_right)
    merged["content"].append(3)
    merged["x"] = 1
    assert lp_left == {"content": [1]} and lp_right == {"content": [2]}


# ---------------------------------------------------------------------------------------------
# The errors


def test_error_hierarchy() -> None:
    for cls in (DepthLimitError, CycleError, MergeTypeError):
        assert issubclass(cls, MergeError)
    assert issubclass(MergeError, ValueError)
    assert fastmerge.errors.MergeError is MergeError
