"""What several renderers share: reading the messages, and a tool call's arguments as an
object."""

from __future__ import annotations

import json
from typing import Any, Sequence


def choice_data(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """Each message's ``to_dict()``, with its ``finish_reason_normalized`` (a view, not a
    field), in order."""
    datas = []
    for message in messages:
        data: dict[str, Any] = message.to_dict()
        data["finish_reason_normalized"] = message.finish_reason_normalized
        datas.append(data)
    return datas


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
    import jiter

    try:
        value = jiter.from_json(arguments.encode("utf-8", "surrogatepass"), partial_mode=True)
    except ValueError:
        return {}
    return {} if value is None else value
