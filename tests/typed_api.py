"""The types fastmerge promises, checked by ``mypy --strict`` (tests/docs/test_typing.py), never
imported by the tests: ``assert_type`` fails the check when a type drifts, and each
``# type: ignore[code]`` line must stay an error (``--strict`` warns about unused ignores).
"""

from __future__ import annotations

from typing import Any, assert_type, get_args

import fastmerge
from fastmerge import (
    AssistantMessage,
    AssistantMessageChunk,
    ToolCall,
    ToolMessage,
    ToolMessageChunk,
    UsageMetadata,
)
from fastmerge.message_chunk import merge_parser_content

records: list[dict[str, Any]] = [{"id": "c1", "text": "Hel"}, {"text": "lo"}]
assert_type(fastmerge.merge_all(records), dict[str, Any] | None)
assert_type(
    fastmerge.merge_all(records, policy="delta", list_merge="by_index"), dict[str, Any] | None
)
assert_type(fastmerge.merge_all(["a", "b"]), str | None)
assert_type(fastmerge.merge_all([[1], [2]]), list[int] | None)
assert_type(fastmerge.merge(records[0], records[1]), dict[str, Any])
assert_type(fastmerge.merge("a", "b", policy="delta", strict=True), str)
assert_type(fastmerge.merge(None, [1]), list[int])
assert_type(fastmerge.merge([1], None), list[int])
assert_type(fastmerge.merge(1, "a"), int | str)
assert_type(merge_parser_content("a", "b"), str)
assert_type(fastmerge.merge_parser_content({"a": 1}, {"a": 2}), dict[str, int])

chunk = AssistantMessageChunk(content="a")
assert_type(chunk + chunk, AssistantMessageChunk)
assert_type(fastmerge.merge(chunk, chunk), AssistantMessageChunk)
assert_type(fastmerge.merge_all([chunk, chunk]), AssistantMessageChunk | None)
assert_type(
    fastmerge.fold_chunks([chunk], usage="sum", signature_merge="concat"),
    AssistantMessageChunk | None,
)
assert_type(chunk.to_message(), AssistantMessage)
assert_type(chunk.content, str | list[Any])
assert_type(chunk.to_message().content, str | list[Any])
assert_type(chunk.tool_calls, list[ToolCall] | None)
assert_type(chunk.usage_metadata, UsageMetadata | None)
tool = ToolMessageChunk(tool_call_id="c1", content="ok")
assert_type(tool + tool, ToolMessageChunk)
assert_type(tool.to_message(), ToolMessage)
assert_type(fastmerge.aggregate([], provider="openai-chat"), AssistantMessage)
assert_type(fastmerge.aggregate_choices(b"", usage="last"), list[AssistantMessage])
assert_type(chunk.to_message().to_provider("anthropic"), dict[str, Any])

options: fastmerge.MergeOptions = {"policy": "delta", "list_merge": "by_index"}
assert_type(fastmerge.merge_all(records, **options), dict[str, Any] | None)
bad_options: fastmerge.MergeOptions = {"policy": "delta", "mode": 1}  # type: ignore[typeddict-unknown-key]
policy: fastmerge.Policy = "delta"
assert_type(get_args(fastmerge.Policy), tuple[Any, ...])
fastmerge.merge("a", "b", policy=policy)

# misspelt options are type errors
fastmerge.merge("a", "b", policy="delt")  # type: ignore[call-overload]
fastmerge.merge_all(records, list_merge="index")  # type: ignore[arg-type]
fastmerge.aggregate([], provider="openai")  # type: ignore[arg-type]
fastmerge.fold_chunks([chunk], usage="add")  # type: ignore[arg-type]
fastmerge.Aggregator("auto", signature_merge="join")  # type: ignore[arg-type]
chunk.to_message().to_provider("auto")  # type: ignore[arg-type]
# a chunk adds only to a chunk
chunk + "text"  # type: ignore[operator]
