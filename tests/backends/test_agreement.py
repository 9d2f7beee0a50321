"""The Rust engine and the twin agree where their code differs most.

- The Rust engine's typed fast paths (openai-chat chunks, Anthropic block deltas) read an event
  straight from its bytes with a typed parse; the twin and the engine's generic path parse the
  event into values first. A fast path must refuse exactly what the generic reader refuses:
  here every object and list of real corpus events (OpenAI chat, Mistral, Anthropic) is
  replaced in turn by an array, null, a number, a string, a boolean, an object, and the three
  readers (fast, generic via the hidden ``FASTMERGE_GENERIC_EVENTS`` switch, twin) must give
  the same messages or the same error. An array where an object belongs is never read as that
  object (E90): serde reads a struct from an array of its fields, the generic reader does not.
- An empty input has one wording, whichever way it came (``errors.empty_input``).
- ``merge_all`` hashes no key of the first item again (openJiuwen's ``dict.copy()`` does not).
"""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any, Iterator

import orjson
import pytest
from _support.batch import batch_module, dumped, lines, wrap
from _support.corpus import CORPUS
from conftest import AGGREGATES, load_openjiuwen, outcome
from hypothesis import given
from hypothesis import strategies as st

import fastmerge
from fastmerge.errors import EventError

# corpus folder -> wire format, for the formats with a fast path
_FAST_KINDS = {
    "openai_chat": "openai-chat",
    "mistral": "openai-chat",
    "anthropic_messages": "anthropic",
}


def _corpus(kind: str) -> list[tuple[str, list[bytes]]]:
    return [
        (path.stem, [line for line in path.read_bytes().split(b"\n") if line.strip()])
        for path in sorted((CORPUS / kind).glob("*.jsonl"))
    ]


_STREAMS = {kind: _corpus(kind) for kind in _FAST_KINDS}


def _dump(value: Any) -> bytes:
    """Compact JSON, as the corpus writes it (the fast paths' usual input)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def _containers(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Every object and list of ``value`` (itself first), with its path."""
    if isinstance(value, (dict, list)):
        yield path, value
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            yield from _containers(item, (*path, key))


def _stand_ins(value: Any) -> list[Any]:
    """What is put in place of an object or a list: every other JSON kind, and the shapes a
    typed parse may take for it (an object's values as an array: serde reads a struct from
    it; the object in an array; a list with an array or a null first or last)."""
    out: list[Any] = [[], None, 0, -1.5, "s", True]
    if isinstance(value, dict):
        out += [list(value.values()), [value]]
        if value:
            out.append({})
    else:
        out += [{}, [[], *value], [*value, None], {str(i): v for i, v in enumerate(value)}]
    return out


def _put(event: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    event = copy.deepcopy(event)
    parent = event
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = new
    return event


def _mutations(event: Any) -> Iterator[Any]:
    for path, value in _containers(event):
        for new in _stand_ins(value):
            yield _put(event, path, new)


def _key(value: Any, under: Any = None) -> Any:
    """What tells events apart for this test: their structure, the kinds of their values, and
    the values that decide a reading (types, indexes, roles, finish reasons)."""
    if isinstance(value, dict):
        return tuple((k, _key(v, k)) for k, v in value.items())
    if isinstance(value, list):
        return tuple(_key(v) for v in value)
    if under in ("type", "index", "role", "finish_reason", "stop_reason"):
        return value
    return type(value).__name__


def _cases(lines_: list[bytes]) -> Iterator[tuple[list[bytes], int]]:
    """For each kind of event of a stream (``_key``): a short stream that reaches it as the
    recorded stream does, and where it is in it. The event taken is the second of its kind
    when there is one (the fast path then knows its like: a template), the stream keeps the
    first event of each kind before it (starts of blocks and calls) and the event just before
    it, and the two events after it."""
    seen: dict[Any, int] = {}
    events = [json.loads(line) for line in lines_]
    chosen: dict[Any, int] = {}
    for i, event in enumerate(events):
        key = _key(event)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] <= 2:
            chosen[key] = i
    for at in sorted(set(chosen.values())):
        firsts: dict[Any, int] = {}
        for i in range(at):
            firsts.setdefault(_key(events[i]), i)
        keep = sorted({*firsts.values(), at - 1} - {-1})
        short = [lines_[i] for i in keep] + [lines_[at]] + lines_[at + 1 : at + 3]
        yield short, len(keep)


def _read(backend: str, data: bytes, provider: str, strict: bool) -> tuple[Any, ...]:
    def go() -> bytes:
        agg = AGGREGATES[backend].Aggregator(provider, strict=strict)
        agg.feed(data)
        return orjson.dumps([m.to_dict() for m in agg.finish_choices()])

    return outcome(go)


def _three(monkeypatch: pytest.MonkeyPatch, data: bytes, provider: str, strict: bool) -> None:
    """The fast path, the generic path and the twin read ``data`` alike."""
    fast = _read("rust", data, provider, strict)
    with monkeypatch.context() as patch:
        patch.setenv("FASTMERGE_GENERIC_EVENTS", "1")
        generic = _read("rust", data, provider, strict)
    assert fast == generic, data.decode(errors="replace")
    assert fast == _read("python", data, provider, strict), data.decode(errors="replace")


@pytest.mark.differential
@pytest.mark.parametrize("kind", list(_FAST_KINDS))
def test_mutated_corpus_events_read_alike_on_fast_and_generic_paths_and_twin(
    both: Any, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    provider = _FAST_KINDS[kind]
    count = 0
    for _name, recorded in _STREAMS[kind]:
        for short, at in _cases(recorded):
            for mutated in _mutations(json.loads(short[at])):
                data = b"\n".join([*short[:at], _dump(mutated), *short[at + 1 :]]) + b"\n"
                _three(monkeypatch, data, provider, strict=count % 2 == 1)
                count += 1
    # the corpus is there, and the events of every stream were mutated
    assert count > 100 * len(_STREAMS[kind])


# The same on hypothesis' choice of event (any corpus event of a fast-path format), place and
# stand-in, after the stream's first events: an array in place of a choice or a delta is the
# first thing it finds when the fast path reads arrays as objects.
_EVENTS = [
    (_FAST_KINDS[kind], recorded[:6], i)
    for kind, streams in _STREAMS.items()
    for _name, recorded in streams
    for i in range(len(recorded))
]


@st.composite
def _mutated_stream(draw: st.DrawFn) -> tuple[str, bytes, bool]:
    provider, head, i = draw(st.sampled_from(_EVENTS))
    recorded = next(s for k, streams in _STREAMS.items() for _n, s in streams if s[:6] == head)
    event = json.loads(recorded[i])
    path, value = draw(st.sampled_from(list(_containers(event))))
    new = draw(st.sampled_from(_stand_ins(value)))
    before = draw(st.sampled_from([recorded[max(0, i - 1)], recorded[i]]))
    data = b"\n".join([*recorded[: min(i, 4)], before, _dump(_put(event, path, new))]) + b"\n"
    return provider, data, draw(st.booleans())


@pytest.mark.differential
@given(_mutated_stream())
def test_any_mutated_event_reads_alike_on_fast_and_generic_paths_and_twin(
    both: Any, monkeypatch: pytest.MonkeyPatch, case: tuple[str, bytes, bool]
) -> None:
    provider, data, strict = case
    _three(monkeypatch, data, provider, strict)


@pytest.mark.differential
def test_mutated_events_in_batch_records_read_alike(
    both: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Records wrapping mutated events, one stream per mutation: the batch engine's results
    on the fast path, the generic path and the twin are the same."""
    records = []
    for kind, provider in _FAST_KINDS.items():
        for name, recorded in _STREAMS[kind][:3]:
            for short, at in list(_cases(recorded))[:4]:
                for j, mutated in enumerate(_mutations(json.loads(short[at]))):
                    events = [json.loads(e) for e in short[:at]] + [mutated]
                    key = f"{provider}/{name}/{at}/{j}"
                    records += wrap((key, e) for e in events)
    path = tmp_path / "log.jsonl"
    path.write_bytes(lines(records))

    def run(backend: str) -> tuple[list[bytes], str]:
        # records whose event is no object are bad lines: collected, and compared too
        bad = io.StringIO()
        results = batch_module(backend).merge_logs(
            str(path), group_by="stream_id", event="event", errors="collect", errors_file=bad
        )
        return dumped(results), bad.getvalue()

    fast = run("rust")
    with monkeypatch.context() as patch:
        patch.setenv("FASTMERGE_GENERIC_EVENTS", "1")
        generic = run("rust")
    assert len(fast[0]) > 100
    assert fast == generic
    assert fast == run("python")


# ---------------------------------------------------------------------------------------------
# E90: an array where an object belongs


_CHOICE = {"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}
_START = {"id": "x", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "a"}}]}


def test_an_array_for_a_choice_is_never_read_as_one() -> None:
    event = b'{"id":"x","choices":[[0,{"content":"hi"},"stop"]]}'
    # alone: nothing read, an error, never an empty message (strict or not)
    with pytest.raises(EventError) as info:
        fastmerge.aggregate(event, provider="openai-chat")
    assert str(info.value) == (
        "no event could be read: event 1: openai-chat: choices[0] is not an object"
    )
    with pytest.raises(EventError, match=r"^event 1: openai-chat: choices\[0\] is not an object$"):
        fastmerge.aggregate(event, provider="openai-chat", strict=True)
    # after a readable event: an unreadable_event anomaly, and its text is not read
    message = fastmerge.aggregate(_dump(_START) + b"\n" + event, provider="openai-chat")
    assert (message.content, message.status) == ("a", "incomplete")
    assert message.anomalies == [
        {"code": "unreadable_event", "detail": "event 2: openai-chat: choices[0] is not an object"}
    ]


@pytest.mark.parametrize("index", [0, 1])
@pytest.mark.parametrize("bad", [[], None, 7, "x", [0, {"content": "no"}, "stop"]])
def test_a_choice_that_is_not_an_object_leaves_the_others_read(index: int, bad: Any) -> None:
    event = {"id": "x", "choices": [bad, {**_CHOICE, "index": index}]}
    for data in (_dump(event), [event]):
        messages = fastmerge.aggregate_choices(data, provider="openai-chat")
        assert [(m.choice_index, m.content, m.status) for m in messages] == [
            (index, "hi", "complete")
        ]
        assert messages[0].anomalies == [
            {
                "code": "unreadable_event",
                "detail": "event 1: openai-chat: choices[0] is not an object",
            }
        ]
        with pytest.raises(EventError, match=r"^event 1: openai-chat: choices\[0\] is not"):
            fastmerge.aggregate_choices(data, provider="openai-chat", strict=True)
    # after the valid choice: the anomaly names its place
    later = {"id": "x", "choices": [{**_CHOICE, "index": index}, bad]}
    message = fastmerge.aggregate(_dump(_START) + b"\n" + _dump(later), provider="openai-chat")
    assert message.anomalies[-1]["detail"] == "event 2: openai-chat: choices[1] is not an object"


_ANTHROPIC = [
    {"type": "message_start", "message": {"id": "m", "role": "assistant", "content": []}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "a"}},
]


@pytest.mark.parametrize(
    "event",
    [
        ["content_block_delta", 0, {"type": "text_delta", "text": "b"}],
        {"type": "content_block_delta", "index": 0, "delta": ["text_delta", "b"]},
    ],
    ids=["event", "delta"],
)
def test_an_anthropic_event_or_delta_written_as_an_array_is_not_read(event: Any) -> None:
    stop = [{"type": "content_block_stop", "index": 0}, {"type": "message_stop"}]
    data = b"\n".join(_dump(e) for e in [*_ANTHROPIC, event, *stop]) + b"\n"
    message = fastmerge.aggregate(data, provider="anthropic")
    assert message.content == "a"
    assert [a["code"] for a in message.anomalies] == ["unreadable_event"]
    with pytest.raises(EventError, match="^event 4: "):
        fastmerge.aggregate(data, provider="anthropic", strict=True)


# ---------------------------------------------------------------------------------------------
# The empty input: one wording


def _finish_error(feed: list[Any]) -> str:
    agg = fastmerge.Aggregator("openai-chat")
    for data in feed:
        try:
            agg.feed(data)
        except EventError:
            pass  # a feed that raises reads nothing; the aggregator goes on
    with pytest.raises(EventError) as info:
        agg.finish()
    return str(info.value)


@pytest.mark.parametrize(
    "feed", [[], [b""], [""], [b" \n\r\n"], ["\udcff"], [b"", "\ud800"]], ids=repr
)
def test_an_empty_input_is_worded_one_way(feed: list[Any]) -> None:
    assert _finish_error(feed) == "no event could be read: the input is empty"
    assert str(fastmerge.errors.empty_input()) == "no event could be read: the input is empty"


def test_an_empty_list_of_events_is_the_empty_input() -> None:
    with pytest.raises(EventError) as info:
        fastmerge.aggregate([], provider="openai-chat")
    assert str(info.value) == "no event could be read: the input is empty"
    assert str(info.value) == str(fastmerge.errors.empty_input())


@pytest.mark.parametrize("data", [b"", b"\n\n", b"  \n"], ids=repr)
def test_an_empty_file_in_batch_is_the_empty_input(
    backend_name: str, tmp_path: Path, data: bytes
) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(data)
    (result,) = batch_module(backend_name).merge_logs(str(path))
    assert result.error == "no event could be read: the input is empty"
    assert result.error == str(fastmerge.errors.empty_input())


# ---------------------------------------------------------------------------------------------
# merge_all: the first item's keys are hashed once, when it was built


class _OnceKey(str):
    """A str key whose ``__hash__`` works ``uses`` times, then raises (a key whose hash breaks
    after it went into a dict)."""

    uses: int

    def __new__(cls, text: str, uses: int = 1) -> _OnceKey:
        key = super().__new__(cls, text)
        key.uses = uses
        return key

    def __hash__(self) -> int:
        if self.uses <= 0:
            raise RuntimeError(f"{str(self)!r} hashed again")
        self.uses -= 1
        return str.__hash__(self)


def _items_with_once_keys() -> list[list[Any]]:
    return [
        [{_OnceKey("k"): "v", "a": "1"}, {"a": "2"}, {"a": "3", "b": [1]}],
        [{_OnceKey("k"): [1], "m": {_OnceKey("n"): 1, "x": "p"}}, {"m": {"x": "q"}}, {"m": None}],
        [{"m": {_OnceKey("n"): {"deep": "d"}, "x": "p"}}, {"m": {"x": "q", "y": {}}}],
        [{_OnceKey("k"): "v"}, {"a": "1"}],
    ]


@pytest.mark.parametrize("case", range(len(_items_with_once_keys())))
def test_merge_all_never_hashes_the_first_items_keys_again(case: int) -> None:
    items = _items_with_once_keys()[case]
    reference = _items_with_once_keys()[case]  # keys of their own (each hashes once)
    openjiuwen = load_openjiuwen()
    expected = reference[0]
    for item in reference[1:]:
        expected = openjiuwen.merge_parser_content(expected, item)
    assert repr(fastmerge.merge_all(items)) == repr(expected)


# ---------------------------------------------------------------------------------------------
# A large input, which the twin's feed scans a block at a time


@pytest.mark.differential
@pytest.mark.parametrize("strict", [False, True])
def test_a_large_input_reads_alike_across_the_twins_feed_blocks(both: Any, strict: bool) -> None:
    # events of every length around the blocks' edges, an unreadable one and a long one across
    # an edge, as JSON lines and as SSE
    chunks = [_dump({"id": "x", "choices": [{"index": 0, "delta": {"content": "é" * (n % 997)}}]})
              for n in range(3000)]  # fmt: skip
    chunks[1700] = b'{"id":"x","choices":[[]]}'
    chunks[2000] = _dump(
        {"id": "x", "choices": [{"index": 0, "delta": {"content": "z" * 900_000}}]}
    )
    for data in (b"\n".join(chunks), b"".join(b"data: " + c + b"\n\n" for c in chunks)):
        assert len(data) > 3 << 20
        assert _read("rust", data, "openai-chat", strict) == _read(
            "python", data, "openai-chat", strict
        )
