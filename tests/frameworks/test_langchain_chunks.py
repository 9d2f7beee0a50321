"""``fastmerge.langchain.merge_chunks`` against ``reduce(operator.add, chunks)`` over
``AIMessageChunk``: langchain-core's own ``AIMessageChunk`` addition tests (``test_messages.py``)
ported; the corpus streams (``tests/corpus/openai_chat``, ``anthropic_messages``) turned into
chunks by langchain-openai's and langchain-anthropic's own conversion and by
``BaseChatModel.stream`` around them (v0 and v1 output); hypothesis: random chunk sequences,
dicts and contents, the same value or the same error. Every test runs on both backends."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import pytest
from conftest import canonical
from hypothesis import given, settings
from hypothesis import strategies as st

import fastmerge

pytest.importorskip("langchain_core")
from _support.langchain import (
    HYPOTHESIS,
    STREAMS,
    _text_only,
    assert_same_chunk,
    lc_merge,
    outcome,
    raw_chunks,
    reduce_add,
    same_outcome,
    streamed_chunks,
)
from langchain_core.messages import (  # noqa: E402
    AIMessageChunk,
    HumanMessage,
    merge_content,
)
from langchain_core.messages.tool import tool_call as create_tool_call  # noqa: E402
from langchain_core.messages.tool import tool_call_chunk as create_tool_call_chunk  # noqa: E402
from langchain_core.utils._merge import merge_dicts  # noqa: E402

from fastmerge.errors import MergeConflictError  # noqa: E402
from fastmerge.langchain import (  # noqa: E402
    merge_chunks,
)

# ---------------------------------------------------------------------------------------------
# langchain-core test_messages.py: AIMessageChunk addition


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
    assert outcome(merge_chunks, bad) == outcome(reduce_add, bad)
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
    assert outcome(merge_chunks, usage_bad) == outcome(reduce_add, usage_bad)
    assert outcome(reduce_add, usage_bad)[1] == ("ValueError",)


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


@settings(max_examples=150, **HYPOTHESIS)
@given(st.lists(_chunk, min_size=2, max_size=6))
def test_random_chunks_against_langchain(chunks: list[AIMessageChunk]) -> None:
    theirs = outcome(reduce_add, [c.model_copy(deep=True) for c in chunks])
    ours = outcome(merge_chunks, chunks)
    same_outcome(ours, theirs)
    if theirs[0] == "ok":
        assert_same_chunk(ours[1], theirs[1])


@settings(max_examples=300, **HYPOTHESIS)
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


@settings(max_examples=200, **HYPOTHESIS)
@given(st.lists(_content, min_size=1, max_size=5))
def test_random_contents_against_merge_content(contents: list[Any]) -> None:
    theirs = outcome(lambda: merge_content(*copy.deepcopy(contents)))
    ours = outcome(lambda: fastmerge.merge_all(contents, policy="langchain"))
    same_outcome(ours, theirs)
    if theirs[0] == "ok":
        assert canonical(ours[1]) == canonical(theirs[1])


@pytest.mark.differential
@settings(max_examples=150, **HYPOTHESIS)
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
