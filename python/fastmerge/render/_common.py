"""What several renderers share: reading the messages, a tool call's arguments as an object,
and which tool calls the stream cut.

A tool call whose fragments never carried a name (a stream cut before the name came, arguments
with nothing to attach to) is in no rendering (edge case E107): every provider refuses a call
without a name, and the message keeps it in its parts with its anomaly (nothing lost). The
renderers read a message through :func:`message_data`, which leaves such calls out.

A cut tool call (rules §6: its stream ended before the call did) is never rendered as a
complete, executable call: every renderer gives its raw arguments string where the provider's
shape holds the arguments (``input``, ``args``, ``arguments``), unparsed, and sets
:data:`CUT_MARKER` (``"truncated": true``) on the call's object."""

from __future__ import annotations

import json
from typing import Any, Protocol, Sequence

from ..parts import parse_arguments


def is_nameless(part: dict[str, Any]) -> bool:
    """Whether ``part`` (of a ``to_dict()``) is a tool call without a name (None, or a blank
    or ``"null"`` text, which the merge reads as absent)."""
    if part.get("part") != "tool_call":
        return False
    name = part.get("name")
    return not isinstance(name, str) or not name.strip() or name.strip() == "null"


#: The usage keys the adapters add beside a provider's own (rules §5), declared once: each
#: renderer writes them under its provider's names, and leaves out those its provider lacks.
NORMALIZED_USAGE = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)


def normalized_usage_but(*own: str) -> frozenset[str]:
    """The normalized usage keys that are not among a provider's ``own`` names."""
    return frozenset(key for key in NORMALIZED_USAGE if key not in own)


class Message(Protocol):
    """What a renderer reads of a message: its data (an ``AssistantMessage`` is one). Named
    here, not imported, so that the renderers stay below the message model."""

    def to_dict(self) -> dict[str, Any]: ...
    def usage_total(self) -> Any: ...


def message_data(message: Message) -> dict[str, Any]:
    """The message's ``to_dict()`` as renderers read it: without its nameless tool calls
    (:func:`is_nameless`), and without the ``truncated`` anomalies that name one of them (so
    that no other call is read as the cut one). Its other anomalies stay."""
    data: dict[str, Any] = message.to_dict()
    parts = data.get("parts") or []
    nameless = [part for part in parts if is_nameless(part)]
    if not nameless:
        return data
    calls = [part for part in parts if part.get("part") == "tool_call"]
    data["anomalies"] = [
        anomaly
        for anomaly in data.get("anomalies") or ()
        if not any(_named_call(anomaly, calls) is part for part in nameless)
    ]
    data["parts"] = [part for part in parts if not any(part is n for n in nameless)]
    return data


def choice_data(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """Each message's :func:`message_data`, with its ``finish_reason_normalized`` (a view,
    not a field), in order."""
    datas = []
    for message in messages:
        data = message_data(message)
        data["finish_reason_normalized"] = message.finish_reason_normalized
        datas.append(data)
    return datas


#: The key a renderer sets (to ``True``) on the object of a tool call that the stream cut.
CUT_MARKER = "truncated"


def cut_calls(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool-call parts of a message's ``to_dict()`` that a ``truncated`` anomaly names.

    An adapter that cuts a tool call writes the call into its anomaly as data, ``tool_call``:
    the call's ``id`` and / or ``name`` as far as the stream gave them, and the
    ``provider_index`` its tool-call part carries where the adapter keeps one (every adapter
    but OpenAI Chat's, which tracks the open call by id and name). The cut call is the last
    call that has that ``provider_index`` (when given) and, among those, the id (else the
    name) when one of them has it; without a ``provider_index``, the last call with that id,
    else with that name. Matching is by value only: a call without an id gets a synthetic one
    at the finish, which its anomaly never names, and a name is never looked for in the
    ``detail`` text. An anomaly without ``tool_call`` names no call."""
    calls = [part for part in data.get("parts") or () if part.get("part") == "tool_call"]
    cut: list[dict[str, Any]] = []
    for anomaly in data.get("anomalies") or ():
        call = _named_call(anomaly, calls)
        if call is not None and not any(call is seen for seen in cut):
            cut.append(call)
    return cut


def _named_call(anomaly: Any, calls: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The call of ``calls`` a ``truncated`` anomaly names (see :func:`cut_calls`), if any."""
    if not isinstance(anomaly, dict) or anomaly.get("code") != "truncated":
        return None
    named_call = anomaly.get("tool_call")
    if not isinstance(named_call, dict):
        return None
    index = named_call.get("provider_index")
    pinned = type(index) is int
    candidates = [c for c in calls if c.get("provider_index") == index] if pinned else calls
    for key in ("id", "name"):
        named = [call for call in candidates if _same(call.get(key), named_call.get(key))]
        if named:
            candidates, pinned = named, True
            break
    return candidates[-1] if pinned and candidates else None


def _same(value: Any, named: Any) -> bool:
    return isinstance(value, str) and bool(value) and value == named


def is_cut(part: dict[str, Any], cut: list[dict[str, Any]]) -> bool:
    """Whether ``part`` is one of the parts :func:`cut_calls` gave."""
    return any(part is call for call in cut)


def arguments_object(arguments: Any, *, partial: bool = False) -> Any:
    """A tool call's arguments as the provider's non-streaming response holds them: objects
    as they are, ``{}`` when absent or empty, raw JSON parsed. JSON that does not parse stays
    the raw string, or with ``partial=True`` is read as far as it is complete (incomplete
    strings and keys left out, as Anthropic's SDK does; ``{}`` if nothing is)."""
    if arguments is None:
        return {}
    if not isinstance(arguments, str):
        return arguments
    if not arguments.strip():
        return {}
    try:
        return json.loads(arguments)
    except ValueError:
        if not partial:
            return arguments
    # the one partial parser says None where nothing is complete; this shape holds an object
    value = parse_arguments(arguments, partial=True)
    return {} if value is None else value
