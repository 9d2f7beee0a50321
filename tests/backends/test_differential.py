"""The Rust extension against its pure-Python twin (DESIGN "Byte-identical contract"): for every
input and every option, the same result (``canonical``: identical types at every node; and the
same ``orjson.dumps`` bytes wherever orjson can serialize it) or the same exception class with
the same message.

Tests marked ``differential`` take both modules from the ``both`` fixture and run once (they are
skipped only when the Rust backend is not under test). The ``merge_all == reduce(merge)`` checks
at the end hold for each backend on its own, and check every backend under test.
"""

from __future__ import annotations

import functools
from types import ModuleType
from typing import Any

import orjson
import pytest
from _support.values import (
    Inner,
    bad_options,
    draw_json_similar,
    indexed_element,
    json_pairs,
    json_scalars,
    json_sequences,
    json_values,
    options,
    pairs,
    sequences,
    values,
)
from conftest import MODULES, canonical, outcome
from hypothesis import given
from hypothesis import strategies as st

import fastmerge

# see test_parity_openjiuwen.py: pydantic's deprecation warning would mask every model merge
pytestmark = pytest.mark.filterwarnings(
    "ignore:Accessing the 'model_fields' attribute on the instance:DeprecationWarning"
)

Both = tuple[ModuleType, ModuleType]


def _dumps(value: Any) -> tuple[str, Any]:
    try:
        return ("bytes", orjson.dumps(value))
    except (orjson.JSONEncodeError, TypeError) as exc:
        return ("error", type(exc))


def _compare(both: Both, name: str, *args: Any, **kwargs: Any) -> None:
    rust, python = both
    before = canonical(args)
    results: list[Any] = []

    def call(module: ModuleType) -> tuple[Any, ...]:
        try:
            result = getattr(module, name)(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the exception is the outcome
            return ("raise", type(exc), str(exc))
        results.append(result)
        return ("ok", canonical(result))

    got_rust = call(rust)
    assert canonical(args) == before, f"rust {name} mutated its input"
    got_python = call(python)
    assert canonical(args) == before, f"python {name} mutated its input"
    assert got_rust == got_python
    if len(results) == 2:
        assert _dumps(results[0]) == _dumps(results[1])


# --- merge ---------------------------------------------------------------------------------


@pytest.mark.differential
@given(json_pairs(), options())
def test_merge_json(both: Both, pair: tuple[Any, Any], opts: dict[str, Any]) -> None:
    _compare(both, "merge", *pair, **opts)


@pytest.mark.differential
@given(pairs(), options())
def test_merge_python_values(both: Both, pair: tuple[Any, Any], opts: dict[str, Any]) -> None:
    _compare(both, "merge", *pair, **opts)


@st.composite
def tool_call_chunks(draw: Any) -> list[Any]:
    """Chunks of ``{"tool_calls": [...]}`` whose elements carry an int ``index`` and maybe an
    ``id``: what ``list_merge="by_index"`` is for (E11-E14)."""
    element = indexed_element(
        st.one_of(
            json_scalars,
            st.dictionaries(
                st.sampled_from(["name", "arguments"]), st.text('{}ab":', max_size=3), max_size=2
            ),
        )
    )
    chunks = draw(
        st.lists(
            st.fixed_dictionaries(
                {"tool_calls": st.lists(element, max_size=3)},
                optional={
                    "content": st.text("ab", max_size=2),
                    "role": st.sampled_from(["assistant", "", None]),
                },
            ),
            min_size=1,
            max_size=5,
        )
    )
    return chunks


@pytest.mark.differential
@given(tool_call_chunks(), st.booleans())
def test_by_index(both: Both, chunks: list[Any], strict: bool) -> None:
    opts = {"policy": "delta", "list_merge": "by_index", "strict": strict}
    _compare(both, "merge_all", chunks, **opts)
    for left, right in zip(chunks, chunks[1:]):
        _compare(both, "merge", left, right, **opts)
        _compare(both, "merge", left["tool_calls"], right["tool_calls"], **opts)


@pytest.mark.differential
@given(json_pairs(), bad_options)
def test_bad_options(both: Both, pair: tuple[Any, Any], bad: dict[str, Any]) -> None:
    _compare(both, "merge", *pair, **bad)
    _compare(both, "merge_all", list(pair), **bad)


@pytest.mark.differential
@pytest.mark.parametrize(
    "args, kwargs",
    [
        ((), {}),
        (({"a": 1},), {}),
        (({"a": 1}, {"b": 2}, "delta"), {}),
        (({"a": 1}, {"b": 2}), {"bogus": 1}),
        (({"a": 1}, {"b": 2}), {"policy": "delta", "strict": True, "list_merge": "x"}),
        (({"a": 1}, {"b": 2}), {"policy": "openjiuwen", "strict": True, "list_merge": "by_index"}),
    ],
)
def test_bad_calls(both: Both, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Wrong arity or unknown keywords: a TypeError on both (the message may differ between a
    compiled function and a Python one, so only the class is compared here)."""
    rust, python = both
    outcomes = []
    for module in (rust, python):
        try:
            module.merge(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001
            outcomes.append(type(exc))
        else:
            outcomes.append(None)
    assert outcomes[0] == outcomes[1]
    assert outcomes[0] is not None


# --- merge_all -----------------------------------------------------------------------------


@pytest.mark.differential
@given(json_sequences(), options())
def test_merge_all_json(both: Both, items: list[Any], opts: dict[str, Any]) -> None:
    _compare(both, "merge_all", items, **opts)


@pytest.mark.differential
@given(sequences(), options())
def test_merge_all_python_values(both: Both, items: list[Any], opts: dict[str, Any]) -> None:
    _compare(both, "merge_all", items, **opts)


@pytest.mark.differential
@given(json_sequences(max_size=4))
def test_merge_all_iterables(both: Both, items: list[Any]) -> None:
    rust, python = both
    assert outcome(rust.merge_all, iter(items)) == outcome(python.merge_all, iter(items))
    assert outcome(rust.merge_all, tuple(items)) == outcome(python.merge_all, tuple(items))
    assert outcome(rust.merge_all, (x for x in items)) == outcome(
        python.merge_all, (x for x in items)
    )


# --- merge_dicts and the helpers -------------------------------------------------------------

_any = st.one_of(values, json_values)


@pytest.mark.differential
@given(st.one_of(json_pairs(), pairs()))
def test_merge_dicts(both: Both, pair: tuple[Any, Any]) -> None:
    _compare(both, "merge_dicts", *pair)


@pytest.mark.differential
@given(st.one_of(json_pairs(), pairs(), st.tuples(_any, _any)))
def test_helpers(both: Both, pair: tuple[Any, Any]) -> None:
    _compare(both, "concat_token_ids", *pair)
    _compare(both, "merge_logprobs", *pair)


# --- constants -------------------------------------------------------------------------------


@pytest.mark.differential
def test_same_constants(both: Both) -> None:
    rust, python = both
    for name in ("MAX_DEPTH", "POLICIES", "LIST_MERGES", "ATOMIC_KEYS", "__version__"):
        assert canonical(getattr(rust, name)) == canonical(getattr(python, name)), name


# --- merge_all == reduce(merge), for every backend under test -------------------------------
# (each example checks every backend: generating inputs costs more than merging them)


def _check_reduce(items: list[Any], opts: dict[str, Any]) -> None:
    for backend, module in MODULES.items():
        assert outcome(module.merge_all, items, **opts) == outcome(_reduce, module, items, opts), (
            backend
        )


def _reduce(module: ModuleType, items: list[Any], opts: dict[str, Any]) -> Any:
    """``functools.reduce(merge, items)``; for fewer than two items reduce never calls merge,
    so the options are checked by a merge with nothing to do (``merge_all`` refuses bad options
    whatever the items), and no item gives None (spec §1.3)."""
    if len(items) < 2:
        module.merge(None, None, **opts)
        return items[0] if items else None
    return functools.reduce(functools.partial(module.merge, **opts), items)


@pytest.mark.single_run
@given(json_sequences(max_size=6), options())
def test_merge_all_is_reduce_json(items: list[Any], opts: dict[str, Any]) -> None:
    _check_reduce(items, opts)


@pytest.mark.single_run
@given(sequences(max_size=6), options())
def test_merge_all_is_reduce_python_values(items: list[Any], opts: dict[str, Any]) -> None:
    _check_reduce(items, opts)


@st.composite
def by_index_sequences(draw: Any) -> list[Any]:
    """Lists of indexed elements that keep coming back to the same few indexes and ids."""
    element = st.builds(
        lambda index, id_, text, drop_id: (
            {"index": index, "t": text} if drop_id else {"index": index, "id": id_, "t": text}
        ),
        st.integers(0, 2),
        st.sampled_from(["a", "b", "", "null", None]),
        st.text("xy", max_size=2),
        st.booleans(),
    )
    first = draw(st.lists(element, max_size=3))
    items = [first]
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            items.append(draw_json_similar(draw, items[-1]))
        else:
            items.append(draw(st.lists(element, max_size=3)))
    return items


@pytest.mark.single_run
@given(by_index_sequences(), st.booleans())
def test_merge_all_is_reduce_by_index(items: list[Any], nested: bool) -> None:
    if nested:
        items = [{"tool_calls": x} for x in items]
    _check_reduce(items, {"policy": "delta", "list_merge": "by_index"})


@pytest.mark.parametrize("policy", ["openjiuwen", "delta"])
def test_merge_all_is_reduce_explicit(policy: str) -> None:
    items: list[Any] = [
        {"a": "x", "l": [1], "m": Inner(text="p")},
        {"a": "y", "l": [2], "d": {"k": "1"}, "m": Inner(text="q")},
        None,
        {"d": {"k": "2", "z": None}, "a": None},
        {"l": (3,), "d": {"k": ["no"]}},
    ]
    opts = {"policy": policy}
    assert outcome(fastmerge.merge_all, items, **opts) == outcome(_reduce, fastmerge, items, opts)
