"""Input types and hypothesis strategies shared by the parity, differential and hostile tests.

The generators aim at the whole input domain of the generic merge (spec §1.1): scalars of every
kind, strings with non-BMP characters and lone surrogates, lists, tuples, dicts with non-str
keys, subclasses of dict/list/str (plain, overriding ``copy``/``__add__``/``__radd__``,
``OrderedDict``, ``defaultdict``), pydantic models (same type, other type, nested, failing
rebuild) and objects with an ``__add__`` that works, raises ``TypeError``, returns
``NotImplemented``, raises ``NotImplementedError`` or raises ``ValueError``.

Exclusions (tested explicitly elsewhere): self-referencing values and nesting deeper than
``MAX_DEPTH`` (test_hostile.py) — openJiuwen answers those with ``RecursionError``.
"""

from __future__ import annotations

import math
from collections import OrderedDict, defaultdict
from decimal import Decimal
from fractions import Fraction
from typing import Any, Optional

from hypothesis import strategies as st
from pydantic import BaseModel, Field

# ---------------------------------------------------------------------------------------------
# Subclasses of the builtin containers


class _Named:
    """``repr`` names the subclass, so a failing example shows ``AddStr('x')``, not ``'x'``."""

    def __repr__(self) -> str:
        base = next(b for b in type(self).__mro__ if b.__module__ == "builtins" and b is not object)
        return f"{type(self).__name__}({base.__repr__(self)})"  # type: ignore[call-arg]


class SubStr(_Named, str):
    """A plain str subclass: ``+`` is str's, which returns an exact ``str``."""


class AddStr(_Named, str):
    """Overrides ``__add__`` to keep its type."""

    def __add__(self, other: Any) -> AddStr:
        return AddStr(str.__add__(self, str(other)) + "+")


class RAddStr(_Named, str):
    """Overrides ``__radd__``: ``"x" + RAddStr("y")`` calls it first (subclass rule)."""

    def __radd__(self, other: Any) -> RAddStr:
        return RAddStr("<" + str.__add__(str(other), self) + ">")


class NotImplStr(_Named, str):
    """``__add__`` returns NotImplemented: ``NotImplStr + str`` raises TypeError."""

    def __add__(self, other: Any) -> Any:
        return NotImplemented


class BadStr(_Named, str):
    """``__add__`` raises ValueError, which must propagate."""

    def __add__(self, other: Any) -> Any:
        raise ValueError(f"BadStr refuses to add {other!r}")


class SubList(_Named, list):  # type: ignore[type-arg]
    """A plain list subclass: ``+`` returns an exact ``list``."""


class AddList(_Named, list):  # type: ignore[type-arg]
    """Overrides ``__add__`` to keep its type."""

    def __add__(self, other: Any) -> AddList:  # type: ignore[override]
        return AddList(list.__add__(self, list(other)))


class SubDict(_Named, dict):  # type: ignore[type-arg]
    """A plain dict subclass: ``copy()`` returns an exact ``dict``."""


class CopyDict(_Named, dict):  # type: ignore[type-arg]
    """Overrides ``copy`` to keep its type (openJiuwen's merge_dicts starts from ``copy()``)."""

    def copy(self) -> CopyDict:  # type: ignore[override]
        return CopyDict(self)


# ---------------------------------------------------------------------------------------------
# Objects with __add__


class _Box:
    __slots__ = ("v",)

    def __init__(self, v: Any) -> None:
        self.v = v

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.v!r})"

    # canonical() reads the state through this
    def __getstate__(self) -> Any:
        return self.v


class Adder(_Box):
    """``__add__`` works for its own type."""

    def __add__(self, other: Any) -> Adder:
        if not isinstance(other, Adder):
            return NotImplemented
        return Adder(self.v + other.v)


class AddTypeError(_Box):
    def __add__(self, other: Any) -> Any:
        raise TypeError("AddTypeError cannot add")


class AddNotImplemented(_Box):
    def __add__(self, other: Any) -> Any:
        return NotImplemented


class AddNotImplementedError(_Box):
    def __add__(self, other: Any) -> Any:
        raise NotImplementedError("AddNotImplementedError cannot add")


class AddValueError(_Box):
    def __add__(self, other: Any) -> Any:
        raise ValueError(f"AddValueError refuses {other!r}")


class NoAdd(_Box):
    """No ``__add__`` at all."""


class SubInt(_Named, int):
    """An int subclass (excluded from the ``__add__`` rule like int)."""


class SubFloat(_Named, float):
    pass


# --- objects that make the merge run user code in unusual places ------------------------------


class BadEqKey:
    """Equal hashes, ``__eq__`` raises: ``key in d`` raises when two of them meet."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __hash__(self) -> int:
        return 1

    def __eq__(self, other: object) -> bool:
        raise ValueError(f"BadEqKey({self.n}) cannot compare")

    def __repr__(self) -> str:
        return f"BadEqKey({self.n})"


class GetattrRaises:
    """``hasattr(x, "__add__")`` / ``hasattr(x, "model_fields")`` propagate its RuntimeError
    (hasattr only swallows AttributeError)."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"no peeking at {name}")


class FakeModel:
    """Not pydantic, but has ``model_fields`` and ``model_dump``: the model rule applies."""

    model_fields: dict[str, Any] = {"v": None, "w": None}

    def __init__(self, v: Any = None, w: Any = None) -> None:
        self.v, self.w = v, w

    def model_dump(self) -> dict[str, Any]:
        return {"v": self.v, "w": self.w}

    def __repr__(self) -> str:
        return f"FakeModel({self.v!r}, {self.w!r})"


class FakeV1Model:
    """``model_fields`` and the pydantic-v1 ``dict()`` only."""

    model_fields: dict[str, Any] = {"v": None}

    def __init__(self, v: Any = None) -> None:
        self.v = v

    def dict(self) -> dict[str, Any]:
        return {"v": self.v}


class FakeModelNoDump:
    """``model_fields`` but no way to dump: merging fails, so the right value."""

    model_fields: dict[str, Any] = {}

    def __init__(self, v: Any = None) -> None:
        self.v = v


class ItemsDict(_Named, dict):  # type: ignore[type-arg]
    """``items()`` yields the entries reversed: merge_dicts walks ``right.items()``."""

    def items(self) -> Any:  # type: ignore[override]
        return list(reversed(list(dict.items(self))))


class ListCopyDict(_Named, dict):  # type: ignore[type-arg]
    """``copy()`` returns a list: openJiuwen then fails on ``result[key] = ...``."""

    def copy(self) -> Any:  # type: ignore[override]
        return []


class RaisingCopyDict(_Named, dict):  # type: ignore[type-arg]
    def copy(self) -> Any:  # type: ignore[override]
        raise RuntimeError("RaisingCopyDict.copy")


class BoolRaises:
    def __bool__(self) -> bool:
        raise RuntimeError("BoolRaises.__bool__")


BOXES = (Adder, AddTypeError, AddNotImplemented, AddNotImplementedError, AddValueError, NoAdd)

# ---------------------------------------------------------------------------------------------
# pydantic models


class Inner(BaseModel):
    text: str = ""
    items: list[Any] = Field(default_factory=list)
    meta: dict[str, Any] = Field(default_factory=dict)
    n: int = 0
    extra: Any = None


class Inner2(BaseModel):
    """Same fields as Inner, another type: merging Inner with Inner2 gives the right value."""

    text: str = ""
    items: list[Any] = Field(default_factory=list)
    meta: dict[str, Any] = Field(default_factory=dict)
    n: int = 0
    extra: Any = None


class Outer(BaseModel):
    inner: Inner = Field(default_factory=Inner)
    tag: str = ""
    maybe: Optional[Inner] = None


class Short(BaseModel):
    """Rebuilding fails once the concatenated text exceeds 3 characters -> right value."""

    code: str = Field(default="", max_length=3)


class AddModel(BaseModel):
    """A model whose ``__add__`` raises NotImplementedError: falls through to the model rule."""

    text: str = ""

    def __add__(self, other: Any) -> Any:
        raise NotImplementedError


MODELS = (Inner, Inner2, Outer, Short, AddModel)

NAN = float("nan")  # one shared NaN object: as a dict key it is found by identity

# ---------------------------------------------------------------------------------------------
# Strategies

SURROGATES = ("\ud83d", "\ude00", "\udfff", "\ud800")


def exact(strategy: st.SearchStrategy[Any], kind: type) -> st.SearchStrategy[Any]:
    """``strategy``, refusing values that are not exactly of ``kind``.

    Every real draw passes. The filter is for hypothesis' shrinker (6.1xx): it re-encodes a
    recorded value through a strategy's ``_invert``, and ``text()`` / ``integers()`` /
    ``floats()`` accept *subclass* instances there (``isinstance``), then fail on them with a
    ``KeyError`` / ``FlakyStrategyDefinition`` -- hiding the real failure behind a strategy
    error whenever a test with str/int/float subclasses fails. A filtered strategy asks its
    filter first, so the subclass instance is refused and the shrinker moves on.
    """
    return strategy.filter(lambda value: type(value) is kind)


text = exact(
    st.one_of(
        st.text(max_size=6),
        st.text(st.sampled_from(["a", "b", "é", "😀", "\x00", " ", *SURROGATES]), max_size=4),
        st.sampled_from(["", "null", " ", "x", "😀", *SURROGATES]),
    ),
    str,
)

small_ints = exact(st.integers(-3, 3), int)

big_ints = exact(
    st.one_of(
        st.integers(-5, 5),
        st.integers(),
        st.integers(-(2**200), 2**200),
        st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64, -(2**64)]),
    ),
    int,
)

floats = exact(
    st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.sampled_from([NAN, float("nan"), math.inf, -math.inf, -0.0, 0.0, 1.5, 1e308]),
    ),
    float,
)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    big_ints,
    floats,
    text,
)

#: The atomic keys of the delta policy, as spec/merge-rules.md §1.2 lists them.
SPEC_ATOMIC_KEYS = frozenset(
    {
        "id",
        "object",
        "model",
        "system_fingerprint",
        "role",
        "type",
        "index",
        "created",
        "service_tier",
        "finish_reason",
        "stop_reason",
        "name",
    }
)

#: Dict keys: a small pool so that the two sides share keys often, plus non-str keys.
keys = st.one_of(
    st.sampled_from(["a", "b", "c", "content", "id", "index", "name", "type", "model"]),
    st.sampled_from([0, 1, -1, True, False, None, 1.0, 0.5, NAN, (1, "a"), (), 2**70]),
    text,
    st.integers(),
    st.floats(allow_nan=True),
    st.tuples(st.integers(0, 2), st.sampled_from(["a", None])),
)

json_keys = st.one_of(
    st.sampled_from(
        [
            "a",
            "b",
            "c",
            "content",
            "text",
            "args",
            *sorted(SPEC_ATOMIC_KEYS),
        ]
    ),
    text,
)


def _make(cls: Any, value: Any) -> Any:
    return cls(value)


str_subclasses = st.builds(
    _make, st.sampled_from([SubStr, AddStr, RAddStr, NotImplStr, BadStr]), text
)
boxes = st.builds(_make, st.sampled_from(BOXES), st.one_of(small_ints, text))

DICT_KINDS = st.sampled_from(
    ["dict", "dict", "dict", "dict", "sub", "copy", "ordered", "default", "items"]
)
LIST_KINDS = st.sampled_from([list, list, list, SubList, AddList, tuple])


def _make_dict(kind: str, entries: list[tuple[Any, Any]]) -> Any:
    if kind == "dict":
        return dict(entries)
    if kind == "sub":
        return SubDict(entries)
    if kind == "copy":
        return CopyDict(entries)
    if kind == "ordered":
        return OrderedDict(entries)
    if kind == "items":
        return ItemsDict(entries)
    d: defaultdict[Any, Any] = defaultdict(list)
    d.update(entries)
    return d


leaf_objects = st.one_of(
    str_subclasses,
    boxes,
    st.builds(SubInt, small_ints),
    st.builds(SubFloat, exact(st.floats(allow_nan=False, width=32), float)),
    st.builds(complex, st.floats(-2, 2), st.floats(-2, 2)),
    st.sampled_from([Decimal("1.5"), Decimal("-0"), Fraction(1, 3), b"ab", b"", frozenset({1})]),
    exact(st.binary(max_size=3), bytes),
    st.builds(
        FakeModel,
        text,
        st.one_of(
            small_ints,
            st.lists(small_ints, max_size=2),
            st.dictionaries(st.sampled_from("ab"), text, max_size=2),
        ),
    ),
    st.builds(FakeV1Model, text),
)
leaves = st.one_of(text, text, scalars, leaf_objects)

_small = st.one_of(text, small_ints, st.none())
_inner_kwargs = st.fixed_dictionaries(
    {},
    optional={
        "text": text,
        "items": st.lists(_small, max_size=3),
        "meta": st.dictionaries(st.sampled_from(["a", "b", "c"]), _small, max_size=3),
        "n": small_ints,
        "extra": st.one_of(leaves, st.lists(leaves, max_size=2)),
    },
)
_inner = _inner_kwargs.map(lambda kw: Inner(**kw))
models = st.one_of(
    _inner,
    _inner_kwargs.map(lambda kw: Inner2(**kw)),
    st.builds(Outer, inner=_inner, tag=text, maybe=st.one_of(st.none(), _inner)),
    st.builds(Short, code=st.text("xyz", max_size=3)),
    st.builds(AddModel, text=text),
)


def _extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    lists = st.builds(_make, LIST_KINDS, st.lists(children, max_size=4))
    dicts = st.builds(_make_dict, DICT_KINDS, st.lists(st.tuples(keys, children), max_size=4))
    return st.one_of(lists, lists, dicts, dicts, dicts, dicts, models)


#: Any Python value the generic merge may meet (without cycles or excessive depth).
values = st.recursive(leaves, _extend, max_leaves=12)

#: Dict trees over a tiny key pool: two independent draws overlap at several depths.
small_keys = st.sampled_from(["a", "b", 1, None, (1, "a")])
trees = st.recursive(
    leaves,
    lambda children: st.one_of(
        st.builds(_make_dict, DICT_KINDS, st.lists(st.tuples(small_keys, children), max_size=3)),
        st.builds(
            _make_dict,
            st.just("dict"),
            st.lists(st.tuples(small_keys, children), min_size=1, max_size=3),
        ),
        st.builds(_make, LIST_KINDS, st.lists(children, max_size=2)),
    ),
    max_leaves=10,
)

_mode = st.integers(0, 6)
_count = st.integers(0, 3)
_bool = st.booleans()
_extra_deep = st.lists(st.tuples(keys, values), max_size=2)
_extra_shallow = st.lists(st.tuples(keys, leaves), max_size=2)
_text_like = st.one_of(text, str_subclasses)
_box_value = st.one_of(small_ints, text)


def draw_similar(draw: Any, value: Any, depth: int = 0) -> Any:
    """A value shaped like ``value`` (same keys, same kinds), so that the merge recurses."""
    fresh = values if depth < 2 else leaves
    mode = draw(_mode)
    if depth > 6 or mode == 0:
        return draw(fresh)
    if isinstance(value, dict):
        entries = []
        for key in list(dict.keys(value)):
            if draw(_mode):
                entries.append((key, draw_similar(draw, dict.__getitem__(value, key), depth + 1)))
        entries += draw(_extra_deep if depth < 2 else _extra_shallow)
        if draw(_bool):
            entries.reverse()
        return _make_dict(draw(DICT_KINDS), entries)
    if isinstance(value, (list, tuple)):
        items = []
        for _ in range(draw(_count)):
            if value and draw(_bool):
                items.append(
                    draw_similar(draw, value[draw(st.integers(0, len(value) - 1))], depth + 1)
                )
            else:
                items.append(draw(fresh))
        return (type(value) if mode == 1 else draw(LIST_KINDS))(items)
    if isinstance(value, str):
        return draw(_text_like)
    if isinstance(value, BaseModel):
        return value if mode == 1 else draw(models)
    if isinstance(value, _Box):
        return type(value)(draw(_box_value))
    if isinstance(value, (FakeModel, FakeV1Model)):
        return draw(leaf_objects) if mode == 1 else type(value)(draw(_text_like))
    return value if mode == 1 else draw(fresh)


@st.composite
def similar(draw: Any, value: Any) -> Any:
    return draw_similar(draw, value)


@st.composite
def pairs(draw: Any) -> tuple[Any, Any]:
    """(left, right), mostly of the same shape; sometimes the very same object."""
    choice = draw(st.integers(0, 11))
    if choice in (4, 5):
        return draw(trees), draw(trees)
    left = draw(leaves if choice in (2, 3) else trees if choice in (6, 7) else values)
    if choice == 0:
        return left, left
    if choice == 1:
        return left, draw(values)
    return left, draw_similar(draw, left)


@st.composite
def sequences(draw: Any, min_size: int = 0, max_size: int = 5) -> list[Any]:
    """Items for merge_all: a chain of similar values (with occasional Nones)."""
    n = draw(st.integers(min_size, max_size))
    items: list[Any] = []
    for _ in range(n):
        mode = draw(st.integers(0, 5))
        if items and mode > 1:
            items.append(draw_similar(draw, items[-1]))
        elif items and mode == 1:
            items.append(None)
        else:
            items.append(draw(values))
    return items


# --- JSON-like values (for the delta policy and orjson comparisons) ---------------------------

json_scalars = st.one_of(st.none(), st.booleans(), big_ints, floats, text)

index_values = st.one_of(
    st.integers(0, 3),
    st.sampled_from([True, False, -1, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 1.0, "0", None]),
)
id_values = st.sampled_from(["a", "b", "", "null", " ", None, 1])


@st.composite
def indexed_element(draw: Any, children: st.SearchStrategy[Any]) -> dict[str, Any]:
    """A dict with an ``index`` (mostly a small int) and optionally an ``id``."""
    element: dict[str, Any] = {"index": draw(index_values)}
    if draw(st.booleans()):
        element["id"] = draw(id_values)
    for key, value in draw(st.lists(st.tuples(json_keys, children), max_size=3)):
        element[key] = value
    if draw(st.integers(0, 4)) == 0:
        del element["index"]
    return element


def _json_extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=4),
        st.lists(indexed_element(children), max_size=4),
        st.dictionaries(json_keys, children, max_size=4),
    )


json_values = st.recursive(json_scalars, _json_extend, max_leaves=10)


_json_extra = st.lists(st.tuples(json_keys, json_values), max_size=2)
_json_extra_shallow = st.lists(st.tuples(json_keys, json_scalars), max_size=2)


def draw_json_similar(draw: Any, value: Any, depth: int = 0) -> Any:
    fresh = json_values if depth < 2 else json_scalars
    mode = draw(_mode)
    if depth > 6 or mode == 0:
        return draw(fresh)
    if isinstance(value, dict):
        out = {}
        for key, v in value.items():
            if draw(_mode):
                out[key] = draw_json_similar(draw, v, depth + 1)
        for key, v in draw(_json_extra if depth < 2 else _json_extra_shallow):
            out[key] = v
        return out
    if isinstance(value, list):
        items = []
        for _ in range(draw(_count)):
            if value and draw(_bool):
                items.append(
                    draw_json_similar(draw, value[draw(st.integers(0, len(value) - 1))], depth + 1)
                )
            else:
                items.append(draw(fresh))
        return items
    return value if mode == 1 else None if mode == 2 else draw(fresh)


@st.composite
def json_pairs(draw: Any) -> tuple[Any, Any]:
    left = draw(json_values)
    if draw(st.integers(0, 4)) == 0:
        return left, draw(json_values)
    return left, draw_json_similar(draw, left)


@st.composite
def json_sequences(draw: Any, max_size: int = 5) -> list[Any]:
    n = draw(st.integers(0, max_size))
    items: list[Any] = []
    for _ in range(n):
        if items and draw(st.integers(0, 4)):
            items.append(draw_json_similar(draw, items[-1]))
        else:
            items.append(draw(json_values))
    return items


@st.composite
def options(draw: Any) -> dict[str, Any]:
    """Mostly valid option sets; a few invalid ones (by_index/strict with openjiuwen) stay in to
    check that both backends refuse them the same way."""
    policy = draw(st.sampled_from(["openjiuwen", "delta", "delta", "delta"]))
    list_merge = draw(st.sampled_from(["concat", "by_index", "by_index"]))
    strict = draw(st.booleans())
    if policy == "openjiuwen" and draw(st.integers(0, 5)) > 0:
        list_merge, strict = "concat", False
    return {"policy": policy, "list_merge": list_merge, "strict": strict}


bad_options = st.one_of(
    st.fixed_dictionaries({"policy": st.sampled_from(["", "Delta", "bogus", 1, None, b"delta"])}),
    st.fixed_dictionaries({"list_merge": st.sampled_from(["", "BY_INDEX", 0, None])}),
    st.fixed_dictionaries({"strict": st.sampled_from([0, 1, None, "yes"])}),
)


# ---------------------------------------------------------------------------------------------
# JSON text at the edges of numbers and characters (event reading, anomaly details)

#: Number tokens both backends must read alike: ``-0`` is the int 0 (``-0.0`` the float), ints
#: past 64 bits are the nearest float, and floats whose ``repr`` is scientific (``1e+20``,
#: ``1e-07``) or nearly so.
json_number_texts = st.one_of(
    st.sampled_from(
        [
            "-0",
            "0",
            "-0.0",
            "-0e0",
            "-1e-400",
            "1e20",
            "1e-7",
            "1e16",
            "1e15",
            "0.0001",
            "0.00001",
            "123456789.125",
            "5e-324",
            "1.7976931348623157e308",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "-9223372036854775809",
            "18446744073709551616",
            "100000000000000000000000",
        ]
    ),
    st.integers(-(2**70), 2**70).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
)

#: Characters ``repr`` escapes (``str.isprintable`` is false: line and paragraph separators,
#: the BOM, no-break and other spaces, format and private-use characters, unassigned code
#: points) and some it keeps.
edge_chars = st.sampled_from(
    [
        "\u2028",
        "\u2029",
        "\ufeff",
        "\xa0",
        "\x85",
        "\xad",
        "\u200b",
        "\u061c",
        "\u3000",
        "\ue000",
        "\u0378",
        "\U000e0001",
        "\U0010ffff",
        "\x7f",
        "\x00",
        "\x1b",
        "é",
        "👋",
        "'",
        '"',
        "\\",
        "\n",
    ]
)
edge_text = st.lists(
    st.one_of(edge_chars, st.characters(exclude_categories=["Cs"])), max_size=6
).map("".join)
