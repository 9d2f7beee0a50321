"""openJiuwen's ``message_chunk`` module, from fastmerge: replacing
``from openjiuwen.core.foundation.llm.schema.message_chunk import ...`` with
``from fastmerge.message_chunk import ...`` is the whole migration.

It holds every public name of openJiuwen's module that fastmerge implements, including those
it imports for its users (``ToolCall``, ``AssistantMessage``, ``ToolMessage``) and
``UsageMetadata`` (openJiuwen's ``message`` module), plus its two token helpers under their
private names. fastmerge has no ``merge_pydantic_models``, ``BaseMessage``, ``UserMessage``
or ``SystemMessage``; ``merge_parser_content`` merges pydantic models field by field itself
(rules §1.1). Each name is the package's (:mod:`fastmerge`), so it follows the selected
backend.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import (
        AssistantMessage,
        AssistantMessageChunk,
        BaseMessageChunk,
        ToolCall,
        ToolMessage,
        ToolMessageChunk,
        UsageMetadata,
        merge_dicts,
        merge_parser_content,
    )

    # openJiuwen's private names of the token helpers, typed for code that imports them
    from . import concat_token_ids as _concat_token_ids  # noqa: F401
    from . import merge_logprobs as _merge_logprobs  # noqa: F401

__all__ = [
    "AssistantMessage",
    "AssistantMessageChunk",
    "BaseMessageChunk",
    "ToolCall",
    "ToolMessage",
    "ToolMessageChunk",
    "UsageMetadata",
    "merge_dicts",
    "merge_parser_content",
]

# openJiuwen's private helper names -> fastmerge's public ones
_PRIVATE = {"_concat_token_ids": "concat_token_ids", "_merge_logprobs": "merge_logprobs"}


def __getattr__(name: str) -> Any:
    # read from the package at each access, so a name is always the selected backend's (and
    # the one a test rebinds on the package)
    if name in __all__ or name in _PRIVATE:
        import fastmerge

        return getattr(fastmerge, _PRIVATE.get(name, name))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__, *_PRIVATE])
