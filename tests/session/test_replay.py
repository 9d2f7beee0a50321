"""``session.to_request(provider)``: the history in each provider's request
format, reasoning replayed only to its provider, tool calls with their results, and the round
trip through the database and a new process for every provider of the corpus."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _support.corpus import CORPUS, KINDS, assert_same_structure, sibling
from _support.session_helpers import anthropic_events
from conftest import assert_isolated_ok

from fastmerge import errors
from fastmerge.session import Session, response_to_request, to_request

USER = {"role": "user", "content": "Go on."}
#: where each provider's request holds the history
HISTORY_KEY = {
    "openai-chat": "messages",
    "openai-responses": "input",
    "anthropic": "messages",
    "gemini": "contents",
    "bedrock-converse": "messages",
    "ollama": "messages",
}
#: keys of a .nonstream.json's request form that the stream cannot give, with the reason
NONSTREAM_IGNORE: dict[str, tuple[str, ...]] = {
    # Qwen and DeepSeek number their non-streamed tool calls ("index"); the request form of
    # OpenAI's shape has none (test_corpus_openai_chat.py's NONSTREAM_IGNORE)
    "alibaba-qwen3-max-tool-call-empty-id-continuations": ("index",),
    "deepseek-reasoner-reasoning-then-tool-call": ("index",),
}
#: .nonstream.json files of another generation whose blocks differ in sequence: each of their
#: blocks is compared with the first replayed block of its type
BY_BLOCK_TYPE = {
    "sonnet4-web-search-many-citation-blocks",  # searched twice, the stream once
    "lmstudio-glm47-flash-reasoning-text-function-call",  # a function call only
}
#: .nonstream.json files that are an HTTP error body, no response: nothing to replay
ERROR_BODIES = {"openai-response-failed-insufficient-quota"}


def _cases() -> list[tuple[str, Path]]:
    """Every stream with a .nonstream.json beside it, and the Ollama streams (the corpus has
    no non-streamed Ollama response: the rendered one stands for it)."""
    cases = [
        (KINDS[p.parent.name], p.with_name(p.name.replace(".nonstream.json", ".jsonl")))
        for p in sorted(CORPUS.glob("*/*.nonstream.json"))
    ]
    cases += [("ollama", p) for p in sorted((CORPUS / "ollama").glob("*.jsonl"))]
    return cases


CASES = _cases()


def test_every_provider_has_a_case() -> None:
    assert sorted({kind for kind, _ in CASES}) == sorted(HISTORY_KEY)
    assert len(CASES) == 22


def _assistant_turn(request: dict[str, Any], kind: str) -> list[Any]:
    entries: list[Any] = request[HISTORY_KEY[kind]]
    assert entries[0] == to_request([USER], kind)[HISTORY_KEY[kind]][0]
    return entries[1:]


def test_round_trip_through_a_new_process(
    aggregate_module: ModuleType, backend_name: str, tmp_path: Path
) -> None:
    """Aggregate, append, reopen the database in a new process, ``to_request``: the assistant
    turn is the request form of the provider's non-streamed response."""
    db = tmp_path / "corpus.db"
    fresh: dict[str, str] = {}
    with Session("setup", db) as setup:
        for kind, path in CASES:
            message = aggregate_module.aggregate_choices(path.read_bytes(), kind)[0]
            with Session(path.stem, setup.store) as session:
                session.append([USER, message])
            fresh[path.stem] = json.dumps(to_request([USER, message], kind))
            # the stored message replays as the provider's own response does
            rendered = response_to_request(kind, message.to_provider(kind))
            assert _assistant_turn(json.loads(fresh[path.stem]), kind) == rendered, path.name
    code = f"""
        import json
        from fastmerge.session import Session
        cases = {[(kind, path.stem) for kind, path in CASES]!r}
        out = {{}}
        for kind, name in cases:
            with Session(name, {str(db)!r}) as session:
                out[name] = json.dumps(session.to_request(kind))
        print(json.dumps(out))
    """
    replayed = json.loads(assert_isolated_ok(backend_name, code))
    for kind, path in CASES:
        name = path.stem
        assert replayed[name] == fresh[name], f"{name}: the reopened session replays otherwise"
        turn = _assistant_turn(json.loads(replayed[name]), kind)
        nonstream = sibling(path, ".nonstream.json")
        if nonstream is None or name in ERROR_BODIES:
            continue
        expected = response_to_request(kind, nonstream)
        if name in BY_BLOCK_TYPE:
            _by_type(kind, expected, turn)
        else:
            assert_same_structure(expected, turn, ignore=NONSTREAM_IGNORE.get(name, ()))


def _blocks(kind: str, entries: list[Any]) -> list[Any]:
    if kind == "openai-responses":
        return entries
    return [b for entry in entries for b in entry["content"]]


def _by_type(kind: str, expected: list[Any], turn: list[Any]) -> None:
    ours = _blocks(kind, turn)
    for block in _blocks(kind, expected):
        same = [b for b in ours if b.get("type") == block["type"] and set(block) <= set(b)]
        assert same, f"no replayed {block['type']} block with the keys {sorted(block)}"


def _anthropic_session(aggregate_module: ModuleType, messages_module: ModuleType) -> Session:
    session = Session("s")
    session.append({"role": "system", "content": "Be brief."})
    session.append({"role": "user", "content": "Weather in Paris?"})
    session.append(aggregate_module.aggregate(anthropic_events(), "anthropic"))
    session.append(messages_module.ToolMessage(tool_call_id="toolu_01", content='{"temp": 18}'))
    return session


def test_anthropic_gets_its_thinking_and_signature_back(
    aggregate_module: ModuleType, messages_module: ModuleType
) -> None:
    session = _anthropic_session(aggregate_module, messages_module)
    assert session.to_request("anthropic") == {
        "system": "Be brief.",
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "thinking",
                        "thinking": "The user wants weather.",
                        "signature": "EqQBCkYIBx==",
                    },
                    {"type": "text", "text": "Let me check."},
                    {
                        "type": "tool_use",
                        "id": "toolu_01",
                        "name": "get_weather",
                        "input": {"city": "Paris"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_01", "content": '{"temp": 18}'}
                ],
            },
        ],
    }


def test_other_providers_get_no_anthropic_reasoning(
    aggregate_module: ModuleType, messages_module: ModuleType
) -> None:
    session = _anthropic_session(aggregate_module, messages_module)
    assert session.to_request("openai-chat")["messages"][2:] == [
        {
            "role": "assistant",
            "content": "Let me check.",
            "tool_calls": [
                {
                    "id": "toolu_01",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_01", "content": '{"temp": 18}'},
    ]
    assert session.to_request("gemini") == {
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "contents": [
            {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
            {
                "role": "model",
                "parts": [
                    {"text": "Let me check."},
                    {
                        "functionCall": {
                            "id": "toolu_01",
                            "name": "get_weather",
                            "args": {"city": "Paris"},
                        }
                    },
                ],
            },
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "id": "toolu_01",
                            "name": "get_weather",
                            "response": {"temp": 18},
                        }
                    }
                ],
            },
        ],
    }
    bedrock = session.to_request("bedrock-converse")
    assert bedrock["system"] == [{"text": "Be brief."}]
    assert bedrock["messages"][1] == {
        "role": "assistant",
        "content": [
            {"text": "Let me check."},
            {
                "toolUse": {
                    "toolUseId": "toolu_01",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                }
            },
        ],
    }
    responses = session.to_request("openai-responses")["input"]
    assert [item.get("type") for item in responses] == [
        None,
        None,
        "message",
        "function_call",
        "function_call_output",
    ]
    ollama = session.to_request("ollama")["messages"]
    assert "thinking" not in ollama[2]
    assert ollama[3] == {"role": "tool", "content": '{"temp": 18}', "tool_name": "get_weather"}


def test_gemini_signature_goes_only_to_gemini(aggregate_module: ModuleType) -> None:
    path = CORPUS / "gemini" / "gemini3-pro-function-call-thought-signature.jsonl"
    message = aggregate_module.aggregate(path.read_bytes(), "gemini")
    session = Session("g")
    session.append([USER, message])
    parts = session.to_request("gemini")["contents"][1]["parts"]
    signed = [p for p in parts if "thoughtSignature" in p]
    assert signed and all(isinstance(p["thoughtSignature"], str) for p in signed)
    for provider in ("anthropic", "openai-chat", "bedrock-converse", "openai-responses"):
        assert "thoughtSignature" not in json.dumps(session.to_request(provider)), provider


def test_consecutive_tool_results_join_one_user_message(messages_module: ModuleType) -> None:
    session = Session("t")
    session.append(USER)
    session.append(messages_module.ToolMessage(tool_call_id="a", content="1"))
    session.append(messages_module.ToolMessage(tool_call_id="b", content=[{"text": "2"}]))
    assert session.to_request("bedrock-converse")["messages"] == [
        {
            "role": "user",
            "content": [
                {"text": "Go on."},
                {"toolResult": {"toolUseId": "a", "content": [{"text": "1"}]}},
                {"toolResult": {"toolUseId": "b", "content": [{"text": "2"}]}},
            ],
        }
    ]
    assert session.to_request("anthropic")["messages"][0]["content"] == [
        {"type": "text", "text": "Go on."},
        {"type": "tool_result", "tool_use_id": "a", "content": "1"},
        {"type": "tool_result", "tool_use_id": "b", "content": [{"text": "2"}]},
    ]


def test_unknown_blocks_go_back_to_their_provider_only(aggregate_module: ModuleType) -> None:
    path = CORPUS / "anthropic_messages" / "sonnet46-compaction-block.jsonl"
    message = aggregate_module.aggregate(path.read_bytes(), "anthropic")
    session = Session("c")
    session.append([USER, message])
    blocks = session.to_request("anthropic")["messages"][1]["content"]
    assert "compaction" in [b["type"] for b in blocks]
    assert '"compaction"' not in json.dumps(session.to_request("openai-chat"))


def test_unknown_provider_is_a_typed_error() -> None:
    session = Session("u")
    session.append(USER)
    with pytest.raises(errors.SessionError) as caught:
        session.to_request("cohere")  # type: ignore[arg-type]
    assert str(caught.value) == (
        "unknown provider 'cohere' for to_request; expected one of 'openai-chat', "
        "'openai-responses', 'anthropic', 'gemini', 'bedrock-converse', 'ollama'"
    )


def test_encrypted_reasoning_goes_only_to_responses(
    aggregate_module: ModuleType, messages_module: ModuleType
) -> None:
    path = CORPUS / "openai_responses" / "gpt5-reasoning-function-call-usage.jsonl"
    message = aggregate_module.aggregate(path.read_bytes(), "openai-responses")
    encrypted = [
        p.payload.data for p in message.parts if type(p).__name__ == "ReasoningPart" and p.payload
    ]
    assert len(encrypted) == 1 and encrypted[0]
    (call,) = message.tool_calls or []
    session = Session("r")
    session.append([USER, message])
    session.append(messages_module.ToolMessage(tool_call_id=call.id, content="ok"))
    items = session.to_request("openai-responses")["input"]
    reasoning = [i for i in items if i.get("type") == "reasoning"]
    assert [i["encrypted_content"] for i in reasoning] == encrypted
    assert items[-1] == {"type": "function_call_output", "call_id": call.id, "output": "ok"}
    calls = [i for i in items if i.get("type") == "function_call"]
    assert items.index(calls[0]) < len(items) - 1  # the result after its call
    for provider in ("anthropic", "openai-chat", "gemini", "bedrock-converse", "ollama"):
        assert encrypted[0] not in json.dumps(session.to_request(provider)), provider
