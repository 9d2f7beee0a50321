"""Hostile input: deep nesting, cycles, huge strings; inputs never mutated; results never
sharing a container the merge built or changed (DESIGN "Errors and bad input", spec §1.1,
edge-cases E16, E17).

Inputs that could crash a broken backend (a Rust stack overflow, an endless loop over a cycle,
memory blow-up) run in a subprocess per backend, so a crash fails one test instead of ending
the session.
"""

from __future__ import annotations

import json
import sys
from types import ModuleType
from typing import Any, Iterator

import pytest
from _support.values import Inner, json_sequences, options, pairs, sequences
from conftest import MODULES, assert_isolated_ok, canonical, outcome
from hypothesis import given
from hypothesis import strategies as st

import fastmerge
from fastmerge import DepthLimitError

POLICIES = ["openjiuwen", "delta"]

#: pydantic >= 2.11 warns when ``model_fields`` is read on an instance, which openJiuwen's
#: ``hasattr(left, 'model_fields')`` -- and so both backends -- do on every model merge. With
#: filterwarnings=error that would turn every model merge into that exception, on both sides
#: of a comparison; test_parity_openjiuwen.py checks the warnings themselves separately.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Accessing the 'model_fields' attribute on the instance:DeprecationWarning"
)


def nest(levels: int, leaf: Any, key: Any = "a") -> Any:
    value = leaf
    for _ in range(levels):
        value = {key: value}
    return value


@pytest.fixture
def deep_stack() -> Iterator[None]:
    """canonical() and openJiuwen recurse once per level: give them room at MAX_DEPTH."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20_000))
    yield
    sys.setrecursionlimit(old)


# ---------------------------------------------------------------------------------------------
# Depth


def test_max_depth_is_256() -> None:
    assert fastmerge.MAX_DEPTH == 256


def test_exactly_max_depth_works_like_openjiuwen(oj: ModuleType, deep_stack: None) -> None:
    depth = fastmerge.MAX_DEPTH
    left, right = nest(depth, "x"), nest(depth, "y")
    expected = oj.merge_parser_content(left, right)
    got = fastmerge.merge(left, right)
    assert canonical(got) == canonical(expected)
    assert canonical(got) == canonical(nest(depth, "xy"))
    assert canonical(fastmerge.merge_dicts(left, right)) == canonical(oj.merge_dicts(left, right))
    assert canonical(fastmerge.merge_all([left, right, left])) == canonical(nest(depth, "xyx"))
    assert canonical(fastmerge.merge(left, right, policy="delta")) == canonical(expected)


@pytest.mark.parametrize("policy", POLICIES)
def test_one_level_deeper_raises(policy: str) -> None:
    depth = fastmerge.MAX_DEPTH + 1
    left, right = nest(depth, "x"), nest(depth, "y")
    for call in (
        lambda: fastmerge.merge(left, right, policy=policy),
        lambda: fastmerge.merge_all([left, right], policy=policy),
        lambda: fastmerge.merge_all([left, {}, right], policy=policy),
    ):
        with pytest.raises(DepthLimitError) as info:
            call()
        assert str(fastmerge.MAX_DEPTH) in str(info.value)
        assert info.value.limit == fastmerge.MAX_DEPTH
        assert isinstance(info.value, ValueError)
    with pytest.raises(DepthLimitError, match=str(fastmerge.MAX_DEPTH)):
        fastmerge.merge_dicts(left, right)


def test_depth_counts_dict_levels_through_by_index_lists() -> None:
    """A list between two dict levels does not hide the depth."""
    element = {"index": 0, "v": nest(fastmerge.MAX_DEPTH, "x")}
    with pytest.raises(DepthLimitError):
        fastmerge.merge({"l": [element]}, {"l": [element]}, policy="delta", list_merge="by_index")


def test_depth_inside_a_pydantic_model_raises() -> None:
    """The model rule's "rebuild failed -> right" must not swallow the depth limit."""
    deep = nest(fastmerge.MAX_DEPTH + 40, "x")
    with pytest.raises(DepthLimitError):
        fastmerge.merge(Inner(extra=deep), Inner(extra=deep))


def test_depth_inside_a_pydantic_model_below_the_limit(oj: ModuleType, deep_stack: None) -> None:
    left, right = Inner(extra=nest(200, "x")), Inner(extra=nest(200, "y"))
    assert canonical(fastmerge.merge(left, right)) == canonical(
        oj.merge_parser_content(left, right)
    )


_DEEP_HELPERS = """
import sys, fastmerge
from fastmerge import DepthLimitError, CycleError
def nest(levels, leaf, key="a", kind=dict):
    value = leaf
    for _ in range(levels):
        value = {key: value} if kind is dict else [value]
    return value
def expect(exc_type, call):
    try:
        call()
    except exc_type as exc:
        return exc
    raise AssertionError(f"no {exc_type.__name__}")
def chain_is(value, inner, levels, key="a"):
    # walk down without recursion: `levels` dict levels, then the very object `inner`
    for _ in range(levels):
        assert type(value) is dict and list(value) == [key], type(value)
        value = value[key]
    return value is inner
"""


@pytest.mark.parametrize("policy", POLICIES)
def test_e16_2000_levels_raise_depth_limit(backend_name: str, policy: str) -> None:
    assert_isolated_ok(
        backend_name,
        _DEEP_HELPERS
        + f"""
a, b = nest(2000, "x"), nest(2000, "y")
for call in (lambda: fastmerge.merge(a, b, policy={policy!r}),
             lambda: fastmerge.merge_all([a, b], policy={policy!r}),
             lambda: fastmerge.merge_all([b, a, b], policy={policy!r}),
             lambda: fastmerge.merge_dicts(a, b)):
    exc = expect(DepthLimitError, call)
    assert not isinstance(exc, RecursionError)
    assert str(fastmerge.MAX_DEPTH) in str(exc)
# the interpreter is still usable afterwards
assert fastmerge.merge({{"a": "x"}}, {{"a": "y"}}, policy={policy!r}) == {{"a": "xy"}}
""",
    )


@pytest.mark.parametrize("policy", POLICIES)
def test_deep_values_never_recursed_into_pass_through(backend_name: str, policy: str) -> None:
    """openJiuwen never descends into a value only one side has: 100,000 levels there are
    fine (no recursion, no depth limit), and the result holds that value as openJiuwen does."""
    assert_isolated_ok(
        backend_name,
        _DEEP_HELPERS
        + f"""
sys.setrecursionlimit(1000)
leaf = ["leaf"]
deep = nest(100_000, leaf)
deep_list = nest(100_000, leaf, kind=list)
r = fastmerge.merge({{}}, {{"k": deep}}, policy={policy!r})
assert list(r) == ["k"] and chain_is(r["k"], leaf, 100_000)
r = fastmerge.merge({{"k": deep}}, {{"j": 1}}, policy={policy!r})
assert list(r) == ["k", "j"] and chain_is(r["k"], leaf, 100_000)
r = fastmerge.merge({{"k": "x"}}, {{"k": deep}}, policy={policy!r})
assert chain_is(r["k"], leaf, 100_000)
r = fastmerge.merge([1], [deep_list], policy={policy!r})
assert len(r) == 2 and r[0] == 1
inner = r[1]
for _ in range(100_000):
    assert type(inner) is list and len(inner) == 1
    inner = inner[0]
assert inner is leaf
r = fastmerge.merge(deep, None, policy={policy!r})
assert chain_is(r, leaf, 100_000)
r = fastmerge.merge_all([{{}}, {{"k": deep}}, {{"j": deep_list}}], policy={policy!r})
assert list(r) == ["k", "j"] and chain_is(r["k"], leaf, 100_000)
""",
    )


# ---------------------------------------------------------------------------------------------
# Cycles


@pytest.mark.parametrize("policy", POLICIES)
def test_self_referencing_dicts_raise_cycle_error(backend_name: str, policy: str) -> None:
    assert_isolated_ok(
        backend_name,
        _DEEP_HELPERS
        + f"""
a = {{}}
a["x"] = a
for call in (lambda: fastmerge.merge(a, a, policy={policy!r}),
             lambda: fastmerge.merge({{"x": {{}}}}, a, policy={policy!r}),
             lambda: fastmerge.merge_all([a, a], policy={policy!r}),
             lambda: fastmerge.merge_all([{{"x": {{}}}}, a], policy={policy!r}),
             lambda: fastmerge.merge_dicts(a, a)):
    exc = expect(CycleError, call)
    assert isinstance(exc, ValueError)
    assert "self-referencing" in str(exc) or "contains itself" in str(exc), exc
# mutual recursion: b -> c -> b
b, c = {{}}, {{}}
b["c"], c["b"] = c, b
expect(CycleError, lambda: fastmerge.merge(b, b, policy={policy!r}))
""",
    )


def test_self_referencing_by_index_element_raises(backend_name: str) -> None:
    assert_isolated_ok(
        backend_name,
        _DEEP_HELPERS
        + """
d = {"index": 0}
d["self"] = d
expect(CycleError, lambda: fastmerge.merge([d], [d], policy="delta", list_merge="by_index"))
""",
    )


@pytest.mark.parametrize("policy", POLICIES)
def test_cycles_never_recursed_into_work_like_openjiuwen(backend_name: str, policy: str) -> None:
    assert_isolated_ok(
        backend_name,
        _DEEP_HELPERS
        + f"""
sys.path.insert(0, {str(__import__("pathlib").Path(__file__).parents[1])!r})
from conftest import canonical, load_openjiuwen
oj = load_openjiuwen()
a = {{}}
a["x"] = a
lst = []
lst.append(lst)
cases = [
    ({{}}, a),              # merge({{}}, a): a's keys are copied, never merged
    ({{"y": 1}}, a),
    (a, {{"x": {{}}}}),      # cyclic left, finite right: the recursion stops at the right
    (a, {{"z": 1}}),
    (a, None), (None, a),
    (lst, lst),            # list + list never descends
    ({{"k": lst}}, {{"k": lst}}),
    ({{"k": a}}, {{"j": a}}),
]
for left, right in cases:
    got = fastmerge.merge(left, right, policy={policy!r})
    if {policy!r} == "openjiuwen":
        expected = oj.merge_parser_content(left, right)
        assert canonical(got) == canonical(expected), (canonical(got), canonical(expected))
    else:
        assert canonical(got) == canonical(fastmerge.merge(left, right)), canonical(got)
got = fastmerge.merge_all([{{}}, a, {{"y": 2}}], policy={policy!r})
assert canonical(got) == canonical({{"x": a, "y": 2}})
""",
    )


# ---------------------------------------------------------------------------------------------
# Huge strings: peak memory under 3x the inputs

_MEMORY_PROBE = """
import gc, json, re, sys, tracemalloc
import fastmerge

def status(field):
    with open("/proc/self/status") as f:
        return int(re.search(field + r":\\s+(\\d+) kB", f.read()).group(1)) * 1024

CHAR = {char!r}
N = {size} // len(CHAR.encode("utf-32-le")) * 4 // {width}
left = CHAR * N
right = CHAR.upper() * N if CHAR.isalpha() else CHAR * N
inputs = sys.getsizeof(left) + sys.getsizeof(right)
case = {case!r}
if case == "pair":
    run = lambda: fastmerge.merge(left, right)
elif case == "dict":
    run = lambda: fastmerge.merge({{"content": left}}, {{"content": right}})["content"]
else:  # 64 pieces folded by merge_all
    step = len(left) // 32
    pieces = [left[i:i + step] for i in range(0, len(left), step)]
    pieces += [right[i:i + step] for i in range(0, len(right), step)]
    inputs = sum(sys.getsizeof(p) for p in pieces)
    del left, right
    run = lambda: fastmerge.merge_all(pieces)
gc.collect()
try:  # reset the high-water mark, so it measures the merge alone
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
except OSError:
    pass
base = status("VmRSS")
trace = fastmerge.BACKEND == "python"
if trace:
    tracemalloc.start()
out = run()
traced_peak = tracemalloc.get_traced_memory()[1] if trace else None
if trace:
    tracemalloc.stop()
peak = status("VmHWM") - base
assert type(out) is str and len(out) == 2 * N, (type(out), len(out))
print(json.dumps({{"inputs": inputs, "rss_peak": peak, "traced_peak": traced_peak}}))
"""


@pytest.mark.parametrize("case", ["pair", "dict", "merge_all"])
@pytest.mark.parametrize("char, width", [("a", 1), ("\U0001f600", 4)], ids=["ascii", "ucs4"])
def test_100mb_string_merge_peak_memory(
    backend_name: str, case: str, char: str, width: int
) -> None:
    """Merging 100 MB of strings: inputs + peak extra stay under 3x the inputs (the result
    alone is 1x: at most one more transient copy is allowed)."""
    size = 50 * 2**20  # per side, in bytes of the Python str
    out = assert_isolated_ok(
        backend_name,
        _MEMORY_PROBE.format(char=char, size=size, width=width, case=case),
        timeout=300,
    )
    data = json.loads(out.strip().splitlines()[-1])
    inputs = data["inputs"]
    assert inputs >= 2 * size * 0.99
    total = inputs + data["rss_peak"]
    assert total < 3 * inputs, (
        f"peak RSS {total / 2**20:.0f} MiB for {inputs / 2**20:.0f} MiB of inputs "
        f"(> 3x) [{backend_name}, {case}, {char!r}]"
    )
    if data["traced_peak"] is not None:
        assert inputs + data["traced_peak"] < 3 * inputs, data


# ---------------------------------------------------------------------------------------------
# Inputs never mutated, results never sharing what the merge built


# The hypothesis tests below check every backend under test on each example (generating the
# inputs costs more than merging them), hence ``single_run``.


@pytest.mark.single_run
@given(pairs(), st.sampled_from(POLICIES))
def test_merge_never_mutates_inputs(pair: tuple[Any, Any], policy: str) -> None:
    left, right = pair
    before = canonical(pair)
    for backend, module in MODULES.items():
        outcome(module.merge, left, right, policy=policy)
        assert canonical(pair) == before, backend


@pytest.mark.single_run
@given(sequences(max_size=5), st.sampled_from(POLICIES))
def test_merge_all_never_mutates_inputs(items: list[Any], policy: str) -> None:
    before = canonical(items)
    for backend, module in MODULES.items():
        outcome(module.merge_all, items, policy=policy)
        assert canonical(items) == before, backend


@pytest.mark.single_run
@given(json_sequences(), options())
def test_never_mutates_inputs_with_options(items: list[Any], opts: dict[str, Any]) -> None:
    before = canonical(items)
    for backend, module in MODULES.items():
        outcome(module.merge_all, items, **opts)
        assert canonical(items) == before, backend
        if len(items) >= 2:
            outcome(module.merge, items[0], items[1], **opts)
            assert canonical(items) == before, backend


def _containers(value: Any, seen: set[int]) -> None:
    """Every container reachable from ``value`` (by identity)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, (dict, list, tuple)) and id(v) not in seen:
            seen.add(id(v))
            stack.extend(dict.values(v) if isinstance(v, dict) else v)


def _merged_paths(result: Any, left: Any, right: Any, delta: bool) -> Iterator[Any]:
    """Containers of ``result`` that the merge built from a left and a right container
    (dict+dict, list+list at the same place): those must be new objects."""
    if isinstance(left, dict) and isinstance(right, dict) and isinstance(result, dict):
        yield result
        for key in dict.keys(right):
            if key not in left or key not in result:
                continue
            if delta and isinstance(key, str) and key in fastmerge.ATOMIC_KEYS:
                continue
            lv, rv, res = left[key], dict.__getitem__(right, key), dict.__getitem__(result, key)
            if isinstance(lv, dict) and isinstance(rv, dict):
                yield from _merged_paths(res, lv, rv, delta)
            elif isinstance(lv, list) and isinstance(rv, list):
                yield res
    elif isinstance(left, list) and isinstance(right, list):
        yield result


@pytest.mark.single_run
@given(pairs(), st.sampled_from(POLICIES))
def test_result_never_shares_merged_containers(pair: tuple[Any, Any], policy: str) -> None:
    for module in MODULES.values():
        _check_no_sharing(module, *pair, policy)


def _check_no_sharing(module: ModuleType, left: Any, right: Any, policy: str) -> None:
    pair = (left, right)
    try:
        result = module.merge(left, right, policy=policy)
    except Exception:  # noqa: BLE001 - errors are other tests' business
        return
    inputs: set[int] = set()
    _containers(left, inputs)
    _containers(right, inputs)
    # 1. what the merge combined is a new container, not one of the inputs'
    for built in _merged_paths(result, left, right, policy == "delta"):
        assert id(built) not in inputs, f"result aliases an input container: {built!r}"
    # 2. the containers the merge made appear once in the result (no hidden sharing), and
    #    mutating them leaves the inputs as they were
    before = canonical(pair)
    made: list[Any] = []
    seen: set[int] = set()
    stack = [result]
    while stack:
        v = stack.pop()
        if not isinstance(v, (dict, list)) or id(v) in inputs:
            continue
        assert id(v) not in seen, f"a container built by the merge appears twice: {v!r}"
        seen.add(id(v))
        made.append(v)
        stack.extend(dict.values(v) if isinstance(v, dict) else v)
    for v in made:
        if isinstance(v, dict):
            dict.__setitem__(v, "__mutated__", object())
        else:
            list.append(v, object())
    assert canonical(pair) == before


@pytest.mark.parametrize("policy", POLICIES)
def test_merge_all_result_independent_of_inputs(policy: str) -> None:
    items = [{"a": {"b": "x", "l": [1]}}, {"a": {"b": "y", "l": [2]}}, {"c": [3]}]
    result = fastmerge.merge_all(items, policy=policy)
    for built in (result, result["a"], result["a"]["l"]):
        for item in items:
            assert built is not item and built is not item.get("a")
    result["a"]["l"].append(99)
    result["c"].append(4)  # ``c`` came from one item only: openJiuwen shares it too
    assert items[0] == {"a": {"b": "x", "l": [1]}} and items[1] == {"a": {"b": "y", "l": [2]}}


def test_repeated_calls_are_independent() -> None:
    """A result is not reused or extended by a later call (no hidden caches)."""
    left, right = {"s": "a", "l": [1]}, {"s": "b", "l": [2]}
    first = fastmerge.merge(left, right)
    second = fastmerge.merge(left, right)
    assert first is not second and first["l"] is not second["l"]
    first["l"].append(3)
    assert second == {"s": "ab", "l": [1, 2]}
    acc = fastmerge.merge_all([left, right])
    acc2 = fastmerge.merge_all([acc, {"s": "c"}])
    assert acc == {"s": "ab", "l": [1, 2]} and acc2 == {"s": "abc", "l": [1, 2]}
