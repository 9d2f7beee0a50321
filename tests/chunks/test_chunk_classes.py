"""openJiuwen's message-chunk behaviours that the spec keeps (compared with openJiuwen's own
classes), the deliberate differences (both results asserted), and the value semantics of the
chunk, message and part classes: round trips, equality, repr, immutability, inputs never
mutated, pickling, ``sum`` / ``merge_all`` and associativity.
"""

from __future__ import annotations

import copy
import pickle
import sys
from types import ModuleType
from typing import Any

import pytest
from _support.chunks import summary, tc

import fastmerge

# pydantic's deprecation warning (openJiuwen's merge reads model_fields on instances)
pytestmark = pytest.mark.filterwarnings(
    "ignore:Accessing the 'model_fields' attribute on the instance:DeprecationWarning"
)


def _oj_usage(oj: ModuleType) -> Any:
    """openJiuwen's pydantic ``UsageMetadata`` (defined beside ``message_chunk``)."""
    return sys.modules[oj.__name__.rsplit(".", 1)[0] + ".message"].UsageMetadata


def _oj_sum(chunks: list[Any]) -> Any:
    acc = chunks[0]
    for item in chunks[1:]:
        acc = acc + item
    return acc


def _calls(calls: Any) -> list[tuple[Any, ...]] | None:
    if calls is None:
        return None
    return [(c.id, c.type, c.name, c.arguments, c.index) for c in calls]


def _both(oj: ModuleType, kwargs_list: list[dict[str, Any]]) -> tuple[Any, Any]:
    """The same chunks folded with fastmerge's and openJiuwen's ``AssistantMessageChunk``."""
    ours = sum(fastmerge.AssistantMessageChunk(**copy.deepcopy(k)) for k in kwargs_list)
    theirs = _oj_sum([oj.AssistantMessageChunk(**copy.deepcopy(k)) for k in kwargs_list])
    return ours, theirs


# ---------------------------------------------------------------------------------------------
# openJiuwen behaviours the spec keeps


@pytest.mark.parametrize(
    "contents",
    [
        ["Hel", "lo", " world"],
        ["", "a", "", "b"],
        ["\ud83d", "\ude00"],
        [[{"type": "text", "text": "a"}], [{"type": "text", "text": "b"}]],
        [[{"type": "image_url", "image_url": {"url": "u"}}], [{"type": "text", "text": "b"}]],
        ["hi", [{"type": "text", "text": "x"}]],
    ],
)
def test_content_concatenation_like_openjiuwen(oj: ModuleType, contents: list[Any]) -> None:
    ours, theirs = _both(oj, [{"content": c} for c in contents])
    if isinstance(contents[0], str) and isinstance(contents[-1], list):
        # E20: openJiuwen drops "hi" (the right list wins); fastmerge keeps it
        assert theirs.content == contents[-1]
        assert ours.content == ["hi", {"type": "text", "text": "x"}]
    else:
        assert ours.content == theirs.content


def test_plain_string_list_items_are_text_deltas(oj: ModuleType) -> None:
    # parts mode (spec §3, E21): a plain str item continues the text part; openJiuwen keeps
    # the list items apart
    ours, theirs = _both(oj, [{"content": ["a"]}, {"content": ["b"]}])
    assert theirs.content == ["a", "b"]
    assert ours.content == ["ab"]


@pytest.mark.parametrize(
    "reasons, expected",
    [
        (["null", "null"], "null"),
        (["stop", "null"], "stop"),
        (["null", "stop"], "stop"),
        (["length", "null", "stop", "null"], "stop"),
    ],
)
def test_null_finish_reason_ignored_like_openjiuwen(
    oj: ModuleType, reasons: list[str], expected: str
) -> None:
    ours, theirs = _both(oj, [{"finish_reason": r} for r in reasons])
    assert theirs.finish_reason == expected
    assert ours.finish_reason == expected
    assert (
        fastmerge.AssistantMessageChunk().finish_reason == oj.AssistantMessageChunk().finish_reason
    )


@pytest.mark.parametrize(
    "ids, expected",
    [(["x", ""], "x"), (["x", "y"], "y"), (["", "y"], "y"), (["x", "", "", "z", ""], "z")],
)
def test_tool_message_chunk_keeps_tool_call_id_like_openjiuwen(
    oj: ModuleType, ids: list[str], expected: str
) -> None:
    ours = sum(
        fastmerge.ToolMessageChunk(tool_call_id=i, content=str(n)) for n, i in enumerate(ids)
    )
    theirs = _oj_sum(
        [oj.ToolMessageChunk(tool_call_id=i, content=str(n)) for n, i in enumerate(ids)]
    )
    assert ours.tool_call_id == theirs.tool_call_id == expected
    assert ours.content == theirs.content == "".join(str(n) for n in range(len(ids)))
    assert ours.role == theirs.role == "tool"


def test_token_ids_like_openjiuwen(oj: ModuleType) -> None:
    kwargs = [
        {"prompt_token_ids": [], "completion_token_ids": [1, 2]},
        {"prompt_token_ids": [9, 8], "completion_token_ids": []},
        {"prompt_token_ids": [7], "completion_token_ids": [3]},
        {"completion_token_ids": [4, 5]},
    ]
    ours, theirs = _both(oj, kwargs)
    assert ours.prompt_token_ids == theirs.prompt_token_ids == [9, 8]  # first non-empty
    assert ours.completion_token_ids == theirs.completion_token_ids == [1, 2, 3, 4, 5]


@pytest.mark.parametrize(
    "logprobs",
    [
        [{"content": [{"token": "a"}]}, {"content": [{"token": "b"}]}],
        [{"content": [{"token": "a"}]}, None, {"content": [{"token": "b"}]}],
        [[{"token": "a"}], [{"token": "b"}]],
        [{"content": [{"token": "a"}], "refusal": []}, {"content": [], "refusal": [{"t": 1}]}],
    ],
)
def test_logprobs_content_lists_like_openjiuwen(oj: ModuleType, logprobs: list[Any]) -> None:
    ours, theirs = _both(oj, [{"logprobs": lp} for lp in logprobs])
    assert ours.logprobs == theirs.logprobs


@pytest.mark.parametrize("other", [1, "x", None, {"content": "x"}, ["x"], 1.5])
def test_add_other_type_raises_like_openjiuwen(oj: ModuleType, other: Any) -> None:
    with pytest.raises(TypeError) as theirs:
        oj.AssistantMessageChunk(content="a") + other
    with pytest.raises(TypeError) as ours:
        fastmerge.AssistantMessageChunk(content="a") + other
    assert (
        str(ours.value) == str(theirs.value) == f"Cannot add AssistantMessageChunk to {type(other)}"
    )


def test_add_other_family_raises_like_openjiuwen(oj: ModuleType) -> None:
    pairs = [
        (
            fastmerge.AssistantMessageChunk(content="a"),
            fastmerge.ToolMessageChunk(tool_call_id="t"),
            oj.AssistantMessageChunk(content="a"),
            oj.ToolMessageChunk(tool_call_id="t"),
        ),
        (
            fastmerge.AssistantMessageChunk(content="a"),
            fastmerge.BaseMessageChunk(role="user", content="b"),
            oj.AssistantMessageChunk(content="a"),
            oj.BaseMessageChunk(role="user", content="b"),
        ),
        (
            fastmerge.ToolMessageChunk(tool_call_id="t"),
            fastmerge.AssistantMessageChunk(content="a"),
            oj.ToolMessageChunk(tool_call_id="t"),
            oj.AssistantMessageChunk(content="a"),
        ),
    ]
    for ours_left, ours_right, oj_left, oj_right in pairs:
        with pytest.raises(TypeError) as theirs:
            oj_left + oj_right
        with pytest.raises(TypeError) as ours:
            ours_left + ours_right
        name = type(ours_left).__name__
        assert str(ours.value) == f"Cannot add {name} to {type(ours_right)}"
        assert str(theirs.value) == f"Cannot add {name} to {type(oj_right)}"


@pytest.mark.parametrize(
    "left, right",
    [
        ("a", "b"),
        (["a"], ["b"]),
        ("a", ["b"]),
        (["a"], "b"),
        ("", "b"),
        ([{"type": "text", "text": "a"}], [{"type": "image_url", "image_url": {"url": "u"}}]),
    ],
)
@pytest.mark.parametrize("names", [(None, None), ("n1", None), (None, "n2"), ("n1", "n2")])
def test_base_message_chunk_rules_like_openjiuwen(
    oj: ModuleType, left: Any, right: Any, names: tuple[Any, Any]
) -> None:
    ours = fastmerge.BaseMessageChunk(role="user", content=left, name=names[0])
    ours = ours + fastmerge.BaseMessageChunk(role="system", content=right, name=names[1])
    theirs = oj.BaseMessageChunk(role="user", content=left, name=names[0])
    theirs = theirs + oj.BaseMessageChunk(role="system", content=right, name=names[1])
    assert (ours.role, ours.content, ours.name) == (theirs.role, theirs.content, theirs.name)
    assert ours.role == "user"
    assert ours.name == (names[0] or names[1])
    assert type(ours) is fastmerge.BaseMessageChunk


def test_base_message_chunk_takes_other_families_like_openjiuwen(oj: ModuleType) -> None:
    ours = fastmerge.BaseMessageChunk(role="user", content="a")
    ours = ours + fastmerge.AssistantMessageChunk(content="b")
    theirs = oj.BaseMessageChunk(role="user", content="a") + oj.AssistantMessageChunk(content="b")
    assert (ours.role, ours.content) == (theirs.role, theirs.content) == ("user", "ab")
    assert type(ours) is fastmerge.BaseMessageChunk


def test_openjiuwen_usage_metadata_accepted(oj: ModuleType) -> None:
    usage = _oj_usage(oj)(input_tokens=10, output_tokens=5, total_tokens=15)
    m = fastmerge.AssistantMessageChunk(usage_metadata=usage)
    # only the fields that were set: openJiuwen's defaults never overwrite counts
    assert m.usage_metadata.to_dict() == {
        "input_tokens": 10,
        "output_tokens": 5,
        "total_tokens": 15,
    }
    assert m.usage_metadata.model_name == usage.model_name == ""


# ---------------------------------------------------------------------------------------------
# Deliberate differences (spec §3–§5, E25, E32, E38, E54, E64, E72)


def _tool_chunks(oj: ModuleType, fragments: list[dict[str, Any]]) -> tuple[list[Any], list[Any]]:
    ours = [
        fastmerge.AssistantMessageChunk(tool_calls=[fastmerge.ToolCall(**f)]) for f in fragments
    ]
    theirs = [oj.AssistantMessageChunk(tool_calls=[oj.ToolCall(**f)]) for f in fragments]
    return ours, theirs


def _frag(index: int, call_id: Any, name: str, args: str, kind: str = "function") -> dict[str, Any]:
    return {"id": call_id, "type": kind, "name": name, "arguments": args, "index": index}


def test_difference_e25_interleaved_calls(oj: ModuleType) -> None:
    fragments = [
        _frag(0, "c1", "f", '{"a"'),
        _frag(1, "c2", "g", '{"b"'),
        _frag(0, None, "", ":1}"),
        _frag(1, None, "", ":2}"),
    ]
    ours, theirs = _tool_chunks(oj, fragments)
    assert _calls(_oj_sum(theirs).tool_calls) == [
        ("c1", "function", "f", '{"a"', 0),
        ("c2", "function", "g", '{"b":1}:2}', 1),
    ]
    assert _calls(sum(ours).tool_calls) == [
        ("c1", "function", "f", '{"a":1}', 0),
        ("c2", "function", "g", '{"b":2}', 1),
    ]


def test_difference_e32_distinct_index_calls(oj: ModuleType) -> None:
    ours, theirs = _tool_chunks(oj, [_frag(0, None, "a", "{"), _frag(1, None, "b", "}")])
    assert _calls(_oj_sum(theirs).tool_calls) == [(None, "function", "a", "{}", 0)]
    assert _calls(sum(ours).tool_calls) == [
        (None, "function", "a", "{", 0),
        (None, "function", "b", "}", 1),
    ]


def test_difference_e38_non_function_type(oj: ModuleType) -> None:
    fragments = [_frag(0, "c1", "f", "a", "custom"), _frag(0, None, "", "b", "custom")]
    ours, theirs = _tool_chunks(oj, fragments)
    assert _calls(_oj_sum(theirs).tool_calls) == [
        ("c1", "custom", "f", "a", 0),
        (None, "custom", "", "b", 1),
    ]
    assert _calls(sum(ours).tool_calls) == [("c1", "custom", "f", "ab", 0)]


def test_difference_e54_zero_usage(oj: ModuleType) -> None:
    usage = _oj_usage(oj)
    full = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
    zero = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    theirs = oj.AssistantMessageChunk(usage_metadata=usage(**full))
    theirs = theirs + oj.AssistantMessageChunk(usage_metadata=usage(**zero))
    assert (theirs.usage_metadata.input_tokens, theirs.usage_metadata.total_tokens) == (0, 0)
    ours = fastmerge.AssistantMessageChunk(usage_metadata=usage(**full))
    ours = ours + fastmerge.AssistantMessageChunk(usage_metadata=usage(**zero))
    assert ours.usage_metadata.to_dict() == full


def test_difference_e64_reasoning_stays_absent(oj: ModuleType) -> None:
    ours, theirs = _both(oj, [{"content": "a"}, {"content": "b"}])
    assert theirs.reasoning_content == ""
    assert ours.reasoning_content is None
    ours, theirs = _both(oj, [{"reasoning_content": "r"}, {"content": "b"}])
    assert ours.reasoning_content == theirs.reasoning_content == "r"


def test_difference_e72_metadata_deep_merge(oj: ModuleType) -> None:
    ours, theirs = _both(
        oj, [{"metadata": {"a": {"x": 1}, "b": "k"}}, {"metadata": {"a": {"y": 2}}}]
    )
    assert theirs.metadata == {"a": {"y": 2}}
    assert ours.metadata == {"a": {"x": 1, "y": 2}, "b": "k"}


def test_agreeing_stream_matches_openjiuwen(oj: ModuleType) -> None:
    """A plain OpenAI-shaped stream (one call, ids on the first fragment): every field the two
    share reads the same."""
    kwargs = [
        {"content": "Hel", "reasoning_content": "think", "response_id": "r1"},
        {"content": "lo", "response_model": "m"},
        {"tool_calls": [fastmerge.ToolCall(**_frag(0, "c1", "f", '{"a"'))]},
        {"tool_calls": [fastmerge.ToolCall(**_frag(0, None, "", ":1}"))]},
        {"finish_reason": "tool_calls", "completion_token_ids": [1]},
    ]
    ours = sum(fastmerge.AssistantMessageChunk(**k) for k in kwargs)
    for k in kwargs:
        if "tool_calls" in k:
            k["tool_calls"] = [oj.ToolCall(**c.to_dict()) for c in k["tool_calls"]]
    theirs = _oj_sum([oj.AssistantMessageChunk(**k) for k in kwargs])
    for field in (
        "role",
        "content",
        "reasoning_content",
        "finish_reason",
        "completion_token_ids",
        "response_id",
        "response_model",
    ):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert _calls(ours.tool_calls) == _calls(theirs.tool_calls)


# ---------------------------------------------------------------------------------------------
# Value semantics


def _every_part() -> list[Any]:
    payload = fastmerge.OpaquePayload("anthropic", "signature", "SIG")
    return [
        fastmerge.TextPart(text="t", citations=[{"c": 1}], attributes={"type": "text"}, index=0),
        fastmerge.ReasoningPart(text="r", summary="s", payload=payload, redacted=True, index=1),
        fastmerge.ToolCallPart(
            id="c1",
            name="f",
            arguments='{"a":1}',
            provider_index=3,
            payload={"provider": "google", "kind": "thought_signature", "data": "S"},
            response_item_id="fc_1",
            extra={"x": {"y": 1}},
        ),
        fastmerge.ToolCallPart(id="c2", type="custom", name="g", arguments={"b": [1]}),
        fastmerge.ToolResultPart(tool_call_id="c1", content=[{"part": "text", "text": "ok"}]),
        fastmerge.MediaPart(mime_type="image/png", data="AAAA", index=5),
        fastmerge.MediaPart(mime_type="image/png", url="https://x/y.png"),
        fastmerge.UnknownPart(provider="anthropic", kind="k", raw={"z": 1, "a": [1, {"b": None}]}),
    ]


def _full_chunk() -> Any:
    return fastmerge.AssistantMessageChunk(
        content="a",
        reasoning_content="r",
        name="bot",
        metadata={"m": {"n": 1}},
        tool_calls=[tc(0, "c0", "h", "{}")],
        usage_metadata={"input_tokens": 3, "prompt_tokens_details": {"cached_tokens": 1}},
        finish_reason="stop",
        parser_content={"p": 1},
        prompt_token_ids=[1],
        completion_token_ids=[2],
        logprobs={"content": [{"token": "a"}]},
        response_id="r1",
        response_model="m1",
        provider_metadata={"pm": 1},
        provider_content={"pc": 1},
        parts=_every_part(),
        refusal="no",
        status="complete",
        anomalies=[{"code": "truncated", "detail": "d"}],
        choice_index=0,
    )


def _samples() -> list[Any]:
    full = _full_chunk()
    folded = full + fastmerge.AssistantMessageChunk(content=["x"], finish_reason="length")
    return [
        full,
        folded,
        fastmerge.AssistantMessageChunk(),
        full.to_message(),
        folded.to_message(),
        fastmerge.BaseMessageChunk(role="user", content="x", name="n", metadata={"k": [1]}),
        fastmerge.BaseMessageChunk(role="user", content=[{"type": "text", "text": "x"}]),
        fastmerge.ToolMessageChunk(tool_call_id="t", content="c"),
        fastmerge.ToolMessageChunk(tool_call_id="t", content="c")
        + fastmerge.ToolMessageChunk(content="d"),
        fastmerge.ToolMessageChunk(tool_call_id="t", content="c").to_message(),
    ]


def test_round_trip_every_class() -> None:
    for sample in _samples():
        d = sample.to_dict()
        again = type(sample).from_dict(d)
        assert again == sample, type(sample).__name__
        assert again.to_dict() == d
        assert type(again) is type(sample)


def test_round_trip_every_part_kind() -> None:
    for part in _every_part():
        assert type(part).from_dict(part.to_dict()) == part
        m = fastmerge.AssistantMessageChunk(parts=[part])
        assert m.parts == (part,)
        assert fastmerge.AssistantMessageChunk(parts=[part.to_dict()]) == m
        assert fastmerge.AssistantMessageChunk.from_dict(m.to_dict()) == m
        assert fastmerge.AssistantMessage.from_dict(m.to_message().to_dict()) == m.to_message()
    call = fastmerge.ToolCall(id="c", name="n", arguments="{}", index=0, response_item_id="x")
    assert fastmerge.ToolCall.from_dict(call.to_dict()) == call
    payload = fastmerge.OpaquePayload("p", "k", {"d": [1]})
    assert fastmerge.OpaquePayload.from_dict(payload.to_dict()) == payload
    usage = fastmerge.UsageMetadata(input_tokens=1, prompt_tokens_details={"a": 1})
    assert fastmerge.UsageMetadata.from_dict(usage.to_dict()) == usage


def test_equality() -> None:
    a = fastmerge.AssistantMessageChunk(content="ab")
    b = fastmerge.AssistantMessageChunk(content="a") + fastmerge.AssistantMessageChunk(content="b")
    assert a == b
    assert a != fastmerge.AssistantMessageChunk(content="ac")
    assert a != a.to_message()  # a chunk is not a message
    assert a != "ab"
    assert fastmerge.BaseMessageChunk(role="user", content="x") != fastmerge.ToolMessageChunk(
        content="x", role="user"
    )
    with pytest.raises(TypeError):
        hash(a)


def test_repr_is_readable() -> None:
    m = fastmerge.AssistantMessageChunk(content="hello", finish_reason="stop")
    text = repr(m)
    assert text.startswith("AssistantMessageChunk(")
    assert "'hello'" in text and "finish_reason='stop'" in text
    assert "object at 0x" not in text
    tool = repr(fastmerge.ToolMessageChunk(tool_call_id="t1", content="c"))
    assert tool.startswith("ToolMessageChunk(") and "tool_call_id='t1'" in tool
    for sample in _samples():
        assert repr(sample).startswith(type(sample).__name__ + "(")
    for part in _every_part():
        assert repr(part).startswith(type(part).__name__ + "(")


@pytest.mark.parametrize("attr", ["content", "role", "tool_calls", "metadata", "new_attribute"])
def test_setting_an_attribute_raises(attr: str) -> None:
    for sample in _samples():
        with pytest.raises(AttributeError):
            setattr(sample, attr, "x")
    with pytest.raises(AttributeError):
        fastmerge.UsageMetadata(input_tokens=1).input_tokens = 2  # type: ignore[misc]
    for part in _every_part():
        for field in part.to_dict():
            if field != "part":
                with pytest.raises(AttributeError):
                    setattr(part, field, None)
        # a name that is not a field: CPython 3.11's frozen slotted dataclasses raise TypeError
        with pytest.raises((AttributeError, TypeError)):
            setattr(part, attr, "x")
    with pytest.raises(AttributeError):
        fastmerge.ToolCall(id="c").arguments = "{}"  # type: ignore[misc]


def test_mutating_returned_values_does_not_change_the_chunk() -> None:
    for sample in _samples():
        before = copy.deepcopy(sample.to_dict())
        d = sample.to_dict()
        for value in d.values():
            if isinstance(value, (list, dict)):
                value.clear()
        sample.metadata["new"] = 1
        if isinstance(sample.content, list):
            sample.content.append("z")
        if hasattr(sample, "parts"):
            if isinstance(sample, fastmerge.AssistantMessage) and sample.logprobs:
                with pytest.raises(TypeError, match="read-only"):  # a message's: read-only
                    sample.logprobs.clear()
            else:
                sample.logprobs and sample.logprobs.clear()  # a chunk's: a fresh copy
            (sample.completion_token_ids or []).append(99)
            (sample.prompt_token_ids or []).append(99)
            sample.provider_metadata["new"] = 1
            sample.anomalies.append({"code": "x", "detail": "y"})
        assert sample.to_dict() == before, type(sample).__name__


def test_mutating_returned_parts_and_usage_does_not_change_the_chunk() -> None:
    m = _full_chunk()
    before = copy.deepcopy(m.to_dict())
    for part in m.parts:
        if getattr(part, "citations", None):
            part.citations.append({"c": 2})
        if getattr(part, "extra", None):
            part.extra["x"]["z"] = 1
        if isinstance(getattr(part, "arguments", None), dict):
            part.arguments["b"].append(2)
        if isinstance(getattr(part, "raw", None), dict):
            part.raw["a"].append(2)
    m.usage_metadata.extra["prompt_tokens_details"]["cached_tokens"] = 99
    assert m.to_dict() == before


def test_inputs_are_never_mutated() -> None:
    fragments = [tc(0, "c1", "f", '{"a"', extra_content={"g": {"s": "1"}})]
    more = [tc(0, None, None, ":1}", extra_content={"g": {"t": "2"}})]
    kwargs = {
        "content": [{"type": "text", "text": "x", "cache_control": {"t": 1}}],
        "metadata": {"a": {"x": [1]}},
        "provider_metadata": {"p": {"q": [1]}},
        "tool_calls": fragments,
        "usage_metadata": {"input_tokens": 1, "details": {"a": 1}},
        "logprobs": {"content": [{"token": "a"}]},
        "prompt_token_ids": [1],
        "completion_token_ids": [2],
        "parts": [fastmerge.ToolCallPart(id="c9", name="h", arguments={"k": [1]}).to_dict()],
    }
    right = {
        "content": [{"type": "text", "text": "y"}],
        "metadata": {"a": {"y": [2]}},
        "provider_metadata": {"p": {"q": [2]}},
        "tool_calls": more,
        "usage_metadata": {"output_tokens": 2, "details": {"b": 2}},
        "logprobs": {"content": [{"token": "b"}]},
        "completion_token_ids": [3],
        "parts": [{"part": "tool_call", "id": "c9", "arguments": {"k2": 2}}],
    }
    left_before, right_before = copy.deepcopy(kwargs), copy.deepcopy(right)
    a = fastmerge.AssistantMessageChunk(**kwargs)
    b = fastmerge.AssistantMessageChunk(**right)
    results = [a + b, sum([a, b, b]), fastmerge.fold_chunks([a, b], usage="sum")]
    for result in results:
        result.to_dict()
        result.to_message().to_dict()
    assert kwargs == left_before
    assert right == right_before
    a_dict, b_dict = a.to_dict(), b.to_dict()
    _ = [a + b for _ in range(3)]
    assert a.to_dict() == a_dict and b.to_dict() == b_dict


def test_pickling() -> None:
    for sample in _samples():
        again = pickle.loads(pickle.dumps(sample))
        assert again == sample and type(again) is type(sample)
        if hasattr(sample, "__add__"):
            assert again + again == sample + sample
    for part in _every_part():
        assert pickle.loads(pickle.dumps(part)) == part
    call = fastmerge.ToolCall(id="c", name="n", arguments="{}", index=0)
    assert pickle.loads(pickle.dumps(call)) == call
    error = pickle.loads(pickle.dumps(fastmerge.ArgumentsError("{", 1, "r")))
    assert (type(error), error.raw, error.position, str(error)) == (
        fastmerge.ArgumentsError,
        "{",
        1,
        str(fastmerge.ArgumentsError("{", 1, "r")),
    )
    anomaly = pickle.loads(pickle.dumps(fastmerge.AnomalyError("synthetic_id", "d")))
    assert (anomaly.code, anomaly.detail) == ("synthetic_id", "d")


def test_pickling_usage_metadata() -> None:
    usage = fastmerge.UsageMetadata(input_tokens=1, prompt_tokens_details={"a": 1})
    assert pickle.loads(pickle.dumps(usage)) == usage


def _stream() -> list[Any]:
    return [
        fastmerge.AssistantMessageChunk(reasoning_content="th"),
        fastmerge.AssistantMessageChunk(reasoning_content="ink", content="He"),
        fastmerge.AssistantMessageChunk(content="llo", tool_calls=[tc(0, "c1", "f", '{"a"')]),
        fastmerge.AssistantMessageChunk(tool_calls=[tc(1, "c2", "g", "{")]),
        fastmerge.AssistantMessageChunk(tool_calls=[tc(0, None, None, ":1}")]),
        fastmerge.AssistantMessageChunk(tool_calls=[tc(1, None, None, "}")], finish_reason="stop"),
        fastmerge.AssistantMessageChunk(usage_metadata={"input_tokens": 3, "output_tokens": 4}),
    ]


def test_sum_and_sum_with_start() -> None:
    chunks = _stream()
    total = sum(chunks)
    assert total.content == "Hello"
    assert total.reasoning_content == "think"
    assert summary(total.tool_calls) == [("c1", "f", '{"a":1}', 0), ("c2", "g", "{}", 1)]
    assert sum(chunks[1:], chunks[0]) == total
    start = fastmerge.AssistantMessageChunk(content=">")
    with_start = sum(chunks, start)
    assert with_start.content == ">Hello"
    assert with_start == start + total
    assert sum(chunks[:1]) == chunks[0]
    assert fastmerge.fold_chunks(chunks) == total
    assert fastmerge.fold_chunks([]) is None


def test_merge_all_equals_sum() -> None:
    chunks = _stream()
    assert fastmerge.merge_all(chunks) == sum(chunks)
    assert fastmerge.merge(chunks[0], chunks[1]) == chunks[0] + chunks[1]
    tools = [fastmerge.ToolMessageChunk(tool_call_id="t", content=c) for c in "abc"]
    assert fastmerge.merge_all(tools) == sum(tools)


def test_associativity() -> None:
    chunks = _stream()
    for i in range(1, len(chunks) - 1):
        a = sum(chunks[:i])
        b = chunks[i]
        c = sum(chunks[i + 1 :])
        assert (a + b) + c == a + (b + c), i
        assert ((a + b) + c).to_message() == (a + (b + c)).to_message()
    a, b, c = chunks[2], chunks[3], chunks[4]
    assert (a + b) + c == a + (b + c)
