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

from typing import TYPE_CHECKING, Any, Iterable, TypeVar, overload

from . import _backend, errors, message_chunk
from ._types import ListMerge, MergeOptions, Policy, Provider, SignatureMerge, UsageMerge
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

if TYPE_CHECKING:
    from typing_extensions import Unpack

    _T = TypeVar("_T")
    _L = TypeVar("_L")
    _R = TypeVar("_R")

    # The result is one of the inputs' types (rules §1): a None side gives the other side;
    # str + str is a str, list + list a list, dict + dict a dict, chunk + chunk a chunk of
    # that class, a same-type ``__add__`` that type; otherwise the right value. (No overload
    # returns Any: mypy would then give Any for every argument that holds an Any, such as a
    # ``dict[str, Any]``.) The implementations are the backend's, bound below.
    @overload
    def merge(left: None, right: _T, **options: Unpack[MergeOptions]) -> _T: ...
    @overload
    def merge(left: _T, right: None, **options: Unpack[MergeOptions]) -> _T: ...
    @overload
    def merge(left: _L, right: _R, **options: Unpack[MergeOptions]) -> _L | _R: ...
    def merge(left: Any, right: Any, **options: Unpack[MergeOptions]) -> Any:
        """Merge ``right`` into ``left`` (rules §1): a new value, inputs never mutated."""

    def merge_all(items: Iterable[_T], **options: Unpack[MergeOptions]) -> _T | None:
        """``functools.reduce(merge, items)`` in linear time, of the items' type; None for
        no items (rules §1.3)."""

else:
    merge = _backend.impl.merge
    merge_all = _backend.impl.merge_all
#: openJiuwen's name of :func:`merge` (``message_chunk.merge_parser_content``): the same
#: function (``_backend.ALIASES``).
merge_parser_content = merge
merge_dicts = _backend.impl.merge_dicts
concat_token_ids = _backend.impl.concat_token_ids
merge_logprobs = _backend.impl.merge_logprobs
#: LangChain's chunk addition over field dicts (``policy="langchain"``); the public form is
#: ``fastmerge.langchain.merge_chunks``.
add_ai_message_chunks = _backend.impl.add_ai_message_chunks
MAX_DEPTH: int = _backend.impl.MAX_DEPTH
POLICIES: tuple[str, ...] = _backend.impl.POLICIES
LIST_MERGES: tuple[str, ...] = _backend.impl.LIST_MERGES
ATOMIC_KEYS: frozenset[str] = _backend.impl.ATOMIC_KEYS


def backend_info() -> dict[str, Any]:
    """Which backend runs, the versions, and why a fallback happened (``None`` if none).

    ``"build"`` is how the extension was compiled: ``"release"`` (what ``pip install`` and
    ``make build-prod`` give) or ``"debug"`` (``make dev``: many times slower); ``None`` without
    the extension."""
    return _backend.info()


# typing helpers for the annotations above, not names of the package
del TYPE_CHECKING, Any, Iterable, TypeVar, overload


__all__ = [
    "ATOMIC_KEYS",
    "ListMerge",
    "MergeOptions",
    "Policy",
    "Provider",
    "SignatureMerge",
    "UsageMerge",
    "merge_parser_content",
    "message_chunk",
    "AggregatorClosedError",
    "Aggregator",
    "EventError",
    "PROVIDERS",
    "add_ai_message_chunks",
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
