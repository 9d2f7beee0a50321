"""``fastmerge.batch.json_line``: on both backends exactly the bytes of ``json.dumps(value,
ensure_ascii=False, separators=(",", ":"))`` and a newline (ASCII with escapes when a lone
surrogate has no UTF-8 form), or the same error. The Rust backend writes plain data itself and
steps aside for everything else (subclasses, non-str keys, big ints, deep or circular values),
so both halves of that split are drawn here."""

from __future__ import annotations

import json
import math
import sys
from collections import OrderedDict
from decimal import Decimal
from types import ModuleType
from typing import Any

import pytest
from _support.batch import dumps_line
from _support.values import big_ints, floats, text, values
from hypothesis import given, settings
from hypothesis import strategies as st

reference = dumps_line


def outcome(write: Any, value: Any) -> tuple[str, Any]:
    """What ``write`` gives for ``value``: its bytes, or its error's type and text."""
    try:
        return ("line", write(value))
    except Exception as exc:  # compared as they are: type and message
        return (type(exc).__name__, str(exc))


#: Plain JSON data: the Rust writer's own domain (with non-str keys and big ints mixed in).
plain = st.recursive(
    st.one_of(st.none(), st.booleans(), big_ints, floats, text),
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(text, children, max_size=4),
        st.dictionaries(st.one_of(text, big_ints, floats, st.booleans(), st.none()), children),
    ),
    max_leaves=16,
)


@settings(max_examples=400, deadline=None)
@given(value=plain)
def test_plain_data_is_written_as_json_dumps_writes_it(batch: ModuleType, value: Any) -> None:
    assert outcome(batch.json_line, value) == outcome(reference, value)


@settings(max_examples=300, deadline=None)
@given(value=values)
def test_any_value_gives_json_dumps_line_or_error(batch: ModuleType, value: Any) -> None:
    assert outcome(batch.json_line, value) == outcome(reference, value)


HARD = 'q"b\\s/n\nr\rt\tb\bf\fc\x01\x1f d\x7f é \u2028 \U0001f600 \u00a0 end'


class SubInt(int):
    def __repr__(self) -> str:
        return "sub"


class SubStr(str):
    pass


def circular() -> list[Any]:
    items: list[Any] = [1]
    items.append(items)
    return items


def nested(depth: int) -> Any:
    value: Any = "x"
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


@pytest.mark.parametrize(
    ("value", "line"),
    [
        ({"a": [1, 2.5, None, True, False]}, b'{"a":[1,2.5,null,true,false]}\n'),
        ((1, (2,), []), b"[1,[2],[]]\n"),
        ({}, b"{}\n"),
        ("", b'""\n'),
        (HARD, json.dumps(HARD, ensure_ascii=False).encode() + b"\n"),
        ("x" * 17 + "\x00" + "y" * 9, b'"' + b"x" * 17 + b"\\u0000" + b"y" * 9 + b'"\n'),
        (
            [math.nan, math.inf, -math.inf, -0.0, 1e16, 1e-7, 0.1],
            b"[NaN,Infinity,-Infinity,-0.0,1e+16,1e-07,0.1]\n",
        ),
        (
            [2**63 - 1, -(2**63), 2**63, -(2**63) - 1],
            b"[9223372036854775807,"
            b"-9223372036854775808,9223372036854775808,-9223372036854775809]\n",
        ),
        ({7: "a", 2.5: "b", True: "c", None: "d"}, b'{"7":"a","2.5":"b","true":"c","null":"d"}\n'),
        (OrderedDict(b=1, a=2), b'{"b":1,"a":2}\n'),
        ([SubInt(3), SubStr("s")], b'[3,"s"]\n'),
        ({"\ud800": "\U0001f600"}, b'{"\\ud800":"\\ud83d\\ude00"}\n'),
        (nested(199), reference(nested(199))),
        (nested(260), reference(nested(260))),
    ],
)
def test_lines(batch: ModuleType, value: Any, line: bytes) -> None:
    assert batch.json_line(value) == line == reference(value)


@pytest.mark.parametrize(
    "value",
    [circular(), {"a": Decimal("1.5")}, [object()], {(1, 2): 3}, 10**5000, nested(5000)],
    ids=["circular", "decimal", "object", "tuple-key", "huge-int", "too-deep"],
)
def test_errors_are_json_dumps_errors(batch: ModuleType, value: Any) -> None:
    got = outcome(batch.json_line, value)
    assert got[0] != "line"
    assert got == outcome(reference, value)


def test_the_value_is_not_changed(batch: ModuleType) -> None:
    value = {"k": [1, {"t": HARD}], "n": None}
    before = repr(value)
    batch.json_line(value)
    assert repr(value) == before


def test_rust_writes_plain_data_and_steps_aside_for_the_rest(
    batch: ModuleType, backend_name: str
) -> None:
    """The split itself (the lines above hold either way): Rust writes plain data, and gives
    None (json.dumps' turn) for what it does not write alike; the twin is json.dumps alone."""
    fast = batch.lines._fast_line
    if backend_name != "rust":
        assert fast is None
        return
    plain_value = {"t": HARD, "n": [1, -2.5, None, True], "e": ()}
    assert fast(plain_value) == reference(plain_value)
    for other in ([SubInt(1)], {1: 2}, [2**64], ["\udc00"], nested(260), OrderedDict(a=1)):
        assert fast(other) is None


def _depth() -> int:
    """The frames on the stack here."""
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


@pytest.mark.parametrize("nesting", [0, 5, 60, 150])
@pytest.mark.parametrize("room", [10, 12, 15, 20, 60, 100, 160, 170])
def test_the_recursion_limit_holds_as_for_json_dumps(
    batch: ModuleType, nesting: int, room: int
) -> None:
    """Near the interpreter's recursion limit, the line or ``json.dumps``'s
    ``RecursionError``, whichever ``json.dumps`` gives there: the Rust walk, which uses no
    Python frames, steps aside where ``json.dumps`` could not nest that deep."""
    value: Any = "leaf"
    for _ in range(nesting):
        value = [value]
    limit = sys.getrecursionlimit()
    # the same stack depth for both calls, `room` levels below the limit (and a few more:
    # the interpreter counts a little more than the frames)
    sys.setrecursionlimit(_depth() + room)
    try:
        got, expected = outcome(batch.json_line, value), outcome(reference, value)
    finally:
        sys.setrecursionlimit(limit)
    assert got == expected
