"""Random chunk leaves of every family and part kind (hypothesis strategies), and the folds that
run them through the extension's ``ChunkCore`` and the twin's, for the differential and round-
trip tests."""

from __future__ import annotations

from types import ModuleType
from typing import Any, Callable

import orjson
from conftest import RUST, canonical
from hypothesis import strategies as st

from fastmerge._pure import chunks as twin

small_text = st.sampled_from(["", " ", "null", "a", "b", "tok ", "\u00e9", "\ud800", "\U0001f600"])


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, 1.5, -0.0, float("nan")]),
    small_text,
)


keys = st.sampled_from(["a", "b", "c", "details", "x"])


json_like = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(keys, inner, max_size=3)),
    max_leaves=6,
)


ids = st.sampled_from([None, "", "null", " ", "c1", "c2", "c3", 1])


names = st.sampled_from([None, "", "null", "f", "g", "h"])


indexes = st.sampled_from([None, 0, 1, 2, True, 1.0])


payloads = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {},
        optional={
            "data": st.sampled_from(["", "s1", "s2", None, 5]),
            "provider": st.sampled_from(["p", "q"]),
            "kind": st.sampled_from(["sig", "enc"]),
        },
    ),
)


def _part(kind: str, fields: dict[str, Any]) -> Any:
    return st.fixed_dictionaries({"part": st.just(kind)}, optional=fields)


text_parts = _part(
    "text",
    {
        "text": small_text,
        "index": indexes,
        "attributes": st.one_of(st.none(), st.dictionaries(keys, scalars, max_size=2)),
        "citations": st.one_of(st.none(), st.lists(json_like, max_size=2)),
        "opened": st.one_of(st.booleans(), st.none()),
    },
)


bare_text = st.fixed_dictionaries(
    {"part": st.sampled_from(["text", "reasoning"]), "text": small_text}
)


reasoning_parts = _part(
    "reasoning",
    {
        "text": small_text,
        "index": indexes,
        "summary": st.one_of(st.none(), small_text),
        "payload": payloads,
        "redacted": st.one_of(st.booleans(), st.none()),
    },
)


call_parts = _part(
    "tool_call",
    {
        "id": ids,
        "name": names,
        "provider_index": indexes,
        "arguments": st.one_of(
            st.none(),
            st.sampled_from(["", "{", '"a"', ":1}", "{}"]),
            st.dictionaries(keys, json_like, max_size=2),
            st.just(7),
        ),
        "type": st.sampled_from([None, "", "function", "custom"]),
        "payload": payloads,
        "response_item_id": st.sampled_from([None, "", "r1", "r2"]),
        "extra": st.one_of(st.none(), st.dictionaries(keys, json_like, max_size=2)),
    },
)


other_parts = st.builds(
    lambda kind, fields: {"part": kind, **fields},
    st.sampled_from(["tool_result", "media", "unknown", "text"]),
    st.dictionaries(
        st.sampled_from(["index", "url", "mime", "content", "part_x"]),
        st.one_of(indexes, json_like),
        max_size=3,
    ),
)


parts = st.lists(
    st.one_of(bare_text, text_parts, reasoning_parts, call_parts, other_parts), max_size=4
)


usages = st.one_of(
    st.none(),
    st.just("not a dict"),
    st.dictionaries(
        st.sampled_from(
            ["input_tokens", "output_tokens", "total_tokens", "cache_read", "x_details"]
        ),
        st.one_of(
            st.none(),
            st.integers(0, 5),
            st.sampled_from([0.0, 2.5, "", "n", True]),
            st.dictionaries(keys, st.one_of(st.none(), st.integers(0, 3)), max_size=2),
        ),
        max_size=4,
    ),
)


logprobs = st.one_of(
    st.none(),
    st.lists(st.integers(0, 3), max_size=2),
    st.dictionaries(
        st.sampled_from(["content", "refusal", "top"]),
        st.one_of(st.none(), st.lists(st.integers(0, 3), max_size=2), st.integers()),
        max_size=2,
    ),
    st.just("odd"),
)


token_ids = st.one_of(
    st.none(), st.lists(st.integers(0, 9), max_size=3), st.just(0), st.just({"a": 1})
)


finish_reasons = st.sampled_from(
    [None, "", "null", "stop", "length", "tool_use", "STOP", "weird", 3]
)


ASSISTANT_FIELDS = {
    "role": st.sampled_from([None, "", "assistant", "model"]),
    "name": names,
    "parts": parts,
    "content": st.one_of(st.none(), small_text, st.lists(small_text, max_size=2)),
    "content_list": st.booleans(),
    "metadata": st.one_of(st.none(), st.dictionaries(keys, json_like, max_size=3), st.just("m")),
    "provider_metadata": st.one_of(st.none(), st.dictionaries(keys, json_like, max_size=2)),
    "usage": usages,
    "final_usage": usages,
    "finish_reason": finish_reasons,
    "parser_content": st.one_of(st.none(), json_like),
    "provider_content": st.one_of(st.none(), json_like),
    "prompt_token_ids": token_ids,
    "completion_token_ids": token_ids,
    "logprobs": logprobs,
    "response_id": ids,
    "response_model": st.sampled_from([None, "", "m1", "m2"]),
    "refusal": st.one_of(st.none(), small_text, st.just(3)),
    "status": st.sampled_from([None, "", "complete", "incomplete"]),
    "anomalies": st.lists(
        st.fixed_dictionaries({"code": st.just("truncated"), "detail": small_text}), max_size=1
    ),
    "choice_index": st.sampled_from([None, 0, 1]),
    "obfuscation": small_text,
}


CONTENT = st.one_of(st.none(), small_text, st.lists(json_like, max_size=2), st.integers(0, 2))


BASE_FIELDS = {
    "role": st.sampled_from([None, "", "user", "system"]),
    "name": names,
    "content": CONTENT,
    "metadata": st.one_of(st.none(), st.dictionaries(keys, json_like, max_size=2)),
    "parts": parts,
}


TOOL_FIELDS = {**BASE_FIELDS, "tool_call_id": ids}


FIELDS = {"assistant": ASSISTANT_FIELDS, "base": BASE_FIELDS, "tool": TOOL_FIELDS}


def leaves_of(family: str, max_size: int = 6) -> Any:
    leaf = st.fixed_dictionaries({}, optional=FIELDS[family])
    return st.lists(leaf, min_size=1, max_size=max_size)


@st.composite
def streams(draw: Any) -> tuple[str, list[dict[str, Any]]]:
    family = draw(st.sampled_from(["assistant", "assistant", "assistant", "base", "tool"]))
    leaves = draw(leaves_of(family))
    if family == "base" and draw(st.booleans()):
        # base accepts any family: mix in assistant / tool leaves
        leaves = leaves + draw(leaves_of(draw(st.sampled_from(["assistant", "tool"])), 3))
    return family, leaves


def _chunk(module: ModuleType, family: str, leaf: dict[str, Any]) -> Any:
    chunk = module.ChunkCore()
    chunk._init(family, leaf)
    return chunk


def _families(family: str, leaves: list[dict[str, Any]]) -> list[str]:
    """The family of each leaf: the first is the stream's; base streams may hold others."""
    out = []
    for i, leaf in enumerate(leaves):
        if i == 0 or family != "base":
            out.append(family)
        else:
            out.append("assistant" if "parts" in leaf and "tool_call_id" not in leaf else "base")
    return out


def _read(chunk: Any) -> list[tuple[Any, ...]]:
    out = []
    for finish in (False, True):
        try:
            data = chunk._data(finish)
        except Exception as exc:  # noqa: BLE001 - the exception is the outcome
            out.append(("raise", type(exc), str(exc)))
            continue
        try:
            dumped: Any = orjson.dumps(data)
        except (orjson.JSONEncodeError, TypeError) as exc:
            dumped = ("unserializable", type(exc))
        out.append(("ok", canonical(data), dumped))
        assert chunk._data(finish) is data  # cached per chunk
    return out


def _outcome(fn: Callable[[], Any]) -> tuple[Any, ...]:
    try:
        chunk = fn()
    except Exception as exc:  # noqa: BLE001 - the exception is the outcome
        return ("raise", type(exc), str(exc))
    if chunk is None:
        return ("none",)
    return ("ok", _read(chunk))


def _unqualified(outcome: tuple[Any, ...]) -> tuple[Any, ...]:
    """A message naming a chunk class names its module: the two modules differ."""
    if outcome[0] != "raise":
        return outcome
    message = outcome[2].replace("fastmerge._fastmerge.", "").replace("fastmerge._pure.chunks.", "")
    return (*outcome[:2], message)


def _both(build: Callable[[ModuleType], Any]) -> None:
    rust = _outcome(lambda: build(RUST))
    python = _outcome(lambda: build(twin))
    assert _unqualified(rust) == _unqualified(python)


def _fold_plus(module: ModuleType, family: str, leaves: list[dict[str, Any]]) -> Any:
    chunks = [_chunk(module, f, leaf) for f, leaf in zip(_families(family, leaves), leaves)]
    acc = chunks[0]
    for chunk in chunks[1:]:
        acc = acc + chunk
    return acc


OPTIONS = [
    {},
    {"strict": True},
    {"signature_merge": "concat"},
    {"usage": "sum"},
    {"usage": "last"},
    {"strict": True, "signature_merge": "concat", "usage": "sum"},
]
