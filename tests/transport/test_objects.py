"""Events as the objects users hold: dicts and the provider SDKs' own stream event objects
(openai's ``ChatCompletionChunk``, anthropic's ``RawMessageStreamEvent`` types) aggregate to
exactly the messages of the stream's bytes, on both backends. The Rust backend reads a dict of
plain JSON data, and an SDK model, as the JSON text it stands for (no ``model_dump``); anything
unusual (a subclass, a non-str key, a big int, NaN, a lone surrogate, a user's own model class)
takes the conversion it always took, with its result or its error: the hypothesis tests draw
such events and compare that path (``AggregatorCore.add`` of each event) with ``add_many``."""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from functools import partial
from pathlib import Path
from typing import Any, Callable

import orjson
import pytest
from _support.corpus import stream_ids, streams
from conftest import AGGREGATES, BACKENDS, RUST
from hypothesis import given, settings
from hypothesis import strategies as st

import fastmerge
from fastmerge.aggregate import _plain

openai_types = pytest.importorskip("openai.types.chat")
anthropic_types = pytest.importorskip("anthropic.types")

from anthropic._models import construct_type as anthropic_construct  # noqa: E402
from openai._models import construct_type as openai_construct  # noqa: E402
from pydantic import TypeAdapter  # noqa: E402

# to_dict() of an object built by construct_type from data its classes do not expect warns
pytestmark = pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")

ChatCompletionChunk = openai_types.ChatCompletionChunk
_ANTHROPIC = TypeAdapter(anthropic_types.RawMessageStreamEvent)


def _events(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def _dump(messages: list[Any]) -> bytes:
    return orjson.dumps([m.to_dict() for m in messages], option=orjson.OPT_SORT_KEYS)


def _outcome(run: Callable[[], list[Any]]) -> Any:
    """The messages' JSON text (key order included), or the exception's class and text."""
    try:
        messages = run()
    except Exception as exc:  # every error the aggregator raises, compared by class and text
        return (type(exc).__name__, str(exc))
    return json.dumps([m.to_dict() for m in messages])


def _openai_objects(events: list[Any], how: str) -> list[Any]:
    if how == "validate":
        return [ChatCompletionChunk.model_validate(e) for e in events]
    # what the SDK's own Stream does: construct_type, no validation
    return [openai_construct(type_=ChatCompletionChunk, value=e) for e in events]


def _anthropic_objects(events: list[Any], how: str) -> list[Any]:
    # the SDK has no class for ping (its Stream drops them)
    kept = [e for e in events if not (isinstance(e, dict) and e.get("type") == "ping")]
    if how == "validate":
        return [_ANTHROPIC.validate_python(e) for e in kept]
    return [anthropic_construct(type_=anthropic_types.RawMessageStreamEvent, value=e) for e in kept]


def _sdk_cases() -> list[Any]:
    cases = []
    for kind, provider in (("openai_chat", "openai-chat"), ("mistral", "openai-chat")):
        for path in streams(kind):
            for how in ("validate", "construct"):
                cases.append(pytest.param(path, provider, how, id=f"{path.stem}-{how}"))
    for path in streams("anthropic_messages"):
        for how in ("validate", "construct"):
            cases.append(pytest.param(path, "anthropic", how, id=f"{path.stem}-{how}"))
    return cases


@pytest.mark.parametrize(("path", "provider", "how"), _sdk_cases())
def test_sdk_objects_read_as_their_dicts(
    aggregate_module: Any, path: Path, provider: str, how: str
) -> None:
    """A stream's SDK objects give the messages of the dicts they stand for
    (``to_dict(mode="json")``: a datetime the SDK parsed is read as its JSON text, not lost),
    and, where those are the stream's own events, the messages of its bytes."""
    events = _events(path)
    build = _openai_objects if provider == "openai-chat" else _anthropic_objects
    try:
        objects = build(events, how)
    except Exception as exc:  # an event the SDK's classes do not validate
        pytest.skip(f"the SDK does not validate {path.name}: {type(exc).__name__}")
    aggregate = aggregate_module.aggregate_choices
    dicts = [o.to_dict(mode="json") for o in objects]
    from_objects = _outcome(lambda: aggregate(objects, provider))
    assert from_objects == _outcome(lambda: aggregate(dicts, provider))
    # one object at a time (Aggregator.add) reads alike
    agg = aggregate_module.Aggregator(provider)
    for o in objects:
        agg.add(o)
    assert _outcome(agg.finish_choices) == from_objects
    if provider == "anthropic":
        events = [e for e in events if e.get("type") != "ping"]
    # the bytes of the same events, in the SDK's key order, give the same messages
    try:
        lines = "".join(json.dumps(d) + "\n" for d in dicts).encode()
    except TypeError:
        lines = None
    if lines is not None:
        assert from_objects == _outcome(lambda: aggregate(lines, provider))
    if dicts == events and not from_objects.startswith("("):
        # and the stream's own bytes (its key order: the same messages but for key order)
        data = b"".join(orjson.dumps(e) + b"\n" for e in events)
        assert _dump(aggregate(objects, provider)) == _dump(aggregate(data, provider))


@pytest.mark.parametrize(
    "path",
    [p for kind in ("openai_chat", "mistral", "anthropic_messages") for p in streams(kind)],
    ids=[i for kind in ("openai_chat", "mistral", "anthropic_messages") for i in stream_ids(kind)],
)
def test_bytes_dicts_and_sdk_objects_agree_across_backends(path: Path) -> None:
    """aggregate(bytes) == aggregate(dicts) == aggregate(SDK objects) on every backend, the
    same messages on each (the SDK objects: those built with ``model_validate`` whose
    ``to_dict()`` is the event)."""
    provider = "anthropic" if path.parent.name == "anthropic_messages" else "openai-chat"
    events = _events(path)
    if provider == "anthropic":
        events = [e for e in events if e.get("type") != "ping"]
    data = b"".join(orjson.dumps(e) + b"\n" for e in events)
    build = _openai_objects if provider == "openai-chat" else _anthropic_objects
    try:
        objects = build(events, "validate")
    except Exception:
        objects = None
    if objects is not None and [o.to_dict() for o in objects] != events:
        objects = None  # the SDK's classes do not give these events back
    reference = _dump(AGGREGATES[BACKENDS[0]].aggregate_choices(data, provider))
    for name in BACKENDS:
        aggregate = AGGREGATES[name].aggregate_choices
        assert _dump(aggregate(data, provider)) == reference, name
        assert _dump(aggregate(events, provider)) == reference, name
        assert _dump(aggregate(tuple(events), provider)) == reference, name
        if objects is not None:
            assert _dump(aggregate(objects, provider)) == reference, name


def test_most_corpus_sdk_objects_are_the_events() -> None:
    """The test above compares SDK objects on most of the corpus (not a vacuous check)."""
    compared = 0
    for path in streams("openai_chat"):
        events = _events(path)
        try:
            objects = _openai_objects(events, "validate")
        except Exception:
            continue
        compared += [o.to_dict() for o in objects] == events
    assert compared >= len(streams("openai_chat")) // 2


def test_inputs_are_not_mutated(aggregate_module: Any) -> None:
    events = _events(streams("openai_chat")[0])
    before = json.dumps(events)
    objects = _openai_objects(events, "construct")
    dumped = [o.to_dict() for o in objects]
    aggregate_module.aggregate(events, "openai-chat")
    aggregate_module.aggregate(objects, "openai-chat")
    assert json.dumps(events) == before
    assert [o.to_dict() for o in objects] == dumped


# ---------------------------------------------------------------------------------------------
# Odd events: the plain reading declines, the conversion reads them as before


class _Dict(dict):  # type: ignore[type-arg]
    pass


class _Str(str):
    pass


class _Int(int):
    pass


class _Float(float):
    pass


class _Other:
    def __repr__(self) -> str:
        return "<other>"


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1.0, 1e16, 1e300, 5e-324, -1.5]),
    st.text(max_size=6),
    st.sampled_from(["\ud800", "a\x00b", 'q"\\', "\n\t", "数据🙂"]),
    st.sampled_from([_Str("sub"), _Int(3), _Float(2.5), b"by", _Other()]),
)

_KEYS = st.one_of(
    st.sampled_from(["content", "role", "x", "type", "index"]),
    st.text(max_size=4),
    st.sampled_from([1, None, ("t",), _Str("content"), "\udc80"]),
)


def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(_KEYS, inner, max_size=3),
        st.dictionaries(_KEYS, inner, max_size=3).map(_Dict),
        st.dictionaries(st.text(max_size=3), inner, max_size=3).map(OrderedDict),
    )


_VALUES = st.recursive(_SCALARS, _containers, max_leaves=8)


def _chunk(delta: dict[str, Any], extra: dict[Any, Any], logprobs: Any) -> dict[Any, Any]:
    chunk: dict[Any, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": None}],
    }
    chunk.update(extra)
    return chunk


_DELTAS = st.one_of(
    st.builds(lambda t: {"content": t}, st.text(max_size=5)),
    st.builds(lambda t: {"content": t}, _SCALARS),
    st.builds(lambda v: {"role": "assistant", "content": "", "odd": v}, _VALUES),
    st.dictionaries(_KEYS, _VALUES, max_size=3),
)

_CHUNKS = st.one_of(
    st.builds(
        _chunk,
        _DELTAS,
        st.dictionaries(_KEYS, _VALUES, max_size=2),
        st.one_of(st.none(), _VALUES),
    ),
    st.builds(lambda c: _Dict(c), st.builds(_chunk, _DELTAS, st.just({}), st.none())),
    _VALUES,
)


def _rust_old_path(events: list[Any], provider: str) -> list[Any]:
    """The Rust backend's conversion of every event (``AggregatorCore.add``), the path the
    plain reading falls back to."""
    assert RUST is not None
    aggregate = AGGREGATES["rust"]
    agg = aggregate.Aggregator(provider)
    core = agg._core
    for event in events:
        if isinstance(event, (str, bytes)):
            core.add_text(event)
        else:
            core.add(event if isinstance(event, dict) else _plain(event))
    return agg.finish_choices()


@pytest.mark.differential
@settings(max_examples=300, deadline=None)
@given(
    st.lists(_CHUNKS, min_size=1, max_size=5),
    st.sampled_from(["openai-chat", "anthropic", "auto"]),
    st.booleans(),
)
def test_odd_events_read_as_before(events: list[Any], provider: str, strict: bool) -> None:
    """Every backend, and the Rust backend's plain reading and its conversion, give the same
    messages or the same error for drawn events, odd ones among them."""
    opts = {"strict": strict}
    outcomes = {
        name: _outcome(lambda m=AGGREGATES[name]: m.aggregate_choices(events, provider, **opts))
        for name in BACKENDS
    }
    if RUST is not None and not strict:
        outcomes["rust-conversion"] = _outcome(lambda: _rust_old_path(events, provider))
    first = next(iter(outcomes.values()))
    assert all(o == first for o in outcomes.values()), outcomes


@pytest.mark.differential
@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(max_size=6), min_size=1, max_size=6), _VALUES, _SCALARS)
def test_odd_values_in_sdk_objects(texts: list[str], extra: Any, scalar: Any) -> None:
    """SDK objects holding odd values (in an extra field, in a field the SDK does not check at
    construction) give on every backend the messages of their plain ``to_dict()`` when that
    holds only Python's JSON types (str, int, float, bool, None, dict, list), else of their
    ``to_dict(mode="json")``, or its error."""
    events = [_chunk({"content": t}, {}, None) for t in texts]
    events[0]["choices"][0]["delta"]["odd"] = extra
    events[-1]["model"] = scalar
    objects = [openai_construct(type_=ChatCompletionChunk, value=e) for e in events]
    outcomes = [
        _outcome(lambda m=AGGREGATES[name]: m.aggregate_choices(objects, "openai-chat"))
        for name in BACKENDS
    ]
    assert all(o == outcomes[0] for o in outcomes), outcomes
    if not isinstance(outcomes[0], tuple):
        # each object by itself: an inf, or a lone surrogate in a key, is a value of Python's
        # JSON types (read as it is); bytes or a datetime is not (read in JSON mode)
        dicts = [
            plain if _python_json(plain := o.to_dict()) else o.to_dict(mode="json") for o in objects
        ]
        assert outcomes[0] == _outcome(
            lambda: AGGREGATES[BACKENDS[0]].aggregate_choices(dicts, "openai-chat")
        )


def _python_json(value: Any) -> bool:
    if value is None or isinstance(value, (str, int, float, bool)):
        return True
    if isinstance(value, dict):
        return all(isinstance(k, str) and _python_json(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return all(_python_json(v) for v in value)
    return False


class UserChunk(ChatCompletionChunk):  # type: ignore[misc, valid-type]
    """A user's own subclass: read by its ``to_dict()``, which it may change."""

    def to_dict(self, **kwargs: Any) -> dict[str, Any]:  # type: ignore[override]
        data: dict[str, Any] = super().to_dict(**kwargs)
        for choice in data.get("choices", []):
            if choice.get("delta", {}).get("content"):
                choice["delta"]["content"] = choice["delta"]["content"].upper()
        return data


def test_user_subclass_reads_through_its_to_dict(aggregate_module: Any) -> None:
    events = [_chunk({"content": t}, {}, None) for t in ("ab", "cd")]
    objects = [UserChunk.model_validate(e) for e in events]
    assert aggregate_module.aggregate(objects, "openai-chat").content == "ABCD"


def test_sent_null_and_unset_field(aggregate_module: Any) -> None:
    """A field the API sent as null is read (as ``to_dict()`` keeps it), an unset one is not:
    the messages are those of the events themselves."""
    events = [
        {"id": "c", "choices": [{"index": 0, "delta": {"role": "assistant", "content": None}}]},
        {"id": "c", "choices": [{"index": 0, "delta": {"content": "hi"}, "logprobs": None}]},
        {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    objects = [openai_construct(type_=ChatCompletionChunk, value=e) for e in events]
    assert [o.to_dict() for o in objects] == events
    got = aggregate_module.aggregate_choices(objects, "openai-chat")
    assert _dump(got) == _dump(aggregate_module.aggregate_choices(events, "openai-chat"))
    assert got[0].content == "hi"


def test_floats_and_big_ints_keep_their_values(aggregate_module: Any) -> None:
    """Numbers an event's extra fields carry come out as they went in (a float stays a float,
    -0.0 keeps its sign, an int beyond 64 bits is the nearest float, as from JSON text)."""
    extra = {"f": 1e16, "z": -0.0, "one": 1.0, "tiny": 5e-324, "big": 2**70, "i": -(2**63)}
    event = _chunk({"content": "x"}, {"x_extra": extra}, None)
    message = aggregate_module.aggregate([event], "openai-chat")
    meta = json.dumps(message.to_dict())
    reference = aggregate_module.aggregate([json.dumps(event)], "openai-chat")
    assert meta == json.dumps(reference.to_dict())
    found = message.to_dict()["provider_metadata"]
    values = [v for v in _walk(found) if isinstance(v, float)]
    assert any(math.copysign(1.0, v) < 0 and v == 0 for v in values) or "x_extra" not in meta


def _walk(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _walk(v)]
    if isinstance(value, list):
        return [x for v in value for x in _walk(v)]
    return [value]


def test_strict_error_names_the_event(aggregate_module: Any) -> None:
    """An unreadable dict among plain ones: the same error, with the same event number."""
    events: list[Any] = [_chunk({"content": "a"}, {}, None), {1: "x"}]
    with pytest.raises(fastmerge.errors.EventError) as raised:
        aggregate_module.aggregate(events, "openai-chat", strict=True)
    assert raised.value.event == 2


def test_a_datetime_the_sdk_parsed_is_kept(aggregate_module: Any) -> None:
    """anthropic's SDK parses a code-execution container's ``expires_at`` into a datetime: the
    event is still read (as JSON text), and the container is kept, not an unreadable event."""
    path = Path(__file__).parents[1] / "corpus" / "anthropic_messages"
    events = _events(path / "sonnet46-thinking-bash-code-execution.jsonl")
    objects = _anthropic_objects(events, "validate")
    message = aggregate_module.aggregate(objects, "anthropic")
    assert [a["code"] for a in message.anomalies if a["code"] == "unreadable_event"] == []
    container = message.provider_metadata["container"]
    assert container["id"] == "container_011CaNRFAbjdPf4rmBarZzqQ"
    assert container["expires_at"].startswith("2026-04-24T11:13:36.730129")


_DELTA_TYPES = ["text_delta", "thinking_delta", "signature_delta", "input_json_delta", "x_delta"]
_DELTA_FIELDS = ["text", "thinking", "signature", "partial_json", "type", "index", "other"]
_DELTA_TEXTS = st.one_of(
    st.text(max_size=4),
    st.sampled_from(["\ud800", 'q"\\', "\n", "数🙂", _Str("sub"), None, 1, b"by"]),
)


@st.composite
def _anthropic_delta(draw: st.DrawFn) -> Any:
    """A ``content_block_delta`` dict, most of the hot shape, some one step off it."""
    delta_type = draw(st.sampled_from(_DELTA_TYPES))
    field = draw(st.sampled_from(_DELTA_FIELDS[:4]))
    delta: dict[Any, Any] = {"type": delta_type, field: draw(_DELTA_TEXTS)}
    if draw(st.booleans()):
        delta = dict(reversed(list(delta.items())))
    index: Any = draw(
        st.one_of(
            st.integers(min_value=-1, max_value=3),
            st.sampled_from([True, 2**70, 1.0, "0", None, _Int(1)]),
        )
    )
    event: dict[Any, Any] = {"type": "content_block_delta", "index": index, "delta": delta}
    odd = draw(st.integers(min_value=0, max_value=12))
    if odd == 1:
        delta[draw(st.sampled_from(_DELTA_FIELDS))] = draw(_DELTA_TEXTS)
    elif odd == 2:
        event[draw(st.sampled_from(["x", "usage", "delta"]))] = draw(_SCALARS)
    elif odd == 3:
        event["type"] = draw(st.sampled_from(["content_block_deltas", _Str("content_block_delta")]))
    elif odd == 4:
        event["delta"] = _Dict(delta)
    elif odd == 5:
        del delta["type"]
    elif odd == 6:
        event = _Dict(event)
    elif odd == 7:
        event[_Str("index")] = event.pop("index")
    return event


_BLOCKS = [
    {"type": "text", "text": ""},
    {"type": "thinking", "thinking": "", "signature": ""},
    {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
]


@st.composite
def _anthropic_stream(draw: st.DrawFn) -> list[Any]:
    events: list[Any] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": "m",
                "stop_reason": None,
                "usage": {"input_tokens": 1},
            },
        }
    ]
    for at in range(draw(st.integers(min_value=0, max_value=3))):
        block = draw(st.sampled_from(_BLOCKS))
        events.append({"type": "content_block_start", "index": at, "content_block": block})
        events.extend(draw(st.lists(_anthropic_delta(), max_size=4)))
        if draw(st.booleans()):
            events.append({"type": "content_block_stop", "index": at})
    events.extend(draw(st.lists(_anthropic_delta(), max_size=2)))
    if draw(st.booleans()):
        events.append({"type": "message_stop"})
        events.extend(draw(st.lists(_anthropic_delta(), max_size=1)))
    return events


def _json_lines(events: list[Any]) -> bytes | None:
    """The events' JSON lines, where each is plain JSON data (no subclass, surrogate, NaN)."""

    def plain(value: Any) -> bool:
        if type(value) is dict:
            return all(type(k) is str and plain(v) for k, v in value.items())
        if type(value) is str:
            return "\ud800" not in value
        return type(value) in (int, bool, type(None)) and abs(value or 0) < 2**63

    if not all(plain(e) for e in events):
        return None
    return b"".join(json.dumps(e, ensure_ascii=False).encode() + b"\n" for e in events)


@pytest.mark.differential
@settings(max_examples=300, deadline=None)
@given(_anthropic_stream(), st.sampled_from(["anthropic", "auto"]), st.booleans())
def test_anthropic_delta_dicts_read_as_their_bytes(
    events: list[Any], provider: str, strict: bool
) -> None:
    """Anthropic delta events as dicts (the Rust backend reads the hot shape's fields straight
    from the dict) give, on every backend, the messages or the error of their JSON lines and
    of the conversion of each event, including deltas one step off the hot shape: another key,
    a non-str or non-int value, a subclass, a block not started or of another kind."""
    outcomes = {
        name: _outcome(partial(AGGREGATES[name].aggregate_choices, events, provider, strict=strict))
        for name in BACKENDS
    }
    lines = _json_lines(events)
    if lines is not None:
        for name in BACKENDS:
            outcomes[f"{name}-bytes"] = _outcome(
                partial(AGGREGATES[name].aggregate_choices, [lines], provider, strict=strict)
            )
    if RUST is not None and not strict:
        outcomes["rust-conversion"] = _outcome(lambda: _rust_old_path(events, provider))
    first = next(iter(outcomes.values()))
    assert all(o == first for o in outcomes.values()), outcomes


def _anthropic_sdk_event(event: Any) -> Any:
    """The SDK's object for an event as its ``Stream`` builds it (``construct_type``, no
    validation: odd values stay as given); the event itself where it is not a dict."""
    if not isinstance(event, dict):
        return event
    return anthropic_construct(type_=anthropic_types.RawMessageStreamEvent, value=dict(event))


@pytest.mark.differential
@settings(max_examples=300, deadline=None)
@given(_anthropic_stream(), st.booleans())
def test_anthropic_delta_sdk_objects_read_as_their_dicts(events: list[Any], strict: bool) -> None:
    """Anthropic delta events as SDK objects (the Rust backend reads the hot shape's fields
    from the models' attributes) give, on every backend, the messages or the error of the
    dicts their ``to_dict()`` gives, and of the Rust backend's conversion of each object."""
    objects = [_anthropic_sdk_event(e) for e in events]
    outcomes = {
        name: _outcome(
            partial(AGGREGATES[name].aggregate_choices, objects, "anthropic", strict=strict)
        )
        for name in BACKENDS
    }
    try:
        dicts = [_plain(o) for o in objects]
    except Exception:  # an object to_dict() cannot dump: the outcomes above still agree
        dicts = None
    if dicts is not None:
        for name in BACKENDS:
            outcomes[f"{name}-dicts"] = _outcome(
                partial(AGGREGATES[name].aggregate_choices, dicts, "anthropic", strict=strict)
            )
    if RUST is not None and not strict:
        outcomes["rust-conversion"] = _outcome(lambda: _rust_old_path(objects, "anthropic"))
    first = next(iter(outcomes.values()))
    assert all(o == first for o in outcomes.values()), outcomes
