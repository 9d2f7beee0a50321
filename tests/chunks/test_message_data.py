"""An aggregated message's folded data. The twin keeps it as a dict; the Rust backend as a
read-only ``Mapping`` (``MessageData``) that makes each field a Python object at its first read.
Both must read alike: the same keys in the same order, the same values, the same errors, and
each field the same object at every read."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Mapping
from types import ModuleType
from typing import Any

import orjson
import pytest
from _support.corpus import streams

from fastmerge import aggregate_choices
from fastmerge._pure.aggregate import AggregatorCore as TwinCore

STREAM = streams("openai_chat")[0]


def _data(message: Any) -> Mapping[str, Any]:
    data: Mapping[str, Any] = object.__getattribute__(message, "_d")
    return data


def test_the_data_reads_as_the_twins_dict(aggregate_module: ModuleType, backend_name: str) -> None:
    (message,) = aggregate_module.aggregate_choices(STREAM.read_bytes(), "openai-chat")
    data = _data(message)
    (twin,) = TwinCore.aggregate(STREAM.read_bytes(), "openai-chat")
    assert type(twin) is dict
    assert isinstance(data, Mapping)
    assert type(data).__name__ == ("MessageData" if backend_name == "rust" else "dict")
    assert list(data) == list(twin) == list(data.keys())
    assert len(data) == len(twin)
    assert dict(data) == twin
    assert data == twin and twin == data and not (data != twin)
    assert [k for k, _ in data.items()] == list(twin)
    assert orjson.dumps(list(data.values())) == orjson.dumps(list(twin.values()))
    assert orjson.dumps(dict(data)) == orjson.dumps(twin)
    assert "parts" in data and "nope" not in data and 7 not in data
    assert data.get("nope") is None and data.get("nope", 3) == 3
    assert data.get("role") == "assistant"


def test_a_field_is_the_same_object_at_every_read(aggregate_module: ModuleType) -> None:
    (message,) = aggregate_module.aggregate_choices(STREAM.read_bytes(), "openai-chat")
    data = _data(message)
    assert data["parts"] is data["parts"] is data.get("parts")
    assert data["usage"] is dict(data.items())["usage"]


def test_a_missing_key_raises_key_error(aggregate_module: ModuleType) -> None:
    (message,) = aggregate_module.aggregate_choices(STREAM.read_bytes(), "openai-chat")
    data = _data(message)
    with pytest.raises(KeyError):
        data["nope"]
    with pytest.raises(KeyError):
        data[0]  # type: ignore[index]


def test_the_data_pickles_and_copies_as_a_dict(aggregate_module: ModuleType) -> None:
    (message,) = aggregate_module.aggregate_choices(STREAM.read_bytes(), "openai-chat")
    data = _data(message)
    for made in (pickle.loads(pickle.dumps(data)), copy.deepcopy(data), copy.copy(data)):
        assert type(made) is dict
        assert made == data
    assert pickle.loads(pickle.dumps(message)) == message


def test_unequal_to_what_is_not_a_mapping(aggregate_module: ModuleType) -> None:
    (message,) = aggregate_module.aggregate_choices(STREAM.read_bytes(), "openai-chat")
    data = _data(message)
    assert data != list(data)
    assert data != None  # noqa: E711 - the comparison under test
    assert data != {**dict(data), "role": "user"}


def test_reading_fields_in_any_order_gives_the_messages_fields(
    aggregate_module: ModuleType,
) -> None:
    """A message read field by field (fields made one at a time, in any order) is the message
    whose fields were all made at once."""
    raw = STREAM.read_bytes()
    (first,) = aggregate_module.aggregate_choices(raw, "openai-chat")
    (second,) = aggregate_module.aggregate_choices(raw, "openai-chat")
    reads = (second.usage_metadata, second.content, second.finish_reason, second.tool_calls)
    assert reads == (first.usage_metadata, first.content, first.finish_reason, first.tool_calls)
    assert second.to_dict() == first.to_dict() == dict(aggregate_choices(raw)[0].to_dict())
