"""The usage total (rules §5) is the backend's, read by the renderers and the session log,
which state no rule of their own: a reported total, unless it is missing or zero where counts
were given (then input + output)."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

import fastmerge

CASES: list[tuple[dict[str, Any], Any]] = [
    ({}, None),
    ({"input_tokens": 3, "output_tokens": 4}, 7),
    ({"input_tokens": 3, "output_tokens": 4, "total_tokens": 0}, 7),
    ({"input_tokens": 3, "output_tokens": 4, "total_tokens": 9}, 9),
    ({"output_tokens": 2, "total_tokens": None}, 2),
    ({"total_tokens": 0}, 0),
    ({"input_tokens": True, "output_tokens": 2}, 2),  # a bool is no count
    ({"input_tokens": 2**70, "output_tokens": 1}, 2**70 + 1),
    ({"input_tokens": 1.5, "output_tokens": 1}, 2.5),
]


@pytest.mark.parametrize(("usage", "total"), CASES)
def test_the_backends_give_the_same_total(
    both: tuple[ModuleType, ModuleType], usage: dict[str, Any], total: Any
) -> None:
    rust, python = both
    assert rust.usage_total(dict(usage)) == python.usage_total(dict(usage)) == total


def test_a_usage_that_is_no_dict_is_a_type_error(both: tuple[ModuleType, ModuleType]) -> None:
    for module in both:
        with pytest.raises(TypeError, match="^usage must be a dict, not list$"):
            module.usage_total([1, 2])


def test_the_openai_chat_rendering_takes_the_rules_total(backend_name: str) -> None:
    """A message whose usage reports a total of 0 beside its counts (as a provider that sends a
    per-chunk zero does) renders the rule's total, not 0."""
    message = fastmerge.AssistantMessage.from_dict(
        {
            "role": "assistant",
            "parts": [{"part": "text", "text": "hi"}],
            "usage_metadata": {"input_tokens": 3, "output_tokens": 4, "total_tokens": 0},
        }
    )
    assert message.usage_total() == 7
    usage = message.to_provider("openai-chat")["usage"]
    assert (usage["prompt_tokens"], usage["completion_tokens"], usage["total_tokens"]) == (3, 4, 7)
