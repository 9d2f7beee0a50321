"""The generated OpenAI Chat Completions streams (``_generate``): a stream per kind of delta
(content, refusal, tool calls, the legacy function call, audio), whole and cut, the whole ones
with the chunk's other fields (logprobs, usage, moderation, ...)."""

from __future__ import annotations

from typing import Any, Callable

from _generate_common import Case, markers_in, minimal

# ---------------------------------------------------------------------------------------------
# OpenAI Chat


def _chunk(choices: list[dict[str, Any]], **top: Any) -> Any:
    from openai.types.chat import ChatCompletionChunk

    data = {"id": "chatcmpl-1", "created": 1, "model": "gpt-x", "object": "chat.completion.chunk"}
    data.update(top)
    data["choices"] = choices
    return ChatCompletionChunk.model_validate(data)


def _choice(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"index": 0, "delta": delta, "finish_reason": finish, **extra}


def chat_cases() -> list[Case]:
    first = _choice({"role": "assistant", "content": ""})
    base = {"chunk:id", "chunk:choices", "chunk:created", "chunk:model", "chunk:object"}
    base |= {"choice:delta", "choice:index", "choice:finish_reason", "delta:role"}
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "f", "arguments": ""},
    }
    rows: list[tuple[str, list[dict[str, Any]], set[str], Callable[[Any], Any]]] = [
        (
            "content",
            [{"content": "M000q"}, {"content": "M001q"}],
            {"delta:content"},
            lambda m: m.content == "M000qM001q",
        ),
        (
            "refusal",
            [{"refusal": "M000q"}, {"refusal": "M001q"}],
            {"delta:refusal"},
            lambda m: m.refusal == "M000qM001q",
        ),
        (
            "tool_calls",
            [
                {"tool_calls": [call]},
                {"tool_calls": [{"index": 0, "function": {"arguments": '{"q": "M000q"}'}}]},
            ],
            {"delta:tool_calls", "tool_call:index", "tool_call:id", "tool_call:type"}
            | {"tool_call:function", "tool_call:function.name", "tool_call:function.arguments"},
            lambda m: (
                [(c.id, c.name, c.arguments) for c in m.tool_calls]
                == [("call_1", "f", '{"q": "M000q"}')]
            ),
        ),
        (
            "function_call",
            [
                {"function_call": {"name": "f", "arguments": ""}},
                {"function_call": {"arguments": '{"q": "M000q"}'}},
            ],
            {"delta:function_call"},
            lambda m: [(c.name, c.arguments) for c in m.tool_calls] == [("f", '{"q": "M000q"}')],
        ),
        (
            "audio",
            [
                {"audio": {"id": "audio_1", "data": "M000q", "transcript": "M001q"}},
                {"audio": {"data": "M002q", "transcript": "M003q"}},
                {"audio": {"expires_at": 1700000000}},
            ],
            {"delta:audio"},
            lambda m: (
                [p.raw for p in m.parts if type(p).__name__ == "UnknownPart"]
                == [
                    {"id": "audio_1", "data": "M000q", "transcript": "M001q"},
                    {"data": "M002q", "transcript": "M003q"},
                    {"expires_at": 1700000000},
                ]
            ),
        ),
    ]
    cases = []
    for name, deltas, covers, expect in rows:
        for cut in (False, True):
            chunks = [_chunk([first])]
            chunks += [_chunk([_choice(d)]) for d in deltas]
            kept = [w for d in deltas for w in markers_in(d)]
            if not cut:
                logprobs = {
                    "content": [
                        {"token": "M009q", "logprob": -0.1, "bytes": [77], "top_logprobs": []}
                    ]
                }
                chunks.append(
                    _chunk(
                        [_choice({}, "stop", logprobs=logprobs)],
                        system_fingerprint="fp_1",
                        service_tier="default",
                    )
                )
                usage = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
                chunks.append(_chunk([], usage=usage, obfuscation="pad", moderation=_moderation()))
                kept += ["M009q", "M008q", "fp_1"]
                covers = covers | {
                    "choice:logprobs",
                    "chunk:system_fingerprint",
                    "chunk:service_tier",
                }
                covers |= {"chunk:usage", "chunk:obfuscation", "chunk:moderation"}
            cases.append(
                Case(
                    id=f"chat-{name}{'-cut' if cut else ''}",
                    provider="openai-chat",
                    events=chunks,
                    covers=covers | base,
                    kept=kept,
                    expect=expect,
                )
            )
    return cases


def _moderation() -> dict[str, Any]:
    from openai.types.chat.chat_completion_chunk import Moderation

    data: dict[str, Any] = minimal(Moderation)
    data["input"]["model"] = "M008q"
    return data
