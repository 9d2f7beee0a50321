"""``AssistantMessage.from_dict``'s fast path for part dicts shaped as ``to_dict()`` writes them
(what a session loads): the same message, byte for byte, and the same errors, as the general
path through the part classes (taken for any other Mapping)."""

from __future__ import annotations

from types import MappingProxyType, ModuleType
from typing import Any

import orjson
import pytest
from _support.corpus import KINDS, streams
from hypothesis import given, settings
from hypothesis import strategies as st

from fastmerge import errors

CORPUS = [(kind, path) for kind in KINDS for path in streams(kind)]


def _dumps(message: Any) -> bytes:
    return orjson.dumps(message.to_dict())


def _general(part: dict[str, Any]) -> Any:
    # not a dict: from_dict builds the part object, as it did before the fast path
    return MappingProxyType(part)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_fast_and_general_paths_agree_on_the_corpus(
    aggregate_module: ModuleType, messages_module: ModuleType, data: st.DataObject
) -> None:
    kind, path = data.draw(st.sampled_from(CORPUS), label="stream")
    choices = aggregate_module.aggregate_choices(path.read_bytes(), KINDS[kind])
    message = data.draw(st.sampled_from(choices), label="choice")
    d = message.to_dict()
    parts = []
    for part in d["parts"]:
        # any key order (a hand-written dict), a payload's too
        keys = data.draw(st.permutations(list(part)))
        shuffled = {k: part[k] for k in keys}
        if isinstance(shuffled.get("payload"), dict):
            payload = shuffled["payload"]
            order = data.draw(st.permutations(list(payload)))
            shuffled["payload"] = {k: payload[k] for k in order}
        parts.append(shuffled)
    fast = messages_module.AssistantMessage.from_dict({**d, "parts": parts})
    general = messages_module.AssistantMessage.from_dict(
        {**d, "parts": [_general(p) for p in parts]}
    )
    assert _dumps(fast) == _dumps(general) == orjson.dumps(d)
    assert fast == message


def test_a_stored_part_is_not_rebuilt_through_its_class(
    aggregate_module: ModuleType, messages_module: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = next(p for p in streams("anthropic_messages") if "thinking-signature" in p.name)
    message = aggregate_module.aggregate(path.read_bytes(), "anthropic")
    d = message.to_dict()
    assert [p["part"] for p in d["parts"]][:1] == ["reasoning"]

    def refuse(part: Any) -> Any:
        raise AssertionError("the general path ran")

    monkeypatch.setattr(messages_module, "part_from_dict", refuse)
    assert _dumps(messages_module.AssistantMessage.from_dict(d)) == orjson.dumps(d)


def _deep(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels):
        value = [value]
    return value


_TEXT = {"part": "text", "text": "hi", "citations": None, "attributes": None, "index": None}
_REASONING = {
    "part": "reasoning",
    "text": "",
    "summary": None,
    "payload": {"provider": "anthropic", "kind": "signature", "data": "Eq=="},
    "redacted": False,
    "index": 0,
}


@pytest.mark.parametrize(
    ("part", "error"),
    [
        ({**_TEXT, "text": 5}, "text part field 'text' must be str, not int"),
        ({**_TEXT, "index": True}, "text part field 'index' must be an int or None, not bool"),
        (
            {**_REASONING, "redacted": None},
            "reasoning part field 'redacted' must be bool, not NoneType",
        ),
        ({**_REASONING, "payload": "Eq=="}, "payload must be an OpaquePayload or a dict, not str"),
        ({**_TEXT, "citations": _deep(errors.MAX_DEPTH)}, f"limit of {errors.MAX_DEPTH} levels"),
    ],
)
def test_a_malformed_part_raises_what_the_general_path_raises(
    messages_module: ModuleType, part: dict[str, Any], error: str
) -> None:
    raised = []
    for given_part in (part, _general(part)):
        with pytest.raises((TypeError, errors.DepthLimitError)) as info:
            messages_module.AssistantMessage.from_dict({"role": "assistant", "parts": [given_part]})
        raised.append((type(info.value), str(info.value)))
    assert raised[0] == raised[1]
    assert error in raised[0][1]
