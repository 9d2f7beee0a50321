"""Writes the "Every event and its rule" section of ``docs/providers.md`` from the adapters' own
rule tables: each twin adapter module's ``WIRE_RULES`` (every member of its SDK's stream unions
-> the rule the engine and the twin apply), one table per provider.

The tables are declared once, in the twin; this page is made from them, and
``tests/docs/test_wire_rules_page.py`` fails when the page and the tables differ. Run after a
rule changes: ``.venv/bin/python tools/gen_wire_rules.py``.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "providers.md"
START = "<!-- wire-rules: made by tools/gen_wire_rules.py from the adapters' WIRE_RULES -->"
END = "<!-- wire-rules: end -->"

#: What each table's keys enumerate, by provider (the SDK whose types the rule test reads).
SOURCES: dict[str, str] = {
    "openai-chat": "the openai SDK's `ChatCompletionChunk`, its `Choice`, `ChoiceDelta` and "
    "tool-call fields",
    "openai-responses": "every member of the openai SDK's `ResponseStreamEvent` union",
    "anthropic": "the anthropic SDK's `RawMessageStreamEvent` members (`event:`), delta types "
    "(`delta:`) and content-block types (`block:`), beta included",
    "gemini": "google-genai's `Part` fields (`part:`) and `FunctionCall` fields "
    "(`function_call:`), by their wire names",
    "bedrock-converse": "botocore's `ConverseStreamOutput` members (`event:`), and the members "
    "of `ContentBlockStart` (`start:`) and `ContentBlockDelta` (`delta:`)",
}


def tables() -> dict[str, dict[str, str]]:
    """provider -> its adapter's ``WIRE_RULES``, in the adapters' order (providers without a
    table are left out)."""
    sys.path.insert(0, str(ROOT / "python"))
    providers = importlib.import_module("fastmerge._pure.providers")
    out: dict[str, dict[str, str]] = {}
    for name, adapter in providers.ADAPTERS.items():
        module = sys.modules[adapter.__module__]
        rules = getattr(module, "WIRE_RULES", None)
        if rules:
            out[name] = dict(rules)
    return out


def section() -> str:
    """The generated section, markers included."""
    lines = [START, ""]
    for provider, rules in tables().items():
        lines.append(f"### `{provider}`")
        lines.append("")
        source = SOURCES.get(provider)
        if source:
            lines.append(f"Keys: {source}.")
            lines.append("")
        lines.append("| member | rule |")
        lines.append("|---|---|")
        for key, rule in rules.items():
            cell = rule.replace("|", "\\|")  # a pipe in a rule would end the table cell
            lines.append(f"| `{key}` | {cell} |")
        lines.append("")
    lines.append(END)
    return "\n".join(lines)


def rewrite(text: str) -> str:
    """``text`` (the page) with its generated section replaced."""
    head, start, rest = text.partition(START)
    if not start:
        raise SystemExit(f"{PAGE}: no line {START!r} to write after")
    _, end, tail = rest.partition(END)
    if not end:
        raise SystemExit(f"{PAGE}: no line {END!r} after the start marker")
    return head + section() + tail


def main() -> None:
    old = PAGE.read_text("utf-8")
    new = rewrite(old)
    if new != old:
        PAGE.write_text(new, "utf-8")
        print(f"{PAGE.relative_to(ROOT)}: rewritten")
    else:
        print(f"{PAGE.relative_to(ROOT)}: up to date")


if __name__ == "__main__":
    main()
