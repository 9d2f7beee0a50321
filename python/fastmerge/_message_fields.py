"""The assistant message's fields, declared once: :data:`FIELDS`.

Every list of the message's fields is taken from this table: the constructor's keywords
(:class:`fastmerge.messages.AssistantMessageChunk`, whose typed signature a test holds to
:data:`ARGUMENTS`), the leaf it builds and the types it checks (:mod:`fastmerge._message_leaf`), the
keys of ``to_dict()`` and those ``from_dict()`` accepts, the keys of the folded data both
engines give (:data:`DATA_KEYS`: a test builds a message with every field set on each backend
and compares), and the twin's chunk state (``fastmerge._pure.chunks.state``).

Adding a field to the message touches:

1. this table (a row: its name, leaf key, copy, check and default, where it sits);
2. the engine's model, in both languages: how a leaf's field folds and how it reads back
   (``src/engine/chunks/leaf.rs``, ``state.rs``, ``fold.rs``, ``read.rs``, and the twin's
   ``fastmerge/_pure/chunks/fold.py``, ``read.py``);
3. its tests (the fold rule's; the schema test then checks both languages against the table);
4. its read-only property on the message (``fastmerge.messages``: a typed, documented view).

The module holds data only (no backend): ``fastmerge.messages`` is loaded once per backend and
every copy reads the same table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "ARGUMENTS",
    "BUILT",
    "CHECKS",
    "DATA_KEYS",
    "DICT_FIELDS",
    "FIELDS",
    "Field",
    "HEAD",
    "TAIL",
]

#: How the constructor copies a value into the leaf (None is never put):
#: ``value`` as given; ``tree`` a private copy of its dicts and lists; ``dict`` a copy of
#: ``dict(value)``, only when truthy; ``dicts`` ``[dict(a) for a in value]``, only when truthy;
#: ``usage`` read as a :class:`~fastmerge.parts.UsageMetadata`; ``parts`` not copied: built
#: into the message's parts (rules §2). ``from_dict`` reads ``parts`` as stored parts,
#: ``usage`` under the keys it has, and copies the containers of ``value`` fields too.
Copy = Literal["value", "tree", "dict", "dicts", "usage", "parts"]

#: The type a field must hold when not None (a ``TypeError`` otherwise, never an engine
#: error): ``str``, ``list``, ``bool``, or ``int`` (exactly an int: not a bool).
Check = Literal["str", "list", "bool", "int"]


@dataclass(frozen=True)
class Field:
    """One field of the assistant message."""

    #: the constructor's keyword and the key of ``to_dict()``
    name: str
    #: the key of the leaf and of the folded data (``usage_metadata`` is folded as ``usage``);
    #: None for a flat input that only builds parts (``content``, ``tool_calls``, ...)
    key: str | None
    #: how the constructor copies it into the leaf
    copy: Copy = "value"
    #: the type it must hold when not None; None: any value
    check: Check | None = None
    #: a keyword of the constructor (False: a field the engines set, or the constructor builds)
    argument: bool = True
    #: a key of ``to_dict()`` (and so of ``from_dict()``)
    in_dict: bool = True
    #: the constructor's default
    default: Any = None


#: The fields in the constructor's order. The rows that are not arguments sit where the folded
#: data has them (``finish_reason_normalized`` after ``finish_reason``); the built ones
#: (:data:`BUILT`) go after ``metadata`` wherever they are listed.
FIELDS: tuple[Field, ...] = (
    Field("role", "role", check="str", default="assistant"),
    Field("content", None, "parts", in_dict=False, default=""),
    Field("name", "name", check="str"),
    Field("metadata", "metadata", "dict"),
    Field("tool_calls", None, "parts", in_dict=False),
    Field("usage_metadata", "usage", "usage"),
    Field("finish_reason", "finish_reason", check="str"),
    # what the engines derive from finish_reason (spec §3): folded data only
    Field("finish_reason_normalized", "finish_reason_normalized", argument=False, in_dict=False),
    Field("parser_content", "parser_content"),
    Field("reasoning_content", None, "parts", in_dict=False),
    Field("prompt_token_ids", "prompt_token_ids", "tree", check="list"),
    Field("completion_token_ids", "completion_token_ids", "tree", check="list"),
    Field("logprobs", "logprobs", "tree"),
    Field("response_id", "response_id", check="str"),
    Field("response_model", "response_model", check="str"),
    Field("provider_metadata", "provider_metadata", "dict"),
    Field("provider_content", "provider_content"),
    Field("parts", "parts", "parts"),
    Field("refusal", "refusal", check="str"),
    Field("status", "status", check="str"),
    Field("anomalies", "anomalies", "dicts"),
    Field("choice_index", "choice_index", check="int"),
    # whether some chunk gave its content as a list (the ``content`` view is then a list)
    Field("content_list", "content_list", check="bool", argument=False),
)

#: The constructor's keywords, in order.
ARGUMENTS: tuple[str, ...] = tuple(f.name for f in FIELDS if f.argument)

#: The keys the constructor builds from its flat inputs (``content``, ``reasoning_content``,
#: ``tool_calls``) and ``parts``: in the leaf, the folded data and ``to_dict()`` they follow
#: ``metadata``.
BUILT: tuple[str, ...] = ("parts", "content_list")
_BUILT_AFTER = "metadata"

_KEPT = tuple(f for f in FIELDS if f.key is not None and f.key not in BUILT)
_SPLIT = [f.key for f in _KEPT].index(_BUILT_AFTER) + 1
_BY_KEY = {f.key: f for f in FIELDS if f.key is not None}

#: The arguments the constructor copies into the leaf before the built keys, and after them.
HEAD: tuple[Field, ...] = tuple(f for f in _KEPT[:_SPLIT] if f.argument)
TAIL: tuple[Field, ...] = tuple(f for f in _KEPT[_SPLIT:] if f.argument)

_STORED = (*_KEPT[:_SPLIT], *(_BY_KEY[key] for key in BUILT), *_KEPT[_SPLIT:])

#: The keys of an assistant message's folded data (``_data()``), after ``family``, in order.
DATA_KEYS: tuple[str, ...] = tuple(f.key for f in _STORED if f.key is not None)

#: The fields of ``to_dict()``, in order.
DICT_FIELDS: tuple[Field, ...] = tuple(f for f in _STORED if f.in_dict)

_CHECK_ORDER: tuple[Check, ...] = ("str", "list", "bool", "int")

#: ``(key, check)`` of the checked fields, in the order they are checked: by kind of check,
#: then in table order (so the first of several wrong fields is always the same one).
CHECKS: tuple[tuple[str, Check], ...] = tuple(
    (f.key, f.check)
    for kind in _CHECK_ORDER
    for f in FIELDS
    if f.check == kind and f.key is not None
)
