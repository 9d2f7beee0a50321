"""The assistant message with every field set, and the check that holds a backend's chunks to
the field table (``fastmerge._message_fields``): the schema tests."""

from __future__ import annotations

from typing import Any, Sequence

#: A value for every keyword of ``AssistantMessageChunk``, none its default: each shows in
#: the folded data (a new keyword needs one here, which the schema test asks for).
EVERY_FIELD: dict[str, Any] = {
    "role": "bot",
    "content": ["hi"],
    "name": "n",
    "metadata": {"m": 1},
    "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}, "index": 0}
    ],
    "usage_metadata": {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3},
    "finish_reason": "stop",
    "parser_content": {"p": 1},
    "reasoning_content": "think",
    "prompt_token_ids": [1],
    "completion_token_ids": [2],
    "logprobs": {"content": [{"token": "a", "logprob": -0.5}]},
    "response_id": "r1",
    "response_model": "m1",
    "provider_metadata": {"pm": 1},
    "provider_content": {"pc": 1},
    "parts": [{"part": "text", "text": "more"}],
    "refusal": "no",
    "status": "completed",
    "anomalies": [{"code": "truncated", "detail": "d"}],
    "choice_index": 2,
}


def field_problems(
    chunk_class: Any,
    data_keys: Sequence[str],
    dict_names: Sequence[str],
    dict_keys: Sequence[str],
) -> list[str]:
    """What the engine behind ``chunk_class`` does otherwise than the table says: the keys of
    its folded data (``data_keys``, after ``family``) and of ``to_dict()`` (``dict_names``,
    the folded data's ``dict_keys``), in order, and every field's value surviving the fold
    (a field the engine does not fold reads as in an empty message). Empty when they agree."""
    problems: list[str] = []
    full = chunk_class(**EVERY_FIELD)
    empty = chunk_class()
    for finish in (False, True):
        got = list(full._data(finish))
        if got[:1] != ["family"]:
            problems.append(f"the folded data does not start with 'family': {got}")
        got = got[1:]
        for key in data_keys:
            if key not in got:
                problems.append(f"the engine's data lacks the table's {key!r}")
        for key in got:
            if key not in data_keys:
                problems.append(f"the engine's data has {key!r}, which the table lacks")
        if got != list(data_keys) and set(got) == set(data_keys):
            problems.append(f"the engine's data keys are in another order: {got}")
    shown = list(full.to_dict())
    if shown != list(dict_names):
        problems.append(f"to_dict() gives {shown}, the table {list(dict_names)}")
    data, nothing = full._data(), empty._data()
    for key in data_keys:
        if key in data and data[key] == nothing.get(key):
            problems.append(f"{key!r} reads as in an empty message: the engine dropped it")
    stored = dict(zip(dict_names, dict_keys))
    again = type(full).from_dict(full.to_dict())._data()
    for name, key in stored.items():
        if key in data and again.get(key) != data[key]:
            problems.append(f"from_dict(to_dict()) changed {name!r}")
    return problems
