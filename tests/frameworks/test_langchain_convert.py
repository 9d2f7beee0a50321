"""``to_langchain`` / ``from_langchain`` (reasoning, Anthropic blocks with their signatures, tool
calls, usage, the whole message kept) against what LangChain's own stream merge says, and
``SessionChatMessageHistory`` on a fastmerge ``Session``. Every test runs on both backends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import fastmerge

pytest.importorskip("langchain_core")
from _support.langchain import CORPUS, STREAMS, _several_choices, raw_chunks, reduce_add
from langchain_core.messages import (  # noqa: E402
    AIMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.tool import tool_call as create_tool_call  # noqa: E402

from fastmerge.langchain import (  # noqa: E402
    SessionChatMessageHistory,
    from_langchain,
    to_langchain,
)
from fastmerge.session import Session  # noqa: E402

# ---------------------------------------------------------------------------------------------
# to_langchain / from_langchain


def _aggregate(kind: str, path: Path) -> Any:
    provider = "openai-chat" if kind == "openai_chat" else "anthropic"
    result = fastmerge.aggregate(path.read_bytes(), provider)
    return result[0] if isinstance(result, list) else result


@pytest.mark.parametrize(("kind", "path"), STREAMS, ids=[f"{k}/{p.stem}" for k, p in STREAMS])
def test_to_langchain_matches_langchain_stream(kind: str, path: Path) -> None:
    """The AIMessage for a stream's fastmerge message says what LangChain's own merge of the
    same stream says: text, tool calls (names, ids, parsed arguments), token counts."""
    pytest.importorskip("langchain_openai" if kind == "openai_chat" else "langchain_anthropic")
    message = _aggregate(kind, path)
    ai = to_langchain(message)
    assert isinstance(ai, AIMessage)
    chunks = raw_chunks(kind, path, "plain")
    if len(chunks) < 2 or _several_choices(kind, path):
        return  # LangChain reads choices[0] of every chunk, whichever choice it is
    try:
        theirs = reduce_add(chunks)
    except (TypeError, ValueError):
        return
    if kind == "openai_chat" and len({c.get("index") for c in theirs.tool_call_chunks}) == len(
        theirs.tool_call_chunks
    ):
        assert [(c["name"], c["args"]) for c in ai.tool_calls] == [
            (c["name"], c["args"]) for c in theirs.tool_calls
        ]
    if kind == "openai_chat":
        assert ai.text == theirs.text
    # a server that reports usage on every chunk (vLLM's continuous usage) is added up by
    # LangChain, which counts it many times over; fastmerge's usage rule does not
    reports = sum(1 for c in chunks if c.usage_metadata)
    if reports == 1 and ai.usage_metadata and kind == "openai_chat":
        assert ai.usage_metadata["input_tokens"] == theirs.usage_metadata["input_tokens"]
        assert ai.usage_metadata["output_tokens"] == theirs.usage_metadata["output_tokens"]
    if message.reasoning_content and kind == "openai_chat":
        assert ai.additional_kwargs["reasoning_content"] == message.reasoning_content
    # back to fastmerge: the very message
    back = from_langchain(ai)
    assert back == message
    assert back.to_dict() == message.to_dict()


def test_to_langchain_anthropic_thinking_and_tools() -> None:
    path = CORPUS / "anthropic_messages" / "sonnet45-thinking-signature-text-short.jsonl"
    message = _aggregate("anthropic_messages", path)
    ai = to_langchain(message)
    thinking = [b for b in ai.content if isinstance(b, dict) and b.get("type") == "thinking"]
    assert thinking and thinking[0]["signature"] == message.parts[0].payload.data
    assert ai.response_metadata["model_provider"] == "anthropic"
    assert ai.response_metadata["finish_reason"] == "end_turn"
    assert ai.usage_metadata == {
        "input_tokens": 69,
        "output_tokens": 53,
        "total_tokens": 122,
        "input_token_details": {"cache_read": 0, "cache_creation": 0},
    }
    assert ai.id == message.response_id
    # a LangChain message of that shape, without fastmerge's copy, maps back part for part
    bare = AIMessage(
        content=ai.content,
        usage_metadata=ai.usage_metadata,
        response_metadata=ai.response_metadata,
        id=ai.id,
    )
    back = from_langchain(bare)
    assert [p.PART for p in back.parts] == ["reasoning", "text"]
    assert back.parts[0].payload.data == message.parts[0].payload.data
    assert back.content == message.content
    assert to_langchain(back) == bare


def test_from_langchain_edited_message_is_read_anew() -> None:
    message = _aggregate("openai_chat", CORPUS / "openai_chat" / "gpt4o-parallel-tool-calls.jsonl")
    ai = to_langchain(message)
    assert [c["name"] for c in ai.tool_calls] == ["GetWeatherArgs", "get_stock_price"]
    assert ai.tool_calls[0]["args"] == {"city": "Edinburgh", "country": "GB", "units": "c"}
    edited = ai.model_copy(update={"content": "changed"})
    back = from_langchain(edited)
    assert back.content == "changed"
    assert [c.name for c in back.tool_calls] == ["GetWeatherArgs", "get_stock_price"]


def test_round_trip_of_langchain_messages() -> None:
    messages = [
        SystemMessage(content="Answer briefly.", name="sys"),
        HumanMessage(content="Weather in Paris?", id="h1", additional_kwargs={"k": "v"}),
        AIMessage(
            content=[
                {"type": "thinking", "thinking": "call the tool", "signature": "sig"},
                {"type": "text", "text": "Checking."},
            ],
            tool_calls=[create_tool_call(name="get_weather", args={"city": "Paris"}, id="toolu_1")],
            usage_metadata={"input_tokens": 3, "output_tokens": 4, "total_tokens": 7},
            response_metadata={"finish_reason": "tool_use", "model_name": "m"},
            id="msg_1",
        ),
        ToolMessage(content='{"temp_c": 18}', tool_call_id="toolu_1", artifact={"raw": 18}),
        AIMessage(content="It is 18 °C.", additional_kwargs={"reasoning_content": "easy"}),
    ]
    for message in messages:
        assert to_langchain(from_langchain(message)) == message
    converted = from_langchain(messages[2])
    assert converted.tool_calls[0].name == "get_weather"
    assert json.loads(converted.tool_calls[0].arguments) == {"city": "Paris"}
    assert converted.usage_metadata.input_tokens == 3
    assert converted.parts[0].payload.data == "sig"
    assert from_langchain(messages[4]).reasoning_content == "easy"
    with pytest.raises(TypeError):
        from_langchain({"role": "user"})  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        to_langchain(42)


# ---------------------------------------------------------------------------------------------
# SessionChatMessageHistory


def test_session_chat_message_history(tmp_path: Path) -> None:
    path = tmp_path / "chat.db"
    message = _aggregate(
        "anthropic_messages", CORPUS / "anthropic_messages" / "sonnet4-text-then-tool-use.jsonl"
    )
    call = message.tool_calls[0]
    added = [
        SystemMessage(content="Answer briefly."),
        HumanMessage(content="Weather in Paris?"),
        to_langchain(message),
        ToolMessage(content='{"temp_c": 18}', tool_call_id=call.id),
        AIMessage(content="It is 18 °C.", id="msg_2"),
    ]
    with Session("chat-1", path) as session:
        history = SessionChatMessageHistory(session)
        history.add_messages(added[:2])
        history.add_message(added[2])
        history.add_messages(added[3:])
        assert history.messages == added
    with Session("chat-1", path) as session:  # reopened
        history = SessionChatMessageHistory(session)
        assert history.messages == added
        assert session.messages()[2] == message  # the fastmerge message, signatures and all
        request = session.to_request("anthropic")
        assert [m["role"] for m in request["messages"]] == [
            "user",
            "assistant",
            "user",
            "assistant",
        ]
        history.clear()
        assert history.messages == []
        assert len(session.events()) == len(added) + 1  # the log keeps what came before
    with pytest.raises(TypeError):
        SessionChatMessageHistory("chat-1")  # type: ignore[arg-type]


def test_session_history_is_atomic() -> None:
    with Session("chat-2") as session:
        history = SessionChatMessageHistory(session)
        with pytest.raises(TypeError):
            history.add_messages([HumanMessage(content="kept?"), object()])  # type: ignore[list-item]
        assert history.messages == []
