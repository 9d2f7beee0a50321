"""The ``"openai-responses"`` adapter on bad input: bad event shapes, inputs left alone,
auto-detection, SSE bytes split at every position, rendering another provider's message, and
damaged corpus streams that must give the same result on both backends."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from _support.openai_responses import (
    P,
    added,
    agg,
    created,
    done,
    message,
    terminal,
    text_delta,
)

import fastmerge
from fastmerge.errors import EventError

# ---------------------------------------------------------------------------------------------
# Bad shapes, inputs, transports


@pytest.mark.parametrize(
    ("event", "detail"),
    [
        (
            {"type": "response.in_progress", "response": "x"},
            "openai-responses: response.in_progress: 'response' must be a dict, not str",
        ),
        (
            {"type": "response.output_text.delta", "output_index": "0", "delta": "x"},
            "openai-responses: response.output_text.delta: 'output_index' must be an int, not str",
        ),
        (
            {"type": "response.output_text.delta", "output_index": 0, "delta": ["x"]},
            "openai-responses: response.output_text.delta: 'delta' must be a str, not list",
        ),
        (
            text_delta(0, "x", logprobs="bad"),
            "openai-responses: response.output_text.delta: 'logprobs' must be a list, not str",
        ),
        (
            {"type": "response.output_text.delta", "output_index": 0, "content_index": 1.5},
            "openai-responses: response.output_text.delta: 'content_index' must be an int, "
            "not float",
        ),
        (
            {"type": "response.output_item.added", "output_index": 0, "item": []},
            "openai-responses: response.output_item.added: 'item' must be a dict, not list",
        ),
        (
            done(0, {"type": "message", "content": "text"}),
            "openai-responses: response.output_item.done: 'item.content' must be a list, not str",
        ),
        (
            done(0, {"type": "reasoning", "summary": [], "encrypted_content": 5}),
            "openai-responses: response.output_item.done: 'item.encrypted_content' must be "
            "a str, not int",
        ),
        (
            {"type": "response.output_text.delta", "output_index": -1, "delta": "x"},
            "openai-responses: response.output_text.delta: 'output_index' must be between 0 "
            "and 999999999999, not -1",
        ),
        (
            {"type": "response.output_text.delta", "output_index": 0, "content_index": 500},
            "openai-responses: response.output_text.delta: 'content_index' must be between 0 "
            "and 499, not 500",
        ),
        (
            {
                "type": "response.reasoning_summary_text.done",
                "output_index": 0,
                "summary_index": 499,
            },
            "openai-responses: response.reasoning_summary_text.done: 'summary_index' must be "
            "between 0 and 498, not 499",
        ),
        (
            done(0, {"type": "message", "content": [{}] * 501}),
            "openai-responses: response.output_item.done: 'item.content' must have at most "
            "500 entries",
        ),
        (
            {"type": "response.completed", "response": {"output": {}}},
            "openai-responses: response.completed: 'response.output' must be a list, not dict",
        ),
    ],
)
def test_bad_event_shapes(event: dict[str, Any], detail: str) -> None:
    with pytest.raises(EventError) as info:
        agg([created(), event], strict=True)
    assert info.value.event == 2
    assert info.value.detail == detail
    # not strict: skipped, and said (spec §8)
    anomaly = {"code": "unreadable_event", "detail": f"event 2: {detail}"}
    assert anomaly in agg([created(), event]).anomalies


def test_inputs_are_not_mutated() -> None:
    events = [
        created(),
        added(0, message(0) | {"status": "in_progress"}),
        text_delta(0, "a", logprobs=[{"token": "a"}]),
        done(0, message(0, "a")),
        added(1, {"id": "ws", "type": "web_search_call"}),
        done(1, {"id": "ws", "type": "web_search_call", "status": "completed"}),
        terminal(output=[message(0, "a"), {"id": "ws", "type": "web_search_call"}]),
    ]
    before = copy.deepcopy(events)
    msg = agg(events)
    msg.to_provider(P)
    assert events == before


def test_auto_detects_the_provider() -> None:
    msg = fastmerge.aggregate([created(), terminal()], "auto")
    assert msg.provider_metadata["provider"] == P
    assert msg.status == "complete"


def _sse(events: list[dict[str, Any]]) -> bytes:
    out = "".join(
        f"event: {e['type']}\ndata: {json.dumps(e, ensure_ascii=False)}\n\n" for e in events
    )
    return out.encode()


def test_sse_bytes_split_at_every_position() -> None:
    events = [
        created(),
        added(0, message(0) | {"status": "in_progress"}),
        text_delta(0, "Hé"),
        text_delta(0, "😀"),
        done(0, message(0, "Hé😀")),
        terminal(output=[message(0, "Hé😀")]),
    ]
    data = _sse(events)
    whole = fastmerge.aggregate(data, P).to_dict()
    assert whole["parts"][0]["text"] == "Hé😀"
    for cut in range(1, len(data)):
        aggregator = fastmerge.Aggregator(P)
        aggregator.feed(data[:cut])
        aggregator.feed(data[cut:])
        assert aggregator.finish().to_dict() == whole, cut


def test_render_a_message_of_another_provider() -> None:
    """A message built by hand (no Responses metadata) renders with ids left empty."""
    msg = agg([created(), terminal()])
    assert msg.to_provider(P)["output"] == []
    parts = [
        {
            "part": "reasoning",
            "text": "think",
            "payload": {"provider": "anthropic", "kind": "signature", "data": "S"},
        },
        {"part": "text", "text": "hi"},
        {"part": "tool_call", "id": "c1", "name": "f", "arguments": "{}"},
    ]
    other = fastmerge.AssistantMessage.from_dict({"role": "assistant", "parts": parts})
    output = other.to_provider(P)["output"]
    assert [i["type"] for i in output] == ["reasoning", "message", "function_call"]
    assert "encrypted_content" not in output[0]  # another provider's payload is not replayed
    assert output[1]["content"][0]["text"] == "hi"
    assert (output[2]["call_id"], output[2]["arguments"]) == ("c1", "{}")


# ---------------------------------------------------------------------------------------------
# Both backends on damaged streams


def _mutate(rng: Any, events: list[Any]) -> list[Any]:
    """Drop, repeat, swap or cut events, or put a value of another type somewhere inside."""
    out = list(events)
    for _ in range(rng.randint(1, 5)):
        if not out:
            break
        i = rng.randrange(len(out))
        op = rng.random()
        if op < 0.25:
            del out[i]
        elif op < 0.45:
            out.insert(rng.randrange(len(out) + 1), out[i])
        elif op < 0.6:
            j = rng.randrange(len(out))
            out[i], out[j] = out[j], out[i]
        elif op < 0.7:
            out = out[:i]
        else:
            event = copy.deepcopy(out[i])
            node = event
            for _depth in range(3):
                if isinstance(node, dict) and node:
                    key = rng.choice(sorted(node))
                    if isinstance(node[key], (dict, list)) and node[key] and rng.random() < 0.5:
                        node = node[key]
                        continue
                    node[key] = rng.choice([None, 1, 1.5, True, "s", "", [], {}, [1], {"a": 1}])
                elif isinstance(node, list) and node:
                    k = rng.randrange(len(node))
                    if isinstance(node[k], (dict, list)) and rng.random() < 0.5:
                        node = node[k]
                        continue
                    node[k] = rng.choice([None, 1, "s", {}])
                break
            out[i] = event
    return out


@pytest.mark.differential
def test_damaged_corpus_streams_agree_on_both_backends() -> None:
    import random

    from _support.corpus import dumps, streams
    from conftest import AGGREGATES, BACKENDS

    if len(BACKENDS) < 2:
        pytest.skip("one backend under test")
    recorded = [
        [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
        for path in streams("openai_responses")
    ]
    rng = random.Random(4)

    def run(backend: str, events: list[Any], strict: bool) -> Any:
        try:
            module = AGGREGATES[backend]
            return dumps(module.aggregate_choices(events, P, strict=strict))
        except Exception as exc:  # the same error, with the same text, on both
            return (type(exc).__name__, str(exc))

    for trial in range(250):
        events = _mutate(rng, rng.choice(recorded))
        strict = rng.random() < 0.2
        results = {backend: run(backend, events, strict) for backend in BACKENDS}
        assert len(set(map(repr, results.values()))) == 1, (trial, results)
