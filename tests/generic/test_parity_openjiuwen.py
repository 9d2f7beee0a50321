"""Parity with openJiuwen (spec §1.1, §1.3, §1.4): the default policy is a drop-in for
``merge_parser_content`` / ``merge_dicts``, and the helpers for ``_concat_token_ids`` /
``_merge_logprobs``. Results must be equal with identical types at every node (``canonical``),
exceptions of the same class with the same message.

Documented differences, tested elsewhere: nesting deeper than ``MAX_DEPTH`` and
self-referencing values (openJiuwen: ``RecursionError``; fastmerge: ``DepthLimitError`` /
``CycleError``, test_hostile.py); ``merge_dicts`` of a non-dict (openJiuwen works on anything
with ``copy()``; fastmerge: ``TypeError``, test_generic.py); ``merge_all([])`` (``reduce``
raises; fastmerge: ``None``, spec §1.3).
"""

from __future__ import annotations

import functools
import math
from collections import OrderedDict, defaultdict
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from _support.values import (
    DICT_KINDS,
    NAN,
    Adder,
    AddList,
    AddModel,
    AddNotImplemented,
    AddNotImplementedError,
    AddStr,
    AddTypeError,
    AddValueError,
    BadEqKey,
    BadStr,
    BoolRaises,
    CopyDict,
    FakeModel,
    FakeModelNoDump,
    FakeV1Model,
    GetattrRaises,
    Inner,
    Inner2,
    ItemsDict,
    ListCopyDict,
    NoAdd,
    NotImplStr,
    Outer,
    RAddStr,
    RaisingCopyDict,
    Short,
    SubDict,
    SubFloat,
    SubInt,
    SubList,
    SubStr,
    _make_dict,
    draw_similar,
    keys,
    pairs,
    sequences,
    values,
)
from conftest import MODULES, PARITY_EXAMPLES, canonical, load_openjiuwen, outcome
from hypothesis import given, settings
from hypothesis import strategies as st

import fastmerge

OJ = load_openjiuwen()

#: pydantic >= 2.11 warns when ``model_fields`` is read on an instance, which openJiuwen's
#: ``hasattr(left, 'model_fields')`` -- and so both backends -- do on every model merge. With
#: filterwarnings=error that would turn every model merge into that exception, on both sides
#: of a comparison; test_parity_openjiuwen.py checks the warnings themselves separately.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Accessing the 'model_fields' attribute on the instance:DeprecationWarning"
)


def _check(name: str, reference: Any, *args: Any, every_backend: bool = False) -> None:
    """``fastmerge.<name>(*args)`` -- or, with ``every_backend``, that function of every
    backend under test -- gives what ``reference(*args)`` gives, and mutates nothing."""
    before = canonical(args)
    expected = outcome(reference, *args)
    assert canonical(args) == before, "openJiuwen mutated an input"
    backends = MODULES if every_backend else {fastmerge.BACKEND: fastmerge}
    for backend, module in backends.items():
        got = outcome(getattr(module, name), *args)
        assert canonical(args) == before, f"[{backend}] {name} mutated an input"
        assert got == expected, f"[{backend}] {name}{args!r}"


def _check_merge(left: Any, right: Any, every_backend: bool = False) -> None:
    _check("merge", OJ.merge_parser_content, left, right, every_backend=every_backend)


# The hypothesis tests below check every backend under test on each example (generating the
# inputs costs more than merging them), hence ``single_run``.


@pytest.mark.single_run
@settings(max_examples=PARITY_EXAMPLES)
@given(pairs())
def test_merge_matches_merge_parser_content(pair: tuple[Any, Any]) -> None:
    _check_merge(*pair, every_backend=True)


# --- explicit cases: every input kind ------------------------------------------------------


def _defaultdict(**kw: Any) -> defaultdict[str, Any]:
    d: defaultdict[str, Any] = defaultdict(list)
    d.update(kw)
    return d


_KEY = BadEqKey(0)  # one object: found by identity, __eq__ never called

CASES: dict[str, tuple[Any, Any]] = {
    # None
    "none-none": (None, None),
    "none-left": (None, {"a": 1}),
    "none-right": ([1], None),
    "none-in-dict": ({"a": "x"}, {"a": None}),
    "none-left-in-dict": ({"a": None}, {"a": "x"}),
    # bool / int / float
    "bools": (True, False),
    "bool-int": (True, 1),
    "ints": (1, 2),
    "big-ints": (2**64 + 1, -(2**100)),
    "int-float": (1, 1.5),
    "nan-nan": (math.nan, math.nan),
    "neg-zero": (0.0, -0.0),
    "infs": (math.inf, -math.inf),
    "float-sub": (SubFloat(1.5), SubFloat(2.5)),
    "int-sub": (SubInt(1), SubInt(2)),
    "complex": (1 + 2j, 3 - 1j),
    "decimal": (Decimal("1.5"), Decimal("-0")),
    "fraction": (Fraction(1, 3), Fraction(1, 6)),
    "bytes": (b"ab", b"cd"),
    "frozensets": (frozenset({1}), frozenset({2})),
    # str
    "str": ("ab", "cd"),
    "str-empty": ("", ""),
    "non-bmp": ("😀", "𝄞"),
    "surrogate-halves": ("\ud83d", "\ude00"),
    "lone-surrogate": ("a\udfff", "\ud800b"),
    "str-int": ("a", 1),
    "int-str": (1, "a"),
    # list / tuple
    "lists": ([1, "a"], [None, [2]]),
    "list-empty": ([], []),
    "tuples": ((1,), (2, 3)),
    "list-tuple": ([1], (2,)),
    "tuple-list": ((1,), [2]),
    "str-list": ("hi", [{"type": "text", "text": "x"}]),
    "list-str": ([{"type": "text", "text": "x"}], "y"),
    # dict
    "nested-dicts": ({"a": {"b": "x"}}, {"a": {"b": "y", "c": 1}}),
    "dict-order": ({"b": 1, "a": 2}, {"c": 3, "a": "x", "b": [1]}),
    "int-keys": ({1: "a", 2: [1]}, {1: "b", 2: [2], 3: None}),
    "bool-int-keys": ({1: "a"}, dict([(True, "b"), (1.0, "c")])),  # one key: True
    "none-key": ({None: "a"}, {None: "b"}),
    "tuple-keys": ({(1, "a"): {"x": "1"}}, {(1, "a"): {"x": "2"}}),
    "float-keys": ({0.5: "a", -0.0: "z"}, {0.5: "b", 0.0: "y"}),
    "same-nan-key": ({NAN: "a"}, {NAN: "b"}),
    "distinct-nan-keys": ({float("nan"): "a"}, {float("nan"): "b"}),
    "dict-list": ({"a": {"k": 1}}, {"a": [1]}),
    "dict-scalar-values": ({"a": Adder(1), "b": 1.5}, {"a": Adder(2), "b": 2}),
    "dict-int": ({"a": 1}, 1),
    # subclasses of str
    "substr-str": (SubStr("a"), "b"),
    "str-substr": ("a", SubStr("b")),
    "addstr-str": (AddStr("a"), "b"),
    "str-addstr": ("a", AddStr("b")),
    "str-raddstr": ("a", RAddStr("b")),
    "raddstr-raddstr": (RAddStr("a"), RAddStr("b")),
    "notimplstr-str": (NotImplStr("a"), "b"),
    "str-notimplstr": ("a", NotImplStr("b")),
    "badstr-str": (BadStr("a"), "b"),
    "str-badstr": ("a", BadStr("b")),
    "badstr-in-dict": ({"k": BadStr("a")}, {"k": "b"}),
    "raddstr-in-dict": ({"k": "a"}, {"k": RAddStr("b")}),
    # subclasses of list
    "sublist": (SubList([1]), [2]),
    "list-sublist": ([1], SubList([2])),
    "addlist": (AddList([1]), [2]),
    "list-addlist": ([1], AddList([2])),
    "addlist-in-dict": ({"k": AddList([1])}, {"k": [2]}),
    # subclasses of dict
    "subdict": (SubDict(a="x", b={"c": "1"}), {"a": "y", "b": {"c": "2"}}),
    "dict-subdict": ({"a": "x"}, SubDict(a="y")),
    "copydict": (CopyDict(a="x"), {"a": "y", "z": 1}),
    "copydict-nested": ({"k": CopyDict(a="x")}, {"k": {"a": "y"}}),
    "ordereddict": (OrderedDict(b="1", a="2"), OrderedDict(a="3", c="4")),
    "ordereddict-nested": ({"k": OrderedDict(a="x")}, {"k": {"a": "y"}}),
    "defaultdict": (_defaultdict(a=[1]), {"a": [2], "b": "x"}),
    "defaultdict-nested": ({"k": _defaultdict(a="x")}, {"k": _defaultdict(a="y")}),
    # pydantic models
    "models-same": (
        Inner(text="a", items=[1], meta={"a": "x"}, n=1),
        Inner(text="b", items=[2], meta={"a": "y", "b": 1}, n=2),
    ),
    "models-other-type": (Inner(text="a"), Inner2(text="b")),
    "models-nested": (
        Outer(inner=Inner(text="a"), tag="t"),
        Outer(inner=Inner(text="b", n=3), tag="u", maybe=Inner(text="m")),
    ),
    "models-rebuild-fails": (Short(code="ab"), Short(code="cd")),
    "models-rebuild-ok": (Short(code="a"), Short(code="b")),
    "model-add-notimplementederror": (AddModel(text="a"), AddModel(text="b")),
    "model-extra-add-raises": (Inner(extra=AddValueError(1)), Inner(extra=AddValueError(2))),
    "model-extra-adder": (Inner(extra=Adder(1)), Inner(extra=Adder(2))),
    "model-dict": (Inner(text="a"), {"text": "b"}),
    "models-in-dict": ({"m": Inner(text="a")}, {"m": Inner(text="b")}),
    "models-in-list": ([Inner(text="a")], [Inner(text="b")]),
    # objects with __add__
    "adders": (Adder(1), Adder(2)),
    "adders-str": (Adder("a"), Adder("b")),
    "adder-inner-typeerror": (Adder(1), Adder("a")),
    "add-typeerror": (AddTypeError(1), AddTypeError(2)),
    "add-notimplemented": (AddNotImplemented(1), AddNotImplemented(2)),
    "add-notimplementederror": (AddNotImplementedError(1), AddNotImplementedError(2)),
    "add-valueerror": (AddValueError(1), AddValueError(2)),
    "add-valueerror-other-type": (AddValueError(1), Adder(2)),
    "noadd": (NoAdd(1), NoAdd(2)),
    "adder-noadd": (Adder(1), NoAdd(2)),
    # shared objects
    "same-object": (({"a": "x", "l": [1]},) * 2),
    # user code in unusual places
    "key-eq-raises": ({BadEqKey(1): "a"}, {BadEqKey(2): "b"}),
    "key-eq-raises-same-object": ({_KEY: "a"}, {_KEY: "b"}),
    "getattr-raises": (GetattrRaises(), GetattrRaises()),
    "getattr-raises-other-type": (GetattrRaises(), 1),
    "fake-model": (FakeModel("a", [1]), FakeModel("b", [2])),
    "fake-model-nested-dict": (FakeModel({"k": "a"}, None), FakeModel({"k": "b"}, 1)),
    "fake-model-other-type": (FakeModel("a"), FakeV1Model("b")),
    "fake-v1-model": (FakeV1Model("a"), FakeV1Model("b")),
    "fake-model-no-dump": (FakeModelNoDump("a"), FakeModelNoDump("b")),
    "items-dict-right": ({"a": "1", "b": "2"}, ItemsDict(b="x", a="y", c="z")),
    "items-dict-nested": ({"k": {"a": "1"}}, {"k": ItemsDict(b="x", a="y")}),
    "list-copy-dict": (ListCopyDict(a="x"), {"a": "y"}),
    "list-copy-dict-nested": ({"k": ListCopyDict(a="x")}, {"k": {"b": "y"}}),
    "raising-copy-dict": (RaisingCopyDict(a="x"), {"a": "y"}),
    "raising-copy-dict-nested": ({"k": RaisingCopyDict()}, {"k": {}}),
}


@pytest.mark.parametrize("left, right", list(CASES.values()), ids=list(CASES))
def test_merge_explicit(left: Any, right: Any) -> None:
    _check_merge(left, right)


def test_merge_same_object_nested() -> None:
    shared = {"a": "x", "l": [1]}
    _check_merge({"p": shared, "q": shared}, {"p": shared, "q": {"a": "y"}})


# --- merge_dicts ---------------------------------------------------------------------------

_dicts = st.builds(_make_dict, DICT_KINDS, st.lists(st.tuples(keys, values), max_size=5))


@st.composite
def dict_pairs(draw: Any) -> tuple[Any, Any]:
    left = draw(_dicts)
    right = draw_similar(draw, left)
    return left, right if isinstance(right, dict) else draw(_dicts)


@pytest.mark.single_run
@given(dict_pairs())
def test_merge_dicts_matches(pair: tuple[Any, Any]) -> None:
    _check("merge_dicts", OJ.merge_dicts, *pair, every_backend=True)


@pytest.mark.parametrize(
    "left, right",
    [v for v in CASES.values() if isinstance(v[0], dict) and isinstance(v[1], dict)],
)
def test_merge_dicts_explicit(left: Any, right: Any) -> None:
    assert outcome(fastmerge.merge_dicts, left, right) == outcome(OJ.merge_dicts, left, right)


# --- merge_all -----------------------------------------------------------------------------


@pytest.mark.single_run
@given(sequences(min_size=1, max_size=6))
def test_merge_all_matches_reduce(items: list[Any]) -> None:
    _check(
        "merge_all",
        functools.partial(functools.reduce, OJ.merge_parser_content),
        items,
        every_backend=True,
    )


@pytest.mark.parametrize(
    "items",
    [
        ["a", "b", SubStr("c"), "d"],
        ["a", AddStr("b"), "c"],
        ["a", "b", BadStr("c")],
        [{"a": "x"}, {"a": "y"}, {"a": None}, {"a": "z"}],
        [{"a": [1]}, {"a": [2]}, {"a": SubList([3])}, {"a": [4]}],
        [{"a": {"b": "x"}}, {"a": {"b": "y"}}, {"a": CopyDict(b="z")}, {"a": {"b": "w"}}],
        [CopyDict(a="x"), {"a": "y"}, {"a": "z"}],
        [OrderedDict(a="x"), {"a": "y"}, {"a": "z"}],
        [[1], [2], None, [3], (4,)],
        [Adder(1), Adder(2), Adder(3)],
        [Inner(text="a"), Inner(text="b"), Inner(text="c")],
        [None, None, "a", None, "b"],
        ["a", 1, "b"],
        ["abc"],
    ],
)
def test_merge_all_explicit(items: list[Any]) -> None:
    assert outcome(fastmerge.merge_all, items) == outcome(
        functools.reduce, OJ.merge_parser_content, items
    )


def test_merge_all_string_items() -> None:
    """A str is an iterable of characters: merge_all folds them like reduce does."""
    assert outcome(fastmerge.merge_all, "abc") == outcome(
        functools.reduce, OJ.merge_parser_content, "abc"
    )


# --- helpers -------------------------------------------------------------------------------

token_ids = st.one_of(
    values,
    st.lists(st.integers(0, 2**40), max_size=4),
    st.lists(st.integers(), max_size=3).map(tuple),
    st.sampled_from([None, [], (), "", 0, 0.0, False, {}, [0], "x"]),
)
logprobs = st.one_of(
    values,
    st.lists(values, max_size=3),
    st.dictionaries(
        st.sampled_from(["content", "refusal", "tokens", "token_logprobs", 0, None]),
        st.one_of(st.lists(values, max_size=3), st.none(), values),
        max_size=4,
    ),
    st.sampled_from([None, [], {}, "", 0]),
)


@pytest.mark.single_run
@given(token_ids, token_ids)
def test_concat_token_ids_matches(left: Any, right: Any) -> None:
    _check("concat_token_ids", OJ._concat_token_ids, left, right, every_backend=True)


@pytest.mark.single_run
@given(logprobs, logprobs)
def test_merge_logprobs_matches(left: Any, right: Any) -> None:
    _check("merge_logprobs", OJ._merge_logprobs, left, right, every_backend=True)


@pytest.mark.parametrize(
    "left, right",
    [
        (None, [1]),
        ([1], None),
        ([], [1]),
        ([1], []),
        ([1, 2], [3]),
        ((1,), [2]),
        ([1], (2,)),
        ([1], "x"),
        (0, [1]),
        ("", "x"),
        (SubList([1]), [2]),
        ([1], AddList([2])),
        ({"a": 1}, [2]),
        (BoolRaises(), [1]),
        ([1], BoolRaises()),
    ],
)
def test_concat_token_ids_explicit(left: Any, right: Any) -> None:
    assert outcome(fastmerge.concat_token_ids, left, right) == outcome(
        OJ._concat_token_ids, left, right
    )


@pytest.mark.parametrize(
    "left, right",
    [
        (None, {"content": [1]}),
        ({"content": [1]}, None),
        ({"content": [{"token": "a"}]}, {"content": [{"token": "b"}]}),
        ({"content": [1], "refusal": None}, {"content": None, "refusal": [2]}),
        ({"content": [1]}, {"other": "x"}),
        ([1], [2]),
        ([1], {"content": [2]}),
        ({"content": "a"}, {"content": "b"}),
        (SubDict(content=[1]), OrderedDict(content=[2])),
        ({"content": SubList([1])}, {"content": [2]}),
        ({"content": [1]}, {"content": AddList([2])}),
        ({}, {}),
        ([], None),
        (0, 1),
        (BoolRaises(), BoolRaises()),
        ({"content": [1]}, ItemsDict(content=[2], other=[3])),
        (ItemsDict(content=[1], b=2), {"content": [2]}),
    ],
)
def test_merge_logprobs_explicit(left: Any, right: Any) -> None:
    assert outcome(fastmerge.merge_logprobs, left, right) == outcome(
        OJ._merge_logprobs, left, right
    )


# --- warnings ------------------------------------------------------------------------------


@pytest.mark.filterwarnings("default")
@pytest.mark.parametrize(
    "left, right",
    [
        (Inner(text="a"), Inner(text="b")),
        (Inner(text="a"), Inner2(text="b")),
        (Outer(tag="a"), Outer(tag="b")),
        ("a", "b"),
        ({"a": "x"}, {"a": "y"}),
    ],
)
def test_same_warnings_as_openjiuwen(left: Any, right: Any) -> None:
    """Whatever openJiuwen warns about (pydantic's deprecation of ``model_fields`` on
    instances, from 2.11), fastmerge warns about too: no new warnings, none lost."""
    import warnings

    def categories(fn: Any) -> set[tuple[type[Warning], str]]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn(left, right)
        return {(w.category, str(w.message)) for w in caught}

    assert categories(fastmerge.merge) == categories(OJ.merge_parser_content)
