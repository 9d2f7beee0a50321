"""Every member of the installed SDKs' stream unions has a rule in its adapter's ``WIRE_RULES``
(and no rule names a member the SDK no longer has); every member has a generated case, which
``test_generated`` runs on both backends (the twin states the rule; the engine must agree)."""

from __future__ import annotations

import importlib

import _generate
import _unions
import pytest

#: Adapters whose tables other work brings: the only place an enumeration is expected to fail
#: on this branch; empty it once they land.
AWAITING: dict[str, str] = {}


#: Wire events an adapter has a rule for that its SDK's unions leave out (the SDK's stream reads
#: them itself): Anthropic's keep-alive and its mid-stream error event.
BEYOND_THE_SDK: dict[str, set[str]] = {"anthropic": {"event:ping", "event:error"}}


def _params() -> list[object]:
    out = []
    for name in _unions.ENUMERATORS:
        marks = []
        if name in AWAITING:
            marks.append(pytest.mark.xfail(strict=True, reason=AWAITING[name]))
        out.append(pytest.param(name, id=name, marks=marks))
    return out


def _rules(adapter: str) -> dict[str, str]:
    module = importlib.import_module(f"fastmerge._pure.providers.{adapter}")
    rules = getattr(module, "WIRE_RULES", None)
    assert isinstance(rules, dict), f"{module.__name__} declares no WIRE_RULES"
    return rules


@pytest.mark.single_run
@pytest.mark.parametrize("adapter", _params())
def test_every_member_has_a_rule(adapter: str) -> None:
    members = _unions.ENUMERATORS[adapter]()
    rules = _rules(adapter)
    missing = [m for m in members if m not in rules]
    known = set(members) | BEYOND_THE_SDK.get(adapter, set())
    stale = sorted(k for k in rules if k not in known)
    assert not missing, f"{adapter}: members without a rule: {missing}"
    assert not stale, f"{adapter}: rules for no member of the installed SDK: {stale}"
    empty = sorted(k for k, v in rules.items() if not isinstance(v, str) or not v.strip())
    assert not empty, f"{adapter}: rules without a sentence: {empty}"


_PROVIDER = {
    "openai_responses": "openai-responses",
    "anthropic": "anthropic",
    "bedrock_converse": "bedrock-converse",
    "openai_chat": "openai-chat",
    "gemini": "gemini",
}


@pytest.mark.single_run
@pytest.mark.parametrize("adapter", list(_unions.ENUMERATORS))
def test_every_member_has_a_generated_case(adapter: str) -> None:
    """The generated set covers every member, so the differential run checks each rule."""
    covered: set[str] = set()
    for case in _generate.all_cases():
        if case.provider == _PROVIDER[adapter]:
            covered |= case.covers
    members = _unions.ENUMERATORS[adapter]()
    uncovered = [m for m in members if m not in covered]
    assert not uncovered, f"{adapter}: members without a generated case: {uncovered}"
    stray = sorted(covered - set(members))
    assert not stray, f"{adapter}: cases claim members the SDK lacks: {stray}"
