"""docs/providers.md's "Every event and its rule" section is made from the adapters' rule
tables (``WIRE_RULES``), never edited by hand: the page equals what ``tools/gen_wire_rules.py``
writes from the tables as they are."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.single_run


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "gen_wire_rules", ROOT / "tools" / "gen_wire_rules.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_wire_rules", module)
    spec.loader.exec_module(module)
    return module


def test_the_page_lists_every_rule_of_every_table() -> None:
    tool = _tool()
    page = tool.PAGE.read_text("utf-8")
    assert page == tool.rewrite(page), "docs/providers.md is stale: run tools/gen_wire_rules.py"
    for provider, rules in tool.tables().items():
        for key in rules:
            assert f"| `{key}` |" in page, (provider, key)


def test_the_section_is_replaced_between_its_markers() -> None:
    tool = _tool()
    text = f"before\n{tool.START}\nSTALE ROW\n{tool.END}\nafter\n"
    made = tool.rewrite(text)
    assert made.startswith("before\n" + tool.START) and made.endswith(tool.END + "\nafter\n")
    assert "STALE ROW" not in made
