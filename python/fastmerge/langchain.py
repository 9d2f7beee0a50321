"""LangChain integration (``pip install fastmerge[langchain]``, langchain-core 1.x).

- :func:`merge_chunks`: the ``AIMessageChunk`` that LangChain's own
  ``functools.reduce(operator.add, chunks)`` gives, field for field, in linear time (LangChain's
  reduce copies the whole message at every ``+``).
- :func:`to_langchain` / :func:`from_langchain`: fastmerge messages as LangChain messages and
  back, reasoning, tool calls, usage and provider payloads kept where LangChain has a place
  for them.
- :class:`SessionChatMessageHistory`: a ``BaseChatMessageHistory`` on a fastmerge
  :class:`~fastmerge.session.Session`.

This module only converts. The merge rules are the engine's (``policy="langchain"`` and
``fastmerge.add_ai_message_chunks``, docs/langchain-policy.md); the rest of what
``AIMessageChunk.__add__`` does (parsing ``tool_call_chunks`` into ``tool_calls``, the ``v1``
content blocks) is LangChain's own constructor, called here once instead of once per chunk.
"""

from __future__ import annotations

import functools
import json
import operator
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import fastmerge

try:
    from langchain_core.chat_history import BaseChatMessageHistory
    from langchain_core.messages import (
        AIMessage,
        AIMessageChunk,
        BaseMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
    )
    from langchain_core.messages.tool import tool_call_chunk
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "fastmerge.langchain needs langchain-core: pip install 'fastmerge[langchain]'"
    ) from exc

if TYPE_CHECKING:
    from .session import Session

__all__ = [
    "SessionChatMessageHistory",
    "from_langchain",
    "merge_chunks",
    "to_langchain",
]

#: The key, in a fastmerge message's ``metadata``, of the LangChain message it was made from.
LANGCHAIN_KEY = "langchain"
#: The key, in an ``AIMessage``'s ``additional_kwargs``, of the fastmerge message it was made
#: from (``to_dict()``): LangChain's integrations send no unknown ``additional_kwargs`` key to a
#: provider, so it rides along unseen.
FASTMERGE_KEY = "fastmerge"


# ---------------------------------------------------------------------------------------------
# merge_chunks


def merge_chunks(chunks: Iterable[AIMessageChunk]) -> AIMessageChunk:
    """``functools.reduce(operator.add, chunks)``: the same ``AIMessageChunk``, field for field
    (content, ``additional_kwargs``, ``response_metadata``, ``tool_call_chunks`` and the
    ``tool_calls`` parsed from them, ``usage_metadata`` added up, ``id``, ``chunk_position``),
    and the same error where LangChain raises one (a
    :class:`fastmerge.errors.MergeConflictError` of LangChain's class only: a ``TypeError``
    where LangChain raises ``TypeError``, a ``ValueError`` where it raises ``ValueError``), in
    time linear in the total size.

    One chunk is returned as it is, as ``reduce`` does; no chunk raises ``TypeError``.
    """
    items = list(chunks)
    if not items:
        raise TypeError("merge_chunks() of an empty sequence of chunks")
    for position, chunk in enumerate(items):
        if not isinstance(chunk, AIMessageChunk):
            raise TypeError(
                f"merge_chunks() takes AIMessageChunk objects; item {position} is "
                f"{type(chunk).__name__}"
            )
    if len(items) == 1:
        return items[0]
    # In output_version="v1", each chunk LangChain builds after a chunk_position="last" one
    # rewrites its content blocks (tool_call_chunk -> tool_call): only its own step-by-step
    # addition gives that, so the chunks after such a chunk are added by LangChain.
    cut = _v1_cut(items)
    if cut is not None:
        head = _merge(items[: cut + 1]) if cut else items[0]
        return functools.reduce(operator.add, items[cut + 1 :], head)
    return _merge(items)


def _v1_cut(items: Sequence[AIMessageChunk]) -> int | None:
    for position, chunk in enumerate(items[:-1]):
        if chunk.chunk_position == "last" and any(
            c.response_metadata.get("output_version") == "v1" for c in items
        ):
            return position
    return None


def _merge(items: Sequence[AIMessageChunk]) -> AIMessageChunk:
    # a pydantic model keeps its fields in its __dict__: the engine reads the seven it merges
    # from there, with no dict built per chunk
    merged = fastmerge.add_ai_message_chunks([vars(c) for c in items])
    assert merged is not None  # items is not empty
    content = merged["content"]
    if merged["chunk_position"] == "last" and isinstance(content, list):
        # LangChain's validators rewrite v1 blocks in place: give them copies, not the
        # blocks of the input chunks
        content = [dict(block) if isinstance(block, dict) else block for block in content]
    calls = merged["tool_call_chunks"] or []
    return type(items[0])(
        content=content,
        additional_kwargs=merged["additional_kwargs"],
        # LangChain rebuilds every merged call chunk from these four keys
        tool_call_chunks=[
            tool_call_chunk(
                name=call.get("name"),
                args=call.get("args"),
                index=call.get("index"),
                id=call.get("id"),
            )
            for call in calls
        ],
        response_metadata=merged["response_metadata"],
        usage_metadata=merged["usage_metadata"],
        id=merged["id"],
        chunk_position=merged["chunk_position"],
    )


# ---------------------------------------------------------------------------------------------
# Messages: fastmerge -> LangChain

# fastmerge wire format -> LangChain's response_metadata["model_provider"]
_MODEL_PROVIDERS = {
    "openai-chat": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "gemini": "google_genai",
    "bedrock-converse": "bedrock_converse",
    "ollama": "ollama",
}


def to_langchain(message: Any) -> BaseMessage:
    """A LangChain message for a fastmerge message.

    An ``AssistantMessage`` (what :func:`fastmerge.aggregate` returns) becomes an ``AIMessage``
    shaped as the provider's LangChain integration shapes a non-streamed reply: text as
    ``content`` (Anthropic: its content blocks, thinking with its signature, ``tool_use``
    with its input, when there is more than text), ``tool_calls`` (arguments parsed; a call
    whose arguments do not parse goes to ``invalid_tool_calls`` with its raw text),
    ``usage_metadata`` (input / output / total, cache reads and writes, reasoning tokens),
    ``response_metadata`` (``finish_reason``, ``model_name``, ``model_provider``), ``id``,
    ``additional_kwargs["reasoning_content"]`` for reasoning that has no content block and
    ``additional_kwargs["refusal"]``. The whole message (``to_dict()``, payloads included) is
    ``additional_kwargs["fastmerge"]``, so :func:`from_langchain` gives it back unchanged.
    A ``ToolMessage`` becomes a LangChain ``ToolMessage``, a user or system message dict a
    ``HumanMessage`` / ``SystemMessage``. A message made by :func:`from_langchain` gives
    back the LangChain message it was made from.
    """
    if isinstance(message, BaseMessage):
        return message
    if isinstance(message, dict):
        return _plain_to_langchain(message)
    kept = _kept(getattr(message, "metadata", None))
    if kept is not None:
        return kept
    kind = type(message)
    name = kind.__name__ if kind.__module__.startswith("fastmerge.") else ""
    if name in ("ToolMessage", "ToolMessageChunk"):
        return ToolMessage(
            content=_plain(message.content),
            tool_call_id=message.tool_call_id or "",
            name=message.name,
        )
    if name in ("AssistantMessage", "AssistantMessageChunk"):
        return _assistant_to_langchain(message)
    raise TypeError(f"to_langchain() takes a fastmerge message, not {type(message).__name__}")


def _kept(metadata: Any) -> BaseMessage | None:
    """The LangChain message that ``from_langchain`` kept in ``metadata``, if any."""
    if not isinstance(metadata, dict) or not isinstance(metadata.get(LANGCHAIN_KEY), dict):
        return None
    from langchain_core.messages import messages_from_dict

    data = _plain(metadata[LANGCHAIN_KEY])
    return messages_from_dict([{"type": data.get("type"), "data": data}])[0]


def _plain(value: Any) -> Any:
    """A JSON copy: plain dicts and lists (fastmerge hands out read-only ones)."""
    return json.loads(json.dumps(value))


def _plain_to_langchain(message: dict[str, Any]) -> BaseMessage:
    kept = _kept(message.get("metadata"))
    if kept is not None:
        return kept
    role = message.get("role")
    content = _plain(message.get("content", ""))
    name = message.get("name")
    if role == "user":
        return HumanMessage(content=content, name=name)
    if role == "system":
        return SystemMessage(content=content, name=name)
    raise TypeError(f"to_langchain() takes a user or system message dict, not role {role!r}")


def _assistant_to_langchain(message: Any) -> AIMessage:
    data = _plain(message.to_dict())
    parts = data["parts"]
    provider = (data.get("provider_metadata") or {}).get("provider")
    tool_calls, invalid = [], []
    for part in parts:
        if part["part"] != "tool_call":
            continue
        arguments = part.get("arguments")
        try:
            args = arguments if isinstance(arguments, dict) else json.loads(arguments or "{}")
        except ValueError:
            args = None
        if isinstance(args, dict):
            tool_calls.append(
                {
                    "name": part.get("name") or "",
                    "args": args,
                    "id": part.get("id"),
                    "type": "tool_call",
                }
            )
        else:
            invalid.append(
                {
                    "name": part.get("name"),
                    "args": arguments if isinstance(arguments, str) else json.dumps(arguments),
                    "id": part.get("id"),
                    "error": None,
                    "type": "invalid_tool_call",
                }
            )
    additional: dict[str, Any] = {}
    content: Any
    if provider == "anthropic" and any(p["part"] != "text" for p in parts):
        # what ChatAnthropic's invoke() gives: the response's content blocks
        response = message.to_provider("anthropic")
        content = _plain(response.get("content", []))
    else:
        content = message.content if isinstance(message.content, str) else _plain(message.content)
        if message.reasoning_content is not None:
            additional["reasoning_content"] = message.reasoning_content
    if message.refusal is not None:
        additional["refusal"] = message.refusal
    additional[FASTMERGE_KEY] = data
    response_metadata: dict[str, Any] = {}
    if message.finish_reason:
        response_metadata["finish_reason"] = message.finish_reason
    if message.response_model:
        response_metadata["model_name"] = message.response_model
    if provider in _MODEL_PROVIDERS:
        response_metadata["model_provider"] = _MODEL_PROVIDERS[provider]
    return AIMessage(
        content=content,
        additional_kwargs=additional,
        response_metadata=response_metadata,
        tool_calls=tool_calls,
        invalid_tool_calls=invalid,
        usage_metadata=_usage_to_langchain(message.usage_metadata),
        id=message.response_id,
    )


def _usage_to_langchain(usage: Any) -> dict[str, Any] | None:
    if usage is None:
        return None
    given = usage.to_dict() if hasattr(usage, "to_dict") else dict(usage)
    out: dict[str, Any] = {
        "input_tokens": int(usage.input_tokens or 0),
        "output_tokens": int(usage.output_tokens or 0),
        "total_tokens": int(usage.total_tokens or 0),
    }
    input_details = {}
    if given.get("cache_read_tokens") is not None:
        input_details["cache_read"] = int(given["cache_read_tokens"])
    if given.get("cache_write_tokens") is not None:
        input_details["cache_creation"] = int(given["cache_write_tokens"])
    if input_details:
        out["input_token_details"] = input_details
    if given.get("reasoning_tokens") is not None:
        out["output_token_details"] = {"reasoning": int(given["reasoning_tokens"])}
    return out


# ---------------------------------------------------------------------------------------------
# Messages: LangChain -> fastmerge


def from_langchain(message: BaseMessage) -> Any:
    """A fastmerge message for a LangChain message, for a :class:`~fastmerge.session.Session`
    or :func:`fastmerge.to_provider`.

    An ``AIMessage`` made by :func:`to_langchain` gives back that fastmerge message, unchanged.
    Any other ``AIMessage`` (or ``AIMessageChunk``) becomes a ``fastmerge.AssistantMessage``:
    its text and reasoning (``reasoning_content``, thinking blocks with their Anthropic
    signature, redacted thinking, v1 reasoning blocks) as parts in order, its ``tool_calls``
    (and ``invalid_tool_calls``, raw) as tool calls, ``usage_metadata``, ``finish_reason``
    / ``stop_reason``, ``model_name`` and ``id``; any other content block is an unknown part
    kept verbatim. A ``ToolMessage`` becomes a ``fastmerge.ToolMessage``, a ``HumanMessage``
    / ``SystemMessage`` a user / system message dict. Every message keeps the LangChain
    message it was made from in ``metadata["langchain"]`` (never replayed to a provider), so
    :func:`to_langchain` gives it back equal.
    """
    if not isinstance(message, BaseMessage):
        raise TypeError(f"from_langchain() takes a LangChain message, not {type(message).__name__}")
    if isinstance(message, AIMessage):
        stored = message.additional_kwargs.get(FASTMERGE_KEY)
        if isinstance(stored, dict) and _unchanged(message, stored):
            return fastmerge.AssistantMessage.from_dict(stored)
    kept = {LANGCHAIN_KEY: _plain(message.model_dump())}
    if isinstance(message, AIMessage):
        return _assistant_from_langchain(message, kept)
    if isinstance(message, ToolMessage):
        return fastmerge.ToolMessage(
            tool_call_id=message.tool_call_id,
            content=_plain(message.content),
            name=message.name,
            metadata=kept,
        )
    if isinstance(message, (HumanMessage, SystemMessage)):
        role = "user" if isinstance(message, HumanMessage) else "system"
        out: dict[str, Any] = {"role": role, "content": _plain(message.content)}
        if message.name is not None:
            out["name"] = message.name
        out["metadata"] = kept
        return out
    raise TypeError(
        f"from_langchain() takes AI, human, system or tool messages, not {type(message).__name__}"
    )


def _unchanged(message: AIMessage, stored: dict[str, Any]) -> bool:
    """Whether the fastmerge message ``stored`` still reads as ``message`` does (its content,
    tool calls and usage were not edited since :func:`to_langchain`)."""
    try:
        again = _assistant_to_langchain(fastmerge.AssistantMessage.from_dict(stored))
    except Exception:
        return False
    return (
        again.content == message.content
        and again.tool_calls == message.tool_calls
        and again.invalid_tool_calls == message.invalid_tool_calls
        and again.usage_metadata == message.usage_metadata
    )


def _assistant_from_langchain(message: AIMessage, kept: dict[str, Any]) -> Any:
    parts: list[dict[str, Any]] = []
    reasoning = message.additional_kwargs.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        parts.append({"part": "reasoning", "text": reasoning})
    content = message.content
    if isinstance(content, str):
        if content:
            parts.append({"part": "text", "text": content})
    else:
        for block in content:
            part = _block_part(block)
            if part is not None:
                parts.append(part)
    for call in message.tool_calls:
        parts.append(
            {
                "part": "tool_call",
                "id": call.get("id"),
                "name": call.get("name"),
                "arguments": json.dumps(call.get("args", {})),
            }
        )
    for invalid in message.invalid_tool_calls:
        parts.append(
            {
                "part": "tool_call",
                "id": invalid.get("id"),
                "name": invalid.get("name"),
                "arguments": invalid.get("args") or "",
            }
        )
    metadata = message.response_metadata
    usage = message.usage_metadata
    refusal = message.additional_kwargs.get("refusal")
    return fastmerge.AssistantMessage(
        parts=parts,
        usage_metadata=_usage_from_langchain(usage) if usage else None,
        finish_reason=metadata.get("finish_reason") or metadata.get("stop_reason"),
        response_model=metadata.get("model_name") or metadata.get("model"),
        response_id=message.id,
        refusal=refusal if isinstance(refusal, str) else None,
        name=message.name,
        metadata=kept,
    )


def _block_part(block: Any) -> dict[str, Any] | None:
    """The part for one content block (tool-call blocks: None, their calls are ``tool_calls``)."""
    if isinstance(block, str):
        return {"part": "text", "text": block} if block else None
    kind = block.get("type") if isinstance(block, dict) else None
    if kind == "text":
        return {"part": "text", "text": block.get("text", "")}
    if kind == "thinking":
        part: dict[str, Any] = {"part": "reasoning", "text": block.get("thinking", "")}
        if block.get("signature"):
            part["payload"] = {
                "provider": "anthropic",
                "kind": "signature",
                "data": block["signature"],
            }
        return part
    if kind == "redacted_thinking":
        return {
            "part": "reasoning",
            "redacted": True,
            "payload": {"provider": "anthropic", "kind": "redacted", "data": block.get("data")},
        }
    if kind == "reasoning":
        text = block.get("reasoning")
        if text is None:
            summary = block.get("summary") or []
            text = "".join(s.get("text", "") for s in summary if isinstance(s, dict))
        return {"part": "reasoning", "text": text or ""}
    if kind in ("tool_use", "tool_call", "tool_call_chunk", "function_call"):
        return None
    return {"part": "unknown", "provider": "langchain", "kind": str(kind), "raw": _plain(block)}


def _usage_from_langchain(usage: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "input_tokens": usage.get("input_tokens", 0),
        "output_tokens": usage.get("output_tokens", 0),
        "total_tokens": usage.get("total_tokens", 0),
    }
    details = usage.get("input_token_details") or {}
    if details.get("cache_read") is not None:
        out["cache_read_tokens"] = details["cache_read"]
    if details.get("cache_creation") is not None:
        out["cache_write_tokens"] = details["cache_creation"]
    output_details = usage.get("output_token_details") or {}
    if output_details.get("reasoning") is not None:
        out["reasoning_tokens"] = output_details["reasoning"]
    return out


# ---------------------------------------------------------------------------------------------
# Chat history


class SessionChatMessageHistory(BaseChatMessageHistory):
    """LangChain chat history stored in a fastmerge :class:`~fastmerge.session.Session`
    (SQLite, PostgreSQL or your own store; appends from many processes; the log never
    rewritten). ``messages`` reads the session's history (as replayed: after ``clear()``
    and compactions) as LangChain messages; ``add_messages`` appends them in one
    transaction. A message read back equals the one added.

    >>> history = SessionChatMessageHistory(Session("chat-1", "chat.db"))  # doctest: +SKIP
    """

    def __init__(self, session: Session) -> None:
        from .session import Session

        if not isinstance(session, Session):
            raise TypeError(f"session must be a fastmerge Session, not {type(session).__name__}")
        self.session = session

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        """The history as LangChain messages."""
        return [to_langchain(message) for message in self.session.messages()]

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append the messages, all or none."""
        self.session.append([from_langchain(message) for message in messages])

    def clear(self) -> None:
        """Start the history anew (the session's log keeps what came before)."""
        self.session.clear()
