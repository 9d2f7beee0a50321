"""OpenAI Responses input items (what the Agents SDK's sessions hold) as log messages.

:class:`fastmerge.session.agents.AgentsSession` stores each item verbatim, in a row of kind
``<role>_item`` (:data:`ITEM_KINDS`), and converts nothing when it appends: the message a
:class:`fastmerge.session.Session` (or :meth:`AgentsSession.messages`) reads from such a row
is made here when it is first read. A user, system or developer message is a user or system
message dict (its text; images and files as given); a ``function_call_output`` /
``custom_tool_call_output`` a :class:`fastmerge.ToolMessage`; any other item the
:class:`fastmerge.AssistantMessage` the ``"openai-responses"`` adapter makes of it. Each
message keeps its item in its ``metadata`` (``{ITEM_KEY: item}``). This module only converts:
the adapter makes the messages.

An item that is no Responses input item fastmerge reads (an ``EncryptedSession``'s envelope,
a message whose content is neither str nor list, a tool output without a str ``call_id``, an
item the adapter refuses) is kept verbatim all the same, as the SDK's ``SQLiteSession`` keeps
it: its row is an ``assistant_item`` and its message an assistant message whose one part is
an :class:`fastmerge.UnknownPart` of provider :data:`OPAQUE` holding the item, which no
rendering replays (a message with nothing replayable is left out).
"""

from __future__ import annotations

from typing import Any

from .. import errors

#: The ``metadata`` key of a log message that holds the Agents SDK's item verbatim.
ITEM_KEY = "openai_agents_item"

#: The row kinds of verbatim items, and the role of the message each one reads as.
ITEM_KINDS = {
    "user_item": "user",
    "system_item": "system",
    "assistant_item": "assistant",
    "tool_item": "tool",
}
_KIND_OF = {role: kind for kind, role in ITEM_KINDS.items()}

#: The provider of the part that holds an item fastmerge does not read (kept verbatim; no
#: renderer replays it).
OPAQUE = "openai-agents"

_TOOL_OUTPUTS = ("function_call_output", "custom_tool_call_output")
_TEXT_TYPES = ("input_text", "output_text", "text")


def portable(content: Any) -> Any:
    """A user or system item's content as the log's messages hold it for every provider: a
    str as it is; a list of text entries only, their texts joined by newlines; any other
    list (images, files, audio) as given, which only OpenAI Responses replays."""
    if isinstance(content, list) and all(
        isinstance(c, dict) and c.get("type") in _TEXT_TYPES and isinstance(c.get("text"), str)
        for c in content
    ):
        return "\n".join(c["text"] for c in content)
    return content


def row_kind(position: int, item: Any) -> str:
    """The kind of the row that stores ``item``: ``"user"`` / ``"system"`` for a plain
    ``{"role", "content": str}`` message (the message itself), else one of
    :data:`ITEM_KINDS`: a user, system or developer message whose content is a str or list
    a ``user_item`` / ``system_item``, a tool output with a str ``call_id`` and a str or list
    ``output`` a ``tool_item``, any other dict an ``assistant_item`` (an item fastmerge does
    not read among them, kept verbatim). What is not a dict raises
    :class:`fastmerge.errors.SessionTypeError`."""
    if type(item) is not dict:
        detail = f"{type(item).__name__} is not a Responses input item (a dict)"
        raise errors.SessionTypeError(position, detail)
    kind = item.get("type")
    if kind is None or kind == "message":
        role = item.get("role")
        if role == "user" or role == "system" or role == "developer":
            content = item.get("content")
            if type(content) is str:
                if kind is None and role != "developer" and len(item) == 2:
                    return "user" if role == "user" else "system"  # the message itself
            elif not isinstance(content, list):
                return "assistant_item"  # no message fastmerge reads: kept verbatim
            return "user_item" if role == "user" else "system_item"
        return "assistant_item"
    if kind in _TOOL_OUTPUTS and _is_tool_output(item):
        return "tool_item"
    return "assistant_item"


def _is_tool_output(item: dict[str, Any]) -> bool:
    return type(item.get("call_id")) is str and isinstance(item.get("output"), (str, list))


def message(item: dict[str, Any], classes: Any, kind: str) -> Any:
    """The log message of ``item`` (of :func:`row_kind` ``kind``, one of :data:`ITEM_KINDS`):
    what ``from_dict`` reads from :func:`message_data`'s dict (equal, field for field), made
    without the round trip through a dict for an assistant or tool message; a user or
    system message is that dict. Raises as :func:`message_data`."""
    role = ITEM_KINDS[kind]
    if role == "tool":
        return classes.ToolMessage(
            tool_call_id=item["call_id"], content=item["output"], metadata={ITEM_KEY: item}
        )
    if role != "assistant":
        return message_data(item, classes, kind)
    made = _assistant(item, classes)
    data = dict(made._view())  # the adapter's message, its metadata the item (a new message)
    data["metadata"] = {ITEM_KEY: item}
    return classes.AssistantMessage._from_data(data)


def message_data(item: dict[str, Any], classes: Any, kind: str | None = None) -> dict[str, Any]:
    """The ``to_dict()`` of the log message of ``item`` (a stored item, checked by
    :func:`row_kind` when it was appended), with the item in its metadata: a user or system
    message dict, or what ``classes.AssistantMessage`` / ``classes.ToolMessage.from_dict``
    reads. Raises :class:`fastmerge.errors.SessionTypeError` (position 0) for an item that
    is no Responses input item, or that the Responses adapter refuses. ``kind``: its
    :func:`row_kind`, when known."""
    if kind is None:
        kind = row_kind(0, item)
    if kind in ("user", "system"):
        return dict(item)
    role = ITEM_KINDS[kind]
    if role in ("user", "system"):
        return {"metadata": {ITEM_KEY: item}, "role": role, "content": portable(item["content"])}
    if role == "tool":
        message = classes.ToolMessage(tool_call_id=item["call_id"], content=item["output"])
        return _row(item, message)
    return _row(item, _assistant(item, classes))


def _assistant(item: dict[str, Any], classes: Any) -> Any:
    """The assistant message of ``item`` (without its metadata): the adapter's, or for an
    item fastmerge does not read, the item verbatim in a part no rendering replays."""
    item_type, item_role = item.get("type"), item.get("role")
    if item_type in (None, "message") and item_role == "assistant":
        if isinstance(item.get("content"), str):
            return classes.AssistantMessage(content=item["content"])
        item_for_adapter = {**item, "type": "message"} if item_type is None else item
    elif item_type is None:
        if not isinstance(item.get("id"), str):
            return _opaque(item, classes)  # neither an item nor a reference: an envelope
        item_for_adapter = {**item, "type": "item_reference"}  # the type it may leave out
    elif type(item_type) is not str or item_type == "message" or item_type in _TOOL_OUTPUTS:
        return _opaque(item, classes)  # a message or tool output row_kind could not read
    else:
        item_for_adapter = item
    # a finished item as the Responses adapter reads it (the terminal response's output)
    event = {"type": "response.completed", "response": {"output": [item_for_adapter]}}
    try:
        return _aggregate(classes)([event], "openai-responses")
    except (ValueError, TypeError):
        return _opaque(item, classes)  # what the adapter refuses is kept verbatim


def _opaque(item: dict[str, Any], classes: Any) -> Any:
    """The message of an item fastmerge does not read: the item in an unknown part of
    provider :data:`OPAQUE`."""
    part = {"part": "unknown", "provider": OPAQUE, "kind": "item", "raw": item}
    return classes.AssistantMessage.from_dict({"role": "assistant", "parts": [part]})


def _aggregate(classes: Any) -> Any:
    """The ``aggregate`` of the backend whose message classes ``classes`` holds (the
    ``fastmerge`` package, or a ``fastmerge.messages`` module of either backend)."""
    aggregate = getattr(classes, "aggregate", None)
    if aggregate is not None:
        return aggregate
    from .. import _backend

    name = _backend.backend_of(classes.__name__)[0]
    return _backend.aggregate_module(name).aggregate


def _row(item: dict[str, Any], message: Any) -> dict[str, Any]:
    """The ``to_dict()`` of ``message`` keeping ``item`` in its metadata, first, without the
    fields ``from_dict`` reads as absent anyway (null, empty lists, false; a part's null
    fields): what rows of the earlier format hold."""
    row: dict[str, Any] = {"metadata": {ITEM_KEY: item}}
    for key, value in message.to_dict().items():
        if key == "parts":
            row[key] = [{k: v for k, v in part.items() if v is not None} for part in value]
        elif key != "metadata" and value is not None and value is not False and value != []:
            row[key] = value
    return row
