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


#: The only place a generated case is expected to fail (strictly: a case that starts passing
#: fails until it is taken out), each with the rule it waits for.
AWAITING: dict[str, str] = {}


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
    # the two backends: byte for byte, form by form (the twin is the engine's specification)
    for form in _generate.FORMS:
        texts = {results[f"{backend}/{form}"] for backend in AGGREGATES}
        assert len(texts) == 1, f"{case.id}: the backends differ on the {form} form"
    # the forms: one message, null and absent read alike (a form keeps the nulls it carried,
    # as a replay wants them, rules §9.1; it invents none: model_dump()'s nulls for fields
    # never sent are the only difference allowed)
    first = next(iter(results.values()))
    same = _stripped(first)
    differ = [where for where, text in results.items() if _stripped(text) != same]
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


def _stripped(text: str) -> Any:
    """A message's JSON without its nulls, nor the empty objects only nulls filled."""
    return _without_empty(_strip(json.loads(text)))


def _without_empty(value: Any) -> Any:
    if isinstance(value, dict):
        kept = {k: _without_empty(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v != {}}
    if isinstance(value, list):
        return [_without_empty(v) for v in value]
    return value


def _strip(value: Any) -> Any:
    """JSON without nulls (the renderings and the SDKs' dumps differ in which they spell)."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value
