"""The assistant message's fields are declared once (``fastmerge._message_fields``): the
constructor, ``to_dict()`` / ``from_dict()``, the views and each backend's folded data are held
to that table, so a field added in one place only fails here."""

from __future__ import annotations

import inspect

import pytest
from _support.corpus import KINDS, streams
from _support.message_fields import EVERY_FIELD, field_problems

import fastmerge
from fastmerge import _message_fields as table
from fastmerge._pure.chunks.state import _State

_DICT_NAMES = [f.name for f in table.DICT_FIELDS]
_DICT_KEYS = [f.key or "" for f in table.DICT_FIELDS]


def test_the_constructor_takes_the_table_arguments_in_order() -> None:
    parameters = list(inspect.signature(fastmerge.AssistantMessageChunk.__init__).parameters)
    assert parameters[0] == "self"
    assert tuple(parameters[1:]) == table.ARGUMENTS
    signature = inspect.signature(fastmerge.AssistantMessageChunk.__init__).parameters
    for field in table.FIELDS:
        if field.argument:
            assert signature[field.name].kind is inspect.Parameter.KEYWORD_ONLY
            assert signature[field.name].default == field.default, field.name


def test_every_argument_has_a_sample_value_unlike_its_default() -> None:
    assert list(EVERY_FIELD) == list(table.ARGUMENTS)
    defaults = {f.name: f.default for f in table.FIELDS}
    assert all(value != defaults[name] for name, value in EVERY_FIELD.items())


def test_the_engine_folds_exactly_the_table_fields() -> None:
    """With every field set, the backend's folded data and ``to_dict()`` have the table's keys
    in its order, every value survives, and ``from_dict`` gives it back (both backends)."""
    assert (
        field_problems(fastmerge.AssistantMessageChunk, table.DATA_KEYS, _DICT_NAMES, _DICT_KEYS)
        == []
    )


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_aggregated_message_has_the_table_fields(kind: str) -> None:
    """The messages an aggregator builds (the engines' own data, not a constructor's) have the
    table's keys too: every recorded stream of the corpus."""
    seen = 0
    for path in streams(kind):
        for message in fastmerge.aggregate_choices(path.read_bytes(), KINDS[kind]):
            seen += 1
            assert tuple(message._view()) == ("family", *table.DATA_KEYS), path.name
            assert list(message.to_dict()) == _DICT_NAMES, path.name
    assert seen > 0


def test_the_table_order_of_the_data() -> None:
    assert table.DATA_KEYS == (
        "role",
        "name",
        "metadata",
        "parts",
        "content_list",
        "usage",
        "finish_reason",
        "finish_reason_normalized",
        "parser_content",
        "prompt_token_ids",
        "completion_token_ids",
        "logprobs",
        "response_id",
        "response_model",
        "provider_metadata",
        "provider_content",
        "refusal",
        "status",
        "anomalies",
        "choice_index",
    )
    assert _DICT_NAMES[5] == "usage_metadata" and _DICT_KEYS[5] == "usage"
    assert "finish_reason_normalized" not in _DICT_NAMES


def test_a_table_field_the_engine_lacks_is_caught() -> None:
    problems = field_problems(
        fastmerge.AssistantMessageChunk,
        (*table.DATA_KEYS, "verdict"),
        [*_DICT_NAMES, "verdict"],
        [*_DICT_KEYS, "verdict"],
    )
    assert "the engine's data lacks the table's 'verdict'" in problems
    assert any(p.startswith("to_dict() gives") for p in problems)


def test_an_engine_field_the_table_lacks_is_caught() -> None:
    keys = tuple(k for k in table.DATA_KEYS if k != "status")
    names = [n for n in _DICT_NAMES if n != "status"]
    problems = field_problems(
        fastmerge.AssistantMessageChunk, keys, names, [k for k in _DICT_KEYS if k != "status"]
    )
    assert "the engine's data has 'status', which the table lacks" in problems


def test_a_field_the_engine_drops_is_caught() -> None:
    """A row whose value the fold loses (here: a chunk class that forgets ``status``) reads as
    in an empty message."""

    class Forgetful(fastmerge.AssistantMessageChunk):
        __slots__ = ()

        def __init__(self, **fields: object) -> None:
            fields.pop("status", None)
            super().__init__(**fields)  # type: ignore[arg-type]

    problems = field_problems(Forgetful, table.DATA_KEYS, _DICT_NAMES, _DICT_KEYS)
    assert problems == ["'status' reads as in an empty message: the engine dropped it"]


# content_list has no view of its own: it is the shape the ``content`` view gives
@pytest.mark.parametrize(
    "name", [n for n in _DICT_NAMES if n != "content_list"] + ["finish_reason_normalized"]
)
def test_every_stored_field_has_a_view(name: str) -> None:
    chunk = fastmerge.AssistantMessageChunk(**EVERY_FIELD)
    message = chunk.to_message()
    assert isinstance(inspect.getattr_static(type(chunk), name), property)
    assert isinstance(inspect.getattr_static(type(message), name), property)
    getattr(chunk, name)
    getattr(message, name)


def test_the_twin_state_holds_the_table_fields() -> None:
    assert set(table.DATA_KEYS) <= set(_State.__slots__)
    assert set(_State.__annotations__) == set(table.DATA_KEYS)


def test_a_wrong_type_names_the_first_checked_field() -> None:
    """The checks run in :data:`CHECKS` order: the str fields, the lists, then the int."""
    assert [key for key, _ in table.CHECKS][:3] == ["role", "name", "finish_reason"]
    with pytest.raises(TypeError, match="^response_id must be str or None, not int$"):
        fastmerge.AssistantMessageChunk(response_id=1, prompt_token_ids="x", choice_index="1")
    with pytest.raises(TypeError, match="^prompt_token_ids must be list or None, not str$"):
        fastmerge.AssistantMessageChunk(prompt_token_ids="x", choice_index="1")
    with pytest.raises(TypeError, match="^choice_index must be an int or None, not bool$"):
        fastmerge.AssistantMessageChunk(choice_index=True)
    with pytest.raises(TypeError, match="^content_list must be bool or None, not int$"):
        fastmerge.AssistantMessageChunk.from_dict({"content_list": 1})


def test_from_dict_takes_the_table_names_and_the_folded_usage_key() -> None:
    chunk = fastmerge.AssistantMessageChunk.from_dict({"usage": {"input_tokens": 4}})
    assert chunk.to_dict()["usage_metadata"] == {"input_tokens": 4}
    for name in ("content", "finish_reason_normalized", "verdict"):
        with pytest.raises(ValueError, match=f"^unknown field '{name}' for an assistant message$"):
            fastmerge.AssistantMessageChunk.from_dict({name: "x"})
