"""The Rust engine's typed fast paths for events read from bytes (openai-chat chunks,
Anthropic block deltas), against its generic path (the hidden ``FASTMERGE_GENERIC_EVENTS``
switch) and against the twin, on hypothesis streams of events near the hot shapes: the same
messages, anomalies and errors.
tests/engine/fastpath.rs does the same on the corpus, event by event.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from conftest import AGGREGATES, outcome
from hypothesis import given
from hypothesis import strategies as st

_text = st.none() | st.sampled_from(["", " ", "null", "Hi", "é\n", '"q"']) | st.text(max_size=4)
# mostly the hot shape's values, sometimes a value only the generic path reads
_odd = st.sampled_from([1, 1.5, -0.0, [], {}, "\ud800", 2**64])


def _opt(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A value, or a marker for the key being left out."""
    return st.just(...) | value


def _dict(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({k: _opt(v) for k, v in fields.items()}).map(
        lambda d: {k: v for k, v in d.items() if v is not ...}
    )


_calls = st.lists(
    st.fixed_dictionaries(
        {"index": st.sampled_from([0, 1])},
        optional={
            "id": st.none() | st.sampled_from(["call_1", "call_2", ""]),
            "type": st.none() | st.sampled_from(["function", "function", "custom", "", "null"]),
            "function": _dict(name=st.none() | st.just("f"), arguments=_text),
        },
    ),
    max_size=2,
)
_delta = _dict(
    role=_text | _odd,
    content=_text | _odd,
    reasoning_content=_text,
    reasoning=_text,
    refusal=_text,
    tool_calls=_calls,
    # a key of no step (kept as provider_metadata["message"]), and ones the fast path declines
    x_delta=st.none() | st.sampled_from([1, "", -0.0, "\ud800", [{}]]),
    audio=st.none() | st.just({"id": "a"}),
    images=st.none() | st.just([]),
)
_choice = _dict(
    index=st.sampled_from([0, 0, 1]) | _odd,
    delta=st.none() | _delta,
    finish_reason=st.none() | st.sampled_from(["stop", "", "tool_calls"]),
    logprobs=st.none()
    | st.just({"content": []})
    | st.fixed_dictionaries(
        {"content": st.lists(_dict(token=_text, logprob=st.just(-0.5) | _odd), max_size=2)}
    )
    | _odd,
    token_ids=st.none() | st.just([1]),
    # keys of no step (vLLM's, Azure's; provider_metadata["choice"]), and one declined
    stop_reason=st.none() | st.sampled_from(["x", -0.0, {"a": -0}]),
    content_filter_results=st.just({}) | st.just({"hate": {"filtered": False}}),
    text=st.none() | st.just("t"),
)
_gateway = st.none() | st.sampled_from([1, "OpenAI", "", {"b": [1, -0]}, -0.0, "\ud800", [{}]])
_chunk = _dict(
    id=st.none() | st.sampled_from(["c", "c", "d", ""]),
    object=st.none() | st.sampled_from(["chat.completion.chunk", ""]),
    created=st.none() | st.sampled_from([1, 1, 2]) | _odd,
    model=st.none() | st.sampled_from(["m", "n"]),
    system_fingerprint=st.none() | st.just("fp"),
    service_tier=st.none() | st.just("default"),
    # no choice: the usage chunk, or a gateway's chunk of metadata
    choices=st.lists(_choice, min_size=0, max_size=2),
    usage=st.none()
    | st.sampled_from(
        [
            {"prompt_tokens": 1},
            {
                "prompt_tokens": 2,
                "completion_tokens": 3,
                "prompt_tokens_details": {"cached_tokens": 1, "audio_tokens": None},
                "completion_tokens_details": {"reasoning_tokens": 0},
            },
            {"prompt_cache_hit_tokens": 4, "x": None, "y": -0.0, "z": "\ud800"},
            {},
            1,
        ]
    ),
    obfuscation=st.just("zz"),
    # a gateway's own fields: kept in provider_metadata["response"] when they change
    x_other=_gateway,
    provider=_gateway,
)


def _stream(chunks: list[dict[str, Any]], ascii_only: bool) -> bytes:
    lines = [
        json.dumps(c, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass") for c in chunks
    ]
    return b"\n".join(lines) + b"\n"


def _run(backend: str, data: bytes, strict: bool, provider: str = "openai-chat") -> tuple[Any, ...]:
    def go() -> bytes:
        agg = AGGREGATES[backend].Aggregator(provider, strict=strict)
        agg.feed(data)
        return orjson.dumps([m.to_dict() for m in agg.finish_choices()])

    return outcome(go)


@pytest.mark.differential
@given(st.lists(_chunk, min_size=1, max_size=8), st.booleans(), st.booleans())
def test_fast_path_equals_generic_path_and_twin(
    both: Any,
    monkeypatch: pytest.MonkeyPatch,
    chunks: list[dict[str, Any]],
    ascii_only: bool,
    strict: bool,
) -> None:
    data = _stream(chunks, ascii_only)
    fast = _run("rust", data, strict)
    with monkeypatch.context() as patch:
        patch.setenv("FASTMERGE_GENERIC_EVENTS", "1")
        generic = _run("rust", data, strict)
    assert fast == generic
    assert fast == _run("python", data, strict)


# Chunks alike but for their delta's text and obfuscation (the Rust fast path reads such a chunk
# by comparing its bytes with an earlier one's), among other chunks
_alike_text = _text | st.text(max_size=3) | st.sampled_from(["\ud800", "a\tb", "\\"])


def _alike(step: tuple[str, Any, Any, int, str]) -> dict[str, Any]:
    kind, text, obfuscation, index, model, *rest = step
    logprobs = rest[0](text) if rest else None
    gateway = rest[1] if len(rest) > 1 else ...
    delta: dict[str, Any]
    if kind == "arguments":
        delta = {"tool_calls": [{"index": index, "function": {"arguments": text}}]}
    else:
        delta = {kind: text}
    chunk: dict[str, Any] = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": None}],
        "usage": None,
    }
    if obfuscation is not ...:
        chunk["obfuscation"] = obfuscation
    if gateway is not ...:
        chunk["provider"] = gateway
    return chunk


def _entry(text: Any, **more: Any) -> dict[str, Any]:
    token = text if isinstance(text, str) else "t"
    return {"token": token, "logprob": -0.25, "bytes": list(token.encode("utf-8", "replace")),
            "top_logprobs": [{"token": token, "logprob": -0.25}], **more}  # fmt: skip


# A chunk's logprobs from its delta's text: mostly an entry of that token (the kept text the
# Rust fast path reads later, a template's third hole), sometimes another shape or a value
# only the generic path reads
_alike_logprobs = st.sampled_from(
    [
        lambda text: None,
        lambda text: {"content": [_entry(text)], "refusal": None},
        lambda text: {"content": [_entry(text)]},
        lambda text: {"content": [_entry(text), _entry('😀 é\n"', x=[True, None, {}])]},
        lambda text: {"content": []},
        lambda text: {"content": None, "refusal": None},
        lambda text: {"content": [_entry(text, logprob=-0.0)]},
        lambda text: {"content": [_entry(text, logprob=0, bytes=[2**63, -(2**63) - 1, 1e-300])]},
        lambda text: {"content": [{"token": "\ud800"}]},
        lambda text: {"content": [_entry(text)], "refusal": [_entry("r")], "x": -0.0},
        lambda text: [_entry(text)],
        lambda text: 7,
    ]
)

_alike_chunk = st.tuples(
    st.sampled_from(["content", "content", "reasoning_content", "arguments"]),
    _alike_text,
    st.sampled_from(["zz", "abc", "", 'a"b', "é", None, ...]),
    st.sampled_from([0, 1]),
    st.sampled_from(["m", "m", "m", "n"]),
    _alike_logprobs,
    st.sampled_from([..., ..., "OpenAI", "OpenAI", "Azure", None, {"r": 1}]),
).map(_alike)


@pytest.mark.differential
@given(
    st.lists(_alike_chunk | _chunk, min_size=1, max_size=16),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_alike_chunks_fast_path_equals_generic_path_and_twin(
    both: Any,
    monkeypatch: pytest.MonkeyPatch,
    chunks: list[dict[str, Any]],
    calls: bool,
    ascii_only: bool,
    strict: bool,
) -> None:
    start = [_alike(("role", "assistant", "zz", 0, "m"))]
    if calls:
        start += [
            {
                "id": "c",
                "choices": [
                    {
                        "index": 0,
                        "delta": {
                            "tool_calls": [
                                {"index": i, "id": f"call_{i}", "function": {"name": "f"}}
                            ]
                        },
                    }
                ],
            }
            for i in (0, 1)
        ]
    data = _stream([*start, *chunks], ascii_only)
    fast = _run("rust", data, strict)
    with monkeypatch.context() as patch:
        patch.setenv("FASTMERGE_GENERIC_EVENTS", "1")
        generic = _run("rust", data, strict)
    assert fast == generic
    assert fast == _run("python", data, strict)


# Anthropic: content_block_delta events around the fast path's shape, for blocks of each kind
_anthropic_starts = [
    {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking"}},
    {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
    {
        "type": "content_block_start",
        "index": 2,
        "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}},
    },
    {"type": "content_block_start", "index": 3, "content_block": {"type": "server_x"}},
]
_delta_body = st.sampled_from(
    [
        ("text_delta", "text"),
        ("thinking_delta", "thinking"),
        ("signature_delta", "signature"),
        ("input_json_delta", "partial_json"),
        ("text_delta", "thinking"),
        ("other_delta", "text"),
    ]
).flatmap(
    lambda kind: st.fixed_dictionaries(
        {"type": st.just(kind[0]), kind[1]: _text | _odd},
        optional={"extra": st.sampled_from([1, "\ud800", -0.0, [{"a": -0}], None])},
    )
)
_anthropic_delta = st.fixed_dictionaries(
    {
        "type": st.just("content_block_delta"),
        "index": st.sampled_from([0, 1, 2, 3, 4]) | _odd,
        "delta": _delta_body,
    },
    optional={"x": st.sampled_from([1, "\ud800", -0.0, [{"a": -0}], None])},
)
_anthropic_event = _anthropic_delta | st.sampled_from(
    [{"type": "content_block_stop", "index": i} for i in range(4)] + [{"type": "ping"}]
)


@pytest.mark.differential
@given(st.lists(_anthropic_event, max_size=12), st.booleans(), st.booleans())
def test_anthropic_fast_path_equals_generic_path_and_twin(
    both: Any,
    monkeypatch: pytest.MonkeyPatch,
    events: list[dict[str, Any]],
    ascii_only: bool,
    strict: bool,
) -> None:
    start = {"type": "message_start", "message": {"id": "m", "role": "assistant", "content": []}}
    data = _stream([start, *_anthropic_starts, *events, {"type": "message_stop"}], ascii_only)
    fast = _run("rust", data, strict, "anthropic")
    with monkeypatch.context() as patch:
        patch.setenv("FASTMERGE_GENERIC_EVENTS", "1")
        generic = _run("rust", data, strict, "anthropic")
    assert fast == generic
    assert fast == _run("python", data, strict, "anthropic")


# Logprobs entries with the values a typed reading gets wrong most easily, written as raw JSON
# (an int `-0`, duplicate keys, escapes): the fast path, the generic path and the twin give the
# same message, and the same read-only `message.logprobs`.
_ODD_LOGPROBS = [
    b'{"token":"a","logprob":-0.5,"bytes":[97],"top_logprobs":[]}',
    b'{"token":"b","logprob":-0,"bytes":null,"top_logprobs":[{"token":"b","logprob":-0.0}]}',
    b'{"token":"c","logprob":9223372036854775808,"bytes":[18446744073709551616]}',
    b'{"token":"d","logprob":-9223372036854775808,"bytes":[1e400]}',
    b'{"token":"\\ud83d\\ude00\\u00e9","logprob":1.5e-300}',
    b'{"token":"\\ud800","logprob":-1}',
    b'{"token":"e","token":"f","logprob":-2,"logprob":-3}',
    b'{"logprob":null}',
    b"null",
    b'"text"',
    b"[1,[2,{}]]",
]


def _odd_logprobs_stream(content: bytes, other: bytes) -> bytes:
    head = b'{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":['
    lines = [head + b'{"index":0,"delta":{"role":"assistant","content":""}}]}']
    entries = [b'{"content":[' + entry + b'],"refusal":null}' for entry in _ODD_LOGPROBS]
    entries[4:4] = [b'{"content":' + content + b',"refusal":null}', other]
    for i, logprobs in enumerate(entries):
        delta = b'{"content":"t%d"}' % i
        choice = b'{"index":0,"delta":' + delta + b',"logprobs":' + logprobs + b"}"
        lines.append(head + choice + b"]}")
    lines.append(head + b'{"index":0,"delta":{},"finish_reason":"stop"}]}')
    return b"\n".join(lines) + b"\n"


@pytest.mark.parametrize("content", [b"[]", b"null", b'"x"', b"{}", b'[{"token":"z"}]'])
@pytest.mark.parametrize(
    "other", [b"null", b"{}", b'{"refusal":[{"token":"r"}]}', b'[{"token":"l"}]', b"7"]
)
def test_odd_logprobs_fast_path_equals_generic_path_and_twin(
    both: Any, monkeypatch: pytest.MonkeyPatch, content: bytes, other: bytes
) -> None:
    from fastmerge.parts import FrozenDict, FrozenList

    data = _odd_logprobs_stream(content, other)

    def read(backend: str) -> tuple[Any, ...]:
        def go() -> tuple[bytes, bytes, list[str]]:
            agg = AGGREGATES[backend].Aggregator("openai-chat")
            agg.feed(data)
            (message,) = agg.finish_choices()
            logprobs = message.logprobs
            assert logprobs is message.logprobs
            kinds = []
            stack = [logprobs]
            while stack:  # every container of the read is read-only
                item = stack.pop()
                if isinstance(item, (dict, list)):
                    kinds.append(type(item).__name__)
                    assert type(item) in (FrozenDict, FrozenList)
                    stack.extend(item.values() if isinstance(item, dict) else item)
            dumped = orjson.dumps(logprobs)
            return orjson.dumps(message.to_dict()), dumped, kinds

        return outcome(go)

    fast = read("rust")
    with monkeypatch.context() as patch:
        patch.setenv("FASTMERGE_GENERIC_EVENTS", "1")
        generic = read("rust")
    assert fast == generic
    assert fast == read("python")
    assert fast[0] == "ok"


def _near_texts() -> list[str]:
    """Texts of every length to 20 that differ from each other in one character at each place
    (first, middle, last): what a lookup of Python objects by a print of the text (its length,
    first and last bytes) must tell apart."""
    texts = []
    for n in range(21):
        base = "".join("abcdefghijklmnopqrstu"[i] for i in range(n))
        texts.append(base)
        for at in {0, n // 2, n - 1} if n else set():
            texts.append(base[:at] + "Z" + base[at + 1 :])
            texts.append(base[:at] + "é" + base[at + 1 :])
    return texts


def test_near_tokens_keys_and_bytes_lists_are_never_taken_for_each_other(both: Any) -> None:
    """The binding shares the str of a token or key and the read-only list of a ``bytes``
    that it made from the same text; texts that differ in one byte get their own objects."""
    texts = _near_texts()
    head = '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":['
    lines = [head + '{"index":0,"delta":{"role":"assistant","content":""}}]}']
    entries = []
    for i, text in enumerate(texts * 2):  # twice: the second time from the shared objects
        other = texts[(i * 7) % len(texts)]
        entry = {
            "token": text,
            "logprob": -0.5,
            "bytes": list(text.encode()) + [1000 + len(text)] * (i % 3),
            "top_logprobs": [{"token": other, "logprob": -1.0, "bytes": list(other.encode())}],
            text or "_": other,  # a key of every near text too
        }
        entries.append(entry)
        logprobs = json.dumps({"content": [entry], "refusal": None}, separators=(",", ":"))
        choice = '{"index":0,"delta":{"content":"t"},"logprobs":' + logprobs + "}"
        lines.append(head + choice + "]}")
    data = ("\n".join(lines) + "\n").encode()
    for backend in ("rust", "python"):
        message = AGGREGATES[backend].aggregate(data, "openai-chat")
        assert json.loads(json.dumps(message.logprobs["content"])) == entries, backend


def _call_chunk(call: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}],
    }


def _fragment(index: int, arguments: str, **fields: Any) -> dict[str, Any]:
    """A tool-call fragment as LiteLLM's stream objects dump it: every field present."""
    call: dict[str, Any] = {"index": index, "id": None, "type": "function"}
    call["function"] = {"arguments": arguments, "name": None}
    call.update(fields)
    return call


_OPEN = {"index": 0, "id": "call_0", "function": {"name": "f", "arguments": ""}}
_TYPED_CASES = {
    # the call opened with a type; its fragments repeat it (LiteLLM)
    "repeated": [{**_OPEN, "type": "function"}, _fragment(0, '{"a"'), _fragment(0, ":1}")],
    # opened without a type: the first typed fragment sets it
    "set_later": [_OPEN, _fragment(0, '{"a"'), _fragment(0, ":1}")],
    # (a type other than the default shows in the message)
    "set_later_custom": [_OPEN, _fragment(0, "x", type="custom"), _fragment(0, "y", type="custom")],
    # another type after the first, an empty one, a type without arguments
    "other_type": [
        {**_OPEN, "type": "function"},
        _fragment(0, "x", type="custom"),
        _fragment(0, "y", type=""),
        _fragment(0, ""),
        _fragment(0, "z"),
    ],
    # a repeated id and name equal to the call's, then different ones
    "repeated_id_name": [
        {**_OPEN, "type": "function"},
        _fragment(0, "x", id="call_0"),
        _fragment(0, "y", function={"name": "f", "arguments": "y"}),
        _fragment(0, "z", id="call_1"),
        _fragment(0, "w", function={"name": "g", "arguments": "w"}),
        _fragment(0, "v"),
    ],
    # a known id without a name at another index (the fold sends it to the id's call), then a
    # typed fragment at that index
    "redirected": [
        {**_OPEN, "type": "function"},
        {"index": 1, "id": "call_0", "function": {"arguments": "x"}},
        _fragment(1, "y"),
        _fragment(0, "z"),
    ],
    # a typed call opened without a name, named later
    "named_later": [
        {"index": 0, "type": "function", "function": {"arguments": ""}},
        _fragment(0, "x"),
        {"index": 0, "id": "call_0", "function": {"name": "f"}},
        _fragment(0, "y"),
    ],
}


@pytest.mark.differential
@pytest.mark.parametrize("case", sorted(_TYPED_CASES))
@pytest.mark.parametrize("finish", [True, False])
def test_repeated_call_fields_fast_path_equals_generic_path_and_twin(
    both: Any, monkeypatch: pytest.MonkeyPatch, case: str, finish: bool
) -> None:
    chunks = [_call_chunk(call) for call in _TYPED_CASES[case]]
    if finish:
        chunks.append({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    data = _stream(chunks, True)
    for strict in (False, True):
        fast = _run("rust", data, strict)
        with monkeypatch.context() as patch:
            patch.setenv("FASTMERGE_GENERIC_EVENTS", "1")
            generic = _run("rust", data, strict)
        assert fast == generic
        assert fast == _run("python", data, strict)


def test_repeated_type_keeps_the_calls_type_and_arguments(aggregate_module: Any) -> None:
    for opened, kind in [
        ({**_OPEN, "type": "function"}, "function"),
        ({**_OPEN, "type": "custom"}, "custom"),  # set once: the repeated one changes nothing
        (_OPEN, "function"),
    ]:
        fragments = [_fragment(0, '{"a"'), _fragment(0, ":1}")]
        chunks = [_call_chunk(c) for c in (opened, *fragments)]
        message = aggregate_module.aggregate(_stream(chunks, True), "openai-chat")
        (call,) = message.tool_calls
        assert (call.id, call.name, call.type, call.arguments) == ("call_0", "f", kind, '{"a":1}')
    chunks = [_call_chunk(c) for c in (_OPEN, _fragment(0, "{}", type="custom"))]
    (call,) = aggregate_module.aggregate(_stream(chunks, True), "openai-chat").tool_calls
    assert (call.type, call.arguments) == ("custom", "{}")  # a later type sets it
