"""Drop-in by import: openJiuwen code moves over by changing
``openjiuwen.core.foundation.llm.schema.message_chunk`` to ``fastmerge.message_chunk`` (or
``fastmerge``): the names are there, ``ToolCall.index`` reads what the chunk was given, and
openJiuwen's own pydantic ``ToolCall`` is accepted.
"""

from __future__ import annotations

import inspect
import pickle
import sys
from types import ModuleType
from typing import Any

import pytest
from conftest import load_openjiuwen

import fastmerge
from fastmerge import message_chunk

OJ = load_openjiuwen()
OJ_TOOL_CALL = sys.modules["openjiuwen.core.foundation.llm.schema.tool_call"].ToolCall

#: Public names of openJiuwen's message_chunk module that fastmerge does not implement (see
#: the docstring of fastmerge.message_chunk).
NOT_PROVIDED = {"BaseMessage", "merge_pydantic_models"}


def _oj_public_names() -> set[str]:
    """openJiuwen's own names in its module: what it defines and what it imports from
    openJiuwen for its users (not pydantic's ``ConfigDict`` or ``typing.Any``)."""
    names = set()
    for name, value in vars(OJ).items():
        if name.startswith("_") or isinstance(value, ModuleType):
            continue
        if inspect.isclass(value) or inspect.isfunction(value):
            if value.__module__.startswith("openjiuwen."):
                names.add(name)
    return names


def test_every_public_name_of_openjiuwen_message_chunk() -> None:
    names = _oj_public_names()
    assert names == {
        "AssistantMessage",
        "AssistantMessageChunk",
        "BaseMessage",
        "BaseMessageChunk",
        "ToolCall",
        "ToolMessage",
        "ToolMessageChunk",
        "merge_dicts",
        "merge_parser_content",
        "merge_pydantic_models",
    }
    provided = names - NOT_PROVIDED | {"UsageMetadata"}
    assert set(message_chunk.__all__) == provided
    for name in provided:
        assert getattr(message_chunk, name) is getattr(fastmerge, name)
    for name in NOT_PROVIDED:
        with pytest.raises(AttributeError, match=name):
            getattr(message_chunk, name)


def test_names_follow_the_backend(backend_module: ModuleType, messages_module: ModuleType) -> None:
    from fastmerge.message_chunk import AssistantMessageChunk, merge_parser_content

    assert fastmerge.merge_parser_content is backend_module.merge
    assert merge_parser_content is backend_module.merge
    assert message_chunk.merge_dicts is backend_module.merge_dicts
    assert message_chunk._concat_token_ids is backend_module.concat_token_ids
    assert message_chunk._merge_logprobs is backend_module.merge_logprobs
    assert AssistantMessageChunk is messages_module.AssistantMessageChunk
    assert message_chunk.ToolMessageChunk is messages_module.ToolMessageChunk


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ({"a": "x", "n": [1]}, {"a": "y", "n": [2], "b": None}),
        ("Hel", "lo"),
        (None, {"k": 1}),
        ([{"index": 0}], [{"index": 0}]),
    ],
)
def test_merge_parser_content_gives_what_openjiuwen_gives(left: Any, right: Any) -> None:
    from fastmerge.message_chunk import merge_parser_content

    assert merge_parser_content(left, right) == OJ.merge_parser_content(left, right)
    assert fastmerge.merge_parser_content(left, right) == OJ.merge_parser_content(left, right)


def _calls(message: Any) -> list[tuple[Any, ...]]:
    return [(c.id, c.name, c.arguments, c.index) for c in message.tool_calls or []]


def _oj_chunk(*calls: Any) -> Any:
    return OJ.AssistantMessageChunk(content="", tool_calls=list(calls) or None)


def _oj_call(index: int | None, id: str | None, name: str = "", args: str = "") -> Any:
    return OJ_TOOL_CALL(id=id, type="function", name=name, arguments=args, index=index)


def _call(index: int | None, id: str | None, name: str = "", args: str = "") -> Any:
    return fastmerge.ToolCall(id=id, type="function", name=name, arguments=args, index=index)


def test_tool_call_index_reads_what_the_chunk_was_given() -> None:
    chunk = fastmerge.AssistantMessageChunk(content="", tool_calls=[_call(5, "c1", "f", "{}")])
    assert _calls(chunk) == [("c1", "f", "{}", 5)]
    assert _calls(chunk) == _calls(_oj_chunk(_oj_call(5, "c1", "f", "{}")))
    assert _calls(chunk.to_message()) == [("c1", "f", "{}", 5)]
    two = fastmerge.AssistantMessageChunk(tool_calls=[_call(3, "c1", "f"), _call(7, "c2", "g")])
    assert _calls(two) == [("c1", "f", "", 3), ("c2", "g", "", 7)]
    assert _calls(two) == _calls(_oj_chunk(_oj_call(3, "c1", "f"), _oj_call(7, "c2", "g")))
    # an OpenAI-format dict gives its index too, as openJiuwen reads it
    openai = {"index": 4, "id": "c1", "type": "function", "function": {"name": "f"}}
    assert _calls(fastmerge.AssistantMessageChunk(tool_calls=[openai])) == [("c1", "f", "", 4)]


def test_given_index_survives_to_dict_from_dict_and_pickle() -> None:
    chunk = fastmerge.AssistantMessageChunk(tool_calls=[_call(5, "c1", "f", "{}")])
    assert chunk.parts[0].call_index == 5
    again = fastmerge.AssistantMessageChunk.from_dict(chunk.to_dict())
    assert again == chunk
    assert _calls(again) == [("c1", "f", "{}", 5)]
    assert _calls(pickle.loads(pickle.dumps(chunk))) == [("c1", "f", "{}", 5)]
    message = chunk.to_message()
    assert _calls(fastmerge.AssistantMessage.from_dict(message.to_dict())) == [("c1", "f", "{}", 5)]
    part = fastmerge.ToolCallPart(id="c1", name="f", call_index=5)
    assert fastmerge.ToolCallPart.from_dict(part.to_dict()) == part
    assert _calls(fastmerge.AssistantMessageChunk(parts=[part])) == [("c1", "f", "", 5)]


def test_merged_chunks_number_calls_by_position() -> None:
    """Spec §4: a merged stream numbers its calls 0..n-1, which is what openJiuwen gives when
    the fold starts from an empty chunk; the given index stays the provider index."""
    empty = fastmerge.AssistantMessageChunk(content="")
    first = fastmerge.AssistantMessageChunk(tool_calls=[_call(5, "a", "f")])
    second = fastmerge.AssistantMessageChunk(tool_calls=[_call(6, "b", "g")])
    merged = empty + first + second
    assert _calls(merged) == [("a", "f", "", 0), ("b", "g", "", 1)]
    oj = _oj_chunk() + _oj_chunk(_oj_call(5, "a", "f")) + _oj_chunk(_oj_call(6, "b", "g"))
    assert _calls(merged) == _calls(oj)
    assert [p.provider_index for p in merged.parts] == [5, 6]
    assert [p.call_index for p in merged.parts] == [None, None]
    again = fastmerge.AssistantMessageChunk.from_dict(merged.to_dict())
    assert _calls(again) == _calls(merged)
    # the chunk itself still reads as it was given
    assert _calls(first) == [("a", "f", "", 5)]


def test_merged_from_a_chunk_with_an_index_differs_from_openjiuwen() -> None:
    """openJiuwen keeps the left chunk's index and numbers calls appended later by position
    (docs/chunks.md, differences table); fastmerge numbers every call of a merged chunk by
    position."""
    chunk = fastmerge.AssistantMessageChunk(tool_calls=[_call(5, "c1", "f", "{")])
    merged = chunk + fastmerge.AssistantMessageChunk(tool_calls=[_call(5, None, "", "}")])
    assert _calls(merged) == [("c1", "f", "{}", 0)]
    oj = _oj_chunk(_oj_call(5, "c1", "f", "{")) + _oj_chunk(_oj_call(5, None, "", "}"))
    assert _calls(oj) == [("c1", "f", "{}", 5)]


def test_one_index_for_several_calls_or_none_reads_positions() -> None:
    """[E27] in one chunk, and a call without an index: openJiuwen reads them as given (0 for
    both; None), fastmerge gives unique positions, as in a stream (docs/chunks.md, differences)."""
    chunk = fastmerge.AssistantMessageChunk(tool_calls=[_call(0, "c1", "f"), _call(0, "c2", "g")])
    assert _calls(chunk) == [("c1", "f", "", 0), ("c2", "g", "", 1)]
    oj = _oj_chunk(_oj_call(0, "c1", "f"), _oj_call(0, "c2", "g"))
    assert _calls(oj) == [("c1", "f", "", 0), ("c2", "g", "", 0)]
    mixed = fastmerge.AssistantMessageChunk(
        tool_calls=[_call(None, "c1", "f"), _call(3, "c2", "g")]
    )
    assert _calls(mixed) == [("c1", "f", "", 0), ("c2", "g", "", 1)]
    assert _calls(_oj_chunk(_oj_call(None, "c1", "f"))) == [("c1", "f", "", None)]


def test_openjiuwen_pydantic_tool_call_is_accepted() -> None:
    call = _oj_call(5, "c1", "f", '{"a"')
    chunk = fastmerge.AssistantMessageChunk(content="", tool_calls=[call])
    assert _calls(chunk) == [("c1", "f", '{"a"', 5)]
    assert chunk.tool_calls == [
        fastmerge.ToolCall(id="c1", type="function", name="f", arguments='{"a"', index=5)
    ]
    tail = fastmerge.AssistantMessageChunk(tool_calls=[_oj_call(5, None, "", ":1}")])
    message = (chunk + tail).to_message()
    assert _calls(message) == [("c1", "f", '{"a":1}', 0)]
    assert message.tool_calls is not None
    assert message.tool_calls[0].parsed_arguments() == {"a": 1}
    item = OJ_TOOL_CALL(id="c2", type="function", name="g", arguments="{}", response_item_id="fc")
    (read,) = fastmerge.AssistantMessageChunk(tool_calls=[item]).tool_calls or []
    assert (read.id, read.index, read.response_item_id) == ("c2", 0, "fc")
    assert call.index == 5 and call.arguments == '{"a"'  # not mutated


def test_a_tool_call_of_another_type_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="a tool call must be a ToolCall, .* not int"):
        fastmerge.AssistantMessageChunk(tool_calls=[3])


def _openjiuwen_style_stream(mc: Any) -> Any:
    """Code written for openJiuwen, run on the module ``mc``: its streaming loop over
    OpenAI-style tool-call deltas (``ToolCall`` from the same module, as its clients build
    them)."""
    tool_call, chunk = mc.ToolCall, mc.AssistantMessageChunk
    deltas = [
        chunk(content="Checking."),
        chunk(
            content="",
            tool_calls=[
                tool_call(id="c1", type="function", name="weather", arguments='{"c":', index=0)
            ],
        ),
        chunk(
            content="",
            tool_calls=[tool_call(id=None, type="function", name="", arguments='"P"}', index=0)],
        ),
        chunk(
            content="",
            tool_calls=[tool_call(id="c2", type="function", name="time", arguments="{}", index=1)],
        ),
        chunk(content="", finish_reason="tool_calls", parser_content={"k": "v"}),
    ]
    final = None
    for delta in deltas:
        final = final + delta if final else delta
    assert final is not None
    calls = [(c.id, c.type, c.name, c.arguments, c.index) for c in final.tool_calls]
    merged = mc.merge_parser_content(final.parser_content, {"k": "w"})
    return final.content, final.finish_reason, calls, merged


def test_openjiuwen_code_runs_unchanged_but_for_the_import() -> None:
    expected = (
        "Checking.",
        "tool_calls",
        [("c1", "function", "weather", '{"c":"P"}', 0), ("c2", "function", "time", "{}", 1)],
        {"k": "vw"},
    )
    assert _openjiuwen_style_stream(OJ) == expected
    assert _openjiuwen_style_stream(message_chunk) == expected
