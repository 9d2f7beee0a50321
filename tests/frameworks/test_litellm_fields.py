"""``fastmerge.litellm.stream_chunk_builder`` on LiteLLM's own delta lists and on a tool call
without a name, judged with chunks built by LiteLLM's own types (``ModelResponseStream``,
``Delta``) and their dicts, against ``litellm.stream_chunk_builder``. Both backends.

- ``delta.images`` (Gemini image models through LiteLLM, OpenRouter) and
  ``delta.reasoning_items`` (LiteLLM's Responses bridge): every chunk's entries, in order, as
  LiteLLM's builder joins them; the metadata merge once kept only the last chunk's list.
- A tool call whose fragments never carried a name (E107) is left out of the response, and
  the response is the same on every run (LiteLLM would fill in a random id for it).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from _support.litellm import (
    assert_same_as_litellm,
    build,
    call_delta,
    quiet,
    stream_chunk,
)

pytestmark = pytest.mark.filterwarnings(
    "ignore:Item .* is using the `ReadOnly` qualifier:UserWarning"
)


def _image(index: int, data: str) -> dict[str, Any]:
    return {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{data}"},
        "index": index,
    }


def _reasoning_item(item_id: str, summary: str) -> dict[str, Any]:
    return {
        "type": "reasoning",
        "id": item_id,
        "encrypted_content": f"gAAAA{item_id}",
        "summary": [{"type": "summary_text", "text": summary}],
    }


def _image_chunks() -> list[Any]:
    return [
        stream_chunk({"role": "assistant", "content": "Here are two cats."}),
        stream_chunk({"images": [_image(0, "iVBORw0KGgoAAAA")]}),
        stream_chunk({"content": " And a third:", "images": [_image(1, "R0lGODlhAQABAIAA")]}),
        stream_chunk({"images": [_image(2, "UklGRiQAAABXRUJQ")]}, finish="stop"),
    ]


def _reasoning_chunks() -> list[Any]:
    return [
        stream_chunk({"role": "assistant", "reasoning_items": [_reasoning_item("rs_1", "First")]}),
        stream_chunk({"content": "The answer"}),
        stream_chunk({"reasoning_items": [_reasoning_item("rs_2", "Then")]}),
        stream_chunk({"content": " is 4."}, finish="stop"),
    ]


def _as_dicts(chunks: list[Any]) -> list[dict[str, Any]]:
    return [quiet(chunk.model_dump) for chunk in chunks]


@pytest.mark.parametrize("form", ["object", "dict"])
def test_images_of_every_chunk_are_kept_as_litellm_keeps_them(form: str) -> None:
    chunks = _image_chunks() if form == "object" else _as_dicts(_image_chunks())
    result = assert_same_as_litellm(chunks)
    message = result.choices[0].message
    assert [image["index"] for image in message.images] == [0, 1, 2]
    assert message.images[1]["image_url"]["url"].endswith("R0lGODlhAQABAIAA")
    assert message.content == "Here are two cats. And a third:"


@pytest.mark.parametrize("form", ["object", "dict"])
def test_reasoning_items_of_every_chunk_are_kept_as_litellm_keeps_them(form: str) -> None:
    chunks = _reasoning_chunks() if form == "object" else _as_dicts(_reasoning_chunks())
    result = assert_same_as_litellm(chunks)
    message = result.choices[0].message
    assert [item["id"] for item in message.reasoning_items] == ["rs_1", "rs_2"]
    assert message.reasoning_items[0]["encrypted_content"] == "gAAAArs_1"
    assert message.content == "The answer is 4."


def test_images_beside_a_tool_call_and_reasoning_items() -> None:
    chunks = [
        stream_chunk({"role": "assistant", "reasoning_items": [_reasoning_item("rs_1", "Hm")]}),
        stream_chunk({"images": [_image(0, "AAAA")]}),
        stream_chunk({"tool_calls": [call_delta(0, '{"q":', "call_1", "draw")]}),
        stream_chunk({"images": [_image(1, "BBBB")], "tool_calls": [call_delta(0, '"cat"}')]}),
        stream_chunk({}, finish="tool_calls"),
    ]
    result = assert_same_as_litellm(chunks)
    message = result.choices[0].message
    assert len(message.images) == 2
    assert [item["id"] for item in message.reasoning_items] == ["rs_1"]
    assert message.tool_calls[0].function.arguments == '{"q":"cat"}'


# -- a tool call without a name (E107) ------------------------------------------------------------


def _nameless_chunks() -> list[Any]:
    return [
        stream_chunk({"role": "assistant", "content": "Let me check."}),
        stream_chunk({"tool_calls": [call_delta(0, '{"a":')]}),
        stream_chunk({"tool_calls": [call_delta(0, "1}")]}),
        stream_chunk({"tool_calls": [call_delta(1, '{"city":"Paris"}', "call_2", "get_weather")]}),
        stream_chunk({}, finish="tool_calls"),
    ]


@pytest.mark.parametrize("form", ["object", "dict"])
def test_a_nameless_call_is_left_out_and_every_run_is_the_same(form: str) -> None:
    """E107: the nameless call is in no response (never ``{"id": null, "name": null}``, which
    LiteLLM gives a random id), the named call beside it is, the anomaly says what was left,
    and two runs give equal responses, usage estimates included."""
    runs = []
    for _ in range(2):
        chunks = _nameless_chunks() if form == "object" else _as_dicts(_nameless_chunks())
        runs.append(build(copy.deepcopy(chunks)))
    dumps = [(quiet(r.model_dump), r._hidden_params) for r in runs]
    assert dumps[0] == dumps[1]
    message = runs[0].choices[0].message
    assert [(c.id, c.function.name) for c in message.tool_calls] == [("call_2", "get_weather")]
    assert message.tool_calls[0].function.arguments == '{"city":"Paris"}'
    codes = [a["code"] for a in runs[0]._hidden_params["fastmerge_anomalies"]]
    assert codes == ["delta_before_start"]


def test_a_nameless_call_alone_gives_a_text_response() -> None:
    """E107: with no named call beside it, the response has no ``tool_calls`` at all."""
    chunks = [*_nameless_chunks()[:3], stream_chunk({}, finish="stop")]
    runs = [build(copy.deepcopy(chunks)) for _ in range(2)]
    assert quiet(runs[0].model_dump) == quiet(runs[1].model_dump)
    message = runs[0].choices[0].message
    assert message.tool_calls is None
    assert message.content == "Let me check."
