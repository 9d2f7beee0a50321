"""Constructor arguments and ``to_dict()`` data -> the *leaf* of a message chunk (rules §2):
the plain fields the engines fold, with parts as dicts keyed by ``"part"``, every type both
engines rely on checked here (a ``TypeError``, never an engine error).

The assistant message's fields come from :data:`fastmerge._message_fields.FIELDS`; this module
holds how each kind of field is copied in, and how the flat inputs (``content``,
``reasoning_content``, ``tool_calls``) become parts. It holds no backend state, so every copy
of :mod:`fastmerge.messages` (one per backend) shares it.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, Mapping

from ._frozen import SCALARS, json_copy
from ._message_fields import CHECKS, DICT_FIELDS, HEAD, TAIL, Field
from .parts import (
    PART_CLASSES,
    ToolCall,
    ToolCallPart,
    UsageMetadata,
    part_from_dict,
)

__all__ = [
    "assistant_leaf",
    "base_leaf",
    "described_leaf",
    "tool_leaf",
]


def _content_parts(content: Any) -> list[dict[str, Any]]:
    """Parts for ``content``: a str is one text part; a list's items are text parts (a str, or a
    ``{"type": "text"}`` item whose other keys become ``attributes``) or unknown parts."""
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [{"part": "text", "text": content}]
    if not isinstance(content, list):
        raise TypeError(f"content must be a str or a list, not {type(content).__name__}")
    parts: list[dict[str, Any]] = []
    for item in content:
        if isinstance(item, str):
            parts.append({"part": "text", "text": item})
        elif isinstance(item, Mapping) and item.get("type") == "text":
            text = item.get("text")
            attributes = {k: v for k, v in item.items() if k != "text"}
            parts.append(
                {
                    "part": "text",
                    "text": text if isinstance(text, str) else "",
                    "attributes": attributes,
                }
            )
        else:
            kind = item.get("type") if isinstance(item, Mapping) else None
            parts.append({"part": "unknown", "provider": None, "kind": kind, "raw": item})
    return parts


def _tool_call_part(call: Any) -> dict[str, Any]:
    """One tool-call fragment as a part: a ToolCall, a ToolCallPart, an OpenAI-format dict
    (nested ``function``, or ``custom`` [E38]), openJiuwen's flat dict or its pydantic
    ``ToolCall``. The index given is both the resolver's ``provider_index`` and the
    ``call_index`` the flat view shows (openJiuwen reads back the index a call was given)."""
    if isinstance(call, ToolCallPart):
        return call.to_dict()
    if isinstance(call, ToolCall):
        return {
            "part": "tool_call",
            "id": call.id,
            "type": call.type,
            "name": call.name,
            "arguments": call.arguments,
            "provider_index": call.index,
            "response_item_id": call.response_item_id,
            "call_index": call.index,
        }
    dump = getattr(call, "model_dump", None)
    if not isinstance(call, Mapping) and callable(dump):
        # openJiuwen's pydantic ToolCall (or any model of its flat or OpenAI shape)
        call = dump()
    if not isinstance(call, Mapping):
        raise TypeError(
            "a tool call must be a ToolCall, a ToolCallPart, a dict or a pydantic model, "
            f"not {type(call).__name__}"
        )
    kind = call.get("type")
    # the call's body: OpenAI's nested "function", or the object named by its type ("custom"
    # [E38]); a continuation fragment has no type, so "custom" is looked up by name too
    body_key = "function"
    body = call.get(body_key)
    if not isinstance(body, Mapping):
        body_key = kind if isinstance(kind, str) and kind != "function" else "custom"
        body = call.get(body_key)
    known = {"id", "type", "index", "response_item_id", "function", "name", "arguments"}
    part: dict[str, Any] = {"part": "tool_call", "id": call.get("id"), "type": kind}
    if isinstance(body, Mapping):
        known.add(body_key)
        if kind is None and body_key == "custom":
            part["type"] = "custom"  # a custom body without a type is a custom call (E83)
        part["name"] = body.get("name")
        part["arguments"] = body.get("arguments", body.get("input"))
        inner = {k: v for k, v in body.items() if k not in ("name", "arguments", "input")}
        if inner:
            part["extra"] = {body_key: inner}
    else:
        part["name"] = call.get("name")
        part["arguments"] = call.get("arguments")
    part["provider_index"] = call.get("index")
    part["response_item_id"] = call.get("response_item_id")
    part["call_index"] = call.get("index")
    extra = {k: v for k, v in call.items() if k not in known}
    if extra:
        part["extra"] = {**part.get("extra", {}), **extra}
    return part


# the keys of each kind of part's to_dict() and of a payload's, in order (dict key views:
# ordered, and compared as sets)
_PART_KEYS = {
    kind: dict.fromkeys(["part", *(f.name for f in fields(cls))]).keys()
    for kind, cls in PART_CLASSES.items()
}
_PAYLOAD_KEYS = dict.fromkeys(["provider", "kind", "data"]).keys()


def _part_dict(part: Any) -> dict[str, Any]:
    if type(part) is dict:
        # a dict with exactly a part's to_dict() keys (a stored message): the dict its part
        # object would give, without building that object (from_dict's hot path, sessions)
        kind = part.get("part")
        keys = _PART_KEYS.get(kind) if type(kind) is str else None
        payload = part.get("payload")
        if (
            keys is not None
            and part.keys() == keys
            and (payload is None or (type(payload) is dict and payload.keys() == _PAYLOAD_KEYS))
        ):
            # json_copy as it goes (out is level 1, its values level 2, a payload's 3)
            out = {k: v if type(v := part[k]) in SCALARS else json_copy(v, 1) for k in keys}
            if payload is not None:
                out["payload"] = {
                    k: v if type(v := payload[k]) in SCALARS else json_copy(v, 2)
                    for k in _PAYLOAD_KEYS
                }
            _check_part(out)
            return out
    if isinstance(part, Mapping):
        part = part_from_dict(part)
    to_dict = getattr(part, "to_dict", None)
    if to_dict is None or not hasattr(part, "PART"):
        raise TypeError(f"parts must be part objects or dicts, not {type(part).__name__}")
    d: dict[str, Any] = json_copy(to_dict())
    _check_part(d)
    return d


_STR = (str, type(None))
# the types a part's fields may hold (both engines rely on them)
_PART_TYPES: dict[str, dict[str, tuple[type, ...]]] = {
    "text": {"text": (str,), "citations": (list, type(None)), "attributes": (dict, type(None))},
    "reasoning": {"text": (str,), "summary": _STR, "redacted": (bool,)},
    "tool_call": {
        "id": _STR,
        "type": _STR,
        "name": _STR,
        "arguments": (str, dict, type(None)),
        "response_item_id": _STR,
        "extra": (dict, type(None)),
    },
}


def _check_part(d: dict[str, Any]) -> None:
    kind = d["part"]
    for key, types in _PART_TYPES.get(kind, {}).items():
        value = d.get(key)
        if not isinstance(value, types):
            names = " or ".join("None" if t is type(None) else t.__name__ for t in types)
            raise TypeError(
                f"{kind} part field {key!r} must be {names}, not {type(value).__name__}"
            )
    for key in ("index", "provider_index", "call_index"):
        value = d.get(key)
        if value is not None and (type(value) is not int):
            raise TypeError(
                f"{kind} part field {key!r} must be an int or None, not {type(value).__name__}"
            )
    payload = d.get("payload")
    if payload is not None and not isinstance(payload, dict):
        raise TypeError("payload must be an OpaquePayload")


def _usage_dict(usage: Any) -> dict[str, Any] | None:
    if usage is None:
        return None
    if isinstance(usage, UsageMetadata):
        return usage.to_dict()
    if isinstance(usage, Mapping):
        return UsageMetadata(**usage).to_dict()
    dump = getattr(usage, "model_dump", None)  # openJiuwen's pydantic UsageMetadata
    if callable(dump):
        fields_set = getattr(usage, "model_fields_set", None)
        values = dump()
        if fields_set is not None:
            values = {k: v for k, v in values.items() if k in fields_set}
        return UsageMetadata(**values).to_dict()
    raise TypeError(f"usage_metadata must be a UsageMetadata or a dict, not {type(usage).__name__}")


def _put(leaf: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        leaf[key] = value


def _copy_in(leaf: dict[str, Any], field: Field, value: Any) -> None:
    """``value`` into ``leaf`` as ``field`` is copied (see :data:`~fastmerge._message_fields.Copy`);
    None is never put."""
    if value is None:
        return
    key, copy = field.key, field.copy
    assert key is not None
    if copy == "value":
        leaf[key] = value
    elif copy == "tree":
        leaf[key] = json_copy(value)
    elif copy == "dict":
        if value:
            leaf[key] = json_copy(dict(value))
    elif copy == "dicts":
        if value:
            leaf[key] = [dict(a) for a in value]
    elif copy == "usage":
        leaf[key] = _usage_dict(value)


def assistant_leaf(args: Mapping[str, Any]) -> dict[str, Any]:
    """The leaf of an assistant chunk from its constructor's arguments (by name): the given
    fields, and parts built from the flat ones in the order reasoning, text, tool calls, then
    ``parts`` (rules §2)."""
    leaf: dict[str, Any] = {}
    for field in HEAD:
        _copy_in(leaf, field, args[field.name])
    _build_parts(leaf, args)
    for field in TAIL:
        _copy_in(leaf, field, args[field.name])
    _check_leaf(leaf)
    return leaf


def _build_parts(leaf: dict[str, Any], args: Mapping[str, Any]) -> None:
    """``content_list``, ``content`` and ``parts``: the parts of the flat inputs and of
    ``parts``, in the order of rules §2."""
    content, reasoning_content = args["content"], args["reasoning_content"]
    tool_calls, parts = args["tool_calls"], args["parts"]
    built: list[dict[str, Any]] = []
    if reasoning_content is not None:
        if not isinstance(reasoning_content, str):
            raise TypeError("reasoning_content must be a str")
        if reasoning_content:
            built.append({"part": "reasoning", "text": reasoning_content})
    built.extend(_content_parts(content))
    if isinstance(content, list):
        leaf["content_list"] = True
    if content is not None and content != "":
        leaf["content"] = json_copy(content)
    if tool_calls:
        for call in tool_calls:
            fragment = _tool_call_part(call)
            _check_part(fragment)
            built.append(fragment)
    if parts:
        built.extend(_part_dict(part) for part in parts)
    if built:
        leaf["parts"] = built


def _base(role: Any, content: Any, name: Any) -> dict[str, Any]:
    if not isinstance(content, (str, list)):
        raise TypeError(f"content must be a str or a list, not {type(content).__name__}")
    leaf: dict[str, Any] = {"role": role, "content": json_copy(content)}
    _put(leaf, "name", name)
    _check_leaf(leaf)
    return leaf


def base_leaf(role: Any, content: Any, name: Any, metadata: Any) -> dict[str, Any]:
    """The leaf of a base chunk (openJiuwen's ``BaseMessageChunk``)."""
    leaf = _base(role, content, name)
    if metadata:
        leaf["metadata"] = json_copy(dict(metadata))
    return leaf


def tool_leaf(
    tool_call_id: Any, content: Any, role: Any, name: Any, metadata: Any
) -> dict[str, Any]:
    """The leaf of a tool chunk: a base leaf and its ``tool_call_id``."""
    leaf = _base(role, content, name)
    if not isinstance(tool_call_id, _STR):
        raise TypeError(f"tool_call_id must be a str or None, not {type(tool_call_id).__name__}")
    _put(leaf, "tool_call_id", tool_call_id)
    if metadata:
        leaf["metadata"] = json_copy(dict(metadata))
    return leaf


# the type each kind of check of CHECKS wants (besides None)
_CHECKED: dict[str, type] = {"str": str, "list": list, "bool": bool}


def _check_leaf(leaf: dict[str, Any]) -> None:
    """The field types both engines rely on (a TypeError here, never an engine error)."""
    for key, check in CHECKS:
        value = leaf.get(key)
        if value is None:
            continue
        if check == "int":  # exactly an int: a bool is not an index
            if type(value) is not int:
                raise TypeError(f"{key} must be an int or None, not {type(value).__name__}")
        elif not isinstance(value, _CHECKED[check]):
            name = _CHECKED[check].__name__
            raise TypeError(f"{key} must be {name} or None, not {type(value).__name__}")


# from_dict: every to_dict() key, and the leaf key of a field renamed there (``usage``, read as
# a plain value) -> (leaf key, how it is copied)
_FROM_DICT: dict[str, tuple[str, str]] = {
    **{f.name: (f.key, f.copy) for f in DICT_FIELDS if f.key is not None},
    **{f.key: (f.key, "value") for f in DICT_FIELDS if f.key is not None and f.key != f.name},
}


def described_leaf(d: Mapping[str, Any]) -> dict[str, Any]:
    """The leaf of the chunk a ``to_dict()`` describes, marked ``described``: folded first,
    the engines rebuild its parts as they are instead of merging them again (E91)."""
    if not isinstance(d, Mapping):
        raise TypeError(f"from_dict needs a dict, not {type(d).__name__}")
    leaf: dict[str, Any] = {}
    for key, value in d.items():
        found = _FROM_DICT.get(key)
        if found is None:
            raise ValueError(f"unknown field {key!r} for an assistant message")
        leaf_key, copy = found
        if copy == "parts":
            leaf[leaf_key] = [_described(_part_dict(p)) for p in value or ()]
        elif copy == "usage":
            _put(leaf, leaf_key, _stored_usage(value))
        elif copy == "dict":
            if value:
                leaf[leaf_key] = json_copy(dict(value))
        elif copy == "dicts":
            if value:
                leaf[leaf_key] = [dict(a) for a in value]
        elif value is not None:
            leaf[leaf_key] = value if type(value) in SCALARS else json_copy(value)
    _check_leaf(leaf)
    leaf["described"] = True
    return leaf


def _stored_usage(usage: Any) -> dict[str, Any] | None:
    """``usage_metadata`` as a ``to_dict()`` gives it: every key under the name it came with
    (``cache_read_input_tokens`` stays so; :class:`UsageMetadata`'s aliases are a view, not
    a rename), so ``from_dict`` neither renames nor merges two spellings (E91). A
    :class:`UsageMetadata` or a pydantic model is read as the constructor reads it."""
    if isinstance(usage, Mapping):
        stored: dict[str, Any] = json_copy(dict(usage))
        return stored
    return _usage_dict(usage)


def _described(part: dict[str, Any]) -> dict[str, Any]:
    """A part a ``to_dict()`` holds is kept even when its text is empty (an empty text block
    a stream sent, E79): ``from_dict(m.to_dict()) == m``."""
    if part["part"] in ("text", "reasoning"):
        part["opened"] = True
    return part
