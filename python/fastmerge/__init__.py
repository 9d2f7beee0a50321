"""fastmerge: turn streamed LLM output back into complete messages, fast and exactly.

A provider stream (here two OpenAI Chat chunks, as dicts) into one message, chunk objects
added up, and the generic merge of JSON deltas:

>>> import fastmerge
>>> events = [
...     {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hel"}}]},
...     {"choices": [{"index": 0, "delta": {"content": "lo!"}, "finish_reason": "stop"}]},
... ]
>>> message = fastmerge.aggregate(events)
>>> message.content, message.status, message.finish_reason
('Hello!', 'complete', 'stop')
>>> Chunk = fastmerge.AssistantMessageChunk
>>> (Chunk(content="Hel") + Chunk(content="lo!")).to_message().content
'Hello!'
>>> fastmerge.merge_all([{"id": "c1", "text": "Hel"}, {"id": "c1", "text": "lo!"}], policy="delta")
{'id': 'c1', 'text': 'Hello!'}

The merge functions come from the Rust extension (``fastmerge._fastmerge``) or from its
pure-Python twin (``fastmerge._pure``); both give byte-identical results. ``BACKEND`` says which
one runs, :func:`backend_info` why.

The docstrings cite the merge rules as "rules §3" and the edge cases as "[E38]": those are
``docs/merge-rules.md`` and ``docs/edge-cases.md`` in the source repository.
"""

from typing import Any

from . import _backend, errors
from ._version import __version__
from .aggregate import PROVIDERS, Aggregator, aggregate, aggregate_choices
from .errors import (
    AggregatorClosedError,
    AnomalyError,
    CycleError,
    DepthLimitError,
    EventError,
    MergeError,
    MergeTypeError,
)
from .messages import (
    AssistantMessage,
    AssistantMessageChunk,
    BaseMessageChunk,
    ToolMessage,
    ToolMessageChunk,
    fold_chunks,
)
from .parts import (
    ArgumentsError,
    MediaPart,
    OpaquePayload,
    ReasoningPart,
    TextPart,
    ToolCall,
    ToolCallPart,
    ToolResultPart,
    UnknownPart,
    UsageMetadata,
)
from .render import to_provider

#: ``"rust"`` or ``"python"``: the implementation behind the functions below.
BACKEND: str = _backend.selected

# The names in _backend.API, bound to the selected implementation (read through _backend, so
# that no alias of it shows in the package's namespace).
merge = _backend.impl.merge
merge_all = _backend.impl.merge_all
merge_dicts = _backend.impl.merge_dicts
concat_token_ids = _backend.impl.concat_token_ids
merge_logprobs = _backend.impl.merge_logprobs
MAX_DEPTH: int = _backend.impl.MAX_DEPTH
POLICIES: tuple[str, ...] = _backend.impl.POLICIES
LIST_MERGES: tuple[str, ...] = _backend.impl.LIST_MERGES
ATOMIC_KEYS: frozenset[str] = _backend.impl.ATOMIC_KEYS


def backend_info() -> dict[str, Any]:
    """Which backend runs, the versions, and why a fallback happened (``None`` if none)."""
    return _backend.info()


del Any  # only for the annotation above: not a name of the package


__all__ = [
    "ATOMIC_KEYS",
    "AggregatorClosedError",
    "Aggregator",
    "EventError",
    "PROVIDERS",
    "aggregate",
    "aggregate_choices",
    "to_provider",
    "AnomalyError",
    "ArgumentsError",
    "AssistantMessage",
    "AssistantMessageChunk",
    "BaseMessageChunk",
    "MediaPart",
    "OpaquePayload",
    "ReasoningPart",
    "TextPart",
    "ToolCall",
    "ToolCallPart",
    "ToolMessage",
    "ToolMessageChunk",
    "ToolResultPart",
    "UnknownPart",
    "UsageMetadata",
    "fold_chunks",
    "BACKEND",
    "CycleError",
    "DepthLimitError",
    "LIST_MERGES",
    "MAX_DEPTH",
    "MergeError",
    "MergeTypeError",
    "POLICIES",
    "__version__",
    "backend_info",
    "concat_token_ids",
    "errors",
    "merge",
    "merge_all",
    "merge_dicts",
    "merge_logprobs",
]
