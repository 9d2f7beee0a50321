"""Reading at the edges: input with no event in it, unreadable events in the middle of
a stream (spec §6, §8), the aggregator from several threads, JSON numbers and the text of
anomaly details. Every test runs on both backends; the differential ones compare them directly.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import sys
import threading
import zipfile
from pathlib import Path
from typing import Any

import orjson
import pytest
from _support import values as _values
from _support.cli import fastmerge_cli
from conftest import AGGREGATES, BACKENDS, outcome
from hypothesis import example, given, settings
from hypothesis import strategies as st

import fastmerge
from fastmerge.errors import AggregatorClosedError, AnomalyError, EventError

P = "openai-chat"


def chunk(content: str | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    delta = {} if content is None else {"content": content}
    choice: dict[str, Any] = {"index": 0, "delta": delta}
    if finish is not None:
        choice["finish_reason"] = finish
    return {"id": "c1", "model": "m", "choices": [choice], **extra}


STREAM = [chunk("He"), chunk("llo"), chunk(finish="stop")]


def jsonl(events: list[Any]) -> bytes:
    return b"".join(json.dumps(e).encode() + b"\n" for e in events)


def sse(events: list[Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)


def dump(messages: list[Any]) -> bytes:
    return orjson.dumps([m.to_dict() for m in messages])


def no_event(data: Any) -> str:
    with pytest.raises(EventError) as info:
        fastmerge.aggregate(data)
    assert info.value.event == 0
    assert str(info.value) == f"no event could be read: {info.value.detail}"
    return info.value.detail


# ---------------------------------------------------------------------------------------------
# Item 7: no events is an error, not an empty message


def _zip(data: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("log.jsonl", data)
    return out.getvalue()


@pytest.mark.parametrize(
    ("compress", "name"),
    [
        (gzip.compress, "gzip"),
        (bz2.compress, "bzip2"),
        (lzma.compress, "xz"),
        (_zip, "zip"),
        (lambda data: b"\x28\xb5\x2f\xfd" + data, "zstd"),  # a zstd frame's magic
    ],
)
def test_compressed_input_says_so(compress: Any, name: str) -> None:
    data = compress(jsonl(STREAM))
    assert no_event(data) == f"{name}-compressed input: decompress it first"
    with pytest.raises(EventError, match=f"^no event could be read: {name}-compressed"):
        fastmerge.aggregate(data, P, strict=True)


@pytest.mark.parametrize(
    ("data", "detail"),
    [
        (b"", "the input is empty"),
        (b" \n\r\n", "the input is empty"),
        (bytes(range(256)), "binary input, not provider events"),
        (b"\x00\x01garbage\xff\xfe", "binary input, not provider events"),
        (b"hello world\n", "no JSON object, JSON array or SSE data: line in the input"),
        (b"true\n", "an event must be a JSON object, not boolean"),
        (b"1\n2\n", "event 1: an event must be a JSON object, not number"),
        (b'"x"', "event 1: an event must be a JSON object, not string"),
        (b"-3.5", "event 1: an event must be a JSON object, not number"),
        (b"[1, 2]", "event 1: an event must be a JSON object, not number"),
        (b"data: 5\n\n", "event 1: an event must be a JSON object, not number"),
        (b"data: {oops\n\n", "event 1: not valid JSON"),
        (
            b'{"choices": [',
            "the stream ended inside event 1: its 13 bytes are not a whole event and were not read",
        ),
    ],
)
def test_input_with_no_event_says_what_it_was(data: bytes, detail: str) -> None:
    assert no_event(data) == detail
    assert no_event(data.decode("latin-1") if data.isascii() else data) == detail


def test_a_str_that_looks_like_a_path_hints_at_pathlib(tmp_path: Path) -> None:
    hint = (
        "the input is text that looks like a file path, not a stream; pass a pathlib.Path "
        "to read a file"
    )
    assert no_event("a/path.jsonl") == hint
    assert no_event("log.jsonl") == hint
    assert no_event(b"C:\\logs\\x") == hint
    # an os.PathLike is a file to read
    path = tmp_path / "log.jsonl"
    path.write_bytes(jsonl(STREAM))
    message = fastmerge.aggregate(path)
    assert (message.content, message.status) == ("Hello", "complete")
    assert dump(fastmerge.aggregate_choices(path, P)) == dump(fastmerge.aggregate_choices(STREAM))
    agg = fastmerge.Aggregator()
    agg.add_many(path)
    assert agg.finish().content == "Hello"


def test_a_log_of_wrapper_records_names_the_field_and_fastmerge_batch() -> None:
    # a gateway log's record holds the provider event in a field: say so, not "pass provider="
    record = {"ts": "2026-11-30T12:00:00Z", "stream_id": "req-1", "event": STREAM[0]}
    assert no_event(jsonl([record])) == (
        "event 1: cannot tell the provider from this event (keys: 'ts', 'stream_id', 'event'); "
        "its 'event' is an event of openai-chat: read a log of such records with "
        "fastmerge batch --group-by KEY --event event"
    )
    # a field that is an object but no event keeps the list of providers
    assert no_event(jsonl([{"meta": {"a": 1}}])).endswith(
        "(keys: 'meta'); pass provider= one of 'openai-chat', 'openai-responses', 'anthropic', "
        "'gemini', 'bedrock-converse', 'ollama'"
    )


def test_no_event_from_dicts_and_a_finished_aggregator() -> None:
    assert no_event([]) == "the input is empty"
    agg = fastmerge.Aggregator(P)
    assert agg.snapshot().status == "incomplete"  # before any event: an empty message
    with pytest.raises(EventError, match="^no event could be read: the input is empty$"):
        agg.finish()
    with pytest.raises(AggregatorClosedError, match="no event could be read"):
        agg.feed(jsonl(STREAM))
    # events that are all unreadable: the first one's reason
    assert no_event([5, "{"]) == "event 1: an event must be a JSON object, not number"
    assert no_event(b'{"a": 1}\n') == (
        "event 1: cannot tell the provider from this event (keys: 'a'); pass provider= one of "
        "'openai-chat', 'openai-responses', 'anthropic', 'gemini', 'bedrock-converse', 'ollama'"
    )


@pytest.mark.parametrize(
    ("data", "line"),
    [
        (gzip.compress(b'{"choices": []}\n'), "gzip-compressed input: decompress it first"),
        (b"", "the input is empty"),  # the command feeds no block at all
        (b"1\n2\n", "event 1: an event must be a JSON object, not number"),
    ],
)
def test_cli_exits_1_on_input_with_no_event(
    backend_name: str, tmp_path: Path, data: bytes, line: str
) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(data)
    for strict in ((), ("--strict",)):
        proc = fastmerge_cli(backend_name, "merge", "--provider", "auto", *strict, path)
        assert proc.returncode == 1, proc
        assert proc.stdout == b""
        # strict: an unreadable event raises at once
        error = line if strict and line.startswith("event ") else f"no event could be read: {line}"
        assert proc.stderr.decode() == f"fastmerge: error: {path}: {error}\n"


# ---------------------------------------------------------------------------------------------
# Item 10: after an unreadable event


def unreadable(number: int, reason: str) -> dict[str, str]:
    return {"code": "unreadable_event", "detail": f"event {number}: {reason}"}


NOT_JSON = "not valid JSON"
NUMBER = "an event must be a JSON object, not number"


@pytest.mark.parametrize(
    ("data", "anomalies"),
    [
        # JSON lines: a bad line, a non-object line, a string broken by a raw newline
        (
            jsonl(STREAM[:1]) + b"{oops}\n7\n" + jsonl(STREAM[1:]),
            [unreadable(2, NOT_JSON), unreadable(3, NUMBER)],
        ),
        (
            jsonl(STREAM[:1]) + b'{"a": "cut\n' + jsonl(STREAM[1:]),
            [unreadable(2, NOT_JSON)],
        ),
        (jsonl(STREAM[:1]) + b"x y\n" + jsonl(STREAM[1:]), [unreadable(2, NOT_JSON)]),
        # SSE: a data payload that is not JSON, one that is an array
        (
            sse(STREAM[:1]) + b"data: {oops\n\ndata: [1]\n\n" + sse(STREAM[1:]),
            [unreadable(2, NOT_JSON), unreadable(3, "an event must be a JSON object, not array")],
        ),
        # a JSON array: elements that are not objects
        (
            b"[" + b", 5, ".join(json.dumps(e).encode() for e in STREAM) + b', "s"]',
            [
                unreadable(2, NUMBER),
                unreadable(4, NUMBER),
                unreadable(6, "an event must be a JSON object, not string"),
            ],
        ),
        # an event of a shape the adapter cannot map
        (
            jsonl(STREAM[:1] + [{"id": 5, "choices": []}] + STREAM[1:]),
            [unreadable(2, f"{P}: id is not a string")],
        ),
    ],
)
def test_an_unreadable_event_is_skipped_and_said(data: bytes, anomalies: list[Any]) -> None:
    message = fastmerge.aggregate(data, P)
    assert (message.content, message.status) == ("Hello", "complete")
    assert message.anomalies == anomalies
    # one byte at a time gives the same
    agg = fastmerge.Aggregator(P)
    for i in range(len(data)):
        agg.feed(data[i : i + 1])
    assert dump(agg.finish_choices()) == dump([message])
    # strict: the first one raises and closes the aggregator
    agg = fastmerge.Aggregator(P, strict=True)
    with pytest.raises(EventError) as info:
        agg.feed(data)
    assert str(info.value) == anomalies[0]["detail"]
    closed = (
        f"the aggregator is closed: event {info.value.event} could not be read; start a new one"
    )
    for call in (lambda: agg.feed(b"\n"), agg.finish, lambda: agg.add(STREAM[0])):
        with pytest.raises(AggregatorClosedError) as closed_info:
            call()
        assert str(closed_info.value) == closed


def test_unreadable_events_before_the_first_choice_go_to_it() -> None:
    data = b"{bad}\n" + jsonl(STREAM) + b"[1]\n"
    message = fastmerge.aggregate(data, P)
    assert message.content == "Hello"
    assert message.anomalies == [
        unreadable(1, NOT_JSON),
        unreadable(5, "an event must be a JSON object, not array"),
    ]
    # with two choices, a bad event after both is on both
    two = [
        {"id": "c", "choices": [{"index": 0, "delta": {"content": "a"}}]},
        {"id": "c", "choices": [{"index": 1, "delta": {"content": "b"}}]},
    ]
    choices = fastmerge.aggregate_choices(jsonl(two) + b"nope\n", P)
    assert [m.anomalies for m in choices] == [[unreadable(3, NOT_JSON)]] * 2


def test_the_aggregator_goes_on_after_an_unreadable_item() -> None:
    agg = fastmerge.Aggregator(P)
    agg.add(STREAM[0])
    agg.add({"x": {1, 2}})  # not JSON values
    agg.add("[5]")
    agg.add(b"{")
    agg.add_many(STREAM[1:])
    message = agg.finish()
    assert message.content == "Hello"
    assert message.anomalies == [
        unreadable(2, "set is not a JSON value"),
        unreadable(3, NUMBER),
        unreadable(4, NOT_JSON),
    ]


def test_unbalanced_brackets_read_as_one_value_cut_by_the_end() -> None:
    # documented: a JSON value whose brackets never close cannot be told from one still
    # arriving, so what follows it is that value, cut by the end of the stream
    data = jsonl(STREAM[:2]) + b'{"a": [1}\n' + jsonl(STREAM[2:])
    message = fastmerge.aggregate(data, P)
    assert message.content == "Hello"
    assert message.status == "incomplete"
    assert [a["code"] for a in message.anomalies] == ["truncated"]
    assert message.anomalies[0]["detail"].startswith("the stream ended inside event 3: its ")


_PIECES = st.sampled_from(
    [
        json.dumps(STREAM[0]).encode(),
        json.dumps(STREAM[1]).encode(),
        json.dumps(STREAM[2]).encode(),
        b"\n",
        b"\r\n",
        b"data: ",
        b"{oops}",
        b"7",
        b'"s"',
        b"[1]",
        b'{"a": "x',
        b" ",
        b",",
        b"]",
        b"[",
        b'{"id": 5, "choices": []}',
        b'{"zz": 1}',
        b"-0",
        b"\xc3\xa9",
    ]
)


def _outcome(backend: str, pieces: list[bytes], strict: bool) -> tuple[Any, ...]:
    def go() -> Any:
        agg = AGGREGATES[backend].Aggregator(P, strict=strict)
        for piece in pieces:
            agg.feed(piece)
        return dump(agg.finish_choices())

    return outcome(go)


@pytest.mark.differential
@settings(max_examples=300)
@given(
    tokens=st.lists(_PIECES, max_size=16),
    cuts=st.lists(st.integers(0, 600), max_size=5),
    strict=st.booleans(),
)
def test_any_split_gives_the_same_result_on_both_backends(
    both: Any, tokens: list[bytes], cuts: list[int], strict: bool
) -> None:
    data = b"".join(tokens)
    points = sorted({min(c, len(data)) for c in cuts})
    pieces = [data[a:b] for a, b in zip([0, *points], [*points, len(data)])]
    whole = {name: _outcome(name, [data], strict) for name in BACKENDS}
    split = {name: _outcome(name, pieces, strict) for name in BACKENDS}
    for name in BACKENDS:
        if strict and whole[name][0] == "raise":
            # strict: the same error, raised by whichever feed() holds the bad event
            assert split[name][:2] == whole[name][:2]
        else:
            assert split[name] == whole[name], name
    assert whole["rust"] == whole["python"]
    assert split["rust"] == split["python"]


@pytest.mark.differential
@given(data=st.binary(max_size=64), strict=st.booleans())
@example(data=b"{}", strict=True)  # a readable event no adapter knows: an anomaly, strict
def test_random_bytes_agree(both: Any, data: bytes, strict: bool) -> None:
    results = {name: _outcome(name, [data], strict) for name in BACKENDS}
    assert results["rust"] == results["python"]
    if results["rust"][0] == "raise":
        assert results["rust"][1] in (EventError, AggregatorClosedError, AnomalyError)


@pytest.mark.differential
@given(events=st.lists(st.sampled_from([STREAM[0], STREAM[1], 5, "{", [1], {"z": 1}]), max_size=6))
def test_state_after_an_error_agrees(both: Any, events: list[Any]) -> None:
    # what a closed (strict) or continuing aggregator does next, on both backends
    def go(backend: str, strict: bool) -> list[Any]:
        agg = AGGREGATES[backend].Aggregator(P, strict=strict)
        steps: list[Any] = [outcome(agg.add, e) for e in events]
        steps.append(outcome(lambda: dump([agg.snapshot()])))
        steps.append(outcome(agg.add, STREAM[2]))
        steps.append(outcome(lambda: dump(agg.finish_choices())))
        steps.append(outcome(agg.feed, b"\n"))
        return steps

    for strict in (False, True):
        assert go("rust", strict) == go("python", strict)


# ---------------------------------------------------------------------------------------------
# Item 19: one aggregator, several threads


def test_threads_feeding_one_aggregator_lose_nothing() -> None:
    agg = fastmerge.Aggregator(P)
    agg.add(STREAM[0])
    threads, per_thread = 8, 200
    barrier = threading.Barrier(threads)
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            barrier.wait()
            for _ in range(per_thread):
                # one whole event per feed: each is read once, whole
                agg.feed(json.dumps(chunk(str(n))).encode() + b"\n")
                agg.add(chunk(str(n)))
        except BaseException as exc:  # reported in the test's thread
            errors.append(exc)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        pool = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()
    finally:
        sys.setswitchinterval(old)
    assert errors == []
    message = agg.finish()
    assert message.anomalies == []
    text = message.content
    assert len(text) == 2 + threads * per_thread * 2
    assert text.startswith("He")
    assert sorted(text[2:]) == sorted("".join(str(n) * per_thread * 2 for n in range(threads)))


# ---------------------------------------------------------------------------------------------
# Item 16: JSON numbers, and how anomaly details write numbers and characters


def test_minus_zero_is_the_int_zero() -> None:
    line = (
        b'{"id": "c", "choices": [{"index": -0, "delta": {"content": "a"}}], "usage": '
        b'{"prompt_tokens": -0, "completion_tokens": 2, "x": -0.0, "y": [-0, -0.0, -0e1]}}\n'
        b'{"id": "c", "choices": [{"index": 0, "delta": {"content": "b"}, "finish_reason": '
        b'"stop"}]}\n'
    )
    message = fastmerge.aggregate(line, P)
    assert message.content == "ab"
    assert message.anomalies == []
    usage = message.to_dict()["usage_metadata"]
    assert orjson.dumps(usage) == (
        b'{"input_tokens":0,"output_tokens":2,"x":-0.0,"y":[0,-0.0,-0.0],"total_tokens":2}'
    )
    assert type(usage["input_tokens"]) is int and type(usage["total_tokens"]) is int


def test_ints_past_64_bits() -> None:
    # in an event: the nearest float, on both backends
    big = b'{"id": "c", "choices": [], "usage": {"prompt_tokens": 18446744073709551616}}\n'
    usage = fastmerge.aggregate(big, P).to_dict()["usage_metadata"]
    assert usage == {"input_tokens": 1.8446744073709552e19, "total_tokens": 1.8446744073709552e19}
    # a sum past 64 bits is an EventError, never a RuntimeError
    top = {"prompt_tokens": 2**63 - 1, "completion_tokens": 1}
    message = "event 1: usage counts add up beyond 64 bits (more than 2**63 - 1)"
    with pytest.raises(EventError) as info:
        fastmerge.aggregate([{"id": "c", "choices": [], "usage": top}], P)
    assert str(info.value) == message
    sums = [{"id": "c", "choices": [], "usage": {"prompt_tokens": 2**62}}] * 2
    with pytest.raises(EventError) as info:
        fastmerge.aggregate(sums, P, usage="sum")
    assert str(info.value) == "event 2: usage counts add up beyond 64 bits (more than 2**63 - 1)"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("1e20", "1e+20"),
        ("1e-7", "1e-07"),
        ("1e16", "1e+16"),
        ("1e15", "1000000000000000.0"),
        ("0.0001", "0.0001"),
        ("0.00001", "1e-05"),
        ("-1e-05", "-1e-05"),
        ("123456789.125", "123456789.125"),
        ("1.5e300", "1.5e+300"),
        ("5e-324", "5e-324"),
        ("18446744073709551616", "1.8446744073709552e+19"),
        ("-2.5", "-2.5"),
    ],
)
def test_anomaly_details_write_floats_as_repr(text: str, shown: str) -> None:
    line = (
        '{"id": "c", "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1, '
        f'"total_tokens": {text}}}}}\n'
    )
    message = fastmerge.aggregate(line, P)
    detail = f"reported total_tokens {shown} != input 1 + output 1"
    assert message.anomalies == [{"code": "total_mismatch", "detail": detail}]
    assert shown == repr(float(text))


def _provider_error(key: str) -> str:
    return (
        f"event 1: cannot tell the provider from this event (keys: {key!r}); pass provider= one "
        "of 'openai-chat', 'openai-responses', 'anthropic', 'gemini', 'bedrock-converse', "
        "'ollama'"
    )


@pytest.mark.parametrize(
    "key", ["\u2028", "\ufeff", "\xa0", "\x85", "a\u200bb", "\U000e0001", "\u0378", "é👋", "'\""]
)
def test_anomaly_details_escape_characters_as_repr(key: str) -> None:
    with pytest.raises(EventError) as info:
        fastmerge.aggregate([{key: 1}], strict=True)
    assert str(info.value) == _provider_error(key)


@given(key=_values.edge_text)
def test_details_write_any_text_as_repr(key: str) -> None:
    with pytest.raises(EventError) as info:
        fastmerge.aggregate(json.dumps({key: 1}), strict=True)
    assert str(info.value) == _provider_error(key)


@pytest.mark.differential
@given(number=_values.json_number_texts, text=_values.edge_text, strict=st.booleans())
def test_numbers_and_text_read_the_same_on_both_backends(
    both: Any, number: str, text: str, strict: bool
) -> None:
    value = json.dumps(text)
    lines = [
        f'{{"id": "c", "choices": [{{"index": {number}, "delta": {{"content": {value}}}}}]}}',
        f'{{"id": "c", "choices": [], "usage": {{"prompt_tokens": {number}, "completion_tokens": '
        f'{number}, "total_tokens": {number}, "d": {{{value}: [{number}]}}}}}}',
        f'{{"id": "c", "choices": [{{"index": 0, "delta": {{"tool_calls": [{{"index": {number}, '
        f'"id": {value}, "function": {{"name": {value}, "arguments": "{{}}"}}}}]}}}}]}}',
    ]
    data = "\n".join(lines).encode()
    results = {name: _outcome(name, [data], strict) for name in BACKENDS}
    assert results["rust"] == results["python"]
    assert results["rust"][0] == "ok" or results["rust"][1] in (EventError, AnomalyError)


def test_e81_an_unreadable_event_in_the_middle() -> None:
    data = jsonl([chunk("A")]) + b'{"choices": x}\n' + jsonl([chunk("B"), chunk("C")])
    expected = dump([fastmerge.aggregate(data, P)])
    message = fastmerge.aggregate(data, P)
    assert message.content == "ABC"
    assert message.anomalies == [unreadable(2, NOT_JSON)]
    for cut in range(len(data) + 1):
        agg = fastmerge.Aggregator(P)
        agg.feed(data[:cut])
        agg.feed(data[cut:])
        assert dump(agg.finish_choices()) == expected
    with pytest.raises(EventError, match="^event 2: not valid JSON$"):
        fastmerge.aggregate(data, P, strict=True)
