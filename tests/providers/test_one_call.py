"""``aggregate`` of a whole recorded stream (str or bytes) reads it in one call into the
backend (``AggregatorCore.aggregate``); an :class:`Aggregator` fed the same bytes gives the
same messages and the same errors, on every corpus stream and on wrong input."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from _support.corpus import path_of, stream_ids, streams
from conftest import outcome

CORPUS = [
    (kind, name)
    for kind in ("openai_chat", "gemini", "anthropic_messages")
    for name in stream_ids(kind)[:4]
]


def _fed(module: ModuleType, data: Any, provider: str = "auto", **options: Any) -> Any:
    """The messages of an Aggregator fed ``data`` (the path ``aggregate`` used before)."""
    agg = module.Aggregator(provider, **options)
    agg.feed(data)
    return agg.finish_choices()


def _dicts(messages: list[Any]) -> list[dict[str, Any]]:
    return [m.to_dict() for m in messages]


@pytest.mark.parametrize(("kind", "name"), CORPUS)
def test_one_call_equals_an_aggregator(aggregate_module: ModuleType, kind: str, name: str) -> None:
    data = path_of(kind, name).read_bytes()
    one = aggregate_module.aggregate_choices(data)
    assert _dicts(one) == _dicts(_fed(aggregate_module, data))
    # the same from the str of the same bytes, and with the provider named
    provider = one[0].to_dict()["provider_metadata"]["provider"]
    assert _dicts(aggregate_module.aggregate_choices(data.decode(), provider)) == _dicts(one)


@pytest.mark.parametrize(
    ("data", "provider", "options"),
    [
        (b"", "auto", {}),
        (b"\x1f\x8b\x08\x00", "auto", {}),
        (b'{"choices": []}\n', "nope", {}),
        (b'{"choices": []}\n', "openai-chat", {"usage": "most"}),
        (b'{"choices": []}\n', "openai-chat", {"signature_merge": 3}),
        ('{"x": "\ud800"}\n', "auto", {}),
        (b'{"type": "message_start"}\n', "gemini", {}),
        (
            b'{"choices":[{"index":0,"delta":{"content":"a"}}]}\n{"choices":[{"index":0,'
            b'"delta":{"content":"b"},"finish_reason":"stop"}]}\n{"choices":[{"index":0,'
            b'"delta":{"content":"c"}}]}\n',
            "openai-chat",
            {"strict": True},
        ),
    ],
    ids=["empty", "gzip", "provider", "usage", "signature_merge", "surrogate", "foreign", "strict"],
)
def test_one_call_fails_as_an_aggregator(
    aggregate_module: ModuleType, data: Any, provider: str, options: dict[str, Any]
) -> None:
    one = outcome(aggregate_module.aggregate_choices, data, provider, **options)
    assert one[0] == "raise"
    assert one == outcome(_fed, aggregate_module, data, provider, **options)


def test_streams_are_listed() -> None:
    # the corpus sample above is not empty (a renamed folder would skip every case)
    assert all(streams(kind) for kind, _ in CORPUS)
    assert len(CORPUS) == 12
