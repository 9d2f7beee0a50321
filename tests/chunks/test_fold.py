"""Folding streams of chunks (spec §3–§5, §8).

(a) Property: a known final message, cut into chunks at random points (text anywhere, also
    between the halves of a surrogate pair; arguments anywhere; parallel calls interleaved at
    random with each call's fragments in order; reasoning before text), folds back to that
    message with ``+``, ``sum`` and ``fold_chunks``.
(b) Differential: the same random chunk lists folded with the classes of both backends give
    the same bytes (``orjson.dumps(x.to_dict())``, also after ``to_message()``) or the same
    exception.
(c) Value semantics: every intermediate ``acc`` of a long fold keeps reading as it did; a
    branch from an old intermediate leaves both branches right; two threads extending one
    ``acc`` each get their own result.
"""

from __future__ import annotations

import json
import threading
from types import ModuleType
from typing import Any

import orjson
import pytest
from _support.chunks import fold_plus, summary
from conftest import MESSAGES, canonical
from hypothesis import given
from hypothesis import strategies as st

import fastmerge

# ---------------------------------------------------------------------------------------------
# (a) A known message, cut into chunks

# code points chosen so that cuts fall inside UTF-16 pairs, multi-byte UTF-8 and JSON escapes
_PIECES = ["a", "b", " ", "é", "中", "\U0001f600", "\ud83d\ude00", '"', "\\", "\n", "{", "}"]
_text = st.lists(st.sampled_from(_PIECES), max_size=12).map("".join)
_NAMES = ["get_weather", "search", "f", "g", "lookup"]
_json_leaf = st.one_of(st.integers(-5, 5), st.booleans(), st.none(), _text)
_arguments = st.dictionaries(
    st.sampled_from(["a", "city", "q", "n"]),
    st.one_of(_json_leaf, st.lists(_json_leaf, max_size=3)),
    max_size=3,
).map(lambda d: json.dumps(d, ensure_ascii=False))


def _cut(draw: Any, text: str, *, allow_empty: bool = False) -> list[str]:
    """``text`` cut at random code-point positions (pieces non-empty unless allowed)."""
    if not text:
        return [""] if allow_empty else []
    points = (
        sorted(draw(st.sets(st.integers(1, len(text) - 1), max_size=6))) if len(text) > 1 else []
    )
    bounds = [0, *points, len(text)]
    return [text[i:j] for i, j in zip(bounds, bounds[1:])]


def _slices(draw: Any, items: list[Any], n: int) -> list[list[Any]]:
    """``items`` split into ``n`` consecutive slices (some empty)."""
    points = sorted(draw(st.lists(st.integers(0, len(items)), min_size=n - 1, max_size=n - 1)))
    bounds = [0, *points, len(items)]
    return [items[i:j] for i, j in zip(bounds, bounds[1:])]


@st.composite
def streams(draw: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``(expected, chunk_kwargs)``: the final message and the chunks that stream it."""
    text = draw(_text)
    reasoning = draw(_text)
    n_calls = draw(st.integers(1, 4))
    calls = [
        {
            "id": f"call_{i}_{draw(st.sampled_from(['x', 'y']))}",
            "name": draw(st.sampled_from(_NAMES)),
            "arguments": draw(_arguments),
        }
        for i in range(n_calls)
    ]
    # events: reasoning first, then text pieces and call fragments interleaved at random
    events: list[tuple[str, Any]] = [("reasoning", r) for r in _cut(draw, reasoning)]
    queues: list[list[tuple[str, Any]]] = [[("text", t) for t in _cut(draw, text)]]
    for i, call in enumerate(calls):
        pieces = _cut(draw, call["arguments"])
        fragments = [
            {"index": i, "function": {"arguments": piece}}
            for piece in (pieces[1:] if len(pieces) > 1 else [])
        ]
        first = {
            "index": i,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["name"], "arguments": pieces[0] if pieces else ""},
        }
        queues.append([("call", first), *(("call", f) for f in fragments)])
    order: list[int] = []
    for q, queue in enumerate(queues):
        order.extend([q] * len(queue))
    order = draw(st.permutations(order))
    cursor = [0] * len(queues)
    for q in order:
        events.append(queues[q][cursor[q]])
        cursor[q] += 1
    # chunks: one per event, consecutive call fragments sometimes share a chunk
    chunks: list[dict[str, Any]] = []
    for kind, value in events:
        if kind == "call":
            last = chunks[-1] if chunks else None
            if last is not None and "tool_calls" in last and draw(st.booleans()):
                last["tool_calls"].append(value)
            else:
                chunks.append({"content": None, "tool_calls": [value]})
        elif kind == "text":
            chunks.append({"content": value})
        else:
            chunks.append({"reasoning_content": value})
    chunks.append({"content": None, "finish_reason": "tool_calls"})
    # logprobs (one entry per token) and completion token ids, spread over the chunks
    n_tokens = draw(st.integers(0, 8))
    tokens = [
        {"token": f"t{i}", "logprob": -i / 8, "bytes": [i], "top_logprobs": []}
        for i in range(n_tokens)
    ]
    ids = draw(st.lists(st.integers(0, 2**31), max_size=8))
    for kwargs, lp, part in zip(
        chunks, _slices(draw, tokens, len(chunks)), _slices(draw, ids, len(chunks))
    ):
        if lp:
            kwargs["logprobs"] = {"content": lp}
        if part:
            kwargs["completion_token_ids"] = part
    if draw(st.booleans()):  # Ollama-style zero counts on an early chunk never win
        chunks[0]["usage_metadata"] = {"input_tokens": 0, "output_tokens": 0}
    usage = {
        "input_tokens": draw(st.integers(1, 10**6)),
        "output_tokens": draw(st.integers(1, 10**6)),
    }
    chunks.append({"content": None, "usage_metadata": dict(usage), "response_id": "chatcmpl-1"})
    first_seen = sorted(range(n_calls), key=lambda i: order.index(i + 1))
    expected = {
        "content": text,
        "reasoning_content": reasoning or None,
        "tool_calls": [
            (calls[i]["id"], calls[i]["name"], calls[i]["arguments"], position)
            for position, i in enumerate(first_seen)
        ],
        "logprobs": {"content": tokens} if tokens else None,
        "completion_token_ids": ids or None,
        "usage": usage,
        "finish_reason": "tool_calls",
    }
    return expected, chunks


def _check(message: Any, expected: dict[str, Any]) -> None:
    assert message.content == expected["content"]
    assert message.reasoning_content == expected["reasoning_content"]
    assert summary(message.tool_calls) == expected["tool_calls"]
    assert message.logprobs == expected["logprobs"]
    assert message.completion_token_ids == expected["completion_token_ids"]
    assert message.prompt_token_ids is None
    assert message.finish_reason == expected["finish_reason"]
    assert message.finish_reason_normalized == "tool_calls"
    assert message.response_id == "chatcmpl-1"
    assert message.anomalies == []


@given(streams())
def test_fold_rebuilds_the_known_message(
    stream: tuple[dict[str, Any], list[dict[str, Any]]],
) -> None:
    expected, kwargs = stream
    chunks = [fastmerge.AssistantMessageChunk(**k) for k in kwargs]
    by_plus = fold_plus(chunks)
    by_sum = sum(chunks)
    by_fold = fastmerge.fold_chunks(chunks)
    strict = fastmerge.fold_chunks(chunks, strict=True)
    for folded in (by_plus, by_sum, by_fold, strict):
        _check(folded, expected)
        assert folded.usage_metadata.to_dict() == expected["usage"]
        message = folded.to_message()
        _check(message, expected)
        total = expected["usage"]["input_tokens"] + expected["usage"]["output_tokens"]
        assert message.usage_metadata.to_dict() == {**expected["usage"], "total_tokens": total}
        for call in message.tool_calls:
            json.loads(call.arguments)  # whole JSON again, whatever the cuts
    assert by_plus == by_sum == by_fold == strict
    assert by_plus.to_message() == strict.to_message()


# ---------------------------------------------------------------------------------------------
# (b) Both backends on the same random chunk lists

_ids = st.sampled_from([None, "", "null", " ", "c1", "c2", "c3"])
_names = st.sampled_from([None, "", "null", "f", "g"])
_indexes = st.sampled_from([None, 0, 1, 2])
_plain = st.text(alphabet='ab é中\U0001f600{}"', max_size=4)
_LONE = ["\ud83d", "\ude00", "\udfff"]


@st.composite
def _any_text_strategy(draw: Any) -> str:
    """Mostly plain text; now and then surrogates (orjson refuses them, and both backends must
    then agree on that too), rarely enough that most examples compare orjson bytes."""
    roll = draw(st.integers(0, 39))
    if roll == 39:
        return draw(st.sampled_from(_LONE))
    if roll == 38:
        return draw(_text)
    return draw(_plain)


_any_text = _any_text_strategy()


@st.composite
def _fragment(draw: Any) -> dict[str, Any]:
    fragment: dict[str, Any] = {}
    for key, strategy in (("index", _indexes), ("id", _ids)):
        value = draw(strategy)
        if value is not None or draw(st.booleans()):
            fragment[key] = value
    kind = draw(st.sampled_from([None, "function", "custom", ""]))
    if kind is not None:
        fragment["type"] = kind
    function: dict[str, Any] = {}
    name = draw(_names)
    if name is not None:
        function["name"] = name
    if draw(st.booleans()):
        function["arguments"] = draw(st.one_of(_any_text, st.none()))
    if draw(st.integers(0, 4)) == 0:
        function["arguments"] = draw(
            st.dictionaries(st.sampled_from("ab"), st.integers(), max_size=2)
        )
    fragment["custom" if kind == "custom" and draw(st.booleans()) else "function"] = function
    if draw(st.integers(0, 5)) == 0:
        fragment["extra_content"] = {"google": {"thought_signature": draw(_any_text)}}
    return fragment


_payload = st.builds(
    lambda provider, kind, data: {"provider": provider, "kind": kind, "data": data},
    st.sampled_from(["anthropic", "google"]),
    st.sampled_from(["signature", "thought_signature"]),
    st.one_of(st.none(), _any_text),
)
_part = st.one_of(
    st.fixed_dictionaries(
        {"part": st.just("text"), "text": _any_text},
        optional={"index": _indexes, "citations": st.lists(st.integers(), max_size=2)},
    ),
    st.fixed_dictionaries(
        {"part": st.just("reasoning"), "text": _any_text},
        optional={
            "index": _indexes,
            "payload": _payload,
            "redacted": st.booleans(),
            "summary": _any_text,
        },
    ),
    st.fixed_dictionaries(
        {"part": st.just("tool_call")},
        optional={
            "id": _ids,
            "name": _names,
            "arguments": st.one_of(
                _any_text, st.dictionaries(st.sampled_from("ab"), st.integers())
            ),
            "provider_index": _indexes,
            "payload": _payload,
        },
    ),
    st.fixed_dictionaries(
        {"part": st.just("unknown"), "raw": st.dictionaries(st.sampled_from("xy"), _any_text)},
        optional={"index": _indexes, "kind": st.sampled_from(["k", "j"])},
    ),
)
_usage = st.dictionaries(
    st.sampled_from(["input_tokens", "output_tokens", "total_tokens", "prompt_tokens", "details"]),
    st.one_of(
        st.none(),
        st.integers(0, 20),
        st.dictionaries(st.sampled_from(["cached", "audio"]), st.integers(0, 3), max_size=2),
    ),
    max_size=4,
)


@st.composite
def random_chunk_kwargs(draw: Any) -> dict[str, Any]:
    strategies: dict[str, Any] = {
        "content": st.one_of(
            st.none(),
            _any_text,
            st.lists(st.one_of(_any_text, st.just({"type": "text", "text": "x"})), max_size=2),
        ),
        "reasoning_content": st.one_of(st.none(), _any_text),
        "tool_calls": st.lists(_fragment(), max_size=3),
        "parts": st.lists(_part, max_size=3),
        "usage_metadata": st.one_of(st.none(), _usage),
        "finish_reason": st.sampled_from([None, "", "null", "stop", "length", "tool_use", "STOP"]),
        "logprobs": st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {},
                optional={
                    "content": st.one_of(st.none(), st.lists(st.integers(), max_size=2)),
                    "refusal": st.lists(st.integers(), max_size=2),
                },
            ),
        ),
        "prompt_token_ids": st.one_of(st.none(), st.lists(st.integers(0, 9), max_size=2)),
        "completion_token_ids": st.one_of(st.none(), st.lists(st.integers(0, 9), max_size=2)),
        "response_id": _ids,
        "response_model": st.sampled_from([None, "", "m1", "m2"]),
        "metadata": st.dictionaries(
            st.sampled_from("ab"),
            st.one_of(_any_text, st.dictionaries(st.sampled_from("xy"), st.integers())),
        ),
        "provider_metadata": st.dictionaries(st.sampled_from("ab"), _any_text),
        "refusal": st.one_of(st.none(), _any_text),
    }
    keys = draw(st.sets(st.sampled_from(sorted(strategies)), max_size=5))
    if draw(st.booleans()):  # tool-call fragments in half the chunks: the resolver's inputs
        keys.add("tool_calls")
    return {key: draw(strategies[key]) for key in sorted(keys)}


_fold_options = st.fixed_dictionaries(
    {},
    optional={
        "strict": st.booleans(),
        "signature_merge": st.sampled_from(["replace", "concat"]),
        "usage": st.sampled_from(["merge", "sum", "last"]),
    },
)


def _dumps(value: Any) -> tuple[str, Any]:
    try:
        return ("bytes", orjson.dumps(value))
    except (orjson.JSONEncodeError, TypeError) as exc:  # e.g. a lone surrogate
        return ("error", type(exc))


def _run(messages: ModuleType, kwargs: list[dict[str, Any]], options: dict[str, Any]) -> list[Any]:
    """What a backend's classes make of the chunk list: every outcome, in order."""
    outcomes: list[Any] = []

    def record(step: str, fn: Any) -> Any:
        try:
            value = fn()
        except Exception as exc:  # noqa: BLE001 - the exception is the outcome
            outcomes.append((step, "raise", type(exc), str(exc), getattr(exc, "code", None)))
            return None
        if hasattr(value, "to_dict"):
            d = value.to_dict()
            outcomes.append((step, "ok", _dumps(d), canonical(d)))
        else:
            outcomes.append((step, "ok", canonical(value)))
        return value

    chunks = [
        record(f"chunk{i}", lambda k=k: messages.AssistantMessageChunk(**k))
        for i, k in enumerate(kwargs)
    ]
    if any(c is None for c in chunks):
        return outcomes
    acc = chunks[0]
    for i, item in enumerate(chunks[1:]):
        acc = record(f"plus{i}", lambda acc=acc, item=item: acc + item)
        if acc is None:
            break
    if acc is not None:
        record("message", acc.to_message)
    folded = record("fold", lambda: messages.fold_chunks(chunks, **options))
    if folded is not None:
        record("fold.message", folded.to_message)
        record("fold.tool_calls", lambda: [c.to_dict() for c in folded.tool_calls or ()])
    return outcomes


_needs_rust = pytest.mark.skipif(
    "rust" not in MESSAGES, reason="the rust backend is not under test"
)


@pytest.mark.single_run
@_needs_rust
@given(st.lists(random_chunk_kwargs(), min_size=1, max_size=6), _fold_options)
def test_backends_fold_identically(kwargs: list[dict[str, Any]], options: dict[str, Any]) -> None:
    assert _run(MESSAGES["rust"], kwargs, options) == _run(MESSAGES["python"], kwargs, options)


@pytest.mark.single_run
@_needs_rust
@given(streams())
def test_backends_fold_known_streams_identically(
    stream: tuple[dict[str, Any], list[dict[str, Any]]],
) -> None:
    _, kwargs = stream
    for options in ({}, {"strict": True}):
        assert _run(MESSAGES["rust"], kwargs, options) == _run(MESSAGES["python"], kwargs, options)


# ---------------------------------------------------------------------------------------------
# (c) Value semantics of long folds


def _long_stream(n: int) -> list[Any]:
    """n chunks: text, reasoning, three interleaved calls, logprobs, token ids, usage."""
    chunks = []
    for i in range(n):
        kind = i % 7
        if kind == 0:
            kwargs: dict[str, Any] = {"reasoning_content": f"r{i}"}
        elif kind in (1, 2):
            kwargs = {"content": f"t{i}\ud83d" if kind == 1 else "\ude00"}
        elif kind == 3 and i < 30:
            call = i % 3
            kwargs = {
                "tool_calls": [
                    {
                        "index": call,
                        "id": f"c{call}",
                        "type": "function",
                        "function": {"name": f"f{call}", "arguments": ""},
                    }
                ]
            }
        elif kind in (3, 4):
            kwargs = {"tool_calls": [{"index": i % 3, "function": {"arguments": f"{i},"}}]}
        elif kind == 5:
            kwargs = {"logprobs": {"content": [{"token": str(i)}]}, "completion_token_ids": [i]}
        else:
            kwargs = {
                "usage_metadata": {"input_tokens": 7, "output_tokens": i},
                "metadata": {"m": {str(i % 5): i}},
                "finish_reason": "stop" if i % 2 else None,
            }
        chunks.append(fastmerge.AssistantMessageChunk(**kwargs))
    return chunks


def test_every_intermediate_keeps_reading_the_same() -> None:
    chunks = _long_stream(5000)
    acc = chunks[0]
    kept: list[tuple[int, Any, dict[str, Any]]] = []
    for i, item in enumerate(chunks[1:], start=1):
        acc = acc + item
        if i % 10 == 0:
            kept.append((i, acc, acc.to_dict()))
    assert len(kept) == 499
    for i, intermediate, seen in kept:
        assert intermediate.to_dict() == seen, i
    final = acc.to_dict()
    assert acc.content.count("\ud83d\ude00") == sum(
        1 for i in range(5000) if i % 7 == 1 and i < 4999
    )
    # spot checks against folds from scratch
    for i, intermediate, seen in kept[::50]:
        assert seen == sum(chunks[: i + 1]).to_dict(), i
        assert intermediate.to_message() == sum(chunks[: i + 1]).to_message()
    assert acc.to_dict() == final


def test_branch_from_an_old_intermediate() -> None:
    chunks = _long_stream(600)
    acc = chunks[0]
    old = None
    for i, item in enumerate(chunks[1:], start=1):
        acc = acc + item
        if i == 200:
            old = acc
    assert old is not None
    old_dict, tip_dict = old.to_dict(), acc.to_dict()
    left = old + fastmerge.AssistantMessageChunk(content="LEFT", finish_reason="length")
    right = old + fastmerge.AssistantMessageChunk(
        content="RIGHT", tool_calls=[{"index": 0, "function": {"arguments": "R"}}]
    )
    tip = acc + fastmerge.AssistantMessageChunk(content="TIP")
    assert left.content == old.content + "LEFT" and left.finish_reason == "length"
    assert right.content == old.content + "RIGHT"
    assert right.tool_calls[0].arguments == old.tool_calls[0].arguments + "R"
    assert left.tool_calls == old.tool_calls
    assert tip.content == acc.content + "TIP"
    assert old.to_dict() == old_dict and acc.to_dict() == tip_dict
    assert left == sum(chunks[:201]) + fastmerge.AssistantMessageChunk(
        content="LEFT", finish_reason="length"
    )
    # branching again from the branches and the old view
    again = left + fastmerge.AssistantMessageChunk(content="!")
    assert again.content == old.content + "LEFT!"
    assert (old + fastmerge.AssistantMessageChunk(content="LEFT", finish_reason="length")) == left
    assert right.to_dict()["parts"] != left.to_dict()["parts"]
    assert old.to_dict() == old_dict


def test_two_threads_extend_the_same_acc() -> None:
    base = sum(_long_stream(100))
    base_dict = base.to_dict()
    results: dict[str, Any] = {}
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def extend(tag: str) -> None:
        try:
            barrier.wait()
            acc = base
            for i in range(300):
                acc = acc + fastmerge.AssistantMessageChunk(
                    content=f"{tag}{i} ", completion_token_ids=[i]
                )
            results[tag] = acc
        except BaseException as exc:  # reported in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=extend, args=(tag,)) for tag in ("A", "B")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for tag in ("A", "B"):
        expected_tail = "".join(f"{tag}{i} " for i in range(300))
        assert results[tag].content == base.content + expected_tail
        assert results[tag].completion_token_ids == (base.completion_token_ids or []) + list(
            range(300)
        )
        assert (
            results[tag].to_dict()
            == (
                base
                + sum(
                    fastmerge.AssistantMessageChunk(content=f"{tag}{i} ", completion_token_ids=[i])
                    for i in range(300)
                )
            ).to_dict()
        )
    assert base.to_dict() == base_dict
