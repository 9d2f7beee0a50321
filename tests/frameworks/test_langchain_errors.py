"""The ``langchain`` policy's errors are LangChain's, of LangChain's class only: where LangChain
raises ``ValueError`` (unequal values, ``add_usage``) fastmerge's error is no ``TypeError``, so
it reaches the run through LangChain's stream aggregator (which catches ``TypeError`` around
chunk ``+`` and keeps the last chunk); where LangChain raises ``TypeError`` (``merge_dicts``,
values of two types) it is no ``ValueError``, and the aggregator goes on as it does with
LangChain's own chunks. Both backends."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

pytest.importorskip("langchain_core")

from langchain_core.messages import AIMessageChunk  # noqa: E402
from langchain_core.runnables import RunnableGenerator, RunnableLambda  # noqa: E402

import fastmerge  # noqa: E402
from fastmerge.errors import (  # noqa: E402
    MergeConflictError,
    MergeConflictTypeError,
    MergeConflictValueError,
    MergeError,
    langchain_conflict,
)
from fastmerge.langchain import merge_chunks  # noqa: E402


class FastChunk(AIMessageChunk):
    """An ``AIMessageChunk`` whose ``+`` is fastmerge's (what a framework swapping in
    ``merge_chunks`` for LangChain's addition does)."""

    def __add__(self, other: Any) -> Any:
        if isinstance(other, AIMessageChunk):
            return merge_chunks([self, other])
        if isinstance(other, list):
            return merge_chunks([self, *other])
        return super().__add__(other)


def _usage_conflict(cls: type[AIMessageChunk]) -> list[AIMessageChunk]:
    """Usage LangChain's ``add_usage`` refuses (ValueError): a str beside a dict of ints."""
    return [
        cls(
            content="a",
            usage_metadata={
                "input_tokens": 1,
                "output_tokens": 0,
                "total_tokens": 1,
                "input_token_details": {"cache_read": 1},
            },
        ),
        cls(
            content="b",
            usage_metadata={"input_tokens": 1, "output_tokens": 0, "total_tokens": 1, "extra": "x"},  # type: ignore[typeddict-unknown-key]
        ),
    ]


def _kwargs_conflict(cls: type[AIMessageChunk]) -> list[AIMessageChunk]:
    """additional_kwargs LangChain's ``merge_dicts`` refuses (TypeError): an int, then a str."""
    return [
        cls(content="a", additional_kwargs={"k": 1}),
        cls(content="b", additional_kwargs={"k": "x"}),
        cls(content="c"),
    ]


def _run(chunks: list[AIMessageChunk]) -> Any:
    """A run whose generator streams the chunks into a step that takes their sum: LangChain's
    stream aggregator adds them."""

    def generate(_: Any) -> Any:
        yield from chunks

    chain = RunnableGenerator(generate) | RunnableLambda(lambda message: message)
    try:
        return ("ok", [(m.content, m.additional_kwargs) for m in chain.stream(None)])
    except (TypeError, ValueError) as exc:
        kinds = tuple(k.__name__ for k in (TypeError, ValueError) if isinstance(exc, k))
        return ("error", kinds, str(exc))


def test_value_error_reaches_the_run() -> None:
    theirs = _run(_usage_conflict(AIMessageChunk))
    assert theirs[:2] == ("error", ("ValueError",))
    assert _run(_usage_conflict(FastChunk)) == theirs
    with pytest.raises(MergeConflictValueError) as ours:
        merge_chunks(_usage_conflict(AIMessageChunk))
    assert not isinstance(ours.value, TypeError)
    assert isinstance(ours.value, MergeError) and ours.value.code == "usage_types"


def test_type_error_is_passed_over_as_langchain_does() -> None:
    theirs = _run(_kwargs_conflict(AIMessageChunk))
    assert theirs[0] == "ok"  # LangChain's aggregator kept going
    assert _run(_kwargs_conflict(FastChunk)) == theirs
    with pytest.raises(MergeConflictTypeError) as ours:
        merge_chunks(_kwargs_conflict(AIMessageChunk))
    assert not isinstance(ours.value, ValueError)
    assert ours.value.code == "kwargs_type"


@pytest.mark.parametrize(
    ("code", "values", "kind"),
    [
        ("kwargs_type", ("k",), TypeError),
        ("kwargs_unsupported", ("k", 1.5), TypeError),
        ("types", ("a", 1), TypeError),
        ("unequal", (1, 2), ValueError),
        ("usage_types", ("x",), ValueError),
        ("usage_depth", (), ValueError),
    ],
)
def test_each_rule_has_langchains_class(code: str, values: tuple[Any, ...], kind: type) -> None:
    error = langchain_conflict(code, *values)
    assert isinstance(error, MergeConflictError) and isinstance(error, kind)
    assert not isinstance(error, ValueError if kind is TypeError else TypeError)
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error)
    assert (again.code, str(again)) == (code, str(error))


def test_both_backends_raise_the_same_class() -> None:
    with pytest.raises(MergeConflictValueError, match="Unable to merge left=1 and right=2"):
        fastmerge.merge(1, 2, policy="langchain")
    with pytest.raises(MergeConflictTypeError, match="different types"):
        fastmerge.merge("a", 1, policy="langchain")


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (b'{"a": 1}\n{"a": "x"}\n', 'additional_kwargs["a"] already exists in this message'),
        (b"1\n2\n", "Unable to merge left=1 and right=2"),
    ],
)
def test_cli_reports_either_class(backend_name: str, lines: bytes, message: str) -> None:
    from _support.cli import assert_fails, fastmerge_cli

    proc = fastmerge_cli(backend_name, "merge", "--policy", "langchain", "-", stdin=lines)
    err = assert_fails(proc)
    assert err.startswith(f"fastmerge: error: <stdin>: cannot merge: {message}")
    assert "Traceback" not in err
