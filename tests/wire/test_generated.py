"""The generated set: a stream per member of the SDKs' stream unions (``_generate``), in five
input forms (SDK objects, dicts with explicit nulls, dicts without them, SSE bytes, the bytes
fed 13 at a time), on both backends. Every form gives the same message on both backends, every
marker the stream carried survives, and the message renders back to what the SDK's own
accumulator builds (or to what the rule says)."""

from __future__ import annotations

import json
from typing import Any

import _generate
import pytest
from conftest import AGGREGATES

from fastmerge.render import to_provider

CASES = _generate.all_cases()

_RESPONSES = "the Responses rules (helper responses): "
_ANTHROPIC = "the Anthropic rules (helper anthropic-bedrock): "
_BEDROCK = "the Bedrock bytes and image rules (helper anthropic-bedrock): "

#: The only place a generated case is expected to fail: cases whose rules other adapters' work
#: brings (not on this branch). Empty it once they land.
AWAITING: dict[str, str] = {
    "responses-code_interpreter_call": _RESPONSES + "forms differ from sdk: nulls",
    "responses-code_interpreter_call-cut": _RESPONSES + "forms differ from sdk: nulls",
    "responses-compaction": _RESPONSES + "forms differ from sdk: nulls",
    "responses-compaction-cut": _RESPONSES + "forms differ from sdk: nulls",
    "responses-custom_tool_call": _RESPONSES + "forms differ from sdk: nulls",
    "responses-custom_tool_call-cut": _RESPONSES + "forms differ from sdk: nulls",
    "responses-file_search_call": _RESPONSES + "forms differ from sdk: nulls",
    "responses-file_search_call-cut": _RESPONSES + "forms differ from sdk: nulls",
    "responses-function_call": _RESPONSES + "forms differ from sdk: nulls",
    "responses-function_call-cut": _RESPONSES + "forms differ from sdk: nulls",
    "responses-image_generation_call": _RESPONSES + "forms differ from sdk: nulls",
    "responses-image_generation_call-cut": _RESPONSES + "forms differ from sdk: nulls",
    "responses-mcp_call": _RESPONSES + "forms differ from sdk: nulls",
    "responses-mcp_call-cut": _RESPONSES + "forms differ from sdk: nulls",
    "responses-mcp_list_tools": _RESPONSES + "forms differ from sdk: nulls",
    "responses-mcp_list_tools-cut": _RESPONSES + "forms differ from sdk: nulls",
    "responses-message": _RESPONSES + "forms differ from sdk: nulls",
    "responses-message-cut": _RESPONSES + "forms differ from sdk: nulls",
    "responses-reasoning": _RESPONSES + "forms differ from sdk: nulls",
    "responses-reasoning-cut": _RESPONSES + "forms differ from sdk: nulls",
    "responses-shell_call": _RESPONSES + "forms differ from sdk: nulls",
    "responses-shell_call-cut": _RESPONSES + "forms differ from sdk: nulls",
    "responses-shell_call_output": _RESPONSES + "forms differ from sdk: nulls",
    "responses-shell_call_output-cut": _RESPONSES + "forms differ from sdk: nulls",
    "responses-web_search_call": _RESPONSES + "forms differ from sdk: nulls",
    "responses-web_search_call-cut": _RESPONSES + "forms differ from sdk: nulls",
    "responses-status": _RESPONSES + "forms differ from sdk: nulls",
    "anthropic-compaction": _ANTHROPIC + "forms differ from sdk: nulls",
    "anthropic-compaction-cut": _ANTHROPIC + "forms differ from sdk: nulls",
    "anthropic-fallback": _ANTHROPIC + "forms differ from sdk",
    "anthropic-fallback-cut": _ANTHROPIC + "forms differ from sdk",
    "anthropic-server_tool_use": _ANTHROPIC + "forms differ from sdk: nulls",
    "anthropic-server_tool_use-cut": _ANTHROPIC + "forms differ from sdk: nulls",
    "anthropic-text": _ANTHROPIC + "forms differ from sdk",
    "anthropic-text-cut": _ANTHROPIC + "forms differ from sdk",
    "anthropic-text_editor_code_execution_tool_result": _ANTHROPIC + "forms differ from sdk: nulls",
    "anthropic-text_editor_code_execution_tool_result-cut": _ANTHROPIC
    + "forms differ from sdk: nulls",
    "anthropic-tool_search_tool_result": _ANTHROPIC + "forms differ from sdk: nulls",
    "anthropic-tool_search_tool_result-cut": _ANTHROPIC + "forms differ from sdk: nulls",
    "anthropic-tool_use": _ANTHROPIC + "forms differ from sdk: nulls",
    "anthropic-tool_use-cut": _ANTHROPIC + "forms differ from sdk: nulls",
    "anthropic-web_fetch_tool_result": _ANTHROPIC + "forms differ from sdk: nulls",
    "anthropic-web_fetch_tool_result-cut": _ANTHROPIC + "forms differ from sdk: nulls",
    "anthropic-web_search_tool_result": _ANTHROPIC + "forms differ from sdk: nulls",
    "anthropic-web_search_tool_result-cut": _ANTHROPIC + "forms differ from sdk: nulls",
    "bedrock-start-image": _BEDROCK + "forms differ from sdk",
    "bedrock-start-image-cut": _BEDROCK + "forms differ from sdk",
    "bedrock-delta-reasoningContent": _BEDROCK + "forms differ from sdk",
    "bedrock-delta-reasoningContent-cut": _BEDROCK + "forms differ from sdk",
}


def _params() -> list[Any]:
    out = []
    for case in CASES:
        marks = []
        if case.id in AWAITING:
            marks.append(pytest.mark.xfail(strict=True, reason=AWAITING[case.id]))
        out.append(pytest.param(case, id=case.id, marks=marks))
    return out


def _json(message: Any) -> str:
    return json.dumps(message.to_dict(), sort_keys=True, ensure_ascii=False)


@pytest.mark.single_run
@pytest.mark.parametrize("case", _params())
def test_generated_case(case: _generate.Case) -> None:
    """Every form, both backends: one message, with everything the stream carried."""
    results: dict[str, str] = {}
    message: Any = None
    for backend, module in AGGREGATES.items():
        for form in _generate.FORMS:
            got = _generate.run(case, module, form)
            results[f"{backend}/{form}"] = _json(got)
            if message is None:
                message = got
    first = next(iter(results.values()))
    differ = [where for where, text in results.items() if text != first]
    assert not differ, f"{case.id}: these differ from {next(iter(results))}: {differ}"
    text = first
    lost = [marker for marker in case.kept if marker not in text]
    assert not lost, f"{case.id}: lost {lost}: {text}"
    if case.expect is not None:
        assert case.expect(message), f"{case.id}: not as the rule says: {text}"
    if case.reference is not None and case.rendered is not None:
        expected = case.reference()
        rendered = case.rendered(to_provider(message, case.provider))
        assert _strip(rendered) == _strip(expected), f"{case.id}: rendered differs from the SDK's"


def _strip(value: Any) -> Any:
    """JSON without nulls (the renderings and the SDKs' dumps differ in which they spell)."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value
